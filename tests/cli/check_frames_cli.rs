//! `supple check-frames DIR`: exit codes 0 (clean), 1 (intersection or collision), 2 (bad
//! input), and the JSON summary, on tiny hand-written OBJ sequences.

use std::path::{Path, PathBuf};
use std::process::Command;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-check-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `supple check-frames DIR --json ...`: exit code, stdout, stderr.
fn check(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .arg("check-frames")
        .arg(dir)
        .args(extra)
        .output()
        .expect("run supple");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json(stdout: &str) -> serde_json::Value {
    assert_eq!(stdout.trim().lines().count(), 1, "one JSON line: {stdout}");
    serde_json::from_str(stdout.trim()).unwrap()
}

/// Needle vertices far below and away: the needle's edges cross z = 0 outside the fixed
/// triangle whether the tip is above or below it.
const BELOW: [[f64; 3]; 2] = [[5.0, 5.0, -1.0], [5.0, 6.0, -1.0]];
/// Needle vertices high above: the needle's edges rise steeply from the tip.
const ABOVE: [[f64; 3]; 2] = [[0.3, 0.3, 10.0], [0.4, 0.3, 10.0]];

/// A fixed triangle in z = 0 and a "needle" triangle with its tip at `tip` and its other two
/// vertices at `far`; `slashes` writes the faces in `v//vn` and `v/vt/vn` forms.
fn needle_obj(tip: [f64; 3], far: [[f64; 3]; 2], slashes: bool) -> String {
    let mut s = String::from("# test frame\n");
    for p in [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        tip,
        far[0],
        far[1],
    ] {
        s += &format!("v {} {} {}\n", p[0], p[1], p[2]);
    }
    if slashes {
        s += "vn 0 0 1\nf 1//1 2//1 3//1\nf 4/1/1 5/1/1 6/1/1\n";
    } else {
        s += "f 1 2 3\nf 4 5 6\n";
    }
    s
}

fn write_frames(dir: &Path, frames: &[String]) {
    for (i, f) in frames.iter().enumerate() {
        std::fs::write(dir.join(format!("frame_{i:04}.obj")), f).unwrap();
    }
}

#[test]
fn clean_sequence_exits_0_with_summary() {
    let dir = tmp("clean");
    // The tip descends towards the triangle but stops 1 mm above it.
    write_frames(
        &dir,
        &[
            needle_obj([0.2, 0.2, 0.3], ABOVE, false),
            needle_obj([0.25, 0.2, 0.1], ABOVE, true),
            needle_obj([0.3, 0.2, 0.001], ABOVE, false),
        ],
    );
    let (code, out, err) = check(&dir, &["--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v = json(&out);
    for key in [
        "frames",
        "intersecting_frames",
        "colliding_transitions",
        "uncertain_pairs",
        "min_distance",
    ] {
        assert!(v.get(key).is_some(), "missing {key}: {v}");
    }
    assert_eq!(v["frames"], 3);
    assert_eq!(v["intersecting_frames"], 0);
    assert_eq!(v["colliding_transitions"], 0);
    assert_eq!(v["uncertain_pairs"], 0);
    assert_eq!(v["vertices"], 6);
    assert_eq!(v["triangles"], 2);
    let d = v["min_distance"].as_f64().unwrap();
    assert!((d - 0.001).abs() < 1e-12, "{d}");
    // The plain-text summary says so too.
    let (code, out, _) = check(&dir, &[]);
    assert_eq!(code, 0);
    assert!(
        out.trim_end().ends_with("clean") && !out.contains("NOT"),
        "{out}"
    );
}

#[test]
fn polylines_are_accepted_and_must_keep_their_topology() {
    let dir = tmp("polylines");
    // Two rod vertices (7, 8) joined by an `l` line, beside the clean needle sequence.
    let with_rod = |tip: [f64; 3], line: &str| {
        needle_obj(tip, ABOVE, false) + "v 3 3 3\nv 3 3 4\n" + line + "\n"
    };
    write_frames(
        &dir,
        &[
            with_rod([0.2, 0.2, 0.3], "l 7 8"),
            with_rod([0.3, 0.2, 0.001], "l 7 8"),
        ],
    );
    let (code, out, err) = check(&dir, &["--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v = json(&out);
    assert_eq!(
        (v["vertices"].as_u64(), v["polylines"].as_u64()),
        (Some(8), Some(1)),
        "{v}"
    );
    let (code, out, _) = check(&dir, &[]);
    assert_eq!(code, 0);
    assert!(out.contains("(1 polylines, checked as curves)"), "{out}");
    // A polyline that changes between frames is bad input.
    write_frames(
        &dir,
        &[
            with_rod([0.2, 0.2, 0.3], "l 7 8"),
            with_rod([0.3, 0.2, 0.001], "l 8 7"),
        ],
    );
    let (code, _, err) = check(&dir, &["--json"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("polylines differ"), "{err}");
}

#[test]
fn polyline_segments_are_checked_as_curves() {
    let dir = tmp("rod_through");
    // A rod segment 7-8 beside the clean needle sequence; `rod` gives its two ends.
    let with_rod = |a: [f64; 3], b: [f64; 3]| {
        needle_obj([0.2, 0.2, 0.3], ABOVE, false)
            + &format!(
                "v {} {} {}\nv {} {} {}\nl 7 8\n",
                a[0], a[1], a[2], b[0], b[1], b[2]
            )
    };
    // Horizontal rod 0.1 above the fixed triangle, then 0.05 above: clean.
    write_frames(
        &dir,
        &[
            with_rod([0.1, -0.5, 0.1], [0.1, 0.5, 0.1]),
            with_rod([0.1, -0.5, 0.05], [0.1, 0.5, 0.05]),
        ],
    );
    let (code, out, err) = check(&dir, &["--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let d = json(&out)["min_distance"].as_f64().unwrap();
    assert!((d - 0.05).abs() < 1e-12, "{out}");
    // Moved below the triangle: both frames clean, the motion passes through edge 0-1.
    write_frames(
        &dir,
        &[
            with_rod([0.1, -0.5, 0.1], [0.1, 0.5, 0.1]),
            with_rod([0.1, -0.5, -0.1], [0.1, 0.5, -0.1]),
        ],
    );
    let (code, out, _) = check(&dir, &["--json"]);
    assert_eq!(code, 1, "{out}");
    let v = json(&out);
    assert_eq!(v["intersecting_frames"].as_u64(), Some(0), "{v}");
    assert_eq!(v["colliding_transitions"].as_u64(), Some(1), "{v}");
    // A rod piercing the triangle in a frame.
    write_frames(
        &dir,
        &[
            with_rod([0.1, 0.1, 0.1], [0.1, 0.1, -0.1]),
            with_rod([0.1, 0.1, 0.1], [0.1, 0.1, -0.1]),
        ],
    );
    let (code, out, _) = check(&dir, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("segment-triangle 0 and 0"), "{out}");
}

#[test]
fn vertex_passing_through_a_triangle_exits_1() {
    let dir = tmp("through");
    // Both frames are intersection-free; the tip passes through the triangle between them.
    write_frames(
        &dir,
        &[
            needle_obj([0.2, 0.2, 0.1], BELOW, false),
            needle_obj([0.2, 0.2, -0.1], BELOW, false),
        ],
    );
    let (code, out, err) = check(&dir, &["--json", "--eta", "1e-9"]);
    assert_eq!(code, 1, "{out}{err}");
    let v = json(&out);
    assert_eq!(v["frames"], 2);
    assert_eq!(v["intersecting_frames"], 0);
    assert_eq!(v["colliding_transitions"], 1);
    assert_eq!(v["uncertain_pairs"], 0);
    let problems = v["problems"].as_array().unwrap();
    assert!(
        problems[0]
            .as_str()
            .unwrap()
            .contains("vertex-triangle [3, 0]"),
        "{v}"
    );
    // A frame in which the triangles intersect counts as an intersecting frame.
    write_frames(
        &dir,
        &[
            needle_obj([0.2, 0.2, 0.1], BELOW, false),
            needle_obj([0.2, 0.2, -0.1], BELOW, false),
            needle_obj([0.3, 0.3, -0.1], BELOW, false).replace("v 5 5 -1", "v 0.3 0.3 1"),
        ],
    );
    let (code, out, _) = check(&dir, &["--json"]);
    assert_eq!(code, 1);
    let v = json(&out);
    assert_eq!(v["frames"], 3);
    assert_eq!(v["intersecting_frames"], 1, "{v}");
    assert_eq!(v["colliding_transitions"], 2, "{v}");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let expect_2 = |dir: &Path, needle: &str| {
        let (code, out, err) = check(dir, &["--json"]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(out.is_empty(), "{out}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
    };
    let dir = tmp("bad");
    expect_2(&dir, "no frame_NNNN.obj files");
    expect_2(&dir.join("absent"), "cannot read folder");
    // Different vertex counts.
    let mut short = needle_obj([0.2, 0.2, 0.1], BELOW, false);
    short = short.replace("f 4 5 6\n", "") + "v 9 9 9\n";
    write_frames(&dir, &[needle_obj([0.2, 0.2, 0.1], BELOW, false), short]);
    expect_2(&dir, "7 vertices, but");
    // A gap in the numbering.
    std::fs::remove_file(dir.join("frame_0001.obj")).unwrap();
    std::fs::write(
        dir.join("frame_0002.obj"),
        needle_obj([0.2, 0.2, 0.1], BELOW, false),
    )
    .unwrap();
    expect_2(&dir, "missing frame 1");
    // A malformed OBJ names the file and the line.
    std::fs::remove_file(dir.join("frame_0002.obj")).unwrap();
    std::fs::write(
        dir.join("frame_0001.obj"),
        needle_obj([0.2, 0.2, 0.1], BELOW, false).replace("f 4 5 6", "f 4 5 x"),
    )
    .unwrap();
    expect_2(&dir, "frame_0001.obj:9:");
    // A negative touching distance.
    let (code, _, err) = check(&dir, &["--eta", "-1"]);
    assert_eq!(code, 2, "{err}");
}
