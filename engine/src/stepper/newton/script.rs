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

use super::NewtonStepper;
use crate::contact::ContactSet;
use crate::error::SimError;
use crate::phase::Phase;
use crate::state::GpuState;
use crate::stepper::StepReport;

/// Most Newton solves of one step that end with the scripted vertices short of their pose.
pub const MAX_SCRIPT_ROUNDS: u32 = 16;

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
        let g = &self.graphs;
        let (Some(jump), Some(direction), Some(advance)) =
            (&g.script, &g.script_direction, &g.script_advance)
        else {
            return Ok(ScriptProgress::Reached);
        };
        direction.run()?;
        report.gpu_ms.predict += direction.gpu_ms()?;
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
