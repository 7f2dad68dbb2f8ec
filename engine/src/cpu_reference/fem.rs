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

/// Rotation-variant SVD F = U diag(σ) Vᵀ with U, V rotations, σ₁ ≥ σ₂ ≥ |σ₃| and σ₃ < 0 for
/// an inverted F, as `kernels/fem/tet_eigensystem.comp` computes it: V from the eigenvectors of
/// FᵀF (descending), u₁ = F v₁/‖F v₁‖, u₂ the part of F v₂ orthogonal to u₁, u₃ = u₁ × u₂.
pub fn signed_svd(f: &Matrix3<f64>) -> (Matrix3<f64>, Vector3<f64>, Matrix3<f64>) {
    let eig = (f.transpose() * f).symmetric_eigen();
    let mut order = [0usize, 1, 2];
    order.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let mut v = Matrix3::from_columns(&order.map(|k| eig.eigenvectors.column(k).into_owned()));
    if v.determinant() < 0.0 {
        v.column_mut(2).neg_mut();
    }
    let a1 = f * v.column(0);
    let l1 = a1.norm();
    let u1 = if l1 > 1e-300 { a1 / l1 } else { Vector3::x() };
    let mut a2 = f * v.column(1);
    a2 -= a2.dot(&u1) * u1;
    let l2 = a2.norm();
    let other = if u1.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let u2 = if l2 > 1e-300 * l1.max(1e-300) {
        a2 / l2
    } else {
        u1.cross(&other).normalize()
    };
    let u3 = u1.cross(&u2);
    let u = Matrix3::from_columns(&[u1, u2, u3]);
    let sigma = Vector3::new(
        u1.dot(&(f * v.column(0))),
        u2.dot(&(f * v.column(1))),
        u3.dot(&(f * v.column(2))),
    );
    (u, sigma, v)
}

/// The index pairs (i, j) of the twist and flip modes, in storage order.
pub const MODE_PAIRS: [(usize, usize); 3] = [(0, 1), (0, 2), (1, 2)];

/// The PSD-projected stress-space Hessian of one tet in the analytic eigensystem of Smith, de
/// Goes and Kim 2019 ("Analytic Eigensystems for Isotropic Distortion Energies"): with the
/// rotation-variant SVD F = U Σ Vᵀ, ∂²Ψ/∂F² has the twist modes U Tᵢⱼ Vᵀ (eigenvalue
/// (Ψᵢ + Ψⱼ)/(σᵢ + σⱼ)), the flip modes U Lᵢⱼ Vᵀ ((Ψᵢ − Ψⱼ)/(σᵢ − σⱼ)) and three scaling modes
/// U diag(z) Vᵀ from the 3×3 Hessian A = ∂²Ψ/∂σ². Negative eigenvalues are clamped to zero.
/// Everything is multiplied by the rest volume, so block (a, b) of the element Hessian is
/// `U K_ab Uᵀ` with K_ab = diag(w_a) A⁺ diag(w_b) + Σ λ_t t(w_a) t(w_b)ᵀ + λ_f f(w_a) f(w_b)ᵀ,
/// w_a = Vᵀ b_a (b_a: row a of ∂F/∂x). The kernel stores exactly these numbers per tet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TetEigensystem {
    /// U of the SVD.
    pub u: Matrix3<f64>,
    /// w_a = Vᵀ b_a per corner.
    pub w: [Vector3<f64>; 4],
    /// V·max(twist eigenvalue, 0) per pair of [`MODE_PAIRS`] (N/m · m² … J per unit strain²).
    pub twist: [f64; 3],
    /// V·max(flip eigenvalue, 0) per pair of [`MODE_PAIRS`].
    pub flip: [f64; 3],
    /// V·A⁺: the scaling block projected to PSD.
    pub scale: Matrix3<f64>,
}

/// Twist and flip eigenvalues of pair (i, j) (third index k) and the 3×3 ∂²Ψ/∂σ², in closed
/// form per model (no division by σᵢ − σⱼ).
fn sigma_derivatives(m: &Material, s: &Vector3<f64>) -> ([f64; 3], [f64; 3], Matrix3<f64>) {
    let (mut twist, mut flip) = ([0.0; 3], [0.0; 3]);
    let mut a = Matrix3::zeros();
    let j = s.x * s.y * s.z;
    for (p, &(i, jj)) in MODE_PAIRS.iter().enumerate() {
        let k = 3 - i - jj;
        let (si, sj, sk) = (s[i], s[jj], s[k]);
        match *m {
            Material::StableNeoHookean { mu, lambda } => {
                let c = lambda * (j - 1.0) - mu;
                flip[p] = mu - c * sk;
                twist[p] = mu + c * sk;
            }
            Material::StVenantKirchhoff { mu, lambda } => {
                let t = 0.5 * lambda * (s.norm_squared() - 3.0);
                flip[p] = mu * (si * si + si * sj + sj * sj - 1.0) + t;
                twist[p] = mu * (si * si - si * sj + sj * sj - 1.0) + t;
            }
            Material::CorotatedLinear { mu, lambda } => {
                flip[p] = 2.0 * mu;
                let d = si + sj;
                // The ∂R/∂F term is dropped where two singular values sum to zero (as in
                // polar_rotation_derivative).
                twist[p] = if d > COROTATED_SINGULAR * s.amax().max(1e-30) {
                    2.0 * mu + (2.0 * lambda * (s.sum() - 3.0) - 4.0 * mu) / d
                } else {
                    2.0 * mu
                };
            }
        }
    }
    for i in 0..3 {
        for jj in 0..3 {
            let k = if i == jj { 0 } else { 3 - i - jj };
            a[(i, jj)] = match *m {
                Material::StableNeoHookean { mu, lambda } => {
                    if i == jj {
                        // (∂J/∂σᵢ)² = (σₚσ_q)², p and q the other two indices.
                        let (p, q) = ((i + 1) % 3, (i + 2) % 3);
                        mu + lambda * (s[p] * s[q]).powi(2)
                    } else {
                        s[k] * (lambda * (2.0 * j - 1.0) - mu)
                    }
                }
                Material::StVenantKirchhoff { mu, lambda } => {
                    if i == jj {
                        mu * (3.0 * s[i] * s[i] - 1.0)
                            + 0.5 * lambda * (s.norm_squared() - 3.0)
                            + lambda * s[i] * s[i]
                    } else {
                        lambda * s[i] * s[jj]
                    }
                }
                Material::CorotatedLinear { mu, lambda } => {
                    if i == jj {
                        2.0 * mu + lambda
                    } else {
                        lambda
                    }
                }
            };
        }
    }
    (twist, flip, a)
}

/// Relative size below which σᵢ + σⱼ counts as zero in the fixed-corotated twist eigenvalue.
pub const COROTATED_SINGULAR: f64 = 1e-6;

impl TetRest {
    /// The analytic eigensystem of the element at `x` ([`TetEigensystem`]).
    pub fn eigensystem(&self, m: &Material, x: &[Vector3<f64>; 4]) -> TetEigensystem {
        self.eigensystem_projected(m, x, true)
    }

    /// [`TetRest::eigensystem`] with every eigenvalue clamped at 0 (`project`) or as it is
    /// (the exact Hessian of `fem/tet_eigensystem.comp` with PROJECT = 0).
    pub fn eigensystem_projected(
        &self,
        m: &Material,
        x: &[Vector3<f64>; 4],
        project: bool,
    ) -> TetEigensystem {
        let f = self.deformation_gradient(x);
        let (u, s, v) = signed_svd(&f);
        let (twist, flip, a) = sigma_derivatives(m, &s);
        let floor = |l: f64| if project { l.max(0.0) } else { l };
        let eig = a.symmetric_eigen();
        let clamped = eig.eigenvalues.map(floor);
        let scale = self.volume
            * eig.eigenvectors
            * Matrix3::from_diagonal(&clamped)
            * eig.eigenvectors.transpose();
        let r = &self.dm_inv;
        let rows = [
            r.row(0).transpose(),
            r.row(1).transpose(),
            r.row(2).transpose(),
        ];
        let b = [-(rows[0] + rows[1] + rows[2]), rows[0], rows[1], rows[2]];
        TetEigensystem {
            u,
            w: b.map(|bk| v.transpose() * bk),
            twist: twist.map(|l| self.volume * floor(l)),
            flip: flip.map(|l| self.volume * floor(l)),
            scale,
        }
    }

    /// The element Hessian from the analytic eigensystem (what the GPU assembles block by
    /// block): equal to [`TetRest::hessian_stress_projected`] up to rounding.
    pub fn hessian_analytic(&self, m: &Material, x: &[Vector3<f64>; 4]) -> Mat12 {
        self.hessian_analytic_projected(m, x, true)
    }

    /// [`TetRest::hessian_analytic`] projected (`project`) or exact: without the projection
    /// equal to [`TetRest::hessian`] without it, up to rounding.
    pub fn hessian_analytic_projected(
        &self,
        m: &Material,
        x: &[Vector3<f64>; 4],
        project: bool,
    ) -> Mat12 {
        let e = self.eigensystem_projected(m, x, project);
        let mut h = Mat12::zeros();
        for a in 0..4 {
            for b in 0..4 {
                h.fixed_view_mut::<3, 3>(3 * a, 3 * b)
                    .copy_from(&e.block(a, b));
            }
        }
        h
    }
}

impl TetEigensystem {
    /// Block (a, b) of the projected element Hessian (N/m).
    pub fn block(&self, a: usize, b: usize) -> Matrix3<f64> {
        let (wa, wb) = (self.w[a], self.w[b]);
        let mut k = Matrix3::from_diagonal(&wa) * self.scale * Matrix3::from_diagonal(&wb);
        let h = std::f64::consts::FRAC_1_SQRT_2;
        for (p, &(i, j)) in MODE_PAIRS.iter().enumerate() {
            let mode = |w: &Vector3<f64>, sign: f64| {
                let mut o = Vector3::zeros();
                o[i] = h * w[j];
                o[j] = sign * h * w[i];
                o
            };
            k += self.twist[p] * mode(&wa, -1.0) * mode(&wb, -1.0).transpose();
            k += self.flip[p] * mode(&wa, 1.0) * mode(&wb, 1.0).transpose();
        }
        self.u * k * self.u.transpose()
    }

    /// Trace of the whole 12×12 element Hessian (the sum of its eigenvalues; the projected
    /// one's is the warm start's stiffness estimate).
    pub fn trace(&self) -> f64 {
        (0..4).map(|a| self.block(a, a).trace()).sum()
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

    /// 60 deformations per material from `seed`: small, large and inverting ones (amount up
    /// to the element size; every fifth pushes vertex 3 through the opposite face).
    fn deformation_cases(mut seed: u64) -> Vec<(Material, usize, [Vector3<f64>; 4])> {
        let mut cases = Vec::new();
        for m in materials() {
            for trial in 0..60 {
                let amount = [0.005, 0.03, 0.08][trial % 3];
                let mut x = deformed(&mut seed, amount);
                if trial % 5 == 0 {
                    x[3].z = -0.5 * x[3].z.abs() - 0.01;
                }
                cases.push((m, trial, x));
            }
        }
        cases
    }

    #[test]
    fn analytic_eigensystem_equals_the_numerical_projection_on_random_and_inverted_f() {
        let rest = TetRest::new(&rest_tet()).unwrap();
        let mut inverted = 0;
        for (m, trial, x) in deformation_cases(23) {
            let f = rest.deformation_gradient(&x);
            if f.determinant() < 0.0 {
                inverted += 1;
            }
            let (u, sigma, v) = signed_svd(&f);
            assert!(
                (u * Matrix3::from_diagonal(&sigma) * v.transpose() - f).norm() < 1e-9 * f.norm()
            );
            assert!((u.determinant() - 1.0).abs() < 1e-9 && (v.determinant() - 1.0).abs() < 1e-9);
            let numeric = rest.hessian_stress_projected(&m, &x);
            let analytic = rest.hessian_analytic(&m, &x);
            let err = (numeric - analytic).norm() / numeric.norm().max(1e-30);
            assert!(
                err < 1e-7,
                "{m:?} trial {trial} (det F {}): relative error {err}",
                f.determinant()
            );
            let e = rest.eigensystem(&m, &x);
            assert!((e.trace() - numeric.trace()).abs() <= 1e-7 * numeric.trace().abs().max(1e-30));
        }
        assert!(inverted >= 30, "{inverted} inverted cases");
    }

    #[test]
    fn unprojected_analytic_eigensystem_equals_the_exact_hessian() {
        let rest = TetRest::new(&rest_tet()).unwrap();
        let mut indefinite = 0;
        for (m, trial, x) in deformation_cases(29) {
            let exact = rest.hessian(&m, &x, false);
            let analytic = rest.hessian_analytic_projected(&m, &x, false);
            let err = (exact - analytic).norm() / exact.norm().max(1e-30);
            assert!(err < 1e-7, "{m:?} trial {trial}: relative error {err}");
            if exact.symmetric_eigen().eigenvalues.min() < -1e-9 * exact.norm() {
                indefinite += 1;
            }
        }
        // The comparison covers Hessians that the projection changes.
        assert!(indefinite >= 30, "{indefinite} indefinite cases");
    }

    #[test]
    fn lame_parameters() {
        let (mu, lambda) = lame(1e5, 0.25);
        assert!((mu - 4e4).abs() < 1e-9 && (lambda - 4e4).abs() < 1e-9);
        assert!(TetRest::new(&[Vector3::zeros(); 4]).is_none());
    }
}
