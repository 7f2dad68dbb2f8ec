//! TetGen `.node` / `.ele` / `.face` reader (0- or 1-based numbering, attributes and boundary
//! markers tolerated, `#` comments).
//!
//! A TetGen mesh is a file set sharing one base name: `X.node` (the points), `X.ele` (the
//! tetrahedra) and `X.face` (boundary triangles). Whichever of the three the caller names, the
//! others are looked up under the same base name only; no other file stands in for a missing
//! one. The named file is checked first (an empty or malformed `.ele` is reported as such before
//! its `.node` is read), and every problem found in a sibling names both files.

use super::{
    cap, empty_error, is_blank, load_tetgen_bytes, read_file, Cursor, Loaded, Raw, TagMap,
};
use crate::error::{Location, MeshError, MeshResult};
use std::path::{Path, PathBuf};

/// The role of one file of a TetGen set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Node,
    Ele,
    Face,
}

impl Role {
    fn from_ext(ext: &str) -> Option<Role> {
        match ext.to_ascii_lowercase().as_str() {
            "node" => Some(Role::Node),
            "ele" => Some(Role::Ele),
            "face" => Some(Role::Face),
            _ => None,
        }
    }

    fn ext(self) -> &'static str {
        match self {
            Role::Node => "node",
            Role::Ele => "ele",
            Role::Face => "face",
        }
    }

    /// What a file of this role holds, for messages.
    fn holds(self) -> &'static str {
        match self {
            Role::Node => "the points",
            Role::Ele => "the tetrahedra",
            Role::Face => "the boundary triangles",
        }
    }
}

/// The path of the sibling of `path` with role `role`: same folder and base name, extension in
/// the same letter case as `path`'s (`X.ELE` -> `X.NODE`).
fn sibling(path: &Path, role: Role) -> PathBuf {
    let upper = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| !e.is_empty() && e.chars().all(|c| c.is_ascii_uppercase()));
    if upper {
        path.with_extension(role.ext().to_ascii_uppercase())
    } else {
        path.with_extension(role.ext())
    }
}

/// One file of the set: its display name and content.
struct Part {
    name: String,
    data: Vec<u8>,
}

/// Reads the sibling with role `role` of the file the caller named (`named`); `None` when it
/// does not exist. Read errors and an empty sibling name both files.
fn read_sibling(path: &Path, named: &str, role: Role) -> MeshResult<Option<Part>> {
    let p = sibling(path, role);
    if !p.exists() {
        return Ok(None);
    }
    let name = p.display().to_string();
    let data = read_file(&p, &name).map_err(|e| e.in_sibling_of(named))?;
    if is_blank(&data) {
        let what = format!("TetGen .{} ({})", role.ext(), role.holds());
        return Err(empty_error(&name, &data, &what).in_sibling_of(named));
    }
    Ok(Some(Part { name, data }))
}

/// Reads the sibling with role `role`, which the named file of role `named_role` needs.
fn need_sibling(path: &Path, named: &str, named_role: Role, role: Role) -> MeshResult<Part> {
    read_sibling(path, named, role)?.ok_or_else(|| MeshError::MissingSibling {
        loc: Location::file(named),
        sibling: sibling(path, role).display().to_string(),
        msg: format!(
            "a TetGen .{} needs the .{} of the same base name ({}); no other file is used in its place",
            named_role.ext(),
            role.ext(),
            role.holds()
        ),
    })
}

/// Loads a TetGen file set given any one of its `.node`, `.ele` or `.face` paths: the `.node` is
/// required, the `.ele` and `.face` are read when they exist (the named one always).
pub(crate) fn load_files(path: &Path, named: &str) -> MeshResult<Loaded> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    let role = Role::from_ext(ext).ok_or_else(|| MeshError::Unsupported {
        loc: Location::file(named),
        msg: format!("'.{ext}' is not a TetGen extension (.node, .ele, .face)"),
    })?;
    // The named file first: its own problems are reported before any sibling is read.
    let data = read_file(path, named)?;
    if is_blank(&data) {
        return Err(empty_error(
            named,
            &data,
            &format!("TetGen .{} ({})", role.ext(), role.holds()),
        ));
    }
    match role {
        Role::Ele => check_records(named, &data, Records::Tets)?,
        Role::Face => check_records(named, &data, Records::Faces)?,
        Role::Node => {}
    }
    let own = Part {
        name: named.to_string(),
        data,
    };
    let (node, ele, face) = match role {
        Role::Node => (
            own,
            read_sibling(path, named, Role::Ele)?,
            read_sibling(path, named, Role::Face)?,
        ),
        Role::Ele => {
            let node = need_sibling(path, named, role, Role::Node)?;
            (node, Some(own), read_sibling(path, named, Role::Face)?)
        }
        Role::Face => {
            let node = need_sibling(path, named, role, Role::Node)?;
            (node, read_sibling(path, named, Role::Ele)?, Some(own))
        }
    };
    load_tetgen_bytes(
        &node.name,
        &node.data,
        ele.as_ref().map(|p| (p.name.as_str(), p.data.as_slice())),
        face.as_ref().map(|p| (p.name.as_str(), p.data.as_slice())),
    )
    .map_err(|e| e.in_sibling_of(named))
}

/// Which record list a file holds.
#[derive(Clone, Copy)]
enum Records {
    Tets,
    Faces,
}

/// Checks the structure of an `.ele` or `.face` file (header, record count, numbers) without
/// its `.node`, so that its own problems are reported before any sibling's.
fn check_records(name: &str, data: &[u8], which: Records) -> MeshResult<()> {
    let mut c = Cursor::new(name, data);
    c.comment = Some(b'#');
    match which {
        Records::Tets => read_tets(&mut c, None, "").map(|_| ()),
        Records::Faces => read_faces(&mut c, None, "").map(|_| ()),
    }
}

/// Errors when the file ends before record `done` of `count`.
fn end_check(c: &mut Cursor, done: u64, count: u64, what: &str) -> MeshResult<()> {
    if c.peek_token().is_none() {
        return Err(c.err_count(format!(
            "header announces {count} {what} but the file ends after {done}"
        )));
    }
    Ok(())
}

/// Resolves a point number read from an `.ele` or `.face` record against the `.node` numbering.
fn resolve(
    c: &Cursor,
    map: &TagMap,
    v: i64,
    what: &str,
    record: u64,
    node_name: &str,
) -> MeshResult<u32> {
    u64::try_from(v)
        .ok()
        .and_then(|t| map.get(t))
        .ok_or_else(|| {
            let range = match map {
                TagMap::Contiguous { first, n } if *n > 0 => {
                    format!(
                        " (its points are numbered {first}..={})",
                        first + *n as u64 - 1
                    )
                }
                _ => String::new(),
            };
            c.err_index(format!(
                "{what} {record} references point {v}, which {node_name} does not define{range}"
            ))
        })
}

/// Reads the `.ele` records; with `map` (the `.node` numbering) they are resolved into 0-based
/// tets, without it only their structure is checked and nothing is stored.
fn read_tets(
    c: &mut Cursor,
    map: Option<&TagMap>,
    node_name: &str,
) -> MeshResult<(Vec<[u32; 4]>, u64)> {
    let m = c.u64("the number of tetrahedra")?;
    let k = c.u64("the number of nodes per tetrahedron")?;
    if k != 4 && k != 10 {
        return Err(c.err_unsupported(format!("{k} nodes per tetrahedron (4 or 10 expected)")));
    }
    let nattr = c.u64("the number of region attributes")?;
    if nattr > 1024 {
        return Err(c.err_syntax(format!("implausible header: {nattr} region attributes")));
    }
    let mut tets = Vec::with_capacity(if map.is_some() {
        cap(m, 10, c.remaining())
    } else {
        0
    });
    for i in 0..m {
        end_check(c, i, m, "tetrahedra")?;
        c.i64("a tetrahedron number")?;
        let mut t = [0u32; 4];
        for j in 0..k {
            let v = c.i64("a node index")?;
            if let (Some(map), true) = (map, j < 4) {
                t[j as usize] = resolve(c, map, v, "tetrahedron", i + 1, node_name)?;
            }
        }
        for _ in 0..nattr {
            c.expect_token("a region attribute")?;
        }
        if map.is_some() {
            tets.push(t);
        }
    }
    Ok((tets, k))
}

/// Reads the `.face` records like [`read_tets`].
fn read_faces(c: &mut Cursor, map: Option<&TagMap>, node_name: &str) -> MeshResult<Vec<[u32; 3]>> {
    let m = c.u64("the number of faces")?;
    let nmark = c.u64("the number of boundary markers")?;
    if nmark > 1 {
        return Err(c.err_syntax(format!(
            "implausible header: {nmark} boundary markers per face (0 or 1)"
        )));
    }
    let mut faces = Vec::with_capacity(if map.is_some() {
        cap(m, 8, c.remaining())
    } else {
        0
    });
    for i in 0..m {
        end_check(c, i, m, "faces")?;
        c.i64("a face number")?;
        let mut t = [0u32; 3];
        for slot in &mut t {
            let v = c.i64("a node index")?;
            if let Some(map) = map {
                *slot = resolve(c, map, v, "face", i + 1, node_name)?;
            }
        }
        for _ in 0..nmark {
            c.expect_token("a boundary marker")?;
        }
        if map.is_some() {
            faces.push(t);
        }
    }
    Ok(faces)
}

/// Parses TetGen content: the `.node` (named `node_name`), optional `.ele` and `.face`. Errors
/// name the file they are in.
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
    if n == 0 {
        return Err(c.err_count("the header announces 0 points"));
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
    drop(tags);
    let mut raw = Raw {
        format: "tetgen".into(),
        positions,
        ..Default::default()
    };
    match ele {
        Some((ele_name, ele)) => {
            let mut c = Cursor::new(ele_name, ele);
            c.comment = Some(b'#');
            let (tets, k) = read_tets(&mut c, Some(&map), node_name)?;
            raw.tets = tets;
            if k == 10 {
                raw.warnings.push(format!(
                    "{ele_name} holds 10-node (quadratic) tetrahedra: only their 4 corner nodes are used"
                ));
            }
        }
        None if face.is_none() => raw.warnings.push("no .ele file: points only".into()),
        None => raw
            .warnings
            .push("no .ele file: the .face triangles only".into()),
    }
    if let Some((face_name, face)) = face {
        let mut c = Cursor::new(face_name, face);
        c.comment = Some(b'#');
        raw.triangles = read_faces(&mut c, Some(&map), node_name)?;
    }
    Ok(raw)
}
