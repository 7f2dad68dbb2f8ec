//! Plain-Rust references of the proximity search: the brute-force pair set with exact f64
//! distances (what the search must return), and the f32 twin of each kernel of
//! `kernels/proximity/` (same operations in the same order; see
//! [`crate::proximity::spatial_hash`] for the method).

use super::distance::{edge_edge, point_triangle};
use crate::proximity::{BodyFilter, HashParams, Pair};
use nalgebra::Vector3;

pub use crate::proximity::host::{
    box32, buckets_are_cells, cell_counts, cell_of, count_saturation, domain, primitive_box,
    range_cells, unique_edges, xyz,
};

/// A pair of the brute-force set with its exact distance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefPair {
    /// Vertex (vertex–triangle) or first edge (edge–edge).
    pub a: u32,
    /// Triangle (vertex–triangle) or second edge (`b > a`, edge–edge).
    pub b: u32,
    /// Exact distance (m, f64).
    pub dist: f64,
}

/// Brute-force pair sets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RefPairs {
    /// Vertex–triangle pairs, sorted by (a, b).
    pub vertex_triangle: Vec<RefPair>,
    /// Edge–edge pairs, sorted by (a, b).
    pub edge_edge: Vec<RefPair>,
}

fn v64(p: [f64; 3]) -> Vector3<f64> {
    Vector3::new(p[0], p[1], p[2])
}

fn box_of(pts: &[[f64; 3]], pad: f64) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in pts {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k] - pad);
            hi[k] = hi[k].max(p[k] + pad);
        }
    }
    (lo, hi)
}

fn overlap(a: &([f64; 3], [f64; 3]), b: &([f64; 3], [f64; 3])) -> bool {
    (0..3).all(|k| a.0[k] <= b.1[k] && b.0[k] <= a.1[k])
}

/// Every vertex–triangle and edge–edge pair sharing no vertex, allowed by `filter` (body of a
/// primitive = body of its first vertex), with exact f64 distance `< d`. All pairs are
/// considered (a box test at a slightly larger distance only skips pairs that are provably
/// farther than `d`).
pub fn brute_force(
    x: &[[f64; 3]],
    triangles: &[[u32; 3]],
    edges: &[[u32; 2]],
    body: &[u32],
    d: f64,
    filter: BodyFilter,
) -> RefPairs {
    let pad = d * (1.0 + 1e-9);
    let mut out = RefPairs::default();
    let tri_boxes: Vec<_> = triangles
        .iter()
        .map(|t| box_of(&t.map(|i| x[i as usize]), pad))
        .collect();
    for (v, p) in x.iter().enumerate() {
        let pb = box_of(&[*p], 0.0);
        for (ti, t) in triangles.iter().enumerate() {
            if t.contains(&(v as u32)) || !filter.allows(body[v], body[t[0] as usize]) {
                continue;
            }
            if !overlap(&pb, &tri_boxes[ti]) {
                continue;
            }
            let c = point_triangle(
                &v64(*p),
                &v64(x[t[0] as usize]),
                &v64(x[t[1] as usize]),
                &v64(x[t[2] as usize]),
            );
            let dist = c.sq_dist.sqrt();
            if dist < d {
                out.vertex_triangle.push(RefPair {
                    a: v as u32,
                    b: ti as u32,
                    dist,
                });
            }
        }
    }
    let edge_boxes: Vec<_> = edges
        .iter()
        .map(|e| box_of(&e.map(|i| x[i as usize]), 0.5 * pad))
        .collect();
    for (a, ea) in edges.iter().enumerate() {
        for (b, eb) in edges.iter().enumerate().skip(a + 1) {
            if ea.iter().any(|v| eb.contains(v))
                || !filter.allows(body[ea[0] as usize], body[eb[0] as usize])
                || !overlap(&edge_boxes[a], &edge_boxes[b])
            {
                continue;
            }
            let c = edge_edge(
                &v64(x[ea[0] as usize]),
                &v64(x[ea[1] as usize]),
                &v64(x[eb[0] as usize]),
                &v64(x[eb[1] as usize]),
            );
            let dist = c.sq_dist.sqrt();
            if dist < d {
                out.edge_edge.push(RefPair {
                    a: a as u32,
                    b: b as u32,
                    dist,
                });
            }
        }
    }
    out
}

/// Bucket of cell `c` (`spatial_hash.glsl::cell_bucket`): coordinates modulo `2^k`,
/// `k = table_bits / 3`, interleaved.
pub fn cell_bucket(c: [i32; 3], table_bits: u32) -> u32 {
    let k = table_bits / 3;
    let m = (1u32 << k) - 1;
    let u = c.map(|v| v as u32 & m);
    u[0] | u[1] << k | u[2] << (2 * k)
}

/// Key of an entry: type, bucket, x slot (`spatial_hash.glsl::entry_key`).
pub fn entry_key(ty: u32, bucket: u32, slot: u32, p: &HashParams) -> u32 {
    (((ty << p.table_bits) | bucket) << p.order_bits) | slot
}

/// Bucket of a key (`spatial_hash.glsl::key_bucket`).
pub fn key_bucket(key: u32, p: &HashParams) -> u32 {
    (key >> p.order_bits) & ((1 << p.table_bits) - 1)
}

/// Primitive type of a key, 0 triangle, 1 edge (`spatial_hash.glsl::key_type`).
pub fn key_type(key: u32, p: &HashParams) -> u32 {
    key >> (p.table_bits + p.order_bits)
}

/// x slot of a cell-local x in [`local_units`] (`spatial_hash.glsl::x_slot`).
pub fn x_slot(ux: i32, p: &HashParams) -> u32 {
    let s = (ux + LOCAL_UNITS) >> (8 - p.order_bits as i32);
    s.clamp(0, (1 << p.order_bits) - 1) as u32
}

/// Key of the entry of a primitive of type `ty` with box lower corner `lo` in cell `c`
/// (`spatial_hash.glsl::cell_entry_key`).
pub fn cell_entry_key(ty: u32, lo: [f32; 3], c: [i32; 3], p: &HashParams) -> u32 {
    let slot = x_slot(local_units(lo, c, p.inv_h)[0], p);
    entry_key(ty, cell_bucket(c, p.table_bits), slot, p)
}

/// Entries `[start, end)` of the x slots `0..=last_slot` of bucket `bucket` of type `ty` in
/// key-sorted entries, from the per-key runs of [`bucket_ranges`] (`(0, 0)` if empty).
pub fn slots_span(
    ranges: &[[u32; 2]],
    ty: u32,
    bucket: u32,
    last_slot: u32,
    p: &HashParams,
) -> (usize, usize) {
    let first = entry_key(ty, bucket, 0, p) as usize;
    let keys = &ranges[first..=first + last_slot as usize];
    let mut span = (usize::MAX, 0);
    for r in keys.iter().filter(|r| r[1] > r[0]) {
        span = (span.0.min(r[0] as usize), span.1.max(r[1] as usize));
    }
    if span.0 == usize::MAX {
        (0, 0)
    } else {
        span
    }
}

/// Entries `[start, end)` of bucket `bucket` of type `ty` (all its x slots), see [`slots_span`].
pub fn bucket_span(ranges: &[[u32; 2]], ty: u32, bucket: u32, p: &HashParams) -> (usize, usize) {
    slots_span(ranges, ty, bucket, (1 << p.order_bits) - 1, p)
}

/// Entries of `cell_counts.comp` / `place_entries.comp` in primitive order (primitive by
/// primitive, cells in z, y, x order), before the counting sort: `entry_cap` keys (sentinel
/// past the entries) and values, and the true entry total.
pub fn fill_cells(
    x: &[[f32; 4]],
    triangles: &[[u32; 3]],
    edges: &[[u32; 2]],
    p: &HashParams,
) -> (Vec<u32>, Vec<u32>, u64) {
    let cap = p.entry_cap as usize;
    let mut keys = vec![p.sentinel(); cap];
    let mut vals = vec![0u32; cap];
    let mut k = 0usize;
    let mut total = 0u64;
    let nt = triangles.len();
    for i in 0..nt + edges.len() {
        let (lo, hi) = primitive_box(x, triangles, edges, p, i);
        let (c0, c1) = (cell_of(lo, p.inv_h), cell_of(hi, p.inv_h));
        let (ty, id) = if i < nt { (0, i) } else { (1, i - nt) };
        total += range_cells(
            c0,
            c1,
            count_saturation((nt + edges.len()) as u32),
            p.axis_bits(),
        ) as u64;
        for z in c0[2]..=c1[2] {
            for y in c0[1]..=c1[1] {
                for xx in c0[0]..=c1[0] {
                    if k < cap {
                        keys[k] = cell_entry_key(ty, lo, [xx, y, z], p);
                        vals[k] = id as u32;
                    }
                    k += 1;
                }
            }
        }
    }
    (keys, vals, total)
}

/// Runs `[start, end)` of each key (type, bucket) in key-sorted entries (`[0, 0]` if empty).
pub fn bucket_ranges(sorted_keys: &[u32], p: &HashParams) -> Vec<[u32; 2]> {
    let mut r = vec![[0u32; 2]; p.num_keys()];
    let b = sorted_keys;
    for (i, &k) in b.iter().enumerate() {
        if k >= p.sentinel() {
            continue;
        }
        if i == 0 || b[i - 1] != k {
            r[k as usize][0] = i as u32;
        }
        if i + 1 == b.len() || b[i + 1] != k {
            r[k as usize][1] = i as u32 + 1;
        }
    }
    r
}

/// Cell-local quantization units per cell of the packed edge records
/// (`spatial_hash.glsl::LOCAL_UNITS`).
pub const LOCAL_UNITS: i32 = 128;

/// `spatial_hash.glsl::pack_local`: `floor(v / h * LOCAL_UNITS)` relative to cell `c`, clamped
/// to `[-512, 511]` per axis, 10 bits per axis.
pub fn pack_local(v: [f32; 3], c: [i32; 3], inv_h: f32) -> u32 {
    let q = local_units(v, c, inv_h);
    (0..3).fold(0, |w, k| w | ((q[k] + 512) as u32) << (10 * k))
}

/// `spatial_hash.glsl::local_units`: `floor(v / h * LOCAL_UNITS)` relative to cell `c`,
/// clamped to `[-512, 511]` per axis.
pub fn local_units(v: [f32; 3], c: [i32; 3], inv_h: f32) -> [i32; 3] {
    std::array::from_fn(|k| {
        let t = v[k] * inv_h;
        let f = (t * LOCAL_UNITS as f32)
            .floor()
            .clamp(-1_073_741_824.0, 1_073_741_824.0);
        (f as i32)
            .wrapping_sub(c[k].wrapping_mul(LOCAL_UNITS))
            .clamp(-512, 511)
    })
}

/// Reference of the entry records of `place_entries.comp`: per entry of `keys`/`vals` (edge
/// entries: key and edge; triangle entries: key and triangle) `[packed lo, packed hi, triangle,
/// 0]` or `[packed lo, packed hi, v0, v1]` ([`pack_local`] relative to the entry's own cell: the
/// cell of the box's range congruent to the bucket modulo `2^k`); `None` for sentinel keys.
pub fn entry_records(
    x: &[[f32; 4]],
    triangles: &[[u32; 3]],
    edges: &[[u32; 2]],
    keys: &[u32],
    vals: &[u32],
    p: &HashParams,
) -> Vec<Option<[u32; 4]>> {
    let k = p.axis_bits();
    let km = (1u32 << k) - 1;
    keys.iter()
        .zip(vals)
        .map(|(&key, &id)| {
            let ty = key_type(key, p);
            if key >= p.sentinel() {
                return None;
            }
            let i = if ty == 0 {
                id as usize
            } else {
                triangles.len() + id as usize
            };
            let (lo, hi) = primitive_box(x, triangles, edges, p, i);
            let bucket = key_bucket(key, p);
            let bc = [bucket & km, (bucket >> k) & km, (bucket >> (2 * k)) & km];
            let c0 = cell_of(lo, p.inv_h);
            let c: [i32; 3] = std::array::from_fn(|a| {
                c0[a].wrapping_add((bc[a].wrapping_sub(c0[a] as u32) & km) as i32)
            });
            let tail = if ty == 0 { [id, 0] } else { edges[id as usize] };
            Some([
                pack_local(lo, c, p.inv_h),
                pack_local(hi, c, p.inv_h),
                tail[0],
                tail[1],
            ])
        })
        .collect()
}

fn v32(p: [f32; 3]) -> Vector3<f32> {
    Vector3::new(p[0], p[1], p[2])
}

/// Reference of `query_vt.comp`: for each vertex, the triangle entries of its bucket up to its
/// x slot whose record's quantized box contains the vertex's cell-local units (entries of
/// other cells in the bucket compare in the vertex's frame, as on the GPU), minus triangles of
/// the vertex and pairs the body filter rejects: `(v, t)` candidates. `records` are
/// [`entry_records`] of the entries, `ranges` the per-key runs ([`bucket_ranges`]).
pub fn query_vertex_triangle_quantized(
    x: &[[f32; 4]],
    body: &[u32],
    triangles: &[[u32; 3]],
    records: &[Option<[u32; 4]>],
    ranges: &[[u32; 2]],
    p: &HashParams,
) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    let filter = BodyFilter::from_flags(p.flags);
    for v in 0..p.nv as usize {
        let q = xyz(x[v]);
        let cq = cell_of(q, p.inv_h);
        let uq = local_units(q, cq, p.inv_h);
        let bucket = cell_bucket(cq, p.table_bits);
        let (start, end) = slots_span(ranges, 0, bucket, x_slot(uq[0], p), p);
        for rec in records.iter().take(end).skip(start).flatten() {
            let (lo, hi) = (unpack_local(rec[0]), unpack_local(rec[1]));
            let t = rec[2];
            if (0..3).all(|k| lo[k] <= uq[k] && uq[k] <= hi[k])
                && vt_allowed(v, triangles[t as usize], body, &filter)
            {
                out.push([v as u32, t]);
            }
        }
    }
    out
}

/// Whether vertex `v` and triangle `f` may form a candidate: `v` is not a corner of `f` and the
/// body filter allows the pair.
fn vt_allowed(v: usize, f: [u32; 3], body: &[u32], filter: &BodyFilter) -> bool {
    !f.contains(&(v as u32)) && filter.allows(body[v], body[f[0] as usize])
}

/// Vertex–triangle candidates by the f32 box test (every triangle entry of the vertex's bucket
/// whose inflated box contains the vertex): a subset of what `query_vt.comp` returns
/// ([`query_vertex_triangle_quantized`]) that holds every pair closer than D.
#[allow(clippy::too_many_arguments)]
pub fn query_vertex_triangle(
    x: &[[f32; 4]],
    body: &[u32],
    triangles: &[[u32; 3]],
    vals: &[u32],
    ranges: &[[u32; 2]],
    p: &HashParams,
) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    let filter = BodyFilter::from_flags(p.flags);
    for v in 0..p.nv as usize {
        let q = xyz(x[v]);
        let bucket = cell_bucket(cell_of(q, p.inv_h), p.table_bits);
        let (start, end) = bucket_span(ranges, 0, bucket, p);
        for &t in &vals[start..end] {
            let f = triangles[t as usize];
            if !vt_allowed(v, f, body, &filter) {
                continue;
            }
            let (lo, hi) = box32(&f.map(|i| xyz(x[i as usize])), p.pad_t);
            if (0..3).any(|k| q[k] < lo[k] || q[k] > hi[k]) {
                continue;
            }
            out.push([v as u32, t]);
        }
    }
    out
}

/// Reference of `query_ee.comp` without its sorted-order early exit and bounding-sphere cull:
/// edge–edge candidates
/// `(min, max)` in entry order of the sorted keys and values.
#[allow(clippy::too_many_arguments)]
pub fn query_edge_edge(
    x: &[[f32; 4]],
    body: &[u32],
    edges: &[[u32; 2]],
    sorted_keys: &[u32],
    sorted_vals: &[u32],
    ranges: &[[u32; 2]],
    p: &HashParams,
) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    let filter = BodyFilter::from_flags(p.flags);
    let ebox = |e: [u32; 2]| box32(&e.map(|i| xyz(x[i as usize])), p.pad_e);
    let ids = sorted_vals;
    for (i, &key) in sorted_keys.iter().enumerate() {
        if key >= p.sentinel() || key_type(key, p) != 1 {
            continue;
        }
        let bucket = key_bucket(key, p);
        let r = [0, bucket_span(ranges, 1, bucket, p).1 as u32];
        let ea = ids[i];
        let ia = edges[ea as usize];
        let (lo_a, hi_a) = ebox(ia);
        for &eb in &ids[i + 1..r[1] as usize] {
            let ib = edges[eb as usize];
            let (lo_b, hi_b) = ebox(ib);
            let m: [f32; 3] = std::array::from_fn(|k| lo_a[k].max(lo_b[k]));
            if (0..3).any(|k| m[k] > hi_a[k].min(hi_b[k])) {
                continue;
            }
            if cell_bucket(cell_of(m, p.inv_h), p.table_bits) != bucket {
                continue;
            }
            if ia.iter().any(|v| ib.contains(v))
                || !filter.allows(body[ia[0] as usize], body[ib[0] as usize])
            {
                continue;
            }
            out.push([ea.min(eb), ea.max(eb)]);
        }
    }
    out
}

/// Unpacks a cell-local quantized corner of [`pack_local`] (units relative to the entry's cell).
pub fn unpack_local(w: u32) -> [i32; 3] {
    std::array::from_fn(|k| ((w >> (10 * k)) & 1023) as i32 - 512)
}

/// Reference of `query_ee.comp` with `ONE_FRAME = 1` (every bucket holds one cell, see
/// [`buckets_are_cells`]): edge–edge candidates as entry pairs `(a, b)`, `a < b`, from the packed
/// records alone: quantized boxes overlapping with their minimum corner in the entries' cell,
/// no shared vertex, body filter.
pub fn query_edge_edge_one_frame(
    body: &[u32],
    records: &[Option<[u32; 4]>],
    ranges: &[[u32; 2]],
    sorted_keys: &[u32],
    p: &HashParams,
) -> Vec<[u32; 2]> {
    let mut out = Vec::new();
    let filter = BodyFilter::from_flags(p.flags);
    let units = LOCAL_UNITS;
    for (i, (&key, ra)) in sorted_keys.iter().zip(records).enumerate() {
        let Some(ra) = ra.filter(|_| key < p.sentinel() && key_type(key, p) == 1) else {
            continue;
        };
        let end = bucket_span(ranges, 1, key_bucket(key, p), p).1;
        let (la, ha) = (unpack_local(ra[0]), unpack_local(ra[1]));
        for (j, rb) in records.iter().enumerate().take(end).skip(i + 1) {
            let Some(rb) = rb else { continue };
            let (lb, hb) = (unpack_local(rb[0]), unpack_local(rb[1]));
            let owned = (0..3).all(|k| {
                let m = la[k].max(lb[k]);
                m <= ha[k].min(hb[k]) && (0..units).contains(&m)
            });
            let shared = [ra[2], ra[3]].iter().any(|v| rb[2] == *v || rb[3] == *v);
            if owned && !shared && filter.allows(body[ra[2] as usize], body[rb[2] as usize]) {
                out.push([i as u32, j as u32]);
            }
        }
    }
    out
}

/// Reference of `query_args.comp`: `{one-frame grid, several-cells grid, first edge entry, edge
/// entries}`, the grid `{min(g, 65535), ceil(g / 65535), 1}` with `g = ceil(n / wg)` over the
/// `n` edge entries (from the inclusive per-key `key_ends`) going to the variant that applies
/// and `{0, 1, 1}` to the other.
pub fn query_args(domain: &[u32; 6], key_ends: &[u32], p: &HashParams, wg: u32) -> [u32; 8] {
    let first = key_ends[p.num_keys() / 2 - 1];
    let n = key_ends[p.num_keys() - 1] - first;
    let g = n.div_ceil(wg);
    let gx = g.min(65_535);
    let grid = [gx, if g == 0 { 1 } else { g.div_ceil(gx) }, 1];
    let none = [0, 1, 1];
    let (a, b) = if buckets_are_cells(domain, p) {
        (grid, none)
    } else {
        (none, grid)
    };
    [a[0], a[1], a[2], b[0], b[1], b[2], first, n]
}

/// Reference of `narrow.comp`: the candidates (vertex–triangle when `mode` is 0, edge–edge
/// otherwise) whose exact f32 distance is below D, in candidate order.
pub fn narrow(
    x: &[[f32; 4]],
    triangles: &[[u32; 3]],
    edges: &[[u32; 2]],
    candidates: &[[u32; 2]],
    mode: u32,
    p: &HashParams,
) -> Vec<Pair> {
    let d2 = p.d * p.d;
    let pt = |i: u32| v32(xyz(x[i as usize]));
    candidates
        .iter()
        .filter_map(|&[a, b]| {
            let (sq, kind) = if mode == 0 {
                let f = triangles[b as usize];
                let c = point_triangle(&pt(a), &pt(f[0]), &pt(f[1]), &pt(f[2]));
                (c.sq_dist, c.kind as u32)
            } else {
                let (ea, eb) = (edges[a as usize], edges[b as usize]);
                let c = edge_edge(&pt(ea[0]), &pt(ea[1]), &pt(eb[0]), &pt(eb[1]));
                (c.sq_dist, c.kind as u32)
            };
            (sq < d2).then_some(Pair {
                a,
                b,
                kind,
                sq_dist: sq,
            })
        })
        .collect()
}

/// Reference of `candidate_args.comp`: 2D grids `{min(g, 65535), ceil(g / 65535), 1}` with
/// `g = max(ceil(n / per_group), 1)` for the clamped vertex–triangle and edge–edge counts.
pub fn grid_args(cvt: u32, cee: u32, p: &HashParams, per_group: u32) -> [u32; 6] {
    let mut out = [0u32; 6];
    for (k, n) in [cvt.min(p.cvt_cap), cee.min(p.cee_cap)]
        .into_iter()
        .enumerate()
    {
        let g = n.div_ceil(per_group).max(1);
        let gx = g.min(65_535);
        out[3 * k..3 * k + 3].copy_from_slice(&[gx, g.div_ceil(gx), 1]);
    }
    out
}

/// Reference of `finish.comp`: indirect arguments for `per_group` pairs per workgroup.
pub fn indirect_args(vt: u32, ee: u32, p: &HashParams, per_group: u32) -> [u32; 6] {
    [
        vt.min(p.vt_cap).div_ceil(per_group),
        1,
        1,
        ee.min(p.ee_cap).div_ceil(per_group),
        1,
        1,
    ]
}

/// Reference of `displacement.comp`: `|x1[i] - x0[i]|` (m, f32).
pub fn displacements(x0: &[[f32; 4]], x1: &[[f32; 4]]) -> Vec<f32> {
    x0.iter()
        .zip(x1)
        .map(|(a, b)| {
            let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
            (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
        })
        .collect()
}
