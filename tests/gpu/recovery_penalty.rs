//! Shortest-path collision handling for the Newton solver (the paper's Eq. 7 penalty energy;
//! `kernels/recovery/penalty.comp`, `engine/src/recovery/penalty.rs`) on lavapipe:
//! - on two overlapping cubes, the penalty's energy, gradient and majorizing diagonal Hessian blocks that
//!   the GPU adds to the Newton system equal the f64 reference
//!   (`cpu_reference::recovery_response::penalty`) at the detected constraints;
//! - a Newton simulation of the overlapping cubes separates them: the exact intersection
//!   checker finds the first frame intersecting and the last one clean.

use supple::cpu_reference::recovery_response as rr;
use supple::fem::ElementModel;
use supple::intersection_check::frame_intersections;
use supple::mesh::TetMesh;
use supple::model::SimModel;
use supple::newton::{NewtonSettings, NewtonStepper};
use supple::recovery::{DetectionMode, Recovery, RecoverySettings};
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple_gpu_tests::{assert_no_validation_errors, body_surface, context};

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
        pcg_tolerance: 1e-4,
        pcg_max_iterations: 200,
        colliders: vec![],
        contact_stiffness: 1000.0,
        friction_slip: 1e-4,
        warm_start: Default::default(),
        pcg_stagnation_window: 100,
        friction_per_iteration: false,
        penalty_stiffness: 50.0,
    };
    let mut stepper =
        NewtonStepper::new(&ctx, &model, ElementModel::StableNeoHookean, settings).expect("newton");
    let mesh = TetMesh {
        positions: model.positions.clone(),
        tets: model.tets.clone(),
    };
    let rs = RecoverySettings {
        detection: DetectionMode::Dcd,
        all_vertices: true,
        offset: 1e-3,
        ..Default::default()
    };
    let rec = Recovery::new(
        &ctx,
        &mesh,
        stepper.positions(),
        stepper.positions(),
        stepper.inverse_masses(),
        rs,
    )
    .expect("recovery");
    stepper.attach_penalty(&ctx, &rec).expect("attach");
    let penalty = stepper.penalty().expect("penalty");
    // Without the penalty, then with the constraints of one detection.
    penalty.set_active(false).expect("off");
    let (rhs0, diag0, e0) = stepper.linearize().expect("linearize");
    let d = rec.detect().expect("detect");
    assert_eq!(d.counters.overflows, 0);
    stepper
        .penalty()
        .expect("penalty")
        .set_active(true)
        .expect("on");
    let (rhs1, diag1, e1) = stepper.linearize().expect("linearize");
    let k = stepper.penalty().expect("penalty").stiffness();
    let x = stepper.positions().read().expect("x");
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
        .hessian_majorizer
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
                let want_rc = want.hessian_majorizer[i][3 * r + c];
                assert!(
                    (got - want_rc).abs() <= 1e-3 * hmax,
                    "Hessian block of vertex {i}[{r}][{c}]: GPU {got}, reference {want_rc}"
                );
            }
        }
        touched += (want.hessian_majorizer[i][0]
            + want.hessian_majorizer[i][4]
            + want.hessian_majorizer[i][8]
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
        collisions += st.recovery.collisions;
    }
    let last = count(&sim);
    println!("intersecting triangle pairs: first frame {first}, last frame {last}; {collisions} penalty constraints");
    assert!(first > 0, "the cubes must start overlapping");
    assert!(collisions > 0);
    assert_eq!(last, 0, "the penalty must separate the cubes");
    assert_no_validation_errors(&ctx);
}
