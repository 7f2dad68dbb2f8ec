//! Contact methods as plug-ins. A method ([`ContactMethod`]) checks the stepper it is given,
//! tells the stepper what it needs before it is built ([`ContactNeeds`]) and builds
//! [`ContactHandler`]s that the stepper calls at the phases of a step they ask for
//! ([`crate::phase::Phase`]); a handler may also add an [`EnergyTerm`] to a minimising stepper's
//! objective. [`method`] is the one place that maps the scene's `collision.method` to a method.
//!
//! - [`colliders`]: analytic colliders (plane, sphere, box), handled by every stepper itself.
//! - [`none`]: no surface contact (the template to copy for a new method).
//! - [`two_way`]: the two-way interior point method (after every accepted Newton iterate), with
//!   its repulsion energy.
//! - [`prox`]: RAINBOW's PROX contact impulses on the velocities of a symplectic Euler step.
//! - [`start_check`]: the intersection-free start some methods need (exact check, shared).
//! - [`shortest_path`]: intersection recovery by the shortest path to the boundary (constraint
//!   projections inside XPBD substeps, or a penalty energy in Newton's objective).
//!
//! Adding a method: a folder here implementing [`ContactMethod`] and [`ContactHandler`], one
//! `scene::CollisionMethod` variant and one arm in [`method`] (docs/architecture.md, "Adding a
//! contact method").

pub mod bal;
pub mod colliders;
#[cfg(test)]
mod inert;
pub mod none;
pub mod prox;
pub mod shortest_path;
pub mod start_check;
pub mod two_way;

use crate::error::SimError;
use crate::model::SimModel;
pub use crate::phase::{ContactHost, EnergyBindings, EnergyTerm, IterationInfo, SystemBindings};
use crate::phase::{Phase, Phases, StepperInfo};
use crate::scene::{CollisionMethod, Scene};
use crate::state::GpuState;
use crate::vk::Context;
use std::collections::BTreeMap;

/// Called with a contact method's safe positions (model vertex order, m) after every batch of
/// its steps ([`ContactHandler::observe_steps`]).
pub type StepObserver = Box<dyn FnMut(&[[f32; 4]]) + Send>;

/// What a contact method asks of the stepper before the stepper is built.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactNeeds {
    /// Stiffness of the penalty-type energy term the method will attach (through the
    /// stepper's per-vertex penalty sums), relative to m̄/h² with m̄ the mean mass of the free
    /// vertices (dimensionless; 0: no such term).
    pub energy_stiffness: f64,
    /// Outer iterations per step a minimising stepper may run (each a full inner solve,
    /// followed by [`EnergyTerm::outer_update`]; 1: no outer loop).
    pub outer_iterations: u32,
    /// The energy terms add float gradients of their own ([`EnergyTerm::add_gradient`]): a
    /// stepper's per-vertex gradient test, which does not see them, is off.
    pub term_gradients: bool,
    /// Line-search halvings from the first step before the search fails (`None`: the
    /// stepper's own rule).
    pub line_search_halvings: Option<u32>,
    /// When the line search fails, the linear solve resumes for one more stagnation window
    /// and the search is retried, at most this many times per iteration (0: never).
    pub line_search_resumes: u32,
    /// Scripted vertices are unknowns of a minimising stepper's solve, pulled to their pose
    /// (an augmented Lagrangian) and moved like free vertices within the terms' step bound,
    /// so that a scripted body can push a free one (false: they are fixed in the solve).
    pub scripted_unknowns: bool,
}

impl Default for ContactNeeds {
    fn default() -> Self {
        ContactNeeds {
            energy_stiffness: 0.0,
            outer_iterations: 1,
            term_gradients: false,
            line_search_halvings: None,
            line_search_resumes: 0,
            scripted_unknowns: false,
        }
    }
}

/// A contact method: the scene's `collision.method`.
pub trait ContactMethod: Sync {
    /// Name as in the scene.
    fn name(&self) -> &'static str;

    /// What the method asks of the stepper (before the stepper is built).
    fn needs(&self, _scene: &Scene) -> ContactNeeds {
        ContactNeeds::default()
    }

    /// Whether the method needs an intersection-free state (no intersecting surfaces, no vertex
    /// inside a collider) to start from: its build checks the initial state and the simulation
    /// checks bodies added between frames, both with [`start_check::check_start`].
    fn needs_intersection_free_start(&self) -> bool {
        false
    }

    /// Refuses a stepper (or scene) the method cannot work with, naming the scene field.
    fn check(&self, scene: &Scene, stepper: &StepperInfo) -> Result<(), SimError>;

    /// The method's handlers over `state`, wired into `stepper` (energy terms attached).
    fn build(
        &self,
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        state: &GpuState,
        stepper: &mut dyn ContactHost,
    ) -> Result<Vec<Box<dyn ContactHandler>>, SimError>;
}

/// The contact method of `method` (the one place that maps `collision.method` to a method).
pub fn method(method: CollisionMethod) -> &'static dyn ContactMethod {
    match method {
        CollisionMethod::None => &none::NoContact,
        CollisionMethod::TwoWay => &two_way::handler::TwoWayMethod,
        CollisionMethod::ShortestPath => &shortest_path::handler::ShortestPathMethod,
        CollisionMethod::Prox => &prox::handler::ProxMethod,
        CollisionMethod::Bal => &bal::handler::BalMethod,
        #[cfg(test)]
        CollisionMethod::Inert => &inert::InertMethod,
    }
}

/// A contact method bound to one simulation: the stepper calls it at the phases it asks for.
pub trait ContactHandler: Send {
    /// Name of its block in the frame statistics (report.json).
    fn name(&self) -> &'static str;

    /// The phases it acts at in the step that starts at `time` (s). An empty set lets the
    /// stepper run the step without handing over control (e.g. XPBD's fused step graph).
    fn phases(&self, time: f64) -> Phases;

    /// Acts at `phase` of the step that started at `state.clock.time()`.
    fn at(&mut self, phase: Phase, state: &GpuState) -> Result<(), SimError>;

    /// The energy term it adds to a minimising stepper's objective, if any.
    fn energy(&self) -> Option<&dyn EnergyTerm> {
        None
    }

    /// The same term, for its outer update.
    fn energy_mut(&mut self) -> Option<&mut dyn EnergyTerm> {
        None
    }

    /// The state's positions were changed from outside a step (pins moved, bodies rebuilt):
    /// take them as the current (safe) state.
    fn positions_changed(&mut self, _state: &GpuState) -> Result<(), SimError> {
        Ok(())
    }

    /// Whether the method has intermediate safe states an observer can see.
    fn observes_steps(&self) -> bool {
        false
    }

    /// Installs (or removes) an observer of the method's intermediate safe states (only called
    /// when [`ContactHandler::observes_steps`]).
    fn set_observer(&mut self, _observer: Option<StepObserver>) {}

    /// Its statistics since the last call (reset), as report.json shows them.
    fn take_frame_stats(&mut self) -> serde_json::Value;

    /// Whether it reads the stepper's results only in queue order (through graphs it submits
    /// and waits for), never on the host before a wait of its own: the stepper may then
    /// submit the work before a phase without waiting for it.
    fn reads_in_queue_order(&self) -> bool {
        false
    }

    /// The phases at which it only updates host statistics: it submits nothing, waits for
    /// nothing and changes no state there (the stepper may then treat the state as final
    /// before calling it, e.g. queue the frame's readback first).
    fn bookkeeping_phases(&self) -> Phases {
        Phases::empty()
    }
}

/// The contact handlers of a simulation, in the order the stepper calls them.
#[derive(Default)]
pub struct ContactSet {
    handlers: Vec<Box<dyn ContactHandler>>,
}

impl ContactSet {
    /// A set of `handlers`.
    pub fn new(handlers: Vec<Box<dyn ContactHandler>>) -> ContactSet {
        ContactSet { handlers }
    }

    /// No handlers (a stepper used on its own).
    pub fn empty() -> ContactSet {
        ContactSet::default()
    }

    /// The phases any handler acts at in the step starting at `time` (s).
    pub fn phases(&self, time: f64) -> Phases {
        self.handlers
            .iter()
            .fold(Phases::empty(), |p, h| p | h.phases(time))
    }

    /// Calls every handler that acts at `phase` in the current step.
    pub fn at(&mut self, phase: Phase, state: &GpuState) -> Result<(), SimError> {
        let t = state.clock.time();
        for h in &mut self.handlers {
            if h.phases(t).contains(phase.flag()) {
                h.at(phase, state)?;
            }
        }
        Ok(())
    }

    /// Whether any energy term bounds the steps of the iterates ([`EnergyTerm::bounds_steps`]).
    pub fn bounds_steps(&self) -> bool {
        self.handlers
            .iter()
            .filter_map(|h| h.energy())
            .any(|e| e.bounds_steps())
    }

    /// Whether any handler adds an energy term.
    pub fn has_energy(&self) -> bool {
        self.handlers.iter().any(|h| h.energy().is_some())
    }

    /// Sum of the energy terms at the iterate: (energy J, GPU ms).
    pub fn evaluate_energy(&self) -> Result<(f64, f64), SimError> {
        let mut sum = (0.0, 0.0);
        for e in self.handlers.iter().filter_map(|h| h.energy()) {
            let (j, ms) = e.evaluate()?;
            sum = (sum.0 + j, sum.1 + ms);
        }
        Ok(sum)
    }

    /// Sum of the energy terms at the trial positions: (energy J, GPU ms).
    pub fn trial_energy(&self) -> Result<(f64, f64), SimError> {
        let mut sum = (0.0, 0.0);
        for e in self.handlers.iter().filter_map(|h| h.energy()) {
            let (j, ms) = e.trial()?;
            sum = (sum.0 + j, sum.1 + ms);
        }
        Ok(sum)
    }

    /// Submits every energy term's evaluation (with `trial`, its trial energy) without a wait
    /// when every term can ([`EnergyTerm::submit_energy`]); returns whether they were
    /// submitted (true without terms). Read with [`ContactSet::read_submitted_energy`].
    pub fn submit_energy(&self, trial: bool) -> Result<bool, SimError> {
        let mut terms = self.handlers.iter().filter_map(|h| h.energy());
        match (terms.next(), terms.next()) {
            (None, _) => Ok(true),
            (Some(term), None) => term.submit_energy(trial),
            // Several terms: one at a time, as before (none has needed it yet).
            _ => Ok(false),
        }
    }

    /// The sum of the energies [`ContactSet::submit_energy`] submitted: (energy J, GPU ms),
    /// after waiting for them (no host wait when a later wait covered them).
    pub fn read_submitted_energy(&self, trial: bool) -> Result<(f64, f64), SimError> {
        let mut sum = (0.0, 0.0);
        for e in self.handlers.iter().filter_map(|h| h.energy()) {
            let (j, ms) = e.read_submitted_energy(trial)?;
            sum = (sum.0 + j, sum.1 + ms);
        }
        Ok(sum)
    }

    /// The largest line-search step the energy terms allow (1 without terms).
    pub fn max_step(&self) -> Result<f32, SimError> {
        let mut a = 1.0f32;
        for e in self.handlers.iter().filter_map(|h| h.energy()) {
            a = a.min(e.max_step()?);
        }
        Ok(a)
    }

    /// The outer update of every energy term after a converged inner solve; `true` when all
    /// are converged (always without terms).
    pub fn outer_update(&mut self) -> Result<bool, SimError> {
        let mut done = true;
        for e in self.handlers.iter_mut().filter_map(|h| h.energy_mut()) {
            done &= e.outer_update()?;
        }
        Ok(done)
    }

    /// Adds every energy term's own gradient to the stepper's system
    /// ([`EnergyTerm::add_gradient`]): (change of the terms' energy, J; GPU ms).
    pub fn add_gradients(&self) -> Result<(f64, f64), SimError> {
        let mut sum = (0.0, 0.0);
        for e in self.handlers.iter().filter_map(|h| h.energy()) {
            let (j, ms) = e.add_gradient()?;
            sum = (sum.0 + j, sum.1 + ms);
        }
        Ok(sum)
    }

    /// Adds every energy term's diagonal blocks and stiffness to the stepper's system
    /// ([`EnergyTerm::add_hessian`]); returns GPU ms.
    pub fn add_hessians(&self) -> Result<f64, SimError> {
        let mut ms = 0.0;
        for e in self.handlers.iter().filter_map(|h| h.energy()) {
            ms += e.add_hessian()?;
        }
        Ok(ms)
    }

    /// Whether some energy term's own convergence test holds ([`EnergyTerm::converged`]).
    pub fn terms_converged(&self) -> bool {
        self.handlers
            .iter()
            .filter_map(|h| h.energy())
            .any(|e| e.converged())
    }

    /// The sum of the energy terms' operator generations and the first term's matrix-free
    /// couplings ([`EnergyTerm::operator_generation`], [`EnergyTerm::operator`]).
    pub fn operator(&self) -> (u64, Option<&dyn crate::linear::pcg::MatrixFreeCouplings>) {
        let terms = || self.handlers.iter().filter_map(|h| h.energy());
        let generation = terms().map(|e| e.operator_generation()).sum();
        (generation, terms().find_map(|e| e.operator()))
    }

    /// Tells every energy term how a Newton iteration's solve and line search went.
    pub fn iteration_done(&self, info: &IterationInfo) {
        for e in self.handlers.iter().filter_map(|h| h.energy()) {
            e.iteration_done(info);
        }
    }

    /// Tells every handler the positions were changed from outside a step.
    pub fn positions_changed(&mut self, state: &GpuState) -> Result<(), SimError> {
        for h in &mut self.handlers {
            h.positions_changed(state)?;
        }
        Ok(())
    }

    /// Installs an observer on the first handler that has intermediate steps.
    pub fn observe_steps(&mut self, observer: Option<StepObserver>) -> Result<(), SimError> {
        match self.handlers.iter_mut().find(|h| h.observes_steps()) {
            Some(h) => {
                h.set_observer(observer);
                Ok(())
            }
            None => Err(SimError::invalid(
                "observer",
                "the scene has no contact method with intermediate steps (two-way collision \
                 handling)",
            )),
        }
    }

    /// Every handler's statistics since the last call, by name.
    pub fn take_frame_stats(&mut self) -> BTreeMap<String, serde_json::Value> {
        self.handlers
            .iter_mut()
            .map(|h| (h.name().to_string(), h.take_frame_stats()))
            .collect()
    }

    /// Whether every handler reads the stepper's results in queue order only
    /// ([`ContactHandler::reads_in_queue_order`]; true without handlers).
    pub fn reads_in_queue_order(&self) -> bool {
        self.handlers.iter().all(|h| h.reads_in_queue_order())
    }

    /// Whether no handler changes the state at `phase` of the step starting at `time` (s):
    /// those that act there only keep statistics ([`ContactHandler::bookkeeping_phases`]).
    pub fn keeps_state_at(&self, phase: Phase, time: f64) -> bool {
        self.handlers.iter().all(|h| {
            !h.phases(time).contains(phase.flag()) || h.bookkeeping_phases().contains(phase.flag())
        })
    }

    /// Number of handlers.
    pub fn len(&self) -> usize {
        self.handlers.len()
    }

    /// Whether there is no handler.
    pub fn is_empty(&self) -> bool {
        self.handlers.is_empty()
    }
}

/// A contact method's per-frame statistics type, read back from a frame's statistics by name.
pub trait ContactFrameStats: serde::de::DeserializeOwned + Default {
    /// The handler's name ([`ContactHandler::name`]), the key of its block in report.json.
    const NAME: &'static str;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A handler acting at `acts`, of which `bookkeeping` only keeps statistics.
    struct Fake {
        acts: Phases,
        bookkeeping: Phases,
    }

    impl ContactHandler for Fake {
        fn name(&self) -> &'static str {
            "fake"
        }
        fn phases(&self, _time: f64) -> Phases {
            self.acts
        }
        fn at(&mut self, _phase: Phase, _state: &GpuState) -> Result<(), SimError> {
            Ok(())
        }
        fn take_frame_stats(&mut self) -> serde_json::Value {
            serde_json::Value::Null
        }
        fn bookkeeping_phases(&self) -> Phases {
            self.bookkeeping
        }
    }

    fn set(handlers: &[(Phases, Phases)]) -> ContactSet {
        ContactSet::new(
            handlers
                .iter()
                .map(|&(acts, bookkeeping)| Box::new(Fake { acts, bookkeeping }) as _)
                .collect(),
        )
    }

    #[test]
    fn the_state_is_kept_at_a_phase_only_where_every_acting_handler_keeps_statistics() {
        let fin = Phase::Finished;
        assert!(set(&[]).keeps_state_at(fin, 0.0));
        // Not acting there, or acting with statistics only.
        assert!(set(&[(Phases::ACCEPTED, Phases::empty())]).keeps_state_at(fin, 0.0));
        let two_way = (Phases::ACCEPTED | Phases::FINISHED, Phases::FINISHED);
        assert!(set(&[two_way]).keeps_state_at(fin, 0.0));
        // One handler that acts on the device there is enough to change it.
        let moves = (Phases::FINISHED, Phases::empty());
        assert!(!set(&[moves]).keeps_state_at(fin, 0.0));
        assert!(!set(&[two_way, moves]).keeps_state_at(fin, 0.0));
        // Statistics at another phase say nothing of this one.
        assert!(!set(&[(Phases::FINISHED, Phases::ACCEPTED)]).keeps_state_at(fin, 0.0));
    }
}
