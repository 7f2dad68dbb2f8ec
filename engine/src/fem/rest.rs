//! Rest data of tetrahedral elements: the inverse rest shape matrix and rest volume of a tet,
//! its deformation gradient, and the Lamé parameters of a material. Shared by the model, the GPU
//! elements and the XPBD constraints; the element energies, gradients and Hessians live in the
//! reference ([`crate::cpu_reference::fem`]) and the kernels.

use nalgebra::{Matrix3, SMatrix, Vector3};

/// Lamé parameters `(μ, λ)` from Young's modulus `e` (Pa) and Poisson ratio `nu`.
pub fn lame(e: f64, nu: f64) -> (f64, f64) {
    (
        e / (2.0 * (1.0 + nu)),
        e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
    )
}

/// A tetrahedron's rest data: inverse rest shape matrix and rest volume.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TetRest {
    /// Dm⁻¹ with Dm = [X1 − X0, X2 − X0, X3 − X0].
    pub dm_inv: Matrix3<f64>,
    /// Rest volume (m³).
    pub volume: f64,
}

impl TetRest {
    /// Rest data of the tet `x` (positively oriented, non-degenerate); `None` if degenerate.
    pub fn new(x: &[Vector3<f64>; 4]) -> Option<TetRest> {
        let dm = Matrix3::from_columns(&[x[1] - x[0], x[2] - x[0], x[3] - x[0]]);
        let volume = dm.determinant() / 6.0;
        if volume.abs() <= f64::EPSILON * (x[1] - x[0]).norm().powi(3) {
            return None;
        }
        Some(TetRest {
            dm_inv: dm.try_inverse()?,
            volume: volume.abs(),
        })
    }

    /// Deformation gradient F = Ds Dm⁻¹ at positions `x`.
    pub fn deformation_gradient(&self, x: &[Vector3<f64>; 4]) -> Matrix3<f64> {
        Matrix3::from_columns(&[x[1] - x[0], x[2] - x[0], x[3] - x[0]]) * self.dm_inv
    }

    /// ∂vec(F)/∂x as a 9×12 matrix (vertex-major x).
    pub fn df_dx(&self) -> SMatrix<f64, 9, 12> {
        // F = Σ_k x_k ⊗ b_k with b_0 = −(row sums of Dm⁻¹), b_{1..3} = rows of Dm⁻¹.
        let m = &self.dm_inv;
        let rows: [Vector3<f64>; 3] = [
            m.row(0).transpose(),
            m.row(1).transpose(),
            m.row(2).transpose(),
        ];
        let b = [-(rows[0] + rows[1] + rows[2]), rows[0], rows[1], rows[2]];
        let mut d = SMatrix::<f64, 9, 12>::zeros();
        for (k, bk) in b.iter().enumerate() {
            for col in 0..3 {
                for row in 0..3 {
                    // vec index of F(row, col) is col * 3 + row; depends on x_k[row] * bk[col].
                    d[(col * 3 + row, 3 * k + row)] = bk[col];
                }
            }
        }
        d
    }
}
