//! Plain-Rust (f64) reference of the barrier-augmented Lagrangian (BAL) contact method (Guo,
//! Li, Yang, Li and Wang, "Barrier-Augmented Lagrangian for GPU-based Elastodynamic Contact";
//! spec `../shared/notes/bal-spec.md`), the twin the GPU kernels (`engine/src/contact/bal/`,
//! `kernels/bal/`) are checked against:
//!
//! - [`barrier`]: IPC's C2 clamped log barrier on unsquared distances and the edge–edge
//!   mollifier, with derivatives;
//! - [`distance`]: distance types and exact distances of vertex–triangle and edge–edge
//!   stencils (degenerating to vertex–edge and vertex–vertex) with gradients and Hessians;
//! - [`pair`]: per-pair barrier + augmented-Lagrangian energy, gradient and PSD Hessian;
//! - [`friction`]: the fully implicit (re-lagged) IPC friction of §A5;
//! - [`problem`] and [`solver`]: a small complete CPU solver of Algorithm 1 for tiny problems;
//! - [`kernels`]: the plain-Rust twins of the GPU kernels, in the GPU data layout.
//!
//! How the spec's ambiguities (§A7) are settled, and where:
//! 1–3. σ⁰ with the squared norm, clamped to IPC Toolkit's corridor in distance units and
//!      IPC's h²-scaled energy converted ([`crate::contact::bal::rules::sigma_bounds`],
//!      [`crate::contact::bal::rules::initial_sigma`]; host rules shared with the GPU wiring).
//! 4.   Both σ readings ([`crate::contact::bal::rules::SigmaRule`], [`crate::contact::bal::rules::grown_sigma`]).
//! 5.   `d^[l+1]` = min d at the current iterate, `d^[l]` one iteration earlier
//!      ([`crate::contact::bal::rules::augmentation_rule`]).
//! 6.   Slacks frozen during a Newton iteration, updated with μ after it ([`pair`], solver).
//! 7.   μ keyed by pair identity ([`problem::PairKey`]), kept while in A′, 0 on entry, and
//!      A′ ⊂ A at every iteration (solver's `update_augmentation_set`).
//! 8.   Friction normal force = every normal contact term of the pair ([`friction`]).
//! 9.   IPC Toolkit's C1 mollifier f₀ with ε = ε_v h ([`friction::f0`]).
//! 10.  Warm-start stiffness: each stencil's mean clamped eigenvalue on its 3k DOFs, for
//!      elastic-free contact stencils here ([`pair::PairEval::corner_stiffness`]).
//! 12.  CCD bound (keeping ξ = 0.1 of each pair's distance), plain decrease, halving, 30
//!      halvings, then the α < 1e-9 CG resumption ([`solver`]).
//! 13.  500 Newton iterations at most, steps at the cap counted ([`solver::StepReport`]).
//! 11.  Warm-start budget: not part of these kernels (Supple's `WarmStart` knobs stay).
//! 14.  Unsquared distances throughout.
//! 15–17. Not needed here (paper inconsistencies; the CCD is Supple's conservative CCD, not the
//!      paper's deflated cubic solver).

pub mod barrier;
pub mod distance;
pub mod friction;
pub mod kernels;
pub mod pair;
pub mod problem;
pub mod solver;

#[cfg(test)]
mod tests;
