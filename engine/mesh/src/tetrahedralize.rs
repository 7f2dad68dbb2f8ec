//! Tetrahedralization by isosurface stuffing (Labelle & Shewchuk, "Isosurface Stuffing: Fast
//! Tetrahedral Meshes with Good Dihedral Angles", SIGGRAPH 2007) on a body-centred cubic (BCC)
//! lattice.
//!
//! The domain is either a closed triangle surface ([`tetrahedralize`]) or an implicit function
//! that is negative inside ([`stuff_implicit`]). The lattice has `resolution` cubic cells along
//! the longest bounding-box axis. Each lattice vertex is classified inside/outside (for surfaces
//! by ray parity along lattice rows, with a consistent tie rule on edges and vertices); on each
//! lattice edge whose ends differ, the *cut point* is the exact intersection of the edge with the
//! surface (for implicit domains, a bisection root). Lattice vertices closer to a cut point than
//! `alpha` times the edge length are warped onto it (the paper's two-sided parameters
//! `alpha_long = 0.21509`, `alpha_short = 0.35900`), then every BCC tetrahedron is filled with
//! the paper's stencils; quadrilaterals on lattice faces are split by the paper's parity rule so
//! neighbouring pieces conform. Every output tet is checked: it is oriented positively
//! (`det[b-a, c-a, d-a] > 0`), and a mesh with a degenerate tet is refused rather than returned.
//! The boundary of the result lies on the input surface (its vertices are cut points or warped
//! lattice vertices, which are surface points).

use std::collections::HashMap;
use std::path::Path;

use crate::model::{tet_signed_volume, TetMesh, TriMesh};

type V3 = [f64; 3];

/// Fraction of a long (axis-aligned) lattice edge within which a lattice vertex snaps to a cut
/// point (two-sided value from Labelle & Shewchuk 2007).
pub const ALPHA_LONG: f64 = 0.21509;
/// Fraction of a short (diagonal) lattice edge within which a lattice vertex snaps to a cut point.
pub const ALPHA_SHORT: f64 = 0.35900;
/// Largest accepted resolution (cells along the longest axis).
pub const MAX_RESOLUTION: usize = 1500;

/// What can go wrong while tetrahedralizing.
#[derive(Debug, thiserror::Error)]
pub enum TetrahedralizeError {
    /// The resolution is zero or above [`MAX_RESOLUTION`].
    #[error("resolution must be between 1 and {MAX_RESOLUTION} (got {0})")]
    BadResolution(usize),
    /// The surface has no triangles or no extent.
    #[error("the surface is empty or flat (nothing to fill)")]
    EmptySurface,
    /// A triangle references a vertex that does not exist.
    #[error("triangle {0} references a vertex that does not exist")]
    IndexOutOfRange(usize),
    /// A vertex has a NaN or infinite coordinate.
    #[error("vertex {0} has a non-finite coordinate")]
    NonFinite(usize),
    /// Some edges are used by an odd number of triangles: the surface has holes.
    #[error("the surface is not closed: {0} edges are used by an odd number of triangles")]
    NotClosed(usize),
    /// The stuffing produced no tetrahedra (the shape is thinner than the lattice spacing).
    #[error("no tetrahedra produced: the shape is thinner than the lattice cell ({0} m); raise the resolution")]
    NoTets(f64),
    /// A geometric parameter is out of its valid range.
    #[error("invalid parameter: {0}")]
    BadParameter(String),
    /// Some produced tetrahedra are degenerate; the mesh is refused.
    #[error("{0} degenerate tetrahedra produced; refusing the mesh")]
    Degenerate(usize),
}

/// Quality and size figures of a tetrahedralization.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Number of output vertices.
    pub vertices: usize,
    /// Number of output tetrahedra.
    pub tets: usize,
    /// Lattice cell size in metres.
    pub cell_size: f64,
    /// Smallest dihedral angle over all tets, in degrees.
    pub min_dihedral_deg: f64,
    /// Largest dihedral angle over all tets, in degrees.
    pub max_dihedral_deg: f64,
    /// Number of inverted or degenerate tets in the output (always 0 for a returned mesh).
    pub inverted: usize,
    /// Total volume of the tets in cubic metres.
    pub volume: f64,
    /// Volume enclosed by the input surface (divergence theorem), cubic metres; for implicit
    /// domains, the caller's reference volume or NaN.
    pub surface_volume: f64,
    /// Number of lattice vertices warped onto the surface.
    pub warped_vertices: usize,
}

impl Report {
    /// Relative volume error `|volume - surface_volume| / surface_volume`.
    pub fn volume_error(&self) -> f64 {
        (self.volume - self.surface_volume).abs() / self.surface_volume.abs()
    }
}

/// Tetrahedralizes the closed triangle surface `surface` with `resolution` lattice cells along
/// the longest bounding-box axis. The surface must be closed (every edge used by an even number
/// of triangles); its orientation does not matter (inside is decided by ray parity).
pub fn tetrahedralize(
    surface: &TriMesh,
    resolution: usize,
) -> Result<(TetMesh, Report), TetrahedralizeError> {
    check_resolution(resolution)?;
    let n = surface.positions.len();
    for (i, p) in surface.positions.iter().enumerate() {
        if !p.iter().all(|c| c.is_finite()) {
            return Err(TetrahedralizeError::NonFinite(i));
        }
    }
    for (t, tri) in surface.triangles.iter().enumerate() {
        if tri.iter().any(|&v| v as usize >= n) {
            return Err(TetrahedralizeError::IndexOutOfRange(t));
        }
    }
    let welded = weld(surface);
    let surface = &welded;
    if surface.triangles.is_empty() {
        return Err(TetrahedralizeError::EmptySurface);
    }
    let odd = odd_edges(&surface.triangles);
    if odd > 0 {
        return Err(TetrahedralizeError::NotClosed(odd));
    }
    let (lo, hi) = bbox(
        surface
            .triangles
            .iter()
            .flat_map(|t| t.iter().map(|&v| surface.positions[v as usize])),
    );
    let domain = SurfaceDomain::new(surface);
    let surface_volume = enclosed_volume(surface).abs();
    let (mesh, mut report) = stuff(&domain, lo, hi, resolution)?;
    report.surface_volume = surface_volume;
    Ok((mesh, report))
}

/// Tetrahedralizes the region `f(p) < 0` inside the box `[lo, hi]` with `resolution` lattice
/// cells along the longest box axis. `f` should behave like a signed distance (metres, negative
/// inside) and the region must lie strictly inside the box. The report's `surface_volume` is NaN.
pub fn stuff_implicit<F>(
    f: F,
    lo: [f64; 3],
    hi: [f64; 3],
    resolution: usize,
) -> Result<(TetMesh, Report), TetrahedralizeError>
where
    F: Fn([f64; 3]) -> f64 + Sync,
{
    check_resolution(resolution)?;
    if !(0..3).all(|a| hi[a] >= lo[a]) || !lo.iter().chain(hi.iter()).all(|c| c.is_finite()) {
        return Err(TetrahedralizeError::EmptySurface);
    }
    let domain = ImplicitDomain { f };
    stuff(&domain, lo, hi, resolution)
}

/// Runs `supple mesh tetrahedralize INPUT OUTPUT --resolution N`: loads a closed surface (any
/// format the importer reads), tetrahedralizes it, writes the tet mesh by the output extension
/// (`.vtu`, `.msh`, `.usda`), prints a summary and returns the process exit code (0, or 2 with one
/// line `error: FILE:LINE: what` on stderr).
pub fn run_cli(input: &Path, output: &Path, resolution: usize) -> i32 {
    let surface = match crate::import::load(input) {
        Ok(m) => m,
        Err(e) => return cli_fail(e),
    };
    let surface = surface_of(surface);
    let t0 = std::time::Instant::now();
    let (mesh, report) = match tetrahedralize(&surface, resolution) {
        Ok(r) => r,
        Err(e) => return cli_fail(format!("{}: {e}", input.display())),
    };
    let secs = t0.elapsed().as_secs_f64();
    if let Err(e) = crate::export::write_tet_mesh(output, &mesh) {
        return cli_fail(e);
    }
    println!(
        "input: {} ({} triangles)",
        input.display(),
        surface.triangles.len()
    );
    println!("output: {}", output.display());
    println!(
        "resolution: {} (cell {:.6e} m)",
        resolution, report.cell_size
    );
    println!("vertices: {}", report.vertices);
    println!("tets: {}", report.tets);
    println!("inverted tets: {}", report.inverted);
    println!("min dihedral angle: {:.3} deg", report.min_dihedral_deg);
    println!("max dihedral angle: {:.3} deg", report.max_dihedral_deg);
    println!(
        "volume: {:.9e} m^3 (surface encloses {:.9e} m^3, error {:.3} %)",
        report.volume,
        report.surface_volume,
        100.0 * report.volume_error()
    );
    println!("time: {secs:.3} s");
    0
}

/// Prints one line `error: ...` (newlines flattened) and returns exit code 2.
fn cli_fail(msg: impl std::fmt::Display) -> i32 {
    eprintln!("error: {}", msg.to_string().replace(['\n', '\r'], " "));
    2
}

/// The closed surface to fill from an imported mesh: its triangles, or the boundary of its tets.
fn surface_of(m: crate::import::Loaded) -> TriMesh {
    if !m.tets.tets.is_empty() {
        let tm = m.tets;
        return TriMesh {
            triangles: tm.boundary_triangles(),
            positions: tm.positions,
        };
    }
    m.surface
}

/// Merges vertices with bit-identical positions (STL-style triangle soups) and drops triangles
/// that become degenerate.
fn weld(s: &TriMesh) -> TriMesh {
    let mut map: HashMap<[u64; 3], u32> = HashMap::with_capacity(s.positions.len());
    let mut positions = Vec::with_capacity(s.positions.len());
    let remap: Vec<u32> = s
        .positions
        .iter()
        .map(|p| {
            let key = p.map(|c| if c == 0.0 { 0 } else { c.to_bits() });
            *map.entry(key).or_insert_with(|| {
                positions.push(*p);
                (positions.len() - 1) as u32
            })
        })
        .collect();
    let triangles = s
        .triangles
        .iter()
        .map(|t| t.map(|v| remap[v as usize]))
        .filter(|t| t[0] != t[1] && t[1] != t[2] && t[0] != t[2])
        .collect();
    TriMesh {
        positions,
        triangles,
    }
}

/// Signed volume enclosed by a closed surface (divergence theorem; positive when outward).
pub fn enclosed_volume(s: &TriMesh) -> f64 {
    s.triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| s.positions[i as usize]);
            tet_signed_volume([0.0; 3], a, b, c)
        })
        .sum()
}

/// Smallest and largest dihedral angle (degrees) over the tets of `mesh` ((180, 0) when empty).
pub fn dihedral_range_deg(mesh: &TetMesh) -> (f64, f64) {
    let mut lo = 180.0f64;
    let mut hi = 0.0f64;
    for t in &mesh.tets {
        let p = t.map(|i| mesh.positions[i as usize]);
        let (a, b) = tet_dihedral_range(p);
        lo = lo.min(a);
        hi = hi.max(b);
    }
    (lo, hi)
}

fn check_resolution(r: usize) -> Result<(), TetrahedralizeError> {
    if r == 0 || r > MAX_RESOLUTION {
        return Err(TetrahedralizeError::BadResolution(r));
    }
    Ok(())
}

fn odd_edges(tris: &[[u32; 3]]) -> usize {
    let mut m: HashMap<(u32, u32), u32> = HashMap::with_capacity(tris.len() * 2);
    for t in tris {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            *m.entry((a.min(b), a.max(b))).or_default() += 1;
        }
    }
    m.values().filter(|&&c| c % 2 == 1).count()
}

fn bbox(points: impl Iterator<Item = V3>) -> (V3, V3) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    (lo, hi)
}

#[inline]
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
#[inline]
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
#[inline]
fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
#[inline]
fn lerp(a: V3, b: V3, t: f64) -> V3 {
    [
        a[0] + t * (b[0] - a[0]),
        a[1] + t * (b[1] - a[1]),
        a[2] + t * (b[2] - a[2]),
    ]
}

/// Smallest and largest dihedral angle of one tet, in degrees.
pub(crate) fn tet_dihedral_range(p: [V3; 4]) -> (f64, f64) {
    // Face f is opposite vertex f; its normal (any orientation, made outward below).
    let faces = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];
    let mut n = [[0.0; 3]; 4];
    for (f, fv) in faces.iter().enumerate() {
        let mut nf = cross(sub(p[fv[1]], p[fv[0]]), sub(p[fv[2]], p[fv[0]]));
        // Make it point away from the opposite vertex.
        if dot(nf, sub(p[f], p[fv[0]])) > 0.0 {
            nf = [-nf[0], -nf[1], -nf[2]];
        }
        let l = dot(nf, nf).sqrt();
        n[f] = if l > 0.0 {
            [nf[0] / l, nf[1] / l, nf[2] / l]
        } else {
            [0.0; 3]
        };
    }
    let mut lo = 180.0f64;
    let mut hi = 0.0f64;
    for i in 0..4 {
        for j in (i + 1)..4 {
            let c = (-dot(n[i], n[j])).clamp(-1.0, 1.0);
            let ang = c.acos().to_degrees();
            lo = lo.min(ang);
            hi = hi.max(ang);
        }
    }
    (lo, hi)
}

// ---------------------------------------------------------------------------------------------
// Domains

/// A region to fill: classification of lattice points, cut points on edges, point queries.
trait Domain: Sync {
    /// Inside flags for all lattice vertices.
    fn classify(&self, lat: &Lattice) -> Vec<bool>;
    /// A boundary point on the segment from `a` (inside) to `b` (outside).
    fn cut(&self, a: V3, b: V3) -> V3;
    /// Whether `p` is inside.
    fn inside(&self, p: V3) -> bool;
}

struct ImplicitDomain<F> {
    f: F,
}

impl<F: Fn(V3) -> f64 + Sync> Domain for ImplicitDomain<F> {
    fn classify(&self, lat: &Lattice) -> Vec<bool> {
        par_map(lat.count(), |i| (self.f)(lat.pos(i)) < 0.0)
    }
    fn cut(&self, a: V3, b: V3) -> V3 {
        // Regula falsi (Illinois) with bisection safeguard on t in [0, 1].
        let (mut t0, mut t1) = (0.0f64, 1.0f64);
        let (mut f0, mut f1) = ((self.f)(a), (self.f)(b));
        if f0 >= 0.0 || f1 < 0.0 {
            return lerp(a, b, 0.5);
        }
        let mut side = 0i32;
        for _ in 0..60 {
            let mut t = if (f1 - f0).abs() > 0.0 {
                (t0 * f1 - t1 * f0) / (f1 - f0)
            } else {
                0.5 * (t0 + t1)
            };
            if !(t > t0 && t < t1) {
                t = 0.5 * (t0 + t1);
            }
            let ft = (self.f)(lerp(a, b, t));
            if ft < 0.0 {
                t0 = t;
                f0 = ft;
                if side == -1 {
                    f1 *= 0.5;
                }
                side = -1;
            } else {
                t1 = t;
                f1 = ft;
                if side == 1 {
                    f0 *= 0.5;
                }
                side = 1;
            }
            if t1 - t0 < 1e-13 {
                break;
            }
        }
        lerp(a, b, 0.5 * (t0 + t1))
    }
    fn inside(&self, p: V3) -> bool {
        (self.f)(p) < 0.0
    }
}

/// A closed triangle surface with a bounding-volume hierarchy.
struct SurfaceDomain<'a> {
    s: &'a TriMesh,
    bvh: Bvh,
}

impl<'a> SurfaceDomain<'a> {
    fn new(s: &'a TriMesh) -> Self {
        let boxes: Vec<(V3, V3)> = s
            .triangles
            .iter()
            .map(|t| bbox(t.iter().map(|&v| s.positions[v as usize])))
            .collect();
        SurfaceDomain {
            s,
            bvh: Bvh::build(&boxes),
        }
    }

    fn tri(&self, t: u32) -> [V3; 3] {
        self.s.triangles[t as usize].map(|v| self.s.positions[v as usize])
    }

    /// x coordinates where the line `{(x, y, z)}` crosses the surface, sorted. Projected edges
    /// and vertices are resolved by a fixed symbolic perturbation of the line, so a line through a
    /// shared edge or vertex counts each sheet of surface exactly once.
    fn row_crossings(&self, y: f64, z: f64, out: &mut Vec<f64>) {
        out.clear();
        self.bvh.visit(
            |lo, hi| lo[1] <= y && y <= hi[1] && lo[2] <= z && z <= hi[2],
            |t| {
                let [a, b, c] = self.tri(t);
                if let Some(x) = line_x_crossing([a, b, c], y, z) {
                    out.push(x);
                }
            },
        );
        out.sort_by(|a, b| a.total_cmp(b));
    }
}

/// Where the line parallel to x through `(y, z)` crosses triangle `p`, with the perturbation
/// `(y, z) + (eps^2, eps)` deciding points on projected edges and vertices.
fn line_x_crossing(p: [V3; 3], y: f64, z: f64) -> Option<f64> {
    // Projected 2-D coordinates (u = y, v = z).
    let q = p.map(|a| [a[1], a[2]]);
    let area =
        (q[1][0] - q[0][0]) * (q[2][1] - q[0][1]) - (q[1][1] - q[0][1]) * (q[2][0] - q[0][0]);
    if area == 0.0 {
        return None;
    }
    let order: [usize; 3] = if area > 0.0 { [0, 1, 2] } else { [0, 2, 1] };
    let mut w = [0.0f64; 3];
    for k in 0..3 {
        let a = q[order[k]];
        let b = q[order[(k + 1) % 3]];
        // Edge function: > 0 when (y, z) is left of a->b (inside for a CCW projection).
        let e = (b[0] - a[0]) * (z - a[1]) - (b[1] - a[1]) * (y - a[0]);
        if e < 0.0 {
            return None;
        }
        if e == 0.0 {
            // Perturbed point (y + eps^2, z + eps): left of a->b iff d.u > 0, or d.u == 0 and d.v < 0.
            let du = b[0] - a[0];
            let dv = b[1] - a[1];
            if !(du > 0.0 || (du == 0.0 && dv < 0.0)) {
                return None;
            }
        }
        // Barycentric weight of the vertex opposite edge k.
        w[order[(k + 2) % 3]] = e;
    }
    let s = w[0] + w[1] + w[2];
    if s <= 0.0 {
        return None;
    }
    Some((w[0] * p[0][0] + w[1] * p[1][0] + w[2] * p[2][0]) / s)
}

impl Domain for SurfaceDomain<'_> {
    fn classify(&self, lat: &Lattice) -> Vec<bool> {
        // One ray per lattice row (fixed j, k, colour) classifies the whole row.
        let rows_black = (lat.n[1] + 1) * (lat.n[2] + 1);
        let rows_red = lat.n[1] * lat.n[2];
        let rows: Vec<Vec<bool>> = par_map(rows_black + rows_red, |r| {
            let (red, j, k, len) = if r < rows_black {
                (false, r % (lat.n[1] + 1), r / (lat.n[1] + 1), lat.n[0] + 1)
            } else {
                let r = r - rows_black;
                (true, r % lat.n[1], r / lat.n[1], lat.n[0])
            };
            let off = if red { 0.5 } else { 0.0 };
            let y = lat.o[1] + lat.h * (j as f64 + off);
            let z = lat.o[2] + lat.h * (k as f64 + off);
            let mut xs = Vec::new();
            self.row_crossings(y, z, &mut xs);
            (0..len)
                .map(|i| {
                    let x = lat.o[0] + lat.h * (i as f64 + off);
                    // Crossings at or beyond x (the point lies just before x_cross).
                    let beyond = xs.len() - xs.partition_point(|&c| c < x);
                    beyond % 2 == 1
                })
                .collect()
        });
        let mut inside = vec![false; lat.count()];
        for (r, row) in rows.into_iter().enumerate() {
            for (i, v) in row.into_iter().enumerate() {
                let idx = if r < rows_black {
                    let (j, k) = (r % (lat.n[1] + 1), r / (lat.n[1] + 1));
                    lat.black([i, j, k])
                } else {
                    let r = r - rows_black;
                    lat.red([i, r % lat.n[1], r / lat.n[1]])
                };
                inside[idx] = v;
            }
        }
        inside
    }

    fn cut(&self, a: V3, b: V3) -> V3 {
        let (lo, hi) = bbox([a, b].into_iter());
        let d = sub(b, a);
        let mut best: Option<f64> = None;
        self.bvh.visit(
            |nlo, nhi| (0..3).all(|k| nlo[k] <= hi[k] && lo[k] <= nhi[k]),
            |t| {
                if let Some(s) = segment_triangle(a, d, self.tri(t)) {
                    if best.map_or(true, |b| s < b) {
                        best = Some(s);
                    }
                }
            },
        );
        if let Some(t) = best {
            return lerp(a, b, t);
        }
        // Numerically missed crossing: bisection on the (consistent) parity classification.
        let (mut t0, mut t1) = (0.0, 1.0);
        for _ in 0..60 {
            let m = 0.5 * (t0 + t1);
            if self.inside(lerp(a, b, m)) {
                t0 = m;
            } else {
                t1 = m;
            }
        }
        lerp(a, b, 0.5 * (t0 + t1))
    }

    fn inside(&self, p: V3) -> bool {
        let mut xs = Vec::new();
        self.row_crossings(p[1], p[2], &mut xs);
        let beyond = xs.len() - xs.partition_point(|&c| c < p[0]);
        beyond % 2 == 1
    }
}

/// Parameter `t` in [0, 1] where the segment `a + t d` meets triangle `p` (Moller-Trumbore with
/// a small tolerance on the barycentric coordinates).
fn segment_triangle(a: V3, d: V3, p: [V3; 3]) -> Option<f64> {
    let e1 = sub(p[1], p[0]);
    let e2 = sub(p[2], p[0]);
    let pv = cross(d, e2);
    let det = dot(e1, pv);
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let inv = 1.0 / det;
    let tv = sub(a, p[0]);
    let u = dot(tv, pv) * inv;
    const EPS: f64 = 1e-10;
    if !(-EPS..=1.0 + EPS).contains(&u) {
        return None;
    }
    let qv = cross(tv, e1);
    let v = dot(d, qv) * inv;
    if v < -EPS || u + v > 1.0 + EPS {
        return None;
    }
    let t = dot(e2, qv) * inv;
    if (0.0..=1.0).contains(&t) {
        Some(t)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// BVH over triangle bounding boxes

struct BvhNode {
    lo: V3,
    hi: V3,
    /// Leaf: first index into `items`; inner: index of the left child (right = left + 1).
    start: u32,
    /// Leaf: number of items (> 0); inner: 0.
    count: u32,
}

struct Bvh {
    nodes: Vec<BvhNode>,
    items: Vec<u32>,
}

impl Bvh {
    fn build(boxes: &[(V3, V3)]) -> Bvh {
        let mut items: Vec<u32> = (0..boxes.len() as u32).collect();
        let mut nodes = vec![BvhNode {
            lo: [0.0; 3],
            hi: [0.0; 3],
            start: 0,
            count: 0,
        }];
        // (node, start, end)
        let mut stack = vec![(0usize, 0usize, items.len())];
        while let Some((ni, s, e)) = stack.pop() {
            let (lo, hi) = bbox(
                items[s..e]
                    .iter()
                    .flat_map(|&i| [boxes[i as usize].0, boxes[i as usize].1]),
            );
            nodes[ni].lo = lo;
            nodes[ni].hi = hi;
            if e - s <= 4 {
                nodes[ni].start = s as u32;
                nodes[ni].count = (e - s) as u32;
                continue;
            }
            let ext = sub(hi, lo);
            let axis = if ext[0] >= ext[1] && ext[0] >= ext[2] {
                0
            } else if ext[1] >= ext[2] {
                1
            } else {
                2
            };
            let mid = (s + e) / 2;
            let c = |i: &u32| boxes[*i as usize].0[axis] + boxes[*i as usize].1[axis];
            items[s..e].select_nth_unstable_by(mid - s, |a, b| c(a).total_cmp(&c(b)));
            let left = nodes.len();
            nodes.push(BvhNode {
                lo: [0.0; 3],
                hi: [0.0; 3],
                start: 0,
                count: 0,
            });
            nodes.push(BvhNode {
                lo: [0.0; 3],
                hi: [0.0; 3],
                start: 0,
                count: 0,
            });
            nodes[ni].start = left as u32;
            nodes[ni].count = 0;
            stack.push((left, s, mid));
            stack.push((left + 1, mid, e));
        }
        Bvh { nodes, items }
    }

    fn visit(&self, test: impl Fn(&V3, &V3) -> bool, mut leaf: impl FnMut(u32)) {
        if self.items.is_empty() {
            return;
        }
        let mut stack = vec![0usize];
        while let Some(ni) = stack.pop() {
            let n = &self.nodes[ni];
            if !test(&n.lo, &n.hi) {
                continue;
            }
            if n.count > 0 {
                for &it in &self.items[n.start as usize..(n.start + n.count) as usize] {
                    leaf(it);
                }
            } else {
                stack.push(n.start as usize);
                stack.push(n.start as usize + 1);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parallel helper

/// `(0..n).map(f)` evaluated on all cores in contiguous chunks.
fn par_map<T: Send, F: Fn(usize) -> T + Sync>(n: usize, f: F) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map(|t| t.get())
        .unwrap_or(1)
        .min(16);
    if threads <= 1 || n < 256 {
        return (0..n).map(f).collect();
    }
    let chunk = n.div_ceil(threads);
    let f = &f;
    let parts: Vec<Vec<T>> = crossbeam::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|c| {
                let (a, b) = (c * chunk, ((c + 1) * chunk).min(n));
                s.spawn(move |_| (a..b).map(f).collect::<Vec<T>>())
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    })
    .unwrap_or_default();
    let out: Vec<T> = parts.into_iter().flatten().collect();
    out
}

// ---------------------------------------------------------------------------------------------
// BCC lattice

/// Black vertices at `o + h (i, j, k)`, `i <= n[0]`...; red vertices at cell centres
/// `o + h (i + 1/2, j + 1/2, k + 1/2)`, `i < n[0]`...
struct Lattice {
    o: V3,
    h: f64,
    n: [usize; 3],
    nb: usize,
}

impl Lattice {
    fn count(&self) -> usize {
        self.nb + self.n[0] * self.n[1] * self.n[2]
    }
    fn black(&self, c: [usize; 3]) -> usize {
        c[0] + (self.n[0] + 1) * (c[1] + (self.n[1] + 1) * c[2])
    }
    fn red(&self, c: [usize; 3]) -> usize {
        self.nb + c[0] + self.n[0] * (c[1] + self.n[1] * c[2])
    }
    fn is_red(&self, i: usize) -> bool {
        i >= self.nb
    }
    /// Integer coordinates in half cells.
    fn half(&self, i: usize) -> [i64; 3] {
        if i < self.nb {
            let (a, b) = (self.n[0] + 1, self.n[1] + 1);
            [
                2 * (i % a) as i64,
                2 * ((i / a) % b) as i64,
                2 * (i / (a * b)) as i64,
            ]
        } else {
            let i = i - self.nb;
            let (a, b) = (self.n[0], self.n[1]);
            [
                2 * (i % a) as i64 + 1,
                2 * ((i / a) % b) as i64 + 1,
                2 * (i / (a * b)) as i64 + 1,
            ]
        }
    }
    fn pos(&self, i: usize) -> V3 {
        let c = self.half(i);
        [
            self.o[0] + 0.5 * self.h * c[0] as f64,
            self.o[1] + 0.5 * self.h * c[1] as f64,
            self.o[2] + 0.5 * self.h * c[2] as f64,
        ]
    }
    /// Index of the lattice vertex at half-cell coordinates `c`, if it exists.
    fn at_half(&self, c: [i64; 3]) -> Option<usize> {
        let odd = c[0] & 1;
        if (c[1] & 1) != odd || (c[2] & 1) != odd || c.iter().any(|&x| x < 0) {
            return None;
        }
        if odd == 0 {
            let g = [
                (c[0] / 2) as usize,
                (c[1] / 2) as usize,
                (c[2] / 2) as usize,
            ];
            (g[0] <= self.n[0] && g[1] <= self.n[1] && g[2] <= self.n[2]).then(|| self.black(g))
        } else {
            let g = [
                (c[0] / 2) as usize,
                (c[1] / 2) as usize,
                (c[2] / 2) as usize,
            ];
            (g[0] < self.n[0] && g[1] < self.n[1] && g[2] < self.n[2]).then(|| self.red(g))
        }
    }
    /// The (up to 14) lattice neighbours of vertex `i`.
    fn neighbours(&self, i: usize, out: &mut Vec<usize>) {
        out.clear();
        let c = self.half(i);
        for a in 0..3 {
            for s in [-2i64, 2] {
                let mut d = c;
                d[a] += s;
                if let Some(j) = self.at_half(d) {
                    out.push(j);
                }
            }
        }
        for dx in [-1i64, 1] {
            for dy in [-1i64, 1] {
                for dz in [-1i64, 1] {
                    if let Some(j) = self.at_half([c[0] + dx, c[1] + dy, c[2] + dz]) {
                        out.push(j);
                    }
                }
            }
        }
    }
}

#[inline]
fn edge_key(a: usize, b: usize) -> u64 {
    let (a, b) = (a.min(b) as u64, a.max(b) as u64);
    (a << 32) | b
}

/// The core of isosurface stuffing.
fn stuff<D: Domain>(
    domain: &D,
    lo: V3,
    hi: V3,
    resolution: usize,
) -> Result<(TetMesh, Report), TetrahedralizeError> {
    let ext = sub(hi, lo);
    let longest = ext[0].max(ext[1]).max(ext[2]);
    if !(longest > 0.0) || !longest.is_finite() {
        return Err(TetrahedralizeError::EmptySurface);
    }
    let h = longest / resolution as f64;
    let o = [lo[0] - h, lo[1] - h, lo[2] - h];
    let n = [0, 1, 2].map(|a| ((ext[a] / h).ceil() as usize).max(1) + 2);
    let nb = (n[0] + 1) * (n[1] + 1) * (n[2] + 1);
    let lat = Lattice { o, h, n, nb };
    let nv = lat.count();
    if nv as u64 >= u32::MAX as u64 / 2 {
        return Err(TetrahedralizeError::BadResolution(resolution));
    }

    // 1. Classify lattice vertices.
    let inside = domain.classify(&lat);
    // label: 1 inside, -1 outside, 0 on the surface (after warping).
    let mut label: Vec<i8> = inside.iter().map(|&b| if b { 1 } else { -1 }).collect();
    let mut pos: Vec<V3> = (0..nv).map(|i| lat.pos(i)).collect();

    // 2. Cut points on edges whose ends differ.
    let mut crossing: Vec<(usize, usize)> = Vec::new();
    let mut nb_buf = Vec::with_capacity(14);
    for v in 0..nv {
        lat.neighbours(v, &mut nb_buf);
        for &w in &nb_buf {
            if w > v && inside[v] != inside[w] {
                crossing.push((v, w));
            }
        }
    }
    let cut_pos: Vec<V3> = par_map(crossing.len(), |e| {
        let (v, w) = crossing[e];
        if inside[v] {
            domain.cut(pos[v], pos[w])
        } else {
            domain.cut(pos[w], pos[v])
        }
    });
    // edge -> (position, alive)
    let mut cuts: HashMap<u64, (V3, bool)> = HashMap::with_capacity(crossing.len());
    for (e, &(v, w)) in crossing.iter().enumerate() {
        cuts.insert(edge_key(v, w), (cut_pos[e], true));
    }

    // 3. Warp lattice vertices that are too close to a cut point.
    let mut warped = 0usize;
    for v in 0..nv {
        lat.neighbours(v, &mut nb_buf);
        let mut best: Option<(f64, V3)> = None;
        for &w in &nb_buf {
            if let Some(&(c, true)) = cuts.get(&edge_key(v, w)) {
                let len2 = dot(sub(pos[w], pos[v]), sub(pos[w], pos[v]));
                let frac = (dot(sub(c, pos[v]), sub(c, pos[v])) / len2).sqrt();
                let alpha = if lat.is_red(v) == lat.is_red(w) {
                    ALPHA_LONG
                } else {
                    ALPHA_SHORT
                };
                if frac < alpha && best.map_or(true, |(f, _)| frac < f) {
                    best = Some((frac, c));
                }
            }
        }
        if let Some((_, c)) = best {
            pos[v] = c;
            label[v] = 0;
            warped += 1;
            for &w in &nb_buf {
                if let Some(e) = cuts.get_mut(&edge_key(v, w)) {
                    e.1 = false;
                }
            }
        }
    }

    // 4. Fill every BCC tet with its stencil.
    let mut out = Builder {
        out_pos: Vec::new(),
        vid: vec![u32::MAX; nv],
        cut_vid: HashMap::new(),
        tets: Vec::new(),
    };
    let mut degenerate = 0usize;
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                let r = lat.red([i, j, k]);
                for a in 0..3 {
                    let mut c2 = [i, j, k];
                    c2[a] += 1;
                    if c2[a] >= n[a] {
                        continue;
                    }
                    let r2 = lat.red(c2);
                    let (b, c) = ((a + 1) % 3, (a + 2) % 3);
                    let mut corners = [0usize; 4];
                    for (m, (db, dc)) in [(0, 0), (1, 0), (1, 1), (0, 1)].into_iter().enumerate() {
                        let mut g = [i, j, k];
                        g[a] += 1;
                        g[b] += db;
                        g[c] += dc;
                        corners[m] = lat.black(g);
                    }
                    for m in 0..4 {
                        let t = [r, r2, corners[m], corners[(m + 1) % 4]];
                        degenerate += fill_tet(&lat, domain, &label, &pos, &cuts, t, &mut out);
                    }
                }
            }
        }
    }
    if degenerate > 0 {
        return Err(TetrahedralizeError::Degenerate(degenerate));
    }
    if out.tets.is_empty() {
        return Err(TetrahedralizeError::NoTets(h));
    }
    let mesh = TetMesh {
        positions: out.out_pos,
        tets: out.tets,
    };
    let (min_d, max_d) = dihedral_range_deg(&mesh);
    let inverted = (0..mesh.tets.len())
        .filter(|&t| !(mesh.tet_volume(t) > 0.0))
        .count();
    if inverted > 0 {
        return Err(TetrahedralizeError::Degenerate(inverted));
    }
    let report = Report {
        vertices: mesh.positions.len(),
        tets: mesh.tets.len(),
        cell_size: h,
        min_dihedral_deg: min_d,
        max_dihedral_deg: max_d,
        inverted,
        volume: mesh.total_volume_abs(),
        surface_volume: f64::NAN,
        warped_vertices: warped,
    };
    Ok((mesh, report))
}

/// Output under construction: vertices are created on first use.
struct Builder {
    out_pos: Vec<V3>,
    vid: Vec<u32>,
    cut_vid: HashMap<u64, u32>,
    tets: Vec<[u32; 4]>,
}

/// A vertex of a stencil: a lattice vertex or the cut point on a lattice edge.
#[derive(Clone, Copy)]
enum P {
    L(usize),
    C(usize, usize),
}

impl Builder {
    fn id(&mut self, p: P, pos: &[V3], cuts: &HashMap<u64, (V3, bool)>) -> u32 {
        match p {
            P::L(v) => {
                if self.vid[v] == u32::MAX {
                    self.vid[v] = self.out_pos.len() as u32;
                    self.out_pos.push(pos[v]);
                }
                self.vid[v]
            }
            P::C(a, b) => {
                let k = edge_key(a, b);
                if let Some(&id) = self.cut_vid.get(&k) {
                    return id;
                }
                let id = self.out_pos.len() as u32;
                self.out_pos
                    .push(cuts.get(&k).map(|c| c.0).unwrap_or(pos[a]));
                self.cut_vid.insert(k, id);
                id
            }
        }
    }
}

fn ppos(p: P, pos: &[V3], cuts: &HashMap<u64, (V3, bool)>) -> V3 {
    match p {
        P::L(v) => pos[v],
        P::C(a, b) => cuts.get(&edge_key(a, b)).map(|c| c.0).unwrap_or(pos[a]),
    }
}

/// In the lattice face `(u, v, w)` with `u`, `v` inside and `w` outside, the quadrilateral
/// `u, v, cut(v, w), cut(u, w)` is split by a diagonal from one of `u`, `v` to the cut point on
/// the other's edge to `w`. Returns that lattice vertex. Both tets sharing the face get the
/// same answer: the rule depends only on the face.
fn quad_diagonal_from(lat: &Lattice, u: usize, v: usize, w: usize) -> usize {
    let long_uv = lat.is_red(u) == lat.is_red(v);
    if !long_uv {
        // The face's long edge is (u, w) or (v, w): connect its cut point to the opposite vertex.
        return if lat.is_red(v) == lat.is_red(w) { u } else { v };
    }
    // Parity rule (Labelle & Shewchuk, Sec. 3): diagonal from A = u to C = cut(v, w) is used iff
    // (edge uv is black) == (odd number of axes with A > C).
    let ha = lat.half(u);
    let (hv, hw) = (lat.half(v), lat.half(w));
    let mut count = 0;
    for k in 0..3 {
        let greater = if hv[k] == hw[k] {
            ha[k] > hv[k]
        } else {
            ha[k] >= hv[k].max(hw[k])
        };
        count += greater as i32;
    }
    let black = !lat.is_red(u);
    if black == (count % 2 == 1) {
        u
    } else {
        v
    }
}

/// Emits the stencil for one BCC tet; returns the number of degenerate output tets.
#[allow(clippy::too_many_arguments)]
fn fill_tet<D: Domain>(
    lat: &Lattice,
    domain: &D,
    label: &[i8],
    pos: &[V3],
    cuts: &HashMap<u64, (V3, bool)>,
    t: [usize; 4],
    out: &mut Builder,
) -> usize {
    let ins: Vec<usize> = t.iter().copied().filter(|&v| label[v] > 0).collect();
    let outs: Vec<usize> = t.iter().copied().filter(|&v| label[v] < 0).collect();
    let zeros: Vec<usize> = t.iter().copied().filter(|&v| label[v] == 0).collect();
    let mut pieces: Vec<[P; 4]> = Vec::with_capacity(3);
    if outs.is_empty() {
        if ins.is_empty() {
            // All four on the surface: keep iff the centroid is inside.
            let c = t.iter().fold([0.0; 3], |s, &v| {
                [
                    s[0] + pos[v][0] / 4.0,
                    s[1] + pos[v][1] / 4.0,
                    s[2] + pos[v][2] / 4.0,
                ]
            });
            if !domain.inside(c) {
                return 0;
            }
        }
        pieces.push(t.map(P::L));
    } else if ins.is_empty() {
        return 0;
    } else if ins.len() == 1 {
        let p = ins[0];
        pieces.push(t.map(|v| if label[v] < 0 { P::C(p, v) } else { P::L(v) }));
    } else if ins.len() == 2 && zeros.len() == 1 {
        // Pyramid: apex z, base quad (p0, p1, c1, c0).
        let (p0, p1, z, o) = (ins[0], ins[1], zeros[0], outs[0]);
        let (c0, c1) = (P::C(p0, o), P::C(p1, o));
        if quad_diagonal_from(lat, p0, p1, o) == p0 {
            pieces.push([P::L(z), P::L(p0), P::L(p1), c1]);
            pieces.push([P::L(z), P::L(p0), c1, c0]);
        } else {
            pieces.push([P::L(z), P::L(p0), P::L(p1), c0]);
            pieces.push([P::L(z), P::L(p1), c1, c0]);
        }
    } else if ins.len() == 2 {
        // Wedge: triangles (p0, c02, c03) and (p1, c12, c13).
        let (p0, p1, o2, o3) = (ins[0], ins[1], outs[0], outs[1]);
        let a = [P::L(p0), P::C(p0, o2), P::C(p0, o3)];
        let b = [P::L(p1), P::C(p1, o2), P::C(p1, o3)];
        // Quad 0 (verticals 0, 1) lies in face (p0, p1, o2); quad 2 (verticals 2, 0) in (p0, p1, o3).
        let d0 = quad_diagonal_from(lat, p0, p1, o2) == p0; // forward: a0-b1
        let d2 = quad_diagonal_from(lat, p0, p1, o3) == p1; // forward: a2-b0
        let mut best: Option<(f64, Vec<[P; 4]>)> = None;
        for d1 in [true, false] {
            let diag = [d0, d1, d2];
            if diag.iter().all(|&x| x) || diag.iter().all(|&x| !x) {
                continue;
            }
            let cand = split_prism(a, b, diag);
            let q = cand
                .iter()
                .map(|pc| tet_dihedral_range(pc.map(|p| ppos(p, pos, cuts))).0)
                .fold(f64::INFINITY, f64::min);
            if best.as_ref().map_or(true, |(bq, _)| q > *bq) {
                best = Some((q, cand));
            }
        }
        if let Some((_, c)) = best {
            pieces.extend(c);
        }
    } else {
        // Three inside, one outside: prism (p0, p1, p2) / (c0, c1, c2).
        let (p, o) = ([ins[0], ins[1], ins[2]], outs[0]);
        let a = p.map(P::L);
        let b = p.map(|v| P::C(v, o));
        let diag = [0, 1, 2].map(|q| quad_diagonal_from(lat, p[q], p[(q + 1) % 3], o) == p[q]);
        // Never cyclic: the two quads on the short edges both use the cut point on the long edge
        // through the outside vertex. An empty split is counted as degenerate (mesh refused).
        let split = split_prism(a, b, diag);
        if split.is_empty() {
            return 1;
        }
        pieces.extend(split);
    }
    let mut degenerate = 0;
    for pc in pieces {
        let pp = pc.map(|p| ppos(p, pos, cuts));
        let vol = tet_signed_volume(pp[0], pp[1], pp[2], pp[3]);
        let scale = lat.h * lat.h * lat.h;
        if !(vol.abs() > 1e-12 * scale) {
            degenerate += 1;
            continue;
        }
        let mut ids = pc.map(|p| out.id(p, pos, cuts));
        if vol < 0.0 {
            ids.swap(2, 3);
        }
        out.tets.push(ids);
    }
    degenerate
}

/// Splits the prism with bottom `a`, top `b` (vertical edges `a_i b_i`) into three tets, given
/// for each side quad `q` (between verticals `q` and `q+1`) whether its diagonal is `a_q b_{q+1}`
/// (`true`) or `a_{q+1} b_q` (`false`). The diagonals must not be all equal (cyclic).
fn split_prism(a: [P; 3], b: [P; 3], diag: [bool; 3]) -> Vec<[P; 4]> {
    for i in 0..3 {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        // a_i carries the diagonals of quads i and i-1 (= i2).
        if diag[i] && !diag[i2] {
            let mut v = vec![[a[i], b[0], b[1], b[2]]];
            if diag[i1] {
                v.push([a[i], a[i1], a[i2], b[i2]]);
                v.push([a[i], a[i1], b[i2], b[i1]]);
            } else {
                v.push([a[i], a[i1], a[i2], b[i1]]);
                v.push([a[i], a[i2], b[i2], b[i1]]);
            }
            return v;
        }
        // b_i carries the diagonals of quads i (a_{i+1} b_i) and i-1 (a_{i-1} b_i).
        if !diag[i] && diag[i2] {
            let mut v = vec![[b[i], a[0], a[1], a[2]]];
            if diag[i1] {
                v.push([b[i], b[i1], b[i2], a[i1]]);
                v.push([b[i], a[i1], a[i2], b[i2]]);
            } else {
                v.push([b[i], b[i1], b[i2], a[i2]]);
                v.push([b[i], a[i1], a[i2], b[i1]]);
            }
            return v;
        }
    }
    Vec::new()
}
