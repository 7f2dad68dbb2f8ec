//! Settings of the Newton stepper and their conversion from the scene (`[solver]`, the time
//! step and gravity of `[simulation]`, and what the contact method needs).

use crate::contact::ContactNeeds;
use crate::linear::WarmStart;
use crate::scene::Scene;

/// Newton solver settings (SI units).
#[derive(Debug, Clone, PartialEq)]
pub struct NewtonSettings {
    /// Time step (s).
    pub h: f64,
    /// Gravity (m/s²).
    pub gravity: [f64; 3],
    /// Newton iterations per step at most.
    pub max_iterations: u32,
    /// Stop when the Newton direction's largest vertex displacement is below this (m).
    pub tolerance: f64,
    /// Also stop when the largest per-vertex gradient norm of the incremental potential (the
    /// unbalanced force) is at most this (N; 0: only the displacement test).
    pub gradient_tolerance: f64,
    /// PCG relative residual.
    pub pcg_tolerance: f32,
    /// PCG iterations per Newton iteration at most.
    pub pcg_max_iterations: u32,
    /// Collider barrier stiffness κ relative to m/h² (dimensionless): the barrier
    /// κ (m/h²) b(d) with IPC's b(d) = −(d − d̂)² ln(d/d̂).
    pub contact_stiffness: f64,
    /// Collider barrier activation distance d̂ (m): the barrier acts on vertices closer than
    /// this to a collider's offset surface.
    pub barrier_distance: f64,
    /// Friction slip threshold ε (m): tangential displacements per step below it are treated
    /// as static friction (IPC's ε_v h).
    pub friction_slip: f64,
    /// Block-Jacobi warm start of PCG by stiffness groups.
    pub warm_start: WarmStart,
    /// PCG stops when its residual has not improved over this many iterations.
    pub pcg_stagnation_window: u32,
    /// Re-lag friction at every Newton iteration (fully implicit, the barrier-augmented
    /// Lagrangian paper §4.1) instead of once per time step (semi-implicit, IPC).
    pub friction_per_iteration: bool,
    /// Stiffness k of the penalty-type energy term a contact method attaches (the
    /// shortest-path penalty, the two-way repulsion) relative to m̄/h², m̄ the mean mass of the
    /// free vertices (dimensionless; 0: no such term).
    pub penalty_stiffness: f64,
    /// Outer iterations per step (each a full Newton solve followed by the energy terms'
    /// outer update, e.g. augmented-Lagrangian multipliers; 1: none).
    pub max_outer_iterations: u32,
    /// Line-search halvings from the first step before the search fails (`None`: it fails
    /// once α ≤ 10⁻⁶).
    pub max_halvings: Option<u32>,
    /// After a failed line search, PCG resumes for one stagnation window from its last
    /// solution and the search is retried, at most this many times per Newton iteration.
    pub pcg_resumes: u32,
    /// Run the Newton loop's decisions on the device when no contact handler acts between
    /// iterates (`device_loop.rs`); false: the host decides after every part.
    pub device_loop: bool,
    /// Scripted vertices as unknowns of the solve, pulled to their pose by an augmented
    /// Lagrangian whose weight starts at this times their mass (× 1/h²; dimensionless), as
    /// IPC imposes boundary conditions; `None`: they are fixed and moved before the solve.
    pub script_pull: Option<f64>,
    /// Project-on-demand Newton ([`crate::scene::HessianProjection::OnDemand`]): each
    /// iteration solves with the exact tet Hessians first; false: always projected.
    pub project_on_demand: bool,
}

/// The pull's starting weight relative to a scripted vertex's mass
/// ([`NewtonSettings::script_pull`]); it grows tenfold while a round gains less than tenfold.
pub const SCRIPT_PULL_WEIGHT: f64 = 1e4;

impl NewtonSettings {
    /// The settings of `scene` with what the contact method `needs`.
    pub fn from_scene(scene: &Scene, needs: &ContactNeeds) -> NewtonSettings {
        let h = scene.simulation.time_step();
        let s = &scene.solver;
        NewtonSettings {
            h,
            gravity: scene.simulation.gravity,
            max_iterations: s.newton_max_iterations,
            tolerance: s.newton_tolerance,
            // The per-vertex gradient test does not see float gradients added by energy terms.
            gradient_tolerance: if needs.term_gradients {
                0.0
            } else {
                s.newton_gradient_tolerance
            },
            pcg_tolerance: s.pcg_tolerance as f32,
            pcg_max_iterations: s.pcg_max_iterations,
            contact_stiffness: 1000.0,
            barrier_distance: 1e-3,
            friction_slip: s.friction_slip_velocity * h,
            warm_start: WarmStart {
                enabled: s.stiffness_group_warm_start,
                max_iterations: s.warm_start_max_iterations,
                tolerance: s.warm_start_tolerance as f32,
            },
            pcg_stagnation_window: s.pcg_stagnation_window,
            friction_per_iteration: s.friction_per_iteration,
            penalty_stiffness: needs.energy_stiffness,
            max_outer_iterations: needs.outer_iterations.max(1),
            max_halvings: needs.line_search_halvings,
            pcg_resumes: needs.line_search_resumes,
            device_loop: s.newton_loop == crate::scene::NewtonLoop::Device,
            script_pull: needs.scripted_unknowns.then_some(SCRIPT_PULL_WEIGHT),
            project_on_demand: s.hessian_projection == crate::scene::HessianProjection::OnDemand,
        }
    }
}
