//! Binary little-endian PLY writer for triangle meshes, with polylines as an `edge` element.

use super::{check_curves, check_tris, invalid, write_file};
use crate::model::TriMesh;
use std::io::{self, Write};
use std::path::Path;

/// Scalar type of the PLY vertex coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlyPrecision {
    /// `float` (4 bytes): what most viewers expect.
    F32,
    /// `double` (8 bytes): exact.
    F64,
}

/// Writes `mesh` as binary little-endian PLY (`vertex` x/y/z, `face` `vertex_indices` as a
/// `uchar`-counted list of `int`).
pub fn write_ply(
    path: impl AsRef<Path>,
    mesh: &TriMesh,
    precision: PlyPrecision,
) -> io::Result<()> {
    let path = path.as_ref();
    check_tris(&mesh.triangles, mesh.positions.len()).map_err(|e| invalid(path, e))?;
    if mesh.positions.len() > i32::MAX as usize {
        return Err(invalid(path, "too many vertices for PLY int indices"));
    }
    write_file(path, |w| {
        write_ply_to(w, &mesh.positions, &mesh.triangles, precision)
    })
}

/// Writes binary PLY for `positions` and `triangles` to any writer.
pub fn write_ply_to(
    w: &mut impl Write,
    positions: &[[f64; 3]],
    triangles: &[[u32; 3]],
    precision: PlyPrecision,
) -> io::Result<()> {
    write_ply_with_curves_to(w, positions, triangles, &[], precision)
}

/// Writes binary PLY for `positions`, `triangles` and polylines `curves` (each an ordered list
/// of at least two vertex indices): when there are curves, their segments follow the faces as
/// an `edge` element with `int` properties `vertex1` and `vertex2`.
pub fn write_ply_with_curves_to(
    w: &mut impl Write,
    positions: &[[f64; 3]],
    triangles: &[[u32; 3]],
    curves: &[Vec<u32>],
    precision: PlyPrecision,
) -> io::Result<()> {
    check_tris(triangles, positions.len())?;
    check_curves(curves, positions.len())?;
    if positions.len() > i32::MAX as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "too many vertices for PLY int indices",
        ));
    }
    let ty = if precision == PlyPrecision::F32 {
        "float"
    } else {
        "double"
    };
    write!(
        w,
        "ply\nformat binary_little_endian 1.0\ncomment written by Supple\nelement vertex {}\nproperty {ty} x\nproperty {ty} y\nproperty {ty} z\nelement face {}\nproperty list uchar int vertex_indices\n",
        positions.len(),
        triangles.len()
    )?;
    let edges: usize = curves.iter().map(|c| c.len() - 1).sum();
    if edges > 0 {
        write!(
            w,
            "element edge {edges}\nproperty int vertex1\nproperty int vertex2\n"
        )?;
    }
    writeln!(w, "end_header")?;
    let mut buf = Vec::with_capacity(64 * 1024);
    for p in positions {
        for c in p {
            match precision {
                PlyPrecision::F32 => buf.extend_from_slice(&(*c as f32).to_le_bytes()),
                PlyPrecision::F64 => buf.extend_from_slice(&c.to_le_bytes()),
            }
        }
        if buf.len() >= 60 * 1024 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    for t in triangles {
        buf.push(3);
        for &v in t {
            buf.extend_from_slice(&(v as i32).to_le_bytes());
        }
        if buf.len() >= 60 * 1024 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    for c in curves {
        for s in c.windows(2) {
            buf.extend_from_slice(&(s[0] as i32).to_le_bytes());
            buf.extend_from_slice(&(s[1] as i32).to_le_bytes());
            if buf.len() >= 60 * 1024 {
                w.write_all(&buf)?;
                buf.clear();
            }
        }
    }
    w.write_all(&buf)
}
