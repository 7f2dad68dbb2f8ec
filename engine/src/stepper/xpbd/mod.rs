//! XPBD (Macklin et al. 2016, "XPBD: position-based simulation of compliant constrained
//! dynamics") on the GPU with multicolor Gauss–Seidel constraint sweeps.
//!
//! A time step is `substeps` substeps of size `h = Δt / substeps` ("small steps", Macklin et al.
//! 2019); a substep is
//! 1. **predict** (`kernels/xpbd/predict.comp`): `x_prev = x`; free vertices
//!    `v += h (g + f/m)`, `v *= max(0, 1 − damping h)`, `x += h v`; scripted vertices move to
//!    their [`crate::model::Motion`] at the substep's end; fixed vertices stay. Every
//!    constraint's λ is reset to 0.
//! 2. `iterations` × one sweep over every constraint, **one dispatch per color** (tets, then
//!    distance constraints, then bends; colored once at construction with the host greedy
//!    coloring, so the constraints of one color share no vertex): `kernels/xpbd/tet_sweep.comp`,
//!    `edge_sweep.comp`, `bending_sweep.comp`, with α̃ = α/h².
//! 3. **colliders** (`colliders.comp`): analytic plane, sphere and box projection with
//!    position-based Coulomb friction (Bender et al. 2015).
//! 4. **velocity** (`velocity.comp`): `v = (x − x_prev)/h`, substep clock + 1.
//!
//! The constraints and their compliances are described in [`system`]. All state stays in
//! persistent GPU buffers (the simulation's [`GpuState`] and the constraint sets); every graph is
//! compiled once in [`XpbdStepper::new`]. When no contact handler acts in a step, the whole time
//! step (all substeps) is one compiled graph; otherwise the same nodes run split into predict /
//! iteration / finish graphs and the handlers act after each prediction ([`Phase::Predicted`])
//! and after each constraint iteration ([`Phase::Iteration`]). Reference:
//! `cpu_reference::xpbd`.

pub mod system;

pub use crate::scene::TetSolve;
pub use system::{ConstraintSet, XpbdSystem};

use crate::contact::ContactSet;
use crate::error::SimError;
use crate::model::SimModel;
use crate::phase::{Phase, Phases, StepperInfo};
use crate::scene::Scene;
use crate::state::GpuState;
use crate::stepper::{check_scene, ContactHost, StepReport, Stepper};
use crate::vk::{
    ids, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph, VkError,
    VkResult,
};

/// XPBD settings (SI units).
#[derive(Debug, Clone, PartialEq)]
pub struct XpbdSettings {
    /// Time step Δt (s), split into `substeps`.
    pub h: f64,
    /// Gravity (m/s²).
    pub gravity: [f64; 3],
    /// Substeps per time step (≥ 1).
    pub substeps: u32,
    /// Constraint sweeps (Gauss–Seidel iterations over all colors) per substep (≥ 1).
    pub iterations: u32,
    /// Velocity damping rate (1/s): free velocities are scaled by `max(0, 1 − damping h)` per
    /// substep.
    pub damping: f64,
    /// How a tet's two constraints are solved.
    pub tet_solve: TetSolve,
}

impl Default for XpbdSettings {
    fn default() -> Self {
        XpbdSettings {
            h: 1.0 / 60.0,
            gravity: [0.0, 0.0, -9.81],
            substeps: 20,
            iterations: 1,
            damping: 0.0,
            tet_solve: TetSolve::Coupled,
        }
    }
}

impl XpbdSettings {
    /// Substep size (s).
    pub fn substep(&self) -> f64 {
        self.h / self.substeps.max(1) as f64
    }
}

/// Shape of the solver: colors and dispatches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct XpbdStats {
    /// Vertices.
    pub vertices: u32,
    /// Tet constraints (two scalar constraints each).
    pub tets: u32,
    /// Distance constraints.
    pub edges: u32,
    /// Bending constraints.
    pub bends: u32,
    /// Colors of the tets.
    pub tet_colors: u32,
    /// Colors of the distance constraints.
    pub edge_colors: u32,
    /// Colors of the bends.
    pub bend_colors: u32,
    /// Sweep dispatches per iteration (the sum of the colors).
    pub dispatches_per_iteration: u32,
    /// Dispatches per substep: predict, the sweeps and colliders (when there are any) of every
    /// iteration, the last collider projection (when there are colliders) and velocity (besides one fill node per non-empty λ buffer).
    pub dispatches_per_substep: u32,
    /// Substeps per time step.
    pub substeps: u32,
    /// Iterations per substep.
    pub iterations: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PredictPush {
    gravity: [f32; 4],
    n: u32,
    h: f32,
    damp: f32,
    _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct SweepPush {
    offset: u32,
    count: u32,
    inv_h2: f32,
    _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ColliderPush {
    n: u32,
    num_colliders: u32,
    h: f32,
    _pad: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct VelocityPush {
    n: u32,
    inv_h: f32,
    _pad: [u32; 2],
}

const WG: u32 = 64;

fn groups(n: usize) -> [u32; 3] {
    [(n as u32).div_ceil(WG).max(1), 1, 1]
}

/// One constraint family on the GPU.
struct GpuSet {
    vertices: GpuBuffer<[u32; 4]>,
    data: GpuBuffer<[f32; 4]>,
    lambda: GpuBuffer<f32>,
    /// Tets: the warm-started rotation of each corotated tet (quaternion xyzw).
    rot: Option<GpuBuffer<[f32; 4]>>,
    colors: Vec<std::ops::Range<u32>>,
    len: usize,
}

impl GpuSet {
    fn new(ctx: &Context, name: &str, set: &ConstraintSet, lambda_width: usize) -> VkResult<Self> {
        let s = BufferUsage::STORAGE;
        Ok(GpuSet {
            vertices: ctx.upload_buffer(&format!("xpbd.{name}"), &set.vertices, s)?,
            data: ctx.upload_buffer(&format!("xpbd.{name}_data"), &set.data, s)?,
            lambda: ctx.create_buffer(
                &format!("xpbd.{name}_lambda"),
                lambda_width * set.len(),
                s,
            )?,
            rot: None,
            colors: set.colors.clone(),
            len: set.len(),
        })
    }
}

/// The XPBD stepper: constraint buffers and compiled graphs for a [`SimModel`] over the
/// simulation's [`GpuState`].
pub struct XpbdStepper {
    settings: XpbdSettings,
    info: StepperInfo,
    stats: XpbdStats,
    /// The GPU substep clock (substeps completed), advanced by the velocity kernel.
    clock: GpuBuffer<u32>,
    step_graph: CompiledGraph,
    predict: CompiledGraph,
    iteration: CompiledGraph,
    finish: CompiledGraph,
    /// Kept alive for the graphs that bind them.
    _sets: [GpuSet; 3],
}

/// Buffers the recording helpers bind.
struct Bufs<'a> {
    x: &'a GpuBuffer<[f32; 4]>,
    v: &'a GpuBuffer<[f32; 4]>,
    x_prev: &'a GpuBuffer<[f32; 4]>,
    inv_mass: &'a GpuBuffer<f32>,
    f_ext: &'a GpuBuffer<[f32; 4]>,
    x0: &'a GpuBuffer<[f32; 4]>,
    vertex_motion: &'a GpuBuffer<u32>,
    motions: &'a GpuBuffer<[f32; 4]>,
    clock: &'a GpuBuffer<u32>,
    colliders: &'a GpuBuffer<[f32; 4]>,
    collider_offsets: &'a GpuBuffer<f32>,
    num_colliders: u32,
    sets: [(&'a GpuSet, crate::vk::KernelId, &'static str); 3],
}

impl Bufs<'_> {
    fn record_predict(&self, g: &mut Graph, s: &XpbdSettings, n: usize) {
        for (set, _, name) in self.sets {
            if set.len > 0 {
                g.fill(format!("xpbd.reset_{name}_lambda"), &set.lambda, 0);
            }
        }
        let h = s.substep();
        g.dispatch(
            Dispatch::new("xpbd.predict", ids::XPBD_PREDICT, groups(n))
                .workgroup_size(WG)
                .read_write(self.x)
                .read_write(self.v)
                .write(self.x_prev)
                .read(self.inv_mass)
                .read(self.f_ext)
                .read(self.x0)
                .read(self.vertex_motion)
                .read(self.motions)
                .read(self.clock)
                .push(&PredictPush {
                    gravity: crate::math::vec4(s.gravity),
                    n: n as u32,
                    h: h as f32,
                    damp: (1.0 - s.damping * h).max(0.0) as f32,
                    _pad: 0,
                }),
        );
    }

    fn record_iteration(&self, g: &mut Graph, s: &XpbdSettings, n: usize) {
        let h = s.substep();
        let inv_h2 = (1.0 / (h * h)) as f32;
        let coupled = u32::from(s.tet_solve == TetSolve::Coupled);
        for (set, kernel, name) in self.sets {
            for (c, r) in set.colors.iter().enumerate() {
                let count = r.end - r.start;
                let d = Dispatch::new(
                    format!("xpbd.{name}.color{c}"),
                    kernel,
                    groups(count as usize),
                )
                .workgroup_size(WG)
                .spec(&[coupled])
                .read_write(self.x)
                .read(self.inv_mass)
                .read(&set.vertices)
                .read(&set.data)
                .read_write(&set.lambda);
                let d = match &set.rot {
                    Some(r) => d.read_write(r),
                    None => d,
                };
                g.dispatch(d.push(&SweepPush {
                    offset: r.start,
                    count,
                    inv_h2,
                    _pad: 0,
                }));
            }
        }
        self.record_colliders(g, s, n);
    }

    /// Collider projection: after every iteration's sweeps, so the elastic constraints react
    /// to contact within the substep (projected once after all iterations, a thin part pressed
    /// on a collider inverts), and once more last in the substep, before the velocity update,
    /// so that nothing a contact handler did after the last iteration leaves a vertex inside a
    /// collider's offset.
    fn record_colliders(&self, g: &mut Graph, s: &XpbdSettings, n: usize) {
        if self.num_colliders > 0 {
            g.dispatch(
                Dispatch::new("xpbd.colliders", ids::XPBD_COLLIDERS, groups(n))
                    .workgroup_size(WG)
                    .read_write(self.x)
                    .read(self.x_prev)
                    .read(self.inv_mass)
                    .read(self.colliders)
                    .read(self.clock)
                    .read(self.collider_offsets)
                    .push(&ColliderPush {
                        n: n as u32,
                        num_colliders: self.num_colliders,
                        h: s.substep() as f32,
                        _pad: 0,
                    }),
            );
        }
    }

    fn record_finish(&self, g: &mut Graph, s: &XpbdSettings, n: usize) {
        self.record_colliders(g, s, n);
        let h = s.substep();
        g.dispatch(
            Dispatch::new("xpbd.velocity", ids::XPBD_VELOCITY, groups(n))
                .workgroup_size(WG)
                .read(self.x)
                .read(self.x_prev)
                .write(self.v)
                .read_write(self.clock)
                .push(&VelocityPush {
                    n: n as u32,
                    inv_h: (1.0 / h) as f32,
                    _pad: [0; 2],
                }),
        );
    }
}

/// What the XPBD stepper is and supports.
pub const INFO: StepperInfo = StepperInfo {
    name: "xpbd",
    phases: Phases::PREDICTED.union(Phases::ITERATION),
    minimises_energy: false,
    scripted_motion: true,
    loads: true,
    general_colliders: true,
    mixed_solid_models: true,
    solid_models: Some(&["stable-neo-hookean", "corotated"]),
    record_into: false,
};

impl XpbdSettings {
    /// The settings of `scene` (`[xpbd]`, the time step and gravity of `[simulation]`).
    pub fn from_scene(scene: &Scene) -> XpbdSettings {
        XpbdSettings {
            h: scene.simulation.time_step(),
            gravity: scene.simulation.gravity,
            substeps: scene.xpbd.substeps,
            iterations: scene.xpbd.iterations,
            damping: scene.xpbd.damping,
            tet_solve: scene.xpbd.tet_solve,
        }
    }
}

impl XpbdStepper {
    /// The scene's XPBD stepper over `state`.
    pub fn from_scene(
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        state: &GpuState,
    ) -> Result<XpbdStepper, SimError> {
        check_scene(&INFO, scene)?;
        XpbdStepper::new(ctx, model, state, XpbdSettings::from_scene(scene))
    }

    /// Packs and colors the model's constraints and compiles every graph over `state`.
    pub fn new(
        ctx: &Context,
        model: &SimModel,
        state: &GpuState,
        settings: XpbdSettings,
    ) -> Result<XpbdStepper, SimError> {
        if settings.substeps == 0
            || settings.iterations == 0
            || !(settings.h.is_finite() && settings.h > 0.0)
        {
            return Err(SimError::invalid(
                "xpbd",
                "substeps, iterations and the time step must be positive",
            ));
        }
        let sys = XpbdSystem::new(model, &[]).map_err(|m| SimError::solver("xpbd", m))?;
        Ok(Self::from_system(ctx, &sys, state, settings)?)
    }

    /// Builds the stepper from an already packed system (the reference's input) over `state`
    /// (which holds the system's vertices, masses, motions and colliders).
    pub fn from_system(
        ctx: &Context,
        sys: &XpbdSystem,
        state: &GpuState,
        settings: XpbdSettings,
    ) -> VkResult<XpbdStepper> {
        let n = sys.num_vertices();
        if state.num_vertices() != n {
            return Err(VkError::Graph {
                graph: "xpbd".into(),
                message: format!(
                    "{} state vertices for a system of {n}",
                    state.num_vertices()
                ),
            });
        }
        let s = BufferUsage::STORAGE;
        let clock = ctx.upload_buffer("xpbd.clock", &[0u32], s)?;
        let mut tets = GpuSet::new(ctx, "tets", &sys.tets, 2)?;
        tets.rot = Some(ctx.upload_buffer(
            "xpbd.tets_rot",
            &vec![[0.0, 0.0, 0.0, 1.0f32]; sys.tets.len().max(1)],
            s,
        )?);
        let edges = GpuSet::new(ctx, "edges", &sys.edges, 1)?;
        let bends = GpuSet::new(ctx, "bends", &sys.bends, 4)?;
        let num_colliders = state.num_colliders() as u32;
        let b = Bufs {
            x: &state.x,
            v: &state.v,
            x_prev: &state.x_prev,
            inv_mass: &state.inv_mass,
            f_ext: &state.f_ext,
            x0: &state.x0,
            vertex_motion: &state.vertex_motion,
            motions: &state.motions,
            clock: &clock,
            colliders: &state.colliders,
            collider_offsets: &state.collider_offsets,
            num_colliders,
            sets: [
                (&tets, ids::XPBD_TET_SWEEP, "tets"),
                (&edges, ids::XPBD_EDGE_SWEEP, "edges"),
                (&bends, ids::XPBD_BENDING_SWEEP, "bends"),
            ],
        };
        let opts = CompileOptions {
            graph_timestamps: true,
            ..Default::default()
        };
        let st = &settings;
        let mut g = Graph::new("xpbd.step");
        for _ in 0..st.substeps {
            b.record_predict(&mut g, st, n);
            for _ in 0..st.iterations {
                b.record_iteration(&mut g, st, n);
            }
            b.record_finish(&mut g, st, n);
        }
        let step_graph = g.compile(ctx, opts)?;
        let mut g = Graph::new("xpbd.predict");
        b.record_predict(&mut g, st, n);
        let predict = g.compile(ctx, opts)?;
        let mut g = Graph::new("xpbd.iteration");
        b.record_iteration(&mut g, st, n);
        let iteration = g.compile(ctx, opts)?;
        let mut g = Graph::new("xpbd.finish");
        b.record_finish(&mut g, st, n);
        let finish = g.compile(ctx, opts)?;
        let colors = |x: &ConstraintSet| x.colors.len() as u32;
        let per_iteration = colors(&sys.tets) + colors(&sys.edges) + colors(&sys.bends);
        let stats = XpbdStats {
            vertices: n as u32,
            tets: sys.tets.len() as u32,
            edges: sys.edges.len() as u32,
            bends: sys.bends.len() as u32,
            tet_colors: colors(&sys.tets),
            edge_colors: colors(&sys.edges),
            bend_colors: colors(&sys.bends),
            dispatches_per_iteration: per_iteration,
            dispatches_per_substep: 2
                + u32::from(num_colliders > 0) * (st.iterations + 1)
                + st.iterations * per_iteration,
            substeps: st.substeps,
            iterations: st.iterations,
        };
        Ok(XpbdStepper {
            settings,
            info: INFO,
            stats,
            clock,
            step_graph,
            predict,
            iteration,
            finish,
            _sets: [tets, edges, bends],
        })
    }

    /// One time step with the split graphs, calling the contact handlers after each substep's
    /// prediction and after each constraint iteration.
    fn step_with_phases(
        &mut self,
        state: &GpuState,
        contacts: &mut ContactSet,
        report: &mut StepReport,
    ) -> Result<(), SimError> {
        let of = self.settings.iterations;
        for _ in 0..self.settings.substeps {
            self.predict.run()?;
            report.gpu_ms.predict += self.predict.gpu_ms()?;
            contacts.at(Phase::Predicted, state)?;
            for k in 0..of {
                self.iteration.run()?;
                report.gpu_ms.evaluate += self.iteration.gpu_ms()?;
                contacts.at(Phase::Iteration { k, of }, state)?;
            }
            self.finish.run()?;
            report.gpu_ms.finish += self.finish.gpu_ms()?;
        }
        Ok(())
    }

    /// Colors, constraint counts and dispatches per substep.
    pub fn stats(&self) -> XpbdStats {
        self.stats
    }

    /// The settings the stepper was built with.
    pub fn settings(&self) -> &XpbdSettings {
        &self.settings
    }

    /// The GPU substep clock (substeps completed), which scripted motions and moving colliders
    /// read.
    pub fn clock(&self) -> &GpuBuffer<u32> {
        &self.clock
    }
}

impl ContactHost for XpbdStepper {
    fn info(&self) -> &StepperInfo {
        &self.info
    }
}

impl Stepper for XpbdStepper {
    /// One time step (all substeps): the fused step graph when no contact handler acts in it,
    /// the split graphs with the handlers' phases otherwise.
    fn step(
        &mut self,
        state: &mut GpuState,
        contacts: &mut ContactSet,
    ) -> Result<StepReport, SimError> {
        let mut report = StepReport::default();
        let wanted = contacts.phases(state.clock.time());
        if wanted.intersects(Phases::PREDICTED | Phases::ITERATION) {
            self.step_with_phases(state, contacts, &mut report)?;
        } else {
            self.step_graph.run()?;
            report.gpu_ms.evaluate += self.step_graph.gpu_ms()?;
        }
        state.clock.advance();
        Ok(report)
    }

    fn clock_changed(&mut self, state: &GpuState) -> Result<(), SimError> {
        let substeps = state.clock.steps() * self.settings.substeps as u64;
        let clock = u32::try_from(substeps).map_err(|_| {
            SimError::solver(
                "xpbd",
                format!("{substeps} substeps exceed the u32 GPU clock"),
            )
        })?;
        self.clock.write(&[clock])?;
        Ok(())
    }
}
