//! Recovery from intersections with discrete collision detection and the shortest path to
//! boundary of Chen, Diaz and Yuksel (2023) on the GPU: vertex-in-tet detection over a tet LBVH
//! and, for every penetrating point, the closest boundary point reachable by a valid path
//! (topological tet traversal with a branching stack, infeasible-region culling).
//! Kernels: `kernels/recovery/*.comp`; reference: [`crate::cpu_reference::shortest_path`].

mod shortest_path;

pub use shortest_path::{RecoveryError, ShortestPath, ShortestPathSettings};
