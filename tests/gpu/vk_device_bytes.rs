//! `Context::device_bytes`: the sum of the live buffer allocations, up on create, back down on
//! drop, and flat while a simulation steps (nothing allocated per frame).
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple::vk::BufferUsage;
use supple_gpu_tests::{assert_no_validation_errors, context};

#[test]
fn device_bytes_follow_buffer_lifetimes() {
    for staging in [false, true] {
        let ctx = context(staging);
        let before = ctx.device_bytes();
        let a = ctx
            .create_buffer::<u32>("a", 10_000, BufferUsage::STORAGE)
            .unwrap();
        let with_a = ctx.device_bytes();
        assert!(with_a >= before + 40_000, "{before} -> {with_a}");
        let b = ctx
            .upload_buffer("b", &vec![1.0f32; 5_000], BufferUsage::STORAGE)
            .unwrap();
        // Staging buffers of the upload are gone again; only b is added.
        let with_b = ctx.device_bytes();
        assert!(with_b >= with_a + 20_000, "{with_a} -> {with_b}");
        drop(a);
        assert_eq!(ctx.device_bytes(), with_b - (with_a - before));
        drop(b);
        assert_eq!(ctx.device_bytes(), before);
        assert_no_validation_errors(&ctx);
    }
}

const SCENE: &str = r#"
[simulation]
frame_rate = 60.0

[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [2, 2, 2] }
translation = [0.0, 0.0, 0.06]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
"#;

#[test]
fn a_stepping_simulation_allocates_nothing_per_frame() {
    let ctx = context(false);
    let empty = ctx.device_bytes();
    let scene = Scene::parse(SCENE, "cube", &[]).unwrap();
    let mut sim = Simulation::new(&ctx, &scene).unwrap();
    let built = ctx.device_bytes();
    assert!(built > empty, "the simulation's buffers are counted");
    for _ in 0..3 {
        sim.step_frame().unwrap();
        sim.positions().unwrap();
    }
    let warm = ctx.device_bytes();
    for _ in 0..10 {
        sim.step_frame().unwrap();
        sim.positions().unwrap();
    }
    assert_eq!(
        ctx.device_bytes(),
        warm,
        "device memory grew while stepping"
    );
    drop(sim);
    assert_eq!(
        ctx.device_bytes(),
        empty,
        "dropping the simulation frees its buffers"
    );
    assert_no_validation_errors(&ctx);
}
