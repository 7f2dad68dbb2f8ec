//! Checks of the values that the types cannot express (positive moduli, ranges, references),
//! one function per section of the scene; errors name the field path.

use super::{
    BalConfig, Collider, ColliderShape, CollisionMethod, CollisionSettings, Generator,
    MaterialModel, MeshSource, NewtonConfig, Scene, SceneError, SimulationSettings, VertexSet,
    XpbdConfig,
};

/// A field path and what is wrong with it.
struct Invalid {
    field: String,
    message: String,
}

/// The result of one section's checks.
type Check = Result<(), Invalid>;

fn bad<T>(field: String, message: String) -> Result<T, Invalid> {
    Err(Invalid { field, message })
}

fn finite3(v: &[f64; 3]) -> bool {
    v.iter().all(|x| x.is_finite())
}

impl Scene {
    /// Checks values that the types cannot express (positive moduli, ranges, references);
    /// `name` labels errors.
    pub fn validate(&self, name: &str) -> Result<(), SceneError> {
        self.check().map_err(|(field, message)| SceneError {
            file: name.into(),
            line: None,
            field: Some(field),
            message,
        })
    }

    /// [`Scene::validate`]'s checks: the first failing field path and what is wrong with it.
    pub(super) fn check(&self) -> Result<(), (String, String)> {
        let checks = || -> Check {
            validate_simulation(&self.simulation)?;
            validate_newton(&self.solver)?;
            validate_xpbd(&self.xpbd)?;
            validate_collision(&self.collision)?;
            validate_prox(&self.prox)?;
            validate_bodies(self)?;
            for (i, c) in self.colliders.iter().enumerate() {
                validate_collider(i, c)?;
            }
            Ok(())
        };
        checks().map_err(|e| (e.field, e.message))?;
        super::bounds::validate_finite(self)?;
        super::bounds::validate_sizes(self)
    }
}

/// `[simulation]`: time stepping and gravity.
fn validate_simulation(s: &SimulationSettings) -> Check {
    if !(s.frame_rate.is_finite() && s.frame_rate > 0.0) {
        return bad(
            "simulation.frame_rate".into(),
            format!(
                "must be a positive number of frames per second, got {}",
                s.frame_rate
            ),
        );
    }
    if s.substeps == 0 {
        return bad("simulation.substeps".into(), "must be at least 1".into());
    }
    if !finite3(&s.gravity) {
        return bad("simulation.gravity".into(), "must be finite (m/s²)".into());
    }
    Ok(())
}

/// `[solver]`: the Newton–PCG parameters.
fn validate_newton(sv: &NewtonConfig) -> Check {
    if !(sv.friction_slip_velocity.is_finite() && sv.friction_slip_velocity > 0.0) {
        return bad(
            "solver.friction_slip_velocity".into(),
            format!(
                "must be a positive speed in m/s, got {}",
                sv.friction_slip_velocity
            ),
        );
    }
    if !(sv.warm_start_tolerance > 0.0 && sv.warm_start_tolerance < 1.0) {
        return bad(
            "solver.warm_start_tolerance".into(),
            format!("must be in (0, 1), got {}", sv.warm_start_tolerance),
        );
    }
    if !(sv.pcg_tolerance > 0.0 && sv.pcg_tolerance < 1.0) {
        return bad(
            "solver.pcg_tolerance".into(),
            format!("must be in (0, 1), got {}", sv.pcg_tolerance),
        );
    }
    if !(sv.newton_tolerance > 0.0 && sv.newton_tolerance.is_finite()) {
        return bad(
            "solver.newton_tolerance".into(),
            format!("must be positive, got {}", sv.newton_tolerance),
        );
    }
    if !(sv.newton_gradient_tolerance >= 0.0 && sv.newton_gradient_tolerance.is_finite()) {
        return bad(
            "solver.newton_gradient_tolerance".into(),
            format!(
                "must be a force >= 0 in N, got {}",
                sv.newton_gradient_tolerance
            ),
        );
    }
    for (key, v) in [
        ("newton_max_iterations", sv.newton_max_iterations),
        ("pcg_max_iterations", sv.pcg_max_iterations),
    ] {
        if v == 0 {
            return bad(format!("solver.{key}"), "must be at least 1".into());
        }
    }
    Ok(())
}

/// `[xpbd]`: substeps, iterations, damping.
fn validate_xpbd(x: &XpbdConfig) -> Check {
    if x.substeps == 0 || x.substeps > 10_000 {
        return bad(
            "xpbd.substeps".into(),
            format!("must be in 1..=10000, got {}", x.substeps),
        );
    }
    if x.iterations == 0 || x.iterations > 1000 {
        return bad(
            "xpbd.iterations".into(),
            format!("must be in 1..=1000, got {}", x.iterations),
        );
    }
    if !(x.damping.is_finite() && x.damping >= 0.0) {
        return bad(
            "xpbd.damping".into(),
            format!("must be a non-negative rate in 1/s, got {}", x.damping),
        );
    }
    Ok(())
}

/// `[collision]`: the shortest-path and two-way parameters.
fn validate_collision(c: &CollisionSettings) -> Check {
    for (key, v) in [
        ("friction", c.friction),
        ("contact_offset", c.contact_offset),
        ("start_time", c.start_time),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return bad(
                format!("collision.{key}"),
                format!("must be finite and >= 0, got {v}"),
            );
        }
    }
    if !(c.ccd_distance.is_finite() && c.ccd_distance > c.contact_offset) {
        return bad(
            "collision.ccd_distance".into(),
            format!(
                "must be a length in m larger than collision.contact_offset ({}), got {}",
                c.contact_offset, c.ccd_distance
            ),
        );
    }
    if !(c.penalty_stiffness.is_finite() && c.penalty_stiffness > 0.0) {
        return bad(
            "collision.penalty_stiffness".into(),
            format!(
                "must be a positive multiple of m/h², got {}",
                c.penalty_stiffness
            ),
        );
    }
    if !(c.repulsion_stiffness.is_finite() && c.repulsion_stiffness >= 0.0) {
        return bad(
            "collision.repulsion_stiffness".into(),
            format!(
                "must be a non-negative multiple of m/h², got {}",
                c.repulsion_stiffness
            ),
        );
    }
    if c.repulsion_stiffness > 0.0 && c.method != CollisionMethod::TwoWay {
        return bad(
            "collision.repulsion_stiffness".into(),
            "the repulsion energy needs collision.method = \"two-way\"".into(),
        );
    }
    if let Some(d) = c.repulsion_distance {
        if !(d.is_finite() && d > 0.0 && d <= c.d_min) {
            return bad(
                "collision.repulsion_distance".into(),
                format!(
                    "must be a positive length in m, at most collision.d_min ({}) so every \
                     pair within it is in the proximity list, got {d}",
                    c.d_min
                ),
            );
        }
    }
    if !(c.max_correction.is_finite() && c.max_correction > 0.0) {
        return bad(
            "collision.max_correction".into(),
            format!("must be a positive length in m, got {}", c.max_correction),
        );
    }
    if !(1..=64).contains(&c.response_passes) {
        return bad(
            "collision.response_passes".into(),
            format!("must be in 1..=64, got {}", c.response_passes),
        );
    }
    if !(c.relaxation > 0.0 && c.relaxation < 2.0) {
        return bad(
            "collision.relaxation".into(),
            format!("must be in (0, 2), got {}", c.relaxation),
        );
    }
    validate_two_way(c)?;
    validate_bal(&c.bal)?;
    Ok(())
}

/// `[collision.bal]`: the barrier-augmented Lagrangian method's parameters (checked whatever
/// the method; χ is `collision.friction`, checked above).
fn validate_bal(b: &BalConfig) -> Check {
    for (key, v, unit) in [("d_hat", b.d_hat, "m"), ("eps_v", b.eps_v, "m/s")] {
        if !(v.is_finite() && v > 0.0) {
            return bad(
                format!("collision.bal.{key}"),
                format!("must be positive and finite ({unit}), got {v}"),
            );
        }
    }
    for (key, v) in [
        ("newton_tolerance", b.newton_tolerance),
        ("ccd_separation", b.ccd_separation),
    ] {
        if !(v > 0.0 && v < 1.0) {
            return bad(
                format!("collision.bal.{key}"),
                format!("must lie in (0, 1), got {v}"),
            );
        }
    }
    if b.max_active_pairs == Some(0) {
        return bad(
            "collision.bal.max_active_pairs".into(),
            "must be at least 1 (leave it out for no cap)".into(),
        );
    }
    if b.pair_capacity == Some(0) {
        return bad(
            "collision.bal.pair_capacity".into(),
            "must be at least 1 (leave it out for the default)".into(),
        );
    }
    if let Some(d) = b.search_distance {
        if !(d.is_finite() && d > b.d_hat) {
            return bad(
                "collision.bal.search_distance".into(),
                format!(
                    "must be a length in m larger than collision.bal.d_hat ({}), got {d}",
                    b.d_hat
                ),
            );
        }
    }
    Ok(())
}

/// `[collision]`: the two-way method's parameters (the same rules as
/// `contact::two_way::TwoWaySettings::validate`, with the fields named). Checked whatever the
/// method, so a scene stays valid when only `collision.method` changes.
fn validate_two_way(c: &CollisionSettings) -> Check {
    let pos = |name: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            bad(
                format!("collision.{name}"),
                format!("{name} must be positive and finite, got {v}"),
            )
        }
    };
    pos("d_min", c.d_min)?;
    pos("d_max", c.d_max)?;
    pos("delta", c.delta)?;
    pos("epsilon", c.epsilon)?;
    pos("min_separation", c.min_separation)?;
    if c.min_separation >= c.delta {
        return bad(
            "collision.min_separation".into(),
            format!(
                "min_separation ({}) must be below delta ({})",
                c.min_separation, c.delta
            ),
        );
    }
    if c.d_max <= c.d_min {
        return bad(
            "collision.d_max".into(),
            format!("d_max ({}) must exceed d_min ({})", c.d_max, c.d_min),
        );
    }
    if !(c.sigma.is_finite() && c.sigma > 1.0) {
        return bad(
            "collision.sigma".into(),
            format!("sigma must be > 1, got {}", c.sigma),
        );
    }
    if !(c.gamma > 0.0 && c.gamma < 1.0) {
        return bad(
            "collision.gamma".into(),
            format!("gamma must be in (0, 1), got {}", c.gamma),
        );
    }
    if c.floor_release {
        let theta = c.floor_release_distance();
        if !(theta.is_finite() && theta > 2.0 * c.min_separation && theta <= c.d_max) {
            return bad(
                "collision.floor_release_distance".into(),
                format!(
                    "floor_release_distance must be in (2 min_separation = {}, d_max = {}], \
                     got {theta}",
                    2.0 * c.min_separation,
                    c.d_max
                ),
            );
        }
    }
    if c.bound == super::CollisionBound::Ogc && !(c.ogc_relaxation > 0.0 && c.ogc_relaxation < 0.5)
    {
        return bad(
            "collision.ogc_relaxation".into(),
            format!(
                "ogc relaxation must be in (0, 0.5), got {}",
                c.ogc_relaxation
            ),
        );
    }
    if c.backward == super::CollisionBackward::LogBarrier {
        let (strength, range) = (c.barrier_strength, c.barrier_range);
        if !(strength.is_finite() && strength > 0.0) {
            return bad(
                "collision.barrier_strength".into(),
                format!("barrier_strength must be positive and finite, got {strength}"),
            );
        }
        if !(range > 0.0 && range <= c.d_min) {
            return bad(
                "collision.barrier_range".into(),
                format!(
                    "barrier_range must be in (0, d_min = {}] (pairs within it must be in \
                     the proximity list), got {range}",
                    c.d_min
                ),
            );
        }
    }
    for (key, v) in [
        ("max_steps", c.max_steps),
        ("steps_per_batch", c.steps_per_batch),
    ] {
        if v == 0 {
            return bad(format!("collision.{key}"), "must be at least 1".into());
        }
    }
    Ok(())
}

/// `[[body]]`: unique names, then each body.
fn validate_bodies(scene: &Scene) -> Check {
    let mut names = std::collections::HashSet::new();
    for (i, b) in scene.bodies.iter().enumerate() {
        let f = |k: &str| format!("body[{i}].{k}");
        if !names.insert(b.name.as_str()) {
            return bad(f("name"), format!("'{}' is used by another body", b.name));
        }
        validate_material(&f, &b.material)?;
        validate_mesh_source(&f, b)?;
        validate_placement_and_sets(&f, b)?;
    }
    Ok(())
}

/// `body[i].material`.
fn validate_material(f: &dyn Fn(&str) -> String, m: &super::Material) -> Check {
    if !(m.youngs_modulus.is_finite() && m.youngs_modulus > 0.0) {
        return bad(
            f("material.youngs_modulus"),
            format!(
                "must be a positive stiffness in Pa, got {}",
                m.youngs_modulus
            ),
        );
    }
    if !(m.poisson_ratio > -1.0 && m.poisson_ratio < 0.5) {
        return bad(
            f("material.poisson_ratio"),
            format!("must be in (-1, 0.5), got {}", m.poisson_ratio),
        );
    }
    if !(m.density.is_finite() && m.density > 0.0) {
        return bad(
            f("material.density"),
            format!("must be a positive density in kg/m³, got {}", m.density),
        );
    }
    if m.model == MaterialModel::Cloth && !m.thickness.is_some_and(|t| t > 0.0 && t.is_finite()) {
        return bad(
            f("material.thickness"),
            "cloth needs a positive thickness in m".into(),
        );
    }
    if m.model == MaterialModel::Rod && !m.radius.is_some_and(|r| r > 0.0 && r.is_finite()) {
        return bad(
            f("material.radius"),
            "a rod needs a positive cross-section radius in m".into(),
        );
    }
    if let Some(kb) = m.bending_stiffness {
        if !(kb.is_finite() && kb >= 0.0) {
            return bad(
                f("material.bending_stiffness"),
                format!("must be a non-negative stiffness, got {kb}"),
            );
        }
    }
    Ok(())
}

/// `body[i].mesh`: generator sizes and cells, and the generator matching the material.
fn validate_mesh_source(f: &dyn Fn(&str) -> String, b: &super::Body) -> Check {
    let rod_geometry = matches!(
        b.mesh,
        MeshSource::Generator {
            generator: Generator::Rod,
            ..
        }
    );
    // Arrays serve every material (the model checks that the arrays it needs are given).
    let arrays = matches!(b.mesh, MeshSource::Arrays { .. });
    if !arrays && rod_geometry != (b.material.model == MaterialModel::Rod) {
        return bad(
            f("material.model"),
            "rod bodies use the \"rod\" generator and the \"rod\" material together".into(),
        );
    }
    if let MeshSource::Generator { generator, .. } = &b.mesh {
        if generator.is_cloth() != (b.material.model == MaterialModel::Cloth) {
            return bad(
                f("material.model"),
                "cloth bodies use a cloth generator (\"cloth\", \"tube\", \"funnel\", \
                 \"knot-tube\", \"reef-knot\", \"bow-knot\") or a surface mesh file, and the \"cloth\" material together"
                    .into(),
            );
        }
    }
    if let MeshSource::Generator {
        generator,
        size,
        cells,
    } = &b.mesh
    {
        let needs = match generator {
            Generator::Sphere | Generator::Rod | Generator::Coil => 1,
            Generator::Cloth | Generator::Tube => 2,
            Generator::Funnel | Generator::KnotTube | Generator::ReefKnot | Generator::BowKnot => 2,
            _ => 3,
        };
        let size_needs = match generator {
            Generator::Coil
            | Generator::SquishyBall
            | Generator::Funnel
            | Generator::KnotTube
            | Generator::ReefKnot
            | Generator::BowKnot => 3,
            _ => needs,
        };
        if !size[..size_needs].iter().all(|x| x.is_finite() && *x > 0.0) {
            return bad(
                f("mesh.size"),
                format!("{generator:?} needs {size_needs} positive size(s) in m, got {size:?}"),
            );
        }
        if *generator == Generator::Coil && size[2] <= size[1] {
            return bad(
                f("mesh.size"),
                format!(
                    "a coil's radius ({} m) must exceed its thickness ({} m)",
                    size[2], size[1]
                ),
            );
        }
        if *generator == Generator::KnotTube && size[1] >= 0.5 * size[0] {
            return bad(
                f("mesh.size"),
                format!(
                    "a knot tube's radius ({} m) must be below half its knot scale ({} m)",
                    size[1], size[0]
                ),
            );
        }
        let two_tubes = matches!(generator, Generator::ReefKnot | Generator::BowKnot);
        if two_tubes && size[1] >= 0.4 * size[0] {
            return bad(
                f("mesh.size"),
                format!(
                    "a {generator:?}'s tube radius ({} m) must be below 0.4 times its knot \
                     scale ({} m)",
                    size[1], size[0]
                ),
            );
        }
        if *generator == Generator::Arch {
            check_arch(f, *size, *cells)?;
        }
        if cells[..needs].iter().any(|&c| c == 0 || c > 1000) {
            return bad(
                f("mesh.cells"),
                format!("cells must be in 1..=1000, got {cells:?}"),
            );
        }
        let tubular = matches!(
            generator,
            Generator::Tube
                | Generator::Funnel
                | Generator::KnotTube
                | Generator::ReefKnot
                | Generator::BowKnot
        );
        if tubular && cells[0] < 3 {
            return bad(
                f("mesh.cells"),
                format!(
                    "a {generator:?} needs at least 3 cells around, got {}",
                    cells[0]
                ),
            );
        }
        if (*generator == Generator::KnotTube || two_tubes) && cells[1] < 8 {
            return bad(
                f("mesh.cells"),
                format!(
                    "a {generator:?} needs at least 8 segments along, got {}",
                    cells[1]
                ),
            );
        }
    }
    Ok(())
}

/// An `"arch"`: at least 3 voussoirs, and joints narrow beside a voussoir's inner arc (so no
/// bent tet inverts and the stones start apart).
fn check_arch(f: &dyn Fn(&str) -> String, size: [f64; 3], cells: [u32; 3]) -> Check {
    if !(3..=1000).contains(&cells[0]) {
        return bad(
            f("mesh.cells"),
            format!(
                "an arch needs 3..=1000 voussoirs (cells[0]), got {}",
                cells[0]
            ),
        );
    }
    let inner_arc = std::f64::consts::PI * size[0] / f64::from(cells[0]);
    let gap = size[1] * super::ARCH_GAP_PER_THICKNESS;
    if inner_arc < 10.0 * gap {
        return bad(
            f("mesh.size"),
            format!(
                "an arch's voussoirs are {inner_arc:.3e} m long on the inner radius ({} m), \
                 less than 10 joint widths (thickness / 200 = {gap:.3e} m): use a larger \
                 inner radius, a thinner arch or fewer voussoirs",
                size[0]
            ),
        );
    }
    Ok(())
}

/// `body[i]` placement, fixed sets, material regions, motions and forces.
fn validate_placement_and_sets(f: &dyn Fn(&str) -> String, b: &super::Body) -> Check {
    if !(b.scale.is_finite() && b.scale > 0.0) {
        return bad(f("scale"), format!("must be positive, got {}", b.scale));
    }
    if !(b.collider_offset.is_finite() && b.collider_offset >= 0.0) {
        return bad(
            f("collider_offset"),
            format!(
                "must be a non-negative clearance (m), got {}",
                b.collider_offset
            ),
        );
    }
    for (key, v, unit) in [
        ("translation", &b.translation, "m"),
        ("velocity", &b.velocity, "m/s"),
        ("rotation_deg", &b.rotation_deg, "degrees"),
    ] {
        if !finite3(v) {
            return bad(f(key), format!("must be finite ({unit}), got {v:?}"));
        }
    }
    for (k, v) in b.fixed.iter().enumerate() {
        check_set(v).or_else(|m| bad(f(&format!("fixed[{k}]")), m))?;
    }
    for (k, r) in b.material_region.iter().enumerate() {
        if !(r.youngs_modulus.is_finite() && r.youngs_modulus > 0.0) {
            return bad(
                f(&format!("material_region[{k}].youngs_modulus")),
                format!(
                    "must be a positive stiffness in Pa, got {}",
                    r.youngs_modulus
                ),
            );
        }
        if (0..3).any(|c| !(r.region.min[c] <= r.region.max[c])) {
            return bad(
                f(&format!("material_region[{k}].region")),
                "min must not exceed max".into(),
            );
        }
    }
    for (k, mo) in b.motion.iter().enumerate() {
        check_set(&mo.vertices).or_else(|m| bad(f(&format!("motion[{k}].vertices")), m))?;
        if let Some(a) = mo.axis {
            if !finite3(&a) || a.iter().all(|x| *x == 0.0) {
                return bad(
                    f(&format!("motion[{k}].axis")),
                    "must be a non-zero finite direction".into(),
                );
            }
        }
        for (key, ok) in [
            ("velocity", finite3(&mo.velocity)),
            ("center", finite3(&mo.center)),
            ("angular_velocity", mo.angular_velocity.is_finite()),
        ] {
            if !ok {
                return bad(f(&format!("motion[{k}].{key}")), "must be finite".into());
            }
        }
        if let Some(t) = mo.until {
            if !(t >= 0.0) || t.is_infinite() {
                return bad(
                    f(&format!("motion[{k}].until")),
                    format!("must be a finite time >= 0 s, got {t}"),
                );
            }
        }
    }
    for (k, fo) in b.force.iter().enumerate() {
        check_set(&fo.vertices).or_else(|m| bad(f(&format!("force[{k}].vertices")), m))?;
        if fo.total.is_none() == fo.traction.is_none() {
            return bad(
                f(&format!("force[{k}]")),
                "give exactly one of `total` (N) or `traction` (Pa)".into(),
            );
        }
    }
    Ok(())
}

/// `[[collider]]`: friction, spin, offset and shape.
fn validate_collider(i: usize, c: &Collider) -> Check {
    let f = |k: &str| format!("collider[{i}].{k}");
    if !(c.friction.is_finite() && c.friction >= 0.0) {
        return bad(
            f("friction"),
            format!("must be a non-negative coefficient, got {}", c.friction),
        );
    }
    if let Err(m) = check_spin(c) {
        return bad(f("angular_velocity"), m);
    }
    if !(c.offset.is_finite() && c.offset >= 0.0) {
        return bad(
            f("offset"),
            format!("must be a non-negative thickness (m), got {}", c.offset),
        );
    }
    match &c.shape {
        ColliderShape::Plane { normal, .. }
            if normal.iter().all(|x| *x == 0.0) || !finite3(normal) =>
        {
            return bad(
                f("shape.plane.normal"),
                "must be a non-zero finite direction".into(),
            );
        }
        ColliderShape::Sphere { radius, .. } if !(radius.is_finite() && *radius > 0.0) => {
            return bad(
                f("shape.sphere.radius"),
                format!("must be positive (m), got {radius}"),
            );
        }
        ColliderShape::Box { min, max } if (0..3).any(|k| !(min[k] < max[k])) => {
            return bad(
                f("shape.box"),
                format!("min {min:?} must be below max {max:?} on every axis"),
            );
        }
        _ => {}
    }
    Ok(())
}

/// One of `region` or `indices`, with a well-formed region.
fn check_set(v: &VertexSet) -> Result<(), String> {
    match (&v.region, &v.indices) {
        (None, None) | (Some(_), Some(_)) => {
            Err("give exactly one of `region` or `indices`".into())
        }
        (Some(r), None) if (0..3).any(|k| !(r.min[k] <= r.max[k])) => Err(format!(
            "region min {:?} must not exceed max {:?}",
            r.min, r.max
        )),
        _ => Ok(()),
    }
}

/// A collider's spin is finite and only spheres spin.
pub fn check_spin(c: &Collider) -> Result<(), String> {
    if !c.angular_velocity.iter().all(|w| w.is_finite()) {
        return Err("must be finite (rad/s)".into());
    }
    if !matches!(c.shape, ColliderShape::Sphere { .. })
        && c.angular_velocity.iter().any(|&w| w != 0.0)
    {
        return Err("only sphere colliders spin".into());
    }
    Ok(())
}

/// `[prox]`: the PROX contact method's parameters (checked whatever `collision.method` is, so
/// a scene stays valid when only the method changes).
fn validate_prox(p: &super::ProxTable) -> Check {
    let fail = |key: &str, message: String| Invalid {
        field: format!("prox.{key}"),
        message,
    };
    let positive = |key: &str, v: f64| {
        if v.is_finite() && v > 0.0 {
            Ok(())
        } else {
            Err(fail(key, format!("must be a finite number > 0, got {v}")))
        }
    };
    let non_negative = |key: &str, v: f64| {
        if v.is_finite() && v >= 0.0 {
            Ok(())
        } else {
            Err(fail(key, format!("must be a finite number >= 0, got {v}")))
        }
    };
    let count = |key: &str, v: u32, lo: u32, hi: u32| {
        if (lo..=hi).contains(&v) {
            Ok(())
        } else {
            Err(fail(key, format!("must be in {lo}..={hi}, got {v}")))
        }
    };
    positive("absolute_tolerance", p.absolute_tolerance)?;
    positive("relative_tolerance", p.relative_tolerance)?;
    count("max_iterations", p.max_iterations, 1, 100_000)?;
    if !(p.nu_reduce > 0.0 && p.nu_reduce < 1.0) {
        return Err(fail(
            "nu_reduce",
            format!("must be in (0, 1), got {}", p.nu_reduce),
        ));
    }
    if !(p.nu_increase.is_finite() && p.nu_increase >= 1.0) {
        return Err(fail(
            "nu_increase",
            format!("must be a finite number >= 1, got {}", p.nu_increase),
        ));
    }
    non_negative("too_small_merit_change", p.too_small_merit_change)?;
    positive("r_factor", p.r_factor)?;
    non_negative("friction", p.friction)?;
    if !(0.0..=1.0).contains(&p.restitution) {
        return Err(fail(
            "restitution",
            format!("must be in [0, 1], got {}", p.restitution),
        ));
    }
    non_negative("damping", p.damping)?;
    count("sdf_resolution", p.sdf_resolution, 2, 256)?;
    non_negative("envelope", p.envelope)?;
    count("fw_max_iterations", p.fw_max_iterations, 1, 1000)?;
    non_negative("fw_tolerance", p.fw_tolerance)?;
    non_negative("sdf_inside_margin", p.sdf_inside_margin)?;
    positive("pair_distance", p.pair_distance)?;
    non_negative("pair_cell_scale", p.pair_cell_scale)?;
    count("random_max_rounds", p.random_max_rounds, 1, 100_000)?;
    count("sweeps_per_batch", p.sweeps_per_batch, 1, 1024)?;
    Ok(())
}
