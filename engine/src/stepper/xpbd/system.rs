//! Host-side packing of a [`SimModel`] into XPBD constraint arrays (f32, the layouts of
//! `kernels/xpbd/*.comp`), colored once with the host greedy coloring and stored color by color
//! so a color's sweep is one contiguous range. Shared by the GPU stepper ([`super::XpbdStepper`])
//! and the plain-Rust reference ([`crate::cpu_reference::xpbd`]), so both see the same numbers.
//!
//! Compliance mappings (SI units; α is the inverse stiffness of the constraint's quadratic
//! energy `½ C² / α`):
//! - **Tets** (stable Neo-Hookean, Macklin & Müller 2021): deviatoric `C_D = ‖F‖_F` with
//!   `α_D = 1 / (μ V)` and hydrostatic `C_H = det F − γ`, `γ = 1 + μ/λ`, with
//!   `α_H = 1 / (λ V)` (V rest volume, μ and λ the tet's Lamé parameters from
//!   [`SimModel::tet_lame`]). The sum `V(½ μ ‖F‖² + ½ λ (J − γ)²)` equals the engine's stable
//!   Neo-Hookean energy ([`crate::cpu_reference::fem::Material::StableNeoHookean`]) up to a
//!   constant. λ is clamped to at least `10⁻² μ` (Poisson ratios ≤ 0 would make γ infinite).
//! - **Cloth edges** (mass-spring from the membrane, thin elements `Membrane`): each unique
//!   triangle edge `e` gets `C = ‖xₐ − x_b‖ − L` with stiffness
//!   `k_e = (4/3)(μt + λt) Σ_{T ∋ e} A_T / L_e²` (μt, λt the membrane's plane-stress Lamé
//!   parameters × thickness, A_T the rest areas of the triangles sharing the edge), `α = 1/k_e`.
//!   Under a uniform isotropic stretch ε every edge stretches by εL and the springs store
//!   `½ (4/3)(μt + λt) ε² · 3A = 2(μt + λt) ε² A`, the membrane's own energy `A(μ‖G‖² +
//!   λ/2 tr(G)²)` with `G = εI` (to first order), so the area stiffness matches `E t / (1 − ν)`.
//! - **Rod stretch** (thin elements `Spring`, `k = E A / L`): `C = ‖xₐ − x_b‖ − L`, `α = 1/k`.
//! - **Bending** (thin elements `Quadratic`: cloth hinges from the mesh's bending stencils with
//!   Bergou et al.'s isometric weights `wᵢ = √(3 k_b / (A₀ + A₁)) Kᵢ`, and rod bends
//!   `√(EI / L³) (1, −2, 1)`): the energy `½ ‖Σ wᵢ xᵢ‖²` is the vector constraint
//!   `C = Σ kᵢ xᵢ` with `kᵢ = wᵢ / s`, `s = maxᵢ |wᵢ|`, and compliance `α = 1 / s²`.

use crate::coloring::{greedy_coloring, GreedyOrder, PAD};
use crate::contact::colliders::{pack_colliders, Collider};
use crate::fem::rest::TetRest;
use crate::fem::thin::{ThinElement, NO_VERTEX};
use crate::math::vec4 as f4;
use crate::model::SimModel;
use crate::scene::MaterialModel;
use nalgebra::Vector3;
use std::collections::HashMap;
use std::ops::Range;

/// One constraint family, stored color by color.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConstraintSet {
    /// Vertices of each constraint ([`NO_VERTEX`] for unused corners).
    pub vertices: Vec<[u32; 4]>,
    /// Per-constraint data, `stride` vec4 each (layout per kernel).
    pub data: Vec<[f32; 4]>,
    /// vec4 per constraint in `data`.
    pub stride: usize,
    /// Index range of each color in `vertices`.
    pub colors: Vec<Range<u32>>,
}

impl ConstraintSet {
    /// Number of constraints.
    pub fn len(&self) -> usize {
        self.vertices.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.vertices.is_empty()
    }

    /// Colors the constraints (greedy, smallest-last) and reorders them color by color.
    fn colored(
        vertices: Vec<[u32; 4]>,
        data: Vec<[f32; 4]>,
        stride: usize,
        num_vertices: usize,
    ) -> Result<ConstraintSet, String> {
        let padded: Vec<[u32; 4]> = vertices
            .iter()
            .map(|c| c.map(|v| if v == NO_VERTEX { PAD } else { v }))
            .collect();
        let coloring = greedy_coloring(&padded, num_vertices, GreedyOrder::SmallestLast)
            .map_err(|e| e.to_string())?;
        let mut order: Vec<usize> = (0..vertices.len()).collect();
        order.sort_by_key(|&i| (coloring.colors[i], i));
        let mut out = ConstraintSet {
            vertices: Vec::with_capacity(vertices.len()),
            data: Vec::with_capacity(data.len()),
            stride,
            colors: Vec::new(),
        };
        for &i in &order {
            let c = coloring.colors[i] as usize;
            while out.colors.len() <= c {
                let at = out.vertices.len() as u32;
                out.colors.push(at..at);
            }
            out.colors[c].end = out.vertices.len() as u32 + 1;
            out.vertices.push(vertices[i]);
            out.data
                .extend_from_slice(&data[i * stride..(i + 1) * stride]);
        }
        Ok(out)
    }
}

/// A model packed for XPBD: per-vertex state and the three constraint families.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct XpbdSystem {
    /// Initial positions (m, w = 0); also the rest positions scripted motions start from.
    pub positions: Vec<[f32; 4]>,
    /// Initial velocities (m/s, w = 0).
    pub velocities: Vec<[f32; 4]>,
    /// Inverse masses (1/kg; 0 for fixed and scripted vertices).
    pub inv_mass: Vec<f32>,
    /// Constant external forces (N, w = 0).
    pub external_forces: Vec<[f32; 4]>,
    /// Scripted motion of each vertex, or `u32::MAX`.
    pub vertex_motion: Vec<u32>,
    /// Motions as three vec4 each: (axis, ω), (centre, 0), (velocity, 0).
    pub motions: Vec<[f32; 4]>,
    /// Colliders as four vec4 each (`kernels/include/colliders.glsl`).
    pub colliders: Vec<[f32; 4]>,
    /// Number of colliders.
    pub num_colliders: u32,
    /// Per vertex, its body's clearance from colliders on top of their offsets (m).
    pub collider_offsets: Vec<f32>,
    /// Stable Neo-Hookean tets: data = Dm⁻¹ columns (3 vec4) and (α_D, α_H, γ, 0).
    pub tets: ConstraintSet,
    /// Distance constraints (cloth edges, rod segments): data = (L, α, 0, 0).
    pub edges: ConstraintSet,
    /// Vector bending constraints: data = (k₀..k₃) and (α, 0, 0, 0).
    pub bends: ConstraintSet,
}

impl XpbdSystem {
    /// Packs and colors `model`'s constraints; `colliders` are the analytic colliders.
    pub fn new(model: &SimModel, colliders: &[Collider]) -> Result<XpbdSystem, String> {
        let n = model.positions.len();
        let p = |v: u32| Vector3::from(model.positions[v as usize]);
        // Tets.
        let mut tv = Vec::with_capacity(model.tets.len());
        let mut td = Vec::with_capacity(4 * model.tets.len());
        // Corotated tets (by body material); the others are stable Neo-Hookean.
        let mut corotated = vec![false; model.tets.len()];
        for b in &model.bodies {
            if b.model == MaterialModel::Corotated {
                for k in b.tets.clone() {
                    corotated[k as usize] = true;
                }
            }
        }
        for (k, t) in model.tets.iter().enumerate() {
            let rest = TetRest::new(&t.map(p)).ok_or_else(|| format!("tet {k} is degenerate"))?;
            let (mu, lambda) = model.tet_lame[k];
            let lambda = lambda.max(1e-2 * mu);
            let b = rest.dm_inv;
            for c in 0..3 {
                td.push([b[(0, c)] as f32, b[(1, c)] as f32, b[(2, c)] as f32, 0.0]);
            }
            td.push(if corotated[k] {
                // μ‖F − R‖² + λ/2 (det F − 1)², per unit rest volume.
                [
                    (1.0 / (2.0 * mu * rest.volume)) as f32,
                    (1.0 / (lambda * rest.volume)) as f32,
                    1.0,
                    1.0,
                ]
            } else {
                [
                    (1.0 / (mu * rest.volume)) as f32,
                    (1.0 / (lambda * rest.volume)) as f32,
                    (1.0 + mu / lambda) as f32,
                    0.0,
                ]
            });
            tv.push(*t);
        }
        // Cloth edges (from membranes), rod springs and bends.
        let mut edge_index: HashMap<(u32, u32), usize> = HashMap::new();
        let mut cloth_edges: Vec<([u32; 2], f64)> = Vec::new(); // (edge, (4/3)(μ+λ)ΣA)
        let mut ev: Vec<[u32; 4]> = Vec::new();
        let mut ed: Vec<[f32; 4]> = Vec::new();
        let mut bv: Vec<[u32; 4]> = Vec::new();
        let mut bd: Vec<[f32; 4]> = Vec::new();
        for e in &model.thin_elements {
            match *e {
                ThinElement::Membrane {
                    v,
                    area,
                    mu,
                    lambda,
                    ..
                } => {
                    for (a, b) in [(v[0], v[1]), (v[1], v[2]), (v[2], v[0])] {
                        let key = (a.min(b), a.max(b));
                        let i = *edge_index.entry(key).or_insert_with(|| {
                            cloth_edges.push(([key.0, key.1], 0.0));
                            cloth_edges.len() - 1
                        });
                        cloth_edges[i].1 += 4.0 / 3.0 * (mu + lambda) * area;
                    }
                }
                ThinElement::Spring {
                    v, rest_length, k, ..
                } => {
                    ev.push([v[0], v[1], NO_VERTEX, NO_VERTEX]);
                    ed.push([rest_length as f32, (1.0 / k) as f32, 0.0, 0.0]);
                }
                ThinElement::Quadratic { v, w } => {
                    let s = w.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                    if s > 0.0 {
                        bv.push(v);
                        bd.push(w.map(|x| (x / s) as f32));
                        bd.push([(1.0 / (s * s)) as f32, 0.0, 0.0, 0.0]);
                    }
                }
            }
        }
        for ([a, b], ka) in cloth_edges {
            let l = (p(a) - p(b)).norm();
            if !(l.is_finite() && l > 0.0) {
                return Err(format!("cloth edge ({a}, {b}) has zero length"));
            }
            ev.push([a, b, NO_VERTEX, NO_VERTEX]);
            ed.push([l as f32, (l * l / ka) as f32, 0.0, 0.0]);
        }
        // The state's packing, without the padding of an empty list.
        let mut motions = crate::state::pack_motions(model);
        motions.truncate(3 * model.motions.len());
        Ok(XpbdSystem {
            positions: model.positions.iter().copied().map(f4).collect(),
            velocities: model.velocities.iter().copied().map(f4).collect(),
            inv_mass: model.inv_mass.iter().map(|&w| w as f32).collect(),
            external_forces: model.external_forces.iter().copied().map(f4).collect(),
            vertex_motion: model.vertex_motion.clone(),
            motions,
            colliders: pack_colliders(colliders),
            num_colliders: colliders.len() as u32,
            collider_offsets: model
                .vertex_collider_offsets()
                .iter()
                .map(|&o| o as f32)
                .collect(),
            tets: ConstraintSet::colored(tv, td, 4, n)?,
            edges: ConstraintSet::colored(ev, ed, 1, n)?,
            bends: ConstraintSet::colored(bv, bd, 2, n)?,
        })
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        self.positions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cloth_edge_stiffness_matches_isotropic_area_stretch() {
        // Two right triangles forming a unit square: 5 edges.
        let mesh = supple_mesh::TriMesh {
            positions: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [1.0, 1.0, 0.0],
                [0.0, 1.0, 0.0],
            ],
            triangles: vec![[0, 1, 2], [0, 2, 3]],
        };
        let mat = crate::fem::thin::ClothMaterial {
            youngs_modulus: 1e4,
            poisson_ratio: 0.3,
            thickness: 0.01,
            bending_stiffness: Some(0.0),
        };
        let els = crate::fem::thin::cloth_elements(&mesh, &mesh.positions, 0, &mat).unwrap();
        let model = SimModel {
            positions: mesh.positions.clone(),
            velocities: vec![[0.0; 3]; 4],
            masses: vec![1.0; 4],
            inv_mass: vec![1.0; 4],
            thin_elements: els,
            vertex_motion: vec![u32::MAX; 4],
            external_forces: vec![[0.0; 3]; 4],
            ..Default::default()
        };
        let s = XpbdSystem::new(&model, &[]).unwrap();
        assert_eq!(s.edges.len(), 5);
        // Σ_e ½ k_e (ε L_e)² = (E t / (1 − ν)) ε² A for a uniform stretch ε (A = 1).
        let eps = 1e-3f64;
        let e_springs: f64 = s
            .edges
            .data
            .iter()
            .map(|d| 0.5 / d[1] as f64 * (eps * d[0] as f64).powi(2))
            .sum();
        let expect = 1e4 * 0.01 / (1.0 - 0.3) * eps * eps;
        assert!(
            (e_springs / expect - 1.0).abs() < 1e-5,
            "{e_springs} {expect}"
        );
    }
}
