//! Changing a simulation between frames (`engine/src/simulation/control.rs`): pinned targets,
//! loads and colliders have their plain effect, bodies added or removed leave the others'
//! state untouched, and bad arguments are errors naming the argument.
use supple::intersection_check::frame_intersections;
use supple::scene::{
    Body, Collider, ColliderShape, Force, Generator, Material, MaterialModel, MeshSource,
    RegionBox, Scene, SolverKind, VertexSet,
};
use supple::simulation::{SimError, Simulation, SimulationBuilder};
use supple::Context;
use supple_gpu_tests::{assert_no_validation_errors, body_surface, context};

const SOLVERS: [SolverKind; 2] = [SolverKind::Newton, SolverKind::Xpbd];

fn cube(name: &str, at: [f64; 3]) -> Body {
    Body::new(
        name,
        MeshSource::generator(Generator::Box, [0.2, 0.2, 0.2], [2, 2, 2]),
        Material::new(MaterialModel::StableNeoHookean, 2e5, 0.3, 1000.0),
    )
    .translated(at)
}

/// A 0.4 m beam along x, clamped at its x = −0.2 end.
fn clamped_beam() -> Body {
    let mut b = Body::new(
        "beam",
        MeshSource::generator(Generator::Box, [0.4, 0.1, 0.1], [4, 1, 1]),
        Material::new(MaterialModel::StableNeoHookean, 2e5, 0.3, 1000.0),
    )
    .translated([0.0, 0.0, 0.5]);
    b.fixed.push(VertexSet {
        region: Some(RegionBox {
            min: [-0.21, -1.0, -1.0],
            max: [-0.19, 1.0, 1.0],
        }),
        indices: None,
    });
    b
}

/// The scene of `builder` with `solver` (5 XPBD substeps per step: small and fast).
fn build(ctx: &Context, builder: SimulationBuilder, solver: SolverKind) -> Simulation {
    let mut scene: Scene = builder.solver(solver).into_scene().expect("valid scene");
    scene.xpbd.substeps = 5;
    Simulation::new(ctx, &scene).expect("simulation")
}

fn frames(sim: &mut Simulation, n: u32) {
    for _ in 0..n {
        sim.step_frame().expect("step");
    }
}

fn f32_bits(x: &[[f64; 3]]) -> Vec<[u32; 3]> {
    x.iter().map(|p| p.map(|c| (c as f32).to_bits())).collect()
}

fn argument(e: SimError) -> String {
    match e {
        SimError::InvalidArgument { argument, .. } => argument,
        other => panic!("expected an invalid argument, got {other}"),
    }
}

#[test]
fn pinned_vertices_move_to_their_new_targets() {
    let ctx = context(false);
    for solver in SOLVERS {
        let mut sim = build(&ctx, SimulationBuilder::new().body(clamped_beam()), solver);
        let mut unmoved = build(&ctx, SimulationBuilder::new().body(clamped_beam()), solver);
        let pins = sim.pinned_vertices("beam").expect("pins").to_vec();
        assert_eq!(pins.len(), 4, "a 2x2 end face");
        frames(&mut sim, 1);
        frames(&mut unmoved, 1);
        let lifted: Vec<[f64; 3]> = sim
            .pin_targets(0)
            .expect("targets")
            .iter()
            .map(|p| [p[0] + 0.02, p[1], p[2] + 0.1])
            .collect();
        sim.set_pin_targets("beam", &lifted).expect("set targets");
        assert_eq!(sim.pin_targets(0).expect("targets"), &lifted[..]);
        frames(&mut sim, 2);
        frames(&mut unmoved, 2);
        let x = sim.positions().expect("positions");
        for (k, &v) in pins.iter().enumerate() {
            assert_eq!(
                f32_bits(&x[v as usize..v as usize + 1]),
                f32_bits(&lifted[k..k + 1]),
                "{solver:?}: pin {v} sits on its target"
            );
        }
        // The lifted clamp pulls the free vertices up: their mean height exceeds that of the
        // run with the clamp left in place.
        let free_z = |x: &[[f64; 3]]| {
            let z: Vec<f64> = (0..x.len())
                .filter(|v| !pins.contains(&(*v as u32)))
                .map(|v| x[v][2])
                .collect();
            z.iter().sum::<f64>() / z.len() as f64
        };
        let y = unmoved.positions().expect("positions");
        assert!(
            free_z(&x) > free_z(&y) + 0.005,
            "{solver:?}: the beam rises with the clamp: {} m, unmoved {} m",
            free_z(&x),
            free_z(&y)
        );
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn loads_accelerate_the_centre_of_mass_by_f_over_m() {
    let ctx = context(false);
    for solver in SOLVERS {
        let builder = SimulationBuilder::new()
            .gravity([0.0; 3])
            .body(cube("cube", [0.0, 0.0, 0.0]));
        let mut sim = build(&ctx, builder, solver);
        let m = sim.model().masses.clone();
        let total_mass: f64 = m.iter().sum();
        let centre = |x: &[[f64; 3]]| {
            let mut c = [0.0; 3];
            for (p, mi) in x.iter().zip(&m) {
                for k in 0..3 {
                    c[k] += mi * p[k] / total_mass;
                }
            }
            c
        };
        let c0 = centre(&sim.positions().expect("positions"));
        // 8 N along +x and −4 N along y on an 8 kg cube: a = (1, −0.5, 0) m/s².
        let all = VertexSet {
            region: Some(RegionBox {
                min: [-1.0; 3],
                max: [1.0; 3],
            }),
            indices: None,
        };
        sim.set_loads(
            "cube",
            &[Force {
                vertices: all,
                total: Some([8.0, -4.0, 0.0]),
                traction: None,
            }],
        )
        .expect("set loads");
        let f = sim.external_forces(0).expect("forces");
        let sum: f64 = f.iter().map(|v| v[0]).sum();
        assert!((sum - 8.0).abs() < 1e-12, "the total is spread: {sum}");
        let steps = 3;
        frames(&mut sim, steps);
        let c = centre(&sim.positions().expect("positions"));
        // Implicit Euler (Newton) and XPBD's substeps both give x_N = a h² N (N + 1) / 2 for
        // the centre of mass under a constant force (internal forces cancel).
        let (h, n) = match solver {
            SolverKind::Xpbd => (1.0 / 60.0 / 5.0, 5.0 * steps as f64),
            _ => (1.0 / 60.0, steps as f64),
        };
        let expect = h * h * n * (n + 1.0) / 2.0;
        let dx = c[0] - c0[0];
        let dy = c[1] - c0[1];
        assert!(
            (dx - expect).abs() < 0.02 * expect,
            "{solver:?}: moved {dx} m along x, expected {expect}"
        );
        assert!(
            (dy + 0.5 * expect).abs() < 0.02 * expect,
            "{solver:?}: moved {dy} m along y, expected {}",
            -0.5 * expect
        );
        assert!(
            (c[2] - c0[2]).abs() < 0.01 * expect,
            "{solver:?}: no z drift"
        );
        // Removing the loads: the centre moves on at constant velocity (no acceleration).
        sim.set_loads(0, &[]).expect("clear loads");
        assert!(sim
            .external_forces(0)
            .expect("forces")
            .iter()
            .all(|f| *f == [0.0; 3]));
        let x1 = centre(&sim.positions().expect("positions"));
        frames(&mut sim, 1);
        let x2 = centre(&sim.positions().expect("positions"));
        frames(&mut sim, 1);
        let x3 = centre(&sim.positions().expect("positions"));
        let (d1, d2) = (x2[0] - x1[0], x3[0] - x2[0]);
        assert!(
            (d2 - d1).abs() < 0.02 * d1,
            "{solver:?}: constant velocity without loads: {d1} then {d2}"
        );
        // Per-vertex forces: the same total on one vertex gives the same centre motion.
        let mut per_vertex = vec![[0.0; 3]; m.len()];
        per_vertex[0] = [0.0, 0.0, 16.0];
        sim.set_external_forces("cube", &per_vertex)
            .expect("set forces");
        let z0 = centre(&sim.positions().expect("positions"))[2];
        frames(&mut sim, steps);
        let z = centre(&sim.positions().expect("positions"))[2] - z0;
        assert!(
            (z - 2.0 * expect).abs() < 0.05 * expect,
            "{solver:?}: moved {z} m along z, expected {}",
            2.0 * expect
        );
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn a_moving_collider_pushes_the_body() {
    let ctx = context(false);
    for solver in SOLVERS {
        // No gravity; the plane starts 5 cm below the cube's bottom face (z = 0).
        let builder = SimulationBuilder::new()
            .gravity([0.0; 3])
            .body(cube("cube", [0.0, 0.0, 0.1]))
            .ground_plane([0.0, 0.0, 1.0], -0.05);
        let mut sim = build(&ctx, builder, solver);
        frames(&mut sim, 1);
        let rest = sim.positions().expect("positions");
        assert!(
            rest.iter().all(|p| p[2] > -1e-6),
            "nothing touches the plane yet"
        );
        sim.set_collider_velocity(0, [0.0, 0.0, 3.0])
            .expect("set velocity");
        let t0 = sim.time();
        frames(&mut sim, 3);
        let c = sim.collider(0).expect("collider");
        let offset = match c.shape {
            ColliderShape::Plane { offset, .. } => offset,
            _ => panic!("still a plane"),
        };
        let expect = -0.05 + 3.0 * (sim.time() - t0);
        assert!(
            (offset - expect).abs() < 1e-9,
            "plane at {offset}, expected {expect}"
        );
        assert!(offset > 0.09, "the plane rose 15 cm: {offset}");
        let x = sim.positions().expect("positions");
        let bottom = x.iter().map(|p| p[2]).fold(f64::INFINITY, f64::min);
        assert!(
            bottom > offset - 0.01,
            "{solver:?}: the cube is pushed up with the plane: bottom {bottom} m, plane {offset} m"
        );
        // Teleport, in a fresh simulation at rest: a sphere (the kind may change) 2 cm into
        // the middle of the cube's bottom face (z = 0).
        let builder = SimulationBuilder::new()
            .gravity([0.0; 3])
            .body(cube("cube", [0.0, 0.0, 0.1]))
            .ground_plane([0.0, 0.0, 1.0], -0.05);
        let mut sim = build(&ctx, builder, solver);
        let mut sphere = sim.collider(0).expect("collider");
        sphere.shape = ColliderShape::Sphere {
            center: [0.0, 0.0, 0.02 - 0.5],
            radius: 0.5,
        };
        sim.set_collider(0, sphere.clone()).expect("set collider");
        assert_eq!(sim.collider(0).expect("collider"), sphere);
        frames(&mut sim, 2);
        let x = sim.positions().expect("positions");
        let lowest = x
            .iter()
            .filter(|p| p[0].abs() < 1e-3 && p[1].abs() < 1e-3)
            .map(|p| p[2])
            .fold(f64::INFINITY, f64::min);
        assert!(
            lowest > 0.015,
            "{solver:?}: the sphere pushes the bottom centre up: 0 -> {lowest} m"
        );
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn an_added_body_falls_and_the_others_keep_their_state_bit_for_bit() {
    // Staging forced: the rebuild's uploads take the discrete-GPU path.
    let ctx = context(true);
    for solver in SOLVERS {
        let builder = SimulationBuilder::new()
            .body(clamped_beam())
            .body(cube("cube", [0.0, 0.6, 0.3]))
            .ground_plane([0.0, 0.0, 1.0], 0.0);
        let mut sim = build(&ctx, builder, solver);
        frames(&mut sim, 2);
        let moved: Vec<[f64; 3]> = sim
            .pin_targets("beam")
            .expect("targets")
            .iter()
            .map(|p| [p[0], p[1], p[2] + 0.05])
            .collect();
        sim.set_pin_targets("beam", &moved).expect("pins");
        let (x0, v0, t0) = (
            sim.positions().expect("positions"),
            sim.velocities().expect("velocities"),
            sim.time(),
        );
        let index = sim
            .add_body(cube("new", [0.0, -0.6, 0.4]))
            .expect("add body");
        assert_eq!(index, 2);
        assert_eq!(sim.body_index("new").expect("named"), 2);
        assert_eq!(sim.time(), t0, "the clock carries over");
        assert_eq!(sim.frames(), 2);
        assert_eq!(sim.pin_targets("beam").expect("targets"), &moved[..]);
        let (x, v) = (
            sim.positions().expect("positions"),
            sim.velocities().expect("velocities"),
        );
        let n = x0.len();
        assert_eq!(sim.positions_view().count, x.len());
        assert_eq!(f32_bits(&x[..n]), f32_bits(&x0), "{solver:?}: positions");
        assert_eq!(f32_bits(&v[..n]), f32_bits(&v0), "{solver:?}: velocities");
        let r = sim.model().bodies[2].vertices.clone();
        let rest = &sim.model().positions[r.start as usize..r.end as usize];
        assert_eq!(
            f32_bits(&x[n..]),
            f32_bits(rest),
            "the new body starts at rest"
        );
        let mean_z =
            |x: &[[f64; 3]]| x[n..].iter().map(|p| p[2]).sum::<f64>() / (x.len() - n) as f64;
        frames(&mut sim, 2);
        let x2 = sim.positions().expect("positions");
        assert!(
            mean_z(&x2) < mean_z(&x) - 1e-3,
            "{solver:?}: the new body falls: {} -> {}",
            mean_z(&x),
            mean_z(&x2)
        );
        let pinned: Vec<[f64; 3]> = sim
            .pinned_vertices(0)
            .expect("pins")
            .iter()
            .map(|&p| x2[p as usize])
            .collect();
        assert_eq!(f32_bits(&pinned), f32_bits(&moved), "{solver:?}: pins held");
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn after_remove_body_the_others_continue_as_without_it() {
    let ctx = context(false);
    for solver in SOLVERS {
        let with_b = SimulationBuilder::new()
            .body(cube("b", [0.6, 0.0, 0.3]))
            .body(cube("a", [0.0, 0.0, 0.15]).with_velocity([0.3, 0.0, 0.0]))
            .ground_plane([0.0, 0.0, 1.0], 0.0);
        let without_b = SimulationBuilder::new()
            .body(cube("a", [0.0, 0.0, 0.15]).with_velocity([0.3, 0.0, 0.0]))
            .ground_plane([0.0, 0.0, 1.0], 0.0);
        let mut sim = build(&ctx, with_b, solver);
        let mut alone = build(&ctx, without_b, solver);
        frames(&mut sim, 2);
        let removed = sim.remove_body("b").expect("remove");
        assert_eq!(removed.name, "b");
        assert_eq!(sim.model().bodies.len(), 1);
        assert_eq!(
            sim.body_index("a").expect("a"),
            0,
            "a moved down to index 0"
        );
        frames(&mut sim, 2);
        frames(&mut alone, 4);
        let (x, y) = (
            sim.positions().expect("positions"),
            alone.positions().expect("positions"),
        );
        match solver {
            // Per-constraint sweeps: a's colours and arithmetic do not depend on b.
            SolverKind::Xpbd => assert_eq!(f32_bits(&x), f32_bits(&y), "XPBD: bit for bit"),
            // Newton couples the bodies through its global convergence tests.
            _ => {
                let d = x
                    .iter()
                    .zip(&y)
                    .flat_map(|(p, q)| (0..3).map(move |k| (p[k] - q[k]).abs()))
                    .fold(0.0, f64::max);
                assert!(d < 1e-4, "Newton: within {d} m of the run without b");
            }
        }
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn bad_arguments_are_errors_naming_the_argument() {
    let ctx = context(false);
    let builder = SimulationBuilder::new()
        .body(clamped_beam())
        .ground_plane([0.0, 0.0, 1.0], 0.0);
    let mut sim = build(&ctx, builder.clone(), SolverKind::Xpbd);
    assert_eq!(argument(sim.set_pin_targets(1, &[]).unwrap_err()), "body");
    assert_eq!(
        argument(sim.set_pin_targets("nope", &[]).unwrap_err()),
        "body"
    );
    assert_eq!(
        argument(sim.set_pin_targets(0, &[[0.0; 3]]).unwrap_err()),
        "targets"
    );
    let mut t = sim.pin_targets(0).expect("targets").to_vec();
    t[2][1] = f64::NAN;
    assert_eq!(
        argument(sim.set_pin_targets(0, &t).unwrap_err()),
        "targets[2]"
    );
    let n = sim.model().positions.len();
    assert_eq!(
        argument(sim.set_external_forces(0, &[]).unwrap_err()),
        "forces"
    );
    let mut f = vec![[0.0; 3]; n];
    f[5][0] = f64::INFINITY;
    assert_eq!(
        argument(sim.set_external_forces(0, &f).unwrap_err()),
        "forces[5]"
    );
    let both = Force {
        vertices: VertexSet {
            region: None,
            indices: Some(vec![0]),
        },
        total: Some([1.0, 0.0, 0.0]),
        traction: Some([1.0, 0.0, 0.0]),
    };
    assert_eq!(
        argument(sim.set_loads(0, std::slice::from_ref(&both)).unwrap_err()),
        "loads[0]"
    );
    let none = Force {
        vertices: VertexSet {
            region: None,
            indices: Some(vec![10_000]),
        },
        traction: None,
        ..both
    };
    assert_eq!(argument(sim.set_loads(0, &[none]).unwrap_err()), "loads[0]");
    let plane = sim.collider(0).expect("collider");
    assert_eq!(argument(sim.collider(1).unwrap_err()), "index");
    assert_eq!(
        argument(
            sim.set_collider_velocity(0, [0.0, f64::NAN, 0.0])
                .unwrap_err()
        ),
        "collider.velocity"
    );
    let ball = Collider {
        shape: ColliderShape::Sphere {
            center: [0.0; 3],
            radius: -1.0,
        },
        ..plane.clone()
    };
    assert_eq!(
        argument(sim.set_collider(0, ball).unwrap_err()),
        "collider.shape.sphere.radius"
    );
    assert_eq!(sim.collider(0).expect("collider"), plane, "unchanged");
    assert_eq!(argument(sim.remove_body(0).unwrap_err()), "body");
    let mut bad = cube("bad", [0.0; 3]);
    bad.material.poisson_ratio = 0.7;
    match sim.add_body(bad).unwrap_err() {
        SimError::Scene(e) => {
            assert_eq!(e.field.as_deref(), Some("body[1].material.poisson_ratio"))
        }
        other => panic!("expected a scene error, got {other}"),
    }
    assert_eq!(sim.model().bodies.len(), 1, "nothing changed");
    frames(&mut sim, 1);
    // Symplectic Euler: pins move, loads and colliders are refused.
    let mut scene = builder
        .solver(SolverKind::SymplecticEuler)
        .into_scene()
        .expect("scene");
    scene.simulation.substeps = 20;
    let mut sim = Simulation::new(&ctx, &scene).expect("symplectic");
    let unsupported = |e: SimError| match e {
        SimError::Unsupported { field, .. } => field,
        other => panic!("expected unsupported, got {other}"),
    };
    assert_eq!(
        unsupported(sim.set_external_forces(0, &vec![[0.0; 3]; n]).unwrap_err()),
        "simulation.solver"
    );
    assert_eq!(
        unsupported(sim.set_collider_velocity(0, [0.0; 3]).unwrap_err()),
        "simulation.solver"
    );
    let up: Vec<[f64; 3]> = sim
        .pin_targets(0)
        .expect("targets")
        .iter()
        .map(|p| [p[0], p[1], p[2] + 0.01])
        .collect();
    sim.set_pin_targets(0, &up).expect("symplectic pins");
    frames(&mut sim, 1);
    let x = sim.positions().expect("positions");
    let pins = sim.pinned_vertices(0).expect("pins");
    for (k, &v) in pins.iter().enumerate() {
        assert_eq!(
            f32_bits(&x[v as usize..v as usize + 1]),
            f32_bits(&up[k..k + 1])
        );
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn a_rebuild_keeps_the_collision_handling() {
    let ctx = context(false);
    let header = |solver: &str, method: &str| {
        format!(
            r#"
[simulation]
frame_rate = 60.0
solver = "{solver}"
[solver]
newton_max_iterations = 4
pcg_tolerance = 1e-3
[xpbd]
substeps = 5
[collision]
method = "{method}"
[[collider]]
shape = {{ plane = {{ normal = [0.0, 0.0, 1.0], offset = 0.0 }} }}
[[body]]
name = "a"
mesh = {{ generator = "box", size = [0.2, 0.2, 0.2], cells = [2, 2, 2] }}
translation = [0.0, 0.0, 0.12]
material = {{ model = "stable-neo-hookean", youngs_modulus = 2e5, poisson_ratio = 0.3, density = 1000.0 }}
"#
        )
    };
    for (solver, method) in [("newton", "two-way"), ("xpbd", "shortest-path")] {
        let scene = Scene::parse(&header(solver, method), method, &[]).expect("scene");
        let mut sim = Simulation::new(&ctx, &scene).expect("simulation");
        frames(&mut sim, 1);
        let x0 = sim.positions().expect("positions");
        if method == "two-way" {
            // Two-way needs an intersection-free start: an added body overlapping another or
            // inside a collider is refused, naming them, and nothing changes.
            for (body, names) in [
                (
                    cube("overlap", [0.05, 0.0, 0.1]),
                    ["'a' and 'overlap'", "triangle "],
                ),
                (
                    cube("sunk", [0.6, 0.0, 0.05]),
                    ["body 'sunk'", "inside collider[0]"],
                ),
            ] {
                let e = sim.add_body(body).unwrap_err();
                assert!(
                    matches!(&e, SimError::Unsupported { field, .. } if field == "collision.method"),
                    "{e}"
                );
                let e = e.to_string();
                assert!(names.iter().all(|n| e.contains(n)), "{e}");
                assert!(e.contains("shortest-path"), "{e}");
                assert_eq!(sim.model().bodies.len(), 1, "nothing changed");
            }
        }
        sim.add_body(cube("b", [0.0, 0.0, 0.4])).expect("add body");
        let x = sim.positions().expect("positions");
        assert_eq!(f32_bits(&x[..x0.len()]), f32_bits(&x0), "{method}: carried");
        let mut handled = 0;
        for _ in 0..2 {
            let st = sim.step_frame().expect("step");
            handled += st
                .contact::<supple::contact::two_way::CollisionFrameStats>()
                .time_steps
                + st.contact::<supple::contact::shortest_path::ShortestPathFrameStats>()
                    .detections;
        }
        assert!(
            handled > 0,
            "{method}: collision handling runs after the rebuild"
        );
        let x = sim.positions().expect("positions");
        assert!(
            frame_intersections(&body_surface(&sim), &x).is_empty(),
            "{method}: no intersection"
        );
        let fell = x[x0.len()..]
            .iter()
            .map(|p| p[2])
            .fold(f64::INFINITY, f64::min);
        assert!(
            fell < 0.3,
            "{method}: the new body falls: bottom at {fell} m"
        );
    }
    assert_no_validation_errors(&ctx);
}
