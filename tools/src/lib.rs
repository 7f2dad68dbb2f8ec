//! The `supple` command-line tool as a library: the `supple` binary and the Python extension
//! (`pip install ./python` installs a `supple` command) run the same code ([`cli_main`]), and
//! the Python viewer writes its page with [`write_dir_html`].
#![deny(missing_docs)]

mod bench_bal;
mod bench_primitives;
mod bench_proximity;
mod bench_recovery;
mod bench_scene;
mod bench_soak;
mod cmd_check;
mod cmd_mesh;
mod cmd_run;
mod colliders;
mod preview;
mod run_meta;
mod run_output;
mod run_warnings;
mod stats;
mod sweep;
mod view;

use clap::{Parser, Subcommand};
use std::ffi::OsString;

/// Supple: penetration-free deformable-body simulation on Vulkan compute.
#[derive(Debug, Parser)]
#[command(name = "supple", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List Vulkan devices and their capabilities (SUPPLE_DEVICE picks one by index or name).
    Devices {
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Benchmarks that print their figures (JSON with --json).
    Bench {
        #[command(subcommand)]
        which: BenchCommand,
    },
    /// Simulate a scene (the embedded default scene when none is given).
    Run(cmd_run::Args),
    /// Mesh tools: inspect, convert and tetrahedralize meshes.
    Mesh {
        #[command(subcommand)]
        cmd: cmd_mesh::MeshCommand,
    },
    /// Check exported OBJ frames (DIR/frames/frame_NNNN.obj of a run, or DIR/frame_NNNN.obj) for
    /// intersections within each frame, collisions between consecutive frames and, with
    /// --scene, vertices inside the scene's colliders (exit code 1 if any, 2 on bad input).
    CheckFrames(cmd_check::Args),
    /// Write one self-contained HTML page (WebGL2, no network) that plays a run's frames with
    /// its colliders and statistics (OUT_DIR/view.html by default).
    View(view::Args),
    /// Run a parameter sweep (a grid or list of --set overrides) as `supple run` processes;
    /// `supple sweep collect` merges the reports into one table.
    Sweep(sweep::Args),
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// The barrier-augmented Lagrangian method's experiments (issue 23): the masonry arch's χ
    /// sweep, the twisted pair's turns, the h sweep, the CPU reference's statistics and the BAL
    /// graphs' GPU times, as JSON with the paper's claims quoted.
    Bal(bench_bal::Args),
    /// GPU primitives (scan, reduce, compact, radix sort) with bandwidth and dispatch baselines.
    Primitives(bench_primitives::Args),
    /// Proximity search (spatial hashing + exact distances) and a CCD batch on a mesh.
    Proximity(bench_proximity::Args),
    /// Collision detection and shortest-path-to-boundary queries on self-intersecting shapes,
    /// with and without infeasible-region culling.
    Recovery(bench_recovery::Args),
    /// Time a scene frame by frame (milliseconds per frame, solver iterations).
    Scene(bench_scene::Args),
    /// Step a small scene many frames with each solver: resident and device memory and
    /// milliseconds per frame early and at the end (leaks, slowdowns).
    Soak(bench_soak::Args),
}

fn devices(json: bool) -> Result<(), String> {
    let all = supple::vk::list_devices().map_err(|e| e.to_string())?;
    let options = supple::ContextOptions::from_env();
    let selected = supple::Context::new(supple::ContextOptions {
        validation: false,
        pipeline_cache: None,
        ..options
    })
    .ok()
    .map(|c| c.caps().index);
    if json {
        let v = serde_json::json!({ "devices": all, "selected": selected });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| e.to_string())?
        );
    } else {
        if all.is_empty() {
            println!("no Vulkan devices found (install mesa-vulkan-drivers for lavapipe)");
        }
        for c in &all {
            let mark = if Some(c.index) == selected { "*" } else { " " };
            println!(
                "{mark} [{}] {} ({}, Vulkan {}, {})",
                c.index, c.name, c.device_type, c.api_version, c.driver
            );
            println!(
                "      subgroup {} | f32 atomic add {} | f64 {} | f64 atomics {} | timestamps {} ({} ns/tick) | max storage {} MiB | push constants {} B | unified memory {}",
                c.subgroup_size,
                c.f32_atomic_add,
                c.f64,
                c.f64_atomic_add,
                c.timestamps,
                c.timestamp_period_ns,
                c.max_storage_buffer_range >> 20,
                c.max_push_constants_size,
                c.unified_memory
            );
            if let Some(r) = &c.unsuitable_reason {
                println!("      not usable: {r}");
            }
        }
    }
    Ok(())
}

/// Exit status of a command that fails with `(code, message)`.
fn coded(result: Result<(), (i32, String)>) -> u8 {
    match result {
        Ok(()) => 0,
        Err((code, msg)) => {
            eprintln!("error: {msg}");
            code.clamp(1, 255) as u8
        }
    }
}

pub use view::{write_dir_html, ViewError, ViewOptions, Written};

/// Runs the command line `args` (the first item is the program name) and returns the exit
/// status: 0 on success, 2 for bad input, 1 for other failures (what `supple` exits with).
pub fn cli_main<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print and succeed; usage errors print and exit 2.
            let _ = e.print();
            return e.exit_code().clamp(0, 255) as u8;
        }
    };
    run_command(cli.command)
}

fn run_command(command: Command) -> u8 {
    let result = match command {
        Command::Devices { json } => devices(json),
        Command::Bench {
            which: BenchCommand::Primitives(args),
        } => bench_primitives::run(&args),
        Command::Bench {
            which: BenchCommand::Proximity(args),
        } => bench_proximity::run(&args),
        Command::Bench {
            which: BenchCommand::Recovery(args),
        } => bench_recovery::run(&args),
        Command::Bench {
            which: BenchCommand::Scene(args),
        } => match bench_scene::run(&args) {
            Ok(()) => Ok(()),
            Err((code, msg)) => {
                eprintln!("error: {msg}");
                return code.clamp(1, 255) as u8;
            }
        },
        Command::Bench {
            which: BenchCommand::Bal(args),
        } => match bench_bal::run(&args) {
            Ok(()) => Ok(()),
            Err((code, msg)) => {
                eprintln!("error: {msg}");
                return code.clamp(1, 255) as u8;
            }
        },
        Command::Bench {
            which: BenchCommand::Soak(args),
        } => match bench_soak::run(&args) {
            Ok(()) => Ok(()),
            Err((code, msg)) => {
                eprintln!("error: {msg}");
                return code.clamp(1, 255) as u8;
            }
        },
        Command::Run(args) => match cmd_run::run(&args) {
            Ok(()) => Ok(()),
            Err((code, msg)) => {
                eprintln!("error: {msg}");
                return code.clamp(1, 255) as u8;
            }
        },
        Command::Mesh { cmd } => return cmd_mesh::run(cmd).clamp(0, 255) as u8,
        Command::CheckFrames(args) => return cmd_check::run(&args),
        Command::View(args) => return coded(view::run(&args)),
        Command::Sweep(args) => return coded(sweep::run(&args)),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
