//! Time integrators behind one interface, [`Stepper`]: [`newton`] (implicit Euler by
//! Newton–PCG), [`xpbd`] (XPBD with multicolor constraint sweeps) and [`symplectic`]
//! (semi-implicit Euler, the RAINBOW baseline). [`build`] is the one place that maps the scene's
//! `simulation.solver` to a stepper.
//!
//! A stepper advances the state it is given ([`GpuState`], owned by the simulation) by one time
//! step `h`, calling the contact handlers at the phases it offers ([`StepperInfo::phases`]), and
//! advances the state's clock. Adding a stepper: a folder or file here implementing [`Stepper`]
//! with a `from_scene` constructor, one arm in [`build`], one `scene::SolverKind` variant
//! (docs/architecture.md, "Adding a stepper").

pub mod newton;
pub mod symplectic;
pub mod xpbd;

use crate::contact::{ContactNeeds, ContactSet};
use crate::error::SimError;
use crate::model::SimModel;
pub use crate::phase::{ContactHost, Phase, Phases, StepperInfo};
use crate::scene::{ColliderShape, MaterialModel, Scene, SolverKind};
use crate::state::GpuState;
use crate::vk::{ash::vk, Context};

/// GPU milliseconds per part of a time step (whole-graph timestamps; parts a stepper does not
/// have stay 0).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct StepGpuMs {
    /// Scripted motion and prediction.
    pub predict: f64,
    /// Gradients, energies and right-hand sides (Newton); constraint sweeps (XPBD); the whole
    /// step (symplectic Euler).
    pub evaluate: f64,
    /// Element Hessians and their assembly.
    pub hessian: f64,
    /// PCG solves.
    pub pcg: f64,
    /// Line-search trials and acceptance.
    pub line_search: f64,
    /// Velocity update.
    pub finish: f64,
    /// The device-driven Newton loop's iteration graphs when they ran without per-node
    /// timestamps (their parts are then not told apart; with per-node timestamps — a trace,
    /// `--nodes` — their nodes are counted in the parts above and this stays 0).
    pub device_loop: f64,
}

impl StepGpuMs {
    /// Sum of the parts.
    pub fn total(&self) -> f64 {
        self.predict
            + self.evaluate
            + self.hessian
            + self.pcg
            + self.line_search
            + self.finish
            + self.device_loop
    }
}

impl std::ops::AddAssign for StepGpuMs {
    fn add_assign(&mut self, o: StepGpuMs) {
        self.predict += o.predict;
        self.evaluate += o.evaluate;
        self.hessian += o.hessian;
        self.pcg += o.pcg;
        self.line_search += o.line_search;
        self.device_loop += o.device_loop;
        self.finish += o.finish;
    }
}

/// PCG solves counted by why they stopped ([`crate::linear::SolveExit`]), as report.json's
/// `pcg_exits` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct PcgExits {
    /// Solves that reached the tolerance.
    pub converged: u32,
    /// Solves stopped by the stagnation window.
    pub stagnated: u32,
    /// Solves stopped at the iteration cap.
    pub iteration_cap: u32,
    /// Solves stopped by a breakdown (p·q ≤ 0 or r·z ≤ 0).
    pub breakdown: u32,
    /// Solves stopped at a non-finite residual.
    pub non_finite: u32,
}

impl PcgExits {
    /// Counts one solve that stopped for `exit`.
    pub fn count(&mut self, exit: crate::linear::SolveExit) {
        use crate::linear::SolveExit as E;
        *match exit {
            E::Converged => &mut self.converged,
            E::Stagnated => &mut self.stagnated,
            E::IterationCap => &mut self.iteration_cap,
            E::Breakdown => &mut self.breakdown,
            E::NonFinite => &mut self.non_finite,
        } += 1;
    }

    /// Solves counted.
    pub fn total(&self) -> u32 {
        self.converged + self.stagnated + self.iteration_cap + self.breakdown + self.non_finite
    }
}

impl std::ops::AddAssign for PcgExits {
    fn add_assign(&mut self, o: PcgExits) {
        self.converged += o.converged;
        self.stagnated += o.stagnated;
        self.iteration_cap += o.iteration_cap;
        self.breakdown += o.breakdown;
        self.non_finite += o.non_finite;
    }
}

/// What one time step did (the stepper's own work; contact handlers report their own).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepReport {
    /// The step's global PCG solves by exit reason.
    pub pcg_exits: PcgExits,
    /// Smallest fraction of its estimated optimum quadratic-model decrease that a global PCG
    /// solve of the step reached ([`crate::linear::ModelDecrease::fraction`]; 1 without solves).
    pub pcg_model_fraction_min: f64,
    /// GPU milliseconds per part.
    pub gpu_ms: StepGpuMs,
    /// Newton iterations (0 for steppers without).
    pub newton_iterations: u32,
    /// Newton iterations that solved with the exact tet Hessians first (project-on-demand).
    pub exact_hessian_iterations: u32,
    /// Of those, the iterations that solved again with the projected Hessians (the exact
    /// system met negative curvature or its direction gave no accepted step).
    pub projection_fallbacks: u32,
    /// PCG iterations summed over the Newton iterations (global solves).
    pub pcg_iterations: u32,
    /// Iterations of the grouped warm-start PCG summed over the Newton iterations.
    pub pcg_warm_iterations: u32,
    /// Objective at the end of the step (J; minimising steppers).
    pub energy: f64,
    /// Largest vertex displacement of the last Newton direction (m).
    pub last_direction: f64,
    /// Relative residual ‖r‖/‖b‖ of the last linear solve.
    pub pcg_residual: f64,
    /// Largest relative residual of the step's linear solves.
    pub pcg_residual_max: f64,
    /// Largest per-vertex gradient norm of the objective at the last evaluation (N).
    pub gradient_norm: f64,
    /// Solves after the first that moves of the scripted vertices within the step started
    /// (Newton with a CCD-bounded energy term: a move the bound cut short is resumed).
    pub script_rounds: u32,
    /// Whether the step ended with scripted vertices short of their pose.
    pub script_short: bool,
    /// With scripted vertices pulled to their pose (unknowns of the solve): the largest
    /// distance of one from its pose after the step's solves, before the last bounded move
    /// (m; 0 otherwise).
    pub script_error: f64,
}

impl StepReport {
    /// Records a global PCG solve's exit reason and model decrease.
    pub fn record_pcg(
        &mut self,
        exit: crate::linear::SolveExit,
        model: crate::linear::ModelDecrease,
    ) {
        let first = self.pcg_exits.total() == 0;
        self.pcg_exits.count(exit);
        let f = model.fraction();
        self.pcg_model_fraction_min = if first {
            f
        } else {
            self.pcg_model_fraction_min.min(f)
        };
    }
}

/// A time integrator over the simulation's [`GpuState`]; its [`ContactHost`] part is what
/// contact methods see while they are built.
pub trait Stepper: ContactHost + Send {
    /// Advances one time step of `state.clock.step_size()` seconds, calling `contacts` at the
    /// phases it offers, and advances `state.clock` by one step.
    fn step(
        &mut self,
        state: &mut GpuState,
        contacts: &mut ContactSet,
    ) -> Result<StepReport, SimError>;

    /// Advances `steps` time steps (one frame's substeps). The default calls [`Stepper::step`];
    /// a stepper may run a fused graph when no handler acts.
    fn steps(
        &mut self,
        state: &mut GpuState,
        contacts: &mut ContactSet,
        steps: u32,
        each: &mut dyn FnMut(&StepReport),
    ) -> Result<(), SimError> {
        for _ in 0..steps {
            let r = self.step(state, contacts)?;
            each(&r);
        }
        Ok(())
    }

    /// The state's clock was set (a rebuilt simulation continuing an earlier one): update any
    /// GPU copy of the time the stepper keeps.
    fn clock_changed(&mut self, _state: &GpuState) -> Result<(), SimError> {
        Ok(())
    }

    /// Records one frame (all its steps) into the host's command buffer `cmd`.
    ///
    /// # Safety
    /// `cmd` belongs to the stepper's device, is recording outside a render pass, and is
    /// submitted and waited for as `Simulation::record_step_into` documents.
    unsafe fn record_into(&self, _cmd: vk::CommandBuffer) -> Result<(), SimError> {
        Err(SimError::unsupported(
            "simulation.solver",
            format!(
                "recording a {} frame into a host command buffer is not supported; use \
                 step_frame and render_sync (or solver = \"symplectic-euler\")",
                self.info().name
            ),
        ))
    }
}

/// The scene's stepper over `state` (the one place that maps `simulation.solver` to a
/// stepper); `needs` is what the scene's contact method asks of it.
pub fn build(
    ctx: &Context,
    scene: &Scene,
    model: &SimModel,
    state: &GpuState,
    needs: &ContactNeeds,
) -> Result<Box<dyn Stepper>, SimError> {
    let stepper: Box<dyn Stepper> = match scene.simulation.solver {
        SolverKind::Newton => Box::new(newton::NewtonStepper::from_scene(
            ctx, scene, model, state, needs,
        )?),
        SolverKind::Xpbd => Box::new(xpbd::XpbdStepper::from_scene(ctx, scene, model, state)?),
        SolverKind::SymplecticEuler => Box::new(symplectic::SymplecticStepper::from_scene(
            ctx, scene, model, state,
        )?),
    };
    Ok(stepper)
}

/// Refuses, before anything is allocated, a model whose stepper would need a buffer larger than
/// the device's largest storage binding (`maxStorageBufferRange`), naming the buffer, its size
/// and the limit (issue 22: a scene too large is refused up front, not half-built).
pub fn check_buffer_sizes(ctx: &Context, scene: &Scene, model: &SimModel) -> Result<(), SimError> {
    let n = model.positions.len() as u64;
    let mut plan = vec![("state.x", 16 * n), ("state.v", 16 * n)];
    if scene.simulation.solver == SolverKind::Newton {
        let thin: Vec<[u32; 4]> = model.thin_elements.iter().map(|e| e.vertices()).collect();
        plan.extend(crate::fem::elements::pool_buffer_bytes(&model.tets, &thin));
        plan.push(("newton.contact_hess", 48 * n));
    }
    crate::fem::elements::check_buffer_sizes(ctx, &plan)?;
    Ok(())
}

/// The scene's bodies and colliders against what a stepper supports; the error names the
/// first scene field it cannot simulate. Steppers call it before allocating anything.
pub fn check_scene(info: &StepperInfo, scene: &Scene) -> Result<(), SimError> {
    let name = info.name;
    if scene.bodies.is_empty() {
        return Err(SimError::unsupported("body", "the scene has no body"));
    }
    let mut solid_model = None;
    for (i, b) in scene.bodies.iter().enumerate() {
        if !info.scripted_motion && !b.motion.is_empty() {
            return Err(SimError::unsupported(
                format!("body[{i}].motion"),
                format!("scripted motion is not supported by the {name} solver (newton, xpbd)"),
            ));
        }
        if !info.general_colliders && b.collider_offset > 0.0 {
            return Err(SimError::unsupported(
                format!("body[{i}].collider_offset"),
                format!(
                    "the {name} solver keeps a collider's own offset only (one static ground \
                     plane); a body's clearance needs newton or xpbd"
                ),
            ));
        }
        if !info.loads && !b.force.is_empty() {
            return Err(SimError::unsupported(
                format!("body[{i}].force"),
                format!("external forces are not supported by the {name} solver (newton, xpbd)"),
            ));
        }
        let m = b.material.model;
        if matches!(m, MaterialModel::Cloth | MaterialModel::Rod) {
            continue;
        }
        let scene_name = solid_model_name(m);
        if info
            .solid_models
            .is_some_and(|ok| !ok.contains(&scene_name))
        {
            return Err(SimError::unsupported(
                format!("body[{i}].material.model"),
                format!(
                    "the {name} solver has {} solids only",
                    info.solid_models.unwrap_or(&[]).join(" and ")
                ),
            ));
        }
        if !info.mixed_solid_models && solid_model.is_some_and(|x| x != m) {
            return Err(SimError::unsupported(
                format!("body[{i}].material.model"),
                "all solid bodies must use the same material model for now",
            ));
        }
        solid_model = Some(m);
    }
    if !info.general_colliders {
        for (i, c) in scene.colliders.iter().enumerate() {
            let plane = matches!(c.shape, ColliderShape::Plane { .. });
            if !plane || i > 0 || c.friction != 0.0 || c.velocity != [0.0; 3] {
                return Err(SimError::unsupported(
                    format!("collider[{i}]"),
                    format!("the {name} solver supports one static, frictionless ground plane"),
                ));
            }
        }
    }
    Ok(())
}

/// The scene's name of a solid material model.
fn solid_model_name(m: MaterialModel) -> &'static str {
    match m {
        MaterialModel::StableNeoHookean => "stable-neo-hookean",
        MaterialModel::Stvk => "stvk",
        MaterialModel::Corotated => "corotated",
        MaterialModel::Cloth => "cloth",
        MaterialModel::Rod => "rod",
    }
}
