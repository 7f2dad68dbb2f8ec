//! The USD text reader: stages written by Pixar's USD library (`tests/data/meshes/derived/usd`,
//! see its NOTICE.md; expected values computed by USD itself in `expected.json`), prim
//! selection, and malformed layers (every error names the file and a line, never a panic).

use serde_json::Value;
use std::path::{Path, PathBuf};
use supple_mesh::import::{load_bytes, Format};
use supple_mesh::info::VolumeSource;
use supple_mesh::{load, load_usd_prim, MeshError, MeshInfo, Position};

fn derived(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/meshes/derived")
        .join(rel)
}

fn expected(file: &str) -> Value {
    let text = std::fs::read_to_string(derived("expected.json")).expect("expected.json");
    let v: Value = serde_json::from_str(&text).expect("expected.json parses");
    v[file].clone()
}

fn assert_bbox(got: [[f64; 3]; 2], want: &Value, ctx: &str) {
    for side in 0..2 {
        for k in 0..3 {
            let w = want[side][k].as_f64().expect("number");
            // Points are float32 in the stage.
            assert!(
                (got[side][k] - w).abs() <= 1e-6 * w.abs().max(1.0),
                "{ctx}: bbox {got:?} vs {want}"
            );
        }
    }
}

#[test]
fn tet_mesh_under_transformed_xform() {
    let file = "tiny_tetmesh_xform.usda";
    let e = expected(file);
    let l = load(derived(&format!("usd/{file}"))).expect("loads");
    let info = MeshInfo::from_loaded(&l);
    assert_eq!(info.vertices, e["points"].as_u64().unwrap() as usize);
    assert_eq!(info.tets, e["tets"].as_u64().unwrap() as usize);
    assert_eq!(
        l.surface.triangles.len(),
        e["surface_faces"].as_u64().unwrap() as usize
    );
    assert_eq!(info.inverted_tets, 0, "a rotation keeps the orientation");
    // translate / rotateXYZ / scale 2 applied: the unit cube becomes 8 m^3, where USD puts it.
    let v = info.volume.expect("tet volume");
    assert!((v - e["volume"].as_f64().unwrap()).abs() < 1e-5, "{v}");
    assert_bbox(info.bbox, &e["bbox"], file);
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);
}

#[test]
fn quad_cube_in_centimetres_left_handed_time_sampled() {
    let file = "cube_quads_lefthanded_cm.usda";
    let e = expected(file);
    let l = load(derived(&format!("usd/{file}"))).expect("loads");
    let info = MeshInfo::from_loaded(&l);
    assert_eq!(info.vertices, e["points"].as_u64().unwrap() as usize);
    assert_eq!(
        info.surface_triangles,
        e["triangles"].as_u64().unwrap() as usize
    );
    // The first time sample, in metres; leftHanded quads turned into outward triangles.
    assert_bbox(info.bbox, &e["bbox"], file);
    assert_eq!(info.volume_source, VolumeSource::EnclosedSurface);
    let v = info.volume.expect("closed");
    assert!((v - 1.0).abs() < 1e-6, "{v}");
    assert!(
        l.surface.enclosed_volume() > 0.0,
        "outward after the leftHanded flip"
    );
    for want in [
        "metersPerUnit = 0.01",
        "upAxis is Y",
        "2 time samples",
        "fan-triangulated",
        "leftHanded",
    ] {
        assert!(
            info.warnings.iter().any(|w| w.contains(want)),
            "no warning about {want}: {:?}",
            info.warnings
        );
    }
}

#[test]
fn several_prims_merge_or_are_picked_by_path() {
    let file = "two_bodies_and_collider.usda";
    let e = expected(file);
    let path = derived(&format!("usd/{file}"));
    let l = load(&path).expect("loads");
    assert_eq!(
        l.surface.positions.len(),
        e["points"].as_u64().unwrap() as usize
    );
    assert_eq!(
        l.surface.triangles.len(),
        e["triangles"].as_u64().unwrap() as usize
    );
    assert_eq!(l.polylines.len(), e["polylines"].as_u64().unwrap() as usize);
    assert_eq!(l.ignored_elements, 1, "the Sphere collider");
    assert!(
        l.warnings
            .iter()
            .any(|w| w.contains("Sphere /World/ground_ball")),
        "{:?}",
        l.warnings
    );
    let info = MeshInfo::from_loaded(&l);
    let v = info.volume.expect("two closed tetrahedra");
    assert!((v - e["volume"].as_f64().unwrap()).abs() < 1e-9, "{v}");
    // One prim by its path.
    let b = load_usd_prim(&path, "/World/b").expect("prim b");
    assert_eq!(b.surface.positions.len(), 4);
    assert_eq!(b.surface.triangles.len(), 4);
    assert!(b.polylines.is_empty());
    assert_bbox(MeshInfo::from_loaded(&b).bbox, &e["b_bbox"], "/World/b");
    let rod = load_usd_prim(&path, "/World/rod").expect("the rod");
    assert_eq!(rod.polylines, vec![vec![0, 1, 2]]);
    let err = load_usd_prim(&path, "/World/nothing").expect_err("no such prim");
    let msg = err.to_string();
    assert!(msg.starts_with(&path.display().to_string()), "{msg}");
    assert!(
        msg.contains("/World/nothing") && msg.contains("/World/a"),
        "{msg}"
    );
    let err = load_usd_prim(derived("tiny_tetgen_one_based.vtk"), "/World").expect_err("not USD");
    assert!(err.to_string().contains("USD"), "{err}");
}

/// A stage with one triangle Mesh whose body is `body` (inside `def Mesh "m" { ... }`).
fn stage(body: &str) -> String {
    format!("#usda 1.0\n(\n    metersPerUnit = 1\n)\n\ndef Xform \"W\"\n{{\n    def Mesh \"m\"\n    {{\n{body}\n    }}\n}}\n")
}

const GOOD: &str = "        int[] faceVertexCounts = [3]\n        int[] faceVertexIndices = [0, 1, 2]\n        point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]";

#[test]
fn malformed_stages_name_the_file_and_line() {
    assert!(load_bytes("ok.usda", stage(GOOD).as_bytes(), Format::Usd).is_ok());
    let cases: Vec<(String, &str, Option<usize>)> = vec![
        // Index 3 of 3 points, on line 12 (the second line of faceVertexIndices).
        (
            stage(&GOOD.replace("[0, 1, 2]", "[0, 1,\n 3]")),
            "index out of range",
            Some(12),
        ),
        (stage(&GOOD.replace("[3]", "[4]")), "count mismatch", Some(10)),
        (stage(&GOOD.replace("(0, 1, 0)", "(0, nan, 0)")), "non-finite", Some(12)),
        (stage(&GOOD.replace("(0, 1, 0)", "(0, 1)")), "tuple of 2", Some(12)),
        (stage(&GOOD.replace("point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]", "")), "no points", None),
        (stage(&GOOD.replace("(0, 1, 0)]", "(0, 1, 0)")), "syntax error", None),
        (stage(GOOD).replace("}\n}\n", "}\n"), "no closing", Some(6)),
        (
            stage(&format!("{GOOD}\n        double3 xformOp:shear = (1, 2, 3)\n        uniform token[] xformOpOrder = [\"xformOp:shear\"]")),
            "not supported",
            Some(13),
        ),
        ("#usda 1.0\ndef Sphere \"s\" {\n}\n".to_string(), "no Mesh, TetMesh or BasisCurves prim (found Sphere /s)", None),
        ("PXR-USDC\0\0\0\0".to_string(), "binary USD crate", None),
        ("PK\x03\x04\0\0".to_string(), "USDZ package", None),
        ("#usdb 1.0\n".to_string(), "not a USD text layer", Some(1)),
        ("#usda 1.0\n\"unterminated\n\n".to_string(), "unterminated string", Some(2)),
        ("#usda 1.0\n}\n".to_string(), "at the top level", Some(2)),
    ];
    for (text, want, line) in cases {
        let r = load_bytes("bad.usda", text.as_bytes(), Format::Usd);
        let err = r.expect_err(&format!("should fail ({want}):\n{text}"));
        let msg = err.to_string();
        assert!(msg.starts_with("bad.usda"), "{msg}");
        assert!(msg.contains(want), "{msg} lacks '{want}'\n{text}");
        assert!(!msg.contains('\n'), "{msg}");
        if let Some(line) = line {
            assert_eq!(err.location().pos, Position::Line(line), "{msg}\n{text}");
        }
    }
    // Out-of-range indices name the index too.
    let bad = stage(&GOOD.replace("[0, 1, 2]", "[0, 1, 7]"));
    let err = load_bytes("bad.usda", bad.as_bytes(), Format::Usd).expect_err("index");
    assert!(matches!(err, MeshError::IndexOutOfRange { .. }));
    assert!(
        err.to_string().contains("faceVertexIndices[2] = 7"),
        "{err}"
    );
}

#[test]
fn constructs_other_tools_write_are_skipped_or_applied() {
    // Metadata, relationships, primvars with metadata, a variant set, a class, an inactive prim,
    // a reference, time-sampled transforms and a matrix transform.
    let text = r#"#usda 1.0
(
    doc = """A "multi-line"
    doc string"""
    upAxis = "Z"
    subLayers = [@other.usda@]
)

class "Template" {
    def Mesh "ignored" {
        int[] faceVertexCounts = [3]
        int[] faceVertexIndices = [0, 1, 2]
        point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    }
}

def Xform "World" (
    kind = "component"
    prepend references = @./x.usda@</X>
)
{
    double3 xformOp:translate.timeSamples = {
        5: (100, 0, 0),
        1: (10, 0, 0),
    }
    matrix4d xformOp:transform = ( (2, 0, 0, 0), (0, 2, 0, 0), (0, 0, 2, 0), (0, 0, 1, 1) )
    uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:transform"]
    rel material:binding = </Looks/m>
    variantSet "shape" = {
        "a" {
            custom int x = 1
        }
    }

    def Mesh "tri" (
        prepend apiSchemas = ["MaterialBindingAPI"]
    )
    {
        int[] faceVertexCounts = [3]; int[] faceVertexIndices = [0, 1, 2]
        point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0),]
        color3f[] primvars:displayColor = [(1, 0, 0)] (
            interpolation = "constant"
        )
        texCoord2f[] primvars:st = [(0, 0), (1, 0), (0, 1)] (interpolation = "vertex")
        normal3f[] normals = None
        token visibility = "inherited"
    }

    def Mesh "off" (
        active = false
    )
    {
        int[] faceVertexCounts = [3]
        int[] faceVertexIndices = [0, 1, 2]
        point3f[] points = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    }
}
"#;
    let l = load_bytes("tools.usda", text.as_bytes(), Format::Usd).expect("loads");
    assert_eq!(l.surface.triangles, vec![[0, 1, 2]], "only /World/tri");
    // Earliest translate sample (t = 1: x + 10) after the matrix (scale 2, then z + 1).
    assert_eq!(
        l.surface.positions,
        vec![[10.0, 0.0, 1.0], [12.0, 0.0, 1.0], [10.0, 2.0, 1.0]]
    );
    for want in [
        "composition not followed",
        "subLayers",
        "references",
        "variantSet",
        "inactive prims not read: /World/off",
    ] {
        assert!(
            l.warnings.iter().any(|w| w.contains(want)),
            "no warning about {want}: {:?}",
            l.warnings
        );
    }
}

#[test]
fn nesting_and_long_names_stay_bounded() {
    // Prims nested 300 deep are refused with the line of the first one too deep.
    let mut text = String::from("#usda 1.0\n");
    for _ in 0..300 {
        text.push_str("def \"a\" {\n");
    }
    let err = load_bytes("deep.usda", text.as_bytes(), Format::Usd).expect_err("too deep");
    assert!(err.to_string().contains("nested more than 256"), "{err}");
    assert_eq!(err.location().pos, Position::Line(258));
    // A 1 MB prim name above 20,000 prims: paths are built only for messages (copying the
    // name into every child's path would need 20 GB), and messages elide long paths.
    let mut text = format!("#usda 1.0\ndef \"{}\" {{\n", "n".repeat(1 << 20));
    for i in 0..20_000 {
        text.push_str(&format!("def Mesh \"m{i}\" {{}}\n"));
    }
    text.push_str("}\n");
    let err = load_bytes("wide.usda", text.as_bytes(), Format::Usd).expect_err("no points");
    let msg = err.to_string();
    assert!(
        msg.contains("has no points") && msg.contains("/m0"),
        "{}",
        &msg[..200.min(msg.len())]
    );
    assert!(msg.len() < 400, "the path is elided: {} bytes", msg.len());
}

#[test]
fn usd_extensions_and_binary_files() {
    let d = std::env::temp_dir().join(format!("supple-usd-ext-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    // A text layer named .usd reads like a .usda.
    let text = stage(GOOD);
    std::fs::write(d.join("text.usd"), &text).unwrap();
    assert_eq!(
        load(d.join("text.usd"))
            .expect("text .usd")
            .surface
            .triangles
            .len(),
        1
    );
    // Crate and package files say how to get a text layer.
    for (name, bytes, want) in [
        ("c.usdc", &b"PXR-USDC\x00\x00"[..], "usdcat"),
        ("c.usd", &b"PXR-USDC\x00\x00"[..], "usdcat"),
        ("p.usdz", &b"PK\x03\x04\x00\x00"[..], "USDZ"),
    ] {
        std::fs::write(d.join(name), bytes).unwrap();
        let err = load(d.join(name)).expect_err(name);
        assert!(err.to_string().contains(want), "{name}: {err}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
