//! `supple`: the command-line tool (devices, benchmarks, mesh tools, runs, viewer, sweeps).

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
use std::process::ExitCode;

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
fn coded(result: Result<(), (i32, String)>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(code.clamp(1, 255) as u8)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
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
                return ExitCode::from(code as u8);
            }
        },
        Command::Bench {
            which: BenchCommand::Soak(args),
        } => match bench_soak::run(&args) {
            Ok(()) => Ok(()),
            Err((code, msg)) => {
                eprintln!("error: {msg}");
                return ExitCode::from(code as u8);
            }
        },
        Command::Run(args) => match cmd_run::run(&args) {
            Ok(()) => Ok(()),
            Err((code, msg)) => {
                eprintln!("error: {msg}");
                return ExitCode::from(code as u8);
            }
        },
        Command::Mesh { cmd } => return ExitCode::from(cmd_mesh::run(cmd).clamp(0, 255) as u8),
        Command::CheckFrames(args) => return ExitCode::from(cmd_check::run(&args)),
        Command::View(args) => return coded(view::run(&args)),
        Command::Sweep(args) => return coded(sweep::run(&args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
