//! Scripted vertices (`body.motion`) moved within the energy terms' step bound.
//!
//! Without a term that bounds steps, the scripted vertices jump to their pose at the step's end
//! before the prediction (`newton.script`), as kinematic boundary conditions usually do. With a
//! CCD-bounded term (the barrier-augmented Lagrangian), that jump would be seen by neither the
//! barrier nor the line search's bound and could carry a scripted triangle through a free one.
//! There the jump is a move like an iterate's: the direction to the pose
//! (`newton.script_direction`), the terms' bound α along it, and either the exact pose (α = 1)
//! or x + α d (`newton.script_advance`). When α < 1 the Newton solve runs with the scripted
//! vertices where they stopped (the barrier pushes the free vertices out of the way), then the
//! move is tried again, up to [`MAX_SCRIPT_ROUNDS`] solves per step; scripted vertices still
//! short of their pose then stay there, and the next step aims at its own pose (the motion is
//! a pose per time, so no lag accumulates once the path is free).
//!
//! A body that must push a free one gains only about d̂ per such round. Where the contact
//! method asks for it ([`crate::contact::ContactNeeds::scripted_unknowns`], BAL), the scripted
//! vertices are unknowns of the solve instead, as IPC imposes boundary conditions: pulled to
//! their pose p by an augmented Lagrangian ½ w m/h² ‖x − p − s‖² (the inertia term with the
//! solve's mass w m and target y = p + s; the shift s carries the multiplier) and moved by the
//! Newton iterates within the CCD bound like every other vertex, so the barrier pushes both
//! ways. After each solve, while a scripted vertex is farther than the script tolerance from
//! its pose, the multiplier steps (s += p − x), the weight grows tenfold when the last round
//! did not halve the distance (up to [`MAX_PULL_WEIGHT`]), and the solve runs again, up to
//! [`MAX_SCRIPT_ROUNDS`] rounds; the rest of the way (within the tolerance when converged) is
//! one bounded move. The next step starts from s extrapolated by its change over this step
//! (s + (s − s_last)): a motion that winds up an elastic body needs a reaction that grows from
//! step to step, and the carried s alone lags it by a step.

use super::NewtonStepper;
use crate::contact::ContactSet;
use crate::error::SimError;
use crate::phase::Phase;
use crate::state::GpuState;
use crate::stepper::StepReport;

/// Most Newton solves of one step that end with the scripted vertices short of their pose.
pub const MAX_SCRIPT_ROUNDS: u32 = 16;

/// Pulled scripted vertices: the rounds stop once every one is within this fraction of the
/// step's largest scripted move from its pose (IPC's boundary conditions count as met at a
/// progress of 99 %: the f32 positions and energies of the line search limit how closely an
/// inexact solve follows a stiff pull) ...
pub const SCRIPT_RELATIVE_TOLERANCE: f64 = 1e-2;

/// ... or within this distance (m).
pub const SCRIPT_ABSOLUTE_TOLERANCE: f64 = 1e-6;

/// The pull's weight (relative to a scripted vertex's mass) grows tenfold after a round that
/// did not halve the distance to the pose, up to this: beyond it the pull's force on an f32
/// position's rounding (w m/h² × ulp) rivals the elastic forces.
pub const MAX_PULL_WEIGHT: f64 = 1e6;

/// The pull's state for [`NewtonStepper::script_pull`] checks.
#[derive(Debug, Clone)]
pub struct ScriptPull {
    /// The target y after the pull's start (m).
    pub start_target: Vec<[f32; 4]>,
    /// The inertia (pull) target y at the end (m).
    pub target: Vec<[f32; 4]>,
    /// The shift s (m).
    pub shift: Vec<[f32; 4]>,
    /// The shift the pull's start saved as the last step's (m).
    pub shift_last: Vec<[f32; 4]>,
    /// The solve's masses (kg).
    pub mass: Vec<f32>,
}

/// A bounded move of the scripted vertices ([`NewtonStepper::script_move`]).
#[derive(Debug, Clone)]
pub struct ScriptMove {
    /// Per vertex, the move to its scripted pose (m; zero for free vertices).
    pub direction: Vec<[f32; 4]>,
    /// Positions after the move (m).
    pub positions: Vec<[f32; 4]>,
}

/// Where a step's scripted vertices stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScriptProgress {
    /// At their pose at the step's end (or no vertex is scripted).
    Reached,
    /// Short of it: a bounded move stopped them.
    Short,
}

impl NewtonStepper {
    /// Whether the step's scripted vertices move within the terms' bound.
    pub(super) fn bounded_script(&self, contacts: &ContactSet) -> bool {
        self.graphs.script_direction.is_some() && contacts.bounds_steps()
    }

    /// Moves the scripted vertices toward their pose at the step's end by the largest step the
    /// terms allow (all the way: the exact pose). Calls [`Phase::ScriptMoved`] unless this is
    /// the step's first move and it reached the pose (the handlers' solve state is fresh then):
    /// the solve starts again from the moved positions.
    pub(super) fn advance_script(
        &self,
        state: &GpuState,
        contacts: &mut ContactSet,
        first: bool,
        report: &mut StepReport,
    ) -> Result<ScriptProgress, SimError> {
        let Some(direction) = &self.graphs.script_direction else {
            return Ok(ScriptProgress::Reached);
        };
        direction.run()?;
        report.gpu_ms.predict += direction.gpu_ms()?;
        self.advance_along_script_direction(state, contacts, first, report)
    }

    /// [`NewtonStepper::advance_script`] with the direction p(t) − x already in the PCG
    /// solution (written by `newton.script_direction` or the pull's error graph at this x).
    fn advance_along_script_direction(
        &self,
        state: &GpuState,
        contacts: &mut ContactSet,
        first: bool,
        report: &mut StepReport,
    ) -> Result<ScriptProgress, SimError> {
        let g = &self.graphs;
        let (Some(jump), Some(advance)) = (&g.script, &g.script_advance) else {
            return Ok(ScriptProgress::Reached);
        };
        let alpha = contacts.max_step()?.min(1.0);
        let progress = if alpha >= 1.0 {
            jump.run()?;
            report.gpu_ms.predict += jump.gpu_ms()?;
            ScriptProgress::Reached
        } else {
            if alpha > 0.0 {
                self.ws.alpha.write(&[alpha])?;
                advance.run()?;
                report.gpu_ms.predict += advance.gpu_ms()?;
            }
            ScriptProgress::Short
        };
        if !first || progress == ScriptProgress::Short {
            contacts.at(Phase::ScriptMoved, state)?;
        }
        Ok(progress)
    }

    /// For checks against `cpu_reference::newton::script`: at the end time of the state's next
    /// step, the direction from x to the scripted pose (`newton.script_direction`), then the
    /// scripted vertices advanced by `alpha` along it (`newton.script_advance`); returns the
    /// direction and the positions after. `None` without scripted motion.
    pub fn script_move(
        &self,
        state: &GpuState,
        alpha: f32,
    ) -> Result<Option<ScriptMove>, SimError> {
        let g = &self.graphs;
        let (Some(direction), Some(advance)) = (&g.script_direction, &g.script_advance) else {
            return Ok(None);
        };
        self.ws.time.write(&[state.clock.next_time() as f32])?;
        direction.run()?;
        let dir = self.pcg.solution().read()?;
        self.ws.alpha.write(&[alpha])?;
        advance.run()?;
        Ok(Some(ScriptMove {
            direction: dir,
            positions: state.x.read()?,
        }))
    }

    /// Pulled scripted vertices: max |p(t) − x| over them (m; the direction in the PCG
    /// solution).
    fn script_error(&self, report: &mut StepReport) -> Result<f64, SimError> {
        if self.graphs.pull.is_none() {
            return Ok(0.0);
        }
        self.run_pull(|p| &p.error, report)?;
        Ok(self.read_sums()?[3])
    }

    /// Runs one of the pull's graphs (its GPU time into the prediction's).
    fn run_pull(
        &self,
        graph: impl Fn(&super::graphs::PullGraphs) -> &crate::vk::CompiledGraph,
        report: &mut StepReport,
    ) -> Result<(), SimError> {
        if let Some(pull) = &self.graphs.pull {
            let g = graph(pull);
            g.run()?;
            report.gpu_ms.predict += g.gpu_ms()?;
        }
        Ok(())
    }

    /// The step's solves with the scripted vertices pulled to their pose (module docs) from
    /// the objective `energy` at x after the pull's start; returns the objective at the end of
    /// the last solve.
    pub(super) fn solve_with_pull(
        &mut self,
        t: f64,
        mut energy: f64,
        state: &GpuState,
        contacts: &mut ContactSet,
        report: &mut StepReport,
    ) -> Result<f64, SimError> {
        // The step's largest scripted move sets the tolerance (x is the step's start here).
        let step_move = self.script_error(report)?;
        let tolerance = (SCRIPT_RELATIVE_TOLERANCE * step_move).max(SCRIPT_ABSOLUTE_TOLERANCE);
        let mut last = f64::INFINITY;
        loop {
            energy = self.solve_step(t, energy, state, contacts, report)?;
            let error = self.script_error(report)?;
            report.script_error = error;
            if error <= tolerance {
                break;
            }
            if report.script_rounds >= MAX_SCRIPT_ROUNDS {
                report.script_short = true;
                break;
            }
            report.script_rounds += 1;
            let factor = f64::from(super::graphs::STIFFEN_FACTOR);
            let weight = self.pull_weight.get();
            if error > 0.5 * last && weight * factor <= MAX_PULL_WEIGHT {
                self.run_pull(|p| &p.stiffen, report)?;
                self.pull_weight.set(weight * factor);
            }
            last = error;
            self.run_pull(|p| &p.update, report)?;
            // A new objective at the same x: the terms start their solve state again.
            contacts.at(Phase::ScriptMoved, state)?;
            energy = self.evaluate_terms(contacts, true, report)?;
        }
        // The last error graph left p(t) − x at this x in the PCG solution.
        if self.advance_along_script_direction(state, contacts, false, report)?
            == ScriptProgress::Short
        {
            report.script_short = true;
        }
        Ok(energy)
    }

    /// For checks against `cpu_reference::newton::script`: at the end time of the state's next
    /// step and the state's positions, the pull's start (its target is returned first), a
    /// multiplier step, `stiffen` times the weight's growth and a second multiplier step;
    /// returns the targets, the shift and the solve's masses. `None` unless scripted vertices
    /// are pulled.
    pub fn script_pull(
        &self,
        state: &GpuState,
        stiffen: u32,
    ) -> Result<Option<ScriptPull>, SimError> {
        let Some(pull) = &self.graphs.pull else {
            return Ok(None);
        };
        self.ws.time.write(&[state.clock.next_time() as f32])?;
        pull.start.run()?;
        let start_target = self.ws.y.read()?;
        pull.update.run()?;
        for _ in 0..stiffen {
            pull.stiffen.run()?;
        }
        pull.update.run()?;
        Ok(Some(ScriptPull {
            start_target,
            target: self.ws.y.read()?,
            shift: self.solve.shift.read()?,
            shift_last: self.solve.shift_last.read()?,
            mass: self.solve.mass.read()?,
        }))
    }

    /// The step's solves: the outer loop of [`NewtonStepper::solve_step`] from `energy`, then,
    /// while the scripted vertices are short of their pose, a bounded move and the loop again
    /// (at most [`MAX_SCRIPT_ROUNDS`] moves); returns the objective at the end.
    pub(super) fn solve_with_script(
        &mut self,
        t: f64,
        mut energy: f64,
        mut script: ScriptProgress,
        state: &GpuState,
        contacts: &mut ContactSet,
        report: &mut StepReport,
    ) -> Result<f64, SimError> {
        loop {
            energy = self.solve_step(t, energy, state, contacts, report)?;
            if script == ScriptProgress::Reached {
                return Ok(energy);
            }
            if report.script_rounds >= MAX_SCRIPT_ROUNDS {
                report.script_short = true;
                return Ok(energy);
            }
            report.script_rounds += 1;
            script = self.advance_script(state, contacts, false, report)?;
            energy = self.evaluate_terms(contacts, true, report)?;
        }
    }
}
