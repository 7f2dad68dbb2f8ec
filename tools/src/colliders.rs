//! The scene's analytic colliders as the tools see them: signed distances at a time (for
//! `supple check-frames --scene` and the start-up warnings of `supple run`), and their shapes
//! for export (simple meshes in OBJ, USD prims). Read from the scene file's `colliders`, not from
//! the engine, so the tools check the engine rather than share its code.

use supple::mesh::export::{UsdCollider, UsdColliderShape};
use supple::scene::{Collider, ColliderShape};

/// A collider's shape as a word: `plane`, `sphere` or `box`.
pub fn shape_name(c: &Collider) -> &'static str {
    match c.shape {
        ColliderShape::Plane { .. } => "plane",
        ColliderShape::Sphere { .. } => "sphere",
        ColliderShape::Box { .. } => "box",
    }
}

/// The collider's offset (thickness, m): vertices must stay at least this far outside (a
/// plane's `shape.plane.offset` is its position, not this).
pub fn offset(c: &Collider) -> f64 {
    c.offset
}

/// Per collider of `colliders`, the smallest signed distance of any of `positions` to it at
/// time `t` minus its offset and the vertex's clearance (`clearance[v]`, its body's
/// `collider_offset`; missing entries 0) (m; negative: some vertex is closer than it may be;
/// +∞ without positions).
pub fn min_distances(
    colliders: &[Collider],
    positions: &[[f64; 3]],
    clearance: &[f64],
    t: f64,
) -> Vec<f64> {
    colliders
        .iter()
        .map(|c| {
            let o = offset(c);
            positions
                .iter()
                .enumerate()
                .map(|(v, p)| signed_distance(c, *p, t) - o - clearance.get(v).unwrap_or(&0.0))
                .fold(f64::INFINITY, f64::min)
        })
        .collect()
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn unit(v: [f64; 3]) -> [f64; 3] {
    let l = dot(v, v).sqrt();
    if l > 0.0 {
        v.map(|x| x / l)
    } else {
        [0.0, 0.0, 1.0]
    }
}

/// Signed distance (m; negative inside) of point `x` to collider `c` at time `t` (s): the
/// collider has moved by `velocity · t` (a sphere's spin does not change its shape).
pub fn signed_distance(c: &Collider, x: [f64; 3], t: f64) -> f64 {
    let q = [0, 1, 2].map(|k| x[k] - c.velocity[k] * t);
    match c.shape {
        ColliderShape::Plane { normal, offset } => dot(unit(normal), q) - offset,
        ColliderShape::Sphere { center, radius } => {
            let d = [0, 1, 2].map(|k| q[k] - center[k]);
            dot(d, d).sqrt() - radius
        }
        ColliderShape::Box { min, max } => {
            let out = [0, 1, 2].map(|k| q[k] - q[k].clamp(min[k], max[k]));
            let l = dot(out, out).sqrt();
            if l > 0.0 {
                return l;
            }
            // Inside: minus the distance to the nearest face.
            -(0..3)
                .map(|k| (q[k] - min[k]).min(max[k] - q[k]))
                .fold(f64::INFINITY, f64::min)
        }
    }
}

/// Where a plane collider is drawn: a square centred at the projection of `center` (the
/// bodies' initial bounding-box centre) with half side `half_size`.
#[derive(Debug, Clone, Copy)]
pub struct PlaneExtent {
    /// Centre of the bodies' initial bounding box (m).
    pub center: [f64; 3],
    /// Half the drawn square's side (m).
    pub half_size: f64,
}

impl PlaneExtent {
    /// Twice the diagonal of the bounding box of `positions` (at least 1 mm) around its centre.
    pub fn around(positions: &[[f64; 3]]) -> PlaneExtent {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in positions {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        if positions.is_empty() {
            lo = [0.0; 3];
            hi = [0.0; 3];
        }
        let d = [0, 1, 2].map(|k| hi[k] - lo[k]);
        PlaneExtent {
            center: [0, 1, 2].map(|k| 0.5 * (lo[k] + hi[k])),
            half_size: (2.0 * dot(d, d).sqrt()).max(1e-3),
        }
    }
}

/// The point of plane `n·x = offset` closest to `p` (n normalised).
fn project(normal: [f64; 3], offset: f64, p: [f64; 3]) -> [f64; 3] {
    let n = unit(normal);
    let s = dot(n, p) - offset;
    [0, 1, 2].map(|k| p[k] - s * n[k])
}

/// The scene's colliders as USD prims named `<shape>_<index>` (time 0; they move by their
/// velocity).
pub fn usd_colliders(colliders: &[Collider], plane: PlaneExtent) -> Vec<UsdCollider> {
    colliders
        .iter()
        .enumerate()
        .map(|(i, c)| UsdCollider {
            name: format!("{}_{i}", shape_name(c)),
            shape: match c.shape {
                ColliderShape::Plane { normal, offset } => UsdColliderShape::Plane {
                    point: project(normal, offset, plane.center),
                    normal,
                    half_size: plane.half_size,
                },
                ColliderShape::Sphere { center, radius } => {
                    UsdColliderShape::Sphere { center, radius }
                }
                ColliderShape::Box { min, max } => UsdColliderShape::Box { min, max },
            },
            velocity: c.velocity,
        })
        .collect()
}

/// A collider drawn as a triangle mesh at time `t` (for OBJ).
pub struct ColliderMesh {
    /// Object name, `collider_<shape>_<index>`.
    pub name: String,
    /// Vertices (m).
    pub positions: Vec<[f64; 3]>,
    /// Triangles, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

/// Latitude rings and longitude segments of a sphere collider's mesh.
const SPHERE_RINGS: u32 = 12;
const SPHERE_SEGMENTS: u32 = 24;

/// The scene's colliders as simple meshes at time `t` (s): a plane as a square of two
/// triangles, a sphere as a 12 × 24 latitude–longitude mesh (vertices on the sphere, so its
/// flat faces cut slightly inside), a box as 12 triangles.
pub fn collider_meshes(colliders: &[Collider], plane: PlaneExtent, t: f64) -> Vec<ColliderMesh> {
    colliders
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let shift = c.velocity.map(|v| v * t);
            let (mut positions, triangles) = match c.shape {
                ColliderShape::Plane { normal, offset } => plane_mesh(
                    normal,
                    project(normal, offset, plane.center),
                    plane.half_size,
                ),
                ColliderShape::Sphere { center, radius } => sphere_mesh(center, radius),
                ColliderShape::Box { min, max } => box_mesh(min, max),
            };
            for p in &mut positions {
                *p = [0, 1, 2].map(|k| p[k] + shift[k]);
            }
            ColliderMesh {
                name: format!("collider_{}_{i}", shape_name(c)),
                positions,
                triangles,
            }
        })
        .collect()
}

type Mesh = (Vec<[f64; 3]>, Vec<[u32; 3]>);

fn plane_mesh(normal: [f64; 3], point: [f64; 3], h: f64) -> Mesh {
    let n = unit(normal);
    let a = if n[0].abs() < 0.9 {
        [1.0, 0.0, 0.0]
    } else {
        [0.0, 1.0, 0.0]
    };
    let cross = |p: [f64; 3], q: [f64; 3]| {
        [
            p[1] * q[2] - p[2] * q[1],
            p[2] * q[0] - p[0] * q[2],
            p[0] * q[1] - p[1] * q[0],
        ]
    };
    let u = unit(cross(a, n));
    let v = cross(n, u);
    let at = |su: f64, sv: f64| [0, 1, 2].map(|k| point[k] + h * (su * u[k] + sv * v[k]));
    (
        vec![at(-1.0, -1.0), at(1.0, -1.0), at(1.0, 1.0), at(-1.0, 1.0)],
        vec![[0, 1, 2], [0, 2, 3]],
    )
}

fn sphere_mesh(center: [f64; 3], r: f64) -> Mesh {
    let (rings, segs) = (SPHERE_RINGS, SPHERE_SEGMENTS);
    let mut p = vec![[center[0], center[1], center[2] + r]];
    for i in 1..rings {
        let theta = std::f64::consts::PI * i as f64 / rings as f64;
        for j in 0..segs {
            let phi = 2.0 * std::f64::consts::PI * j as f64 / segs as f64;
            p.push([
                center[0] + r * theta.sin() * phi.cos(),
                center[1] + r * theta.sin() * phi.sin(),
                center[2] + r * theta.cos(),
            ]);
        }
    }
    p.push([center[0], center[1], center[2] - r]);
    let south = p.len() as u32 - 1;
    let at = |i: u32, j: u32| 1 + (i - 1) * segs + j % segs;
    let mut t = Vec::new();
    for j in 0..segs {
        t.push([0, at(1, j), at(1, j + 1)]);
        t.push([south, at(rings - 1, j + 1), at(rings - 1, j)]);
    }
    for i in 1..rings - 1 {
        for j in 0..segs {
            t.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            t.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    (p, t)
}

fn box_mesh(lo: [f64; 3], hi: [f64; 3]) -> Mesh {
    let p = (0..8)
        .map(|c| [0, 1, 2].map(|k| if c >> k & 1 == 1 { hi[k] } else { lo[k] }))
        .collect();
    // Corner c has bit k set when at the upper side of axis k.
    let t = vec![
        [0, 2, 3],
        [0, 3, 1], // z = lo
        [4, 5, 7],
        [4, 7, 6], // z = hi
        [0, 1, 5],
        [0, 5, 4], // y = lo
        [2, 6, 7],
        [2, 7, 3], // y = hi
        [0, 4, 6],
        [0, 6, 2], // x = lo
        [1, 3, 7],
        [1, 7, 5], // x = hi
    ];
    (p, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collider(shape: ColliderShape, velocity: [f64; 3]) -> Collider {
        Collider {
            shape,
            friction: 0.0,
            velocity,
            angular_velocity: [0.0; 3],
            offset: 0.0,
        }
    }

    #[test]
    fn signed_distances_of_the_three_shapes() {
        let plane = collider(
            ColliderShape::Plane {
                normal: [0.0, 0.0, 2.0],
                offset: 0.5,
            },
            [0.0, 0.0, 1.0],
        );
        assert_eq!(signed_distance(&plane, [3.0, 4.0, 0.25], 0.0), -0.25);
        // At t = 1 the plane has risen by 1 m.
        assert_eq!(signed_distance(&plane, [3.0, 4.0, 2.0], 1.0), 0.5);
        let sphere = collider(
            ColliderShape::Sphere {
                center: [1.0, 0.0, 0.0],
                radius: 0.5,
            },
            [0.0; 3],
        );
        assert_eq!(signed_distance(&sphere, [1.0, 0.0, 0.25], 0.0), -0.25);
        assert_eq!(signed_distance(&sphere, [1.0, 2.0, 0.0], 0.0), 1.5);
        let b = collider(
            ColliderShape::Box {
                min: [0.0; 3],
                max: [1.0, 2.0, 4.0],
            },
            [1.0, 0.0, 0.0],
        );
        assert_eq!(signed_distance(&b, [0.5, 1.0, 0.125], 0.0), -0.125);
        assert_eq!(signed_distance(&b, [0.5, 1.0, 5.0], 0.0), 1.0);
        assert_eq!(signed_distance(&b, [1.5, 1.0, 5.0], 0.0), 1.25f64.sqrt());
        // Moved by 1 m along x at t = 1: (1.5, 1, 2) is 0.5 m inside.
        assert_eq!(signed_distance(&b, [1.5, 1.0, 2.0], 1.0), -0.5);
        assert_eq!(offset(&b), 0.0);
    }

    #[test]
    fn collider_meshes_are_closed_and_outward() {
        let cs = [
            collider(
                ColliderShape::Sphere {
                    center: [1.0, 2.0, 3.0],
                    radius: 0.5,
                },
                [0.0; 3],
            ),
            collider(
                ColliderShape::Box {
                    min: [0.0; 3],
                    max: [1.0, 2.0, 3.0],
                },
                [0.0; 3],
            ),
        ];
        let extent = PlaneExtent::around(&[[0.0; 3]]);
        for m in collider_meshes(&cs, extent, 0.0) {
            // Closed: every edge used twice, once in each direction; outward: positive volume.
            let mut edges = std::collections::HashMap::new();
            let mut volume = 0.0;
            for t in &m.triangles {
                for k in 0..3 {
                    *edges.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
                }
                let [a, b, c] = t.map(|v| m.positions[v as usize]);
                volume += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0])
                    + a[2] * (b[0] * c[1] - b[1] * c[0]))
                    / 6.0;
            }
            assert!(
                edges
                    .iter()
                    .all(|(&(a, b), &n)| n == 1 && edges.get(&(b, a)) == Some(&1)),
                "{}",
                m.name
            );
            assert!(volume > 0.0, "{}: volume {volume}", m.name);
        }
    }
}
