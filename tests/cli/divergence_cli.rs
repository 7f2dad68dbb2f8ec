//! Divergence detection (issue 26, item 5): a run whose state goes non-finite, or whose Newton
//! step leaves a stable Neo-Hookean tet inverted, stops with exit code 3 and an error naming the
//! frame, the body and the solver state, after writing report.json and the frames up to then.
use std::process::Command;

fn supple(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .args(args)
        .output()
        .expect("run supple");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("supple-div-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `scene` for at most `frames` frames; returns the exit code, stderr and report.json.
fn run(
    name: &str,
    scene: &str,
    frames: u32,
) -> (i32, String, serde_json::Value, std::path::PathBuf) {
    let dir = tmp(name);
    let path = dir.join("scene.toml");
    std::fs::write(&path, scene).unwrap();
    let out = dir.join("out");
    let (code, stderr) = supple(&[
        "run",
        path.to_str().unwrap(),
        "--frames",
        &frames.to_string(),
        "--out",
        out.to_str().unwrap(),
        "--export",
        "obj",
    ]);
    let report = std::fs::read_to_string(out.join("report.json")).unwrap_or_default();
    let report = serde_json::from_str(&report).unwrap_or(serde_json::Value::Null);
    (code, stderr, report, out)
}

/// A one-cell cube whose bottom is fixed and whose top is driven down at 4 m/s: at
/// t = 2/60 s the top is 3.3 cm below the bottom, so every tet is inverted whatever Newton does
/// (all 8 vertices are fixed or scripted).
const CRUSHED: &str = r#"
[simulation]
frame_rate = 60.0
solver = "newton"

[[body]]
name = "crushed"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [1, 1, 1] }
translation = [0.0, 0.0, 0.5]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }
fixed = [{ region = { min = [-1.0, -1.0, 0.0], max = [1.0, 1.0, 0.46] } }]
motion = [{ vertices = { region = { min = [-1.0, -1.0, 0.54], max = [1.0, 1.0, 1.0] } }, velocity = [0.0, 0.0, -4.0] }]
"#;

#[test]
fn an_inverted_newton_tet_stops_the_run_with_exit_code_3() {
    let (code, stderr, report, out) = run("inverted", CRUSHED, 10);
    assert_eq!(code, 3, "{stderr}");
    for needle in [
        "diverged",
        "frame 2",
        "body \"crushed\"",
        "inverted tet",
        "solver state: newton",
    ] {
        assert!(stderr.contains(needle), "no {needle:?} in: {stderr}");
    }
    let frames = report["frames"].as_array().expect("frames in report.json");
    // Frames 0 (initial) and 1 (top still above the bottom) are written; frame 2 is not.
    assert_eq!(frames.len(), 2, "{report}");
    assert!(frames[1]["min_volume_ratio"].as_f64().unwrap() > 0.0);
    assert!(report["error"].as_str().unwrap().contains("frame 2"));
    assert!(out.join("frames/frame_0001.obj").exists());
    assert!(!out.join("frames/frame_0002.obj").exists());
}

/// Symplectic Euler far beyond its stability limit (stable below ~0.3 ms here, stepped at
/// 16.7 ms): the state grows until it is not finite.
const EXPLODING: &str = r#"
[simulation]
frame_rate = 60.0
solver = "symplectic-euler"

[[body]]
name = "stiff"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [2, 2, 2] }
translation = [0.0, 0.0, 0.5]
material = { model = "stable-neo-hookean", youngs_modulus = 1e7, poisson_ratio = 0.3, density = 1000.0 }
fixed = [{ region = { min = [-1.0, -1.0, 0.0], max = [1.0, 1.0, 0.46] } }]
"#;

#[test]
fn a_non_finite_state_stops_the_run_with_exit_code_3() {
    let (code, stderr, report, _) = run("nan", EXPLODING, 400);
    assert_eq!(code, 3, "{stderr}");
    for needle in [
        "diverged",
        "body \"stiff\"",
        "non-finite",
        "solver state: symplectic",
    ] {
        assert!(stderr.contains(needle), "no {needle:?} in: {stderr}");
    }
    let frames = report["frames"].as_array().expect("frames in report.json");
    assert!(frames.len() < 401, "stopped early");
    let last = frames.len() - 1;
    assert!(
        stderr.contains(&format!("frame {} ", last + 1)),
        "the error names the first diverged frame {}: {stderr}",
        last + 1
    );
}
