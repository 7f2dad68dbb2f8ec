//! `supple mesh info|convert` end to end: JSON keys, one-line errors with exit code 2.

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
            "format",
            "inverted_tets",
            "surface_triangles",
            "tets",
            "vertices",
            "volume",
            "warnings"
        ]
    );
    assert_eq!(v["format"], "gmsh-msh-4.1-binary");
    assert_eq!(v["vertices"], 539);
    assert_eq!(v["tets"], 2105);
    assert_eq!(v["surface_triangles"], 708);
    assert_eq!(v["inverted_tets"], 0);
    assert!((v["volume"].as_f64().unwrap() - 4.122324175962967).abs() < 1e-12);
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
