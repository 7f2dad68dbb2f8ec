//! Reuse bound of the proximity search (two-way IPC paper §3.1): a search returns every pair
//! with distance below D_max; after each position update no pair distance can shrink by more
//! than twice the largest vertex displacement, so the pair set still holds every pair below
//! D ← D − 2·max_i‖Δx_i‖. A new search is needed only once D < D_min.
//!
//! [`ReuseTracker`] is the host-side scalar bookkeeping; [`MaxDisplacement`] records the GPU
//! maximum displacement (`kernels/proximity/displacement.comp` + [`Reduce`]).
//! Reference: [`crate::cpu_reference::proximity::displacements`].

use crate::primitives::{Reduce, ReduceOp, ReduceResult};
use crate::vk::{ids, BufferUsage, Context, Dispatch, GpuBuffer, Graph, VkResult};

/// Relative safety factor on displacements: f32 positions and the f32 length round by a few
/// ulps, so the bound shrinks slightly faster than the exact one (never reuses too long).
const DISPLACEMENT_SAFETY: f64 = 1e-4;

/// Host-side reuse bound: the distance below which the last search's pairs are still complete.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReuseTracker {
    d_max: f64,
    d_min: f64,
    d: f64,
    searched: bool,
}

impl ReuseTracker {
    /// A tracker that searches with `d_max` (m) and requires completeness down to `d_min` (m),
    /// `0 < d_min <= d_max`. No search has been done yet.
    pub fn new(d_min: f64, d_max: f64) -> Result<Self, String> {
        if !(d_min > 0.0 && d_min <= d_max && d_max.is_finite()) {
            return Err(format!("need 0 < d_min <= d_max, got {d_min}, {d_max}"));
        }
        Ok(ReuseTracker {
            d_max,
            d_min,
            d: 0.0,
            searched: false,
        })
    }

    /// Search distance D_max (m) a new search must use.
    pub fn d_max(&self) -> f64 {
        self.d_max
    }

    /// Minimum distance D_min (m) the pair set must stay complete for.
    pub fn d_min(&self) -> f64 {
        self.d_min
    }

    /// Current bound D (m): every pair closer than D is in the last search's set.
    pub fn bound(&self) -> f64 {
        self.d
    }

    /// Whether a search is needed before the pair set can be used (D < D_min or none yet).
    pub fn needs_search(&self) -> bool {
        !self.searched || self.d < self.d_min
    }

    /// Records that a search with D_max just ran on the current positions: D ← D_max.
    pub fn searched(&mut self) {
        self.d = self.d_max;
        self.searched = true;
    }

    /// Records a position update whose largest vertex displacement is `max_displacement` (m):
    /// D ← D − 2·max‖Δx‖ (with a small safety factor). Returns [`Self::needs_search`].
    /// A non-finite displacement forces a search.
    pub fn moved(&mut self, max_displacement: f64) -> bool {
        if max_displacement.is_finite() {
            self.d -= 2.0 * max_displacement.max(0.0) * (1.0 + DISPLACEMENT_SAFETY);
        } else {
            self.d = f64::NEG_INFINITY;
        }
        self.needs_search()
    }
}

/// Records the largest vertex displacement between two position buffers on the GPU.
pub struct MaxDisplacement {
    n: usize,
    lengths: GpuBuffer<f32>,
    reduce: Reduce,
    out: GpuBuffer<ReduceResult>,
}

impl MaxDisplacement {
    /// Workspace for `n` vertices.
    pub fn new(ctx: &Context, n: usize) -> VkResult<Self> {
        let n1 = n.max(1);
        Ok(MaxDisplacement {
            n,
            lengths: ctx.create_buffer("proximity.displacement", n1, BufferUsage::STORAGE)?,
            reduce: Reduce::new(ctx, n1)?,
            // Host-visible: read after every check without a staging copy.
            out: ctx.create_buffer(
                "proximity.max_displacement",
                1,
                BufferUsage::STORAGE | BufferUsage::HOST_READ,
            )?,
        })
    }

    /// Records `out[0].value = max_i |x1[i] - x0[i]|` (m) over the `n` vertices.
    pub fn record(&self, g: &mut Graph, x0: &GpuBuffer<[f32; 4]>, x1: &GpuBuffer<[f32; 4]>) {
        assert!(
            x0.len() >= self.n && x1.len() >= self.n,
            "position buffers shorter than the vertex count"
        );
        let wg = 64u32;
        let groups = self.n.div_ceil(wg as usize).max(1);
        let gx = groups.min(65_535);
        g.dispatch(
            Dispatch::new(
                "proximity.displacement",
                ids::PROXIMITY_DISPLACEMENT,
                [gx as u32, groups.div_ceil(gx) as u32, 1],
            )
            .workgroup_size(wg)
            .read(x0)
            .read(x1)
            .write(&self.lengths)
            .push(&(self.n as u32)),
        );
        self.reduce
            .record(g, &self.lengths, self.n.max(1), ReduceOp::Max, &self.out, 0);
    }

    /// Per-vertex displacement lengths of the last run (m).
    pub fn lengths(&self) -> &GpuBuffer<f32> {
        &self.lengths
    }

    /// The reduced maximum of the last run (m).
    pub fn result(&self) -> &GpuBuffer<ReduceResult> {
        &self.out
    }

    /// Reads the maximum displacement of the last run (m).
    pub fn read(&self) -> VkResult<f64> {
        Ok(self.out.read()?[0].value as f64)
    }
}
