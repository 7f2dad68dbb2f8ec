//! The one owner of a simulation's state buffers: positions, velocities, positions at the start
//! of the current (sub)step, masses, external forces, rest positions, scripted motions and
//! analytic colliders, allocated once from the model ([`GpuState::upload`]), and the simulated
//! time ([`Clock`]). Steppers and contact handlers bind these buffers (a [`GpuBuffer`] clone is a
//! handle to the same memory) instead of uploading their own copies; the host setters
//! (`simulation/control.rs`) and the renderer view (`simulation/embed.rs`) write and read them
//! here whatever the stepper.

use crate::contact::colliders::{pack_colliders, Collider};
use crate::math::vec4s;
use crate::model::SimModel;
use crate::vk::{
    BufferUsage, CompileOptions, CompiledGraph, Context, GpuBuffer, Graph, VkError, VkResult,
};

/// Simulated time, kept in one unit in one place: whole time steps of `h` seconds (the scene's
/// `1 / (frame_rate · substeps)`). Every stepper advances it by one at the end of each step;
/// the GPU copies that kernels read (Newton's `f32` seconds, XPBD's substep counter) are
/// derived from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    /// Time steps completed.
    steps: u64,
    /// Time step h (s).
    h: f64,
}

impl Clock {
    /// A clock at time 0 with time step `h` (s).
    pub fn new(h: f64) -> Clock {
        Clock { steps: 0, h }
    }

    /// Time steps completed.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Time step h (s).
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Simulated time (s): steps completed × h.
    pub fn time(&self) -> f64 {
        self.steps as f64 * self.h
    }

    /// Time at the end of the step in progress (s): (steps completed + 1) × h.
    pub fn next_time(&self) -> f64 {
        (self.steps + 1) as f64 * self.h
    }

    /// Counts one completed time step.
    pub fn advance(&mut self) {
        self.steps += 1;
    }

    /// Sets the steps completed (a rebuilt simulation continuing an earlier one).
    pub fn set_steps(&mut self, steps: u64) {
        self.steps = steps;
    }
}

/// The state buffers of a simulation (SI units; one `[f32; 4]` per vertex with w unused).
pub struct GpuState {
    /// Positions x (m).
    pub x: GpuBuffer<[f32; 4]>,
    /// Velocities v (m/s).
    pub v: GpuBuffer<[f32; 4]>,
    /// Positions at the start of the current (sub)step (m), written by the steppers' prediction.
    pub x_prev: GpuBuffer<[f32; 4]>,
    /// Lumped masses (kg).
    pub mass: GpuBuffer<f32>,
    /// Inverse masses (1/kg; 0 for fixed vertices).
    pub inv_mass: GpuBuffer<f32>,
    /// Constant external force per vertex (N); the host may rewrite it between steps.
    pub f_ext: GpuBuffer<[f32; 4]>,
    /// Rest (initial) positions (m), the origin of scripted motions.
    pub x0: GpuBuffer<[f32; 4]>,
    /// Scripted motion of each vertex (index into `motions`, `u32::MAX` for none).
    pub vertex_motion: GpuBuffer<u32>,
    /// Scripted motions, three vec4 each (axis and angular velocity; centre and end time;
    /// velocity); at least one (zeros) so the buffer is never empty.
    pub motions: GpuBuffer<[f32; 4]>,
    /// Analytic colliders as the kernels' vec4 quadruples ([`pack_colliders`]), host-writable so
    /// colliders can move between steps.
    pub colliders: GpuBuffer<[f32; 4]>,
    /// Number of colliders (fixed at creation).
    num_colliders: usize,
    /// Per vertex, the clearance (m) it keeps from every collider on top of the collider's own
    /// offset (its body's `collider_offset`).
    pub collider_offsets: GpuBuffer<f32>,
    /// Simulated time.
    pub clock: Clock,
    /// Host-visible copies of x and v, filled once per frame (or on request).
    pub mirror: StateMirror,
}

/// Host-visible copies of the positions and velocities (`sim.readback.x`, `sim.readback.v`: no
/// per-frame staging allocation on discrete GPUs) and the graph that fills them. A stepper may
/// record the copy in its last graph of a step ([`StateMirror::record_copy`]) so that the wait
/// it needs anyway covers it: the frame's readback then costs no submission and no host wait
/// of its own.
pub struct StateMirror {
    /// The state's x and v (the copy's sources).
    sources: [GpuBuffer<[f32; 4]>; 2],
    buffers: [GpuBuffer<[f32; 4]>; 2],
    graph: CompiledGraph,
    /// The copies hold the state as it is (a stepper said so since the state last changed).
    filled: bool,
}

impl StateMirror {
    fn new(ctx: &Context, x: &GpuBuffer<[f32; 4]>, v: &GpuBuffer<[f32; 4]>) -> VkResult<Self> {
        let n = x.len();
        // Storage too: a stepper's gated section copies with a kernel.
        let usage = BufferUsage::HOST_READ | BufferUsage::STORAGE;
        let buffers = [
            ctx.create_buffer::<[f32; 4]>("sim.readback.x", n, usage)?,
            ctx.create_buffer::<[f32; 4]>("sim.readback.v", n, usage)?,
        ];
        let sources = [x.clone(), v.clone()];
        let mut g = Graph::new("sim.readback");
        record_copy(&mut g, &sources, &buffers);
        let graph = g.compile(ctx, CompileOptions::default())?;
        Ok(StateMirror {
            sources,
            buffers,
            graph,
            filled: false,
        })
    }

    /// Appends the copy of x and v into the host-visible copies to `g`: for a stepper's last
    /// graph of a step, after which (when nothing changes x or v) it calls
    /// [`StateMirror::mark_filled`] once a wait covered that graph.
    pub fn record_copy(&self, g: &mut Graph) {
        record_copy(g, &self.sources, &self.buffers);
    }

    /// The copies hold the state as it is: a graph with [`StateMirror::record_copy`] ran last
    /// and completed (a wait covered it), and nothing changed x or v after it.
    pub fn mark_filled(&mut self) {
        self.filled = true;
    }

    /// The state may change from here: the copies are stale until filled again.
    pub fn forget(&mut self) {
        self.filled = false;
    }

    /// Fills the copies with the current x and v: nothing to do when a stepper filled them
    /// ([`StateMirror::mark_filled`]), else one submission and one host wait.
    pub fn sync(&mut self) -> VkResult<()> {
        if !self.filled {
            self.graph.run()?;
            self.filled = true;
        }
        Ok(())
    }

    /// Whether the copies were filled since the state last changed in a step
    /// ([`StateMirror::forget`]); the host's setters between steps do not count.
    pub fn is_filled(&self) -> bool {
        self.filled
    }

    /// Runs the copy (one submission and one host wait) whatever a stepper filled.
    pub fn refresh(&self) -> VkResult<()> {
        self.graph.run()
    }

    /// The positions (m) as of the last fill; empty where the copies are not host-visible.
    pub fn positions(&self) -> &[[f32; 4]] {
        self.buffers[0].mapped().unwrap_or(&[])
    }

    /// The velocities (m/s) as of the last fill; empty where the copies are not host-visible.
    pub fn velocities(&self) -> &[[f32; 4]] {
        self.buffers[1].mapped().unwrap_or(&[])
    }

    /// Whether the copies are host-visible (always, unless the allocator placed them elsewhere).
    pub fn is_host_visible(&self) -> bool {
        self.buffers[0].mapped().is_some() && self.buffers[1].mapped().is_some()
    }
}

/// Appends the copies `sources` (x, v) → `buffers` to `g`.
fn record_copy(
    g: &mut Graph,
    sources: &[GpuBuffer<[f32; 4]>; 2],
    buffers: &[GpuBuffer<[f32; 4]>; 2],
) {
    g.copy("readback.positions", &sources[0], &buffers[0]);
    g.copy("readback.velocities", &sources[1], &buffers[1]);
}

/// Scripted motions as the kernels' vec4 triples (`kernels/include/motion.glsl`).
pub fn pack_motions(model: &SimModel) -> Vec<[f32; 4]> {
    let f = |a: [f64; 3], w: f64| [a[0] as f32, a[1] as f32, a[2] as f32, w as f32];
    let mut out: Vec<[f32; 4]> = model
        .motions
        .iter()
        .flat_map(|m| {
            [
                f(m.axis, m.angular_velocity),
                f(m.center, m.until),
                f(m.velocity, 0.0),
            ]
        })
        .collect();
    if out.is_empty() {
        out.resize(3, [0.0; 4]);
    }
    out
}

impl GpuState {
    /// Uploads the model's state and `colliders` (unit plane normals); the clock starts at 0
    /// with time step `h` (s).
    pub fn upload(
        ctx: &Context,
        model: &SimModel,
        colliders: &[Collider],
        h: f64,
    ) -> VkResult<GpuState> {
        let n = model.positions.len();
        let storage = BufferUsage::STORAGE;
        let f32s = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
        let x0 = vec4s(&model.positions);
        let vertex_motion = if model.vertex_motion.len() == n {
            model.vertex_motion.clone()
        } else {
            vec![u32::MAX; n]
        };
        // The element kernels read the positions (and the assembly the masses) through texel
        // views.
        let texel = storage | BufferUsage::TEXEL;
        let x = ctx.upload_buffer("state.x", &x0, texel)?;
        let v = ctx.upload_buffer("state.v", &vec4s(&model.velocities), storage)?;
        let mirror = StateMirror::new(ctx, &x, &v)?;
        Ok(GpuState {
            x,
            v,
            mirror,
            x_prev: ctx.create_buffer::<[f32; 4]>("state.x_prev", n, storage)?,
            mass: ctx.upload_buffer("state.mass", &f32s(&model.masses), texel)?,
            inv_mass: ctx.upload_buffer("state.inv_mass", &f32s(&model.inv_mass), texel)?,
            f_ext: ctx.upload_buffer("state.f_ext", &vec4s(&model.external_forces), storage)?,
            x0: ctx.upload_buffer("state.x0", &x0, storage)?,
            vertex_motion: ctx.upload_buffer("state.vertex_motion", &vertex_motion, storage)?,
            motions: ctx.upload_buffer("state.motions", &pack_motions(model), storage)?,
            colliders: ctx.upload_buffer(
                "state.colliders",
                &pack_colliders(colliders),
                BufferUsage::HOST_WRITE | storage,
            )?,
            num_colliders: colliders.len(),
            collider_offsets: ctx.upload_buffer(
                "state.collider_offsets",
                &f32s(&model.vertex_collider_offsets()),
                storage,
            )?,
            clock: Clock::new(h),
        })
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.x.len()
    }

    /// Number of analytic colliders (fixed at creation).
    pub fn num_colliders(&self) -> usize {
        self.num_colliders
    }

    /// Replaces the colliders between steps (same count as at creation; poses at time 0, moved
    /// by `velocity · t`, unit plane normals).
    pub fn write_colliders(&self, colliders: &[Collider]) -> VkResult<()> {
        if colliders.len() != self.num_colliders {
            return Err(VkError::Graph {
                graph: "state".into(),
                message: format!(
                    "{} colliders given, the simulation was built with {}",
                    colliders.len(),
                    self.num_colliders
                ),
            });
        }
        self.colliders.write_at(0, &pack_colliders(colliders))
    }

    /// The context the buffers live on.
    pub fn context(&self) -> Context {
        self.x.context()
    }
}
