//! `Context::counters` (issue 22, item 4): host waits, queue submissions and dispatches are
//! counted in the Vulkan layer, exactly (a graph's dispatch nodes once per submission) and
//! deterministically (two identical simulations count the same per frame).
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple::vk::{ids, BufferUsage, CompileOptions, Dispatch, Graph};
use supple_gpu_tests::{assert_no_validation_errors, context};

#[test]
fn a_graph_counts_its_dispatch_nodes_once_per_submission() {
    let ctx = context(false);
    let n = 256u32;
    let a = ctx
        .upload_buffer("a", &vec![0u32; n as usize], BufferUsage::STORAGE)
        .unwrap();
    let b = ctx
        .create_buffer::<u32>("b", n as usize, BufferUsage::STORAGE)
        .unwrap();
    let mut g = Graph::new("counted");
    for (i, (src, dst)) in [(&a, &b), (&b, &a), (&a, &b)].into_iter().enumerate() {
        g.dispatch(
            Dispatch::new(
                format!("inc{i}"),
                ids::TEST_INCREMENT,
                [n.div_ceil(64), 1, 1],
            )
            .workgroup_size(64)
            .read(src)
            .write(dst)
            .push(&n),
        );
    }
    g.fill("clear", &a, 0);
    let c = g.compile(&ctx, CompileOptions::default()).unwrap();
    assert_eq!(c.dispatch_count(), 3, "three dispatch nodes, one fill");
    let before = ctx.counters();
    let runs = 5u64;
    for _ in 0..runs {
        c.run().unwrap();
    }
    let d = ctx.counters() - before;
    assert_eq!(d.submits, runs);
    assert_eq!(d.dispatches, 3 * runs);
    // One wait per run: a resubmission after a completed wait waits no second time.
    assert_eq!(d.host_waits, runs);
    // Submitting without waiting, then waiting once.
    let before = ctx.counters();
    let t = c.submit().unwrap();
    c.wait(t).unwrap();
    let d = ctx.counters() - before;
    assert_eq!((d.submits, d.dispatches, d.host_waits), (1, 3, 1));
    assert_no_validation_errors(&ctx);
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

/// One frame's (host waits, submits, dispatches, Newton iterations, PCG iterations).
type FrameCounts = (u64, u64, u64, u32, u32);

/// Per-frame counts of a fresh simulation, and its device bytes at the end.
fn counts(frames: usize) -> (Vec<FrameCounts>, u64) {
    let ctx = context(false);
    let scene = Scene::parse(SCENE, "cube", &[]).unwrap();
    let mut sim = Simulation::new(&ctx, &scene).unwrap();
    let mut v = Vec::new();
    let mut bytes = 0;
    for _ in 0..frames {
        let before = ctx.counters();
        let s = sim.step_frame().unwrap();
        let d = ctx.counters() - before;
        // The frame's statistics carry the same counts as the context.
        assert_eq!(
            (s.host_waits, s.submits, s.dispatches),
            (d.host_waits, d.submits, d.dispatches)
        );
        assert_eq!(s.device_bytes, ctx.device_bytes());
        assert!(s.pcg_relative_residual_max >= s.pcg_residual);
        assert!(s.pcg_relative_residual_max.is_finite());
        assert!(d.submits >= 1 && d.host_waits >= 1, "{d:?}");
        assert!(d.dispatches >= d.submits, "{d:?}");
        v.push((
            d.host_waits,
            d.submits,
            d.dispatches,
            s.newton_iterations,
            s.pcg_iterations,
        ));
        bytes = s.device_bytes;
    }
    assert_no_validation_errors(&ctx);
    (v, bytes)
}

#[test]
fn a_simulation_counts_the_same_work_in_two_identical_runs() {
    let (a, bytes_a) = counts(3);
    let (b, bytes_b) = counts(3);
    assert_eq!(a, b, "per-frame counts differ between two identical runs");
    assert_eq!(bytes_a, bytes_b);
    assert!(bytes_a > 0);
}

/// Issue 22, item 2 (partly): with the Newton solver and no collision method (`SCENE` has no
/// `[collision]` table, so the method is `none`: no contact handler), PCG decides on
/// the device (one submission and one wait per solve of up to 32 iterations, 3 dispatches per
/// iteration: `solver_pcg::the_device_decides_when_pcg_stops_with_one_wait_per_run`) and the
/// stepper chains the graphs the host needs no result of (prediction, Hessian assembly,
/// acceptance), so a frame waits fewer times than it submits: at most once for the start, once
/// per PCG run, line-search trial and re-evaluation, and once for the velocity update. The
/// issue's targets (≤ 4 waits, ≤ 8 submissions per frame) need the line search and the Newton
/// loop on the device too (not done: docs/measurements.md).
#[test]
fn newton_without_collision_waits_less_often_than_it_submits() {
    let (frames, _) = counts(4);
    for (k, &(waits, submits, dispatches, newton, pcg)) in frames.iter().enumerate() {
        println!(
            "frame {k}: {waits} host waits, {submits} submits, {dispatches} dispatches, \
             {newton} Newton and {pcg} PCG iterations"
        );
        assert!(newton >= 1, "frame {k}: no Newton iteration");
        assert!(
            waits < submits,
            "frame {k}: {waits} waits for {submits} submits"
        );
        // Start + per Newton iteration (one PCG run: ≤ 32 iterations here, at most two trials
        // (checked below through the dispatch count), one re-evaluation) + velocity update.
        assert!(
            waits <= 2 + 4 * newton as u64,
            "frame {k}: {waits} waits for {newton} Newton iterations"
        );
        assert!(pcg <= 32 * newton, "frame {k}: a solve needed a second run");
    }
}
