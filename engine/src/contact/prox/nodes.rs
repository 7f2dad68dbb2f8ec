//! Per-node passes of a PROX step outside the contact solve (kernels `kernels/prox/damping.comp`
//! and `safe_velocity.comp`; references `cpu_reference::prox::nodes`):
//! - [`Damping`]: RAINBOW's linear damping in the free velocity update. Its semi-implicit step
//!   (`SemiImplicitStepper.step`) adds `h W f_d` with the lumped damping force `f_d = −C u`,
//!   `C = c V_e / 4` per tet node (`compute_damping_element_array`, lumped), evaluated at the
//!   start-of-step velocities; so `u′_a −= h c V_a w_a u_a` with `V_a` the node's lumped rest
//!   volume and `w_a` its inverse mass ([`damping_coefficients`]). Nodes without tets (cloth,
//!   rods) and fixed nodes are not damped.
//! - [`SafeVelocity`]: safe mode's velocity update after the position limit. Where the
//!   conservative bounds moved a node off the stepper's proposal, its velocity becomes
//!   `u = (x_limited − x_start) / h`, the velocity its positions took, so the next step carries
//!   no velocity into contact that the positions never had; `u` is scaled down to the node's
//!   speed before the limit, because the two-way forward steps also push primitives closer
//!   than their minimum distance apart, and that push must not become velocity (kinetic energy
//!   never grows from the update).

use crate::model::SimModel;
use crate::vk::{
    ids, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph, VkResult,
};

/// Workgroup size of the per-node passes.
const WG: u32 = 64;
/// Largest workgroup count per dispatch (the kernels loop over the rest).
const MAX_GROUPS: u32 = 65_535;

/// Push constants of `damping.comp` and `safe_velocity.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct NodePush {
    /// Nodes.
    pub n: u32,
    /// 1 / h (1/s; `safe_velocity` only).
    pub inv_h: f32,
    /// Padding.
    pub pad: [u32; 2],
}

fn groups(n: usize) -> [u32; 3] {
    [
        (n.div_ceil(WG as usize).max(1) as u32).min(MAX_GROUPS),
        1,
        1,
    ]
}

/// Per node `h c V_a w_a`: the fraction of its start velocity that RAINBOW's lumped damping
/// (coefficient `c`, kg/(m³·s)) removes in one step of `h` seconds (`V_a` = a quarter of the
/// rest volume of every tet at the node; 0 for fixed nodes and nodes without tets).
pub fn damping_coefficients(model: &SimModel, c: f64, h: f64) -> Vec<f32> {
    let mut volume = vec![0.0f64; model.positions.len()];
    for t in &model.tets {
        let p = t.map(|i| model.positions[i as usize]);
        let e = |k: usize| [0, 1, 2].map(|d| p[k][d] - p[0][d]);
        let (a, b, d) = (e(1), e(2), e(3));
        let det = a[0] * (b[1] * d[2] - b[2] * d[1]) - a[1] * (b[0] * d[2] - b[2] * d[0])
            + a[2] * (b[0] * d[1] - b[1] * d[0]);
        for &i in t {
            volume[i as usize] += det.abs() / 24.0;
        }
    }
    volume
        .iter()
        .zip(&model.inv_mass)
        .map(|(v, w)| (h * c * v * w) as f32)
        .collect()
}

/// RAINBOW's damping on the stepper's velocities: `u′ −= coeff ⊙ u_start`.
pub struct Damping {
    graph: CompiledGraph,
    _coeff: GpuBuffer<f32>,
}

impl Damping {
    /// The pass over `velocity` (u′ in place) with the start-of-step velocities
    /// `start_velocity` and the per-node coefficients `coeff` ([`damping_coefficients`]).
    pub fn new(
        ctx: &Context,
        coeff: &[f32],
        start_velocity: &GpuBuffer<[f32; 4]>,
        velocity: &GpuBuffer<[f32; 4]>,
    ) -> VkResult<Damping> {
        let n = coeff.len();
        let buf = ctx.create_buffer::<f32>("prox.damping_coeff", n.max(1), BufferUsage::STORAGE)?;
        if n > 0 {
            buf.write(coeff)?;
        }
        let mut g = Graph::new("prox.damping");
        g.dispatch(
            Dispatch::new("prox.damping", ids::PROX_DAMPING, groups(n))
                .workgroup_size(WG)
                .read(&buf)
                .read(start_velocity)
                .read_write(velocity)
                .push(&NodePush {
                    n: n as u32,
                    inv_h: 0.0,
                    pad: [0; 2],
                }),
        );
        let graph = g.compile(ctx, CompileOptions::default())?;
        Ok(Damping { graph, _coeff: buf })
    }

    /// Damps the velocities once.
    pub fn run(&self) -> VkResult<()> {
        self.graph.run()
    }
}

/// Safe mode's velocity update: [`SafeVelocity::step_started`] saves x at the step start,
/// [`SafeVelocity::before_limit`] the stepper's proposal, [`SafeVelocity::after_limit`] sets
/// `v = (x − x_start) / h`, never faster than before, where the limit changed x.
pub struct SafeVelocity {
    save_start: CompiledGraph,
    save_proposed: CompiledGraph,
    update: CompiledGraph,
    _x_start: GpuBuffer<[f32; 4]>,
    _x_proposed: GpuBuffer<[f32; 4]>,
}

impl SafeVelocity {
    /// The pass over the positions `x` and velocities `v` of `n` nodes, time step `h` (s).
    pub fn new(
        ctx: &Context,
        n: usize,
        x: &GpuBuffer<[f32; 4]>,
        v: &GpuBuffer<[f32; 4]>,
        h: f64,
    ) -> VkResult<SafeVelocity> {
        let x_start =
            ctx.create_buffer::<[f32; 4]>("prox.safe_x_start", n.max(1), BufferUsage::STORAGE)?;
        let x_proposed =
            ctx.create_buffer::<[f32; 4]>("prox.safe_x_proposed", n.max(1), BufferUsage::STORAGE)?;
        let copy = |name: &str, to: &GpuBuffer<[f32; 4]>| {
            let mut g = Graph::new(name);
            g.copy(name, x.slice(0..n), to.slice(0..n));
            g.compile(ctx, CompileOptions::default())
        };
        let save_start = copy("prox.safe_save_start", &x_start)?;
        let save_proposed = copy("prox.safe_save_proposed", &x_proposed)?;
        let mut g = Graph::new("prox.safe_velocity");
        g.dispatch(
            Dispatch::new("prox.safe_velocity", ids::PROX_SAFE_VELOCITY, groups(n))
                .workgroup_size(WG)
                .read(&x_start)
                .read(&x_proposed)
                .read(x)
                .read_write(v)
                .push(&NodePush {
                    n: n as u32,
                    inv_h: (1.0 / h) as f32,
                    pad: [0; 2],
                }),
        );
        let update = g.compile(ctx, CompileOptions::default())?;
        Ok(SafeVelocity {
            save_start,
            save_proposed,
            update,
            _x_start: x_start,
            _x_proposed: x_proposed,
        })
    }

    /// Saves the positions at the step start.
    pub fn step_started(&self) -> VkResult<()> {
        self.save_start.run()
    }

    /// Saves the stepper's proposed positions (before the limit).
    pub fn before_limit(&self) -> VkResult<()> {
        self.save_proposed.run()
    }

    /// Velocities of the limited nodes from the positions they took.
    pub fn after_limit(&self) -> VkResult<()> {
        self.update.run()
    }
}
