//! Block-Jacobi PCG on the GPU, driven by the device (`kernels/solver/spmv.comp`,
//! `pcg_update.comp`, `pcg_control.comp`, `pcg_discard.comp`). One iteration is three
//! dispatches: the SpMV writes per-workgroup partials of p·q, the step kernel reduces them (in
//! every workgroup, same fixed order) and writes partials of r·z and r·r, and the control
//! kernel updates the direction and decides, in workgroup 0, whether to stop (relative
//! residual vs tolerance, iteration cap, stagnation window): it writes the next iteration's
//! indirect dispatch arguments (zero workgroups once done). A graph records a run of
//! `iterations_per_run` iterations; the host reads the solve's scalars once per run, so a solve
//! that fits one run costs one submission and one host wait. Sums are fixed-order (no float
//! atomics): reruns are bit-identical. Reference: [`crate::cpu_reference::pcg`] (`pcg_device`
//! has the device's stop rule). The three kernels read their operands through uniform texel
//! buffer views ([`Dispatch::read_texels`]; the workspace buffers carry
//! [`BufferUsage::TEXEL`]) and write through storage buffers: the same values, gathered by the
//! texture path (a vector gather on lavapipe instead of one invocation at a time).
//!
//! **Block-Jacobi warm start by stiffness groups** (paper §4.2, [`Pcg::solve_resident_warm`]):
//! the caller writes a per-node stiffness estimate `e_j` into [`Pcg::stiffness`]; a kernel
//! (`stiffness_groups.comp`) puts node `j` into group `⌊log10(max(e_j, 10^-30))⌋`; a
//! block-Jacobi PCG from x = 0 on the *masked* system — the SpMV (`spmv.comp` with `MASKED = 1`)
//! keeps only the blocks `A_ij` whose nodes share a group, i.e. one independent subsystem per
//! group — runs for a bounded number of iterations; the global PCG then starts from its result.

use crate::vk::{
    ids, Access, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph,
    TexelFormat, VkError, VkResult,
};

/// A symmetric block-sparse matrix in f32: diagonal 3×3 blocks and off-diagonal pairs
/// `(i, j, B)` meaning `A_ij = B`, `A_ji = Bᵀ` (row-major blocks).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlockMatrixF32 {
    /// Diagonal blocks, row-major.
    pub diag: Vec<[f32; 9]>,
    /// Off-diagonal blocks `(i, j, B)`, row-major, `i != j`.
    pub off: Vec<(u32, u32, [f32; 9])>,
}

/// Why a PCG solve stopped, as the device decided (`kernels/solver/pcg_control.comp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SolveExit {
    /// ‖r‖ ≤ tolerance·‖b‖ (also b = 0).
    #[default]
    Converged,
    /// No new smallest residual over the stagnation window.
    Stagnated,
    /// The iteration cap.
    IterationCap,
    /// p·q ≤ 0 or r·z ≤ 0: an indefinite matrix or preconditioner, or an exact zero; the
    /// breaking iteration took a step of 0 and the solve stopped after it.
    Breakdown,
    /// The relative residual is NaN or infinite.
    NonFinite,
}

impl SolveExit {
    /// Every exit reason, in the order of [`SolveExit::index`].
    pub const ALL: [SolveExit; 5] = [
        SolveExit::Converged,
        SolveExit::Stagnated,
        SolveExit::IterationCap,
        SolveExit::Breakdown,
        SolveExit::NonFinite,
    ];

    /// The reason from the device's exit code (1 to 5; `None` for 0, a solve not finished).
    pub fn from_code(code: f32) -> Option<SolveExit> {
        match code as u32 {
            1 => Some(SolveExit::Converged),
            2 => Some(SolveExit::Stagnated),
            3 => Some(SolveExit::IterationCap),
            4 => Some(SolveExit::Breakdown),
            5 => Some(SolveExit::NonFinite),
            _ => None,
        }
    }

    /// Position in [`SolveExit::ALL`] (for per-reason counters).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The name used in reports: `converged`, `stagnated`, `iteration_cap`, `breakdown`,
    /// `non_finite`.
    pub fn name(self) -> &'static str {
        match self {
            SolveExit::Converged => "converged",
            SolveExit::Stagnated => "stagnated",
            SolveExit::IterationCap => "iteration_cap",
            SolveExit::Breakdown => "breakdown",
            SolveExit::NonFinite => "non_finite",
        }
    }
}

/// The quadratic model of one solve, from the scalars the kernels reduce anyway: CG from `x0`
/// decreases `f(x) = ½ xᵀAx − bᵀx` by `½ Σ αᵢ rᵢ·zᵢ` over its iterations (positive and
/// non-decreasing on an SPD system); `½ r·z` at the end (the preconditioner's estimate of the
/// remaining `½ rᵀA⁻¹r`) added to it estimates the optimum decrease.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ModelDecrease {
    /// `½ Σ αᵢ rᵢ·zᵢ` over the iterations run (in the units of `xᵀb`).
    pub decrease: f32,
    /// `½ r·z` at the end: the estimate of the decrease still available.
    pub remaining: f32,
}

impl ModelDecrease {
    /// decrease / (decrease + remaining): 1 at the optimum, near 0 for a useless capped
    /// solve; 1 when both are 0 (b = 0 or a solve that converged at its start).
    pub fn fraction(&self) -> f64 {
        let (d, r) = (self.decrease as f64, self.remaining.max(0.0) as f64);
        if d + r > 0.0 {
            d / (d + r)
        } else {
            1.0
        }
    }
}

/// Outcome of a solve.
#[derive(Debug, Clone, PartialEq)]
pub struct PcgSolve {
    /// Solution.
    pub x: Vec<[f32; 3]>,
    /// Iterations run (the device stops after any iteration).
    pub iterations: u32,
    /// Final ‖r‖ / ‖b‖.
    pub relative_residual: f32,
    /// Iterations of the stiffness-group warm start before the global PCG (0 without it).
    pub warm_iterations: u32,
    /// Why the global solve stopped.
    pub exit: SolveExit,
    /// The global solve's quadratic-model decrease.
    pub model: ModelDecrease,
}

/// The exit reason and model decrease of the solve block at `base` in the scalars `s`.
fn block_outcome(s: &[f32], base: u32) -> (SolveExit, ModelDecrease) {
    let b = &s[base as usize..base as usize + BLOCK as usize];
    let exit = SolveExit::from_code(b[EXIT]).unwrap_or(SolveExit::NonFinite);
    (
        exit,
        ModelDecrease {
            decrease: b[MODEL],
            remaining: b[REMAIN],
        },
    )
}

/// Settings of the block-Jacobi warm start by stiffness groups ([`Pcg::solve_resident_warm`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmStart {
    /// Whether the grouped solve runs; when false the solve is the plain PCG from the guess in
    /// [`Pcg::solution`].
    pub enabled: bool,
    /// Most iterations of the grouped PCG.
    pub max_iterations: u32,
    /// The grouped PCG stops at ‖b − A_masked x‖ ≤ `tolerance`·‖b‖.
    pub tolerance: f32,
}

impl Default for WarmStart {
    /// Enabled, at most 100 iterations, relative residual 1e-3.
    fn default() -> Self {
        WarmStart {
            enabled: true,
            max_iterations: 100,
            tolerance: 1e-3,
        }
    }
}

/// Outcome of [`Pcg::solve_resident_warm`]: both iteration counts, so callers can measure the
/// warm start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmSolveStats {
    /// Iterations of the global PCG.
    pub iterations: u32,
    /// Iterations of the grouped (masked) PCG of the warm start (0 when disabled or b = 0).
    pub warm_iterations: u32,
    /// Final global ‖r‖ / ‖b‖ (0 when b = 0).
    pub relative_residual: f32,
    /// Final ‖b − A_masked x‖ / ‖b‖ of the grouped solve (0 when it did not run).
    pub warm_relative_residual: f32,
    /// Why the global PCG stopped.
    pub exit: SolveExit,
    /// The global PCG's quadratic-model decrease.
    pub model: ModelDecrease,
}

/// Scalars of one solve, from its block's first slot: r·z (two alternating slots), r·r, b·b,
/// the relative residual, the iterations, the best residual and its iteration (written by the
/// device), the tolerance, the iteration cap and the stagnation window (written by the host
/// before the solve), whether the solve is done (1) or needs another run (0), the last p·q, the
/// model decrease and the exit code (device). See `kernels/solver/pcg_control.comp`.
const RZ: u32 = 0;
const REL: usize = 4;
const ITER: usize = 5;
/// The tolerance; the iteration cap and the stagnation window follow it.
const TOL: usize = 8;
const DONE: usize = 11;
/// The last iteration's p·q, the quadratic model's decrease ½ Σ α r·z and the exit code
/// ([`SolveExit::from_code`]).
const MODEL: usize = 13;
const EXIT: usize = 14;
/// ½ r·z at the last iteration ([`ModelDecrease::remaining`]).
const REMAIN: usize = 15;
/// Slots per solve block.
const BLOCK: u32 = 16;
/// First slot of the global solve's block and of the warm start's.
const GLOBAL: u32 = 0;
const WARM: u32 = BLOCK;

/// The nodes of one solve for a device-driven caller ([`Pcg::solve_parts`]).
pub struct SolveParts {
    /// The warm start's init (stiffness groups, x = 0, init and decision); with the warm start.
    pub warm_init: Option<Graph>,
    /// A run of the warm start's iterations; with the warm start.
    pub warm_iterations: Option<Graph>,
    /// x = 0 where the warm start broke down (with it), then the global init and decision.
    pub init: Graph,
    /// A run of global iterations.
    pub iterations: Graph,
}

/// Slots of a solve's results in [`Pcg::scalars`] (f32 values).
#[derive(Debug, Clone, Copy)]
pub struct ResultSlots {
    /// The global solve's exit code ([`SolveExit::from_code`]).
    pub exit: u32,
    /// The global solve's quadratic-model decrease ½ Σ α r·z.
    pub model_decrease: u32,
    /// ½ r·z at the global solve's end ([`ModelDecrease::remaining`]).
    pub model_remaining: u32,
    /// Iterations of the global solve.
    pub iterations: u32,
    /// Relative residual ‖r‖/‖b‖ of the global solve.
    pub relative_residual: u32,
    /// Non-zero once the global solve is done (converged, at its cap or stagnating).
    pub done: u32,
    /// Iterations of the warm start.
    pub warm_iterations: u32,
}

/// Where [`Pcg::scalars`] holds the results.
pub const RESULT_SLOTS: ResultSlots = ResultSlots {
    exit: GLOBAL + EXIT as u32,
    model_decrease: GLOBAL + MODEL as u32,
    model_remaining: GLOBAL + REMAIN as u32,
    iterations: GLOBAL + ITER as u32,
    relative_residual: GLOBAL + REL as u32,
    done: GLOBAL + DONE as u32,
    warm_iterations: WARM + ITER as u32,
};

/// The warm start's run for a cap of `max_iterations` and global runs of `most` iterations:
/// the whole cap (a warm start that fits one run is one submission with its global solve),
/// even, from 2 to `most`.
pub fn warm_run_length(max_iterations: u32, most: u32) -> u32 {
    max_iterations.max(2).next_multiple_of(2).min(most.max(2))
}

/// Smallest stiffness group: stiffness estimates below `10^GROUP_MIN` (including zero,
/// negative and NaN values) fall into it.
pub const GROUP_MIN: i32 = -30;
/// Largest stiffness group (f32 reaches about 3.4·10^38).
pub const GROUP_MAX: i32 = 38;

/// The f32 nearest to `10^k` for `k` in `GROUP_MIN..=GROUP_MAX` (correctly rounded), in order:
/// the thresholds between stiffness groups, shared bit for bit with the GPU kernel.
pub fn decade_thresholds() -> Vec<f32> {
    (GROUP_MIN..=GROUP_MAX)
        .map(|k| {
            format!("1e{k}")
                .parse::<f32>()
                .expect("a decimal power of ten parses")
        })
        .collect()
}

/// Matrix-free Hessian couplings a contact term adds to the PCG product: q = (A + C) p. The
/// solver records [`MatrixFreeCouplings::record_add_product`] after every unmasked SpMV of its
/// graphs and [`MatrixFreeCouplings::record_add_masked_product`] after the warm start's masked
/// ones (restricted to one stiffness group; none by default).
/// Implemented by the shortest-path penalty (`contact::shortest_path::PenaltyContact`).
pub trait MatrixFreeCouplings {
    /// Rows (vertices) the couplings act on; must equal the solver's.
    fn rows(&self) -> usize;

    /// Records nodes that add C · `input` into `q` (declaring `q` read and written).
    fn record_add_product(
        &self,
        g: &mut Graph,
        input: &GpuBuffer<[f32; 4]>,
        q: &GpuBuffer<[f32; 4]>,
    );

    /// Records nodes that add the couplings between nodes of the same stiffness group
    /// (`groups`, one per row) to `q`: the warm start's masked product. The default adds
    /// none (the grouped subsystems then leave the couplings out).
    fn record_add_masked_product(
        &self,
        _g: &mut Graph,
        _input: &GpuBuffer<[f32; 4]>,
        _q: &GpuBuffer<[f32; 4]>,
        _groups: &GpuBuffer<i32>,
    ) {
    }
}

/// A PCG solver for one matrix (sparsity and values uploaded once; the right-hand side and
/// initial guess per solve).
pub struct Pcg {
    ctx: Context,
    n: usize,
    gpu_ms: std::cell::Cell<f64>,
    diag: GpuBuffer<[f32; 4]>,
    off: GpuBuffer<[f32; 4]>,
    minv: GpuBuffer<[f32; 4]>,
    x: GpuBuffer<[f32; 4]>,
    b: GpuBuffer<[f32; 4]>,
    scalars: GpuBuffer<f32>,
    stiffness: GpuBuffer<f32>,
    groups: GpuBuffer<i32>,
    q: GpuBuffer<[f32; 4]>,
    graphs: Graphs,
    w: Workspace,
    warm_gpu_ms: std::cell::Cell<f64>,
    stagnation_window: std::cell::Cell<u32>,
    iterations_per_run: u32,
    warm_iterations_per_run: u32,
}

fn rows12(m: &[f32; 9]) -> [[f32; 4]; 3] {
    [
        [m[0], m[1], m[2], 0.0],
        [m[3], m[4], m[5], 0.0],
        [m[6], m[7], m[8], 0.0],
    ]
}

fn invert3(m: &[f32; 9]) -> Option<[f32; 9]> {
    let a = nalgebra::Matrix3::from_row_slice(&m.map(f64::from));
    let inv = a.try_inverse()?;
    let mut out = [0f32; 9];
    for r in 0..3 {
        for c in 0..3 {
            out[3 * r + c] = inv[(r, c)] as f32;
        }
    }
    Some(out)
}

struct Workspace {
    r: GpuBuffer<[f32; 4]>,
    z: GpuBuffer<[f32; 4]>,
    p: GpuBuffer<[f32; 4]>,
    q: GpuBuffer<[f32; 4]>,
    diag: GpuBuffer<[f32; 4]>,
    minv: GpuBuffer<[f32; 4]>,
    off: GpuBuffer<[f32; 4]>,
    row_ptr: GpuBuffer<u32>,
    incidence: GpuBuffer<[u32; 2]>,
    /// Per-workgroup partials of p·q, r·z, r·r and b·b (one per row workgroup).
    part_pq: GpuBuffer<f32>,
    part_rz: GpuBuffer<f32>,
    part_rr: GpuBuffer<f32>,
    part_bb: GpuBuffer<f32>,
    /// Indirect dispatch arguments and done flag of the even and odd iterations
    /// (`[groups, 1, 1, done]`): iteration k reads `ctl[k % 2]` and writes the other; the
    /// global solve's and the warm start's own pairs, so a run of global iterations recorded
    /// after the warm start's continues where the last run stopped (device-driven Newton).
    ctl: [GpuBuffer<u32>; 2],
    ctl_warm: [GpuBuffer<u32>; 2],
    /// The predicate-word binding of the control dispatches that write none (the inits, and
    /// every control without conditional rendering).
    live_unused: GpuBuffer<u32>,
    stiffness: GpuBuffer<f32>,
    thresholds: GpuBuffer<f32>,
    groups: GpuBuffer<i32>,
}

/// The compiled solver graphs (recorded again when a contact operator is attached).
struct Graphs {
    /// Global init and the first run of iterations.
    solve: CompiledGraph,
    /// A further run of global iterations.
    iterate: CompiledGraph,
    /// Warm start (groups, x = 0, init, a run of masked iterations).
    warm_start: CompiledGraph,
    /// A further run of masked iterations.
    warm_iterate: CompiledGraph,
    /// x = 0 if the warm start broke down, then `solve`.
    discard_solve: CompiledGraph,
    /// `warm_start` then `discard_solve`: one submission when the warm start fits one run.
    warm_solve: CompiledGraph,
    multiply: CompiledGraph,
    multiply_masked: CompiledGraph,
    /// The predicate words of `solve`'s and `iterate`'s runs (with conditional rendering).
    run_predicates: Option<(GpuBuffer<u32>, GpuBuffer<u32>)>,
}

/// The row workgroups of `n` block rows (one row per invocation): also the partial count.
fn row_groups(n: usize) -> u32 {
    (n as u32).div_ceil(WG).max(1)
}

/// Records the solver's nodes into graphs over the workspace.
#[derive(Clone, Copy)]
struct Recorder<'a> {
    ctx: &'a Context,
    n: usize,
    /// Iterations recorded per run of the global solve.
    k: u32,
    /// Iterations recorded per run of the warm start.
    warm_k: u32,
    w: &'a Workspace,
    x: &'a GpuBuffer<[f32; 4]>,
    b: &'a GpuBuffer<[f32; 4]>,
    scalars: &'a GpuBuffer<f32>,
    contact: Option<&'a dyn MatrixFreeCouplings>,
}

impl Recorder<'_> {
    /// q = A `input` (`masked`: only blocks inside one stiffness group). With `indirect`, the
    /// workgroup count comes from that control buffer and the p·q partials are fused in (or,
    /// with contact couplings, computed after them).
    fn spmv(
        &self,
        g: &mut Graph,
        input: &GpuBuffer<[f32; 4]>,
        masked: bool,
        indirect: Option<&GpuBuffer<u32>>,
    ) {
        let (w, n) = (self.w, self.n as u32);
        let name = if masked {
            "pcg.spmv_masked"
        } else {
            "pcg.spmv"
        };
        let fused = indirect.is_some() && self.contact.is_none();
        let d = match indirect {
            Some(ctl) => Dispatch::indirect(name, ids::SOLVER_SPMV, ctl),
            None => Dispatch::new(name, ids::SOLVER_SPMV, [row_groups(self.n), 1, 1]),
        };
        g.dispatch(
            d.workgroup_size(WG)
                .spec(&[masked as u32, fused as u32])
                .read_texels(&w.diag, TexelFormat::Rgba32Float)
                .read_texels(&w.off, TexelFormat::Rgba32Float)
                .read_texels(&w.row_ptr, TexelFormat::R32Uint)
                .read_texels(&w.incidence, TexelFormat::Rg32Uint)
                .read_texels(input, TexelFormat::Rgba32Float)
                .write(&w.q)
                .read(&w.groups)
                .write(&w.part_pq)
                .push(&n),
        );
        match (masked, self.contact) {
            (false, Some(c)) => c.record_add_product(g, input, &w.q),
            (true, Some(c)) => c.record_add_masked_product(g, input, &w.q, &w.groups),
            _ => {}
        }
        if let (Some(ctl), Some(_)) = (indirect, self.contact) {
            // The couplings changed q after the SpMV: p·q partials in their own dispatch (one
            // partial per WG rows, the layout of the fused ones).
            g.dispatch(
                Dispatch::indirect("pcg.pq_partials", ids::SOLVER_DOT_PARTIALS, ctl)
                    .workgroup_size(WG)
                    .spec(&[1])
                    .read_texels(input, TexelFormat::Rgba32Float)
                    .read_texels(&w.q, TexelFormat::Rgba32Float)
                    .write(&w.part_pq)
                    .push(&n),
            );
        }
    }

    fn stiffness_groups(&self, g: &mut Graph) {
        let w = self.w;
        g.dispatch(
            Dispatch::new(
                "pcg.stiffness_groups",
                ids::SOLVER_STIFFNESS_GROUPS,
                [row_groups(self.n), 1, 1],
            )
            .workgroup_size(WG)
            .read(&w.stiffness)
            .read(&w.thresholds)
            .write(&w.groups)
            .push(&[self.n as u32, GROUP_MIN as u32, GROUP_MAX as u32]),
        );
    }

    /// `pcg_update.comp` in `mode` (0 init, 1 step); `acc`: the real storage accesses of x,
    /// r, z, p (every read goes through a texel view: x, r and p are bound twice).
    fn update(&self, d: Dispatch, mode: u32, rz_slot: u32, acc: [Access; 4]) -> Dispatch {
        let w = self.w;
        let v4 = TexelFormat::Rgba32Float;
        d.workgroup_size(WG)
            .spec(&[mode])
            .read_texels(&w.minv, v4)
            .read(self.scalars)
            .bind(self.x, acc[0])
            .bind(&w.r, acc[1])
            .bind(&w.z, acc[2])
            .bind(&w.p, acc[3])
            .read_texels(&w.q, v4)
            .read_texels(self.b, v4)
            .read_texels(&w.part_pq, TexelFormat::R32Float)
            .write(&w.part_rz)
            .write(&w.part_rr)
            .write(&w.part_bb)
            .read_texels(self.x, v4)
            .read_texels(&w.r, v4)
            .read_texels(&w.p, v4)
            .push(&[self.n as u32, row_groups(self.n), rz_slot])
    }

    /// The control pair of the solve block at `base` (global or warm start).
    fn ctl(&self, base: u32) -> &[GpuBuffer<u32>; 2] {
        if base == WARM {
            &self.w.ctl_warm
        } else {
            &self.w.ctl
        }
    }

    /// `pcg_control.comp` in `mode` (0 after init, 1 direction and decision, 2 run start);
    /// `live`: the run's predicate words, which modes 1 and 2 write (`None`: none written).
    fn control(
        &self,
        g: &mut Graph,
        name: &str,
        mode: u32,
        base: u32,
        it: u32,
        live: Option<&GpuBuffer<u32>>,
    ) {
        let w = self.w;
        let m = row_groups(self.n);
        let groups = if mode == 1 { [m, 1, 1] } else { [1, 1, 1] };
        let (live, k) = match live {
            Some(l) => (l, self.k),
            None => (&w.live_unused, 0),
        };
        let ctl = self.ctl(base);
        let (cin, cout) = (&ctl[(it % 2) as usize], &ctl[((it + 1) % 2) as usize]);
        g.dispatch(
            Dispatch::new(name, ids::SOLVER_PCG_CONTROL, groups)
                .workgroup_size(WG)
                .spec(&[mode])
                .read_write(self.scalars)
                .read(cin)
                .write(cout)
                .read_texels(&w.part_rz, TexelFormat::R32Float)
                .read_texels(&w.part_rr, TexelFormat::R32Float)
                .read_texels(&w.part_bb, TexelFormat::R32Float)
                .read_texels(&w.z, TexelFormat::Rgba32Float)
                .write(&w.p)
                .read_texels(&w.part_pq, TexelFormat::R32Float)
                .read_write(live)
                .read_texels(&w.p, TexelFormat::Rgba32Float)
                .push(&[self.n as u32, m, base, it % 2, it, k]),
        );
    }

    /// Init of a solve: r, z, p and the decision whether to iterate, into `ctl[0]`.
    /// `warm`: the grouped PCG of the warm start (x = 0); otherwise the global PCG from x.
    fn init(&self, g: &mut Graph, warm: bool) {
        let (wr, rw) = (Access::WRITE, Access::READ | Access::WRITE);
        let w = self.w;
        if warm {
            self.stiffness_groups(g);
            g.fill("pcg.warm_zero_x", self.x, 0);
            // A·0 = 0: no SpMV needed.
            g.fill("pcg.warm_zero_q", &w.q, 0);
        } else {
            self.spmv(g, self.x, false, None);
        }
        let d = Dispatch::new(
            if warm {
                "pcg.warm_init_vectors"
            } else {
                "pcg.init_vectors"
            },
            ids::SOLVER_PCG_UPDATE,
            [row_groups(self.n), 1, 1],
        );
        // pcg_update.comp binds x, r, z and p writable in every mode (the mode is a
        // specialization constant): declared written where the SPIR-V may write them, for the
        // synchronization validation in the tests.
        g.dispatch(self.update(d, 0, 0, [rw, wr, wr, wr]));
        // As the "iteration before 0": writes ctl[0], iteration 0's input.
        self.control(
            g,
            if warm {
                "pcg.warm_init_control"
            } else {
                "pcg.init_control"
            },
            0,
            if warm { WARM } else { GLOBAL },
            1,
            None,
        );
    }

    /// `k` iterations (3 dispatches each without contact couplings: SpMV with p·q partials,
    /// step with r·z and r·r partials, direction with the decision), all recorded. Where the
    /// context has conditional rendering, the run starts with `pcg_control.comp`'s run-start
    /// mode and iteration j's dispatches are predicated on the run's own word j (a buffer per
    /// recorded run, host-visible so that the skipped ones can be counted after the run): the
    /// iterations after the device decided to stop are skipped. Without it they launch no
    /// workgroup (SpMV, step) or only pass the decision on.
    /// Returns the run's predicate words (`None` without conditional rendering).
    fn iterations(&self, g: &mut Graph, masked: bool) -> VkResult<Option<GpuBuffer<u32>>> {
        if masked && self.warm_k != self.k {
            // The warm start's runs have their own length: a recorder whose runs are those.
            return Recorder {
                k: self.warm_k,
                ..*self
            }
            .iterations(g, masked);
        }
        let w = self.w;
        let rw = Access::READ | Access::WRITE;
        let base = if masked { WARM } else { GLOBAL };
        let live = if self.ctx.conditional_rendering() {
            let name = if masked { "pcg.warm_live" } else { "pcg.live" };
            let usage = BufferUsage::STORAGE | BufferUsage::CONDITION | BufferUsage::HOST_READ;
            Some(
                self.ctx
                    .create_buffer::<u32>(name, self.k as usize, usage)?,
            )
        } else {
            None
        };
        if let Some(l) = &live {
            let name = if masked {
                "pcg.warm_run_start"
            } else {
                "pcg.run_start"
            };
            self.control(g, name, 2, base, 0, Some(l));
        }
        for it in 0..self.k {
            let mut one = Graph::new(g.name());
            let cin = &self.ctl(base)[(it % 2) as usize];
            self.spmv(&mut one, &w.p, masked, Some(cin));
            let d = Dispatch::indirect(
                if masked { "pcg.warm_step" } else { "pcg.step" },
                ids::SOLVER_PCG_UPDATE,
                cin,
            );
            one.dispatch(self.update(d, 1, base + RZ + it % 2, [rw, rw, rw, rw]));
            self.control(
                &mut one,
                if masked {
                    "pcg.warm_direction"
                } else {
                    "pcg.direction"
                },
                1,
                base,
                it,
                live.as_ref(),
            );
            g.append(match &live {
                Some(l) => one.only_if(l.slice(it as usize..it as usize + 1)),
                None => one,
            });
        }
        Ok(live)
    }

    /// x = 0 where the warm start's residual is not finite.
    fn discard(&self, g: &mut Graph) {
        g.dispatch(
            Dispatch::new(
                "pcg.warm_discard",
                ids::SOLVER_PCG_DISCARD,
                [row_groups(self.n), 1, 1],
            )
            .workgroup_size(WG)
            .read(self.scalars)
            .read_write(self.x)
            .push(&[self.n as u32, WARM + REL as u32]),
        );
    }

    fn graphs(&self, ctx: &Context) -> VkResult<Graphs> {
        let timed = CompileOptions {
            graph_timestamps: true,
            ..Default::default()
        };
        type Part<'p> = &'p dyn Fn(&mut Graph) -> VkResult<()>;
        let build = |name: &str, parts: &[Part]| -> VkResult<CompiledGraph> {
            let mut g = Graph::new(name);
            for p in parts {
                p(&mut g)?;
            }
            g.compile(ctx, timed)
        };
        let solve_parts = |g: &mut Graph| {
            self.init(g, false);
            self.iterations(g, false).map(drop)
        };
        let warm_parts = |g: &mut Graph| {
            self.init(g, true);
            self.iterations(g, true).map(drop)
        };
        let discard = |g: &mut Graph| {
            self.discard(g);
            Ok(())
        };
        let warm_iterate = |g: &mut Graph| self.iterations(g, true).map(drop);
        let multiply = |g: &mut Graph| {
            self.spmv(g, self.x, false, None);
            Ok(())
        };
        let multiply_masked = |g: &mut Graph| {
            self.stiffness_groups(g);
            self.spmv(g, self.x, true, None);
            Ok(())
        };
        let mut solve = Graph::new("pcg.solve");
        self.init(&mut solve, false);
        let solve_live = self.iterations(&mut solve, false)?;
        let mut iterate = Graph::new("pcg.iterate");
        let iterate_live = self.iterations(&mut iterate, false)?;
        Ok(Graphs {
            solve: solve.compile(ctx, timed)?,
            iterate: iterate.compile(ctx, timed)?,
            run_predicates: solve_live.zip(iterate_live),
            warm_start: build("pcg.warm_start", &[&warm_parts])?,
            warm_iterate: build("pcg.warm_iterate", &[&warm_iterate])?,
            discard_solve: build("pcg.discard_solve", &[&discard, &solve_parts])?,
            warm_solve: build("pcg.warm_solve", &[&warm_parts, &discard, &solve_parts])?,
            // q = A x and q = A_masked x alone (tests and diagnostics).
            multiply: build("pcg.multiply", &[&multiply])?,
            multiply_masked: build("pcg.multiply_masked", &[&multiply_masked])?,
        })
    }
}

const WG: u32 = 64;

/// Runs `g` and waits; where its PCG iterations are predicated, counts those skipped
/// ([`CompiledGraph::count_skipped_dispatches`]).
fn run_counted(g: &CompiledGraph) -> VkResult<()> {
    g.run()?;
    if g.conditional_dispatch_count() > 0 {
        g.count_skipped_dispatches()?;
    }
    Ok(())
}

impl Pcg {
    /// Uploads the matrix and records the solver graphs (`iterations_per_run` iterations each).
    pub fn new(ctx: &Context, a: &BlockMatrixF32, iterations_per_run: u32) -> VkResult<Pcg> {
        let pairs: Vec<(u32, u32)> = a.off.iter().map(|(i, j, _)| (*i, *j)).collect();
        let runs = (iterations_per_run, iterations_per_run);
        Self::build(ctx, a.diag.len(), &pairs, Some(a), runs)
    }

    /// A solver for a matrix whose values are written on the device (e.g. assembled by a
    /// graph): `n` block rows and off-diagonal block pairs `(i, j)`; fill
    /// [`Pcg::diag_blocks`], [`Pcg::off_blocks`] and [`Pcg::inverse_diag_blocks`] before solving.
    pub fn with_sparsity(
        ctx: &Context,
        n: usize,
        pairs: &[(u32, u32)],
        iterations_per_run: u32,
    ) -> VkResult<Pcg> {
        let runs = (iterations_per_run, iterations_per_run);
        Self::build(ctx, n, pairs, None, runs)
    }

    /// [`Pcg::with_sparsity`] whose warm start records runs of `warm_iterations_per_run`
    /// (even, at most `iterations_per_run`; [`warm_run_length`]): a warm start stops after a
    /// few iterations, and every recorded iteration after its stop still costs its
    /// (skipped or empty) dispatches and their barriers.
    pub fn with_sparsity_and_warm_run(
        ctx: &Context,
        n: usize,
        pairs: &[(u32, u32)],
        iterations_per_run: u32,
        warm_iterations_per_run: u32,
    ) -> VkResult<Pcg> {
        let runs = (iterations_per_run, warm_iterations_per_run);
        Self::build(ctx, n, pairs, None, runs)
    }

    fn build(
        ctx: &Context,
        n: usize,
        pairs: &[(u32, u32)],
        values: Option<&BlockMatrixF32>,
        (iterations_per_run, warm_iterations_per_run): (u32, u32),
    ) -> VkResult<Pcg> {
        let bad = |m: String| VkError::Graph {
            graph: "pcg".into(),
            message: m,
        };
        if let Some((i, j)) = pairs
            .iter()
            .find(|(i, j)| *i as usize >= n || *j as usize >= n || i == j)
        {
            return Err(bad(format!(
                "off-diagonal block ({i}, {j}) is outside the {n} block rows or on the diagonal"
            )));
        }
        // Incidence lists per block row: (block | transposed << 31, other row), in block order.
        let mut count = vec![0u32; n + 1];
        for (i, j) in pairs {
            count[*i as usize + 1] += 1;
            count[*j as usize + 1] += 1;
        }
        for k in 0..n {
            count[k + 1] += count[k];
        }
        let mut fill = count.clone();
        let mut incidence = vec![[0u32; 2]; 2 * pairs.len()];
        for (b, (i, j)) in pairs.iter().enumerate() {
            let (i, j) = (*i as usize, *j as usize);
            incidence[fill[i] as usize] = [b as u32, j as u32];
            fill[i] += 1;
            incidence[fill[j] as usize] = [b as u32 | 1 << 31, i as u32];
            fill[j] += 1;
        }
        let flat = |blocks: &mut dyn Iterator<Item = [f32; 9]>| -> Vec<[f32; 4]> {
            blocks.flat_map(|m| rows12(&m)).collect()
        };
        let zero = [0f32; 9];
        type Blocks = Vec<[f32; 9]>;
        let (diag, off, minv): (Blocks, Blocks, Blocks) = match values {
            Some(a) => (
                a.diag.clone(),
                a.off.iter().map(|o| o.2).collect(),
                a.diag
                    .iter()
                    .enumerate()
                    .map(|(r, d)| {
                        invert3(d).ok_or_else(|| bad(format!("diagonal block {r} is singular")))
                    })
                    .collect::<VkResult<_>>()?,
            ),
            None => (vec![zero; n], vec![zero; pairs.len()], vec![zero; n]),
        };
        // TEXEL: the SpMV reads its input (x or p) and the matrix through texel views.
        let texel = BufferUsage::STORAGE | BufferUsage::TEXEL;
        let vec4 = |name: &str| ctx.create_buffer::<[f32; 4]>(name, n, texel);
        let partials = |name: &str| ctx.create_buffer::<f32>(name, row_groups(n) as usize, texel);
        // Initially done (zero workgroups): iterations recorded without their init launch
        // nothing (the device-driven Newton loop, [`Pcg::solve_parts`]).
        let control = |name: &str| {
            ctx.upload_buffer::<u32>(
                name,
                &[0, 1, 1, 1],
                BufferUsage::STORAGE | BufferUsage::INDIRECT,
            )
        };
        let w = Workspace {
            r: vec4("pcg.r")?,
            z: vec4("pcg.z")?,
            p: vec4("pcg.p")?,
            q: vec4("pcg.q")?,
            diag: ctx.upload_buffer("pcg.diag", &flat(&mut diag.into_iter()), texel)?,
            minv: ctx.upload_buffer("pcg.minv", &flat(&mut minv.into_iter()), texel)?,
            off: ctx.upload_buffer("pcg.off", &flat(&mut off.into_iter()), texel)?,
            row_ptr: ctx.upload_buffer("pcg.row_ptr", &count, texel)?,
            incidence: ctx.upload_buffer("pcg.incidence", &incidence, texel)?,
            part_pq: partials("pcg.partials_pq")?,
            part_rz: partials("pcg.partials_rz")?,
            part_rr: partials("pcg.partials_rr")?,
            part_bb: partials("pcg.partials_bb")?,
            ctl: [control("pcg.control_even")?, control("pcg.control_odd")?],
            ctl_warm: [
                control("pcg.warm_control_even")?,
                control("pcg.warm_control_odd")?,
            ],
            live_unused: ctx.create_buffer("pcg.live_unused", 1, BufferUsage::STORAGE)?,
            stiffness: ctx.create_buffer("pcg.stiffness", n.max(1), BufferUsage::STORAGE)?,
            thresholds: ctx.upload_buffer(
                "pcg.group_thresholds",
                &decade_thresholds(),
                BufferUsage::STORAGE,
            )?,
            groups: ctx.create_buffer("pcg.groups", n.max(1), BufferUsage::STORAGE)?,
        };
        let x = vec4("pcg.x")?;
        let b = vec4("pcg.b")?;
        // Host-visible: the settings are written before a solve and the result read after it
        // without a staging copy.
        let scalars = ctx.create_buffer::<f32>(
            "pcg.scalars",
            2 * BLOCK as usize,
            BufferUsage::HOST_READ | BufferUsage::HOST_WRITE | BufferUsage::STORAGE,
        )?;
        // No solve has started: both blocks are done, so the runs recorded without their init
        // (the device-driven Newton loop) are skipped where iterations are predicated.
        for block in [GLOBAL, WARM] {
            scalars.write_at(block as usize + DONE, &[1.0])?;
        }
        let k = iterations_per_run.max(1);
        let warm_k = warm_iterations_per_run.max(1);
        if !k.is_multiple_of(2) || !warm_k.is_multiple_of(2) {
            return Err(bad(
                "iterations_per_run must be even (the rz slots alternate)".into(),
            ));
        }
        if warm_k > k {
            return Err(bad(format!(
                "warm_iterations_per_run = {warm_k} exceeds iterations_per_run = {k}"
            )));
        }
        let graphs = Recorder {
            ctx,
            n,
            k,
            warm_k,
            w: &w,
            x: &x,
            b: &b,
            scalars: &scalars,
            contact: None,
        }
        .graphs(ctx)?;
        // The compiled graphs keep every workspace buffer alive.
        Ok(Pcg {
            ctx: ctx.clone(),
            n,
            gpu_ms: std::cell::Cell::new(0.0),
            diag: w.diag.clone(),
            off: w.off.clone(),
            minv: w.minv.clone(),
            x,
            b,
            scalars,
            stiffness: w.stiffness.clone(),
            groups: w.groups.clone(),
            q: w.q.clone(),
            graphs,
            w,
            warm_gpu_ms: std::cell::Cell::new(0.0),
            stagnation_window: std::cell::Cell::new(u32::MAX),
            iterations_per_run: k,
            warm_iterations_per_run: warm_k,
        })
    }

    /// Solves A x = b from `x0`, stopping at ‖r‖ ≤ `tol`·‖b‖ or after `max_iterations` (or on
    /// stagnation, [`Pcg::set_stagnation_window`]), decided on the device after every iteration.
    pub fn solve(
        &self,
        b: &[[f32; 3]],
        x0: &[[f32; 3]],
        tol: f32,
        max_iterations: u32,
    ) -> VkResult<PcgSolve> {
        if b.len() != self.n || x0.len() != self.n {
            return Err(VkError::SizeMismatch {
                name: "pcg rhs/x0".into(),
                expected: self.n,
                got: b.len().min(x0.len()),
            });
        }
        let pad = |v: &[[f32; 3]]| {
            v.iter()
                .map(|a| [a[0], a[1], a[2], 0.0])
                .collect::<Vec<_>>()
        };
        self.b.write(&pad(b))?;
        self.x.write(&pad(x0))?;
        let s = self.solve_resident_scalars(tol, max_iterations)?;
        let (exit, model) = block_outcome(&s, GLOBAL);
        let x = self
            .x
            .read()?
            .into_iter()
            .map(|v| [v[0], v[1], v[2]])
            .collect();
        Ok(PcgSolve {
            x,
            iterations: s[ITER] as u32,
            relative_residual: s[REL],
            warm_iterations: 0,
            exit,
            model,
        })
    }

    /// Solves A x = b with the stiffness-group warm start: the per-node stiffness estimates
    /// are uploaded to [`Pcg::stiffness`] (one per block row), then
    /// [`Pcg::solve_resident_warm`] runs; the result's `warm_iterations` counts the grouped
    /// PCG. With `warm.enabled == false` this is [`Pcg::solve`] from x = 0.
    pub fn solve_warm(
        &self,
        b: &[[f32; 3]],
        stiffness: &[f32],
        tol: f32,
        max_iterations: u32,
        warm: &WarmStart,
    ) -> VkResult<PcgSolve> {
        if b.len() != self.n || stiffness.len() != self.n {
            return Err(VkError::SizeMismatch {
                name: "pcg rhs/stiffness".into(),
                expected: self.n,
                got: b.len().min(stiffness.len()),
            });
        }
        let pad = |v: &[[f32; 3]]| {
            v.iter()
                .map(|a| [a[0], a[1], a[2], 0.0])
                .collect::<Vec<_>>()
        };
        self.b.write(&pad(b))?;
        self.x.write(&vec![[0f32; 4]; self.n])?;
        if self.n > 0 {
            self.stiffness.write(stiffness)?;
        }
        let stats = self.solve_resident_warm(tol, max_iterations, warm)?;
        let x = self
            .x
            .read()?
            .into_iter()
            .map(|v| [v[0], v[1], v[2]])
            .collect();
        Ok(PcgSolve {
            x,
            iterations: stats.iterations,
            relative_residual: stats.relative_residual,
            warm_iterations: stats.warm_iterations,
            exit: stats.exit,
            model: stats.model,
        })
    }

    /// [`Pcg::solve_resident`] preceded by the block-Jacobi warm start by stiffness groups
    /// (paper §4.2): groups from [`Pcg::stiffness`] (written beforehand by the caller's
    /// graphs), a block-Jacobi PCG from x = 0 on the masked system (blocks `A_ij` only where
    /// nodes `i` and `j` share a group) until `warm.tolerance` or `warm.max_iterations`, then
    /// the global PCG from that x until `tol` or `max_iterations` (counted separately). The
    /// guess in [`Pcg::solution`] is overwritten when the warm start is enabled. Both solves
    /// decide on the device; when the warm start's cap fits one run of iterations, the whole
    /// solve is one submission and the host reads its scalars once at the end (more runs, one
    /// read each, otherwise). [`Pcg::last_gpu_ms`] covers both solves,
    /// [`Pcg::last_warm_gpu_ms`] the grouped one (0 when both ran in one submission).
    pub fn solve_resident_warm(
        &self,
        tol: f32,
        max_iterations: u32,
        warm: &WarmStart,
    ) -> VkResult<WarmSolveStats> {
        Ok(self
            .solve_resident_warm_then(tol, max_iterations, warm, None)?
            .0)
    }

    /// [`Pcg::solve_resident_warm`] with `then` (a caller's graph that reads the solution)
    /// submitted right behind the solve's first run, so that one host wait covers both when
    /// the solve fits that run. Returns the solve's outcome and whether `then` ran after the
    /// whole solve; when it did not (no `then`, no warm start, or a solve that needed more
    /// runs), the caller runs it again.
    pub fn solve_resident_warm_then(
        &self,
        tol: f32,
        max_iterations: u32,
        warm: &WarmStart,
        then: Option<&CompiledGraph>,
    ) -> VkResult<(WarmSolveStats, bool)> {
        self.warm_gpu_ms.set(0.0);
        if !warm.enabled {
            let s = self.solve_resident_scalars(tol, max_iterations)?;
            let (exit, model) = block_outcome(&s, GLOBAL);
            let stats = WarmSolveStats {
                iterations: s[ITER] as u32,
                warm_iterations: 0,
                relative_residual: s[REL],
                warm_relative_residual: 0.0,
                exit,
                model,
            };
            return Ok((stats, false));
        }
        self.set_limits(GLOBAL, tol, max_iterations, self.stagnation_window.get())?;
        self.set_limits(WARM, warm.tolerance, warm.max_iterations, u32::MAX)?;
        let g = &self.graphs;
        let mut s = [0f32; 2 * BLOCK as usize];
        let mut then_after_solve = false;
        let ms = if warm.max_iterations <= self.warm_iterations_per_run {
            match then {
                Some(then) => {
                    let solve = g.warm_solve.submit()?;
                    let queued = then.submit()?;
                    // The later ticket: one wait for both (queue order).
                    then.wait(queued)?;
                    g.warm_solve.wait(solve)?;
                    if g.warm_solve.conditional_dispatch_count() > 0 {
                        g.warm_solve.count_skipped_dispatches()?;
                    }
                    self.scalars.read_into(&mut s)?;
                    then_after_solve = s[GLOBAL as usize + DONE] != 0.0;
                }
                None => run_counted(&g.warm_solve)?,
            }
            g.warm_solve.gpu_ms()?
        } else {
            let warm_ms = self.run_until_done(&g.warm_start, &g.warm_iterate, WARM, &mut s)?;
            self.warm_gpu_ms.set(warm_ms);
            run_counted(&g.discard_solve)?;
            warm_ms + g.discard_solve.gpu_ms()?
        };
        let ms = ms + self.continue_until_done(GLOBAL, &g.iterate, &mut s)?;
        self.gpu_ms.set(ms);
        let warm_s = &s[WARM as usize..];
        let (exit, model) = block_outcome(&s, GLOBAL);
        let stats = WarmSolveStats {
            iterations: s[ITER] as u32,
            warm_iterations: warm_s[ITER] as u32,
            relative_residual: s[REL],
            warm_relative_residual: warm_s[REL],
            exit,
            model,
        };
        Ok((stats, then_after_solve))
    }

    /// A recorder over this solver's workspace, with the contact couplings `contact`.
    fn recorder<'a>(&'a self, contact: Option<&'a dyn MatrixFreeCouplings>) -> Recorder<'a> {
        Recorder {
            ctx: &self.ctx,
            n: self.n,
            k: self.iterations_per_run,
            warm_k: self.warm_iterations_per_run,
            w: &self.w,
            x: &self.x,
            b: &self.b,
            scalars: &self.scalars,
            contact,
        }
    }

    /// The nodes of one solve, split for a caller that gates them on the device (the
    /// device-driven Newton loop, `stepper::newton`): recorded in this order they are the
    /// solve [`Pcg::solve_resident_warm`] submits when the warm start fits one run, or the plain
    /// solve from [`Pcg::solution`] without it. Gate the inits; run the iterations always:
    /// they launch work only while their solve is unfinished, so a later submission of the
    /// same nodes with the inits gated off continues a solve that needed more than one run.
    /// The limits come from [`Pcg::set_solve_limits`]; the results are in [`Pcg::scalars`]
    /// at [`RESULT_SLOTS`]. Without contact couplings only.
    ///
    /// `warm_run` and `run` are the iterations recorded in the warm start's run and in the
    /// global run: even, from 2 to [`Pcg::iterations_per_run`]. Every recorded iteration the
    /// solve does not need is still a (skipped or empty) dispatch and its barrier, so a caller
    /// records the runs its solves need: the whole warm start (it must end within its run),
    /// and a global run that a longer solve continues in the next submission of the nodes.
    pub fn solve_parts(&self, warm: bool, warm_run: u32, run: u32) -> VkResult<SolveParts> {
        for (what, k) in [("warm_run", warm_run), ("run", run)] {
            if k < 2 || !k.is_multiple_of(2) || k > self.iterations_per_run {
                return Err(VkError::Graph {
                    graph: "pcg".into(),
                    message: format!(
                        "{what} = {k}: a run must be even, from 2 to the {} iterations per run",
                        self.iterations_per_run
                    ),
                });
            }
        }
        let r = Recorder {
            k: run,
            warm_k: warm_run,
            ..self.recorder(None)
        };
        let part = |name: &str, f: &dyn Fn(&mut Graph) -> VkResult<()>| {
            let mut g = Graph::new(name);
            f(&mut g)?;
            Ok::<Graph, VkError>(g)
        };
        let (warm_init, warm_iterations) = if warm {
            (
                Some(part("pcg.warm_init", &|g| {
                    r.init(g, true);
                    Ok(())
                })?),
                Some(part("pcg.warm_iterations", &|g| {
                    r.iterations(g, true).map(drop)
                })?),
            )
        } else {
            (None, None)
        };
        Ok(SolveParts {
            warm_init,
            warm_iterations,
            init: part("pcg.init", &|g| {
                if warm {
                    r.discard(g);
                }
                r.init(g, false);
                Ok(())
            })?,
            iterations: part("pcg.iterations", &|g| r.iterations(g, false).map(drop))?,
        })
    }

    /// Writes the limits of the global solve and of the warm start for solves run from
    /// [`Pcg::solve_parts`] (the host-driven solves write their own).
    pub fn set_solve_limits(
        &self,
        tol: f32,
        max_iterations: u32,
        warm: &WarmStart,
    ) -> VkResult<()> {
        self.set_limits(GLOBAL, tol, max_iterations, self.stagnation_window.get())?;
        self.set_limits(WARM, warm.tolerance, warm.max_iterations, u32::MAX)
    }

    /// The solves' scalars (host-visible f32): settings and results, see [`RESULT_SLOTS`].
    pub fn scalars(&self) -> &GpuBuffer<f32> {
        &self.scalars
    }

    /// Writes a solve block's tolerance, iteration cap and stagnation window.
    fn set_limits(&self, base: u32, tol: f32, max_iterations: u32, window: u32) -> VkResult<()> {
        self.scalars.write_at(
            base as usize + TOL,
            &[tol, max_iterations as f32, window as f32],
        )
    }

    /// Runs `first`, then `more` while the solve block at `base` is not done; returns the GPU
    /// milliseconds and leaves the scalars in `s`.
    fn run_until_done(
        &self,
        first: &CompiledGraph,
        more: &CompiledGraph,
        base: u32,
        s: &mut [f32],
    ) -> VkResult<f64> {
        run_counted(first)?;
        let ms = first.gpu_ms()?;
        Ok(ms + self.continue_until_done(base, more, s)?)
    }

    /// Reads the scalars and runs `more` while the solve block at `base` is not done (not
    /// converged, under its cap and not stagnating, as the device decided).
    fn continue_until_done(&self, base: u32, more: &CompiledGraph, s: &mut [f32]) -> VkResult<f64> {
        let mut ms = 0.0;
        loop {
            self.scalars.read_into(s)?;
            if s[base as usize + DONE] != 0.0 {
                return Ok(ms);
            }
            // Not done after a whole run: the iterations continue from ctl[0] (runs have an
            // even number of iterations).
            run_counted(more)?;
            ms += more.gpu_ms()?;
        }
    }

    /// Computes y = A x, or with `masked` the product with only the blocks whose two nodes
    /// share a stiffness group (groups recomputed from [`Pcg::stiffness`] first, readable in
    /// [`Pcg::groups`]). For tests and diagnostics: overwrites [`Pcg::solution`] with `x`.
    pub fn multiply(&self, x: &[[f32; 3]], masked: bool) -> VkResult<Vec<[f32; 3]>> {
        if x.len() != self.n {
            return Err(VkError::SizeMismatch {
                name: "pcg multiply x".into(),
                expected: self.n,
                got: x.len(),
            });
        }
        self.x.write(
            &x.iter()
                .map(|a| [a[0], a[1], a[2], 0.0])
                .collect::<Vec<_>>(),
        )?;
        if masked {
            self.graphs.multiply_masked.run()?;
        } else {
            self.graphs.multiply.run()?;
        }
        Ok(self
            .q
            .read()?
            .into_iter()
            .take(self.n)
            .map(|v| [v[0], v[1], v[2]])
            .collect())
    }

    /// Solves with the right-hand side and initial guess already in [`Pcg::rhs`] and
    /// [`Pcg::solution`] (written by other graphs). The device decides after every iteration
    /// whether to stop (‖r‖ ≤ `tol`·‖b‖, `max_iterations`, the stagnation window); the host
    /// submits one run of `iterations_per_run` iterations and reads the scalars once, more
    /// only if the solve needs more iterations than one run holds. Returns the iterations run
    /// and the final ‖r‖/‖b‖ (0 when b = 0).
    pub fn solve_resident(&self, tol: f32, max_iterations: u32) -> VkResult<(u32, f32)> {
        let s = self.solve_resident_scalars(tol, max_iterations)?;
        Ok((s[ITER] as u32, s[REL]))
    }

    /// [`Pcg::solve_resident`], returning both solve blocks' scalars.
    fn solve_resident_scalars(
        &self,
        tol: f32,
        max_iterations: u32,
    ) -> VkResult<[f32; 2 * BLOCK as usize]> {
        self.set_limits(GLOBAL, tol, max_iterations, self.stagnation_window.get())?;
        let mut s = [0f32; 2 * BLOCK as usize];
        let ms = self.run_until_done(&self.graphs.solve, &self.graphs.iterate, GLOBAL, &mut s)?;
        self.gpu_ms.set(ms);
        Ok(s)
    }

    /// Records the solver graphs again, on the same buffers, with the contact couplings added
    /// after every unmasked SpMV (`None`: without); the warm start's masked SpMV skips them.
    pub fn set_contact_operator(
        &mut self,
        ctx: &Context,
        contact: Option<&dyn MatrixFreeCouplings>,
    ) -> VkResult<()> {
        if let Some(c) = contact {
            if c.rows() != self.n {
                return Err(VkError::Graph {
                    graph: "pcg".into(),
                    message: "contact operator does not match the block rows".into(),
                });
            }
        }
        self.graphs = self.recorder(contact).graphs(ctx)?;
        Ok(())
    }

    /// Stops [`Pcg::solve_resident`] when the relative residual has not reached a new minimum
    /// over the last `window` iterations (checked on the device after every iteration;
    /// `u32::MAX`: never).
    pub fn set_stagnation_window(&self, window: u32) {
        self.stagnation_window.set(window.max(1));
    }

    /// GPU milliseconds of the last solve (graph timestamps), the warm start included.
    pub fn last_gpu_ms(&self) -> f64 {
        self.gpu_ms.get()
    }

    /// GPU milliseconds of the last solve's stiffness-group warm start (0 without it).
    pub fn last_warm_gpu_ms(&self) -> f64 {
        self.warm_gpu_ms.get()
    }

    /// Per-node stiffness estimates `e_j` (one f32 per block row), written by the caller (e.g.
    /// Σ over elements containing j of trace(projected element Hessian) / nodes per element
    /// + 3 m_j / h²) before [`Pcg::solve_resident_warm`]; zero-initialised.
    pub fn stiffness(&self) -> &GpuBuffer<f32> {
        &self.stiffness
    }

    /// Stiffness group per node, `⌊log10(max(e_j, 10^GROUP_MIN))⌋` clamped to `GROUP_MAX`,
    /// written by the warm start (and by [`Pcg::multiply`] with `masked`).
    pub fn groups(&self) -> &GpuBuffer<i32> {
        &self.groups
    }

    /// The predicate words of the plain solve's runs after it (tests and diagnostics): of its
    /// first run and of its last further run (`pcg_control.comp`: word j is non-zero iff
    /// iteration j of the run launched; reference `cpu_reference::pcg::run_predicates`), or
    /// `None` where the context has no conditional rendering (nothing is skipped).
    pub fn run_predicates(&self) -> VkResult<Option<(Vec<u32>, Vec<u32>)>> {
        match &self.graphs.run_predicates {
            Some((first, more)) => Ok(Some((first.read()?, more.read()?))),
            None => Ok(None),
        }
    }

    /// Iterations recorded per graph run (the most one submission can do).
    pub fn iterations_per_run(&self) -> u32 {
        self.iterations_per_run
    }

    /// Number of block rows.
    pub fn rows(&self) -> usize {
        self.n
    }

    /// Diagonal blocks (3 row vec4s per block row), writable by assembly graphs.
    pub fn diag_blocks(&self) -> &GpuBuffer<[f32; 4]> {
        &self.diag
    }

    /// Off-diagonal blocks in the order of the pairs given at construction (3 row vec4s each).
    pub fn off_blocks(&self) -> &GpuBuffer<[f32; 4]> {
        &self.off
    }

    /// Inverted diagonal blocks (the block-Jacobi preconditioner), 3 row vec4s each.
    pub fn inverse_diag_blocks(&self) -> &GpuBuffer<[f32; 4]> {
        &self.minv
    }

    /// The right-hand side b (vec4 per block row, w unused).
    pub fn rhs(&self) -> &GpuBuffer<[f32; 4]> {
        &self.b
    }

    /// The solution x, also the initial guess (vec4 per block row, w unused).
    pub fn solution(&self) -> &GpuBuffer<[f32; 4]> {
        &self.x
    }
}
