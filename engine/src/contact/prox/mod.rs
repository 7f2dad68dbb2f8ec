//! RAINBOW's PROX contact handling on the GPU (Dong She's report on RAINBOW, §2.4 and §3.2;
//! spec `../shared/notes/prox-spec.md` Part B): per contact a normal impulse and a friction
//! impulse in the Coulomb disk, found by the fixed-point proximal iteration
//! `λ ← prox(λ − r (J W Jᵀ λ + b))` with the four schemes (`gauss-seidel`, `jacobi`, `hybrid`,
//! `colored-gauss-seidel`) and RAINBOW's r-factor strategy; `collision.method = "prox"` with
//! the symplectic Euler stepper ([`handler`]).
//!
//! - [`handler`]: the contact method and handler (`collision.method = "prox"`), per-step
//!   statistics ([`handler::ProxFrameStats`]);
//! - [`model`]: the contact type, the scheme, the convergence parameters;
//! - [`graph`]: the contact graph with the host colorings (greedy, random);
//! - [`sdf`], [`generation`]: RAINBOW's contact generation in plain Rust (rest-space signed
//!   distance grids, Frank–Wolfe deepest points, tet-embedded 8-node contacts, reduction);
//! - [`settings`]: [`ProxSettings`] (the future `[prox]` scene table) with RAINBOW's defaults
//!   and field-naming validation;
//! - [`solver`]: [`ProxSolver`], the GPU solve (kernels in `kernels/prox/`, layout and graphs in
//!   its documentation), with Jones–Plassmann coloring of 8-node contacts
//!   ([`solver::coloring`]) and Supple's proximity pairs as contacts ([`solver::pairs`]).
//!
//! The plain-Rust reference (the schemes in f64, NCP residuals, pairs as contacts, and a CPU
//! semi-implicit stepper with PROX for the law checks) is `cpu_reference::prox`; nothing here
//! names it (engine architecture rule).
//!
//! # What a stepper must offer (the wiring contract)
//!
//! PROX is a contact handler acting at `Phase::Velocities` of a step (issue 21): after the free
//! velocity update and before the position update, the semi-implicit (symplectic) Euler step of
//! RAINBOW's `SemiImplicitStepper.step`:
//! 1. the stepper computes `u′ = u + h M⁻¹ (f_ext + f_e + f_d)` into its velocity buffer
//!    (fixed and scripted nodes keep their prescribed velocity, inverse mass 0);
//! 2. **PROX** (this module), with positions still at the start of the step, xᵗ:
//!    - contacts at xᵗ: `"sdf"` — [`generation::SdfContactGenerator`]
//!      on the positions read back (plain Rust for now; each body's rest positions and tets,
//!      grids built once at setup), then [`ProxSolver::set_contacts`]; `"pairs"` — a
//!      [`crate::proximity::ProximitySearch`] over the boundary surfaces at xᵗ with distance
//!      `prox.pair_distance`, then [`ProxSolver::contacts_from_pairs`] (no readback without
//!      host coloring);
//!    - [`ProxSolver::solve`]: `b = J u′` (+ restitution from the start velocities), the sweeps,
//!      then `u = u′ + W Jᵀ λ` written in place into the velocity buffer;
//! 3. the stepper moves `x += h u` — in `"safe"` mode limited per vertex by Supple's
//!    conservative bounds (the two-way/OGC forward step from a proximity search at xᵗ) so every
//!    frame stays intersection-free; in `"faithful"` mode unlimited, logging the largest
//!    penetration (−min gap of the contacts, [`model::Contact::gap`]);
//! 4. Dirichlet nodes are reset by the stepper as usual.
//!
//! Buffers the stepper owns and hands over once ([`StepperBuffers`], bound into compiled
//! graphs): lumped inverse masses (`f32` per node, 0 = fixed; read back once at construction —
//! rebuild the solver if they change), the velocity buffer (`[f32; 4]` per node: u′ in, u out)
//! and the start-of-step velocities (`[f32; 4]`, only read for restitution), all over the same
//! node numbering the contacts use; for `"pairs"`, the proximity search's position buffer at
//! xᵗ. The solver allocates everything else once (contact capacity grown on demand) and records
//! no graph per step.
//!
//! Per step `report.json` wants: contacts, colors, sweeps, rollbacks, merit, the natural-map
//! residual and ms per solve ([`ProxSolveReport`]), the coloring's color counts and the
//! generation's counters ([`generation::GenerationStats`]), and in
//! faithful mode the largest penetration.
//!
//! # Settings (`[prox]` in a scene; RAINBOW's defaults)
//!
//! | field | unit | default | meaning |
//! |---|---|---|---|
//! | `prox.scheme` | – | `"gauss-seidel"` | `"gauss-seidel"`, `"jacobi"`, `"hybrid"`, `"colored-gauss-seidel"` |
//! | `prox.contacts` | – | `"sdf"` | `"sdf"` (RAINBOW's grids) or `"pairs"` (Supple's proximity pairs) |
//! | `prox.mode` | – | `"safe"` | `"safe"` (intersection-free frames) or `"faithful"` (RAINBOW: penetration logged) |
//! | `prox.coloring` | – | `"greedy"` | `"greedy"`, `"random"` (fixed seed) or `"jones-plassmann"` (GPU, ≤ 256 colors) |
//! | `prox.sweep_dispatch` | – | `"auto"` | `"per-color"`, `"fused"` or `"auto"` (fused on CPU devices) |
//! | `prox.absolute_tolerance` | N·s | `1e-3` | converged when the merit ‖λ − λ_accepted‖∞ is below it, > 0 |
//! | `prox.relative_tolerance` | – | `1e-4` | converged when the merit changes by less than this fraction, > 0 |
//! | `prox.max_iterations` | – | `200` | sweeps per solve at most, ≥ 1 |
//! | `prox.nu_reduce` | – | `0.7` | r scale after a rejected sweep (rollback), in (0, 1) |
//! | `prox.nu_increase` | – | `1.3` | r scale when the merit fell by less than `too_small_merit_change`, ≥ 1 |
//! | `prox.too_small_merit_change` | N·s | `0.01` | see above, ≥ 0 |
//! | `prox.r_factor` | – | `0.1` | initial r = r_factor / diag(J W Jᵀ), > 0 |
//! | `prox.friction` | – | `1.0` | Coulomb μ, ≥ 0 |
//! | `prox.restitution` | – | `0.0` | Newton ε of the normal rows, in [0, 1] |
//! | `prox.sdf_resolution` | – | `64` | grid nodes per axis, 2–256 |
//! | `prox.envelope` | m | `0.1` | contact distance of the `"sdf"` contacts, ≥ 0 |
//! | `prox.fw_max_iterations` | – | `8` | Frank–Wolfe steps, 1–1000 |
//! | `prox.fw_tolerance` | m | `0` | Frank–Wolfe duality-gap tolerance, ≥ 0 |
//! | `prox.sdf_inside_margin` | m | `0` | how far inside its grid a point must be (RAINBOW 0.5, see `cpu_reference::prox::sdf`) |
//! | `prox.pair_distance` | m | `0.001` | proximity distance of the `"pairs"` contacts, > 0 |
//! | `prox.random_seed`, `prox.random_max_rounds` | – | fixed, `200` | random coloring |
//! | `prox.graph_fixed_nodes` | – | `true` | fixed nodes join the contact graph (RAINBOW) |
//! | `prox.sweeps_per_batch` | – | `8` | sweeps per graph run (host reads 9 words per run), 1–1024 |
//!
//! The absolute tolerances are RAINBOW's and not scale-free: with impulses per contact well
//! below `too_small_merit_change` (a 0.2 m cube over 16 contacts at h = 1 ms: ~5e-3 N·s) every
//! accepted sweep grows r, the next is rejected, r shrinks by 0.91 per pair of sweeps and the
//! merit falls under `absolute_tolerance` without convergence; tests of the law use tight
//! tolerances (and `too_small_merit_change = 0`), and the residual is reported per solve.

pub mod generation;
pub mod graph;
pub mod handler;
pub mod model;
pub mod sdf;
pub mod settings;
pub mod solver;

pub use model::{Contact, Exit, Scheme, SolverParams};
pub use settings::{
    ColoringMethod, ContactSource, PenetrationMode, ProxSettings, SettingsError, SweepDispatch,
};
pub use solver::{
    ContactBuffers, ContactLayout, DispatchCounts, ProxError, ProxParams, ProxSolveReport,
    ProxSolver, StepperBuffers,
};
