//! Whatever Supple writes, Supple reads back: every writer and encoding of `supple_mesh::export`
//! (MSH 4.1 ASCII/binary, VTU ASCII/raw, OBJ, PLY f32/f64, USD `.usda` surface / tet / curves /
//! time-sampled stages, the per-frame writer, and the by-extension helpers) is re-imported with
//! `supple_mesh::load`, and the vertices, elements and polylines come back as written (exactly,
//! or to the written precision: f32 for PLY f32 and USD).

use std::path::{Path, PathBuf};
use supple_mesh::export::*;
use supple_mesh::procedural::sphere;
use supple_mesh::{Loaded, TetMesh, TriMesh};

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-mesh-rt-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

fn load(p: &Path) -> Loaded {
    supple_mesh::load(p).unwrap_or_else(|e| panic!("re-import of {} failed: {e}", p.display()))
}

/// A writer of one file.
type Writer<'a> = Box<dyn Fn(&Path) -> std::io::Result<()> + 'a>;

/// A tet mesh whose coordinates are not exactly representable in decimal or f32.
fn tets() -> TetMesh {
    sphere([0.1, -0.2, 0.3], 0.123456789, 8).expect("sphere")
}

/// Rounds to f32 and back (what the f32 writers store).
fn f32ed(p: &[[f64; 3]]) -> Vec<[f64; 3]> {
    p.iter().map(|q| q.map(|c| c as f32 as f64)).collect()
}

#[test]
fn every_tet_writer_reads_back() {
    let d = tmp_dir("tets");
    let m = tets();
    let exact: Vec<(PathBuf, Writer)> = vec![
        (
            d.join("a.msh"),
            Box::new(|p| write_msh(p, &m, MshEncoding::Ascii)),
        ),
        (
            d.join("b.msh"),
            Box::new(|p| write_msh(p, &m, MshEncoding::Binary)),
        ),
        (
            d.join("a.vtu"),
            Box::new(|p| write_vtu(p, &m, VtuEncoding::Ascii)),
        ),
        (
            d.join("r.vtu"),
            Box::new(|p| write_vtu(p, &m, VtuEncoding::Raw)),
        ),
        (d.join("ext.msh"), Box::new(|p| write_tet_mesh(p, &m))),
        (d.join("ext.vtu"), Box::new(|p| write_tet_mesh(p, &m))),
    ];
    for (p, write) in &exact {
        write(p).expect("write");
        let l = load(p);
        assert_eq!(l.tets.tets, m.tets, "{}", p.display());
        assert_eq!(l.tets.positions, m.positions, "{}", p.display());
        assert_eq!(l.flipped_tets, 0, "{}", p.display());
    }
    // USD: the TetMesh prim holds every vertex and tet (f32 points); its Mesh prim (the
    // boundary) is reported as not read.
    let p = d.join("ext.usda");
    write_tet_mesh(&p, &m).expect("usda");
    let l = load(&p);
    assert_eq!(l.format, "usda");
    assert_eq!(l.tets.tets, m.tets);
    assert_eq!(l.tets.positions, f32ed(&m.positions));
    assert_eq!(l.flipped_tets, 0);
    assert_eq!(l.surface.triangles.len(), m.boundary_triangles().len());
    assert!(
        l.warnings.iter().any(|w| w.contains("/World/body")),
        "the boundary Mesh prim left out is named: {:?}",
        l.warnings
    );
    // Boundary surfaces by extension: closed, same enclosed volume.
    for ext in ["obj", "ply"] {
        let p = d.join(format!("boundary.{ext}"));
        write_tet_mesh(&p, &m).expect("boundary");
        let l = load(&p);
        assert!(l.tets.tets.is_empty());
        let v = l.surface.enclosed_volume();
        assert!(
            (v - m.total_volume_abs()).abs() < 1e-6 * v,
            "{ext}: {v} vs {}",
            m.total_volume_abs()
        );
        assert!(l.surface.edge_check().is_closed(), "{ext}");
    }
}

/// A surface with two rods (polylines over extra vertices).
fn surface_and_rods() -> (TriMesh, Vec<Vec<u32>>) {
    let (mut s, _) = tets().boundary_surface_compact();
    let n = s.positions.len() as u32;
    for k in 0..7 {
        s.positions
            .push([0.1 * k as f64 + 0.01, 2.0, 0.3 + 0.013 * k as f64]);
    }
    (s, vec![(n..n + 4).collect(), (n + 4..n + 7).collect()])
}

#[test]
fn every_surface_writer_reads_back() {
    let d = tmp_dir("surfaces");
    let (s, rods) = surface_and_rods();
    let plain = TriMesh {
        positions: s.positions[..s.positions.len() - 7].to_vec(),
        triangles: s.triangles.clone(),
    };
    // (path, writer, exact positions?)
    let cases: Vec<(&str, Writer, bool)> = vec![
        ("obj.obj", Box::new(|p| write_obj(p, &plain)), true),
        (
            "f64.ply",
            Box::new(|p| write_ply(p, &plain, PlyPrecision::F64)),
            true,
        ),
        (
            "f32.ply",
            Box::new(|p| write_ply(p, &plain, PlyPrecision::F32)),
            false,
        ),
        ("ext.obj", Box::new(|p| write_surface(p, &plain)), true),
        ("ext.ply", Box::new(|p| write_surface(p, &plain)), false),
        ("ext.usda", Box::new(|p| write_surface(p, &plain)), false),
        (
            "stage.usda",
            Box::new(|p| {
                write_usda_surface(
                    p,
                    &plain.triangles,
                    &[&plain.positions],
                    &UsdOptions::default(),
                )
            }),
            false,
        ),
    ];
    for (name, write, exact) in &cases {
        let p = d.join(name);
        write(&p).expect("write");
        let l = load(&p);
        assert_eq!(l.surface.triangles, plain.triangles, "{name}");
        let want = if *exact {
            plain.positions.clone()
        } else {
            f32ed(&plain.positions)
        };
        assert_eq!(l.surface.positions, want, "{name}");
        assert!(l.polylines.is_empty(), "{name}");
    }
    // With rods: OBJ `l` lines, PLY `edge` element, USD BasisCurves.
    for (ext, exact) in [("obj", true), ("ply", false), ("usda", false)] {
        let p = d.join(format!("rods.{ext}"));
        write_surface_with_curves(&p, &s, &rods).expect("write");
        let l = load(&p);
        assert_eq!(l.surface.triangles, s.triangles, "{ext}");
        assert_eq!(l.polylines.len(), rods.len(), "{ext}");
        // Positions of each rod vertex come back (USD stores the rods' points separately).
        for (got, want) in l.polylines.iter().zip(&rods) {
            assert_eq!(got.len(), want.len(), "{ext}");
            for (&g, &w) in got.iter().zip(want) {
                let (a, b) = (l.surface.positions[g as usize], s.positions[w as usize]);
                let b = if exact { b } else { b.map(|c| c as f32 as f64) };
                assert_eq!(a, b, "{ext}: rod vertex");
            }
        }
    }
}

#[test]
fn frame_writers_and_time_sampled_stages_read_back() {
    let d = tmp_dir("frames");
    let (s, rods) = surface_and_rods();
    let moved = |f: usize| -> Vec<[f64; 3]> {
        s.positions
            .iter()
            .map(|p| [p[0], p[1], p[2] - 0.125 * f as f64])
            .collect()
    };
    for fmt in [FrameFormat::Obj, FrameFormat::Ply, FrameFormat::PlyF64] {
        let mut w = FrameWriter::new(&d, &format!("{fmt:?}"), &s, fmt)
            .and_then(|w| w.with_curves(&rods))
            .expect("writer");
        for f in 0..2 {
            let l = load(&w.write_frame(&moved(f)).expect("frame"));
            assert_eq!(l.surface.triangles, s.triangles, "{fmt:?}");
            assert_eq!(l.polylines, rods, "{fmt:?}");
            let want = if fmt == FrameFormat::Ply {
                f32ed(&moved(f))
            } else {
                moved(f)
            };
            assert_eq!(l.surface.positions, want, "{fmt:?} frame {f}");
        }
    }
    // A 3-frame tet stage: the earliest sample is read, and the reader says so.
    let m = tets();
    let frames: Vec<Vec<[f64; 3]>> = (0..3)
        .map(|f| {
            m.positions
                .iter()
                .map(|p| [p[0] + 0.5 * f as f64, p[1], p[2]])
                .collect()
        })
        .collect();
    let p = d.join("anim.usda");
    let opts = UsdOptions {
        tet_mesh: true,
        start_time: 2.0,
        ..UsdOptions::default()
    };
    write_usda_tet(&p, &m, &frames, &opts).expect("stage");
    let l = load(&p);
    assert_eq!(l.tets.tets, m.tets);
    assert_eq!(l.tets.positions, f32ed(&frames[0]));
    assert!(
        l.warnings.iter().any(|w| w.contains("3 time samples")),
        "{:?}",
        l.warnings
    );
    // The streaming writer's surface-only stage with curves.
    let p = d.join("stream.usda");
    let mut u = UsdWriter::surface(&p, &s.triangles, s.positions.len(), &UsdOptions::default())
        .and_then(|u| u.with_curves(&rods, &[0.01, 0.02]))
        .expect("writer");
    u.write_frame(&moved(0)).expect("frame 0");
    u.write_frame(&moved(1)).expect("frame 1");
    u.finish().expect("finish");
    let l = load(&p);
    assert_eq!(l.surface.triangles.len(), s.triangles.len());
    assert_eq!(l.polylines.len(), 2);
    assert_eq!(l.surface.positions.len(), s.positions.len());
}
