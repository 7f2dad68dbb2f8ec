//! Import tests against the third-party sample meshes in `tests/data/meshes` (see NOTICE.md):
//! counts, volumes and bounding boxes match the recorded manifest; every malformed file gives
//! its expected outcome; errors are one line naming the file; export/import round trips.

use serde_json::Value;
use std::path::{Path, PathBuf};
use supple_mesh::import::{load, load_bytes, Format};
use supple_mesh::info::VolumeSource;
use supple_mesh::{MeshError, MeshInfo, Position};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/meshes")
}

fn manifest() -> Value {
    let text = std::fs::read_to_string(data_dir().join("manifest.json"))
        .expect("tests/data/meshes/manifest.json");
    serde_json::from_str(&text).expect("manifest parses")
}

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

fn u(v: &Value) -> usize {
    v.as_u64().expect("count") as usize
}

#[test]
fn tet_meshes_match_manifest() {
    let m = manifest();
    let entries = m["tet"].as_array().expect("tet list");
    assert!(entries.len() >= 18);
    let mut formats = std::collections::BTreeSet::new();
    for e in entries {
        let path = data_dir().join(e["path"].as_str().unwrap());
        let loaded = load(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let info = MeshInfo::from_loaded(&loaded);
        formats.insert(info.format.clone());
        let ctx = format!("{} ({})", path.display(), info.format);
        assert_eq!(info.vertices, u(&e["vertices"]), "{ctx}: vertices");
        assert_eq!(info.tets, u(&e["tets"]), "{ctx}: tets");
        assert_eq!(
            info.surface_triangles,
            u(&e["surface_triangles"]),
            "{ctx}: surface triangles"
        );
        assert_eq!(info.inverted_tets, 0, "{ctx}: inverted");
        let volume = info.volume.expect("a tet mesh has a volume");
        let (vol, tol) = (f(&e["volume"]), f(&e["volume_rel_tol"]));
        let rel = (volume - vol).abs() / vol;
        assert!(
            rel <= tol * 1.01 + 1e-15,
            "{ctx}: volume {volume} vs {vol} (rel {rel:e} > {tol:e})"
        );
        assert_eq!(info.volume_source, VolumeSource::Tets, "{ctx}");
        assert_eq!(
            (
                info.boundary_edges,
                info.nonmanifold_edges,
                info.misoriented_edges
            ),
            (0, 0, 0),
            "{ctx}: the boundary of a tet mesh is closed"
        );
        let dc = f(&e["max_abs_coord_diff"]) + 1e-12;
        for k in 0..3 {
            assert!(
                (info.bbox[0][k] - f(&e["bbox"][0][k])).abs() <= dc,
                "{ctx}: bbox min"
            );
            assert!(
                (info.bbox[1][k] - f(&e["bbox"][1][k])).abs() <= dc,
                "{ctx}: bbox max"
            );
        }
        // Topology agrees with the manifest too.
        assert_eq!(loaded.tets.edges().len(), u(&e["edges"]), "{ctx}: edges");
        let (surf, map) = loaded.tets.boundary_surface_compact();
        assert_eq!(
            map.len(),
            u(&e["surface_vertices"]),
            "{ctx}: surface vertices"
        );
        let chi =
            surf.positions.len() as i64 - surf.edges().len() as i64 + surf.triangles.len() as i64;
        assert_eq!(
            chi,
            e["surface_euler_characteristic"].as_i64().unwrap(),
            "{ctx}: Euler characteristic"
        );
        // The boundary is oriented outward: its enclosed volume is the mesh volume.
        let enclosed = surf.enclosed_volume();
        assert!(
            (enclosed - volume).abs() <= 1e-9 * volume,
            "{ctx}: enclosed {enclosed} vs {volume}"
        );
    }
    for want in [
        "gmsh-msh-2.2-ascii",
        "gmsh-msh-2.2-binary",
        "gmsh-msh-4.1-ascii",
        "gmsh-msh-4.1-binary",
        "medit-mesh",
        "tetgen",
        "vtk-4.2-ascii",
        "vtk-4.2-binary",
        "vtk-5.1-ascii",
        "vtk-5.1-binary",
        "vtu-ascii",
        "vtu-appended-raw",
        "vtu-appended-base64-zlib",
        "vtu-base64-zlib",
    ] {
        assert!(
            formats.contains(want),
            "no sample read as {want}: {formats:?}"
        );
    }
}

#[test]
fn surfaces_match_manifest() {
    let m = manifest();
    for e in m["surface"].as_array().expect("surface list") {
        let path = data_dir().join(e["path"].as_str().unwrap());
        let loaded = load(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let info = MeshInfo::from_loaded(&loaded);
        let ctx = format!("{} ({})", path.display(), info.format);
        assert_eq!(info.tets, 0, "{ctx}");
        assert_eq!(info.vertices, u(&e["vertices"]), "{ctx}: vertices");
        assert_eq!(
            info.surface_triangles,
            u(&e["triangles"]),
            "{ctx}: triangles"
        );
        for k in 0..3 {
            for (side, b) in [(0, &e["bbox"][0][k]), (1, &e["bbox"][1][k])] {
                let want = f(b);
                assert!(
                    (info.bbox[side][k] - want).abs() <= 1e-6 * want.abs().max(1.0),
                    "{ctx}: bbox"
                );
            }
        }
    }
}

/// A temporary folder for TetGen sets assembled by a test.
fn set_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-mesh-sets-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Copies `rel` (a file of tests/data/meshes) to `dir/name`.
fn put(dir: &Path, name: &str, rel: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::copy(data_dir().join(rel), &p).unwrap();
    p
}

/// Checks a loaded file against the manifest's `expect` and `defect`.
fn check_expectation(rel: &str, e: &Value, result: Result<supple_mesh::Loaded, MeshError>) {
    let path = data_dir().join(rel);
    let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
    match e["expect"].as_str().unwrap() {
        "reject" => {
            let err = result
                .err()
                .unwrap_or_else(|| panic!("{rel}: expected an error"));
            let msg = err.to_string();
            assert!(
                msg.contains(&stem),
                "{rel}: error does not name the file: {msg}"
            );
            assert!(!msg.contains('\n'), "{rel}: error is not one line: {msg}");
        }
        "accept" => {
            let l = result.unwrap_or_else(|err| panic!("{rel}: expected to load: {err}"));
            assert_eq!(l.flipped_tets, 0, "{rel}");
        }
        "detect" => {
            let l = result.unwrap_or_else(|err| panic!("{rel}: expected to load: {err}"));
            assert!(!l.warnings.is_empty(), "{rel}: the defect is not reported");
            match e["defect"].as_str().unwrap() {
                "negative_volume_tets" => assert_eq!(l.flipped_tets, 34, "{rel}"),
                "zero_volume_tet" | "degenerate_tet" => {
                    assert_eq!(l.degenerate_tets, 1, "{rel}")
                }
                "duplicate_tets" => assert!(
                    l.warnings.iter().any(|w| w.contains("5 duplicate tets")),
                    "{rel}: {:?}",
                    l.warnings
                ),
                d => panic!("unknown defect {d}"),
            }
        }
        // Either outcome is fine; loading must just not panic (it did not, to get here).
        "accept_or_reject" | "n/a" => {}
        other => panic!("unknown expectation {other}"),
    }
}

#[test]
fn bad_files_give_expected_outcome() {
    let m = manifest();
    let mut counts = std::collections::BTreeMap::new();
    let mut missing_node = 0;
    for e in m["bad"].as_array().expect("bad list") {
        let rel = e["path"].as_str().unwrap();
        let path = data_dir().join(rel);
        *counts
            .entry(e["expect"].as_str().unwrap().to_string())
            .or_insert(0) += 1;
        let ext = path.extension().unwrap().to_str().unwrap();
        let node = path.with_extension("node");
        let blank = std::fs::read(&path)
            .unwrap()
            .iter()
            .all(|b| b.is_ascii_whitespace());
        if (ext == "ele" || ext == "face") && !node.exists() && !blank {
            // The corpus keeps some .ele files without their .node: that is an error naming
            // the missing sibling (no other .node of the folder is used) ...
            missing_node += 1;
            let err = load(&path).expect_err(rel);
            assert!(
                matches!(&err, MeshError::MissingSibling { sibling, .. } if *sibling == node.display().to_string()),
                "{rel}: {err}"
            );
            assert!(
                err.to_string().starts_with(&path.display().to_string()),
                "{err}"
            );
            // ... and with the pristine .node beside it the file meets its expectation.
            let d = set_dir(&format!(
                "bad-{}",
                path.file_stem().unwrap().to_str().unwrap()
            ));
            let ele = put(&d, &format!("x.{ext}"), rel);
            put(&d, "x.node", "bad/base/tiny.node");
            let result = load(&ele);
            if e["defect"] == "index_out_of_range" {
                let err = result.expect_err(rel);
                assert!(matches!(err, MeshError::IndexOutOfRange { .. }), "{err}");
                assert!(err.to_string().contains("point 46"), "{err}");
            } else {
                check_expectation(rel, e, result);
            }
            continue;
        }
        check_expectation(rel, e, load(&path));
    }
    assert!(counts["reject"] >= 50, "{counts:?}");
    assert_eq!(
        missing_node, 3,
        "ele_index_eq_nnodes, duplicate_tets, node_with_attrs_markers"
    );
}

#[test]
fn tetgen_sets_are_found_by_their_own_base_name() {
    let d = set_dir("siblings");
    let name = |p: &Path| p.display().to_string();
    // A lone .node of another name is never used for an .ele.
    let ele = put(&d, "foo.ele", "bad/base/tiny.ele");
    put(&d, "other.node", "bad/base/tiny.node");
    let err = load(&ele).expect_err("foo.node is missing");
    let msg = err.to_string();
    assert!(matches!(err, MeshError::MissingSibling { .. }), "{msg}");
    assert!(msg.starts_with(&name(&ele)), "{msg}");
    assert!(msg.contains(&name(&d.join("foo.node"))), "{msg}");
    assert!(!msg.contains("other.node"), "{msg}");
    // An empty .node is an empty .node, reported through the .ele the caller named.
    std::fs::write(d.join("foo.node"), b"").unwrap();
    let err = load(&ele).expect_err("empty .node");
    assert!(matches!(err, MeshError::Empty { .. }), "{err}");
    assert_eq!(err.location().file, name(&d.join("foo.node")));
    assert_eq!(err.location().named_file(), name(&ele));
    assert_eq!(
        err.to_string(),
        format!(
            "{}: sibling {}: empty file: 0 bytes; a TetGen .node (the points) file was expected",
            name(&ele),
            name(&d.join("foo.node"))
        )
    );
    // The .node named, its .ele empty (whitespace only).
    put(&d, "foo.node", "bad/base/tiny.node");
    std::fs::write(&ele, b"  \n").unwrap();
    let node = d.join("foo.node");
    let err = load(&node).expect_err("empty .ele");
    assert!(matches!(err, MeshError::Empty { .. }), "{err}");
    assert!(
        err.to_string().starts_with(&format!(
            "{}: sibling {}: empty file",
            name(&node),
            name(&ele)
        )),
        "{err}"
    );
    // An empty .ele named: its own error, before the .node is even looked for.
    let err = load(&ele).expect_err("empty .ele");
    assert!(
        err.to_string()
            .starts_with(&format!("{}: empty file", name(&ele))),
        "{err}"
    );
    // A broken .node beside a good .ele: both files named, the line in the .node.
    put(&d, "foo.ele", "bad/base/tiny.ele");
    put(&d, "foo.node", "bad/truncated/half.node");
    let err = load(&ele).expect_err("truncated .node");
    assert!(matches!(err, MeshError::Truncated { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with(&format!("{}: sibling {}:", name(&ele), name(&node))),
        "{err}"
    );
    assert!(matches!(err.location().pos, Position::Line(_)), "{err}");
    // A broken .ele beside the .node the caller named.
    put(&d, "foo.node", "bad/base/tiny.node");
    put(&d, "foo.ele", "bad/bomb/ele_1e12.ele");
    let err = load(&node).expect_err("bad .ele");
    assert!(
        err.to_string().starts_with(&format!(
            "{}: sibling {}:101: count mismatch",
            name(&node),
            name(&ele)
        )),
        "{err}"
    );
    // Both broken: the named file's own problem first.
    put(&d, "foo.ele", "bad/truncated/half.ele");
    put(&d, "foo.node", "bad/truncated/half.node");
    let err = load(&ele).expect_err("both broken");
    assert_eq!(err.location().file, name(&ele), "{err}");
    assert!(err.location().named.is_none());
    // Out-of-range point numbers: the .ele's file, line and the number.
    put(&d, "foo.node", "bad/base/tiny.node");
    put(&d, "foo.ele", "bad/index/ele_index_eq_nnodes.ele");
    let err = load(&ele).expect_err("index 46");
    assert!(matches!(err, MeshError::IndexOutOfRange { .. }), "{err}");
    assert_eq!(err.location().pos, Position::Line(2));
    assert!(
        err.to_string().contains("point 46") && err.to_string().contains("1..=45"),
        "{err}"
    );
    // The same set under upper-case extensions, and a .face named without an .ele.
    let d = set_dir("upper");
    let ele = put(&d, "CUBE.ELE", "bad/base/tiny.ele");
    put(&d, "CUBE.NODE", "bad/base/tiny.node");
    assert_eq!(load(&ele).expect("upper case").tets.tets.len(), 100);
    let d = set_dir("face");
    let face = put(&d, "cube.face", "bad/base/tiny.face");
    put(&d, "cube.node", "bad/base/tiny.node");
    let l = load(&face).expect("face + node");
    assert!(l.tets.tets.is_empty());
    assert_eq!(l.surface.triangles.len(), 84);
    std::fs::remove_file(d.join("cube.node")).unwrap();
    let err = load(&face).expect_err("no node");
    assert!(matches!(err, MeshError::MissingSibling { .. }), "{err}");
}

#[test]
fn one_based_vtk_ids_are_refused_with_the_reason() {
    // TetGen 1.5's VTK writer copies the .ele's 1-based numbers: the largest equals the point
    // count. The first cell (line 53) references point 45 of 45.
    let path = data_dir().join("derived/tiny_tetgen_one_based.vtk");
    let err = load(&path).expect_err("1-based ids");
    let msg = err.to_string();
    assert!(matches!(err, MeshError::IndexOutOfRange { .. }), "{msg}");
    assert_eq!(err.location().pos, Position::Line(53), "{msg}");
    for want in ["point 45", "look 1-based", "TetGen 1.5", "does not shift"] {
        assert!(msg.contains(want), "{msg} lacks {want}");
    }
    // A file that uses point 0 gets the plain message, at the line of the bad cell.
    let rel = "bad/index/v42_cell_index_eq_npoints.vtk";
    let text = std::fs::read_to_string(data_dir().join(rel)).unwrap();
    let cells_line = text.lines().position(|l| l.starts_with("CELLS")).unwrap() + 1;
    let err = load(data_dir().join(rel)).expect_err(rel);
    assert_eq!(err.location().pos, Position::Line(cells_line + 1), "{err}");
    assert!(!err.to_string().contains("1-based"), "{err}");
}

#[test]
fn out_of_range_indices_name_file_position_and_index_in_every_importer() {
    let d = set_dir("index");
    let ele = put(&d, "t.ele", "bad/index/ele_index_eq_nnodes.ele");
    put(&d, "t.node", "bad/base/tiny.node");
    let cases: Vec<(PathBuf, &str)> = vec![
        (ele, "46"),
        (
            data_dir().join("bad/index/medit_index_zero.mesh"),
            "vertex 0",
        ),
        (
            data_dir().join("bad/index/obj_face_index_too_big.obj"),
            "100000",
        ),
        (
            data_dir().join("bad/index/obj_face_index_zero.obj"),
            "index 0",
        ),
        (
            data_dir().join("bad/index/ply_face_index_too_big.ply"),
            "1000000",
        ),
        (data_dir().join("bad/index/v22_node_tag_0.msh"), "tag 0"),
        (
            data_dir().join("bad/index/v22_node_tag_missing.msh"),
            "tag 46",
        ),
        (
            data_dir().join("bad/index/v22_node_tag_huge.msh"),
            "9223372036854775807",
        ),
        (
            data_dir().join("bad/index/v41_bin_node_tag_missing.msh"),
            "tag 1045",
        ),
        (
            data_dir().join("bad/index/v42_cell_index_eq_npoints.vtk"),
            "point 45",
        ),
        (
            data_dir().join("bad/index/v42_bin_cell_index_int32max.vtk"),
            "point 2147483647",
        ),
    ];
    for (path, want) in &cases {
        let err = load(path).expect_err(want);
        let msg = err.to_string();
        assert!(matches!(err, MeshError::IndexOutOfRange { .. }), "{msg}");
        assert!(msg.starts_with(&path.display().to_string()), "{msg}");
        assert!(msg.contains(want), "{msg} lacks {want}");
        assert!(
            matches!(err.location().pos, Position::Line(_) | Position::Byte(_)),
            "{msg}: no line or byte"
        );
    }
    // Binary files: the byte offset is where the bad value is stored.
    let at = |rel: &str| -> (Vec<u8>, usize) {
        let err = load(data_dir().join(rel)).unwrap_err();
        let Position::Byte(b) = err.location().pos else {
            panic!("{err}: not a byte offset")
        };
        (std::fs::read(data_dir().join(rel)).unwrap(), b)
    };
    let (bytes, b) = at("bad/index/ply_face_index_too_big.ply");
    assert_eq!(
        i32::from_le_bytes(bytes[b..b + 4].try_into().unwrap()),
        1_000_000
    );
    let (bytes, b) = at("bad/index/v42_bin_cell_index_int32max.vtk");
    assert_eq!(
        i32::from_be_bytes(bytes[b..b + 4].try_into().unwrap()),
        i32::MAX
    );
    // VTU: an ASCII connectivity value out of range is located on its own line.
    let text = std::fs::read_to_string(data_dir().join("bad/base/tiny.ascii.vtu")).unwrap();
    let at = text.find("Name=\"connectivity\"").unwrap();
    let start = at + text[at..].find('>').unwrap() + 1;
    let first_line = text[..start].lines().count();
    let rest = &text[start..];
    let first = rest.split_whitespace().next().unwrap();
    let pos = start + rest.find(first).unwrap();
    let line = text[..pos].lines().count().max(first_line);
    let bad = format!("{}4500{}", &text[..pos], &text[pos + first.len()..]);
    let err = load_bytes("x.vtu", bad.as_bytes(), Format::Vtu).expect_err("vtu index");
    assert!(matches!(err, MeshError::IndexOutOfRange { .. }), "{err}");
    assert!(err.to_string().contains("point 4500"), "{err}");
    assert_eq!(err.location().pos, Position::Line(line), "{err}");
}

#[test]
fn empty_files_are_reported_as_empty() {
    for ext in ["ply", "ele", "obj", "msh", "vtk", "stl"] {
        let rel = format!("bad/empty/empty.{ext}");
        let err = load(data_dir().join(&rel)).expect_err(&rel);
        assert!(matches!(err, MeshError::Empty { .. }), "{rel}: {err}");
        assert_eq!(
            err.location().file,
            data_dir().join(&rel).display().to_string()
        );
    }
}

#[test]
fn surface_volume_and_edge_checks() {
    // Closed: the bunny encloses the volume its NOTICE records.
    let l = load(data_dir().join("surface/bunny.ply")).unwrap();
    let info = MeshInfo::from_loaded(&l);
    assert_eq!(info.volume_source, VolumeSource::EnclosedSurface);
    let v = info.volume.expect("closed surface");
    assert!((v - 0.8758003815940704).abs() < 1e-6, "{v}");
    assert_eq!(
        (
            info.boundary_edges,
            info.nonmanifold_edges,
            info.misoriented_edges
        ),
        (0, 0, 0)
    );
    // Open: a cloth has boundary edges and no volume, with a warning.
    let l =
        load(data_dir().join("surface/original/pybullet/pybullet_data/cloth_z_up.obj")).unwrap();
    let info = MeshInfo::from_loaded(&l);
    assert_eq!(info.volume, None);
    assert_eq!(info.volume_source, VolumeSource::None);
    assert!(info.boundary_edges > 0);
    assert!(
        info.warnings.iter().any(|w| w.starts_with("open surface")),
        "{:?}",
        info.warnings
    );
    // One triangle of a closed surface flipped: its 3 edges disagree, no volume.
    let mut l = load(data_dir().join("surface/bunny.ply")).unwrap();
    l.surface.triangles[0].swap(1, 2);
    let info = MeshInfo::from_loaded(&l);
    assert_eq!(info.misoriented_edges, 3);
    assert_eq!(info.volume, None);
    assert!(
        info.warnings
            .iter()
            .any(|w| w.starts_with("inconsistent orientation")),
        "{:?}",
        info.warnings
    );
    // Every triangle flipped: closed but inward; the magnitude with a warning.
    let mut l = load(data_dir().join("surface/bunny.ply")).unwrap();
    for t in &mut l.surface.triangles {
        t.swap(1, 2);
    }
    let info = MeshInfo::from_loaded(&l);
    assert_eq!(info.misoriented_edges, 0);
    assert!((info.volume.unwrap() - 0.8758003815940704).abs() < 1e-6);
    assert!(
        info.warnings.iter().any(|w| w.contains("inward")),
        "{:?}",
        info.warnings
    );
    // A fin: three triangles on one edge.
    let fin = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 -1 0\nv 0 0 1\nf 1 2 3\nf 2 1 4\nf 1 2 5\n";
    let l = load_bytes("fin.obj", fin, Format::Obj).unwrap();
    let info = MeshInfo::from_loaded(&l);
    assert_eq!(info.nonmanifold_edges, 1);
    assert_eq!(info.volume, None);
    assert!(
        info.warnings.iter().any(|w| w.contains("non-manifold")),
        "{:?}",
        info.warnings
    );
}

#[test]
fn inverted_input_is_flipped_and_counted() {
    let l = load(data_dir().join("bad/geometry/inverted_every_3rd.ele")).unwrap();
    assert_eq!(l.flipped_tets, 34);
    assert_eq!(MeshInfo::from_loaded(&l).inverted_tets, 34);
    assert_eq!(l.tets.count_inverted(), 0);
    assert!((l.tets.total_volume_abs() - 1.0).abs() < 1e-12);
}

#[test]
fn errors_render_as_file_line_message() {
    let cases = [
        ("bad/nan/node_nan.node", ":4: non-finite"),
        (
            "bad/index/v22_node_tag_missing.msh",
            ":143: index out of range",
        ),
        ("bad/counts/v22_nodes_count_too_big.msh", ": count mismatch"),
        ("bad/truncated/v41_bin_mid_elements.msh", ":byte "),
        (
            "bad/wrong_format/vtk_named_as.msh",
            ":1: unsupported format",
        ),
        ("bad/bomb/vtu_zlib_bomb_256MiB.vtu", "count mismatch"),
    ];
    for (rel, want) in cases {
        let path = data_dir().join(rel);
        let err = load(&path).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with(&path.display().to_string()), "{msg}");
        assert!(msg.contains(want), "{rel}: {msg} lacks {want}");
        assert_eq!(err.location().file, path.display().to_string());
    }
    assert!(matches!(
        load(data_dir().join("bad/nan/v41_bin_nan.msh")),
        Err(MeshError::NonFinite { .. })
    ));
    assert!(matches!(
        load(data_dir().join("bad/index/obj_face_index_zero.obj")),
        Err(MeshError::IndexOutOfRange { .. })
    ));
    assert!(matches!(
        load(data_dir().join("bad/truncated/binary_cut.stl")),
        Err(MeshError::Truncated { .. })
    ));
    assert!(matches!(
        load(data_dir().join("bad/wrong_format/datasize4.msh")),
        Err(MeshError::Unsupported { .. })
    ));
}

#[test]
fn allocation_bombs_fail_fast() {
    // Headers claiming 10^12 records must fail without trying to allocate for them.
    for rel in [
        "bad/bomb/ele_1e12.ele",
        "bad/bomb/node_4e9.node",
        "bad/bomb/ply_vertex_uint32max.ply",
        "bad/bomb/v22_bin_block_int32max.msh",
        "bad/bomb/v41_bin_numnodes_2p63.msh",
        "bad/bomb/v41_block_1e15.msh",
        "bad/bomb/v51_bin_cells_9e18.vtk",
        "bad/bomb/vtu_zlib_bomb_256MiB.vtu",
    ] {
        let t = std::time::Instant::now();
        assert!(load(data_dir().join(rel)).is_err(), "{rel}");
        assert!(
            t.elapsed().as_secs_f64() < 2.0,
            "{rel} took {:?}",
            t.elapsed()
        );
    }
    // Synthetic: a legacy VTK header claiming 10^12 points.
    let text = b"# vtk DataFile Version 4.2\nx\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 1000000000000 double\n0 0 0\n";
    assert!(load_bytes("synthetic.vtk", text, Format::Vtk).is_err());
    let text = b"# vtk DataFile Version 4.2\nx\nBINARY\nDATASET UNSTRUCTURED_GRID\nPOINTS 1000000000000 double\n\0\0\0\0";
    assert!(matches!(
        load_bytes("synthetic.vtk", text, Format::Vtk),
        Err(MeshError::Truncated { .. })
    ));
}

#[test]
fn content_must_match_extension() {
    let vtk = std::fs::read(data_dir().join("bad/base/tiny.v42_ascii.vtk")).unwrap();
    let err = load_bytes("x.msh", &vtk, Format::Msh).unwrap_err();
    assert!(matches!(err, MeshError::Unsupported { .. }), "{err}");
    assert!(load_bytes("x.vtk", &vtk, Format::Vtk).is_ok());
    assert!(supple_mesh::import::sniff(&vtk) == Some(Format::Vtk));
}

#[test]
fn warnings_for_unreferenced_vertices_and_nonmanifold_boundary() {
    let l = load(data_dir().join("bad/tricky_valid/mixed_hex_pyramid_tet.msh")).unwrap();
    assert_eq!(l.tets.tets.len(), 777);
    assert_eq!(l.ignored_elements, 592);
    assert!(
        l.warnings.iter().any(|w| w.contains("unreferenced")),
        "{:?}",
        l.warnings
    );
    let l = load(data_dir().join("bad/geometry/repeated_vertex_tet.vtu")).unwrap();
    assert!(
        l.warnings.iter().any(|w| w.contains("non-manifold")),
        "{:?}",
        l.warnings
    );
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("supple-mesh-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn round_trip_through_every_writer() {
    use supple_mesh::export::*;
    let src = load(data_dir().join("tet/sphere_low/sphere_low.v41_bin.msh")).unwrap();
    let mesh = &src.tets;
    let vol = mesh.total_volume_abs();
    let check = |path: &Path| {
        let back = load(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(
            back.tets.positions.len(),
            mesh.positions.len(),
            "{}",
            path.display()
        );
        assert_eq!(
            back.tets.tets,
            mesh.tets,
            "{}: tets (vertex order must be stable)",
            path.display()
        );
        let rel = (back.tets.total_volume_abs() - vol).abs() / vol;
        assert!(rel < 1e-12, "{}: volume rel {rel}", path.display());
        assert_eq!(back.flipped_tets, 0);
    };
    for (name, enc) in [
        ("rt_ascii.msh", MshEncoding::Ascii),
        ("rt_bin.msh", MshEncoding::Binary),
    ] {
        let p = tmp(name);
        write_msh(&p, mesh, enc).unwrap();
        check(&p);
    }
    for (name, enc) in [
        ("rt_ascii.vtu", VtuEncoding::Ascii),
        ("rt_raw.vtu", VtuEncoding::Raw),
    ] {
        let p = tmp(name);
        write_vtu(&p, mesh, enc).unwrap();
        check(&p);
    }
    // Surfaces: the boundary as OBJ and binary PLY.
    let (surf, _) = mesh.boundary_surface_compact();
    for name in ["rt.obj", "rt.ply"] {
        let p = tmp(name);
        write_surface(&p, &surf).unwrap();
        let back = load(&p).unwrap();
        assert_eq!(back.surface.triangles, surf.triangles, "{name}");
        assert_eq!(back.surface.positions.len(), surf.positions.len(), "{name}");
        let ev = back.surface.enclosed_volume();
        assert!(
            (ev - surf.enclosed_volume()).abs() < 1e-5 * ev.abs(),
            "{name}: {ev}"
        );
    }
    let p = tmp("rt_f64.ply");
    write_ply(&p, &surf, PlyPrecision::F64).unwrap();
    assert_eq!(load(&p).unwrap().surface.positions, surf.positions);
    let _ = std::fs::remove_dir_all(tmp("x").parent().unwrap());
}
