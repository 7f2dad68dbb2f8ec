//! Wavefront OBJ writer (vertices, triangles and `l` polylines; exact shortest round-trip
//! decimals), as one mesh or as named objects (`o NAME`), one per body, optionally followed by
//! collider meshes after the [`OBJ_COLLIDERS_MARKER`] comment.

use super::{check_curves, check_tris, invalid, write_file};
use crate::model::TriMesh;
use std::io::{self, Write};
use std::path::Path;

/// Writes `mesh` as OBJ to `path` (`v x y z` lines in vertex order, `f a b c` 1-based).
pub fn write_obj(path: impl AsRef<Path>, mesh: &TriMesh) -> io::Result<()> {
    let path = path.as_ref();
    check_tris(&mesh.triangles, mesh.positions.len()).map_err(|e| invalid(path, e))?;
    write_file(path, |w| write_obj_to(w, &mesh.positions, &mesh.triangles))
}

/// Writes OBJ text for `positions` and `triangles` to any writer (indices must be in range).
pub fn write_obj_to(
    w: &mut impl Write,
    positions: &[[f64; 3]],
    triangles: &[[u32; 3]],
) -> io::Result<()> {
    write_obj_with_curves_to(w, positions, triangles, &[])
}

/// Writes OBJ text for `positions`, `triangles` and polylines `curves` (each an ordered list of
/// at least two vertex indices, written as one `l a b c ...` line after the faces).
pub fn write_obj_with_curves_to(
    w: &mut impl Write,
    positions: &[[f64; 3]],
    triangles: &[[u32; 3]],
    curves: &[Vec<u32>],
) -> io::Result<()> {
    check_tris(triangles, positions.len())?;
    check_curves(curves, positions.len())?;
    write!(
        w,
        "# written by Supple: {} vertices, {} triangles",
        positions.len(),
        triangles.len()
    )?;
    if curves.is_empty() {
        writeln!(w)?;
    } else {
        writeln!(w, ", {} polylines", curves.len())?;
    }
    for p in positions {
        writeln!(w, "v {} {} {}", p[0], p[1], p[2])?;
    }
    for t in triangles {
        writeln!(w, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1)?;
    }
    let mut line = String::new();
    for c in curves {
        line.clear();
        line.push('l');
        for &v in c {
            line.push_str(&format!(" {}", v as u64 + 1));
        }
        writeln!(w, "{line}")?;
    }
    Ok(())
}

/// One named object of an OBJ file written by [`write_obj_objects`]: its own vertices, and
/// triangles and polylines indexing them (0-based, local to the object).
#[derive(Debug, Clone, Copy)]
pub struct ObjObject<'a> {
    /// Object name (`o NAME`); whitespace and control characters become `_`, empty becomes
    /// `object`.
    pub name: &'a str,
    /// Vertex positions (m).
    pub positions: &'a [[f64; 3]],
    /// Triangles over `positions`.
    pub triangles: &'a [[u32; 3]],
    /// Polylines over `positions` (each at least two vertices), written as `l` lines.
    pub curves: &'a [Vec<u32>],
}

/// The comment line that starts the colliders' part of a file written by
/// [`write_obj_objects_to`]: what follows is not simulated geometry (`supple check-frames`
/// ignores it).
pub const OBJ_COLLIDERS_MARKER: &str = "# supple colliders:";

/// An OBJ object name: whitespace and control characters replaced by `_`, never empty.
fn obj_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_whitespace() || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    if s.is_empty() {
        "object".into()
    } else {
        s
    }
}

/// Writes `objects` (the bodies) and then `colliders` to `path` as OBJ objects (see
/// [`write_obj_objects_to`]), atomically.
pub fn write_obj_objects(
    path: impl AsRef<Path>,
    objects: &[ObjObject],
    colliders: &[ObjObject],
) -> io::Result<()> {
    let path = path.as_ref();
    for o in objects.iter().chain(colliders) {
        check_object(o).map_err(|e| invalid(path, e))?;
    }
    write_file(path, |w| write_obj_objects_to(w, objects, colliders))
}

fn check_object(o: &ObjObject) -> io::Result<()> {
    check_tris(o.triangles, o.positions.len())
        .and_then(|()| check_curves(o.curves, o.positions.len()))
        .map_err(|e| io::Error::new(e.kind(), format!("object '{}': {e}", o.name)))
}

/// Writes OBJ text with one `o NAME` object per entry of `objects` (its `v` lines, `f` faces and
/// `l` polylines, indices offset to the file's global 1-based numbering), then, when
/// `colliders` is not empty, the [`OBJ_COLLIDERS_MARKER`] line and the colliders as objects
/// the same way. The vertices of `objects` come first and in order, so the file's vertex order
/// is the concatenation of the objects' vertices.
pub fn write_obj_objects_to(
    w: &mut impl Write,
    objects: &[ObjObject],
    colliders: &[ObjObject],
) -> io::Result<()> {
    for o in objects.iter().chain(colliders) {
        check_object(o)?;
    }
    let count = |os: &[ObjObject], f: fn(&ObjObject) -> usize| os.iter().map(f).sum::<usize>();
    writeln!(
        w,
        "# written by Supple: {} vertices, {} triangles, {} polylines in {} objects",
        count(objects, |o| o.positions.len()),
        count(objects, |o| o.triangles.len()),
        count(objects, |o| o.curves.len()),
        objects.len()
    )?;
    let mut base = 0u64;
    for o in objects {
        write_object(w, o, base)?;
        base += o.positions.len() as u64;
    }
    if !colliders.is_empty() {
        writeln!(
            w,
            "{OBJ_COLLIDERS_MARKER} {} analytic colliders as meshes, not simulated",
            colliders.len()
        )?;
        for o in colliders {
            write_object(w, o, base)?;
            base += o.positions.len() as u64;
        }
    }
    Ok(())
}

/// One object's lines, its vertex indices offset by `base` (0-based) and written 1-based.
fn write_object(w: &mut impl Write, o: &ObjObject, base: u64) -> io::Result<()> {
    writeln!(w, "o {}", obj_name(o.name))?;
    for p in o.positions {
        writeln!(w, "v {} {} {}", p[0], p[1], p[2])?;
    }
    let at = |v: u32| base + v as u64 + 1;
    for t in o.triangles {
        writeln!(w, "f {} {} {}", at(t[0]), at(t[1]), at(t[2]))?;
    }
    let mut line = String::new();
    for c in o.curves {
        line.clear();
        line.push('l');
        for &v in c {
            line.push_str(&format!(" {}", at(v)));
        }
        writeln!(w, "{line}")?;
    }
    Ok(())
}
