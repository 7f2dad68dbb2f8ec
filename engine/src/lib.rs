//! Supple: penetration-free deformable-body simulation on Vulkan compute.
//!
//! The crate is layered: [`vk`] owns the device, persistent buffers and command graphs;
//! [`primitives`] builds GPU scan, compaction, radix sort and reductions on it; [`geometry`],
//! [`bvh`] and [`coloring`] are the collision kernels; [`fem`], [`solver`] and [`integrate`]
//! the dynamics building blocks; [`scene`] and [`model`] turn scene files into simulation
//! arrays. Every kernel has a plain-Rust twin in [`cpu_reference`]; [`mesh`] re-exports the
//! host-side mesh tools.

#![deny(missing_docs)]

pub mod bvh;
pub mod collision;
pub mod coloring;
pub mod cpu_reference;
pub mod fem;
pub mod geometry;
pub mod integrate;
pub mod intersection_check;
pub mod math;
pub mod model;
pub mod newton;
pub mod primitives;
pub mod prox;
pub mod proximity;
pub mod recovery;
pub mod scene;
pub mod simulation;
pub mod solver;
pub mod vk;
pub mod xpbd;

pub use supple_mesh as mesh;
pub use vk::{Context, ContextOptions, VkError, VkResult};
