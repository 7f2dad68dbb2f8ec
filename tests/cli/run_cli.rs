//! `supple run`: frames with a stable vertex order, report.json, deterministic output, and
//! clear errors for bad or unsupported scenes.
use std::path::Path;
use std::process::Command;

mod common;
use common::TINY;

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
    let d = std::env::temp_dir().join(format!("supple-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn obj_vertices(p: &Path) -> usize {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("v "))
        .count()
}

#[test]
fn run_writes_frames_and_a_report_deterministically() {
    let dir = tmp("ok");
    let scene = dir.join("tiny.toml");
    std::fs::write(&scene, TINY).unwrap();
    let mut outputs = Vec::new();
    for k in 0..2 {
        let out = dir.join(format!("out{k}"));
        let (code, stderr) = supple(&[
            "run",
            scene.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--export",
            "obj",
        ]);
        assert_eq!(code, 0, "{stderr}");
        let frames: Vec<_> = (0..3)
            .map(|f| out.join("frames").join(format!("frame_{f:04}.obj")))
            .collect();
        assert!(
            frames.iter().all(|f| f.exists()),
            "{:?}",
            std::fs::read_dir(out.join("frames"))
                .unwrap()
                .collect::<Vec<_>>()
        );
        // Boundary of a 2x2x2 box: 26 surface vertices, the same count and order every frame.
        assert!(frames.iter().all(|f| obj_vertices(f) == 26));
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap())
                .unwrap();
        let fr = report["frames"].as_array().unwrap();
        assert_eq!(fr.len(), 3);
        for f in fr {
            assert!(f["newton_iterations"].as_u64().unwrap() >= 1);
            assert!(f["min_volume_ratio"].as_f64().unwrap() > 0.0);
            assert!(f["max_speed"].as_f64().is_some());
            let gpu = &f["gpu_ms"];
            assert!(
                gpu["hessian"].as_f64().is_some_and(|x| x > 0.0)
                    && gpu["pcg"].as_f64().is_some_and(|x| x > 0.0),
                "{gpu}"
            );
        }
        outputs.push(
            frames
                .iter()
                .map(|f| std::fs::read(f).unwrap())
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(
        outputs[0], outputs[1],
        "same input, same device, same output bits"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_and_unsupported_scenes_are_refused_with_exit_code_2() {
    let dir = tmp("bad");
    let scene = dir.join("bad.toml");
    std::fs::write(
        &scene,
        TINY.replace("poisson_ratio = 0.3", "poisson_ratio = 0.6"),
    )
    .unwrap();
    let (code, stderr) = supple(&[
        "run",
        scene.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("body[0].material.poisson_ratio"),
        "{stderr}"
    );
    let (code, stderr) = supple(&[
        "run",
        scene.to_str().unwrap(),
        "--set",
        "simulation.framez=3",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("framez"), "{stderr}");
    std::fs::write(
        &scene,
        TINY.replace(
            "model = \"stable-neo-hookean\"",
            "model = \"cloth\", thickness = 0.001",
        ),
    )
    .unwrap();
    let (code, stderr) = supple(&[
        "run",
        scene.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("body[0].material.model"), "{stderr}");
    let (code, stderr) = supple(&["run", "/nonexistent/scene.toml"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/nonexistent/scene.toml"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_embedded_default_scene_runs() {
    let dir = tmp("default");
    let (code, stderr) = supple(&[
        "run",
        "--frames",
        "2",
        "--out",
        dir.to_str().unwrap(),
        "--export",
        "usd",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let usda = std::fs::read_to_string(dir.join("frames.usda")).unwrap();
    assert!(usda.starts_with("#usda"), "USD stage written");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["frames"].as_array().unwrap().len(), 2);
    assert_eq!(report["scene"], "default scene");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_scene_prints_the_documented_fields() {
    let dir = tmp("bench");
    let scene = dir.join("tiny.toml");
    std::fs::write(&scene, TINY).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .args([
            "bench",
            "scene",
            scene.to_str().unwrap(),
            "--frames",
            "2",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    for key in [
        "ms_per_frame_median",
        "ms_per_frame_p10",
        "ms_per_frame_p90",
        "newton_iterations_mean",
        "pcg_iterations_mean",
    ] {
        assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {v}");
    }
    assert_eq!(v["frames"], 2);
    assert!(v.get("threads").is_some() && v["scene"].as_str().is_some());
    let _ = std::fs::remove_dir_all(&dir);
}
