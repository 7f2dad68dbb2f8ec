//! Colliders that are never entered (issue 26, item 1): with every solver, no vertex ends a
//! frame closer to an analytic collider (at the frame's time) than the collider's `offset`,
//! plus the vertex's body's `collider_offset`, static or moving. Small scenes in contact from the first frame (Newton's barrier, XPBD's and
//! symplectic Euler's projections, a collider moving into a body), then a few frames of every
//! scene in `scenes/` with colliders (the full scenes: `benches/colliders_never_entered.sh`).
//! Distances are computed here in f64 from the positions the simulation hands out (the
//! exported values), independently of the kernels' f32 arithmetic.

use supple::contact::colliders::{from_scene, Collider};
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple_gpu_tests::{assert_no_validation_errors, context};

/// Per collider, the smallest distance of any vertex above its offset surface (the collider's
/// offset plus the vertex's clearance `clearance[v]`) at time `t` (m).
fn margins(colliders: &[Collider], x: &[[f64; 3]], clearance: &[f64], t: f64) -> Vec<f64> {
    colliders
        .iter()
        .map(|c| {
            x.iter()
                .zip(clearance)
                .map(|(p, e)| c.gap(&nalgebra::Vector3::from(*p), t).0 - c.offset - e)
                .fold(f64::INFINITY, f64::min)
        })
        .collect()
}

/// Steps `frames` frames of `scene`, asserting after each (and at the start when `start` is
/// set) that no vertex is closer to a collider than its offset; returns the smallest margin
/// per collider over the stepped frames and the positions at the end.
fn run(name: &str, scene: &Scene, frames: u32, start: bool) -> (Vec<f64>, Vec<[f64; 3]>) {
    let ctx = context(false);
    let colliders = from_scene(scene);
    let mut sim = Simulation::new(&ctx, scene).unwrap_or_else(|e| panic!("{name}: {e}"));
    // Each body's clearance, from the scene (not from the engine's model).
    let mut clearance = Vec::new();
    for (b, r) in scene.bodies.iter().zip(&sim.model().bodies) {
        clearance.resize(r.vertices.end as usize, b.collider_offset);
    }
    if start {
        let x = sim.positions().expect("positions");
        for (c, m) in margins(&colliders, &x, &clearance, 0.0).iter().enumerate() {
            assert!(
                *m >= 0.0,
                "{name} at the start: collider[{c}] entered by {m} m"
            );
        }
    }
    let mut lowest = vec![f64::INFINITY; colliders.len()];
    for f in 1..=frames {
        sim.step_frame()
            .unwrap_or_else(|e| panic!("{name} frame {f}: {e}"));
        let x = sim.positions().expect("positions");
        for (c, m) in margins(&colliders, &x, &clearance, sim.time())
            .iter()
            .enumerate()
        {
            assert!(
                *m >= 0.0,
                "{name} frame {f}: a vertex is {:.3e} m inside collider[{c}]'s offset",
                -m
            );
            lowest[c] = lowest[c].min(*m);
        }
    }
    let x = sim.positions().expect("positions");
    drop(sim);
    assert_no_validation_errors(&ctx);
    (lowest, x)
}

fn parse(name: &str, text: &str, overrides: &[&str]) -> Scene {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    Scene::parse(text, name, &overrides).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A cloth sheet 1 mm above a sphere's offset surface (5 mm thick) and a ground with a 2 mm
/// offset: it drapes over the sphere from the first frame.
const CLOTH_ON_SPHERE: &str = r#"
[simulation]
frame_rate = 60.0
solver = "newton"
[solver]
newton_max_iterations = 3
pcg_max_iterations = 100
pcg_tolerance = 1e-3
[[body]]
name = "cloth"
mesh = { generator = "cloth", size = [0.3, 0.3, 0.0], cells = [10, 10, 1] }
translation = [0.0, 0.0, 0.306]
velocity = [0.0, 0.0, -0.5]
material = { model = "cloth", youngs_modulus = 2.6667e7, poisson_ratio = 0.33333, density = 200.0, thickness = 0.001, bending_stiffness = 1e-3 }
[[collider]]
shape = { sphere = { center = [0.0, 0.0, 0.2], radius = 0.1 } }
friction = 0.3
offset = 0.005
[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
friction = 0.3
offset = 0.002
"#;

#[test]
fn newton_cloth_on_a_sphere_never_enters_its_offset() {
    let scene = parse("cloth_on_sphere", CLOTH_ON_SPHERE, &[]);
    let (lowest, _) = run("newton cloth on sphere", &scene, 12, true);
    // In contact: the barrier (d̂ = 1 mm) holds the cloth just above the offset surface.
    assert!(lowest[0] < 1e-3, "the cloth reached the sphere: {lowest:?}");
}

#[test]
fn xpbd_cloth_on_a_sphere_never_enters_its_offset() {
    let scene = parse(
        "cloth_on_sphere",
        CLOTH_ON_SPHERE,
        &["simulation.solver=\"xpbd\""],
    );
    let (lowest, _) = run("xpbd cloth on sphere", &scene, 12, true);
    assert!(
        lowest[0] < 1e-4,
        "projected onto the offset surface: {lowest:?}"
    );
}

/// The cloth keeps a 4 mm clearance of its own (`body.collider_offset`) on top of the sphere's
/// 5 mm offset, starting 3 mm above that: it drapes over the sphere at 9 mm from it, with
/// Newton alone, Newton and the two-way method (its own collider bound and targets), and XPBD.
#[test]
fn a_body_clearance_is_kept_by_every_solver() {
    for (label, extra) in [
        ("newton", vec![]),
        ("newton two-way", vec!["collision.method=\"two-way\""]),
        ("xpbd", vec!["simulation.solver=\"xpbd\""]),
    ] {
        let mut overrides = vec![
            "body[0].collider_offset=0.004",
            "body[0].translation=[0.0, 0.0, 0.312]",
        ];
        overrides.extend(extra);
        let scene = parse("cloth_on_sphere", CLOTH_ON_SPHERE, &overrides);
        let (lowest, _) = run(&format!("{label} clearance"), &scene, 12, true);
        // In contact with the clearance surface, not merely above it.
        assert!(
            lowest[0] < 1e-3,
            "{label}: the cloth never reached its clearance: {lowest:?}"
        );
    }
}

#[test]
fn symplectic_euler_refuses_a_body_clearance() {
    let scene = parse(
        "ground",
        r#"
[simulation]
solver = "symplectic-euler"
[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }
translation = [0.0, 0.0, 0.06]
collider_offset = 0.004
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
"#,
        &[],
    );
    let ctx = context(false);
    let e = Simulation::new(&ctx, &scene).err().expect("refused");
    assert!(e.to_string().contains("body[0].collider_offset"), "{e}");
}

/// A soft cube resting 1 mm above a ground plane that rises at 0.3 m/s (a moving collider
/// pushing a body), with a 3 mm offset.
const RISING_GROUND: &str = r#"
[simulation]
frame_rate = 60.0
solver = "newton"
[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }
translation = [0.0, 0.0, 0.054]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
velocity = [0.0, 0.0, 0.3]
offset = 0.003
"#;

fn rising_ground(solver: &str) {
    let scene = parse(
        "rising_ground",
        RISING_GROUND,
        &[&format!("simulation.solver=\"{solver}\"")],
    );
    let frames = 10;
    let (lowest, x) = run(&format!("{solver} rising ground"), &scene, frames, true);
    // The ground rose 5 cm and carried the cube with it.
    let zmin = x.iter().map(|p| p[2]).fold(f64::INFINITY, f64::min);
    let ground = 0.3 * frames as f64 / 60.0 + 0.003;
    assert!(
        zmin >= ground && zmin < ground + 2e-3,
        "{solver}: the cube's bottom at {zmin} m, the ground's offset surface at {ground} m ({lowest:?})"
    );
}

#[test]
fn newton_a_rising_ground_pushes_a_cube_without_being_entered() {
    rising_ground("newton");
}

#[test]
fn xpbd_a_rising_ground_pushes_a_cube_without_being_entered() {
    rising_ground("xpbd");
}

#[test]
fn symplectic_euler_ground_offset_is_never_entered() {
    let scene = parse(
        "ground_offset",
        r#"
[simulation]
frame_rate = 60.0
solver = "symplectic-euler"
substeps = 20
[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }
translation = [0.0, 0.0, 0.06]
velocity = [0.0, 0.0, -1.0]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
offset = 0.008
"#,
        &[],
    );
    let (lowest, _) = run("symplectic ground offset", &scene, 6, true);
    assert!(lowest[0] < 1e-4, "landed on the offset surface: {lowest:?}");
}

/// The scenes issue 26 names.
const NAMED: [&str; 4] = [
    "cloth_sphere_32",
    "cloth_sphere_64",
    "paper_sphere",
    "default",
];

/// Every scene in `scenes/` with colliders, for a frame or two each (to keep the suite short;
/// the full runs are the benchmark's).
#[test]
fn every_scene_with_colliders_keeps_out_of_them_for_a_few_frames() {
    let dir = format!("{}/../../scenes", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenes")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut checked = Vec::new();
    for path in files {
        let scene = Scene::load(&path, &[]).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        if scene.colliders.is_empty() {
            continue;
        }
        let name = path
            .file_stem()
            .expect("name")
            .to_string_lossy()
            .to_string();
        // The four scenes the issue names get two frames, the rest one (the suite stays short).
        let frames = if NAMED.contains(&name.as_str()) { 2 } else { 1 };
        run(&name, &scene, frames, false);
        checked.push(name);
    }
    for must in NAMED {
        assert!(checked.iter().any(|n| n == must), "{must} not checked");
    }
    println!("checked {} scenes: {checked:?}", checked.len());
}

#[test]
fn a_bad_offset_is_refused_naming_the_field() {
    for bad in ["-0.001", "nan", "inf"] {
        let text = format!(
            "[[collider]]\nshape = {{ plane = {{ normal = [0.0, 0.0, 1.0], offset = 0.0 }} }}\noffset = {bad}\n"
        );
        let e = Scene::parse(&text, "bad_offset", &[])
            .expect_err(bad)
            .to_string();
        assert!(e.contains("collider[0].offset"), "{bad}: {e}");
        // A body's clearance likewise.
        let e = Scene::parse(
            RISING_GROUND,
            "bad_clearance",
            &[format!("body[0].collider_offset={bad}")],
        )
        .expect_err(bad)
        .to_string();
        assert!(e.contains("body[0].collider_offset"), "{bad}: {e}");
    }
    // Between frames too (`Simulation::set_collider`), and the collider stays as it was.
    let ctx = context(false);
    let scene = parse("rising_ground", RISING_GROUND, &[]);
    let mut sim = Simulation::new(&ctx, &scene).expect("simulation");
    let before = sim.collider(0).expect("collider");
    let mut bad = before.clone();
    bad.offset = -1.0;
    let e = sim.set_collider(0, bad).expect_err("negative offset");
    assert!(e.to_string().contains("collider.offset"), "{e}");
    assert_eq!(sim.collider(0).expect("collider"), before);
    drop(sim);
    assert_no_validation_errors(&ctx);
}
