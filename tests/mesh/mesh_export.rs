//! Export round trips: every writer's output is re-imported with `supple_mesh::load` and compared
//! (same counts, same vertex order, positions exact or to the written precision), plus the
//! per-frame writer, error paths, atomic writes, OBJ objects per body with colliders, and the
//! USD stages (one body, or one prim per body with the colliders), checked with Pixar's `pxr`
//! (`SUPPLE_PYTHON` or `python3`; a missing `pxr` fails under `CI` or `SUPPLE_REQUIRE_USD`).

use std::path::{Path, PathBuf};
use supple_mesh::export::*;
use supple_mesh::procedural::{box_tets, cloth_grid, sphere, CellSplit};
use supple_mesh::{TetMesh, TriMesh};

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-mesh-export-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

fn load(p: &Path) -> supple_mesh::Loaded {
    match supple_mesh::load(p) {
        Ok(l) => l,
        Err(e) => panic!("re-import of {} failed: {e}", p.display()),
    }
}

/// A tet mesh with non-trivial coordinates (not exactly representable in decimal or f32).
fn test_tets() -> TetMesh {
    sphere([0.1, -0.2, 0.3], 0.123456789, 10).expect("sphere")
}

fn test_surface() -> TriMesh {
    let mut c = cloth_grid([9, 6], [0.9, 0.6], [0.0; 3]);
    for (i, p) in c.positions.iter_mut().enumerate() {
        p[2] = (i as f64 * 0.37).sin() / 3.0;
    }
    c
}

fn assert_same_tets(a: &TetMesh, b: &TetMesh, tol: f64) {
    assert_eq!(a.positions.len(), b.positions.len());
    assert_eq!(a.tets, b.tets);
    for (p, q) in a.positions.iter().zip(&b.positions) {
        for k in 0..3 {
            assert!(
                (p[k] - q[k]).abs() <= tol * p[k].abs().max(1.0),
                "{p:?} vs {q:?}"
            );
        }
    }
}

fn assert_same_surface(a: &TriMesh, b: &TriMesh, tol: f64) {
    assert_eq!(a.positions.len(), b.positions.len());
    assert_eq!(a.triangles, b.triangles);
    for (p, q) in a.positions.iter().zip(&b.positions) {
        for k in 0..3 {
            assert!(
                (p[k] - q[k]).abs() <= tol * p[k].abs().max(1.0),
                "{p:?} vs {q:?}"
            );
        }
    }
}

#[test]
fn vtu_round_trip_ascii_and_raw() {
    let d = tmp_dir("vtu");
    let m = test_tets();
    for (enc, name) in [(VtuEncoding::Ascii, "a.vtu"), (VtuEncoding::Raw, "r.vtu")] {
        let p = d.join(name);
        write_vtu(&p, &m, enc).expect("write vtu");
        let l = load(&p);
        assert_same_tets(&m, &l.tets, 0.0);
        assert_eq!(l.flipped_tets, 0);
        assert!(
            (l.tets.total_volume_abs() - m.total_volume_abs()).abs()
                <= 1e-12 * m.total_volume_abs()
        );
    }
}

#[test]
fn msh41_round_trip_ascii_and_binary() {
    let d = tmp_dir("msh");
    let m = test_tets();
    for (enc, name) in [
        (MshEncoding::Ascii, "a.msh"),
        (MshEncoding::Binary, "b.msh"),
    ] {
        let p = d.join(name);
        write_msh(&p, &m, enc).expect("write msh");
        let l = load(&p);
        assert!(l.format.contains("4.1"), "format {}", l.format);
        assert_same_tets(&m, &l.tets, 0.0);
        assert_eq!(l.flipped_tets, 0);
    }
    // The 5-tet box (the benchmark mesh) survives too.
    let b = box_tets(
        [10, 10, 10],
        [0.05; 3],
        [-0.25, -0.25, 0.1],
        CellSplit::Five,
    );
    let p = d.join("box.msh");
    write_msh(&p, &b, MshEncoding::Binary).expect("write");
    assert_same_tets(&b, &load(&p).tets, 0.0);
}

#[test]
fn obj_and_ply_round_trip() {
    let d = tmp_dir("surf");
    let s = test_surface();
    let p = d.join("s.obj");
    write_obj(&p, &s).expect("obj");
    assert_same_surface(&s, &load(&p).surface, 0.0);
    let p = d.join("s64.ply");
    write_ply(&p, &s, PlyPrecision::F64).expect("ply64");
    assert_same_surface(&s, &load(&p).surface, 0.0);
    let p = d.join("s32.ply");
    write_ply(&p, &s, PlyPrecision::F32).expect("ply32");
    assert_same_surface(&s, &load(&p).surface, 1.2e-7);
    // Header is binary little-endian.
    let bytes = std::fs::read(&p).expect("read");
    assert!(bytes.starts_with(b"ply\nformat binary_little_endian 1.0\n"));
}

/// The test surface plus two rods (polylines of 5 and 3 vertices) appended to its vertices.
fn surface_with_rods() -> (TriMesh, Vec<Vec<u32>>) {
    let mut s = test_surface();
    let n = s.positions.len() as u32;
    for k in 0..8 {
        s.positions
            .push([0.1 * k as f64, 2.0, 0.3 + 0.01 * k as f64]);
    }
    (s, vec![(n..n + 5).collect(), (n + 5..n + 8).collect()])
}

#[test]
fn polylines_round_trip_in_obj_and_ply_frames() {
    let d = tmp_dir("curves");
    let (s, curves) = surface_with_rods();
    // OBJ: `l` lines after the faces, read back as polylines over the same vertices.
    let p = d.join("c.obj");
    write_surface_with_curves(&p, &s, &curves).expect("obj");
    let text = std::fs::read_to_string(&p).expect("read");
    let last_f = text.rfind("\nf ").expect("faces");
    let first_l = text.find("\nl ").expect("l lines");
    assert!(first_l > last_f, "l lines follow the faces");
    let l = load(&p);
    assert_same_surface(&s, &l.surface, 0.0);
    assert_eq!(l.polylines, curves);
    assert_eq!(l.ignored_elements, 0);
    assert!(
        !l.warnings.iter().any(|w| w.contains("unreferenced")),
        "{:?}",
        l.warnings
    );
    // PLY: an `edge` element with one entry per segment (4 + 2), after the faces.
    let p = d.join("c.ply");
    write_surface_with_curves(&p, &s, &curves).expect("ply");
    let bytes = std::fs::read(&p).expect("read");
    let end = bytes
        .windows(11)
        .position(|w| w == b"end_header\n")
        .expect("header");
    let header = std::str::from_utf8(&bytes[..end]).expect("ascii header");
    assert!(
        header.contains("element face")
            && header.contains("element edge 6\nproperty int vertex1\nproperty int vertex2\n"),
        "{header}"
    );
    let tail = &bytes[bytes.len() - 8..];
    let last = |k: usize| i32::from_le_bytes(tail[4 * k..4 * k + 4].try_into().expect("4 bytes"));
    assert_eq!(
        (last(0), last(1)),
        (curves[1][1] as i32, curves[1][2] as i32)
    );
    let l = load(&p);
    assert_same_surface(&s, &l.surface, 1.2e-7);
    assert_eq!(
        l.polylines, curves,
        "the PLY reader joins the edges into the polylines"
    );
    assert_eq!(l.ignored_elements, 0);
    // Without curves the files are exactly what write_surface writes.
    for ext in ["obj", "ply"] {
        let (a, b) = (d.join(format!("a.{ext}")), d.join(format!("b.{ext}")));
        write_surface(&a, &s).expect("plain");
        write_surface_with_curves(&b, &s, &[]).expect("no curves");
        assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    }
    // Per-frame writer: the polylines in every frame, positions moving.
    let mut w = FrameWriter::new(&d, "rods", &s, FrameFormat::Obj)
        .and_then(|w| w.with_curves(&curves))
        .expect("writer");
    let mut read = Vec::new();
    for f in 0..2 {
        let pos: Vec<[f64; 3]> = s
            .positions
            .iter()
            .map(|p| [p[0], p[1], p[2] - 0.25 * f as f64])
            .collect();
        let l = load(&w.write_frame(&pos).expect("frame"));
        assert_eq!(l.polylines, curves);
        read.push(l.surface.positions);
    }
    let rod = curves[0][2] as usize;
    assert_eq!(read[1][rod][2], read[0][rod][2] - 0.25);
    // Bad polylines are refused with the path.
    for bad in [vec![vec![0u32]], vec![vec![0, s.positions.len() as u32]]] {
        let e = write_surface_with_curves(d.join("bad.obj"), &s, &bad).expect_err("bad curve");
        assert!(
            e.to_string().contains("bad.obj") && e.to_string().contains("polyline 0"),
            "{e}"
        );
    }
    assert!(FrameWriter::new(&d, "x", &s, FrameFormat::Ply)
        .and_then(|w| w.with_curves(&[vec![5]]))
        .is_err());
}

#[test]
fn obj_polylines_are_read_and_checked() {
    use supple_mesh::import::{load_bytes, Format};
    let ok = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nl 1 4\nl -1 -2/1 2\n";
    let l = load_bytes("ok.obj", ok, Format::Obj).expect("valid");
    assert_eq!(l.polylines, vec![vec![0, 3], vec![3, 2, 1]]);
    assert_eq!(l.surface.triangles.len(), 1);
    for (bad, what) in [
        (&b"v 0 0 0\nv 1 0 0\nl 1\n"[..], "at least 2"),
        (&b"v 0 0 0\nv 1 0 0\nl 1 3\n"[..], "index 3"),
        (&b"v 0 0 0\nv 1 0 0\nl 0 1\n"[..], "index 0"),
        (&b"v 0 0 0\nv 1 0 0\nl 1 x\n"[..], "line index"),
    ] {
        let e = load_bytes("bad.obj", bad, Format::Obj).expect_err("invalid");
        assert!(e.to_string().contains(what), "{e}");
    }
}

#[test]
fn tet_mesh_and_surface_by_extension() {
    let d = tmp_dir("ext");
    let m = test_tets();
    for ext in ["vtu", "msh"] {
        let p = d.join(format!("m.{ext}"));
        write_tet_mesh(&p, &m).expect("write");
        assert_same_tets(&m, &load(&p).tets, 0.0);
    }
    // Boundary surface as OBJ: closed, same enclosed volume as the tets.
    let p = d.join("m.obj");
    write_tet_mesh(&p, &m).expect("obj");
    let s = load(&p).surface;
    let v = supple_mesh::tetrahedralize::enclosed_volume(&s);
    assert!((v - m.total_volume_abs()).abs() < 1e-9 * v);
    let e = write_tet_mesh(d.join("m.xyz"), &m).expect_err("unknown extension");
    assert!(e.to_string().contains("m.xyz"), "{e}");
}

#[test]
fn per_frame_surfaces_keep_vertex_order() {
    let d = tmp_dir("frames");
    let s = test_surface();
    for fmt in [FrameFormat::Obj, FrameFormat::Ply, FrameFormat::PlyF64] {
        let mut w = FrameWriter::new(&d, &format!("{fmt:?}"), &s, fmt).expect("writer");
        let mut frames = Vec::new();
        for f in 0..3 {
            let pos: Vec<[f64; 3]> = s
                .positions
                .iter()
                .map(|p| [p[0], p[1], p[2] - 0.01 * f as f64])
                .collect();
            let path = w.write_frame(&pos).expect("frame");
            frames.push((path, pos));
        }
        assert_eq!(w.frames(), 3);
        for (path, pos) in frames {
            let l = load(&path).surface;
            let tol = if fmt == FrameFormat::Ply { 1.2e-7 } else { 0.0 };
            assert_same_surface(
                &TriMesh {
                    positions: pos,
                    triangles: s.triangles.clone(),
                },
                &l,
                tol,
            );
        }
        let e = w.write_frame(&s.positions[1..]).expect_err("wrong count");
        assert!(e.to_string().contains(&format!("{fmt:?}_00003")), "{e}");
    }
}

#[test]
fn writer_errors_name_the_path() {
    let m = test_tets();
    let p = Path::new("/nonexistent-dir-supple/x.vtu");
    let e = write_vtu(p, &m, VtuEncoding::Raw).expect_err("no dir");
    assert!(
        e.to_string().starts_with("/nonexistent-dir-supple/x.vtu"),
        "{e}"
    );
    let bad = TetMesh {
        positions: vec![[0.0; 3]; 3],
        tets: vec![[0, 1, 2, 3]],
    };
    let d = tmp_dir("err");
    for e in [
        write_msh(d.join("b.msh"), &bad, MshEncoding::Binary).expect_err("index"),
        write_vtu(d.join("b.vtu"), &bad, VtuEncoding::Ascii).expect_err("index"),
        write_usda_tet(
            d.join("b.usda"),
            &bad,
            &[&bad.positions],
            &UsdOptions::default(),
        )
        .expect_err("index"),
    ] {
        assert!(e.to_string().contains("tet 0"), "{e}");
    }
    let s = TriMesh {
        positions: vec![[0.0; 3]; 2],
        triangles: vec![[0, 1, 2]],
    };
    assert!(write_obj(d.join("b.obj"), &s).is_err());
    assert!(write_ply(d.join("b.ply"), &s, PlyPrecision::F32).is_err());
    let w =
        UsdWriter::surface(d.join("none.usda"), &[], 0, &UsdOptions::default()).expect("writer");
    assert!(w.finish().is_err(), "a stage without frames is refused");
}

/// Parses the `points.timeSamples` of the prim named `prim` in a `.usda` written by
/// [`UsdWriter`]: (time code, number of points) per sample.
fn usda_point_samples(text: &str, prim: &str) -> Vec<(f64, usize)> {
    let start = text.find(&format!("\"{prim}\"")).expect("prim");
    let body = &text[start..];
    let ts = body
        .find("point3f[] points.timeSamples = {")
        .expect("points");
    let end = body[ts..].find("\n        }").expect("end") + ts;
    body[ts..end]
        .lines()
        .skip(1)
        .map(|l| {
            let (t, rest) = l.trim().split_once(':').expect("sample");
            (t.parse().expect("time"), rest.matches('(').count())
        })
        .collect()
}

fn deform(m: &TetMesh, f: usize) -> Vec<[f64; 3]> {
    m.positions
        .iter()
        .map(|p| [p[0] * (1.0 + 0.1 * f as f64), p[1], p[2] - 0.02 * f as f64])
        .collect()
}

/// Writes the stage the USD checks read: a tet mesh (boundary Mesh + TetMesh) over 4 frames.
fn write_test_stage(path: &Path) -> (TetMesh, usize) {
    let m = test_tets();
    let opts = UsdOptions {
        fps: 30.0,
        tet_mesh: true,
        name: "ball".into(),
        ..UsdOptions::default()
    };
    let mut w = UsdWriter::tet(path, &m, &opts).expect("usd writer");
    for f in 0..4 {
        w.write_frame(&deform(&m, f)).expect("frame");
    }
    w.finish().expect("finish");
    let (surf, _) = boundary_surface(&m);
    (m, surf.positions.len())
}

#[test]
fn usda_stage_text_is_complete() {
    let d = tmp_dir("usd");
    let p = d.join("stage.usda");
    let (m, nsurf) = write_test_stage(&p);
    let text = std::fs::read_to_string(&p).expect("read");
    assert!(text.starts_with("#usda 1.0\n"));
    for key in [
        "metersPerUnit = 1",
        "upAxis = \"Z\"",
        "startTimeCode = 0",
        "endTimeCode = 3",
        "timeCodesPerSecond = 30",
        "def Mesh \"ball\"",
        "def TetMesh \"ball_tets\"",
    ] {
        assert!(text.contains(key), "missing {key}");
    }
    let s = usda_point_samples(&text, "ball");
    assert_eq!(s, (0..4).map(|t| (t as f64, nsurf)).collect::<Vec<_>>());
    let t = usda_point_samples(&text, "ball_tets");
    assert_eq!(
        t,
        (0..4)
            .map(|t| (t as f64, m.positions.len()))
            .collect::<Vec<_>>()
    );
    // Temporary per-frame files are gone.
    let leftovers: Vec<_> = std::fs::read_dir(&d)
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("supple-tmp"))
        .collect();
    assert!(leftovers.is_empty());
    // A surface-only stage.
    let s = test_surface();
    let frames: Vec<Vec<[f64; 3]>> = (0..3)
        .map(|f| {
            s.positions
                .iter()
                .map(|p| [p[0], p[1], p[2] + f as f64])
                .collect()
        })
        .collect();
    let p2 = d.join("cloth.usda");
    write_usda_surface(&p2, &s.triangles, &frames, &UsdOptions::default()).expect("surface stage");
    let text = std::fs::read_to_string(&p2).expect("read");
    assert_eq!(
        usda_point_samples(&text, "body"),
        vec![
            (0.0, s.positions.len()),
            (1.0, s.positions.len()),
            (2.0, s.positions.len())
        ]
    );
    assert!(!text.contains("TetMesh"));
}

/// Writes a 3-frame surface stage with two rods (`body_curves`, widths 2 mm and 4 mm); returns
/// the mesh's and the curves' point counts.
fn write_curves_stage(path: &Path) -> (usize, Vec<usize>) {
    let (s, curves) = surface_with_rods();
    let mut w = UsdWriter::surface(
        path,
        &s.triangles,
        s.positions.len(),
        &UsdOptions::default(),
    )
    .and_then(|w| w.with_curves(&curves, &[0.002, 0.004]))
    .expect("writer");
    for f in 0..3 {
        let pos: Vec<[f64; 3]> = s
            .positions
            .iter()
            .map(|p| [p[0], p[1] + 0.5 * f as f64, p[2]])
            .collect();
        w.write_frame(&pos).expect("frame");
    }
    w.finish().expect("finish");
    (s.positions.len() - 8, curves.iter().map(Vec::len).collect())
}

#[test]
fn usda_stage_with_curves() {
    let d = tmp_dir("usd-curves");
    let p = d.join("rods.usda");
    let (nmesh, counts) = write_curves_stage(&p);
    let text = std::fs::read_to_string(&p).expect("read");
    for key in [
        "def BasisCurves \"body_curves\"",
        "int[] curveVertexCounts = [5, 3]",
        "uniform token type = \"linear\"",
        "float[] widths = [0.002, 0.004] (",
        "interpolation = \"uniform\"",
    ] {
        assert!(text.contains(key), "missing {key}");
    }
    // The Mesh leaves out the 8 rod vertices; the curves carry them, every frame.
    assert_eq!(
        usda_point_samples(&text, "body"),
        (0..3).map(|t| (t as f64, nmesh)).collect::<Vec<_>>()
    );
    assert_eq!(
        usda_point_samples(&text, "body_curves"),
        (0..3).map(|t| (t as f64, 8)).collect::<Vec<_>>()
    );
    assert_eq!(counts, vec![5, 3]);
    // The curve points move between samples (y += 0.5 per frame).
    let c = &text[text.find("def BasisCurves").expect("curves")..];
    let c = &c[c.find("points.timeSamples").expect("points")..];
    let sample = |t: &str| {
        let i = c.find(&format!("            {t}: [(")).expect("sample") + 17;
        c[i..c[i..].find(')').expect("point") + i].to_string()
    };
    assert_eq!(sample("0"), "0, 2, 0.3");
    assert_eq!(sample("2"), "0, 3, 0.3");
    // Curves after a frame, bad indices and mismatched widths are refused.
    let s = test_surface();
    let n = s.positions.len();
    let mk = || UsdWriter::surface(d.join("x.usda"), &s.triangles, n, &UsdOptions::default());
    assert!(mk()
        .expect("w")
        .with_curves(&[vec![0, n as u32]], &[])
        .is_err());
    assert!(mk()
        .expect("w")
        .with_curves(&[vec![0, 1]], &[1.0, 2.0])
        .is_err());
    let mut w = mk().expect("w");
    w.write_frame(&s.positions).expect("frame");
    assert!(w.with_curves(&[vec![0, 1]], &[]).is_err());
}

/// The Python interpreter with Pixar's USD (`pxr`): `SUPPLE_PYTHON` or `python3`. `None` (the
/// check is reported NOT RUN) on a machine without it, unless `CI` or `SUPPLE_REQUIRE_USD` is
/// set, as `scripts/dev.sh test` does: then a missing `pxr` fails.
fn usd_python() -> Option<String> {
    let python = std::env::var("SUPPLE_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_pxr = std::process::Command::new(&python)
        .args(["-c", "import pxr"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let required = std::env::var_os("CI").is_some_and(|v| !v.is_empty())
        || std::env::var_os("SUPPLE_REQUIRE_USD").is_some_and(|v| v != "0");
    if has_pxr {
        Some(python)
    } else if required {
        panic!("{python} has no `pxr` module: install usd-core (scripts/dev.sh test does)");
    } else {
        println!("USD check NOT RUN: {python} has no `pxr` module (pip install usd-core)");
        None
    }
}

#[test]
fn usda_stage_opens_in_pixar_usd() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../usd/check_usd.py");
    let Some(python) = usd_python() else {
        return;
    };
    let d = tmp_dir("pxr");
    let p = d.join("stage.usda");
    let (m, nsurf) = write_test_stage(&p);
    let out = std::process::Command::new(&python)
        .arg(&script)
        .arg(&p)
        .args([
            "--mesh",
            "/World/ball",
            "--points",
            &nsurf.to_string(),
            "--frames",
            "4",
        ])
        .args([
            "--tetmesh",
            "/World/ball_tets",
            "--tet-points",
            &m.positions.len().to_string(),
            "--tets",
            &m.tets.len().to_string(),
        ])
        .output()
        .expect("run python3");
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    println!("{so}{se}");
    assert!(out.status.success(), "check_usd.py failed:\n{so}\n{se}");
    assert!(so.contains("USD check OK"));
    // A surface with rods: Mesh plus BasisCurves.
    let p = d.join("rods.usda");
    let (nmesh, counts) = write_curves_stage(&p);
    let counts: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
    let out = std::process::Command::new(&python)
        .arg(&script)
        .arg(&p)
        .args(["--mesh", "/World/body", "--points", &nmesh.to_string()])
        .args(["--frames", "3", "--curves", "/World/body_curves"])
        .args(["--curve-counts", &counts.join(",")])
        .output()
        .expect("run python3");
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    println!("{so}{se}");
    assert!(out.status.success(), "check_usd.py failed:\n{so}\n{se}");
    assert!(
        so.contains("BasisCurves /World/body_curves: 2 curves"),
        "{so}"
    );
}

#[test]
fn atomic_writes_leave_no_partial_file() {
    let d = tmp_dir("atomic");
    let p = d.join("a.txt");
    write_atomically(&p, |w| std::io::Write::write_all(w, b"first")).expect("write");
    assert_eq!(std::fs::read(&p).expect("read"), b"first");
    // A writer that fails half-way: the old file stays whole, no temporary file is left.
    let e = write_atomically(&p, |w| {
        std::io::Write::write_all(w, b"half")?;
        Err(std::io::Error::other("disk trouble"))
    })
    .unwrap_err();
    assert!(e.to_string().starts_with(&p.display().to_string()), "{e}");
    assert_eq!(std::fs::read(&p).expect("read"), b"first");
    let names: Vec<String> = std::fs::read_dir(&d)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["a.txt"]);
    // The temporary name is hidden, in the same folder, and never a frame file's name.
    let tmp = temporary_path(&d.join("frame_0001.obj")).expect("tmp");
    assert_eq!(tmp.parent(), Some(d.as_path()));
    let name = tmp
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with(".frame_0001.obj.") && name.ends_with(".supple-tmp"),
        "{name}"
    );
    // A folder is refused, naming it.
    let e = write_atomically(&d, |_| Ok(())).unwrap_err();
    assert!(e.to_string().contains("is a folder"), "{e}");
    // A full disk is an error naming the path (a device is written in place, never replaced).
    #[cfg(target_os = "linux")]
    {
        let full = Path::new("/dev/full");
        let e = write_obj(full, &test_surface()).unwrap_err();
        assert!(e.to_string().starts_with("/dev/full"), "{e}");
        assert!(full.metadata().is_ok_and(|m| !m.is_file()));
    }
}

#[test]
fn obj_objects_keep_bodies_apart_and_colliders_after_the_marker() {
    let d = tmp_dir("obj-objects");
    let (s, curves) = surface_with_rods();
    let n = test_surface().positions.len();
    let quad = [
        [0.0, 0.0, -1.0],
        [1.0, 0.0, -1.0],
        [1.0, 1.0, -1.0],
        [0.0, 1.0, -1.0],
    ];
    let body = ObjObject {
        name: "cloth one",
        positions: &s.positions[..n],
        triangles: &s.triangles,
        curves: &[],
    };
    // The rods' vertices and polylines in their own object, with local indices.
    let local: Vec<Vec<u32>> = curves
        .iter()
        .map(|c| c.iter().map(|&v| v - n as u32).collect())
        .collect();
    let rods = ObjObject {
        name: "rods",
        positions: &s.positions[n..],
        triangles: &[],
        curves: &local,
    };
    let ground = ObjObject {
        name: "collider_plane_0",
        positions: &quad,
        triangles: &[[0, 1, 2], [0, 2, 3]],
        curves: &[],
    };
    let p = d.join("f.obj");
    write_obj_objects(&p, &[body, rods], &[ground]).expect("write");
    let text = std::fs::read_to_string(&p).expect("read");
    let objects: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("o ")).collect();
    assert_eq!(objects, ["cloth_one", "rods", "collider_plane_0"]);
    let marker = text.find(OBJ_COLLIDERS_MARKER).expect("marker");
    assert!(
        marker > text.find("o rods").expect("rods") && marker < text.find("o collider").expect("c")
    );
    // Read back: the bodies' vertices come first in order, with global indices.
    let l = load(&p);
    assert_eq!(&l.surface.positions[..s.positions.len()], &s.positions[..]);
    assert_eq!(&l.surface.triangles[..s.triangles.len()], &s.triangles[..]);
    assert_eq!(l.polylines, curves);
    let m = s.positions.len() as u32;
    assert_eq!(
        &l.surface.triangles[s.triangles.len()..],
        &[[m, m + 1, m + 2], [m, m + 2, m + 3]]
    );
    // Out-of-range local indices are refused, naming the object.
    let bad = ObjObject {
        name: "bad",
        positions: &quad,
        triangles: &[[0, 1, 4]],
        curves: &[],
    };
    let e = write_obj_objects(d.join("bad.obj"), &[bad], &[]).unwrap_err();
    assert!(e.to_string().contains("object 'bad'"), "{e}");
}

/// A stage of three bodies (a cloth, two rods as one body, a body whose name needs fixing and
/// repeats) and the three collider kinds, one moving; returns the point counts per body prim.
fn write_bodies_stage(path: &Path) -> Vec<(String, &'static str, usize)> {
    let (s, curves) = surface_with_rods();
    let n = test_surface().positions.len() as u32;
    let m = s.positions.len() as u32;
    let half = s.triangles.len() / 2;
    let bodies = vec![
        UsdBody {
            name: "cloth".into(),
            vertices: (0..n).collect(),
            triangles: s.triangles[..half].to_vec(),
            ..UsdBody::default()
        },
        UsdBody {
            name: "2 rods".into(),
            vertices: (n..m).collect(),
            curves: curves
                .iter()
                .map(|c| c.iter().map(|&v| v - n).collect())
                .collect(),
            curve_widths: vec![0.002, 0.004],
            ..UsdBody::default()
        },
        UsdBody {
            name: "cloth".into(),
            vertices: (0..n).collect(),
            triangles: s.triangles[half..].to_vec(),
            ..UsdBody::default()
        },
    ];
    let used = |tris: &[[u32; 3]]| {
        let mut v: Vec<u32> = tris.iter().flatten().copied().collect();
        v.sort();
        v.dedup();
        v.len()
    };
    let colliders = [
        UsdCollider {
            name: "plane_0".into(),
            shape: UsdColliderShape::Plane {
                point: [0.0, 0.0, -0.5],
                normal: [0.0, 0.0, 1.0],
                half_size: 3.0,
            },
            velocity: [0.0; 3],
        },
        UsdCollider {
            name: "sphere_1".into(),
            shape: UsdColliderShape::Sphere {
                center: [0.0, 0.0, 1.0],
                radius: 0.25,
            },
            velocity: [0.0, 0.0, -3.0],
        },
        UsdCollider {
            name: "box_2".into(),
            shape: UsdColliderShape::Box {
                min: [2.0, 0.0, 0.0],
                max: [3.0, 0.5, 0.25],
            },
            velocity: [0.0; 3],
        },
    ];
    let opts = UsdOptions {
        fps: 30.0,
        ..UsdOptions::default()
    };
    let mut w = UsdWriter::bodies(path, m as usize, &bodies, &opts)
        .and_then(|w| w.with_colliders(&colliders))
        .expect("writer");
    assert_eq!(
        w.prim_paths(),
        [
            "/World/cloth",
            "/World/_2_rods",
            "/World/cloth_2",
            "/World/colliders/plane_0",
            "/World/colliders/sphere_1",
            "/World/colliders/box_2"
        ]
    );
    for f in 0..3 {
        let pos: Vec<[f64; 3]> = s
            .positions
            .iter()
            .map(|p| [p[0], p[1] + 0.5 * f as f64, p[2]])
            .collect();
        w.write_frame(&pos).expect("frame");
    }
    w.finish().expect("finish");
    vec![
        ("/World/cloth".into(), "Mesh", used(&s.triangles[..half])),
        ("/World/_2_rods".into(), "BasisCurves", 8),
        ("/World/cloth_2".into(), "Mesh", used(&s.triangles[half..])),
    ]
}

#[test]
fn usda_stage_of_bodies_and_colliders() {
    let d = tmp_dir("usd-bodies");
    let p = d.join("scene.usda");
    let prims = write_bodies_stage(&p);
    let text = std::fs::read_to_string(&p).expect("read");
    for key in [
        "def Mesh \"cloth\"",
        "def BasisCurves \"_2_rods\"",
        "def Mesh \"cloth_2\"",
        "def Xform \"colliders\"",
        "def Mesh \"plane_0\"",
        "def Sphere \"sphere_1\"",
        "double radius = 0.25",
        "def Cube \"box_2\"",
        "double size = 1",
        "float3 xformOp:scale = (1, 0.5, 0.25)",
        "double3 xformOp:translate = (2.5, 0.25, 0.125)",
    ] {
        assert!(text.contains(key), "missing {key}:\n{text}");
    }
    // The sphere falls at 3 m/s: time code k is at k / 30 s.
    let samples: String = (0..3)
        .map(|k| {
            format!(
                "                {k}: (0, 0, {}),\n",
                1.0 - 3.0 * (k as f64 / 30.0)
            )
        })
        .collect();
    assert!(
        text.contains(&format!(
            "double3 xformOp:translate.timeSamples = {{\n{samples}"
        )),
        "{text}"
    );
    for (path, _, points) in &prims {
        let name = path.rsplit('/').next().expect("name");
        assert_eq!(
            usda_point_samples(&text, name),
            (0..3).map(|t| (t as f64, *points)).collect::<Vec<_>>(),
            "{name}"
        );
    }
    // Bad bodies and colliders are refused, naming them.
    let bad = UsdBody {
        name: "empty".into(),
        vertices: vec![0],
        ..UsdBody::default()
    };
    let e = UsdWriter::bodies(d.join("x.usda"), 1, &[bad], &UsdOptions::default())
        .err()
        .expect("refused");
    assert!(e.to_string().contains("body 0 ('empty')"), "{e}");
    let bad = UsdCollider {
        name: "flat".into(),
        shape: UsdColliderShape::Box {
            min: [0.0; 3],
            max: [1.0, 1.0, 0.0],
        },
        velocity: [0.0; 3],
    };
    let one = UsdBody {
        name: "one".into(),
        vertices: vec![0, 1, 2],
        triangles: vec![[0, 1, 2]],
        ..UsdBody::default()
    };
    let e = UsdWriter::bodies(d.join("x.usda"), 3, &[one], &UsdOptions::default())
        .and_then(|w| w.with_colliders(&[bad]))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("collider 0 ('flat')"), "{e}");
    let Some(python) = usd_python() else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../usd/check_usd.py");
    let mut cmd = std::process::Command::new(&python);
    cmd.arg(&script)
        .arg(&p)
        .args(["--frames", "3", "--fps", "30", "--exact"]);
    for (path, kind, points) in &prims {
        cmd.args(["--body", &format!("{path}={kind}:{points}")]);
    }
    cmd.args(["--collider", "/World/colliders/plane_0=Mesh"]);
    cmd.args(["--collider", "/World/colliders/sphere_1=Sphere:moving"]);
    cmd.args(["--collider", "/World/colliders/box_2=Cube"]);
    let out = cmd.output().expect("run python");
    let so = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && so.contains("USD check OK"),
        "{so}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
