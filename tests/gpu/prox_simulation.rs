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
        ("prox.damping=-0.5", "prox.damping"),
        ("prox.pair_cell_scale=-1.0", "prox.pair_cell_scale"),
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
    // Explicit damping that would remove a node's whole velocity in one step (h c / ρ ≥ 1).
    let sc = scene(CUBE_ON_BOX, "prox_cube_on_box.toml", &["prox.damping=2e6"]);
    let e = Simulation::new(&ctx, &sc)
        .err()
        .expect("damping")
        .to_string();
    assert!(e.starts_with("prox.damping"), "{e}");
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

/// Safe mode refuses a start it cannot keep intersection-free: RAINBOW's soft sheet as coded
/// starts touching the cube (faithful mode runs it and logs the penetration).
#[test]
fn safe_mode_refuses_a_touching_start_naming_the_bodies() {
    let ctx = context(true);
    let code = include_str!("../../scenes/prox_soft_sheet_code.toml");
    let sc = scene(code, "prox_soft_sheet_code.toml", &["prox.mode=\"safe\""]);
    let e = Simulation::new(&ctx, &sc)
        .err()
        .expect("touching start")
        .to_string();
    assert!(e.starts_with("prox.mode"), "{e}");
    assert!(e.contains("faithful"), "{e}");
    let sc = scene(code, "prox_soft_sheet_code.toml", &[]);
    assert!(
        Simulation::new(&ctx, &sc).is_ok(),
        "faithful mode starts from the touching state"
    );
    assert_no_validation_errors(&ctx);
}

/// Kinetic energy ½ Σ m v² of the free vertices (J).
fn kinetic_energy(sim: &Simulation) -> f64 {
    let m = &sim.model().masses;
    let w = &sim.model().inv_mass;
    let v = sim.velocities().expect("velocities");
    (0..v.len())
        .filter(|&i| w[i] > 0.0)
        .map(|i| 0.5 * m[i] * (0..3).map(|k| v[i][k] * v[i][k]).sum::<f64>())
        .sum()
}

/// Safe mode's velocity update after the position limit: with `prox.envelope = 0` PROX finds
/// no contact (the limit keeps the cube off the box), so only the conservative bounds stop the
/// 1 mm fall. The limited nodes take the velocity their positions took, so the kinetic energy
/// never exceeds what the fall released (m g · 1 mm; the undamped elastic cube keeps ringing
/// below it) and the centre of mass is never faster than the fall made it, √(2 g · 1 mm).
/// Without the update each limited node would keep gaining g h per step (about 3 m/s after
/// 0.3 s, over 100 J).
#[test]
fn safe_mode_limited_nodes_take_the_velocity_of_their_positions() {
    let ctx = context(false);
    let sc = scene(
        CUBE_ON_BOX,
        "prox_cube_on_box.toml",
        &["prox.mode=\"safe\"", "prox.envelope=0.0"],
    );
    let mut sim = Simulation::new(&ctx, &sc).unwrap_or_else(|e| panic!("{e}"));
    let mass: f64 = (0..sim.model().masses.len())
        .filter(|&i| sim.model().inv_mass[i] > 0.0)
        .map(|i| sim.model().masses[i])
        .sum();
    let drop_energy = mass * 9.81 * 0.001;
    let drop_speed = (2.0 * 9.81 * 0.001f64).sqrt();
    let (mut energies, mut limited, mut contacts) = (Vec::new(), 0, 0);
    for f in 0..15 {
        let st = sim
            .step_frame()
            .unwrap_or_else(|e| panic!("frame {f}: {e}"));
        let s = st.contact::<ProxFrameStats>();
        contacts += s.max_contacts;
        let safe = s.safe.expect("safe mode reports its limiter");
        limited += safe["steps"].as_u64().unwrap_or(0);
        let e = kinetic_energy(&sim);
        assert!(
            e < drop_energy,
            "frame {f}: kinetic energy {e} J above the drop's {drop_energy} J"
        );
        let vz = centre_velocity(&sim)[2];
        assert!(
            vz.abs() < drop_speed,
            "frame {f}: centre velocity {vz} m/s, the fall gives {drop_speed}"
        );
        energies.push(e);
    }
    eprintln!("kinetic energies per frame (J): {energies:?}; limiter steps {limited}");
    assert_eq!(
        contacts, 0,
        "PROX found no contact: the limit alone held the cube"
    );
    assert!(limited > 0, "the limit acted");
    drop(sim);
    assert_no_validation_errors(&ctx);
}

/// RAINBOW's damping (`prox.damping` = c): a free-falling cube (no contact) follows
/// u_{k+1} = (1 − h c/ρ) u_k + g h, i.e. after N steps v = g h (1 − (1 − k)^N) / k with
/// k = h c / ρ, within 0.2 %, clearly below the undamped g N h.
#[test]
fn damping_slows_a_free_fall_as_rainbows_lumped_damping() {
    let ctx = context(false);
    let (c, rho, h, steps) = (500.0, 1000.0, 1e-3, 200);
    let sc = scene(
        CUBE_ON_BOX,
        "prox_cube_on_box.toml",
        &[
            "prox.mode=\"faithful\"",
            &format!("prox.damping={c}"),
            "body[1].translation=[0.0, 0.0, 2.0]",
            "simulation.frames=10",
        ],
    );
    let mut sim = Simulation::new(&ctx, &sc).unwrap_or_else(|e| panic!("{e}"));
    for f in 0..steps / 20 {
        let st = sim
            .step_frame()
            .unwrap_or_else(|e| panic!("frame {f}: {e}"));
        assert_eq!(st.contact::<ProxFrameStats>().max_contacts, 0, "free fall");
    }
    let k: f64 = h * c / rho;
    let expected = 9.81 * h * (1.0 - (1.0 - k).powi(steps)) / k;
    let undamped = 9.81 * h * steps as f64;
    let vz = -centre_velocity(&sim)[2];
    assert!(
        ((vz - expected) / expected).abs() < 2e-3,
        "damped fall: {vz} m/s, expected {expected} (undamped {undamped})"
    );
    assert!(
        undamped - vz > 0.03 * undamped,
        "damping acted: {vz} vs {undamped}"
    );
    drop(sim);
    assert_no_validation_errors(&ctx);
}

/// Faithful mode with `"pairs"` contacts reports its largest penetration: the cube falls at
/// 6 m/s, one 1 ms step per frame, onto the box with `pair_distance` 4 mm, so one step takes
/// its bottom from 5.3 mm above the box (no pair yet) to ~0.8 mm into it (RAINBOW's `b = J u′`
/// has no gap term to undo that). The depth reported for each step's start positions is the
/// depth of the cube's lowest vertex below the box top at the end of the step before (the box
/// is fixed and flat), 0 before the impact.
#[test]
fn faithful_pairs_report_max_penetration() {
    let ctx = context(false);
    let sc = scene(
        CUBE_ON_BOX,
        "prox_cube_on_box.toml",
        &[
            "prox.contacts=\"pairs\"",
            "prox.mode=\"faithful\"",
            "prox.pair_distance=0.004",
            "simulation.frame_rate=1000.0",
            "simulation.substeps=1",
            "body[1].translation=[0.0, 0.0, 0.2915]",
            "body[1].velocity=[0.0, 0.0, -6.0]",
        ],
    );
    let mut sim = Simulation::new(&ctx, &sc).unwrap_or_else(|e| panic!("{e}"));
    let w = sim.model().inv_mass.clone();
    let depth = |x: &[[f64; 3]]| {
        let lowest = (0..x.len())
            .filter(|&i| w[i] > 0.0)
            .map(|i| x[i][2])
            .fold(f64::INFINITY, f64::min);
        (-lowest).max(0.0)
    };
    let mut before = depth(&sim.positions().expect("positions"));
    let mut deepest = 0.0f64;
    for f in 0..10 {
        let st = sim
            .step_frame()
            .unwrap_or_else(|e| panic!("frame {f}: {e}"));
        let s = st.contact::<ProxFrameStats>();
        let reported = s
            .max_penetration
            .expect("faithful mode reports max_penetration");
        assert_eq!(s.steps.len(), 1);
        assert_eq!(s.steps[0].max_penetration, Some(reported));
        assert!(
            reported >= before - 1e-6 && reported <= before + 2e-4,
            "frame {f}: reported {reported} m, cube {before} m below the box top"
        );
        if before == 0.0 {
            assert_eq!(reported, 0.0, "frame {f}: nothing penetrates yet");
        }
        deepest = deepest.max(reported);
        before = depth(&sim.positions().expect("positions"));
        if before > 0.004 {
            break; // beyond the pair distance: the pairs no longer see it
        }
    }
    assert!(deepest > 3e-4, "the cube went into the box: {deepest} m");
    drop(sim);
    assert_no_validation_errors(&ctx);
}
