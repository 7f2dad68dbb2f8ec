//! `supple bench scene SCENE --frames N [--repeat R] [--json]`: times a scene frame by frame
//! (after a warm-up frame), R times from a fresh simulation, and prints percentiles over all
//! timed frames, the min/median/max over repeats of each repeat's median, and solver
//! iteration means; with `collision.method = "prox"` a `prox` block summarises the timed
//! frames' PROX solves (sweeps, rollbacks, ms and dispatches per solve, colors, exits).

use crate::stats::Stats;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;
use supple::scene::Scene;
use supple::simulation::Simulation;

/// Options of `supple bench scene`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scene file (TOML).
    scene: PathBuf,
    /// Frames to time (after one warm-up frame).
    #[arg(long, default_value_t = 30)]
    frames: u32,
    /// Override scene fields, e.g. --set simulation.substeps=2 (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// Repeat the whole measurement this many times, each from a freshly built simulation.
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Also report every graph node's GPU time per frame and workgroup size (graphs get
    /// per-node timestamps, which inflate times on some drivers: compare nodes within a run).
    /// With `SUPPLE_WORKGROUP=pattern=size,...` this is a workgroup-size study.
    #[arg(long)]
    nodes: bool,
    /// A scene with `collision.method = "bal"`: run the issue-23 ablations side by side (BAL vs
    /// inexact Newton, warm start on/off, both σ rules, per-step friction lag, and the two-way
    /// method on the same scene), each a full measurement, with the paper's claims quoted.
    #[arg(long)]
    bal_ablations: bool,
}

/// One graph node's GPU time over the timed frames.
#[derive(Serialize, Clone)]
struct NodeSummary {
    graph: String,
    name: String,
    kernel: String,
    /// Workgroup size it ran with (0 for fill and copy nodes).
    workgroup_size: u32,
    /// Runs per timed frame.
    runs_per_frame: f64,
    /// Microseconds per frame the node adds to its graph (its command plus the barrier and
    /// launch overhead in front of it).
    us_per_frame: f64,
    /// Microseconds per frame between the node's own timestamps.
    kernel_us_per_frame: f64,
}

#[derive(Serialize)]
struct Report {
    scene: String,
    device: String,
    threads: Option<u32>,
    vertices: usize,
    tets: usize,
    frames: u32,
    substeps: u32,
    ms_per_frame_median: f64,
    ms_per_frame_p10: f64,
    ms_per_frame_p90: f64,
    newton_iterations_mean: f64,
    pcg_iterations_mean: f64,
    /// Grouped warm-start PCG iterations per frame (0 with the warm start off).
    pcg_warm_iterations_mean: f64,
    /// Host waits for device work per timed frame (`Context::counters`; the frame's
    /// readback included: it rides in the Newton stepper's last wait).
    host_waits_per_frame: f64,
    /// The most host waits of any timed frame.
    host_waits_per_frame_max: u64,
    /// Queue submissions per timed frame.
    submits_per_frame: f64,
    /// Compute dispatches per timed frame (each submitted graph's dispatches per submission).
    dispatches_per_frame: f64,
    /// Of those, the dispatches that ran per timed frame: less those of gated sections that
    /// conditional rendering skipped (equal without it).
    dispatches_executed_per_frame: f64,
    /// Device memory Supple held after the last timed frame (bytes).
    device_bytes: u64,
    /// Largest relative residual of any PCG solve of the timed frames (0 without Newton).
    pcg_relative_residual_max: f64,
    /// The timed frames' global PCG solves by why they stopped (`converged`, `stagnated`,
    /// `iteration_cap`, `breakdown`, `non_finite`; all 0 without Newton).
    pcg_exits: supple::stepper::PcgExits,
    /// Smallest fraction of its estimated optimum quadratic-model decrease that a global PCG
    /// solve of the timed frames reached (absent without Newton).
    #[serde(skip_serializing_if = "Option::is_none")]
    pcg_model_fraction_min: Option<f64>,
    repeat: u32,
    /// Surface collision handling (absent without `collision.method`).
    #[serde(skip_serializing_if = "Option::is_none")]
    collision: Option<CollisionSummary>,
    /// Shortest-path collision handling (absent unless `collision.method = "shortest-path"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    recovery: Option<RecoverySummary>,
    /// PROX's solves over the timed frames (absent unless `collision.method = "prox"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    prox: Option<ProxSummary>,
    /// Barrier-augmented Lagrangian contact (absent unless `collision.method = "bal"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    bal: Option<BalSummary>,
    /// Each repeat's median milliseconds per frame, summarised over the repeats.
    ms_per_frame_median_over_repeats: Stats,
    /// Per-node GPU times, slowest first (with `--nodes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    nodes: Option<Vec<NodeSummary>>,
    /// The `SUPPLE_WORKGROUP` rules, and what each matching node did (absent without rules).
    #[serde(skip_serializing_if = "Option::is_none")]
    workgroup_overrides: Option<WorkgroupStudy>,
}

/// A per-node workgroup-size study's settings and outcome.
#[derive(Serialize)]
struct WorkgroupStudy {
    rules: Vec<(String, u32)>,
    nodes: Vec<supple::vk::WorkgroupOverrideUse>,
}

/// PROX's solves with contacts over the timed frames (`prox.steps[]` of each frame's report).
#[derive(Serialize, Default)]
struct ProxSummary {
    /// `prox.scheme`.
    scheme: String,
    /// Time steps timed, and those of them with contacts (solves).
    time_steps: u32,
    solves: u32,
    /// Means per solve.
    contacts_mean: f64,
    colors_mean: f64,
    sweeps_mean: f64,
    sweeps_median: f64,
    rollbacks_mean: f64,
    ms_per_solve_mean: f64,
    dispatches_per_solve_mean: f64,
    /// Mean milliseconds of the contact generation per time step (all steps).
    generation_ms_mean: f64,
    /// Largest natural-map residual of a solve (N·s) and the mean.
    residual_max: f64,
    residual_mean: f64,
    /// Solves by exit (`absolute`, `relative`, `max-iterations`).
    exits: std::collections::BTreeMap<String, u32>,
    /// Largest penetration (m; faithful mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    max_penetration: Option<f64>,
}

impl ProxSummary {
    fn add(&mut self, f: &supple::contact::prox::handler::ProxFrameStats) {
        self.scheme.clone_from(&f.scheme);
        if let Some(p) = f.max_penetration {
            self.max_penetration = Some(self.max_penetration.map_or(p, |q: f64| q.max(p)));
        }
        for s in &f.steps {
            self.time_steps += 1;
            self.generation_ms_mean += s.generation_ms;
            if s.contacts == 0 {
                continue;
            }
            self.solves += 1;
            self.contacts_mean += s.contacts as f64;
            self.colors_mean += s.colors as f64;
            self.sweeps_mean += s.sweeps as f64;
            self.rollbacks_mean += s.rollbacks as f64;
            self.ms_per_solve_mean += s.ms;
            self.dispatches_per_solve_mean += s.dispatches as f64;
            self.residual_max = self.residual_max.max(s.residual as f64);
            self.residual_mean += s.residual as f64;
            *self.exits.entry(s.exit.clone()).or_default() += 1;
        }
    }

    /// Sums to means; `sweeps` are every solve's sweep count.
    fn finish(mut self, mut sweeps: Vec<f64>) -> Self {
        let k = self.solves.max(1) as f64;
        for m in [
            &mut self.contacts_mean,
            &mut self.colors_mean,
            &mut self.sweeps_mean,
            &mut self.rollbacks_mean,
            &mut self.ms_per_solve_mean,
            &mut self.dispatches_per_solve_mean,
            &mut self.residual_mean,
        ] {
            *m /= k;
        }
        self.generation_ms_mean /= self.time_steps.max(1) as f64;
        sweeps.sort_by(f64::total_cmp);
        self.sweeps_median = percentile(&sweeps, 0.5);
        self
    }
}

/// Sums per-node times of `trace` into `acc` (keyed by graph and node).
fn add_node_times(
    trace: supple::vk::Trace,
    acc: &mut std::collections::BTreeMap<(String, String), NodeSummary>,
) {
    for run in trace.graph_runs {
        for n in run.nodes {
            let e = acc
                .entry((run.graph.clone(), n.name.clone()))
                .or_insert_with(|| NodeSummary {
                    graph: run.graph.clone(),
                    name: n.name.clone(),
                    kernel: n.kernel.clone(),
                    workgroup_size: n.workgroup_size,
                    runs_per_frame: 0.0,
                    us_per_frame: 0.0,
                    kernel_us_per_frame: 0.0,
                });
            e.runs_per_frame += 1.0;
            e.us_per_frame += (n.end_ns - n.ready_ns).max(0.0) * 1e-3;
            e.kernel_us_per_frame += (n.end_ns - n.start_ns).max(0.0) * 1e-3;
        }
    }
}

/// Collision telemetry over the timed frames (the two-way IPM paper's Table 2 columns).
#[derive(Serialize, Default)]
struct CollisionSummary {
    /// Two-way steps per time step, mean and maximum.
    steps_per_time_step_mean: f64,
    steps_per_time_step_max: u32,
    /// Proximity searches per frame.
    searches_per_frame_mean: f64,
    /// Host milliseconds of collision handling per frame (searches + steps), mean and maximum.
    ms_per_frame_mean: f64,
    ms_per_frame_max: f64,
    /// Of which proximity searches, constraint building and coloring.
    ms_proximity_per_frame_mean: f64,
    /// Dispatches per two-way step.
    dispatches_per_step: u32,
    /// Largest contact color count.
    contact_colors_max: u32,
    /// Solves that hit the step limit L.
    unconverged_solves: u32,
    /// Smallest pair distance seen (m).
    min_distance: Option<f32>,
}

/// Shortest-path telemetry over the timed frames (the shortest-path paper's Table 1 columns,
/// per XPBD substep = the paper's time step).
#[derive(Serialize, Default)]
struct RecoverySummary {
    /// Detection mode (`hybrid`, `dcd`, `ccd`).
    detection: String,
    /// Solver steps per frame (XPBD substeps, or Newton time steps).
    substeps_per_frame: u32,
    /// DCD detections per frame.
    detections_per_frame: f64,
    /// Penetrating points with a valid path per substep (DCD collisions).
    dcd_collisions_per_substep: f64,
    /// CCD hits per substep (CCD collisions).
    ccd_collisions_per_substep: f64,
    /// BVH nodes, traversals and tets visited per substep (Q, Tr, Tet).
    bvh_nodes_per_substep: f64,
    traversals_per_substep: f64,
    tets_visited_per_substep: f64,
    /// CCD candidate pairs per CCD detection and proximity searches per frame.
    ccd_pairs_per_detection: f64,
    ccd_searches_per_frame: f64,
    /// CCD detections whose motion exceeded half the search distance (pairs may be missing).
    ccd_unsafe: u32,
    /// Share of GPU time per part: XPBD, CCD (displacement checks, searches, CCD), DCD (BVH
    /// builds and point/edge-in-tet detection), shortest-path queries (with constraint setup)
    /// and constraint projections.
    share_xpbd: f64,
    /// With the Newton solver (penalty contact): its share (element, assembly, PCG and
    /// line-search graphs, the penalty's evaluations included).
    #[serde(skip_serializing_if = "Option::is_none")]
    share_newton: Option<f64>,
    share_ccd: f64,
    share_detection: f64,
    share_shortest_path: f64,
    share_response: f64,
    /// GPU milliseconds per frame of all parts.
    gpu_ms_per_frame: f64,
    /// Shortest-path queries' GPU milliseconds per frame over the wall-clock frame time (the
    /// issue's "share of the step", host overheads included in the denominator).
    shortest_path_share_of_frame_time: f64,
    #[serde(skip)]
    sums: supple::contact::shortest_path::ShortestPathFrameStats,
    #[serde(skip)]
    frames: u32,
    #[serde(skip)]
    stepper_ms: f64,
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Runs the benchmark; errors are (exit code, message).
/// The BAL method's statistics over the timed frames (`collision.method = "bal"`).
#[derive(Serialize, Default)]
struct BalSummary {
    /// Time steps timed.
    steps: u32,
    /// Newton iterations per time step (mean) and the most in one step.
    newton_iterations_per_step: f64,
    newton_iterations_max: u32,
    /// PCG iterations per Newton iteration (mean).
    pcg_iterations_per_newton: f64,
    /// PCG runs by exit: tolerance, stagnation, cap, breakdown; resumptions.
    pcg_exit_tolerance: u32,
    pcg_exit_stagnation: u32,
    pcg_exit_cap: u32,
    pcg_exit_breakdown: u32,
    pcg_resumes: u32,
    /// Steps not converged by the relative gradient test, steps at the Newton cap, failed
    /// line searches.
    unconverged_steps: u32,
    steps_at_cap: u32,
    line_search_failures: u32,
    /// Most active pairs, largest σ (N/m), smallest distance over d̂ and accepted step.
    active_max: u32,
    sigma_max: f64,
    min_distance_over_dhat: Option<f64>,
    alpha_min: Option<f64>,
    /// GPU ms per frame of the BAL graphs (active set, terms, trials, CCD, dual, searches).
    gpu_ms_per_frame: f64,
}

impl BalSummary {
    fn add(&mut self, s: &supple::contact::bal::handler::BalFrameStats) {
        self.steps += s.steps;
        self.newton_iterations_per_step += s.newton_iterations as f64;
        self.newton_iterations_max = self.newton_iterations_max.max(s.newton_iterations_max);
        self.pcg_iterations_per_newton += s.pcg_iterations as f64;
        self.pcg_exit_tolerance += s.pcg_exit_tolerance;
        self.pcg_exit_stagnation += s.pcg_exit_stagnation;
        self.pcg_exit_cap += s.pcg_exit_cap;
        self.pcg_exit_breakdown += s.pcg_exit_breakdown;
        self.pcg_resumes += s.pcg_resumes;
        self.unconverged_steps += s.unconverged_steps;
        self.steps_at_cap += s.steps_at_cap;
        self.line_search_failures += s.line_search_failures;
        self.active_max = self.active_max.max(s.active_max);
        self.sigma_max = self.sigma_max.max(s.sigma_max);
        let min = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.min_distance_over_dhat = min(self.min_distance_over_dhat, s.min_distance_over_dhat);
        self.alpha_min = min(self.alpha_min, s.alpha_min);
        self.gpu_ms_per_frame += s.gpu_ms_active
            + s.gpu_ms_evaluate
            + s.gpu_ms_trial
            + s.gpu_ms_ccd
            + s.gpu_ms_dual
            + s.gpu_ms_search;
    }

    fn finish(mut self, frames: f64) -> Self {
        let newton = self.newton_iterations_per_step;
        self.newton_iterations_per_step = newton / self.steps.max(1) as f64;
        self.pcg_iterations_per_newton /= newton.max(1.0);
        self.gpu_ms_per_frame /= frames.max(1.0);
        self
    }
}

/// One ablation of `--bal-ablations`: its label, the overrides it adds and the paper's claim
/// it stands beside (quoted, not asserted).
const BAL_ABLATIONS: &[(&str, &[&str], &str)] = &[
    ("bal", &[], "the method as configured in the scene"),
    (
        "inexact-newton",
        &["collision.bal.augmentation=false"],
        "\"our method achieves a 2.03x speedup compared to the inexact Newton method, along with \
         a 2.01x enhancement in convergence for the puffer balls scenario. Similarly, in the case \
         of the twisting rod, we observe a 2.3x speedup accompanied by a 1.3x improvement in \
         convergence\" (§6, Fig. 25)",
    ),
    (
        "warm-start-off",
        &["solver.stiffness_group_warm_start=false"],
        "\"achieving overall performances of 2.08x and 1.53x faster than GPU-optimized PCG, in \
         the respective staircase scenarios\" (§6, Fig. 26: the block-Jacobi warm start)",
    ),
    (
        "sigma-capped",
        &["collision.bal.sigma_rule=\"capped\""],
        "Algorithm 1 prints σ ← max(1.2σ, 100σ⁰); the capped reading min(1.2σ, 100σ⁰) is ours \
         (spec §A7 #4)",
    ),
    (
        "friction-per-step",
        &["collision.bal.friction_lag=\"per-step\""],
        "\"Our per-iteration updates achieve better performance with fewer inexact Newton \
         iterations\" (Fig. 7)",
    ),
    (
        "two-way",
        &["collision.method=\"two-way\""],
        "the two-way IPM (issue 6) on the same scene; the paper compares with IPC: \"up to a \
         hundredfold speedup\" (§1)",
    ),
];

/// A measurement of `--bal-ablations`.
#[derive(Serialize)]
struct Ablation {
    label: String,
    set: Vec<String>,
    paper: String,
    /// The measurement, or why the variant could not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    report: Option<Report>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

pub fn run(args: &Args) -> Result<(), (i32, String)> {
    let ctx =
        supple::Context::new(supple::ContextOptions::from_env()).map_err(|e| (1, e.to_string()))?;
    let print = |v: &dyn erased_json::Json| -> Result<(), (i32, String)> {
        let text = if args.json { v.compact() } else { v.pretty() };
        println!("{}", text.map_err(|e| (1, e.to_string()))?);
        Ok(())
    };
    if !args.bal_ablations {
        let scene = Scene::load(&args.scene, &args.set).map_err(|e| (2, e.to_string()))?;
        let r = measure(args, &ctx, &scene)?;
        return print(&r);
    }
    let base = Scene::load(&args.scene, &args.set).map_err(|e| (2, e.to_string()))?;
    if supple::contact::method(base.collision.method).name() != "bal" {
        return Err((
            2,
            format!(
                "--bal-ablations: {} does not use collision.method = \"bal\"",
                args.scene.display()
            ),
        ));
    }
    let mut out = Vec::new();
    for (label, extra, paper) in BAL_ABLATIONS {
        let mut set = args.set.clone();
        set.extend(extra.iter().map(|s| s.to_string()));
        let scene = Scene::load(&args.scene, &set).map_err(|e| (2, e.to_string()))?;
        let (report, error) = match measure(args, &ctx, &scene) {
            Ok(r) => (Some(r), None),
            Err((_, e)) => (None, Some(e)),
        };
        out.push(Ablation {
            label: label.to_string(),
            set: extra.iter().map(|s| s.to_string()).collect(),
            paper: paper.to_string(),
            report,
            error,
        });
    }
    print(&out)
}

/// Small JSON printing helper for the two outputs.
mod erased_json {
    /// Compact or pretty JSON of a serializable value.
    pub trait Json {
        fn compact(&self) -> serde_json::Result<String>;
        fn pretty(&self) -> serde_json::Result<String>;
    }
    impl<T: serde::Serialize> Json for T {
        fn compact(&self) -> serde_json::Result<String> {
            serde_json::to_string(self)
        }
        fn pretty(&self) -> serde_json::Result<String> {
            serde_json::to_string_pretty(self)
        }
    }
}

/// Times `scene` as the options say and returns the report.
fn measure(args: &Args, ctx: &supple::Context, scene: &Scene) -> Result<Report, (i32, String)> {
    let ctx = ctx.clone();
    let (mut times, mut newton, mut pcg, mut warm) = (Vec::new(), 0u64, 0u64, 0u64);
    let (mut waits, mut submits, mut dispatches, mut device_bytes) = (0u64, 0u64, 0u64, 0u64);
    let mut waits_max = 0u64;
    let mut residual_max = 0.0f64;
    let mut exits = supple::stepper::PcgExits::default();
    let mut fraction_min: Option<f64> = None;
    let mut executed = 0u64;
    let mut repeat_medians = Vec::new();
    let mut model_size = (0, 0);
    let mut col = CollisionSummary::default();
    let mut col_frames = 0u32;
    let mut col_time_steps = 0u32;
    let mut rec = RecoverySummary::default();
    let mut prox = ProxSummary::default();
    let mut prox_sweeps = Vec::new();
    // PROX reports its scheme in every frame's `prox` block.
    let mut is_prox = false;
    // Whether the stepper minimises an energy (the shortest-path method is then a penalty
    // with discrete detection and the stepper's own time is "newton" in the shares).
    let mut minimising = false;
    let mut node_times = std::collections::BTreeMap::new();
    let mut bal = BalSummary::default();
    let mut bal_frames = 0u32;
    for _ in 0..args.repeat.max(1) {
        if args.nodes {
            // Graphs compiled while tracing get per-node timestamps.
            ctx.start_trace();
        }
        let mut sim = Simulation::new(&ctx, scene).map_err(|e| (2, e.to_string()))?;
        minimising = sim.stepper_info().minimises_energy;
        model_size = (sim.model().positions.len(), sim.model().tets.len());
        sim.step_frame().map_err(|e| (1, e.to_string()))?;
        if args.nodes {
            // Drop the warm-up frame's runs.
            ctx.take_trace();
            ctx.start_trace();
        }
        let mut this = Vec::new();
        for _ in 0..args.frames.max(1) {
            let t0 = Instant::now();
            let s = sim.step_frame().map_err(|e| (1, e.to_string()))?;
            // The host needs the positions every frame (export): step_frame read them back
            // (its readback is in the frame's time and counts); take them as `supple run` does.
            sim.frame_state().map_err(|e| (1, e.to_string()))?;
            this.push(t0.elapsed().as_secs_f64() * 1e3);
            newton += s.newton_iterations as u64;
            pcg += s.pcg_iterations as u64;
            warm += s.pcg_warm_iterations as u64;
            waits += s.host_waits;
            waits_max = waits_max.max(s.host_waits);
            submits += s.submits;
            dispatches += s.dispatches;
            executed += s.dispatches_executed;
            device_bytes = s.device_bytes;
            residual_max = residual_max.max(s.pcg_relative_residual_max);
            if s.pcg_exits.total() > 0 {
                let f = s.pcg_model_fraction_min;
                fraction_min = Some(fraction_min.map_or(f, |m| m.min(f)));
            }
            exits += s.pcg_exits;
            let r = s.contact::<supple::contact::shortest_path::ShortestPathFrameStats>();
            if r.detections > 0 || r.ccd_detections > 0 {
                rec.frames += 1;
                rec.sums += r;
                rec.stepper_ms += s.gpu_ms.total();
            }
            let p = s.contact::<supple::contact::prox::handler::ProxFrameStats>();
            if !p.scheme.is_empty() {
                is_prox = true;
                prox.add(&p);
                let solved = p.steps.iter().filter(|t| t.contacts > 0);
                prox_sweeps.extend(solved.map(|t| t.sweeps as f64));
            }
            let b = s.contact::<supple::contact::bal::handler::BalFrameStats>();
            if b.steps > 0 {
                bal_frames += 1;
                bal.add(&b);
            }
            let c = &s.contact::<supple::contact::two_way::CollisionFrameStats>();
            if c.solves > 0 {
                col_frames += 1;
                col_time_steps += c.time_steps;
                col.steps_per_time_step_mean += c.steps as f64;
                col.steps_per_time_step_max =
                    col.steps_per_time_step_max.max(c.max_steps_per_time_step);
                col.searches_per_frame_mean += c.searches as f64;
                let ms = c.ms_proximity + c.ms_steps;
                col.ms_per_frame_mean += ms;
                col.ms_per_frame_max = col.ms_per_frame_max.max(ms);
                col.ms_proximity_per_frame_mean += c.ms_proximity;
                col.dispatches_per_step = c.dispatches_per_step;
                col.contact_colors_max = col.contact_colors_max.max(c.contact_colors);
                col.unconverged_solves += c.unconverged_solves;
                if let Some(d) = c.min_distance {
                    col.min_distance = Some(col.min_distance.map_or(d, |m: f32| m.min(d)));
                }
            }
        }
        repeat_medians.push(Stats::of(&this).median);
        times.extend(this);
        if let Some(t) = ctx.take_trace() {
            add_node_times(t, &mut node_times);
        }
    }
    let timed_frames = (args.frames.max(1) * args.repeat.max(1)) as f64;
    let nodes = args.nodes.then(|| {
        let mut v: Vec<NodeSummary> = node_times
            .into_values()
            .map(|mut n| {
                n.runs_per_frame /= timed_frames;
                n.us_per_frame /= timed_frames;
                n.kernel_us_per_frame /= timed_frames;
                n
            })
            .collect();
        v.sort_by(|a, b| b.us_per_frame.total_cmp(&a.us_per_frame));
        v
    });
    let rules = ctx.options().workgroup_overrides.rules().to_vec();
    let workgroup_overrides = (!rules.is_empty()).then(|| WorkgroupStudy {
        rules,
        nodes: ctx.workgroup_override_report(),
    });
    let n = times.len() as f64;
    let collision = (col_frames > 0).then(|| {
        let f = col_frames as f64;
        col.steps_per_time_step_mean /= col_time_steps.max(1) as f64;
        col.searches_per_frame_mean /= f;
        col.ms_per_frame_mean /= f;
        col.ms_proximity_per_frame_mean /= f;
        col
    });
    let mean_frame_ms = times.iter().sum::<f64>() / times.len().max(1) as f64;
    let recovery = (rec.frames > 0).then(|| {
        let t = rec.sums;
        let f = rec.frames as f64;
        let substeps = if minimising {
            scene.simulation.substeps
        } else {
            scene.xpbd.substeps * scene.simulation.substeps
        };
        let per_step = |x: f64| x / (f * substeps.max(1) as f64);
        let total = rec.stepper_ms + t.ms_ccd + t.ms_detect + t.ms_shortest_path + t.ms_response;
        let share = |x: f64| if total > 0.0 { x / total } else { 0.0 };
        RecoverySummary {
            // The Newton penalty detects discretely whatever the scene says.
            detection: if minimising {
                "dcd".to_string()
            } else {
                format!("{:?}", scene.collision.detection).to_lowercase()
            },
            substeps_per_frame: substeps,
            detections_per_frame: t.detections as f64 / f,
            dcd_collisions_per_substep: per_step(t.collisions as f64),
            ccd_collisions_per_substep: per_step(t.ccd_collisions as f64),
            bvh_nodes_per_substep: per_step(t.counters.bvh_nodes as f64),
            traversals_per_substep: per_step(t.counters.traversals as f64),
            tets_visited_per_substep: per_step(t.counters.tets_visited as f64),
            ccd_pairs_per_detection: t.ccd_pairs as f64 / t.ccd_detections.max(1) as f64,
            ccd_searches_per_frame: t.ccd_searches as f64 / f,
            ccd_unsafe: t.ccd_unsafe,
            share_xpbd: if minimising {
                0.0
            } else {
                share(rec.stepper_ms)
            },
            share_newton: minimising.then(|| share(rec.stepper_ms)),
            share_ccd: share(t.ms_ccd),
            share_detection: share(t.ms_detect),
            share_shortest_path: share(t.ms_shortest_path),
            share_response: share(t.ms_response),
            gpu_ms_per_frame: total / f,
            shortest_path_share_of_frame_time: if mean_frame_ms > 0.0 {
                t.ms_shortest_path / f / mean_frame_ms
            } else {
                0.0
            },
            ..Default::default()
        }
    });
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let r = Report {
        scene: args.scene.display().to_string(),
        device: ctx.caps().name.clone(),
        // lavapipe runs LP_NUM_THREADS threads, by default one per CPU.
        threads: std::env::var("LP_NUM_THREADS")
            .ok()
            .and_then(|v| v.parse().ok())
            .or_else(|| {
                ctx.caps()
                    .name
                    .contains("llvmpipe")
                    .then(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32))
            }),
        vertices: model_size.0,
        tets: model_size.1,
        frames: args.frames.max(1),
        substeps: scene.simulation.substeps,
        ms_per_frame_median: percentile(&sorted, 0.5),
        ms_per_frame_p10: percentile(&sorted, 0.1),
        ms_per_frame_p90: percentile(&sorted, 0.9),
        newton_iterations_mean: newton as f64 / n,
        pcg_iterations_mean: pcg as f64 / n,
        pcg_warm_iterations_mean: warm as f64 / n,
        host_waits_per_frame: waits as f64 / n,
        host_waits_per_frame_max: waits_max,
        submits_per_frame: submits as f64 / n,
        dispatches_per_frame: dispatches as f64 / n,
        dispatches_executed_per_frame: executed as f64 / n,
        device_bytes,
        pcg_relative_residual_max: residual_max,
        pcg_exits: exits,
        pcg_model_fraction_min: fraction_min,
        repeat: args.repeat.max(1),
        collision,
        recovery,
        prox: is_prox.then(|| prox.finish(prox_sweeps)),
        bal: (bal_frames > 0).then(|| bal.finish(bal_frames as f64)),
        ms_per_frame_median_over_repeats: Stats::of(&repeat_medians),
        nodes,
        workgroup_overrides,
    };
    Ok(r)
}
