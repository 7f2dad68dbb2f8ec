//! Finite elements on the GPU: per-tet elastic energies and gradients
//! (`kernels/fem/tet_gradient.comp`) and their deterministic per-vertex gather
//! (`kernels/fem/gather_vertex.comp`); the tets' analytic Hessian eigensystems
//! (`kernels/fem/tet_eigensystem.comp`) and the in-time assembly of every element's projected
//! Hessian into the Newton matrix's blocks (`kernels/fem/assemble_hessian.comp`), with no buffer
//! of element Hessians. Reference: [`crate::cpu_reference::fem`], [`crate::cpu_reference::thin`].

pub mod elements;
pub mod rest;
pub mod thin;

pub use elements::{ElementModel, TetElements};
