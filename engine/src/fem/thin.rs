//! Thin elements for cloth and rods on the GPU (`kernels/fem/thin_gradient.comp`,
//! `kernels/fem/thin_hessian.comp`): host-side construction from cloth triangles and rod
//! polylines, and their packing into GPU arrays. They share the tets' element pool in
//! [`super::TetElements`] (corner gradients, energies, 12×12 Hessians), so gathers, assembly and
//! energy reductions treat every element alike. Reference: [`crate::cpu_reference::thin`].

pub use crate::cpu_reference::thin::{ThinElement, NO_VERTEX};
use nalgebra::Vector3;
use supple_mesh::TriMesh;

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
