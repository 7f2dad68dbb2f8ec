//! Supple: penetration-free deformable-body simulation on Vulkan compute.
//!
//! The crate is layered: [`vk`] owns the device, persistent buffers and command graphs;
//! [`primitives`] builds GPU scan, compaction, radix sort and reductions on it, each with a
//! plain-Rust reference in [`cpu_reference`]; [`mesh`] re-exports the host-side mesh tools.

pub mod bvh;
pub mod coloring;
pub mod cpu_reference;
pub mod fem;
pub mod geometry;
pub mod integrate;
pub mod math;
pub mod primitives;
pub mod scene;
pub mod solver;
pub mod vk;

pub use supple_mesh as mesh;
pub use vk::{Context, ContextOptions, VkError, VkResult};
