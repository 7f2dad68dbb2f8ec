//! `[collision]`: the collision method between deformable surfaces and its parameters (one
//! flat table in the file; the two-way and shortest-path fields are documented per method).

use serde::{Deserialize, Serialize};

/// Collision handling method between deformable surfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollisionMethod {
    /// No surface–surface collision handling (analytic colliders still act).
    None,
    /// The two-way interior point method after every Newton iteration (two-way IPM paper).
    TwoWay,
    /// Discrete detection of tet-mesh vertices and boundary edges inside tets, shortest paths
    /// to the boundary, as XPBD collision constraints or as the Newton solver's penalty energy
    /// (shortest-path paper).
    ShortestPath,
    /// Barrier-augmented Lagrangian contact (IPC's log barrier with adaptive augmentation, a
    /// CCD-filtered line search and fully implicit friction) inside the Newton solver; its
    /// settings are the `[collision.bal]` table ([`BalConfig`]), χ is `collision.friction`.
    Bal,
    /// RAINBOW's PROX: contact impulses on the velocities after symplectic Euler's free
    /// update (parameters in `[prox]`).
    Prox,
    /// Test-only: a handler that does nothing but record the phases it is called at
    /// (`contact/inert.rs`), registered through the same path as the real methods.
    #[cfg(test)]
    Inert,
}

/// Forward-step bound of the two-way method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollisionBound {
    /// |Δx_i| ≤ γ D_i / 2 (two-way IPM Eq. 20).
    HalfDistance,
    /// |Δx_i| ≤ γ_p D_i (offset-geometric-contact bound, `ogc_relaxation` = γ_p).
    Ogc,
}

/// `collision.shared_step`: which bodies of the two-way method move by one step fraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SharedStep {
    /// Tetrahedral bodies: every vertex of a solid takes its body's smallest surface-vertex
    /// fraction each step, so solids keep their shape during a solve; cloth and rods take
    /// per-vertex fractions (the paper's Eq. 20).
    #[default]
    Solids,
    /// Every body moves by one fraction per step.
    Bodies,
    /// Per-vertex fractions everywhere (the paper's Eq. 20 as published).
    None,
}

/// What precedes each forward step of the two-way method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollisionBackward {
    /// The paper's backward step: projected multicolor Gauss–Seidel (§4).
    GaussSeidel,
    /// The paper's log-barrier baseline (§3.4, Eq. 7–8): gradient descent on the barrier
    /// objective with the same forward steps (for comparison).
    LogBarrier,
}

/// Where the two-way method colors its contact constraints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollisionColoring {
    /// Host on CPU Vulkan devices (lavapipe) and up to 20,000 collision vertices, GPU otherwise.
    Auto,
    /// Jones–Plassmann on the GPU.
    Gpu,
    /// Greedy on the host.
    Host,
}

/// How the two-way backward step's multicolor sweep is dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CollisionSweepDispatch {
    /// Fused on CPU Vulkan devices (lavapipe) and up to 20,000 collision vertices, per color
    /// otherwise.
    Auto,
    /// One dispatch per color.
    PerColor,
    /// One single-workgroup dispatch per sweep.
    Fused,
}

/// Parameters of surface–surface collision handling (SI units; defaults: the two-way IPM
/// paper's Table 3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CollisionSettings {
    /// Method.
    pub method: CollisionMethod,
    /// Collide a body with itself (cloth folding onto itself).
    pub self_collision: bool,
    /// D_min (m): a new proximity search when the reuse bound falls below it.
    pub d_min: f64,
    /// D_max (m): proximity search distance.
    pub d_max: f64,
    /// δ (m): separation the contact constraints ask for.
    pub delta: f64,
    /// σ: stretch limit of the edge-length constraints.
    pub sigma: f64,
    /// γ: damping of the forward step.
    pub gamma: f64,
    /// ε: the handling stops when every vertex clock is below it.
    pub epsilon: f64,
    /// L: steps per collision solve at most.
    pub max_steps: u32,
    /// ξ (m): minimum separation kept between primitives (above f32 rounding).
    pub min_separation: f64,
    /// Forward-step bound.
    pub bound: CollisionBound,
    /// Two-way method: floor release (vertices held by pairs squeezed to the minimum
    /// separation may take the larger step of their other pairs when a separating-plane test
    /// proves it safe).
    pub floor_release: bool,
    /// Two-way method: pairs closer than this are floor pairs (m; default:
    /// `10 min_separation`, at most `d_max`); in (2 `min_separation`, `d_max`].
    pub floor_release_distance: Option<f64>,
    /// Two-way method: which bodies move by one step fraction per step (their vertices' smallest
    /// distance-bounded fraction) instead of per-vertex fractions.
    pub shared_step: SharedStep,
    /// γ_p of the OGC bound (0 < γ_p < 0.5).
    pub ogc_relaxation: f64,
    /// Backward step, or the log-barrier baseline in its place.
    pub backward: CollisionBackward,
    /// Log-barrier baseline: strength k relative to m̄/h² (dimensionless; the paper's
    /// k = 20 kg/s² is 20 h²/m̄).
    pub barrier_strength: f64,
    /// Log-barrier baseline: range d̂ (m; at most d_min).
    pub barrier_range: f64,
    /// Where the contact constraints of each proximity search are colored.
    pub contact_coloring: CollisionColoring,
    /// How the backward step's sweep is dispatched.
    pub sweep_dispatch: CollisionSweepDispatch,
    /// Steps recorded per GPU graph run (host round trips every this many steps).
    pub steps_per_batch: u32,
    /// Two-way method: search sections per step batch, each after 2 steps and run only when a
    /// step used up the reuse bound (no host wait of their own; 0: the host runs every search).
    pub batch_searches: u32,
    /// Edge-length constraints in the backward step (Eq. 17).
    pub edge_constraints: bool,
    /// Coulomb friction coefficient of self and inter-body contact: the shortest-path method's
    /// position-based friction, and the two-way method's velocity filtering of its targets
    /// (0: off).
    pub friction: f64,
    /// Separation a resolved point keeps from the boundary (m; shortest-path method).
    pub contact_offset: f64,
    /// Query every tet vertex, not only boundary vertices (shortest-path method; for
    /// recovering deep pre-existing overlaps).
    pub query_all_vertices: bool,
    /// Also query boundary edges through tets (shortest-path method).
    pub query_edges: bool,
    /// Infeasible-region culling of shortest-path candidates (changes no answer).
    pub infeasible_region_culling: bool,
    /// Over-relaxation ω of the shortest-path method's Jacobi constraint projection (0 < ω < 2).
    pub relaxation: f64,
    /// Shortest-path method: largest part of a violation one projection closes (m).
    pub max_correction: f64,
    /// Shortest-path method: Jacobi projections of the collision constraints after each XPBD
    /// iteration (1..=64).
    pub response_passes: u32,
    /// Shortest-path method: detect (and query) again before every XPBD constraint iteration
    /// after the first, not only once per substep; catches the penetrations that the
    /// iterations themselves create (the paper detects once per substep and adds CCD).
    pub detect_every_iteration: bool,
    /// Simulated time (s) before which shortest-path collision handling is off (to create
    /// intersections for it to recover from, as in the paper's Fig. 17).
    pub start_time: f64,
    /// Shortest-path method: which collisions are detected, `"hybrid"` (CCD for new
    /// collisions, DCD with the shortest path at the start of each substep; the paper's
    /// recommendation), `"dcd"` or `"ccd"` only (the paper's Fig. 9 comparison).
    pub detection: DetectionMode,
    /// Shortest-path method: proximity search distance of the CCD candidate pairs (m); a
    /// search is reused while every vertex moved less than half of it.
    pub ccd_distance: f64,
    /// Shortest-path method with CCD: at the end of each substep, pairs the response left
    /// colliding send their vertices back to the start of the substep (repeated until none
    /// does), so CCD never lets a collision through. Off by default: rolling single vertices
    /// back distorts elements, and in dense piles the rollbacks can freeze the simulation.
    pub ccd_failsafe: bool,
    /// Shortest-path method with the Newton solver: stiffness k of the penalty energy
    /// ½ k min((p − s)·n − offset, 0)², relative to m̄/h² (m̄: mean mass of the free vertices).
    pub penalty_stiffness: f64,
    /// Two-way method: stiffness k_r of the quadratic repulsion energy ½ k_r (d_r − d)² of its
    /// proximity pairs in the Newton dynamics (two-way IPM §6.2), relative to m̄/h² (0: off).
    pub repulsion_stiffness: f64,
    /// Two-way method: repulsion distance d_r (m; default: `delta`); at most `d_min`.
    pub repulsion_distance: Option<f64>,
    /// Barrier-augmented Lagrangian method: its settings (`[collision.bal]`).
    pub bal: BalConfig,
}

impl Default for CollisionSettings {
    fn default() -> Self {
        // The two-way IPM paper's Table 3 (`contact::two_way::settings::paper`, checked equal by
        // a test there); ξ = δ / 100.
        CollisionSettings {
            method: CollisionMethod::None,
            self_collision: true,
            d_min: 2e-3,
            d_max: 4e-3,
            delta: 1e-3,
            sigma: 1.1,
            gamma: 0.9,
            epsilon: 1e-4,
            max_steps: 512,
            min_separation: 1e-5,
            bound: CollisionBound::HalfDistance,
            floor_release: true,
            floor_release_distance: None,
            shared_step: SharedStep::Solids,
            ogc_relaxation: 0.45,
            backward: CollisionBackward::GaussSeidel,
            barrier_strength: 10.0,
            barrier_range: 1e-3,
            contact_coloring: CollisionColoring::Auto,
            sweep_dispatch: CollisionSweepDispatch::Auto,
            steps_per_batch: 8,
            batch_searches: 4,
            edge_constraints: true,
            friction: 0.0,
            contact_offset: 1e-4,
            query_all_vertices: false,
            query_edges: true,
            infeasible_region_culling: true,
            relaxation: 1.5,
            max_correction: 2e-3,
            response_passes: 4,
            detect_every_iteration: true,
            start_time: 0.0,
            detection: DetectionMode::Hybrid,
            ccd_distance: 0.01,
            ccd_failsafe: false,
            penalty_stiffness: 10.0,
            repulsion_stiffness: 0.0,
            repulsion_distance: None,
            bal: BalConfig::default(),
        }
    }
}

impl CollisionSettings {
    /// The two-way repulsion distance d_r (m): `repulsion_distance`, else `delta`.
    pub fn repulsion_distance(&self) -> f64 {
        self.repulsion_distance.unwrap_or(self.delta)
    }

    /// The floor-release distance θ (m): `floor_release_distance`, else
    /// `min(10 min_separation, d_max)`.
    pub fn floor_release_distance(&self) -> f64 {
        self.floor_release_distance
            .unwrap_or((10.0 * self.min_separation).min(self.d_max))
    }
}

/// Which collisions are detected (the paper's Fig. 9 comparison).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DetectionMode {
    /// Discrete detection with the shortest path only, at the predicted positions (and again
    /// after iterations with `detect_every_iteration`).
    Dcd,
    /// Continuous detection only: collisions during each substep's motion, none of what is
    /// already intersecting.
    Ccd,
    /// The paper's recommendation: DCD with the shortest path at the start of each substep
    /// (what earlier substeps left intersecting), CCD for new collisions.
    #[default]
    Hybrid,
}

impl DetectionMode {
    /// Whether discrete detection with the shortest path runs.
    pub fn dcd(self) -> bool {
        self != DetectionMode::Ccd
    }

    /// Whether continuous detection runs.
    pub fn ccd(self) -> bool {
        self != DetectionMode::Dcd
    }
}

/// How σ grows when a pair comes closer than 10⁻² d̂ (BAL Algorithm 1 line 21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BalSigmaRule {
    /// As printed: `σ ← max(1.2 σ, 100 σ⁰)` (unbounded).
    #[default]
    AsPrinted,
    /// The cap reading: `σ ← min(1.2 σ, 100 σ⁰)`.
    Capped,
}

/// When the BAL method re-lags friction (normal forces, tangent bases, weights).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BalFrictionLag {
    /// After every Newton iteration (fully implicit; the paper).
    #[default]
    PerIteration,
    /// Once at the start of each time step (semi-implicit; IPC).
    PerStep,
}

/// `[collision.bal]`: the barrier-augmented Lagrangian method's parameters (SI units; defaults:
/// the paper's values, spec `../shared/notes/bal-spec.md` §A3–§A7). The friction coefficient χ
/// is `collision.friction`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BalConfig {
    /// d̂ (m): the barrier acts on pairs closer than this (unsquared distance).
    pub d_hat: f64,
    /// ε_v (m/s): friction mollifier velocity; tangential slip below ε_v h per step sticks.
    pub eps_v: f64,
    /// σ growth rule.
    pub sigma_rule: BalSigmaRule,
    /// false: the "inexact Newton" baseline (A′ always empty: IPC's barrier on the same PCG).
    pub augmentation: bool,
    /// When friction is re-lagged.
    pub friction_lag: BalFrictionLag,
    /// Newton stops at ‖∇L‖ ≤ `newton_tolerance` ‖∇L⁰‖ (relative, in (0, 1)).
    pub newton_tolerance: f64,
    /// ξ: the line search's CCD bound keeps every pair at least ξ times its distance apart,
    /// in (0, 1).
    pub ccd_separation: f64,
    /// Cap on active pairs at line-search trials (paper §5.2; the step halves while more
    /// pairs would be active; none: no cap).
    pub max_active_pairs: Option<u32>,
    /// When the line search ends below α = 10⁻⁹, PCG resumes for 100 more iterations and
    /// the search is retried, at most this many times per Newton iteration (Appendix B).
    pub pcg_resumes: u32,
    /// Proximity search distance for the candidate pairs (m, > d_hat; default d̂ plus half
    /// the mean surface edge length). Larger: fewer searches, more candidates.
    pub search_distance: Option<f64>,
    /// Initial capacity of the active-pair list (grown between passes on overflow; default
    /// 4 per surface vertex).
    pub pair_capacity: Option<u32>,
}

impl Default for BalConfig {
    fn default() -> Self {
        BalConfig {
            d_hat: 1e-3,
            eps_v: 1e-3,
            sigma_rule: BalSigmaRule::AsPrinted,
            augmentation: true,
            friction_lag: BalFrictionLag::PerIteration,
            newton_tolerance: 1e-4,
            ccd_separation: 0.1,
            max_active_pairs: None,
            pcg_resumes: 20,
            search_distance: None,
            pair_capacity: None,
        }
    }
}

/// `prox.scheme`: how PROX sweeps its contacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProxSchemeName {
    /// Serial Gauss–Seidel (RAINBOW's default).
    #[default]
    GaussSeidel,
    /// Jacobi: every contact from the previous sweep's impulses.
    Jacobi,
    /// Jacobi across contacts, the latest values within one (RAINBOW's hybrid).
    Hybrid,
    /// Gauss–Seidel by colors of the contact graph.
    ColoredGaussSeidel,
}

/// `prox.contacts`: where PROX's contacts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProxContactsName {
    /// RAINBOW's rest-space signed distance grids (tet bodies).
    #[default]
    Sdf,
    /// Supple's proximity pairs of the boundary surfaces.
    Pairs,
}

/// `prox.mode`: what happens to penetration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProxModeName {
    /// Positions limited by conservative bounds: frames stay intersection-free.
    #[default]
    Safe,
    /// RAINBOW's: unlimited positions, the largest penetration is logged.
    Faithful,
}

/// `prox.coloring`: the contact-graph coloring of the colored scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProxColoringName {
    /// Greedy, largest first, on the host (RAINBOW's).
    #[default]
    Greedy,
    /// Random (Vivace-style, fixed seed) on the host.
    Random,
    /// Jones–Plassmann on the GPU.
    JonesPlassmann,
}

/// `prox.sweep_dispatch`: how a PROX sweep is dispatched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProxDispatchName {
    /// Fused on CPU Vulkan devices, per color otherwise.
    #[default]
    Auto,
    /// One dispatch per phase and color.
    PerColor,
    /// Whole sweeps in one single-workgroup dispatch.
    Fused,
}

/// `[prox]`: RAINBOW's PROX contact method (`collision.method = "prox"`, symplectic Euler);
/// defaults are RAINBOW's (SI units).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ProxTable {
    /// Sweep scheme.
    pub scheme: ProxSchemeName,
    /// Contact generation.
    pub contacts: ProxContactsName,
    /// Penetration policy.
    pub mode: ProxModeName,
    /// Contact-graph coloring (colored scheme).
    pub coloring: ProxColoringName,
    /// Sweep dispatch.
    pub sweep_dispatch: ProxDispatchName,
    /// Converged when the merit falls below this (N·s, > 0).
    pub absolute_tolerance: f64,
    /// Converged when the merit changes by less than this fraction (> 0).
    pub relative_tolerance: f64,
    /// Sweeps per solve at most (≥ 1).
    pub max_iterations: u32,
    /// r scale after a rejected sweep, in (0, 1).
    pub nu_reduce: f64,
    /// r scale after slow progress (≥ 1).
    pub nu_increase: f64,
    /// Merit decrease below which r grows (N·s, ≥ 0).
    pub too_small_merit_change: f64,
    /// Initial r = r_factor / diag(J W Jᵀ) (> 0).
    pub r_factor: f64,
    /// Coulomb friction coefficient μ of every contact (≥ 0).
    pub friction: f64,
    /// Newton restitution ε of the normal rows, in [0, 1].
    pub restitution: f64,
    /// RAINBOW's linear damping coefficient c (kg/(m³·s), ≥ 0): lumped damping force −c V_a u_a.
    pub damping: f64,
    /// Signed distance grid nodes per axis (2–256).
    pub sdf_resolution: u32,
    /// Contact distance of the `"sdf"` contacts (m, ≥ 0).
    pub envelope: f64,
    /// Frank–Wolfe steps per deepest-point search (1–1000).
    pub fw_max_iterations: u32,
    /// Frank–Wolfe duality-gap tolerance (m, ≥ 0).
    pub fw_tolerance: f64,
    /// How far inside its grid a point must be (m, ≥ 0).
    pub sdf_inside_margin: f64,
    /// Proximity distance of the `"pairs"` contacts (m, > 0).
    pub pair_distance: f64,
    /// `"pairs"` hash cell in mean surface edges (≥ 0; 0: Supple's default cell).
    pub pair_cell_scale: f64,
    /// Seed of the random coloring.
    pub random_seed: u32,
    /// Rounds of the random coloring before sequential colors (≥ 1).
    pub random_max_rounds: u32,
    /// Fixed nodes join the contact graph (RAINBOW: true).
    pub graph_fixed_nodes: bool,
    /// Sweeps per graph run (1–1024).
    pub sweeps_per_batch: u32,
}

impl Default for ProxTable {
    fn default() -> Self {
        ProxTable {
            scheme: ProxSchemeName::default(),
            contacts: ProxContactsName::default(),
            mode: ProxModeName::default(),
            coloring: ProxColoringName::default(),
            sweep_dispatch: ProxDispatchName::default(),
            absolute_tolerance: 1e-3,
            relative_tolerance: 1e-4,
            max_iterations: 200,
            nu_reduce: 0.7,
            nu_increase: 1.3,
            too_small_merit_change: 0.01,
            r_factor: 0.1,
            friction: 1.0,
            restitution: 0.0,
            damping: 0.0,
            sdf_resolution: 64,
            envelope: 0.1,
            fw_max_iterations: 8,
            fw_tolerance: 0.0,
            sdf_inside_margin: 0.0,
            pair_distance: 1e-3,
            pair_cell_scale: 0.0,
            random_seed: 0x5eed_0001,
            random_max_rounds: 200,
            graph_fixed_nodes: true,
            sweeps_per_batch: 8,
        }
    }
}
