//! `supple run`: frames with a stable vertex order (frame 0 the initial state), report.json
//! (frame times, written even when the run fails), deterministic output, output paths checked
//! before the first step, atomic frame files, one OBJ object / USD prim per body with the
//! colliders, start-up warnings, and clear errors for bad or unsupported scenes.
use std::path::Path;
use std::process::Command;

mod common;
use common::{check_usd, TINY};

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
        // Frame 0 is the initial state, then one file per simulated frame.
        let frames: Vec<_> = (0..=3)
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
        assert_eq!(fr.len(), 4);
        assert!(fr[0].get("newton_iterations").is_none(), "{}", fr[0]);
        for f in &fr[1..] {
            assert!(f["newton_iterations"].as_u64().unwrap() >= 1);
            assert!(f["min_volume_ratio"].as_f64().unwrap() > 0.0);
            assert!(f["max_speed"].as_f64().is_some());
            // The scene has no collision method: the device-driven Newton loop runs, and
            // without per-node timestamps its iteration graphs report as one part.
            let gpu = &f["gpu_ms"];
            let part = |k: &str| {
                gpu[k]
                    .as_f64()
                    .unwrap_or_else(|| panic!("gpu_ms.{k}: {gpu}"))
            };
            assert!(part("predict") > 0.0, "{gpu}");
            assert!(
                part("device_loop") > 0.0 || (part("hessian") > 0.0 && part("pcg") > 0.0),
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

/// TINY's cube plus a 6-segment rod pinned at one end (7 vertices), swinging under gravity.
fn rod_scene() -> String {
    TINY.replace(
        "[[collider]]",
        r#"[[body]]
name = "rod"
mesh = { generator = "rod", size = [0.3, 0.0, 0.0], cells = [6, 1, 1] }
translation = [0.0, 0.5, 0.5]
material = { model = "rod", youngs_modulus = 5e7, poisson_ratio = 0.3, density = 1100.0, radius = 0.005 }
fixed = [{ indices = [0] }]

[[collider]]"#,
    )
}

/// Vertices and `l` polylines (1-based indices) of an OBJ frame.
fn obj_frame(p: &Path) -> (Vec<[f64; 3]>, Vec<Vec<usize>>) {
    let text = std::fs::read_to_string(p).unwrap();
    let mut v = Vec::new();
    let mut l = Vec::new();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("v") => {
                let c: Vec<f64> = it.map(|t| t.parse().unwrap()).collect();
                v.push([c[0], c[1], c[2]]);
            }
            Some("l") => l.push(it.map(|t| t.parse().unwrap()).collect()),
            _ => {}
        }
    }
    (v, l)
}

#[test]
fn rods_are_exported_as_polylines_in_obj_ply_and_usd() {
    let dir = tmp("rods");
    let scene = dir.join("rods.toml");
    std::fs::write(&scene, rod_scene()).unwrap();
    let run = |fmt: &str| {
        let out = dir.join(fmt);
        let (code, stderr) = supple(&[
            "run",
            scene.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--export",
            fmt,
        ]);
        assert_eq!(code, 0, "{stderr}");
        out
    };
    // OBJ: the cube's 26 surface vertices, then the rod's 7, drawn by one `l` line in order.
    let out = run("obj");
    let frames: Vec<_> = (0..=3)
        .map(|f| obj_frame(&out.join("frames").join(format!("frame_{f:04}.obj"))))
        .collect();
    for (v, l) in &frames {
        assert_eq!(v.len(), 33);
        assert_eq!(l, &vec![(27..=33).collect::<Vec<usize>>()]);
    }
    // The pinned end stays, the free end falls.
    let (first, last) = (&frames[0].0, &frames[3].0);
    assert_eq!(first[26], last[26]);
    assert!(
        last[32][2] < first[32][2] - 1e-4,
        "{:?} -> {:?}",
        first[32],
        last[32]
    );
    let check = Command::new(env!("CARGO_BIN_EXE_supple"))
        .args([
            "check-frames",
            out.join("frames").to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(summary["polylines"], 1, "{summary}");
    assert_eq!(summary["vertices"], 33, "{summary}");
    assert!(out.join("preview.png").exists());
    // PLY: an edge element with the rod's 6 segments.
    let out = run("ply");
    let bytes = std::fs::read(out.join("frames").join("frame_0002.ply")).unwrap();
    let end = bytes
        .windows(11)
        .position(|w| w == b"end_header\n")
        .unwrap();
    let header = std::str::from_utf8(&bytes[..end]).unwrap();
    assert!(
        header.contains("element vertex 33\n") && header.contains("element edge 6\n"),
        "{header}"
    );
    // USD: the rod is a linear BasisCurves prim of 7 points per sample, moving; the cube a
    // Mesh of 26 points.
    let out = run("usd");
    let usda = std::fs::read_to_string(out.join("frames.usda")).unwrap();
    let curves = &usda[usda.find("def BasisCurves \"rod\"").expect("curves prim")..];
    assert!(curves.contains("int[] curveVertexCounts = [7]"), "{curves}");
    assert!(
        curves.contains("uniform token type = \"linear\""),
        "{curves}"
    );
    assert!(curves.contains("float[] widths = [0.01]"), "{curves}");
    let points = &curves[curves.find("points.timeSamples").unwrap()..];
    let samples: Vec<&str> = points.lines().skip(1).take(4).collect();
    assert_eq!(samples.len(), 4);
    for (t, s) in samples.iter().enumerate() {
        assert!(s.trim().starts_with(&format!("{t}: [")), "{s}");
        assert_eq!(s.matches('(').count(), 7, "{s}");
    }
    assert_ne!(
        samples[0].split_once(':').unwrap().1,
        samples[3].split_once(':').unwrap().1,
        "rod points move"
    );
    let mesh = &usda[usda.find("def Mesh \"cube\"").unwrap()..];
    let mesh_points = &mesh[mesh.find("points.timeSamples").unwrap()..];
    let first_sample = mesh_points.lines().nth(1).unwrap();
    assert_eq!(first_sample.matches('(').count(), 26, "{first_sample}");
    let args: Vec<String> = [
        "--frames",
        "4",
        "--body",
        "/World/cube=Mesh:26",
        "--body",
        "/World/rod=BasisCurves:7",
        "--collider",
        "/World/colliders/plane_0=Mesh",
        "--exact",
    ]
    .map(String::from)
    .to_vec();
    check_usd(&out.join("frames.usda"), &args);
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

/// A scene error names the file, line and field path whatever flags are given (`--frames`,
/// `--export`, unrelated `--set`s), and mentions `--set` only for an override's own value.
#[test]
fn scene_errors_name_the_line_and_field_whatever_the_flags() {
    let dir = tmp("lines");
    let scene = dir.join("bad.toml");
    let text = TINY.replace("youngs_modulus = 1e5", "youngs_modulus = \"100 kPa\"");
    let line = 1 + text.lines().position(|l| l.contains("100 kPa")).unwrap();
    std::fs::write(&scene, &text).unwrap();
    let s = scene.to_str().unwrap();
    let d = dir.to_str().unwrap();
    let want = format!("bad.toml:{line}: body[0].material.youngs_modulus: invalid type");
    for flags in [
        vec![],
        vec!["--frames", "1"],
        vec!["--frames", "1", "--export", "obj"],
        vec!["--frames", "2", "--set", "simulation.substeps=2"],
    ] {
        let mut args = vec!["run", s, "--out", d];
        args.extend(&flags);
        let (code, stderr) = supple(&args);
        assert_eq!(code, 2, "{flags:?}: {stderr}");
        assert!(stderr.contains(&want), "{flags:?}: {stderr}");
        assert!(!stderr.contains("--set"), "{flags:?}: {stderr}");
    }
    std::fs::write(&scene, TINY).unwrap();
    let (code, stderr) = supple(&[
        "run",
        s,
        "--out",
        d,
        "--frames",
        "1",
        "--set",
        "body[0].translation=[0, 1]",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("body[0].translation")
            && stderr.contains("--set body[0].translation=[0, 1]")
            && !stderr.contains("frames"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two-way collision handling refuses an intersecting start with exit code 2, naming the two
/// bodies and a pair of triangles and suggesting the shortest-path method.
#[test]
fn an_intersecting_start_is_refused_for_two_way() {
    let dir = tmp("overlap");
    let scene = dir.join("overlap.toml");
    let second = TINY
        .split("[[body]]")
        .nth(1)
        .unwrap()
        .split("[[collider]]")
        .next()
        .unwrap()
        .replace("name = \"cube\"", "name = \"other\"")
        .replace(
            "translation = [0.0, 0.0, 0.1]",
            "translation = [0.03, 0.0, 0.12]",
        );
    let text = format!("{TINY}\n[collision]\nmethod = \"two-way\"\n\n[[body]]{second}");
    std::fs::write(&scene, text).unwrap();
    let (code, stderr) = supple(&[
        "run",
        scene.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("bodies 'cube' and 'other' intersect")
            && stderr.contains("triangle ")
            && stderr.contains("collision.method = \"shortest-path\""),
        "{stderr}"
    );
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
    assert_eq!(report["frames"].as_array().unwrap().len(), 3);
    assert_eq!(report["scene"], "default scene");
    // One prim per body of the default scene (read from scenes/default.toml), and one per
    // collider: types, points sampled at the 3 frames, moving or static transforms.
    let scene_text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenes/default.toml"),
    )
    .unwrap();
    let mut args: Vec<String> = ["--frames", "3", "--fps", "60", "--exact"]
        .map(String::from)
        .to_vec();
    let mut c = 0;
    for block in scene_text.split("[[").skip(1) {
        if let Some(body) = block.strip_prefix("body]]") {
            let name = body
                .lines()
                .find_map(|l| l.trim().strip_prefix("name = \""))
                .and_then(|n| n.strip_suffix('"'))
                .expect("body name");
            let kind = if body.contains("model = \"rod\"") {
                "BasisCurves"
            } else {
                "Mesh"
            };
            args.extend(["--body".into(), format!("/World/{name}={kind}:*")]);
        } else if let Some(collider) = block.strip_prefix("collider]]") {
            let (shape, kind) = if collider.contains("plane") {
                ("plane", "Mesh")
            } else if collider.contains("sphere") {
                ("sphere", "Sphere")
            } else {
                ("box", "Cube")
            };
            let moving = if collider
                .lines()
                .any(|l| l.trim_start().starts_with("velocity"))
            {
                ":moving"
            } else {
                ""
            };
            args.extend([
                "--collider".into(),
                format!("/World/colliders/{shape}_{c}={kind}{moving}"),
            ]);
            c += 1;
        }
    }
    assert!(
        args.iter().any(|a| a.starts_with("/World/colliders/")),
        "{args:?}"
    );
    check_usd(&dir.join("frames.usda"), &args);
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

/// Writes `scene` into `dir` and runs `supple run SCENE --out DIR/out ARGS...`: exit code,
/// stderr and the output folder.
fn run_scene(dir: &Path, scene: &str, args: &[&str]) -> (i32, String, std::path::PathBuf) {
    let path = dir.join("scene.toml");
    std::fs::write(&path, scene).unwrap();
    let out = dir.join("out");
    let mut all = vec![
        "run",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let (code, stderr) = supple(&all);
    (code, stderr, out)
}

fn report(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap()
}

#[test]
fn the_initial_state_is_frame_0_and_every_frame_has_its_time() {
    // Before: frame_0000 was the state after the first step and report.json had no times.
    let dir = tmp("initial");
    let (code, stderr, out) = run_scene(&dir, TINY, &["--export", "obj"]);
    assert_eq!(code, 0, "{stderr}");
    let z_range = |k: u32| {
        let (v, _) = obj_frame(&out.join("frames").join(format!("frame_{k:04}.obj")));
        v.iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(p[2]), hi.max(p[2]))
            })
    };
    // TINY's cube starts with its faces at z = 0.05 and 0.15 (f32 on the device), then falls.
    let (lo, hi) = z_range(0);
    assert!(
        (lo - 0.05).abs() < 1e-7 && (hi - 0.15).abs() < 1e-7,
        "{lo} {hi}"
    );
    assert!(
        z_range(1).0 < 0.05 - 1e-4,
        "frame 1 has fallen: {:?}",
        z_range(1)
    );
    assert!(!out.join("frames").join("frame_0004.obj").exists());
    let r = report(&out);
    assert_eq!(r["frame_rate"], 60.0);
    let frames = r["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 4);
    for (k, f) in frames.iter().enumerate() {
        assert_eq!(f["frame"].as_u64(), Some(k as u64), "{f}");
        let t = f["time"].as_f64().unwrap();
        assert!((t - k as f64 / 60.0).abs() < 1e-9, "frame {k}: time {t}");
        // Frame 0 was not stepped: no solver statistics, no wall time.
        assert_eq!(f.get("newton_iterations").is_some(), k > 0, "{f}");
        assert_eq!(f.get("wall_ms").is_some(), k > 0, "{f}");
    }
    // USD: time code k is frame k, at frame_rate time codes per second, starting at 0.
    let (code, stderr, out) = run_scene(&dir, TINY, &["--export", "usd"]);
    assert_eq!(code, 0, "{stderr}");
    let usda = std::fs::read_to_string(out.join("frames.usda")).unwrap();
    for key in [
        "startTimeCode = 0",
        "endTimeCode = 3",
        "timeCodesPerSecond = 60",
    ] {
        assert!(usda.contains(key), "missing {key}");
    }
    let mesh = &usda[usda.find("def Mesh \"cube\"").unwrap()..];
    let sample0 = mesh[mesh.find("points.timeSamples").unwrap()..]
        .lines()
        .nth(1)
        .unwrap();
    assert!(
        sample0.trim().starts_with("0: [(-0.05, -0.05, 0.05)"),
        "{sample0}"
    );
    let args: Vec<String> = [
        "--frames",
        "4",
        "--fps",
        "60",
        "--body",
        "/World/cube=Mesh:26",
    ]
    .map(String::from)
    .to_vec();
    check_usd(&out.join("frames.usda"), &args);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn output_paths_are_checked_before_the_first_step() {
    // Before: a bad --trace path failed after the whole run, with exit 1 and no report.json.
    let dir = tmp("paths");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let not_started = |stderr: &str| !stderr.contains("[run] frame") && !stderr.contains("wrote");
    // --out is a file, or lies under one.
    for out in [file.clone(), file.join("sub")] {
        let (code, stderr) = supple(&["run", "--frames", "2", "--out", out.to_str().unwrap()]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(out.to_str().unwrap()) && not_started(&stderr),
            "{stderr}"
        );
    }
    // --trace in a folder that does not exist, or a folder.
    let out = dir.join("out");
    for trace in [dir.join("missing").join("trace.json"), dir.clone()] {
        let (code, stderr) = supple(&[
            "run",
            "--frames",
            "2",
            "--out",
            out.to_str().unwrap(),
            "--export",
            "obj",
            "--trace",
            trace.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{stderr}");
        assert!(
            stderr.contains(trace.to_str().unwrap()) && not_started(&stderr),
            "{stderr}"
        );
        assert!(!out.exists(), "nothing written");
    }
    // The frames folder is a file.
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("frames"), "x").unwrap();
    let (code, stderr) = supple(&[
        "run",
        "--frames",
        "2",
        "--out",
        out.to_str().unwrap(),
        "--export",
        "obj",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("frames") && not_started(&stderr),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(target_os = "linux")]
#[test]
fn report_json_is_written_when_a_later_step_fails() {
    let dir = tmp("fails");
    // Frame 2 cannot be written (a folder holds its name): the run stops there with exit 1,
    // and report.json has frames 0 to 2 and the error.
    let out = dir.join("out");
    std::fs::create_dir_all(out.join("frames").join("frame_0002.obj")).unwrap();
    let (code, stderr, out) = run_scene(&dir, TINY, &["--export", "obj"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("frame_0002.obj"), "{stderr}");
    let r = report(&out);
    let frames: Vec<u64> = r["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["frame"].as_u64().unwrap())
        .collect();
    assert_eq!(frames, [0, 1, 2]);
    assert!(
        r["error"].as_str().unwrap().contains("frame_0002.obj"),
        "{r}"
    );
    assert!(out.join("frames").join("frame_0001.obj").is_file());
    let names: Vec<String> = std::fs::read_dir(out.join("frames"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.contains("supple-tmp")), "{names:?}");
    // A full disk for the trace: the run completes, then fails naming the trace; report.json
    // says so.
    let _ = std::fs::remove_dir_all(&out);
    assert!(Path::new("/dev/full").exists(), "Linux has /dev/full");
    let (code, stderr, out) = run_scene(&dir, TINY, &["--trace", "/dev/full"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("/dev/full"), "{stderr}");
    let r = report(&out);
    assert_eq!(r["frames"].as_array().unwrap().len(), 4);
    assert!(r["error"].as_str().unwrap().contains("/dev/full"), "{r}");
    // A full disk for report.json itself: a clear error naming it, no panic.
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink("/dev/full", out.join("report.json")).unwrap();
    let (code, stderr, _) = run_scene(&dir, TINY, &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("report.json") && !stderr.contains("panicked"),
        "{stderr}"
    );
    assert!(Path::new("/dev/full")
        .metadata()
        .is_ok_and(|m| !m.is_file()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn a_killed_run_leaves_only_complete_frames() {
    let dir = tmp("killed");
    let scene = dir.join("scene.toml");
    std::fs::write(&scene, TINY.replace("frames = 3", "frames = 100000")).unwrap();
    let out = dir.join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_supple"))
        .args([
            "run",
            scene.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .args(["--export", "obj"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let frames = out.join("frames");
    let started = std::time::Instant::now();
    while !frames.join("frame_0020.obj").exists() {
        assert!(
            started.elapsed().as_secs() < 300,
            "no 20 frames in 5 minutes"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Every frame file is complete: the header, the object, 26 vertices and 48 faces.
    let mut n = 0;
    for e in std::fs::read_dir(&frames).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.starts_with("frame_") {
            let text = std::fs::read_to_string(frames.join(&name)).unwrap();
            assert_eq!(text.lines().count(), 76, "{name} is incomplete");
            assert!(text.ends_with('\n') && text.lines().last().unwrap().starts_with("f "));
            n += 1;
        }
    }
    assert!(n > 20);
    let _ = std::fs::remove_dir_all(&dir);
}

/// TINY's cube (renamed "soft cube") and a rod, a moving sphere collider and a static box
/// collider away from them.
fn bodies_and_colliders_scene() -> String {
    rod_scene().replace("name = \"cube\"", "name = \"soft cube\"")
        + r#"
[[collider]]
shape = { sphere = { center = [2.0, 0.0, 0.5], radius = 0.25 } }
velocity = [0.0, 1.0, 0.0]

[[collider]]
shape = { box = { min = [-3.0, -1.0, 0.0], max = [-2.0, 1.0, 0.5] } }
"#
}

#[test]
fn exports_keep_bodies_apart_and_include_the_colliders() {
    // Before: one merged mesh, no colliders, an empty frames/ for usd, a wrong final message.
    let dir = tmp("bodies");
    let scene = bodies_and_colliders_scene();
    let (code, stderr, out) = run_scene(&dir, &scene, &["--export", "obj", "--export-colliders"]);
    assert_eq!(code, 0, "{stderr}");
    let frames = out.join("frames");
    assert!(
        stderr.contains(&format!(
            "wrote {} … frame_0003.obj (4 frames) with objects soft cube, rod and the colliders",
            frames.join("frame_0000.obj").display()
        )),
        "{stderr}"
    );
    // Objects in order, each with its own vertices: bodies, the marker, then the colliders.
    let text = std::fs::read_to_string(frames.join("frame_0003.obj")).unwrap();
    let mut objects: Vec<(String, usize)> = Vec::new();
    let mut marker_at = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("o ") {
            objects.push((name.to_string(), 0));
        } else if line.starts_with("v ") {
            objects.last_mut().expect("v inside an object").1 += 1;
        } else if line.starts_with("# supple colliders:") {
            marker_at = Some(objects.len());
        }
    }
    let expected = [
        ("soft_cube", 26),
        ("rod", 7),
        ("collider_plane_0", 4),
        ("collider_sphere_1", 2 + 11 * 24),
        ("collider_box_2", 8),
    ];
    assert_eq!(
        objects,
        expected.map(|(n, v)| (n.to_string(), v)).to_vec(),
        "{text}"
    );
    assert_eq!(marker_at, Some(2));
    // The sphere has moved by 1 m/s × 3/60 s along y in frame 3: its north pole is there.
    let pole: Vec<f64> = text[text.find("o collider_sphere_1\nv ").unwrap() + 22..]
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .map(|c| c.parse().unwrap())
        .collect();
    assert!(
        (pole[0] - 2.0).abs() + (pole[1] - 0.05).abs() + (pole[2] - 0.75).abs() < 1e-12,
        "sphere pole at {pole:?}"
    );
    // check-frames leaves the collider meshes out, and with the scene finds no vertex inside.
    for extra in [vec![], vec!["--scene", "SCENE"]] {
        let extra: Vec<String> = extra
            .iter()
            .map(|a| a.replace("SCENE", dir.join("scene.toml").to_str().unwrap()))
            .collect();
        let check = Command::new(env!("CARGO_BIN_EXE_supple"))
            .arg("check-frames")
            .arg(&out)
            .args(&extra)
            .arg("--json")
            .output()
            .unwrap();
        let so = String::from_utf8_lossy(&check.stdout);
        assert_eq!(check.status.code(), Some(0), "{so}");
        let v: serde_json::Value = serde_json::from_str(so.trim()).unwrap();
        assert_eq!(v["vertices"], 33, "{v}");
    }
    // USD: one prim per body, the colliders with the sphere's motion, and no frames/ folder.
    let _ = std::fs::remove_dir_all(&out);
    let (code, stderr, out) = run_scene(&dir, &scene, &["--export", "usd"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!out.join("frames").exists(), "usd leaves no frames/ folder");
    assert!(
        stderr.contains(&format!(
            "wrote {} (4 time samples; prims /World/soft_cube, /World/rod, /World/colliders/plane_0, /World/colliders/sphere_1, /World/colliders/box_2)",
            out.join("frames.usda").display()
        )),
        "{stderr}"
    );
    let args: Vec<String> = [
        "--frames",
        "4",
        "--fps",
        "60",
        "--body",
        "/World/soft_cube=Mesh:26",
        "--body",
        "/World/rod=BasisCurves:7",
        "--collider",
        "/World/colliders/plane_0=Mesh",
        "--collider",
        "/World/colliders/sphere_1=Sphere:moving",
        "--collider",
        "/World/colliders/box_2=Cube",
        "--exact",
    ]
    .map(String::from)
    .to_vec();
    check_usd(&out.join("frames.usda"), &args);
    // Collider meshes go with obj only (usd has them anyway).
    let (code, stderr, _) = run_scene(&dir, &scene, &["--export", "ply", "--export-colliders"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--export-colliders"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn start_up_warnings_name_the_body() {
    let dir = tmp("warnings");
    // A clean scene warns about nothing.
    let (code, stderr, _) = run_scene(&dir, TINY, &["--frames", "1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("warning:"), "{stderr}");
    // Half the cube below the ground: its 9 lowest vertices are 5 cm inside.
    let sunk = TINY.replace(
        "translation = [0.0, 0.0, 0.1]",
        "translation = [0.0, 0.0, 0.0]",
    );
    let (code, stderr, _) = run_scene(&dir, &sunk, &["--frames", "1"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning: body 'cube' starts inside collider[0] (plane): 9 of its 27 vertices, the deepest 5.000e-2 m inside"),
        "{stderr}"
    );
    // Sizes that look like the wrong unit.
    for (scale, what) in [("2e4", "2.000e3 m across"), ("5e-4", "5.000e-5 m across")] {
        let scene = TINY.replace(
            "translation = [0.0, 0.0, 0.1]",
            &format!("translation = [0.0, 0.0, 1e4]\nscale = {scale}"),
        );
        let (_, stderr, _) = run_scene(&dir, &scene, &["--frames", "1"]);
        assert!(
            stderr.contains(&format!("warning: body 'cube' is {what}")),
            "{stderr}"
        );
    }
    // An empty name: named body_0 in the warning's words and in the exports.
    let unnamed = TINY.replace("name = \"cube\"", "name = \"\"");
    let (code, stderr, out) = run_scene(&dir, &unnamed, &["--frames", "1", "--export", "obj"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("warning: body[0] has an empty name (exports call it 'body_0')"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(out.join("frames").join("frame_0001.obj")).unwrap();
    assert!(text.contains("\no body_0\n"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
