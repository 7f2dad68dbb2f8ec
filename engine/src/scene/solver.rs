//! `[simulation]` (time stepping, gravity, the solver's choice), `[solver]` (the Newton–PCG
//! parameters) and `[xpbd]` (the XPBD parameters).

use serde::{Deserialize, Serialize};

/// Time stepping and global forces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimulationSettings {
    /// Frames per second of the output (Hz).
    pub frame_rate: f64,
    /// Time steps per frame.
    pub substeps: u32,
    /// Number of frames to simulate.
    pub frames: u32,
    /// Gravitational acceleration (m/s²).
    #[serde(deserialize_with = "super::exact::array")]
    pub gravity: [f64; 3],
    /// Time integrator.
    pub solver: SolverKind,
}

impl Default for SimulationSettings {
    fn default() -> Self {
        SimulationSettings {
            frame_rate: 60.0,
            substeps: 1,
            frames: 120,
            gravity: [0.0, 0.0, -9.81],
            solver: SolverKind::Newton,
        }
    }
}

impl SimulationSettings {
    /// Time step (s): one frame divided by the substeps.
    pub fn time_step(&self) -> f64 {
        1.0 / (self.frame_rate * self.substeps as f64)
    }
}

/// Time integrator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SolverKind {
    /// Implicit Euler as incremental-potential minimisation with Newton–PCG.
    Newton,
    /// Semi-implicit (symplectic) Euler, the RAINBOW baseline.
    SymplecticEuler,
    /// XPBD with substeps and multicolor constraint sweeps (`stepper::xpbd`).
    Xpbd,
}

/// Parameters of the XPBD solver (`[xpbd]`; defaults in [`XpbdConfig::default`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XpbdConfig {
    /// Substeps per time step (default 20): each predicts, sweeps the constraints and updates
    /// velocities. Stiff solids need short substeps (see [`TetSolve`]).
    pub substeps: u32,
    /// Constraint sweeps over all colors per substep (default 1).
    pub iterations: u32,
    /// Velocity damping rate (1/s, default 0): free velocities scale by `1 − damping · h_sub`
    /// per substep.
    pub damping: f64,
    /// How each tet's deviatoric and hydrostatic constraints are solved (default coupled).
    pub tet_solve: TetSolve,
}

impl Default for XpbdConfig {
    fn default() -> Self {
        XpbdConfig {
            substeps: 20,
            iterations: 1,
            damping: 0.0,
            tet_solve: TetSolve::Coupled,
        }
    }
}

/// Parameters of the Newton–PCG solver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NewtonConfig {
    /// Newton iterations per time step at most.
    pub newton_max_iterations: u32,
    /// Newton stops when a step's largest vertex displacement falls below this (m).
    pub newton_tolerance: f64,
    /// Newton also stops when the largest per-vertex gradient of the incremental potential falls
    /// to this (N).
    pub newton_gradient_tolerance: f64,
    /// PCG stops at this relative residual.
    pub pcg_tolerance: f64,
    /// PCG iterations per Newton step at most.
    pub pcg_max_iterations: u32,
    /// PCG stops when the residual has not improved over this many iterations.
    pub pcg_stagnation_window: u32,
    /// Warm-start PCG with block-Jacobi solves of stiffness groups.
    pub stiffness_group_warm_start: bool,
    /// Iterations of the grouped warm-start PCG at most.
    pub warm_start_max_iterations: u32,
    /// The grouped warm-start PCG stops at this relative residual.
    pub warm_start_tolerance: f64,
    /// Friction slip velocity ε_v (m/s): slower tangential motion is treated as sticking
    /// (IPC's smoothing; larger converges faster, smaller sticks better).
    pub friction_slip_velocity: f64,
    /// Re-lag friction normals and forces at every Newton iteration (fully implicit) instead of
    /// once per time step (semi-implicit).
    pub friction_per_iteration: bool,
    /// Who decides the Newton loop's iterations, line search and stop test when no contact
    /// handler acts between iterates (default device).
    pub newton_loop: NewtonLoop,
    /// When the tets' element Hessians are projected to PSD (default always).
    pub hessian_projection: HessianProjection,
}

/// When the Newton system's tet Hessians are projected to PSD
/// ([`NewtonConfig::hessian_projection`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HessianProjection {
    /// Every iteration: each tet's negative eigenvalues clamped at 0 (projected Newton).
    #[default]
    Always,
    /// Project-on-demand Newton (Longva et al. 2023, "Pitfalls of Projection"): each iteration
    /// first solves with the exact tet Hessians and falls back to the projected ones when the
    /// PCG meets negative curvature or the line search accepts no step. Runs the Newton loop
    /// on the host.
    OnDemand,
}

/// Who runs the Newton loop's decisions ([`NewtonConfig::newton_loop`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NewtonLoop {
    /// The device: iteration graphs gated by a control kernel, one host wait per batch of
    /// graphs (the same trajectory as the host loop).
    #[default]
    Device,
    /// The host: it reads the energies, norms and PCG results after every part.
    Host,
}

impl Default for NewtonConfig {
    fn default() -> Self {
        NewtonConfig {
            newton_max_iterations: 20,
            newton_tolerance: 1e-5,
            newton_gradient_tolerance: 1e-6,
            pcg_tolerance: 1e-4,
            pcg_max_iterations: 1000,
            pcg_stagnation_window: 100,
            stiffness_group_warm_start: true,
            warm_start_max_iterations: 30,
            warm_start_tolerance: 1e-2,
            friction_slip_velocity: 1e-2,
            friction_per_iteration: false,
            newton_loop: NewtonLoop::Device,
            hessian_projection: HessianProjection::Always,
        }
    }
}

/// How the deviatoric and hydrostatic constraints of one tet are solved (both in the same
/// invocation, `kernels/xpbd/tet_sweep.comp`).
///
/// Both constraints carry large multipliers at rest (C_D = √3 and C_H = −μ/λ balance each
/// other) while XPBD restarts λ from 0 every substep. Solved together, their corrections cancel
/// exactly at rest; solved one after the other, the deviatoric update first shrinks the tet and
/// the hydrostatic one only partly restores it, so a body at rest drifts (the 0.4 m, E = 1 MPa
/// beam of `tests/gpu/xpbd.rs` moves 0.5 mm in its first 1/2400 s substep). Either way XPBD
/// drops the constraints' curvature, so the sweeps diverge when `μ V h²` outgrows the tets'
/// inertia (`Σ wᵢ |∇ᵢC|² ≫ α̃`): that beam needs about 40 substeps of a 1/60 s step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TetSolve {
    /// Both at once from their 2×2 XPBD system `[∇C W ∇Cᵀ + α̃] Δλ = −C − α̃ λ`.
    #[default]
    Coupled,
    /// One after the other (deviatoric, then hydrostatic), each a scalar XPBD update.
    Sequential,
}
