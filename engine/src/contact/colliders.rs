//! Analytic colliders (plane, sphere, box), static or moving at constant velocity: their
//! geometry, signed gaps, their packing for the kernels (`kernels/include/colliders.glsl`) and
//! their conversion from the scene. Every stepper reads them from the state's collider buffer
//! ([`crate::state::GpuState::colliders`]); the contact response itself is each stepper's, and
//! with every one no vertex ends a step closer to a collider than its offset (thickness, m):
//! Newton: IPC's log barrier above the offset surface with a line search that rejects any move
//! into it, lagged friction (reference [`crate::cpu_reference::contact`]); XPBD: projection to
//! the offset surface after every iteration and last in every substep, position-based friction;
//! symplectic Euler: a static ground plane, projection with the inward normal velocity zeroed.

use crate::scene::{ColliderShape, Scene};
use nalgebra::Vector3;

/// Smallest distance (m) above a collider's offset surface that a projection or an accepted
/// Newton iterate leaves (`COLLIDER_GUARD` of `kernels/include/colliders.glsl`): the f32
/// rounding of a gap stays well below it, so exported positions are never closer than the
/// offset.
pub const COLLIDER_GUARD: f64 = 2e-6;

/// Collider geometry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Half-space `n·x ≥ offset` (unit `n`).
    Plane {
        /// Unit outward normal.
        normal: [f64; 3],
        /// Offset along the normal (m).
        offset: f64,
    },
    /// Solid sphere.
    Sphere {
        /// Centre (m).
        center: [f64; 3],
        /// Radius (m).
        radius: f64,
    },
    /// Solid axis-aligned box.
    Box {
        /// Lower corner (m).
        min: [f64; 3],
        /// Upper corner (m).
        max: [f64; 3],
    },
}

/// An analytic collider moving at constant velocity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Collider {
    /// Geometry at time 0.
    pub shape: Shape,
    /// Coulomb friction coefficient.
    pub friction: f64,
    /// Velocity (m/s).
    pub velocity: [f64; 3],
    /// Spin of a sphere about its centre (rad/s; zero for other shapes): its surface drags
    /// resting vertices through friction (the two-way IPM paper's rotating sphere, Fig. 18).
    pub angular_velocity: [f64; 3],
    /// Offset (thickness, m): vertices are kept at least this far outside the shape (a signed
    /// gap below it is contact).
    pub offset: f64,
}

impl Collider {
    /// Velocity (m/s) of the collider's material at point `x` (time `t`): the translation plus,
    /// for a spinning sphere, ω × (x − centre).
    pub fn surface_velocity(&self, x: &Vector3<f64>, t: f64) -> Vector3<f64> {
        let v = Vector3::from(self.velocity);
        match self.shape {
            Shape::Sphere { center, .. } => {
                let c = Vector3::from(center) + v * t;
                v + Vector3::from(self.angular_velocity).cross(&(x - c))
            }
            _ => v,
        }
    }

    /// Signed gap (m, negative inside) and outward unit normal of point `x` at time `t` (s).
    pub fn gap(&self, x: &Vector3<f64>, t: f64) -> (f64, Vector3<f64>) {
        let shift = Vector3::from(self.velocity) * t;
        match self.shape {
            Shape::Plane { normal, offset } => {
                let n = Vector3::from(normal);
                (n.dot(x) - offset - n.dot(&shift), n)
            }
            Shape::Sphere { center, radius } => {
                let d = x - (Vector3::from(center) + shift);
                let l = d.norm();
                let n = if l > 0.0 { d / l } else { Vector3::z() };
                (l - radius, n)
            }
            Shape::Box { min, max } => {
                let lo = Vector3::from(min) + shift;
                let hi = Vector3::from(max) + shift;
                let q = Vector3::from_fn(|k, _| x[k].clamp(lo[k], hi[k]));
                let out = x - q;
                let l = out.norm();
                if l > 0.0 {
                    return (l, out / l);
                }
                // Inside: the nearest face (lowest axis index and the lower face on ties).
                let mut best = (f64::INFINITY, Vector3::zeros());
                for k in 0..3 {
                    let (dl, dh) = (x[k] - lo[k], hi[k] - x[k]);
                    if dl < best.0 {
                        best = (dl, -Vector3::ith(k, 1.0));
                    }
                    if dh < best.0 {
                        best = (dh, Vector3::ith(k, 1.0));
                    }
                }
                (-best.0, best.1)
            }
        }
    }
}

/// Colliders as the kernels' vec4 quadruples (`kernels/include/colliders.glsl`): four vec4 per
/// collider (kind, friction, scalar; point a; point b or spin; velocity), at least one collider's
/// worth (zeros) so that the buffer is never empty. The collider's offset (thickness) is the
/// first vec4's w.
pub fn pack_colliders(colliders: &[Collider]) -> Vec<[f32; 4]> {
    let f = |a: [f64; 3], w: f64| [a[0] as f32, a[1] as f32, a[2] as f32, w as f32];
    let mut out = Vec::with_capacity(4 * colliders.len().max(1));
    for c in colliders {
        let (kind, scalar, a, b) = match c.shape {
            Shape::Plane { normal, offset } => (0.0, offset, normal, [0.0; 3]),
            Shape::Sphere { center, radius } => (1.0, radius, center, c.angular_velocity),
            Shape::Box { min, max } => (2.0, 0.0, min, max),
        };
        out.extend([
            [kind, c.friction as f32, scalar as f32, c.offset as f32],
            f(a, 0.0),
            f(b, 0.0),
            f(c.velocity, 0.0),
        ]);
    }
    if out.is_empty() {
        out.resize(4, [0.0; 4]);
    }
    out
}

/// The scene's colliders (plane normals normalised).
pub fn from_scene(scene: &Scene) -> Vec<Collider> {
    scene
        .colliders
        .iter()
        .map(|c| Collider {
            shape: match c.shape {
                ColliderShape::Plane { normal, offset } => {
                    let l = (normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2])
                        .sqrt();
                    Shape::Plane {
                        normal: normal.map(|x| x / l),
                        offset,
                    }
                }
                ColliderShape::Sphere { center, radius } => Shape::Sphere { center, radius },
                ColliderShape::Box { min, max } => Shape::Box { min, max },
            },
            friction: c.friction,
            velocity: c.velocity,
            angular_velocity: c.angular_velocity,
            offset: c.offset,
        })
        .collect()
}

/// The first plane collider as `(unit normal, offset)`, if any; the offset includes the
/// collider's thickness and [`COLLIDER_GUARD`] (vertices are projected to `n·x ≥ offset`).
pub fn ground_plane(colliders: &[Collider]) -> Option<([f64; 3], f64)> {
    colliders.iter().find_map(|c| match c.shape {
        Shape::Plane { normal, offset } => Some((normal, offset + c.offset + COLLIDER_GUARD)),
        _ => None,
    })
}
