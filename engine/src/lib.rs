//! Supple: penetration-free deformable-body simulation on Vulkan compute.
//!
//! The crate is layered (docs/architecture.md has the tree): [`simulation`] is the entry
//! point ([`Simulation`]): it builds the [`model`] from a [`scene`] (data only), the one
//! [`state`] of GPU buffers, a time integrator from [`stepper`] (Newton–PCG, XPBD, symplectic
//! Euler) and a contact method from [`contact`] (two-way IPM, shortest path to boundary), which
//! meet through the words of [`phase`]. Below them: [`linear`] (PCG), [`fem`] (elements),
//! [`proximity`], [`bvh`], [`coloring`] and [`geometry`] (the collision kernels),
//! [`primitives`] (scan, compaction, radix sort, reductions) and [`vk`] (the device, persistent
//! buffers and command graphs). Every kernel has a plain-Rust twin in [`cpu_reference`], which
//! no other module names; [`mesh`] re-exports the host-side mesh tools.

#![deny(missing_docs)]

pub mod bvh;
pub mod coloring;
pub mod contact;
pub mod cpu_reference;
pub mod error;
pub mod fem;
pub mod geometry;
pub mod intersection_check;
pub mod linear;
pub mod math;
pub mod model;
pub mod phase;
pub mod primitives;
pub mod proximity;
pub mod scene;
pub mod simulation;
pub mod state;
pub mod stepper;
pub mod vk;

pub use error::SimError;
pub use scene::Scene;
pub use simulation::{Simulation, SimulationBuilder};
pub use supple_mesh as mesh;
pub use vk::{Context, ContextOptions, VkError, VkResult};

/// The Rust code blocks of the user guide, compiled and run as doc tests (`cargo test -p
/// supple --doc`): every ```` ```rust ```` block of docs/guide.md is a complete program.
#[cfg(doctest)]
#[doc = include_str!("../../docs/guide.md")]
pub struct GuideCode;

/// The Rust code blocks of the README, compiled and run as doc tests (it has none today; a
/// block added there is tested like the guide's).
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeCode;
