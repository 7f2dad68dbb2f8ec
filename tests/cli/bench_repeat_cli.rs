//! `supple bench scene|primitives|proximity --repeat N`: the JSON reports min, median and max
//! over the repeats.
use std::process::Command;

mod common;
use common::TINY;

fn bench_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
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
    let dir = std::env::temp_dir().join(format!("supple-bench-repeat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("tiny.toml");
    std::fs::write(&scene, TINY).unwrap();
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
