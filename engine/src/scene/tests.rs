//! Unit tests of scene parsing, overrides and validation.

use super::*;

const CUBE: &str = r#"
[simulation]
frame_rate = 60.0
substeps = 2
gravity = [0.0, 0.0, -9.81]

[[body]]
name = "cube"
mesh = { generator = "box", size = [0.5, 0.5, 0.5], cells = [10, 10, 10] }
translation = [0.0, 0.0, 0.35]
material = { model = "stable-neo-hookean", youngs_modulus = 5e5, poisson_ratio = 0.3, density = 1000.0 }

[[body]]
name = "sheet"
mesh = { file = "sheet.obj" }
material = { model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }
fixed = [{ region = { min = [-1.0, -1.0, -1.0], max = [1.0, -0.49, 1.0] } }]

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
friction = 0.3
"#;

#[test]
fn parses_a_scene_with_defaults() {
    let s = Scene::parse(CUBE, "cube.toml", &[]).unwrap();
    assert_eq!(s.bodies.len(), 2);
    assert!((s.simulation.time_step() - 1.0 / 120.0).abs() < 1e-15);
    assert_eq!(s.simulation.solver, SolverKind::Newton);
    assert_eq!(s.bodies[0].scale, 1.0);
    assert!(matches!(
        s.bodies[0].mesh,
        MeshSource::Generator {
            generator: Generator::Box,
            ..
        }
    ));
    assert!(matches!(s.bodies[1].mesh, MeshSource::File { .. }));
    assert!(matches!(s.colliders[0].shape, ColliderShape::Plane { .. }));
    assert_eq!(s.solver.pcg_tolerance, 1e-4);
}

#[test]
fn unknown_fields_and_wrong_types_name_the_line() {
    let text = CUBE.replace("substeps = 2", "substeps = 2\ntime_stepp = 0.01");
    let e = Scene::parse(&text, "cube.toml", &[]).unwrap_err();
    assert!(e.message.contains("time_stepp"), "{e}");
    assert_eq!(e.line, Some(5), "{e}");
    let text = CUBE.replace("substeps = 2", "substeps = \"two\"");
    let e = Scene::parse(&text, "cube.toml", &[]).unwrap_err();
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.to_string().starts_with("cube.toml:4: "), "{e}");
    let text = CUBE.replace("model = \"cloth\"", "model = \"jelly\"");
    assert!(Scene::parse(&text, "cube.toml", &[])
        .unwrap_err()
        .message
        .contains("jelly"));
}

#[test]
fn impossible_values_name_the_field() {
    let cases = [
        (
            "poisson_ratio = 0.3, density = 1000.0",
            "poisson_ratio = 0.5, density = 1000.0",
            "body[0].material.poisson_ratio",
        ),
        (
            "youngs_modulus = 5e5",
            "youngs_modulus = -5e5",
            "body[0].material.youngs_modulus",
        ),
        (
            "density = 1000.0",
            "density = 0.0",
            "body[0].material.density",
        ),
        (", thickness = 0.001", "", "body[1].material.thickness"),
        ("substeps = 2", "substeps = 0", "simulation.substeps"),
        ("friction = 0.3", "friction = -1.0", "collider[0].friction"),
        (
            "friction = 0.3",
            "friction = 0.3\nangular_velocity = [0.0, 0.0, 1.0]",
            "collider[0].angular_velocity",
        ),
        (
            "cells = [10, 10, 10]",
            "cells = [10, 0, 10]",
            "body[0].mesh.cells",
        ),
        ("name = \"sheet\"", "name = \"cube\"", "body[1].name"),
        (
            "max = [1.0, -0.49, 1.0]",
            "max = [1.0, -2.0, 1.0]",
            "body[1].fixed[0]",
        ),
    ];
    for (from, to, field) in cases {
        let text = CUBE.replacen(from, to, 1);
        assert_ne!(text, CUBE, "{from}");
        let e = Scene::parse(&text, "cube.toml", &[]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
    }
    let e = Scene::parse(
        &CUBE.replace("frame_rate = 60.0", "frame_rate = nan"),
        "c",
        &[],
    )
    .unwrap_err();
    assert_eq!(e.field.as_deref(), Some("simulation.frame_rate"), "{e}");
}

#[test]
fn overrides_are_applied_and_checked() {
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let s = Scene::parse(
        CUBE,
        "cube.toml",
        &set(&[
            "simulation.substeps=4",
            "body[0].material.density=2000",
            "body.1.velocity=[0, 1, 0]",
            "simulation.solver=symplectic-euler",
        ]),
    )
    .unwrap();
    assert_eq!(s.simulation.substeps, 4);
    assert_eq!(s.bodies[0].material.density, 2000.0);
    assert_eq!(s.bodies[1].velocity, [0.0, 1.0, 0.0]);
    assert_eq!(s.simulation.solver, SolverKind::SymplecticEuler);
    let e = Scene::parse(CUBE, "cube.toml", &set(&["simulation.substepz=4"])).unwrap_err();
    assert!(
        e.message.contains("substepz") && e.message.contains("--set"),
        "{e}"
    );
    let e = Scene::parse(CUBE, "cube.toml", &set(&["body[7].name=x"])).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("body[7].name"), "{e}");
    let e = Scene::parse(
        CUBE,
        "cube.toml",
        &set(&["body[0].material.poisson_ratio=0.7"]),
    )
    .unwrap_err();
    assert_eq!(
        e.field.as_deref(),
        Some("body[0].material.poisson_ratio"),
        "{e}"
    );
    assert!(Scene::parse(CUBE, "cube.toml", &set(&["no-equals-sign"])).is_err());
}

#[test]
fn xpbd_settings_parse_and_are_checked() {
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let s = Scene::parse(
        CUBE,
        "cube.toml",
        &set(&[
            "simulation.solver=xpbd",
            "xpbd.iterations=3",
            "xpbd.tet_solve=sequential",
        ]),
    )
    .unwrap();
    assert_eq!(s.simulation.solver, SolverKind::Xpbd);
    assert_eq!(s.xpbd.iterations, 3);
    assert_eq!(s.xpbd.substeps, 20, "default");
    assert_eq!(s.xpbd.tet_solve, TetSolve::Sequential);
    for (o, field) in [
        ("xpbd.substeps=0", "xpbd.substeps"),
        ("xpbd.iterations=0", "xpbd.iterations"),
        ("xpbd.damping=-1.0", "xpbd.damping"),
    ] {
        let e = Scene::parse(CUBE, "cube.toml", &set(&[o])).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
    }
    let e = Scene::parse(CUBE, "cube.toml", &set(&["xpbd.iteratons=2"])).unwrap_err();
    assert!(e.message.contains("iteratons"), "{e}");
    let e = Scene::parse(CUBE, "cube.toml", &set(&["xpbd.tet_solve=jacobi"])).unwrap_err();
    assert!(e.message.contains("jacobi"), "{e}");
}

#[test]
fn two_way_fields_are_validated() {
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let s = Scene::parse(
        CUBE,
        "cube.toml",
        &set(&[
            "collision.method=two-way",
            "collision.backward=log-barrier",
            "collision.barrier_strength=20.0",
            "collision.contact_coloring=gpu",
            "collision.sweep_dispatch=per-color",
        ]),
    )
    .unwrap();
    // The conversion to the solver's settings is tested in contact::two_way::settings.
    assert_eq!(s.collision.backward, CollisionBackward::LogBarrier);
    assert_eq!(
        (s.collision.barrier_strength, s.collision.barrier_range),
        (20.0, 1e-3)
    );
    for (o, field) in [
        ("collision.d_max=0.001", "collision.d_max"),
        ("collision.gamma=1.5", "collision.gamma"),
        (
            "collision.barrier_strength=-1.0",
            "collision.barrier_strength",
        ),
        (
            "collision.barrier_strength=nan",
            "collision.barrier_strength",
        ),
        ("collision.barrier_range=0.0", "collision.barrier_range"),
        ("collision.barrier_range=0.01", "collision.barrier_range"),
    ] {
        let e = Scene::parse(
            CUBE,
            "cube.toml",
            &set(&[
                "collision.method=two-way",
                "collision.backward=log-barrier",
                o,
            ]),
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{o}: {e}");
    }
    assert_eq!(s.collision.contact_coloring, CollisionColoring::Gpu);
    assert_eq!(s.collision.sweep_dispatch, CollisionSweepDispatch::PerColor);
    let e = Scene::parse(CUBE, "cube.toml", &set(&["collision.contact_coloring=cpu"])).unwrap_err();
    assert!(e.message.contains("cpu"), "{e}");
    let e = Scene::parse(CUBE, "cube.toml", &set(&["collision.backward=newton"])).unwrap_err();
    assert!(e.message.contains("newton"), "{e}");
}

#[test]
fn two_way_friction_and_repulsion_fields_are_validated() {
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let two_way = "collision.method=two-way";
    let s = Scene::parse(CUBE, "cube.toml", &set(&[two_way])).unwrap();
    assert_eq!(s.collision.friction, 0.0, "friction off by default");
    assert_eq!(
        s.collision.repulsion_stiffness, 0.0,
        "repulsion off by default"
    );
    assert_eq!(s.collision.repulsion_distance(), s.collision.delta);
    let s = Scene::parse(
        CUBE,
        "cube.toml",
        &set(&[
            two_way,
            "collision.friction=0.3",
            "collision.repulsion_stiffness=2.0",
            "collision.repulsion_distance=0.0015",
        ]),
    )
    .unwrap();
    assert_eq!(s.collision.friction, 0.3);
    assert_eq!(s.collision.repulsion_stiffness, 2.0);
    assert_eq!(s.collision.repulsion_distance(), 0.0015);
    for (o, field) in [
        ("collision.friction=-0.5", "collision.friction"),
        ("collision.friction=nan", "collision.friction"),
        (
            "collision.repulsion_stiffness=-1.0",
            "collision.repulsion_stiffness",
        ),
        (
            "collision.repulsion_stiffness=nan",
            "collision.repulsion_stiffness",
        ),
        (
            "collision.repulsion_distance=-0.001",
            "collision.repulsion_distance",
        ),
        (
            "collision.repulsion_distance=nan",
            "collision.repulsion_distance",
        ),
        (
            "collision.repulsion_distance=0.0",
            "collision.repulsion_distance",
        ),
        // Above d_min (0.002): pairs within it could be missing from the proximity list.
        (
            "collision.repulsion_distance=0.003",
            "collision.repulsion_distance",
        ),
    ] {
        let e = Scene::parse(CUBE, "cube.toml", &set(&[two_way, o])).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{o}: {e}");
    }
    // Repulsion is a two-way feature.
    let e = Scene::parse(
        CUBE,
        "cube.toml",
        &set(&["collision.repulsion_stiffness=1.0"]),
    )
    .unwrap_err();
    assert_eq!(
        e.field.as_deref(),
        Some("collision.repulsion_stiffness"),
        "{e}"
    );
}

#[test]
fn floor_release_fields_are_validated() {
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let two_way = "collision.method=two-way";
    let s = Scene::parse(CUBE, "cube.toml", &set(&[two_way])).unwrap();
    assert!(s.collision.floor_release, "floor release on by default");
    let xi = s.collision.min_separation;
    assert_eq!(s.collision.floor_release_distance(), 10.0 * xi);
    let s = Scene::parse(
        CUBE,
        "cube.toml",
        &set(&[two_way, "collision.floor_release_distance=0.0005"]),
    )
    .unwrap();
    assert_eq!(s.collision.floor_release_distance(), 5e-4);
    let s = Scene::parse(
        CUBE,
        "cube.toml",
        &set(&[two_way, "collision.floor_release=false"]),
    )
    .unwrap();
    assert!(!s.collision.floor_release);
    for o in [
        // At most 2 min_separation (the distance-bounded step's floor), above d_max, nan.
        "collision.floor_release_distance=0.00002",
        "collision.floor_release_distance=0.0",
        "collision.floor_release_distance=0.005",
        "collision.floor_release_distance=nan",
    ] {
        let e = Scene::parse(CUBE, "cube.toml", &set(&[two_way, o])).unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("collision.floor_release_distance"),
            "{o}: {e}"
        );
    }
}

#[test]
fn shortest_path_fields_and_generators_are_validated() {
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let s = Scene::parse(
        CUBE,
        "cube.toml",
        &set(&[
            "collision.method=shortest-path",
            "collision.friction=0.4",
            "collision.max_correction=0.001",
            "collision.query_all_vertices=true",
        ]),
    )
    .unwrap();
    assert_eq!(s.collision.method, CollisionMethod::ShortestPath);
    // The conversion to the method's settings is tested in contact::shortest_path::settings.
    let c = &s.collision;
    assert_eq!((c.friction, c.max_correction), (0.4, 0.001));
    assert!(
        c.query_all_vertices && c.query_edges && c.infeasible_region_culling,
        "defaults"
    );
    for (o, field) in [
        ("collision.friction=-0.1", "collision.friction"),
        ("collision.contact_offset=-1.0", "collision.contact_offset"),
        ("collision.start_time=-1.0", "collision.start_time"),
        ("collision.max_correction=0.0", "collision.max_correction"),
        (
            "collision.penalty_stiffness=0.0",
            "collision.penalty_stiffness",
        ),
        (
            "collision.penalty_stiffness=nan",
            "collision.penalty_stiffness",
        ),
        (
            "solver.newton_gradient_tolerance=-1.0",
            "solver.newton_gradient_tolerance",
        ),
        ("collision.relaxation=2.0", "collision.relaxation"),
        ("collision.ccd_distance=0.0", "collision.ccd_distance"),
        ("collision.response_passes=0", "collision.response_passes"),
        ("collision.detection=\"sometimes\"", "collision.detection"),
    ] {
        let e = Scene::parse(CUBE, "cube.toml", &set(&[o])).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{o}: {e}");
    }
    let coil = |size: &str| {
        format!(
            "[[body]]\nname = \"c\"\nmesh = {{ generator = \"coil\", size = {size}, cells = [2, 1, 1] }}\n\
             material = {{ model = \"stable-neo-hookean\", youngs_modulus = 1e4, poisson_ratio = 0.4, density = 1000.0 }}\n"
        )
    };
    Scene::parse(&coil("[1.0, 0.04, 0.1]"), "coil.toml", &[]).unwrap();
    let e = Scene::parse(&coil("[1.0, 0.04, 0.03]"), "coil.toml", &[]).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("body[0].mesh.size"), "{e}");
    assert!(e.message.contains("radius"), "{e}");
}

#[test]
fn motion_stop_times_are_validated() {
    let body = |extra: &str| {
        format!(
            "[[body]]\nname = \"c\"\nmesh = {{ generator = \"cloth\", size = [0.1, 0.1, 0.0], cells = [2, 2, 1] }}\n\
             material = {{ model = \"cloth\", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }}\n\
             motion = [{{ vertices = {{ indices = [0] }}, velocity = [0.1, 0.0, 0.0]{extra} }}]\n"
        )
    };
    let s = Scene::parse(&body(", until = 0.5"), "m.toml", &[]).unwrap();
    assert_eq!(s.bodies[0].motion[0].until, Some(0.5));
    for (extra, field) in [
        (", until = -0.5", "body[0].motion[0].until"),
        (", until = nan", "body[0].motion[0].until"),
        (", until = inf", "body[0].motion[0].until"),
        (
            ", angular_velocity = inf",
            "body[0].motion[0].angular_velocity",
        ),
    ] {
        let e = Scene::parse(&body(extra), "m.toml", &[]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{extra}: {e}");
    }
}

#[test]
fn tube_funnel_and_knot_tube_generators_are_validated() {
    let body = |generator: &str, size: &str, cells: &str, model: &str| {
        format!(
            "[[body]]\nname = \"t\"\nmesh = {{ generator = \"{generator}\", size = {size}, cells = {cells} }}\n\
             material = {{ model = \"{model}\", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001 }}\n"
        )
    };
    for (g, size, cells) in [
        ("tube", "[0.1, 0.6, 0.0]", "[16, 10, 1]"),
        ("funnel", "[0.3, 0.05, 0.2]", "[24, 6, 1]"),
        ("knot-tube", "[0.05, 0.02, 0.1]", "[8, 120, 1]"),
        ("reef-knot", "[0.03, 0.01, 0.1]", "[8, 80, 1]"),
        ("bow-knot", "[0.03, 0.01, 0.1]", "[8, 112, 1]"),
    ] {
        let s = Scene::parse(&body(g, size, cells, "cloth"), "t.toml", &[]).unwrap();
        let MeshSource::Generator { generator, .. } = s.bodies[0].mesh else {
            panic!("generator")
        };
        assert!(generator.is_cloth(), "{g}");
        let e =
            Scene::parse(&body(g, size, cells, "stable-neo-hookean"), "t.toml", &[]).unwrap_err();
        assert_eq!(
            e.field.as_deref(),
            Some("body[0].material.model"),
            "{g}: {e}"
        );
    }
    for (g, size, cells, field, says) in [
        (
            "tube",
            "[0.0, 0.6, 0.0]",
            "[16, 10, 1]",
            "body[0].mesh.size",
            "positive",
        ),
        (
            "tube",
            "[0.1, 0.6, 0.0]",
            "[2, 10, 1]",
            "body[0].mesh.cells",
            "around",
        ),
        (
            "tube",
            "[0.1, 0.6, 0.0]",
            "[16, 0, 1]",
            "body[0].mesh.cells",
            "1..=1000",
        ),
        (
            "funnel",
            "[0.3, 0.0, 0.2]",
            "[24, 6, 1]",
            "body[0].mesh.size",
            "positive",
        ),
        (
            "funnel",
            "[0.3, 0.05, -0.2]",
            "[24, 6, 1]",
            "body[0].mesh.size",
            "positive",
        ),
        (
            "funnel",
            "[0.3, 0.05, 0.2]",
            "[24, 0, 1]",
            "body[0].mesh.cells",
            "1..=1000",
        ),
        (
            "knot-tube",
            "[0.05, 0.03, 0.1]",
            "[8, 120, 1]",
            "body[0].mesh.size",
            "half",
        ),
        (
            "knot-tube",
            "[0.05, 0.02, 0.0]",
            "[8, 120, 1]",
            "body[0].mesh.size",
            "positive",
        ),
        (
            "knot-tube",
            "[0.05, 0.02, 0.1]",
            "[8, 4, 1]",
            "body[0].mesh.cells",
            "segments",
        ),
        (
            "reef-knot",
            "[0.03, 0.012, 0.1]",
            "[8, 80, 1]",
            "body[0].mesh.size",
            "0.4 times",
        ),
        (
            "bow-knot",
            "[0.03, 0.01, -0.1]",
            "[8, 80, 1]",
            "body[0].mesh.size",
            "positive",
        ),
        (
            "bow-knot",
            "[0.03, 0.01, 0.1]",
            "[2, 80, 1]",
            "body[0].mesh.cells",
            "around",
        ),
        (
            "reef-knot",
            "[0.03, 0.01, 0.1]",
            "[8, 7, 1]",
            "body[0].mesh.cells",
            "segments",
        ),
    ] {
        let e = Scene::parse(&body(g, size, cells, "cloth"), "t.toml", &[]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{g} {size} {cells}: {e}");
        assert!(e.message.contains(says), "{g} {size} {cells}: {e}");
    }
}

#[test]
fn arch_generator_is_validated_by_field() {
    let body = |size: &str, cells: &str| {
        format!(
            "[[body]]\nname = \"arch\"\nmesh = {{ generator = \"arch\", size = {size}, cells = {cells} }}\n\
             material = {{ model = \"stable-neo-hookean\", youngs_modulus = 1e8, poisson_ratio = 0.4, density = 2000.0 }}\n"
        )
    };
    let s = Scene::parse(&body("[0.5, 0.1, 0.2]", "[9, 2, 1]"), "a.toml", &[]).unwrap();
    let MeshSource::Generator { generator, .. } = s.bodies[0].mesh else {
        panic!("generator")
    };
    assert_eq!(generator, Generator::Arch);
    assert!(!generator.is_cloth());
    for (size, cells, field, says) in [
        (
            "[0.0, 0.1, 0.2]",
            "[9, 2, 1]",
            "body[0].mesh.size",
            "positive",
        ),
        (
            "[0.5, -0.1, 0.2]",
            "[9, 2, 1]",
            "body[0].mesh.size",
            "positive",
        ),
        (
            "[0.5, 0.1, nan]",
            "[9, 2, 1]",
            "body[0].mesh.size",
            "positive",
        ),
        (
            "[0.5, 0.1, 0.2]",
            "[2, 2, 1]",
            "body[0].mesh.cells",
            "3..=1000 voussoirs",
        ),
        (
            "[0.5, 0.1, 0.2]",
            "[9, 0, 1]",
            "body[0].mesh.cells",
            "1..=1000",
        ),
        (
            "[0.5, 0.1, 0.2]",
            "[9, 2, 0]",
            "body[0].mesh.cells",
            "1..=1000",
        ),
        // 600 stones of 2.6 mm on the inner radius, joints of 0.5 mm.
        (
            "[0.5, 0.1, 0.2]",
            "[600, 1, 1]",
            "body[0].mesh.size",
            "10 joint widths",
        ),
    ] {
        let e = Scene::parse(&body(size, cells), "a.toml", &[]).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{size} {cells}: {e}");
        assert!(e.message.contains(says), "{size} {cells}: {e}");
    }
}

#[test]
fn load_reports_missing_files_and_resolves_mesh_paths() {
    let e = Scene::load(Path::new("/nonexistent/scene.toml"), &[]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/nonexistent/scene.toml: cannot read"),
        "{e}"
    );
    let dir = std::env::temp_dir().join(format!("supple-scene-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("s.toml"), CUBE).unwrap();
    let s = Scene::load(&dir.join("s.toml"), &[]).unwrap();
    let MeshSource::File { file } = &s.bodies[1].mesh else {
        panic!("file mesh")
    };
    assert_eq!(file, &dir.join("sheet.obj"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn repository_scenes_are_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            Scene::load(&p, &[]).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(
        n >= 6,
        "expected the scenes of the simulation issue, found {n}"
    );
}

/// Every kind of error (type, unknown field, length, variant, missing field, range) names the
/// field path and the file's line, with or without unrelated `--set` overrides, and mentions
/// `--set` only when an override's value is at fault.
#[test]
fn every_error_names_the_field_and_the_line_whatever_the_flags() {
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // (edit of CUBE, field path, line, words the message must hold)
    let cases: [(&str, &str, &str, usize, &str); 9] = [
        (
            "youngs_modulus = 5e5",
            "youngs_modulus = \"100 kPa\"",
            "body[0].material.youngs_modulus",
            11,
            "invalid type",
        ),
        (
            "substeps = 2",
            "substeps = 2\nsubstep_count = 3",
            "simulation.substep_count",
            5,
            "substep_count",
        ),
        (
            "translation = [0.0, 0.0, 0.35]",
            "translation = [0.0, 0.35]",
            "body[0].translation",
            10,
            "3",
        ),
        (
            "translation = [0.0, 0.0, 0.35]",
            "translation = [0.0, 0.0, 0.35, 1.0]",
            "body[0].translation",
            10,
            "4",
        ),
        (
            "model = \"cloth\"",
            "model = \"jelly\"",
            "body[1].material.model",
            16,
            "jelly",
        ),
        (
            ", density = 1000.0 }",
            " }",
            "body[0].material.density",
            11,
            "density",
        ),
        (
            "poisson_ratio = 0.3, density = 1000.0",
            "poisson_ratio = 0.5, density = 1000.0",
            "body[0].material.poisson_ratio",
            11,
            "got 0.5",
        ),
        (
            "gravity = [0.0, 0.0, -9.81]",
            "gravity = [0.0, \"down\", -9.81]",
            "simulation.gravity[1]",
            5,
            "invalid type",
        ),
        (
            "cells = [10, 10, 10]",
            "cells = [100000, 100000, 100000]",
            "body[0].mesh.cells",
            9,
            "100000",
        ),
    ];
    let flags = [
        vec![],
        set(&["simulation.frames=1"]),
        set(&["output.export=\"obj\"", "simulation.substeps=3"]),
    ];
    for (from, to, field, line, words) in cases {
        let text = CUBE.replacen(from, to, 1);
        assert_ne!(text, CUBE, "{from}");
        for f in &flags {
            let e = Scene::parse(&text, "cube.toml", f).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{to} {f:?}: {e}");
            assert_eq!(e.line, Some(line), "{to} {f:?}: {e}");
            assert!(e.message.contains(words), "{to} {f:?}: {e}");
            assert!(!e.to_string().contains("--set"), "{to} {f:?}: {e}");
            let shown = e.to_string();
            assert!(
                shown.starts_with(&format!("cube.toml:{line}: {field}: ")),
                "{shown}"
            );
        }
    }
    // An override's own value at fault: the error names that override, not a line.
    for (o, field) in [
        (
            "body[0].material.youngs_modulus=\"100 kPa\"",
            "body[0].material.youngs_modulus",
        ),
        ("body.1.velocity=[0, 1]", "body[1].velocity"),
        ("simulation.substeps=0", "simulation.substeps"),
        ("collision.method=\"sideways\"", "collision.method"),
    ] {
        let e = Scene::parse(CUBE, "cube.toml", &set(&["simulation.frames=1", o])).unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{o}: {e}");
        assert_eq!(e.line, None, "{o}: {e}");
        assert!(e.to_string().contains(&format!("--set {o}")), "{o}: {e}");
        assert!(!e.to_string().contains("frames"), "{o}: {e}");
    }
}
