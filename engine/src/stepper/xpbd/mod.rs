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
//! persistent GPU buffers; every graph is compiled once in [`XpbdStepper::new`]. Without a hook
//! a whole time step (all substeps) is one compiled graph; [`XpbdStepper::step_with`] runs the
//! same nodes split into predict / iteration / finish graphs so a collision handler can run its
//! own graphs on [`XpbdStepper::positions`] in between. Reference:
//! [`crate::cpu_reference::xpbd`].

pub mod system;

pub use crate::scene::TetSolve;
pub use system::{ConstraintSet, XpbdSystem};

use crate::contact::colliders::{pack_colliders, Collider};
use crate::model::SimModel;
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
    /// Analytic colliders (unit plane normals), with friction coefficients and velocities.
    pub colliders: Vec<Collider>,
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
            colliders: Vec::new(),
        }
    }
}

impl XpbdSettings {
    /// Substep size (s).
    pub fn substep(&self) -> f64 {
        self.h / self.substeps.max(1) as f64
    }
}

/// Where [`XpbdStepper::step_with`] calls its hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XpbdPhase {
    /// After a substep's prediction (positions predicted, λ reset).
    Predicted,
    /// After constraint iteration `k` (0-based) of a substep.
    Iteration(u32),
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
    /// iteration, and velocity (besides one fill node per non-empty λ buffer).
    pub dispatches_per_substep: u32,
    /// Substeps per time step.
    pub substeps: u32,
    /// Iterations per substep.
    pub iterations: u32,
}

/// GPU milliseconds of one time step per graph (whole-graph timestamps).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct XpbdGpuMs {
    /// The fused step graph (no hook).
    pub step: f64,
    /// Prediction graphs (with a hook).
    pub predict: f64,
    /// Iteration graphs (with a hook).
    pub iterations: f64,
    /// Collider and velocity graphs (with a hook).
    pub finish: f64,
}

impl XpbdGpuMs {
    /// Sum over the graphs.
    pub fn total(&self) -> f64 {
        self.step + self.predict + self.iterations + self.finish
    }
}

/// What one time step did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct XpbdStepStats {
    /// GPU milliseconds per graph.
    pub gpu_ms: XpbdGpuMs,
    /// Substeps run.
    pub substeps: u32,
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

/// The XPBD stepper: persistent GPU state and compiled graphs for a [`SimModel`].
pub struct XpbdStepper {
    settings: XpbdSettings,
    stats: XpbdStats,
    positions: GpuBuffer<[f32; 4]>,
    velocities: GpuBuffer<[f32; 4]>,
    x_prev: GpuBuffer<[f32; 4]>,
    inv_mass: GpuBuffer<f32>,
    clock: GpuBuffer<u32>,
    f_ext: GpuBuffer<[f32; 4]>,
    colliders: GpuBuffer<[f32; 4]>,
    step_graph: CompiledGraph,
    predict: CompiledGraph,
    iteration: CompiledGraph,
    finish: CompiledGraph,
    substeps_done: u64,
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
    /// on a collider inverts). Not again before the velocity update: surface collision handling
    /// runs after each iteration (the step hook) and must have the last word.
    fn record_colliders(&self, g: &mut Graph, s: &XpbdSettings, n: usize) {
        if !s.colliders.is_empty() {
            g.dispatch(
                Dispatch::new("xpbd.colliders", ids::XPBD_COLLIDERS, groups(n))
                    .workgroup_size(WG)
                    .read_write(self.x)
                    .read(self.x_prev)
                    .read(self.inv_mass)
                    .read(self.colliders)
                    .read(self.clock)
                    .push(&ColliderPush {
                        n: n as u32,
                        num_colliders: s.colliders.len() as u32,
                        h: s.substep() as f32,
                        _pad: 0,
                    }),
            );
        }
    }

    fn record_finish(&self, g: &mut Graph, s: &XpbdSettings, n: usize) {
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

impl XpbdStepper {
    /// Packs and colors the model's constraints, uploads the state and compiles every graph.
    pub fn new(ctx: &Context, model: &SimModel, settings: XpbdSettings) -> VkResult<XpbdStepper> {
        let err = |message: String| VkError::Graph {
            graph: "xpbd".into(),
            message,
        };
        if settings.substeps == 0
            || settings.iterations == 0
            || !(settings.h.is_finite() && settings.h > 0.0)
        {
            return Err(err(
                "substeps, iterations and the time step must be positive".into(),
            ));
        }
        let sys = XpbdSystem::new(model, &settings.colliders).map_err(err)?;
        Self::from_system(ctx, &sys, settings)
    }

    /// Builds the stepper from an already packed system (the reference's input).
    pub fn from_system(
        ctx: &Context,
        sys: &XpbdSystem,
        settings: XpbdSettings,
    ) -> VkResult<XpbdStepper> {
        let n = sys.num_vertices();
        let s = BufferUsage::STORAGE;
        let positions = ctx.upload_buffer("xpbd.x", &sys.positions, s)?;
        let velocities = ctx.upload_buffer("xpbd.v", &sys.velocities, s)?;
        let x_prev = ctx.create_buffer::<[f32; 4]>("xpbd.x_prev", n, s)?;
        let inv_mass = ctx.upload_buffer("xpbd.inv_mass", &sys.inv_mass, s)?;
        let f_ext = ctx.upload_buffer("xpbd.f_ext", &sys.external_forces, s)?;
        let x0 = ctx.upload_buffer("xpbd.x0", &sys.positions, s)?;
        let vertex_motion = ctx.upload_buffer("xpbd.vertex_motion", &sys.vertex_motion, s)?;
        let motions = if sys.motions.is_empty() {
            ctx.create_buffer::<[f32; 4]>("xpbd.motions", 3, s)?
        } else {
            ctx.upload_buffer("xpbd.motions", &sys.motions, s)?
        };
        let clock = ctx.upload_buffer("xpbd.clock", &[0u32], s)?;
        // Host-visible: the host may move colliders between steps (`set_colliders`).
        let colliders = ctx.upload_buffer(
            "xpbd.colliders",
            &sys.colliders,
            BufferUsage::HOST_WRITE | s,
        )?;
        let mut tets = GpuSet::new(ctx, "tets", &sys.tets, 2)?;
        tets.rot = Some(ctx.upload_buffer(
            "xpbd.tets_rot",
            &vec![[0.0, 0.0, 0.0, 1.0f32]; sys.tets.len().max(1)],
            s,
        )?);
        let edges = GpuSet::new(ctx, "edges", &sys.edges, 1)?;
        let bends = GpuSet::new(ctx, "bends", &sys.bends, 4)?;
        let b = Bufs {
            x: &positions,
            v: &velocities,
            x_prev: &x_prev,
            inv_mass: &inv_mass,
            f_ext: &f_ext,
            x0: &x0,
            vertex_motion: &vertex_motion,
            motions: &motions,
            clock: &clock,
            colliders: &colliders,
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
                + u32::from(!st.colliders.is_empty()) * st.iterations
                + st.iterations * per_iteration,
            substeps: st.substeps,
            iterations: st.iterations,
        };
        // The compiled graphs keep every buffer they bind alive; only what the host touches is
        // kept here.
        Ok(XpbdStepper {
            settings,
            stats,
            positions,
            velocities,
            x_prev,
            inv_mass,
            clock,
            f_ext,
            colliders,
            step_graph,
            predict,
            iteration,
            finish,
            substeps_done: 0,
        })
    }

    /// Advances one time step (all substeps) with the fused step graph.
    pub fn step(&mut self) -> VkResult<XpbdStepStats> {
        self.step_graph.run()?;
        self.substeps_done += self.settings.substeps as u64;
        Ok(XpbdStepStats {
            gpu_ms: XpbdGpuMs {
                step: self.step_graph.gpu_ms()?,
                ..Default::default()
            },
            substeps: self.settings.substeps,
        })
    }

    /// Advances one time step calling `hook` after each substep's prediction
    /// ([`XpbdPhase::Predicted`]) and after each constraint iteration
    /// ([`XpbdPhase::Iteration`]); the hook may run its own graphs on [`Self::positions`].
    pub fn step_with(
        &mut self,
        hook: &mut dyn FnMut(XpbdPhase) -> Result<(), VkError>,
    ) -> VkResult<XpbdStepStats> {
        let mut st = XpbdStepStats {
            substeps: self.settings.substeps,
            ..Default::default()
        };
        for _ in 0..self.settings.substeps {
            self.predict.run()?;
            st.gpu_ms.predict += self.predict.gpu_ms()?;
            hook(XpbdPhase::Predicted)?;
            for k in 0..self.settings.iterations {
                self.iteration.run()?;
                st.gpu_ms.iterations += self.iteration.gpu_ms()?;
                hook(XpbdPhase::Iteration(k))?;
            }
            self.finish.run()?;
            st.gpu_ms.finish += self.finish.gpu_ms()?;
            self.substeps_done += 1;
        }
        Ok(st)
    }

    /// Colors, constraint counts and dispatches per substep.
    pub fn stats(&self) -> XpbdStats {
        self.stats
    }

    /// The settings the stepper was built with.
    pub fn settings(&self) -> &XpbdSettings {
        &self.settings
    }

    /// Simulated time (s): substeps completed × substep size.
    pub fn time(&self) -> f64 {
        self.substeps_done as f64 * self.settings.substep()
    }

    /// The GPU substep clock (substeps completed), which scripted motions and moving colliders
    /// read.
    pub fn clock(&self) -> &GpuBuffer<u32> {
        &self.clock
    }

    /// Current positions (m), one vec4 per vertex.
    pub fn positions(&self) -> &GpuBuffer<[f32; 4]> {
        &self.positions
    }

    /// Positions at the start of the current substep (m), one vec4 per vertex.
    pub fn previous_positions(&self) -> &GpuBuffer<[f32; 4]> {
        &self.x_prev
    }

    /// Inverse masses (1/kg; 0 for fixed and scripted vertices).
    pub fn inverse_masses(&self) -> &GpuBuffer<f32> {
        &self.inv_mass
    }

    /// Current velocities (m/s), one vec4 per vertex.
    pub fn velocities(&self) -> &GpuBuffer<[f32; 4]> {
        &self.velocities
    }

    /// Constant external force on each vertex (N), one vec4 per vertex; the host may rewrite
    /// it between steps.
    pub fn external_forces(&self) -> &GpuBuffer<[f32; 4]> {
        &self.f_ext
    }

    /// Replaces the colliders between steps (same count as at creation; poses at time 0,
    /// moved by `velocity · t`, unit plane normals).
    pub fn set_colliders(&self, colliders: &[Collider]) -> VkResult<()> {
        if colliders.len() != self.settings.colliders.len() {
            return Err(VkError::Graph {
                graph: "xpbd".into(),
                message: format!(
                    "{} colliders given, the stepper was built with {}",
                    colliders.len(),
                    self.settings.colliders.len()
                ),
            });
        }
        self.colliders.write_at(0, &pack_colliders(colliders))
    }

    /// Sets the substeps completed (the clock scripted motions and moving colliders read), for
    /// a rebuilt stepper continuing an earlier one.
    pub fn set_substeps_done(&mut self, substeps: u64) -> VkResult<()> {
        let clock = u32::try_from(substeps).map_err(|_| VkError::Graph {
            graph: "xpbd".into(),
            message: format!("{substeps} substeps exceed the u32 GPU clock"),
        })?;
        self.clock.write(&[clock])?;
        self.substeps_done = substeps;
        Ok(())
    }
}
