//! `supple bench soak [SCENE] --frames N [--solver S]... [--json]`: steps a small scene N frames
//! with each solver and reports, at frame `--early` (after warm-up) and at the last frame, the
//! process's resident memory, the device memory Supple holds (`Context::device_bytes`) and the
//! median milliseconds per frame of the `--window` frames ending there. A leak shows as memory
//! that grows; a slowdown as a later median above the early one.

use crate::stats::Stats;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;
use supple::scene::Scene;
use supple::simulation::Simulation;

/// The scene soaked when none is given: a small soft cube resting on the ground (every stepper
/// runs it).
const SOAK_SCENE: &str = r#"
[simulation]
frame_rate = 60.0

[xpbd]
substeps = 10

[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [3, 3, 3] }
translation = [0.0, 0.0, 0.06]
material = { model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
"#;

/// Options of `supple bench soak`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scene file (TOML); a 3×3×3-cell cube resting on the ground when omitted.
    scene: Option<PathBuf>,
    /// Frames to step per solver.
    #[arg(long, default_value_t = 10_000)]
    frames: u32,
    /// The early sample: frame at which warm-up is over.
    #[arg(long, default_value_t = 100)]
    early: u32,
    /// Frames in each timing window (ending at the early and at the last frame).
    #[arg(long, default_value_t = 100)]
    window: u32,
    /// Solvers to soak (repeatable): newton, xpbd, symplectic-euler; all three by default.
    #[arg(long = "solver")]
    solvers: Vec<String>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// Memory and speed at one frame.
#[derive(Serialize, Clone, Copy)]
struct Sample {
    frame: u32,
    /// Resident set size of the process (bytes; /proc/self/statm, 0 where unavailable).
    resident_bytes: u64,
    /// `Context::device_bytes()`: Supple's live buffer allocations.
    device_bytes: u64,
    /// Median wall milliseconds per frame (step and position readback) over the window
    /// ending at this frame.
    ms_per_frame_median: f64,
    /// Process CPU milliseconds (user + system, all threads: lavapipe runs the kernels on
    /// them) per frame over the window: less sensitive to other load on the machine than
    /// wall time. 0 where /proc is unavailable.
    cpu_ms_per_frame: f64,
    /// The machine's 1-minute load average when sampled (/proc/loadavg; 0 if unavailable).
    load_average: f64,
}

#[derive(Serialize)]
struct SolverSoak {
    solver: String,
    frames: u32,
    early: Sample,
    end: Sample,
    /// end / early resident and device memory, median frame time and CPU time per frame.
    resident_ratio: f64,
    device_ratio: f64,
    time_ratio: f64,
    cpu_ratio: f64,
}

#[derive(Serialize)]
struct Report {
    scene: String,
    device: String,
    vertices: usize,
    solvers: Vec<SolverSoak>,
}

/// CPU time of the process (user + system) in milliseconds, from /proc/self/stat (clock ticks
/// of 10 ms).
fn cpu_ms() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name.
    (ticks(11) + ticks(12)) * 10.0
}

fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

fn resident_bytes() -> u64 {
    // statm: size resident shared ... in pages; the page size is 4 KiB on the platforms we run.
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn soak_one(
    ctx: &supple::Context,
    scene: &Scene,
    args: &Args,
    solver: &str,
) -> Result<(SolverSoak, usize), (i32, String)> {
    let mut sim = Simulation::new(ctx, scene).map_err(|e| (2, format!("{solver}: {e}")))?;
    let mut times = Vec::with_capacity(args.frames as usize);
    let mut cpu = Vec::with_capacity(args.frames as usize + 1);
    let mut early = None;
    let sample = |frame: u32, times: &[f64], cpu: &[f64]| {
        let from = times.len().saturating_sub(args.window as usize);
        let cpu_window = cpu.last().copied().unwrap_or(0.0) - cpu.get(from).copied().unwrap_or(0.0);
        Sample {
            frame,
            resident_bytes: resident_bytes(),
            device_bytes: ctx.device_bytes(),
            ms_per_frame_median: Stats::of(&times[from..]).median,
            cpu_ms_per_frame: cpu_window / (times.len() - from).max(1) as f64,
            load_average: load_average(),
        }
    };
    cpu.push(cpu_ms());
    for frame in 1..=args.frames {
        let t0 = Instant::now();
        sim.step_frame()
            .map_err(|e| (1, format!("{solver}: frame {frame}: {e}")))?;
        sim.positions()
            .map_err(|e| (1, format!("{solver}: frame {frame}: {e}")))?;
        times.push(t0.elapsed().as_secs_f64() * 1e3);
        cpu.push(cpu_ms());
        if frame == args.early {
            early = Some(sample(frame, &times, &cpu));
        }
    }
    let end = sample(args.frames, &times, &cpu);
    let early = early.unwrap_or(end);
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let soak = SolverSoak {
        solver: solver.to_string(),
        frames: args.frames,
        resident_ratio: ratio(end.resident_bytes as f64, early.resident_bytes as f64),
        device_ratio: ratio(end.device_bytes as f64, early.device_bytes as f64),
        time_ratio: ratio(end.ms_per_frame_median, early.ms_per_frame_median),
        cpu_ratio: ratio(end.cpu_ms_per_frame, early.cpu_ms_per_frame),
        early,
        end,
    };
    Ok((soak, sim.model().positions.len()))
}

/// Runs the soak; exit code 2 for bad arguments or scenes, 1 for failures while stepping.
pub fn run(args: &Args) -> Result<(), (i32, String)> {
    if args.frames == 0 || args.window == 0 || args.early == 0 || args.early > args.frames {
        return Err((
            2,
            "--frames, --early and --window must be positive, --early at most --frames".into(),
        ));
    }
    let solvers: Vec<String> = if args.solvers.is_empty() {
        ["newton", "xpbd", "symplectic-euler"]
            .map(String::from)
            .to_vec()
    } else {
        args.solvers.clone()
    };
    let ctx =
        supple::Context::new(supple::ContextOptions::from_env()).map_err(|e| (1, e.to_string()))?;
    let mut report = Report {
        scene: args
            .scene
            .as_ref()
            .map_or("soak cube".into(), |p| p.display().to_string()),
        device: ctx.caps().name.clone(),
        vertices: 0,
        solvers: Vec::new(),
    };
    for solver in &solvers {
        let mut sets = vec![format!("simulation.solver=\"{solver}\"")];
        if solver == "symplectic-euler" && args.scene.is_none() {
            // Explicit: stable below ~1 ms for this cube (16.7 ms frames).
            sets.push("simulation.substeps=40".into());
        }
        let scene = match &args.scene {
            Some(p) => Scene::load(p, &sets),
            None => Scene::parse(SOAK_SCENE, "soak cube", &sets),
        }
        .map_err(|e| (2, e.to_string()))?;
        let (soak, vertices) = soak_one(&ctx, &scene, args, solver)?;
        report.vertices = vertices;
        if !args.json {
            eprintln!(
                "[soak] {solver}: frame {}: {:.1} MiB resident, {:.2} MiB device, {:.3} ms/frame, \
                 {:.2} CPU ms/frame; frame {}: {:.1} MiB, {:.2} MiB, {:.3} ms/frame, {:.2} CPU ms/frame",
                soak.early.frame,
                soak.early.resident_bytes as f64 / 1048576.0,
                soak.early.device_bytes as f64 / 1048576.0,
                soak.early.ms_per_frame_median,
                soak.early.cpu_ms_per_frame,
                soak.end.frame,
                soak.end.resident_bytes as f64 / 1048576.0,
                soak.end.device_bytes as f64 / 1048576.0,
                soak.end.ms_per_frame_median,
                soak.end.cpu_ms_per_frame,
            );
        }
        report.solvers.push(soak);
    }
    if args.json {
        let s = serde_json::to_string_pretty(&report).map_err(|e| (1, e.to_string()))?;
        println!("{s}");
    }
    Ok(())
}
