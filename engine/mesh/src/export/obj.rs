//! Wavefront OBJ writer (vertices and triangles; exact shortest round-trip decimals).

use super::{check_tris, invalid, write_file};
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
    check_tris(triangles, positions.len())?;
    writeln!(
        w,
        "# written by Supple: {} vertices, {} triangles",
        positions.len(),
        triangles.len()
    )?;
    for p in positions {
        writeln!(w, "v {} {} {}", p[0], p[1], p[2])?;
    }
    for t in triangles {
        writeln!(w, "f {} {} {}", t[0] + 1, t[1] + 1, t[2] + 1)?;
    }
    Ok(())
}
