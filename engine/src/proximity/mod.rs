//! Proximity search of surface primitives (vertex–triangle and edge–edge pairs closer than a
//! distance D) by GPU spatial hashing ([`spatial_hash`]), and the paper's reuse bound that
//! decides when a search can be skipped ([`reuse`]). Two-way IPC paper §3.1; RAINBOW report
//! §3.1.4. Reference: [`crate::cpu_reference::proximity`].

pub mod host;
pub mod reuse;
pub mod spatial_hash;

pub use reuse::{MaxDisplacement, ReuseTracker};
pub use spatial_hash::{
    default_cell_size, BodyFilter, HashParams, Pair, ProximityMesh, ProximityOptions,
    ProximityPairs, ProximitySearch, SearchReport,
};
