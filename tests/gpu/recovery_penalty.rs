//! Shortest-path collision handling for the Newton solver (the paper's Eq. 7 penalty energy;
//! `kernels/recovery/penalty.comp`, `engine/src/recovery/penalty.rs`) on lavapipe:
//! - on two overlapping cubes, the penalty's energy, gradient and exact diagonal Hessian blocks that
//!   the GPU adds to the Newton system equal the f64 reference
//!   (`cpu_reference::recovery_response::penalty`) at the detected constraints;
//! - with the couplings' operator attached, `Pcg::multiply` gives (M + C) p for a block matrix M
//!   and C the penalty Hessian less its diagonal blocks (`rr::penalty_hessian_mul`), and M p
//!   without it;
//! - two runs of the Newton simulation give bit-identical positions;
//! - a Newton simulation of the overlapping cubes separates them: the exact intersection
//!   checker finds the first frame intersecting and the last one clean.

use supple::contact::shortest_path::PenaltyContact;
use supple::contact::shortest_path::ShortestPathFrameStats;
use supple::contact::shortest_path::{DetectionMode, ShortestPathContact, ShortestPathSettings};
use supple::cpu_reference::recovery_response as rr;
use supple::fem::ElementModel;
use supple::intersection_check::frame_intersections;
use supple::linear::{BlockMatrixF32, Pcg};
use supple::mesh::TetMesh;
use supple::model::SimModel;
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple::stepper::newton::NewtonSettings;
use supple::stepper::ContactHost;
use supple::vk::BufferUsage;
use supple_gpu_tests::{assert_no_validation_errors, body_surface, context, newton_driven};

/// Two soft 0.1 m cubes, the upper one sunk 2 cm into the lower one; no gravity.
const CUBES: &str = r#"
[simulation]
frame_rate = 60.0
frames = 20
gravity = [0.0, 0.0, 0.0]
solver = "newton"

[solver]
newton_max_iterations = 8

[collision]
method = "shortest-path"
query_all_vertices = true

[[body]]
name = "lower"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }
material = { model = "stable-neo-hookean", youngs_modulus = 1e4, poisson_ratio = 0.4, density = 1000.0 }

[[body]]
name = "upper"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }
translation = [0.013, 0.007, 0.08]
material = { model = "stable-neo-hookean", youngs_modulus = 1e4, poisson_ratio = 0.4, density = 1000.0 }
"#;

#[test]
fn penalty_terms_in_the_newton_system_match_the_reference() {
    let ctx = context(false);
    let scene = Scene::parse(CUBES, "cubes", &[]).expect("scene");
    let model = SimModel::from_scene(&scene).expect("model");
    let h = scene.simulation.time_step();
    let settings = NewtonSettings {
        h,
        gravity: [0.0; 3],
        max_iterations: 4,
        tolerance: 1e-6,
        gradient_tolerance: 0.0,
        pcg_tolerance: 1e-4,
        pcg_max_iterations: 200,
        contact_stiffness: 1000.0,
        barrier_distance: 1e-3,
        friction_slip: 1e-4,
        warm_start: Default::default(),
        pcg_stagnation_window: 100,
        friction_per_iteration: false,
        penalty_stiffness: 50.0,
        max_outer_iterations: 1,
        max_halvings: None,
        pcg_resumes: 0,
        device_loop: true,
        script_pull: None,
        project_on_demand: false,
    };
    let driven = newton_driven(&ctx, &model, &[], ElementModel::StableNeoHookean, settings);
    let (stepper, state) = (&driven.stepper, &driven.state);
    let mesh = TetMesh {
        positions: model.positions.clone(),
        tets: model.tets.clone(),
    };
    let rs = ShortestPathSettings {
        detection: DetectionMode::Dcd,
        all_vertices: true,
        offset: 1e-3,
        ..Default::default()
    };
    let rec = ShortestPathContact::new(&ctx, &mesh, &state.x, &state.x, &state.inv_mass, rs)
        .expect("recovery");
    let b = stepper.energy_bindings().expect("bindings");
    let penalty = PenaltyContact::new(
        &ctx,
        rec.constraint_slots(),
        &b.x,
        &b.x_trial,
        &b.accum,
        rs.offset,
        b.stiffness,
        Some(&b.inv_mass),
    )
    .expect("penalty");
    let mut driven = driven;
    driven
        .stepper
        .attach_energy(&ctx, &penalty)
        .expect("attach");
    let (stepper, state) = (&driven.stepper, &driven.state);
    // Without the penalty, then with the constraints of one detection.
    penalty.set_active(false).expect("off");
    let (rhs0, diag0, e0) = stepper.linearize(state, &[&penalty]).expect("linearize");
    let d = rec.detect().expect("detect");
    assert_eq!(d.counters.overflows, 0);
    penalty.set_active(true).expect("on");
    let (rhs1, diag1, e1) = stepper.linearize(state, &[&penalty]).expect("linearize");
    let k = penalty.stiffness();
    let x = state.x.read().expect("x");
    let contacts = rec.read_contacts().expect("contacts");
    let active = contacts.iter().filter(|c| c.active).count();
    let want = rr::penalty(&x, &contacts, 1e-3, k);
    println!(
        "{active} constraints, k = {k:.3e} N/m, penalty energy {:.6e} J (GPU {:.6e} J)",
        want.energy,
        e1 - e0
    );
    assert!(
        active > 20,
        "the overlap must produce constraints: {active}"
    );
    assert!(want.energy > 0.0);
    assert!(
        ((e1 - e0) - want.energy).abs() <= 2e-3 * want.energy + 1e-9,
        "energy: GPU {} vs reference {}",
        e1 - e0,
        want.energy
    );
    let gmax = want
        .gradient
        .iter()
        .flat_map(|g| g.iter().map(|v| v.abs()))
        .fold(0.0, f64::max);
    let hmax = want
        .hessian_diagonal
        .iter()
        .flat_map(|g| g.iter().map(|v| v.abs()))
        .fold(0.0, f64::max);
    let mut touched = 0;
    for i in 0..x.len() {
        // rhs = −∇E: the penalty's part is rhs0 − rhs1.
        for r in 0..3 {
            let got = (rhs0[i][r] - rhs1[i][r]) as f64;
            let err = (got - want.gradient[i][r]).abs();
            assert!(
                err <= 1e-3 * gmax,
                "gradient of vertex {i}[{r}]: GPU {got}, reference {}",
                want.gradient[i][r]
            );
            for c in 0..3 {
                let got = (diag1[3 * i + r][c] - diag0[3 * i + r][c]) as f64;
                let want_rc = want.hessian_diagonal[i][3 * r + c];
                assert!(
                    (got - want_rc).abs() <= 1e-3 * hmax,
                    "Hessian block of vertex {i}[{r}][{c}]: GPU {got}, reference {want_rc}"
                );
            }
        }
        touched += (want.hessian_diagonal[i][0]
            + want.hessian_diagonal[i][4]
            + want.hessian_diagonal[i][8]
            > 0.0) as usize;
    }
    assert!(touched > 20, "{touched} vertices carry penalty terms");
    assert_no_validation_errors(&ctx);
}

#[test]
fn newton_with_the_penalty_separates_overlapping_cubes() {
    let ctx = context(false);
    let scene = Scene::parse(CUBES, "cubes", &[]).expect("scene");
    let mut sim = Simulation::new(&ctx, &scene).expect("simulation");
    let surface = body_surface(&sim);
    let count = |sim: &Simulation| -> usize {
        let x = sim.positions().expect("positions");
        frame_intersections(&surface, &x).len()
    };
    let first = count(&sim);
    let mut collisions = 0;
    for _ in 0..scene.simulation.frames {
        let st = sim.step_frame().expect("frame");
        collisions += st.contact::<ShortestPathFrameStats>().collisions;
    }
    let last = count(&sim);
    println!("intersecting triangle pairs: first frame {first}, last frame {last}; {collisions} penalty constraints");
    assert!(first > 0, "the cubes must start overlapping");
    assert!(collisions > 0);
    assert_eq!(last, 0, "the penalty must separate the cubes");
    assert_no_validation_errors(&ctx);
}

#[test]
fn contact_couplings_in_the_pcg_product_match_the_reference() {
    let ctx = context(false);
    let scene = Scene::parse(CUBES, "cubes", &[]).expect("scene");
    let model = SimModel::from_scene(&scene).expect("model");
    let n = model.positions.len();
    let x: Vec<[f32; 4]> = model
        .positions
        .iter()
        .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32, 0.0])
        .collect();
    // One fixed vertex: it neither receives nor passes on couplings.
    let mut inv_mass: Vec<f32> = model.inv_mass.iter().map(|&w| w as f32).collect();
    inv_mass[n - 1] = 0.0;
    let st = BufferUsage::STORAGE;
    let pos = ctx.upload_buffer("x", &x, st).expect("x");
    let trial = ctx.upload_buffer("x_trial", &x, st).expect("trial");
    let im = ctx
        .upload_buffer("inv_mass", &inv_mass, st)
        .expect("inv_mass");
    let accum = ctx
        .create_buffer::<[i32; 4]>("accum", 3 * n, st)
        .expect("accum");
    let mesh = TetMesh {
        positions: model.positions.clone(),
        tets: model.tets.clone(),
    };
    let offset = 1e-3f32;
    let rs = ShortestPathSettings {
        detection: DetectionMode::Dcd,
        all_vertices: true,
        offset,
        ..Default::default()
    };
    let rec = ShortestPathContact::new(&ctx, &mesh, &pos, &pos, &im, rs).expect("recovery");
    let k = 1234.5;
    let penalty = PenaltyContact::new(
        &ctx,
        rec.constraint_slots(),
        &pos,
        &trial,
        &accum,
        offset,
        k,
        Some(&im),
    )
    .expect("penalty");
    rec.detect().expect("detect");
    penalty.evaluate().expect("evaluate");
    let contacts = rec.read_contacts().expect("contacts");
    let reference = rr::penalty(&x, &contacts, offset as f64, k);
    // M: diagonal 2 I plus a chain of small off-diagonal blocks.
    let mut rng = supple_gpu_tests::rng(7);
    use rand::Rng;
    let mut a = BlockMatrixF32 {
        diag: vec![[2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0]; n],
        off: vec![],
    };
    for i in 0..n - 1 {
        let b: [f32; 9] = std::array::from_fn(|_| rng.random_range(-0.1..0.1));
        a.off.push((i as u32, i as u32 + 1, b));
    }
    let mut pcg = Pcg::new(&ctx, &a, 10).expect("pcg");
    let p: Vec<[f32; 3]> = (0..n)
        .map(|_| std::array::from_fn(|_| rng.random_range(-1.0..1.0)))
        .collect();
    let p64: Vec<[f64; 3]> = p.iter().map(|v| v.map(f64::from)).collect();
    let mut mp: Vec<[f64; 3]> = (0..n)
        .map(|i| {
            std::array::from_fn(|r| {
                (0..3)
                    .map(|c| a.diag[i][3 * r + c] as f64 * p64[i][c])
                    .sum()
            })
        })
        .collect();
    for (i, j, b) in &a.off {
        let (i, j) = (*i as usize, *j as usize);
        for r in 0..3 {
            for c in 0..3 {
                mp[i][r] += b[3 * r + c] as f64 * p64[j][c];
                mp[j][c] += b[3 * r + c] as f64 * p64[i][r];
            }
        }
    }
    let full = rr::penalty_hessian_mul(&x, &contacts, offset as f64, k, &inv_mass, &p64);
    let mut want = mp.clone();
    let mut coupled = 0;
    for i in 0..n {
        let free = inv_mass[i] != 0.0;
        let hd = &reference.hessian_diagonal[i];
        let dp: [f64; 3] = std::array::from_fn(|r| (0..3).map(|c| hd[3 * r + c] * p64[i][c]).sum());
        for r in 0..3 {
            // C = the Hessian less its diagonal blocks (fixed rows carry none).
            let cpl = if free { full[i][r] - dp[r] } else { 0.0 };
            want[i][r] += cpl;
            coupled += (cpl.abs() > 1e-6 * k) as usize;
        }
    }
    let qmax = want
        .iter()
        .flat_map(|v| v.iter().map(|a| a.abs()))
        .fold(0.0, f64::max);
    println!("{coupled} coupled rows, |q|max {qmax:.3e}");
    assert!(coupled > 20, "the overlap must couple vertices: {coupled}");
    let check = |got: &[[f32; 3]], want: &[[f64; 3]], what: &str| {
        for i in 0..n {
            for r in 0..3 {
                let err = (got[i][r] as f64 - want[i][r]).abs();
                assert!(
                    err <= 1e-5 * qmax,
                    "{what}: row {i}[{r}]: GPU {}, reference {}",
                    got[i][r],
                    want[i][r]
                );
            }
        }
    };
    check(&pcg.multiply(&p, false).expect("multiply"), &mp, "M p");
    pcg.set_contact_operator(&ctx, penalty.operator())
        .expect("attach");
    check(
        &pcg.multiply(&p, false).expect("multiply"),
        &want,
        "(M + C) p",
    );
    // The masked warm-start product skips the couplings.
    pcg.stiffness().write(&vec![1.0; n]).expect("stiffness");
    check(&pcg.multiply(&p, true).expect("masked"), &mp, "masked M p");
    pcg.set_contact_operator(&ctx, None).expect("detach");
    check(
        &pcg.multiply(&p, false).expect("multiply"),
        &mp,
        "M p again",
    );
    assert_no_validation_errors(&ctx);
}

#[test]
fn newton_with_the_penalty_is_deterministic() {
    let ctx = context(false);
    let scene = Scene::parse(CUBES, "cubes", &[]).expect("scene");
    let run = || {
        let mut sim = Simulation::new(&ctx, &scene).expect("simulation");
        for _ in 0..6 {
            sim.step_frame().expect("frame");
        }
        sim.positions().expect("positions")
    };
    let a = run();
    let b = run();
    let bits = |v: &[[f64; 3]]| -> Vec<u64> {
        v.iter()
            .flat_map(|p| p.iter().map(|c| c.to_bits()))
            .collect()
    };
    assert!(
        bits(&a) == bits(&b),
        "two runs must give bit-identical positions"
    );
    assert_no_validation_errors(&ctx);
}
