//! Fully implicit friction (BAL paper §4.1, spec §A5): IPC's lagged friction potential per
//! contact pair j,
//!
//! `D_j(x) = χ λ_j f₀(‖u_j‖)`,  `u_j = T_jᵀ Σ_k β_jk (x_k − x_k^t)`  (m),
//!
//! where `u_j` is the tangential relative displacement over the step (the paper's `u h`),
//! `β_j` the signed closest-point weights of the pair's reduced stencil, `T_j` an orthonormal
//! 3×2 basis of the contact plane (normal = the closest-point difference), `λ_j` the normal
//! force magnitude, and f₀ IPC's C1 mollifier with `ε = ε_v h` (spec §A7 #9, IPC Toolkit's
//! `smooth_friction_f0`): `f₀(y) = −y³/(3ε²) + y²/ε + ε/3` below ε, `y` above. λ, T, β (and
//! `x^t`) are constants of D: they are **re-lagged after every Newton iteration**
//! (`per-iteration`, the paper) or once at the start of the step (`per-step`, IPC).
//!
//! **Ours (normal force, §A7 #8):** `λ_j = −σ b′(d_j, d̂) + [j ∈ A′] (μ_j − σ b′(d_j, d̂+s_j))`,
//! the magnitude of every normal contact term on the pair; like IPC Toolkit we leave the
//! edge–edge mollifier out of it.
//!
//! The Hessian `χλ (β⊗T) M (β⊗T)ᵀ` with `M = f₁/y I + (f₂ − f₁/y)/y² u uᵀ` (f₁ = f₀′, f₂ = f₁′)
//! is PSD analytically; M is still projected (2×2) so rounding can never make it indefinite.

use super::super::fem::{Mat12, Vec12};
use super::distance::{reduced, Reduced, ReducedKind, StencilKind};
use nalgebra::{Matrix2, Matrix3x2, Vector2, Vector3};

/// IPC's friction mollifier f₀(y) (m) for `ε = ε_v h`.
pub fn f0(y: f64, eps: f64) -> f64 {
    if y < eps {
        -y * y * y / (3.0 * eps * eps) + y * y / eps + eps / 3.0
    } else {
        y
    }
}

/// f₁ = f₀′ (dimensionless): `2y/ε − y²/ε²` below ε, 1 above.
pub fn f1(y: f64, eps: f64) -> f64 {
    if y < eps {
        2.0 * y / eps - y * y / (eps * eps)
    } else {
        1.0
    }
}

/// f₁(y)/y (1/m), finite at y = 0: `2/ε − y/ε²` below ε, `1/y` above.
pub fn f1_over_y(y: f64, eps: f64) -> f64 {
    if y < eps {
        2.0 / eps - y / (eps * eps)
    } else {
        1.0 / y
    }
}

/// `(f₂ − f₁/y)/y²` (1/m³) with its finite form below ε: `−1/(ε² y)` (0 at y = 0, where it
/// multiplies `u uᵀ = 0`), and `−1/y³` above.
pub fn f2_term(y: f64, eps: f64) -> f64 {
    if y < eps {
        if y > 0.0 {
            -1.0 / (eps * eps * y)
        } else {
            0.0
        }
    } else {
        -1.0 / (y * y * y)
    }
}

/// Unit vector along `v`, or zero for a zero vector.
fn unit(v: Vector3<f64>) -> Vector3<f64> {
    let n = v.norm();
    if n > 0.0 {
        v / n
    } else {
        Vector3::zeros()
    }
}

/// Orthonormal basis of the contact plane of a reduced stencil at `x` (corner positions of the
/// full stencil) with closest-point weights `w`:
/// - point–point: ⊥ the difference `p − q`, from the coordinate axis least aligned with it;
/// - point–edge: the edge direction and `e × (p − e0)`;
/// - point–triangle: the first edge and `n × t`, n the triangle normal;
/// - edge–edge: edge a's direction and `(ea × eb) × ea`.
pub fn tangent_basis(red: &Reduced, x: &[Vector3<f64>; 4], w: &[f64; 4]) -> [Vector3<f64>; 2] {
    let c = &red.corners;
    match red.kind {
        ReducedKind::PointPoint => {
            let n = (x[c[0]] - x[c[1]]) * w[c[0]].signum();
            let a = n.abs();
            let axis = if a.x <= a.y && a.x <= a.z {
                Vector3::x()
            } else if a.y <= a.z {
                Vector3::y()
            } else {
                Vector3::z()
            };
            let t0 = unit(axis.cross(&n));
            [t0, unit(n.cross(&t0))]
        }
        ReducedKind::PointEdge => {
            let e = x[c[2]] - x[c[1]];
            [unit(e), unit(e.cross(&(x[c[0]] - x[c[1]])))]
        }
        ReducedKind::PointTriangle => {
            let e0 = x[c[2]] - x[c[1]];
            let n = e0.cross(&(x[c[3]] - x[c[1]]));
            let t0 = unit(e0);
            [t0, unit(n.cross(&t0))]
        }
        ReducedKind::EdgeEdge => {
            let ea = x[c[1]] - x[c[0]];
            let eb = x[c[3]] - x[c[2]];
            let t0 = unit(ea);
            [t0, unit(ea.cross(&eb).cross(&t0))]
        }
    }
}

/// Lagged data of one friction pair (constants of its potential).
#[derive(Debug, Clone, PartialEq)]
pub struct FrictionLag {
    /// Stencil kind.
    pub kind: StencilKind,
    /// Global vertex ids of the stencil corners.
    pub vertices: [usize; 4],
    /// Signed closest-point weights β per corner at the lag point (0 for unused corners).
    pub weights: [f64; 4],
    /// Orthonormal contact-plane basis T.
    pub basis: [Vector3<f64>; 2],
    /// Normal force magnitude λ (N, ≥ 0).
    pub lambda: f64,
    /// Corners taking part (the reduced stencil's).
    pub used: [bool; 4],
}

/// Lags a pair at `x` (its four corner positions) with normal force `lambda`; `None` for an
/// unknown closest-feature code.
pub fn lag(
    kind: StencilKind,
    vertices: [usize; 4],
    x: &[Vector3<f64>; 4],
    lambda: f64,
) -> Option<FrictionLag> {
    let (_, code, w) = super::distance::closest(kind, x);
    let red = reduced(kind, code)?;
    let mut weights = [0.0; 4];
    let mut used = [false; 4];
    for &c in &red.corners[..red.len()] {
        weights[c] = w[c];
        used[c] = true;
    }
    Some(FrictionLag {
        kind,
        vertices,
        weights,
        basis: tangent_basis(&red, x, &w),
        lambda: lambda.max(0.0),
        used,
    })
}

/// Friction energy (J), gradient (N), Hessian (N/m) and per-corner warm-start stiffness of one
/// lagged pair at corner positions `x` with step-start positions `x_start`; `chi` the friction
/// coefficient, `eps` = ε_v h (m).
pub fn friction_terms(
    lag: &FrictionLag,
    x: &[Vector3<f64>; 4],
    x_start: &[Vector3<f64>; 4],
    chi: f64,
    eps: f64,
) -> (f64, Vec12, Mat12, [f64; 4]) {
    let t = Matrix3x2::from_columns(&lag.basis);
    let disp: Vector3<f64> = (0..4).map(|k| (x[k] - x_start[k]) * lag.weights[k]).sum();
    let u: Vector2<f64> = t.transpose() * disp;
    let y = u.norm();
    let s = chi * lag.lambda;
    let energy = s * f0(y, eps);
    let mut gradient = Vec12::zeros();
    let force = t * u * (s * f1_over_y(y, eps));
    for k in 0..4 {
        gradient
            .fixed_rows_mut::<3>(3 * k)
            .copy_from(&(force * lag.weights[k]));
    }
    let m = Matrix2::identity() * f1_over_y(y, eps) + u * u.transpose() * f2_term(y, eps);
    let eig = m.symmetric_eigen();
    let m = eig.eigenvectors
        * Matrix2::from_diagonal(&eig.eigenvalues.map(|v| v.max(0.0)))
        * eig.eigenvectors.transpose();
    let inner = t * m * t.transpose() * s;
    let mut hessian = Mat12::zeros();
    for k in 0..4 {
        for l in 0..4 {
            hessian
                .fixed_view_mut::<3, 3>(3 * k, 3 * l)
                .copy_from(&(inner * (lag.weights[k] * lag.weights[l])));
        }
    }
    let used = lag.used.iter().filter(|&&u| u).count().max(1) as f64;
    let mean = hessian.trace() / (3.0 * used);
    let stiffness = lag.used.map(|u| if u { 3.0 * mean } else { 0.0 });
    (energy, gradient, hessian, stiffness)
}

#[cfg(test)]
mod tests {
    use super::super::distance::tests::{bump, configurations};
    use super::*;

    #[test]
    fn mollifier_is_c1_and_derivatives_agree() {
        let eps = 1e-4;
        for &y in &[1e-7, 3e-5, 9.9e-5, 2e-4] {
            let h = 1e-10;
            let fd = (f0(y + h, eps) - f0(y - h, eps)) / (2.0 * h);
            assert!((fd - f1(y, eps)).abs() < 1e-6);
            assert!((f1_over_y(y, eps) * y - f1(y, eps)).abs() < 1e-9);
        }
        assert!((f0(eps, eps) - eps).abs() < 1e-18);
        assert!((f1(eps * (1.0 - 1e-12), eps) - 1.0).abs() < 1e-9);
        assert!((f0(0.0, eps) - eps / 3.0).abs() < 1e-18);
    }

    #[test]
    fn friction_gradient_and_hessian_match_finite_differences() {
        let eps = 1e-3;
        for (kind, x, code) in configurations() {
            let l = lag(kind, [0, 1, 2, 3], &x, 7.0).unwrap();
            // Orthonormal basis ⊥ the closest-point difference.
            let (_, _, w) = super::super::distance::closest(kind, &x);
            let diff: Vector3<f64> = (0..4).map(|k| x[k] * w[k]).sum();
            for b in &l.basis {
                assert!((b.norm() - 1.0).abs() < 1e-12, "{kind:?} {code}");
                assert!(b.dot(&diff).abs() < 1e-12, "{kind:?} {code}");
            }
            assert!(l.basis[0].dot(&l.basis[1]).abs() < 1e-12);
            for (case, scale) in [1e-4, 5e-4, 4e-3].iter().enumerate() {
                // Slide the stencil from a start state by a tangential + normal displacement.
                let shift = [
                    Vector3::new(0.3, -0.2, 0.1),
                    Vector3::new(-0.1, 0.4, 0.2),
                    Vector3::new(0.2, 0.1, -0.3),
                    Vector3::new(-0.2, -0.1, 0.3),
                ];
                let xs = x;
                let xc: [Vector3<f64>; 4] = std::array::from_fn(|k| x[k] + shift[k] * *scale);
                let (e0, g, hm, _) = friction_terms(&l, &xc, &xs, 0.4, eps);
                assert!(e0 >= 0.0);
                let h = 1e-8;
                let gs = g.amax().max(1e-12);
                let hs = hm.amax().max(1e-12);
                for i in 0..12 {
                    let ep = friction_terms(&l, &bump(&xc, i, h), &xs, 0.4, eps);
                    let em = friction_terms(&l, &bump(&xc, i, -h), &xs, 0.4, eps);
                    let fd = (ep.0 - em.0) / (2.0 * h);
                    assert!(
                        (fd - g[i]).abs() <= 1e-5 * gs,
                        "{kind:?} {code} case {case} g{i}"
                    );
                    let col = (ep.1 - em.1) / (2.0 * h);
                    for j in 0..12 {
                        assert!(
                            (col[j] - hm[(j, i)]).abs() <= 1e-4 * hs,
                            "{kind:?} {code} case {case} H{j},{i}: fd {} vs {}",
                            col[j],
                            hm[(j, i)]
                        );
                    }
                }
                let ev = hm.symmetric_eigen();
                assert!(ev.eigenvalues.min() >= -1e-9 * hs);
            }
        }
    }
}
