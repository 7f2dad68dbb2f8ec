//! A small complete CPU solver of the barrier-augmented Lagrangian method (BAL paper
//! Algorithm 1, spec §A3–§A5) for tiny problems: dense f64 matrices, a brute-force broad phase
//! over every stencil, a direct (Cholesky) or block-Jacobi CG linear solve, and a conservative
//! CCD line-search filter. It is the reference the GPU implementation is checked against and
//! settles the spec's ambiguities (§A7) in code; each resolution is commented where it acts.
//!
//! One time step runs Algorithm 1 with x⁰ = xₜ, μ⁰ = 0 and A′ = ∅; iteration l is one
//! inexact projected-Newton iteration on `L_σ(x) = E(x) + σ Σ_i b(d_i, d̂) + R(x) + D(x)`:
//! 1. A = pairs with `d_i < d̂` at xˡ (line 2);
//! 2. the A′ rule of lines 4–8 from `min d` at xˡ and at xˡ⁻¹ ([`augmentation_rule`]);
//! 3. friction re-lagged at xˡ (`per-iteration`) or only at l = 0 (`per-step`);
//! 4. `eˡ = ∇L_σˡ(xˡ)` (line 11); the PSD-projected Hessian H; `H p = −eˡ`;
//! 5. line search (line 12): α starts at `min(1, α_CCD)`, the conservative CCD bound of every
//!    stencil's straight motion keeping `d ≥ ξ d(xˡ)` (so every accepted iterate keeps
//!    `d > 0`), halves while more than `max_active_pairs` pairs would be active (§5.2), then
//!    halves until `L_σ(xˡ + αp) ≤ L_σ(xˡ)` (at most 30 halvings, spec §A7 #12); when α ends
//!    below 1e-9 the CG solve resumes for 100 more iterations and the search is retried
//!    (Appendix B);
//! 6. stop when `‖eˡ‖ ≤ 10⁻⁴ ‖e⁰‖` (line 14, after taking the step as printed);
//! 7. otherwise the dual update on A′ at xˡ⁺¹ (lines 17–19) and the σ rule (lines 20–21).

use super::super::ccd::{ccd, CcdKind};
use super::super::fem::{Mat12, TetRest, Vec12};
use super::barrier::{barrier, barrier_first_derivative};
use super::distance::{closest, StencilKind};
use super::friction::{friction_terms, lag, FrictionLag};
use super::pair::{pair_energy, pair_terms, Augmentation, PairParams};
use super::problem::{PairKey, Problem, Stencil};
use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use std::collections::BTreeMap;

pub use crate::contact::bal::rules::{
    augmentation_rule, grown_sigma, initial_sigma, sigma_bounds, AugRule, FrictionLagMode,
    SigmaRule,
};

/// Linear solver of the Newton systems.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinearSolve {
    /// Dense Cholesky (LU when the matrix is not numerically SPD).
    Direct,
    /// Block-Jacobi preconditioned CG with the paper's stops (Appendix B).
    Cg,
}

/// Why a CG solve stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgExit {
    /// `‖r‖ ≤ tolerance ‖r₀‖`.
    Tolerance,
    /// The residual did not decrease over the stagnation window.
    Stagnation,
    /// Iteration cap.
    Cap,
}

/// Settings of the BAL method (SI units). [`BalSettings::paper`] gives the paper's values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BalSettings {
    /// d̂ (m): activation distance of the barrier.
    pub d_hat: f64,
    /// ε_v (m/s): friction mollifier velocity threshold (ε = ε_v h in displacement).
    pub eps_v: f64,
    /// χ: friction coefficient (≥ 0).
    pub friction: f64,
    /// σ growth rule.
    pub sigma_rule: SigmaRule,
    /// false: the "inexact Newton" baseline (A′ always empty, IPC's barrier only).
    pub augmentation: bool,
    /// When friction is re-lagged.
    pub friction_lag: FrictionLagMode,
    /// Newton system solver.
    pub linear_solve: LinearSolve,
    /// Newton stop: `‖∇L‖ ≤ tolerance ‖∇L⁰‖`.
    pub newton_tolerance: f64,
    /// Newton iterations per step at most (spec §A7 #13: 500).
    pub max_newton_iterations: u32,
    /// CG stop: `‖r‖ ≤ cg_tolerance ‖r₀‖`.
    pub cg_tolerance: f64,
    /// CG stop: no residual decrease over this many iterations.
    pub cg_stagnation: u32,
    /// CG iterations per solve at most.
    pub cg_max_iterations: u32,
    /// CG resumptions (100 iterations each) per Newton iteration when α < 1e-9.
    pub cg_max_resumes: u32,
    /// ξ: the CCD bound keeps every pair at least ξ times its current distance apart.
    pub ccd_separation: f64,
    /// Line-search halvings at most.
    pub max_halvings: u32,
    /// Active-pair cap of §5.2 (`None`: no cap).
    pub max_active_pairs: Option<usize>,
}

impl BalSettings {
    /// The paper's values: d̂ = ε_v = 10⁻³, χ = 0, σ rule as printed, augmentation on,
    /// per-iteration friction, CG with 10⁻⁴ / 100-iteration stops, Newton 10⁻⁴ and 500.
    pub fn paper() -> Self {
        BalSettings {
            d_hat: 1e-3,
            eps_v: 1e-3,
            friction: 0.0,
            sigma_rule: SigmaRule::AsPrinted,
            augmentation: true,
            friction_lag: FrictionLagMode::PerIteration,
            linear_solve: LinearSolve::Cg,
            newton_tolerance: 1e-4,
            max_newton_iterations: 500,
            cg_tolerance: 1e-4,
            cg_stagnation: 100,
            cg_max_iterations: 10_000,
            cg_max_resumes: 20,
            ccd_separation: 0.1,
            max_halvings: 30,
            max_active_pairs: None,
        }
    }

    /// Checks every value; the error names the field (`bal.d_hat`, …).
    pub fn validate(&self) -> Result<(), String> {
        let positive = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(format!("bal.{name} must be positive and finite, got {v}"))
            }
        };
        positive("d_hat", self.d_hat)?;
        positive("eps_v", self.eps_v)?;
        positive("newton_tolerance", self.newton_tolerance)?;
        positive("cg_tolerance", self.cg_tolerance)?;
        if !(self.friction.is_finite() && self.friction >= 0.0) {
            return Err(format!(
                "bal.friction (χ) must be finite and >= 0, got {}",
                self.friction
            ));
        }
        if !(self.ccd_separation > 0.0 && self.ccd_separation < 1.0) {
            return Err(format!(
                "bal.ccd_separation must lie in (0, 1), got {}",
                self.ccd_separation
            ));
        }
        if self.max_newton_iterations == 0 || self.cg_max_iterations == 0 {
            return Err("bal.max_newton_iterations and bal.cg_max_iterations must be >= 1".into());
        }
        if self.max_active_pairs == Some(0) {
            return Err("bal.max_active_pairs must be >= 1".into());
        }
        Ok(())
    }
}

/// What one time step did (the per-step telemetry of the report.json).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StepReport {
    /// Newton iterations.
    pub newton_iterations: u32,
    /// Reached `‖∇L‖ ≤ tolerance ‖∇L⁰‖`.
    pub converged: bool,
    /// Stopped at the Newton iteration cap.
    pub hit_cap: bool,
    /// Stopped because the line search found no decrease (after every CG resumption).
    pub line_search_failed: bool,
    /// CG iterations summed over the step.
    pub cg_iterations: u32,
    /// CG exits: tolerance, stagnation, cap.
    pub cg_exits: [u32; 3],
    /// CG resumptions after α < 1e-9.
    pub cg_resumes: u32,
    /// σ⁰ of the step (N/m).
    pub sigma0: f64,
    /// σ at each iteration (N/m).
    pub sigma: Vec<f64>,
    /// |A| at each iteration.
    pub active: Vec<usize>,
    /// |A′| at each iteration.
    pub augmented: Vec<usize>,
    /// Friction pairs at each iteration.
    pub friction_pairs: Vec<usize>,
    /// CCD step bound at each iteration.
    pub ccd_bound: Vec<f64>,
    /// Accepted line-search step at each iteration.
    pub alpha: Vec<f64>,
    /// Min distance over all pairs at every accepted iterate (m).
    pub min_distance: Vec<f64>,
    /// ‖∇L‖ at each iteration.
    pub gradient_norm: Vec<f64>,
    /// Largest μ of each iteration's A′ (N) and whether any μ of a pair that stayed in A′
    /// decreased (must not: μ only grows).
    pub mu_max: Vec<f64>,
    /// A multiplier of a pair that stayed in A′ decreased, or one was negative.
    pub mu_violation: bool,
    /// Line-search halvings forced by the active-pair cap (§5.2).
    pub cap_halvings: u32,
    /// Accepted iterates x⁰, x¹, … (only with [`BalSolver::record_iterates`]).
    pub iterates: Vec<Vec<Vector3<f64>>>,
}

/// Gradient and Hessian over the 3n coordinates.
type Derivatives = (DVector<f64>, DMatrix<f64>);

/// Pair state of one Newton iteration.
struct IterationState {
    sigma: f64,
    aug: BTreeMap<PairKey, Augmentation>,
    friction: Vec<FrictionLag>,
}

/// The CPU BAL solver over one [`Problem`].
pub struct BalSolver {
    problem: Problem,
    settings: BalSettings,
    stencils: Vec<Stencil>,
    index: BTreeMap<PairKey, usize>,
    rests: Vec<TetRest>,
    bounds: (f64, f64),
    /// Keep every accepted iterate in the step reports (for exact trajectory checks).
    pub record_iterates: bool,
}

fn scatter_vec(g: &mut DVector<f64>, v: &[usize; 4], local: &Vec12) {
    for (k, &vk) in v.iter().enumerate() {
        for a in 0..3 {
            g[3 * vk + a] += local[3 * k + a];
        }
    }
}

fn scatter_mat(h: &mut DMatrix<f64>, v: &[usize; 4], local: &Mat12) {
    for (k, &vk) in v.iter().enumerate() {
        for (l, &vl) in v.iter().enumerate() {
            for a in 0..3 {
                for b in 0..3 {
                    h[(3 * vk + a, 3 * vl + b)] += local[(3 * k + a, 3 * l + b)];
                }
            }
        }
    }
}

impl BalSolver {
    /// Checks the settings and the problem (the error names the field or, for a problem whose
    /// bodies touch or intersect at the start, the first such pair) and builds the stencils.
    pub fn new(problem: Problem, settings: BalSettings) -> Result<Self, String> {
        settings.validate()?;
        problem.validate()?;
        let rests = problem.tet_rests()?;
        let stencils = problem.stencils();
        if let Some(e) = problem.first_touching(&stencils, &problem.x) {
            return Err(e);
        }
        if let Some(e) = problem.first_intersecting()? {
            return Err(e);
        }
        let index = stencils
            .iter()
            .enumerate()
            .map(|(i, s)| (s.key, i))
            .collect();
        let free: Vec<f64> = (0..problem.len())
            .filter(|&i| !problem.fixed[i])
            .map(|i| problem.mass[i])
            .collect();
        let mean_mass = free.iter().sum::<f64>() / free.len().max(1) as f64;
        let (mut lo, mut hi) = (Vector3::repeat(f64::MAX), Vector3::repeat(f64::MIN));
        for p in &problem.x {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        let diag = if problem.is_empty() {
            0.0
        } else {
            (hi - lo).norm()
        };
        let bounds = sigma_bounds(
            mean_mass.max(f64::MIN_POSITIVE),
            diag,
            settings.d_hat,
            problem.h,
        );
        Ok(BalSolver {
            problem,
            settings,
            stencils,
            index,
            rests,
            bounds,
            record_iterates: false,
        })
    }

    /// Current positions (m).
    pub fn positions(&self) -> &[Vector3<f64>] {
        &self.problem.x
    }

    /// Current velocities (m/s).
    pub fn velocities(&self) -> &[Vector3<f64>] {
        &self.problem.v
    }

    /// The problem as it stands.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// Every candidate stencil.
    pub fn stencils(&self) -> &[Stencil] {
        &self.stencils
    }

    /// The σ corridor `[σ_min, σ_max]` (N/m).
    pub fn sigma_bounds(&self) -> (f64, f64) {
        self.bounds
    }

    /// Distance of every stencil at `x` (m).
    fn distances(&self, x: &[Vector3<f64>]) -> Vec<f64> {
        self.stencils
            .iter()
            .map(|s| closest(s.key.kind, &s.gather(x)).0.sqrt())
            .collect()
    }

    /// Inertia + elastic energy, with gradient and (PSD) Hessian when `derivatives`.
    fn elastic_inertia(
        &self,
        x: &[Vector3<f64>],
        y: &[Vector3<f64>],
        derivatives: bool,
    ) -> (f64, Option<Derivatives>) {
        let p = &self.problem;
        let n = p.len();
        let inv_h2 = 1.0 / (p.h * p.h);
        let mut e = 0.0;
        let mut d = derivatives.then(|| (DVector::zeros(3 * n), DMatrix::zeros(3 * n, 3 * n)));
        for i in (0..n).filter(|&i| !p.fixed[i]) {
            let r = x[i] - y[i];
            e += 0.5 * p.mass[i] * inv_h2 * r.norm_squared();
            if let Some((g, h)) = d.as_mut() {
                for a in 0..3 {
                    g[3 * i + a] += p.mass[i] * inv_h2 * r[a];
                    h[(3 * i + a, 3 * i + a)] += p.mass[i] * inv_h2;
                }
            }
        }
        for ((t, rest), m) in p.tets.iter().zip(&self.rests).zip(&p.materials) {
            let c = t.map(|v| x[v]);
            e += rest.energy(m, &c);
            if let Some((g, h)) = d.as_mut() {
                scatter_vec(g, t, &rest.gradient(m, &c));
                scatter_mat(h, t, &rest.hessian(m, &c, true));
            }
        }
        (e, d)
    }

    fn params(&self, s: &Stencil, st: &IterationState) -> PairParams {
        PairParams {
            sigma: st.sigma,
            d_hat: self.settings.d_hat,
            augmentation: st.aug.get(&s.key).copied(),
            mollifier_eps: s.mollifier_eps,
        }
    }

    /// `L_σ(x)` (J): +∞ when some pair touches.
    fn objective(
        &self,
        x: &[Vector3<f64>],
        y: &[Vector3<f64>],
        x0: &[Vector3<f64>],
        st: &IterationState,
    ) -> f64 {
        let (mut e, _) = self.elastic_inertia(x, y, false);
        for s in &self.stencils {
            let pe = pair_energy(s.key.kind, &s.gather(x), &self.params(s, st));
            e += pe.barrier + pe.augmentation;
        }
        let eps = self.settings.eps_v * self.problem.h;
        for f in &st.friction {
            let xs = f.vertices.map(|v| x0[v]);
            e += friction_terms(
                f,
                &f.vertices.map(|v| x[v]),
                &xs,
                self.settings.friction,
                eps,
            )
            .0;
        }
        e
    }

    /// `∇L_σ(x)` and its PSD-projected Hessian (fixed vertices: zero gradient, identity rows).
    fn derivatives(
        &self,
        x: &[Vector3<f64>],
        y: &[Vector3<f64>],
        x0: &[Vector3<f64>],
        st: &IterationState,
    ) -> (DVector<f64>, DMatrix<f64>) {
        let (_, d) = self.elastic_inertia(x, y, true);
        let (mut g, mut h) = d.unwrap_or_else(|| (DVector::zeros(0), DMatrix::zeros(0, 0)));
        for s in &self.stencils {
            let c = s.gather(x);
            let (sq, ..) = closest(s.key.kind, &c);
            let p = self.params(s, st);
            let reach = self.settings.d_hat + p.augmentation.map_or(0.0, |a| a.s);
            if sq.sqrt() >= reach && p.augmentation.is_none() {
                continue;
            }
            if let Some(ev) = pair_terms(s.key.kind, &c, &p) {
                scatter_vec(&mut g, &s.vertices, &ev.gradient);
                scatter_mat(&mut h, &s.vertices, &ev.hessian);
            }
        }
        let eps = self.settings.eps_v * self.problem.h;
        for f in &st.friction {
            let xs = f.vertices.map(|v| x0[v]);
            let (_, fg, fh, _) = friction_terms(
                f,
                &f.vertices.map(|v| x[v]),
                &xs,
                self.settings.friction,
                eps,
            );
            scatter_vec(&mut g, &f.vertices, &fg);
            scatter_mat(&mut h, &f.vertices, &fh);
        }
        let n = self.problem.len();
        for i in (0..n).filter(|&i| self.problem.fixed[i]) {
            for a in 0..3 {
                let r = 3 * i + a;
                g[r] = 0.0;
                h.row_mut(r).fill(0.0);
                h.column_mut(r).fill(0.0);
                h[(r, r)] = 1.0;
            }
        }
        (g, h)
    }

    /// Sum over A of `∇b_i` (unit stiffness, s = 0, mollified) at x: σ⁰'s barrier gradient.
    fn unit_barrier_gradient(&self, x: &[Vector3<f64>]) -> DVector<f64> {
        let mut g = DVector::zeros(3 * self.problem.len());
        for s in &self.stencils {
            let p = PairParams {
                sigma: 1.0,
                d_hat: self.settings.d_hat,
                augmentation: None,
                mollifier_eps: s.mollifier_eps,
            };
            let c = s.gather(x);
            if closest(s.key.kind, &c).0.sqrt() >= self.settings.d_hat {
                continue;
            }
            if let Some(ev) = pair_terms(s.key.kind, &c, &p) {
                scatter_vec(&mut g, &s.vertices, &ev.gradient);
            }
        }
        for i in (0..self.problem.len()).filter(|&i| self.problem.fixed[i]) {
            for a in 0..3 {
                g[3 * i + a] = 0.0;
            }
        }
        g
    }

    /// Conservative CCD bound of the straight motion x → x + p over every stencil, keeping each
    /// pair at least ξ times its distance at x apart.
    fn ccd_bound(&self, x: &[Vector3<f64>], p: &[Vector3<f64>], dist: &[f64]) -> f64 {
        let mut alpha = 1.0f64;
        for (s, &d) in self.stencils.iter().zip(dist) {
            let x0 = s.gather(x);
            let x1: [Vector3<f64>; 4] = std::array::from_fn(|k| x0[k] + p[s.vertices[k]]);
            if x0 == x1 {
                continue;
            }
            let kind = match s.key.kind {
                StencilKind::PointTriangle => CcdKind::PointTriangle,
                StencilKind::EdgeEdge => CcdKind::EdgeEdge,
            };
            let r = ccd(kind, &x0, &x1, self.settings.ccd_separation * d);
            if r.hit {
                alpha = alpha.min(r.toi);
            }
        }
        alpha
    }

    /// Normal force magnitude of a pair (spec §A7 #8, ours; mollifier left out like IPC).
    fn normal_force(&self, d: f64, key: &PairKey, st: &IterationState) -> f64 {
        let dh = self.settings.d_hat;
        let mut l = -st.sigma * barrier_first_derivative(d, dh);
        if let Some(a) = st.aug.get(key) {
            l += a.mu - st.sigma * barrier_first_derivative(d, dh + a.s);
        }
        l
    }

    /// Lags friction on every pair of A (d < d̂) with a positive normal force.
    fn lag_friction(
        &self,
        x: &[Vector3<f64>],
        dist: &[f64],
        st: &IterationState,
    ) -> Vec<FrictionLag> {
        if self.settings.friction == 0.0 {
            return Vec::new();
        }
        self.stencils
            .iter()
            .zip(dist)
            .filter(|(_, &d)| d < self.settings.d_hat)
            .filter_map(|(s, &d)| {
                let lambda = self.normal_force(d, &s.key, st);
                (lambda > 0.0)
                    .then(|| lag(s.key.kind, s.vertices, &s.gather(x), lambda))
                    .flatten()
            })
            .collect()
    }

    /// Applies the A′ rule; spec §A7 #7 (ours): μ is keyed by pair identity, kept while the
    /// pair stays in A′, 0 when it enters; A′ ⊂ A always (a pair leaves A′ with A, since A′ is
    /// only defined on A, line 8), so a separated pair never keeps a multiplier force.
    fn update_augmentation_set(&self, rule: AugRule, dist: &[f64], st: &mut IterationState) {
        let dh = self.settings.d_hat;
        let old = std::mem::take(&mut st.aug);
        if !self.settings.augmentation {
            return;
        }
        match rule {
            AugRule::Empty => {}
            AugRule::Rebuild => {
                for (s, &d) in self.stencils.iter().zip(dist) {
                    if d < 1e-2 * dh {
                        let a = old
                            .get(&s.key)
                            .copied()
                            .unwrap_or(Augmentation { mu: 0.0, s: 0.0 });
                        st.aug.insert(s.key, a);
                    }
                }
            }
            AugRule::Keep => {
                for (k, a) in old {
                    if dist[self.index[&k]] < dh {
                        st.aug.insert(k, a);
                    }
                }
            }
        }
    }

    /// Lines 17–19 at the new iterate: `s_i = max(−μ_i/σ − d̂ + d_i, 0)`,
    /// `μ_i += σ b(d_i, d̂ + s_i)`.
    /// Returns false if a multiplier decreased or is not a finite number ≥ 0 (spec §A12 #4).
    fn dual_update(&self, dist: &[f64], st: &mut IterationState) -> bool {
        let dh = self.settings.d_hat;
        let sigma = st.sigma;
        let mut ok = true;
        for (k, a) in st.aug.iter_mut() {
            let d = dist[self.index[k]];
            let before = a.mu;
            a.s = (-a.mu / sigma - dh + d).max(0.0);
            a.mu += sigma * barrier(d, dh + a.s);
            ok &= a.mu.is_finite() && a.mu >= before && a.mu >= 0.0;
        }
        ok
    }

    /// Block-Jacobi CG on `h p = b` from `p`; returns (iterations, exit).
    fn cg(
        &self,
        h: &DMatrix<f64>,
        b: &DVector<f64>,
        p: &mut DVector<f64>,
        max: u32,
        tol: f64,
    ) -> (u32, CgExit) {
        let n = b.len() / 3;
        let inv: Vec<Matrix3<f64>> = (0..n)
            .map(|i| {
                let blk: Matrix3<f64> = h.fixed_view::<3, 3>(3 * i, 3 * i).into_owned();
                blk.try_inverse().unwrap_or_else(Matrix3::identity)
            })
            .collect();
        let precond = |r: &DVector<f64>| {
            let mut z = DVector::zeros(r.len());
            for (i, m) in inv.iter().enumerate() {
                let zi = m * r.fixed_rows::<3>(3 * i);
                z.fixed_rows_mut::<3>(3 * i).copy_from(&zi);
            }
            z
        };
        let mut r = b - h * &*p;
        let r0 = r.norm();
        if r0 == 0.0 {
            return (0, CgExit::Tolerance);
        }
        let mut z = precond(&r);
        let mut d = z.clone();
        let mut rz = r.dot(&z);
        let (mut best, mut best_at) = (r0, 0u32);
        for it in 1..=max {
            let q = h * &d;
            let dq = d.dot(&q);
            if dq <= 0.0 || dq.is_nan() {
                return (it, CgExit::Stagnation);
            }
            let a = rz / dq;
            *p += &d * a;
            r -= &q * a;
            let rn = r.norm();
            if rn <= tol * r0 {
                return (it, CgExit::Tolerance);
            }
            if rn < best {
                best = rn;
                best_at = it;
            } else if it - best_at >= self.settings.cg_stagnation {
                return (it, CgExit::Stagnation);
            }
            z = precond(&r);
            let rz_new = r.dot(&z);
            d = &z + &d * (rz_new / rz);
            rz = rz_new;
        }
        (max, CgExit::Cap)
    }

    /// Newton direction: `h p = −g` by the configured solver.
    fn direction(&self, h: &DMatrix<f64>, g: &DVector<f64>, rep: &mut StepReport) -> DVector<f64> {
        let b = -g;
        match self.settings.linear_solve {
            LinearSolve::Direct => match h.clone().cholesky() {
                Some(c) => c.solve(&b),
                None => h.clone().lu().solve(&b).unwrap_or_else(|| b.clone()),
            },
            LinearSolve::Cg => {
                let mut p = DVector::zeros(b.len());
                let (it, exit) = self.cg(
                    h,
                    &b,
                    &mut p,
                    self.settings.cg_max_iterations,
                    self.settings.cg_tolerance,
                );
                rep.cg_iterations += it;
                rep.cg_exits[exit as usize] += 1;
                p
            }
        }
    }

    fn count_active(&self, x: &[Vector3<f64>]) -> usize {
        self.distances(x)
            .iter()
            .filter(|&&d| d < self.settings.d_hat)
            .count()
    }

    /// Steps along `p` from `x`: CCD bound, active-pair cap, backtracking on L. Returns
    /// (α, α_CCD, unused) with α = 0 when no decrease was found or the cap could not be met;
    /// adds the halvings the cap forced to `cap_halvings`.
    #[allow(clippy::too_many_arguments)]
    fn line_search(
        &self,
        x: &[Vector3<f64>],
        p: &[Vector3<f64>],
        dist: &[f64],
        l0: f64,
        y: &[Vector3<f64>],
        x_start: &[Vector3<f64>],
        st: &IterationState,
        cap_halvings: &mut u32,
    ) -> (f64, f64, u32) {
        let bound = self.ccd_bound(x, p, dist);
        let trial =
            |a: f64| -> Vec<Vector3<f64>> { x.iter().zip(p).map(|(xi, pi)| xi + pi * a).collect() };
        let mut alpha = bound;
        if let Some(cap) = self.settings.max_active_pairs {
            let mut k = 0;
            while self.count_active(&trial(alpha)) > cap {
                if k == self.settings.max_halvings {
                    return (0.0, bound, k);
                }
                alpha *= 0.5;
                k += 1;
            }
            *cap_halvings += k;
        }
        for _ in 0..=self.settings.max_halvings {
            let xt = trial(alpha);
            let l = self.objective(&xt, y, x_start, st);
            if l.is_finite() && l <= l0 + 1e-12 * l0.abs() {
                return (alpha, bound, 0);
            }
            alpha *= 0.5;
        }
        (0.0, bound, 0)
    }

    /// One time step (Algorithm 1 from xₜ); updates positions and velocities.
    pub fn step(&mut self) -> StepReport {
        let s = self.settings;
        let h = self.problem.h;
        let x_start = self.problem.x.clone();
        let y: Vec<Vector3<f64>> = (0..self.problem.len())
            .map(|i| {
                if self.problem.fixed[i] {
                    x_start[i]
                } else {
                    x_start[i] + self.problem.v[i] * h + self.problem.gravity * (h * h)
                }
            })
            .collect();
        let mut rep = StepReport::default();
        let mut x = x_start.clone();
        if self.record_iterates {
            rep.iterates.push(x.clone());
        }
        // σ⁰ from the elastic + inertia gradient and the unit barrier gradient at x⁰ (§3.4).
        let g_energy = self
            .elastic_inertia(&x, &y, true)
            .1
            .map(|d| d.0)
            .unwrap_or_default();
        let g_barrier = self.unit_barrier_gradient(&x);
        let sigma0 = initial_sigma(
            g_barrier.dot(&g_energy),
            g_barrier.norm_squared(),
            self.bounds,
        );
        rep.sigma0 = sigma0;
        let mut st = IterationState {
            sigma: sigma0,
            aug: BTreeMap::new(),
            friction: Vec::new(),
        };
        let min_active = |dist: &[f64]| {
            dist.iter()
                .copied()
                .filter(|&d| d < s.d_hat)
                .fold(f64::INFINITY, f64::min)
        };
        let mut dist = self.distances(&x);
        let mut dmin_prev = min_active(&dist);
        let mut e0 = 0.0;
        for l in 0..s.max_newton_iterations {
            let dmin_cur = min_active(&dist);
            let rule = augmentation_rule(dmin_cur, dmin_prev, st.aug.is_empty(), s.d_hat);
            self.update_augmentation_set(rule, &dist, &mut st);
            if l == 0 || s.friction_lag == FrictionLagMode::PerIteration {
                st.friction = self.lag_friction(&x, &dist, &st);
            }
            let (g, hm) = self.derivatives(&x, &y, &x_start, &st);
            let gn = g.norm();
            if l == 0 {
                e0 = gn;
            }
            rep.sigma.push(st.sigma);
            rep.active
                .push(dist.iter().filter(|&&d| d < s.d_hat).count());
            rep.augmented.push(st.aug.len());
            rep.friction_pairs.push(st.friction.len());
            rep.gradient_norm.push(gn);
            rep.mu_max
                .push(st.aug.values().map(|a| a.mu).fold(0.0, f64::max));
            let converged = gn <= s.newton_tolerance * e0 || e0 == 0.0;
            let l0 = self.objective(&x, &y, &x_start, &st);
            let mut pv = self.direction(&hm, &g, &mut rep);
            let mut resumes = 0;
            let (alpha, bound, pvec) = loop {
                let pvec: Vec<Vector3<f64>> = (0..self.problem.len())
                    .map(|i| pv.fixed_rows::<3>(3 * i).into_owned())
                    .collect();
                let (alpha, bound, _) = self.line_search(
                    &x,
                    &pvec,
                    &dist,
                    l0,
                    &y,
                    &x_start,
                    &st,
                    &mut rep.cap_halvings,
                );
                if alpha >= 1e-9
                    || converged
                    || s.linear_solve != LinearSolve::Cg
                    || resumes >= s.cg_max_resumes
                {
                    break (alpha, bound, pvec);
                }
                // Appendix B: α < 1e-9 sends the solve back to PCG for 100 more iterations.
                resumes += 1;
                rep.cg_resumes += 1;
                let (it, exit) = self.cg(&hm, &(-&g), &mut pv, 100, s.cg_tolerance);
                rep.cg_iterations += it;
                rep.cg_exits[exit as usize] += 1;
            };
            rep.newton_iterations = l + 1;
            rep.ccd_bound.push(bound);
            rep.alpha.push(alpha);
            if alpha == 0.0 && !converged {
                rep.line_search_failed = true;
                break;
            }
            for (xi, pi) in x.iter_mut().zip(&pvec) {
                *xi += pi * alpha;
            }
            dmin_prev = dmin_cur;
            dist = self.distances(&x);
            rep.min_distance
                .push(dist.iter().copied().fold(f64::INFINITY, f64::min));
            if self.record_iterates {
                rep.iterates.push(x.clone());
            }
            if converged {
                rep.converged = true;
                break;
            }
            if !self.dual_update(&dist, &mut st) {
                rep.mu_violation = true;
            }
            if min_active(&dist) < 1e-2 * s.d_hat {
                st.sigma = grown_sigma(s.sigma_rule, st.sigma, sigma0);
            }
        }
        rep.hit_cap = !rep.converged && !rep.line_search_failed;
        for i in 0..self.problem.len() {
            self.problem.v[i] = if self.problem.fixed[i] {
                Vector3::zeros()
            } else {
                (x[i] - x_start[i]) / h
            };
        }
        self.problem.x = x;
        rep
    }
}
