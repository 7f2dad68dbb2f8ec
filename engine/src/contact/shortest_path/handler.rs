//! The shortest-path method as a contact plug-in (`collision.method = "shortest-path"`), in
//! one of two forms chosen by what the stepper offers:
//! - **constraints** (a stepper with constraint iterations, XPBD): per substep, detection after
//!   the prediction (DCD with the shortest path and/or CCD, `collision.detection`) and a
//!   Jacobi projection of the collision constraints after every constraint iteration, with the
//!   CCD fail-safe after the last;
//! - **penalty energy** (a minimising stepper, Newton): discrete detection at the start of the
//!   step (and after every accepted iterate with `detect_every_iteration`), the penalty
//!   `½ k min((p − s)·n − offset, 0)²` of the constraints in the objective
//!   ([`super::PenaltyContact`], exact Hessian couplings in the linear solver).
//!
//! Both act from `collision.start_time` on.

use super::{
    Detection, DetectionMode, PenaltyContact, ShortestPathContact, ShortestPathError,
    ShortestPathFrameStats, ShortestPathSettings,
};
use crate::contact::{ContactHandler, ContactMethod, ContactNeeds, EnergyTerm};
use crate::error::SimError;
use crate::model::SimModel;
use crate::phase::{ContactHost, Phase, Phases, StepperInfo};
use crate::scene::Scene;
use crate::state::GpuState;
use crate::vk::Context;

/// The shortest-path method.
pub struct ShortestPathMethod;

fn failed(e: ShortestPathError) -> SimError {
    SimError::solver("shortest_path", e.to_string())
}

/// A detection's result as an error when it failed or its traversal stacks overflowed.
fn checked(d: Result<Detection, ShortestPathError>) -> Result<Detection, SimError> {
    let d = d.map_err(failed)?;
    if d.counters.overflows > 0 {
        return Err(failed(ShortestPathError::Overflow(d.counters.overflows)));
    }
    Ok(d)
}

/// Whether the stepper offers what the constraint form needs.
fn has_iterations(stepper: &StepperInfo) -> bool {
    stepper
        .phases
        .contains(Phases::PREDICTED | Phases::ITERATION)
}

impl ContactMethod for ShortestPathMethod {
    fn name(&self) -> &'static str {
        "shortest-path"
    }

    fn needs(&self, scene: &Scene) -> ContactNeeds {
        ContactNeeds {
            energy_stiffness: scene.collision.penalty_stiffness,
            ..ContactNeeds::default()
        }
    }

    fn check(&self, scene: &Scene, stepper: &StepperInfo) -> Result<(), SimError> {
        if stepper.minimises_energy {
            if scene.collision.detection == DetectionMode::Ccd {
                return Err(SimError::unsupported(
                    "collision.detection",
                    "the newton solver's shortest-path penalty uses discrete detection \
                     (\"dcd\" or \"hybrid\"); \"ccd\" needs the xpbd solver",
                ));
            }
            return Ok(());
        }
        if !has_iterations(stepper) {
            return Err(SimError::unsupported(
                "collision.method",
                format!(
                    "shortest-path collision handling needs the xpbd or newton solver, not {}",
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
        let mesh = crate::mesh::TetMesh {
            positions: model.positions.clone(),
            tets: model.tets.clone(),
        };
        if mesh.tets.is_empty() {
            return Err(SimError::unsupported(
                "collision.method",
                "shortest-path collision handling needs tet bodies",
            ));
        }
        let mut settings = ShortestPathSettings::from_scene(&scene.collision);
        let unsupported = |e: ShortestPathError| SimError::unsupported("collision", e.to_string());
        let penalty_form = stepper.info().minimises_energy;
        let (contact, penalty) = if penalty_form {
            // Discrete detection at the iterate, answers as penalty energies.
            settings.detection = DetectionMode::Dcd;
            let contact =
                ShortestPathContact::new(ctx, &mesh, &state.x, &state.x, &state.inv_mass, settings)
                    .map_err(unsupported)?;
            let b = stepper.energy_bindings().ok_or_else(|| {
                SimError::unsupported("collision.method", "the stepper has no energy bindings")
            })?;
            if !(b.stiffness > 0.0) {
                return Err(SimError::unsupported(
                    "collision.penalty_stiffness",
                    "a penalty needs a positive stiffness",
                ));
            }
            let p = PenaltyContact::new(
                ctx,
                contact.constraint_slots(),
                &b.x,
                &b.x_trial,
                &b.accum,
                settings.offset,
                b.stiffness,
                Some(&b.inv_mass),
            )?;
            stepper.attach_energy(ctx, &p)?;
            (contact, Some(p))
        } else {
            let contact = ShortestPathContact::new(
                ctx,
                &mesh,
                &state.x,
                &state.x_prev,
                &state.inv_mass,
                settings,
            )
            .map_err(unsupported)?;
            (contact, None)
        };
        Ok(vec![Box::new(ShortestPathHandler {
            contact,
            penalty,
            start_time: scene.collision.start_time,
            redetect: scene.collision.detect_every_iteration,
            stats: ShortestPathFrameStats::default(),
        })])
    }
}

/// The method bound to a simulation's state.
pub struct ShortestPathHandler {
    contact: ShortestPathContact,
    /// The penalty energy (penalty form only).
    penalty: Option<PenaltyContact>,
    /// Simulated time (s) from which the method acts.
    start_time: f64,
    /// Detect again after every iteration (`collision.detect_every_iteration`).
    redetect: bool,
    stats: ShortestPathFrameStats,
}

impl ShortestPathHandler {
    fn active(&self, time: f64) -> bool {
        time + 1e-9 >= self.start_time
    }

    /// The constraint form after a substep's prediction: hybrid detects what earlier substeps
    /// left intersecting (DCD at the start of the substep); DCD only, at the prediction.
    fn predicted(&mut self) -> Result<(), SimError> {
        let r = &mut self.contact;
        if r.settings().detection.dcd() {
            self.stats.add_detection(&checked(r.detect())?);
        }
        if let Some(c) = r.detect_ccd(true).map_err(failed)? {
            self.stats.add_ccd(&c);
        }
        Ok(())
    }

    /// The constraint form after constraint iteration `k` of `of`.
    fn iteration(&mut self, k: u32, of: u32) -> Result<(), SimError> {
        let r = &mut self.contact;
        if k > 0 && self.redetect {
            if r.settings().detection == DetectionMode::Dcd {
                let d = r.redetect().map_err(failed)?;
                self.stats.add_detection(&d);
            } else if let Some(c) = r.detect_ccd(false).map_err(failed)? {
                self.stats.add_ccd(&c);
            }
        }
        self.stats.ms_response += r.respond().map_err(failed)?;
        if k + 1 == of {
            if let Some(f) = r.ccd_failsafe().map_err(failed)? {
                self.stats.add_failsafe(&f);
            }
        }
        Ok(())
    }
}

impl ContactHandler for ShortestPathHandler {
    fn name(&self) -> &'static str {
        "shortest_path"
    }

    fn phases(&self, time: f64) -> Phases {
        let active = self.active(time);
        match (&self.penalty, active) {
            // The penalty is switched on or off at every step start.
            (Some(_), true) if self.redetect => Phases::STEP_START | Phases::ACCEPTED,
            (Some(_), _) => Phases::STEP_START,
            (None, true) => Phases::PREDICTED | Phases::ITERATION,
            (None, false) => Phases::empty(),
        }
    }

    fn at(&mut self, phase: Phase, state: &GpuState) -> Result<(), SimError> {
        let active = self.active(state.clock.time());
        match phase {
            Phase::StepStart => {
                if let Some(p) = &self.penalty {
                    p.set_active(active)?;
                    if active {
                        let d = checked(self.contact.detect())?;
                        self.stats.add_detection(&d);
                    }
                }
                Ok(())
            }
            Phase::Accepted => {
                let d = checked(self.contact.redetect())?;
                self.stats.add_detection(&d);
                Ok(())
            }
            Phase::Predicted => self.predicted(),
            Phase::Iteration { k, of } => self.iteration(k, of),
            Phase::Finished | Phase::Velocities | Phase::ScriptMoved => Ok(()),
        }
    }

    fn energy(&self) -> Option<&dyn EnergyTerm> {
        self.penalty.as_ref().map(|p| p as &dyn EnergyTerm)
    }

    fn energy_mut(&mut self) -> Option<&mut dyn EnergyTerm> {
        self.penalty.as_mut().map(|p| p as &mut dyn EnergyTerm)
    }

    fn take_frame_stats(&mut self) -> serde_json::Value {
        let s = std::mem::take(&mut self.stats);
        serde_json::to_value(s).unwrap_or(serde_json::Value::Null)
    }
}

impl EnergyTerm for PenaltyContact {
    fn evaluate(&self) -> Result<(f64, f64), SimError> {
        Ok(PenaltyContact::evaluate(self)?)
    }

    fn trial(&self) -> Result<(f64, f64), SimError> {
        Ok(PenaltyContact::trial(self)?)
    }

    fn operator(&self) -> Option<&dyn crate::linear::pcg::MatrixFreeCouplings> {
        PenaltyContact::operator(self)
    }
}
