//! Contact methods: how deformable surfaces are kept apart. [`two_way`] is the two-way interior
//! point method (Newton solver); [`shortest_path`] detects intersections and resolves them along
//! the shortest path to the boundary (XPBD constraints or a Newton penalty energy).

pub mod colliders;
pub mod shortest_path;
pub mod two_way;
