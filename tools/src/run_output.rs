//! What `supple run` writes, apart from report.json's content: the output paths checked before
//! simulating, each body's part of the exported surface, and the per-frame export in each
//! format (OBJ objects per body with optional collider meshes, PLY, VTU, a USD stage with one
//! prim per body and the colliders). Every file is written atomically
//! (`supple::mesh::export::write_atomically`).

use crate::colliders::{self, PlaneExtent};
use std::ops::Range;
use std::path::{Path, PathBuf};
use supple::mesh::export::{self as ex, ObjObject, UsdBody, UsdOptions, UsdWriter};
use supple::scene::{ExportFormat, Scene};
use supple::simulation::Simulation;

/// An error of `supple run`: exit code and one-line message.
pub type RunError = (i32, String);

/// The folders and files a run writes, checked by [`OutputPaths::check`] before simulating.
#[derive(Debug, Clone)]
pub struct OutputPaths {
    /// The output folder (`--out`, else `output.dir`, relative to the working folder).
    pub dir: PathBuf,
    /// `DIR/frames` when the export writes one file per frame (obj, ply, vtu).
    pub frames_dir: Option<PathBuf>,
    /// `DIR/frames.usda` for the usd export.
    pub usd: Option<PathBuf>,
    /// `DIR/report.json`.
    pub report: PathBuf,
    /// `DIR/preview.png`.
    pub preview: PathBuf,
    /// `--trace FILE`.
    pub trace: Option<PathBuf>,
}

/// Fails with exit code 2 naming `path`.
fn bad_path(path: &Path, why: impl std::fmt::Display) -> RunError {
    (2, format!("{}: {why}", path.display()))
}

/// Creates `dir` (and its parents) and checks that a file can be created in it, by creating and
/// removing a probe file.
fn writable_folder(dir: &Path) -> Result<(), RunError> {
    if dir.exists() && !dir.is_dir() {
        return Err(bad_path(dir, "exists and is not a folder"));
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| bad_path(dir, format!("cannot create the output folder: {e}")))?;
    let probe = dir.join(format!(".supple-probe-{}", std::process::id()));
    std::fs::File::create(&probe)
        .map_err(|e| bad_path(dir, format!("cannot write in this folder: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Checks that `path` can be written as a file: not a folder, its folder exists and is writable;
/// a device or pipe must open for writing.
fn writable_file(path: &Path) -> Result<(), RunError> {
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.is_dir() {
            return Err(bad_path(path, "is a folder, not a file"));
        }
        if !meta.is_file() {
            return std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map(drop)
                .map_err(|e| bad_path(path, format!("cannot write: {e}")));
        }
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(bad_path(
            path,
            format!(
                "cannot write: the folder {} does not exist",
                parent.display()
            ),
        ));
    }
    let probe = ex::temporary_path(path).map_err(|e| (2, e.to_string()))?;
    std::fs::File::create(&probe).map_err(|e| bad_path(path, format!("cannot write: {e}")))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

impl OutputPaths {
    /// The paths of a run of `scene` (its `output.dir` already overridden by `--out`).
    pub fn of(scene: &Scene, trace: Option<&Path>) -> OutputPaths {
        let dir = scene.output.dir.clone();
        let export = scene.output.export;
        OutputPaths {
            frames_dir: matches!(
                export,
                Some(ExportFormat::Obj | ExportFormat::Ply | ExportFormat::Vtu)
            )
            .then(|| dir.join("frames")),
            usd: (export == Some(ExportFormat::Usd)).then(|| dir.join("frames.usda")),
            report: dir.join("report.json"),
            preview: dir.join("preview.png"),
            trace: trace.map(Path::to_path_buf),
            dir,
        }
    }

    /// Creates the output folder (and `frames/` when the export needs it) and checks that every
    /// file of the run can be written, before anything is simulated: exit code 2 naming the
    /// path otherwise.
    pub fn check(&self) -> Result<(), RunError> {
        // The trace first: a bad trace path leaves no output folder behind.
        if let Some(t) = &self.trace {
            writable_file(t)?;
        }
        writable_folder(&self.dir)?;
        if let Some(f) = &self.frames_dir {
            writable_folder(f)?;
        }
        for p in [Some(&self.report), Some(&self.preview), self.usd.as_ref()]
            .into_iter()
            .flatten()
        {
            writable_file(p)?;
        }
        Ok(())
    }
}

/// One body's part of the simulation's export surface.
#[derive(Debug, Clone)]
pub struct BodySurface {
    /// The body's name (`body_<index>` when the scene's is empty).
    pub name: String,
    /// Its vertices in the export surface (`Simulation::surface_vertices` order).
    pub vertices: Range<usize>,
    /// Its triangles over its vertices (local indices).
    pub triangles: Vec<[u32; 3]>,
    /// Its polylines (rods) over its vertices (local indices).
    pub curves: Vec<Vec<u32>>,
    /// Each polyline's diameter (m).
    pub curve_widths: Vec<f64>,
}

/// Splits the simulation's export surface by body: bodies own contiguous ranges of model
/// vertices and the surface keeps model order, so each body's surface vertices are contiguous.
pub fn body_surfaces(sim: &Simulation) -> Vec<BodySurface> {
    let sv = sim.surface_vertices();
    let mut out = Vec::new();
    for (i, b) in sim.model().bodies.iter().enumerate() {
        let lo = sv.partition_point(|&v| v < b.vertices.start);
        let hi = sv.partition_point(|&v| v < b.vertices.end);
        if lo == hi {
            continue;
        }
        let inside = |v: u32| (lo..hi).contains(&(v as usize));
        let local = |v: u32| v - lo as u32;
        let triangles = sim
            .surface()
            .iter()
            .filter(|t| inside(t[0]))
            .map(|t| t.map(local))
            .collect();
        let (curves, curve_widths) = sim
            .curves()
            .iter()
            .zip(sim.curve_widths())
            .filter(|(c, _)| c.first().is_some_and(|&v| inside(v)))
            .map(|(c, w)| (c.iter().map(|&v| local(v)).collect(), *w))
            .unzip();
        let name = if b.name.trim().is_empty() {
            format!("body_{i}")
        } else {
            b.name.clone()
        };
        out.push(BodySurface {
            name,
            vertices: lo..hi,
            triangles,
            curves,
            curve_widths,
        });
    }
    out
}

/// The per-frame export of a run.
pub enum FrameExport {
    /// No export.
    None,
    /// One OBJ file per frame with an object per body (and the colliders when asked).
    Obj {
        /// `DIR/frames`.
        dir: PathBuf,
        /// The bodies' parts of the surface.
        bodies: Vec<BodySurface>,
        /// Also write the colliders as meshes, drawn around this extent.
        colliders: Option<PlaneExtent>,
        /// Frames written.
        written: u32,
    },
    /// One PLY (all bodies in one mesh) or VTU (the whole tet mesh) file per frame.
    Merged {
        /// `DIR/frames`.
        dir: PathBuf,
        /// `ply` or `vtu`.
        ext: &'static str,
        /// Frames written.
        written: u32,
    },
    /// One time-sampled USD stage.
    Usd {
        /// `DIR/frames.usda`.
        path: PathBuf,
        /// The stage being streamed.
        writer: Box<UsdWriter>,
    },
}

/// An I/O failure during the run: exit code 1.
fn io_err(e: std::io::Error) -> RunError {
    (1, e.to_string())
}

impl FrameExport {
    /// The export `paths` and the scene ask for; `with_colliders` adds collider meshes to OBJ
    /// frames. The USD stage gets the colliders always.
    pub fn new(
        scene: &Scene,
        sim: &Simulation,
        paths: &OutputPaths,
        with_colliders: bool,
    ) -> Result<FrameExport, RunError> {
        let extent = PlaneExtent::around(&sim.model().positions);
        Ok(match scene.output.export {
            None => FrameExport::None,
            Some(ExportFormat::Obj) => FrameExport::Obj {
                dir: paths.dir.join("frames"),
                bodies: body_surfaces(sim),
                colliders: with_colliders.then_some(extent),
                written: 0,
            },
            Some(ExportFormat::Ply) => FrameExport::Merged {
                dir: paths.dir.join("frames"),
                ext: "ply",
                written: 0,
            },
            Some(ExportFormat::Vtu) => FrameExport::Merged {
                dir: paths.dir.join("frames"),
                ext: "vtu",
                written: 0,
            },
            Some(ExportFormat::Usd) => {
                let path = paths.dir.join("frames.usda");
                let opts = UsdOptions {
                    fps: scene.simulation.frame_rate,
                    ..Default::default()
                };
                let bodies: Vec<UsdBody> = body_surfaces(sim)
                    .into_iter()
                    .map(|b| UsdBody {
                        name: b.name,
                        vertices: b.vertices.map(|v| v as u32).collect(),
                        triangles: b.triangles,
                        curves: b.curves,
                        curve_widths: b.curve_widths,
                    })
                    .collect();
                let writer = UsdWriter::bodies(&path, sim.surface_vertices().len(), &bodies, &opts)
                    .and_then(|w| {
                        w.with_colliders(&colliders::usd_colliders(&scene.colliders, extent))
                    })
                    .map_err(io_err)?;
                FrameExport::Usd {
                    path,
                    writer: Box::new(writer),
                }
            }
        })
    }

    /// Writes frame `frame` (simulated time `time`, s): `x` holds every model vertex, `surf`
    /// the export surface's.
    pub fn write(
        &mut self,
        frame: u32,
        time: f64,
        scene: &Scene,
        sim: &Simulation,
        x: &[[f64; 3]],
        surf: &[[f64; 3]],
    ) -> Result<(), RunError> {
        match self {
            FrameExport::None => Ok(()),
            FrameExport::Obj {
                dir,
                bodies,
                colliders,
                written,
            } => {
                let objects: Vec<ObjObject> = bodies
                    .iter()
                    .map(|b| ObjObject {
                        name: &b.name,
                        positions: &surf[b.vertices.clone()],
                        triangles: &b.triangles,
                        curves: &b.curves,
                    })
                    .collect();
                let meshes = colliders
                    .map(|e| colliders::collider_meshes(&scene.colliders, e, time))
                    .unwrap_or_default();
                let collider_objects: Vec<ObjObject> = meshes
                    .iter()
                    .map(|m| ObjObject {
                        name: &m.name,
                        positions: &m.positions,
                        triangles: &m.triangles,
                        curves: &[],
                    })
                    .collect();
                let path = dir.join(format!("frame_{frame:04}.obj"));
                ex::write_obj_objects(&path, &objects, &collider_objects).map_err(io_err)?;
                *written += 1;
                Ok(())
            }
            FrameExport::Merged { dir, ext, written } => {
                let path = dir.join(format!("frame_{frame:04}.{ext}"));
                if *ext == "vtu" {
                    let mesh = supple::mesh::TetMesh {
                        positions: x.to_vec(),
                        tets: sim.model().tets.clone(),
                    };
                    ex::write_tet_mesh(&path, &mesh)
                } else {
                    let mesh = supple::mesh::TriMesh {
                        positions: surf.to_vec(),
                        triangles: sim.surface().to_vec(),
                    };
                    ex::write_surface_with_curves(&path, &mesh, sim.curves())
                }
                .map_err(io_err)?;
                *written += 1;
                Ok(())
            }
            FrameExport::Usd { writer, .. } => writer.write_frame(surf).map_err(io_err),
        }
    }

    /// Finishes the export (assembles the USD stage) and says what was written, e.g.
    /// `out/frames/frame_0000.obj … frame_0045.obj (46 frames; objects cube, cloth)`; `None`
    /// when nothing was.
    pub fn finish(self) -> Result<Option<String>, RunError> {
        let files = |dir: &Path, ext: &str, n: u32| {
            (n > 0).then(|| {
                format!(
                    "{} … frame_{:04}.{ext} ({n} frames)",
                    dir.join(format!("frame_0000.{ext}")).display(),
                    n - 1
                )
            })
        };
        Ok(match self {
            FrameExport::None => None,
            FrameExport::Obj {
                dir,
                bodies,
                colliders,
                written,
            } => files(&dir, "obj", written).map(|s| {
                let names: Vec<&str> = bodies.iter().map(|b| b.name.as_str()).collect();
                let extra = if colliders.is_some() {
                    " and the colliders"
                } else {
                    ""
                };
                format!("{s} with objects {}{extra}", names.join(", "))
            }),
            FrameExport::Merged { dir, ext, written } => files(&dir, ext, written),
            FrameExport::Usd { path, writer } => {
                let frames = writer.frames();
                let prims = writer.prim_paths();
                if frames == 0 {
                    return Ok(None);
                }
                writer.finish().map_err(io_err)?;
                Some(format!(
                    "{} ({frames} time samples; prims {})",
                    path.display(),
                    prims.join(", ")
                ))
            }
        })
    }
}
