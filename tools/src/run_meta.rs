//! The `bodies` and `colliders` keys of `report.json`: which exported vertices, triangles and
//! polylines belong to which body, and the scene's analytic colliders at t = 0. `supple view`
//! and the PNG preview read them to colour bodies apart and draw the colliders; older reports
//! without them still load (one colour, no colliders).

use serde::{Deserialize, Serialize};
use supple::scene::{ColliderShape, Scene};
use supple::simulation::Simulation;

/// One body of the run, in scene order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BodyMeta {
    /// The body's name from the scene.
    pub name: String,
    /// Its material model as written in scenes (`stable-neo-hookean`, `cloth`, `rod`, ...).
    pub model: String,
    /// `[first, count]`: its vertices among the exported frame vertices
    /// ([`Simulation::surface_vertices`] order).
    pub surface_vertices: [usize; 2],
    /// `[first, count]`: its triangles in [`Simulation::surface`].
    pub triangles: [usize; 2],
    /// `[first, count]`: its polylines in [`Simulation::curves`] (one for a rod, else none).
    #[serde(default)]
    pub curves: [usize; 2],
}

/// Geometry of an analytic collider at t = 0 (m).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShapeMeta {
    /// Half-space `normal · x ≥ offset` (`normal` as given in the scene).
    Plane {
        /// Outward normal.
        normal: [f64; 3],
        /// Signed distance of the plane from the origin along the unit normal (m).
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

/// One analytic collider of the scene; at time t its pose is the t = 0 pose moved by
/// `velocity · t` (spheres also spin at `angular_velocity` about their centre).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColliderMeta {
    /// Geometry at t = 0.
    pub shape: ShapeMeta,
    /// Coulomb friction coefficient.
    #[serde(default)]
    pub friction: f64,
    /// Translation velocity (m/s).
    #[serde(default)]
    pub velocity: [f64; 3],
    /// Spin about the centre (rad/s, axis × rate).
    #[serde(default)]
    pub angular_velocity: [f64; 3],
}

/// The two keys as they appear in `report.json` (flattened into the report object).
#[derive(Debug, Clone, Serialize)]
pub struct RunMeta {
    /// Per body, in scene order.
    pub bodies: Vec<BodyMeta>,
    /// Per scene collider.
    pub colliders: Vec<ColliderMeta>,
}

impl RunMeta {
    /// The bodies of `sim` and the colliders of `scene`.
    pub fn new(sim: &Simulation, scene: &Scene) -> Self {
        RunMeta {
            bodies: bodies(sim),
            colliders: colliders(scene),
        }
    }
}

/// The `[first, count]` range of the ascending `sorted` values inside `lo..hi`.
fn sub_range(sorted: &[u32], lo: u32, hi: u32) -> [usize; 2] {
    let first = sorted.partition_point(|&v| v < lo);
    let end = sorted.partition_point(|&v| v < hi);
    [first, end - first]
}

/// Per body (scene order): its name, model and ranges among the exported vertices, surface
/// triangles and polylines of `sim`.
pub fn bodies(sim: &Simulation) -> Vec<BodyMeta> {
    let mut triangles = 0;
    let mut curves = 0;
    sim.model()
        .bodies
        .iter()
        .map(|b| {
            let model = serde_json::to_value(b.model)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_else(|| format!("{:?}", b.model));
            // A rod with two or more vertices is one polyline (Simulation::curves).
            let rod = b.model == supple::scene::MaterialModel::Rod && b.vertices.len() >= 2;
            let meta = BodyMeta {
                name: b.name.clone(),
                model,
                surface_vertices: sub_range(
                    sim.surface_vertices(),
                    b.vertices.start,
                    b.vertices.end,
                ),
                triangles: [triangles, b.surface.len()],
                curves: [curves, usize::from(rod)],
            };
            triangles += b.surface.len();
            curves += usize::from(rod);
            meta
        })
        .collect()
}

/// The scene's colliders, as given (t = 0).
pub fn colliders(scene: &Scene) -> Vec<ColliderMeta> {
    scene
        .colliders
        .iter()
        .map(|c| ColliderMeta {
            shape: match c.shape {
                ColliderShape::Plane { normal, offset } => ShapeMeta::Plane { normal, offset },
                ColliderShape::Sphere { center, radius } => ShapeMeta::Sphere { center, radius },
                ColliderShape::Box { min, max } => ShapeMeta::Box { min, max },
            },
            friction: c.friction,
            velocity: c.velocity,
            angular_velocity: c.angular_velocity,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_range_of_sorted_values() {
        let v = [0, 1, 5, 6, 7, 12];
        assert_eq!(sub_range(&v, 0, 2), [0, 2]);
        assert_eq!(sub_range(&v, 2, 8), [2, 3]);
        assert_eq!(sub_range(&v, 8, 12), [5, 0]);
        assert_eq!(sub_range(&v, 12, 20), [5, 1]);
    }

    #[test]
    fn collider_json_matches_the_report_contract() {
        let c = ColliderMeta {
            shape: ShapeMeta::Sphere {
                center: [0.0, 1.0, 2.0],
                radius: 0.5,
            },
            friction: 0.4,
            velocity: [0.0; 3],
            angular_velocity: [0.0, 0.0, 1.0],
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["shape"]["sphere"]["radius"], 0.5);
        assert_eq!(v["friction"], 0.4);
        let back: ColliderMeta = serde_json::from_value(v).unwrap();
        assert_eq!(back, c);
    }
}
