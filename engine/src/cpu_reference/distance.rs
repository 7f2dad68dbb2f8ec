//! Exact distances between contact primitives: point–point, point–edge, point–triangle and
//! edge–edge, in f32 (mirrors the GPU) or f64 (the reference). Plain-Rust twin of
//! `kernels/include/distance.glsl`: same candidates, same order, same comparisons.
//!
//! Every query returns the squared distance (m²), the closest-feature pair (named as in the IPC
//! Toolkit), and signed weights `w` with `diff = Σ_k w_k x_k` = closest point of the first
//! primitive minus closest point of the second. The barycentric coordinates of the closest
//! points are read off the weights, and `∂d²/∂x_k = 2 w_k diff` (the closest points are
//! stationary inside their features, so the weights do not contribute).
//!
//! Robustness: every query is evaluated relative to its first vertex and scaled by a power of
//! two (exact) so that coordinates lie in [-1, 1]; tiny or far-from-origin primitives keep full
//! relative precision and f32 neither underflows nor overflows. The squared distance is the
//! minimum over all candidate features whose foot point lies strictly inside the feature
//! (vertices always count); every candidate is the distance between two actual points of the
//! primitives, so rounding can only err upwards by a second-order amount and nearly parallel
//! edges or sliver triangles need no special threshold: the four point–edge candidates always
//! take part, and the interior (line–line / face) candidate only when its foot is interior.

use nalgebra::{RealField, Vector3};

/// Floating-point type the geometric references run in: f32 mirrors the GPU, f64 is the reference.
pub trait Real: RealField + Copy {
    /// Machine epsilon of the type (2^-23 or 2^-52).
    fn epsilon() -> Self;
    /// Rounds an f64 to this type.
    fn of(x: f64) -> Self;
    /// Widens to f64 (exact).
    fn to_f64(self) -> f64;
    /// `2^-e` where `m = f·2^e`, `f ∈ [0.5, 1)` (exponent clamped to the normal range; 1 for 0
    /// and non-finite `m`): multiplying by it is exact and brings `m` into [0.5, 1).
    fn inv_pow2_scale(m: Self) -> Self;
}

fn frexp_exponent(m: f64) -> i32 {
    if m == 0.0 || !m.is_finite() {
        return 0;
    }
    let m = m.abs();
    let bits = m.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Subnormal: scale into the normal range first.
        return frexp_exponent(m * 2f64.powi(64)) - 64;
    }
    biased - 1022
}

impl Real for f32 {
    fn epsilon() -> Self {
        f32::EPSILON
    }
    fn of(x: f64) -> Self {
        x as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn inv_pow2_scale(m: Self) -> Self {
        if m == 0.0 || !m.is_finite() {
            return 1.0;
        }
        let e = frexp_exponent(m as f64).clamp(-125, 126);
        2f32.powi(-e)
    }
}

impl Real for f64 {
    fn epsilon() -> Self {
        f64::EPSILON
    }
    fn of(x: f64) -> Self {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn inv_pow2_scale(m: Self) -> Self {
        if m == 0.0 || !m.is_finite() {
            return 1.0;
        }
        let e = frexp_exponent(m).clamp(-1021, 1022);
        2f64.powi(-e)
    }
}

/// Closest features of a point–edge pair (GPU code = discriminant).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointEdgeKind {
    /// The edge's first vertex (IPC Toolkit `P_E0`).
    Vertex0 = 0,
    /// The edge's second vertex (`P_E1`).
    Vertex1 = 1,
    /// The interior of the edge (`P_E`).
    Interior = 2,
}

/// Closest features of a point–triangle pair (GPU code = discriminant).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointTriangleKind {
    /// Triangle vertex t0 (IPC Toolkit `P_T0`).
    Vertex0 = 0,
    /// Triangle vertex t1 (`P_T1`).
    Vertex1 = 1,
    /// Triangle vertex t2 (`P_T2`).
    Vertex2 = 2,
    /// Interior of edge (t0, t1) (`P_E0`).
    Edge01 = 3,
    /// Interior of edge (t1, t2) (`P_E1`).
    Edge12 = 4,
    /// Interior of edge (t2, t0) (`P_E2`).
    Edge20 = 5,
    /// Interior of the triangle (`P_T`).
    Face = 6,
}

/// Closest features of an edge–edge pair, edges a = (ea0, ea1) and b = (eb0, eb1) (GPU code =
/// discriminant).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeEdgeKind {
    /// Vertices ea0 and eb0 (IPC Toolkit `EA0_EB0`).
    A0B0 = 0,
    /// Vertices ea0 and eb1 (`EA0_EB1`).
    A0B1 = 1,
    /// Vertices ea1 and eb0 (`EA1_EB0`).
    A1B0 = 2,
    /// Vertices ea1 and eb1 (`EA1_EB1`).
    A1B1 = 3,
    /// Interior of edge a and vertex eb0 (`EA_EB0`).
    AB0 = 4,
    /// Interior of edge a and vertex eb1 (`EA_EB1`).
    AB1 = 5,
    /// Vertex ea0 and interior of edge b (`EA0_EB`).
    A0B = 6,
    /// Vertex ea1 and interior of edge b (`EA1_EB`).
    A1B = 7,
    /// Interiors of both edges (`EA_EB`).
    AB = 8,
}

impl PointTriangleKind {
    /// All kinds in code order.
    pub const ALL: [PointTriangleKind; 7] = [
        Self::Vertex0,
        Self::Vertex1,
        Self::Vertex2,
        Self::Edge01,
        Self::Edge12,
        Self::Edge20,
        Self::Face,
    ];
    /// The kind with GPU code `c`, if any.
    pub fn from_code(c: u32) -> Option<Self> {
        Self::ALL.get(c as usize).copied()
    }
    /// The IPC Toolkit name (`P_T0` … `P_T`).
    pub fn ipctk_name(self) -> &'static str {
        ["P_T0", "P_T1", "P_T2", "P_E0", "P_E1", "P_E2", "P_T"][self as usize]
    }
}

impl EdgeEdgeKind {
    /// All kinds in code order.
    pub const ALL: [EdgeEdgeKind; 9] = [
        Self::A0B0,
        Self::A0B1,
        Self::A1B0,
        Self::A1B1,
        Self::AB0,
        Self::AB1,
        Self::A0B,
        Self::A1B,
        Self::AB,
    ];
    /// The kind with GPU code `c`, if any.
    pub fn from_code(c: u32) -> Option<Self> {
        Self::ALL.get(c as usize).copied()
    }
    /// The IPC Toolkit name (`EA0_EB0` … `EA_EB`).
    pub fn ipctk_name(self) -> &'static str {
        [
            "EA0_EB0", "EA0_EB1", "EA1_EB0", "EA1_EB1", "EA_EB0", "EA_EB1", "EA0_EB", "EA1_EB",
            "EA_EB",
        ][self as usize]
    }
}

/// Result of a distance query between two primitives with up to four vertices `x_k`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Closest<T: Real, K> {
    /// Squared distance (m²).
    pub sq_dist: T,
    /// Which features are closest.
    pub kind: K,
    /// Signed weights: `diff = Σ_k weights[k] x_k` (unused vertices have weight 0). Point–edge:
    /// `[1, -(1-s), -s, 0]`; point–triangle: `[1, -b0, -b1, -b2]`; edge–edge:
    /// `[1-s, s, -(1-t), -t]`.
    pub weights: [T; 4],
    /// Closest point of the first primitive minus closest point of the second (m).
    pub diff: Vector3<T>,
}

impl<T: Real, K> Closest<T, K> {
    /// Gradient of the squared distance with respect to each vertex: `2 w_k diff` (m).
    pub fn gradient(&self) -> [Vector3<T>; 4] {
        let two = T::one() + T::one();
        self.weights.map(|w| self.diff * (two * w))
    }
}

impl<T: Real> Closest<T, PointTriangleKind> {
    /// Barycentric coordinates (b0, b1, b2) of the closest point on the triangle.
    pub fn barycentric(&self) -> [T; 3] {
        [-self.weights[1], -self.weights[2], -self.weights[3]]
    }
}

impl<T: Real> Closest<T, EdgeEdgeKind> {
    /// Parameters (s, t) of the closest points `ea0 + s (ea1 - ea0)` and `eb0 + t (eb1 - eb0)`.
    pub fn parameters(&self) -> [T; 2] {
        [self.weights[1], -self.weights[3]]
    }
}

impl<T: Real> Closest<T, PointEdgeKind> {
    /// Parameter s of the closest point `e0 + s (e1 - e0)`.
    pub fn parameter(&self) -> T {
        -self.weights[2]
    }
}

/// Vertices relative to `x[0]`, scaled by a power of two into [-1, 1]; returns them and the scale.
fn normalize<T: Real, const N: usize>(x: &[Vector3<T>; N]) -> ([Vector3<T>; N], T) {
    let mut r = [Vector3::zeros(); N];
    let mut m = T::zero();
    for k in 1..N {
        r[k] = x[k] - x[0];
        m = m.max(r[k].amax());
    }
    let s = T::inv_pow2_scale(m);
    for v in r.iter_mut() {
        *v *= s;
    }
    (r, s)
}

/// Point–edge core in normalized coordinates: (squared distance, code 0/1/2, s).
fn pe_core<T: Real>(p: &Vector3<T>, e0: &Vector3<T>, e1: &Vector3<T>) -> (T, u32, T) {
    let e = e1 - e0;
    let ee = e.dot(&e);
    let s = if ee > T::zero() {
        (p - e0).dot(&e) / ee
    } else {
        T::zero()
    };
    if s <= T::zero() {
        ((p - e0).norm_squared(), 0, T::zero())
    } else if s >= T::one() {
        ((p - e1).norm_squared(), 1, T::one())
    } else {
        let c = e0 + e * s;
        ((p - c).norm_squared(), 2, s)
    }
}

/// Squared distance between two points (kind-less; weights `[1, -1, 0, 0]`).
pub fn point_point<T: Real>(p: &Vector3<T>, q: &Vector3<T>) -> Closest<T, ()> {
    let (r, s) = normalize(&[*p, *q]);
    let d = -r[1];
    let z = T::zero();
    Closest {
        sq_dist: d.norm_squared() / (s * s),
        kind: (),
        weights: [T::one(), -T::one(), z, z],
        diff: d / s,
    }
}

/// Squared distance between point `p` and edge (`e0`, `e1`).
pub fn point_edge<T: Real>(
    p: &Vector3<T>,
    e0: &Vector3<T>,
    e1: &Vector3<T>,
) -> Closest<T, PointEdgeKind> {
    let (r, sc) = normalize(&[*p, *e0, *e1]);
    let (d2, code, s) = pe_core(&r[0], &r[1], &r[2]);
    let c = r[1] + (r[2] - r[1]) * s;
    let kind = [
        PointEdgeKind::Vertex0,
        PointEdgeKind::Vertex1,
        PointEdgeKind::Interior,
    ][code as usize];
    Closest {
        sq_dist: d2 / (sc * sc),
        kind,
        weights: [T::one(), s - T::one(), -s, T::zero()],
        diff: (r[0] - c) / sc,
    }
}

/// Face candidate of a point–triangle pair in normalized coordinates: (squared distance,
/// barycentrics) when the projection of p is strictly inside the triangle.
fn face_candidate<T: Real>(r: &[Vector3<T>; 4]) -> Option<(T, [T; 3])> {
    let z = T::zero();
    let (p, t0, t1, t2) = (&r[0], &r[1], &r[2], &r[3]);
    let n = (t1 - t0).cross(&(t2 - t0));
    let nn = n.dot(&n);
    if nn > z {
        let b0 = (t1 - p).cross(&(t2 - p)).dot(&n);
        let b1 = (t2 - p).cross(&(t0 - p)).dot(&n);
        let b2 = (t0 - p).cross(&(t1 - p)).dot(&n);
        if b0 > z && b1 > z && b2 > z {
            let sum = b0 + b1 + b2;
            let b = [b0 / sum, b1 / sum, b2 / sum];
            let c = t0 * b[0] + t1 * b[1] + t2 * b[2];
            return Some(((p - c).norm_squared(), b));
        }
    }
    None
}

/// Interior–interior candidate of an edge–edge pair in normalized coordinates: (squared
/// distance, s, t) when the edges are not parallel and both line parameters lie in (0, 1).
fn line_line_candidate<T: Real>(r: &[Vector3<T>; 4]) -> Option<(T, T, T)> {
    let (o, z) = (T::one(), T::zero());
    let (a0, a1, b0, b1) = (&r[0], &r[1], &r[2], &r[3]);
    let ea = a1 - a0;
    let eb = b1 - b0;
    let n = ea.cross(&eb);
    let nn = n.dot(&n);
    if nn > z {
        let w = b0 - a0;
        let s = w.cross(&eb).dot(&n) / nn;
        let t = w.cross(&ea).dot(&n) / nn;
        if s > z && s < o && t > z && t < o {
            let d = ((a0 + ea * s) - (b0 + eb * t)).norm_squared();
            return Some((d, s, t));
        }
    }
    None
}

/// Point–triangle candidates in normalized coordinates (p at the origin).
/// Returns (squared distance, kind, barycentrics).
fn pt_core<T: Real>(r: &[Vector3<T>; 4]) -> (T, PointTriangleKind, [T; 3]) {
    use PointTriangleKind as K;
    let (o, z) = (T::one(), T::zero());
    let (p, t0, t1, t2) = (&r[0], &r[1], &r[2], &r[3]);
    // Edges (t0,t1), (t1,t2), (t2,t0); strict < keeps the first of equal candidates.
    let (d, c, s) = pe_core(p, t0, t1);
    let mut best = (
        d,
        [K::Vertex0, K::Vertex1, K::Edge01][c as usize],
        [o - s, s, z],
    );
    let (d, c, s) = pe_core(p, t1, t2);
    if d < best.0 {
        best = (
            d,
            [K::Vertex1, K::Vertex2, K::Edge12][c as usize],
            [z, o - s, s],
        );
    }
    let (d, c, s) = pe_core(p, t2, t0);
    if d < best.0 {
        best = (
            d,
            [K::Vertex2, K::Vertex0, K::Edge20][c as usize],
            [s, z, o - s],
        );
    }
    // Face: only when the projection of p is strictly inside.
    if let Some((d, b)) = face_candidate(r) {
        if d < best.0 {
            best = (d, K::Face, b);
        }
    }
    best
}

/// Squared distance between point `p` and triangle (`t0`, `t1`, `t2`); any triangle, degenerate
/// ones included.
pub fn point_triangle<T: Real>(
    p: &Vector3<T>,
    t0: &Vector3<T>,
    t1: &Vector3<T>,
    t2: &Vector3<T>,
) -> Closest<T, PointTriangleKind> {
    let (r, sc) = normalize(&[*p, *t0, *t1, *t2]);
    let (d2, kind, b) = pt_core(&r);
    let c = r[1] * b[0] + r[2] * b[1] + r[3] * b[2];
    Closest {
        sq_dist: d2 / (sc * sc),
        kind,
        weights: [T::one(), -b[0], -b[1], -b[2]],
        diff: (r[0] - c) / sc,
    }
}

/// Edge–edge candidates in normalized coordinates (ea0 at the origin).
/// Returns (squared distance, kind, s, t).
fn ee_core<T: Real>(r: &[Vector3<T>; 4]) -> (T, EdgeEdgeKind, T, T) {
    use EdgeEdgeKind as K;
    let (o, z) = (T::one(), T::zero());
    let (a0, a1, b0, b1) = (&r[0], &r[1], &r[2], &r[3]);
    let (d, c, t) = pe_core(a0, b0, b1);
    let mut best = (d, [K::A0B0, K::A0B1, K::A0B][c as usize], z, t);
    let (d, c, t) = pe_core(a1, b0, b1);
    if d < best.0 {
        best = (d, [K::A1B0, K::A1B1, K::A1B][c as usize], o, t);
    }
    let (d, c, s) = pe_core(b0, a0, a1);
    if d < best.0 {
        best = (d, [K::A0B0, K::A1B0, K::AB0][c as usize], s, z);
    }
    let (d, c, s) = pe_core(b1, a0, a1);
    if d < best.0 {
        best = (d, [K::A0B1, K::A1B1, K::AB1][c as usize], s, o);
    }
    // Interiors: only when both line parameters are strictly inside (0, 1).
    if let Some((d, s, t)) = line_line_candidate(r) {
        if d < best.0 {
            best = (d, K::AB, s, t);
        }
    }
    best
}

/// Squared distance between edges (`ea0`, `ea1`) and (`eb0`, `eb1`); robust for parallel,
/// nearly parallel, collinear and zero-length edges.
pub fn edge_edge<T: Real>(
    ea0: &Vector3<T>,
    ea1: &Vector3<T>,
    eb0: &Vector3<T>,
    eb1: &Vector3<T>,
) -> Closest<T, EdgeEdgeKind> {
    let (r, sc) = normalize(&[*ea0, *ea1, *eb0, *eb1]);
    let (d2, kind, s, t) = ee_core(&r);
    let o = T::one();
    let ca = r[0] + (r[1] - r[0]) * s;
    let cb = r[2] + (r[3] - r[2]) * t;
    Closest {
        sq_dist: d2 / (sc * sc),
        kind,
        weights: [o - s, s, t - o, -t],
        diff: (ca - cb) / sc,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f64, y: f64, z: f64) -> Vector3<f64> {
        Vector3::new(x, y, z)
    }

    #[test]
    fn simple_cases() {
        let (t0, t1, t2) = (v(0., 0., 0.), v(1., 0., 0.), v(0., 1., 0.));
        let r = point_triangle(&v(0.25, 0.25, 2.0), &t0, &t1, &t2);
        assert_eq!(r.kind, PointTriangleKind::Face);
        assert!((r.sq_dist - 4.0).abs() < 1e-15);
        let r = point_triangle(&v(-1.0, -1.0, 0.0), &t0, &t1, &t2);
        assert_eq!(r.kind, PointTriangleKind::Vertex0);
        assert!((r.sq_dist - 2.0).abs() < 1e-15);
        let r = point_triangle(&v(0.5, -1.0, 0.0), &t0, &t1, &t2);
        assert_eq!(r.kind, PointTriangleKind::Edge01);
        let r = edge_edge(
            &v(0., 0., 0.),
            &v(1., 0., 0.),
            &v(0.5, -1., 1.),
            &v(0.5, 1., 1.),
        );
        assert_eq!(r.kind, EdgeEdgeKind::AB);
        assert!((r.sq_dist - 1.0).abs() < 1e-15);
        assert_eq!(r.parameters(), [0.5, 0.5]);
        // Parallel edges fall back to the point–edge candidates.
        let r = edge_edge(
            &v(0., 0., 0.),
            &v(1., 0., 0.),
            &v(0.5, 1., 0.),
            &v(1.5, 1., 0.),
        );
        assert!((r.sq_dist - 1.0).abs() < 1e-15);
        assert!(matches!(r.kind, EdgeEdgeKind::AB0 | EdgeEdgeKind::A1B));
        let r = point_edge(&v(0.5, 1., 0.), &v(0., 0., 0.), &v(1., 0., 0.));
        assert_eq!(r.kind, PointEdgeKind::Interior);
        assert_eq!(r.parameter(), 0.5);
        assert_eq!(point_point(&v(1., 2., 3.), &v(1., 2., 5.)).sq_dist, 4.0);
    }
}
