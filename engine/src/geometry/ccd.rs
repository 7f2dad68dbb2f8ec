//! Batched conservative CCD on the GPU (`kernels/geometry/ccd_batch.comp`).
//! Reference: [`crate::cpu_reference::ccd`].

use super::{chunks, workgroup_size};
use crate::vk::{ids, BufferUsage, Context, Dispatch, GpuBuffer, Graph, VkResult};

/// Which primitive pair a CCD query is about (GPU code = discriminant).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CcdKind {
    /// Vertices `[p, t0, t1, t2]`: point p against triangle (t0, t1, t2).
    PointTriangle = 0,
    /// Vertices `[ea0, ea1, eb0, eb1]`: edge a against edge b.
    EdgeEdge = 1,
}

/// Bit 0 of the GPU flags word: hit.
pub const CCD_FLAG_HIT: u32 = 1;
/// Bit 1 of the GPU flags word: the advancement iteration cap was reached.
pub const CCD_FLAG_CAPPED: u32 = 2;
/// Maximum conservative-advancement steps per query (GPU and reference).
pub const CCD_MAX_ADVANCE: u32 = 256;
/// Maximum Newton–bisection iterations per window end.
pub const CCD_MAX_ROOT_ITERATIONS: u32 = 64;
/// Maximum 0.9-backtracking steps of the reference-frame sign check.
pub const CCD_MAX_BACKTRACK: u32 = 64;

/// Per-query outputs of a CCD batch.
pub struct CcdOutputs {
    /// Conservative time of impact in [0, 1] (1 when there is no hit).
    pub toi: GpuBuffer<f32>,
    /// Bit 0: hit ([`CCD_FLAG_HIT`]); bit 1: advancement cap reached ([`CCD_FLAG_CAPPED`]).
    pub flags: GpuBuffer<u32>,
}

impl CcdOutputs {
    /// Allocates outputs for `capacity` queries.
    pub fn new(ctx: &Context, capacity: usize) -> VkResult<Self> {
        let n = capacity.max(1);
        Ok(CcdOutputs {
            toi: ctx.create_buffer("ccd.toi", n, BufferUsage::STORAGE)?,
            flags: ctx.create_buffer("ccd.flags", n, BufferUsage::STORAGE)?,
        })
    }

    /// Number of queries the outputs hold.
    pub fn capacity(&self) -> usize {
        self.toi.len()
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Push {
    first: u32,
    count: u32,
    mode: u32,
    min_separation: f32,
}

/// Records batched CCD queries into command graphs.
pub struct CcdBatch {
    workgroup: u32,
}

impl CcdBatch {
    /// A batch scheduler for `ctx`'s device.
    pub fn new(ctx: &Context) -> Self {
        CcdBatch {
            workgroup: workgroup_size(ctx),
        }
    }

    /// Records `n` queries of `kind` moving linearly from `x0[4 i + k]` to `x1[4 i + k]`;
    /// `min_separation` (m, ≥ 0) is the distance that counts as contact (0: plain CCD).
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &self,
        g: &mut Graph,
        kind: CcdKind,
        x0: &GpuBuffer<[f32; 4]>,
        x1: &GpuBuffer<[f32; 4]>,
        n: usize,
        min_separation: f32,
        out: &CcdOutputs,
    ) {
        assert!(
            x0.len() >= 4 * n && x1.len() >= 4 * n && out.capacity() >= n,
            "CCD batch of {n} queries exceeds its buffers"
        );
        for (first, count) in chunks(n, self.workgroup) {
            g.dispatch(
                Dispatch::new(
                    format!("geometry.ccd[{kind:?}]"),
                    ids::GEOMETRY_CCD_BATCH,
                    [count.div_ceil(self.workgroup), 1, 1],
                )
                .workgroup_size(self.workgroup)
                .read(x0)
                .read(x1)
                .write(&out.toi)
                .write(&out.flags)
                .push(&Push {
                    first,
                    count,
                    mode: kind as u32,
                    min_separation: min_separation.max(0.0),
                }),
            );
        }
    }
}
