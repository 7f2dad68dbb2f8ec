//! Shortest path to boundary for self-intersecting tet meshes (Chen, Diaz and Yuksel 2023):
//! reference of `kernels/recovery/shortest_path.comp` and `kernels/recovery/vertex_in_tet.comp`
//! (host scheduling: `engine/src/recovery/shortest_path.rs`), plus a brute-force oracle.
//!
//! A query is an interior point `p` of a tet `T` (found by discrete collision detection) and,
//! when `p` is a mesh vertex, that vertex (its own boundary faces would return `p` itself). Its
//! answer is the closest boundary point `s` whose segment `s → p` is a *valid path*: a
//! topological traversal that starts in the boundary tet of `s`'s face and follows the line
//! through face adjacency reaches `T` (Theorem 1 and §3.2). By Theorem 2 only the Euclidean
//! closest point of each boundary face is a candidate.
//!
//! Traversal (§3.3, §3.5). Within a tet the exit faces are the faces the *line* through `s`
//! and `p` crosses (barycentric coordinates of the crossing `≥ -ε_i`), so inverted interior tets
//! are followed backward without a special case. Every crossing face with an unvisited
//! neighbour is pushed on a branching stack (grazing rays branch); a visited list ends loops;
//! the traversal continues past `p` and ends only at boundary faces or at `T`. Candidates
//! whose boundary tet is inverted are skipped (§3.5); a candidate at zero distance (a boundary
//! point testing itself) is rejected.
//!
//! Candidates come from a BVH over the boundary faces, nearer child first, pruned by the best
//! valid distance so far: every face closer than the answer is tested, so the answer is the
//! exact minimum (ties: lower face index), not an approximation of the visiting order.
//! Infeasible-region culling (§3.6) skips the traversal when `s` is a boundary vertex or edge
//! point and `p` has a component along a boundary direction leaving `s` (a closer boundary
//! point then exists on that edge or face); the tolerance `ε_r` is on the cosine.
//!
//! [`query`] (f32, BVH, culling) is the GPU's twin; [`oracle`] (f64, every face sorted by
//! distance, unbounded traversal) is the independent brute force the tests compare with.

// `!(x > 0.0)` on purpose: NaN must fail these tests as the kernels' comparisons do.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use super::bvh::{Aabb, Tree, NEAREST_PRUNE};
use super::distance::{point_triangle, PointTriangleKind, Real};
use nalgebra::Vector3;
use supple_mesh::topology::TET_FACES;

pub use crate::contact::shortest_path::types::{
    Answer, Counters, Params, Query, TetBoundary, BRANCH_STACK, DEFAULT_EPS_I, DEFAULT_EPS_R,
    DEFAULT_MIN_DIST, INVALID, VISITED,
};

fn v3<T: Real>(p: [f32; 4]) -> Vector3<T> {
    Vector3::new(T::of(p[0] as f64), T::of(p[1] as f64), T::of(p[2] as f64))
}

/// Whether the line through `s` with direction `d` crosses triangle `(a, b, c)` with all
/// barycentric coordinates `>= -eps` (Plücker-style triple products relative to `s`).
pub fn line_crosses<T: Real>(
    a: &Vector3<T>,
    b: &Vector3<T>,
    c: &Vector3<T>,
    s: &Vector3<T>,
    d: &Vector3<T>,
    eps: T,
) -> bool {
    let (a, b, c) = (a - s, b - s, c - s);
    let u = d.dot(&b.cross(&c));
    let v = d.dot(&c.cross(&a));
    let w = d.dot(&a.cross(&b));
    let sum = u + v + w;
    if !(sum.abs() > T::zero()) {
        return false;
    }
    let m = (u / sum).min(v / sum).min(w / sum);
    m >= -eps
}

/// Signed volume ×6 of tet `t` at `positions`.
pub fn tet_volume6<T: Real>(positions: &[[f32; 4]], tet: [u32; 4]) -> T {
    let x = tet.map(|v| v3::<T>(positions[v as usize]));
    (x[1] - x[0]).dot(&(x[2] - x[0]).cross(&(x[3] - x[0])))
}

/// Result of one traversal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traversal {
    /// The traversal reached the query's tet: the segment is a valid path.
    Valid,
    /// Every branch ended at the boundary.
    Invalid,
    /// Stack or visited list full (bounded traversals only).
    Overflow,
}

/// Topological ray traversal from boundary face `face` at `s` along the line toward `p`:
/// [`Traversal::Valid`] when it reaches `target`. `bounded` uses the GPU's fixed stack and
/// visited-list sizes. Counts tets visited and extra branches into `c`.
#[allow(clippy::too_many_arguments)]
pub fn traverse<T: Real>(
    b: &TetBoundary,
    positions: &[[f32; 4]],
    face: u32,
    s: &Vector3<T>,
    p: &Vector3<T>,
    target: u32,
    eps_i: T,
    bounded: bool,
    c: &mut Counters,
) -> Traversal {
    let start = b.face_tet[face as usize];
    if start == target {
        return Traversal::Valid;
    }
    let d = p - s;
    let mut visited = vec![start];
    let mut stack = vec![start];
    while let Some(t) = stack.pop() {
        c.tets_visited += 1;
        let tet = b.tets[t as usize];
        let x = tet.map(|v| v3::<T>(positions[v as usize]));
        let mut pushed = 0;
        for (f, lf) in TET_FACES.iter().enumerate() {
            let nb = b.adjacency[t as usize][f];
            if nb == INVALID || visited.contains(&nb) {
                continue;
            }
            if !line_crosses(&x[lf[0]], &x[lf[1]], &x[lf[2]], s, &d, eps_i) {
                continue;
            }
            if nb == target {
                return Traversal::Valid;
            }
            if bounded && (visited.len() >= VISITED || stack.len() >= BRANCH_STACK) {
                return Traversal::Overflow;
            }
            visited.push(nb);
            stack.push(nb);
            pushed += 1;
        }
        c.branches += pushed.max(1) - 1;
    }
    Traversal::Invalid
}

/// Local edge `k` (vertices `k`, `k+1`) or vertex `k` of a point–triangle kind.
fn kind_feature(kind: PointTriangleKind) -> (u32, usize) {
    use PointTriangleKind::*;
    match kind {
        Vertex0 => (0, 0),
        Vertex1 => (0, 1),
        Vertex2 => (0, 2),
        Edge01 => (1, 0),
        Edge12 => (1, 1),
        Edge20 => (1, 2),
        Face => (2, 0),
    }
}

fn leaves<T: Real>(dir: &Vector3<T>, e: &Vector3<T>, eps_r: T) -> bool {
    dir.dot(e) > eps_r * dir.norm() * e.norm()
}

/// Infeasible-region test (§3.6): whether `p` has a component along a boundary direction
/// leaving `s` (the closest point of `face` with feature `kind`), so `s` cannot be the
/// closest boundary point.
pub fn infeasible<T: Real>(
    b: &TetBoundary,
    positions: &[[f32; 4]],
    face: u32,
    kind: PointTriangleKind,
    s: &Vector3<T>,
    p: &Vector3<T>,
    eps_r: T,
) -> bool {
    let tri = b.faces[face as usize];
    let dir = p - s;
    let (dim, k) = kind_feature(kind);
    match dim {
        0 => {
            let v = tri[k] as usize;
            let (lo, hi) = (b.neighbor_offsets[v], b.neighbor_offsets[v + 1]);
            b.neighbors[lo as usize..hi as usize]
                .iter()
                .any(|&n| leaves(&dir, &(v3::<T>(positions[n as usize]) - s), eps_r))
        }
        1 => {
            let other = b.face_across[face as usize][k];
            if other == INVALID {
                return false;
            }
            let (v0, v1) = (tri[k], tri[(k + 1) % 3]);
            let o = b.faces[other as usize];
            let w = o.iter().copied().find(|&x| x != v0 && x != v1);
            let Some(w) = w else { return false };
            let a = v3::<T>(positions[v0 as usize]);
            let e = v3::<T>(positions[v1 as usize]) - a;
            let r = v3::<T>(positions[w as usize]) - a;
            let ee = e.dot(&e);
            if !(ee > T::zero()) {
                return false;
            }
            let u = r - e * (r.dot(&e) / ee);
            leaves(&dir, &u, eps_r)
        }
        _ => false,
    }
}

fn face_normal<T: Real>(b: &TetBoundary, positions: &[[f32; 4]], f: u32) -> Vector3<T> {
    let t = b.faces[f as usize].map(|v| v3::<T>(positions[v as usize]));
    (t[1] - t[0]).cross(&(t[2] - t[0]))
}

/// Outward unit normal at the closest point (feature `kind` of `face`): face normal, or the
/// area-weighted mean of the boundary faces around the edge or vertex.
pub fn boundary_normal<T: Real>(
    b: &TetBoundary,
    positions: &[[f32; 4]],
    face: u32,
    kind: PointTriangleKind,
) -> Vector3<T> {
    let (dim, k) = kind_feature(kind);
    let mut n = face_normal::<T>(b, positions, face);
    if dim == 1 {
        let o = b.face_across[face as usize][k];
        if o != INVALID {
            n += face_normal::<T>(b, positions, o);
        }
    } else if dim == 0 {
        let v = b.faces[face as usize][k] as usize;
        n = Vector3::zeros();
        let (lo, hi) = (b.vertex_face_offsets[v], b.vertex_face_offsets[v + 1]);
        for &f in &b.vertex_faces[lo as usize..hi as usize] {
            n += face_normal::<T>(b, positions, f);
        }
    }
    let l = n.norm();
    if l > T::zero() {
        n / l
    } else {
        n
    }
}

/// Whether face `f` is a candidate at all: not one of the query vertex's own faces and its
/// boundary tet is not inverted.
fn usable(b: &TetBoundary, positions: &[[f32; 4]], f: u32, q: &Query) -> bool {
    let tri = b.faces[f as usize];
    if q.vertex != INVALID && tri.contains(&q.vertex) {
        return false;
    }
    let t = b.face_tet[f as usize];
    tet_volume6::<f32>(positions, b.tets[t as usize]) > 0.0
}

fn answer<T: Real>(
    b: &TetBoundary,
    positions: &[[f32; 4]],
    f: u32,
    s: &Vector3<T>,
    sq: T,
    kind: PointTriangleKind,
) -> Answer {
    let n = boundary_normal::<T>(b, positions, f, kind);
    Answer {
        face: f,
        point: [s.x, s.y, s.z].map(|x| x.to_f64() as f32),
        sq_dist: sq.to_f64() as f32,
        kind: kind as u32,
        normal: [n.x, n.y, n.z].map(|x| x.to_f64() as f32),
    }
}

/// The GPU's twin: BVH candidates (nearer child first, pruned by the best valid distance),
/// culling, bounded traversal, all in f32. `tree` is the boundary-face tree.
pub fn query(
    b: &TetBoundary,
    tree: &Tree,
    positions: &[[f32; 4]],
    q: &Query,
    params: &Params,
    c: &mut Counters,
) -> Answer {
    c.queries += 1;
    let n = tree.len();
    if n == 0 || q.tet == INVALID {
        return Answer::NONE;
    }
    let p = Vector3::new(q.point[0], q.point[1], q.point[2]);
    let mut best = Answer::NONE;
    let mut stack = vec![0usize];
    while let Some(node) = stack.pop() {
        c.bvh_nodes += 1;
        if tree.boxes[node].sq_dist(q.point) * NEAREST_PRUNE > best.sq_dist {
            continue;
        }
        if !tree.is_leaf(node) {
            let [l, r] = tree.topology.children[node];
            let (dl, dr) = (
                tree.boxes[l as usize].sq_dist(q.point),
                tree.boxes[r as usize].sq_dist(q.point),
            );
            // Nearer child popped first (ties: left first).
            if dl <= dr {
                stack.push(r as usize);
                stack.push(l as usize);
            } else {
                stack.push(l as usize);
                stack.push(r as usize);
            }
            continue;
        }
        let f = tree.prims[node - (n - 1)];
        if !usable(b, positions, f, q) {
            continue;
        }
        let t = b.faces[f as usize].map(|v| v3::<f32>(positions[v as usize]));
        let cl = point_triangle(&p, &t[0], &t[1], &t[2]);
        let sq = cl.sq_dist;
        if !(sq > params.min_dist * params.min_dist)
            || !(sq < best.sq_dist || (sq == best.sq_dist && f < best.face))
        {
            continue;
        }
        c.candidates += 1;
        let w = cl.barycentric();
        let s = t[0] * w[0] + t[1] * w[1] + t[2] * w[2];
        if params.cull && infeasible(b, positions, f, cl.kind, &s, &p, params.eps_r) {
            c.culled += 1;
            continue;
        }
        c.traversals += 1;
        match traverse(b, positions, f, &s, &p, q.tet, params.eps_i, true, c) {
            Traversal::Valid => best = answer(b, positions, f, &s, sq, cl.kind),
            Traversal::Invalid => {}
            Traversal::Overflow => c.overflows += 1,
        }
    }
    if best.face != INVALID {
        c.found += 1;
    }
    best
}

/// Brute-force oracle in f64: every usable boundary face's closest point, sorted by distance
/// (ties: face index), each validated by an unbounded traversal; the first valid one.
pub fn oracle(
    b: &TetBoundary,
    positions: &[[f32; 4]],
    q: &Query,
    eps_i: f64,
    min_dist: f64,
) -> Answer {
    if q.tet == INVALID {
        return Answer::NONE;
    }
    let p = Vector3::new(q.point[0] as f64, q.point[1] as f64, q.point[2] as f64);
    let mut cands: Vec<(f64, u32, PointTriangleKind, Vector3<f64>)> = (0..b.faces.len() as u32)
        .filter(|&f| usable(b, positions, f, q))
        .filter_map(|f| {
            let t = b.faces[f as usize].map(|v| v3::<f64>(positions[v as usize]));
            let cl = point_triangle(&p, &t[0], &t[1], &t[2]);
            let w = cl.barycentric();
            let s = t[0] * w[0] + t[1] * w[1] + t[2] * w[2];
            (cl.sq_dist > min_dist * min_dist).then_some((cl.sq_dist, f, cl.kind, s))
        })
        .collect();
    cands.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut c = Counters::default();
    for (sq, f, kind, s) in cands {
        if traverse(b, positions, f, &s, &p, q.tet, eps_i, false, &mut c) == Traversal::Valid {
            return answer(b, positions, f, &s, sq, kind);
        }
    }
    Answer::NONE
}

/// Discrete collision detection, vertex in tet: for vertex `v` at `positions`, the
/// non-inverted tet outside `v`'s one-ring (see [`TetBoundary::ring`]) that contains it with the
/// largest smallest barycentric coordinate (`> eps`; ties: lower tet), or [`INVALID`]. Brute
/// force over the tets (the GPU walks a tet BVH with the same test and tie rule).
pub fn vertex_in_tet(positions: &[[f32; 4]], b: &TetBoundary, v: u32, eps: f32) -> u32 {
    let x = positions[v as usize];
    let mut best = (INVALID, eps);
    for (t, tet) in b.tets.iter().enumerate() {
        if b.touches_ring(t, v) {
            continue;
        }
        let Some(m) = inside_margin(positions, *tet, [x[0], x[1], x[2]]) else {
            continue;
        };
        if m > best.1 {
            best = (t as u32, m);
        }
    }
    best.0
}

fn bary4(a: &Vector3<f32>, e: [Vector3<f32>; 3], vol: f32, x: &Vector3<f32>) -> [f32; 4] {
    let d = x - a;
    let l1 = d.dot(&e[1].cross(&e[2])) / vol;
    let l2 = e[0].dot(&d.cross(&e[2])) / vol;
    let l3 = e[0].dot(&e[1].cross(&d)) / vol;
    [1.0 - l1 - l2 - l3, l1, l2, l3]
}

/// Discrete collision detection, edge through tet: for edge `(a, b)`, over non-inverted tets
/// outside the one-rings of `a` and `b`, the centre of the part of the segment inside the tet (clipped
/// against the barycentric half-spaces) whose smallest barycentric coordinate exceeds `eps`;
/// the tet whose centre is closest to the edge's midpoint wins (ties: lower tet). Returns the
/// tet and the centre, or `None`. Brute force (the GPU walks a tet BVH with the same rules).
pub fn edge_in_tet(
    positions: &[[f32; 4]],
    b: &TetBoundary,
    edge: [u32; 2],
    eps: f32,
) -> Option<(u32, [f32; 3])> {
    let xa = v3::<f32>(positions[edge[0] as usize]);
    let xb = v3::<f32>(positions[edge[1] as usize]);
    let mut best: Option<(u32, f32, Vector3<f32>)> = None;
    for (t, tet) in b.tets.iter().enumerate() {
        if b.touches_ring(t, edge[0]) || b.touches_ring(t, edge[1]) {
            continue;
        }
        let p = |k: usize| v3::<f32>(positions[tet[k] as usize]);
        let a = p(0);
        let e = [p(1) - a, p(2) - a, p(3) - a];
        let vol = e[0].dot(&e[1].cross(&e[2]));
        if !(vol > 0.0) || !vol.is_finite() {
            continue;
        }
        let (la, lb) = (bary4(&a, e, vol, &xa), bary4(&a, e, vol, &xb));
        let (mut t0, mut t1) = (0.0f32, 1.0f32);
        let mut empty = false;
        for k in 0..4 {
            let dl = lb[k] - la[k];
            if dl > 0.0 {
                t0 = t0.max(-la[k] / dl);
            } else if dl < 0.0 {
                t1 = t1.min(-la[k] / dl);
            } else if la[k] < 0.0 {
                empty = true;
            }
        }
        if empty || !(t1 > t0) {
            continue;
        }
        let tc = 0.5 * (t0 + t1);
        let c = xa + (xb - xa) * tc;
        let lc = bary4(&a, e, vol, &c);
        let m = lc[0].min(lc[1]).min(lc[2].min(lc[3]));
        if !(m > eps) {
            continue;
        }
        let off = (tc - 0.5).abs();
        if best.is_none_or(|b| off < b.1) {
            best = Some((t as u32, off, c));
        }
    }
    best.map(|(t, _, c)| (t, [c.x, c.y, c.z]))
}

/// Smallest barycentric coordinate of `x` in a positively oriented tet (f32, the kernel's
/// formula); `None` for inverted or degenerate tets.
pub fn inside_margin(positions: &[[f32; 4]], tet: [u32; 4], x: [f32; 3]) -> Option<f32> {
    let p = |k: usize| v3::<f32>(positions[tet[k] as usize]);
    let a = p(0);
    let (e1, e2, e3) = (p(1) - a, p(2) - a, p(3) - a);
    let d = Vector3::new(x[0], x[1], x[2]) - a;
    let vol = e1.dot(&e2.cross(&e3));
    if !(vol > 0.0) || !vol.is_finite() {
        return None;
    }
    let l1 = d.dot(&e2.cross(&e3)) / vol;
    let l2 = e1.dot(&d.cross(&e3)) / vol;
    let l3 = e1.dot(&e2.cross(&d)) / vol;
    let l0 = 1.0 - l1 - l2 - l3;
    Some(l0.min(l1).min(l2).min(l3))
}

/// Box of a tet (for callers that prefilter).
pub fn tet_box(positions: &[[f32; 4]], tet: [u32; 4]) -> Aabb {
    let mut b = Aabb::EMPTY;
    for v in tet {
        let p = positions[v as usize];
        b.grow([p[0], p[1], p[2]]);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use supple_mesh::procedural::{beam, CellSplit};
    use supple_mesh::TetMesh;

    fn f4(m: &TetMesh) -> Vec<[f32; 4]> {
        m.positions
            .iter()
            .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32, 0.0])
            .collect()
    }

    #[test]
    fn interior_points_of_a_box_reach_the_nearest_side() {
        let m = beam([1.0, 0.4, 0.4], 0.1, [0.0; 3], CellSplit::Six);
        let b = TetBoundary::new(&m);
        let x = f4(&m);
        let tree = super::super::bvh::build(&x, &b.face_indices(), 3, 10);
        let p = [0.33, 0.17, 0.12];
        let t = (0..m.tets.len() as u32)
            .find(|&t| inside_margin(&x, m.tets[t as usize], p).is_some_and(|m| m >= 0.0))
            .expect("point inside the beam");
        let q = Query {
            point: p,
            tet: t,
            vertex: INVALID,
        };
        let mut c = Counters::default();
        let a = query(&b, &tree, &x, &q, &Params::default(), &mut c);
        let o = oracle(&b, &x, &q, 1e-9, DEFAULT_MIN_DIST as f64);
        assert_eq!(a.face, o.face);
        assert!((a.sq_dist - 0.12f32 * 0.12).abs() < 1e-6, "{a:?}");
        assert!((o.sq_dist as f64 - 0.0144).abs() < 1e-6);
        // The nearest side is z = 0: outward normal -z.
        assert!(a.normal[2] < -0.99, "{a:?}");
        assert_eq!(c.found, 1);
    }

    /// DCD over all vertices, then every penetrating vertex's answer against the oracle.
    fn check_shape(m: &TetMesh, name: &str) -> (usize, usize) {
        let b = TetBoundary::new(m);
        let x = f4(m);
        let inverted = m
            .tets
            .iter()
            .filter(|t| tet_volume6::<f64>(&x, **t) <= 0.0)
            .count();
        assert_eq!(inverted, 0, "{name}: inverted tets");
        let tree = super::super::bvh::build(&x, &b.face_indices(), 3, 10);
        let mut c = Counters::default();
        let mut differs = 0;
        let mut n = 0;
        for v in 0..x.len() as u32 {
            let t = vertex_in_tet(&x, &b, v, 1e-4);
            if t == INVALID {
                continue;
            }
            n += 1;
            let q = Query {
                point: [x[v as usize][0], x[v as usize][1], x[v as usize][2]],
                tet: t,
                vertex: v,
            };
            let a = query(&b, &tree, &x, &q, &Params::default(), &mut c);
            let o = oracle(&b, &x, &q, 1e-9, DEFAULT_MIN_DIST as f64);
            assert_ne!(o.face, INVALID, "{name}: vertex {v} has no valid path");
            let d: f32 = (0..3).map(|k| (a.point[k] - o.point[k]).powi(2)).sum();
            assert!(d.sqrt() < 1e-5, "{name}: vertex {v}: {a:?} vs oracle {o:?}");
            // The naive answer: the Euclidean nearest boundary point over all faces.
            let naive = (0..b.faces.len() as u32)
                .filter(|&f| !b.faces[f as usize].contains(&v))
                .map(|f| {
                    let t = b.faces[f as usize].map(|i| v3::<f64>(x[i as usize]));
                    let p = v3::<f64>(x[v as usize]);
                    point_triangle(&p, &t[0], &t[1], &t[2]).sq_dist
                })
                .fold(f64::INFINITY, f64::min);
            if naive < o.sq_dist as f64 * 0.99 {
                differs += 1;
            }
        }
        eprintln!(
            "{name}: {n} penetrating vertices, {differs} differ from the naive nearest; {c:?}"
        );
        assert_eq!(c.overflows, 0, "{name}");
        assert_eq!(c.found as usize, n, "{name}");
        (n, differs)
    }

    #[test]
    fn self_intersecting_shapes_match_the_oracle() {
        let beam_m = beam([2.4, 0.2, 0.1], 0.05, [0.0; 3], CellSplit::Six);
        let folded = supple_mesh::procedural::coil(&beam_m, 0.3, 0.05, 0.05, 0.013);
        let (n, d) = check_shape(&folded, "folded beam");
        assert!(
            n > 10 && d > 0,
            "folded beam: {n} penetrating, {d} naive differ"
        );
        let noodle_m = beam([2.4, 0.08, 0.08], 0.04, [0.0; 3], CellSplit::Six);
        let noodle = supple_mesh::procedural::coil(&noodle_m, 0.2, 0.04, 0.011, 0.037);
        let (n, d) = check_shape(&noodle, "noodle");
        assert!(n > 10 && d > 0, "noodle: {n} penetrating, {d} naive differ");
        let ball = supple_mesh::procedural::squishy_ball([0.0; 3], 0.3, 8, 0.45, 0.07, 20)
            .expect("squishy ball");
        let curled = supple_mesh::procedural::curl_tentacles(&ball, [0.0; 3], 0.3, 8, 0.1);
        let (n, _) = check_shape(&curled, "curled squishy ball");
        assert!(n > 10, "curled squishy ball: {n} penetrating");
    }
}
