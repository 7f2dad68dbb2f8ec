//! `supple run [SCENE]`: simulates a scene (or the embedded default scene), writes per-frame
//! surfaces (frame 0 is the initial state, frame k the state after k frames), a `report.json`
//! and a `preview.png` of chosen frames, and prints progress. Every output path is checked before
//! the first step, and report.json is written even when the run fails part-way.

use crate::run_output::{FrameExport, OutputPaths, RunError};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;
use supple::scene::{ExportFormat, Scene};
use supple::simulation::{FrameStats, SimError, Simulation, DIVERGED};

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
    /// Also write the colliders into each OBJ frame as simple meshes (objects after the
    /// bodies'; `supple check-frames` ignores them). USD stages always hold the colliders.
    #[arg(long)]
    export_colliders: bool,
}

/// One frame of report.json: frame `k` is the file `frame_k`, the state after `k` frames.
#[derive(Serialize)]
struct FrameReport {
    frame: u32,
    /// Simulated time of the state (s): 0 for frame 0.
    time: f64,
    /// The solver statistics of the step that led here (none for frame 0, the initial state;
    /// without the Newton-only keys for steppers that have no Newton iterations).
    #[serde(flatten)]
    stats: Option<serde_json::Map<String, serde_json::Value>>,
    min_volume_ratio: f64,
    max_speed: f64,
    /// Per scene collider, the smallest signed distance of any vertex to it minus its offset
    /// (m; negative: a vertex is closer than the offset); absent without colliders.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    collider_distance: Vec<f64>,
    /// Wall milliseconds of the step and the position readback (none for frame 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_ms: Option<f64>,
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
    frame_rate: f64,
    frames: Vec<FrameReport>,
    ms_per_frame_median: f64,
    /// Why the run stopped early or failed at the end; absent when it succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(flatten)]
    meta: crate::run_meta::RunMeta,
}

/// What the frame loop accumulates.
struct RunState {
    /// Frames to step (the files are frames 0 ..= total).
    total: u32,
    /// Frames drawn into preview.png.
    preview_frames: Vec<u32>,
    preview: Vec<crate::preview::PreviewFrame>,
    /// Every frame's surface for `--export html` (empty otherwise).
    html_frames: Vec<(u32, Vec<[f32; 3]>)>,
    /// Whether `--export html` was given.
    html: bool,
    reports: Vec<FrameReport>,
    /// Wall milliseconds per stepped frame.
    times: Vec<f64>,
    /// Host time span of each step (for the trace).
    steps: Vec<(Instant, Instant)>,
}

/// Reads the scene (the embedded default when none is given) with the command line's
/// overrides applied; returns it and its name for reports.
fn prepare(args: &Args) -> Result<(Scene, String), RunError> {
    let name = match &args.scene {
        Some(p) => p.display().to_string(),
        None => "default scene".to_string(),
    };
    // `--frames` is applied after the scene is read (not as a `--set`), so that a scene error
    // never blames an override the user did not write.
    let mut sets = args.set.clone();
    if let Some(e) = args.export.as_ref().filter(|e| *e != "html") {
        sets.push(format!("output.export=\"{e}\""));
    }
    let mut scene = match &args.scene {
        Some(p) => {
            if let Err(e) = std::fs::metadata(p) {
                return Err((2, format!("{}: cannot read: {e}", p.display())));
            }
            Scene::load(p, &sets)
        }
        None => Scene::parse(DEFAULT_SCENE, &name, &sets),
    }
    .map_err(|e| (2, e.to_string()))?;
    if let Some(f) = args.frames {
        scene.simulation.frames = f;
    }
    if let Some(o) = &args.out {
        scene.output.dir = o.clone();
    }
    if args.export_colliders
        && !matches!(
            scene.output.export,
            Some(ExportFormat::Obj | ExportFormat::Usd)
        )
    {
        return Err((
            2,
            "--export-colliders: colliders are exported with --export obj (as meshes) and usd (always)"
                .into(),
        ));
    }
    Ok((scene, name))
}

impl RunState {
    fn new(scene: &Scene, html: bool) -> RunState {
        let total = scene.simulation.frames;
        // Preview frames: the scene's choice, else the first, middle and last.
        let preview_frames: Vec<u32> = if scene.output.preview_frames.is_empty() {
            let mut v = vec![0, total / 2, total];
            v.dedup();
            v
        } else {
            scene
                .output
                .preview_frames
                .iter()
                .copied()
                .filter(|&f| f <= total)
                .collect()
        };
        RunState {
            total,
            preview_frames,
            preview: Vec::new(),
            html_frames: Vec::new(),
            html,
            reports: Vec::new(),
            times: Vec::new(),
            steps: Vec::new(),
        }
    }
}

/// The keys of a frame's statistics that only Newton (an energy-minimising stepper) fills in.
const NEWTON_ONLY_KEYS: [&str; 12] = [
    "newton_iterations",
    "pcg_exits",
    "pcg_model_fraction_min",
    "pcg_iterations",
    "pcg_warm_iterations",
    "energy",
    "pcg_residual",
    "pcg_relative_residual_max",
    "gradient_norm",
    "script_rounds",
    "script_short_steps",
    "script_error_max",
];

/// A frame's statistics as report.json writes them: every key of [`FrameStats`], less
/// [`NEWTON_ONLY_KEYS`] when the stepper has no Newton iterations (`newton` false).
fn stats_json(stats: &FrameStats, newton: bool) -> serde_json::Map<String, serde_json::Value> {
    let mut map = match serde_json::to_value(stats) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    if !newton {
        for k in NEWTON_ONLY_KEYS {
            map.remove(k);
        }
    }
    map
}

/// Reads back the state after `frame` frames (stepped from `t0` with `stats`, or the initial
/// state) and records and exports it.
fn record_frame(
    ctx: &supple::Context,
    scene: &Scene,
    sim: &Simulation,
    export: &mut FrameExport,
    st: &mut RunState,
    frame: u32,
    step: Option<(Instant, FrameStats)>,
) -> Result<(), RunError> {
    let failed = |e: SimError| (1, format!("frame {frame}: {e}"));
    let t_read = Instant::now();
    // The frame's own readback (no GPU work after a step; the initial state is read now).
    let (x, v) = sim.frame_state().map_err(failed)?;
    let wall_ms = step
        .as_ref()
        .map(|(t0, _)| t0.elapsed().as_secs_f64() * 1e3);
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
    let time = sim.time();
    st.times.extend(wall_ms);
    st.reports.push(FrameReport {
        frame,
        time,
        stats: step
            .as_ref()
            .map(|(_, s)| stats_json(s, sim.stepper_info().minimises_energy)),
        min_volume_ratio: sim.min_volume_ratio(&x),
        max_speed,
        collider_distance: crate::colliders::min_distances(
            &scene.colliders,
            &x,
            &sim.model().vertex_collider_offsets(),
            time,
        ),
        wall_ms,
    });
    export.write(frame, time, scene, sim, &x, &surf)?;
    if st.html {
        st.html_frames
            .push((frame, surf.iter().map(|p| p.map(|c| c as f32)).collect()));
    }
    if st.preview_frames.contains(&frame) {
        st.preview.push(crate::preview::PreviewFrame {
            frame,
            time,
            positions: surf,
        });
    }
    ctx.trace_host_span("export", "export", t_export, Instant::now());
    if let Some((t0, _)) = &step {
        st.steps.push((*t0, Instant::now()));
    }
    Ok(())
}

/// Exit code of a run stopped because the simulation diverged (a non-finite state, or an
/// inverted tet where the solver must not invert).
pub const EXIT_DIVERGED: i32 = 3;

/// The exit code and message of a failed step: [`EXIT_DIVERGED`] for divergence, 1 otherwise.
fn step_failed(frame: u32, e: SimError) -> (i32, String) {
    match &e {
        SimError::Solver { component, .. } if component == DIVERGED => {
            (EXIT_DIVERGED, e.to_string())
        }
        _ => (1, format!("frame {frame}: {e}")),
    }
}

/// Records the initial state as frame 0, then steps `st.total` frames, recording each.
fn simulate(
    ctx: &supple::Context,
    scene: &Scene,
    sim: &mut Simulation,
    export: &mut FrameExport,
    st: &mut RunState,
) -> Result<(), RunError> {
    record_frame(ctx, scene, sim, export, st, 0, None)?;
    let started = Instant::now();
    let tty = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let total = st.total;
    for frame in 1..=total {
        let t0 = Instant::now();
        let stats = sim.step_frame().map_err(|e| step_failed(frame, e))?;
        let (newton, pcg) = (stats.newton_iterations, stats.pcg_iterations);
        record_frame(ctx, scene, sim, export, st, frame, Some((t0, stats)))?;
        let fps = frame as f64 / started.elapsed().as_secs_f64();
        let line = format!(
            "[run] frame {frame:>4}/{total}  {fps:6.2} frames/s  newton {newton:>3}  pcg {pcg:>5}"
        );
        if tty {
            eprint!("\r{line}");
        } else if frame % 10 == 0 || frame == total {
            eprintln!("{line}");
        }
    }
    if tty && total > 0 {
        eprintln!();
    }
    Ok(())
}

/// Writes the Chrome trace of the run to `path`, if tracing was on.
fn write_trace(
    ctx: &supple::Context,
    path: &std::path::Path,
    steps: &[(Instant, Instant)],
) -> Result<Option<String>, RunError> {
    let Some(trace) = ctx.take_trace() else {
        return Ok(None);
    };
    supple::mesh::export::write_atomically(path, |w| {
        serde_json::to_writer(w, &trace.to_chrome_json(steps)).map_err(std::io::Error::other)
    })
    .map_err(|e| (1, e.to_string()))?;
    Ok(Some(format!(
        "{} (the trace of {} graph runs)",
        path.display(),
        trace.graph_runs.len()
    )))
}

/// Exit code 2 for scene and output-path problems, 3 when the simulation diverged
/// ([`EXIT_DIVERGED`]), 1 for device/runtime failures.
pub fn run(args: &Args) -> Result<(), RunError> {
    let (scene, name) = prepare(args)?;
    let paths = OutputPaths::of(&scene, args.trace.as_deref());
    paths.check()?;
    let ctx =
        supple::Context::new(supple::ContextOptions::from_env()).map_err(|e| (1, e.to_string()))?;
    if args.trace.is_some() {
        // Before building the simulation: its graphs must be compiled with node timestamps.
        ctx.start_trace();
    }
    let mut sim = Simulation::new(&ctx, &scene).map_err(|e| match e {
        SimError::Vk(v) => (1, v.to_string()),
        other => (2, format!("{name}: {other}")),
    })?;
    for w in crate::run_warnings::warnings(&scene, &sim) {
        eprintln!("warning: {w}");
    }
    let mut export = FrameExport::new(&scene, &sim, &paths, args.export_colliders)?;
    let mut st = RunState::new(&scene, args.export.as_deref() == Some("html"));
    let mut result = simulate(&ctx, &scene, &mut sim, &mut export, &mut st);
    // What was simulated is written out even after a failure.
    let mut written = Vec::new();
    let mut keep = |r: Result<Option<String>, RunError>, result: &mut Result<(), RunError>| match r
    {
        Ok(w) => written.extend(w),
        Err(e) => {
            if result.is_ok() {
                *result = Err(e);
            }
        }
    };
    keep(export.finish(), &mut result);
    if !st.preview.is_empty() {
        let png = &paths.preview;
        let view = crate::preview::PreviewScene::of_run(&sim, &scene);
        let r = crate::preview::write_preview(png, &view, &st.preview)
            .map(|()| Some(png.display().to_string()))
            .map_err(|e| (1, format!("{}: {e}", png.display())));
        keep(r, &mut result);
    }
    if let Some(path) = &args.trace {
        keep(write_trace(&ctx, path, &st.steps), &mut result);
    }
    let mut sorted = st.times.clone();
    sorted.sort_by(f64::total_cmp);
    let report = Report {
        scene: name,
        device: ctx.caps().name.clone(),
        solver: format!("{:?}", scene.simulation.solver),
        vertices: sim.model().positions.len(),
        tets: sim.model().tets.len(),
        time_step: scene.simulation.time_step(),
        substeps: scene.simulation.substeps,
        frame_rate: scene.simulation.frame_rate,
        frames: st.reports,
        ms_per_frame_median: sorted.get(sorted.len() / 2).copied().unwrap_or(0.0),
        error: result.as_ref().err().map(|(_, e)| e.clone()),
        meta: crate::run_meta::RunMeta::new(&sim, &scene),
    };
    if st.html {
        let dir = &scene.output.dir;
        let r = serde_json::to_value(&report)
            .map_err(|e| (1, e.to_string()))
            .and_then(|value| {
                crate::view::write_run_html(
                    dir,
                    &value,
                    sim.surface(),
                    sim.curves(),
                    &st.html_frames,
                )
            })
            .map(|w| {
                Some(format!(
                    "{} ({} frames, {} bytes)",
                    dir.join("view.html").display(),
                    w.frames,
                    w.bytes
                ))
            });
        keep(r, &mut result);
    }
    let wrote_report = supple::mesh::export::write_atomically(&paths.report, |w| {
        serde_json::to_writer_pretty(w, &report).map_err(std::io::Error::other)
    });
    match wrote_report {
        Ok(()) => written.push(paths.report.display().to_string()),
        Err(e) => {
            // Both failures are told; the exit code is the first one's.
            if let Err((_, first)) = &result {
                eprintln!("error: {first}");
            }
            return Err((1, e.to_string()));
        }
    }
    eprintln!("[run] wrote {}", written.join(", "));
    result
}
