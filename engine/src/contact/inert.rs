//! A test-only contact method that does nothing but record the phases it is called at
//! (`collision.method = "inert"`, compiled in the engine's unit tests only). It is the whole of
//! what a new method needs: this file, one `scene::CollisionMethod` variant and one arm in
//! [`super::method`]; the tests below run it through [`crate::simulation::Simulation`] on every
//! stepper and check the phase protocol and that doing nothing changes nothing.

use super::{ContactHandler, ContactMethod};
use crate::error::SimError;
use crate::model::SimModel;
use crate::phase::{ContactHost, Phase, Phases, StepperInfo};
use crate::scene::Scene;
use crate::state::GpuState;
use crate::vk::Context;

/// The method.
pub struct InertMethod;

impl ContactMethod for InertMethod {
    fn name(&self) -> &'static str {
        "inert"
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
        stepper: &mut dyn ContactHost,
    ) -> Result<Vec<Box<dyn ContactHandler>>, SimError> {
        Ok(vec![Box::new(InertHandler {
            offered: stepper.info().phases,
            calls: Vec::new(),
        })])
    }
}

/// Asks for every phase its stepper offers and records the calls.
struct InertHandler {
    offered: Phases,
    calls: Vec<String>,
}

impl ContactHandler for InertHandler {
    fn name(&self) -> &'static str {
        "inert"
    }

    fn phases(&self, _time: f64) -> Phases {
        self.offered
    }

    fn at(&mut self, phase: Phase, state: &GpuState) -> Result<(), SimError> {
        self.calls
            .push(format!("{phase:?} at step {}", state.clock.steps()));
        Ok(())
    }

    fn take_frame_stats(&mut self) -> serde_json::Value {
        serde_json::json!({ "calls": std::mem::take(&mut self.calls) })
    }
}

#[cfg(test)]
mod tests {
    use crate::scene::Scene;
    use crate::simulation::Simulation;
    use crate::vk::{Context, ContextOptions, Severity};

    const CUBE: &str = r#"
[simulation]
frame_rate = 60.0
substeps = 2
[[body]]
name = "cube"
mesh = { generator = "box", size = [0.2, 0.2, 0.2], cells = [2, 2, 2] }
translation = [0.0, 0.0, 0.105]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
"#;

    fn context() -> Context {
        let mut o = ContextOptions::from_env();
        o.validation = true;
        o.pipeline_cache = None;
        match Context::new(o) {
            Ok(c) => c,
            Err(e) => panic!("no Vulkan device (install mesa-vulkan-drivers): {e}"),
        }
    }

    /// Positions after `frames` frames and every frame's inert calls.
    fn run(ctx: &Context, solver: &str, method: &str, frames: usize) -> (Vec<u64>, Vec<String>) {
        let set = [
            format!("simulation.solver=\"{solver}\""),
            format!("collision.method=\"{method}\""),
        ];
        let scene = Scene::parse(CUBE, "cube.toml", &set).unwrap();
        let mut sim = Simulation::new(ctx, &scene).unwrap();
        let mut calls = Vec::new();
        for _ in 0..frames {
            let st = sim.step_frame().unwrap();
            if let Some(c) = st.contacts.get("inert") {
                let list = c["calls"].as_array().unwrap();
                calls.extend(list.iter().map(|s| s.as_str().unwrap().to_string()));
            } else {
                assert_eq!(method, "none", "the inert block is missing");
            }
        }
        let x = sim.positions().unwrap();
        let bits = x.iter().flatten().map(|c| c.to_bits()).collect();
        (bits, calls)
    }

    #[test]
    fn a_do_nothing_method_is_called_at_every_offered_phase_and_changes_nothing() {
        let ctx = context();
        for solver in ["newton", "xpbd", "symplectic-euler"] {
            let (x_none, _) = run(&ctx, solver, "none", 3);
            let (x_inert, calls) = run(&ctx, solver, "inert", 3);
            assert!(
                x_none == x_inert,
                "{solver}: the inert method changed the motion"
            );
            match solver {
                "newton" => {
                    // Per step: the start, one call per accepted iterate, the end.
                    let starts = calls.iter().filter(|c| c.starts_with("StepStart")).count();
                    let ends = calls.iter().filter(|c| c.starts_with("Finished")).count();
                    let accepted = calls.iter().filter(|c| c.starts_with("Accepted")).count();
                    assert_eq!((starts, ends), (6, 6), "{calls:?}");
                    assert!(accepted >= 6, "{calls:?}");
                    assert_eq!(calls[0], "StepStart at step 0");
                    assert_eq!(calls.last().unwrap(), "Finished at step 5");
                }
                "xpbd" => {
                    // 20 substeps of 1 iteration per step, 6 steps.
                    assert_eq!(calls.len(), 6 * 20 * 2, "{calls:?}");
                    assert_eq!(calls[0], "Predicted at step 0");
                    assert_eq!(calls[1], "Iteration { k: 0, of: 1 } at step 0");
                }
                _ => {
                    // Per step: the start, between the velocity and position updates, the end
                    // (the step then runs as two graphs: the same bits as the fused one).
                    assert_eq!(calls.len(), 6 * 3, "{calls:?}");
                    assert_eq!(calls[0], "StepStart at step 0");
                    assert_eq!(calls[1], "Velocities at step 0");
                    assert_eq!(calls[2], "Finished at step 0");
                }
            }
        }
        let errors: Vec<_> = ctx
            .take_validation_messages()
            .into_iter()
            .filter(|m| m.severity == Severity::Error)
            .map(|m| m.text)
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
}
