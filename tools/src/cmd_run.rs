//! `supple run [SCENE]`: simulates a scene (or the embedded default scene), writes per-frame
//! surfaces, a `report.json` and a `preview.png` of chosen frames, and prints progress.

use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;
use supple::scene::{ExportFormat, Scene};
use supple::simulation::{FrameStats, SimError, Simulation};

/// The scene `supple run` simulates when none is given (`scenes/default.toml`).
pub const DEFAULT_SCENE: &str = include_str!("../../scenes/default.toml");

/// Options of `supple run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scene file (TOML); the embedded default scene when omitted.
    scene: Option<PathBuf>,
    /// Number of frames (overrides simulation.frames).
    #[arg(long)]
    frames: Option<u32>,
    /// Output folder (overrides output.dir).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Per-frame export: obj, ply, usd or vtu (overrides output.export); html writes
    /// DIR/view.html (the scene's output.export still applies).
    #[arg(long, value_parser = ["obj", "ply", "usd", "vtu", "html"])]
    export: Option<String>,
    /// Override any scene field, e.g. --set simulation.substeps=2 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Write a Chrome trace (Perfetto, chrome://tracing) of every graph node's GPU time per
    /// frame and the host's recording, submission, readback and export spans to this file.
    #[arg(long, value_name = "FILE.json")]
    trace: Option<PathBuf>,
}

#[derive(Serialize)]
struct FrameReport {
    frame: u32,
    #[serde(flatten)]
    stats: FrameStats,
    min_volume_ratio: f64,
    max_speed: f64,
    wall_ms: f64,
}

#[derive(Serialize)]
struct Report {
    scene: String,
    device: String,
    solver: String,
    vertices: usize,
    tets: usize,
    time_step: f64,
    substeps: u32,
    frames: Vec<FrameReport>,
    ms_per_frame_median: f64,
    #[serde(flatten)]
    meta: crate::run_meta::RunMeta,
}

/// Exit code 2 for scene problems, 1 for device/runtime failures.
pub fn run(args: &Args) -> Result<(), (i32, String)> {
    let (text, name) = match &args.scene {
        Some(p) => (
            std::fs::read_to_string(p)
                .map_err(|e| (2, format!("{}: cannot read: {e}", p.display())))?,
            p.display().to_string(),
        ),
        None => (DEFAULT_SCENE.to_string(), "default scene".to_string()),
    };
    let mut sets = args.set.clone();
    if let Some(f) = args.frames {
        sets.push(format!("simulation.frames={f}"));
    }
    let html = args.export.as_deref() == Some("html");
    if let Some(e) = args.export.as_ref().filter(|_| !html) {
        sets.push(format!("output.export=\"{e}\""));
    }
    let mut scene = match &args.scene {
        Some(p) => Scene::load(p, &sets),
        None => Scene::parse(&text, &name, &sets),
    }
    .map_err(|e| (2, e.to_string()))?;
    if let Some(o) = &args.out {
        scene.output.dir = o.clone();
    }
    let ctx =
        supple::Context::new(supple::ContextOptions::from_env()).map_err(|e| (1, e.to_string()))?;
    if args.trace.is_some() {
        // Before building the simulation: its graphs must be compiled with node timestamps.
        ctx.start_trace();
    }
    let mut steps = Vec::new();
    let mut sim = Simulation::new(&ctx, &scene).map_err(|e| match e {
        SimError::Vk(v) => (1, v.to_string()),
        other => (2, format!("{name}: {other}")),
    })?;
    let dir = &scene.output.dir;
    let frames_dir = dir.join("frames");
    std::fs::create_dir_all(&frames_dir)
        .map_err(|e| (1, format!("{}: {e}", frames_dir.display())))?;
    let surface = supple::mesh::TriMesh {
        positions: vec![],
        triangles: sim.surface().to_vec(),
    };
    let mut usd = match scene.output.export {
        Some(ExportFormat::Usd) => {
            let opts = supple::mesh::export::UsdOptions {
                fps: scene.simulation.frame_rate,
                name: "bodies".into(),
                ..Default::default()
            };
            Some(
                supple::mesh::export::UsdWriter::surface(
                    dir.join("frames.usda"),
                    &surface.triangles,
                    sim.surface_vertices().len(),
                    &opts,
                )
                .and_then(|u| u.with_curves(sim.curves(), sim.curve_widths()))
                .map_err(|e| (1, e.to_string()))?,
            )
        }
        _ => None,
    };
    let total = scene.simulation.frames;
    // Preview frames: the scene's choice, else the first, middle and last.
    let preview_frames: Vec<u32> = if scene.output.preview_frames.is_empty() {
        let mut v = vec![0, total / 2, total.saturating_sub(1)];
        v.dedup();
        v
    } else {
        scene
            .output
            .preview_frames
            .iter()
            .copied()
            .filter(|&f| f < total)
            .collect()
    };
    let mut preview = Vec::new();
    let mut html_frames = Vec::new();
    let mut reports = Vec::new();
    let mut times = Vec::new();
    let started = Instant::now();
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    for frame in 0..total {
        let t0 = Instant::now();
        let stats = sim.step_frame().map_err(|e| (1, e.to_string()))?;
        let t_read = Instant::now();
        let x = sim.positions().map_err(|e| (1, e.to_string()))?;
        let wall_ms = t0.elapsed().as_secs_f64() * 1e3;
        times.push(wall_ms);
        let v = sim.velocities().map_err(|e| (1, e.to_string()))?;
        ctx.trace_host_span("readback", "readback", t_read, Instant::now());
        let t_export = Instant::now();
        let max_speed = v
            .iter()
            .map(|p| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt())
            .fold(0.0, f64::max);
        let surf: Vec<[f64; 3]> = sim
            .surface_vertices()
            .iter()
            .map(|&i| x[i as usize])
            .collect();
        let write = |r: std::io::Result<()>| r.map_err(|e| (1, e.to_string()));
        match scene.output.export {
            Some(ExportFormat::Obj) | Some(ExportFormat::Ply) => {
                let ext = if scene.output.export == Some(ExportFormat::Obj) {
                    "obj"
                } else {
                    "ply"
                };
                let mesh = supple::mesh::TriMesh {
                    positions: surf.clone(),
                    triangles: surface.triangles.clone(),
                };
                write(supple::mesh::export::write_surface_with_curves(
                    frames_dir.join(format!("frame_{frame:04}.{ext}")),
                    &mesh,
                    sim.curves(),
                ))?;
            }
            Some(ExportFormat::Vtu) => {
                let mesh = supple::mesh::TetMesh {
                    positions: x.clone(),
                    tets: sim.model().tets.clone(),
                };
                write(supple::mesh::export::write_tet_mesh(
                    frames_dir.join(format!("frame_{frame:04}.vtu")),
                    &mesh,
                ))?;
            }
            Some(ExportFormat::Usd) => {
                if let Some(u) = usd.as_mut() {
                    write(u.write_frame(&surf))?;
                }
            }
            None => {}
        }
        if html {
            html_frames.push((frame, surf.iter().map(|p| p.map(|c| c as f32)).collect()));
        }
        if preview_frames.contains(&frame) {
            // Frame k is the state after k + 1 frames.
            let time = (frame + 1) as f64 / scene.simulation.frame_rate;
            preview.push(crate::preview::PreviewFrame {
                frame,
                time,
                positions: surf.clone(),
            });
        }
        ctx.trace_host_span("export", "export", t_export, Instant::now());
        steps.push((t0, Instant::now()));
        reports.push(FrameReport {
            frame,
            stats,
            min_volume_ratio: sim.min_volume_ratio(&x),
            max_speed,
            wall_ms,
        });
        let fps = (frame + 1) as f64 / started.elapsed().as_secs_f64();
        let line = format!(
            "[run] frame {:>4}/{total}  {fps:6.2} frames/s  newton {:>3}  pcg {:>5}",
            frame + 1,
            stats.newton_iterations,
            stats.pcg_iterations
        );
        if tty {
            eprint!("\r{line}");
        } else if (frame + 1) % 10 == 0 || frame + 1 == total {
            eprintln!("{line}");
        }
    }
    if tty {
        eprintln!();
    }
    if let Some(u) = usd {
        u.finish().map_err(|e| (1, e.to_string()))?;
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let report = Report {
        scene: name,
        device: ctx.caps().name.clone(),
        solver: format!("{:?}", scene.simulation.solver),
        vertices: sim.model().positions.len(),
        tets: sim.model().tets.len(),
        time_step: scene.simulation.time_step(),
        substeps: scene.simulation.substeps,
        frames: reports,
        ms_per_frame_median: sorted.get(sorted.len() / 2).copied().unwrap_or(0.0),
        meta: crate::run_meta::RunMeta::new(&sim, &scene),
    };
    if !preview.is_empty() {
        let png = dir.join("preview.png");
        let view = crate::preview::PreviewScene::of_run(&sim, &scene);
        crate::preview::write_preview(&png, &view, &preview)
            .map_err(|e| (1, format!("{}: {e}", png.display())))?;
    }
    if let (Some(path), Some(trace)) = (&args.trace, ctx.take_trace()) {
        let text =
            serde_json::to_string(&trace.to_chrome_json(&steps)).map_err(|e| (1, e.to_string()))?;
        std::fs::write(path, text).map_err(|e| (1, format!("{}: {e}", path.display())))?;
        eprintln!(
            "[run] wrote the trace of {} graph runs to {}",
            trace.graph_runs.len(),
            path.display()
        );
    }
    if html {
        let value = serde_json::to_value(&report).map_err(|e| (1, e.to_string()))?;
        crate::view::write_run_html(dir, &value, sim.surface(), sim.curves(), &html_frames)?;
    }
    let path = dir.join("report.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&report).map_err(|e| (1, e.to_string()))?,
    )
    .map_err(|e| (1, format!("{}: {e}", path.display())))?;
    eprintln!(
        "[run] wrote {} and {}",
        frames_dir.display(),
        path.display()
    );
    Ok(())
}
