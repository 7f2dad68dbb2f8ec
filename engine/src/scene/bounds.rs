//! Checks that keep a valid scene small enough to build: the mesh elements the generators would
//! make and the graph sizes the step counts imply, refused before anything is allocated; and
//! finite numbers where the section checks look only at signs and order.

use super::{ColliderShape, Generator, MeshSource, Scene};

/// Most mesh elements (tets, triangles, rod segments) the procedural generators may make in one
/// scene, estimated from `size` and `cells` before generating (larger bodies come from mesh
/// files, whose size their reader bounds).
pub const MAX_GENERATED_ELEMENTS: f64 = 8e6;

/// Most implicit-function evaluations a squishy ball may take (lattice points × tentacles).
const MAX_IMPLICIT_WORK: f64 = 4e9;

/// Most time steps fused into one recorded graph: `simulation.substeps` (a symplectic Euler
/// frame) and `xpbd.substeps × xpbd.iterations` (an XPBD step) record one set of dispatches each.
pub const MAX_FUSED_STEPS: u64 = 10_000;

/// Most two-way steps recorded per graph run (`collision.steps_per_batch`).
pub const MAX_STEPS_PER_BATCH: u32 = 1024;

/// Most proximity searches recorded per step batch (`collision.batch_searches`).
pub const MAX_BATCH_SEARCHES: u32 = 64;

/// A field path and what is wrong with it.
type Problem = (String, String);

/// The mesh elements (tets, triangles or segments) generator `g` makes for `size` and `cells`,
/// estimated from above in f64 (no overflow), and the implicit-function evaluations it takes.
pub fn generated_elements(g: Generator, size: [f64; 3], cells: [u32; 3]) -> (f64, f64) {
    let c = cells.map(f64::from);
    let lattice = |n: f64| n.max(4.0).powi(3);
    match g {
        Generator::Box => (5.0 * c[0] * c[1] * c[2], 0.0),
        Generator::Box6 => (6.0 * c[0] * c[1] * c[2], 0.0),
        // Body-centred lattice stuffing: at most 12 tets per lattice cell.
        Generator::Sphere => (12.0 * lattice(c[0]), lattice(c[0])),
        Generator::SquishyBall => (12.0 * lattice(c[0]), lattice(c[0]) * (1.0 + c[1])),
        Generator::Coil => {
            let along = (size[0] / size[1]).floor().max(0.0) * c[0];
            (6.0 * along.max(1.0) * c[0] * c[0], 0.0)
        }
        Generator::Cloth | Generator::Tube | Generator::Funnel | Generator::KnotTube => {
            (2.0 * (c[0] + 1.0) * (c[1] + 1.0), 0.0)
        }
        Generator::ReefKnot | Generator::BowKnot => (4.0 * (c[0] + 1.0) * (c[1] + 1.0), 0.0),
        Generator::Rod => (c[0], 0.0),
        Generator::Arch => (5.0 * c[0] * c[1] * c[2] * c[2], 0.0),
    }
}

/// Generated sizes and fused step counts within the limits above.
pub(super) fn validate_sizes(scene: &Scene) -> Result<(), Problem> {
    let mut total = 0.0;
    for (i, b) in scene.bodies.iter().enumerate() {
        let MeshSource::Generator {
            generator,
            size,
            cells,
        } = &b.mesh
        else {
            continue;
        };
        let (elements, work) = generated_elements(*generator, *size, *cells);
        total += elements;
        if total.is_nan() || total > MAX_GENERATED_ELEMENTS {
            return Err((
                format!("body[{i}].mesh.cells"),
                format!(
                    "the generators would make about {total:.3e} elements (this body {elements:.3e}), \
                     more than the {MAX_GENERATED_ELEMENTS:.0e} a scene may generate; use fewer \
                     cells or a mesh file"
                ),
            ));
        }
        if work.is_nan() || work > MAX_IMPLICIT_WORK {
            return Err((
                format!("body[{i}].mesh.cells"),
                format!(
                    "a {generator:?} of {cells:?} cells takes about {work:.3e} evaluations, more \
                     than {MAX_IMPLICIT_WORK:.0e}; use fewer cells or tentacles"
                ),
            ));
        }
        let knot = matches!(
            generator,
            Generator::KnotTube | Generator::ReefKnot | Generator::BowKnot
        );
        if knot && (size[2] > 1000.0 * size[0] || size[2].is_nan()) {
            return Err((
                format!("body[{i}].mesh.size"),
                format!(
                    "a {generator:?}'s tails ({} m) may be at most 1000 knot scales ({} m) long",
                    size[2], size[0]
                ),
            ));
        }
    }
    let s = &scene.simulation;
    if u64::from(s.substeps) > MAX_FUSED_STEPS {
        return Err((
            "simulation.substeps".into(),
            format!("must be at most {MAX_FUSED_STEPS}, got {}", s.substeps),
        ));
    }
    let x = &scene.xpbd;
    if u64::from(x.substeps) * u64::from(x.iterations) > MAX_FUSED_STEPS {
        return Err((
            "xpbd.iterations".into(),
            format!(
                "xpbd.substeps × xpbd.iterations must be at most {MAX_FUSED_STEPS}, got {} × {}",
                x.substeps, x.iterations
            ),
        ));
    }
    if scene.collision.batch_searches > MAX_BATCH_SEARCHES {
        return Err((
            "collision.batch_searches".into(),
            format!(
                "must be at most {MAX_BATCH_SEARCHES}, got {}",
                scene.collision.batch_searches
            ),
        ));
    }
    if scene.collision.steps_per_batch > MAX_STEPS_PER_BATCH {
        return Err((
            "collision.steps_per_batch".into(),
            format!(
                "must be at most {MAX_STEPS_PER_BATCH}, got {}",
                scene.collision.steps_per_batch
            ),
        ));
    }
    Ok(())
}

/// Finite numbers where the section checks look only at signs and order: collider poses and
/// velocities, and force totals and tractions.
pub(super) fn validate_finite(scene: &Scene) -> Result<(), Problem> {
    let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
    let need = |ok: bool, field: String, unit: &str| {
        if ok {
            Ok(())
        } else {
            Err((field, format!("must be finite ({unit})")))
        }
    };
    for (i, c) in scene.colliders.iter().enumerate() {
        need(
            finite(&c.velocity),
            format!("collider[{i}].velocity"),
            "m/s",
        )?;
        match &c.shape {
            ColliderShape::Plane { offset, .. } => need(
                offset.is_finite(),
                format!("collider[{i}].shape.plane.offset"),
                "m",
            )?,
            ColliderShape::Sphere { center, .. } => need(
                finite(center),
                format!("collider[{i}].shape.sphere.center"),
                "m",
            )?,
            ColliderShape::Box { min, max } => need(
                finite(min) && finite(max),
                format!("collider[{i}].shape.box"),
                "m",
            )?,
        }
    }
    for (i, b) in scene.bodies.iter().enumerate() {
        for (k, fo) in b.force.iter().enumerate() {
            if let Some(t) = &fo.total {
                need(finite(t), format!("body[{i}].force[{k}].total"), "N")?;
            }
            if let Some(t) = &fo.traction {
                need(finite(t), format!("body[{i}].force[{k}].traction"), "Pa")?;
            }
        }
    }
    Ok(())
}
