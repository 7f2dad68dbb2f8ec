//! Exact unsquared distances of BAL stencils with their gradients and Hessians, for every
//! distance type (point–point, point–edge, point–triangle, edge–edge), and the edge–edge
//! cross-product term of IPC's mollifier.
//!
//! A **stencil** is a vertex–triangle pair `[p, t0, t1, t2]` or an edge–edge pair
//! `[ea0, ea1, eb0, eb1]` of the proximity search. Its closest features
//! ([`crate::cpu_reference::distance`]) select a **reduced stencil**: the 2, 3 or 4 corners
//! whose closest points are interior to their features, and the signed weights
//! `r = Σ_k w_k(θ) x_k` (closest point of one side minus the other's) with parameters θ:
//! - point–point `[p, q]`: `w = [1, −1]`, no θ;
//! - point–edge `[p, e0, e1]`: `w = [1, −(1−s), −s]`, θ = s;
//! - point–triangle `[p, t0, t1, t2]`: `w = [1, −(1−b1−b2), −b1, −b2]`, θ = (b1, b2);
//! - edge–edge `[a0, a1, b0, b1]`: `w = [1−s, s, −(1−t), −t]`, θ = (s, t).
//!
//! Within a type, `d²(x) = min_θ φ(x, θ)`, `φ = ‖Σ w_k(θ) x_k‖²` (w affine in θ), so at the
//! minimiser θ*: `∇d² = φ_x` (envelope theorem: `2 w_k r` per corner) and
//! `∇²d² = φ_xx − φ_xθ φ_θθ⁻¹ φ_θx` (implicit differentiation of `φ_θ(x, θ*(x)) = 0`) with
//! `φ_xx(k,l) = 2 w_k w_l I`, `φ_θaθb = 2 g_a·g_b`, `φ_x_kθa = 2 (w_k g_a + ∂w_k/∂θ_a r)`,
//! `g_a = Σ_k ∂w_k/∂θ_a x_k`. Then `d = √d²`, `∇d = ∇d²/(2d)`,
//! `∇²d = ∇²d²/(2d) − ∇d² ∇d²ᵀ/(4d³)`. The GPU twin (`kernels/include/bal.glsl`) evaluates the
//! same closed forms in f32.

use super::super::distance::{edge_edge, point_triangle, EdgeEdgeKind, PointTriangleKind};
use super::super::fem::{Mat12, Vec12};
use nalgebra::{Matrix2, Matrix3, Vector3};

/// Which primitive pair a stencil is (GPU code = discriminant).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StencilKind {
    /// `[p, t0, t1, t2]`: a surface vertex against a surface triangle.
    PointTriangle = 0,
    /// `[ea0, ea1, eb0, eb1]`: two surface edges.
    EdgeEdge = 1,
}

/// Shape of a reduced stencil (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReducedKind {
    /// Two corners `[p, q]`.
    PointPoint,
    /// Three corners `[p, e0, e1]`.
    PointEdge,
    /// Four corners `[p, t0, t1, t2]`.
    PointTriangle,
    /// Four corners `[a0, a1, b0, b1]` (interiors of both edges).
    EdgeEdge,
}

/// The corners of a stencil that take part in its distance, in the order of the reduced
/// weights (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Reduced {
    /// Shape.
    pub kind: ReducedKind,
    /// Stencil corners (0..4); the first [`Reduced::len`] are used.
    pub corners: [usize; 4],
}

impl Reduced {
    /// Number of corners used (2, 3 or 4).
    pub fn len(&self) -> usize {
        match self.kind {
            ReducedKind::PointPoint => 2,
            ReducedKind::PointEdge => 3,
            _ => 4,
        }
    }

    /// Whether no corner is used (never: every reduced stencil has at least two).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Number of parameters θ (0, 1 or 2).
    pub fn num_params(&self) -> usize {
        match self.kind {
            ReducedKind::PointPoint => 0,
            ReducedKind::PointEdge => 1,
            _ => 2,
        }
    }
}

/// The reduced stencil of closest-feature code `code` (`PointTriangleKind` or `EdgeEdgeKind`
/// of [`crate::cpu_reference::distance`]) of a stencil of kind `kind`; `None` for an unknown code.
pub fn reduced(kind: StencilKind, code: u32) -> Option<Reduced> {
    use ReducedKind::*;
    let r = |k, c: [usize; 4]| {
        Some(Reduced {
            kind: k,
            corners: c,
        })
    };
    match kind {
        StencilKind::PointTriangle => match PointTriangleKind::from_code(code)? {
            PointTriangleKind::Vertex0 => r(PointPoint, [0, 1, 0, 0]),
            PointTriangleKind::Vertex1 => r(PointPoint, [0, 2, 0, 0]),
            PointTriangleKind::Vertex2 => r(PointPoint, [0, 3, 0, 0]),
            PointTriangleKind::Edge01 => r(PointEdge, [0, 1, 2, 0]),
            PointTriangleKind::Edge12 => r(PointEdge, [0, 2, 3, 0]),
            PointTriangleKind::Edge20 => r(PointEdge, [0, 3, 1, 0]),
            PointTriangleKind::Face => r(PointTriangle, [0, 1, 2, 3]),
        },
        StencilKind::EdgeEdge => match EdgeEdgeKind::from_code(code)? {
            EdgeEdgeKind::A0B0 => r(PointPoint, [0, 2, 0, 0]),
            EdgeEdgeKind::A0B1 => r(PointPoint, [0, 3, 0, 0]),
            EdgeEdgeKind::A1B0 => r(PointPoint, [1, 2, 0, 0]),
            EdgeEdgeKind::A1B1 => r(PointPoint, [1, 3, 0, 0]),
            EdgeEdgeKind::AB0 => r(PointEdge, [2, 0, 1, 0]),
            EdgeEdgeKind::AB1 => r(PointEdge, [3, 0, 1, 0]),
            EdgeEdgeKind::A0B => r(PointEdge, [0, 2, 3, 0]),
            EdgeEdgeKind::A1B => r(PointEdge, [1, 2, 3, 0]),
            EdgeEdgeKind::AB => r(EdgeEdge, [0, 1, 2, 3]),
        },
    }
}

/// Closest features of a stencil at `x`: (squared distance m², closest-feature code, signed
/// weights of the four corners as returned by [`crate::cpu_reference::distance`]).
pub fn closest(kind: StencilKind, x: &[Vector3<f64>; 4]) -> (f64, u32, [f64; 4]) {
    match kind {
        StencilKind::PointTriangle => {
            let c = point_triangle(&x[0], &x[1], &x[2], &x[3]);
            (c.sq_dist, c.kind as u32, c.weights)
        }
        StencilKind::EdgeEdge => {
            let c = edge_edge(&x[0], &x[1], &x[2], &x[3]);
            (c.sq_dist, c.kind as u32, c.weights)
        }
    }
}

/// Parameters θ* of a reduced stencil read off the stencil's signed weights `w` (the distance
/// query's, whose own parametrisation may run the other way along an edge).
pub fn parameters(r: &Reduced, w: &[f64; 4]) -> [f64; 2] {
    let c = &r.corners;
    match r.kind {
        ReducedKind::PointPoint => [0.0, 0.0],
        // r = ±(p − (1−s) e0 − s e1): s = −w[e1]/w[p].
        ReducedKind::PointEdge => [-w[c[2]] / w[c[0]], 0.0],
        ReducedKind::PointTriangle => [-w[c[2]] / w[c[0]], -w[c[3]] / w[c[0]]],
        ReducedKind::EdgeEdge => [w[c[1]], -w[c[3]]],
    }
}

/// Reduced weights `w_k(θ)` and their constant derivatives `∂w_k/∂θ_a` (rows a = 0, 1).
pub fn reduced_weights(kind: ReducedKind, theta: [f64; 2]) -> ([f64; 4], [[f64; 4]; 2]) {
    let [a, b] = theta;
    match kind {
        ReducedKind::PointPoint => ([1.0, -1.0, 0.0, 0.0], [[0.0; 4]; 2]),
        ReducedKind::PointEdge => (
            [1.0, -(1.0 - a), -a, 0.0],
            [[0.0, 1.0, -1.0, 0.0], [0.0; 4]],
        ),
        ReducedKind::PointTriangle => (
            [1.0, -(1.0 - a - b), -a, -b],
            [[0.0, 1.0, -1.0, 0.0], [0.0, 1.0, 0.0, -1.0]],
        ),
        ReducedKind::EdgeEdge => (
            [1.0 - a, a, -(1.0 - b), -b],
            [[-1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0]],
        ),
    }
}

/// Unsquared distance of a stencil with its derivatives w.r.t. the 12 stencil coordinates
/// (corner-major: x0, y0, z0, x1, …).
#[derive(Debug, Clone, PartialEq)]
pub struct StencilDistance {
    /// d (m).
    pub d: f64,
    /// Closest-feature code.
    pub code: u32,
    /// The reduced stencil of the code.
    pub reduced: Reduced,
    /// Signed weights of the four corners at the closest points (0 for unused corners).
    pub weights: [f64; 4],
    /// ∇d (dimensionless).
    pub gradient: Vec12,
    /// ∇²d (1/m).
    pub hessian: Mat12,
}

/// Squared distance of a reduced stencil at parameters θ with its gradient and Hessian
/// (module doc), as 12-vectors over the stencil's corners.
pub fn squared_distance_derivatives(
    red: &Reduced,
    theta: [f64; 2],
    x: &[Vector3<f64>; 4],
) -> (f64, Vec12, Mat12) {
    let n = red.len();
    let m = red.num_params();
    let (w, dw) = reduced_weights(red.kind, theta);
    let xs: Vec<Vector3<f64>> = (0..n).map(|k| x[red.corners[k]]).collect();
    let r: Vector3<f64> = (0..n).map(|k| xs[k] * w[k]).sum();
    let g: Vec<Vector3<f64>> = (0..m)
        .map(|a| (0..n).map(|k| xs[k] * dw[a][k]).sum())
        .collect();
    let mut grad = Vec12::zeros();
    let mut hess = Mat12::zeros();
    for k in 0..n {
        let ck = red.corners[k];
        grad.fixed_rows_mut::<3>(3 * ck)
            .copy_from(&(r * (2.0 * w[k])));
        for l in 0..n {
            let cl = red.corners[l];
            let blk = Matrix3::identity() * (2.0 * w[k] * w[l]);
            let mut view = hess.fixed_view_mut::<3, 3>(3 * ck, 3 * cl);
            view += blk;
        }
    }
    if m > 0 {
        // φ_θθ (m × m) and φ_xθ (one 3-vector per corner and parameter).
        let mut ptt = Matrix2::<f64>::identity();
        for a in 0..m {
            for b in 0..m {
                ptt[(a, b)] = 2.0 * g[a].dot(&g[b]);
            }
        }
        let inv = if m == 1 {
            Matrix2::new(1.0 / ptt[(0, 0)], 0.0, 0.0, 1.0)
        } else {
            ptt.try_inverse().unwrap_or_else(Matrix2::zeros)
        };
        let pxt = |k: usize, a: usize| (g[a] * w[k] + r * dw[a][k]) * 2.0;
        for k in 0..n {
            for l in 0..n {
                let mut blk = Matrix3::zeros();
                for a in 0..m {
                    for b in 0..m {
                        blk += pxt(k, a) * pxt(l, b).transpose() * inv[(a, b)];
                    }
                }
                let mut view = hess.fixed_view_mut::<3, 3>(3 * red.corners[k], 3 * red.corners[l]);
                view -= blk;
            }
        }
    }
    (r.norm_squared(), grad, hess)
}

/// The unsquared distance of a stencil at `x` with its gradient and Hessian; `None` when the
/// distance is zero (the derivatives of `d = ‖r‖` do not exist there).
pub fn stencil_distance(kind: StencilKind, x: &[Vector3<f64>; 4]) -> Option<StencilDistance> {
    let (sq, code, weights) = closest(kind, x);
    let red = reduced(kind, code)?;
    let theta = parameters(&red, &weights);
    let (_, g2, h2) = squared_distance_derivatives(&red, theta, x);
    let d = sq.sqrt();
    if d <= 0.0 {
        return None;
    }
    let gradient = g2 / (2.0 * d);
    let hessian = h2 / (2.0 * d) - g2 * g2.transpose() / (4.0 * d * d * d);
    Some(StencilDistance {
        d,
        code,
        reduced: red,
        weights,
        gradient,
        hessian,
    })
}

/// `c = ‖(ea1 − ea0) × (eb1 − eb0)‖²` (m⁴) of an edge–edge stencil with its gradient and
/// Hessian (the argument of IPC's mollifier).
pub fn edge_cross_squared(x: &[Vector3<f64>; 4]) -> (f64, Vec12, Mat12) {
    let u = x[1] - x[0];
    let v = x[3] - x[2];
    let (uu, vv, uv) = (u.dot(&u), v.dot(&v), u.dot(&v));
    let c = uu * vv - uv * uv;
    let gu = u * (2.0 * vv) - v * (2.0 * uv);
    let gv = v * (2.0 * uu) - u * (2.0 * uv);
    let i3 = Matrix3::<f64>::identity();
    let huu = i3 * (2.0 * vv) - v * v.transpose() * 2.0;
    let hvv = i3 * (2.0 * uu) - u * u.transpose() * 2.0;
    // ∂(∇_u c)/∂v.
    let huv = u * v.transpose() * 4.0 - v * u.transpose() * 2.0 - i3 * (2.0 * uv);
    let su = [-1.0, 1.0];
    let sv = [-1.0, 1.0];
    let mut grad = Vec12::zeros();
    let mut hess = Mat12::zeros();
    for (i, s) in su.iter().enumerate() {
        grad.fixed_rows_mut::<3>(3 * i).copy_from(&(gu * *s));
    }
    for (i, s) in sv.iter().enumerate() {
        grad.fixed_rows_mut::<3>(3 * (i + 2)).copy_from(&(gv * *s));
    }
    for (i, si) in su.iter().enumerate() {
        for (j, sj) in su.iter().enumerate() {
            hess.fixed_view_mut::<3, 3>(3 * i, 3 * j)
                .copy_from(&(huu * (si * sj)));
        }
        for (j, sj) in sv.iter().enumerate() {
            let b = huv * (si * sj);
            hess.fixed_view_mut::<3, 3>(3 * i, 3 * (j + 2))
                .copy_from(&b);
            hess.fixed_view_mut::<3, 3>(3 * (j + 2), 3 * i)
                .copy_from(&b.transpose());
        }
    }
    for (i, si) in sv.iter().enumerate() {
        for (j, sj) in sv.iter().enumerate() {
            hess.fixed_view_mut::<3, 3>(3 * (i + 2), 3 * (j + 2))
                .copy_from(&(hvv * (si * sj)));
        }
    }
    (c, grad, hess)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn v(x: f64, y: f64, z: f64) -> Vector3<f64> {
        Vector3::new(x, y, z)
    }

    /// Perturbs coordinate `i` (corner i/3, axis i%3) by `h`.
    pub(crate) fn bump(x: &[Vector3<f64>; 4], i: usize, h: f64) -> [Vector3<f64>; 4] {
        let mut y = *x;
        y[i / 3][i % 3] += h;
        y
    }

    /// One configuration per closest-feature code of each stencil kind, away from type borders.
    pub(crate) fn configurations() -> Vec<(StencilKind, [Vector3<f64>; 4], u32)> {
        let t = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0), v(0.0, 1.0, 0.0)];
        let pt = |p: Vector3<f64>| [p, t[0], t[1], t[2]];
        let mut out = vec![
            (StencilKind::PointTriangle, pt(v(-0.3, -0.2, 0.4)), 0),
            (StencilKind::PointTriangle, pt(v(1.3, -0.2, 0.3)), 1),
            (StencilKind::PointTriangle, pt(v(-0.2, 1.4, -0.3)), 2),
            (StencilKind::PointTriangle, pt(v(0.4, -0.3, 0.2)), 3),
            (StencilKind::PointTriangle, pt(v(0.7, 0.6, 0.25)), 4),
            (StencilKind::PointTriangle, pt(v(-0.3, 0.4, -0.2)), 5),
            (StencilKind::PointTriangle, pt(v(0.2, 0.3, 0.05)), 6),
        ];
        let a = [v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0)];
        let ee = |b0: Vector3<f64>, b1: Vector3<f64>| [a[0], a[1], b0, b1];
        out.extend([
            (
                StencilKind::EdgeEdge,
                ee(v(-0.3, 0.2, 0.1), v(-0.8, 1.0, 0.3)),
                0,
            ),
            (
                StencilKind::EdgeEdge,
                ee(v(-0.8, 1.0, 0.3), v(-0.3, 0.2, 0.1)),
                1,
            ),
            (
                StencilKind::EdgeEdge,
                ee(v(1.3, 0.2, 0.1), v(1.8, 1.0, 0.3)),
                2,
            ),
            (
                StencilKind::EdgeEdge,
                ee(v(1.8, 1.0, 0.3), v(1.3, 0.2, 0.1)),
                3,
            ),
            (
                StencilKind::EdgeEdge,
                ee(v(0.4, 0.2, 0.1), v(0.5, 1.0, 0.9)),
                4,
            ),
            (
                StencilKind::EdgeEdge,
                ee(v(0.5, 1.0, 0.9), v(0.4, 0.2, 0.1)),
                5,
            ),
            (
                StencilKind::EdgeEdge,
                ee(v(-0.2, 0.3, -0.5), v(-0.1, 0.2, 0.6)),
                6,
            ),
            (
                StencilKind::EdgeEdge,
                ee(v(1.2, 0.3, -0.5), v(1.1, 0.2, 0.6)),
                7,
            ),
            (
                StencilKind::EdgeEdge,
                ee(v(0.3, -0.5, 0.2), v(0.6, 0.7, 0.3)),
                8,
            ),
        ]);
        out
    }

    #[test]
    fn configurations_cover_every_code() {
        for (kind, x, code) in configurations() {
            assert_eq!(closest(kind, &x).1, code, "{kind:?} {x:?}");
        }
    }

    #[test]
    fn distance_gradient_and_hessian_match_finite_differences() {
        for (kind, x, code) in configurations() {
            let sd = stencil_distance(kind, &x).expect("positive distance");
            assert_eq!(sd.code, code);
            let dist = |y: &[Vector3<f64>; 4]| closest(kind, y).0.sqrt();
            let h = 1e-6;
            for i in 0..12 {
                let fd = (dist(&bump(&x, i, h)) - dist(&bump(&x, i, -h))) / (2.0 * h);
                assert!(
                    (fd - sd.gradient[i]).abs() < 1e-7,
                    "{kind:?} code {code} ∂d/∂x{i}: fd {fd} vs {}",
                    sd.gradient[i]
                );
                let gp = stencil_distance(kind, &bump(&x, i, h)).unwrap().gradient;
                let gm = stencil_distance(kind, &bump(&x, i, -h)).unwrap().gradient;
                let col = (gp - gm) / (2.0 * h);
                for j in 0..12 {
                    assert!(
                        (col[j] - sd.hessian[(j, i)]).abs() < 1e-6,
                        "{kind:?} code {code} ∂²d/∂x{j}∂x{i}: fd {} vs {}",
                        col[j],
                        sd.hessian[(j, i)]
                    );
                }
            }
            // Symmetric.
            assert!((sd.hessian - sd.hessian.transpose()).amax() < 1e-12);
        }
    }

    #[test]
    fn edge_cross_derivatives_match_finite_differences() {
        let x = [
            v(0.1, -0.2, 0.0),
            v(1.0, 0.3, 0.2),
            v(0.2, 0.1, 0.5),
            v(0.9, 0.8, -0.4),
        ];
        let (_, g, hm) = edge_cross_squared(&x);
        let h = 1e-6;
        for i in 0..12 {
            let cp = edge_cross_squared(&bump(&x, i, h));
            let cm = edge_cross_squared(&bump(&x, i, -h));
            assert!(((cp.0 - cm.0) / (2.0 * h) - g[i]).abs() < 1e-7);
            let col = (cp.1 - cm.1) / (2.0 * h);
            for j in 0..12 {
                assert!((col[j] - hm[(j, i)]).abs() < 1e-6, "c'' {j} {i}");
            }
        }
    }
}
