//! Per-node workgroup-size overrides (`SUPPLE_WORKGROUP`, `ContextOptions::workgroup_overrides`)
//! on lavapipe: a Newton scene and an XPBD scene with collision handling give bit-identical
//! positions with every node's workgroup size overridden (the overrides reshape only kernels
//! whose SPIR-V shows per-invocation work, and leave the others reported with the reason);
//! traces show the size each node ran with; malformed or impossible specs are errors that name
//! the variable.

use supple::scene::Scene;
use supple::simulation::Simulation;
use supple::vk::{Context, ContextOptions, VkError, WorkgroupOverrides};
use supple_gpu_tests::assert_no_validation_errors;

const NEWTON: &str = r#"
[simulation]
frames = 3
[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }
translation = [0.0, 0.0, 0.06]
velocity = [0.3, 0.0, -1.0]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
friction = 0.3
"#;

const XPBD: &str = r#"
[simulation]
frames = 3
solver = "xpbd"
gravity = [0.0, 0.0, 0.0]
[xpbd]
substeps = 4
[collision]
method = "shortest-path"
[[body]]
name = "lower"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }
material = { model = "corotated", youngs_modulus = 1e4, poisson_ratio = 0.3, density = 1000.0 }
[[body]]
name = "upper"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }
translation = [0.01, 0.0, 0.09]
velocity = [0.0, 0.0, -1.0]
material = { model = "corotated", youngs_modulus = 1e4, poisson_ratio = 0.3, density = 1000.0 }
"#;

fn context(spec: &str) -> Result<Context, VkError> {
    let mut o = ContextOptions::from_env();
    o.validation = true;
    o.pipeline_cache = None;
    o.wait_timeout = std::time::Duration::from_secs(120);
    o.workgroup_overrides = WorkgroupOverrides::parse(spec);
    Context::new(o)
}

fn run(ctx: &Context, toml: &str) -> Vec<[f64; 3]> {
    let scene = Scene::parse(toml, "s.toml", &[]).expect("scene");
    let mut sim = Simulation::new(ctx, &scene).expect("simulation");
    for _ in 0..scene.simulation.frames {
        sim.step_frame().expect("frame");
    }
    sim.positions().expect("positions")
}

#[test]
fn overridden_workgroup_sizes_change_no_result() {
    let plain = context("").expect("context");
    // Every node at 32 (half the recorded 64), then the XPBD sweeps at 128.
    let reshaped = context("*=32,xpbd.*=128").expect("context");
    reshaped.start_trace();
    for toml in [NEWTON, XPBD] {
        let a = run(&plain, toml);
        let b = run(&reshaped, toml);
        assert_eq!(a, b, "positions differ with overridden workgroup sizes");
    }
    let report = reshaped.workgroup_override_report();
    let applied: Vec<_> = report.iter().filter(|u| u.applied).collect();
    let kept: Vec<_> = report.iter().filter(|u| !u.applied).collect();
    println!(
        "{} nodes reshaped, {} kept: {:?}",
        applied.len(),
        kept.len(),
        kept.iter()
            .map(|u| format!("{} ({})", u.node, u.reason.as_deref().unwrap_or("")))
            .collect::<Vec<_>>()
    );
    assert!(applied.len() >= 10, "{report:?}");
    assert!(applied
        .iter()
        .any(|u| u.node.starts_with("xpbd.") && u.requested == 128));
    assert!(applied
        .iter()
        .any(|u| u.kernel == "fem/tet_eigensystem" && u.requested == 32));
    // Reductions and scans share memory across a workgroup: never reshaped.
    assert!(kept.iter().any(|u| u.kernel.starts_with("primitives/")
        && u.reason.as_deref().is_some_and(|r| r.contains("shared"))));
    assert!(kept.iter().all(|u| u.reason.is_some()));
    // Traces carry the size each node ran with.
    let trace = reshaped.take_trace().expect("trace");
    let spans: Vec<_> = trace
        .graph_runs
        .iter()
        .flat_map(|r| r.nodes.iter())
        .collect();
    let mut checked = 0;
    for s in &spans {
        if let Some(u) = applied.iter().find(|u| u.node == s.name) {
            assert_eq!(s.workgroup_size, u.requested, "{}", u.node);
            checked += 1;
        }
    }
    assert!(checked > 0, "no reshaped node in the trace");
    assert_no_validation_errors(&plain);
    assert_no_validation_errors(&reshaped);
}

#[test]
fn bad_workgroup_specs_are_errors_naming_the_variable() {
    for spec in ["newton.*", "x=abc", "x=0", "*=12", "*=4096"] {
        match context(spec) {
            Ok(_) => panic!("'{spec}' must be refused"),
            Err(e) => {
                let m = e.to_string();
                assert!(m.starts_with("SUPPLE_WORKGROUP"), "{spec}: {m}");
            }
        }
    }
    let o = WorkgroupOverrides::parse("*=16, a.*=32 ,a.b=64");
    assert_eq!(o.size_for("a.b"), Some(64), "the last matching rule wins");
    assert_eq!(o.size_for("a.c"), Some(32));
    assert_eq!(o.size_for("z"), Some(16));
    assert_eq!(WorkgroupOverrides::parse("a.*=32").size_for("b"), None);
}
