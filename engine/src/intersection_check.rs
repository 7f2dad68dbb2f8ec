//! Independent intersection checker for triangle surfaces, in `f64` on the CPU.
//!
//! Tests use it to verify the engine's claim that no two non-adjacent surface primitives ever
//! intersect, neither in a frame nor while the vertices move along straight lines from one frame
//! to the next. It shares no code with the GPU path or with [`crate::cpu_reference`]: its
//! predicates, distances and broad phase are written here from scratch.
//!
//! - [`frame_intersections`]: every pair of triangles sharing no vertex that intersect
//!   (touching counts) in one configuration. Exact: built on Shewchuk's adaptive-precision
//!   `orient3d`/`orient2d` (the `robust` crate), with every degenerate case (coplanar,
//!   collinear, zero-area triangles) decided by exact predicates.
//! - [`trajectory_check`]: every vertex–triangle and edge–edge pair sharing no vertex, with
//!   vertices moving linearly over `t` in `[0, 1]`, is certified to stay farther apart than a
//!   tiny `eta`, or reported as colliding (a sampled time with distance `<= eta`), or as
//!   uncertain (neither after [`MAX_BISECTIONS`] bisections or [`MAX_SAMPLES_PER_PAIR`]
//!   distance evaluations). Certification is rigorous up to `f64` rounding of the distance
//!   evaluation, for which a slack of a few ulps of the coordinates' magnitude is subtracted.
//! - [`min_distance`]: smallest distance over non-adjacent vertex–triangle and edge–edge pairs.
//!
//! Pairs of primitives that share a vertex (topologically adjacent) are never checked. Only
//! vertices used by at least one triangle take part. All lengths are in metres.

use robust::{orient2d, orient3d, Coord, Coord3D};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A point or vector in metres.
type V3 = [f64; 3];

/// Bisections of `[0, 1]` after which an undecided pair is reported as uncertain.
pub const MAX_BISECTIONS: u32 = 60;

/// Distance evaluations after which an undecided pair is reported as uncertain.
pub const MAX_SAMPLES_PER_PAIR: usize = 1 << 16;

// ----------------------------------------------------------------------------------------------
// Topology.

/// Triangle surface topology: triangles, their unique edges and the vertices they use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Surface {
    num_vertices: usize,
    triangles: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    vertices: Vec<u32>,
}

impl Surface {
    /// Builds the topology; fails on an index `>= num_vertices` or a repeated vertex.
    pub fn new(num_vertices: usize, triangles: &[[u32; 3]]) -> Result<Self, String> {
        let mut edges = Vec::with_capacity(triangles.len() * 3);
        let mut used = vec![false; num_vertices];
        for (i, t) in triangles.iter().enumerate() {
            if let Some(v) = t.iter().find(|&&v| v as usize >= num_vertices) {
                return Err(format!(
                    "triangle {i} references vertex {v} but there are {num_vertices} vertices"
                ));
            }
            if t[0] == t[1] || t[1] == t[2] || t[0] == t[2] {
                return Err(format!("triangle {i} repeats a vertex: {t:?}"));
            }
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                edges.push([a.min(b), a.max(b)]);
                used[t[k] as usize] = true;
            }
        }
        edges.sort_unstable();
        edges.dedup();
        let vertices = (0..num_vertices as u32)
            .filter(|&v| used[v as usize])
            .collect();
        Ok(Surface {
            num_vertices,
            triangles: triangles.to_vec(),
            edges,
            vertices,
        })
    }

    /// Number of vertices the position arrays must have.
    pub fn num_vertices(&self) -> usize {
        self.num_vertices
    }

    /// The triangles, as given.
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The unique edges as sorted vertex pairs, in ascending order (edge indices index this).
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// The vertices used by at least one triangle, ascending.
    pub fn surface_vertices(&self) -> &[u32] {
        &self.vertices
    }

    fn check_positions(&self, x: &[[f64; 3]], what: &str) {
        assert_eq!(
            x.len(),
            self.num_vertices,
            "{what}: {} positions for a surface of {} vertices",
            x.len(),
            self.num_vertices
        );
        for &v in &self.vertices {
            let p = x[v as usize];
            assert!(
                p.iter().all(|c| c.is_finite()),
                "{what}: vertex {v} is not finite: {p:?}"
            );
        }
    }
}

// ----------------------------------------------------------------------------------------------
// Small vector helpers.

#[inline]
fn sub(a: &V3, b: &V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
fn add_scaled(a: &V3, s: f64, d: &V3) -> V3 {
    [a[0] + s * d[0], a[1] + s * d[1], a[2] + s * d[2]]
}

#[inline]
fn dot(a: &V3, b: &V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
fn cross(a: &V3, b: &V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline]
fn dist2(a: &V3, b: &V3) -> f64 {
    let d = sub(a, b);
    dot(&d, &d)
}

#[inline]
fn lerp(a: &V3, b: &V3, t: f64) -> V3 {
    // Exact at t = 0 and t = 1.
    let s = 1.0 - t;
    [
        s * a[0] + t * b[0],
        s * a[1] + t * b[1],
        s * a[2] + t * b[2],
    ]
}

// ----------------------------------------------------------------------------------------------
// Exact predicates.

#[inline]
fn o3(a: &V3, b: &V3, c: &V3, d: &V3) -> i32 {
    let c3 = |p: &V3| Coord3D {
        x: p[0],
        y: p[1],
        z: p[2],
    };
    sign(orient3d(c3(a), c3(b), c3(c), c3(d)))
}

#[inline]
fn sign(x: f64) -> i32 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// A 2D point: the projection of a 3D point dropping one coordinate (exact).
type P2 = [f64; 2];

#[inline]
fn proj(p: &V3, drop: usize) -> P2 {
    [p[(drop + 1) % 3], p[(drop + 2) % 3]]
}

#[inline]
fn o2(a: &P2, b: &P2, c: &P2) -> i32 {
    let c2 = |p: &P2| Coord { x: p[0], y: p[1] };
    sign(orient2d(c2(a), c2(b), c2(c)))
}

/// `p` lies within the bounding box of `a`, `b` (the three are known to be collinear).
#[inline]
fn in_box_2d(a: &P2, b: &P2, p: &P2) -> bool {
    (0..2).all(|k| a[k].min(b[k]) <= p[k] && p[k] <= a[k].max(b[k]))
}

/// Closed segments `pq` and `ab` in the plane share a point (exact; degenerate segments allowed).
fn segments_meet_2d(p: &P2, q: &P2, a: &P2, b: &P2) -> bool {
    let d1 = o2(a, b, p);
    let d2 = o2(a, b, q);
    let d3 = o2(p, q, a);
    let d4 = o2(p, q, b);
    if d1 * d2 < 0 && d3 * d4 < 0 {
        return true;
    }
    (d1 == 0 && in_box_2d(a, b, p))
        || (d2 == 0 && in_box_2d(a, b, q))
        || (d3 == 0 && in_box_2d(p, q, a))
        || (d4 == 0 && in_box_2d(p, q, b))
}

/// `p` lies in the closed non-degenerate triangle `abc` (either orientation; exact).
fn point_in_triangle_2d(p: &P2, a: &P2, b: &P2, c: &P2) -> bool {
    let s = [o2(a, b, p), o2(b, c, p), o2(c, a, p)];
    !(s.contains(&1) && s.contains(&-1))
}

/// A coordinate to drop so that the projection of the non-collinear `tri` stays non-degenerate
/// (`None` when the three points are collinear, exactly).
fn projection_axis(a: &V3, b: &V3, c: &V3) -> Option<usize> {
    (0..3).find(|&k| o2(&proj(a, k), &proj(b, k), &proj(c, k)) != 0)
}

/// Closed segments `pq` and `ab` in space share a point (exact; degenerate segments allowed).
fn segments_meet_3d(p: &V3, q: &V3, a: &V3, b: &V3) -> bool {
    if o3(p, q, a, b) != 0 {
        return false;
    }
    // Coplanar: a projection in which some triple is not collinear maps the common plane
    // one-to-one onto the projection plane.
    for k in 0..3 {
        let (p2, q2, a2, b2) = (proj(p, k), proj(q, k), proj(a, k), proj(b, k));
        if o2(&p2, &q2, &a2) != 0
            || o2(&p2, &q2, &b2) != 0
            || o2(&p2, &a2, &b2) != 0
            || o2(&q2, &a2, &b2) != 0
        {
            return segments_meet_2d(&p2, &q2, &a2, &b2);
        }
    }
    // All four points on one line: compare intervals along a coordinate in which they differ.
    let pts = [p, q, a, b];
    let spread = |k: usize| {
        let lo = pts.iter().map(|v| v[k]).fold(f64::INFINITY, f64::min);
        let hi = pts.iter().map(|v| v[k]).fold(f64::NEG_INFINITY, f64::max);
        hi - lo
    };
    let Some(k) = (0..3).find(|&k| spread(k) > 0.0) else {
        return true; // all four coincide
    };
    p[k].min(q[k]) <= a[k].max(b[k]) && a[k].min(b[k]) <= p[k].max(q[k])
}

/// Whether the closed segment `pq` and the closed triangle `abc` share a point. Exact
/// (adaptive-precision `orient3d`/`orient2d`), including touching, coplanar, collinear and
/// zero-area (degenerate) triangles and segments.
pub fn segment_intersects_triangle(p: &V3, q: &V3, a: &V3, b: &V3, c: &V3) -> bool {
    for k in 0..3 {
        let tlo = a[k].min(b[k]).min(c[k]);
        let thi = a[k].max(b[k]).max(c[k]);
        if p[k].max(q[k]) < tlo || p[k].min(q[k]) > thi {
            return false;
        }
    }
    let sp = o3(a, b, c, p);
    let sq = o3(a, b, c, q);
    if sp * sq > 0 {
        return false;
    }
    if sp != 0 || sq != 0 {
        // The segment meets the triangle's plane in exactly one point (so the triangle is not
        // degenerate and p != q): it lies in the triangle iff the line pq passes through it.
        let s = [o3(p, q, a, b), o3(p, q, b, c), o3(p, q, c, a)];
        return !(s.contains(&1) && s.contains(&-1));
    }
    match projection_axis(a, b, c) {
        Some(k) => {
            // Everything lies in the triangle's plane, which projects one-to-one.
            let (p2, q2) = (proj(p, k), proj(q, k));
            let (a2, b2, c2) = (proj(a, k), proj(b, k), proj(c, k));
            point_in_triangle_2d(&p2, &a2, &b2, &c2)
                || point_in_triangle_2d(&q2, &a2, &b2, &c2)
                || segments_meet_2d(&p2, &q2, &a2, &b2)
                || segments_meet_2d(&p2, &q2, &b2, &c2)
                || segments_meet_2d(&p2, &q2, &c2, &a2)
        }
        // A degenerate triangle is the union of its three edges.
        None => {
            segments_meet_3d(p, q, a, b) || segments_meet_3d(p, q, b, c) || segments_meet_3d(p, q, c, a)
        }
    }
}

/// Whether two closed triangles share a point (exact, touching counts): some edge of one meets
/// the other.
pub fn triangles_intersect(t: &[V3; 3], u: &[V3; 3]) -> bool {
    for k in 0..3 {
        let tlo = t[0][k].min(t[1][k]).min(t[2][k]);
        let thi = t[0][k].max(t[1][k]).max(t[2][k]);
        let ulo = u[0][k].min(u[1][k]).min(u[2][k]);
        let uhi = u[0][k].max(u[1][k]).max(u[2][k]);
        if thi < ulo || uhi < tlo {
            return false;
        }
    }
    (0..3).any(|i| segment_intersects_triangle(&t[i], &t[(i + 1) % 3], &u[0], &u[1], &u[2]))
        || (0..3).any(|i| segment_intersects_triangle(&u[i], &u[(i + 1) % 3], &t[0], &t[1], &t[2]))
}

// ----------------------------------------------------------------------------------------------
// Distances (f64). Every returned distance is that between two actual points of the primitives
// (up to rounding), never an extrapolation, so it never undershoots by more than rounding.

/// The point of segment `ab` closest to `p` (a degenerate segment gives `a`).
fn closest_on_segment(p: &V3, a: &V3, b: &V3) -> V3 {
    let ab = sub(b, a);
    let l2 = dot(&ab, &ab);
    if !(l2 > 0.0) {
        return *a;
    }
    let t = (dot(&sub(p, a), &ab) / l2).clamp(0.0, 1.0);
    if t >= 1.0 {
        *b
    } else {
        add_scaled(a, t, &ab)
    }
}

/// Distance from `p` to the closed triangle `abc` and the triangle's closest point, in metres.
/// Robust for degenerate (zero-area) triangles.
pub fn point_triangle_distance(p: &V3, a: &V3, b: &V3, c: &V3) -> (f64, V3) {
    let mut best = (f64::INFINITY, *a);
    for (u, v) in [(a, b), (b, c), (c, a)] {
        let q = closest_on_segment(p, u, v);
        let d = dist2(p, &q);
        if d < best.0 {
            best = (d, q);
        }
    }
    let e1 = sub(b, a);
    let e2 = sub(c, a);
    let n = cross(&e1, &e2);
    let nn = dot(&n, &n);
    if nn > 0.0 && nn.is_finite() {
        let ap = sub(p, a);
        let wb = dot(&n, &cross(&ap, &e2)) / nn;
        let wc = dot(&n, &cross(&e1, &ap)) / nn;
        if wb >= 0.0 && wc >= 0.0 && wb + wc <= 1.0 {
            let q = add_scaled(&add_scaled(a, wb, &e1), wc, &e2);
            let d = dist2(p, &q);
            if d < best.0 {
                best = (d, q);
            }
        }
    }
    (best.0.sqrt(), best.1)
}

/// Distance between closed segments `pq` and `ab` and the closest points on each, in metres.
/// Robust for parallel and degenerate segments.
pub fn segment_segment_distance(p: &V3, q: &V3, a: &V3, b: &V3) -> (f64, V3, V3) {
    let mut best = (f64::INFINITY, *p, *a);
    let mut consider = |x: V3, y: V3| {
        let d = dist2(&x, &y);
        if d < best.0 {
            best = (d, x, y);
        }
    };
    consider(*p, closest_on_segment(p, a, b));
    consider(*q, closest_on_segment(q, a, b));
    consider(closest_on_segment(a, p, q), *a);
    consider(closest_on_segment(b, p, q), *b);
    // Interior closest points: p + s d1 - (a + t d2) is parallel to n = d1 x d2. The cross-
    // product form stays accurate for nearly parallel segments.
    let d1 = sub(q, p);
    let d2 = sub(b, a);
    let n = cross(&d1, &d2);
    let nn = dot(&n, &n);
    if nn > 0.0 && nn.is_finite() {
        let r = sub(a, p);
        let s = dot(&cross(&r, &d2), &n) / nn;
        let t = dot(&cross(&r, &d1), &n) / nn;
        if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t) {
            consider(add_scaled(p, s, &d1), add_scaled(a, t, &d2));
        }
    }
    (best.0.sqrt(), best.1, best.2)
}

// ----------------------------------------------------------------------------------------------
// Broad phase: a uniform hash grid over axis-aligned boxes.

#[derive(Debug, Clone, Copy)]
struct Aabb {
    lo: V3,
    hi: V3,
}

impl Aabb {
    fn of(points: &[V3], inflate: f64) -> Aabb {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in points {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        for k in 0..3 {
            lo[k] -= inflate;
            hi[k] += inflate;
        }
        Aabb { lo, hi }
    }

    #[inline]
    fn overlaps(&self, o: &Aabb) -> bool {
        (0..3).all(|k| self.lo[k] <= o.hi[k] && o.lo[k] <= self.hi[k])
    }

    fn extent(&self) -> f64 {
        (0..3).map(|k| self.hi[k] - self.lo[k]).fold(0.0, f64::max)
    }
}

/// Boxes spanning more cells than this are tested against every box instead of gridded.
const LARGE_BOX_CELLS: f64 = 512.0;

struct Grid {
    origin: V3,
    inv_h: f64,
    cells: HashMap<[i64; 3], Vec<u32>>,
}

impl Grid {
    fn new(all: &[&[Aabb]]) -> Grid {
        let mut origin = [f64::INFINITY; 3];
        let mut top = [f64::NEG_INFINITY; 3];
        let mut extents = Vec::new();
        for b in all.iter().flat_map(|s| s.iter()) {
            for k in 0..3 {
                origin[k] = origin[k].min(b.lo[k]);
                top[k] = top[k].max(b.hi[k]);
            }
            let e = b.extent();
            if e > 0.0 {
                extents.push(e);
            }
        }
        let n: usize = all.iter().map(|s| s.len()).sum();
        if n == 0 {
            origin = [0.0; 3];
        }
        let diam = (0..3).map(|k| top[k] - origin[k]).fold(0.0, f64::max);
        let h = if !extents.is_empty() {
            let mid = extents.len() / 2;
            *extents.select_nth_unstable_by(mid, f64::total_cmp).1
        } else if diam > 0.0 {
            diam / (n as f64).cbrt()
        } else {
            1.0
        };
        // Keep the cell count per axis bounded even for a tiny median.
        let h = h.max(diam * 1e-6).max(f64::MIN_POSITIVE);
        Grid {
            origin,
            inv_h: 1.0 / h,
            cells: HashMap::new(),
        }
    }

    #[inline]
    fn cell(&self, p: &V3) -> [i64; 3] {
        let c = |k: usize| {
            ((p[k] - self.origin[k]) * self.inv_h)
                .floor()
                .clamp(-1e12, 1e12) as i64
        };
        [c(0), c(1), c(2)]
    }

    fn range(&self, b: &Aabb) -> ([i64; 3], [i64; 3], f64) {
        let lo = self.cell(&b.lo);
        let hi = self.cell(&b.hi);
        let count = (0..3).map(|k| (hi[k] - lo[k] + 1) as f64).product();
        (lo, hi, count)
    }

    fn insert(&mut self, i: u32, lo: [i64; 3], hi: [i64; 3]) {
        for x in lo[0]..=hi[0] {
            for y in lo[1]..=hi[1] {
                for z in lo[2]..=hi[2] {
                    self.cells.entry([x, y, z]).or_default().push(i);
                }
            }
        }
    }
}

/// Runs `f` on chunks of `items` on all cores; results in chunk order (deterministic).
fn par_chunks<T: Sync, R: Send>(items: &[T], chunk: usize, f: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    let chunks: Vec<&[T]> = items.chunks(chunk.max(1)).collect();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(chunks.len());
    if threads <= 1 {
        return chunks.into_iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut out: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= chunks.len() {
                            break;
                        }
                        mine.push((i, f(chunks[i])));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("intersection_check worker panicked"))
            .collect()
    });
    out.sort_unstable_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// Every pair `(i, j)` of overlapping boxes `a[i]`, `b[j]` (closed boxes) for which `keep(i, j)`
/// holds, sorted. With `same`, `a` and `b` are the same list and only `i < j` is reported.
fn overlapping_pairs(
    a: &[Aabb],
    b: &[Aabb],
    same: bool,
    keep: impl Fn(u32, u32) -> bool + Sync,
) -> Vec<(u32, u32)> {
    let mut grid = if same { Grid::new(&[a]) } else { Grid::new(&[a, b]) };
    let mut b_large = vec![false; b.len()];
    let mut large_list = Vec::new();
    for (j, bx) in b.iter().enumerate() {
        let (lo, hi, count) = grid.range(bx);
        if count > LARGE_BOX_CELLS {
            b_large[j] = true;
            large_list.push(j as u32);
        } else {
            grid.insert(j as u32, lo, hi);
        }
    }
    let grid = &grid;
    let (b_large, large_list) = (&b_large, &large_list);
    let idx: Vec<u32> = (0..a.len() as u32).collect();
    let parts = par_chunks(&idx, 1024, |chunk| {
        let mut out = Vec::new();
        for &i in chunk {
            let bi = &a[i as usize];
            let (lo, hi, count) = grid.range(bi);
            let i_large = if same {
                b_large[i as usize]
            } else {
                count > LARGE_BOX_CELLS
            };
            if i_large {
                for (j, bj) in b.iter().enumerate() {
                    let j = j as u32;
                    if same && (j == i || (b_large[j as usize] && j < i)) {
                        continue;
                    }
                    if bi.overlaps(bj) {
                        let (x, y) = if same { (i.min(j), i.max(j)) } else { (i, j) };
                        if keep(x, y) {
                            out.push((x, y));
                        }
                    }
                }
                continue;
            }
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    for z in lo[2]..=hi[2] {
                        let Some(list) = grid.cells.get(&[x, y, z]) else {
                            continue;
                        };
                        for &j in list {
                            if same && j <= i {
                                continue;
                            }
                            let bj = &b[j as usize];
                            if !bi.overlaps(bj) {
                                continue;
                            }
                            // Report the pair only in the cell holding the low corner of the
                            // boxes' intersection, which both boxes cover.
                            let m = [
                                bi.lo[0].max(bj.lo[0]),
                                bi.lo[1].max(bj.lo[1]),
                                bi.lo[2].max(bj.lo[2]),
                            ];
                            if grid.cell(&m) == [x, y, z] && keep(i, j) {
                                out.push((i, j));
                            }
                        }
                    }
                }
            }
            if !same {
                for &j in large_list {
                    if bi.overlaps(&b[j as usize]) && keep(i, j) {
                        out.push((i, j));
                    }
                }
            }
        }
        out
    });
    let mut pairs: Vec<(u32, u32)> = parts.into_iter().flatten().collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

// ----------------------------------------------------------------------------------------------
// Static intersections.

/// Two triangles (indices into [`Surface::triangles`], `first < second`) that intersect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TriangleTrianglePair {
    /// The lower triangle index.
    pub first: u32,
    /// The higher triangle index.
    pub second: u32,
}

fn share_vertex(a: &[u32], b: &[u32]) -> bool {
    a.iter().any(|v| b.contains(v))
}

/// Every pair of triangles that share no vertex and intersect (touching counts) with vertex
/// positions `x` (metres), sorted. Exact.
///
/// # Panics
/// When `x` does not have [`Surface::num_vertices`] entries or a surface vertex is not finite.
pub fn frame_intersections(surface: &Surface, x: &[[f64; 3]]) -> Vec<TriangleTrianglePair> {
    surface.check_positions(x, "frame_intersections");
    let tris = &surface.triangles;
    let corners = |t: &[u32; 3]| t.map(|v| x[v as usize]);
    let boxes: Vec<Aabb> = tris.iter().map(|t| Aabb::of(&corners(t), 0.0)).collect();
    let candidates = overlapping_pairs(&boxes, &boxes, true, |i, j| {
        !share_vertex(&tris[i as usize], &tris[j as usize])
    });
    let parts = par_chunks(&candidates, 4096, |chunk| {
        chunk
            .iter()
            .filter(|&&(i, j)| {
                triangles_intersect(&corners(&tris[i as usize]), &corners(&tris[j as usize]))
            })
            .map(|&(i, j)| TriangleTrianglePair {
                first: i,
                second: j,
            })
            .collect::<Vec<_>>()
    });
    parts.into_iter().flatten().collect()
}

// ----------------------------------------------------------------------------------------------
// Continuous (trajectory) check.

/// The kind of a primitive pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PairKind {
    /// A vertex and a triangle: `primitives` = [vertex index, triangle index].
    VertexTriangle,
    /// Two edges: `primitives` = [edge index, edge index] into [`Surface::edges`].
    EdgeEdge,
}

impl PairKind {
    /// A short name: `vertex-triangle` or `edge-edge`.
    pub fn name(self) -> &'static str {
        match self {
            PairKind::VertexTriangle => "vertex-triangle",
            PairKind::EdgeEdge => "edge-edge",
        }
    }
}

/// A pair whose distance reached `eta` or less during the motion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Collision {
    /// Vertex–triangle or edge–edge.
    pub kind: PairKind,
    /// Vertex and triangle indices, or the two edge indices (lower first).
    pub primitives: [u32; 2],
    /// The four vertices: `[v, t0, t1, t2]` or `[a0, a1, b0, b1]`.
    pub vertices: [u32; 4],
    /// A time in `[0, 1]` (fraction of the step) at which the distance is `<= eta`; the
    /// earliest such sample found (not necessarily the first contact).
    pub time: f64,
    /// The distance at `time`, in metres.
    pub distance: f64,
}

/// A pair that could be neither certified separated nor shown to collide.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UncertainPair {
    /// Vertex–triangle or edge–edge.
    pub kind: PairKind,
    /// Vertex and triangle indices, or the two edge indices (lower first).
    pub primitives: [u32; 2],
    /// The four vertices: `[v, t0, t1, t2]` or `[a0, a1, b0, b1]`.
    pub vertices: [u32; 4],
    /// The first undecided time interval `[ta, tb]`.
    pub interval: [f64; 2],
    /// The smallest distance sampled for this pair, in metres.
    pub min_sampled_distance: f64,
}

/// Outcome of [`trajectory_check`].
#[derive(Debug, Clone, PartialEq)]
pub struct TrajectoryReport {
    /// The touching distance used, in metres.
    pub eta: f64,
    /// Vertex–triangle plus edge–edge pairs that passed the swept-box broad phase.
    pub pairs_checked: usize,
    /// Of those, vertex–triangle pairs.
    pub vertex_triangle_pairs: usize,
    /// Of those, edge–edge pairs.
    pub edge_edge_pairs: usize,
    /// Distance evaluations done in total.
    pub samples: usize,
    /// Colliding pairs, sorted by kind and primitives.
    pub collisions: Vec<Collision>,
    /// Undecided pairs (count as failures), sorted by kind and primitives.
    pub uncertain: Vec<UncertainPair>,
    /// The smallest distance sampled over all checked pairs and times, in metres (an upper
    /// bound of the true minimum over the motion; `f64::INFINITY` when no pair was checked).
    /// Pairs dropped by the broad phase are farther apart than `eta` throughout.
    pub min_distance: f64,
}

impl TrajectoryReport {
    /// No collision and no uncertain pair.
    pub fn is_clean(&self) -> bool {
        self.collisions.is_empty() && self.uncertain.is_empty()
    }
}

/// One candidate pair: its four vertices, the first `split` belonging to the first primitive.
#[derive(Clone, Copy)]
struct PairSpec {
    kind: PairKind,
    primitives: [u32; 2],
    vertices: [u32; 4],
}

impl PairSpec {
    fn split(&self) -> usize {
        match self.kind {
            PairKind::VertexTriangle => 1,
            PairKind::EdgeEdge => 2,
        }
    }
}

#[derive(Clone, Copy)]
struct Sample {
    t: f64,
    d: f64,
    /// Unit direction from the second primitive's closest point to the first's (zero if d = 0).
    dir: V3,
    pos: [V3; 4],
}

enum Outcome {
    Separated,
    Collides { time: f64, distance: f64 },
    Uncertain { interval: [f64; 2] },
}

struct PairMotion<'a> {
    spec: &'a PairSpec,
    x0: [V3; 4],
    x1: [V3; 4],
}

impl PairMotion<'_> {
    fn sample(&self, t: f64) -> Sample {
        let pos = if t == 0.0 {
            self.x0
        } else if t == 1.0 {
            self.x1
        } else {
            std::array::from_fn(|k| lerp(&self.x0[k], &self.x1[k], t))
        };
        let (d, pa, pb) = match self.spec.kind {
            PairKind::VertexTriangle => {
                let (d, q) = point_triangle_distance(&pos[0], &pos[1], &pos[2], &pos[3]);
                (d, pos[0], q)
            }
            PairKind::EdgeEdge => segment_segment_distance(&pos[0], &pos[1], &pos[2], &pos[3]),
        };
        let diff = sub(&pa, &pb);
        let len = dot(&diff, &diff).sqrt();
        let dir = if len > 0.0 {
            [diff[0] / len, diff[1] / len, diff[2] / len]
        } else {
            [0.0; 3]
        };
        Sample { t, d, dir, pos }
    }

    /// Separation of the two primitives along `dir` (first minus second): a lower bound of
    /// their distance when positive.
    fn gap(&self, dir: &V3, pos: &[V3; 4]) -> f64 {
        let s = self.spec.split();
        let lo_first = pos[..s]
            .iter()
            .map(|p| dot(dir, p))
            .fold(f64::INFINITY, f64::min);
        let hi_second = pos[s..]
            .iter()
            .map(|p| dot(dir, p))
            .fold(f64::NEG_INFINITY, f64::max);
        lo_first - hi_second
    }
}

fn check_pair(spec: &PairSpec, x0: &[[f64; 3]], x1: &[[f64; 3]], eta: f64) -> (Outcome, f64, usize) {
    let m = PairMotion {
        spec,
        x0: spec.vertices.map(|v| x0[v as usize]),
        x1: spec.vertices.map(|v| x1[v as usize]),
    };
    let split = spec.split();
    // Lipschitz constant of the distance in t: the largest relative vertex speed.
    let vel: [V3; 4] = std::array::from_fn(|k| sub(&m.x1[k], &m.x0[k]));
    let mut lip: f64 = 0.0;
    for i in 0..split {
        for j in split..4 {
            lip = lip.max(dist2(&vel[i], &vel[j]));
        }
    }
    let lip = lip.sqrt() * (1.0 + 4.0 * f64::EPSILON);
    // Rounding slack of distance and gap evaluations.
    let scale = m
        .x0
        .iter()
        .chain(m.x1.iter())
        .flat_map(|p| p.iter())
        .fold(0.0f64, |s, c| s.max(c.abs()));
    let threshold = eta + 64.0 * f64::EPSILON * scale;

    let s0 = m.sample(0.0);
    let mut evals = 1;
    let mut min_d = s0.d;
    if s0.d <= eta {
        return (
            Outcome::Collides {
                time: 0.0,
                distance: s0.d,
            },
            min_d,
            evals,
        );
    }
    let s1 = m.sample(1.0);
    evals += 1;
    min_d = min_d.min(s1.d);
    let certified = |a: &Sample, b: &Sample| {
        if 0.5 * (a.d + b.d - lip * (b.t - a.t)) > threshold {
            return true;
        }
        // The gap along a fixed direction is concave in t (min of linear minus max of linear),
        // so its minimum over [ta, tb] is at an end.
        [a.dir, b.dir].iter().any(|dir| {
            *dir != [0.0; 3] && m.gap(dir, &a.pos).min(m.gap(dir, &b.pos)) > threshold
        })
    };
    let mut uncertain: Option<[f64; 2]> = None;
    let mut stack = vec![(s0, s1, 0u32)];
    while let Some((a, b, depth)) = stack.pop() {
        if certified(&a, &b) {
            continue;
        }
        if depth >= MAX_BISECTIONS || evals >= MAX_SAMPLES_PER_PAIR {
            if b.d <= eta {
                // Only t = 1 can be such an end: inner samples <= eta return at once.
                return (
                    Outcome::Collides {
                        time: b.t,
                        distance: b.d,
                    },
                    min_d,
                    evals,
                );
            }
            uncertain.get_or_insert([a.t, b.t]);
            if evals >= MAX_SAMPLES_PER_PAIR {
                break;
            }
            continue;
        }
        let mid = m.sample(0.5 * (a.t + b.t));
        evals += 1;
        min_d = min_d.min(mid.d);
        if mid.d <= eta {
            return (
                Outcome::Collides {
                    time: mid.t,
                    distance: mid.d,
                },
                min_d,
                evals,
            );
        }
        stack.push((mid, b, depth + 1));
        stack.push((a, mid, depth + 1));
    }
    let outcome = match uncertain {
        Some(interval) => Outcome::Uncertain { interval },
        None => Outcome::Separated,
    };
    (outcome, min_d, evals)
}

/// Candidate vertex–triangle and edge–edge pairs whose boxes (inflated by `inflate`) overlap.
fn candidate_pairs(surface: &Surface, x0: &[[f64; 3]], x1: &[[f64; 3]], inflate: f64) -> Vec<PairSpec> {
    let pts = |ids: &[u32]| -> Vec<V3> {
        ids.iter()
            .flat_map(|&v| [x0[v as usize], x1[v as usize]])
            .collect()
    };
    let tris = &surface.triangles;
    let edges = &surface.edges;
    let verts = &surface.vertices;
    let vbox: Vec<Aabb> = verts.iter().map(|&v| Aabb::of(&pts(&[v]), inflate)).collect();
    let tbox: Vec<Aabb> = tris.iter().map(|t| Aabb::of(&pts(t), inflate)).collect();
    let ebox: Vec<Aabb> = edges.iter().map(|e| Aabb::of(&pts(e), inflate)).collect();
    let vt = overlapping_pairs(&vbox, &tbox, false, |i, j| {
        !tris[j as usize].contains(&verts[i as usize])
    });
    let ee = overlapping_pairs(&ebox, &ebox, true, |i, j| {
        !share_vertex(&edges[i as usize], &edges[j as usize])
    });
    let mut specs = Vec::with_capacity(vt.len() + ee.len());
    for (i, j) in vt {
        let v = verts[i as usize];
        let t = tris[j as usize];
        specs.push(PairSpec {
            kind: PairKind::VertexTriangle,
            primitives: [v, j],
            vertices: [v, t[0], t[1], t[2]],
        });
    }
    for (i, j) in ee {
        let (a, b) = (edges[i as usize], edges[j as usize]);
        specs.push(PairSpec {
            kind: PairKind::EdgeEdge,
            primitives: [i, j],
            vertices: [a[0], a[1], b[0], b[1]],
        });
    }
    specs
}

/// Checks that no vertex–triangle or edge–edge pair sharing no vertex comes within `eta`
/// metres while every vertex moves linearly from `x0` (t = 0) to `x1` (t = 1).
///
/// Each pair is certified by adaptive bisection of `[0, 1]`: on `[ta, tb]` the distance is at
/// least `(d(ta) + d(tb) - L (tb - ta)) / 2` with `L` the largest relative vertex speed of the
/// pair, and at least the pair's separation along the closest-point direction of either end
/// (concave in t, so bounded by its values at the ends). A sample with distance `<= eta` is a
/// collision. Use a small positive `eta` (e.g. `1e-9` m): exact contact is never sampled.
///
/// # Panics
/// When `eta` is negative or not finite, or a position array does not have
/// [`Surface::num_vertices`] finite entries (for the surface vertices).
pub fn trajectory_check(
    surface: &Surface,
    x0: &[[f64; 3]],
    x1: &[[f64; 3]],
    eta: f64,
) -> TrajectoryReport {
    assert!(eta.is_finite() && eta >= 0.0, "eta must be finite and >= 0, got {eta}");
    surface.check_positions(x0, "trajectory_check x0");
    surface.check_positions(x1, "trajectory_check x1");
    let specs = candidate_pairs(surface, x0, x1, eta);
    let parts = par_chunks(&specs, 512, |chunk| {
        let mut collisions = Vec::new();
        let mut uncertain = Vec::new();
        let mut min_d = f64::INFINITY;
        let mut samples = 0;
        for spec in chunk {
            let (outcome, d, n) = check_pair(spec, x0, x1, eta);
            min_d = min_d.min(d);
            samples += n;
            match outcome {
                Outcome::Separated => {}
                Outcome::Collides { time, distance } => collisions.push(Collision {
                    kind: spec.kind,
                    primitives: spec.primitives,
                    vertices: spec.vertices,
                    time,
                    distance,
                }),
                Outcome::Uncertain { interval } => uncertain.push(UncertainPair {
                    kind: spec.kind,
                    primitives: spec.primitives,
                    vertices: spec.vertices,
                    interval,
                    min_sampled_distance: d,
                }),
            }
        }
        (collisions, uncertain, min_d, samples)
    });
    let vt = specs
        .iter()
        .filter(|s| s.kind == PairKind::VertexTriangle)
        .count();
    let mut report = TrajectoryReport {
        eta,
        pairs_checked: specs.len(),
        vertex_triangle_pairs: vt,
        edge_edge_pairs: specs.len() - vt,
        samples: 0,
        collisions: Vec::new(),
        uncertain: Vec::new(),
        min_distance: f64::INFINITY,
    };
    for (c, u, d, n) in parts {
        report.collisions.extend(c);
        report.uncertain.extend(u);
        report.min_distance = report.min_distance.min(d);
        report.samples += n;
    }
    report.collisions.sort_by_key(|c| (c.kind, c.primitives));
    report.uncertain.sort_by_key(|c| (c.kind, c.primitives));
    report
}

/// The smallest distance, in metres, between a vertex and a triangle or two edges sharing no
/// vertex, with vertex positions `x` (`f64::INFINITY` when there is no such pair).
///
/// # Panics
/// When `x` does not have [`Surface::num_vertices`] entries or a surface vertex is not finite.
pub fn min_distance(surface: &Surface, x: &[[f64; 3]]) -> f64 {
    surface.check_positions(x, "min_distance");
    let edges = &surface.edges;
    if edges.is_empty() {
        return f64::INFINITY;
    }
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for &v in &surface.vertices {
        for k in 0..3 {
            lo[k] = lo[k].min(x[v as usize][k]);
            hi[k] = hi[k].max(x[v as usize][k]);
        }
    }
    let diam = (0..3).map(|k| hi[k] - lo[k]).fold(0.0, f64::max);
    let mean_edge = edges
        .iter()
        .map(|e| dist2(&x[e[0] as usize], &x[e[1] as usize]).sqrt())
        .sum::<f64>()
        / edges.len() as f64;
    // Grow the search radius r until a pair within r is found (pairs outside the inflated boxes
    // are farther than r apart) or every pair is a candidate.
    let mut r = if mean_edge > 0.0 { mean_edge } else { diam.max(1e-300) };
    loop {
        let all = r > 2.0 * diam;
        let specs = candidate_pairs(surface, x, x, 0.5 * r);
        let parts = par_chunks(&specs, 4096, |chunk| {
            chunk
                .iter()
                .map(|s| {
                    let p = s.vertices.map(|v| x[v as usize]);
                    match s.kind {
                        PairKind::VertexTriangle => {
                            point_triangle_distance(&p[0], &p[1], &p[2], &p[3]).0
                        }
                        PairKind::EdgeEdge => {
                            segment_segment_distance(&p[0], &p[1], &p[2], &p[3]).0
                        }
                    }
                })
                .fold(f64::INFINITY, f64::min)
        });
        let d = parts.into_iter().fold(f64::INFINITY, f64::min);
        if d <= r || all {
            return d;
        }
        r *= 4.0;
    }
}

// ----------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
}
