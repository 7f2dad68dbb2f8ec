//! Plain-Rust (f64) reference of RAINBOW's PROX contact handling (Dong She, *Soft Body
//! Simulation*, report §2.3–§3.2; spec `../shared/notes/prox-spec.md` Part B), and the twin of
//! the GPU kernels in `kernels/prox/` ([`crate::prox`]):
//! - [`contact`]: the contact model (8 node slots with signed barycentric weights, frame
//!   [n; s; t], lumped inverse masses, `b = J u′ (+ restitution)`, Delassus diagonal, r-factors);
//! - [`operators`]: the proximal operators (R+, Coulomb disk, origin, ellipse);
//! - [`solve`]: the four schemes and RAINBOW's r-factor strategy with rollback and growth;
//! - [`ncp`]: NCP residuals of a solution;
//! - [`graph`]: the contact graph and its greedy, random (Vivace) and Jones–Plassmann colorings;
//! - [`sdf`] and [`generation`]: RAINBOW's contact generation (rest-space signed distance grids,
//!   Frank–Wolfe deepest points, tet-embedded contacts, reduction) and Supple's proximity pairs
//!   turned into contacts;
//! - [`stepper`]: a tiny semi-implicit (symplectic) Euler stepper with PROX contact, RAINBOW's
//!   `SemiImplicitStepper.step`, for the law checks.

pub mod contact;
pub mod generation;
pub mod graph;
pub mod ncp;
pub mod operators;
pub mod sdf;
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
