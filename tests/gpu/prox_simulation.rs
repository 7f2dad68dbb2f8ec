//! PROX through the whole engine (`collision.method = "prox"` with symplectic Euler, issue 24)
//! on lavapipe with validation on: the Coulomb law on the incline (PROX-S5), safe mode's
//! intersection-free frames checked with the exact checker, bit-identical reruns with every
//! scheme, and bad input refused naming the field.

use supple::contact::prox::handler::ProxFrameStats;
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple_gpu_tests::{assert_no_validation_errors, body_surface, context, step_checked};

const INCLINE: &str = include_str!("../../scenes/prox_incline.toml");
const CUBE_ON_BOX: &str = include_str!("../../scenes/prox_cube_on_box.toml");

fn scene(toml: &str, name: &str, set: &[&str]) -> Scene {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Scene::parse(toml, name, &set).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Mass-weighted velocity (m/s) of the free vertices (the cube).
fn centre_velocity(sim: &Simulation) -> [f64; 3] {
    let m = &sim.model().masses;
    let w = &sim.model().inv_mass;
    let v = sim.velocities().expect("velocities");
    let (mut p, mut total) = ([0.0; 3], 0.0);
    for i in (0..v.len()).filter(|&i| w[i] > 0.0) {
        for k in 0..3 {
            p[k] += m[i] * v[i][k];
        }
        total += m[i];
    }
    p.map(|c| c / total)
}

/// Frames (of 20 steps of 1 ms) the landing's elastic ringing is given to settle: symplectic
/// Euler has no damping, and while the undamped cube bounces on its contacts (normal velocity
/// ±2 cm/s in the first frames) the reduced normal force lets the contact face slip ~1.8 mm;
/// afterwards it stays put (< 0.2 mm over the next second at μ = 0.7).
const SETTLE_FRAMES: usize = 10;

/// The incline with friction `mu` for 0.2 s of settling and one simulated second: (slip of the
/// cube's contact face along x over that second (m), down-slope acceleration of the centre of
/// mass over its second half (m/s²), the frames' PROX statistics).
fn incline_second(mu: f64) -> (f64, f64, Vec<ProxFrameStats>) {
    let ctx = context(false);
    let mu_set = format!("prox.friction={mu}");
    let sc = scene(INCLINE, "prox_incline.toml", &[&mu_set]);
    let mut sim = Simulation::new(&ctx, &sc).unwrap_or_else(|e| panic!("{e}"));
    let w = sim.model().inv_mass.clone();
    let x0 = sim.positions().expect("positions");
    // The cube's bottom face starts 1 mm above the slab.
    let bottom: Vec<usize> = (0..x0.len())
        .filter(|&i| w[i] > 0.0 && (x0[i][2] - 0.001).abs() < 1e-6)
        .collect();
    assert_eq!(bottom.len(), 16, "4 x 4 bottom nodes");
    let mean_x = |x: &[[f64; 3]]| bottom.iter().map(|&i| x[i][0]).sum::<f64>() / 16.0;
    let mut stats = Vec::new();
    let (mut v_half, mut x_settled) = (0.0, 0.0);
    for f in 0..SETTLE_FRAMES + 50 {
        let st = sim
            .step_frame()
            .unwrap_or_else(|e| panic!("frame {f}: {e}"));
        stats.push(st.contact::<ProxFrameStats>());
        if f + 1 == SETTLE_FRAMES {
            x_settled = mean_x(&sim.positions().expect("positions"));
        }
        if f + 1 == SETTLE_FRAMES + 25 {
            v_half = centre_velocity(&sim)[0];
        }
    }
    let a = (centre_velocity(&sim)[0] - v_half) / 0.5;
    let slip = mean_x(&sim.positions().expect("positions")) - x_settled;
    drop(sim);
    assert_no_validation_errors(&ctx);
    (slip, a, stats)
}

/// Spec §B9 #9 through the engine: on a 30° incline the cube sticks when μ > tan θ (its contact
/// face slips less than 1 mm in 1 s) and slides with g (sin θ − μ cos θ) within 5 % otherwise
/// (the centre-of-mass acceleration over the second half of the second), both after the
/// landing has settled ([`SETTLE_FRAMES`]). Faithful mode logs the largest penetration every
/// frame.
#[test]
fn coulomb_law_on_the_incline() {
    let theta = 30f64.to_radians();
    let g = 9.81;
    let (slip, _, stats) = incline_second(0.7);
    assert!(0.7 > theta.tan());
    assert!(slip.abs() < 1e-3, "μ 0.7: slipped {slip} m");
    assert!(stats
        .iter()
        .all(|s| s.time_steps == 20 && s.max_contacts > 0));
    assert!(stats.iter().all(|s| s.steps.len() == 20 && s.sweeps > 0));
    assert!(stats.iter().all(|s| s.max_penetration.is_some()));
    let (slip, a, _) = incline_second(0.2);
    let expected = g * (theta.sin() - 0.2 * theta.cos());
    assert!(slip > 1.0, "μ 0.2: the cube slides ({slip} m)");
    assert!(
        ((a - expected) / expected).abs() < 0.05,
        "μ 0.2: a = {a} m/s², expected {expected}"
    );
}

/// Safe mode (spec §B7): the cube dropped onto the box at 1 m/s keeps every frame
/// intersection-free and the straight motion between frames collision-free (the exact
/// checker), with RAINBOW's contacts and with Supple's proximity pairs.
#[test]
fn safe_mode_frames_are_intersection_free() {
    for contacts in ["sdf", "pairs"] {
        let ctx = context(false);
        let c = format!("prox.contacts=\"{contacts}\"");
        let sc = scene(
            CUBE_ON_BOX,
            "prox_cube_on_box.toml",
            &[
                &c,
                "prox.mode=\"safe\"",
                "prox.pair_distance=0.004",
                "body[1].translation=[0.0, 0.0, 0.27]",
                "body[1].velocity=[0.3, 0.0, -1.0]",
            ],
        );
        let mut sim = Simulation::new(&ctx, &sc).unwrap_or_else(|e| panic!("{contacts}: {e}"));
        let surface = body_surface(&sim);
        let mut prev = sim.positions().expect("positions");
        let w = sim.model().inv_mass.clone();
        let cube_bottom = |x: &[[f64; 3]]| {
            (0..x.len())
                .filter(|&i| w[i] > 0.0)
                .map(|i| x[i][2])
                .fold(f64::INFINITY, f64::min)
        };
        let z0 = cube_bottom(&prev);
        let (mut contacts_seen, mut limited, mut lowest) = (0, 0, z0);
        for f in 0..8 {
            let st = step_checked(&mut sim, &surface, &mut prev, contacts, f);
            let s = st.contact::<ProxFrameStats>();
            contacts_seen = contacts_seen.max(s.max_contacts);
            let safe = s.safe.expect("safe mode reports its limiter");
            assert!(safe["solves"].as_u64() == Some(20), "{contacts}: {safe}");
            limited += safe["steps"].as_u64().unwrap_or(0);
            assert!(s.max_penetration.is_none());
            lowest = lowest.min(cube_bottom(&prev));
        }
        assert!(contacts_seen > 0, "{contacts}: the cube reached the box");
        assert!(limited >= 160, "{contacts}: two-way steps {limited}");
        // It fell the 19 mm onto the box (the undamped elastic cube then bounces).
        assert!(
            lowest < 0.005,
            "{contacts}: reached the box ({z0} -> {lowest} m)"
        );
        assert!(lowest > 0.0, "{contacts}: above the box ({lowest} m)");
        drop(sim);
        assert_no_validation_errors(&ctx);
    }
}

/// Positions (bits) after `frames` frames of cube-on-box with `set`.
fn cube_bits(set: &[&str], frames: u32) -> Vec<u64> {
    let ctx = context(false);
    let sc = scene(CUBE_ON_BOX, "prox_cube_on_box.toml", set);
    let mut sim = Simulation::new(&ctx, &sc).unwrap_or_else(|e| panic!("{set:?}: {e}"));
    let mut sweeps = 0;
    for _ in 0..frames {
        let st = sim.step_frame().unwrap_or_else(|e| panic!("{set:?}: {e}"));
        sweeps += st.contact::<ProxFrameStats>().sweeps;
    }
    assert!(sweeps > 0, "{set:?}: no solve");
    let bits = sim
        .positions()
        .expect("positions")
        .iter()
        .flatten()
        .map(|c| c.to_bits())
        .collect();
    drop(sim);
    assert_no_validation_errors(&ctx);
    bits
}

/// Spec §B9 #8: reruns are bit-identical with every scheme (and every coloring of the colored
/// scheme: the random one has a fixed seed), and the schemes differ from each other.
#[test]
fn reruns_are_bit_identical_with_every_scheme() {
    let runs: &[&[&str]] = &[
        &["prox.scheme=\"gauss-seidel\""],
        &["prox.scheme=\"jacobi\""],
        &["prox.scheme=\"hybrid\""],
        &[
            "prox.scheme=\"colored-gauss-seidel\"",
            "prox.coloring=\"greedy\"",
        ],
        &[
            "prox.scheme=\"colored-gauss-seidel\"",
            "prox.coloring=\"random\"",
        ],
        &[
            "prox.scheme=\"colored-gauss-seidel\"",
            "prox.coloring=\"jones-plassmann\"",
        ],
        &[
            "prox.scheme=\"jacobi\"",
            "prox.contacts=\"pairs\"",
            "prox.pair_distance=0.004",
        ],
    ];
    let mut results = Vec::new();
    for set in runs {
        let mut s = set.to_vec();
        s.push("prox.mode=\"faithful\"");
        let a = cube_bits(&s, 2);
        let b = cube_bits(&s, 2);
        assert!(a == b, "{set:?}: reruns differ");
        results.push(a);
    }
    assert!(results[0] != results[1], "Gauss–Seidel and Jacobi differ");
}

/// Spec §B9 #11: bad `[prox]` values are refused naming the field, and so are a stepper
/// without a velocity phase and `"sdf"` contacts on a body without tets.
#[test]
fn bad_input_is_refused_naming_the_field() {
    for (set, field) in [
        ("prox.friction=-0.1", "prox.friction"),
        ("prox.restitution=1.5", "prox.restitution"),
        ("prox.restitution=-0.1", "prox.restitution"),
        ("prox.absolute_tolerance=0.0", "prox.absolute_tolerance"),
        ("prox.relative_tolerance=-1e-4", "prox.relative_tolerance"),
        ("prox.max_iterations=0", "prox.max_iterations"),
        ("prox.sdf_resolution=1", "prox.sdf_resolution"),
        ("prox.sdf_resolution=1000", "prox.sdf_resolution"),
        ("prox.pair_distance=0.0", "prox.pair_distance"),
        ("prox.nu_reduce=1.0", "prox.nu_reduce"),
        ("prox.sweeps_per_batch=0", "prox.sweeps_per_batch"),
    ] {
        let e =
            Scene::parse(CUBE_ON_BOX, "prox_cube_on_box.toml", &[set.to_string()]).expect_err(set);
        assert_eq!(e.field.as_deref(), Some(field), "{set}: {e}");
    }
    let e = Scene::parse(
        CUBE_ON_BOX,
        "prox_cube_on_box.toml",
        &["prox.scheme=\"gauss_seidel\"".to_string()],
    )
    .expect_err("unknown scheme");
    assert!(e.to_string().contains("gauss-seidel"), "{e}");
    let ctx = context(false);
    for solver in ["newton", "xpbd"] {
        let set = format!("simulation.solver=\"{solver}\"");
        let m0 = "body[0].material.model=\"stable-neo-hookean\"";
        let m1 = "body[1].material.model=\"stable-neo-hookean\"";
        let sc = scene(CUBE_ON_BOX, "prox_cube_on_box.toml", &[&set, m0, m1]);
        let e = Simulation::new(&ctx, &sc).err().expect(solver).to_string();
        assert!(e.starts_with("simulation.solver"), "{solver}: {e}");
    }
    // RAINBOW's contacts need tet bodies: a cloth scene is refused naming prox.contacts.
    let cloth = CUBE_ON_BOX
        .replace(
            "generator = \"box\", size = [2.0, 2.0, 0.5], cells = [5, 5, 2]",
            "generator = \"cloth\", size = [2.0, 2.0, 0.0], cells = [4, 4, 1]",
        )
        .replace(
            "generator = \"box\", size = [0.5, 0.5, 0.5], cells = [3, 3, 3]",
            "generator = \"cloth\", size = [0.5, 0.5, 0.0], cells = [3, 3, 1]",
        )
        .replace("model = \"stvk\"", "model = \"cloth\", thickness = 0.001");
    let sc = Scene::parse(&cloth, "cloth.toml", &[]).unwrap_or_else(|e| panic!("{e}"));
    let e = Simulation::new(&ctx, &sc).err().expect("cloth").to_string();
    assert!(e.starts_with("prox.contacts"), "{e}");
    // A frame with PROX's host-side contact work cannot be recorded into the host's command
    // buffer: refused naming collision.method (before the command buffer is touched).
    let sc = scene(CUBE_ON_BOX, "prox_cube_on_box.toml", &[]);
    let sim = Simulation::new(&ctx, &sc).unwrap_or_else(|e| panic!("{e}"));
    // SAFETY: the call is refused before it records anything into the (null) buffer.
    let e = unsafe { sim.record_step_into(supple::vk::ash::vk::CommandBuffer::null()) }
        .expect_err("record_step_into with prox")
        .to_string();
    assert!(e.starts_with("collision.method"), "{e}");
    drop(sim);
    assert_no_validation_errors(&ctx);
}
