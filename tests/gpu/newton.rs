//! Newton–PCG implicit Euler on the GPU: a clamped beam settles to the static deflection of an
//! independent dense CPU Newton solve (f64).
use nalgebra::{DMatrix, DVector, Vector3};
use supple::contact::colliders::{Collider, Shape};
use supple::cpu_reference::fem::{lame, Material, TetRest};
use supple::fem::ElementModel;
use supple::model::SimModel;
use supple::scene::Scene;
use supple::stepper::newton::NewtonSettings;
use supple_gpu_tests::{assert_no_validation_errors, context, newton_driven};

const BEAM: &str = r#"
[[body]]
name = "beam"
mesh = { generator = "box", size = [0.2, 0.05, 0.05], cells = [8, 2, 2] }
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
fixed = [{ region = { min = [-0.101, -1.0, -1.0], max = [-0.099, 1.0, 1.0] } }]
"#;

/// Settings shared by these tests; each test overrides what it needs.
fn base_settings() -> NewtonSettings {
    NewtonSettings {
        h: 1.0,
        gravity: [0.0; 3],
        max_iterations: 20,
        tolerance: 1e-6,
        gradient_tolerance: 0.0,
        pcg_tolerance: 1e-4,
        pcg_max_iterations: 1000,
        contact_stiffness: 1000.0,
        barrier_distance: 1e-3,
        friction_slip: 1e-5,
        warm_start: Default::default(),
        pcg_stagnation_window: 100,
        friction_per_iteration: false,
        penalty_stiffness: 0.0,
        max_outer_iterations: 1,
        max_halvings: None,
        pcg_resumes: 0,
        device_loop: true,
        script_pull: None,
        project_on_demand: false,
    }
}

/// Static equilibrium ∇Ψ(x) = M g + f_ext over the free vertices by dense Newton in f64.
fn static_solve(model: &SimModel, material: Material, g: Vector3<f64>) -> Vec<Vector3<f64>> {
    let n = model.positions.len();
    let rest: Vec<TetRest> = model
        .tets
        .iter()
        .map(|t| TetRest::new(&t.map(|v| Vector3::from(model.positions[v as usize]))).unwrap())
        .collect();
    let free: Vec<bool> = model.inv_mass.iter().map(|&w| w > 0.0).collect();
    let mut x: Vec<Vector3<f64>> = model.positions.iter().map(|p| Vector3::from(*p)).collect();
    let energy = |x: &[Vector3<f64>]| -> f64 {
        let e: f64 = model
            .tets
            .iter()
            .zip(&rest)
            .map(|(t, r)| r.energy(&material, &t.map(|v| x[v as usize])))
            .sum();
        e - (0..n)
            .map(|i| (model.masses[i] * g + Vector3::from(model.external_forces[i])).dot(&x[i]))
            .sum::<f64>()
    };
    for _ in 0..50 {
        let mut grad = DVector::zeros(3 * n);
        let mut hess = DMatrix::zeros(3 * n, 3 * n);
        for (t, r) in model.tets.iter().zip(&rest) {
            let xs = t.map(|v| x[v as usize]);
            let ge = r.gradient(&material, &xs);
            let he = r.hessian(&material, &xs, true);
            for a in 0..4 {
                for i in 0..3 {
                    grad[3 * t[a] as usize + i] += ge[3 * a + i];
                    for b in 0..4 {
                        for j in 0..3 {
                            hess[(3 * t[a] as usize + i, 3 * t[b] as usize + j)] +=
                                he[(3 * a + i, 3 * b + j)];
                        }
                    }
                }
            }
        }
        for i in 0..n {
            for k in 0..3 {
                grad[3 * i + k] -= model.masses[i] * g[k] + model.external_forces[i][k];
                if !free[i] {
                    grad[3 * i + k] = 0.0;
                    for c in 0..3 * n {
                        hess[(3 * i + k, c)] = 0.0;
                        hess[(c, 3 * i + k)] = 0.0;
                    }
                    hess[(3 * i + k, 3 * i + k)] = 1.0;
                }
            }
        }
        let d = hess.lu().solve(&(-&grad)).expect("solvable");
        let e0 = energy(&x);
        let mut alpha = 1.0;
        loop {
            let trial: Vec<Vector3<f64>> = (0..n)
                .map(|i| x[i] + alpha * Vector3::new(d[3 * i], d[3 * i + 1], d[3 * i + 2]))
                .collect();
            if energy(&trial) <= e0 || alpha < 1e-8 {
                x = trial;
                break;
            }
            alpha *= 0.5;
        }
        if d.amax() * alpha < 1e-12 {
            break;
        }
    }
    x
}

#[test]
fn clamped_beam_reaches_the_static_deflection_of_a_dense_cpu_newton_solve() {
    let (mu, lambda) = lame(1e5, 0.3);
    clamped_beam(
        ElementModel::StableNeoHookean,
        Material::StableNeoHookean { mu, lambda },
    );
}

/// The same with corotated linear elements (GPU polar decomposition, `kernels/include/polar.glsl`).
#[test]
fn corotated_clamped_beam_reaches_the_static_deflection_of_a_dense_cpu_newton_solve() {
    let (mu, lambda) = lame(1e5, 0.3);
    clamped_beam(
        ElementModel::CorotatedLinear,
        Material::CorotatedLinear { mu, lambda },
    );
}

fn clamped_beam(kind: ElementModel, material: Material) {
    let ctx = context(false);
    let scene = Scene::parse(BEAM, "beam", &[]).unwrap();
    let model = SimModel::from_scene(&scene).unwrap();
    let g = Vector3::new(0.0, 0.0, -9.81);
    let want = static_solve(&model, material, g);
    let settings = NewtonSettings {
        gravity: [0.0, 0.0, -9.81],
        tolerance: 1e-7,
        pcg_tolerance: 1e-5,
        pcg_max_iterations: 2000,
        contact_stiffness: 100.0,
        ..base_settings()
    };
    let mut stepper = newton_driven(&ctx, &model, &[], kind, settings);
    let mut last = Default::default();
    for _ in 0..30 {
        last = stepper.step().unwrap();
    }
    let got = stepper.positions().read().unwrap();
    // Tip: the vertex farthest from the clamp.
    let tip = (0..model.positions.len())
        .max_by(|&a, &b| model.positions[a][0].total_cmp(&model.positions[b][0]))
        .unwrap();
    let deflection = model.positions[tip][2] - want[tip].z;
    let gpu_deflection = model.positions[tip][2] - got[tip][2] as f64;
    println!(
        "{kind:?}: tip deflection: CPU {deflection:.6} m, GPU {gpu_deflection:.6} m; last step {last:?}"
    );
    assert!(deflection > 1e-3, "the beam visibly sags: {deflection} m");
    assert!(
        (gpu_deflection - deflection).abs() <= 0.01 * deflection,
        "GPU {gpu_deflection} vs CPU {deflection}"
    );
    // No tet inverted, clamped vertices unmoved.
    for t in &model.tets {
        let r = TetRest::new(&t.map(|v| Vector3::from(model.positions[v as usize]))).unwrap();
        let x = t.map(|v| {
            Vector3::new(
                got[v as usize][0] as f64,
                got[v as usize][1] as f64,
                got[v as usize][2] as f64,
            )
        });
        assert!(r.deformation_gradient(&x).determinant() > 0.0);
    }
    for (i, p) in model
        .positions
        .iter()
        .enumerate()
        .filter(|(i, _)| model.inv_mass[*i] == 0.0)
    {
        assert_eq!(
            [got[i][0], got[i][1], got[i][2]],
            [p[0] as f32, p[1] as f32, p[2] as f32]
        );
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn cube_dropped_on_the_ground_never_enters_its_offset_and_rests_within_the_barrier_reach() {
    let ctx = context(false);
    let scene = Scene::parse(
        r#"
[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }
translation = [0.0, 0.0, 0.06]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
"#,
        "cube",
        &[],
    )
    .unwrap();
    let model = SimModel::from_scene(&scene).unwrap();
    let h = 1.0 / 60.0;
    let settings = NewtonSettings {
        h,
        gravity: [0.0, 0.0, -9.81],
        pcg_max_iterations: 500,
        ..base_settings()
    };
    let ground = [Collider {
        shape: Shape::Plane {
            normal: [0.0, 0.0, 1.0],
            offset: 0.0,
        },
        friction: 0.0,
        velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
        offset: 0.002,
    }];
    let mut stepper = newton_driven(
        &ctx,
        &model,
        &ground,
        ElementModel::StableNeoHookean,
        settings,
    );
    // Barrier contact (d̂ = 1 mm above the 2 mm offset): no vertex ever goes below the
    // offset, and at rest the bottom sits within the barrier's reach above it.
    let offset = 0.002f32;
    let mut lowest = f32::INFINITY;
    for frame in 0..90 {
        stepper.step().unwrap();
        let x = stepper.positions().read().unwrap();
        let zmin = x.iter().map(|p| p[2]).fold(f32::INFINITY, f32::min);
        lowest = lowest.min(zmin);
        assert!(zmin > offset, "frame {frame}: {zmin} m, below the offset");
    }
    let x = stepper.positions().read().unwrap();
    let v = stepper.velocities().read().unwrap();
    let zmin = x.iter().map(|p| p[2]).fold(f32::INFINITY, f32::min);
    let vmax = v
        .iter()
        .map(|p| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt())
        .fold(0.0, f32::max);
    println!("after 1.5 s: lowest z {zmin} m (lowest ever {lowest}), max speed {vmax} m/s");
    assert!(
        zmin <= offset + 1e-3,
        "resting on the ground within d̂ above the offset: {zmin} m"
    );
    assert!(vmax < 0.05, "at rest: {vmax} m/s");
    assert_no_validation_errors(&ctx);
}

#[test]
fn twisted_beam_inverts_no_tet() {
    let ctx = context(false);
    // Ends turned two full turns each in opposite directions over 1 s (4 pi rad/s); the second
    // stops at 0.75 s (`until`), which the position check below follows.
    let scene = Scene::parse(
        r#"
[simulation]
frame_rate = 120.0
gravity = [0.0, 0.0, 0.0]

[[body]]
name = "beam"
mesh = { generator = "box", size = [0.5, 0.1, 0.1], cells = [10, 2, 2] }
translation = [0.0, 0.0, 1.0]
material = { model = "stable-neo-hookean", youngs_modulus = 1e6, poisson_ratio = 0.45, density = 1000.0 }
motion = [
    { vertices = { region = { min = [-0.251, -1.0, 0.0], max = [-0.249, 1.0, 2.0] } }, axis = [1.0, 0.0, 0.0], center = [0.0, 0.0, 1.0], angular_velocity = 12.566370614359172 },
    { vertices = { region = { min = [0.249, -1.0, 0.0], max = [0.251, 1.0, 2.0] } }, axis = [1.0, 0.0, 0.0], center = [0.0, 0.0, 1.0], angular_velocity = -12.566370614359172, until = 0.75 },
]
"#,
        "twist",
        &[],
    )
    .unwrap();
    let model = SimModel::from_scene(&scene).unwrap();
    let settings = NewtonSettings {
        h: scene.simulation.time_step(),
        max_iterations: 30,
        ..base_settings()
    };
    let mut stepper = newton_driven(
        &ctx,
        &model,
        &[],
        ElementModel::StableNeoHookean,
        settings.clone(),
    );
    let rest: Vec<TetRest> = model
        .tets
        .iter()
        .map(|t| TetRest::new(&t.map(|v| Vector3::from(model.positions[v as usize]))).unwrap())
        .collect();
    let mut min_det = f64::INFINITY;
    for step in 1..=120 {
        stepper.step().unwrap();
        if step % 10 == 0 {
            let x = stepper.positions().read().unwrap();
            let xv = |v: u32| {
                Vector3::new(
                    x[v as usize][0] as f64,
                    x[v as usize][1] as f64,
                    x[v as usize][2] as f64,
                )
            };
            for (t, r) in model.tets.iter().zip(&rest) {
                min_det = min_det.min(r.deformation_gradient(&t.map(xv)).determinant());
            }
            // Scripted vertices follow their motion.
            let time = step as f64 * settings.h;
            for (v, &m) in model
                .vertex_motion
                .iter()
                .enumerate()
                .filter(|(_, m)| **m != u32::MAX)
            {
                let want = model.motions[m as usize].position(model.positions[v], time);
                let got = xv(v as u32);
                assert!(
                    (got - Vector3::from(want)).norm() < 1e-4,
                    "step {step} vertex {v}: {got:?} vs {want:?}"
                );
            }
        }
    }
    println!("twisted beam: smallest det F over the run {min_det:.3}");
    assert!(min_det > 0.0, "a tet inverted: det F = {min_det}");
    assert_no_validation_errors(&ctx);
}

#[test]
fn beam_clamped_at_both_ends_under_traction_matches_the_dense_static_solve() {
    let ctx = context(false);
    let scene = Scene::parse(
        r#"
[simulation]
gravity = [0.0, 0.0, 0.0]

[[body]]
name = "beam"
mesh = { generator = "box", size = [0.4, 0.05, 0.05], cells = [8, 2, 2] }
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
fixed = [
    { region = { min = [-0.201, -1.0, -1.0], max = [-0.199, 1.0, 1.0] } },
    { region = { min = [0.199, -1.0, -1.0], max = [0.201, 1.0, 1.0] } },
]
force = [{ vertices = { region = { min = [-0.2, -0.03, 0.024], max = [0.2, 0.03, 0.026] } }, traction = [0.0, 0.0, -500.0] }]
"#,
        "traction",
        &[],
    )
    .unwrap();
    let model = SimModel::from_scene(&scene).unwrap();
    let (mu, lambda) = lame(1e5, 0.3);
    let want = static_solve(
        &model,
        Material::StableNeoHookean { mu, lambda },
        Vector3::zeros(),
    );
    let settings = NewtonSettings {
        tolerance: 1e-7,
        pcg_tolerance: 1e-5,
        pcg_max_iterations: 2000,
        ..base_settings()
    };
    let mut stepper = newton_driven(&ctx, &model, &[], ElementModel::StableNeoHookean, settings);
    for _ in 0..30 {
        stepper.step().unwrap();
    }
    let got = stepper.positions().read().unwrap();
    // Midspan: the vertex closest to x = 0 on the top face.
    let mid = (0..model.positions.len())
        .min_by(|&a, &b| {
            let k = |v: usize| model.positions[v][0].abs() + (model.positions[v][2] - 0.025).abs();
            k(a).total_cmp(&k(b))
        })
        .unwrap();
    let cpu = model.positions[mid][2] - want[mid].z;
    let gpu = model.positions[mid][2] - got[mid][2] as f64;
    println!("midspan deflection under traction: CPU {cpu:.6} m, GPU {gpu:.6} m");
    assert!(cpu > 1e-3, "visible deflection: {cpu}");
    assert!((gpu - cpu).abs() <= 0.01 * cpu, "GPU {gpu} vs CPU {cpu}");
    assert_no_validation_errors(&ctx);
}

/// A block sunk into a frictional ground, a cloth sheet on a moving, spinning frictional sphere, a pinned
/// rod through a frictional box, with gravity, initial velocities and a load.
const MIXED: &str = r#"
[simulation]
frame_rate = 60.0
substeps = 1
[[body]]
name = "block"
mesh = { generator = "box", size = [0.2, 0.2, 0.2], cells = [2, 2, 2] }
translation = [0.0, 0.0, 0.08]
velocity = [0.3, 0.0, -0.5]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
force = [{ vertices = { region = { min = [-1.0, -1.0, 0.1], max = [1.0, 1.0, 1.0] } }, total = [0.0, 5.0, 0.0] }]
[[body]]
name = "sheet"
mesh = { generator = "cloth", size = [0.4, 0.4, 0.0], cells = [4, 4, 1] }
translation = [1.0, 0.0, 0.45]
material = { model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-3 }
[[body]]
name = "rod"
mesh = { generator = "rod", size = [0.5, 0.0, 0.0], cells = [8, 1, 1] }
translation = [0.0, 1.0, 0.3]
material = { model = "rod", youngs_modulus = 1e8, poisson_ratio = 0.3, density = 1000.0, radius = 0.005 }
fixed = [{ indices = [0] }]
[[collider]]
shape = { plane = { normal = [0.0, 0.0, 2.0], offset = 0.0 } }
friction = 0.5
[[collider]]
shape = { sphere = { center = [1.0, 0.0, 0.2], radius = 0.3 } }
friction = 0.3
velocity = [0.2, 0.0, 0.0]
angular_velocity = [0.0, 1.0, 3.0]
offset = 0.005
[[collider]]
shape = { box = { min = [-0.1, 0.9, 0.25], max = [0.1, 1.1, 0.32] } }
friction = 0.4
"#;

#[test]
fn gpu_linearization_matches_the_cpu_reference_with_cloth_rods_colliders_and_friction() {
    use supple::cpu_reference::newton::{linearize_at_step_start, PotentialSetup};
    let ctx = context(false);
    let scene = Scene::parse(MIXED, "mixed", &[]).unwrap();
    let model = SimModel::from_scene(&scene).unwrap();
    let colliders = supple::contact::colliders::from_scene(&scene);
    let h = 1.0 / 60.0;
    let settings = NewtonSettings {
        h,
        gravity: [0.0, 0.0, -9.81],
        max_iterations: 10,
        pcg_max_iterations: 500,
        friction_slip: 1e-3 * h,
        ..base_settings()
    };
    let driven = newton_driven(
        &ctx,
        &model,
        &colliders,
        ElementModel::StableNeoHookean,
        settings,
    );
    let (rhs, diag, energy) = driven.stepper.linearize(&driven.state, &[]).unwrap();
    let stepper = &driven.stepper;
    let (mu, lambda) = lame(1e5, 0.3);
    let setup = PotentialSetup {
        rest: &model.positions,
        masses: &model.masses,
        inv_mass: &model.inv_mass,
        tets: &model.tets,
        tet_materials: vec![Material::StableNeoHookean { mu, lambda }; model.tets.len()],
        thin: &model.thin_elements,
        external_forces: &model.external_forces,
        colliders: &colliders,
        collider_offsets: &[],
        h,
        gravity: [0.0, 0.0, -9.81],
        kappa: 1000.0,
        dhat: 1e-3,
        slip: 1e-3 * h,
    };
    let x: Vec<Vector3<f64>> = model.positions.iter().map(|p| Vector3::from(*p)).collect();
    let v: Vec<Vector3<f64>> = model.velocities.iter().map(|p| Vector3::from(*p)).collect();
    let want = linearize_at_step_start(&setup, &x, &v, h);
    let (want_g, want_d, want_e) = (&want.gradient, &want.diag, want.energy);
    // The warm start's stiffness estimate, assembled next to the diagonal blocks.
    let stiffness = stepper.stiffness_estimate().unwrap();
    for i in 0..x.len() {
        let (got, w) = (stiffness[i] as f64, want.stiffness[i]);
        assert!(
            (got - w).abs() <= 1e-3 * w.abs(),
            "vertex {i}: stiffness {got} vs {w}"
        );
    }
    let decades: std::collections::BTreeSet<i64> = want
        .stiffness
        .iter()
        .map(|e| e.log10().floor() as i64)
        .collect();
    assert!(decades.len() >= 3, "heterogeneous stiffness: {decades:?}");
    // Every collider starts in contact somewhere (a vertex inside it, pushed out by the
    // prediction to d̂/2 above its offset), so each barrier and friction path is exercised.
    use supple::cpu_reference::contact::{distance, push_out};
    for c in &colliders {
        assert!(
            x.iter().any(|p| distance(c, p, h).0 < 0.0),
            "{c:?} touches nothing"
        );
        assert!(
            x.iter()
                .map(|p| push_out(&colliders, p, h, 0.5e-3))
                .any(|p| distance(c, &p, h).0 < 1e-3),
            "{c:?} is out of the barrier's reach"
        );
    }
    let gscale = want_g.iter().map(|g| g.norm()).fold(0.0, f64::max);
    let dscale = want_d.iter().map(|d| d.norm()).fold(0.0, f64::max);
    for i in 0..x.len() {
        let got = -Vector3::new(rhs[i][0], rhs[i][1], rhs[i][2]).cast::<f64>();
        assert!(
            (got - want_g[i]).norm() <= 1e-3 * gscale,
            "vertex {i}: gradient {got} vs {}",
            want_g[i]
        );
        for r in 0..3 {
            for c in 0..3 {
                let got = diag[3 * i + r][c] as f64;
                assert!(
                    (got - want_d[i][(r, c)]).abs() <= 1e-3 * dscale,
                    "vertex {i} block ({r},{c}): {got} vs {}",
                    want_d[i][(r, c)]
                );
            }
        }
    }
    assert!(
        (energy - want_e).abs() <= 1e-3 * want_e.abs().max(1e-3),
        "energy {energy} vs {want_e}"
    );
    assert_no_validation_errors(&ctx);
}

/// Newton stops on the gradient norm: a beam at rest without gravity is in equilibrium, so a
/// step with a gradient tolerance takes no iteration, and one without takes at least one.
#[test]
fn newton_stops_on_the_gradient_norm() {
    let ctx = context(false);
    let scene = Scene::parse(BEAM, "beam", &[]).unwrap();
    let model = SimModel::from_scene(&scene).unwrap();
    let iterations = |gradient_tolerance: f64| {
        let settings = NewtonSettings {
            h: 0.01,
            max_iterations: 10,
            tolerance: 0.0,
            gradient_tolerance,
            pcg_max_iterations: 100,
            contact_stiffness: 100.0,
            ..base_settings()
        };
        let mut s = newton_driven(&ctx, &model, &[], ElementModel::StableNeoHookean, settings);
        let st = s.step().unwrap();
        (st.newton_iterations, st.gradient_norm)
    };
    // At rest the unbalanced force is f32 rounding of the elastic forces (~1e-5 N here).
    let (with, g) = iterations(1e-4);
    let (without, _) = iterations(0.0);
    assert!(g <= 1e-4, "at rest the unbalanced force is ~0: {g} N");
    assert_eq!(with, 0, "the gradient test stops before the first solve");
    assert!(without >= 1);
    assert_no_validation_errors(&ctx);
}

/// `kernels/newton/control.comp` (the device-driven Newton loop's decisions) equals its
/// reference `cpu_reference::newton::device_control` bit for bit in every mode, on random
/// states: phases, energies that rise or fall (also by less than the slack, or to infinity),
/// unfinished and non-finite PCG solves, line searches at their floor, displacements at the
/// tolerance.
#[test]
fn device_control_matches_the_reference() {
    use rand::Rng;
    use supple::cpu_reference::newton::device_control;
    use supple::stepper::newton::device_loop::{control_words, phase, ControlMode, ControlParams};
    use supple::vk::{ids, BufferUsage, CompileOptions, Dispatch, Graph};
    let ctx = context(false);
    let mut rng = supple_gpu_tests::rng(77);
    let mut log_rng = supple_gpu_tests::rng(78);
    let host = BufferUsage::HOST_READ | BufferUsage::HOST_WRITE | BufferUsage::STORAGE;
    let max_iterations = 5;
    let n_words = control_words(max_iterations);
    let words = ctx.create_buffer::<u32>("words", n_words, host).unwrap();
    let sums = ctx.create_buffer::<[u32; 2]>("sums", 4, host).unwrap();
    let pcg = ctx.create_buffer::<f32>("pcg", 24, host).unwrap();
    let alpha = ctx.create_buffer::<f32>("alpha", 1, host).unwrap();
    let mut settings = base_settings();
    settings.max_iterations = max_iterations;
    let modes = [
        ControlMode::Start,
        ControlMode::Solved,
        ControlMode::Tried,
        ControlMode::Accepted,
        ControlMode::Evaluated,
        ControlMode::Finished,
    ];
    let mut decided = [0usize; 6];
    for case in 0..240 {
        settings.gradient_tolerance = [0.0, 1e-3, 0.1][case % 3];
        settings.tolerance = [1e-5, 1e-3][case % 2];
        settings.max_halvings = [None, Some(3)][(case / 2) % 2];
        settings.warm_start.enabled = case % 5 != 0;
        let params = ControlParams::new(&settings);
        let mode = modes[case % 6];
        let graphs: Vec<_> = modes
            .iter()
            .map(|&m| {
                let mut g = Graph::new("control");
                g.dispatch(
                    Dispatch::new("control", ids::NEWTON_CONTROL, [1, 1, 1])
                        .workgroup_size(64)
                        .spec(&[m as u32])
                        .read_write(&words)
                        .read(&sums)
                        .read(&pcg)
                        .read_write(&alpha)
                        .push(&params),
                );
                g.compile(&ctx, CompileOptions::default()).unwrap()
            })
            .collect();
        // A random state.
        let mut w = vec![0u32; n_words];
        w[0] = [
            phase::ASSEMBLE,
            phase::SOLVING,
            phase::SEARCH,
            phase::ACCEPT,
            phase::EVALUATE,
            phase::FINISH,
            0,
        ][rng.random_range(0..7)];
        w[1] = rng.random_range(1..=max_iterations);
        w[2] = rng.random_range(0..4);
        let e: f32 = rng.random_range(0.1..10.0);
        w[4] = e.to_bits();
        w[5] = (e * 1e-8 * rng.random_range(-1.0f32..1.0)).to_bits();
        w[7] = rng.random_range(0.0f32..0.01).to_bits();
        let a0: f32 = [1.0, 0.25, 0.125, 2e-6][rng.random_range(0..4)];
        // Trial energies: lower, higher, equal, within the pair's low part, infinite.
        let (s0, s1) = match rng.random_range(0..5) {
            0 => (e * 0.4, e * 0.5),
            1 => (e * 0.7, e * 0.5),
            2 => (e, 0.0),
            3 => (e, f32::from_bits(w[5])),
            _ => (f32::INFINITY, 1.0),
        };
        let mut s = [
            s0,
            s1,
            rng.random_range(0.0f32..0.2),
            rng.random_range(0.0f32..0.02),
        ];
        if case % 7 == 0 {
            // Displacement exactly at the tolerance.
            s[3] = settings.tolerance as f32;
        }
        let mut scal = vec![0f32; 24];
        scal[params.slot_done as usize] = (rng.random_range(0..3) > 0) as u32 as f32;
        scal[params.slot_iterations as usize] = rng.random_range(0..100) as f32;
        scal[params.slot_warm_iterations as usize] = rng.random_range(0..30) as f32;
        // Their own generator: the states above keep their sequence (a state with SOLVES at
        // max_iterations in a solving phase, which the loop never reaches, would log past
        // the buffer's end).
        scal[params.slot_exit as usize] = log_rng.random_range(1..=5) as f32;
        scal[params.slot_model as usize] = log_rng.random_range(0.0f32..10.0);
        scal[params.slot_remaining as usize] = log_rng.random_range(0.0f32..1.0);
        scal[params.slot_residual as usize] =
            [1e-5, 0.3, f32::NAN, f32::INFINITY][rng.random_range(0..4)];
        words.write(&w).unwrap();
        sums.write(&s.map(|v| [v.to_bits(), 0])).unwrap();
        pcg.write(&scal).unwrap();
        alpha.write(&[a0]).unwrap();
        graphs[mode as usize].run().unwrap();
        let mut want = w.clone();
        let mut a = a0;
        device_control(mode as u32, &mut want, s, &scal, &mut a, &params);
        if want != w {
            decided[mode as usize] += 1;
        }
        assert_eq!(
            words.read().unwrap(),
            want,
            "case {case}, mode {mode:?}, sums {s:?}"
        );
        assert_eq!(
            alpha.read().unwrap()[0].to_bits(),
            a.to_bits(),
            "case {case}, mode {mode:?}"
        );
    }
    // Every mode changed the state in some cases (the comparison is not vacuous).
    assert!(decided.iter().all(|&d| d > 0), "{decided:?}");
    assert_no_validation_errors(&ctx);
}

/// A beam whose ends follow two scripted motions: a turn about its axis, and a turn with a
/// drift that stops at 0.02 s.
const SCRIPTED_BEAM: &str = r#"
[[body]]
name = "beam"
mesh = { generator = "box", size = [0.4, 0.1, 0.1], cells = [4, 1, 1] }
translation = [0.1, 0.2, 0.3]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
motion = [
    { vertices = { region = { min = [-0.11, -1.0, -1.0], max = [-0.09, 1.0, 1.0] } }, axis = [1.0, 0.0, 0.0], center = [0.0, 0.2, 0.3], angular_velocity = -3.0 },
    { vertices = { region = { min = [0.29, -1.0, -1.0], max = [0.31, 1.0, 1.0] } }, axis = [0.0, 0.6, 0.8], center = [0.3, 0.2, 0.3], angular_velocity = 5.0, velocity = [0.5, -0.2, 0.1], until = 0.02 },
]
"#;

/// The model's positions moved away from the rest pose (every vertex), as mid-step iterates
/// are: as f32 for the device and those f32 values as f64 for the reference.
fn off_rest_positions(model: &SimModel) -> (Vec<[f32; 4]>, Vec<[f64; 3]>) {
    let x: Vec<[f32; 4]> = model
        .positions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let s = (i as f64 * 0.37).sin() * 1e-2;
            [
                (p[0] + s) as f32,
                (p[1] - 0.5 * s) as f32,
                (p[2] + 0.25 * s) as f32,
                0.0,
            ]
        })
        .collect();
    let read = x
        .iter()
        .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
        .collect();
    (x, read)
}

#[test]
fn scripted_moves_match_the_reference() {
    use supple::cpu_reference::newton::script;
    let ctx = context(false);
    let scene = Scene::parse(SCRIPTED_BEAM, "scripted_beam", &[]).unwrap();
    let model = SimModel::from_scene(&scene).unwrap();
    let h = 1.0 / 30.0;
    let settings = NewtonSettings {
        h,
        ..base_settings()
    };
    let driven = newton_driven(&ctx, &model, &[], ElementModel::StableNeoHookean, settings);
    let (x0_f32, x0_read) = off_rest_positions(&model);
    driven.state.x.write(&x0_f32).unwrap();
    let alpha = 0.37f32;
    let got = driven
        .stepper
        .script_move(&driven.state, alpha)
        .unwrap()
        .expect("the beam has scripted vertices");
    let t = driven.state.clock.next_time();
    let want_dir = script::direction(&model, &x0_read, t);
    let want_x = script::advance(&model, &x0_read, &want_dir, alpha as f64);
    let (mut scripted, mut moved) = (0, 0);
    for i in 0..x0_read.len() {
        let is_scripted = model.vertex_motion[i] != u32::MAX;
        scripted += usize::from(is_scripted);
        for c in 0..3 {
            let (gd, wd) = (got.direction[i][c] as f64, want_dir[i][c]);
            assert!(
                (gd - wd).abs() <= 2e-6,
                "vertex {i} direction[{c}]: {gd} vs {wd}"
            );
            let (gx, wx) = (got.positions[i][c] as f64, want_x[i][c]);
            assert!((gx - wx).abs() <= 2e-6, "vertex {i} x[{c}]: {gx} vs {wx}");
            if !is_scripted {
                // Free vertices: no move, bit for bit.
                assert_eq!(got.direction[i][c], 0.0);
                assert_eq!(got.positions[i][c], x0_f32[i][c]);
            }
        }
        if is_scripted && want_dir[i].iter().map(|d| d * d).sum::<f64>() > 1e-8 {
            moved += 1;
        }
    }
    assert_eq!(scripted, 8, "both end faces (4 vertices each) are scripted");
    assert_eq!(moved, scripted, "every scripted vertex has somewhere to go");
    assert_no_validation_errors(&ctx);
}

#[test]
fn scripted_pull_matches_the_reference() {
    // Scripted vertices as unknowns pulled to their pose (the BAL method's boundary
    // conditions): the pull's start, multiplier steps and weight growth of
    // `kernels/newton/script.comp` against `cpu_reference::newton::script`.
    use supple::cpu_reference::newton::script;
    let ctx = context(false);
    let scene = Scene::parse(SCRIPTED_BEAM, "scripted_beam", &[]).unwrap();
    let model = SimModel::from_scene(&scene).unwrap();
    let weight = 1e4;
    let settings = NewtonSettings {
        h: 1.0 / 30.0,
        script_pull: Some(weight),
        ..base_settings()
    };
    let driven = newton_driven(&ctx, &model, &[], ElementModel::StableNeoHookean, settings);
    let (x_f32, x) = off_rest_positions(&model);
    driven.state.x.write(&x_f32).unwrap();
    let t = driven.state.clock.next_time();
    let n = x.len();
    let scripted = |i: usize| model.vertex_motion[i] != u32::MAX;
    let mut mass: Vec<f64> = (0..n)
        .map(|i| model.masses[i] * if scripted(i) { weight } else { 1.0 })
        .collect();
    let mut shift = vec![[0.0f64; 3]; n];
    let mut shift_last = vec![[0.0f64; 3]; n];
    for stiffen in [0u32, 2] {
        let got = driven
            .stepper
            .script_pull(&driven.state, stiffen)
            .unwrap()
            .expect("the beam's scripted vertices are pulled");
        // The pull starts from the shift the last call left (zero at first), extrapolated by
        // its change since the call before (nothing at first; the second call's start moves s).
        let start = script::pull_start(&model, &shift, &shift_last, t);
        let started: Vec<[f64; 3]> = start.iter().map(|u| u.map_or([0.0; 3], |u| u.0)).collect();
        shift_last = start.iter().map(|u| u.map_or([0.0; 3], |u| u.1)).collect();
        let first = script::pull_update(&model, &x, &started, t);
        let shift1: Vec<[f64; 3]> = first.iter().map(|u| u.map_or([0.0; 3], |u| u.0)).collect();
        let factor = 10f64.powi(stiffen as i32);
        let (m, shift2) = script::stiffen(&model, &mass, &shift1, factor);
        shift_last = script::stiffen(&model, &mass, &shift_last, factor).1;
        mass = m;
        let want = script::pull_update(&model, &x, &shift2, t);
        shift = want.iter().map(|u| u.map_or([0.0; 3], |u| u.0)).collect();
        let mut pulled = 0;
        for i in 0..n {
            let (gm, wm) = (got.mass[i] as f64, mass[i]);
            assert!(
                (gm - wm).abs() <= 1e-6 * wm,
                "vertex {i} mass: {gm} vs {wm}"
            );
            let Some((ws, wy)) = want[i] else {
                assert_eq!(got.mass[i], model.masses[i] as f32, "free vertex {i}");
                continue;
            };
            pulled += 1;
            let want_start = start[i].expect("a scripted vertex has a start target").2;
            for c in 0..3 {
                let g0 = got.start_target[i][c] as f64;
                assert!(
                    (g0 - want_start[c]).abs() <= 2e-6,
                    "vertex {i} start[{c}]: {g0}"
                );
                let gl = got.shift_last[i][c] as f64;
                assert!(
                    (gl - shift_last[i][c]).abs() <= 2e-6,
                    "vertex {i} shift_last[{c}]: {gl} vs {}",
                    shift_last[i][c]
                );
                let (gs, gy) = (got.shift[i][c] as f64, got.target[i][c] as f64);
                assert!(
                    (gs - ws[c]).abs() <= 2e-6,
                    "vertex {i} shift[{c}]: {gs} vs {}",
                    ws[c]
                );
                assert!(
                    (gy - wy[c]).abs() <= 2e-6,
                    "vertex {i} target[{c}]: {gy} vs {}",
                    wy[c]
                );
            }
            // The shift is not trivially zero: the vertex is away from its pose.
            assert!(ws.iter().map(|c| c * c).sum::<f64>() > 1e-8, "vertex {i}");
        }
        assert_eq!(pulled, 8, "both end faces (4 vertices each) are pulled");
    }
    assert_no_validation_errors(&ctx);
}
