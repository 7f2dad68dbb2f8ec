//! `supple bench scene|primitives|proximity --repeat N`: the JSON reports min, median and max
//! over the repeats; `supple bench bal` prints its JSON and refuses bad overrides with exit code 2.
use std::process::Command;

mod common;
use common::TINY;

fn bench_json(args: &[&str]) -> serde_json::Value {
    bench_json_env(args, &[])
}

fn bench_json_env(args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .envs(env.iter().copied())
        .arg("bench")
        .args(args)
        .arg("--json")
        .output()
        .expect("run supple");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object on stdout")
}

/// A temporary folder holding the tiny test scene, and the scene's path.
fn tiny_scene(tag: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("supple-bench-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("tiny.toml");
    std::fs::write(&scene, TINY).unwrap();
    (dir, scene)
}

/// `v` is `{min, median, max, samples}` with `min <= median <= max`, positive, `samples` as given.
fn assert_stats(v: &serde_json::Value, samples: u64) {
    let f = |k: &str| {
        v[k].as_f64()
            .unwrap_or_else(|| panic!("{k} missing in {v}"))
    };
    let (min, median, max) = (f("min"), f("median"), f("max"));
    assert!(0.0 < min && min <= median && median <= max, "{v}");
    assert_eq!(v["samples"].as_u64(), Some(samples), "{v}");
}

#[test]
fn bench_scene_repeats_and_reports_min_median_max() {
    let (dir, scene) = tiny_scene("repeat");
    let v = bench_json(&[
        "scene",
        scene.to_str().unwrap(),
        "--frames",
        "2",
        "--repeat",
        "2",
    ]);
    assert_eq!(v["repeat"], 2);
    assert_eq!(v["frames"], 2);
    assert_stats(&v["ms_per_frame_median_over_repeats"], 2);
    // The counts: the most waits of a frame bounds the mean and is a whole number.
    let mean = v["host_waits_per_frame"]
        .as_f64()
        .expect("host_waits_per_frame");
    let max = v["host_waits_per_frame_max"]
        .as_u64()
        .expect("host_waits_per_frame_max");
    assert!(max >= 1 && max as f64 >= mean, "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--nodes` with `SUPPLE_WORKGROUP`: per-node GPU times with the workgroup size each node ran
/// with, and the study's rules and outcomes in the same JSON.
#[test]
fn bench_scene_reports_nodes_and_a_workgroup_study() {
    let (dir, scene) = tiny_scene("nodes");
    let args = ["scene", scene.to_str().unwrap(), "--frames", "2", "--nodes"];
    let v = bench_json_env(&args, &[("SUPPLE_WORKGROUP", "*=32")]);
    let nodes = v["nodes"].as_array().expect("nodes");
    assert!(!nodes.is_empty());
    for n in nodes {
        assert!(n["us_per_frame"].as_f64().unwrap() >= 0.0, "{n}");
        assert!(n["runs_per_frame"].as_f64().unwrap() > 0.0, "{n}");
    }
    let study = &v["workgroup_overrides"];
    assert_eq!(study["rules"][0][0], "*");
    let uses = study["nodes"].as_array().expect("outcomes");
    let applied: Vec<&str> = uses
        .iter()
        .filter(|u| u["applied"] == true)
        .map(|u| u["node"].as_str().unwrap())
        .collect();
    assert!(!applied.is_empty(), "{study}");
    // A reshaped node that ran reports 32.
    assert!(nodes
        .iter()
        .any(|n| applied.contains(&n["name"].as_str().unwrap()) && n["workgroup_size"] == 32));
    assert!(uses
        .iter()
        .all(|u| u["applied"] == true || u["reason"].is_string()));
    // A bad spec is an error naming the variable.
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .env("SUPPLE_WORKGROUP", "*=12")
        .arg("bench")
        .args(args)
        .output()
        .expect("run supple");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("SUPPLE_WORKGROUP"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_primitives_repeat_reports_min_median_max() {
    let v = bench_json(&["primitives", "--sizes", "4k", "--repeat", "3"]);
    assert_eq!(v["repeat"], 3);
    assert_stats(&v["copy_ms"], 3);
    assert_stats(&v["transfer_copy_ms"], 3);
    // The dispatch chain takes at least 9 samples.
    assert_stats(&v["dispatch_overhead_us_stats"], 9);
    let results = v["results"].as_array().unwrap();
    assert!(!results.is_empty());
    for r in results {
        assert_stats(&r["ms"], 3);
        assert_eq!(r["ms"]["median"], r["median_ms"], "{r}");
    }
}

#[test]
fn bench_proximity_repeat_reports_min_median_max() {
    let mesh = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/data/meshes/surface/torus.ply"
    );
    let v = bench_json(&[
        "proximity",
        "--mesh",
        mesh,
        "--distance-scale",
        "0.5",
        "--repeat",
        "3",
    ]);
    assert_eq!(v["repeat"], 3);
    assert_stats(&v["ms_per_search"], 3);
    assert_stats(&v["ms_per_search_wall"], 3);
    assert_eq!(v["ms_per_search"]["median"], v["ms_per_search_median"]);
    if v["ccd_queries"].as_u64().unwrap() > 0 {
        assert_stats(&v["ms_ccd_batch_stats"], 3);
    }
}

#[test]
fn bench_bal_prints_json_and_refuses_bad_overrides() {
    // The CPU reference's statistics: one entry per scene and variant, none at the Newton cap.
    let v = bench_json(&["bal", "cpu-reference"]);
    let runs = v.as_array().expect("an array of runs");
    assert!(runs.len() >= 15, "{v}");
    for r in runs {
        assert_eq!(r["steps_at_cap"], 0, "{r}");
        assert!(r["newton_mean"].as_f64().is_some_and(|n| n >= 1.0), "{r}");
    }
    // The arch, 5 voussoirs for one frame with and without friction: the keystone's drop and
    // the paper's claim for each.
    let v = bench_json(&[
        "bal",
        "arch",
        "--frames",
        "1",
        "--chi",
        "0,0.5",
        "--set",
        "body[1].mesh.cells=[5, 2, 1]",
    ]);
    assert_eq!(v["voussoirs"], 5, "{v}");
    assert!(
        v["paper"].as_str().is_some_and(|p| p.contains("Fig. 21")),
        "{v}"
    );
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2, "{v}");
    assert!(runs
        .iter()
        .all(|r| r["keystone_drop"].as_array().map(Vec::len) == Some(1)));
    // A bad override: exit code 2 naming the field.
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .args(["bench", "bal", "arch", "--frames", "1"])
        .args(["--set", "body[1].mesh.cells=[2, 2, 1]"])
        .output()
        .expect("run supple");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("body[1].mesh.cells"), "{stderr}");
}
