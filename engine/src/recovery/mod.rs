//! Recovery from intersections with discrete collision detection and the shortest path to
//! boundary of Chen, Diaz and Yuksel (2023) on the GPU: vertex-in-tet detection over a tet LBVH
//! and, for every penetrating point, the closest boundary point reachable by a valid path
//! (topological tet traversal with a branching stack, infeasible-region culling).
//! Kernels: `kernels/recovery/*.comp`; reference: [`crate::cpu_reference::shortest_path`].

mod shortest_path;

pub use shortest_path::{RecoveryError, ShortestPath, ShortestPathSettings};

/// Self-intersecting sample shapes without inverted tets (the test meshes, used by the
/// tests and `supple bench recovery`): a beam folded through itself, a pre-intersected noodle
/// coil and a squishy ball with curled tentacles. `refine` (≥ 1) divides the cell size.
pub fn sample_shapes(refine: usize) -> Vec<(&'static str, supple_mesh::TetMesh)> {
    use supple_mesh::procedural::{beam, coil, curl_tentacles, squishy_ball, CellSplit};
    let r = refine.max(1) as f64;
    let folded = coil(
        &beam([2.4, 0.2, 0.1], 0.05 / r, [0.0; 3], CellSplit::Six),
        0.3,
        0.05,
        0.05,
        0.013,
    );
    let noodle = coil(
        &beam([2.4, 0.08, 0.08], 0.04 / r, [0.0; 3], CellSplit::Six),
        0.2,
        0.04,
        0.011,
        0.037,
    );
    let mut out = vec![("folded beam", folded), ("pre-intersected noodle", noodle)];
    if let Ok(ball) = squishy_ball([0.0; 3], 0.3, 8, 0.5, 0.07, 20 * refine.max(1)) {
        out.push((
            "curled squishy ball",
            curl_tentacles(&ball, [0.0; 3], 0.3, 8, 0.09),
        ));
    }
    out
}
