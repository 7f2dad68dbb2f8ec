//! `supple mesh ...` subcommands (info, convert, tetrahedralize).
//!
//! Every failure prints exactly one line `error: FILE:LINE: what is wrong` on stderr and exits
//! with code 2.

use std::path::{Path, PathBuf};
use supple_mesh::info::VolumeSource;
use supple_mesh::{Loaded, MeshInfo};

/// Mesh tool subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum MeshCommand {
    /// Print format, counts, volume (tets, or enclosed by a closed surface), surface edge checks,
    /// bounding box, inverted tets and warnings of a mesh file.
    Info {
        /// Mesh file (.msh, .node/.ele/.face, .mesh, .vtk, .vtu, .obj, .ply, .stl, .usda).
        file: PathBuf,
        /// Print exactly one JSON object on stdout.
        #[arg(long)]
        json: bool,
        /// USD files: read only this prim (e.g. /World/ball) and the prims under it.
        #[arg(long, value_name = "PRIM_PATH")]
        prim: Option<String>,
    },
    /// Convert a mesh file to another format, chosen by the output extension
    /// (tet meshes: .vtu, .msh, .usda, or their boundary as .obj/.ply; surfaces: .obj, .ply, .usda).
    Convert {
        /// Input mesh file.
        input: PathBuf,
        /// Output mesh file.
        output: PathBuf,
        /// USD input: read only this prim (e.g. /World/ball) and the prims under it.
        #[arg(long, value_name = "PRIM_PATH")]
        prim: Option<String>,
    },
    /// Fill a closed surface (.obj, .ply, .stl, or a tet mesh's boundary) with a good-quality tet
    /// mesh by isosurface stuffing; writes .vtu, .msh or .usda by the output extension (the
    /// formats that hold tets).
    Tetrahedralize {
        /// Closed, oriented surface mesh file.
        input: PathBuf,
        /// Output tet mesh file (.vtu, .msh, .usda).
        output: PathBuf,
        /// Lattice cells along the longest bounding-box axis.
        #[arg(long, default_value_t = 30)]
        resolution: usize,
    },
}

/// Prints the one-line error and returns exit code 2.
fn fail(msg: impl std::fmt::Display) -> i32 {
    let line = msg.to_string().replace(['\n', '\r'], " ");
    eprintln!("error: {line}");
    2
}

/// Output extensions that hold tetrahedra (what `supple_mesh::export::write_tet_mesh` writes
/// with the tets; `.obj` and `.ply` get only the boundary surface).
pub const TET_FORMATS: [&str; 3] = ["vtu", "msh", "usda"];

fn load(path: &Path, prim: Option<&str>) -> Result<Loaded, i32> {
    match prim {
        Some(p) => supple_mesh::load_usd_prim(path, p),
        None => supple_mesh::load(path),
    }
    .map_err(fail)
}

/// Lower-case extension of `path` ("" when none).
fn extension(path: &Path) -> String {
    path.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Runs a mesh subcommand and returns the process exit code.
pub fn run(cmd: MeshCommand) -> i32 {
    match cmd {
        MeshCommand::Info { file, json, prim } => info(&file, json, prim.as_deref()),
        MeshCommand::Convert {
            input,
            output,
            prim,
        } => convert(&input, &output, prim.as_deref()),
        MeshCommand::Tetrahedralize {
            input,
            output,
            resolution,
        } => {
            // Refused before any work: a surface format would silently drop the tets.
            let ext = extension(&output);
            if !TET_FORMATS.contains(&ext.as_str()) {
                return fail(format!(
                    "{}: '.{ext}' cannot hold tetrahedra; write the tet mesh as {}",
                    output.display(),
                    TET_FORMATS.map(|e| format!(".{e}")).join(", ")
                ));
            }
            supple_mesh::tetrahedralize::run_cli(&input, &output, resolution)
        }
    }
}

/// The volume line of `mesh info`'s text output.
fn volume_line(info: &MeshInfo) -> String {
    match (info.volume, info.volume_source) {
        (Some(v), VolumeSource::Tets) => format!("{v:.12e} m^3 (sum over the tets)"),
        (Some(v), _) => format!("{v:.12e} m^3 (enclosed by the closed surface)"),
        (None, _) if info.surface_triangles == 0 => "none (no tets, no triangles)".into(),
        (None, _) => "none (the surface is not closed and consistently oriented)".into(),
    }
}

fn info(file: &Path, json: bool, prim: Option<&str>) -> i32 {
    let loaded = match load(file, prim) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let info = MeshInfo::from_loaded(&loaded);
    if json {
        match serde_json::to_string(&info) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                return fail(format!(
                    "{}: cannot serialise the summary: {e}",
                    file.display()
                ))
            }
        }
    } else {
        println!("file:              {}", file.display());
        println!("format:            {}", info.format);
        println!("vertices:          {}", info.vertices);
        println!("tets:              {}", info.tets);
        println!("surface triangles: {}", info.surface_triangles);
        println!("volume:            {}", volume_line(&info));
        println!(
            "surface edges:     {} boundary, {} non-manifold, {} misoriented{}",
            info.boundary_edges,
            info.nonmanifold_edges,
            info.misoriented_edges,
            if info.surface_triangles > 0
                && info.boundary_edges + info.nonmanifold_edges + info.misoriented_edges == 0
            {
                " (closed)"
            } else {
                ""
            }
        );
        println!(
            "bbox min:          [{}, {}, {}]",
            info.bbox[0][0], info.bbox[0][1], info.bbox[0][2]
        );
        println!(
            "bbox max:          [{}, {}, {}]",
            info.bbox[1][0], info.bbox[1][1], info.bbox[1][2]
        );
        println!("inverted tets:     {}", info.inverted_tets);
        if !loaded.polylines.is_empty() {
            println!("polylines:         {}", loaded.polylines.len());
        }
        if loaded.ignored_elements > 0 {
            println!("ignored elements:  {}", loaded.ignored_elements);
        }
        if info.warnings.is_empty() {
            println!("warnings:          none");
        } else {
            println!("warnings:");
            for w in &info.warnings {
                println!("  - {w}");
            }
        }
    }
    0
}

fn convert(input: &Path, output: &Path, prim: Option<&str>) -> i32 {
    let loaded = match load(input, prim) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let has_tets = !loaded.tets.tets.is_empty();
    let res = if has_tets {
        supple_mesh::export::write_tet_mesh(output, &loaded.tets)
    } else if !loaded.surface.triangles.is_empty() || !loaded.polylines.is_empty() {
        supple_mesh::export::write_surface_with_curves(output, &loaded.surface, &loaded.polylines)
    } else {
        return fail(format!(
            "{}: the file holds neither tetrahedra nor triangles nor polylines; nothing to convert",
            input.display()
        ));
    };
    match res {
        Ok(()) => {
            for w in &loaded.warnings {
                eprintln!("warning: {}: {w}", input.display());
            }
            if has_tets && !TET_FORMATS.contains(&extension(output).as_str()) {
                eprintln!(
                    "note: {} holds the boundary surface only: its format cannot hold the {} tets (use {} for them)",
                    output.display(),
                    loaded.tets.tets.len(),
                    TET_FORMATS.map(|e| format!(".{e}")).join(", ")
                );
            }
            0
        }
        // The writers' messages start with the output path.
        Err(e) => fail(e),
    }
}
