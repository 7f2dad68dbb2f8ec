//! Host-side spatial-hashing helpers that plan a search before it runs (cell counts and
//! the vertex domain that size the workspaces, the cell of a point, unique mesh edges): the
//! same f32 arithmetic as `kernels/include/spatial_hash.glsl`, so the plan matches what the
//! kernels will do. The plain-Rust twin of the kernels ([`crate::cpu_reference::proximity`])
//! builds on these.

use super::HashParams;

/// Unique edges `[a, b]` (`a < b`, sorted) of a triangle list.
pub fn unique_edges(triangles: &[[u32; 3]]) -> Vec<[u32; 2]> {
    let mut e: Vec<[u32; 2]> = triangles
        .iter()
        .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
        .filter(|(a, b)| a != b)
        .map(|(a, b)| [a.min(b), a.max(b)])
        .collect();
    e.sort_unstable();
    e.dedup();
    e
}

/// Largest per-primitive cell count for `np` primitives (`spatial_hash.glsl::count_saturation`).
pub fn count_saturation(np: u32) -> u32 {
    0x7fff_ffff / np.max(1)
}

/// Cell of point `q` (`spatial_hash.glsl::cell_of`).
pub fn cell_of(q: [f32; 3], inv_h: f32) -> [i32; 3] {
    q.map(|c| (c * inv_h).floor() as i32)
}

/// The xyz part of a vec4 position.
pub fn xyz(p: [f32; 4]) -> [f32; 3] {
    [p[0], p[1], p[2]]
}

/// Box of `pts` inflated by `pad` (m), f32 as the kernels compute it.
pub fn box32(pts: &[[f32; 3]], pad: f32) -> ([f32; 3], [f32; 3]) {
    let mut lo = pts[0];
    let mut hi = pts[0];
    for p in &pts[1..] {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    (lo.map(|v| v - pad), hi.map(|v| v + pad))
}

/// Inflated box of primitive `i` (triangles `0..nt`, then edges), as the kernels compute it.
pub fn primitive_box(
    x: &[[f32; 4]],
    triangles: &[[u32; 3]],
    edges: &[[u32; 2]],
    p: &HashParams,
    i: usize,
) -> ([f32; 3], [f32; 3]) {
    if i < triangles.len() {
        let t = triangles[i];
        // GLSL: min(min(a, b), c).
        box32(&t.map(|v| xyz(x[v as usize])), p.pad_t)
    } else {
        let e = edges[i - triangles.len()];
        box32(&e.map(|v| xyz(x[v as usize])), p.pad_e)
    }
}

/// Saturated cell count of the inclusive range `[lo, hi]` (`spatial_hash.glsl::range_cells`):
/// `sat` when an axis spans more than `2^axis_bits` cells.
pub fn range_cells(lo: [i32; 3], hi: [i32; 3], sat: u32, axis_bits: u32) -> u32 {
    let n: Vec<u64> = (0..3)
        .map(|k| (hi[k] as i64 - lo[k] as i64 + 1).max(0) as u64)
        .collect();
    if n.contains(&0) || n.iter().any(|&k| k > 1u64 << axis_bits) {
        return sat;
    }
    (n[0] * n[1] * n[2]).min(sat as u64) as u32
}

/// Host twin of `cell_counts.comp` (sizing before a search): cells overlapped by each primitive's inflated box.
pub fn cell_counts(
    x: &[[f32; 4]],
    triangles: &[[u32; 3]],
    edges: &[[u32; 2]],
    p: &HashParams,
) -> Vec<u32> {
    let np = triangles.len() + edges.len();
    let sat = count_saturation(np as u32);
    (0..np)
        .map(|i| {
            let (lo, hi) = primitive_box(x, triangles, edges, p, i);
            range_cells(
                cell_of(lo, p.inv_h),
                cell_of(hi, p.inv_h),
                sat,
                p.axis_bits(),
            )
        })
        .collect()
}

/// Host twin of `domain.comp` (sizing before a search): words 1..7 of the `saturated` buffer, the cell domain of the
/// vertices moved by `∓max(pad_t, pad_e)`: `[1 + a]` = max of `!ordered(lower cell)`,
/// `[4 + a]` = max of `ordered(upper cell)`, `ordered(c) = c as u32 ^ 0x8000_0000`.
pub fn domain(x: &[[f32; 4]], p: &HashParams) -> [u32; 6] {
    let pad = p.pad_t.max(p.pad_e);
    let ordered = |c: i32| c as u32 ^ 0x8000_0000;
    let mut out = [0u32; 6];
    for q in x.iter().take(p.nv as usize) {
        let q = xyz(*q);
        let c0 = cell_of(q.map(|v| v - pad), p.inv_h);
        let c1 = cell_of(q.map(|v| v + pad), p.inv_h);
        for a in 0..3 {
            out[a] = out[a].max(!ordered(c0[a]));
            out[3 + a] = out[3 + a].max(ordered(c1[a]));
        }
    }
    out
}

/// Host twin of `spatial_hash.glsl::buckets_are_cells`: whether the [`domain`] spans at most
/// `2^k` cells per axis (true when empty).
pub fn buckets_are_cells(domain: &[u32; 6], p: &HashParams) -> bool {
    (0..3).all(|a| {
        let lo = (!domain[a] ^ 0x8000_0000) as i32;
        let up = (domain[3 + a] ^ 0x8000_0000) as i32;
        up < lo || (up as i64 - lo as i64) < (1i64 << p.axis_bits())
    })
}
