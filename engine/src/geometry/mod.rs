//! Geometric kernels of collision handling recorded into command graphs: batched exact
//! distances (`kernels/geometry/distance_batch.comp`) and batched conservative CCD
//! (`kernels/geometry/ccd_batch.comp`). Both run one query per invocation on the same f32 code
//! as the includes `kernels/include/distance.glsl` / `ccd.glsl`, whose plain-Rust twins are
//! [`crate::cpu_reference::distance`] and [`crate::cpu_reference::ccd`].
//!
//! Queries are stored as four `vec4` vertices each (`w` ignored). f32 cannot hold coordinates
//! far from the origin to the precision of a contact distance, so callers should pass
//! positions relative to a nearby origin (e.g. a body's or a pair's reference point).

pub mod ccd;
pub mod distance;

pub use ccd::{CcdBatch, CcdOutputs};
pub use distance::{DistanceBatch, DistanceOutputs, DistanceQuery};

/// Largest workgroup count per dispatch dimension that every Vulkan device supports.
pub(crate) const MAX_GROUPS: u32 = 65_535;

/// Workgroup size of the batch kernels: 64, or the subgroup size if larger.
pub(crate) fn workgroup_size(ctx: &crate::vk::Context) -> u32 {
    ctx.caps().subgroup_size.max(64)
}

/// Splits `n` queries into dispatch chunks `(first, count)` of at most `MAX_GROUPS * wg`.
pub(crate) fn chunks(n: usize, wg: u32) -> impl Iterator<Item = (u32, u32)> {
    let per = (MAX_GROUPS as usize) * (wg as usize);
    (0..n)
        .step_by(per.max(1))
        .map(move |first| (first as u32, (n - first).min(per) as u32))
}
