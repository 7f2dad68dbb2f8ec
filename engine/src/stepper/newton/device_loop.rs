//! The device-driven Newton loop: with no contact handler between iterates, a step is one
//! submission of the prediction and first evaluation, then iteration graphs submitted in
//! batches with one host wait per batch. Each iteration graph holds one Newton iteration —
//! Hessian assembly, a PCG run, [`TRIALS_PER_GRAPH`] line-search trials, the acceptance, the
//! next evaluation and the velocity update — in sections gated on the device
//! ([`crate::vk::GatedGraph`]) by the phase word that `kernels/newton/control.comp` writes
//! after each part. An iteration whose PCG solve needs more than one run, or whose line search
//! needs more trials, continues in the next graph. The decisions are the host loop's
//! ([`super::NewtonStepper`]'s `iterate`), with the same comparisons, so both loops give the
//! same trajectory bit for bit. Reference: `cpu_reference::newton::device_control`.

use super::graphs::{Bindings, ScriptMode, VectorsMode};
use super::NewtonSettings;
use crate::error::SimError;
use crate::linear::{warm_run_length, ModelDecrease, SolveExit, RESULT_SLOTS};
use crate::stepper::StepReport;
use crate::vk::{
    ids, BufferUsage, CompileOptions, CompiledGraph, Dispatch, GatedGraph, GpuBuffer, Graph,
    VkResult,
};
use std::cell::Cell;

/// Line-search trials recorded per iteration graph (a search that needs more continues in the
/// next graph; most accept the first).
pub const TRIALS_PER_GRAPH: usize = 3;

/// Iteration graphs compiled and submitted round robin: a batch is at most this long, so no
/// graph is submitted again before the wait that covers its last run.
pub const GRAPH_COPIES: usize = 4;

/// Words of the control buffer (`kernels/newton/control.comp`).
pub mod words {
    /// The phase: which sections the next gates open ([`super::phase`]).
    pub const PHASE: usize = 0;
    /// Newton iterations (linear solves) of the step so far.
    pub const SOLVES: usize = 1;
    /// Rejected trials of the current line search.
    pub const TRIALS: usize = 2;
    /// [`super::status`] bits.
    pub const STATUS: usize = 3;
    /// The objective at x as an exact f32 pair (hi, lo).
    pub const ENERGY_HI: usize = 4;
    /// Low part of the objective.
    pub const ENERGY_LO: usize = 5;
    /// Largest per-vertex gradient norm at the last evaluation (f32).
    pub const GNORM: usize = 6;
    /// Largest vertex displacement of the last direction (f32).
    pub const DMAX: usize = 7;
    /// Iteration graphs the step ran in (the next step's first batch).
    pub const GRAPHS: usize = 8;
    /// First word of the per-solve log: PCG iterations, warm-start iterations, relative
    /// residual (f32), accepted α (f32, 0 when the search failed), PCG exit code
    /// (`SolveExit::from_code`), model decrease (f32), ½ r·z left (f32).
    pub const LOG: usize = 16;
    /// Words per logged solve.
    pub const LOG_WORDS: usize = 7;
}

/// Phase bits.
pub mod phase {
    /// Hessian assembly and the PCG inits.
    pub const ASSEMBLE: u32 = 1;
    /// A PCG solve that needs another run.
    pub const SOLVING: u32 = 2;
    /// Line-search trials.
    pub const SEARCH: u32 = 4;
    /// x = x_trial.
    pub const ACCEPT: u32 = 8;
    /// Gradient and energy at the accepted x.
    pub const EVALUATE: u32 = 16;
    /// The velocity update.
    pub const FINISH: u32 = 32;
}

/// Status bits.
pub mod status {
    /// The last line search found no decrease.
    pub const SEARCH_FAILED: u32 = 1;
    /// A PCG solve ended with a residual that is not finite.
    pub const NOT_FINITE: u32 = 2;
    /// The step is complete.
    pub const DONE: u32 = 4;
}

/// Modes of `kernels/newton/control.comp` (its specialization constant).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ControlMode {
    /// After the step's first evaluation.
    Start = 0,
    /// After every PCG run.
    Solved = 1,
    /// After each line-search trial.
    Tried = 2,
    /// After x = x_trial.
    Accepted = 3,
    /// After an evaluation at the accepted x.
    Evaluated = 4,
    /// After the velocity update.
    Finished = 5,
}

/// Push constants of `kernels/newton/control.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ControlParams {
    /// Newton iterations per step at most.
    pub max_iterations: u32,
    /// The largest f32 not above the gradient tolerance (N; 0: no gradient test).
    pub gradient_tolerance: f32,
    /// The displacement tolerance (m) as an f32 pair hi + lo.
    pub tolerance_hi: f32,
    /// Low part of the displacement tolerance.
    pub tolerance_lo: f32,
    /// The smallest α a line search tries (negative: none, the search fails once α ≤ 1e-6).
    pub alpha_floor: f32,
    /// Whether the warm start runs (its iterations are logged).
    pub warm: u32,
    /// PCG result slots ([`crate::linear::RESULT_SLOTS`]).
    pub slot_iterations: u32,
    /// Slot of the relative residual.
    pub slot_residual: u32,
    /// Slot of the done flag.
    pub slot_done: u32,
    /// Slot of the warm start's iterations.
    pub slot_warm_iterations: u32,
    /// Slot of the exit code.
    pub slot_exit: u32,
    /// Slot of the model decrease.
    pub slot_model: u32,
    /// Slot of ½ r·z at the end.
    pub slot_remaining: u32,
}

impl ControlParams {
    /// The parameters of `settings`' stop tests, exact in f32 for the host loop's f64 ones.
    pub fn new(settings: &NewtonSettings) -> ControlParams {
        let gtol = settings.gradient_tolerance;
        let mut g = gtol as f32;
        if f64::from(g) > gtol {
            g = f32::from_bits(g.to_bits() - 1);
        }
        let hi = settings.tolerance as f32;
        ControlParams {
            max_iterations: settings.max_iterations,
            gradient_tolerance: g,
            tolerance_hi: hi,
            tolerance_lo: (settings.tolerance - f64::from(hi)) as f32,
            alpha_floor: settings
                .max_halvings
                .map_or(-1.0, |n| 0.5f32.powi(n as i32)),
            warm: settings.warm_start.enabled as u32,
            slot_iterations: RESULT_SLOTS.iterations,
            slot_residual: RESULT_SLOTS.relative_residual,
            slot_done: RESULT_SLOTS.done,
            slot_warm_iterations: RESULT_SLOTS.warm_iterations,
            slot_exit: RESULT_SLOTS.exit,
            slot_model: RESULT_SLOTS.model_decrease,
            slot_remaining: RESULT_SLOTS.model_remaining,
        }
    }
}

/// Words the control buffer needs for `max_iterations` logged solves.
pub fn control_words(max_iterations: u32) -> usize {
    words::LOG + words::LOG_WORDS * max_iterations.max(1) as usize
}

/// Whether the device loop can run a step with `settings`: always-projected Hessians, one
/// outer iteration, no PCG resumption after a failed search, and a warm start that ends within
/// one PCG run of `run_length` iterations.
pub fn eligible(settings: &NewtonSettings, run_length: u32) -> bool {
    !settings.project_on_demand
        && settings.max_outer_iterations == 1
        && settings.pcg_resumes == 0
        && (!settings.warm_start.enabled || settings.warm_start.max_iterations <= run_length)
}

/// Part of the step's GPU time a node's section belongs to (by its name's prefix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Predict,
    Evaluate,
    Hessian,
    Pcg,
    Search,
    Finish,
}

impl Part {
    fn prefix(self) -> &'static str {
        match self {
            Part::Predict => "predict",
            Part::Evaluate => "evaluate",
            Part::Hessian => "hessian",
            Part::Pcg => "pcg",
            Part::Search => "search",
            Part::Finish => "finish",
        }
    }

    fn of(name: &str) -> Option<Part> {
        let p = name.split('/').next()?;
        [
            Part::Predict,
            Part::Evaluate,
            Part::Hessian,
            Part::Pcg,
            Part::Search,
            Part::Finish,
        ]
        .into_iter()
        .find(|k| k.prefix() == p)
    }
}

/// Global PCG run lengths the iteration graphs are recorded in below the longest
/// ([`super::pcg_run_length`], always recorded): a step's graphs record the shortest run that
/// its solves are expected to need ([`pick_run`]). Every recorded iteration after the device's
/// stop still costs a skipped (or empty) dispatch and its barrier; the steps between the
/// lengths are small enough that at most about a third of a run goes unused.
pub const RUN_LENGTHS: [u32; 6] = [16, 24, 32, 48, 64, 96];

/// The fewest iterations a step's run records beyond what the last step's solves needed
/// ([`pick_run`]): a few skipped iterations cost less than a solve continued in another graph.
pub const RUN_MARGIN: u32 = 8;

/// The run lengths the iteration graphs are recorded in for runs of at most `most` iterations:
/// those of [`RUN_LENGTHS`] below it, then `most`; ascending.
pub fn run_lengths(most: u32) -> Vec<u32> {
    let mut lengths: Vec<u32> = RUN_LENGTHS.into_iter().filter(|&l| l < most).collect();
    lengths.push(most);
    lengths
}

/// Index into `lengths` (ascending) of the run a step records when its solves are expected to
/// need `needed` PCG iterations (the most any solve of the last step took; `None` before the
/// first step): the shortest run of at least `needed` plus a quarter, and plus
/// [`RUN_MARGIN`] at least (the counts drift from step to step; a solve that needs more
/// continues in the next graph, which costs a graph's gates and often a host wait), the
/// longest without one, and before the first step.
pub fn pick_run(lengths: &[u32], needed: Option<u32>) -> usize {
    let last = lengths.len().saturating_sub(1);
    let Some(needed) = needed else {
        return last;
    };
    let want = needed.saturating_add(needed.div_ceil(4).max(RUN_MARGIN));
    lengths.iter().position(|&l| l >= want).unwrap_or(last)
}

/// The compiled graphs of the device loop and its control buffer.
pub(super) struct DeviceLoop {
    control: GpuBuffer<u32>,
    start: CompiledGraph,
    /// The global PCG run lengths of `iterations` (ascending).
    lengths: Vec<u32>,
    /// Per run length, [`GRAPH_COPIES`] iteration graphs.
    iterations: Vec<Vec<CompiledGraph>>,
    /// The run length (index into `lengths`) of the next step's graphs.
    length: Cell<usize>,
    /// The next iteration graph to submit.
    next: Cell<usize>,
    /// Iteration graphs the last step needed: the first batch of the next.
    batch: Cell<usize>,
    /// Iteration graphs a step may take before the loop is declared stuck.
    max_graphs: usize,
}

/// A `kernels/newton/control.comp` dispatch in `mode`, as a graph of its own named by `part`.
fn control_graph(
    b: &Bindings,
    control: &GpuBuffer<u32>,
    params: &ControlParams,
    mode: ControlMode,
    part: Part,
) -> Graph {
    let mut g = Graph::new("newton.control");
    g.dispatch(
        Dispatch::new(
            format!("newton.control[{mode:?}]"),
            ids::NEWTON_CONTROL,
            [1, 1, 1],
        )
        .workgroup_size(64)
        .spec(&[mode as u32])
        .read_write(control)
        .read(&b.ws.sums)
        .read(b.pcg.scalars())
        .read_write(&b.ws.alpha)
        .push(params),
    );
    g.prefix_names(part.prefix())
}

/// Whole-graph timestamps; per-node ones only while the context asks for them (a trace,
/// `--nodes`): on lavapipe they cost more than the iteration graphs save.
fn profiled() -> CompileOptions {
    CompileOptions {
        timestamps: false,
        graph_timestamps: true,
        ..Default::default()
    }
}

/// Records iteration graph `copy` of the loop, with global PCG runs of `run` iterations and
/// warm-start runs of `warm_run`.
fn record_iteration(
    b: &Bindings,
    control: &GpuBuffer<u32>,
    params: &ControlParams,
    copy: usize,
    (warm_run, run): (u32, u32),
) -> VkResult<CompiledGraph> {
    let st = b.settings;
    let ctl = |mode: ControlMode, part: Part| control_graph(b, control, params, mode, part);
    let (mode, name) = if st.friction_per_iteration {
        (VectorsMode::Gradient, "newton.gradient")
    } else {
        (VectorsMode::GradientLagged, "newton.gradient_lagged")
    };
    let word = words::PHASE as u32;
    let mut gg = GatedGraph::new(format!("newton.iteration{copy}.run{run}"));
    // A graph of a batch that starts after the step is done (phase 0: every section
    // closed, every control a no-op) is skipped where conditional rendering is on,
    // but the PCG runs, whose run starts close their own predicates (the solve is done).
    gg.skip_unless(control, word, u32::MAX);
    let parts = b.pcg.solve_parts(st.warm_start.enabled, warm_run, run)?;
    let mut assemble = b.hessian_nodes().prefix_names(Part::Hessian.prefix());
    if let Some(w) = parts.warm_init {
        assemble.append(w.prefix_names(Part::Pcg.prefix()));
    }
    gg.gated(assemble, control, word, phase::ASSEMBLE);
    if let Some(w) = parts.warm_iterations {
        gg.unconditional(w.prefix_names(Part::Pcg.prefix()));
    }
    // Opened by the assembly's gate: the warm start's run between them does not
    // change the phase word.
    gg.gated_like_previous(parts.init.prefix_names(Part::Pcg.prefix()));
    gg.unconditional(parts.iterations.prefix_names(Part::Pcg.prefix()));
    gg.always(ctl(ControlMode::Solved, Part::Pcg));
    // The controls after a trial, the acceptance and the evaluation act only in the
    // phase that opened that section (nothing in the section writes the phase word):
    // they are the section's last node, skipped or launched empty with it.
    for _ in 0..TRIALS_PER_GRAPH {
        let mut trial = b.trial_nodes().prefix_names(Part::Search.prefix());
        trial.append(ctl(ControlMode::Tried, Part::Search));
        gg.gated(trial, control, word, phase::SEARCH);
    }
    let mut accept = b.accept_nodes().prefix_names(Part::Search.prefix());
    accept.append(ctl(ControlMode::Accepted, Part::Search));
    gg.gated(accept, control, word, phase::ACCEPT);
    let mut evaluate = b
        .evaluate_nodes("newton.evaluate", name, mode)
        .prefix_names(Part::Evaluate.prefix());
    evaluate.append(ctl(ControlMode::Evaluated, Part::Evaluate));
    gg.gated(evaluate, control, word, phase::EVALUATE);
    let finish = b.finish_nodes().prefix_names(Part::Finish.prefix());
    gg.gated(finish, control, word, phase::FINISH);
    gg.always(ctl(ControlMode::Finished, Part::Finish));
    gg.build(b.ctx)?.compile(b.ctx, profiled())
}

impl DeviceLoop {
    /// Records the start graph and, per run length ([`run_lengths`]), [`GRAPH_COPIES`]
    /// iteration graphs over `b`.
    pub fn record(b: &Bindings) -> VkResult<DeviceLoop> {
        let st = b.settings;
        let control = b.ctx.create_buffer::<u32>(
            "newton.control",
            control_words(st.max_iterations),
            BufferUsage::HOST_READ | BufferUsage::STORAGE,
        )?;
        let params = ControlParams::new(st);
        let mut start = Graph::new("newton.device_start");
        if let Some(s) = b.script_nodes(ScriptMode::Jump) {
            start.append(s.prefix_names(Part::Predict.prefix()));
        }
        start.append(b.predict_nodes().prefix_names(Part::Predict.prefix()));
        start.append(
            b.evaluate_nodes("newton.evaluate", "newton.gradient", VectorsMode::Gradient)
                .prefix_names(Part::Evaluate.prefix()),
        );
        start.append(control_graph(
            b,
            &control,
            &params,
            ControlMode::Start,
            Part::Evaluate,
        ));
        let start = start.compile(b.ctx, profiled())?;
        let most = b.pcg.iterations_per_run();
        let lengths = run_lengths(most);
        // The warm start must end within its run ([`eligible`]).
        let warm_run = warm_run_length(st.warm_start.max_iterations, most);
        let mut iterations = Vec::with_capacity(lengths.len());
        for &run in &lengths {
            let copies = (0..GRAPH_COPIES)
                .map(|copy| record_iteration(b, &control, &params, copy, (warm_run, run)))
                .collect::<VkResult<Vec<_>>>()?;
            iterations.push(copies);
        }
        // Each iteration can take one graph per PCG run (of the shortest length) and per
        // TRIALS_PER_GRAPH trials of a search (α halves down to 1e-6, at most 21 trials,
        // without a floor).
        let runs = st.pcg_max_iterations.div_ceil(lengths[0]).max(1) as usize;
        let trials = st.max_halvings.map_or(21, |n| n as usize + 1);
        let per_iteration = runs + trials.div_ceil(TRIALS_PER_GRAPH) + 1;
        Ok(DeviceLoop {
            control,
            start,
            length: Cell::new(pick_run(&lengths, None)),
            lengths,
            iterations,
            next: Cell::new(0),
            batch: Cell::new(1),
            max_graphs: st.max_iterations.max(1) as usize * per_iteration + 1,
        })
    }

    /// Runs one step from the prediction to the velocity update; fills `report` and returns
    /// the objective at the end. The caller wrote the step's end time.
    pub fn step(&self, t: f64, report: &mut StepReport) -> Result<f64, SimError> {
        let graphs = &self.iterations[self.length.get()];
        self.start.submit()?;
        let mut run = 0usize;
        let batch = self.batch.get().clamp(1, GRAPH_COPIES);
        let mut first = true;
        loop {
            let mut submitted = Vec::with_capacity(batch);
            for _ in 0..batch {
                let i = self.next.get();
                self.next.set((i + 1) % GRAPH_COPIES);
                submitted.push((i, graphs[i].submit()?));
            }
            if let Some(&(i, ticket)) = submitted.last() {
                graphs[i].wait(ticket)?;
            }
            run += batch;
            if first {
                add_profile(&self.start, report, Part::Predict)?;
                first = false;
            }
            for (i, _) in &submitted {
                add_profile(&graphs[*i], report, Part::Search)?;
                // Every graph of the batch has completed (one queue, in order): the sections
                // its gates closed were skipped where conditional rendering is on.
                if graphs[*i].conditional_dispatch_count() > 0 {
                    graphs[*i].count_skipped_dispatches()?;
                }
            }
            let w = self.words()?;
            if w[words::PHASE] == 0 {
                break;
            }
            if run >= self.max_graphs {
                return Err(SimError::solver(
                    "newton",
                    format!(
                        "the device-driven Newton loop at t = {t} s did not finish after \
                         {run} iteration graphs (phase word {})",
                        w[words::PHASE]
                    ),
                ));
            }
            // Not done: another batch as long (the step needed more graphs than the last one).
        }
        // The next step's first batch: the graphs this one used (not those it over-submitted),
        // and its run length: what this step's solves needed.
        let used = self.words()?[words::GRAPHS] as usize;
        self.batch.set(used.clamp(1, GRAPH_COPIES));
        self.length
            .set(pick_run(&self.lengths, Some(self.most_solve_iterations()?)));
        self.read_report(t, report)
    }

    /// The most PCG iterations (global solve) any solve of the finished step took.
    fn most_solve_iterations(&self) -> Result<u32, SimError> {
        let w = self.words()?;
        let solves = w[words::SOLVES] as usize;
        Ok((0..solves)
            .filter_map(|k| w.get(words::LOG + k * words::LOG_WORDS).copied())
            .max()
            .unwrap_or(0))
    }

    fn words(&self) -> Result<&[u32], SimError> {
        self.control
            .mapped()
            .ok_or_else(|| SimError::solver("newton", "control buffer is not host-visible"))
    }

    /// Fills `report` from the control words of a finished step; returns the objective.
    fn read_report(&self, t: f64, report: &mut StepReport) -> Result<f64, SimError> {
        let w = self.words()?;
        let f = |i: usize| f32::from_bits(w[i]);
        let solves = w[words::SOLVES] as usize;
        for k in 0..solves {
            let at = words::LOG + k * words::LOG_WORDS;
            let Some(entry) = w.get(at..at + words::LOG_WORDS) else {
                break;
            };
            let residual = f32::from_bits(entry[2]);
            report.pcg_iterations += entry[0];
            report.pcg_warm_iterations += entry[1];
            report.pcg_residual = residual as f64;
            report.pcg_residual_max = report.pcg_residual_max.max(residual as f64);
            let model = ModelDecrease {
                decrease: f32::from_bits(entry[5]),
                remaining: f32::from_bits(entry[6]),
            };
            report.record_pcg(
                SolveExit::from_code(entry[4] as f32).unwrap_or(SolveExit::NonFinite),
                model,
            );
        }
        report.newton_iterations = solves as u32;
        report.gradient_norm = f(words::GNORM) as f64;
        report.last_direction = f(words::DMAX) as f64;
        if w[words::STATUS] & status::NOT_FINITE != 0 {
            return Err(super::not_finite_system(t, report.pcg_residual));
        }
        Ok(f(words::ENERGY_HI) as f64 + f(words::ENERGY_LO) as f64)
    }
}

/// Adds a completed graph's GPU time to the report: with per-node timestamps, its nodes'
/// times summed by part and scaled to the graph's total; without, the whole graph under `device_loop` (the start graph under
/// `predict`).
fn add_profile(g: &CompiledGraph, report: &mut StepReport, whole: Part) -> Result<(), SimError> {
    let Some(p) = g.profile()? else {
        return Ok(());
    };
    let ms = &mut report.gpu_ms;
    if p.nodes.is_empty() {
        match whole {
            Part::Predict => ms.predict += p.total_ms,
            _ => ms.device_loop += p.total_ms,
        }
        return Ok(());
    }
    let mut parts = [0.0f64; 6];
    let mut last = Part::Predict;
    // Gate nodes carry no prefix: they belong to the section that follows them.
    for n in p.nodes.iter().rev() {
        let part = Part::of(&n.name).unwrap_or(last);
        last = part;
        parts[part as usize] += n.gpu_ms;
    }
    // Scaled to the graph's total: the barriers between levels take GPU time no node owns.
    let sum: f64 = parts.iter().sum();
    let scale = if sum > 0.0 { p.total_ms / sum } else { 0.0 };
    ms.predict += parts[Part::Predict as usize] * scale;
    ms.evaluate += parts[Part::Evaluate as usize] * scale;
    ms.hessian += parts[Part::Hessian as usize] * scale;
    ms.pcg += parts[Part::Pcg as usize] * scale;
    ms.line_search += parts[Part::Search as usize] * scale;
    ms.finish += parts[Part::Finish as usize] * scale;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{pick_run, run_lengths};

    #[test]
    fn the_run_lengths_ascend_to_the_longest_run() {
        assert_eq!(run_lengths(128), [16, 24, 32, 48, 64, 96, 128]);
        // A cap of 100 PCG iterations: no run longer than the cap.
        assert_eq!(run_lengths(100), [16, 24, 32, 48, 64, 96, 100]);
        assert_eq!(run_lengths(16), [16]);
        assert_eq!(run_lengths(2), [2]);
    }

    #[test]
    fn a_step_records_the_shortest_run_a_quarter_above_the_last_solves() {
        let l = run_lengths(128);
        // Before the first step: the longest.
        assert_eq!(l[pick_run(&l, None)], 128);
        assert_eq!(l[pick_run(&l, Some(0))], 16);
        assert_eq!(l[pick_run(&l, Some(8))], 16);
        // 9 + 8 = 17 > 16: the margin of 8 above a quarter.
        assert_eq!(l[pick_run(&l, Some(9))], 24);
        // 36 + 9 = 45.
        assert_eq!(l[pick_run(&l, Some(36))], 48);
        // 39 + 10 = 49 > 48.
        assert_eq!(l[pick_run(&l, Some(39))], 64);
        assert_eq!(l[pick_run(&l, Some(77))], 128);
        // More than the longest run: the longest (the solve continues in the next graph).
        assert_eq!(l[pick_run(&l, Some(500))], 128);
        assert_eq!(l[pick_run(&l, Some(u32::MAX))], 128);
    }
}
