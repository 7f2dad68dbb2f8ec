//! Finite elements on the GPU: per-tet elastic energies and gradients
//! (`kernels/fem/tet_gradient.comp`) and their deterministic per-vertex gather
//! (`kernels/fem/gather_vertex.comp`). Reference: [`crate::cpu_reference::fem`].

pub mod elements;
pub mod rest;
pub mod thin;

pub use elements::{ElementModel, TetElements};
