//! TetGen `.node` / `.ele` / `.face` reader (0- or 1-based numbering, attributes and boundary
//! markers tolerated, `#` comments).

use super::{cap, load_tetgen_bytes, read_file, Cursor, Loaded, Raw, TagMap};
use crate::error::{Location, MeshError, MeshResult};
use std::path::Path;

/// Loads `X.node` + `X.ele` (+ `X.face` when present) given any one of the three paths.
pub(crate) fn load_files(path: &Path, name: &str) -> MeshResult<Loaded> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let node_path = path.with_extension("node");
    let ele_path = path.with_extension("ele");
    let face_path = path.with_extension("face");
    let node_name = if ext == "node" {
        name.to_string()
    } else {
        node_path.display().to_string()
    };
    let mut warnings = Vec::new();
    let (node_name, node) = match read_file(&node_path, &node_name) {
        Ok(d) => (node_name, d),
        Err(e) => match lone_node_file(&node_path) {
            // A lone `.node` beside an `.ele` of another name (e.g. several `.ele` variants
            // sharing one point set): use it, and say so.
            Some(other) if ext != "node" => {
                let other_name = other.display().to_string();
                warnings.push(format!(
                    "{} not found; using the only .node file in the folder, {}",
                    node_name, other_name
                ));
                (other_name.clone(), read_file(&other, &other_name)?)
            }
            _ if ext != "node" => {
                let msg = match e {
                    MeshError::Io { msg, .. } => msg,
                    other => other.to_string(),
                };
                return Err(MeshError::Io {
                    loc: Location::file(name),
                    msg: format!("companion file {node_name}: {msg}"),
                });
            }
            _ => return Err(e),
        },
    };
    let ele_name = if ext == "ele" {
        name.to_string()
    } else {
        ele_path.display().to_string()
    };
    let ele = if ext == "ele" || ele_path.exists() {
        Some(read_file(&ele_path, &ele_name)?)
    } else {
        None
    };
    let face_name = face_path.display().to_string();
    let face = if face_path.exists() {
        Some(read_file(&face_path, &face_name)?)
    } else {
        None
    };
    if let Some(e) = &ele {
        if e.iter().all(|b| b.is_ascii_whitespace()) {
            return Err(MeshError::Truncated {
                loc: Location::file(&ele_name),
                msg: "empty file".into(),
            });
        }
    }
    if node.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(MeshError::Truncated {
            loc: Location::file(&node_name),
            msg: "empty file".into(),
        });
    }
    let mut loaded = load_tetgen_bytes(
        &node_name,
        &node,
        ele.as_deref().map(|d| (ele_name.as_str(), d)),
        face.as_deref().map(|d| (face_name.as_str(), d)),
    )?;
    warnings.append(&mut loaded.warnings);
    loaded.warnings = warnings;
    Ok(loaded)
}

/// The single `.node` file in the folder of `missing`, if there is exactly one.
fn lone_node_file(missing: &Path) -> Option<std::path::PathBuf> {
    let dir = match missing.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let mut found = None;
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| x.eq_ignore_ascii_case("node"))
        {
            if found.is_some() {
                return None;
            }
            found = Some(p);
        }
    }
    found
}

/// Reads `count` records; distinguishes "file ended between records" (count mismatch) from
/// "file ended inside a record" (truncated).
fn end_check(c: &mut Cursor, done: u64, count: u64, what: &str) -> MeshResult<()> {
    if c.peek_token().is_none() {
        return Err(c.err_count(format!(
            "header announces {count} {what} but the file ends after {done}"
        )));
    }
    Ok(())
}

pub(crate) fn parse(
    node_name: &str,
    node: &[u8],
    ele: Option<(&str, &[u8])>,
    face: Option<(&str, &[u8])>,
) -> MeshResult<Raw> {
    let mut c = Cursor::new(node_name, node);
    c.comment = Some(b'#');
    let n = c.u64("the number of points")?;
    let dim = c.u64("the dimension")?;
    if dim != 3 {
        return Err(c.err_unsupported(format!("dimension {dim} (only 3-D meshes are supported)")));
    }
    let nattr = c.u64("the number of attributes")?;
    let nmark = c.u64("the number of boundary markers")?;
    if nmark > 1 || nattr > 1024 {
        return Err(c.err_syntax(format!(
            "implausible header: {nattr} attributes, {nmark} markers"
        )));
    }
    let mut positions = Vec::with_capacity(cap(n, 8, c.remaining()));
    let mut tags = Vec::with_capacity(cap(n, 8, c.remaining()));
    for i in 0..n {
        end_check(&mut c, i, n, "points")?;
        let tag = c.i64("a point number")?;
        let x = c.f64("x")?;
        let y = c.f64("y")?;
        let z = c.f64("z")?;
        for _ in 0..nattr + nmark {
            c.expect_token("a point attribute or marker")?;
        }
        if tag < 0 {
            return Err(c.err_index(format!("negative point number {tag}")));
        }
        tags.push(tag as u64);
        positions.push([x, y, z]);
    }
    let map = TagMap::build(&tags).map_err(|t| MeshError::Syntax {
        loc: Location::file(node_name),
        msg: format!("point number {t} occurs twice"),
    })?;
    let mut raw = Raw {
        format: "tetgen".into(),
        positions,
        ..Default::default()
    };
    match ele {
        Some((ele_name, ele)) => {
            let mut c = Cursor::new(ele_name, ele);
            c.comment = Some(b'#');
            let m = c.u64("the number of tetrahedra")?;
            let k = c.u64("the number of nodes per tetrahedron")?;
            if k != 4 && k != 10 {
                return Err(
                    c.err_unsupported(format!("{k} nodes per tetrahedron (4 or 10 expected)"))
                );
            }
            let nattr = c.u64("the number of region attributes")?.min(1024);
            raw.tets.reserve(cap(m, 10, c.remaining()));
            for i in 0..m {
                end_check(&mut c, i, m, "tetrahedra")?;
                c.i64("a tetrahedron number")?;
                let mut t = [0u32; 4];
                for j in 0..k {
                    let v = c.i64("a node index")?;
                    if j < 4 {
                        t[j as usize] =
                            u64::try_from(v)
                                .ok()
                                .and_then(|v| map.get(v))
                                .ok_or_else(|| {
                                    c.err_index(format!(
                                    "tetrahedron {} references point {v}, which {} does not define",
                                    i + 1,
                                    node_name
                                ))
                                })?;
                    }
                }
                for _ in 0..nattr {
                    c.expect_token("a region attribute")?;
                }
                raw.tets.push(t);
            }
        }
        None => raw.warnings.push("no .ele file: points only".into()),
    }
    if let Some((face_name, face)) = face {
        let mut c = Cursor::new(face_name, face);
        c.comment = Some(b'#');
        let m = c.u64("the number of faces")?;
        let nmark = c.u64("the number of boundary markers")?;
        raw.triangles.reserve(cap(m, 8, c.remaining()));
        for i in 0..m {
            end_check(&mut c, i, m, "faces")?;
            c.i64("a face number")?;
            let mut t = [0u32; 3];
            for slot in &mut t {
                let v = c.i64("a node index")?;
                *slot = u64::try_from(v)
                    .ok()
                    .and_then(|v| map.get(v))
                    .ok_or_else(|| {
                        c.err_index(format!(
                            "face {} references point {v}, which {} does not define",
                            i + 1,
                            node_name
                        ))
                    })?;
            }
            for _ in 0..nmark.min(1) {
                c.expect_token("a boundary marker")?;
            }
            raw.triangles.push(t);
        }
    }
    Ok(raw)
}
