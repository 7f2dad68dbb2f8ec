//! Wavefront OBJ writer (vertices, triangles and `l` polylines; exact shortest round-trip
//! decimals).

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
