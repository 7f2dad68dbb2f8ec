//! Reference thin elements for cloth and rods (the CPU twin of `kernels/fem/thin_gradient.comp`
//! and the thin-element blocks of `kernels/fem/assemble_hessian.comp`), each over up to four vertices:
//!
//! - **Membrane** (cloth triangle): St. Venant–Kirchhoff in plane stress,
//!   `E = A (μ‖G‖² + λ/2 tr(G)²)`, `G = (FᵀF − I)/2`, `F = [x₁−x₀, x₂−x₀] Dm⁻¹` (3×2), with μ, λ
//!   already multiplied by the thickness (N/m). Its Hessian is made positive semi-definite by
//!   clamping the 2×2 second Piola–Kirchhoff stress of the geometric term to its non-negative
//!   part (the material term `A ∂G:C:∂G` is PSD for μ, λ ≥ 0).
//! - **Quadratic form** `E = ½ ‖Σᵢ wᵢ xᵢ‖²`: the isometric bending of Bergou et al. 2006
//!   ("A quadratic bending model for inextensible surfaces") on a cloth hinge, with
//!   `wᵢ = √(3 k_b / (A₀ + A₁)) Kᵢ` and K the cotangent weights (flat rest state), and a rod's
//!   discrete curvature `x₀ − 2x₁ + x₂` weighted by `√(EI / L³)` (straight rest state).
//!   Constant, PSD Hessian `wᵢ wⱼ I`.
//! - **Spring** (rod segment): `E = ½ k (‖x₁ − x₀‖ − L)²`, `k = EA / L`; Hessian
//!   `k [n nᵀ + max(0, 1 − L/l)(I − n nᵀ)]` per block (PSD projection of the transverse term).
//!
//! Energies in J, gradients in N, Hessians in N/m; vertex-major 12-vectors like the tets'.

use super::fem::{Mat12, Vec12};
use nalgebra::{Matrix2, Matrix3, Matrix3x2, Vector3};

pub use crate::fem::thin::{ThinElement, NO_VERTEX};

/// Reference-only methods: energies, gradients and Hessians of the thin elements.
impl ThinElement {
    fn membrane_f(x: &[Vector3<f64>; 4], dm_inv: &[[f64; 2]; 2]) -> (Matrix3x2<f64>, Matrix2<f64>) {
        let ds = Matrix3x2::from_columns(&[x[1] - x[0], x[2] - x[0]]);
        let dmi = Matrix2::new(dm_inv[0][0], dm_inv[0][1], dm_inv[1][0], dm_inv[1][1]);
        (ds * dmi, dmi)
    }

    /// F, Dm⁻¹ and the second Piola–Kirchhoff stress `S = 2μG + λ tr(G) I` of a membrane.
    fn membrane_stress(
        x: &[Vector3<f64>; 4],
        dm_inv: &[[f64; 2]; 2],
        mu: f64,
        lambda: f64,
    ) -> (Matrix3x2<f64>, Matrix2<f64>, Matrix2<f64>) {
        let (f, dmi) = Self::membrane_f(x, dm_inv);
        let gs = 0.5 * (f.transpose() * f - Matrix2::identity());
        (
            f,
            dmi,
            2.0 * mu * gs + lambda * gs.trace() * Matrix2::identity(),
        )
    }

    /// Energy (J) at corner positions `x` (unused corners ignored).
    pub fn energy(&self, x: &[Vector3<f64>; 4]) -> f64 {
        match self {
            ThinElement::Membrane {
                dm_inv,
                area,
                mu,
                lambda,
                ..
            } => {
                let (f, _) = Self::membrane_f(x, dm_inv);
                let g = 0.5 * (f.transpose() * f - Matrix2::identity());
                area * (mu * g.norm_squared() + 0.5 * lambda * g.trace().powi(2))
            }
            ThinElement::Quadratic { w, v } => 0.5 * weighted_sum(w, v, x).norm_squared(),
            ThinElement::Spring { rest_length, k, .. } => {
                0.5 * k * ((x[1] - x[0]).norm() - rest_length).powi(2)
            }
        }
    }

    /// Gradient (N), vertex-major (zeros at unused corners).
    pub fn gradient(&self, x: &[Vector3<f64>; 4]) -> Vec12 {
        let mut g = Vec12::zeros();
        let mut put = |i: usize, v: Vector3<f64>| g.fixed_rows_mut::<3>(3 * i).copy_from(&v);
        match self {
            ThinElement::Membrane {
                dm_inv,
                area,
                mu,
                lambda,
                ..
            } => {
                let (f, dmi, s) = Self::membrane_stress(x, dm_inv, *mu, *lambda);
                let h = *area * f * s * dmi.transpose();
                let (g1, g2) = (h.column(0).into_owned(), h.column(1).into_owned());
                put(0, -g1 - g2);
                put(1, g1);
                put(2, g2);
            }
            ThinElement::Quadratic { w, v } => {
                let s = weighted_sum(w, v, x);
                for i in (0..4).filter(|&i| v[i] != NO_VERTEX) {
                    put(i, w[i] * s);
                }
            }
            ThinElement::Spring { rest_length, k, .. } => {
                let d = x[1] - x[0];
                let l = d.norm();
                let f = if l > 0.0 {
                    k * (l - rest_length) / l * d
                } else {
                    Vector3::zeros()
                };
                put(0, -f);
                put(1, f);
            }
        }
        g
    }

    /// Positive semi-definite Hessian approximation used by Newton (N/m), vertex-major.
    pub fn hessian(&self, x: &[Vector3<f64>; 4]) -> Mat12 {
        let mut h = Mat12::zeros();
        match self {
            ThinElement::Membrane {
                dm_inv,
                area,
                mu,
                lambda,
                ..
            } => {
                let (f, dmi, s) = Self::membrane_stress(x, dm_inv, *mu, *lambda);
                let s_plus = psd_part_2x2(&s);
                // dF for a unit displacement of corner a, axis c: e_c ⊗ b_a (b_a = Dm⁻ᵀ row).
                let b = |a: usize| -> nalgebra::RowVector2<f64> {
                    match a {
                        0 => -(dmi.row(0) + dmi.row(1)),
                        _ => dmi.row(a - 1).into_owned(),
                    }
                };
                let df = |k: usize| -> Matrix3x2<f64> {
                    let mut m = Matrix3x2::zeros();
                    m.set_row(k % 3, &b(k / 3));
                    m
                };
                // Bilinear form: ⟨dF₁ S₊, dF₂⟩ + 2μ ⟨sym(Fᵀ dF₁), sym(Fᵀ dF₂)⟩
                //                + λ tr(Fᵀ dF₁) tr(Fᵀ dF₂), times the area.
                for r in 0..9 {
                    let d1 = df(r);
                    let e1 = sym(&(f.transpose() * d1));
                    for c in 0..9 {
                        let d2 = df(c);
                        let e2 = sym(&(f.transpose() * d2));
                        h[(r, c)] = area
                            * ((d1 * s_plus).dot(&d2)
                                + 2.0 * mu * e1.dot(&e2)
                                + lambda * e1.trace() * e2.trace());
                    }
                }
            }
            ThinElement::Quadratic { w, v } => {
                for a in (0..4).filter(|&i| v[i] != NO_VERTEX) {
                    for b in (0..4).filter(|&i| v[i] != NO_VERTEX) {
                        h.fixed_view_mut::<3, 3>(3 * a, 3 * b)
                            .copy_from(&(w[a] * w[b] * Matrix3::identity()));
                    }
                }
            }
            ThinElement::Spring { rest_length, k, .. } => {
                let d = x[1] - x[0];
                let l = d.norm();
                let blk = if l > 0.0 {
                    let n = d / l;
                    let nn = n * n.transpose();
                    *k * (nn + (1.0 - rest_length / l).max(0.0) * (Matrix3::identity() - nn))
                } else {
                    *k * Matrix3::identity()
                };
                for (a, b, s) in [(0, 0, 1.0), (1, 1, 1.0), (0, 1, -1.0), (1, 0, -1.0)] {
                    h.fixed_view_mut::<3, 3>(3 * a, 3 * b).copy_from(&(s * blk));
                }
            }
        }
        h
    }
}

/// `Σ wᵢ xᵢ` over the used corners.
fn weighted_sum(w: &[f64; 4], v: &[u32; 4], x: &[Vector3<f64>; 4]) -> Vector3<f64> {
    (0..4)
        .filter(|&i| v[i] != NO_VERTEX)
        .map(|i| w[i] * x[i])
        .sum()
}

fn sym(m: &Matrix2<f64>) -> Matrix2<f64> {
    0.5 * (m + m.transpose())
}

/// The non-negative part of a symmetric 2×2 matrix (negative eigenvalues clamped to zero).
pub fn psd_part_2x2(s: &Matrix2<f64>) -> Matrix2<f64> {
    let (a, b, d) = (s[(0, 0)], 0.5 * (s[(0, 1)] + s[(1, 0)]), s[(1, 1)]);
    let mean = 0.5 * (a + d);
    let r = (0.25 * (a - d) * (a - d) + b * b).sqrt();
    let (l1, l2) = (mean + r, mean - r);
    if l2 >= 0.0 {
        return Matrix2::new(a, b, b, d);
    }
    if l1 <= 0.0 {
        return Matrix2::zeros();
    }
    // Eigenvector of l1: the longer of the two candidate rows, rescaled by its largest
    // component before normalising (the squares of tiny stresses underflow; the GPU twin works
    // in f32, where that happened on a sheet in free fall).
    let v1 = nalgebra::Vector2::new(l1 - d, b);
    let v2 = nalgebra::Vector2::new(b, l1 - a);
    let v = if v1.norm_squared() >= v2.norm_squared() {
        v1
    } else {
        v2
    };
    let vm = v.x.abs().max(v.y.abs());
    let v = if vm > 0.0 {
        (v / vm).normalize()
    } else if a >= d {
        nalgebra::Vector2::new(1.0, 0.0)
    } else {
        nalgebra::Vector2::new(0.0, 1.0)
    };
    l1 * v * v.transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
    }

    fn elements() -> Vec<(ThinElement, [Vector3<f64>; 4])> {
        let rest = [
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(1.0, 0.0, 0.0),
            Vector3::new(0.3, 0.8, 0.0),
            Vector3::new(0.6, -0.7, 0.0),
        ];
        let mut seed = 7u64;
        let mut x = rest;
        for p in &mut x {
            *p += Vector3::new(rng(&mut seed), rng(&mut seed), rng(&mut seed)) * 0.3;
        }
        let m = ThinElement::membrane([0, 1, 2], &[rest[0], rest[1], rest[2]], 1.0e4 / 2.6, 3.0e3)
            .unwrap();
        let hinge = ThinElement::hinge([0, 1, 2, 3], &rest, 1e-2).unwrap();
        let bend = ThinElement::rod_bend([0, 1, 2], 0.5, 0.1);
        let spring = ThinElement::Spring {
            v: [0, 1],
            rest_length: 1.3,
            k: 200.0,
        };
        vec![(m, x), (hinge, x), (bend, x), (spring, x)]
    }

    #[test]
    fn gradients_match_finite_differences() {
        for (e, x) in elements() {
            let g = e.gradient(&x);
            let used = e.vertices();
            for k in 0..12 {
                if used[k / 3] == NO_VERTEX {
                    assert_eq!(g[k], 0.0);
                    continue;
                }
                let h = 1e-6;
                let (mut xp, mut xm) = (x, x);
                xp[k / 3][k % 3] += h;
                xm[k / 3][k % 3] -= h;
                let fd = (e.energy(&xp) - e.energy(&xm)) / (2.0 * h);
                assert!(
                    (fd - g[k]).abs() <= 1e-5 * (1.0 + g[k].abs()),
                    "{e:?} dof {k}: fd {fd} vs {}",
                    g[k]
                );
            }
        }
    }

    #[test]
    fn hessians_are_psd_and_match_finite_differences_when_stretched() {
        for (e, x) in elements() {
            let h = e.hessian(&x);
            assert!((h - h.transpose()).norm() <= 1e-9 * (1.0 + h.norm()));
            let min = h.symmetric_eigen().eigenvalues.min();
            assert!(min >= -1e-8 * (1.0 + h.norm()), "{e:?}: {min}");
        }
        // Stretched (all stresses tensile): the projection is inactive, so the Hessian equals
        // the finite-difference derivative of the gradient.
        let rest = [
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(1.0, 0.0, 0.0),
            Vector3::new(0.3, 0.8, 0.0),
            Vector3::zeros(),
        ];
        let mut x: [Vector3<f64>; 4] = rest.map(|p| p * 1.2);
        x[2].z += 0.1;
        let cases = [
            ThinElement::membrane([0, 1, 2], &[rest[0], rest[1], rest[2]], 3000.0, 2000.0).unwrap(),
            ThinElement::Spring {
                v: [0, 1],
                rest_length: 0.9,
                k: 50.0,
            },
            ThinElement::rod_bend([0, 1, 2], 0.5, 0.1),
        ];
        for e in cases {
            let h = e.hessian(&x);
            let used = e.vertices();
            for k in (0..12).filter(|k| used[k / 3] != NO_VERTEX) {
                let d = 1e-6;
                let (mut xp, mut xm) = (x, x);
                xp[k / 3][k % 3] += d;
                xm[k / 3][k % 3] -= d;
                let col = (e.gradient(&xp) - e.gradient(&xm)) / (2.0 * d);
                for r in 0..12 {
                    assert!(
                        (col[r] - h[(r, k)]).abs() <= 1e-4 * (1.0 + h.norm()),
                        "{e:?} ({r},{k}): fd {} vs {}",
                        col[r],
                        h[(r, k)]
                    );
                }
            }
        }
    }

    #[test]
    fn flat_rest_states_carry_no_bending_energy_or_force() {
        let rest = [
            Vector3::new(0.0, 0.0, 0.2),
            Vector3::new(1.0, 0.1, 0.2),
            Vector3::new(0.3, 0.8, 0.2),
            Vector3::new(0.6, -0.7, 0.2),
        ];
        let hinge = ThinElement::hinge([0, 1, 2, 3], &rest, 1.0).unwrap();
        assert!(hinge.energy(&rest) < 1e-20);
        assert!(hinge.gradient(&rest).norm() < 1e-9);
        // Folding the hinge costs energy.
        let mut folded = rest;
        folded[3].z += 0.3;
        assert!(hinge.energy(&folded) > 1e-3);
        let m = ThinElement::membrane([0, 1, 2], &[rest[0], rest[1], rest[2]], 1.0, 1.0).unwrap();
        assert!(m.energy(&rest) < 1e-24 && m.gradient(&rest).norm() < 1e-12);
    }

    #[test]
    fn psd_part_of_a_tiny_shear_is_finite() {
        // b² underflows to 0: normalising (l1 - d, b) directly gave 0/0.
        for (a, b, d) in [
            (-1.0, 1e-200, 2.0),
            (2.0, -1e-200, -1.0),
            (-1.0, 1e-170, 1.0),
        ] {
            let p = psd_part_2x2(&Matrix2::new(a, b, b, d));
            assert!(p.iter().all(|v| v.is_finite()), "{a} {b} {d}: {p}");
            let top = a.max(d);
            assert!((p.trace() - top).abs() < 1e-12 * top, "{a} {b} {d}: {p}");
        }
    }

    #[test]
    fn psd_part_clamps_negative_eigenvalues() {
        let s = Matrix2::new(1.0, 2.0, 2.0, -3.0);
        let p = psd_part_2x2(&s);
        let e = p.symmetric_eigen().eigenvalues;
        let se = s.symmetric_eigen().eigenvalues;
        let (lo, hi) = (e.min(), e.max());
        assert!(lo.abs() < 1e-12 && (hi - se.max()).abs() < 1e-12);
    }
}
