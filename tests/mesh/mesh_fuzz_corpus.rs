//! Regression: every file of the fuzz corpus (`engine/mesh/fuzz/corpus/<target>/`) goes through
//! its parser without panicking (success or a clean error both pass).

use std::path::Path;
use supple_mesh::import::{load_bytes, load_tetgen_bytes, Format};

#[test]
fn fuzz_corpus_never_panics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../engine/mesh/fuzz/corpus");
    let mut n = 0;
    for dir in std::fs::read_dir(&root)
        .expect("fuzz corpus folder")
        .flatten()
    {
        let target = dir.file_name().to_string_lossy().into_owned();
        for file in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let data = std::fs::read(file.path()).unwrap();
            let name = file.path().display().to_string();
            let r = match target.as_str() {
                "msh" => load_bytes(&name, &data, Format::Msh),
                "medit" => load_bytes(&name, &data, Format::Medit),
                "vtk" => load_bytes(&name, &data, Format::Vtk),
                "vtu" => load_bytes(&name, &data, Format::Vtu),
                "obj" => load_bytes(&name, &data, Format::Obj),
                "ply" => load_bytes(&name, &data, Format::Ply),
                "stl" => load_bytes(&name, &data, Format::Stl),
                "usd" => load_bytes(&name, &data, Format::Usd),
                "tetgen" => {
                    // Same split as the fuzz target: .node, then .ele after a 0xFF byte.
                    let (node, ele) = match data.iter().position(|&b| b == 0xff) {
                        Some(i) => (&data[..i], Some(("x.ele", &data[i + 1..]))),
                        None => (&data[..], None),
                    };
                    load_tetgen_bytes(&name, node, ele, None)
                }
                other => panic!("unknown fuzz target folder {other}"),
            };
            if let Err(e) = r {
                assert!(!e.to_string().contains('\n'), "{name}: multi-line error");
            }
            n += 1;
        }
    }
    assert!(n >= 9, "fuzz corpus has only {n} files");
}
