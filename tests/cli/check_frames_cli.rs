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

/// A unit tetrahedron's surface (4 vertices, 4 triangles) as an OBJ object named `name`,
/// translated by `at`, with its vertex indices starting at `base` (0-based).
fn tet_object(name: &str, at: [f64; 3], base: usize) -> String {
    let mut s = format!("o {name}\n");
    for p in [
        [0.0, 0.0, 0.0],
        [0.1, 0.0, 0.0],
        [0.0, 0.1, 0.0],
        [0.0, 0.0, 0.1],
    ] {
        s += &format!("v {} {} {}\n", p[0] + at[0], p[1] + at[1], p[2] + at[2]);
    }
    for t in [[1, 3, 2], [1, 2, 4], [1, 4, 3], [2, 3, 4]] {
        s += &format!("f {} {} {}\n", t[0] + base, t[1] + base, t[2] + base);
    }
    s
}

/// Frames of two bodies (`a` fixed, `b` at `b_at[k]` in frame k) laid out as `supple run
/// --out OUT --export obj` writes them: OUT/frames/frame_NNNN.obj.
fn write_run_output(out: &Path, b_at: &[[f64; 3]]) -> PathBuf {
    let frames = out.join("frames");
    std::fs::create_dir_all(&frames).unwrap();
    let files: Vec<String> = b_at
        .iter()
        .map(|&at| {
            format!(
                "# two bodies\n{}{}",
                tet_object("a", [0.0, 0.0, 0.5], 0),
                tet_object("b", at, 4)
            )
        })
        .collect();
    write_frames(&frames, &files);
    frames
}

#[test]
fn the_run_output_folder_is_accepted() {
    // Before: "OUT: no frame_NNNN.obj files" (the frames are in OUT/frames).
    let out = tmp("out-folder");
    write_run_output(&out, &[[1.0, 0.0, 0.5], [1.0, 0.0, 0.4]]);
    let (code, stdout, stderr) = check(&out, &["--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let v = json(&stdout);
    assert_eq!(
        (v["frames"].as_u64(), v["vertices"].as_u64()),
        (Some(2), Some(8))
    );
    // The frames folder itself still works.
    let (code, stdout, stderr) = check(&out.join("frames"), &["--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

/// A scene with a ground plane at z = 0, a sphere and a box moving at 1 m/s along +x.
const COLLIDER_SCENE: &str = r#"
[simulation]
frame_rate = 10.0
frames = 2

[[body]]
name = "a"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [1, 1, 1] }
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }

[[collider]]
shape = { sphere = { center = [5.0, 0.0, 1.0], radius = 0.5 } }

[[collider]]
shape = { box = { min = [-3.0, -1.0, 0.0], max = [-2.0, 1.0, 1.0] } }
velocity = [1.0, 0.0, 0.0]
"#;

#[test]
fn vertices_inside_colliders_are_findings_with_scene() {
    let out = tmp("colliders");
    let scene = out.join("scene.toml");
    std::fs::write(&scene, COLLIDER_SCENE).unwrap();
    // Body b: clear of everything, then 3.4 mm into the ground (the issue's case), then inside
    // the sphere.
    write_run_output(
        &out,
        &[[1.0, 0.0, 0.5], [1.0, 0.0, -0.0034], [5.0, 0.0, 0.9]],
    );
    // Without --scene: clean (the colliders are not looked at).
    let (code, stdout, _) = check(&out, &["--json"]);
    assert_eq!(code, 0, "{stdout}");
    assert!(json(&stdout).get("collider_frames").is_none());
    let (code, stdout, stderr) = check(&out, &["--json", "--scene", scene.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let v = json(&stdout);
    assert_eq!(v["collider_frames"], 2, "{v}");
    let f = v["collider_findings"].as_array().unwrap();
    assert_eq!(f.len(), 2, "{v}");
    // Frame 1: the 3 vertices of b's base are 3.4 mm below the ground (b's vertex 0 is the
    // file's vertex 4).
    assert_eq!(
        (f[0]["frame"].as_u64(), f[0]["collider"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(f[0]["vertices"], 3);
    assert_eq!(f[0]["body"], "b");
    assert!([4, 5, 6].contains(&f[0]["vertex"].as_u64().unwrap()), "{v}");
    assert!(
        (f[0]["distance"].as_f64().unwrap() + 0.0034).abs() < 1e-12,
        "{v}"
    );
    assert_eq!(f[0]["offset"], 0.0);
    // Frame 2: all 4 vertices of b inside the sphere; the deepest is its apex, vertex 7, at
    // the centre (5, 0, 1): 0 - 0.5 = -0.5 m.
    assert_eq!(
        (f[1]["frame"].as_u64(), f[1]["collider"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        (f[1]["vertex"].as_u64(), f[1]["vertices"].as_u64()),
        (Some(7), Some(4))
    );
    assert!(
        (f[1]["distance"].as_f64().unwrap() + 0.5).abs() < 1e-12,
        "{v}"
    );
    assert!((v["min_collider_distance"].as_f64().unwrap() + 0.5).abs() < 1e-12);
    assert!(
        v["times_from"].as_str().unwrap().contains("frame_rate"),
        "{v}"
    );
    // The plain-text report names the frame, the vertex and the distance.
    let (code, stdout, _) = check(&out, &["--scene", scene.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("frame 1 (t = 0.1 s): 3 vertices")
            && stdout.contains("signed distance -3.4e-3 m from collider[0] (plane, offset 0 m)")
            && stdout.contains("NOT clean"),
        "{stdout}"
    );
}

/// A body's clearance (`collider_offset`) is added to the collider's offset for its own
/// vertices (found by the OBJ object's name), not for the other body's.
#[test]
fn a_body_clearance_is_checked_for_its_vertices() {
    let out = tmp("clearance");
    let scene = out.join("scene.toml");
    let body = |name: &str, clearance: f64| {
        format!(
            "[[body]]\nname = \"{name}\"\ncollider_offset = {clearance}\nmesh = {{ generator = \"box\", size = [0.1, 0.1, 0.1], cells = [1, 1, 1] }}\nmaterial = {{ model = \"stable-neo-hookean\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }}\n"
        )
    };
    std::fs::write(
        &scene,
        format!(
            "[simulation]\nframe_rate = 10.0\n{}{}[[collider]]\nshape = {{ plane = {{ normal = [0.0, 0.0, 1.0], offset = 0.0 }} }}\noffset = 0.001\n",
            body("a", 0.0),
            body("b", 0.01)
        ),
    )
    .unwrap();
    // b 5 mm above the ground: clear of the 1 mm offset, inside its own 1 + 10 mm.
    write_run_output(&out, &[[1.0, 0.0, 0.5], [1.0, 0.0, 0.005]]);
    let (code, stdout, stderr) = check(&out, &["--json", "--scene", scene.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let v = json(&stdout);
    assert_eq!(v["collider_frames"], 1, "{v}");
    let f = &v["collider_findings"][0];
    assert_eq!(
        (f["frame"].as_u64(), f["body"].as_str()),
        (Some(1), Some("b")),
        "{v}"
    );
    assert!((f["offset"].as_f64().unwrap() - 0.011).abs() < 1e-12, "{v}");
    // Without the clearance the same frames are clean.
    std::fs::write(
        &scene,
        std::fs::read_to_string(&scene)
            .unwrap()
            .replace("collider_offset = 0.01", "collider_offset = 0.0"),
    )
    .unwrap();
    let (code, stdout, stderr) = check(&out, &["--json", "--scene", scene.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
}

#[test]
fn moving_colliders_are_checked_at_the_frame_time() {
    let out = tmp("moving");
    let scene = out.join("scene.toml");
    std::fs::write(&scene, COLLIDER_SCENE).unwrap();
    // b sits at x = -1.5 .. -1.4: outside the box [-3, -2] at t = 0, inside it once the box
    // has moved 1.5 m (t = 1.5 s), clear at t = 0.2 s.
    write_run_output(
        &out,
        &[[-1.5, 0.0, 0.5], [-1.5, 0.0, 0.5], [-1.5, 0.0, 0.5]],
    );
    let scene_arg = ["--json", "--scene", scene.to_str().unwrap()];
    // By frame rate (10 Hz) the frames are at t = 0, 0.1, 0.2 s: the box is still far.
    let (code, stdout, stderr) = check(&out, &scene_arg);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // A report.json beside the frames gives their times: frame 1 at t = 1.5 s is inside.
    let report = serde_json::json!({"frames": [
        {"frame": 0, "time": 0.0}, {"frame": 1, "time": 1.5}, {"frame": 2, "time": 0.2}
    ]});
    std::fs::write(out.join("report.json"), report.to_string()).unwrap();
    let (code, stdout, stderr) = check(&out, &scene_arg);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let v = json(&stdout);
    assert_eq!(v["collider_frames"], 1, "{v}");
    let f = &v["collider_findings"][0];
    assert_eq!(
        (f["frame"].as_u64(), f["collider"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(f["time"], 1.5);
    assert!(
        v["times_from"].as_str().unwrap().ends_with("report.json"),
        "{v}"
    );
    // A report of another run (other frame count) is not used.
    std::fs::write(
        out.join("report.json"),
        serde_json::json!({"frames": [{"frame": 0, "time": 1.5}]}).to_string(),
    )
    .unwrap();
    let (code, stdout, _) = check(&out, &scene_arg);
    assert_eq!(code, 0, "{stdout}");
    // A bad scene is bad input.
    let (code, _, stderr) = check(&out, &["--scene", "/nonexistent/scene.toml"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/nonexistent/scene.toml"), "{stderr}");
}

#[test]
fn collider_meshes_after_the_marker_are_not_checked() {
    // A frame whose exported collider mesh (a ground quad) cuts through the body: the quad is
    // not simulated geometry, so the frame is clean.
    let out = tmp("marker");
    let frames = write_run_output(&out, &[[1.0, 0.0, 0.5], [1.0, 0.0, 0.45]]);
    for k in 0..2 {
        let p = frames.join(format!("frame_{k:04}.obj"));
        let mut s = std::fs::read_to_string(&p).unwrap();
        s += "# supple colliders: 1 analytic colliders as meshes, not simulated\n";
        s += "o collider_plane_0\nv -5 -5 0.55\nv 5 -5 0.55\nv 5 5 0.55\nv -5 5 0.55\n";
        s += "f 9 10 11\nf 9 11 12\n";
        std::fs::write(&p, s).unwrap();
    }
    let (code, stdout, stderr) = check(&out, &["--json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let v = json(&stdout);
    assert_eq!(
        (v["vertices"].as_u64(), v["triangles"].as_u64()),
        (Some(8), Some(8))
    );
    // Without the marker the same quad is part of the surface and intersects the body.
    for k in 0..2 {
        let p = frames.join(format!("frame_{k:04}.obj"));
        let s = std::fs::read_to_string(&p)
            .unwrap()
            .replace("# supple colliders:", "# x");
        std::fs::write(&p, s).unwrap();
    }
    let (code, stdout, _) = check(&out, &["--json"]);
    assert_eq!(code, 1, "{stdout}");
}
