//! Export of simulation results: per-frame surface meshes as OBJ and binary PLY (vertex order
//! fixed by the topology, so frames line up), tetrahedral meshes as VTK `.vtu` and Gmsh `.msh`
//! 4.1, and time-sampled USD stages (`.usda`, `UsdGeom.Mesh` plus optionally `UsdGeom.TetMesh`)
//! written frame by frame without holding all frames in memory. Polylines (rods) over the same
//! vertices go along as OBJ `l` lines, a PLY `edge` element and a `UsdGeom.BasisCurves` prim.
//!
//! Every writer returns [`std::io::Error`]s whose message starts with the path; none panics.
//! Files are written atomically ([`write_atomically`]): into a temporary file in the same folder,
//! renamed over the target once complete, so a killed process never leaves a half-written file
//! under the final name.

mod msh;
mod obj;
mod ply;
mod usd;
mod vtu;

pub use msh::{write_msh, write_msh_to, MshEncoding};
pub use obj::{
    write_obj, write_obj_objects, write_obj_objects_to, write_obj_to, write_obj_with_curves_to,
    ObjObject, OBJ_COLLIDERS_MARKER,
};
pub use ply::{write_ply, write_ply_to, write_ply_with_curves_to, PlyPrecision};
pub use usd::{
    write_usda_surface, write_usda_tet, UsdBody, UsdCollider, UsdColliderShape, UsdOptions,
    UsdWriter,
};
pub use vtu::{write_vtu, write_vtu_to, VtuEncoding};

use crate::model::{TetMesh, TriMesh};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Wraps an I/O error so its message names `path`.
pub(crate) fn with_path(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// An `InvalidInput` error naming `path`.
pub(crate) fn invalid(path: &Path, msg: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{}: {msg}", path.display()),
    )
}

/// Creates `path` atomically (see [`write_atomically`]) and runs `f` on a buffered writer;
/// errors name the path.
pub(crate) fn write_file(
    path: &Path,
    f: impl FnOnce(&mut io::BufWriter<std::fs::File>) -> io::Result<()>,
) -> io::Result<()> {
    write_atomically(path, f)
}

/// The temporary name [`write_atomically`] writes `path` under: `.NAME.PID.supple-tmp` in the
/// same folder (hidden, and never matching a frame file's pattern).
pub fn temporary_path(path: &Path) -> io::Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a file name", path.display()),
        )
    })?;
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".{}.supple-tmp", std::process::id()));
    Ok(path.with_file_name(tmp))
}

/// Writes `path` through `f` (given a buffered writer) atomically: into [`temporary_path`] in
/// the same folder, flushed, then renamed over `path`, so readers and a killed process never
/// see a half-written file under its final name; on failure the temporary file is removed and
/// an existing `path` is left as it was. A `path` that exists and is not a regular file (a
/// device such as `/dev/null` or `/dev/full`, a pipe) is written in place instead, as renaming
/// over it would replace it. Errors name `path` (a full disk included); a folder is refused.
pub fn write_atomically(
    path: impl AsRef<Path>,
    f: impl FnOnce(&mut io::BufWriter<std::fs::File>) -> io::Result<()>,
) -> io::Result<()> {
    let path = path.as_ref();
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(invalid(path, "is a folder, not a file"));
        }
        if !meta.is_file() {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| with_path(path, e))?;
            let mut w = io::BufWriter::with_capacity(1 << 20, file);
            return f(&mut w)
                .and_then(|()| w.flush())
                .map_err(|e| with_path(path, e));
        }
    }
    let tmp = temporary_path(path)?;
    let written = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut w = io::BufWriter::with_capacity(1 << 20, file);
        f(&mut w)?;
        w.flush()?;
        drop(w);
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map_err(|e| with_path(path, e))
}

/// Checks that `triangles` index into `n` vertices.
pub(crate) fn check_tris(triangles: &[[u32; 3]], n: usize) -> io::Result<()> {
    if let Some((i, _)) = triangles
        .iter()
        .enumerate()
        .find(|(_, t)| t.iter().any(|&v| v as usize >= n))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("triangle {i} references a vertex beyond {n}"),
        ));
    }
    Ok(())
}

/// Checks that every polyline of `curves` has at least two vertices, all below `n`.
pub(crate) fn check_curves(curves: &[Vec<u32>], n: usize) -> io::Result<()> {
    for (i, c) in curves.iter().enumerate() {
        let msg = if c.len() < 2 {
            format!("polyline {i} has {} vertices (at least 2 needed)", c.len())
        } else if c.iter().any(|&v| v as usize >= n) {
            format!("polyline {i} references a vertex beyond {n}")
        } else {
            continue;
        };
        return Err(io::Error::new(io::ErrorKind::InvalidInput, msg));
    }
    Ok(())
}

/// Checks that `tets` index into `n` vertices.
pub(crate) fn check_tets(tets: &[[u32; 4]], n: usize) -> io::Result<()> {
    if let Some((i, _)) = tets
        .iter()
        .enumerate()
        .find(|(_, t)| t.iter().any(|&v| v as usize >= n))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("tet {i} references a vertex beyond {n}"),
        ));
    }
    Ok(())
}

/// The boundary surface of a tet mesh with only the vertices it uses, plus for each surface
/// vertex its index in the tet mesh (ascending).
pub fn boundary_surface(mesh: &TetMesh) -> (TriMesh, Vec<u32>) {
    mesh.boundary_surface_compact()
}

/// Lower-case extension of `path`.
fn ext(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Writes a tet mesh choosing the format by extension: `.vtu` (appended raw binary), `.msh`
/// (Gmsh 4.1 binary), `.usda` (one-frame USD stage with `Mesh` and `TetMesh` prims), or the
/// boundary surface as `.obj` / `.ply`.
pub fn write_tet_mesh(path: impl AsRef<Path>, mesh: &TetMesh) -> io::Result<()> {
    let path = path.as_ref();
    match ext(path).as_str() {
        "vtu" => write_vtu(path, mesh, VtuEncoding::Raw),
        "msh" => write_msh(path, mesh, MshEncoding::Binary),
        "usda" => write_usda_tet(
            path,
            mesh,
            &[&mesh.positions],
            &UsdOptions {
                tet_mesh: true,
                ..UsdOptions::default()
            },
        ),
        "obj" | "ply" => {
            let (s, _) = boundary_surface(mesh);
            write_surface(path, &s)
        }
        e => Err(invalid(
            path,
            format!("cannot write tet meshes as '.{e}' (use .vtu, .msh, .usda, .obj or .ply)"),
        )),
    }
}

/// Writes a triangle mesh choosing the format by extension: `.obj`, `.ply` (binary little-endian,
/// float32) or `.usda` (one frame).
pub fn write_surface(path: impl AsRef<Path>, mesh: &TriMesh) -> io::Result<()> {
    let path = path.as_ref();
    match ext(path).as_str() {
        "obj" => write_obj(path, mesh),
        "ply" => write_ply(path, mesh, PlyPrecision::F32),
        "usda" => write_usda_surface(
            path,
            &mesh.triangles,
            &[&mesh.positions],
            &UsdOptions::default(),
        ),
        e => Err(invalid(
            path,
            format!("cannot write surfaces as '.{e}' (use .obj, .ply or .usda)"),
        )),
    }
}

/// Writes a triangle mesh and polylines `curves` over its vertices, choosing the format by
/// extension: `.obj` (`l` lines), `.ply` (an `edge` element) or `.usda` (one frame, the curves
/// as a `BasisCurves` prim without widths). With no curves it writes what
/// [`write_surface`] writes.
pub fn write_surface_with_curves(
    path: impl AsRef<Path>,
    mesh: &TriMesh,
    curves: &[Vec<u32>],
) -> io::Result<()> {
    let path = path.as_ref();
    let n = mesh.positions.len();
    check_tris(&mesh.triangles, n).map_err(|e| invalid(path, e))?;
    check_curves(curves, n).map_err(|e| invalid(path, e))?;
    match ext(path).as_str() {
        "obj" => write_file(path, |w| {
            write_obj_with_curves_to(w, &mesh.positions, &mesh.triangles, curves)
        }),
        "ply" => write_file(path, |w| {
            write_ply_with_curves_to(
                w,
                &mesh.positions,
                &mesh.triangles,
                curves,
                PlyPrecision::F32,
            )
        }),
        "usda" => {
            let mut u = UsdWriter::surface(path, &mesh.triangles, n, &UsdOptions::default())?
                .with_curves(curves, &[])?;
            u.write_frame(&mesh.positions)?;
            u.finish()
        }
        e => Err(invalid(
            path,
            format!("cannot write surfaces as '.{e}' (use .obj, .ply or .usda)"),
        )),
    }
}

/// Surface file format of a [`FrameWriter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameFormat {
    /// Wavefront OBJ (text, shortest round-trip decimal).
    Obj,
    /// Binary little-endian PLY with float32 coordinates.
    Ply,
    /// Binary little-endian PLY with float64 coordinates.
    PlyF64,
}

/// Writes one surface file per frame (`{stem}_{frame:05}.obj|ply` in a directory) with a fixed
/// triangle topology, so vertex `i` is the same material point in every frame.
#[derive(Debug, Clone)]
pub struct FrameWriter {
    dir: PathBuf,
    stem: String,
    format: FrameFormat,
    topology: TriMesh,
    curves: Vec<Vec<u32>>,
    next: usize,
}

impl FrameWriter {
    /// A writer for frames of `topology` (its triangles and vertex count are reused; its positions
    /// are ignored) into `dir`, which must exist.
    pub fn new(
        dir: impl AsRef<Path>,
        stem: &str,
        topology: &TriMesh,
        format: FrameFormat,
    ) -> io::Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        check_tris(&topology.triangles, topology.positions.len())
            .map_err(|e| with_path(&dir, e))?;
        Ok(FrameWriter {
            dir,
            stem: stem.to_string(),
            format,
            topology: TriMesh {
                positions: topology.positions.clone(),
                triangles: topology.triangles.clone(),
            },
            curves: Vec::new(),
            next: 0,
        })
    }

    /// Also writes these polylines over the topology's vertices in every frame (OBJ `l` lines,
    /// PLY `edge` element).
    pub fn with_curves(mut self, curves: &[Vec<u32>]) -> io::Result<Self> {
        check_curves(curves, self.topology.positions.len()).map_err(|e| with_path(&self.dir, e))?;
        self.curves = curves.to_vec();
        Ok(self)
    }

    /// Path of frame `frame`.
    pub fn frame_path(&self, frame: usize) -> PathBuf {
        let e = if self.format == FrameFormat::Obj {
            "obj"
        } else {
            "ply"
        };
        self.dir.join(format!("{}_{frame:05}.{e}", self.stem))
    }

    /// Writes the next frame with these vertex positions (same count and order as the topology)
    /// and returns its path.
    pub fn write_frame(&mut self, positions: &[[f64; 3]]) -> io::Result<PathBuf> {
        let path = self.frame_path(self.next);
        if positions.len() != self.topology.positions.len() {
            return Err(invalid(
                &path,
                format!(
                    "frame has {} positions, topology has {}",
                    positions.len(),
                    self.topology.positions.len()
                ),
            ));
        }
        let tris = &self.topology.triangles;
        let curves = &self.curves;
        match self.format {
            FrameFormat::Obj => write_file(&path, |w| {
                write_obj_with_curves_to(w, positions, tris, curves)
            })?,
            FrameFormat::Ply => write_file(&path, |w| {
                write_ply_with_curves_to(w, positions, tris, curves, PlyPrecision::F32)
            })?,
            FrameFormat::PlyF64 => write_file(&path, |w| {
                write_ply_with_curves_to(w, positions, tris, curves, PlyPrecision::F64)
            })?,
        }
        self.next += 1;
        Ok(path)
    }

    /// Number of frames written so far.
    pub fn frames(&self) -> usize {
        self.next
    }
}
