//! Deterministic f32 reductions (sum, min, max, argmin) in two passes: per-tile partials
//! (`kernels/primitives/reduce_f32_tiles.comp`) and one workgroup combining them in order
//! (`reduce_f32_final.comp`). NaNs count as +inf for min/argmin and -inf for max.
//! Reference: [`crate::cpu_reference::reduce`].

use super::scan::tiles;
use super::Tuning;
use crate::vk::{ids, BufferUsage, Context, Dispatch, GpuBuffer, Graph, VkResult};

/// The reduction operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReduceOp {
    /// Sum.
    Sum,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
    /// Minimum and the lowest index holding it.
    ArgMin,
}

/// Result of a reduction: the value and (for argmin) its index.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ReduceResult {
    /// Reduced value.
    pub value: f32,
    /// Index of the minimum for argmin (`u32::MAX` for an empty input); 0 otherwise.
    pub index: u32,
}

/// A reduction pipeline with its persistent partials buffer for up to `capacity` elements.
pub struct Reduce {
    capacity: usize,
    tuning: Tuning,
    partials: GpuBuffer<ReduceResult>,
}

impl Reduce {
    /// Allocates the workspace for reductions of at most `capacity` elements.
    pub fn new(ctx: &Context, capacity: usize) -> VkResult<Reduce> {
        Self::with_tuning(ctx, capacity, Tuning::from_env(ctx.caps()))
    }

    /// Like [`Reduce::new`] with an explicit launch shape.
    pub fn with_tuning(ctx: &Context, capacity: usize, tuning: Tuning) -> VkResult<Reduce> {
        let partials = ctx.create_buffer(
            "reduce.partials",
            tiles(capacity, tuning.tile_elements()) as usize,
            BufferUsage::STORAGE,
        )?;
        Ok(Reduce {
            capacity,
            tuning,
            partials,
        })
    }

    /// Records `out[slot] = op(input[..n])`.
    pub fn record(
        &self,
        g: &mut Graph,
        input: &GpuBuffer<f32>,
        n: usize,
        op: ReduceOp,
        out: &GpuBuffer<ReduceResult>,
        slot: usize,
    ) {
        assert!(
            n <= self.capacity && n <= input.len() && slot < out.len(),
            "reduction of {n} exceeds capacity or buffers"
        );
        let t = &self.tuning;
        let m = tiles(n, t.tile_elements());
        let code = match op {
            ReduceOp::Sum => 0,
            ReduceOp::Min => 1,
            ReduceOp::Max => 2,
            ReduceOp::ArgMin => 3,
        };
        g.dispatch(
            Dispatch::new(
                format!("reduce.tiles[{op:?}]"),
                ids::PRIMITIVES_REDUCE_F32_TILES,
                [m, 1, 1],
            )
            .workgroup_size(t.workgroup)
            .spec(&[t.items, code])
            .read(input)
            .write(&self.partials)
            .push(&(n as u32)),
        );
        g.dispatch(
            Dispatch::new(
                format!("reduce.final[{op:?}]"),
                ids::PRIMITIVES_REDUCE_F32_FINAL,
                [1, 1, 1],
            )
            .workgroup_size(t.workgroup.max(64).min(1024))
            .spec(&[t.items, code])
            .read(&self.partials)
            .write(out)
            .push(&[m, slot as u32]),
        );
    }
}
