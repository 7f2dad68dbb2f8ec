//! Plain-Rust twin of the LBVH kernels (`kernels/bvh/*.comp`, host side in [`crate::bvh`]):
//! centroid bounds, Morton codes, the Karras (2012) binary radix tree, bottom-up AABB refit and
//! the tree queries (overlap pairs, nearest primitive within a radius, point in tet), plus
//! brute-force versions of every query that the tests compare against.
//!
//! All geometry is f32 exactly as on the GPU: AABBs are min/max of f32 vertex coordinates (exact,
//! so no rounding is needed to keep them conservative), centroids are `(min + max) * 0.5` and the
//! Morton quantisation scales by a power of two (the centroid-bounds extent rounded up), so the
//! codes are bit-identical on every conforming device. Tree nodes are numbered as on the GPU:
//! internal nodes `0..n-1` (the root is 0), leaf `j` (the j-th primitive in Morton order) is node
//! `n - 1 + j`; with one primitive the root is that leaf (node 0).

use super::distance::{point_edge, point_triangle};
use nalgebra::Vector3;

pub use crate::bvh::tree::{float_to_ordered, ordered_to_float, Aabb, Topology, Tree, INVALID};

/// AABB of primitive `i` whose `arity` vertex indices are `indices[arity * i..]`.
pub fn primitive_box(positions: &[[f32; 4]], indices: &[u32], arity: usize, i: usize) -> Aabb {
    let mut b = Aabb::EMPTY;
    for &v in &indices[arity * i..arity * (i + 1)] {
        let p = positions[v as usize];
        b.grow([p[0], p[1], p[2]]);
    }
    b
}

/// AABBs of all primitives.
pub fn primitive_boxes(positions: &[[f32; 4]], indices: &[u32], arity: usize) -> Vec<Aabb> {
    (0..indices.len() / arity)
        .map(|i| primitive_box(positions, indices, arity, i))
        .collect()
}

/// Bounds of the primitive centroids (the Morton-code frame).
pub fn centroid_bounds(boxes: &[Aabb]) -> Aabb {
    let mut b = Aabb::EMPTY;
    for x in boxes {
        b.grow(x.centroid());
    }
    b
}

/// Quantises `c` in `[lo, hi]` to `bits` bits in a frame rounded up to a power of two:
/// `min(floor((c - lo) * 2^bits / 2^k), 2^bits - 1)` with `2^k` the smallest power of two
/// `>= hi - lo`, 0 when the extent is not positive or `c <= lo`. Every step is exact or one
/// correctly rounded f32 subtraction, so any conforming GPU gives the same bits.
pub fn quantize(c: f32, lo: f32, hi: f32, bits: u32) -> u32 {
    let ext = hi - lo;
    // Also 0 for a NaN extent or coordinate, as on the GPU.
    if ext.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return 0;
    }
    let d = c - lo;
    if d.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return 0;
    }
    let e = ext.to_bits();
    let biased = ((e >> 23) & 0xff) as i32;
    let k = if biased == 0 {
        -126
    } else {
        biased - 127 + i32::from(e & 0x7f_ffff != 0)
    };
    let se = (bits as i32 - k).clamp(-126, 127);
    let scale = f32::from_bits(((se + 127) as u32) << 23);
    let t = (d * scale).min((1u32 << bits) as f32);
    (t as u32).min((1u32 << bits) - 1)
}

/// Interleaves three `bits`-bit coordinates: bit b of x goes to 3b+2, of y to 3b+1, of z to 3b.
pub fn interleave(q: [u32; 3], bits: u32) -> u64 {
    let mut code = 0u64;
    for b in 0..bits {
        code |= (((q[0] >> b) & 1) as u64) << (3 * b + 2);
        code |= (((q[1] >> b) & 1) as u64) << (3 * b + 1);
        code |= (((q[2] >> b) & 1) as u64) << (3 * b);
    }
    code
}

/// Morton codes (`3 * bits_per_axis` bits) of the box centroids in the frame `bounds`.
pub fn morton_codes(boxes: &[Aabb], bounds: &Aabb, bits_per_axis: u32) -> Vec<u64> {
    boxes
        .iter()
        .map(|b| {
            let c = b.centroid();
            let q = [0, 1, 2].map(|k| quantize(c[k], bounds.min[k], bounds.max[k], bits_per_axis));
            interleave(q, bits_per_axis)
        })
        .collect()
}

/// Length of the common prefix of keys `i` and `j` (indices break ties), -1 out of range.
fn delta(keys: &[u64], i: i64, j: i64) -> i64 {
    if j < 0 || j >= keys.len() as i64 {
        return -1;
    }
    let x = keys[i as usize] ^ keys[j as usize];
    if x != 0 {
        x.leading_zeros() as i64
    } else {
        64 + ((i as u32) ^ (j as u32)).leading_zeros() as i64
    }
}

/// Karras (2012) construction over sorted keys (duplicates allowed).
pub fn karras_topology(keys: &[u64]) -> Topology {
    let n = keys.len();
    let internal = n.saturating_sub(1);
    let mut children = vec![[0u32; 2]; internal];
    let mut ranges = vec![[0u32; 2]; internal];
    let mut parent = vec![INVALID; (2 * n).saturating_sub(1)];
    for i in 0..internal as i64 {
        let d: i64 = if delta(keys, i, i + 1) - delta(keys, i, i - 1) >= 0 {
            1
        } else {
            -1
        };
        let dmin = delta(keys, i, i - d);
        let mut lmax = 2i64;
        while delta(keys, i, i + lmax * d) > dmin {
            lmax *= 2;
        }
        let mut l = 0i64;
        let mut t = lmax / 2;
        while t >= 1 {
            if delta(keys, i, i + (l + t) * d) > dmin {
                l += t;
            }
            t /= 2;
        }
        let j = i + l * d;
        let dnode = delta(keys, i, j);
        let mut s = 0i64;
        let mut t = l;
        loop {
            t = (t + 1) >> 1;
            if delta(keys, i, i + (s + t) * d) > dnode {
                s += t;
            }
            if t <= 1 {
                break;
            }
        }
        let gamma = i + s * d + d.min(0);
        let (lo, hi) = (i.min(j), i.max(j));
        let left = if lo == gamma {
            (internal as i64 + gamma) as u32
        } else {
            gamma as u32
        };
        let right = if hi == gamma + 1 {
            (internal as i64 + gamma + 1) as u32
        } else {
            (gamma + 1) as u32
        };
        children[i as usize] = [left, right];
        ranges[i as usize] = [lo as u32, hi as u32];
        parent[left as usize] = i as u32;
        parent[right as usize] = i as u32;
    }
    Topology {
        children,
        parent,
        ranges,
    }
}

/// Builds the tree over primitives `indices` (`arity` vertices each) at `positions`.
pub fn build(positions: &[[f32; 4]], indices: &[u32], arity: usize, bits_per_axis: u32) -> Tree {
    let boxes = primitive_boxes(positions, indices, arity);
    let bounds = centroid_bounds(&boxes);
    let codes = morton_codes(&boxes, &bounds, bits_per_axis);
    let mut order: Vec<u32> = (0..boxes.len() as u32).collect();
    order.sort_by_key(|&i| codes[i as usize]); // stable, as the radix sort
    let keys: Vec<u64> = order.iter().map(|&i| codes[i as usize]).collect();
    let topology = karras_topology(&keys);
    let mut t = Tree {
        arity,
        bits_per_axis,
        keys,
        prims: order,
        topology,
        boxes: Vec::new(),
    };
    refit(&mut t, positions, indices);
    t
}

/// Recomputes every node box from `positions` (topology unchanged).
pub fn refit(t: &mut Tree, positions: &[[f32; 4]], indices: &[u32]) {
    let n = t.len();
    t.boxes = vec![Aabb::EMPTY; (2 * n).saturating_sub(1)];
    for j in 0..n {
        t.boxes[n - 1 + j] = primitive_box(positions, indices, t.arity, t.prims[j] as usize);
    }
    // Internal nodes: children of node i have larger indices than i or are leaves? Not in
    // general, so recurse by post-order instead.
    if n > 1 {
        let mut stack = vec![(0usize, false)];
        while let Some((node, done)) = stack.pop() {
            if node >= n - 1 {
                continue;
            }
            let [a, b] = t.topology.children[node];
            if done {
                t.boxes[node] = t.boxes[a as usize].union(&t.boxes[b as usize]);
            } else {
                stack.push((node, true));
                stack.push((a as usize, false));
                stack.push((b as usize, false));
            }
        }
    }
}

fn share_vertex(indices: &[u32], arity: usize, a: usize, b: usize) -> bool {
    let va = &indices[arity * a..arity * (a + 1)];
    let vb = &indices[arity * b..arity * (b + 1)];
    va.iter().any(|x| vb.contains(x))
}

fn sorted(mut v: Vec<[u32; 2]>) -> Vec<[u32; 2]> {
    v.sort_unstable();
    v
}

/// Self-overlap by traversal: unordered primitive pairs `[a, b]` (`a < b`) sharing no vertex
/// whose boxes overlap within `margin`; sorted.
pub fn self_overlap(t: &Tree, indices: &[u32], margin: f32) -> Vec<[u32; 2]> {
    let n = t.len();
    let mut out = Vec::new();
    if n < 2 {
        return out;
    }
    for j in 0..n {
        let bj = t.boxes[n - 1 + j];
        let pa = t.prims[j] as usize;
        let mut stack = vec![0usize];
        while let Some(node) = stack.pop() {
            if t.is_leaf(node) {
                let k = node - (n - 1);
                let pb = t.prims[k] as usize;
                if k > j
                    && bj.overlaps(&t.boxes[node], margin)
                    && !share_vertex(indices, t.arity, pa, pb)
                {
                    out.push([pa.min(pb) as u32, pa.max(pb) as u32]);
                }
            } else if t.topology.ranges[node][1] as usize > j && bj.overlaps(&t.boxes[node], margin)
            {
                let [a, b] = t.topology.children[node];
                stack.push(a as usize);
                stack.push(b as usize);
            }
        }
    }
    sorted(out)
}

/// Brute-force twin of [`self_overlap`].
pub fn brute_self_overlap(
    positions: &[[f32; 4]],
    indices: &[u32],
    arity: usize,
    margin: f32,
) -> Vec<[u32; 2]> {
    let boxes = primitive_boxes(positions, indices, arity);
    let mut out = Vec::new();
    for a in 0..boxes.len() {
        for b in a + 1..boxes.len() {
            if boxes[a].overlaps(&boxes[b], margin) && !share_vertex(indices, arity, a, b) {
                out.push([a as u32, b as u32]);
            }
        }
    }
    out
}

/// Pairs `[query, primitive]` whose boxes overlap within `margin`, skipping primitives that
/// share a vertex with the query's `query_verts[qk * q..]` (`qk` = 0: no exclusion); sorted.
pub fn box_overlap(
    t: &Tree,
    indices: &[u32],
    queries: &[Aabb],
    query_verts: &[u32],
    qk: usize,
    margin: f32,
) -> Vec<[u32; 2]> {
    let n = t.len();
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    for (q, qb) in queries.iter().enumerate() {
        let mut stack = vec![0usize];
        while let Some(node) = stack.pop() {
            if !qb.overlaps(&t.boxes[node], margin) {
                continue;
            }
            if t.is_leaf(node) {
                let p = t.prims[node - (n - 1)] as usize;
                if !excluded(indices, t.arity, p, query_verts, qk, q) {
                    out.push([q as u32, p as u32]);
                }
            } else {
                let [a, b] = t.topology.children[node];
                stack.push(a as usize);
                stack.push(b as usize);
            }
        }
    }
    sorted(out)
}

fn excluded(indices: &[u32], arity: usize, p: usize, qv: &[u32], qk: usize, q: usize) -> bool {
    let vp = &indices[arity * p..arity * (p + 1)];
    qv[qk * q..qk * (q + 1)].iter().any(|x| vp.contains(x))
}

/// Brute-force twin of [`box_overlap`].
pub fn brute_box_overlap(
    positions: &[[f32; 4]],
    indices: &[u32],
    arity: usize,
    queries: &[Aabb],
    query_verts: &[u32],
    qk: usize,
    margin: f32,
) -> Vec<[u32; 2]> {
    let boxes = primitive_boxes(positions, indices, arity);
    let mut out = Vec::new();
    for (q, qb) in queries.iter().enumerate() {
        for (p, pb) in boxes.iter().enumerate() {
            if qb.overlaps(pb, margin) && !excluded(indices, arity, p, query_verts, qk, q) {
                out.push([q as u32, p as u32]);
            }
        }
    }
    out
}

fn v3(p: [f32; 4]) -> Vector3<f32> {
    Vector3::new(p[0], p[1], p[2])
}

/// Exact squared distance (f32, the GPU's formula) from `x` to primitive `p` (edge or triangle).
pub fn primitive_sq_dist(
    positions: &[[f32; 4]],
    indices: &[u32],
    arity: usize,
    p: usize,
    x: [f32; 3],
) -> f32 {
    let v = |k: usize| v3(positions[indices[arity * p + k] as usize]);
    let x = Vector3::new(x[0], x[1], x[2]);
    match arity {
        2 => point_edge(&x, &v(0), &v(1)).sq_dist,
        3 => point_triangle(&x, &v(0), &v(1), &v(2)).sq_dist,
        _ => f32::INFINITY,
    }
}

/// Nearest primitive (edge or triangle tree) to `x` with squared distance `<= radius²`: the
/// smallest squared distance, ties to the lower primitive index; `None` when none is in range.
pub fn nearest(
    t: &Tree,
    positions: &[[f32; 4]],
    indices: &[u32],
    x: [f32; 3],
    radius: f32,
) -> Option<(u32, f32)> {
    let n = t.len();
    if n == 0 {
        return None;
    }
    let mut best = (INVALID, radius * radius);
    let mut stack = vec![0usize];
    while let Some(node) = stack.pop() {
        if t.boxes[node].sq_dist(x) * NEAREST_PRUNE > best.1 {
            continue;
        }
        if t.is_leaf(node) {
            let p = t.prims[node - (n - 1)];
            let d = primitive_sq_dist(positions, indices, t.arity, p as usize, x);
            if d <= best.1 && (d < best.1 || p < best.0) {
                best = (p, d);
            }
        } else {
            let [a, b] = t.topology.children[node];
            stack.push(a as usize);
            stack.push(b as usize);
        }
    }
    (best.0 != INVALID).then_some(best)
}

/// Factor applied to a node's box distance before pruning against the best distance, so that
/// f32 rounding of the box distance never prunes the true nearest primitive.
pub const NEAREST_PRUNE: f32 = 0.9999;

/// Brute-force twin of [`nearest`].
pub fn brute_nearest(
    positions: &[[f32; 4]],
    indices: &[u32],
    arity: usize,
    x: [f32; 3],
    radius: f32,
) -> Option<(u32, f32)> {
    let mut best = (INVALID, radius * radius);
    for p in 0..indices.len() / arity {
        let d = primitive_sq_dist(positions, indices, arity, p, x);
        if d <= best.1 && (d < best.1 || (p as u32) < best.0) {
            best = (p as u32, d);
        }
    }
    (best.0 != INVALID).then_some(best)
}

/// Barycentric coordinates (f32, the GPU's formula) of `x` in tet `t`; `None` if degenerate.
pub fn tet_barycentric(positions: &[[f32; 4]], tet: [u32; 4], x: [f32; 3]) -> Option<[f32; 4]> {
    let a = v3(positions[tet[0] as usize]);
    let e1 = v3(positions[tet[1] as usize]) - a;
    let e2 = v3(positions[tet[2] as usize]) - a;
    let e3 = v3(positions[tet[3] as usize]) - a;
    let q = Vector3::new(x[0], x[1], x[2]) - a;
    let c23 = e2.cross(&e3);
    let vol = e1.dot(&c23);
    if vol == 0.0 || !vol.is_finite() {
        return None;
    }
    let l1 = q.dot(&c23) / vol;
    let l2 = e1.dot(&q.cross(&e3)) / vol;
    let l3 = e1.dot(&e2.cross(&q)) / vol;
    Some([1.0 - l1 - l2 - l3, l1, l2, l3])
}

fn min4(b: [f32; 4]) -> f32 {
    b[0].min(b[1]).min(b[2]).min(b[3])
}

/// The tet containing `x`: among tets whose box contains `x` and whose smallest barycentric
/// coordinate is `>= -eps`, the one with the largest smallest coordinate (ties: lower index).
pub fn point_in_tet(
    t: &Tree,
    positions: &[[f32; 4]],
    indices: &[u32],
    x: [f32; 3],
    eps: f32,
) -> Option<(u32, [f32; 4])> {
    let n = t.len();
    let mut best: Option<(u32, [f32; 4])> = None;
    if n == 0 {
        return best;
    }
    let mut stack = vec![0usize];
    while let Some(node) = stack.pop() {
        if !t.boxes[node].contains_point(x) {
            continue;
        }
        if t.is_leaf(node) {
            let p = t.prims[node - (n - 1)];
            consider_tet(positions, indices, p, x, eps, &mut best);
        } else {
            let [a, b] = t.topology.children[node];
            stack.push(a as usize);
            stack.push(b as usize);
        }
    }
    best
}

fn consider_tet(
    positions: &[[f32; 4]],
    indices: &[u32],
    p: u32,
    x: [f32; 3],
    eps: f32,
    best: &mut Option<(u32, [f32; 4])>,
) {
    let i = 4 * p as usize;
    let tet = [indices[i], indices[i + 1], indices[i + 2], indices[i + 3]];
    if let Some(b) = tet_barycentric(positions, tet, x) {
        let m = min4(b);
        if m >= -eps {
            let better = match best {
                None => true,
                Some((q, bq)) => m > min4(*bq) || (m == min4(*bq) && p < *q),
            };
            if better {
                *best = Some((p, b));
            }
        }
    }
}

/// Brute-force twin of [`point_in_tet`].
pub fn brute_point_in_tet(
    positions: &[[f32; 4]],
    indices: &[u32],
    x: [f32; 3],
    eps: f32,
) -> Option<(u32, [f32; 4])> {
    let mut best = None;
    for p in 0..indices.len() / 4 {
        if primitive_box(positions, indices, 4, p).contains_point(x) {
            consider_tet(positions, indices, p as u32, x, eps, &mut best);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(s: &mut u64) -> f32 {
        *s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*s >> 40) as f32) / (1u64 << 24) as f32
    }

    fn random_tris(n: usize, seed: u64) -> (Vec<[f32; 4]>, Vec<u32>) {
        let mut s = seed;
        let mut pos = Vec::new();
        let mut idx = Vec::new();
        for t in 0..n {
            let c = [lcg(&mut s), lcg(&mut s), lcg(&mut s)];
            for _ in 0..3 {
                pos.push([
                    c[0] + 0.05 * lcg(&mut s),
                    c[1] + 0.05 * lcg(&mut s),
                    c[2] + 0.05 * lcg(&mut s),
                    0.0,
                ]);
            }
            // Share a vertex with the previous triangle now and then.
            let base = 3 * t as u32;
            idx.extend([base, base + 1, if t % 4 == 1 { base - 1 } else { base + 2 }]);
        }
        (pos, idx)
    }

    #[test]
    fn ordered_floats_round_trip_and_sort() {
        let xs = [
            -3.5f32,
            -0.0,
            0.0,
            1e-30,
            2.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        for &x in &xs {
            assert_eq!(ordered_to_float(float_to_ordered(x)).to_bits(), x.to_bits());
        }
        assert!(float_to_ordered(-1.0) < float_to_ordered(0.5));
        assert!(float_to_ordered(-2.0) < float_to_ordered(-1.0));
    }

    #[test]
    fn tree_is_valid_and_queries_match_brute_force() {
        for &bits in &[10u32, 21] {
            let (pos, idx) = random_tris(300, 7 + bits as u64);
            let t = build(&pos, &idx, 3, bits);
            let n = t.len();
            // Every node except the root has a parent; every internal box holds its children.
            assert_eq!(t.topology.parent[0], INVALID);
            assert!(t.topology.parent[1..].iter().all(|&p| p != INVALID));
            for i in 0..n - 1 {
                for c in t.topology.children[i] {
                    assert_eq!(t.topology.parent[c as usize], i as u32);
                    assert!(t.boxes[i].contains_box(&t.boxes[c as usize]));
                }
            }
            assert_eq!(t.topology.ranges[0], [0, n as u32 - 1]);
            for m in [0.0f32, 0.02] {
                assert_eq!(
                    self_overlap(&t, &idx, m),
                    brute_self_overlap(&pos, &idx, 3, m)
                );
            }
            let qb: Vec<Aabb> = (0..50)
                .map(|i| primitive_box(&pos, &idx, 3, i * 3))
                .collect();
            let qv: Vec<u32> = (0..50).map(|i| idx[9 * i]).collect();
            assert_eq!(
                box_overlap(&t, &idx, &qb, &qv, 1, 0.01),
                brute_box_overlap(&pos, &idx, 3, &qb, &qv, 1, 0.01)
            );
            let mut s = 99;
            for _ in 0..100 {
                let x = [lcg(&mut s), lcg(&mut s), lcg(&mut s)];
                assert_eq!(
                    nearest(&t, &pos, &idx, x, 0.1),
                    brute_nearest(&pos, &idx, 3, x, 0.1)
                );
            }
        }
    }

    #[test]
    fn duplicate_codes_and_tiny_trees() {
        let keys = vec![5u64, 5, 5, 5, 9];
        let topo = karras_topology(&keys);
        assert_eq!(topo.parent.iter().filter(|&&p| p == INVALID).count(), 1);
        assert!(karras_topology(&[3]).children.is_empty());
        assert!(karras_topology(&[]).parent.is_empty());
    }

    #[test]
    fn point_in_tet_matches_brute_force() {
        // Two tets sharing a face.
        let pos = vec![
            [0.0, 0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 1.0, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [1.0, 1.0, 1.0, 0.0],
        ];
        let idx = vec![0, 1, 2, 3, 1, 2, 3, 4];
        let t = build(&pos, &idx, 4, 21);
        let mut s = 3;
        for _ in 0..200 {
            let x = [lcg(&mut s), lcg(&mut s), lcg(&mut s)];
            assert_eq!(
                point_in_tet(&t, &pos, &idx, x, 1e-6),
                brute_point_in_tet(&pos, &idx, x, 1e-6)
            );
        }
        let r = point_in_tet(&t, &pos, &idx, [0.1, 0.1, 0.1], 0.0);
        assert_eq!(r.map(|r| r.0), Some(0));
    }
}
