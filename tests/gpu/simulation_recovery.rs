//! Shortest-path collision handling inside the XPBD (and Newton) simulation on lavapipe (checked with the
//! independent exact checker `supple::intersection_check`):
//! - recovery: two soft cubes that start overlapping by a third of their width are pushed
//!   apart until no boundary triangles intersect, while the same scene without collision
//!   handling stays intersecting;
//! - a soft cube dropped onto another: without handling it sinks through, with handling the
//!   last frames are intersection-free and it rests on top;
//! - runs are bit-identical and the telemetry counts the work;
//! - the paper scenes end intersection-free, with the hybrid and with the Newton penalty.

use supple::intersection_check::frame_intersections;
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple_gpu_tests::{assert_no_validation_errors, body_surface, context};

const HEADER: &str = r#"
[simulation]
frame_rate = 60.0
frames = 1
gravity = [0.0, 0.0, -9.81]
solver = "xpbd"
[xpbd]
substeps = 10
iterations = 3
damping = 2.0
[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
friction = 0.5
"#;

fn cube(name: &str, at: [f64; 3], v: [f64; 3]) -> String {
    format!(
        r#"
[[body]]
name = "{name}"
mesh = {{ generator = "box6", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }}
translation = [{}, {}, {}]
velocity = [{}, {}, {}]
material = {{ model = "stable-neo-hookean", youngs_modulus = 5e4, poisson_ratio = 0.4, density = 500.0 }}
"#,
        at[0], at[1], at[2], v[0], v[1], v[2]
    )
}

struct Run {
    intersecting: Vec<usize>,
    final_positions: Vec<[f64; 3]>,
    collisions: u32,
    traversals: u32,
    bodies: Vec<std::ops::Range<u32>>,
}

fn run(name: &str, toml: &str, frames: u32) -> Run {
    let ctx = context(false);
    let scene = Scene::parse(toml, name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut sim = Simulation::new(&ctx, &scene).unwrap_or_else(|e| panic!("{name}: {e}"));
    let surface = body_surface(&sim);
    let mut intersecting = Vec::new();
    let (mut collisions, mut traversals) = (0, 0);
    let mut x = sim.positions().expect("positions");
    for f in 0..frames {
        let st = sim
            .step_frame()
            .unwrap_or_else(|e| panic!("{name} frame {f}: {e}"));
        x = sim.positions().expect("positions");
        assert!(
            x.iter().flatten().all(|c| c.is_finite()),
            "{name} frame {f}: non-finite positions"
        );
        intersecting.push(frame_intersections(&surface, &x).len());
        let r = st.contact::<supple::contact::shortest_path::ShortestPathFrameStats>();
        assert_eq!(r.counters.overflows, 0, "{name} frame {f}: {r:?}");
        collisions += r.collisions;
        traversals += r.counters.traversals;
    }
    assert_no_validation_errors(&ctx);
    Run {
        bodies: sim
            .model()
            .bodies
            .iter()
            .map(|b| b.vertices.clone())
            .collect(),
        intersecting,
        final_positions: x,
        collisions,
        traversals,
    }
}

#[test]
fn overlapping_cubes_are_pushed_apart() {
    let bodies = cube("a", [0.0, 0.0, 0.05], [0.0; 3]) + &cube("b", [0.067, 0.0, 0.05], [0.0; 3]);
    let on = format!("{HEADER}\n[collision]\nmethod = \"shortest-path\"\n{bodies}");
    let off = format!("{HEADER}\n{bodies}");
    let with = run("recover", &on, 30);
    let without = run("no handling", &off, 30);
    eprintln!(
        "with handling: intersecting pairs per frame {:?}; {} collisions, {} traversals",
        with.intersecting, with.collisions, with.traversals
    );
    eprintln!("without: {:?}", without.intersecting);
    assert!(
        without.intersecting.iter().all(|&k| k > 0),
        "the overlap must persist without handling"
    );
    assert!(with.collisions > 0 && with.traversals > 0);
    assert!(
        with.intersecting[20..].iter().all(|&k| k == 0),
        "the cubes must be apart within 20 frames: {:?}",
        with.intersecting
    );
}

#[test]
fn dropped_cube_rests_on_the_other_and_runs_are_deterministic() {
    let bodies = cube("below", [0.0, 0.0, 0.05], [0.0; 3])
        + &cube("above", [0.0, 0.0, 0.16], [0.0, 0.0, -0.5]);
    let on = format!("{HEADER}\n[collision]\nmethod = \"shortest-path\"\nfriction = 0.3\n{bodies}");
    let off = format!("{HEADER}\n{bodies}");
    let a = run("drop", &on, 40);
    let b = run("drop again", &on, 40);
    let without = run("drop without handling", &off, 40);
    eprintln!("with handling: {:?}", a.intersecting);
    eprintln!("without: {:?}", without.intersecting);
    assert!(
        without.intersecting.iter().any(|&k| k > 0),
        "without handling the cubes must meet"
    );
    assert!(
        a.intersecting[30..].iter().all(|&k| k == 0),
        "{:?}",
        a.intersecting
    );
    assert_eq!(a.final_positions, b.final_positions, "runs differ");
    // The upper cube rests on the lower one: its lowest vertex above the lower cube's top face
    // (minus the residual penetration tolerance of discrete detection).
    let (below, above) = (&a.bodies[0], &a.bodies[1]);
    let z = |r: &std::ops::Range<u32>| {
        a.final_positions[r.start as usize..r.end as usize]
            .iter()
            .map(|p| p[2])
    };
    let top_below = z(below).fold(f64::MIN, f64::max);
    let bottom_above = z(above).fold(f64::MAX, f64::min);
    assert!(
        bottom_above > top_below - 5e-3,
        "{bottom_above} vs {top_below}"
    );
}

#[test]
fn methods_need_their_solvers() {
    let ctx = context(false);
    let body = cube("a", [0.0, 0.0, 0.05], [0.0; 3]);
    for (solver, method, extra, field) in [
        ("symplectic-euler", "shortest-path", "", "collision.method"),
        ("xpbd", "two-way", "", "collision.method"),
        // The Newton penalty uses discrete detection only.
        (
            "newton",
            "shortest-path",
            "detection = \"ccd\"\n",
            "collision.detection",
        ),
    ] {
        let toml = format!(
            "[simulation]\nsolver = \"{solver}\"\n[collision]\nmethod = \"{method}\"\n{extra}{body}"
        );
        let scene = Scene::parse(&toml, "s.toml", &[]).expect("valid scene file");
        let e = match Simulation::new(&ctx, &scene) {
            Ok(_) => panic!("{solver} + {method} {extra} must be refused"),
            Err(e) => e.to_string(),
        };
        assert!(e.starts_with(field), "{e}");
    }
    assert_no_validation_errors(&ctx);
}

/// The shortest-path paper's scenes in `scenes/` (at lavapipe sizes) end intersection-free with
/// the hybrid detection: the last five frames are checked with the exact checker.
#[test]
fn paper_scenes_end_intersection_free_with_the_hybrid() {
    let ctx = context(false);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenes");
    for (file, frames) in [
        ("recover_noodle.toml", 30),
        ("squishy_collide.toml", 30),
        ("squishy_flatten.toml", 90),
        ("eight_bodies_box.toml", 60),
        ("twist_beam_xpbd.toml", 240),
    ] {
        let path = std::path::Path::new(dir).join(file);
        let scene = Scene::load(&path, &[]).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            scene.collision.detection,
            supple::contact::shortest_path::DetectionMode::Hybrid,
            "{file}"
        );
        let mut sim = Simulation::new(&ctx, &scene).unwrap_or_else(|e| panic!("{file}: {e}"));
        let surface = body_surface(&sim);
        let mut last = Vec::new();
        for f in 0..frames {
            sim.step_frame()
                .unwrap_or_else(|e| panic!("{file} frame {f}: {e}"));
            if f + 5 >= frames {
                let x = sim.positions().expect("positions");
                last.push(frame_intersections(&surface, &x).len());
            }
        }
        eprintln!("{file}: intersecting triangle pairs in the last 5 of {frames} frames: {last:?}");
        assert!(last.iter().all(|&k| k == 0), "{file}: {last:?}");
    }
    assert_no_validation_errors(&ctx);
}

/// The Newton variant (`scenes/squishy_collide_newton.toml`, the paper's Eq. 7 penalty): the
/// penalty acts on the impact and the last ten frames are intersection-free.
#[test]
fn newton_penalty_scene_recovers_from_the_impact() {
    let ctx = context(false);
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenes/squishy_collide_newton.toml"
    );
    let scene = Scene::load(std::path::Path::new(path), &[]).expect("scene");
    assert_eq!(scene.simulation.solver, supple::scene::SolverKind::Newton);
    let mut sim = Simulation::new(&ctx, &scene).expect("simulation");
    let surface = body_surface(&sim);
    let (mut counts, mut constraints) = (Vec::new(), 0);
    for f in 0..scene.simulation.frames {
        let st = sim
            .step_frame()
            .unwrap_or_else(|e| panic!("frame {f}: {e}"));
        constraints += st
            .contact::<supple::contact::shortest_path::ShortestPathFrameStats>()
            .collisions;
        let x = sim.positions().expect("positions");
        counts.push(frame_intersections(&surface, &x).len());
    }
    eprintln!(
        "intersecting triangle pairs per frame: {counts:?}; {constraints} penalty constraints"
    );
    assert!(constraints > 0, "the penalty never acted");
    assert!(counts.iter().rev().take(10).all(|&k| k == 0), "{counts:?}");
    assert_no_validation_errors(&ctx);
}
