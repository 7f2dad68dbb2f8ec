//! Host-side meshes for Supple: the mesh model, import/export of the common tetrahedral and
//! surface formats with validation, procedural geometry, and tetrahedralization.

#![deny(missing_docs)]

pub mod cloth_shapes;
pub mod error;
pub mod export;
pub mod import;
pub mod info;
pub mod model;
pub mod procedural;
pub mod tetrahedralize;
pub mod topology;

pub use error::{Location, MeshError, Position};
pub use import::{check_arrays, load, load_usd_prim, Loaded};
pub use info::MeshInfo;
pub use model::{Polyline, TetMesh, TriMesh};
