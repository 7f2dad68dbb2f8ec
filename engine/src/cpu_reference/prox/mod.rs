//! Plain-Rust (f64) reference of RAINBOW's PROX contact handling (Dong She, *Soft Body
//! Simulation*, report §2.3–§3.2; spec `../shared/notes/prox-spec.md` Part B), and the twin of
//! the GPU kernels in `kernels/prox/` ([`crate::contact::prox`]):
//! - [`contact`]: the contact model (8 node slots with signed barycentric weights, frame
//!   [n; s; t], lumped inverse masses, `b = J u′ (+ restitution)`, Delassus diagonal, r-factors);
//! - [`operators`]: the proximal operators (R+, Coulomb disk, origin, ellipse);
//! - [`mod@solve`]: the four schemes and RAINBOW's r-factor strategy with rollback and growth;
//! - [`ncp`]: NCP residuals of a solution;
//! - [`graph`]: the contact graph and its greedy, random (Vivace) and Jones–Plassmann colorings;
//! - [`sdf`] and [`generation`]: RAINBOW's contact generation (rest-space signed distance grids,
//!   Frank–Wolfe deepest points, tet-embedded contacts, reduction) and Supple's proximity pairs
//!   turned into contacts;
//! - [`stepper`]: a tiny semi-implicit (symplectic) Euler stepper with PROX contact, RAINBOW's
//!   `SemiImplicitStepper.step`, for the law checks.
//!
//! # What building it found (beyond the spec's table B5)
//!
//! - The report's SDF definition (§2.3.1) is positive inside, its text and RAINBOW's grids
//!   (igl's `signed_distance`) negative inside; we use negative inside.
//! - `grid3.get_gradient` divides the cell coordinates by `min_coord` instead of the spacing;
//!   `grid3.is_inside`'s default 0.5 m margin rejects every point of bodies thinner than about
//!   1 m (the spec's 0.5 m cube, the 5 cm sheet); the Frank–Wolfe stop test `min s·∇φ > 0`
//!   depends on the material frame's origin; normals are mapped with F instead of F⁻ᵀ. Ours:
//!   [`crate::contact::prox::sdf`], [`crate::contact::prox::generation`].
//! - RAINBOW's r-factor strategy is not scale-free: `too_small_merit_change` (0.01 N·s) and
//!   `absolute_tolerance` (1e-3 N·s) are absolute. When the impulses per contact are below
//!   0.01 N·s (PROX-S2: ~5e-3), every accepted sweep grows r by 1.3, the next is rejected and
//!   r shrinks by 0.7, so r falls by 0.91 every two sweeps and the merit drops under the
//!   absolute tolerance after a number of sweeps set by that decay, whatever the scheme (and
//!   far from the fixed point). Without growth, each merit increase (frequent with friction,
//!   even when converging) shrinks r for good and the iteration stalls (S2: r down to 1e-7,
//!   natural-map residual 10 % of the impulses). The relative test also fires on two equal
//!   merits, e.g. when the contact with the largest first impulse drops to 0 in sweep 2
//!   (Jacobi on S2 stops after 2 sweeps).
//! - With `b = J u′` (no gap term) a contact detected inside the envelope at a distance acts
//!   as if touching: distance pairs (vertex–triangle near a triangle edge, parallel edges) and
//!   the cube's own grid seen from the slab's triangles give contacts with tilted normals that
//!   stop a slow slide on a tessellated slab (PROX-S5, θ = 15°, μ = 0.2: 0.05 m/s² with both
//!   grids, 0.002 with pairs, instead of 0.64). The slab's grid against the cube's triangles alone (one-sided) gives the
//!   Coulomb law within 0.1 % ([`stepper`] tests).
//! - Jacobi projects the friction onto the cone of the previous normal impulse, so its
//!   returned iterate is inside the cone only up to its last merit.

pub mod contact;
pub mod graph;
pub mod ncp;
pub mod operators;
pub mod pairs;
pub mod solve;
pub mod stepper;

pub use contact::{gather, initial_r, kinetic_energy, tangents, Contact, ProxProblem, NO_NODE};
pub use graph::{
    greedy_largest_first, jones_plassmann, random_vivace, ColorGroups, ContactColoring,
    ContactGraph,
};
pub use ncp::{ncp_residuals, NcpResiduals};
pub use solve::{decide, solve, ColorUpdate, Decision, Exit, Scheme, SolveReport, SolverParams};

#[cfg(test)]
mod tests;
