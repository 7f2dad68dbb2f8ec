//! The BAL terms added to the Newton stepper's float system (`kernels/bal/system_add.comp`):
//! the node gradient into the right-hand side (with the new right-hand side's squared norm
//! reduced for Algorithm 1's relative gradient test), and the node diagonal blocks and
//! stiffness into the block-Jacobi preconditioner and the warm start. Compiled per
//! [`super::BalContact`] workspace (its node buffers change when it grows).

use crate::phase::SystemBindings;
use crate::primitives::{Reduce, ReduceOp, ReduceResult};
use crate::vk::{
    ids, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph, VkResult,
};

/// Workgroup size.
const WG: u32 = 64;

/// The per-node sums of the BAL terms that [`SystemAdd`] adds.
#[derive(Clone, Copy)]
pub struct NodeSums<'a> {
    /// Gradient (N), vec4 per vertex.
    pub gradient: &'a GpuBuffer<[f32; 4]>,
    /// Diagonal blocks (N/m), three row vec4s per vertex.
    pub diag: &'a GpuBuffer<[f32; 4]>,
    /// Warm-start stiffness (N/m) per vertex.
    pub stiffness: &'a GpuBuffer<f32>,
}

impl<'a> NodeSums<'a> {
    /// The node sums of a workspace.
    pub fn of(bal: &'a super::BalContact) -> Self {
        NodeSums {
            gradient: bal.node_gradient(),
            diag: bal.node_diag(),
            stiffness: bal.node_stiffness(),
        }
    }
}

/// The two graphs that add a BAL workspace's node sums to the stepper's system.
pub struct SystemAdd {
    /// rhs −= node gradient; ‖rhs‖² reduced (read with [`SystemAdd::rhs_norm`]).
    pub gradient: CompiledGraph,
    /// Diagonal blocks += node blocks, inverses recomputed, stiffness += node stiffness.
    pub hessian: CompiledGraph,
    /// σ⁰'s sums −Σ b·rhs and Σ |b|² over free vertices (b the node gradient; read with
    /// [`SystemAdd::sigma0_sums`]).
    pub sigma0: CompiledGraph,
    /// Slot 0: ‖rhs‖²; 1: Σ |b|²; 2: −Σ b·rhs.
    sums: GpuBuffer<ReduceResult>,
    _scratch: [GpuBuffer<f32>; 2],
    _reduce: [Reduce; 2],
}

impl SystemAdd {
    /// Records both graphs for the node sums `nodes` (gradient, N; diagonal blocks, three
    /// rows per vertex, N/m; stiffness, N/m: [`super::BalContact::node_gradient`] and its
    /// siblings) over `nv` vertices.
    pub fn new(
        ctx: &Context,
        nodes: NodeSums<'_>,
        system: &SystemBindings,
        inv_mass: &GpuBuffer<f32>,
        nv: usize,
    ) -> VkResult<SystemAdd> {
        let n1 = nv.max(1);
        let scratch = ctx.create_buffer("bal.rhs_norm2", n1, BufferUsage::STORAGE)?;
        let bg_dot = ctx.create_buffer("bal.sigma0_dot", n1, BufferUsage::STORAGE)?;
        let reduce = Reduce::new(ctx, n1)?;
        let reduce_dot = Reduce::new(ctx, n1)?;
        let sums = ctx.create_buffer(
            "bal.system_sums",
            3,
            BufferUsage::STORAGE | BufferUsage::HOST_READ,
        )?;
        let opts = CompileOptions {
            graph_timestamps: true,
            ..Default::default()
        };
        let groups = [(nv as u32).div_ceil(WG).max(1), 1, 1];
        let node = |mode: u32| {
            Dispatch::new("bal.system_add", ids::BAL_SYSTEM_ADD, groups)
                .workgroup_size(WG)
                .spec(&[mode])
                .read(inv_mass)
                .read(nodes.gradient)
                .read(nodes.diag)
                .read(nodes.stiffness)
                .push(&(nv as u32))
        };
        let mut g = Graph::new("bal.system_gradient");
        g.dispatch(
            node(0)
                .read_write(&system.rhs)
                .read(&system.diag_blocks)
                .read(&system.inverse_diag_blocks)
                .read(&system.stiffness)
                .write(&scratch)
                .read(&bg_dot),
        );
        reduce.record(&mut g, &scratch, n1, ReduceOp::Sum, &sums, 0);
        let gradient = g.compile(ctx, opts)?;
        let mut g = Graph::new("bal.system_hessian");
        g.dispatch(
            node(1)
                .read(&system.rhs)
                .read_write(&system.diag_blocks)
                .write(&system.inverse_diag_blocks)
                .read_write(&system.stiffness)
                .read(&scratch)
                .read(&bg_dot),
        );
        let hessian = g.compile(ctx, opts)?;
        let mut g = Graph::new("bal.system_sigma0");
        g.dispatch(
            node(2)
                .read(&system.rhs)
                .read(&system.diag_blocks)
                .read(&system.inverse_diag_blocks)
                .read(&system.stiffness)
                .write(&scratch)
                .write(&bg_dot),
        );
        reduce.record(&mut g, &scratch, n1, ReduceOp::Sum, &sums, 1);
        reduce_dot.record(&mut g, &bg_dot, n1, ReduceOp::Sum, &sums, 2);
        let sigma0 = g.compile(ctx, opts)?;
        Ok(SystemAdd {
            gradient,
            hessian,
            sigma0,
            sums,
            _scratch: [scratch, bg_dot],
            _reduce: [reduce, reduce_dot],
        })
    }

    fn slot(&self, i: usize) -> VkResult<f64> {
        let v = match self.sums.mapped() {
            Some(s) => s[i].value,
            None => self.sums.read()?[i].value,
        };
        Ok(v as f64)
    }

    /// σ⁰'s sums after the last run of `sigma0`: (−Σ b·rhs (N²), Σ |b|² (N²)).
    pub fn sigma0_sums(&self) -> VkResult<(f64, f64)> {
        Ok((self.slot(2)?, self.slot(1)?))
    }

    /// ‖rhs‖ (N) after the last run of `gradient`.
    pub fn rhs_norm(&self) -> VkResult<f64> {
        Ok(self.slot(0)?.max(0.0).sqrt())
    }
}
