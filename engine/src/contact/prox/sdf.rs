//! Rest-space signed distance grids and the Frank–Wolfe deepest-point search of RAINBOW's
//! contact generation (report §2.3.2; code `geometry/grid3.py`,
//! `prox_soft_bodies/collision_detection.py`).
//!
//! A grid holds `I × J × K` nodes (RAINBOW's `resolution` per axis) over the rest bounding box
//! padded by `padding` on every side (RAINBOW: `max(0.1 · largest extent, 2 · envelope)`); the
//! node values are exact signed distances to the boundary surface, negative inside (igl's
//! `signed_distance`): the unsigned distance to the closest triangle, signed by the
//! angle-weighted pseudonormal of the closest feature (Bærentzen & Aanæs 2005). Values between
//! nodes are trilinear, with the cell index clamped to the grid as `grid3.get_value` (linear
//! extrapolation outside).
//!
//! Differences from RAINBOW's code, all ours:
//! - `grid3.get_gradient` divides the cell-local coordinates by `min_coord` instead of the
//!   spacing; [`SdfGrid::gradient`] is the true gradient of the trilinear interpolant.
//! - `grid3.is_inside` keeps only points at least 0.5 m (an absolute default) inside the grid
//!   box, which rejects every point of bodies thinner than about 1 m − 2 · padding (the spec's
//!   0.5 m cube and 5 cm sheet); [`SdfGrid::contains`] takes the margin as an argument.
//! - The Frank–Wolfe stop test: RAINBOW stops after stepping when `min_v s_v · ∇φ(x)` exceeds
//!   the tolerance, which depends on the material frame's origin; [`frank_wolfe`] stops before
//!   stepping when the duality gap `max_v (x − s_v) · ∇φ(x)` is at most the tolerance.

#![allow(clippy::neg_cmp_op_on_partial_ord)]

use crate::math::Vec3;
use std::collections::HashMap;

/// The feature of a triangle holding the closest point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Feature {
    Vertex(usize),
    /// Edge from corner i to corner (i + 1) mod 3.
    Edge(usize),
    Face,
}

/// Closest point of the triangle `t` to `p` and its feature (Ericson, *Real-Time Collision
/// Detection*, 5.1.5); a degenerate triangle gives its closest corner.
fn closest_on_triangle(p: &Vec3, t: &[Vec3; 3]) -> (Vec3, Feature) {
    let [a, b, c] = *t;
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, Feature::Vertex(0));
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (b, Feature::Vertex(1));
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return (a + ab * (d1 / (d1 - d3)), Feature::Edge(0));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (c, Feature::Vertex(2));
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return (a + ac * (d2 / (d2 - d6)), Feature::Edge(2));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + (c - b) * w, Feature::Edge(1));
    }
    let sum = va + vb + vc;
    if !(sum > 0.0) {
        let best = (0..3)
            .min_by(|&i, &j| {
                (p - t[i])
                    .norm_squared()
                    .total_cmp(&(p - t[j]).norm_squared())
            })
            .unwrap_or(0);
        return (t[best], Feature::Vertex(best));
    }
    (a + ab * (vb / sum) + ac * (vc / sum), Feature::Face)
}

/// Largest grid resolution (nodes per axis) accepted: 256³ f64 values are 128 MiB.
pub const MAX_RESOLUTION: usize = 256;

/// A regular grid of signed distances in a body's rest (material) space.
#[derive(Debug, Clone, PartialEq)]
pub struct SdfGrid {
    /// Position of node (0, 0, 0) (m).
    pub min: Vec3,
    /// Position of the last node (m).
    pub max: Vec3,
    /// Nodes per axis.
    pub dims: [usize; 3],
    /// Node spacing per axis (m).
    pub spacing: Vec3,
    /// Node values (m), node (i, j, k) at `i + I (j + J k)`.
    pub values: Vec<f64>,
}

/// Outward boundary triangles of a tet mesh and the tet owning each (RAINBOW's
/// `compute_surface`: surface and owners). Tets of either orientation are accepted.
pub fn boundary_with_owners(x: &[Vec3], tets: &[[u32; 4]]) -> (Vec<[u32; 3]>, Vec<u32>) {
    let mut count: HashMap<[u32; 3], (u32, [u32; 3])> = HashMap::new();
    let mut order = Vec::new();
    for (t, tet) in tets.iter().enumerate() {
        let [a, b, c, d] = *tet;
        let (pa, pb, pc, pd) = (x[a as usize], x[b as usize], x[c as usize], x[d as usize]);
        let positive = (pb - pa).cross(&(pc - pa)).dot(&(pd - pa)) > 0.0;
        let faces = [[a, c, b], [a, b, d], [a, d, c], [b, c, d]];
        for f in faces {
            let f = if positive { f } else { [f[0], f[2], f[1]] };
            let mut key = f;
            key.sort_unstable();
            match count.get_mut(&key) {
                Some(e) => e.0 = u32::MAX,
                None => {
                    count.insert(key, (t as u32, f));
                    order.push(key);
                }
            }
        }
    }
    let mut tris = Vec::new();
    let mut owners = Vec::new();
    for key in order {
        if let Some(&(owner, f)) = count.get(&key) {
            if owner != u32::MAX {
                tris.push(f);
                owners.push(owner);
            }
        }
    }
    (tris, owners)
}

/// Angle-weighted pseudonormals of a closed triangle surface: per face, per edge and per vertex.
struct Pseudonormals {
    face: Vec<Vec3>,
    edge: HashMap<(u32, u32), Vec3>,
    vertex: Vec<Vec3>,
}

impl Pseudonormals {
    fn new(x: &[Vec3], tris: &[[u32; 3]]) -> Self {
        let mut face = Vec::with_capacity(tris.len());
        let mut edge: HashMap<(u32, u32), Vec3> = HashMap::new();
        let mut vertex = vec![Vec3::zeros(); x.len()];
        for t in tris {
            let p = t.map(|i| x[i as usize]);
            let n = (p[1] - p[0]).cross(&(p[2] - p[0]));
            let n = if n.norm() > 0.0 { n.normalize() } else { n };
            face.push(n);
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                *edge.entry((a.min(b), a.max(b))).or_insert_with(Vec3::zeros) += n;
                let (u, v) = (p[(k + 1) % 3] - p[k], p[(k + 2) % 3] - p[k]);
                let angle = u.angle(&v);
                if angle.is_finite() {
                    vertex[t[k] as usize] += n * angle;
                }
            }
        }
        Pseudonormals { face, edge, vertex }
    }

    fn of(&self, tri: usize, t: &[u32; 3], feature: Feature) -> Vec3 {
        let e = |a: u32, b: u32| {
            self.edge
                .get(&(a.min(b), a.max(b)))
                .copied()
                .unwrap_or_default()
        };
        match feature {
            Feature::Vertex(i) => self.vertex[t[i] as usize],
            Feature::Edge(i) => e(t[i], t[(i + 1) % 3]),
            Feature::Face => self.face[tri],
        }
    }
}

/// Squared distance from `p` to the box `[lo, hi]`.
fn box_sq_dist(p: &Vec3, lo: &Vec3, hi: &Vec3) -> f64 {
    (0..3)
        .map(|i| {
            let d = (lo[i] - p[i]).max(0.0).max(p[i] - hi[i]);
            d * d
        })
        .sum()
}

impl SdfGrid {
    /// The signed distance grid of the closed outward surface `tris` over rest positions `x`,
    /// with `resolution` nodes per axis (2..=[`MAX_RESOLUTION`]) over the bounding box padded by
    /// `padding` (m, ≥ 0).
    pub fn build(
        x: &[Vec3],
        tris: &[[u32; 3]],
        resolution: usize,
        padding: f64,
    ) -> Result<Self, String> {
        if !(2..=MAX_RESOLUTION).contains(&resolution) {
            return Err(format!(
                "resolution {resolution} must be in 2..={MAX_RESOLUTION}"
            ));
        }
        if !(padding.is_finite() && padding >= 0.0) {
            return Err(format!("padding {padding} must be finite and >= 0"));
        }
        if tris.is_empty() {
            return Err("no surface triangles".into());
        }
        if let Some(t) = tris
            .iter()
            .find(|t| t.iter().any(|&i| i as usize >= x.len()))
        {
            return Err(format!("triangle {t:?} indexes past {} vertices", x.len()));
        }
        let mut lo = Vec3::repeat(f64::INFINITY);
        let mut hi = Vec3::repeat(f64::NEG_INFINITY);
        for t in tris {
            for &i in t {
                lo = lo.inf(&x[i as usize]);
                hi = hi.sup(&x[i as usize]);
            }
        }
        if !(lo.iter().chain(hi.iter()).all(|v| v.is_finite())) {
            return Err("surface positions are not finite".into());
        }
        let min = lo - Vec3::repeat(padding);
        let max = hi + Vec3::repeat(padding);
        let dims = [resolution; 3];
        let spacing = (max - min) / (resolution - 1) as f64;
        if spacing.iter().any(|&s| !(s > 0.0)) {
            return Err("the padded bounding box is flat (use a positive padding)".into());
        }
        let normals = Pseudonormals::new(x, tris);
        let boxes: Vec<(Vec3, Vec3)> = tris
            .iter()
            .map(|t| {
                let p = t.map(|i| x[i as usize]);
                (p[0].inf(&p[1]).inf(&p[2]), p[0].sup(&p[1]).sup(&p[2]))
            })
            .collect();
        let mut values = vec![0.0; resolution * resolution * resolution];
        let mut hint = 0usize;
        for k in 0..resolution {
            for j in 0..resolution {
                for i in 0..resolution {
                    let p = min + Vec3::new(i as f64, j as f64, k as f64).component_mul(&spacing);
                    let tri_of = |ti: usize| {
                        let (q, f) = closest_on_triangle(&p, &tris[ti].map(|v| x[v as usize]));
                        ((p - q).norm_squared(), p - q, f)
                    };
                    let mut best = (tri_of(hint), hint);
                    for (ti, (blo, bhi)) in boxes.iter().enumerate() {
                        if ti != hint && box_sq_dist(&p, blo, bhi) < best.0 .0 {
                            let c = tri_of(ti);
                            if c.0 < best.0 .0 {
                                best = (c, ti);
                            }
                        }
                    }
                    hint = best.1;
                    let ((sq, diff, feature), ti) = best;
                    let n = normals.of(ti, &tris[ti], feature);
                    let d = sq.sqrt();
                    values[i + resolution * (j + resolution * k)] =
                        if diff.dot(&n) < 0.0 { -d } else { d };
                }
            }
        }
        Ok(SdfGrid {
            min,
            max,
            dims,
            spacing,
            values,
        })
    }

    fn node(&self, i: usize, j: usize, k: usize) -> f64 {
        self.values[i + self.dims[0] * (j + self.dims[1] * k)]
    }

    /// Enclosing cell (clamped to the grid) and the local coordinates in it (unclamped).
    fn cell(&self, p: &Vec3) -> ([usize; 3], Vec3) {
        let mut idx = [0usize; 3];
        let mut s = Vec3::zeros();
        for a in 0..3 {
            let f = ((p[a] - self.min[a]) / self.spacing[a]).floor();
            let c = if f.is_finite() {
                (f.max(0.0) as usize).min(self.dims[a] - 2)
            } else {
                0
            };
            idx[a] = c;
            s[a] = (p[a] - (c as f64 * self.spacing[a] + self.min[a])) / self.spacing[a];
        }
        (idx, s)
    }

    fn corners(&self, c: [usize; 3]) -> [f64; 8] {
        let [i, j, k] = c;
        [
            self.node(i, j, k),
            self.node(i, j, k + 1),
            self.node(i, j + 1, k),
            self.node(i, j + 1, k + 1),
            self.node(i + 1, j, k),
            self.node(i + 1, j, k + 1),
            self.node(i + 1, j + 1, k),
            self.node(i + 1, j + 1, k + 1),
        ]
    }

    /// Trilinear value at `p` (m; the closest cell outside the grid, as `grid3.get_value`).
    pub fn value(&self, p: &Vec3) -> f64 {
        let (c, s) = self.cell(p);
        let [d000, d001, d010, d011, d100, d101, d110, d111] = self.corners(c);
        let x00 = (d100 - d000) * s.x + d000;
        let x01 = (d101 - d001) * s.x + d001;
        let x10 = (d110 - d010) * s.x + d010;
        let x11 = (d111 - d011) * s.x + d011;
        let y0 = (x10 - x00) * s.y + x00;
        let y1 = (x11 - x01) * s.y + x01;
        (y1 - y0) * s.z + y0
    }

    /// Gradient of the trilinear interpolant at `p` (dimensionless).
    pub fn gradient(&self, p: &Vec3) -> Vec3 {
        let (c, s) = self.cell(p);
        let [d000, d001, d010, d011, d100, d101, d110, d111] = self.corners(c);
        let x00 = (d100 - d000) * s.x + d000;
        let x01 = (d101 - d001) * s.x + d001;
        let x10 = (d110 - d010) * s.x + d010;
        let x11 = (d111 - d011) * s.x + d011;
        let y0 = (x10 - x00) * s.y + x00;
        let y1 = (x11 - x01) * s.y + x01;
        let (dx00, dx01, dx10, dx11) = (d100 - d000, d101 - d001, d110 - d010, d111 - d011);
        let dy0_ds = (dx10 - dx00) * s.y + dx00;
        let dy1_ds = (dx11 - dx01) * s.y + dx01;
        let dp_ds = (dy1_ds - dy0_ds) * s.z + dy0_ds;
        let dp_dt = ((x11 - x01) - (x10 - x00)) * s.z + (x10 - x00);
        let dp_du = y1 - y0;
        Vec3::new(
            dp_ds / self.spacing.x,
            dp_dt / self.spacing.y,
            dp_du / self.spacing.z,
        )
    }

    /// Whether `p` lies at least `margin` (m) inside the grid box.
    pub fn contains(&self, p: &Vec3, margin: f64) -> bool {
        (0..3).all(|a| p[a] >= self.min[a] + margin && p[a] <= self.max[a] - margin)
    }
}

/// Outcome of [`frank_wolfe`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeepestPoint {
    /// The point (material space, m).
    pub point: Vec3,
    /// Its barycentric coordinates in the triangle.
    pub barycentric: [f64; 3],
    /// Iterations taken.
    pub iterations: u32,
}

/// Relative size below which Frank–Wolfe treats slopes and gradient norms as ties: the grid's
/// values carry rounding noise (~1e-16 relative) that would otherwise pick corners and steps in
/// flat regions (above a face) at random.
pub const FW_TIE: f64 = 1e-12;

/// Frank–Wolfe minimisation of the grid's value over the triangle `tri` (material space):
/// start at the corner with the smallest gradient norm (RAINBOW; the first corner among ties),
/// then at iteration i move toward the corner of steepest descent by α = 2/(i + 2), stopping
/// first when the duality gap is at most `tolerance` (plus rounding: [`FW_TIE`] × |∇φ| × the
/// triangle's size); at most `max_iterations` steps.
pub fn frank_wolfe(
    grid: &SdfGrid,
    tri: &[Vec3; 3],
    max_iterations: u32,
    tolerance: f64,
) -> DeepestPoint {
    let norms = tri.map(|p| grid.gradient(&p).norm());
    let start = (0..3).fold(0, |b, v| {
        if norms[v] < norms[b] * (1.0 - FW_TIE) {
            v
        } else {
            b
        }
    });
    let size = (tri[1] - tri[0])
        .norm()
        .max((tri[2] - tri[0]).norm())
        .max((tri[2] - tri[1]).norm());
    let mut beta = [0.0; 3];
    beta[start] = 1.0;
    let mut x = tri[start];
    let mut iterations = 0;
    for i in 0..max_iterations {
        let g = grid.gradient(&x);
        let slopes = tri.map(|s| (s - x).dot(&g));
        let v = (0..3).fold(0, |b, v| if slopes[v] < slopes[b] { v } else { b });
        if -slopes[v] <= tolerance + FW_TIE * g.norm() * size {
            break;
        }
        let alpha = 2.0 / (i as f64 + 2.0);
        x += (tri[v] - x) * alpha;
        for (k, b) in beta.iter_mut().enumerate() {
            *b = *b * (1.0 - alpha) + if k == v { alpha } else { 0.0 };
        }
        iterations += 1;
    }
    DeepestPoint {
        point: x,
        barycentric: beta,
        iterations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::procedural::{box_tets, CellSplit};

    fn cube(n: usize, size: f64) -> (Vec<Vec3>, Vec<[u32; 4]>) {
        let h = size / n as f64;
        let m = box_tets([n; 3], [h; 3], [-size / 2.0; 3], CellSplit::Five);
        (m.positions.iter().map(|p| Vec3::from(*p)).collect(), m.tets)
    }

    #[test]
    fn boundary_of_a_box_is_outward_and_owned() {
        let (x, tets) = cube(3, 1.0);
        let (tris, owners) = boundary_with_owners(&x, &tets);
        assert_eq!(tris.len(), 12 * 9);
        for (t, &o) in tris.iter().zip(&owners) {
            let p = t.map(|i| x[i as usize]);
            let n = (p[1] - p[0]).cross(&(p[2] - p[0]));
            let c = (p[0] + p[1] + p[2]) / 3.0;
            assert!(n.dot(&c) > 0.0, "inward triangle {t:?}");
            assert!(t.iter().all(|v| tets[o as usize].contains(v)));
        }
    }

    #[test]
    fn grid_of_a_cube_is_its_signed_distance() {
        let (x, tets) = cube(3, 1.0);
        let (tris, _) = boundary_with_owners(&x, &tets);
        let g = SdfGrid::build(&x, &tris, 21, 0.25).unwrap();
        // Exact box signed distance at the nodes.
        let exact = |p: &Vec3| {
            let q = p.abs() - Vec3::repeat(0.5);
            let outside = q.sup(&Vec3::zeros()).norm();
            outside + q.max().min(0.0)
        };
        for (idx, &v) in g.values.iter().enumerate() {
            let (i, j, k) = (idx % 21, (idx / 21) % 21, idx / 441);
            let p = g.min + Vec3::new(i as f64, j as f64, k as f64).component_mul(&g.spacing);
            assert!(
                (v - exact(&p)).abs() < 1e-12,
                "node {p:?}: {v} vs {}",
                exact(&p)
            );
        }
        // Trilinear value and its gradient (finite differences).
        let p = Vec3::new(0.13, -0.27, 0.41);
        let gr = g.gradient(&p);
        let h = 1e-6;
        for a in 0..3 {
            let mut e = Vec3::zeros();
            e[a] = h;
            let fd = (g.value(&(p + e)) - g.value(&(p - e))) / (2.0 * h);
            assert!((fd - gr[a]).abs() < 1e-6, "axis {a}: {fd} vs {}", gr[a]);
        }
        // Near the top face, inside: about -(0.5 - z), gradient +z.
        let p = Vec3::new(0.05, 0.02, 0.45);
        assert!((g.value(&p) + 0.05).abs() < 0.02);
        assert!(g.gradient(&p).z > 0.9);
        assert!(g.contains(&p, 0.0) && !g.contains(&Vec3::new(0.0, 0.0, 0.8), 0.0));
        assert!(SdfGrid::build(&x, &tris, 1, 0.25).is_err());
        assert!(SdfGrid::build(&x, &tris, 300, 0.25).is_err());
    }

    #[test]
    fn frank_wolfe_finds_the_deepest_corner() {
        let (x, tets) = cube(2, 1.0);
        let (tris, _) = boundary_with_owners(&x, &tets);
        let g = SdfGrid::build(&x, &tris, 17, 0.25).unwrap();
        // A triangle dipping into the top face with its deepest corner at (0.1, 0, 0.4).
        let tri = [
            Vec3::new(-0.3, -0.2, 0.55),
            Vec3::new(0.1, 0.0, 0.4),
            Vec3::new(0.3, 0.3, 0.6),
        ];
        let d = frank_wolfe(&g, &tri, 8, 0.0);
        assert!((g.value(&d.point) - g.value(&tri[1])).abs() < 1e-9, "{d:?}");
        let b = d.barycentric;
        let rebuilt = tri[0] * b[0] + tri[1] * b[1] + tri[2] * b[2];
        assert!((rebuilt - d.point).norm() < 1e-12);
    }
}
