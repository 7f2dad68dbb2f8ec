//! `supple bench bal MODE [--json]`: the barrier-augmented Lagrangian method's experiments (issue
//! 23, spec `../shared/notes/bal-spec.md` §A11–A12) as measurements, with the paper's claims
//! quoted beside them, never asserted:
//! - `arch`: the masonry arch (`scenes/bal_arch.toml`) for each friction coefficient χ: the
//!   keystone's drop per frame (the paper's Fig. 21: stands with χ ≥ 0.5, collapses with χ = 0);
//! - `twisted-pair`: the twisted pair (`scenes/bal_twisted_pair.toml`) for N turns (the paper's
//!   18): per frame the Newton iterations, steps at the Newton cap and min distance / d̂, up to
//!   the first failure;
//! - `h-sweep`: the stack (`scenes/bal_stack.toml`) at h = 1/30, 1/60 and 1/120 s: rest heights
//!   and kinetic energy per frame (the paper's Fig. 23);
//! - `cpu-reference`: the plain-Rust reference solver's Newton and CG statistics on its tiny
//!   scenes for the ablations (BAL vs inexact Newton, σ rules, direct vs CG, friction lag);
//! - `graph-times`: GPU milliseconds of every BAL graph per Newton iteration on tet cubes of
//!   growing resolution, through the whole simulation.

use serde::Serialize;
use std::time::Instant;
use supple::contact::bal::handler::BalFrameStats;
use supple::scene::{Generator, MeshSource, Scene};
use supple::simulation::Simulation;

const ARCH: &str = include_str!("../../scenes/bal_arch.toml");
const TWISTED_PAIR: &str = include_str!("../../scenes/bal_twisted_pair.toml");
const STACK: &str = include_str!("../../scenes/bal_stack.toml");
const TET_CUBE: &str = include_str!("../../scenes/bal_tet_cube.toml");

/// Options of `supple bench bal`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which experiment.
    #[command(subcommand)]
    mode: Mode,
    /// Print compact JSON (one line) instead of pretty JSON.
    #[arg(long, global = true)]
    json: bool,
    /// Override scene fields of the experiment's scene, e.g. --set simulation.substeps=2
    /// (repeatable; applied before the experiment's own settings).
    #[arg(long = "set", value_name = "PATH=VALUE", global = true)]
    set: Vec<String>,
}

#[derive(Debug, clap::Subcommand)]
enum Mode {
    /// The masonry arch for each friction coefficient: the keystone's drop per frame.
    Arch {
        /// Frames of 1/30 s (the spec's 3 s: 90).
        #[arg(long, default_value_t = 90)]
        frames: u32,
        /// Friction coefficients χ (comma-separated).
        #[arg(long, value_delimiter = ',', default_values_t = [0.0, 0.1, 0.5, 0.9])]
        chi: Vec<f64>,
    },
    /// The twisted pair for `turns` turns of each end (12 frames of 6 steps per turn).
    TwistedPair {
        /// Turns of each end (the paper's 18).
        #[arg(long, default_value_t = 18.0)]
        turns: f64,
        /// Stop (and report how far it got) after this many seconds of wall time.
        #[arg(long)]
        max_seconds: Option<f64>,
    },
    /// The stack at h = 1/30, 1/60 and 1/120 s.
    HSweep {
        /// Frames of 0.1 s.
        #[arg(long, default_value_t = 20)]
        frames: u32,
    },
    /// The CPU reference solver's statistics on its tiny scenes.
    CpuReference,
    /// GPU ms of every BAL graph per Newton iteration on growing tet cubes.
    GraphTimes {
        /// Cells per axis of the cube (comma-separated).
        #[arg(long, value_delimiter = ',', default_values_t = [4, 7, 10])]
        cells: Vec<u32>,
        /// Frames timed per cube (after one warm-up frame).
        #[arg(long, default_value_t = 2)]
        frames: u32,
    },
}

type Failure = (i32, String);

fn parse(text: &str, name: &str, base: &[String], extra: &[String]) -> Result<Scene, Failure> {
    let mut set = base.to_vec();
    set.extend_from_slice(extra);
    Scene::parse(text, name, &set).map_err(|e| (2, e.to_string()))
}

fn build(ctx: &supple::Context, scene: &Scene) -> Result<Simulation, Failure> {
    Simulation::new(ctx, scene).map_err(|e| (2, e.to_string()))
}

/// Runs the benchmark; errors are (exit code, message).
pub fn run(args: &Args) -> Result<(), Failure> {
    let ctx =
        supple::Context::new(supple::ContextOptions::from_env()).map_err(|e| (1, e.to_string()))?;
    let value = match &args.mode {
        Mode::Arch { frames, chi } => to_value(arch(&ctx, &args.set, *frames, chi)?),
        Mode::TwistedPair { turns, max_seconds } => {
            to_value(twisted_pair(&ctx, &args.set, *turns, *max_seconds)?)
        }
        Mode::HSweep { frames } => to_value(h_sweep(&ctx, &args.set, *frames)?),
        Mode::CpuReference => to_value(cpu_reference()),
        Mode::GraphTimes { cells, frames } => {
            to_value(graph_times(&ctx, &args.set, cells, *frames)?)
        }
    }?;
    let text = if args.json {
        serde_json::to_string(&value)
    } else {
        serde_json::to_string_pretty(&value)
    };
    println!("{}", text.map_err(|e| (1, e.to_string()))?);
    Ok(())
}

fn to_value(v: impl Serialize) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(v).map_err(|e| (1, e.to_string()))
}

/// Newton statistics of a run's frames.
#[derive(Serialize, Default)]
struct NewtonSummary {
    steps: u32,
    newton_iterations: u32,
    newton_iterations_max: u32,
    steps_at_cap: u32,
    unconverged_steps: u32,
    line_search_failures: u32,
    augmented_max: u32,
    min_distance_over_dhat: Option<f64>,
    ms_per_frame_median: f64,
}

impl NewtonSummary {
    fn add(&mut self, b: &BalFrameStats) {
        self.steps += b.steps;
        self.newton_iterations += b.newton_iterations;
        self.newton_iterations_max = self.newton_iterations_max.max(b.newton_iterations_max);
        self.steps_at_cap += b.steps_at_cap;
        self.unconverged_steps += b.unconverged_steps;
        self.line_search_failures += b.line_search_failures;
        self.augmented_max = self.augmented_max.max(b.augmented_max);
        if let Some(d) = b.min_distance_over_dhat {
            self.min_distance_over_dhat = Some(self.min_distance_over_dhat.map_or(d, |m| m.min(d)));
        }
    }

    fn finish(&mut self, mut wall_ms: Vec<f64>) {
        wall_ms.sort_by(f64::total_cmp);
        self.ms_per_frame_median = wall_ms.get(wall_ms.len() / 2).copied().unwrap_or(0.0);
    }
}

#[derive(Serialize)]
struct ArchRun {
    chi: f64,
    /// Keystone's mean drop (m) after each frame (negative: it rose).
    keystone_drop: Vec<f64>,
    keystone_drop_final: f64,
    newton: NewtonSummary,
    /// Why the run stopped early (absent when it completed).
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Serialize)]
struct ArchReport {
    scene: &'static str,
    paper: &'static str,
    voussoirs: u32,
    frames: u32,
    time_step: f64,
    runs: Vec<ArchRun>,
}

/// The first `"arch"` body: its index and voussoir count.
fn arch_body(scene: &Scene) -> Result<(usize, u32), Failure> {
    scene
        .bodies
        .iter()
        .enumerate()
        .find_map(|(i, b)| match b.mesh {
            MeshSource::Generator {
                generator: Generator::Arch,
                cells,
                ..
            } => Some((i, cells[0])),
            _ => None,
        })
        .ok_or((
            2,
            "bench bal arch: the scene has no \"arch\" body".to_string(),
        ))
}

fn arch(
    ctx: &supple::Context,
    set: &[String],
    frames: u32,
    chis: &[f64],
) -> Result<ArchReport, Failure> {
    let mut runs = Vec::new();
    let base = parse(ARCH, "bal_arch.toml", set, &[])?;
    let (body, blocks) = arch_body(&base)?;
    for &chi in chis {
        let scene = parse(
            ARCH,
            "bal_arch.toml",
            set,
            &[format!("collision.friction={chi}")],
        )?;
        let mut sim = build(ctx, &scene)?;
        let range = sim.model().bodies[body].vertices.clone();
        let per = (range.end - range.start) as usize / blocks as usize;
        let first = range.start as usize + (blocks as usize / 2) * per;
        let keystone =
            |x: &[[f64; 3]]| x[first..first + per].iter().map(|p| p[2]).sum::<f64>() / per as f64;
        let z0 = keystone(&sim.positions().map_err(|e| (1, e.to_string()))?);
        let (mut drops, mut newton, mut wall, mut error) =
            (Vec::new(), NewtonSummary::default(), Vec::new(), None);
        for f in 0..frames {
            let t = Instant::now();
            match sim.step_frame() {
                Ok(s) => newton.add(&s.contact::<BalFrameStats>()),
                Err(e) => {
                    error = Some(format!("frame {}: {e}", f + 1));
                    break;
                }
            }
            wall.push(t.elapsed().as_secs_f64() * 1e3);
            drops.push(z0 - keystone(&sim.positions().map_err(|e| (1, e.to_string()))?));
        }
        newton.finish(wall);
        eprintln!(
            "[bench bal arch] χ = {chi}: keystone drop {:.4e} m",
            drops.last().copied().unwrap_or(0.0)
        );
        runs.push(ArchRun {
            chi,
            keystone_drop_final: drops.last().copied().unwrap_or(0.0),
            keystone_drop: drops,
            newton,
            error,
        });
    }
    Ok(ArchReport {
        scene: "scenes/bal_arch.toml",
        paper:
            "\"the masonry arch stands with friction coefficients 0.1, 0.5 and 0.9 and collapses \
                without friction\" (Fig. 21; E = 20 GPa there, 1e8 Pa here: see the scene)",
        voussoirs: blocks,
        frames,
        time_step: base.simulation.time_step(),
        runs,
    })
}

#[derive(Serialize)]
struct TwistFrame {
    frame: u32,
    /// Turns of each end so far.
    turns: f64,
    newton_iterations: u32,
    newton_iterations_max: u32,
    steps_at_cap: u32,
    min_distance_over_dhat: Option<f64>,
    /// Solves started by resumed moves of the scripted ends (the CCD bound stopped them short).
    script_rounds: u32,
    /// Steps that ended with the scripted ends short of their pose.
    script_short_steps: u32,
    wall_ms: f64,
}

#[derive(Serialize)]
struct TwistReport {
    scene: &'static str,
    paper: &'static str,
    turns_asked: f64,
    turns_done: f64,
    newton: NewtonSummary,
    frames: Vec<TwistFrame>,
    /// Why the run stopped early (absent when it completed).
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped: Option<String>,
}

fn twisted_pair(
    ctx: &supple::Context,
    set: &[String],
    turns: f64,
    max_seconds: Option<f64>,
) -> Result<TwistReport, Failure> {
    let scene = parse(TWISTED_PAIR, "bal_twisted_pair.toml", set, &[])?;
    // Each end turns at 5/12 rev/s.
    let frame_s = 1.0 / scene.simulation.frame_rate;
    let turns_per_frame = frame_s * 5.0 / 12.0;
    let frames = (turns / turns_per_frame).round() as u32;
    let mut sim = build(ctx, &scene)?;
    let start = Instant::now();
    let (mut out, mut newton, mut wall, mut stopped) =
        (Vec::new(), NewtonSummary::default(), Vec::new(), None);
    for f in 1..=frames {
        if max_seconds.is_some_and(|m| start.elapsed().as_secs_f64() > m) {
            stopped = Some(format!("wall-time limit reached before frame {f}"));
            break;
        }
        let t = Instant::now();
        let (b, script_rounds, script_short_steps) = match sim.step_frame() {
            Ok(s) => (
                s.contact::<BalFrameStats>(),
                s.script_rounds,
                s.script_short_steps,
            ),
            Err(e) => {
                stopped = Some(format!("frame {f}: {e}"));
                break;
            }
        };
        let ms = t.elapsed().as_secs_f64() * 1e3;
        newton.add(&b);
        wall.push(ms);
        out.push(TwistFrame {
            frame: f,
            turns: f as f64 * turns_per_frame,
            newton_iterations: b.newton_iterations,
            newton_iterations_max: b.newton_iterations_max,
            steps_at_cap: b.steps_at_cap,
            min_distance_over_dhat: b.min_distance_over_dhat,
            script_rounds,
            script_short_steps,
            wall_ms: ms,
        });
        if f % 12 == 0 {
            eprintln!(
                "[bench bal twisted-pair] {:.2} turns",
                f as f64 * turns_per_frame
            );
        }
    }
    newton.finish(wall);
    Ok(TwistReport {
        scene: "scenes/bal_twisted_pair.toml",
        paper: "twisting rods: \"both ends twisted at 5/12 rev/s for 18 turns\"; \"the inexact \
                Newton method stalls at frame 933, BAL continues\" (Figs. 4, 25)",
        turns_asked: turns,
        turns_done: out.last().map_or(0.0, |f| f.turns),
        newton,
        frames: out,
        stopped,
    })
}

#[derive(Serialize)]
struct HRun {
    time_step: f64,
    substeps: u32,
    /// Mean height (m) of each free body's vertices at the end, by body name.
    final_heights: Vec<(String, f64)>,
    /// Kinetic energy (J) of the free vertices after each frame.
    kinetic_energy: Vec<f64>,
    newton: NewtonSummary,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Serialize)]
struct HReport {
    scene: &'static str,
    paper: &'static str,
    frames: u32,
    runs: Vec<HRun>,
}

fn h_sweep(ctx: &supple::Context, set: &[String], frames: u32) -> Result<HReport, Failure> {
    let mut runs = Vec::new();
    for substeps in [3u32, 6, 12] {
        let scene = parse(
            STACK,
            "bal_stack.toml",
            set,
            &[format!("simulation.substeps={substeps}")],
        )?;
        let mut sim = build(ctx, &scene)?;
        let (mut ke, mut newton, mut wall, mut error) =
            (Vec::new(), NewtonSummary::default(), Vec::new(), None);
        for f in 0..frames {
            let t = Instant::now();
            match sim.step_frame() {
                Ok(s) => newton.add(&s.contact::<BalFrameStats>()),
                Err(e) => {
                    error = Some(format!("frame {}: {e}", f + 1));
                    break;
                }
            }
            wall.push(t.elapsed().as_secs_f64() * 1e3);
            let v = sim.velocities().map_err(|e| (1, e.to_string()))?;
            let m = &sim.model().masses;
            let w = &sim.model().inv_mass;
            let e: f64 = (0..v.len())
                .filter(|&i| w[i] > 0.0)
                .map(|i| 0.5 * m[i] * v[i].iter().map(|c| c * c).sum::<f64>())
                .sum();
            ke.push(e);
        }
        newton.finish(wall);
        let x = sim.positions().map_err(|e| (1, e.to_string()))?;
        let model = sim.model();
        let final_heights = model
            .bodies
            .iter()
            .filter(|b| b.vertices.clone().any(|v| model.inv_mass[v as usize] > 0.0))
            .map(|b| {
                let n = (b.vertices.end - b.vertices.start) as f64;
                let z: f64 = b.vertices.clone().map(|v| x[v as usize][2]).sum();
                (b.name.clone(), z / n)
            })
            .collect();
        eprintln!(
            "[bench bal h-sweep] h = {:.5} s done",
            scene.simulation.time_step()
        );
        runs.push(HRun {
            time_step: scene.simulation.time_step(),
            substeps,
            final_heights,
            kinetic_energy: ke,
            newton,
            error,
        });
    }
    Ok(HReport {
        scene: "scenes/bal_stack.toml",
        paper: "\"time steps from 1/100 to 1/10 s give consistent equilibria, with more numerical \
                damping at large h\" (Fig. 23)",
        frames,
        runs,
    })
}

/// One line of the CPU reference's statistics.
#[derive(Serialize)]
struct CpuRun {
    scene: &'static str,
    variant: &'static str,
    steps: usize,
    newton_mean: f64,
    newton_max: u32,
    cg_total: u32,
    cg_resumes: u32,
    steps_at_cap: u32,
    line_search_failures: u32,
    steps_ending_below_1e_2_dhat: u32,
    iterations_with_augmentation: usize,
    sigma_max: f64,
    wall_ms: f64,
}

fn cpu_reference() -> Vec<CpuRun> {
    use supple::cpu_reference::bal::problem::scenarios::{
        block_on_ramp, tet_on_plane, two_edges, two_tets,
    };
    use supple::cpu_reference::bal::problem::Problem;
    use supple::cpu_reference::bal::solver::{
        BalSettings, BalSolver, FrictionLagMode, LinearSolve, SigmaRule,
    };
    type Case = (&'static str, fn() -> Problem, usize, f64);
    let scenes: [Case; 4] = [
        ("two_tets", || two_tets(1.0, 0.02), 30, 0.0),
        ("two_edges", || two_edges(1.0, 0.02), 30, 0.0),
        ("tet_on_plane", || tet_on_plane(0.05), 45, 0.0),
        (
            "block_on_ramp_20deg",
            || block_on_ramp(20f64.to_radians(), 0.1, 2e-4),
            30,
            0.1,
        ),
    ];
    let (cg, direct) = (LinearSolve::Cg, LinearSolve::Direct);
    let (every, per_step) = (FrictionLagMode::PerIteration, FrictionLagMode::PerStep);
    let variants = [
        ("bal", true, SigmaRule::AsPrinted, cg, every),
        ("bal_capped", true, SigmaRule::Capped, cg, every),
        ("inexact_newton", false, SigmaRule::AsPrinted, cg, every),
        ("bal_direct", true, SigmaRule::AsPrinted, direct, every),
        (
            "bal_per_step_friction",
            true,
            SigmaRule::AsPrinted,
            cg,
            per_step,
        ),
    ];
    let mut out = Vec::new();
    for (scene, make, steps, chi) in scenes {
        for (variant, augmentation, sigma_rule, linear_solve, friction_lag) in variants {
            if friction_lag == FrictionLagMode::PerStep && chi == 0.0 {
                continue;
            }
            let st = BalSettings {
                augmentation,
                sigma_rule,
                linear_solve,
                friction_lag,
                friction: chi,
                ..BalSettings::paper()
            };
            let d_hat = st.d_hat;
            let Ok(mut s) = BalSolver::new(make(), st) else {
                continue;
            };
            let t = Instant::now();
            let mut r = CpuRun {
                scene,
                variant,
                steps,
                newton_mean: 0.0,
                newton_max: 0,
                cg_total: 0,
                cg_resumes: 0,
                steps_at_cap: 0,
                line_search_failures: 0,
                steps_ending_below_1e_2_dhat: 0,
                iterations_with_augmentation: 0,
                sigma_max: 0.0,
                wall_ms: 0.0,
            };
            for _ in 0..steps {
                let q = s.step();
                r.newton_mean += q.newton_iterations as f64;
                r.newton_max = r.newton_max.max(q.newton_iterations);
                r.cg_total += q.cg_iterations;
                r.steps_at_cap += q.hit_cap as u32;
                r.line_search_failures += q.line_search_failed as u32;
                r.cg_resumes += q.cg_resumes;
                r.iterations_with_augmentation += q.augmented.iter().filter(|&&a| a > 0).count();
                r.sigma_max = q.sigma.iter().copied().fold(r.sigma_max, f64::max);
                let last = q.min_distance.last().copied().unwrap_or(f64::INFINITY);
                r.steps_ending_below_1e_2_dhat += (last < 1e-2 * d_hat) as u32;
            }
            r.newton_mean /= steps as f64;
            r.wall_ms = t.elapsed().as_secs_f64() * 1e3;
            out.push(r);
        }
    }
    out
}

/// GPU ms of the BAL graphs per Newton iteration on one cube.
#[derive(Serialize)]
struct GraphTimes {
    cells: u32,
    vertices: usize,
    active_max: u32,
    newton_iterations: u32,
    gpu_ms_per_newton_iteration: std::collections::BTreeMap<&'static str, f64>,
}

fn graph_times(
    ctx: &supple::Context,
    set: &[String],
    cells: &[u32],
    frames: u32,
) -> Result<Vec<GraphTimes>, Failure> {
    let mut out = Vec::new();
    for &n in cells {
        let scene = parse(
            TET_CUBE,
            "bal_tet_cube.toml",
            set,
            &[format!("body[1].mesh.cells=[{n}, {n}, {n}]")],
        )?;
        let mut sim = build(ctx, &scene)?;
        // Warm-up frame: the cube reaches the slab.
        sim.step_frame().map_err(|e| (1, e.to_string()))?;
        let mut sum = BalFrameStats::default();
        for _ in 0..frames.max(1) {
            let b = sim
                .step_frame()
                .map_err(|e| (1, e.to_string()))?
                .contact::<BalFrameStats>();
            sum.newton_iterations += b.newton_iterations;
            sum.active_max = sum.active_max.max(b.active_max);
            sum.gpu_ms_active += b.gpu_ms_active;
            sum.gpu_ms_evaluate += b.gpu_ms_evaluate;
            sum.gpu_ms_trial += b.gpu_ms_trial;
            sum.gpu_ms_ccd += b.gpu_ms_ccd;
            sum.gpu_ms_dual += b.gpu_ms_dual;
            sum.gpu_ms_search += b.gpu_ms_search;
        }
        let k = f64::from(sum.newton_iterations.max(1));
        let per = [
            ("active", sum.gpu_ms_active),
            ("evaluate", sum.gpu_ms_evaluate),
            ("trial", sum.gpu_ms_trial),
            ("ccd", sum.gpu_ms_ccd),
            ("dual", sum.gpu_ms_dual),
            ("search", sum.gpu_ms_search),
        ];
        out.push(GraphTimes {
            cells: n,
            vertices: sim.model().positions.len(),
            active_max: sum.active_max,
            newton_iterations: sum.newton_iterations,
            gpu_ms_per_newton_iteration: per.into_iter().map(|(name, ms)| (name, ms / k)).collect(),
        });
    }
    Ok(out)
}
