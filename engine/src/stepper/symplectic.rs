//! Semi-implicit (symplectic) Euler, the RAINBOW baseline: [`SymplecticEuler`] records one step
//! (`kernels/integrate/symplectic_euler.comp`; reference: `cpu_reference::integrate`) and
//! [`SymplecticStepper`] steps a simulation with it (elastic gradients of tets, cloth and rods,
//! gravity, one static frictionless ground plane). Contact handlers act at the step's start,
//! between the free velocity update and the position update ([`Phase::Velocities`], RAINBOW's
//! PROX) and at its end.

use crate::contact::ContactSet;
use crate::error::SimError;
use crate::fem::{ElementModel, TetElements};
use crate::model::SimModel;
use crate::phase::{Phase, Phases, StepperInfo};
use crate::scene::Scene;
use crate::state::GpuState;
use crate::stepper::{check_scene, ContactHost, StepReport, Stepper};
use crate::vk::{ash::vk, ids, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph};

/// Parameters of one symplectic Euler step (SI units).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SymplecticEulerParams {
    /// Gravity (m/s²) in xyz; w unused.
    pub gravity: [f32; 4],
    /// Ground plane: unit normal in xyz (all zero: none), offset (m) in w.
    pub plane: [f32; 4],
    /// Number of vertices.
    pub n: u32,
    /// Time step (s).
    pub h: f32,
    /// 0: the whole step; 1: the velocity update only; 2: the position update (with the
    /// plane) from the velocities as they are (a contact handler acts between 1 and 2).
    pub stage: u32,
    /// Padding to 16 bytes.
    pub _pad: u32,
}

/// Records symplectic Euler steps.
#[derive(Debug, Default, Clone, Copy)]
pub struct SymplecticEuler;

impl SymplecticEuler {
    /// Records one step updating `positions` and `velocities` in place from the elastic
    /// gradient `grad` (N) and inverse masses (1/kg; 0 = fixed).
    pub fn record(
        &self,
        g: &mut Graph,
        positions: &GpuBuffer<[f32; 4]>,
        velocities: &GpuBuffer<[f32; 4]>,
        inv_mass: &GpuBuffer<f32>,
        grad: &GpuBuffer<[f32; 4]>,
        params: &SymplecticEulerParams,
    ) {
        g.dispatch(
            Dispatch::new(
                "integrate.symplectic_euler",
                ids::INTEGRATE_SYMPLECTIC_EULER,
                [params.n.div_ceil(64).max(1), 1, 1],
            )
            .workgroup_size(64)
            .read_write(positions)
            .read_write(velocities)
            .read(inv_mass)
            .read(grad)
            .push(params),
        );
    }
}

/// What the symplectic Euler stepper is and supports.
pub const INFO: StepperInfo = StepperInfo {
    name: "symplectic-euler",
    phases: Phases::STEP_START
        .union(Phases::VELOCITIES)
        .union(Phases::FINISHED),
    minimises_energy: false,
    scripted_motion: false,
    loads: false,
    general_colliders: false,
    mixed_solid_models: false,
    solid_models: None,
    record_into: true,
};

/// Symplectic Euler over the simulation's state: element gradients, then the velocity and
/// position update with a static frictionless ground plane, `frame_steps` of them fused into one
/// frame graph. When a contact handler acts in a step, the step runs as two graphs with the
/// handlers between them ([`Phase::Velocities`]).
pub struct SymplecticStepper {
    info: StepperInfo,
    /// One time step.
    step_graph: CompiledGraph,
    /// Element gradients and the free velocity update of one step.
    velocity_graph: CompiledGraph,
    /// The position update of one step from the velocities.
    position_graph: CompiledGraph,
    /// `frame_steps` time steps (one frame of the scene).
    frame_graph: CompiledGraph,
    frame_steps: u32,
    /// Kept alive for the graphs that bind them.
    _elements: Box<TetElements>,
}

impl SymplecticStepper {
    /// The scene's stepper over `state`.
    pub fn from_scene(
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        state: &GpuState,
    ) -> Result<SymplecticStepper, SimError> {
        check_scene(&INFO, scene)?;
        let colliders = crate::contact::colliders::from_scene(scene);
        let ground = crate::contact::colliders::ground_plane(&colliders);
        let elements = Box::new(TetElements::with_thin(
            ctx,
            &model.positions,
            &model.tets,
            &model.tet_lame,
            ElementModel::of_scene(scene),
            &model.thin_elements,
        )?);
        let sim = &scene.simulation;
        let params = SymplecticEulerParams {
            gravity: crate::math::vec4(sim.gravity),
            plane: crate::math::plane_vec4(ground),
            n: model.positions.len() as u32,
            h: sim.time_step() as f32,
            stage: 0,
            _pad: 0,
        };
        // `stage` 0: whole steps; 1: gradients and velocities; 2: positions only.
        let record = |name: &str, steps: u32, stage: u32| {
            let mut g = Graph::new(name);
            for _ in 0..steps {
                if stage != 2 {
                    elements.record_gradient(&mut g, &state.x);
                }
                SymplecticEuler.record(
                    &mut g,
                    &state.x,
                    &state.v,
                    &state.inv_mass,
                    elements.vertex_gradient(),
                    &SymplecticEulerParams { stage, ..params },
                );
            }
            g.compile(
                ctx,
                CompileOptions {
                    graph_timestamps: true,
                    ..Default::default()
                },
            )
        };
        let frame_graph = record("sim.symplectic_frame", sim.substeps, 0)?;
        let step_graph = record("sim.symplectic_step", 1, 0)?;
        let velocity_graph = record("sim.symplectic_velocities", 1, 1)?;
        let position_graph = record("sim.symplectic_positions", 1, 2)?;
        Ok(SymplecticStepper {
            info: INFO,
            step_graph,
            velocity_graph,
            position_graph,
            frame_graph,
            frame_steps: sim.substeps,
            _elements: elements,
        })
    }
}

impl ContactHost for SymplecticStepper {
    fn info(&self) -> &StepperInfo {
        &self.info
    }
}

impl Stepper for SymplecticStepper {
    fn step(
        &mut self,
        state: &mut GpuState,
        contacts: &mut ContactSet,
    ) -> Result<StepReport, SimError> {
        contacts.at(Phase::StepStart, state)?;
        let mut report = StepReport::default();
        if contacts
            .phases(state.clock.time())
            .contains(Phases::VELOCITIES)
        {
            self.velocity_graph.run()?;
            contacts.at(Phase::Velocities, state)?;
            self.position_graph.run()?;
            report.gpu_ms.evaluate =
                self.velocity_graph.gpu_ms()? + self.position_graph.gpu_ms()?;
        } else {
            self.step_graph.run()?;
            report.gpu_ms.evaluate = self.step_graph.gpu_ms()?;
        }
        contacts.at(Phase::Finished, state)?;
        state.clock.advance();
        Ok(report)
    }

    /// A whole frame runs as the fused frame graph when no handler acts in it.
    fn steps(
        &mut self,
        state: &mut GpuState,
        contacts: &mut ContactSet,
        steps: u32,
        each: &mut dyn FnMut(&StepReport),
    ) -> Result<(), SimError> {
        if steps != self.frame_steps || !contacts.phases(state.clock.time()).is_empty() {
            for _ in 0..steps {
                let r = self.step(state, contacts)?;
                each(&r);
            }
            return Ok(());
        }
        self.frame_graph.run()?;
        let mut report = StepReport::default();
        report.gpu_ms.evaluate = self.frame_graph.gpu_ms()?;
        each(&report);
        for _ in 0..steps {
            state.clock.advance();
        }
        Ok(())
    }

    unsafe fn record_into(&self, cmd: vk::CommandBuffer) -> Result<(), SimError> {
        self.frame_graph.record_into(cmd);
        Ok(())
    }
}
