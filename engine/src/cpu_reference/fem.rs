//! Reference hyperelastic tetrahedral elements (the CPU twin of the future GPU element kernels):
//! stable Neo-Hookean (Smith et al. 2018, in the form of Kim & Eberle's course notes), St.
//! Venant–Kirchhoff and corotated linear elasticity. For a tet with rest shape `Dm` and current
//! shape `Ds`, `F = Ds Dm⁻¹`; the element energy is `V Ψ(F)`, its gradient `V ∂F/∂xᵀ vec(P)` and
//! its Hessian `V ∂F/∂xᵀ (∂²Ψ/∂F²) ∂F/∂x`, optionally projected to positive semi-definite by
//! clamping negative eigenvalues (what Newton needs). `vec` is column-major (nalgebra's layout).
//! Units: stresses and moduli in Pa, energies in J.

use nalgebra::{Matrix3, SMatrix, SVector, Vector3};

/// 9×9 matrix acting on column-major `vec(F)`.
pub type Mat9 = SMatrix<f64, 9, 9>;
/// 12×12 element Hessian (vertex-major: x0, y0, z0, x1, …).
pub type Mat12 = SMatrix<f64, 12, 12>;
/// 12-vector of element gradients (vertex-major).
pub type Vec12 = SVector<f64, 12>;

/// A hyperelastic material model with Lamé parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Material {
    /// Ψ = μ/2 (I_C − 3) − μ (J − 1) + λ/2 (J − 1)²: rest-stable and inversion-safe.
    StableNeoHookean {
        /// Shear modulus μ (Pa).
        mu: f64,
        /// First Lamé parameter λ (Pa).
        lambda: f64,
    },
    /// Ψ = μ E:E + λ/2 tr(E)², E = (FᵀF − I)/2.
    StVenantKirchhoff {
        /// Shear modulus μ (Pa).
        mu: f64,
        /// First Lamé parameter λ (Pa).
        lambda: f64,
    },
    /// Ψ = μ ‖F − R‖² + λ/2 tr(RᵀF − I)² with R the rotation of the polar decomposition of F
    /// (the fixed-corotated model of Stomakhin et al.); its Hessian includes ∂R/∂F.
    CorotatedLinear {
        /// Shear modulus μ (Pa).
        mu: f64,
        /// First Lamé parameter λ (Pa).
        lambda: f64,
    },
}

/// Cofactor matrix of F (∂J/∂F): columns f1×f2, f2×f0, f0×f1.
pub fn cofactor(f: &Matrix3<f64>) -> Matrix3<f64> {
    let (f0, f1, f2) = (
        f.column(0).into_owned(),
        f.column(1).into_owned(),
        f.column(2).into_owned(),
    );
    Matrix3::from_columns(&[f1.cross(&f2), f2.cross(&f0), f0.cross(&f1)])
}

/// Directional derivative of the cofactor matrix along dF.
fn cofactor_derivative(f: &Matrix3<f64>, df: &Matrix3<f64>) -> Matrix3<f64> {
    let c = |m: &Matrix3<f64>, i: usize| -> Vector3<f64> { m.column(i).into_owned() };
    Matrix3::from_columns(&[
        c(df, 1).cross(&c(f, 2)) + c(f, 1).cross(&c(df, 2)),
        c(df, 2).cross(&c(f, 0)) + c(f, 2).cross(&c(df, 0)),
        c(df, 0).cross(&c(f, 1)) + c(f, 0).cross(&c(df, 1)),
    ])
}

/// Rotation of the polar decomposition F = R S (via SVD, with det R = +1).
pub fn polar_rotation(f: &Matrix3<f64>) -> Matrix3<f64> {
    let svd = f.svd(true, true);
    let (Some(mut u), Some(v_t)) = (svd.u, svd.v_t) else {
        return Matrix3::identity();
    };
    if (u * v_t).determinant() < 0.0 {
        // Flip the direction of the smallest singular value (nalgebra sorts them descending).
        let mut col = u.column_mut(2);
        col.neg_mut();
    }
    u * v_t
}

/// Directional derivative of the polar rotation R of F along dF: dR = R [ω]× with
/// (tr(S) I − S) ω = axial(RᵀdF − dFᵀR), S = RᵀF (from dF = dR S + R dS, dS symmetric). Zero
/// where tr(S) I − S is singular (two singular values summing to zero).
pub fn polar_rotation_derivative(
    r: &Matrix3<f64>,
    f: &Matrix3<f64>,
    df: &Matrix3<f64>,
) -> Matrix3<f64> {
    let s = r.transpose() * f;
    let g = r.transpose() * df;
    let w = g - g.transpose();
    let axial = Vector3::new(w[(2, 1)], w[(0, 2)], w[(1, 0)]);
    let m = Matrix3::identity() * s.trace() - s;
    let scale = s.norm().max(1e-30);
    if m.determinant().abs() <= 1e-12 * scale * scale * scale {
        return Matrix3::zeros();
    }
    let omega = m.try_inverse().map_or(Vector3::zeros(), |mi| mi * axial);
    r * omega.cross_matrix()
}

impl Material {
    /// Energy density Ψ(F) in J/m³.
    pub fn psi(&self, f: &Matrix3<f64>) -> f64 {
        match *self {
            Material::StableNeoHookean { mu, lambda } => {
                let ic = f.norm_squared();
                let j = f.determinant();
                0.5 * mu * (ic - 3.0) - mu * (j - 1.0) + 0.5 * lambda * (j - 1.0).powi(2)
            }
            Material::StVenantKirchhoff { mu, lambda } => {
                let e = 0.5 * (f.transpose() * f - Matrix3::identity());
                mu * e.norm_squared() + 0.5 * lambda * e.trace().powi(2)
            }
            Material::CorotatedLinear { mu, lambda } => {
                let r = polar_rotation(f);
                mu * (f - r).norm_squared()
                    + 0.5 * lambda * (r.transpose() * f - Matrix3::identity()).trace().powi(2)
            }
        }
    }

    /// First Piola–Kirchhoff stress P = ∂Ψ/∂F (Pa).
    pub fn pk1(&self, f: &Matrix3<f64>) -> Matrix3<f64> {
        match *self {
            Material::StableNeoHookean { mu, lambda } => {
                let j = f.determinant();
                mu * f + (lambda * (j - 1.0) - mu) * cofactor(f)
            }
            Material::StVenantKirchhoff { mu, lambda } => {
                let e = 0.5 * (f.transpose() * f - Matrix3::identity());
                f * (2.0 * mu * e + lambda * e.trace() * Matrix3::identity())
            }
            Material::CorotatedLinear { mu, lambda } => {
                let r = polar_rotation(f);
                2.0 * mu * (f - r) + lambda * (r.transpose() * f - Matrix3::identity()).trace() * r
            }
        }
    }

    /// Directional derivative of P along dF (∂²Ψ/∂F² : dF).
    pub fn dpk1(&self, f: &Matrix3<f64>, df: &Matrix3<f64>) -> Matrix3<f64> {
        match *self {
            Material::StableNeoHookean { mu, lambda } => {
                let j = f.determinant();
                let g = cofactor(f);
                mu * df
                    + lambda * g.dot(df) * g
                    + (lambda * (j - 1.0) - mu) * cofactor_derivative(f, df)
            }
            Material::StVenantKirchhoff { mu, lambda } => {
                let e = 0.5 * (f.transpose() * f - Matrix3::identity());
                let de = 0.5 * (df.transpose() * f + f.transpose() * df);
                let s = 2.0 * mu * e + lambda * e.trace() * Matrix3::identity();
                let ds = 2.0 * mu * de + lambda * de.trace() * Matrix3::identity();
                df * s + f * ds
            }
            Material::CorotatedLinear { mu, lambda } => {
                let r = polar_rotation(f);
                let dr = polar_rotation_derivative(&r, f, df);
                let tr_s = (r.transpose() * f).trace();
                2.0 * mu * (df - dr)
                    + lambda * (r.transpose() * df).trace() * r
                    + lambda * (tr_s - 3.0) * dr
            }
        }
    }

    /// ∂²Ψ/∂F² as a 9×9 matrix on column-major vec(F).
    pub fn hessian_f(&self, f: &Matrix3<f64>) -> Mat9 {
        let mut h = Mat9::zeros();
        for k in 0..9 {
            let mut df = Matrix3::zeros();
            df[k] = 1.0;
            let col = self.dpk1(f, &df);
            for i in 0..9 {
                h[(i, k)] = col[i];
            }
        }
        h
    }
}

pub use crate::fem::rest::{lame, TetRest};

/// Reference-only methods: element energies, gradients and Hessians.
impl TetRest {
    /// Element energy V Ψ(F) (J).
    pub fn energy(&self, m: &Material, x: &[Vector3<f64>; 4]) -> f64 {
        self.volume * m.psi(&self.deformation_gradient(x))
    }

    /// Element gradient V ∂F/∂xᵀ vec(P) (N).
    pub fn gradient(&self, m: &Material, x: &[Vector3<f64>; 4]) -> Vec12 {
        let p = m.pk1(&self.deformation_gradient(x));
        let p_vec = SVector::<f64, 9>::from_column_slice(p.as_slice());
        self.volume * self.df_dx().transpose() * p_vec
    }

    /// Element Hessian (N/m); with `project_psd` its negative eigenvalues are clamped to zero.
    pub fn hessian(&self, m: &Material, x: &[Vector3<f64>; 4], project_psd: bool) -> Mat12 {
        let d = self.df_dx();
        let h = self.volume * d.transpose() * m.hessian_f(&self.deformation_gradient(x)) * d;
        if project_psd {
            project_to_psd(&h)
        } else {
            h
        }
    }
}

impl TetRest {
    /// Element Hessian `V ∂F/∂xᵀ proj(∂²Ψ/∂F²) ∂F/∂x` with the 9×9 stress-space Hessian
    /// projected to PSD (what the GPU element kernel computes; PSD by construction and cheaper
    /// than projecting the 12×12 matrix).
    pub fn hessian_stress_projected(&self, m: &Material, x: &[Vector3<f64>; 4]) -> Mat12 {
        let d = self.df_dx();
        self.volume
            * d.transpose()
            * project_to_psd_9(&m.hessian_f(&self.deformation_gradient(x)))
            * d
    }
}

/// The nearest positive semi-definite 9×9 matrix (negative eigenvalues → 0).
pub fn project_to_psd_9(h: &Mat9) -> Mat9 {
    let sym = 0.5 * (h + h.transpose());
    let eig = sym.symmetric_eigen();
    let clamped = eig.eigenvalues.map(|v| v.max(0.0));
    eig.eigenvectors * Mat9::from_diagonal(&clamped) * eig.eigenvectors.transpose()
}

/// The nearest positive semi-definite matrix of a symmetric matrix (negative eigenvalues → 0).
pub fn project_to_psd(h: &Mat12) -> Mat12 {
    let sym = 0.5 * (h + h.transpose());
    let eig = sym.symmetric_eigen();
    let clamped = eig.eigenvalues.map(|v| v.max(0.0));
    eig.eigenvectors * Mat12::from_diagonal(&clamped) * eig.eigenvectors.transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    fn rest_tet() -> [Vector3<f64>; 4] {
        [
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(0.1, 0.0, 0.01),
            Vector3::new(0.02, 0.12, 0.0),
            Vector3::new(0.01, 0.03, 0.09),
        ]
    }

    fn materials() -> Vec<Material> {
        let (mu, lambda) = lame(1e5, 0.3);
        vec![
            Material::StableNeoHookean { mu, lambda },
            Material::StVenantKirchhoff { mu, lambda },
            Material::CorotatedLinear { mu, lambda },
        ]
    }

    fn deformed(seed: &mut u64, amount: f64) -> [Vector3<f64>; 4] {
        rest_tet().map(|p| p + amount * Vector3::new(lcg(seed), lcg(seed), lcg(seed)))
    }

    #[test]
    fn rest_state_has_zero_energy_and_force() {
        let rest = TetRest::new(&rest_tet()).unwrap();
        for m in materials() {
            assert!(rest.energy(&m, &rest_tet()).abs() < 1e-12, "{m:?}");
            assert!(rest.gradient(&m, &rest_tet()).norm() < 1e-9, "{m:?}");
        }
    }

    #[test]
    fn gradients_and_hessians_match_finite_differences() {
        let rest = TetRest::new(&rest_tet()).unwrap();
        let mut seed = 7u64;
        for m in materials() {
            for trial in 0..20 {
                // Large deformations, inverted elements included (amount ~ element size).
                let x = deformed(&mut seed, if trial < 10 { 0.02 } else { 0.08 });
                let g = rest.gradient(&m, &x);
                let h = rest.hessian(&m, &x, false);
                let eps = 1e-6;
                for k in 0..12 {
                    let (mut xp, mut xm) = (x, x);
                    xp[k / 3][k % 3] += eps;
                    xm[k / 3][k % 3] -= eps;
                    let fd = (rest.energy(&m, &xp) - rest.energy(&m, &xm)) / (2.0 * eps);
                    let scale = g.norm().max(1e-3);
                    assert!(
                        (fd - g[k]).abs() < 1e-5 * scale,
                        "{m:?} trial {trial} dE/dx[{k}]: fd {fd} vs {}",
                        g[k]
                    );
                    let fd_col = (rest.gradient(&m, &xp) - rest.gradient(&m, &xm)) / (2.0 * eps);
                    let err = (fd_col - h.column(k)).norm();
                    assert!(
                        err < 1e-5 * h.norm().max(1.0),
                        "{m:?} trial {trial} d2E/dx col {k}: error {err}"
                    );
                }
            }
        }
    }

    #[test]
    fn energies_are_rotation_invariant() {
        let rest = TetRest::new(&rest_tet()).unwrap();
        let mut seed = 3u64;
        let rot = nalgebra::Rotation3::from_euler_angles(0.3, -1.1, 2.0).into_inner();
        for m in materials() {
            let x = deformed(&mut seed, 0.02);
            let xr = x.map(|p| rot * p);
            let (a, b) = (rest.energy(&m, &x), rest.energy(&m, &xr));
            assert!(
                (a - b).abs() <= 1e-9 * a.abs().max(1e-12),
                "{m:?}: {a} vs {b}"
            );
        }
    }

    #[test]
    fn projected_hessians_are_positive_semidefinite() {
        let rest = TetRest::new(&rest_tet()).unwrap();
        let mut seed = 11u64;
        for m in materials() {
            for _ in 0..10 {
                let x = deformed(&mut seed, 0.08);
                let h = rest.hessian(&m, &x, true);
                let min = h.symmetric_eigen().eigenvalues.min();
                assert!(min >= -1e-9 * h.norm(), "{m:?}: eigenvalue {min}");
                // Projection keeps the PSD part: h_raw − h_psd is negative semi-definite.
                let raw = rest.hessian(&m, &x, false);
                let max = (0.5 * (raw + raw.transpose()) - h)
                    .symmetric_eigen()
                    .eigenvalues
                    .max();
                assert!(max <= 1e-9 * h.norm().max(1.0), "{m:?}: {max}");
            }
        }
    }

    #[test]
    fn stable_neo_hookean_resists_inversion() {
        // Flattening a tet through itself costs energy and the force pushes it back.
        let rest = TetRest::new(&rest_tet()).unwrap();
        let (mu, lambda) = lame(1e5, 0.3);
        let m = Material::StableNeoHookean { mu, lambda };
        let mut x = rest_tet();
        x[3].z = -0.02; // inverted
        assert!(rest.deformation_gradient(&x).determinant() < 0.0);
        assert!(rest.energy(&m, &x) > 0.0);
        assert!(
            rest.gradient(&m, &x)[11] < 0.0,
            "force on the flipped vertex points back up"
        );
    }

    #[test]
    fn lame_parameters() {
        let (mu, lambda) = lame(1e5, 0.25);
        assert!((mu - 4e4).abs() < 1e-9 && (lambda - 4e4).abs() < 1e-9);
        assert!(TetRest::new(&[Vector3::zeros(); 4]).is_none());
    }
}
