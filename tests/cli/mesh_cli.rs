//! `supple mesh info|convert|tetrahedralize` end to end: JSON keys, one-line errors with exit
//! code 2 naming the right file (and bounded peak memory), tet formats only for tet output, USD
//! written by Supple read back by `mesh info` and by a scene, and scene errors naming the mesh.

use std::path::{Path, PathBuf};
use std::process::Command;

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/data/meshes")
        .join(rel)
}

#[test]
fn info_json_has_exactly_the_documented_keys() {
    let out = supple()
        .args(["mesh", "info", "--json"])
        .arg(data("tet/sphere_low/sphere_low.v41_bin.msh"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.trim().lines().count(),
        1,
        "exactly one JSON object: {text}"
    );
    let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    let obj = v.as_object().unwrap();
    let mut keys: Vec<&str> = obj.keys().map(|k| k.as_str()).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "bbox",
            "boundary_edges",
            "format",
            "inverted_tets",
            "misoriented_edges",
            "nonmanifold_edges",
            "surface_triangles",
            "tets",
            "vertices",
            "volume",
            "volume_source",
            "warnings"
        ]
    );
    assert_eq!(v["format"], "gmsh-msh-4.1-binary");
    assert_eq!(v["vertices"], 539);
    assert_eq!(v["tets"], 2105);
    assert_eq!(v["surface_triangles"], 708);
    assert_eq!(v["inverted_tets"], 0);
    assert!((v["volume"].as_f64().unwrap() - 4.122324175962967).abs() < 1e-12);
    assert_eq!(v["volume_source"], "tets");
    assert_eq!(v["boundary_edges"], 0);
    assert_eq!(v["bbox"].as_array().unwrap().len(), 2);
    assert_eq!(v["bbox"][1][2], 1.0);
    assert!(v["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn info_on_surface_and_inverted_input() {
    let out = supple()
        .args(["mesh", "info", "--json"])
        .arg(data("surface/original/pybullet/pybullet_data/bunny.obj"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tets"], 0);
    assert_eq!(v["surface_triangles"], 902);
    assert_eq!(v["vertices"], 453);
    let out = supple()
        .args(["mesh", "info", "--json"])
        .arg(data("bad/geometry/inverted_every_3rd.ele"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["inverted_tets"], 34);
    assert!(!v["warnings"].as_array().unwrap().is_empty());
    // Human-readable form.
    let out = supple()
        .args(["mesh", "info"])
        .arg(data("tet/sphere_low/sphere_low.vtu"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("tets:") && text.contains("2105"), "{text}");
}

#[test]
fn errors_exit_2_with_one_line() {
    for rel in [
        "bad/truncated/half.node",
        "bad/bomb/vtu_zlib_bomb_256MiB.vtu",
        "bad/index/v22_node_tag_missing.msh",
        "bad/wrong_format/vtk_named_as.msh",
        "bad/empty/empty.stl",
        "does/not/exist.msh",
    ] {
        for json in [false, true] {
            let mut cmd = supple();
            cmd.args(["mesh", "info"]).arg(data(rel));
            if json {
                cmd.arg("--json");
            }
            let out = cmd.output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{rel}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.lines().count(), 1, "{rel}: {err}");
            assert!(err.starts_with("error: "), "{rel}: {err}");
            let stem = Path::new(rel).file_stem().unwrap().to_str().unwrap();
            assert!(
                err.contains(stem),
                "{rel}: error does not name the file: {err}"
            );
            assert!(
                out.stdout.is_empty(),
                "{rel}: stdout must stay empty on error"
            );
        }
    }
}

#[test]
fn convert_round_trips() {
    let dir = std::env::temp_dir().join(format!("supple-mesh-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for ext in ["vtu", "msh"] {
        let out_path = dir.join(format!("sphere.{ext}"));
        let st = supple()
            .args(["mesh", "convert"])
            .arg(data("tet/sphere_low/sphere_low.node"))
            .arg(&out_path)
            .output()
            .unwrap();
        assert_eq!(
            st.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&st.stderr)
        );
        let out = supple()
            .args(["mesh", "info", "--json"])
            .arg(&out_path)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["tets"], 2105, "{ext}");
        assert_eq!(v["surface_triangles"], 708, "{ext}");
    }
    let out_path = dir.join("bunny.ply");
    let st = supple()
        .args(["mesh", "convert"])
        .arg(data("surface/original/pybullet/pybullet_data/bunny.obj"))
        .arg(&out_path)
        .output()
        .unwrap();
    assert_eq!(
        st.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    // Unknown output extension: exit 2, one line.
    let st = supple()
        .args(["mesh", "convert"])
        .arg(data("tet/sphere_low/sphere_low.node"))
        .arg(dir.join("x.xyz"))
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&st.stderr).lines().count(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `supple ARGS`, returning the exit code, stdout, stderr and the child's peak resident
/// memory in bytes (Linux: from `wait4`'s rusage of that child alone; elsewhere `None`).
// The child is reaped by `rusage::wait` (wait4), which clippy does not see.
#[allow(clippy::zombie_processes)]
fn run_measured(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String, Option<u64>) {
    use std::io::Read;
    let mut child = supple()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (mut out, mut err) = (String::new(), String::new());
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    #[cfg(target_os = "linux")]
    {
        let (code, rss) = rusage::wait(child.id());
        (code, out, err, Some(rss))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let st = child.wait().unwrap();
        (st.code(), out, err, None)
    }
}

#[cfg(target_os = "linux")]
mod rusage {
    //! `wait4(2)` with the child's own resource usage (std's `Child::wait` does not return it,
    //! and `getrusage(RUSAGE_CHILDREN)` mixes in every other child of the test process).
    #[repr(C)]
    struct Timeval {
        sec: i64,
        usec: i64,
    }
    #[repr(C)]
    struct Rusage {
        utime: Timeval,
        stime: Timeval,
        maxrss_kib: i64,
        rest: [i64; 13],
    }
    extern "C" {
        fn wait4(pid: i32, status: *mut i32, options: i32, usage: *mut Rusage) -> i32;
    }

    /// Reaps child `pid`: its exit code (None when killed by a signal) and peak RSS in bytes.
    pub fn wait(pid: u32) -> (Option<i32>, u64) {
        let mut status = 0i32;
        let mut ru = Rusage {
            utime: Timeval { sec: 0, usec: 0 },
            stime: Timeval { sec: 0, usec: 0 },
            maxrss_kib: 0,
            rest: [0; 13],
        };
        // SAFETY: plain FFI call with valid out-pointers to locals of the C layout.
        let r = unsafe { wait4(pid as i32, &mut status, 0, &mut ru) };
        assert_eq!(r, pid as i32, "wait4 failed");
        let _ = (
            ru.utime.sec,
            ru.utime.usec,
            ru.stime.sec,
            ru.stime.usec,
            ru.rest,
        );
        let code = if status & 0x7f == 0 {
            Some((status >> 8) & 0xff)
        } else {
            None
        };
        (code, ru.maxrss_kib as u64 * 1024)
    }
}

/// Peak memory allowed to `supple mesh info` on any malformed file.
const PEAK_RSS_LIMIT: u64 = 200 << 20;

/// `mesh info` on `path` must exit 2 with one line naming `named` (the file given) and, when
/// set, `sibling`; never a panic, within the memory bound.
fn assert_refused(path: &Path, sibling: Option<&Path>, what: &str) {
    for json in [false, true] {
        let mut args = vec![
            std::ffi::OsStr::new("mesh"),
            "info".as_ref(),
            path.as_os_str(),
        ];
        if json {
            args.push("--json".as_ref());
        }
        let (code, out, err, rss) = run_measured(&args);
        let ctx = format!("{} ({what})", path.display());
        assert_eq!(code, Some(2), "{ctx}: {err}");
        assert!(out.is_empty(), "{ctx}: stdout must stay empty on error");
        assert_eq!(err.lines().count(), 1, "{ctx}: {err}");
        assert!(!err.contains("panicked"), "{ctx}: {err}");
        assert!(
            err.starts_with(&format!("error: {}", path.display())),
            "{ctx}: the error does not start with the file given: {err}"
        );
        if let Some(s) = sibling {
            assert!(err.contains(&s.display().to_string()), "{ctx}: {err}");
        }
        if let Some(rss) = rss {
            assert!(
                rss > 0 && rss < PEAK_RSS_LIMIT,
                "{ctx}: peak RSS {rss} bytes"
            );
        }
    }
}

/// A fresh temporary folder.
fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-mesh-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_malformed_file_exits_2_naming_the_right_file() {
    let text = std::fs::read_to_string(data("manifest.json")).unwrap();
    let m: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut refused = 0;
    for e in m["bad"].as_array().unwrap() {
        let rel = e["path"].as_str().unwrap();
        let path = data(rel);
        let ext = path.extension().unwrap().to_str().unwrap();
        let node = path.with_extension("node");
        let empty = std::fs::metadata(&path).unwrap().len() == 0;
        match e["expect"].as_str().unwrap() {
            // An .ele kept without its .node: the missing sibling is named.
            _ if (ext == "ele" || ext == "face") && !node.exists() && !empty => {
                assert_refused(&path, Some(&node), "missing .node");
                refused += 1;
            }
            "reject" => {
                assert_refused(&path, None, e["defect"].as_str().unwrap());
                refused += 1;
            }
            "accept" | "detect" => {
                let (code, _, err, rss) =
                    run_measured(&["mesh".as_ref(), "info".as_ref(), path.as_os_str()]);
                assert_eq!(code, Some(0), "{rel}: {err}");
                assert!(rss.is_none_or(|r| r < PEAK_RSS_LIMIT), "{rel}");
            }
            _ => {
                let (code, _, err, rss) =
                    run_measured(&["mesh".as_ref(), "info".as_ref(), path.as_os_str()]);
                assert!(code == Some(0) || code == Some(2), "{rel}: {code:?} {err}");
                if code == Some(2) {
                    assert!(
                        err.starts_with(&format!("error: {}", path.display())),
                        "{rel}: {err}"
                    );
                }
                assert!(rss.is_none_or(|r| r < PEAK_RSS_LIMIT), "{rel}");
            }
        }
    }
    assert!(refused >= 55, "{refused}");
    // The sets of issue 26: a missing sibling (with another .node alone in the folder), an
    // empty sibling, a broken sibling, and 1-based VTK ids.
    let d = tmp_dir("sets");
    let ele = d.join("cube.ele");
    std::fs::copy(data("bad/base/tiny.ele"), &ele).unwrap();
    std::fs::copy(data("bad/base/tiny.node"), d.join("other.node")).unwrap();
    assert_refused(&ele, Some(&d.join("cube.node")), "missing sibling");
    std::fs::write(d.join("cube.node"), b"").unwrap();
    assert_refused(&ele, Some(&d.join("cube.node")), "empty sibling");
    let (_, _, err, _) = run_measured(&["mesh".as_ref(), "info".as_ref(), ele.as_os_str()]);
    assert!(
        err.contains("empty file") && !err.contains("truncated"),
        "{err}"
    );
    std::fs::copy(data("bad/truncated/half.node"), d.join("cube.node")).unwrap();
    assert_refused(&ele, Some(&d.join("cube.node")), "truncated sibling");
    assert_refused(
        &data("derived/tiny_tetgen_one_based.vtk"),
        None,
        "1-based VTK ids",
    );
    let (_, _, err, _) = run_measured(&[
        "mesh".as_ref(),
        "info".as_ref(),
        data("derived/tiny_tetgen_one_based.vtk").as_os_str(),
    ]);
    assert!(err.contains("1-based"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn tetrahedralize_writes_only_formats_that_hold_tets() {
    let d = tmp_dir("tetra");
    // Refused before any work: even a missing input is not looked at.
    for ext in ["obj", "ply", "stl", "vtk", "mesh", "usd"] {
        let out_path = d.join(format!("out.{ext}"));
        for input in [data("surface/torus.ply"), d.join("missing.ply")] {
            let out = supple()
                .args(["mesh", "tetrahedralize"])
                .arg(&input)
                .arg(&out_path)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{ext}: {err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains(&out_path.display().to_string())
                    && err.contains(".vtu, .msh, .usda")
                    && !err.contains("missing.ply"),
                "{err}"
            );
            assert!(out.stdout.is_empty());
            assert!(!out_path.exists(), "{ext}: nothing may be written");
        }
    }
    // Into USD: `mesh info` reads the tets back.
    let usda = d.join("torus.usda");
    let out = supple()
        .args(["mesh", "tetrahedralize"])
        .arg(data("surface/torus.ply"))
        .arg(&usda)
        .args(["--resolution", "10"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    let tets: usize = said
        .lines()
        .find_map(|l| l.strip_prefix("tets: "))
        .and_then(|t| t.trim().parse().ok())
        .expect("tets line");
    let out = supple()
        .args(["mesh", "info", "--json"])
        .arg(&usda)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["tets"], tets);
    assert_eq!(v["format"], "usda");
    assert_eq!(v["inverted_tets"], 0);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn surface_volume_and_warnings_in_text_and_json() {
    // Closed: the enclosed volume (the bunny's NOTICE records 0.8758003815940704 m^3).
    let out = supple()
        .args(["mesh", "info", "--json"])
        .arg(data("surface/bunny.ply"))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["volume_source"], "enclosed_surface");
    assert!(
        (v["volume"].as_f64().unwrap() - 0.8758003815940704).abs() < 1e-6,
        "{v}"
    );
    // Open: no volume (null) and a warning, in both forms.
    let cloth = data("surface/original/pybullet/pybullet_data/cloth_z_up.obj");
    let out = supple()
        .args(["mesh", "info", "--json"])
        .arg(&cloth)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["volume"].is_null(), "{v}");
    assert_eq!(v["volume_source"], "none");
    assert!(v["boundary_edges"].as_u64().unwrap() > 0);
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("open surface")),
        "{v}"
    );
    let out = supple()
        .args(["mesh", "info"])
        .arg(&cloth)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("volume:            none"), "{text}");
    assert!(text.contains("- open surface:"), "{text}");
    let out = supple()
        .args(["mesh", "info"])
        .arg(data("surface/bunny.ply"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("(enclosed by the closed surface)"), "{text}");
    assert!(
        text.contains("0 boundary, 0 non-manifold, 0 misoriented (closed)"),
        "{text}"
    );
}

#[test]
fn usda_written_by_supple_reads_back_in_info_and_in_a_scene() {
    let d = tmp_dir("usd");
    let usda = d.join("cube.usda");
    let out = supple()
        .args(["mesh", "convert"])
        .arg(data("bad/base/tiny.node"))
        .arg(&usda)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let info = |extra: &[&str]| -> serde_json::Value {
        let out = supple()
            .args(["mesh", "info", "--json"])
            .arg(&usda)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = info(&[]);
    assert_eq!(
        (v["vertices"].as_u64(), v["tets"].as_u64()),
        (Some(45), Some(100))
    );
    assert!((v["volume"].as_f64().unwrap() - 1.0).abs() < 1e-6);
    // The boundary Mesh prim alone: a closed surface enclosing the same volume.
    let v = info(&["--prim", "/World/body"]);
    assert_eq!(v["tets"], 0);
    assert_eq!(v["surface_triangles"], 84);
    assert_eq!(v["volume_source"], "enclosed_surface");
    assert!((v["volume"].as_f64().unwrap() - 1.0).abs() < 1e-6);
    // Converting a tet mesh to OBJ says that only the boundary is written.
    let out = supple()
        .args(["mesh", "convert"])
        .arg(&usda)
        .arg(d.join("cube.obj"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("boundary surface only") && err.contains("100 tets"),
        "{err}"
    );
    // A scene body from the .usda runs.
    let scene = d.join("scene.toml");
    let body = |file: &str| {
        format!(
            "[simulation]\nframes = 1\n\n[[body]]\nname = \"cube\"\nmesh = {{ file = \"{file}\" }}\nscale = 0.1\nmaterial = {{ model = \"stable-neo-hookean\", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }}\n"
        )
    };
    std::fs::write(&scene, body("cube.usda")).unwrap();
    let out = supple()
        .arg("run")
        .arg(&scene)
        .args(["--frames", "1", "--out"])
        .arg(d.join("out"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A body whose mesh fails to import (its .node is missing; another .node alone in the
    // folder is not used): exit 2, and the error names that mesh file and the missing sibling.
    std::fs::copy(data("bad/base/tiny.ele"), d.join("broken.ele")).unwrap();
    std::fs::copy(data("bad/base/tiny.node"), d.join("other.node")).unwrap();
    std::fs::write(&scene, body("broken.ele")).unwrap();
    let out = supple()
        .arg("run")
        .arg(&scene)
        .args(["--frames", "1", "--out"])
        .arg(d.join("out2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("body[0].mesh.file"), "{err}");
    assert!(
        err.contains(&d.join("broken.ele").display().to_string()),
        "{err}"
    );
    assert!(
        err.contains(&d.join("broken.node").display().to_string()),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
