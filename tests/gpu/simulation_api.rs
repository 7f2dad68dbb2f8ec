//! The library API around a simulation: building one from code equals building it from the
//! same scene file, builder errors name the field, and `step_for` steps whole frames within a
//! time budget (the code of the `supple::simulation` module documentation).
use std::time::Duration;
use supple::scene::{Body, Generator, Material, MaterialModel, MeshSource, Scene};
use supple::simulation::SimulationBuilder;
use supple_gpu_tests::{assert_no_validation_errors, context};

const SAME_AS_TOML: &str = r#"
[simulation]
frame_rate = 60.0
substeps = 2

[[body]]
name = "cube"
mesh = { generator = "box", size = [0.2, 0.2, 0.2], cells = [2, 2, 2] }
translation = [0.0, 0.0, 0.3]
material = { model = "stable-neo-hookean", youngs_modulus = 2e5, poisson_ratio = 0.3, density = 1000.0 }

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
"#;

fn builder() -> SimulationBuilder {
    SimulationBuilder::new()
        .frame_rate(60.0)
        .substeps(2)
        .body(
            Body::new(
                "cube",
                MeshSource::generator(Generator::Box, [0.2, 0.2, 0.2], [2, 2, 2]),
                Material::new(MaterialModel::StableNeoHookean, 2e5, 0.3, 1000.0),
            )
            .translated([0.0, 0.0, 0.3]),
        )
        .ground_plane([0.0, 0.0, 1.0], 0.0)
}

#[test]
fn a_built_scene_equals_the_same_scene_file() {
    let from_file = Scene::parse(SAME_AS_TOML, "inline", &[]).expect("scene");
    assert_eq!(builder().into_scene().expect("valid"), from_file);
}

#[test]
fn builder_errors_name_the_field() {
    let e = SimulationBuilder::new()
        .body(Body::new(
            "bad",
            MeshSource::generator(Generator::Box, [0.1; 3], [1, 1, 1]),
            Material::new(MaterialModel::StableNeoHookean, 1e5, 0.7, 1000.0),
        ))
        .into_scene()
        .expect_err("Poisson ratio 0.7 is refused");
    assert_eq!(
        e.field.as_deref(),
        Some("body[0].material.poisson_ratio"),
        "{e}"
    );
}

#[test]
fn step_for_steps_whole_frames_within_the_budget() {
    let ctx = context(false);
    let mut sim = builder().build(&ctx).expect("simulation");
    let rest = sim.positions().expect("positions");
    let none = sim.step_for(Duration::ZERO).expect("step_for");
    assert_eq!(none.frames, 0);
    assert_eq!(sim.positions().expect("positions"), rest, "nothing stepped");
    let r = sim.step_for(Duration::from_millis(1)).expect("step_for");
    assert!(r.frames >= 1, "a non-zero budget runs at least one frame");
    assert_eq!(r.stats.len(), r.frames as usize);
    assert!(r.stats.iter().all(|s| s.newton_iterations >= 1));
    let x = sim.positions().expect("positions");
    let fell = rest.iter().zip(&x).map(|(a, b)| a[2] - b[2]).sum::<f64>() / x.len() as f64;
    assert!(fell > 0.0, "the cube falls: mean drop {fell} m");
    assert_no_validation_errors(&ctx);
}

/// The generator's box as arrays (`MeshSource::arrays`): the simulation steps to the same
/// positions, bit for bit (the TOML form of arrays: engine/tests/mesh_arrays.rs).
#[test]
fn a_body_from_arrays_steps_like_the_generated_one() {
    use supple::mesh::procedural::{box_tets, CellSplit};
    let ctx = context(false);
    let b = box_tets([2, 2, 2], [0.1; 3], [-0.1; 3], CellSplit::Five);
    let arrays = SimulationBuilder::new()
        .frame_rate(60.0)
        .substeps(2)
        .body(
            Body::new(
                "cube",
                MeshSource::arrays(b.positions, b.tets, vec![], vec![]),
                Material::new(MaterialModel::StableNeoHookean, 2e5, 0.3, 1000.0),
            )
            .translated([0.0, 0.0, 0.3]),
        )
        .ground_plane([0.0, 0.0, 1.0], 0.0);
    let mut sims = [
        builder().build(&ctx).expect("generated"),
        arrays.build(&ctx).expect("arrays"),
    ];
    for _ in 0..3 {
        for s in &mut sims {
            s.step_frame().expect("step");
        }
    }
    let x: Vec<_> = sims
        .iter()
        .map(|s| s.positions().expect("positions"))
        .collect();
    assert_ne!(x[0], sims[0].model().positions, "the cube moved");
    assert_eq!(x[1], x[0]);
    assert_no_validation_errors(&ctx);
}
