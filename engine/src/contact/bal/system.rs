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
    norm2: GpuBuffer<ReduceResult>,
    _scratch: GpuBuffer<f32>,
    _reduce: Reduce,
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
        let reduce = Reduce::new(ctx, n1)?;
        let norm2 = ctx.create_buffer(
            "bal.rhs_norm2_sum",
            1,
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
                .write(&scratch),
        );
        reduce.record(&mut g, &scratch, n1, ReduceOp::Sum, &norm2, 0);
        let gradient = g.compile(ctx, opts)?;
        let mut g = Graph::new("bal.system_hessian");
        g.dispatch(
            node(1)
                .read(&system.rhs)
                .read_write(&system.diag_blocks)
                .write(&system.inverse_diag_blocks)
                .read_write(&system.stiffness)
                .read(&scratch),
        );
        let hessian = g.compile(ctx, opts)?;
        Ok(SystemAdd {
            gradient,
            hessian,
            norm2,
            _scratch: scratch,
            _reduce: reduce,
        })
    }

    /// ‖rhs‖ (N) after the last run of `gradient`.
    pub fn rhs_norm(&self) -> VkResult<f64> {
        let v = match self.norm2.mapped() {
            Some(s) => s[0].value,
            None => self.norm2.read()?[0].value,
        };
        Ok((v.max(0.0) as f64).sqrt())
    }
}
