//! The host-owned-device example (`engine/examples/host_device.rs`), run with the validation
//! layer on: positions read through Supple's raw buffer equal the safe API's, frames recorded
//! into host command buffers equal Supple's own, and Supple's teardown leaves the host's
//! device intact (the host destroys it afterwards without validation errors).

#[allow(dead_code)]
#[path = "../../engine/examples/host_device.rs"]
mod example;

#[test]
fn host_device_example_reads_positions_through_the_raw_buffer() {
    let r = match example::run(true) {
        Ok(r) => r,
        Err(e) => panic!("the example failed: {e}"),
    };
    assert!(r.vertices > 0 && r.raw_positions.len() == r.vertices);
    assert_eq!(r.safe_positions.len(), r.vertices);
    // The simulation moved (the cube fell), so the comparison below is not of rest states.
    let moved = r
        .rest_positions
        .iter()
        .zip(&r.safe_positions)
        .map(|(a, b)| (a[2] - b[2]).abs())
        .fold(0.0, f64::max);
    assert!(moved > 1e-3, "largest vertical displacement {moved} m");
    // Bit-for-bit: the host copied the same f32s the safe API read back.
    for (i, (raw, safe)) in r.raw_positions.iter().zip(&r.safe_positions).enumerate() {
        assert_eq!(*raw, safe.map(|v| v as f32), "vertex {i}");
    }
    // Frames recorded into host command buffers compute what Supple's submissions compute.
    assert_eq!(r.recorded_positions.len(), r.vertices);
    for (i, (rec, sub)) in r
        .recorded_positions
        .iter()
        .zip(&r.submitted_positions)
        .enumerate()
    {
        assert_eq!(*rec, sub.map(|v| v as f32), "vertex {i}");
    }
    let e = r
        .newton_record_error
        .expect("Newton frames cannot be recorded");
    assert!(e.contains("simulation.solver"), "{e}");
    assert_eq!(
        r.queue_family_transfers, 0,
        "the host reads on Supple's family"
    );
    assert!(
        r.supple_validation_errors.is_empty(),
        "Supple: {:#?}",
        r.supple_validation_errors
    );
    assert!(r.released, "Supple reports when it has released the device");
    assert!(r.host_messenger, "the host's validation messenger is on");
    assert!(
        r.host_validation_errors.is_empty(),
        "host (teardown included): {:#?}",
        r.host_validation_errors
    );
}

#[test]
fn reading_on_another_queue_family_needs_an_ownership_transfer_each_way() {
    use supple::vk::ash::vk;
    let ctx = supple_gpu_tests::context(false);
    let scene = supple::scene::Scene::parse(
        r#"
[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [1, 1, 1] }
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
"#,
        "inline",
        &[],
    )
    .expect("scene");
    let sim = supple::simulation::Simulation::new(&ctx, &scene).expect("simulation");
    let own = ctx.queue_family_index();
    assert!(sim.queue_family_transfers(own).is_empty());
    let view = sim.positions_view();
    assert_eq!(view.count, sim.model().positions.len());
    assert_eq!((view.stride, view.size), (16, 16 * view.count as u64));
    let t = sim.queue_family_transfers(own + 1);
    assert_eq!(t.len(), 1);
    let release = t[0].release_barrier();
    assert_eq!(release.buffer, view.buffer);
    assert_eq!(
        (
            release.src_queue_family_index,
            release.dst_queue_family_index
        ),
        (own, own + 1)
    );
    let acquire = t[0].acquire_barrier(
        vk::PipelineStageFlags2::VERTEX_SHADER,
        vk::AccessFlags2::SHADER_STORAGE_READ,
    );
    assert_eq!(acquire.size, view.size);
    assert_eq!(
        acquire.dst_stage_mask,
        vk::PipelineStageFlags2::VERTEX_SHADER
    );
    let back = t[0].reversed();
    assert_eq!(
        (back.src_queue_family, back.dst_queue_family),
        (own + 1, own)
    );
    let sync = sim.render_sync();
    assert_eq!(sync.semaphore, ctx.timeline_semaphore());
    assert_eq!(sync.value, ctx.last_ticket().value);
    supple_gpu_tests::assert_no_validation_errors(&ctx);
}
