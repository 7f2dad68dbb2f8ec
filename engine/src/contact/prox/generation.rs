//! RAINBOW's contact generation in plain Rust (spec §B4, decision 1; the other way, Supple's
//! proximity pairs, is the GPU kernel `kernels/prox/pair_contacts.comp` with its reference in
//! `cpu_reference::prox::pairs`):
//! - [`SdfContactGenerator`]: RAINBOW's (`prox_soft_bodies/collision_detection.py`): surface
//!   triangle pairs of two bodies whose boxes, inflated by the envelope, overlap (RAINBOW: a
//!   k-DOP BVH inflated by the envelope, here a sweep over x); for each pair, in both
//!   directions, the triangle of body A is mapped into the material space of body B through the
//!   barycentric coordinates of its corners in B's tet (the tet owning B's triangle;
//!   `w = B⁻¹(A − V3)`, report §2.3.2), Frank–Wolfe finds its deepest point in B's rest-space
//!   signed distance grid, and a point inside the grid with φ ≤ envelope becomes a contact:
//!   gap φ, normal ∇φ mapped to world, world point through B's tet, nodes and weights of both
//!   owning tets (B's with −ω, A's with +ω: the normal points out of B toward A). Then the
//!   reduction drops repeated points (RAINBOW: a set of (body pair, world point)).
//!
//! Ours: normals map to world with the cofactor of B's deformation gradient (F⁻ᵀ n; RAINBOW
//! uses F n, the same for rigid motions); the corners of a triangle as deep as the Frank–Wolfe
//! point (to rounding) are contacts too (a flat contact would otherwise give one corner per
//! triangle, picked by rounding noise in RAINBOW's code); a point found at a triangle corner
//! is keyed by the corner's node for the reduction (the same point reached from several
//! triangles is then one contact; RAINBOW's exact world-point key misses it whenever the
//! mappings round differently); no self-contact (a rest-space grid cannot see it).

#![allow(clippy::neg_cmp_op_on_partial_ord)]

use super::model::{Contact, NO_NODE};
use super::sdf::{boundary_with_owners, frank_wolfe, SdfGrid, FW_TIE};
use crate::math::{Mat3, Vec3};
use std::collections::HashSet;

/// Parameters of RAINBOW's contact generation (defaults: RAINBOW's `Parameters`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SdfParams {
    /// Grid nodes per axis (RAINBOW `resolution` = 64).
    pub resolution: usize,
    /// Contact envelope (m): a point with φ ≤ envelope is a contact; boxes are inflated by it
    /// (RAINBOW 0.1).
    pub envelope: f64,
    /// Frank–Wolfe iterations at most (`contact_optimization_max_iterations` = 8).
    pub max_iterations: u32,
    /// Frank–Wolfe duality-gap tolerance (`contact_optimization_tolerance` = 0).
    pub tolerance: f64,
    /// How far inside the grid box a point must be (m; ours 0, RAINBOW 0.5, see [`super::sdf`]).
    pub inside_margin: f64,
}

impl Default for SdfParams {
    fn default() -> Self {
        SdfParams {
            resolution: 64,
            envelope: 0.1,
            max_iterations: 8,
            tolerance: 0.0,
            inside_margin: 0.0,
        }
    }
}

/// A tet body with its rest-space grid.
#[derive(Debug, Clone, PartialEq)]
pub struct SdfBody {
    /// Global index of the body's node 0.
    pub first_node: u32,
    /// Rest positions (m).
    pub rest: Vec<Vec3>,
    /// Tets (body-local node indices).
    pub tets: Vec<[u32; 4]>,
    /// Outward boundary triangles (body-local).
    pub surface: Vec<[u32; 3]>,
    /// Tet owning each boundary triangle.
    pub owners: Vec<u32>,
    /// Rest-space signed distance grid.
    pub grid: SdfGrid,
    /// Whether other bodies' triangles are tested against this body's grid (RAINBOW: every
    /// body); a body without it only offers its triangles (a one-sided collider).
    pub grid_enabled: bool,
}

impl SdfBody {
    /// A body of `tets` over rest positions `rest` whose nodes are global `first_node..`; the
    /// grid padding is RAINBOW's `max(0.1 · largest extent, 2 · envelope)`.
    pub fn new(
        first_node: u32,
        rest: Vec<Vec3>,
        tets: Vec<[u32; 4]>,
        p: &SdfParams,
    ) -> Result<Self, String> {
        if let Some(t) = tets
            .iter()
            .find(|t| t.iter().any(|&i| i as usize >= rest.len()))
        {
            return Err(format!("tet {t:?} indexes past {} nodes", rest.len()));
        }
        let (surface, owners) = boundary_with_owners(&rest, &tets);
        let (lo, hi) = rest.iter().fold(
            (Vec3::repeat(f64::INFINITY), Vec3::repeat(f64::NEG_INFINITY)),
            |(lo, hi), x| (lo.inf(x), hi.sup(x)),
        );
        let padding = (0.1 * (hi - lo).max()).max(2.0 * p.envelope);
        let grid = SdfGrid::build(&rest, &surface, p.resolution, padding)?;
        Ok(SdfBody {
            first_node,
            rest,
            tets,
            surface,
            owners,
            grid,
            grid_enabled: true,
        })
    }

    fn global(&self, i: u32) -> usize {
        (self.first_node + i) as usize
    }

    fn tet_world(&self, x: &[Vec3], t: usize) -> [Vec3; 4] {
        self.tets[t].map(|i| x[self.global(i)])
    }

    fn tet_rest(&self, t: usize) -> [Vec3; 4] {
        self.tets[t].map(|i| self.rest[i as usize])
    }
}

/// Barycentric coordinates of `p` in the tet `v` (`w = B⁻¹ (p − v3)`, `w4 = 1 − Σ`); `None`
/// for a degenerate tet.
pub fn barycentric_tet(v: &[Vec3; 4], p: &Vec3) -> Option<[f64; 4]> {
    let b = Mat3::from_columns(&[v[0] - v[3], v[1] - v[3], v[2] - v[3]]);
    let w = b.try_inverse()? * (p - v[3]);
    Some([w.x, w.y, w.z, 1.0 - w.x - w.y - w.z])
}

fn combine(v: &[Vec3; 4], w: &[f64; 4]) -> Vec3 {
    v[0] * w[0] + v[1] * w[1] + v[2] * w[2] + v[3] * w[3]
}

/// Counters of one generation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GenerationStats {
    /// Triangle pairs from the broad phase.
    pub overlaps: usize,
    /// Frank–Wolfe searches (two per overlap).
    pub searches: usize,
    /// Frank–Wolfe iterations in total.
    pub iterations: usize,
    /// Contacts before the reduction.
    pub candidates: usize,
    /// Contacts after the reduction.
    pub contacts: usize,
}

/// RAINBOW's contact generation over a set of bodies.
#[derive(Debug, Clone)]
pub struct SdfContactGenerator {
    /// The bodies.
    pub bodies: Vec<SdfBody>,
    /// Generation parameters.
    pub params: SdfParams,
}

/// Inflated boxes of a body's surface triangles at positions `x`.
fn triangle_boxes(b: &SdfBody, x: &[Vec3], pad: f64) -> Vec<(Vec3, Vec3)> {
    b.surface
        .iter()
        .map(|t| {
            let p = t.map(|i| x[b.global(i)]);
            let lo = p[0].inf(&p[1]).inf(&p[2]) - Vec3::repeat(pad);
            let hi = p[0].sup(&p[1]).sup(&p[2]) + Vec3::repeat(pad);
            (lo, hi)
        })
        .collect()
}

/// Triangle pairs (a, b) whose boxes overlap: sort-and-sweep on x.
fn overlapping(a: &[(Vec3, Vec3)], b: &[(Vec3, Vec3)]) -> Vec<(u32, u32)> {
    let mut ev: Vec<(f64, bool, u32)> = a
        .iter()
        .enumerate()
        .map(|(i, bx)| (bx.0.x, false, i as u32))
        .chain(b.iter().enumerate().map(|(i, bx)| (bx.0.x, true, i as u32)))
        .collect();
    ev.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.cmp(&q.1)).then(p.2.cmp(&q.2)));
    let (mut open_a, mut open_b): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    let mut out = Vec::new();
    let overlap =
        |p: &(Vec3, Vec3), q: &(Vec3, Vec3)| (0..3).all(|k| p.0[k] <= q.1[k] && q.0[k] <= p.1[k]);
    for (x, from_b, i) in ev {
        if from_b {
            open_a.retain(|&j| a[j as usize].1.x >= x);
            for &j in &open_a {
                if overlap(&a[j as usize], &b[i as usize]) {
                    out.push((j, i));
                }
            }
            open_b.push(i);
        } else {
            open_b.retain(|&j| b[j as usize].1.x >= x);
            for &j in &open_b {
                if overlap(&a[i as usize], &b[j as usize]) {
                    out.push((i, j));
                }
            }
            open_a.push(i);
        }
    }
    out.sort_unstable();
    out
}

/// Reduction key of a candidate contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// A triangle corner of the colliding body (global node) against the grid body.
    Corner(u32, usize),
    /// A world point (bits) between two bodies.
    Point(usize, usize, [u64; 3]),
}

impl SdfContactGenerator {
    /// A generator over `bodies`.
    pub fn new(bodies: Vec<SdfBody>, params: SdfParams) -> Self {
        SdfContactGenerator { bodies, params }
    }

    /// One direction of one triangle pair: triangle `ta` of body `ia` against the grid of body
    /// `ib` through the tet owning triangle `tb`: the Frank–Wolfe deepest point, and every
    /// corner as deep as it (to rounding: a flat contact yields all its corners, not one picked
    /// by rounding noise).
    #[allow(clippy::too_many_arguments)]
    fn candidates(
        &self,
        x: &[Vec3],
        ia: usize,
        ta: usize,
        ib: usize,
        tb: usize,
        mu: f64,
        stats: &mut GenerationStats,
        out: &mut Vec<(Key, Contact)>,
    ) {
        let (a, b) = (&self.bodies[ia], &self.bodies[ib]);
        let tet_b = b.owners[tb] as usize;
        let (xb, x0b) = (b.tet_world(x, tet_b), b.tet_rest(tet_b));
        let tri = a.surface[ta].map(|i| x[a.global(i)]);
        let mut tri0 = [Vec3::zeros(); 3];
        for (k, p) in tri.iter().enumerate() {
            match barycentric_tet(&xb, p) {
                Some(w) => tri0[k] = combine(&x0b, &w),
                None => return,
            }
        }
        stats.searches += 1;
        let deepest = frank_wolfe(
            &b.grid,
            &tri0,
            self.params.max_iterations,
            self.params.tolerance,
        );
        stats.iterations += deepest.iterations as usize;
        let corner = deepest.barycentric.iter().position(|&w| w == 1.0);
        let phi = b.grid.value(&deepest.point);
        let size = (tri0[1] - tri0[0]).norm().max((tri0[2] - tri0[0]).norm());
        for (v, corner_point) in tri0.iter().enumerate() {
            let tied = Some(v) != corner && b.grid.value(corner_point) <= phi + FW_TIE * size;
            if Some(v) == corner || tied {
                let key = Key::Corner(a.global(a.surface[ta][v]) as u32, ib);
                out.extend(
                    self.contact_at(x, ia, ta, ib, tet_b, corner_point, mu)
                        .map(|c| (key, c)),
                );
            }
        }
        if corner.is_none() {
            if let Some(c) = self.contact_at(x, ia, ta, ib, tet_b, &deepest.point, mu) {
                let p = c
                    .slots()
                    .take(4)
                    .fold(Vec3::zeros(), |s, (n, w)| s - x[n] * w);
                let key = Key::Point(
                    ia.min(ib),
                    ia.max(ib),
                    [p.x.to_bits(), p.y.to_bits(), p.z.to_bits()],
                );
                out.push((key, c));
            }
        }
    }

    /// The contact at material point `p0` of body `ib` (in its tet `tet_b`) against the tet
    /// owning triangle `ta` of body `ia`, if `p0` is inside the grid and within the envelope.
    #[allow(clippy::too_many_arguments)]
    fn contact_at(
        &self,
        x: &[Vec3],
        ia: usize,
        ta: usize,
        ib: usize,
        tet_b: usize,
        p0: &Vec3,
        mu: f64,
    ) -> Option<Contact> {
        let (a, b) = (&self.bodies[ia], &self.bodies[ib]);
        let (xb, x0b) = (b.tet_world(x, tet_b), b.tet_rest(tet_b));
        if !b.grid.contains(p0, self.params.inside_margin) {
            return None;
        }
        let phi = b.grid.value(p0);
        if !(phi <= self.params.envelope) {
            return None;
        }
        let n0 = b.grid.gradient(p0);
        if !(n0.norm() > 0.0) {
            return None;
        }
        let omega_b = barycentric_tet(&x0b, p0)?;
        let p = combine(&xb, &omega_b);
        let tet_a = a.owners[ta] as usize;
        let omega_a = barycentric_tet(&a.tet_world(x, tet_a), &p)?;
        // F = Ds Dm⁻¹ of tet B; normals map with F⁻ᵀ.
        let ds = Mat3::from_columns(&[xb[0] - xb[3], xb[1] - xb[3], xb[2] - xb[3]]);
        let dm = Mat3::from_columns(&[x0b[0] - x0b[3], x0b[1] - x0b[3], x0b[2] - x0b[3]]);
        let f = ds * dm.try_inverse()?;
        let n = f.try_inverse()?.transpose() * n0;
        if !(n.norm() > 0.0) {
            return None;
        }
        let mut nodes = [NO_NODE; 8];
        let mut weights = [0.0; 8];
        for k in 0..4 {
            nodes[k] = b.global(b.tets[tet_b][k]) as u32;
            weights[k] = -omega_b[k];
            nodes[4 + k] = a.global(a.tets[tet_a][k]) as u32;
            weights[4 + k] = omega_a[k];
        }
        Some(Contact::new(&nodes, &weights, n, mu, phi))
    }

    /// Contacts between every pair of bodies at world positions `x` (all bodies' nodes), with
    /// friction `mu`, in a deterministic order (body pairs, triangle pairs, direction).
    pub fn generate(&self, x: &[Vec3], mu: f64) -> (Vec<Contact>, GenerationStats) {
        let mut stats = GenerationStats::default();
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        let pad = self.params.envelope;
        let boxes: Vec<Vec<(Vec3, Vec3)>> = self
            .bodies
            .iter()
            .map(|b| triangle_boxes(b, x, pad))
            .collect();
        for ia in 0..self.bodies.len() {
            for ib in ia + 1..self.bodies.len() {
                let pairs = overlapping(&boxes[ia], &boxes[ib]);
                stats.overlaps += pairs.len();
                for (ta, tb) in pairs {
                    let (ta, tb) = (ta as usize, tb as usize);
                    let mut both = Vec::new();
                    if self.bodies[ib].grid_enabled {
                        self.candidates(x, ia, ta, ib, tb, mu, &mut stats, &mut both);
                    }
                    if self.bodies[ia].grid_enabled {
                        self.candidates(x, ib, tb, ia, ta, mu, &mut stats, &mut both);
                    }
                    for (key, c) in both {
                        stats.candidates += 1;
                        if seen.insert(key) {
                            out.push(c);
                        }
                    }
                }
            }
        }
        stats.contacts = out.len();
        (out, stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::procedural::{box_tets, CellSplit};

    fn body(first: u32, cells: usize, size: f64, origin: [f64; 3], p: &SdfParams) -> SdfBody {
        let h = size / cells as f64;
        let m = box_tets([cells; 3], [h; 3], origin, CellSplit::Five);
        SdfBody::new(
            first,
            m.positions.iter().map(|x| Vec3::from(*x)).collect(),
            m.tets,
            p,
        )
        .unwrap()
    }

    #[test]
    fn cube_resting_on_a_box_gets_upward_contacts_at_its_bottom() {
        let p = SdfParams {
            resolution: 24,
            envelope: 0.01,
            ..SdfParams::default()
        };
        // Box [0,1]^3, cube 0.4 wide resting 2 mm above its top face.
        let a = body(0, 3, 1.0, [0.0; 3], &p);
        let b = body(a.rest.len() as u32, 2, 0.4, [0.3, 0.3, 1.002], &p);
        let x: Vec<Vec3> = a.rest.iter().chain(&b.rest).copied().collect();
        let g = SdfContactGenerator::new(vec![a, b], p);
        let (contacts, stats) = g.generate(&x, 0.5);
        assert!(!contacts.is_empty() && stats.contacts == contacts.len());
        assert!(stats.candidates >= stats.contacts);
        let na = g.bodies[0].rest.len() as u32;
        for c in &contacts {
            // Normal out of the grid body toward the other: +z when the box's grid saw the
            // cube, -z when the cube's grid saw the box.
            let box_first = c.nodes[0] < na;
            let nz = if box_first { c.normal.z } else { -c.normal.z };
            assert!(nz > 0.99, "{c:?}");
            assert!((c.gap - 0.002).abs() < 2e-3, "gap {}", c.gap);
            // Weights: -1 on one tet, +1 on the other.
            let s0: f64 = c.weights[..4].iter().sum();
            let s1: f64 = c.weights[4..].iter().sum();
            assert!((s0 + 1.0).abs() < 1e-9 && (s1 - 1.0).abs() < 1e-9);
            // The contact point of each side is at the interface.
            let pa: Vec3 = (0..4).map(|k| x[c.nodes[k] as usize] * -c.weights[k]).sum();
            let pb: Vec3 = (4..8).map(|k| x[c.nodes[k] as usize] * c.weights[k]).sum();
            assert!(
                (pa - pb).norm() < 1e-9 && (pa.z - 1.001).abs() < 0.002,
                "{pa:?} {pb:?}"
            );
        }
        // Separated by more than the envelope: nothing.
        let far: Vec<Vec3> = x
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i >= na as usize {
                    p + Vec3::new(0.0, 0.0, 0.05)
                } else {
                    *p
                }
            })
            .collect();
        assert!(g.generate(&far, 0.5).0.is_empty());
    }
}
