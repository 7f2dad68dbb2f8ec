//! Collision handling inside the simulation (Newton + two-way IPM after every iteration) on
//! lavapipe: a cloth folding onto itself over a thin bar, two sheets dropped onto each other
//! (between bodies), rods (centreline curves) dropped onto a cloth and onto each other. Every
//! frame is checked with the
//! independent exact checker: no intersecting frame, no collision on the straight-line motion
//! between consecutive frames, and the collision telemetry is reported. Also the two-way IPM
//! paper's tube (Fig. 23) and blade (Fig. 22, dt = 1/20 s) scenes at small size.

use supple::intersection_check::{frame_intersections, trajectory_check};
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple_gpu_tests::{assert_no_validation_errors, body_surface, context};

/// Time stepping, inexact Newton and two-way collision settings shared by the scenes below.
const HEADER: &str = r#"
[simulation]
frame_rate = 60.0
frames = 1
[solver]
newton_max_iterations = 4
pcg_tolerance = 1e-3
[collision]
method = "two-way"
d_min = 0.004
d_max = 0.008
delta = 0.002
"#;

/// [`HEADER`] without gravity and with the paper's D_min = 2 mm, D_max = 4 mm, δ = 1 mm (the
/// tube and knot scenes).
fn paper_header() -> String {
    HEADER
        .replace(
            "frame_rate = 60.0",
            "frame_rate = 60.0\ngravity = [0.0, 0.0, 0.0]",
        )
        .replace("d_min = 0.004", "d_min = 0.002")
        .replace("d_max = 0.008", "d_max = 0.004")
        .replace("delta = 0.002", "delta = 0.001")
}

/// What the exact checker verifies besides every frame being intersection-free.
#[derive(Clone, Copy, PartialEq)]
enum Motion {
    /// The straight line between consecutive frames is collision-free (what a frame checker
    /// outside the engine sees).
    BetweenFrames,
    /// Every forward step of the two-way method (the piecewise-linear trajectory it
    /// guarantees; at large time steps a frame's path can go around an obstacle that the
    /// straight line between its end frames cuts through).
    EveryStep,
}

fn run_checked(name: &str, toml: &str, frames: u32) -> (u32, u32) {
    run_checked_with(name, toml, frames, Motion::BetweenFrames)
}

fn run_checked_with(name: &str, toml: &str, frames: u32, motion: Motion) -> (u32, u32) {
    let ctx = context(false);
    let set: &[String] = match motion {
        Motion::EveryStep => &["collision.steps_per_batch=1".to_string()],
        Motion::BetweenFrames => &[],
    };
    let scene = Scene::parse(toml, name, set).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut sim = Simulation::new(&ctx, &scene).unwrap_or_else(|e| panic!("{name}: {e}"));
    let surface = body_surface(&sim);
    let states = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Vec<[f64; 3]>>::new()));
    if motion == Motion::EveryStep {
        let sink = states.clone();
        sim.observe_collision_steps(Some(Box::new(move |x: &[[f32; 4]]| {
            let x = x.iter().map(|p| [p[0] as f64, p[1] as f64, p[2] as f64]);
            sink.lock().expect("observer sink").push(x.collect());
        })))
        .expect("observer");
    }
    let mut prev = sim.positions().expect("positions");
    assert!(
        frame_intersections(&surface, &prev).is_empty(),
        "{name}: start intersects"
    );
    let (mut steps, mut pairs) = (0, 0);
    for f in 0..frames {
        let st = sim
            .step_frame()
            .unwrap_or_else(|e| panic!("{name} frame {f}: {e}"));
        let x = sim.positions().expect("positions");
        assert!(
            x.iter().flatten().all(|c| c.is_finite()),
            "{name} frame {f}: non-finite positions"
        );
        let hits = frame_intersections(&surface, &x);
        assert!(
            hits.is_empty(),
            "{name} frame {f}: {} intersecting pairs, first {:?}",
            hits.len(),
            hits.first()
        );
        // The straight frame-to-frame motion, or every forward step of the frame.
        let mut path = vec![prev.clone()];
        path.extend(states.lock().expect("observer sink").drain(..));
        if motion == Motion::BetweenFrames {
            path.push(x.clone());
        } else {
            assert!(path.len() > 1, "{name} frame {f}: no step observed");
            let last = &path[path.len() - 1];
            assert!(
                last.iter().zip(&x).all(|(a, b)| a == b),
                "{name} frame {f}: the frame is not the last safe state"
            );
        }
        for (k, w) in path.windows(2).enumerate() {
            let traj = trajectory_check(&surface, &w[0], &w[1], 1e-9);
            assert!(
                traj.is_clean(),
                "{name} frame {f} segment {k}: {} collisions, {} uncertain on the motion",
                traj.collisions.len(),
                traj.uncertain.len()
            );
        }
        let c = st.contact::<supple::contact::two_way::CollisionFrameStats>();
        assert!(
            c.solves > 0 && c.steps >= c.solves,
            "{name} frame {f}: {c:?}"
        );
        if let Some(d) = c.min_distance {
            assert!(d > 0.0, "{name} frame {f}: {c:?}");
        }
        steps += c.steps;
        pairs = pairs.max(c.contact_pairs);
        prev = x;
    }
    assert_no_validation_errors(&ctx);
    (steps, pairs)
}

/// Two cloth sheets (different bodies) dropped crosswise onto a sphere: the upper one lands on
/// the lower one.
#[test]
fn stacked_sheets_on_a_sphere_never_intersect() {
    let toml = &format!(
        "{HEADER}{}",
        r#"
[[body]]
name = "lower"
mesh = { generator = "cloth", size = [0.4, 0.4, 0.0], cells = [10, 10, 1] }
translation = [0.0, 0.0, 0.32]
material = { model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-4 }
[[body]]
name = "upper"
mesh = { generator = "cloth", size = [0.4, 0.4, 0.0], cells = [10, 10, 1] }
translation = [0.013, 0.007, 0.36]
rotation_deg = [0.0, 0.0, 30.0]
material = { model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-4 }
[[collider]]
shape = { sphere = { center = [0.0, 0.0, 0.15], radius = 0.15 } }
friction = 0.3
"#
    );
    let (steps, pairs) = run_checked("stacked_sheets", toml, 24);
    assert!(
        pairs > 0,
        "the sheets never came within the search distance"
    );
    assert!(steps > 24);
}

/// A cloth draped over a thin box bar folds down on both sides; with self-collision its layers
/// stay apart.
#[test]
fn cloth_folding_over_a_bar_never_intersects_itself() {
    let toml = &format!(
        "{HEADER}{}",
        r#"
[[body]]
name = "cloth"
mesh = { generator = "cloth", size = [0.5, 0.3, 0.0], cells = [16, 8, 1] }
translation = [0.0, 0.0, 0.32]
material = { model = "cloth", youngs_modulus = 5e5, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-5 }
[[collider]]
shape = { box = { min = [-0.02, -0.5, 0.0], max = [0.02, 0.5, 0.3] } }
friction = 0.5
[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
friction = 0.5
"#
    );
    let (steps, _) = run_checked("cloth_bar", toml, 30);
    assert!(steps >= 30);
}

/// `scenes/sheets_on_sphere.toml`: three sheets dropped onto a sphere land on each other and
/// stay apart. Regression: a NaN in the membrane Hessian (a tiny-shear eigenvector underflowing
/// f32) froze every sheet in place when the first one landed.
#[test]
fn three_sheets_dropped_on_a_sphere_land_on_each_other() {
    let toml = include_str!("../../scenes/sheets_on_sphere.toml");
    let (steps, pairs) = run_checked("sheets_on_sphere", toml, 12);
    assert!(pairs > 0, "the sheets never met");
    assert!(steps > 12);
}

/// A rod (0.4 m, radius 1 mm, 16 segments) dropped across a cloth lying on a sphere: rod vertices
/// against cloth triangles and rod segments against cloth edges.
#[test]
fn rod_dropped_across_a_cloth_never_crosses_it() {
    let toml = &format!(
        "{HEADER}{}",
        r#"
[[body]]
name = "cloth"
mesh = { generator = "cloth", size = [0.4, 0.4, 0.0], cells = [10, 10, 1] }
translation = [0.0, 0.0, 0.32]
material = { model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-4 }
[[body]]
name = "rod"
mesh = { generator = "rod", size = [0.4, 0.0, 0.0], cells = [16, 1, 1] }
translation = [0.011, 0.007, 0.345]
rotation_deg = [0.0, 0.0, 30.0]
material = { model = "rod", youngs_modulus = 5e7, poisson_ratio = 0.3, density = 1100.0, radius = 0.001 }
[[collider]]
shape = { sphere = { center = [0.0, 0.0, 0.15], radius = 0.15 } }
friction = 0.3
"#
    );
    let (steps, pairs) = run_checked("rod_on_cloth", toml, 24);
    assert!(pairs > 0, "the rod never came within the search distance");
    assert!(steps > 24);
}

/// Two rods crosswise: the lower one pinned at both ends, the upper one dropped onto it
/// (segment–segment contact between bodies).
#[test]
fn rod_dropped_crosswise_onto_a_pinned_rod_never_crosses_it() {
    let toml = &format!(
        "{HEADER}{}",
        r#"
[[body]]
name = "lower"
mesh = { generator = "rod", size = [0.4, 0.0, 0.0], cells = [16, 1, 1] }
translation = [0.0, 0.0, 0.3]
material = { model = "rod", youngs_modulus = 5e7, poisson_ratio = 0.3, density = 1100.0, radius = 0.001 }
fixed = [{ indices = [0, 16] }]
[[body]]
name = "upper"
mesh = { generator = "rod", size = [0.3, 0.0, 0.0], cells = [12, 1, 1] }
translation = [0.013, 0.009, 0.32]
rotation_deg = [0.0, 0.0, 80.0]
material = { model = "rod", youngs_modulus = 5e7, poisson_ratio = 0.3, density = 1100.0, radius = 0.001 }
"#
    );
    let (steps, pairs) = run_checked("rod_on_rod", toml, 24);
    assert!(pairs > 0, "the rods never came within the search distance");
    assert!(steps > 24);
}

/// Two-way IPM paper Fig. 23 at small size: an open cloth tube (8 x 8 cells, no bending) whose
/// end rings turn in opposite directions (pi rad/s each) while moving toward each other, so the
/// middle wrings into a neck whose walls meet (first contacts from frame ~9). Only the first 11
/// frames: a few frames later the neck's contact graph needs more than the coloring's 256 colors
/// (see docs/measurements.md, "Two-way IPM paper scenes").
#[test]
fn twisted_tube_never_intersects_itself() {
    let header = paper_header();
    let toml = &format!(
        "{header}{}",
        r#"
[[body]]
name = "tube"
mesh = { generator = "tube", size = [0.05, 0.25, 0.0], cells = [8, 8, 1] }
translation = [0.0, 0.0, 0.5]
material = { model = "cloth", youngs_modulus = 1e7, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 0.0 }
motion = [
    { vertices = { region = { min = [-0.13, -1.0, 0.0], max = [-0.12, 1.0, 1.0] } }, axis = [1.0, 0.0, 0.0], center = [0.0, 0.0, 0.5], angular_velocity = 3.141592653589793, velocity = [0.05, 0.0, 0.0] },
    { vertices = { region = { min = [0.12, -1.0, 0.0], max = [0.13, 1.0, 1.0] } }, axis = [1.0, 0.0, 0.0], center = [0.0, 0.0, 0.5], angular_velocity = -3.141592653589793, velocity = [-0.05, 0.0, 0.0] },
]
"#
    );
    let (steps, pairs) = run_checked("twisted_tube", toml, 11);
    assert!(
        pairs > 0,
        "the twisted tube's walls never came into contact"
    );
    assert!(steps > 11);
}

/// Two-way IPM paper Fig. 22 at small size: a cloth sheet (8 x 8 cells) dropped onto a static
/// thin tet blade (every vertex fixed) at the paper's dt = 1/20 s; 4 frames: it lands on the edge
/// (from the second frame) and starts to drape (kept short: dense contact at this step is slow).
/// Every forward step is checked: at this time step the cloth wraps the blade's edge within a
/// frame, and the straight line between two frames can cut through the blade although the
/// trajectory went around it.
#[test]
fn sheet_dropped_on_a_blade_at_a_twentieth_of_a_second_never_intersects() {
    let toml = &format!(
        "{}{}",
        HEADER.replace("frame_rate = 60.0", "frame_rate = 20.0"),
        r#"
[[body]]
name = "blade"
mesh = { generator = "box", size = [0.3, 0.006, 0.06], cells = [12, 1, 2] }
translation = [0.0, 0.0, 0.3]
material = { model = "stable-neo-hookean", youngs_modulus = 1e7, poisson_ratio = 0.3, density = 1000.0 }
fixed = [{ region = { min = [-1.0, -1.0, -1.0], max = [1.0, 1.0, 1.0] } }]
[[body]]
name = "sheet"
mesh = { generator = "cloth", size = [0.2, 0.2, 0.0], cells = [8, 8, 1] }
translation = [0.01, 0.02, 0.36]
rotation_deg = [0.0, 0.0, 20.0]
material = { model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-5 }
"#
    );
    let (steps, pairs) = run_checked_with("sheet_on_blade", toml, 4, Motion::EveryStep);
    assert!(pairs > 0, "the sheet never reached the blade");
    assert!(steps > 4);
}

/// Two-way IPM paper Fig. 1 at small size: two cloth tubes tied in a reef knot and in a
/// bow-knot-like knot (ears), their ends pulled apart at 0.5 m/s each so the interlocked bights
/// close on each other; every forward step is checked.
#[test]
fn reef_and_bow_knots_pulled_tight_never_intersect() {
    let header = paper_header();
    // Rope A's end rings are its first and last (6 vertices each), rope B's follow.
    let ring = |first: usize| {
        (first..first + 6)
            .map(|v| v.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (generator, segments) in [("reef-knot", 40), ("bow-knot", 56)] {
        let per_tube = (segments + 1) * 6;
        let toml = format!(
            r#"{header}
[[body]]
name = "knot"
mesh = {{ generator = "{generator}", size = [0.03, 0.01, 0.03], cells = [6, {segments}, 1] }}
translation = [0.0, 0.0, 0.5]
material = {{ model = "cloth", youngs_modulus = 1e7, poisson_ratio = 0.3, density = 300.0, thickness = 0.001, bending_stiffness = 0.0 }}
motion = [
    {{ vertices = {{ indices = [{a0}, {a1}] }}, velocity = [-0.5, 0.0, 0.0] }},
    {{ vertices = {{ indices = [{b0}, {b1}] }}, velocity = [0.5, 0.0, 0.0] }},
]
"#,
            a0 = ring(0),
            a1 = ring(per_tube - 6),
            b0 = ring(per_tube),
            b1 = ring(2 * per_tube - 6),
        );
        let (steps, pairs) = run_checked_with(generator, &toml, 8, Motion::EveryStep);
        assert!(pairs > 0, "{generator}: the tubes never came into contact");
        assert!(steps > 8, "{generator}");
    }
}
