//! No surface contact (`collision.method = "none"`; analytic colliders still act, inside the
//! steppers). The smallest [`ContactMethod`]: the template to copy for a new method.

use super::{ContactHandler, ContactMethod};
use crate::error::SimError;
use crate::model::SimModel;
use crate::phase::{ContactHost, StepperInfo};
use crate::scene::Scene;
use crate::state::GpuState;
use crate::vk::Context;

/// The method without handlers.
pub struct NoContact;

impl ContactMethod for NoContact {
    fn name(&self) -> &'static str {
        "none"
    }

    fn check(&self, _scene: &Scene, _stepper: &StepperInfo) -> Result<(), SimError> {
        Ok(())
    }

    fn build(
        &self,
        _ctx: &Context,
        _scene: &Scene,
        _model: &SimModel,
        _state: &GpuState,
        _stepper: &mut dyn ContactHost,
    ) -> Result<Vec<Box<dyn ContactHandler>>, SimError> {
        Ok(Vec::new())
    }
}
