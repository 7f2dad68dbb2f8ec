//! `supple sweep`: a 2×2 grid run with `--jobs 2` gives 4 reports and a merged table, a rerun
//! skips them, `--index` runs one entry, bad specs are refused with exit 2 naming the problem,
//! and `examples/sweep_ray.py` runs a manifest on a local Ray cluster bound to 127.0.0.1 (Ray is
//! installed by `scripts/dev.sh test`; this test fails, not skips, without it).
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

mod common;
use common::TINY;

fn supple(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_supple"))
        .args(args)
        .output()
        .expect("run supple")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-sweep-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes the tiny scene and a spec with `body` after its header; returns the spec path.
fn spec(dir: &Path, body: &str) -> PathBuf {
    std::fs::write(dir.join("tiny.toml"), TINY).unwrap();
    let p = dir.join("spec.toml");
    std::fs::write(&p, format!("scene = \"tiny.toml\"\nframes = 2\n{body}")).unwrap();
    p
}

const GRID: &str = r#"
[grid]
"body[0].material.youngs_modulus" = [1e5, 2e5]
"simulation.substeps" = [1, 2]
"#;

fn report(out: &Path, i: usize) -> PathBuf {
    out.join("runs").join(format!("{i:04}")).join("report.json")
}

fn mtime(p: &Path) -> SystemTime {
    std::fs::metadata(p).unwrap().modified().unwrap()
}

fn manifest(out: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(out.join("manifest.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn sweep_runs_skips_reruns_one_and_collects() {
    let dir = tmp("grid");
    let spec = spec(&dir, GRID);
    let out = dir.join("sweep");
    let (spec_s, out_s) = (spec.to_str().unwrap(), out.to_str().unwrap());
    let o = supple(&["sweep", spec_s, "--jobs", "2", "--out", out_s]);
    assert!(o.status.success(), "{}", text(&o));
    let m = manifest(&out);
    assert_eq!(m.len(), 4);
    let hashes: std::collections::BTreeSet<_> =
        m.iter().map(|e| e["scene_hash"].to_string()).collect();
    assert_eq!(hashes.len(), 4, "entries must differ: {m:?}");
    assert_eq!(
        m[1]["overrides"],
        serde_json::json!([
            "body[0].material.youngs_modulus=100000.0",
            "simulation.substeps=2"
        ])
    );
    for i in 0..4 {
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(report(&out, i)).unwrap()).unwrap();
        // The initial state and the 2 frames stepped.
        assert_eq!(r["frames"].as_array().unwrap().len(), 3);
        assert_eq!(r["substeps"], [1, 2][i % 2]);
    }
    let times: Vec<_> = (0..4).map(|i| mtime(&report(&out, i))).collect();

    // Merged table.
    let o = supple(&["sweep", "collect", out_s]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    for col in [
        "index",
        "status",
        "body[0].material.youngs_modulus",
        "simulation.substeps",
        "scene_hash",
        "ms_per_frame_median",
        "frames",
        "newton_iterations_total",
        "min_volume_ratio_min",
    ] {
        assert!(header.contains(&col), "{col} missing from {header:?}");
    }
    let rows: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(rows.len(), 4);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["status"], "done", "{r}");
        assert_eq!(r["simulation.substeps"], ["1", "2"][i % 2]);
        assert_eq!(r["frames"], 2);
        assert!(r["newton_iterations_total"].as_f64().unwrap() >= 2.0, "{r}");
    }
    // Collect from the spec finds the same folder (its --out given again).
    let o = supple(&["sweep", "collect", spec_s, "--out", out_s]);
    assert!(o.status.success(), "{}", text(&o));

    // A rerun skips every finished entry.
    let o = supple(&["sweep", spec_s, "--jobs", "2", "--out", out_s]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("4 already done, 0 to run"),
        "{}",
        text(&o)
    );
    assert!((0..4).all(|i| mtime(&report(&out, i)) == times[i]));

    // --index runs just that entry (when it is not finished).
    std::fs::remove_file(report(&out, 2)).unwrap();
    let o = supple(&["sweep", spec_s, "--index", "2", "--out", out_s]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("1 selected, 0 already done, 1 to run"),
        "{}",
        text(&o)
    );
    assert!(report(&out, 2).exists());
    assert!([0, 1, 3]
        .iter()
        .all(|&i| mtime(&report(&out, i)) == times[i]));
    let o = supple(&["sweep", spec_s, "--index", "4", "--out", out_s]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--index 4"), "{}", text(&o));

    // A changed spec changes the hashes: nothing counts as done.
    let spec3 = dir.join("spec3.toml");
    std::fs::write(
        &spec3,
        std::fs::read_to_string(&spec)
            .unwrap()
            .replace("frames = 2", "frames = 3"),
    )
    .unwrap();
    let o = supple(&[
        "sweep",
        spec3.to_str().unwrap(),
        "--dry-run",
        "--out",
        out_s,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("0 already done, 4 to run"),
        "{}",
        text(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_specs_are_refused_with_exit_2() {
    let dir = tmp("bad");
    let out = dir.join("sweep");
    let cases = [
        ("framez = 3\n", "framez"),
        (
            "[grid]\n\"simulation.substeps\" = 2\n",
            "grid.\"simulation.substeps\"",
        ),
        ("[grid]\n\"body[0].material.colour\" = [1, 2]\n", "entry 0"),
        ("[grid]\n\"simulation.substeps\" = [1, -1]\n", "entry 1"),
        ("export = \"gif\"\n", "export"),
    ];
    for (body, needle) in cases {
        let spec = spec(&dir, body);
        let o = supple(&[
            "sweep",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{body}: {}", text(&o));
        assert!(text(&o).contains(needle), "{body}: {}", text(&o));
        assert!(!text(&o).contains("panicked"), "{}", text(&o));
    }
    let o = supple(&["sweep", dir.join("none.toml").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = supple(&["sweep", "collect", dir.join("nowhere").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn ray_example_runs_a_manifest_on_a_local_cluster() {
    let dir = tmp("ray");
    let spec = spec(&dir, "[grid]\n\"simulation.substeps\" = [1, 2]\n");
    let out = dir.join("sweep");
    let o = supple(&[
        "sweep",
        spec.to_str().unwrap(),
        "--dry-run",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let python = std::env::var("SUPPLE_PYTHON").unwrap_or_else(|_| "python3".into());
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/sweep_ray.py");
    let ray = |extra: &[&str]| {
        Command::new(&python)
            .arg(&example)
            .arg(out.join("manifest.jsonl"))
            .args(["--supple", env!("CARGO_BIN_EXE_supple")])
            .args([
                "--local-cpus",
                "2",
                "--local-gpus",
                "1",
                "--num-gpus",
                "0.5",
            ])
            .args(extra)
            .env("RAY_USAGE_STATS_ENABLED", "0")
            .output()
            .expect("run python3")
    };
    let o = ray(&[]);
    assert!(
        o.status.success(),
        "the Ray example failed (Ray is installed by scripts/dev.sh test: pip install ray): {}",
        text(&o)
    );
    for i in 0..2 {
        assert!(report(&out, i).exists(), "entry {i}: {}", text(&o));
        assert!(out
            .join("runs")
            .join(format!("{i:04}"))
            .join("sweep_entry.json")
            .exists());
    }
    assert!(text(&o).contains("2 to run"), "{}", text(&o));
    // Finished entries are skipped without starting Ray; `supple sweep` agrees.
    let o = ray(&[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("0 to run"), "{}", text(&o));
    let o = supple(&[
        "sweep",
        spec.to_str().unwrap(),
        "--dry-run",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        text(&o).contains("2 already done, 0 to run"),
        "{}",
        text(&o)
    );
    std::fs::remove_dir_all(&dir).ok();
}
