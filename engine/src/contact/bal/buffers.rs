//! The persistent buffers of the BAL kernels, allocated once for a pair capacity P (and again
//! only when an active set overflows it, [`super::BalContact::run_active_set`]).

use super::{BalParams, Candidates};
use crate::primitives::{RadixSort, Reduce, ReduceResult, SortKeys};
use crate::vk::{BufferUsage, Context, GpuBuffer, VkResult};

/// Slots of the host-visible results buffer.
pub(crate) mod slot {
    /// Barrier energy of the candidates at the iterate.
    pub const BARRIER: usize = 0;
    /// Stencil (augmentation + friction) energy at the iterate.
    pub const STENCIL: usize = 1;
    /// Barrier energy at the trial positions.
    pub const BARRIER_TRIAL: usize = 2;
    /// Stencil energy at the trial positions.
    pub const STENCIL_TRIAL: usize = 3;
    /// Smallest distance of the active list.
    pub const MIN_DISTANCE: usize = 4;
    /// CCD step bound.
    pub const CCD: usize = 5;
    /// |A′| after the rule: the sum of the in-A′ flags.
    pub const AUGMENTED: usize = 6;
    /// Number of slots.
    pub const COUNT: usize = 8;
}

/// Every buffer of one BAL workspace.
pub(crate) struct PairBuffers {
    pub capacity: usize,
    pub params: GpuBuffer<BalParams>,
    pub rest_sq: GpuBuffer<f32>,
    // Active-set pass (one entry per candidate slot).
    pub keys: GpuBuffer<[u32; 2]>,
    pub vals: GpuBuffer<u32>,
    pub counter: GpuBuffer<u32>,
    pub sort_candidates: RadixSort,
    pub cand_energy: GpuBuffer<f32>,
    /// Candidates closer than d̂ at the iterate (written with the barrier energy).
    pub count_iterate: GpuBuffer<u32>,
    /// Candidates closer than d̂ at the trial positions.
    pub count_trial: GpuBuffer<u32>,
    pub toi: GpuBuffer<f32>,
    // Active list (P slots) and the previous one.
    pub pair_verts: GpuBuffer<[u32; 4]>,
    pub pair_info: GpuBuffer<[u32; 4]>,
    pub pair_d: GpuBuffer<f32>,
    pub pair_aug: GpuBuffer<[f32; 4]>,
    /// 1 for a pair in A′ after the rule, 0 for every other slot.
    pub pair_in_aug: GpuBuffer<f32>,
    pub pair_keys: GpuBuffer<[u32; 2]>,
    pub prev_keys: GpuBuffer<[u32; 2]>,
    pub prev_aug: GpuBuffer<[f32; 4]>,
    pub prev_count: GpuBuffer<u32>,
    // Friction lags (P slots).
    pub fr_verts: GpuBuffer<[u32; 4]>,
    pub fr_beta: GpuBuffer<[f32; 4]>,
    pub fr_t0: GpuBuffer<[f32; 4]>,
    pub fr_t1: GpuBuffer<[f32; 4]>,
    // Stencil terms (2P slots: contact, then friction).
    pub st_energy: GpuBuffer<f32>,
    pub st_grad: GpuBuffer<[f32; 4]>,
    pub st_hess: GpuBuffer<[f32; 4]>,
    pub st_stiff: GpuBuffer<[f32; 4]>,
    // Node -> stencil-corner incidence (8P entries) and per-node outputs.
    pub inc_keys: GpuBuffer<u32>,
    pub inc_vals: GpuBuffer<u32>,
    pub sort_entries: RadixSort,
    pub row_ptr: GpuBuffer<u32>,
    pub node_grad: GpuBuffer<[f32; 4]>,
    pub node_diag: GpuBuffer<[f32; 4]>,
    pub node_stiff: GpuBuffer<f32>,
    /// Bound in place of the stiffness groups by the unmasked contact SpMV.
    pub no_groups: GpuBuffer<i32>,
    // Reductions.
    pub reduce: Reduce,
    pub sums: GpuBuffer<ReduceResult>,
}

impl PairBuffers {
    /// Allocates a workspace for `capacity` pairs over the candidates `cand` and `nv`
    /// vertices; `rest_sq` holds each edge's rest squared length (m²).
    pub fn new(
        ctx: &Context,
        cand: &Candidates,
        nv: usize,
        capacity: usize,
        rest_sq: &[f32],
    ) -> VkResult<Self> {
        let st = BufferUsage::STORAGE;
        // Read by the contact SpMV through texel views.
        let texel = st | BufferUsage::TEXEL;
        let c = cand.capacity().max(1);
        let p = capacity.max(1);
        let e = 8 * p;
        Ok(PairBuffers {
            capacity: p,
            params: ctx.create_buffer("bal.params", 1, st | BufferUsage::HOST_WRITE)?,
            rest_sq: ctx.upload_buffer("bal.rest_sq", &pad(rest_sq), st)?,
            keys: ctx.create_buffer("bal.keys", c, st)?,
            vals: ctx.create_buffer("bal.vals", c, st)?,
            counter: ctx.create_buffer("bal.counter", 4, st | BufferUsage::HOST_READ)?,
            sort_candidates: RadixSort::new(ctx, c, SortKeys::U64)?,
            cand_energy: ctx.create_buffer("bal.candidate_energy", c, st)?,
            count_iterate: ctx.create_buffer(
                "bal.count_iterate",
                4,
                st | BufferUsage::HOST_READ,
            )?,
            count_trial: ctx.create_buffer("bal.count_trial", 4, st | BufferUsage::HOST_READ)?,
            toi: ctx.create_buffer("bal.toi", c, st)?,
            pair_verts: ctx.create_buffer("bal.pair_verts", p, texel)?,
            pair_info: ctx.create_buffer("bal.pair_info", p, st)?,
            pair_d: ctx.create_buffer("bal.pair_d", p, st)?,
            pair_aug: ctx.create_buffer("bal.pair_aug", p, st)?,
            pair_in_aug: ctx.create_buffer("bal.pair_in_aug", p, st)?,
            pair_keys: ctx.create_buffer("bal.pair_keys", p, st)?,
            prev_keys: ctx.create_buffer("bal.prev_keys", p, st)?,
            prev_aug: ctx.create_buffer("bal.prev_aug", p, st)?,
            prev_count: ctx.create_buffer("bal.prev_count", 4, st)?,
            fr_verts: ctx.create_buffer("bal.friction_verts", p, texel)?,
            fr_beta: ctx.create_buffer("bal.friction_beta", p, st)?,
            fr_t0: ctx.create_buffer("bal.friction_t0", p, st)?,
            fr_t1: ctx.create_buffer("bal.friction_t1", p, st)?,
            st_energy: ctx.create_buffer("bal.stencil_energy", 2 * p, st)?,
            st_grad: ctx.create_buffer("bal.stencil_grad", 8 * p, st)?,
            st_hess: ctx.create_buffer("bal.stencil_hess", 96 * p, texel)?,
            st_stiff: ctx.create_buffer("bal.stencil_stiffness", 2 * p, st)?,
            inc_keys: ctx.create_buffer("bal.incidence_keys", e, st)?,
            inc_vals: ctx.create_buffer("bal.incidence_vals", e, texel)?,
            sort_entries: RadixSort::new(ctx, e, SortKeys::U32)?,
            row_ptr: ctx.create_buffer("bal.row_ptr", nv + 1, texel)?,
            node_grad: ctx.create_buffer("bal.node_grad", nv.max(1), st)?,
            node_diag: ctx.create_buffer("bal.node_diag", 3 * nv.max(1), st)?,
            node_stiff: ctx.create_buffer("bal.node_stiffness", nv.max(1), st)?,
            no_groups: ctx.create_buffer("bal.no_groups", 1, st)?,
            reduce: Reduce::new(ctx, c.max(2 * p))?,
            sums: ctx.create_buffer("bal.sums", slot::COUNT, st | BufferUsage::HOST_READ)?,
        })
    }
}

/// `v` with at least one element (buffers cannot be empty).
fn pad(v: &[f32]) -> Vec<f32> {
    if v.is_empty() {
        vec![0.0]
    } else {
        v.to_vec()
    }
}
