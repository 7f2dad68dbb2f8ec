//! Block-Jacobi PCG on the GPU (`kernels/solver/spmv.comp`, `dot_partials.comp`,
//! `dot_final.comp`, `pcg_update.comp`). Scalars (α, β numerators and denominators) stay on the
//! device; the host reads one residual per run of `iterations_per_run` iterations to decide
//! whether to stop. Reference: [`crate::cpu_reference::pcg`].
//!
//! **Block-Jacobi warm start by stiffness groups** (paper §4.2, [`Pcg::solve_resident_warm`]):
//! the caller writes a per-node stiffness estimate `e_j` into [`Pcg::stiffness`]; a kernel
//! (`stiffness_groups.comp`) puts node `j` into group `⌊log10(max(e_j, 10^-30))⌋`; a
//! block-Jacobi PCG from x = 0 on the *masked* system — the SpMV (`spmv.comp` with `MASKED = 1`)
//! keeps only the blocks `A_ij` whose nodes share a group, i.e. one independent subsystem per
//! group — runs for a bounded number of iterations; the global PCG then starts from its result.

use crate::vk::{
    ids, Access, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph,
    VkError, VkResult,
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

/// Outcome of a solve.
#[derive(Debug, Clone, PartialEq)]
pub struct PcgSolve {
    /// Solution.
    pub x: Vec<[f32; 3]>,
    /// Iterations run (a multiple of the iterations per graph run).
    pub iterations: u32,
    /// Final ‖r‖ / ‖b‖.
    pub relative_residual: f32,
    /// Iterations of the stiffness-group warm start before the global PCG (0 without it).
    pub warm_iterations: u32,
}

/// Settings of the block-Jacobi warm start by stiffness groups ([`Pcg::solve_resident_warm`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WarmStart {
    /// Whether the grouped solve runs; when false the solve is the plain PCG from the guess in
    /// [`Pcg::solution`].
    pub enabled: bool,
    /// Most iterations of the grouped PCG (checked per graph run, so rounded up to a multiple
    /// of the iterations per run).
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
}

const RZ: [u32; 2] = [0, 1];
const PQ: u32 = 2;
const RR: u32 = 3;
const BB: u32 = 4;

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
    partials: GpuBuffer<f32>,
    stiffness: GpuBuffer<f32>,
    thresholds: GpuBuffer<f32>,
    groups: GpuBuffer<i32>,
}

/// The compiled solver graphs (recorded again when a contact operator is attached).
struct Graphs {
    init: CompiledGraph,
    iterate: CompiledGraph,
    warm_init: CompiledGraph,
    warm_iterate: CompiledGraph,
    /// x = 0: discards a warm start that broke down (non-finite residual).
    warm_discard: CompiledGraph,
    multiply: CompiledGraph,
    multiply_masked: CompiledGraph,
}

/// Records the solver graphs on the workspace; with `contact`, every unmasked SpMV adds the
/// contact couplings.
#[allow(clippy::too_many_arguments)]
fn record_graphs(
    ctx: &Context,
    n: usize,
    k: u32,
    w: &Workspace,
    x: &GpuBuffer<[f32; 4]>,
    b: &GpuBuffer<[f32; 4]>,
    scalars: &GpuBuffer<f32>,
    contact: Option<&dyn MatrixFreeCouplings>,
) -> VkResult<Graphs> {
    let rows = [(n as u32).div_ceil(WG).max(1), 1, 1];
    // `masked`: only blocks inside one stiffness group (the warm start's subsystems).
    let record_spmv = |g: &mut Graph, input: &GpuBuffer<[f32; 4]>, masked: bool| {
        g.dispatch(
            Dispatch::new(
                if masked {
                    "pcg.spmv_masked"
                } else {
                    "pcg.spmv"
                },
                ids::SOLVER_SPMV,
                rows,
            )
            .workgroup_size(WG)
            .spec(&[masked as u32])
            .read(&w.diag)
            .read(&w.off)
            .read(&w.row_ptr)
            .read(&w.incidence)
            .read(input)
            .write(&w.q)
            .read(&w.groups)
            .push(&(n as u32)),
        );
        match (masked, contact) {
            (false, Some(c)) => c.record_add_product(g, input, &w.q),
            (true, Some(c)) => c.record_add_masked_product(g, input, &w.q, &w.groups),
            _ => {}
        }
    };
    let record_groups = |g: &mut Graph| {
        g.dispatch(
            Dispatch::new("pcg.stiffness_groups", ids::SOLVER_STIFFNESS_GROUPS, rows)
                .workgroup_size(WG)
                .read(&w.stiffness)
                .read(&w.thresholds)
                .write(&w.groups)
                .push(&[n as u32, GROUP_MIN as u32, GROUP_MAX as u32]),
        );
    };
    let record_dot =
        |g: &mut Graph, a: &GpuBuffer<[f32; 4]>, b: &GpuBuffer<[f32; 4]>, slot: u32| {
            let m = (n as u32).div_ceil(WG * ITEMS).max(1);
            g.dispatch(
                Dispatch::new("pcg.dot_partials", ids::SOLVER_DOT_PARTIALS, [m, 1, 1])
                    .workgroup_size(WG)
                    .spec(&[ITEMS])
                    .read(a)
                    .read(b)
                    .write(&w.partials)
                    .push(&(n as u32)),
            );
            g.dispatch(
                Dispatch::new("pcg.dot_final", ids::SOLVER_DOT_FINAL, [1, 1, 1])
                    .workgroup_size(WG)
                    .read(&w.partials)
                    .read_write(scalars)
                    .push(&[m, slot]),
            );
        };
    let record_update =
        |g: &mut Graph, name: &str, mode: u32, num: u32, den: u32, acc: [Access; 4]| {
            g.dispatch(
                Dispatch::new(
                    name,
                    ids::SOLVER_PCG_UPDATE,
                    [(n as u32).div_ceil(WG).max(1), 1, 1],
                )
                .workgroup_size(WG)
                .spec(&[mode])
                .read(&w.minv)
                .read(scalars)
                .bind(x, acc[0])
                .bind(&w.r, acc[1])
                .bind(&w.z, acc[2])
                .bind(&w.p, acc[3])
                .read(&w.q)
                .read(b)
                .push(&[n as u32, num, den]),
            );
        };
    let (rd, wr, rw) = (Access::READ, Access::WRITE, Access::READ | Access::WRITE);
    // pcg_update.comp binds x, r, z and p writable in every mode (the mode is a specialization
    // constant), so a mode that only reads one still declares it written where a later node
    // of the same level could read it: the synchronization validation in the tests checks the
    // graph against what the SPIR-V may access.
    let timed = CompileOptions {
        graph_timestamps: true,
        ..Default::default()
    };
    // `warm`: the grouped PCG of the warm start (masked SpMV, x starts at 0); otherwise the
    // global PCG from the guess in x.
    let record_init = |g: &mut Graph, warm: bool| {
        if warm {
            record_groups(g);
            g.fill("pcg.warm_zero_x", x, 0);
            // A·0 = 0: no SpMV needed.
            g.fill("pcg.warm_zero_q", &w.q, 0);
        } else {
            record_spmv(g, x, false);
        }
        record_update(g, "pcg.init_vectors", 0, 0, 0, [rw, wr, wr, wr]);
        record_dot(g, &w.r, &w.z, RZ[0]);
        record_dot(g, b, b, BB);
        record_dot(g, &w.r, &w.r, RR);
    };
    let record_iterate = |g: &mut Graph, masked: bool| {
        for it in 0..k {
            let (old, new) = (RZ[(it % 2) as usize], RZ[((it + 1) % 2) as usize]);
            record_spmv(g, &w.p, masked);
            record_dot(g, &w.p, &w.q, PQ);
            record_update(g, "pcg.step", 1, old, PQ, [rw, rw, wr, rd]);
            record_dot(g, &w.r, &w.z, new);
            record_update(g, "pcg.direction", 2, new, old, [rd, rw, rd, rw]);
        }
        record_dot(g, &w.r, &w.r, RR);
    };
    let mut g = Graph::new("pcg.init");
    record_init(&mut g, false);
    let init = g.compile(ctx, timed)?;
    let mut g = Graph::new("pcg.iterate");
    record_iterate(&mut g, false);
    let iterate = g.compile(ctx, timed)?;
    let mut g = Graph::new("pcg.warm_init");
    record_init(&mut g, true);
    let warm_init = g.compile(ctx, timed)?;
    let mut g = Graph::new("pcg.warm_iterate");
    record_iterate(&mut g, true);
    let warm_iterate = g.compile(ctx, timed)?;
    let mut g = Graph::new("pcg.warm_discard");
    g.fill("pcg.warm_discard_x", x, 0);
    let warm_discard = g.compile(ctx, CompileOptions::default())?;
    // q = A x and q = A_masked x alone (tests and diagnostics).
    let mut g = Graph::new("pcg.multiply");
    record_spmv(&mut g, x, false);
    let multiply = g.compile(ctx, CompileOptions::default())?;
    let mut g = Graph::new("pcg.multiply_masked");
    record_groups(&mut g);
    record_spmv(&mut g, x, true);
    let multiply_masked = g.compile(ctx, CompileOptions::default())?;
    Ok(Graphs {
        init,
        iterate,
        warm_init,
        warm_iterate,
        warm_discard,
        multiply,
        multiply_masked,
    })
}

const WG: u32 = 64;
const ITEMS: u32 = 16;

impl Pcg {
    /// Uploads the matrix and records the solver graphs (`iterations_per_run` iterations each).
    pub fn new(ctx: &Context, a: &BlockMatrixF32, iterations_per_run: u32) -> VkResult<Pcg> {
        let pairs: Vec<(u32, u32)> = a.off.iter().map(|(i, j, _)| (*i, *j)).collect();
        Self::build(ctx, a.diag.len(), &pairs, Some(a), iterations_per_run)
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
        Self::build(ctx, n, pairs, None, iterations_per_run)
    }

    fn build(
        ctx: &Context,
        n: usize,
        pairs: &[(u32, u32)],
        values: Option<&BlockMatrixF32>,
        iterations_per_run: u32,
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
        let (diag, off, minv): (Vec<[f32; 9]>, Vec<[f32; 9]>, Vec<[f32; 9]>) = match values {
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
        let vec4 = |name: &str| ctx.create_buffer::<[f32; 4]>(name, n, BufferUsage::STORAGE);
        let w = Workspace {
            r: vec4("pcg.r")?,
            z: vec4("pcg.z")?,
            p: vec4("pcg.p")?,
            q: vec4("pcg.q")?,
            diag: ctx.upload_buffer(
                "pcg.diag",
                &flat(&mut diag.into_iter()),
                BufferUsage::STORAGE,
            )?,
            minv: ctx.upload_buffer(
                "pcg.minv",
                &flat(&mut minv.into_iter()),
                BufferUsage::STORAGE,
            )?,
            off: ctx.upload_buffer("pcg.off", &flat(&mut off.into_iter()), BufferUsage::STORAGE)?,
            row_ptr: ctx.upload_buffer("pcg.row_ptr", &count, BufferUsage::STORAGE)?,
            incidence: ctx.upload_buffer("pcg.incidence", &incidence, BufferUsage::STORAGE)?,
            partials: ctx.create_buffer(
                "pcg.partials",
                (n as u32).div_ceil(WG * ITEMS).max(1) as usize,
                BufferUsage::STORAGE,
            )?,
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
        // Host-visible: the residual is read after every run without a staging copy.
        let scalars = ctx.create_buffer::<f32>(
            "pcg.scalars",
            8,
            BufferUsage::HOST_READ | BufferUsage::STORAGE,
        )?;
        let k = iterations_per_run.max(1);
        if !k.is_multiple_of(2) {
            return Err(bad(
                "iterations_per_run must be even (the rz slots alternate)".into(),
            ));
        }
        let graphs = record_graphs(ctx, n, k, &w, &x, &b, &scalars, None)?;
        // The compiled graphs keep every workspace buffer alive.
        Ok(Pcg {
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
        })
    }

    /// Solves A x = b from `x0`, stopping at ‖r‖ ≤ `tol`·‖b‖ (checked after each run of
    /// `iterations_per_run` iterations) or after `max_iterations`.
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
        let (iterations, rel) = self.solve_resident(tol, max_iterations)?;
        let x = self
            .x
            .read()?
            .into_iter()
            .map(|v| [v[0], v[1], v[2]])
            .collect();
        Ok(PcgSolve {
            x,
            iterations,
            relative_residual: rel,
            warm_iterations: 0,
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
        })
    }

    /// [`Pcg::solve_resident`] preceded by the block-Jacobi warm start by stiffness groups
    /// (paper §4.2): groups from [`Pcg::stiffness`] (written beforehand by the caller's
    /// graphs), a block-Jacobi PCG from x = 0 on the masked system (blocks `A_ij` only where
    /// nodes `i` and `j` share a group) until `warm.tolerance` or `warm.max_iterations`, then
    /// the global PCG from that x until `tol` or `max_iterations` (counted separately). The
    /// guess in [`Pcg::solution`] is overwritten when the warm start is enabled. Reads back
    /// the same residual scalars as `solve_resident`, once per graph run. [`Pcg::last_gpu_ms`]
    /// covers both solves, [`Pcg::last_warm_gpu_ms`] the grouped one.
    pub fn solve_resident_warm(
        &self,
        tol: f32,
        max_iterations: u32,
        warm: &WarmStart,
    ) -> VkResult<WarmSolveStats> {
        self.warm_gpu_ms.set(0.0);
        if !warm.enabled {
            let (iterations, relative_residual) = self.solve_resident(tol, max_iterations)?;
            return Ok(WarmSolveStats {
                iterations,
                warm_iterations: 0,
                relative_residual,
                warm_relative_residual: 0.0,
            });
        }
        self.graphs.warm_init.run()?;
        let mut ms = self.graphs.warm_init.gpu_ms()?;
        let mut s = [0f32; 8];
        self.scalars.read_into(&mut s)?;
        let bb = s[BB as usize];
        let mut warm_iterations = 0;
        let mut warm_rel = 0.0;
        if bb > 0.0 {
            let bnorm = bb.sqrt();
            warm_rel = s[RR as usize].sqrt() / bnorm;
            while warm_rel > warm.tolerance && warm_iterations < warm.max_iterations {
                self.graphs.warm_iterate.run()?;
                ms += self.graphs.warm_iterate.gpu_ms()?;
                warm_iterations += self.iterations_per_run;
                self.scalars.read_into(&mut s)?;
                warm_rel = s[RR as usize].sqrt() / bnorm;
                if !warm_rel.is_finite() {
                    break;
                }
            }
        }
        if !warm_rel.is_finite() {
            // The grouped system broke down (its masked blocks need not be positive definite
            // where the Hessian is not): start the global PCG from 0 instead of from NaNs.
            self.graphs.warm_discard.run()?;
        }
        self.warm_gpu_ms.set(ms);
        let (iterations, relative_residual) = self.solve_resident(tol, max_iterations)?;
        self.gpu_ms.set(self.gpu_ms.get() + ms);
        Ok(WarmSolveStats {
            iterations,
            warm_iterations,
            relative_residual,
            warm_relative_residual: warm_rel,
        })
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
    /// [`Pcg::solution`] (written by other graphs), reading back only residual scalars.
    /// Returns the iterations run and the final ‖r‖/‖b‖ (0 when b = 0).
    pub fn solve_resident(&self, tol: f32, max_iterations: u32) -> VkResult<(u32, f32)> {
        self.graphs.init.run()?;
        self.gpu_ms.set(self.graphs.init.gpu_ms()?);
        let mut s = [0f32; 8];
        self.scalars.read_into(&mut s)?;
        let bb = s[BB as usize];
        if bb == 0.0 {
            return Ok((0, 0.0));
        }
        let bnorm = bb.sqrt();
        let mut rel = s[RR as usize].sqrt() / bnorm;
        let mut iterations = 0;
        // Stagnation: no new best residual over the window.
        let window = self.stagnation_window.get();
        let (mut best, mut best_at) = (rel, 0u32);
        while rel > tol && iterations < max_iterations {
            self.graphs.iterate.run()?;
            self.gpu_ms
                .set(self.gpu_ms.get() + self.graphs.iterate.gpu_ms()?);
            iterations += self.iterations_per_run;
            self.scalars.read_into(&mut s)?;
            rel = s[RR as usize].sqrt() / bnorm;
            if !rel.is_finite() {
                break;
            }
            if rel < best {
                (best, best_at) = (rel, iterations);
            } else if iterations - best_at >= window {
                break;
            }
        }
        Ok((iterations, rel))
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
        self.graphs = record_graphs(
            ctx,
            self.n,
            self.iterations_per_run,
            &self.w,
            &self.x,
            &self.b,
            &self.scalars,
            contact,
        )?;
        Ok(())
    }

    /// Stops [`Pcg::solve_resident`] when the relative residual has not reached a new minimum
    /// over the last `window` iterations (checked per graph run; `u32::MAX`: never).
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
