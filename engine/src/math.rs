//! Host math aliases (nalgebra), used throughout the engine so types read the same everywhere.

/// 3-vector of f64 (host-side geometry, metres).
pub type Vec3 = nalgebra::Vector3<f64>;
/// 3-vector of f32 (mirrors GPU storage).
pub type Vec3f = nalgebra::Vector3<f32>;
/// 3×3 matrix of f64.
pub type Mat3 = nalgebra::Matrix3<f64>;
/// 3×3 matrix of f32.
pub type Mat3f = nalgebra::Matrix3<f32>;
/// Point in 3-D space, f64.
pub type Point3 = nalgebra::Point3<f64>;
