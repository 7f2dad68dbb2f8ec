//! `supple mesh ...` subcommands (info, convert, tetrahedralize).
//!
//! Every failure prints exactly one line `error: FILE:LINE: what is wrong` on stderr and exits
//! with code 2.

use std::path::{Path, PathBuf};
use supple_mesh::{Loaded, MeshInfo};

/// Mesh tool subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum MeshCommand {
    /// Print format, counts, volume, bounding box, inverted tets and warnings of a mesh file.
    Info {
        /// Mesh file (.msh, .node/.ele/.face, .mesh, .vtk, .vtu, .obj, .ply, .stl).
        file: PathBuf,
        /// Print exactly one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Convert a mesh file to another format, chosen by the output extension
    /// (tet meshes: .vtu, .msh, .usda, or their boundary as .obj/.ply; surfaces: .obj, .ply, .usda).
    Convert {
        /// Input mesh file.
        input: PathBuf,
        /// Output mesh file.
        output: PathBuf,
    },
    /// Fill a closed surface (.obj, .ply, .stl, or a tet mesh's boundary) with a good-quality tet
    /// mesh by isosurface stuffing; writes .vtu, .msh or .usda by the output extension.
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

fn load(path: &Path) -> Result<Loaded, i32> {
    supple_mesh::load(path).map_err(fail)
}

/// Runs a mesh subcommand and returns the process exit code.
pub fn run(cmd: MeshCommand) -> i32 {
    match cmd {
        MeshCommand::Info { file, json } => info(&file, json),
        MeshCommand::Convert { input, output } => convert(&input, &output),
        MeshCommand::Tetrahedralize {
            input,
            output,
            resolution,
        } => supple_mesh::tetrahedralize::run_cli(&input, &output, resolution),
    }
}

fn info(file: &Path, json: bool) -> i32 {
    let loaded = match load(file) {
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
        println!("volume:            {:.12e} m^3", info.volume);
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

fn convert(input: &Path, output: &Path) -> i32 {
    let loaded = match load(input) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let res = if !loaded.tets.tets.is_empty() {
        supple_mesh::export::write_tet_mesh(output, &loaded.tets)
    } else if !loaded.surface.triangles.is_empty() {
        supple_mesh::export::write_surface(output, &loaded.surface)
    } else {
        return fail(format!(
            "{}: the file holds neither tetrahedra nor triangles; nothing to convert",
            input.display()
        ));
    };
    match res {
        Ok(()) => {
            for w in &loaded.warnings {
                eprintln!("warning: {}: {w}", input.display());
            }
            0
        }
        // The writers' messages start with the output path.
        Err(e) => fail(e),
    }
}
