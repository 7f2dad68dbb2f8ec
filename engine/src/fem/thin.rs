//! Thin elements for cloth and rods on the GPU (`kernels/fem/thin_gradient.comp`; their Hessian
//! blocks are computed in closed form where `kernels/fem/assemble_hessian.comp` gathers them):
//! host-side construction from cloth triangles and rod polylines, and their packing into GPU
//! arrays. They share the tets' element pool in [`super::TetElements`] (corner gradients,
//! energies, edge structure), so gathers, assembly and energy reductions treat every element
//! alike. Reference: [`crate::cpu_reference::thin`].

use nalgebra::{Matrix2, Vector3};
use supple_mesh::TriMesh;

/// One thin element with its rest data (SI units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThinElement {
    /// Cloth membrane triangle.
    Membrane {
        /// Vertices.
        v: [u32; 3],
        /// Inverse of the rest edge matrix in the triangle's own 2D frame.
        dm_inv: [[f64; 2]; 2],
        /// Rest area (m²).
        area: f64,
        /// Shear modulus × thickness (N/m).
        mu: f64,
        /// Plane-stress first Lamé parameter × thickness (N/m).
        lambda: f64,
    },
    /// `½ ‖Σ wᵢ xᵢ‖²` over 3 or 4 vertices (cloth hinge or rod bend).
    Quadratic {
        /// Vertices (`u32::MAX` for an unused fourth corner).
        v: [u32; 4],
        /// Weights (√(N/m)).
        w: [f64; 4],
    },
    /// Rod stretch spring.
    Spring {
        /// Vertices.
        v: [u32; 2],
        /// Rest length (m).
        rest_length: f64,
        /// Stiffness EA / L (N/m).
        k: f64,
    },
}

/// Unused corner marker.
pub const NO_VERTEX: u32 = u32::MAX;

impl ThinElement {
    /// Vertices with unused corners as [`NO_VERTEX`].
    pub fn vertices(&self) -> [u32; 4] {
        match *self {
            ThinElement::Membrane { v, .. } => [v[0], v[1], v[2], NO_VERTEX],
            ThinElement::Quadratic { v, .. } => v,
            ThinElement::Spring { v, .. } => [v[0], v[1], NO_VERTEX, NO_VERTEX],
        }
    }

    /// A membrane triangle over `x` (rest positions, m) with Lamé parameters × thickness.
    pub fn membrane(v: [u32; 3], x: &[Vector3<f64>; 3], mu: f64, lambda: f64) -> Option<Self> {
        let (e1, e2) = (x[1] - x[0], x[2] - x[0]);
        let l1 = e1.norm();
        let n = e1.cross(&e2);
        let area = 0.5 * n.norm();
        if !(l1 > 0.0 && area > 1e-14 * l1 * l1) {
            return None;
        }
        // Rest frame: u along e1, w in the plane orthogonal to it.
        let u = e1 / l1;
        let w = n.cross(&e1).normalize();
        let dm = Matrix2::new(l1, e2.dot(&u), 0.0, e2.dot(&w));
        let inv = dm.try_inverse()?;
        Some(ThinElement::Membrane {
            v,
            dm_inv: [[inv[(0, 0)], inv[(0, 1)]], [inv[(1, 0)], inv[(1, 1)]]],
            area,
            mu,
            lambda,
        })
    }

    /// A bending hinge over the edge (x₀, x₁) with opposite vertices x₂, x₃ (rest positions)
    /// and bending stiffness `k_b` (N·m).
    pub fn hinge(v: [u32; 4], x: &[Vector3<f64>; 4], k_b: f64) -> Option<Self> {
        let cot = |a: Vector3<f64>, b: Vector3<f64>| -> Option<f64> {
            let s = a.cross(&b).norm();
            (s > 1e-14 * a.norm() * b.norm()).then(|| a.dot(&b) / s)
        };
        let (e0, e1, e2) = (x[1] - x[0], x[2] - x[0], x[3] - x[0]);
        let (e3, e4) = (x[2] - x[1], x[3] - x[1]);
        let (c01, c02) = (cot(e0, e1)?, cot(e0, e2)?);
        let (c03, c04) = (cot(-e0, e3)?, cot(-e0, e4)?);
        let area = 0.5 * (e0.cross(&e1).norm() + e0.cross(&e2).norm());
        let k = [c03 + c04, c01 + c02, -c01 - c03, -c02 - c04];
        let s = (3.0 * k_b / area).sqrt();
        Some(ThinElement::Quadratic {
            v,
            w: k.map(|k| s * k),
        })
    }

    /// A rod bend over three consecutive vertices with bending stiffness `ei` (N·m²) and rest
    /// segment length `l` (m).
    pub fn rod_bend(v: [u32; 3], ei: f64, l: f64) -> Self {
        let s = (ei / (l * l * l)).sqrt();
        ThinElement::Quadratic {
            v: [v[0], v[1], v[2], NO_VERTEX],
            w: [s, -2.0 * s, s, 0.0],
        }
    }
}

/// Cloth material in shell form (SI units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClothMaterial {
    /// Young's modulus (Pa).
    pub youngs_modulus: f64,
    /// Poisson ratio.
    pub poisson_ratio: f64,
    /// Thickness (m).
    pub thickness: f64,
    /// Bending stiffness (N·m); `None` derives `E t³ / (12 (1 − ν²))`.
    pub bending_stiffness: Option<f64>,
}

impl ClothMaterial {
    /// Plane-stress Lamé parameters times the thickness `(μ t, λ t)` (N/m).
    pub fn membrane_lame(&self) -> (f64, f64) {
        let (e, nu, t) = (self.youngs_modulus, self.poisson_ratio, self.thickness);
        (e * t / (2.0 * (1.0 + nu)), e * t * nu / (1.0 - nu * nu))
    }

    /// Bending stiffness (N·m).
    pub fn bending(&self) -> f64 {
        let (e, nu, t) = (self.youngs_modulus, self.poisson_ratio, self.thickness);
        self.bending_stiffness
            .unwrap_or(e * t * t * t / (12.0 * (1.0 - nu * nu)))
    }
}

/// Membrane triangles and bending hinges of a cloth mesh whose vertices start at `base` in the
/// model. Errors name the degenerate triangle.
pub fn cloth_elements(
    mesh: &TriMesh,
    positions: &[[f64; 3]],
    base: u32,
    material: &ClothMaterial,
) -> Result<Vec<ThinElement>, String> {
    let p = |v: u32| Vector3::from(positions[v as usize]);
    let (mu, lambda) = material.membrane_lame();
    let mut out = Vec::with_capacity(mesh.triangles.len() * 5 / 2);
    for (k, t) in mesh.triangles.iter().enumerate() {
        let e = ThinElement::membrane(
            t.map(|v| v + base),
            &[p(t[0]), p(t[1]), p(t[2])],
            mu,
            lambda,
        )
        .ok_or_else(|| format!("triangle {k} is degenerate"))?;
        out.push(e);
    }
    let kb = material.bending();
    if kb > 0.0 {
        for s in mesh.bending_stencils() {
            // Hinges with a degenerate (zero-angle) corner carry no bending term.
            if let Some(h) = ThinElement::hinge(s.map(|v| v + base), &s.map(p), kb) {
                out.push(h);
            }
        }
    }
    Ok(out)
}

/// Stretch springs and bends of a rod polyline `0, 1, …, n−1` (vertices from `base`) with
/// Young's modulus `e` (Pa), radius `r` (m) and bending stiffness `ei` (N·m²).
pub fn rod_elements(
    positions: &[[f64; 3]],
    base: u32,
    e: f64,
    r: f64,
    ei: f64,
) -> Vec<ThinElement> {
    let n = positions.len();
    let area = std::f64::consts::PI * r * r;
    let p = |v: usize| Vector3::from(positions[v]);
    let mut out = Vec::with_capacity(2 * n);
    for i in 0..n.saturating_sub(1) {
        let l = (p(i + 1) - p(i)).norm();
        out.push(ThinElement::Spring {
            v: [base + i as u32, base + i as u32 + 1],
            rest_length: l,
            k: e * area / l,
        });
    }
    for i in 1..n.saturating_sub(1) {
        let l = 0.5 * ((p(i) - p(i - 1)).norm() + (p(i + 1) - p(i)).norm());
        let v = base + i as u32;
        out.push(ThinElement::rod_bend([v - 1, v, v + 1], ei, l));
    }
    out
}

/// GPU arrays of thin elements: vertices (`NO_VERTEX` for unused corners), kind codes and two
/// vec4 of data each (layout in `kernels/include/thin.glsl`).
pub fn pack(elements: &[ThinElement]) -> (Vec<[u32; 4]>, Vec<u32>, Vec<[f32; 4]>) {
    let mut verts = Vec::with_capacity(elements.len());
    let mut kinds = Vec::with_capacity(elements.len());
    let mut data = Vec::with_capacity(2 * elements.len());
    for e in elements {
        verts.push(e.vertices());
        let f = |a: [f64; 4]| a.map(|x| x as f32);
        match *e {
            ThinElement::Membrane {
                dm_inv,
                area,
                mu,
                lambda,
                ..
            } => {
                kinds.push(0);
                data.push(f([dm_inv[0][0], dm_inv[0][1], dm_inv[1][0], dm_inv[1][1]]));
                data.push(f([area, mu, lambda, 0.0]));
            }
            ThinElement::Quadratic { w, .. } => {
                kinds.push(1);
                data.push(f(w));
                data.push([0.0; 4]);
            }
            ThinElement::Spring { rest_length, k, .. } => {
                kinds.push(2);
                data.push(f([rest_length, k, 0.0, 0.0]));
                data.push([0.0; 4]);
            }
        }
    }
    (verts, kinds, data)
}
