//! The intersection-free start that some contact methods need (two-way; the barrier method):
//! [`check_start`] refuses a state in which two surface triangles (or rod segments) intersect,
//! within a body or between bodies, or a vertex lies inside an analytic collider, naming the
//! bodies and one intersecting pair. Exact ([`crate::intersection_check::frame_intersections`]).
//! Methods call it from their build (the initial state) and the simulation calls it for bodies
//! added between frames ([`ContactMethod::needs_intersection_free_start`]).
//!
//! [`ContactMethod::needs_intersection_free_start`]: super::ContactMethod::needs_intersection_free_start

use super::colliders::Collider;
use crate::error::SimError;
use crate::intersection_check::{frame_intersections, FramePairKind, Surface};
use crate::model::SimModel;
use nalgebra::Vector3;

/// What a refused start holds: the first intersecting pair found.
#[derive(Debug, Clone, PartialEq)]
pub enum StartIntersection {
    /// Two surface primitives (triangles, or rod segments) intersect.
    Surfaces {
        /// The first primitive's body.
        body_a: String,
        /// The first primitive, e.g. `triangle 12 (vertices 3, 8, 9)`, body-local indices.
        primitive_a: String,
        /// The second primitive's body (the same for a self-intersection).
        body_b: String,
        /// The second primitive.
        primitive_b: String,
    },
    /// A vertex lies inside a collider.
    InsideCollider {
        /// The vertex's body.
        body: String,
        /// The vertex (body-local index).
        vertex: u32,
        /// The collider (index into the scene's `collider` list).
        collider: usize,
        /// Its depth inside the collider (m, > 0).
        depth: f64,
    },
}

impl std::fmt::Display for StartIntersection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartIntersection::Surfaces {
                body_a,
                primitive_a,
                body_b,
                primitive_b,
            } if body_a == body_b => write!(
                f,
                "body '{body_a}' intersects itself: its {primitive_a} and {primitive_b} intersect"
            ),
            StartIntersection::Surfaces {
                body_a,
                primitive_a,
                body_b,
                primitive_b,
            } => write!(
                f,
                "bodies '{body_a}' and '{body_b}' intersect: {primitive_a} of '{body_a}' and \
                 {primitive_b} of '{body_b}' intersect"
            ),
            StartIntersection::InsideCollider {
                body,
                vertex,
                collider,
                depth,
            } => write!(
                f,
                "vertex {vertex} of body '{body}' is {depth:.3e} m inside collider[{collider}]"
            ),
        }
    }
}

/// The first intersection of the state `x` (model vertex order, m) at time `time` (s, for the
/// colliders' motion), if any: vertices inside colliders first, then intersecting surfaces.
pub fn find_start_intersection(
    model: &SimModel,
    x: &[[f64; 3]],
    colliders: &[Collider],
    time: f64,
) -> Result<Option<StartIntersection>, String> {
    if x.len() != model.positions.len() {
        return Err(format!(
            "{} positions for a model of {} vertices",
            x.len(),
            model.positions.len()
        ));
    }
    let body_of = |v: u32| {
        model
            .bodies
            .iter()
            .find(|b| b.vertices.contains(&v))
            .map(|b| (b.name.clone(), v - b.vertices.start))
            .unwrap_or_else(|| ("?".into(), v))
    };
    for (ci, c) in colliders.iter().enumerate() {
        for (v, p) in x.iter().enumerate() {
            let (gap, _) = c.gap(&Vector3::from(*p), time);
            if gap < 0.0 {
                let (body, vertex) = body_of(v as u32);
                return Ok(Some(StartIntersection::InsideCollider {
                    body,
                    vertex,
                    collider: ci,
                    depth: -gap,
                }));
            }
        }
    }
    // Every body's surface, remembering each triangle's body-local index.
    let mut tris = Vec::new();
    let mut tri_local = Vec::new();
    for b in &model.bodies {
        for (k, t) in b.surface.iter().enumerate() {
            tris.push(*t);
            tri_local.push(k);
        }
    }
    let curves = model.curve_segments();
    let surface = Surface::with_curves(x.len(), &tris, &curves)?;
    if x.iter().any(|p| p.iter().any(|c| !c.is_finite())) {
        return Err("the positions are not finite".into());
    }
    let Some(hit) = frame_intersections(&surface, x).into_iter().next() else {
        return Ok(None);
    };
    let local = |v: u32| body_of(v).1;
    let triangle = |i: u32| {
        let t = tris[i as usize];
        let (body, _) = body_of(t[0]);
        let name = format!(
            "triangle {} (vertices {}, {}, {})",
            tri_local[i as usize],
            local(t[0]),
            local(t[1]),
            local(t[2])
        );
        (body, name)
    };
    let segment = |i: u32| {
        let s = curves[i as usize];
        let (body, _) = body_of(s[0]);
        let name = format!(
            "segment {} (vertices {}, {})",
            local(s[0]),
            local(s[0]),
            local(s[1])
        );
        (body, name)
    };
    let ((body_a, primitive_a), (body_b, primitive_b)) = match hit.kind {
        FramePairKind::TriangleTriangle => (triangle(hit.first), triangle(hit.second)),
        FramePairKind::SegmentTriangle => (segment(hit.first), triangle(hit.second)),
        FramePairKind::SegmentSegment => (segment(hit.first), segment(hit.second)),
    };
    Ok(Some(StartIntersection::Surfaces {
        body_a,
        primitive_a,
        body_b,
        primitive_b,
    }))
}

/// Refuses (exit code 2 in the CLI: a scene problem) a start that is not intersection-free for
/// contact method `method` (its scene name), suggesting `collision.method = "shortest-path"`.
/// `when` says which state it is (`at the start`, `after adding body 'x'`).
pub fn check_start(
    model: &SimModel,
    x: &[[f64; 3]],
    colliders: &[Collider],
    time: f64,
    method: &str,
    when: &str,
) -> Result<(), SimError> {
    refuse_intersecting_start(
        model,
        x,
        colliders,
        time,
        "collision.method",
        &format!(
            "{when}; {method} collision handling needs an intersection-free start (separate \
             the bodies, or use collision.method = \"shortest-path\", which recovers from \
             intersections)"
        ),
    )
}

/// Refuses a start that is not intersection-free with an error on scene field `field`:
/// the intersecting pair (or vertex inside a collider) followed by `advice`.
pub fn refuse_intersecting_start(
    model: &SimModel,
    x: &[[f64; 3]],
    colliders: &[Collider],
    time: f64,
    field: &str,
    advice: &str,
) -> Result<(), SimError> {
    match find_start_intersection(model, x, colliders, time)
        .map_err(|m| SimError::unsupported("body", m))?
    {
        None => Ok(()),
        Some(hit) => Err(SimError::unsupported(field, format!("{hit} {advice}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::colliders::from_scene;
    use crate::scene::Scene;

    fn scene(bodies: &str, colliders: &str) -> Scene {
        let text = format!(
            "[simulation]\nframe_rate = 60.0\n[collision]\nmethod = \"two-way\"\n{bodies}{colliders}"
        );
        Scene::parse(&text, "t.toml", &[]).unwrap()
    }

    fn cube(name: &str, z: f64) -> String {
        format!(
            "[[body]]\nname = \"{name}\"\nmesh = {{ generator = \"box\", size = [0.5, 0.5, 0.5], \
             cells = [2, 2, 2] }}\ntranslation = [0.0, 0.0, {z}]\nmaterial = {{ model = \
             \"stable-neo-hookean\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = \
             1000.0 }}\n"
        )
    }

    const GROUND: &str =
        "[[collider]]\nshape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }\n";

    fn check(s: &Scene, x: &[[f64; 3]], model: &SimModel) -> Result<(), String> {
        check_start(model, x, &from_scene(s), 0.0, "two-way", "at the start")
            .map_err(|e| e.to_string())
    }

    #[test]
    fn separate_bodies_above_the_ground_pass() {
        let s = scene(&(cube("a", 0.3) + &cube("b", 0.9)), GROUND);
        let m = SimModel::from_scene(&s).unwrap();
        assert_eq!(check(&s, &m.positions, &m), Ok(()));
    }

    #[test]
    fn overlapping_bodies_are_refused_naming_both_and_a_pair_of_triangles() {
        let s = scene(&(cube("lower", 0.3) + &cube("upper", 0.6)), GROUND);
        let m = SimModel::from_scene(&s).unwrap();
        let e = check(&s, &m.positions, &m).unwrap_err();
        assert!(e.starts_with("collision.method: "), "{e}");
        assert!(
            e.contains("bodies 'lower' and 'upper' intersect") && e.contains("triangle "),
            "{e}"
        );
        assert!(e.contains("collision.method = \"shortest-path\""), "{e}");
    }

    #[test]
    fn a_self_intersecting_body_is_refused_naming_it() {
        let s = scene(&cube("folded", 0.5), GROUND);
        let m = SimModel::from_scene(&s).unwrap();
        // Push the lowest corner through the opposite side of the cube.
        let mut x = m.positions.clone();
        let corner = (0..x.len())
            .min_by(|&a, &b| {
                let sum = |p: [f64; 3]| p[0] + p[1] + p[2];
                sum(x[a]).total_cmp(&sum(x[b]))
            })
            .unwrap();
        x[corner] = [0.6, 0.6, 1.1];
        let e = check(&s, &x, &m).unwrap_err();
        assert!(e.contains("body 'folded' intersects itself"), "{e}");
        assert!(e.contains("triangle "), "{e}");
    }

    #[test]
    fn a_vertex_inside_a_collider_is_refused_naming_the_body_and_collider() {
        let sphere = "[[collider]]\nshape = { sphere = { center = [0.0, 0.0, 0.6], radius = \
                      0.2 } }\n";
        let s = scene(&cube("pierced", 0.5), &(GROUND.to_string() + sphere));
        let m = SimModel::from_scene(&s).unwrap();
        // The sphere holds the cube's centre vertex.
        let e = check(&s, &m.positions, &m).unwrap_err();
        assert!(
            e.contains("of body 'pierced' is") && e.contains("inside collider[1]"),
            "{e}"
        );
        // A moving ground that has risen into the cube by t = 1 s.
        let rising = "[[collider]]\nshape = { plane = { normal = [0.0, 0.0, 1.0], offset = \
                      0.0 } }\nvelocity = [0.0, 0.0, 0.5]\n";
        let s = scene(&cube("lifted", 0.5), rising);
        let m = SimModel::from_scene(&s).unwrap();
        assert!(check(&s, &m.positions, &m).is_ok());
        let e = check_start(&m, &m.positions, &from_scene(&s), 1.0, "two-way", "now")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("inside collider[0]") && e.contains("now;"),
            "{e}"
        );
    }

    #[test]
    fn the_repository_two_way_scenes_start_intersection_free() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = entry.path();
            if p.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let s = Scene::load(&p, &[]).unwrap();
            if !crate::contact::method(s.collision.method).needs_intersection_free_start() {
                continue;
            }
            let m = SimModel::from_scene(&s).unwrap();
            let r = check_start(
                &m,
                &m.positions,
                &from_scene(&s),
                0.0,
                "two-way",
                "at start",
            );
            assert!(r.is_ok(), "{}: {}", p.display(), r.unwrap_err());
            checked += 1;
        }
        assert!(checked >= 5, "only {checked} two-way scenes");
    }
}
