//! A tiny semi-implicit (symplectic) Euler stepper with PROX contact, RAINBOW's
//! `SemiImplicitStepper.step` (spec §B4) in plain Rust, for law checks and as the reference of
//! the future GPU wiring:
//! 1. `u′ = u + h (g + W (f_e + f_d))` (f_e the elastic forces, f_d = −β K u optional
//!    stiffness-proportional damping, zero for rigid motions; fixed nodes keep u = 0);
//! 2. contacts at the positions of the step's start;
//! 3. `b = J u′` (+ restitution), PROX solve;
//! 4. `u = u′ + W Jᵀ λ`, `x += h u`.
//!
//! Penetration is not corrected (RAINBOW's faithful mode): contacts inside the envelope only
//! block approach.

use super::contact::{kinetic_energy, Contact, ProxProblem};
use super::graph::{greedy_largest_first, ColorGroups, ContactGraph};
use super::ncp::{ncp_residuals, NcpResiduals};
use super::pairs::{pair_contact, PairKind};
use super::solve::{solve, Scheme, SolveReport, SolverParams};
use crate::contact::prox::generation::SdfContactGenerator;
use crate::cpu_reference::fem::{Material, TetRest};
use crate::math::Vec3;

/// Where contacts come from.
#[derive(Debug, Clone)]
pub enum ContactSource {
    /// RAINBOW's signed-distance-grid generation.
    Sdf(SdfContactGenerator),
    /// Proximity pairs closer than `distance` (m) between the surfaces of different bodies,
    /// found by brute force (the GPU search's reference semantics).
    Pairs {
        /// Surface triangles (global nodes).
        triangles: Vec<[u32; 3]>,
        /// Unique surface edges.
        edges: Vec<[u32; 2]>,
        /// Body of every node.
        body: Vec<u32>,
        /// Search distance (m).
        distance: f64,
    },
}

/// A soft body for [`CpuStepper`]: a tet mesh with one material.
#[derive(Debug, Clone)]
pub struct StepperBody {
    /// Rest positions (m).
    pub rest: Vec<Vec3>,
    /// Tets (body-local nodes).
    pub tets: Vec<[u32; 4]>,
    /// Constitutive model.
    pub material: Material,
    /// Density (kg/m³).
    pub density: f64,
    /// Fixed nodes (body-local): their velocity stays 0.
    pub fixed: Vec<bool>,
}

/// Statistics of one step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepStats {
    /// Contacts.
    pub contacts: usize,
    /// Colors of the contact graph (colored scheme only).
    pub colors: usize,
    /// Solver statistics.
    pub solve: SolveReport,
    /// NCP residuals of the returned impulses.
    pub ncp: NcpResiduals,
    /// Kinetic energy before and after the contact impulses (J).
    pub kinetic_energy: (f64, f64),
    /// Largest penetration (m): −min gap, 0 when none.
    pub max_penetration: f64,
    /// Total contact impulse on the free nodes, `Σ m (u − u′)` (N·s).
    pub impulse: Vec3,
}

/// The stepper.
#[derive(Debug, Clone)]
pub struct CpuStepper {
    /// Positions (m).
    pub x: Vec<Vec3>,
    /// Velocities (m/s).
    pub u: Vec<Vec3>,
    /// Lumped inverse masses (1/kg; 0 fixed).
    pub inv_mass: Vec<f64>,
    /// Gravity (m/s²).
    pub gravity: Vec3,
    /// Time step (s).
    pub h: f64,
    /// PROX scheme.
    pub scheme: Scheme,
    /// PROX parameters.
    pub params: SolverParams,
    /// Friction coefficient of every contact.
    pub friction: f64,
    /// Contact generation.
    pub source: ContactSource,
    /// Stiffness-proportional (Rayleigh) damping β (s): `f_d = −β K u`; 0 = none (RAINBOW's
    /// default damping is 0). Explicit: keep `β ω_max² h` well below 2.
    pub stiffness_damping: f64,
    elements: Vec<([u32; 4], TetRest, Material)>,
}

impl CpuStepper {
    /// Concatenates `bodies` (nodes in body order) at rest with zero velocity.
    pub fn new(
        bodies: &[StepperBody],
        gravity: Vec3,
        h: f64,
        source: ContactSource,
    ) -> Result<Self, String> {
        let mut x = Vec::new();
        let mut mass = Vec::new();
        let mut fixed = Vec::new();
        let mut elements = Vec::new();
        for (bi, b) in bodies.iter().enumerate() {
            let first = x.len() as u32;
            x.extend_from_slice(&b.rest);
            fixed.extend_from_slice(&b.fixed);
            mass.resize(x.len(), 0.0);
            if b.fixed.len() != b.rest.len() {
                return Err(format!(
                    "body {bi}: {} fixed flags for {} nodes",
                    b.fixed.len(),
                    b.rest.len()
                ));
            }
            for (ti, t) in b.tets.iter().enumerate() {
                let g = t.map(|i| first + i);
                let p = g.map(|i| x[i as usize]);
                let rest = TetRest::new(&p).ok_or(format!("body {bi}: tet {ti} is degenerate"))?;
                for &i in &g {
                    mass[i as usize] += b.density * rest.volume / 4.0;
                }
                elements.push((g, rest, b.material));
            }
        }
        let inv_mass = mass
            .iter()
            .zip(&fixed)
            .map(|(&m, &f)| if f || m <= 0.0 { 0.0 } else { 1.0 / m })
            .collect();
        Ok(CpuStepper {
            u: vec![Vec3::zeros(); x.len()],
            x,
            inv_mass,
            gravity,
            h,
            scheme: Scheme::GaussSeidel,
            params: SolverParams::default(),
            friction: 1.0,
            source,
            stiffness_damping: 0.0,
            elements,
        })
    }

    /// Elastic forces −∇E and damping forces −β K u at the current state (N).
    fn elastic_forces(&self) -> Vec<Vec3> {
        let mut f = vec![Vec3::zeros(); self.x.len()];
        for (t, rest, m) in &self.elements {
            let p = t.map(|i| self.x[i as usize]);
            let mut g = rest.gradient(m, &p);
            if self.stiffness_damping > 0.0 {
                // K u = V ∂F/∂xᵀ vec(dP(F, dF)) with dF = Σ_k u_k ⊗ b_k (the velocity gradient).
                let d = rest.df_dx();
                let u = nalgebra::SVector::<f64, 12>::from_iterator(
                    t.iter()
                        .flat_map(|&i| self.u[i as usize].iter().copied().collect::<Vec<_>>()),
                );
                let df = nalgebra::Matrix3::from_column_slice((d * u).as_slice());
                let dp = m.dpk1(&rest.deformation_gradient(&p), &df);
                let dp = nalgebra::SVector::<f64, 9>::from_column_slice(dp.as_slice());
                g += d.transpose() * dp * (rest.volume * self.stiffness_damping);
            }
            for (k, &i) in t.iter().enumerate() {
                f[i as usize] -= Vec3::new(g[3 * k], g[3 * k + 1], g[3 * k + 2]);
            }
        }
        f
    }

    /// Contacts at the current positions.
    pub fn contacts(&self) -> Vec<Contact> {
        match &self.source {
            ContactSource::Sdf(g) => g.generate(&self.x, self.friction).0,
            ContactSource::Pairs {
                triangles,
                edges,
                body,
                distance,
            } => {
                let mut out = Vec::new();
                let d2 = distance * distance;
                let other = |a: u32, b: u32| body[a as usize] != body[b as usize];
                for (v, _) in self.x.iter().enumerate() {
                    for t in triangles {
                        if other(v as u32, t[0]) {
                            let c = pair_contact(
                                PairKind::VertexTriangle,
                                [v as u32, t[0], t[1], t[2]],
                                &self.x,
                                self.friction,
                            );
                            if c.gap * c.gap < d2 && c.nodes[0] != super::contact::NO_NODE {
                                out.push(c);
                            }
                        }
                    }
                }
                for (i, a) in edges.iter().enumerate() {
                    for b in &edges[i + 1..] {
                        if other(a[0], b[0]) {
                            let c = pair_contact(
                                PairKind::EdgeEdge,
                                [a[0], a[1], b[0], b[1]],
                                &self.x,
                                self.friction,
                            );
                            if c.gap * c.gap < d2 && c.nodes[0] != super::contact::NO_NODE {
                                out.push(c);
                            }
                        }
                    }
                }
                out
            }
        }
    }

    /// Velocities after the free update, `u′ = u + h (g + W (f_e + f_d))` (fixed nodes 0).
    pub fn free_velocities(&self) -> Vec<Vec3> {
        let f = self.elastic_forces();
        (0..self.x.len())
            .map(|i| {
                let w = self.inv_mass[i];
                if w == 0.0 {
                    Vec3::zeros()
                } else {
                    self.u[i] + (self.gravity + f[i] * w) * self.h
                }
            })
            .collect()
    }

    /// The step's contact problem: contacts at the current positions, `b` from `u_free`.
    pub fn problem(&self, u_free: &[Vec3]) -> Result<ProxProblem, String> {
        ProxProblem::new(self.contacts(), self.inv_mass.clone(), u_free, &self.u)
    }

    /// Ends the step with impulses `lambda` of `problem`: `u = u′ + W Jᵀ λ`, `x += h u`.
    pub fn advance(&mut self, problem: &ProxProblem, u_free: &[Vec3], lambda: &[[f64; 3]]) {
        self.u = problem.apply(u_free, lambda);
        for (x, u) in self.x.iter_mut().zip(&self.u) {
            *x += u * self.h;
        }
    }

    /// One time step.
    pub fn step(&mut self) -> Result<StepStats, String> {
        let u_free = self.free_velocities();
        let problem = self.problem(&u_free)?;
        let max_penetration = problem.contacts.iter().map(|c| -c.gap).fold(0.0, f64::max);
        let (groups, colors) = if self.scheme == Scheme::ColoredGaussSeidel {
            let g = ContactGraph::of_contacts(&problem.contacts, self.x.len(), None);
            let c = greedy_largest_first(&g);
            (Some(ColorGroups::new(&c)), c.num_colors as usize)
        } else {
            (None, 0)
        };
        let (lambda, report) = solve(&problem, self.scheme, groups.as_ref(), &self.params, None)?;
        let ncp = ncp_residuals(&problem, &lambda);
        let before = kinetic_energy(&self.inv_mass, &u_free);
        self.advance(&problem, &u_free, &lambda);
        let after = kinetic_energy(&self.inv_mass, &self.u);
        let impulse = (0..self.x.len())
            .filter(|&i| self.inv_mass[i] > 0.0)
            .map(|i| (self.u[i] - u_free[i]) / self.inv_mass[i])
            .sum();
        Ok(StepStats {
            contacts: problem.len(),
            colors,
            solve: report,
            ncp,
            kinetic_energy: (before, after),
            max_penetration,
            impulse,
        })
    }

    /// Mass-weighted centre of the free nodes (m).
    pub fn centre_of_free_mass(&self) -> Vec3 {
        let (s, m) = self
            .x
            .iter()
            .zip(&self.inv_mass)
            .filter(|(_, &w)| w > 0.0)
            .fold((Vec3::zeros(), 0.0), |(s, m), (x, &w)| {
                (s + x / w, m + 1.0 / w)
            });
        s / m
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;
    use crate::contact::prox::generation::{SdfBody, SdfParams};
    use crate::cpu_reference::fem::lame;
    use crate::mesh::procedural::{box_tets, CellSplit};

    /// Contact generation of the incline scenes.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(crate) enum Source {
        /// The slab's grid against the cube's triangles only (a one-sided SDF collider).
        SlabGrid,
        /// RAINBOW: both grids, both directions.
        BothGrids,
        /// Proximity pairs (vertex–triangle and edge–edge, brute force).
        Pairs,
    }

    /// PROX-S5 (spec §B8): a cube `create_beam(4,4,4, 0.2,0.2,0.2)` (3³ cells, 135 tets, SVK,
    /// E = 1e5 Pa, stiffness damping β = 4 ms: an undamped cube rings after the load and its
    /// contacts slip locally, which changes the average friction), ν = 0.3, ρ = 1000) 1 mm above a fixed 2.4 m slab; the incline is a tilted
    /// gravity (the same physics as a tilted slab), down-slope along +x. Nodes: slab first.
    pub(crate) fn incline(theta_deg: f64, mu: f64, source: Source) -> CpuStepper {
        incline_e(theta_deg, mu, source, 1e5, 4e-3)
    }

    pub(crate) fn incline_e(
        theta_deg: f64,
        mu: f64,
        source: Source,
        e: f64,
        beta: f64,
    ) -> CpuStepper {
        let (lm, ll) = lame(e, 0.3);
        let material = Material::StVenantKirchhoff { mu: lm, lambda: ll };
        let slab = box_tets(
            [16, 4, 1],
            [0.15, 0.15, 0.05],
            [-0.3, -0.3, -0.05],
            CellSplit::Five,
        );
        let cube = box_tets([3; 3], [0.2 / 3.0; 3], [-0.1, -0.1, 0.001], CellSplit::Five);
        let to = |m: &crate::mesh::TetMesh| {
            m.positions
                .iter()
                .map(|p| Vec3::from(*p))
                .collect::<Vec<_>>()
        };
        let bodies = [
            StepperBody {
                rest: to(&slab),
                tets: slab.tets.clone(),
                material,
                density: 1000.0,
                fixed: vec![true; slab.positions.len()],
            },
            StepperBody {
                rest: to(&cube),
                tets: cube.tets.clone(),
                material,
                density: 1000.0,
                fixed: vec![false; cube.positions.len()],
            },
        ];
        let source = if source == Source::Pairs {
            let mut tris = Vec::new();
            let mut body = Vec::new();
            for (bi, (m, first)) in [(&slab, 0u32), (&cube, slab.positions.len() as u32)]
                .into_iter()
                .enumerate()
            {
                let x = to(m);
                let (t, _) = crate::contact::prox::sdf::boundary_with_owners(&x, &m.tets);
                tris.extend(t.iter().map(|t| t.map(|i| i + first)));
                body.extend(std::iter::repeat_n(bi as u32, m.positions.len()));
            }
            let edges = crate::cpu_reference::proximity::unique_edges(&tris);
            ContactSource::Pairs {
                triangles: tris,
                edges,
                body,
                distance: 0.004,
            }
        } else {
            let p = SdfParams {
                resolution: 24,
                envelope: 0.004,
                ..SdfParams::default()
            };
            let a = SdfBody::new(0, to(&slab), slab.tets.clone(), &p).unwrap();
            let mut b = SdfBody::new(
                slab.positions.len() as u32,
                to(&cube),
                cube.tets.clone(),
                &p,
            )
            .unwrap();
            b.grid_enabled = source == Source::BothGrids;
            ContactSource::Sdf(SdfContactGenerator::new(vec![a, b], p))
        };
        let t = theta_deg.to_radians();
        let g = Vec3::new(9.81 * t.sin(), 0.0, -9.81 * t.cos());
        let mut s = CpuStepper::new(&bodies, g, 1e-3, source).unwrap();
        s.friction = mu;
        s.stiffness_damping = beta;
        s.params = SolverParams {
            absolute_tolerance: 1e-10,
            relative_tolerance: 1e-10,
            max_iterations: 2000,
            too_small_merit_change: 0.0,
            r_factor: 1.0,
            ..SolverParams::default()
        };
        s
    }

    /// Mean x of the cube's bottom nodes (those starting at z = 1 mm).
    pub(crate) fn bottom_x(s: &CpuStepper, rest: &[Vec3]) -> f64 {
        let bottom: Vec<usize> = (0..s.x.len())
            .filter(|&i| s.inv_mass[i] > 0.0 && (rest[i].z - 0.001).abs() < 1e-9)
            .collect();
        bottom.iter().map(|&i| s.x[i].x).sum::<f64>() / bottom.len() as f64
    }

    /// Centre-of-mass velocity of the free nodes (m/s).
    pub(crate) fn centre_velocity(s: &CpuStepper) -> Vec3 {
        let (p, m) =
            s.u.iter()
                .zip(&s.inv_mass)
                .filter(|(_, &w)| w > 0.0)
                .fold((Vec3::zeros(), 0.0), |(p, m), (u, &w)| {
                    (p + u / w, m + 1.0 / w)
                });
        p / m
    }

    /// One simulated second: (slip of the contact face along x, down-slope acceleration of the
    /// centre of mass over the second half (after the start-up transient), largest kinetic
    /// energy the contact impulses added, worst natural-map residual).
    pub(crate) fn one_second(s: &mut CpuStepper) -> (f64, f64, f64, f64) {
        let rest = s.x.clone();
        let b0 = bottom_x(s, &rest);
        let (mut energy, mut residual): (f64, f64) = (0.0, 0.0);
        let mut v_half = 0.0;
        for i in 0..1000 {
            let st = s.step().unwrap();
            energy = energy.max(st.kinetic_energy.1 - st.kinetic_energy.0);
            residual = residual.max(st.ncp.natural_map);
            if i == 499 {
                v_half = centre_velocity(s).x;
            }
        }
        let a = (centre_velocity(s).x - v_half) / 0.5;
        (bottom_x(s, &rest) - b0, a, energy, residual)
    }
}

#[cfg(test)]
mod tests {
    use super::tests_support::*;

    /// Spec §B9 #9 on the reference stepper: sticks when μ > tan θ (the contact face slips less
    /// than 1 mm in 1 s), slides with g (sin θ − μ cos θ) within 5 % otherwise (measured on the
    /// centre-of-mass velocity over the second half-second: while the load builds up at the
    /// start, the soft cube's contacts stick as it shears, a transient worth ~2 % of the friction
    /// impulse of the whole second); the impulses never add kinetic energy.
    #[test]
    fn coulomb_law_on_an_incline() {
        for (theta, mu) in [(15.0f64, 0.5), (15.0, 0.2), (30.0, 0.5), (30.0, 0.2)] {
            let mut s = incline(theta, mu, Source::SlabGrid);
            let (slip, measured, energy, residual) = one_second(&mut s);
            assert!(energy <= 1e-9, "θ {theta} μ {mu}: contact added {energy} J");
            let t = theta.to_radians();
            if mu > t.tan() {
                assert!(
                    slip.abs() < 1e-3,
                    "θ {theta} μ {mu}: slipped {slip} m (residual {residual:e})"
                );
            } else {
                let a = 9.81 * (t.sin() - mu * t.cos());
                assert!(
                    ((measured - a) / a).abs() < 0.05,
                    "θ {theta} μ {mu}: a = {measured} m/s², expected {a} (residual {residual:e})"
                );
            }
        }
    }
}
