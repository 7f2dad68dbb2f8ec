//! The two-way method as a contact plug-in (`collision.method = "two-way"`): after every
//! accepted iterate of a minimising stepper (Newton) the solver runs from its last safe state
//! toward the stepper's positions and writes the safe result back (the two-way IPM paper's
//! practice, §6.1); with `repulsion_stiffness > 0` its repulsion energy joins the stepper's
//! objective ([`super::Repulsion`]).

use super::{CollisionFrameStats, Repulsion, TwoWay, TwoWaySettings};
use crate::contact::{
    start_check, ContactHandler, ContactMethod, ContactNeeds, EnergyTerm, StepObserver,
};
use crate::error::SimError;
use crate::model::SimModel;
use crate::phase::{ContactHost, Phase, Phases, StepperInfo};
use crate::proximity::ProximityMesh;
use crate::scene::Scene;
use crate::state::GpuState;
use crate::vk::{CompileOptions, CompiledGraph, Context, Graph};

/// The two-way method.
pub struct TwoWayMethod;

fn failed(m: String) -> SimError {
    SimError::solver("two_way", m)
}

impl ContactMethod for TwoWayMethod {
    fn name(&self) -> &'static str {
        "two-way"
    }

    fn needs(&self, scene: &Scene) -> ContactNeeds {
        ContactNeeds {
            energy_stiffness: scene.collision.repulsion_stiffness,
            ..ContactNeeds::default()
        }
    }

    fn needs_intersection_free_start(&self) -> bool {
        true
    }

    fn check(&self, _scene: &Scene, stepper: &StepperInfo) -> Result<(), SimError> {
        if !(stepper.minimises_energy && stepper.phases.contains(Phases::ACCEPTED)) {
            return Err(SimError::unsupported(
                "collision.method",
                format!(
                    "two-way collision handling needs a stepper with accepted iterates (newton), \
                     not {}",
                    stepper.name
                ),
            ));
        }
        Ok(())
    }

    fn build(
        &self,
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        state: &GpuState,
        stepper: &mut dyn ContactHost,
    ) -> Result<Vec<Box<dyn ContactHandler>>, SimError> {
        start_check::check_start(
            model,
            &model.positions,
            &crate::contact::colliders::from_scene(scene),
            0.0,
            self.name(),
            "at the start",
        )?;
        let mut h = TwoWayHandler::new(ctx, scene, model, state)?;
        // Nothing reads the pair set between solves but the repulsion energy (the stepper's
        // evaluations and trials): without it, a solve's next search goes out at its end.
        let no_repulsion = scene.collision.repulsion_stiffness <= 0.0;
        h.solver
            .set_prefetch_searches(no_repulsion)
            .map_err(failed)?;
        // And a search queued behind a batch that follows one which needed a search: taken
        // within the solve, so the repulsion energy reads a consistent pair set after it.
        h.solver.set_speculative_searches(true);
        if scene.collision.repulsion_stiffness > 0.0 {
            let b = stepper.energy_bindings().ok_or_else(|| {
                SimError::unsupported(
                    "collision.repulsion_stiffness",
                    "the repulsion energy needs a minimising stepper (newton)",
                )
            })?;
            if !(b.stiffness > 0.0) {
                return Err(SimError::unsupported(
                    "collision.repulsion_stiffness",
                    "the repulsion energy needs a positive stiffness",
                ));
            }
            let r = Repulsion::new(
                ctx,
                &h.solver,
                &b.x,
                &b.x_trial,
                &b.accum,
                b.stiffness,
                scene.collision.repulsion_distance(),
            )?;
            stepper.attach_energy(ctx, &r)?;
            h.repulsion = Some(r);
        }
        Ok(vec![Box::new(h)])
    }
}

/// Per vertex, its shared-fraction group (`collision.shared_step`; its body's index) or
/// [`super::solve::NO_GROUP`].
fn shared_step_groups(model: &SimModel, shared: crate::scene::SharedStep) -> Vec<u32> {
    use crate::scene::SharedStep;
    let mut groups = vec![super::solve::NO_GROUP; model.positions.len()];
    for (k, b) in model.bodies.iter().enumerate() {
        let shared = match shared {
            SharedStep::Solids => !b.tets.is_empty(),
            SharedStep::Bodies => true,
            SharedStep::None => false,
        };
        if shared {
            for v in b.vertices.clone() {
                groups[v as usize] = k as u32;
            }
        }
    }
    groups
}

/// The two-way solver bound to the state's positions: `load` copies them into its target,
/// `store` copies its safe positions back, `adopt` makes the state's positions its safe state.
pub struct TwoWayHandler {
    solver: TwoWay,
    load: CompiledGraph,
    store: CompiledGraph,
    adopt: CompiledGraph,
    observer: Option<StepObserver>,
    repulsion: Option<Repulsion>,
    stats: CollisionFrameStats,
    /// Two-way steps in the time step in progress.
    step_steps: u32,
}

impl TwoWayHandler {
    /// The solver over every body's surface (and rod centrelines) at the state's positions.
    pub fn new(
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        state: &GpuState,
    ) -> Result<TwoWayHandler, SimError> {
        let n = model.positions.len();
        let tris = model.surface_triangles();
        let body = model.vertex_bodies();
        let inv_w: Vec<f32> = (0..n)
            .map(|i| {
                let scripted = model.vertex_motion.get(i).is_some_and(|&m| m != u32::MAX);
                if model.inv_mass[i] == 0.0 || scripted {
                    0.0
                } else {
                    1.0
                }
            })
            .collect();
        let field = |m: String| SimError::unsupported("collision", m);
        // Rod centrelines are collision curves: their segments are extra edges.
        let curves = model.curve_segments();
        let mesh = ProximityMesh::with_curves(tris, &curves, body).map_err(field)?;
        let mut solver = TwoWay::new(
            ctx,
            mesh,
            &model.positions,
            &inv_w,
            TwoWaySettings::from_scene(&scene.collision),
        )
        .map_err(field)?;
        solver
            .set_friction(scene.collision.friction)
            .map_err(field)?;
        solver
            .set_vertex_groups(&shared_step_groups(model, scene.collision.shared_step))
            .map_err(field)?;
        // Colliders are constraints and bounds of every two-way step (never entered): the load
        // graph copies their current geometry (the host may move them between frames).
        let colliders = crate::contact::colliders::from_scene(scene);
        if !colliders.is_empty() {
            solver
                .set_colliders(
                    &crate::contact::colliders::pack_colliders(&colliders),
                    colliders.len(),
                    &model
                        .vertex_collider_offsets()
                        .iter()
                        .map(|&o| o as f32)
                        .collect::<Vec<f32>>(),
                )
                .map_err(field)?;
        }
        let compile = |name: &str, from: &crate::vk::GpuBuffer<[f32; 4]>, to| {
            let mut g = Graph::new(name);
            g.copy(name, from, to);
            g.compile(ctx, CompileOptions::default())
        };
        let load = {
            let mut g = Graph::new("collision.load_target");
            g.copy("collision.load_target", &state.x, solver.target());
            if !colliders.is_empty() {
                g.copy(
                    "collision.load_colliders",
                    &state.colliders,
                    solver.colliders(),
                );
            }
            g.compile(ctx, CompileOptions::default())?
        };
        let store = compile("collision.store_positions", solver.positions(), &state.x)?;
        let adopt = compile("collision.adopt_positions", &state.x, solver.positions())?;
        Ok(TwoWayHandler {
            solver,
            load,
            store,
            adopt,
            observer: None,
            repulsion: None,
            stats: CollisionFrameStats::default(),
            step_steps: 0,
        })
    }

    /// The solver.
    pub fn solver(&self) -> &TwoWay {
        &self.solver
    }

    /// Runs the two-way method from the last safe state toward the state's positions (the
    /// colliders placed at the step's end time) and writes the result back.
    fn handle(&mut self, state: &GpuState) -> Result<(), SimError> {
        self.solver
            .set_collider_time(state.clock.next_time())
            .map_err(failed)?;
        // Read by the solve's graphs only (queue order): no wait of its own.
        self.load.submit()?;
        let r = match self.observer.as_mut() {
            Some(f) => self.solver.solve_observed(|_, x| f(x)),
            None => self.solver.solve(),
        }
        .map_err(failed)?;
        // The stepper's next graph reads the positions after this (queue order), and its
        // next wait covers it: no wait of its own.
        self.store.submit()?;
        self.step_steps += r.steps;
        self.stats.add_solve(&r);
        // A regrown pair workspace: re-record the repulsion graphs.
        if let Some(rep) = &self.repulsion {
            rep.sync(&self.solver)?;
        }
        Ok(())
    }
}

impl ContactHandler for TwoWayHandler {
    fn name(&self) -> &'static str {
        "two_way"
    }

    fn phases(&self, _time: f64) -> Phases {
        Phases::ACCEPTED | Phases::FINISHED
    }

    fn at(&mut self, phase: Phase, state: &GpuState) -> Result<(), SimError> {
        match phase {
            Phase::Accepted => self.handle(state),
            Phase::Finished => {
                self.stats.time_steps += 1;
                self.stats.max_steps_per_time_step =
                    self.stats.max_steps_per_time_step.max(self.step_steps);
                self.step_steps = 0;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn energy(&self) -> Option<&dyn EnergyTerm> {
        self.repulsion.as_ref().map(|r| r as &dyn EnergyTerm)
    }

    fn energy_mut(&mut self) -> Option<&mut dyn EnergyTerm> {
        self.repulsion.as_mut().map(|r| r as &mut dyn EnergyTerm)
    }

    fn positions_changed(&mut self, _state: &GpuState) -> Result<(), SimError> {
        // The state's positions are the safe state (between steps they equal the last one
        // stored, apart from what the host moved): take them and search again.
        self.adopt.run()?;
        self.solver.positions_changed().map_err(failed)
    }

    fn observes_steps(&self) -> bool {
        true
    }

    fn bookkeeping_phases(&self) -> Phases {
        Phases::FINISHED
    }

    fn set_observer(&mut self, observer: Option<StepObserver>) {
        self.observer = observer;
    }

    fn reads_in_queue_order(&self) -> bool {
        // The solve copies the stepper's positions in a graph (`load`) and reads on the host
        // only what its own graphs wrote, after waiting for them.
        true
    }

    fn take_frame_stats(&mut self) -> serde_json::Value {
        let s = std::mem::take(&mut self.stats);
        serde_json::to_value(s).unwrap_or(serde_json::Value::Null)
    }
}

impl EnergyTerm for Repulsion {
    fn evaluate(&self) -> Result<(f64, f64), SimError> {
        Ok(Repulsion::evaluate(self)?)
    }

    fn trial(&self) -> Result<(f64, f64), SimError> {
        Ok(Repulsion::trial(self)?)
    }

    fn submit_energy(&self, trial: bool) -> Result<bool, SimError> {
        Repulsion::submit(self, trial)?;
        Ok(true)
    }

    fn read_submitted_energy(&self, trial: bool) -> Result<(f64, f64), SimError> {
        Ok(Repulsion::read_submitted(self, trial)?)
    }
}
