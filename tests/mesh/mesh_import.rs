//! Import tests against the third-party sample meshes in `tests/data/meshes` (see NOTICE.md):
//! counts, volumes and bounding boxes match the recorded manifest; every malformed file gives
//! its expected outcome; errors are one line naming the file; export/import round trips.

use serde_json::Value;
use std::path::{Path, PathBuf};
use supple_mesh::import::{load, load_bytes, Format};
use supple_mesh::{MeshError, MeshInfo};

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
        let (vol, tol) = (f(&e["volume"]), f(&e["volume_rel_tol"]));
        let rel = (info.volume - vol).abs() / vol;
        assert!(
            rel <= tol * 1.01 + 1e-15,
            "{ctx}: volume {} vs {vol} (rel {rel:e} > {tol:e})",
            info.volume
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
            (enclosed - info.volume).abs() <= 1e-9 * info.volume,
            "{ctx}: enclosed {enclosed} vs {}",
            info.volume
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

#[test]
fn bad_files_give_expected_outcome() {
    let m = manifest();
    let mut counts = std::collections::BTreeMap::new();
    for e in m["bad"].as_array().expect("bad list") {
        let rel = e["path"].as_str().unwrap();
        let expect = e["expect"].as_str().unwrap();
        let path = data_dir().join(rel);
        let result = load(&path);
        *counts.entry(expect.to_string()).or_insert(0) += 1;
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        match expect {
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
    assert!(counts["reject"] >= 50, "{counts:?}");
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
