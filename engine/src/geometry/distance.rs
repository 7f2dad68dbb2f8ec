//! Batched exact distances on the GPU (`kernels/geometry/distance_batch.comp`).
//! Reference: [`crate::cpu_reference::distance`].

use super::{chunks, workgroup_size};
use crate::vk::{ids, BufferUsage, Context, Dispatch, GpuBuffer, Graph, VkResult};

/// Which distance a batch computes (all queries of one dispatch share it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistanceQuery {
    /// Vertices `[p, q, -, -]`.
    PointPoint,
    /// Vertices `[p, e0, e1, -]`; kinds as [`crate::cpu_reference::distance::PointEdgeKind`].
    PointEdge,
    /// Vertices `[p, t0, t1, t2]`; kinds as [`crate::cpu_reference::distance::PointTriangleKind`].
    PointTriangle,
    /// Vertices `[ea0, ea1, eb0, eb1]`; kinds as [`crate::cpu_reference::distance::EdgeEdgeKind`].
    EdgeEdge,
}

impl DistanceQuery {
    fn mode(self) -> u32 {
        match self {
            DistanceQuery::PointPoint => 0,
            DistanceQuery::PointEdge => 1,
            DistanceQuery::PointTriangle => 2,
            DistanceQuery::EdgeEdge => 3,
        }
    }
}

/// Per-query outputs of a distance batch.
pub struct DistanceOutputs {
    /// Squared distance (m²).
    pub sq_dist: GpuBuffer<f32>,
    /// Closest-feature kind code.
    pub kind: GpuBuffer<u32>,
    /// Signed weights `w` with `diff = Σ w_k x_k` (barycentrics; gradient of d² is `2 w_k diff`).
    pub weights: GpuBuffer<[f32; 4]>,
}

impl DistanceOutputs {
    /// Allocates outputs for `capacity` queries.
    pub fn new(ctx: &Context, capacity: usize) -> VkResult<Self> {
        let n = capacity.max(1);
        Ok(DistanceOutputs {
            sq_dist: ctx.create_buffer("distance.sq_dist", n, BufferUsage::STORAGE)?,
            kind: ctx.create_buffer("distance.kind", n, BufferUsage::STORAGE)?,
            weights: ctx.create_buffer("distance.weights", n, BufferUsage::STORAGE)?,
        })
    }

    /// Number of queries the outputs hold.
    pub fn capacity(&self) -> usize {
        self.sq_dist.len()
    }
}

/// Records batched distance queries into command graphs.
pub struct DistanceBatch {
    workgroup: u32,
}

impl DistanceBatch {
    /// A batch scheduler for `ctx`'s device.
    pub fn new(ctx: &Context) -> Self {
        DistanceBatch {
            workgroup: workgroup_size(ctx),
        }
    }

    /// Records `n` queries of type `query`: vertices `x[4 i + k]` → `out[i]`.
    pub fn record(
        &self,
        g: &mut Graph,
        query: DistanceQuery,
        x: &GpuBuffer<[f32; 4]>,
        n: usize,
        out: &DistanceOutputs,
    ) {
        assert!(
            x.len() >= 4 * n && out.capacity() >= n,
            "distance batch of {n} queries exceeds its buffers"
        );
        for (first, count) in chunks(n, self.workgroup) {
            g.dispatch(
                Dispatch::new(
                    format!("geometry.distance[{query:?}]"),
                    ids::GEOMETRY_DISTANCE_BATCH,
                    [count.div_ceil(self.workgroup), 1, 1],
                )
                .workgroup_size(self.workgroup)
                .read(x)
                .write(&out.sq_dist)
                .write(&out.kind)
                .write(&out.weights)
                .push(&[first, count, query.mode()]),
            );
        }
    }
}
