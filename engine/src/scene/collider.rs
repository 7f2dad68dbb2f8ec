//! `[[collider]]`: analytic colliders (plane, sphere, box), static or moving.

use serde::{Deserialize, Serialize};

/// An analytic collider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Collider {
    /// Geometry.
    pub shape: ColliderShape,
    /// Coulomb friction coefficient.
    #[serde(default)]
    pub friction: f64,
    /// Constant velocity of a scripted collider (m/s).
    #[serde(default, deserialize_with = "super::exact::array")]
    pub velocity: [f64; 3],
    /// Spin of a sphere collider about its centre (rad/s, axis × rate): its surface drags what
    /// rests on it through friction. Spheres only.
    #[serde(default, deserialize_with = "super::exact::array")]
    pub angular_velocity: [f64; 3],
    /// Offset (thickness, m): vertices are kept at least this far outside the shape.
    #[serde(default)]
    pub offset: f64,
}

/// Collider geometry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub enum ColliderShape {
    /// Half-space `n·x ≥ offset`.
    Plane {
        /// Outward normal (normalised on use).
        #[serde(deserialize_with = "super::exact::array")]
        normal: [f64; 3],
        /// Signed distance of the plane from the origin along the normal (m).
        offset: f64,
    },
    /// Solid sphere.
    Sphere {
        /// Centre (m).
        #[serde(deserialize_with = "super::exact::array")]
        center: [f64; 3],
        /// Radius (m).
        radius: f64,
    },
    /// Solid axis-aligned box.
    Box {
        /// Lower corner (m).
        #[serde(deserialize_with = "super::exact::array")]
        min: [f64; 3],
        /// Upper corner (m).
        #[serde(deserialize_with = "super::exact::array")]
        max: [f64; 3],
    },
}
