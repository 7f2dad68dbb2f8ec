//! Linear bounding volume hierarchies (LBVH) on the GPU for edges, triangles and tetrahedra:
//! Morton codes of the primitive-box centroids, a radix sort, the Karras (2012) binary radix
//! tree and a bottom-up AABB refit with per-node visit counters; refit-only updates between
//! rebuilds; and per-invocation-stack traversals for overlap pairs (self and query boxes),
//! nearest primitive within a radius and point-in-tet. Kernels: `kernels/bvh/*.comp`;
//! reference: [`crate::cpu_reference::bvh`].

mod lbvh;
pub mod tree;

pub use lbvh::{
    BvhError, Lbvh, MortonBits, NearestOutput, PairOutput, PointInTetOutput, PrimitiveKind,
    TreeReadback,
};
