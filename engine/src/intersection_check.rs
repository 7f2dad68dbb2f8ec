//! Independent intersection checker for triangle surfaces and curves (rod centrelines), in
//! `f64` on the CPU.
//!
//! Tests use it to verify the engine's claim that no two non-adjacent surface primitives ever
//! intersect, neither in a frame nor while the vertices move along straight lines from one frame
//! to the next. It shares no code with the GPU path or with [`crate::cpu_reference`]: its
//! predicates, distances and broad phase are written here from scratch.
//!
//! - [`frame_intersections`]: every pair of triangles, curve segment and triangle, or two curve
//!   segments sharing no vertex that intersect (touching counts) in one configuration. Exact: built on Shewchuk's adaptive-precision
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
//! vertices used by at least one triangle or curve segment take part; curve segments
//! ([`Surface::with_curves`]) are edges of the vertex–triangle and edge–edge checks (their
//! vertices against triangles, their segments against every edge). All lengths are in metres.

use robust::{orient2d, orient3d, Coord, Coord3D};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A point or vector in metres.
type V3 = [f64; 3];

/// Bisections of `[0, 1]` after which an undecided pair is reported as uncertain.
pub const MAX_BISECTIONS: u32 = 60;

/// Distance evaluations after which an undecided pair is reported as uncertain.
pub const MAX_SAMPLES_PER_PAIR: usize = 1 << 16;

// ----------------------------------------------------------------------------------------------
// Topology.

/// Surface topology: triangles, curve segments, their unique edges and the vertices they use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Surface {
    num_vertices: usize,
    triangles: Vec<[u32; 3]>,
    curves: Vec<[u32; 2]>,
    edges: Vec<[u32; 2]>,
    vertices: Vec<u32>,
}

impl Surface {
    /// Builds the topology; fails on an index `>= num_vertices` or a repeated vertex.
    pub fn new(num_vertices: usize, triangles: &[[u32; 3]]) -> Result<Self, String> {
        Self::with_curves(num_vertices, triangles, &[])
    }

    /// Triangles plus curve segments `[a, b]` (rod centrelines, any order, duplicates merged):
    /// the edges are the unique union of the triangles' edges and the segments. Fails on an
    /// index `>= num_vertices` or a repeated vertex.
    pub fn with_curves(
        num_vertices: usize,
        triangles: &[[u32; 3]],
        curves: &[[u32; 2]],
    ) -> Result<Self, String> {
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
        let mut segments = Vec::with_capacity(curves.len());
        for (i, e) in curves.iter().enumerate() {
            if let Some(v) = e.iter().find(|&&v| v as usize >= num_vertices) {
                return Err(format!(
                    "curve segment {i} references vertex {v} but there are {num_vertices} vertices"
                ));
            }
            if e[0] == e[1] {
                return Err(format!("curve segment {i} repeats a vertex: {e:?}"));
            }
            segments.push([e[0].min(e[1]), e[0].max(e[1])]);
            used[e[0] as usize] = true;
            used[e[1] as usize] = true;
        }
        segments.sort_unstable();
        segments.dedup();
        edges.extend_from_slice(&segments);
        edges.sort_unstable();
        edges.dedup();
        let vertices = (0..num_vertices as u32)
            .filter(|&v| used[v as usize])
            .collect();
        Ok(Surface {
            num_vertices,
            triangles: triangles.to_vec(),
            curves: segments,
            edges,
            vertices,
        })
    }

    /// The curve segments as sorted vertex pairs, unique and ascending (segment indices of
    /// [`FramePairKind::SegmentTriangle`] and [`FramePairKind::SegmentSegment`] index this).
    pub fn curve_segments(&self) -> &[[u32; 2]] {
        &self.curves
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

    /// The vertices used by at least one triangle or curve segment, ascending.
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
            segments_meet_3d(p, q, a, b)
                || segments_meet_3d(p, q, b, c)
                || segments_meet_3d(p, q, c, a)
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
    if l2 == 0.0 || !l2.is_finite() {
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
    let mut grid = if same {
        Grid::new(&[a])
    } else {
        Grid::new(&[a, b])
    };
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

/// The kind of an intersecting pair of [`frame_intersections`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FramePairKind {
    /// Two triangles: indices into [`Surface::triangles`], `first < second`.
    TriangleTriangle,
    /// A curve segment (`first`, into [`Surface::curve_segments`]) and a triangle (`second`).
    SegmentTriangle,
    /// Two curve segments (into [`Surface::curve_segments`]), `first < second`.
    SegmentSegment,
}

impl FramePairKind {
    /// A short name: `triangle-triangle`, `segment-triangle` or `segment-segment`.
    pub fn name(self) -> &'static str {
        match self {
            FramePairKind::TriangleTriangle => "triangle-triangle",
            FramePairKind::SegmentTriangle => "segment-triangle",
            FramePairKind::SegmentSegment => "segment-segment",
        }
    }
}

/// Two primitives sharing no vertex that intersect in one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IntersectingPair {
    /// Which primitives `first` and `second` index.
    pub kind: FramePairKind,
    /// The first primitive's index.
    pub first: u32,
    /// The second primitive's index.
    pub second: u32,
}

fn share_vertex(a: &[u32], b: &[u32]) -> bool {
    a.iter().any(|v| b.contains(v))
}

/// Every pair of triangles, curve segment and triangle, or two curve segments that share no
/// vertex and intersect (touching counts) with vertex positions `x` (metres), sorted by kind
/// then indices. Exact.
///
/// # Panics
/// When `x` does not have [`Surface::num_vertices`] entries or a surface vertex is not finite.
pub fn frame_intersections(surface: &Surface, x: &[[f64; 3]]) -> Vec<IntersectingPair> {
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
            .map(|&(i, j)| IntersectingPair {
                kind: FramePairKind::TriangleTriangle,
                first: i,
                second: j,
            })
            .collect::<Vec<_>>()
    });
    let mut out: Vec<IntersectingPair> = parts.into_iter().flatten().collect();
    let segs = &surface.curves;
    if segs.is_empty() {
        return out;
    }
    let ends = |e: &[u32; 2]| e.map(|v| x[v as usize]);
    let sboxes: Vec<Aabb> = segs.iter().map(|e| Aabb::of(&ends(e), 0.0)).collect();
    let st = overlapping_pairs(&sboxes, &boxes, false, |i, j| {
        !share_vertex(&segs[i as usize], &tris[j as usize])
    });
    out.extend(st.into_iter().filter_map(|(i, j)| {
        let [p, q] = ends(&segs[i as usize]);
        let [a, b, c] = corners(&tris[j as usize]);
        segment_intersects_triangle(&p, &q, &a, &b, &c).then_some(IntersectingPair {
            kind: FramePairKind::SegmentTriangle,
            first: i,
            second: j,
        })
    }));
    let ss = overlapping_pairs(&sboxes, &sboxes, true, |i, j| {
        !share_vertex(&segs[i as usize], &segs[j as usize])
    });
    out.extend(ss.into_iter().filter_map(|(i, j)| {
        let [p, q] = ends(&segs[i as usize]);
        let [a, b] = ends(&segs[j as usize]);
        segments_meet_3d(&p, &q, &a, &b).then_some(IntersectingPair {
            kind: FramePairKind::SegmentSegment,
            first: i,
            second: j,
        })
    }));
    out
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
    /// A sampled time in `[0, 1]` (fraction of the step) at which the distance is `<= eta`
    /// (the first sample found, not necessarily the first contact).
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

fn check_pair(
    spec: &PairSpec,
    x0: &[[f64; 3]],
    x1: &[[f64; 3]],
    eta: f64,
) -> (Outcome, f64, usize) {
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
    let scale =
        m.x0.iter()
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
    if s1.d <= eta {
        return (
            Outcome::Collides {
                time: 1.0,
                distance: s1.d,
            },
            min_d,
            evals,
        );
    }
    // A lower bound of the distance over [a.t, b.t]: the Lipschitz bound from both ends, and
    // the gap along either end's closest-point direction, which is concave in t (min of linear
    // minus max of linear functions), so its minimum over the interval is at an end.
    let bound = |a: &Sample, b: &Sample| {
        let mut lb = 0.5 * (a.d + b.d - lip * (b.t - a.t));
        for dir in [&a.dir, &b.dir] {
            if *dir != [0.0; 3] {
                lb = lb.max(m.gap(dir, &a.pos).min(m.gap(dir, &b.pos)));
            }
        }
        lb
    };
    // Best first: the interval with the lowest bound is split next, so a collision is found
    // after few samples and certification work goes where the pair comes closest.
    type Queue = BinaryHeap<Reverse<(Key, Key, usize)>>;
    let mut heap = Queue::new();
    let mut intervals: Vec<(Sample, Sample, u32)> = Vec::new();
    let push = |heap: &mut Queue, intervals: &mut Vec<_>, a: Sample, b: Sample, depth: u32| {
        let lb = bound(&a, &b);
        if lb <= threshold {
            heap.push(Reverse((Key(lb), Key(a.t), intervals.len())));
            intervals.push((a, b, depth));
        }
    };
    push(&mut heap, &mut intervals, s0, s1, 0);
    let mut uncertain: Option<[f64; 2]> = None;
    while let Some(Reverse((_, _, k))) = heap.pop() {
        let (a, b, depth) = intervals[k];
        let tm = 0.5 * (a.t + b.t);
        if depth >= MAX_BISECTIONS || evals >= MAX_SAMPLES_PER_PAIR || !(a.t < tm && tm < b.t) {
            uncertain.get_or_insert([a.t, b.t]);
            if evals >= MAX_SAMPLES_PER_PAIR {
                break;
            }
            continue;
        }
        let mid = m.sample(tm);
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
        push(&mut heap, &mut intervals, a, mid, depth + 1);
        push(&mut heap, &mut intervals, mid, b, depth + 1);
    }
    let outcome = match uncertain {
        Some(interval) => Outcome::Uncertain { interval },
        None => Outcome::Separated,
    };
    (outcome, min_d, evals)
}

/// An `f64` ordered by `total_cmp`, for the interval queue.
#[derive(Clone, Copy, PartialEq)]
struct Key(f64);

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Key {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// Candidate vertex–triangle and edge–edge pairs whose boxes (inflated by `inflate`) overlap.
fn candidate_pairs(
    surface: &Surface,
    x0: &[[f64; 3]],
    x1: &[[f64; 3]],
    inflate: f64,
) -> Vec<PairSpec> {
    let pts = |ids: &[u32]| -> Vec<V3> {
        ids.iter()
            .flat_map(|&v| [x0[v as usize], x1[v as usize]])
            .collect()
    };
    let tris = &surface.triangles;
    let edges = &surface.edges;
    let verts = &surface.vertices;
    let vbox: Vec<Aabb> = verts
        .iter()
        .map(|&v| Aabb::of(&pts(&[v]), inflate))
        .collect();
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
/// (concave in t, so bounded by its values at the ends). Intervals are split best first (lowest
/// bound first), and a sample with distance `<= eta` is a collision. A pair whose minimum
/// distance lies within rounding (a few ulps of its coordinates) above `eta` cannot be decided
/// and ends as uncertain. Use a small positive `eta` (e.g. `1e-9` m): exact contact is never
/// sampled. Pairs whose swept boxes, inflated by `eta`, do not overlap are not sampled.
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
    assert!(
        eta.is_finite() && eta >= 0.0,
        "eta must be finite and >= 0, got {eta}"
    );
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
    let mut r = if mean_edge > 0.0 {
        mean_edge
    } else {
        diam.max(1e-300)
    };
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
    use super::*;

    /// xorshift64*: a tiny fixed-seed generator for reproducible random tests.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        /// Uniform in [0, 1).
        fn f(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn point(&mut self) -> V3 {
            [self.f(), self.f(), self.f()]
        }
    }

    fn surf(n: usize, tris: &[[u32; 3]]) -> Surface {
        Surface::new(n, tris).unwrap()
    }

    fn pairs(list: &[(u32, u32)]) -> Vec<IntersectingPair> {
        list.iter()
            .map(|&(first, second)| tt(first, second))
            .collect()
    }

    fn tt(first: u32, second: u32) -> IntersectingPair {
        IntersectingPair {
            kind: FramePairKind::TriangleTriangle,
            first,
            second,
        }
    }

    /// A regular grid of `n x n` cells in the plane z = `z`, offset by `o`, with `h` cell size.
    fn grid(n: usize, h: f64, o: V3) -> (Vec<V3>, Vec<[u32; 3]>) {
        let mut x = Vec::new();
        let mut t = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                x.push([o[0] + i as f64 * h, o[1] + j as f64 * h, o[2]]);
            }
        }
        let id = |i: usize, j: usize| (j * (n + 1) + i) as u32;
        for j in 0..n {
            for i in 0..n {
                t.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
                t.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
            }
        }
        (x, t)
    }

    #[test]
    fn surface_validates_indices_and_derives_edges() {
        assert!(Surface::new(3, &[[0, 1, 3]])
            .unwrap_err()
            .contains("vertex 3"));
        assert!(Surface::new(3, &[[0, 1, 1]])
            .unwrap_err()
            .contains("repeats"));
        let s = surf(5, &[[0, 1, 2], [2, 1, 3]]);
        assert_eq!(s.edges(), &[[0, 1], [0, 2], [1, 2], [1, 3], [2, 3]]);
        assert_eq!(s.surface_vertices(), &[0, 1, 2, 3]);
    }

    #[test]
    fn crossing_triangles_detected() {
        // A horizontal triangle pierced by a vertical one.
        let x = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.2, 0.2, -0.5],
            [0.3, 0.2, 0.5],
            [0.2, 0.3, 0.5],
        ];
        let s = surf(6, &[[0, 1, 2], [3, 4, 5]]);
        assert_eq!(frame_intersections(&s, &x), pairs(&[(0, 1)]));
        // Two coplanar overlapping triangles, and one lying inside the other.
        let mut y = x;
        for p in &mut y[3..] {
            p[2] = 0.0;
        }
        assert_eq!(frame_intersections(&s, &y), pairs(&[(0, 1)]));
        let z = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.1, 0.1, 0.0],
            [0.2, 0.1, 0.0],
            [0.1, 0.2, 0.0],
        ];
        assert_eq!(frame_intersections(&s, &z), pairs(&[(0, 1)]));
    }

    #[test]
    fn separated_triangles_not_reported() {
        let x = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.2, 0.2, 1e-12],
            [0.3, 0.2, 0.5],
            [0.2, 0.3, 0.5],
        ];
        let s = surf(6, &[[0, 1, 2], [3, 4, 5]]);
        assert!(frame_intersections(&s, &x).is_empty());
        // Coplanar, disjoint by a hair across the hypotenuse x + y = 1.
        let y = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.5 + 1e-15, 0.5 + 1e-15, 0.0],
            [2.0, 1.0, 0.0],
            [1.0, 2.0, 0.0],
        ];
        assert!(frame_intersections(&s, &y).is_empty());
    }

    #[test]
    fn touching_contacts_count_as_intersections() {
        let s = surf(6, &[[0, 1, 2], [3, 4, 5]]);
        let base = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        let cases: [[V3; 3]; 5] = [
            // A vertex touching the interior from above.
            [[0.25, 0.25, 0.0], [0.3, 0.2, 0.5], [0.2, 0.3, 0.5]],
            // A vertex exactly on the hypotenuse, coplanar.
            [[0.5, 0.5, 0.0], [2.0, 1.0, 0.0], [1.0, 2.0, 0.0]],
            // An edge lying across the triangle, touching it along a segment from above.
            [[-1.0, 0.25, 0.0], [2.0, 0.25, 0.0], [0.5, 0.25, 1.0]],
            // Edge against edge at a single point (skew edges meeting at (0.5, 0, 0)).
            [[0.5, -1.0, 1.0], [0.5, 1.0, -1.0], [0.5, -2.0, -1.0]],
            // Vertex against vertex is excluded topologically; vertex on an edge's end point
            // of a non-adjacent triangle: (1, 0, 0) touched by a separate vertex.
            [[1.0, 0.0, 0.0], [2.0, 0.0, 1.0], [2.0, 1.0, 1.0]],
        ];
        for (k, c) in cases.iter().enumerate() {
            let x = [base[0], base[1], base[2], c[0], c[1], c[2]];
            assert_eq!(frame_intersections(&s, &x), pairs(&[(0, 1)]), "case {k}");
        }
    }

    #[test]
    fn degenerate_triangles_are_decided_exactly() {
        let s = surf(6, &[[0, 1, 2], [3, 4, 5]]);
        let base = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        // A zero-area (collinear) triangle piercing the interior.
        let x = [
            base[0],
            base[1],
            base[2],
            [0.2, 0.2, -1.0],
            [0.2, 0.2, 1.0],
            [0.2, 0.2, 0.5],
        ];
        assert_eq!(frame_intersections(&s, &x), pairs(&[(0, 1)]));
        // The same beside the triangle.
        let mut y = x;
        for p in &mut y[3..] {
            p[0] = 0.9;
            p[1] = 0.2 + 1e-9;
        }
        assert!(frame_intersections(&s, &y).is_empty());
        // Two collinear "triangles" on one line, overlapping / not.
        let c = |a: f64, b: f64, m: f64| [[a, a, a], [b, b, b], [m, m, m]];
        let t = c(0.0, 1.0, 0.5);
        assert!(triangles_intersect(&t, &c(1.0, 2.0, 1.5)));
        assert!(!triangles_intersect(&t, &c(1.0 + 1e-12, 2.0, 1.5)));
        // A point triangle on a triangle's edge.
        let p = [[0.5, 0.0, 0.0]; 3];
        assert!(triangles_intersect(&base, &p));
        assert!(!triangles_intersect(&base, &[[0.5, -1e-300, 0.0]; 3]));
    }

    #[test]
    fn adjacent_pairs_ignored() {
        // Triangles sharing a vertex or an edge intersect along it (and here cross each
        // other), but are excluded; the third triangle shares nothing and is reported.
        let x = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.5, 0.3, -0.5],
            [0.3, 0.5, 0.5],
            [0.2, 0.2, -0.5],
            [0.2, 0.2, 0.5],
            [0.3, 0.2, 0.5],
        ];
        // 0: base; 1: shares vertex 0 and crosses it; 2: shares edge 1-2, folded through it;
        // 3: pierces base and shares nothing with it but shares vertex 3 with triangle 1.
        let s = surf(8, &[[0, 1, 2], [0, 3, 4], [1, 2, 3], [5, 6, 7]]);
        let found = frame_intersections(&s, &x);
        assert!(found.contains(&tt(0, 3)));
        assert!(found.iter().all(|p| !share_vertex(
            &s.triangles()[p.first as usize],
            &s.triangles()[p.second as usize]
        )));
        assert!(!found.contains(&tt(0, 1)));
        assert!(!found.contains(&tt(0, 2)));
        // The continuous check skips adjacent pairs too: a grid moving rigidly is clean.
        let (g, t) = grid(4, 0.1, [0.0; 3]);
        let s = surf(g.len(), &t);
        let g1: Vec<V3> = g.iter().map(|p| [p[0] + 0.3, p[1], p[2] + 0.2]).collect();
        let r = trajectory_check(&s, &g, &g1, 1e-9);
        assert!(r.is_clean(), "{r:?}");
        assert!(r.pairs_checked > 0);
        assert!(
            (r.min_distance - 0.1 * 0.5f64.sqrt()).abs() < 1e-12,
            "{}",
            r.min_distance
        );
    }

    /// Floating-point reference (not exact): edges of one triangle against the other by
    /// plane crossing and barycentric coordinates, `None` when within `tol` of a boundary.
    fn float_tri_tri(t: &[V3; 3], u: &[V3; 3], tol: f64) -> Option<bool> {
        let seg_tri = |p: &V3, q: &V3, a: &V3, b: &V3, c: &V3| -> Option<bool> {
            let n = cross(&sub(b, a), &sub(c, a));
            let dp = dot(&n, &sub(p, a));
            let dq = dot(&n, &sub(q, a));
            let nl = dot(&n, &n).sqrt();
            if nl < 1e-6 || dp.abs() < tol * nl || dq.abs() < tol * nl {
                return None;
            }
            if (dp > 0.0) == (dq > 0.0) {
                return Some(false);
            }
            let s = dp / (dp - dq);
            let x = add_scaled(p, s, &sub(q, p));
            let ax = sub(&x, a);
            let wb = dot(&n, &cross(&ax, &sub(c, a))) / (nl * nl);
            let wc = dot(&n, &cross(&sub(b, a), &ax)) / (nl * nl);
            let wa = 1.0 - wb - wc;
            if wa.abs() < tol || wb.abs() < tol || wc.abs() < tol {
                return None;
            }
            Some(wa > 0.0 && wb > 0.0 && wc > 0.0)
        };
        let mut any = false;
        for (x, y) in [(t, u), (u, t)] {
            for i in 0..3 {
                if seg_tri(&x[i], &x[(i + 1) % 3], &y[0], &y[1], &y[2])? {
                    any = true;
                }
            }
        }
        Some(any)
    }

    #[test]
    fn random_meshes_match_brute_force() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut compared = 0;
        for round in 0..60 {
            // Random triangles over a small vertex pool (so some share vertices), in a box
            // whose size varies so that both sparse and dense configurations occur.
            let nv = 8 + rng.below(40) as usize;
            let nt = 4 + rng.below(60) as usize;
            let size = 0.5 + 4.0 * rng.f();
            let x: Vec<V3> = (0..nv)
                .map(|_| {
                    let p = rng.point();
                    [p[0] * size, p[1] * size, p[2] * size]
                })
                .collect();
            let mut tris = Vec::new();
            while tris.len() < nt {
                let t = [0, 1, 2].map(|_| rng.below(nv as u64) as u32);
                if t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
                    tris.push(t);
                }
            }
            let s = surf(nv, &tris);
            let corners = |t: &[u32; 3]| t.map(|v| x[v as usize]);
            let mut brute = Vec::new();
            for i in 0..nt {
                for j in i + 1..nt {
                    if share_vertex(&tris[i], &tris[j]) {
                        continue;
                    }
                    let (a, b) = (corners(&tris[i]), corners(&tris[j]));
                    let exact = triangles_intersect(&a, &b);
                    assert_eq!(exact, triangles_intersect(&b, &a), "round {round}: {i} {j}");
                    if let Some(f) = float_tri_tri(&a, &b, 1e-9) {
                        assert_eq!(exact, f, "round {round}: triangles {i} {j}: {a:?} {b:?}");
                        compared += 1;
                    }
                    if exact {
                        brute.push((i as u32, j as u32));
                    }
                }
            }
            assert_eq!(frame_intersections(&s, &x), pairs(&brute), "round {round}");
        }
        assert!(compared > 10_000, "{compared}");
    }

    /// The minimum distance over all non-adjacent vertex-triangle and edge-edge pairs.
    fn brute_min_distance(s: &Surface, x: &[V3]) -> f64 {
        let mut best = f64::INFINITY;
        for &v in s.surface_vertices() {
            for t in s.triangles().iter().filter(|t| !t.contains(&v)) {
                let p = t.map(|k| x[k as usize]);
                best = best.min(point_triangle_distance(&x[v as usize], &p[0], &p[1], &p[2]).0);
            }
        }
        for (i, e) in s.edges().iter().enumerate() {
            for f in s.edges()[i + 1..].iter().filter(|f| !share_vertex(e, *f)) {
                let (a, b) = (e.map(|k| x[k as usize]), f.map(|k| x[k as usize]));
                best = best.min(segment_segment_distance(&a[0], &a[1], &b[0], &b[1]).0);
            }
        }
        best
    }

    #[test]
    fn min_distance_matches_brute_force() {
        let mut rng = Rng(77);
        for round in 0..40 {
            let nv = 6 + rng.below(30) as usize;
            let nt = 2 + rng.below(30) as usize;
            // Sometimes spread far apart, so the search radius must grow.
            let size = if round % 3 == 0 { 100.0 } else { 1.0 };
            let x: Vec<V3> = (0..nv).map(|_| rng.point().map(|c| c * size)).collect();
            let mut tris = Vec::new();
            while tris.len() < nt {
                let t = [0, 1, 2].map(|_| rng.below(nv as u64) as u32);
                if t[0] != t[1] && t[1] != t[2] && t[0] != t[2] {
                    tris.push(t);
                }
            }
            let s = surf(nv, &tris);
            assert_eq!(
                min_distance(&s, &x),
                brute_min_distance(&s, &x),
                "round {round}"
            );
        }
        // A single triangle has no non-adjacent pair.
        let s = surf(3, &[[0, 1, 2]]);
        assert_eq!(
            min_distance(&s, &[[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
            f64::INFINITY
        );
    }

    #[test]
    fn random_degenerate_configurations_are_consistent() {
        // Integer coordinates in a tiny range: many coplanar, collinear, touching and
        // zero-area cases. Intersection must not depend on vertex order, on which triangle
        // comes first, or on exact symmetries of space (axis permutation, reflection,
        // translation by integers), and must agree with the non-degenerate float reference
        // when that one is decisive.
        let mut rng = Rng(12345);
        let mut hits = 0;
        for _ in 0..20_000 {
            let mut p = || [0, 1, 2].map(|_| rng.below(4) as f64);
            let t = [p(), p(), p()];
            let u = [p(), p(), p()];
            let r = triangles_intersect(&t, &u);
            hits += r as usize;
            assert_eq!(r, triangles_intersect(&u, &t), "{t:?} {u:?}");
            assert_eq!(
                r,
                triangles_intersect(&[t[1], t[2], t[0]], &[u[0], u[2], u[1]])
            );
            let perm = |q: &[V3; 3]| q.map(|v| [3.0 - v[2], v[0] + 5.0, -v[1]]);
            assert_eq!(r, triangles_intersect(&perm(&t), &perm(&u)), "{t:?} {u:?}");
            if let Some(f) = float_tri_tri(&t, &u, 1e-9) {
                assert_eq!(r, f, "{t:?} {u:?}");
            }
        }
        assert!(hits > 1000 && hits < 19_000, "{hits}");
    }

    #[test]
    fn frame_check_scales_to_ten_thousand_triangles() {
        // Two 70 x 70 grids (19,600 triangles), 1 mm apart: no intersection; then pushed
        // through each other: intersections found.
        let (mut x, mut t) = grid(70, 0.01, [0.0; 3]);
        let (x2, t2) = grid(70, 0.01, [0.003, 0.004, 0.001]);
        let off = x.len() as u32;
        x.extend(x2);
        t.extend(t2.iter().map(|tr| tr.map(|v| v + off)));
        let s = surf(x.len(), &t);
        let start = std::time::Instant::now();
        assert!(frame_intersections(&s, &x).is_empty());
        assert!((min_distance(&s, &x) - 0.001).abs() < 1e-12);
        let mut y = x.clone();
        y[off as usize + 35 * 71 + 35][2] = -0.001; // one vertex of the top grid pokes through
        let found = frame_intersections(&s, &y);
        assert!(!found.is_empty() && found.len() < 40, "{}", found.len());
        let r = trajectory_check(&s, &x, &y, 1e-9);
        assert_eq!(r.uncertain, []);
        assert!(r
            .collisions
            .iter()
            .any(|c| c.kind == PairKind::VertexTriangle && c.primitives[0] == off + 35 * 71 + 35));
        assert!(start.elapsed().as_secs_f64() < 60.0);
    }

    /// A fixed triangle in z = 0 and a "needle" triangle whose tip moves from `tip0` to
    /// `tip1`; the needle's other two vertices `far` stay put.
    fn needle(tip0: V3, tip1: V3, far: [V3; 2]) -> (Surface, Vec<V3>, Vec<V3>) {
        let base = vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            tip0,
            far[0],
            far[1],
        ];
        let mut x1 = base.clone();
        x1[3] = tip1;
        (surf(6, &[[0, 1, 2], [3, 4, 5]]), base, x1)
    }

    /// Needle vertices far below and away: the needle's edges cross z = 0 outside the fixed
    /// triangle whether the tip is above or below it.
    const BELOW: [V3; 2] = [[5.0, 5.0, -1.0], [5.0, 6.0, -1.0]];
    /// Needle vertices high above: the needle's edges rise steeply from the tip.
    const ABOVE: [V3; 2] = [[0.3, 0.3, 10.0], [0.4, 0.3, 10.0]];

    #[test]
    fn vertex_through_triangle_between_clean_frames_detected() {
        let (s, x0, x1) = needle([0.2, 0.2, 0.1], [0.2, 0.2, -0.1], BELOW);
        assert!(frame_intersections(&s, &x0).is_empty());
        assert!(frame_intersections(&s, &x1).is_empty());
        let r = trajectory_check(&s, &x0, &x1, 1e-9);
        assert!(!r.is_clean());
        let c = r
            .collisions
            .iter()
            .find(|c| c.kind == PairKind::VertexTriangle && c.primitives == [3, 0])
            .unwrap_or_else(|| panic!("{r:?}"));
        assert_eq!(c.vertices, [3, 0, 1, 2]);
        assert!((c.time - 0.5).abs() < 1e-8 && c.distance <= 1e-9, "{c:?}");
        // A fast, oblique pass through a corner region is found as well.
        let (s, x0, x1) = needle([-0.3, 0.05, 0.7], [0.5, 0.15, -0.9], BELOW);
        assert!(frame_intersections(&s, &x0).is_empty());
        assert!(frame_intersections(&s, &x1).is_empty());
        let r = trajectory_check(&s, &x0, &x1, 1e-9);
        assert!(r.collisions.iter().any(|c| c.primitives == [3, 0]), "{r:?}");
    }

    #[test]
    fn edges_crossing_detected() {
        // Edge 0-1 of a vertical triangle (apex above) slides diagonally past edge 3-4 of a
        // short vertical triangle (apex below) in the plane x = 0, crossing it at t = 1/2.
        let at = |t: f64| -> Vec<V3> {
            let (y, z) = (-0.5 + t, 0.05 - 0.1 * t);
            vec![
                [-1.0, y, z],
                [1.0, y, z],
                [0.0, y, z + 1.0],
                [0.0, -0.1, 0.0],
                [0.0, 0.1, 0.0],
                [0.0, 0.0, -1.0],
            ]
        };
        let s = surf(6, &[[0, 1, 2], [3, 4, 5]]);
        let (x0, x1) = (at(0.0), at(1.0));
        assert!(frame_intersections(&s, &x0).is_empty());
        assert!(frame_intersections(&s, &x1).is_empty());
        let r = trajectory_check(&s, &x0, &x1, 1e-9);
        let e01 = s.edges().iter().position(|e| *e == [0, 1]).unwrap() as u32;
        let e34 = s.edges().iter().position(|e| *e == [3, 4]).unwrap() as u32;
        let c = r
            .collisions
            .iter()
            .find(|c| c.kind == PairKind::EdgeEdge && c.primitives == [e01, e34])
            .unwrap_or_else(|| panic!("{r:?}"));
        assert_eq!(c.vertices, [0, 1, 3, 4]);
        assert!((c.time - 0.5).abs() < 1e-8, "{c:?}");
        assert_eq!(r.uncertain, []);
    }

    #[test]
    fn near_misses_are_certified_clean() {
        // A vertex falling vertically past the hypotenuse x + y = 1, 0.1 mm outside it. The
        // needle's other vertices lie beyond (x + y > 6) in the plane, so nothing else comes
        // closer; the swept boxes overlap, so the pair is certified by bisection.
        let d = 1e-4 * 0.5f64.sqrt();
        let q = 0.5 + d;
        let out = [[3.0, 3.0, 0.0], [3.0, 4.0, 0.0]];
        let (s, x0, x1) = needle([q, q, 0.5], [q, q, -0.5], out);
        let r = trajectory_check(&s, &x0, &x1, 1e-9);
        assert!(r.is_clean(), "{r:?}");
        assert!(r.vertex_triangle_pairs >= 1, "{r:?}");
        assert!((r.min_distance - 1e-4).abs() < 1e-12, "{}", r.min_distance);
        assert_eq!(min_distance(&s, &x0), brute_min_distance(&s, &x0));
        // The same vertex passing fast along the hypotenuse, in the triangle's plane.
        let (s, x0, x1) = needle([q - 3.0, q + 3.0, 0.0], [q + 3.0, q - 3.0, 0.0], ABOVE);
        let r = trajectory_check(&s, &x0, &x1, 1e-9);
        assert!(r.is_clean(), "{r:?}");
        // The needle's edges rise steeply from the tip: they stay about as far as the tip.
        assert!(
            r.min_distance <= 1e-4 + 1e-12 && r.min_distance > 0.9e-4,
            "{}",
            r.min_distance
        );
        // Skew edges sliding past each other 0.1 mm apart: edge 0-1 runs along (1, 0, 1) at
        // height h over the y axis, edge 3-4 along the y axis; their lines are h / sqrt(2)
        // apart. Triangle 0-1-2 lies above its edge, triangle 3-4-5 below its edge.
        let h = 2f64.sqrt() * 1e-4;
        let at = |t: f64| -> Vec<V3> {
            let y = -0.5 + t;
            vec![
                [-1.0, y, -1.0 + h],
                [1.0, y, 1.0 + h],
                [-1.0, y, 1.0 + h],
                [0.0, -0.1, 0.0],
                [0.0, 0.1, 0.0],
                [0.0, 0.0, -1.0],
            ]
        };
        let s = surf(6, &[[0, 1, 2], [3, 4, 5]]);
        let (x0, x1) = (at(0.0), at(1.0));
        let r = trajectory_check(&s, &x0, &x1, 1e-9);
        assert!(r.is_clean(), "{r:?}");
        assert!(r.edge_edge_pairs >= 1, "{r:?}");
        assert!((r.min_distance - 1e-4).abs() < 1e-12, "{}", r.min_distance);
        // Moved down by h, the edges' lines meet: the edges touch while passing.
        let lower = |x: Vec<V3>| -> Vec<V3> {
            x.iter()
                .enumerate()
                .map(|(i, p)| if i < 3 { [p[0], p[1], p[2] - h] } else { *p })
                .collect()
        };
        let r = trajectory_check(&s, &lower(x0), &lower(x1), 1e-9);
        assert!(
            r.collisions
                .iter()
                .any(|c| c.kind == PairKind::EdgeEdge && c.vertices == [0, 1, 3, 4]),
            "{r:?}"
        );
    }

    #[test]
    fn sliding_contact_certifies_with_few_samples() {
        // Two grids 10 um apart in tilted parallel planes (so their boxes overlap), sliding
        // 5 cm past each other: the separating-direction bound certifies each pair without
        // deep bisection.
        let (c, sn) = (1.0 / 1.01f64.sqrt(), 0.1 / 1.01f64.sqrt());
        let tilt = |p: &V3| [c * p[0] - sn * p[2], p[1], sn * p[0] + c * p[2]];
        let (mut x, mut t) = grid(20, 0.01, [0.0; 3]);
        let (x2, t2) = grid(20, 0.01, [0.0031, 0.0047, 1e-5]);
        let off = x.len();
        x.extend(x2);
        t.extend(t2.iter().map(|tr| tr.map(|v| v + off as u32)));
        let s = surf(x.len(), &t);
        let mut y = x.clone();
        for p in &mut y[off..] {
            p[0] += 0.05;
        }
        let x: Vec<V3> = x.iter().map(tilt).collect();
        let y: Vec<V3> = y.iter().map(tilt).collect();
        let r = trajectory_check(&s, &x, &y, 1e-9);
        assert!(
            r.is_clean(),
            "{:?}",
            &r.collisions[..r.collisions.len().min(3)]
        );
        assert!(r.pairs_checked > 10_000, "{}", r.pairs_checked);
        assert!((r.min_distance - 1e-5).abs() < 1e-12, "{}", r.min_distance);
        assert!(
            r.samples < 4 * r.pairs_checked,
            "{} samples for {} pairs",
            r.samples,
            r.pairs_checked
        );
    }

    #[test]
    fn grazing_contact_is_a_collision_and_zero_motion_is_clean() {
        // The tip comes down exactly onto the triangle at t = 1.
        let (s, x0, x1) = needle([0.2, 0.2, 0.1], [0.2, 0.2, 0.0], ABOVE);
        let r = trajectory_check(&s, &x0, &x1, 1e-9);
        assert_eq!(r.collisions.len(), 1, "{r:?}");
        let c = r.collisions[0];
        assert_eq!((c.kind, c.primitives), (PairKind::VertexTriangle, [3, 0]));
        assert!(c.time > 1.0 - 1e-7 && c.distance <= 1e-9, "{c:?}");
        // Resting exactly 2 eta away without moving.
        let (s, x0, _) = needle([0.2, 0.2, 2e-9], [0.0; 3], ABOVE);
        let r = trajectory_check(&s, &x0, &x0, 1e-9);
        assert!(r.is_clean(), "{r:?}");
        assert_eq!(min_distance(&s, &x0), 2e-9);
    }

    /// Independent continuous check for one vertex-triangle motion: roots of the signed
    /// volume (coplanarity), located by dense sampling and bisection, with the point inside
    /// the triangle by a margin at the root. `Some(true)`: certainly crossing; `Some(false)`:
    /// certainly no crossing and stays 1e-6 away from the triangle edges' planes when
    /// coplanar; `None`: near a boundary.
    fn reference_vt(x0: &[V3; 4], x1: &[V3; 4]) -> Option<bool> {
        let at = |t: f64| -> [V3; 4] { std::array::from_fn(|k| lerp(&x0[k], &x1[k], t)) };
        let vol = |p: &[V3; 4]| {
            dot(
                &sub(&p[0], &p[1]),
                &cross(&sub(&p[2], &p[1]), &sub(&p[3], &p[1])),
            )
        };
        let n = 2000;
        let mut crossing = false;
        let mut prev = vol(&at(0.0));
        for k in 1..=n {
            let (ta, tb) = ((k - 1) as f64 / n as f64, k as f64 / n as f64);
            let cur = vol(&at(tb));
            if (prev > 0.0) != (cur > 0.0) {
                let (mut lo, mut hi) = (ta, tb);
                let s_lo = prev > 0.0;
                for _ in 0..80 {
                    let mid = 0.5 * (lo + hi);
                    if (vol(&at(mid)) > 0.0) == s_lo {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                let p = at(lo);
                let nrm = cross(&sub(&p[2], &p[1]), &sub(&p[3], &p[1]));
                let nn = dot(&nrm, &nrm);
                let ap = sub(&p[0], &p[1]);
                let wb = dot(&nrm, &cross(&ap, &sub(&p[3], &p[1]))) / nn;
                let wc = dot(&nrm, &cross(&sub(&p[2], &p[1]), &ap)) / nn;
                let wa = 1.0 - wb - wc;
                let m = wa.min(wb).min(wc);
                if m.abs() < 1e-6 {
                    return None;
                }
                crossing |= m > 0.0;
            }
            prev = cur;
        }
        Some(crossing)
    }

    #[test]
    fn random_vertex_triangle_motions_match_reference() {
        let mut rng = Rng(0xDEAD_BEEF);
        let (mut crossings, mut misses) = (0, 0);
        let s = surf(6, &[[0, 1, 2], [3, 4, 5]]);
        for round in 0..1500 {
            let x0: Vec<V3> = (0..6).map(|_| rng.point()).collect();
            let mut x1 = x0.clone();
            for p in x1.iter_mut().take(4) {
                let d = rng.point();
                *p = [p[0] + d[0] - 0.5, p[1] + d[1] - 0.5, p[2] + d[2] - 0.5];
            }
            // Keep the needle's other vertices far away so only vertex 3 vs triangle 0 matters.
            for (i, p) in [[9.0, 9.0, 9.0], [9.0, 10.0, 9.0]].iter().enumerate() {
                x1[4 + i] = *p;
            }
            let mut x0 = x0;
            x0[4] = x1[4];
            x0[5] = x1[5];
            let ids = [3, 0, 1, 2];
            let r = trajectory_check(&s, &x0, &x1, 1e-9);
            assert_eq!(r.uncertain, [], "round {round}");
            let hit = r.collisions.iter().any(|c| c.primitives == [3, 0]);
            if let Some(c) = r.collisions.iter().find(|c| c.primitives == [3, 0]) {
                // Independently confirm the reported contact.
                let p: [V3; 4] = ids.map(|v| lerp(&x0[v], &x1[v], c.time));
                let (d, _) = point_triangle_distance(&p[0], &p[1], &p[2], &p[3]);
                assert!(d <= 1e-9, "round {round}: {d}");
            }
            let xa = ids.map(|v| x0[v]);
            let xb = ids.map(|v| x1[v]);
            match reference_vt(&xa, &xb) {
                Some(true) => {
                    crossings += 1;
                    assert!(hit, "round {round}: missed crossing {xa:?} -> {xb:?}");
                }
                Some(false) => {
                    misses += 1;
                    // The reference sees no crossing; a collision is only plausible if the
                    // motion starts or ends on the triangle, which random data never does.
                    assert!(!hit, "round {round}: false collision {r:?}");
                }
                None => {}
            }
        }
        assert!(crossings > 40 && misses > 500, "{crossings} {misses}");
    }

    /// A triangle in z = 0 and a rod polyline 3-4-5 plus a second rod 6-7.
    fn rod_scene() -> (Vec<V3>, Surface) {
        let x = vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.2, 0.2, 0.5],
            [0.2, 0.2, -0.5],
            [0.2, 0.2, -1.0],
            [2.0, 0.0, 1.0],
            [3.0, 1.0, 1.0],
        ];
        let s = Surface::with_curves(8, &[[0, 1, 2]], &[[4, 3], [4, 5], [6, 7]]).unwrap();
        (x, s)
    }

    #[test]
    fn curves_validate_and_join_the_edges() {
        let (_, s) = rod_scene();
        assert_eq!(s.curve_segments(), &[[3, 4], [4, 5], [6, 7]]);
        assert_eq!(s.edges(), &[[0, 1], [0, 2], [1, 2], [3, 4], [4, 5], [6, 7]]);
        assert_eq!(s.surface_vertices(), &[0, 1, 2, 3, 4, 5, 6, 7]);
        // A segment that is also a triangle edge is one edge; duplicates merge.
        let t = Surface::with_curves(4, &[[0, 1, 2]], &[[1, 0], [2, 3], [3, 2]]).unwrap();
        assert_eq!(t.edges(), &[[0, 1], [0, 2], [1, 2], [2, 3]]);
        assert_eq!(t.curve_segments(), &[[0, 1], [2, 3]]);
        let e = Surface::with_curves(4, &[], &[[0, 4]]).unwrap_err();
        assert!(
            e.contains("curve segment 0") && e.contains("vertex 4"),
            "{e}"
        );
        let e = Surface::with_curves(4, &[], &[[0, 1], [2, 2]]).unwrap_err();
        assert!(e.contains("curve segment 1 repeats"), "{e}");
    }

    #[test]
    fn curve_segment_crossing_a_triangle_is_reported() {
        let (mut x, s) = rod_scene();
        let st = |first, second| IntersectingPair {
            kind: FramePairKind::SegmentTriangle,
            first,
            second,
        };
        // Segment 0 (3-4) pierces the triangle; segment 1 (4-5) is below it.
        assert_eq!(frame_intersections(&s, &x), [st(0, 0)]);
        // Touching counts: vertex 4 exactly on the triangle, both segments touch it.
        x[4] = [0.2, 0.2, 0.0];
        assert_eq!(frame_intersections(&s, &x), [st(0, 0), st(1, 0)]);
        // Moved beside the triangle (past its hypotenuse): nothing.
        for p in &mut x[3..6] {
            p[0] += 0.61;
        }
        assert!(frame_intersections(&s, &x).is_empty());
        // A segment sharing a vertex with the triangle is adjacent, never reported.
        let x = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.5, 0.5, 0.0],
        ];
        let s = Surface::with_curves(4, &[[0, 1, 2]], &[[0, 3]]).unwrap();
        assert!(frame_intersections(&s, &x).is_empty());
    }

    #[test]
    fn crossing_curve_segments_are_reported() {
        let mut x = vec![
            [0.0, 0.0, 1.0],
            [1.0, 1.0, 1.0],
            [0.0, 1.0, 1.0],
            [1.0, 0.0, 1.0],
        ];
        let s = Surface::with_curves(4, &[], &[[0, 1], [2, 3]]).unwrap();
        assert_eq!(
            frame_intersections(&s, &x),
            [IntersectingPair {
                kind: FramePairKind::SegmentSegment,
                first: 0,
                second: 1,
            }]
        );
        // One end lifted 1 mm: skew segments, no common point.
        x[2][2] += 1e-3;
        assert!(frame_intersections(&s, &x).is_empty());
        // Both ends lifted: parallel planes 1 mm apart.
        x[3][2] += 1e-3;
        assert!(frame_intersections(&s, &x).is_empty());
        assert!((min_distance(&s, &x) - 1e-3).abs() < 1e-12);
    }

    #[test]
    fn trajectory_check_covers_curves() {
        let (x0, s) = rod_scene();
        // The whole rod 3-4-5 starts above the triangle and drops through it.
        let lift = |x: &[V3], dz: f64| -> Vec<V3> {
            x.iter()
                .enumerate()
                .map(|(i, p)| {
                    if (3..6).contains(&i) {
                        [p[0], p[1], p[2] + dz]
                    } else {
                        *p
                    }
                })
                .collect()
        };
        let a = lift(&x0, 1.6);
        let b = lift(&x0, 0.4);
        // Above it, the rod tip (vertex 5) is the closest, 0.6 m above the triangle.
        assert!((min_distance(&s, &a) - 0.6).abs() < 1e-12);
        // Dropping until vertex 5 passes through: a vertex–triangle collision of a rod vertex.
        let r = trajectory_check(&s, &a, &b, 1e-9);
        assert!(
            r.collisions
                .iter()
                .any(|c| c.kind == PairKind::VertexTriangle && c.primitives == [5, 0]),
            "{r:?}"
        );
        // A tilted rod segment (3-4) over the triangle's edge 0-1, 4.9 cm above its line.
        let x = vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.3, -0.5, -0.05],
            [0.3, 0.5, 0.15],
        ];
        let s = Surface::with_curves(5, &[[0, 1, 2]], &[[3, 4]]).unwrap();
        let e = |a: u32, b: u32| s.edges().iter().position(|f| *f == [a, b]).unwrap() as u32;
        let shift = |dx: f64, dz: f64| -> Vec<V3> {
            let mut y = x.clone();
            for k in [3, 4] {
                y[k][0] += dx;
                y[k][2] += dz;
            }
            y
        };
        // Sliding along the edge: clean, the edge–edge pair is checked.
        let r = trajectory_check(&s, &x, &shift(0.4, 0.0), 1e-9);
        assert!(r.is_clean() && r.edge_edge_pairs > 0, "{r:?}");
        let d = 0.05 / 1.04f64.sqrt();
        assert!((r.min_distance - d).abs() < 1e-9, "{}", r.min_distance);
        // Dropping 0.2 m: the segment sweeps through edge 0-1.
        let r = trajectory_check(&s, &x, &shift(0.0, -0.2), 1e-9);
        assert!(
            r.collisions
                .iter()
                .any(|c| c.kind == PairKind::EdgeEdge && c.primitives == [e(0, 1), e(3, 4)]),
            "{r:?}"
        );
        // Two rods: the tilted one over a straight one along x, then sweeping through it.
        let x = vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.5, -0.5, -0.05],
            [0.5, 0.5, 0.15],
        ];
        let s = Surface::with_curves(4, &[], &[[0, 1], [2, 3]]).unwrap();
        let mut y = x.clone();
        y[2][2] -= 0.02;
        y[3][2] -= 0.02;
        let r = trajectory_check(&s, &x, &y, 1e-9);
        assert!(r.is_clean() && r.edge_edge_pairs == 1, "{r:?}");
        assert!(r.min_distance > 0.02 && r.min_distance < d, "{r:?}");
        y[2][2] -= 0.2;
        y[3][2] -= 0.2;
        let r = trajectory_check(&s, &x, &y, 1e-9);
        assert_eq!(r.collisions.len(), 1, "{r:?}");
        assert_eq!(r.collisions[0].primitives, [0, 1]);
    }
}
