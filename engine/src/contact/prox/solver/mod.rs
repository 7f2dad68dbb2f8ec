//! The GPU PROX solver: one contact problem per step on the stepper's velocity buffer.
//!
//! Data (spec §B6): contacts in color-major order as structure-of-arrays (8 node slots, 8
//! signed weights, frame with μ, ε and the gap, b and r, λ and the last accepted λ, the original
//! index), per node the velocity correction `wvel = W Jᵀ λ` and a node → contact incidence in CSR
//! form (counting sort: `csr_count`, [`Scan`], `csr_fill`, then `csr_sort` orders every node's
//! entries by original contact index so sums are deterministic). No float atomics.
//!
//! Graphs (compiled once per capacity and color capacity, submitted every solve):
//! - **prepare**: `setup` (b, r, λ = 0, ctrl reset), the CSR, the per-color dispatch arguments;
//! - **batch**: `sweeps_per_batch` sweeps. Per kernel: `gather` (K1), the scheme's update —
//!   `jacobi` (K2, Jacobi or hybrid) or one indirect `color_sweep` per color — and `merit` (K3:
//!   device max-reduction, RAINBOW's decision, rollback or commit), i.e. 3 dispatches per
//!   Jacobi/hybrid sweep and colors + 2 per colored sweep; fused: one single-workgroup `fused`
//!   dispatch runs all the batch's sweeps with barriers between phases (serial Gauss–Seidel
//!   always runs this way: invocation 0 walks the contacts). Kernels of a stopped solve return
//!   at once, so a batch may end early on the device; the host reads 9 words per batch;
//! - **finish**: `gather` of the returned λ, `residual` (natural-map residual, one
//!   workgroup), `apply` (u = u′ + W Jᵀ λ in place).
//!
//! Submodules: [`coloring`] (Jones–Plassmann on the GPU), [`pairs`] (proximity pairs as
//! contacts). Reference: `cpu_reference::prox`.

pub mod coloring;
pub mod pairs;

use super::graph::{
    greedy_largest_first, random_vivace, ColorGroups, ContactColoring, ContactGraph,
};
use super::model::{check_contact, Contact, Exit, Scheme, NO_NODE};
use super::settings::{ColoringMethod, ProxSettings, SettingsError, SweepDispatch};
use crate::coloring::MAX_COLORS;
use crate::primitives::{Scan, ScanKind};
use crate::vk::{
    ids, BufferSlice, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer,
    Graph, KernelId, VkError,
};
use coloring::DeviceColoring;
use std::time::Instant;

/// Workgroup size of the per-contact and per-node kernels.
pub const WG: u32 = 64;
/// Largest workgroup count per dispatch (kernels loop over the rest).
const MAX_GROUPS: u32 = 65_535;
/// First ctrl word of the merit history (`kernels/prox/prox.glsl::PROX_HISTORY`).
pub const CTRL_HISTORY: usize = 16;
/// ctrl words the host reads after every batch.
const CTRL_READ: usize = 9;

/// Push constants of the PROX kernels (`kernels/prox/prox.glsl::ProxParams`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ProxParams {
    /// Contact capacity (kernels bound the count by `meta[0]` too).
    pub k: u32,
    /// Nodes.
    pub n: u32,
    /// Sweeps at most.
    pub max_iterations: u32,
    /// Per-color kernel: its color; `color_args`: the color capacity.
    pub color: u32,
    /// Absolute tolerance (N·s).
    pub abs_tol: f32,
    /// Relative tolerance.
    pub rel_tol: f32,
    /// r scale on rejection.
    pub nu_reduce: f32,
    /// r scale on slow progress.
    pub nu_increase: f32,
    /// Merit decrease below which r grows (N·s).
    pub too_small: f32,
    /// Numerator of the initial r-factors.
    pub r_factor: f32,
    /// Fused kernel: sweeps per dispatch.
    pub sweeps: u32,
    /// Kernel-specific mode.
    pub mode: u32,
    /// Jones–Plassmann seed.
    pub seed: u32,
    /// Padding.
    pub pad: [u32; 3],
}

/// Why a PROX call failed.
#[derive(Debug)]
pub enum ProxError {
    /// A Vulkan error.
    Vk(VkError),
    /// A setting out of range.
    Settings(SettingsError),
    /// Bad input (contacts, buffers), described.
    Input(String),
    /// The GPU coloring needs more than 256 colors.
    Coloring(String),
}

impl std::fmt::Display for ProxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProxError::Vk(e) => write!(f, "{e}"),
            ProxError::Settings(e) => write!(f, "{e}"),
            ProxError::Input(m) => write!(f, "{m}"),
            ProxError::Coloring(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for ProxError {}

impl From<VkError> for ProxError {
    fn from(e: VkError) -> Self {
        ProxError::Vk(e)
    }
}

impl From<SettingsError> for ProxError {
    fn from(e: SettingsError) -> Self {
        ProxError::Settings(e)
    }
}

/// The stepper's buffers PROX works on (see the module documentation of [`super`]).
pub struct StepperBuffers<'a> {
    /// Lumped inverse mass per node (1/kg; 0 = fixed). Read once at construction.
    pub inv_mass: &'a GpuBuffer<f32>,
    /// Velocities after the free update u′ (m/s, xyz + unused w); overwritten with u.
    pub velocity: &'a GpuBuffer<[f32; 4]>,
    /// Velocities at the start of the step (m/s; restitution only).
    pub start_velocity: &'a GpuBuffer<[f32; 4]>,
}

/// Dispatch counts of one solve.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DispatchCounts {
    /// Dispatches of the prepare graph.
    pub prepare: u32,
    /// Dispatches recorded per sweep (fused: per batch).
    pub per_sweep: u32,
    /// Dispatches submitted in all batches (including those of a batch after the stop).
    pub sweeps: u32,
    /// Dispatches of the finish graph.
    pub finish: u32,
}

impl DispatchCounts {
    /// Every dispatch submitted for the solve (coloring and contact transfer excluded).
    pub fn total(&self) -> u32 {
        self.prepare + self.sweeps + self.finish
    }
}

/// Outcome of one GPU solve.
#[derive(Debug, Clone, PartialEq)]
pub struct ProxSolveReport {
    /// Contacts.
    pub contacts: u32,
    /// Colors of the contact graph (colored scheme; 0 otherwise).
    pub colors: u32,
    /// Sweeps done.
    pub sweeps: u32,
    /// Rejected sweeps.
    pub rollbacks: u32,
    /// Sweeps after which r grew.
    pub r_increases: u32,
    /// Why the solve stopped.
    pub exit: Exit,
    /// Merit of the last sweep (N·s).
    pub merit: f32,
    /// Final global r scale.
    pub r_scale: f32,
    /// Natural-map residual of the returned impulses (N·s).
    pub residual: f32,
    /// Graph runs of the batch graph (host round trips).
    pub batches: u32,
    /// Dispatches.
    pub dispatches: DispatchCounts,
    /// Wall milliseconds of the solve (prepare, batches, finish).
    pub ms: f64,
}

/// Contacts in solver order and their coloring, as uploaded.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactLayout {
    /// Contacts.
    pub contacts: u32,
    /// Colors (colored scheme; 0 otherwise).
    pub colors: u32,
    /// Original index of the contact at each solver position.
    pub order: Vec<u32>,
    /// Color offsets into `order` (`colors + 1` entries; empty without coloring).
    pub color_offsets: Vec<u32>,
}

/// The solver's contact arrays (solver order; `kernels/prox/prox.glsl` layout).
pub struct ContactBuffers<'a> {
    /// Node slots, two `[u32; 4]` per contact.
    pub nodes: &'a GpuBuffer<[u32; 4]>,
    /// Signed weights, two `[f32; 4]` per contact.
    pub weights: &'a GpuBuffer<[f32; 4]>,
    /// Frame rows n (w: μ), s (w: ε), t (w: gap), three per contact.
    pub frame: &'a GpuBuffer<[f32; 4]>,
    /// Original index of each contact.
    pub orig: &'a GpuBuffer<u32>,
}

/// Contact arrays sized by the capacity.
pub(crate) struct ContactArrays {
    pub(crate) capacity: usize,
    pub(crate) nodes: GpuBuffer<[u32; 4]>,
    pub(crate) weights: GpuBuffer<[f32; 4]>,
    pub(crate) frame: GpuBuffer<[f32; 4]>,
    pub(crate) raw_nodes: GpuBuffer<[u32; 4]>,
    pub(crate) raw_weights: GpuBuffer<[f32; 4]>,
    pub(crate) raw_frame: GpuBuffer<[f32; 4]>,
    pub(crate) orig: GpuBuffer<u32>,
    pub(crate) bias: GpuBuffer<[f32; 4]>,
    pub(crate) lam: GpuBuffer<[f32; 4]>,
    pub(crate) saved: GpuBuffer<[f32; 4]>,
    pub(crate) csr_ent: GpuBuffer<u32>,
    pub(crate) host_grouped: GpuBuffer<u32>,
    pub(crate) color_offsets: GpuBuffer<u32>,
    pub(crate) color_args: GpuBuffer<u32>,
}

impl ContactArrays {
    fn new(ctx: &Context, capacity: usize) -> Result<Self, VkError> {
        let k = capacity.max(1);
        let s = BufferUsage::STORAGE;
        let colors = k.max(MAX_COLORS as usize);
        Ok(ContactArrays {
            capacity: k,
            nodes: ctx.create_buffer("prox.nodes", 2 * k, s)?,
            weights: ctx.create_buffer("prox.weights", 2 * k, s)?,
            frame: ctx.create_buffer("prox.frame", 3 * k, s)?,
            raw_nodes: ctx.create_buffer("prox.raw_nodes", 2 * k, s)?,
            raw_weights: ctx.create_buffer("prox.raw_weights", 2 * k, s)?,
            raw_frame: ctx.create_buffer("prox.raw_frame", 3 * k, s)?,
            orig: ctx.create_buffer("prox.orig", k, s)?,
            bias: ctx.create_buffer("prox.bias", k, s)?,
            lam: ctx.create_buffer("prox.lambda", k, s)?,
            saved: ctx.create_buffer("prox.saved", k, s)?,
            csr_ent: ctx.create_buffer("prox.csr_entries", 8 * k, s)?,
            host_grouped: ctx.create_buffer("prox.host_grouped", k, s)?,
            color_offsets: ctx.create_buffer("prox.color_offsets", colors + 1, s)?,
            color_args: ctx.create_buffer(
                "prox.color_args",
                3 * colors,
                s | BufferUsage::INDIRECT,
            )?,
        })
    }
}

struct Graphs {
    prepare: CompiledGraph,
    batch: CompiledGraph,
    finish: CompiledGraph,
    color_cap: u32,
    counts: DispatchCounts,
}

/// The GPU PROX solver with its persistent workspace.
pub struct ProxSolver {
    ctx: Context,
    settings: ProxSettings,
    fused: bool,
    nodes: usize,
    single_wg: u32,
    inv_mass_host: Vec<f32>,
    inv_mass: BufferSlice,
    velocity: BufferSlice,
    start_velocity: BufferSlice,
    meta: GpuBuffer<u32>,
    ctrl: GpuBuffer<u32>,
    wvel: GpuBuffer<[f32; 4]>,
    csr_counts: GpuBuffer<u32>,
    csr_off: GpuBuffer<u32>,
    csr_cursor: GpuBuffer<u32>,
    scan: Scan,
    pub(crate) arrays: ContactArrays,
    device_coloring: Option<DeviceColoring>,
    pub(crate) pairs: Option<pairs::PairGraphs>,
    graphs: Option<Graphs>,
    layout: ContactLayout,
}

fn groups(n: usize) -> [u32; 3] {
    [
        (n.div_ceil(WG as usize).max(1) as u32).min(MAX_GROUPS),
        1,
        1,
    ]
}

impl ProxSolver {
    /// A solver for up to `capacity` contacts (grown on demand) over the stepper's nodes.
    pub fn new(
        ctx: &Context,
        settings: ProxSettings,
        capacity: usize,
        buffers: &StepperBuffers,
    ) -> Result<Self, ProxError> {
        settings.validate()?;
        let n = buffers.inv_mass.len();
        if buffers.velocity.len() < n || buffers.start_velocity.len() < n {
            return Err(ProxError::Input(format!(
                "{n} inverse masses but {} velocities and {} start velocities",
                buffers.velocity.len(),
                buffers.start_velocity.len()
            )));
        }
        let inv_mass_host = buffers.inv_mass.read()?;
        if let Some(a) = inv_mass_host
            .iter()
            .position(|w| !(w.is_finite() && *w >= 0.0))
        {
            return Err(ProxError::Input(format!(
                "inverse mass of node {a} is {} (must be finite, >= 0)",
                inv_mass_host[a]
            )));
        }
        let caps = ctx.caps();
        // Single-workgroup kernels: a power of two (the shared-memory reductions halve it) and a
        // multiple of the subgroup size; 64 on CPU devices, where every workgroup barrier
        // switches through all of the workgroup's SIMD rows (with 256, a RAINBOW-tolerance
        // solve of PROX-S2 by colors took 91 ms fused instead of 16 ms on lavapipe), 256
        // elsewhere.
        let widest = if caps.device_type == "cpu" { 64 } else { 256 };
        let single_wg = [256u32, 128, 64]
            .into_iter()
            .filter(|&w| w <= widest)
            .find(|&w| w <= caps.max_workgroup_invocations && w % caps.subgroup_size.max(1) == 0)
            .unwrap_or(WG);
        let fused = match settings.sweep_dispatch {
            SweepDispatch::Fused => true,
            SweepDispatch::PerColor => false,
            SweepDispatch::Auto => caps.device_type == "cpu",
        };
        let s = BufferUsage::STORAGE;
        let nn = n.max(1);
        let mut solver = ProxSolver {
            ctx: ctx.clone(),
            settings,
            fused,
            nodes: n,
            single_wg,
            inv_mass_host,
            inv_mass: buffers.inv_mass.into(),
            velocity: buffers.velocity.slice(0..nn),
            start_velocity: buffers.start_velocity.slice(0..nn),
            meta: ctx.create_buffer("prox.meta", 4, s)?,
            ctrl: ctx.create_buffer(
                "prox.ctrl",
                CTRL_HISTORY + settings.solver.max_iterations as usize,
                s,
            )?,
            wvel: ctx.create_buffer("prox.wvel", nn, s)?,
            csr_counts: ctx.create_buffer("prox.csr_counts", nn + 1, s)?,
            csr_off: ctx.create_buffer("prox.csr_offsets", nn + 1, s)?,
            csr_cursor: ctx.create_buffer("prox.csr_cursor", nn + 1, s)?,
            scan: Scan::new(ctx, nn + 1)?,
            arrays: ContactArrays::new(ctx, capacity)?,
            device_coloring: None,
            pairs: None,
            graphs: None,
            layout: ContactLayout {
                contacts: 0,
                colors: 0,
                order: Vec::new(),
                color_offsets: Vec::new(),
            },
        };
        solver.meta.write(&[0; 4])?;
        solver.rebuild(8)?;
        Ok(solver)
    }

    /// The settings.
    pub fn settings(&self) -> &ProxSettings {
        &self.settings
    }

    /// Whether sweeps run fused in one workgroup.
    pub fn fused(&self) -> bool {
        self.fused
    }

    /// Nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes
    }

    /// Contact capacity.
    pub fn capacity(&self) -> usize {
        self.arrays.capacity
    }

    /// The contacts as last uploaded (solver order, coloring).
    pub fn layout(&self) -> &ContactLayout {
        &self.layout
    }

    /// Dispatch counts of the compiled graphs (the `sweeps` field counts one batch).
    pub fn dispatch_counts(&self) -> DispatchCounts {
        self.graphs
            .as_ref()
            .map_or_else(DispatchCounts::default, |g| g.counts)
    }

    pub(crate) fn params(&self, color: u32, sweeps: u32, mode: u32) -> ProxParams {
        let s = &self.settings.solver;
        ProxParams {
            k: self.arrays.capacity as u32,
            n: self.nodes as u32,
            max_iterations: s.max_iterations,
            color,
            abs_tol: s.absolute_tolerance as f32,
            rel_tol: s.relative_tolerance as f32,
            nu_reduce: s.nu_reduce as f32,
            nu_increase: s.nu_increase as f32,
            too_small: s.too_small_merit_change as f32,
            r_factor: s.r_factor as f32,
            sweeps,
            mode,
            seed: self.settings.random_seed,
            pad: [0; 3],
        }
    }

    fn per_contact(&self, name: &str, kernel: KernelId) -> Dispatch {
        Dispatch::new(format!("prox.{name}"), kernel, groups(self.arrays.capacity))
            .workgroup_size(WG)
    }

    fn per_node(&self, name: &str, kernel: KernelId) -> Dispatch {
        Dispatch::new(format!("prox.{name}"), kernel, groups(self.nodes)).workgroup_size(WG)
    }

    fn single(&self, name: &str, kernel: KernelId) -> Dispatch {
        Dispatch::new(format!("prox.{name}"), kernel, [1, 1, 1]).workgroup_size(self.single_wg)
    }

    /// Records the solve's preparation: b, r, λ = 0 and the ctrl reset, the node → contact
    /// incidence, and (per-color dispatch) the color arguments for `color_cap` colors.
    pub fn record_prepare(&self, g: &mut Graph, color_cap: u32) {
        let a = &self.arrays;
        let n1 = self.nodes + 1;
        g.dispatch(
            self.per_contact("setup", ids::PROX_SETUP)
                .read(&self.meta)
                .read(&a.nodes)
                .read(&a.weights)
                .read(&a.frame)
                .read(self.inv_mass.clone())
                .read(self.velocity.clone())
                .read(self.start_velocity.clone())
                .write(&a.bias)
                .write(&a.lam)
                .write(&a.saved)
                .read_write(&self.ctrl)
                .push(&self.params(0, 0, 0)),
        );
        g.fill("prox.csr_clear", self.csr_counts.slice(0..n1), 0);
        g.dispatch(
            self.per_contact("csr_count", ids::PROX_CSR_COUNT)
                .read(&self.meta)
                .read(&a.nodes)
                .read_write(self.csr_counts.slice(0..n1))
                .push(&self.params(0, 0, 0)),
        );
        self.scan
            .record(g, &self.csr_counts, &self.csr_off, n1, ScanKind::Exclusive);
        g.copy(
            "prox.csr_cursor",
            self.csr_off.slice(0..n1),
            self.csr_cursor.slice(0..n1),
        );
        g.dispatch(
            self.per_contact("csr_fill", ids::PROX_CSR_FILL)
                .read(&self.meta)
                .read(&a.nodes)
                .read_write(self.csr_cursor.slice(0..n1))
                .write(&a.csr_ent)
                .push(&self.params(0, 0, 0)),
        );
        g.dispatch(
            self.per_node("csr_sort", ids::PROX_CSR_SORT)
                .read(self.csr_off.slice(0..n1))
                .read(&a.orig)
                .read_write(&a.csr_ent)
                .push(&self.params(0, 0, 0)),
        );
        if color_cap > 0 {
            g.dispatch(
                Dispatch::new(
                    "prox.color_args",
                    ids::PROX_COLOR_ARGS,
                    groups(color_cap as usize),
                )
                .workgroup_size(WG)
                .read(&a.color_offsets)
                .write(a.color_args.slice(0..3 * color_cap as usize))
                .push(&self.params(color_cap, 0, WG)),
            );
        }
    }

    /// Records the gather of `wvel = W Jᵀ λ` (`last`: the final one, run even after the stop).
    pub fn record_gather(&self, g: &mut Graph, name: &str, last: bool) {
        let a = &self.arrays;
        g.dispatch(
            self.per_node(name, ids::PROX_GATHER)
                .read(&self.ctrl)
                .read(&self.csr_off)
                .read(&a.csr_ent)
                .read(&a.weights)
                .read(&a.frame)
                .read(&a.lam)
                .read(self.inv_mass.clone())
                .write(&self.wvel)
                .push(&self.params(0, 0, last as u32)),
        );
    }

    /// Records one Jacobi (`hybrid = false`) or hybrid update of every contact from `wvel`.
    pub fn record_jacobi(&self, g: &mut Graph, name: &str, hybrid: bool) {
        let a = &self.arrays;
        g.dispatch(
            self.per_contact(name, ids::PROX_JACOBI)
                .spec(&[hybrid as u32])
                .read(&self.ctrl)
                .read(&self.meta)
                .read(&a.nodes)
                .read(&a.weights)
                .read(&a.frame)
                .read(&a.bias)
                .read_write(&a.lam)
                .read(&self.wvel)
                .read(self.inv_mass.clone())
                .push(&self.params(0, 0, 0)),
        );
    }

    /// Records the Gauss–Seidel update of color `c` (indirect, from the color arguments).
    pub fn record_color(&self, g: &mut Graph, name: &str, c: u32) {
        let a = &self.arrays;
        let at = 3 * c as usize;
        g.dispatch(
            Dispatch::indirect(
                format!("prox.{name}"),
                ids::PROX_COLOR_SWEEP,
                a.color_args.slice(at..at + 3),
            )
            .workgroup_size(WG)
            .read(&self.ctrl)
            .read(&a.color_offsets)
            .read(&a.nodes)
            .read(&a.weights)
            .read(&a.frame)
            .read(&a.bias)
            .read_write(&a.lam)
            .read_write(&self.wvel)
            .read(self.inv_mass.clone())
            .push(&self.params(c, 0, 0)),
        );
    }

    /// Records the merit reduction, decision and commit (one workgroup).
    pub fn record_merit(&self, g: &mut Graph, name: &str) {
        let a = &self.arrays;
        g.dispatch(
            self.single(name, ids::PROX_MERIT)
                .read_write(&self.ctrl)
                .read(&self.meta)
                .read_write(&a.lam)
                .read_write(&a.saved)
                .push(&self.params(0, 0, 0)),
        );
    }

    /// Records `sweeps` whole sweeps of `scheme` in one single-workgroup dispatch.
    pub fn record_fused(&self, g: &mut Graph, name: &str, scheme: Scheme, sweeps: u32) {
        let a = &self.arrays;
        let code = match scheme {
            Scheme::GaussSeidel => 0,
            Scheme::Jacobi => 1,
            Scheme::Hybrid => 2,
            Scheme::ColoredGaussSeidel => 3,
        };
        g.dispatch(
            self.single(name, ids::PROX_FUSED)
                .spec(&[code])
                .read_write(&self.ctrl)
                .read(&self.meta)
                .read(&a.color_offsets)
                .read(&a.nodes)
                .read(&a.weights)
                .read(&a.frame)
                .read(&a.bias)
                .read_write(&a.lam)
                .read_write(&a.saved)
                .read_write(&self.wvel)
                .read(self.inv_mass.clone())
                .read(&self.csr_off)
                .read(&a.csr_ent)
                .push(&self.params(0, sweeps, 0)),
        );
    }

    /// Records the copy of the raw contacts into solver order: position i takes the raw
    /// contact `grouped[i]` (or i when `grouped` is `None`).
    pub fn record_permute(&self, g: &mut Graph, grouped: Option<&GpuBuffer<u32>>) {
        let a = &self.arrays;
        let (src, mode): (BufferSlice, u32) = match grouped {
            Some(b) => (b.into(), 1),
            None => ((&a.csr_ent).into(), 0),
        };
        g.dispatch(
            self.per_contact("permute", ids::PROX_PERMUTE)
                .read(&self.meta)
                .read(src)
                .read(&a.raw_nodes)
                .read(&a.raw_weights)
                .read(&a.raw_frame)
                .write(&a.nodes)
                .write(&a.weights)
                .write(&a.frame)
                .write(&a.orig)
                .push(&self.params(0, 0, mode)),
        );
    }

    /// Records the finish: final gather, natural-map residual, `u = u′ + W Jᵀ λ`.
    pub fn record_finish(&self, g: &mut Graph) {
        let a = &self.arrays;
        self.record_gather(g, "final_gather", true);
        g.dispatch(
            self.single("residual", ids::PROX_RESIDUAL)
                .read_write(&self.ctrl)
                .read(&self.meta)
                .read(&a.nodes)
                .read(&a.weights)
                .read(&a.frame)
                .read(&a.bias)
                .read(&a.lam)
                .read(&self.wvel)
                .push(&self.params(0, 0, 0)),
        );
        g.dispatch(
            self.per_node("apply", ids::PROX_APPLY)
                .read(&self.wvel)
                .read_write(self.velocity.clone())
                .push(&self.params(0, 0, 0)),
        );
    }

    /// Records one batch of `sweeps_per_batch` sweeps; returns the dispatches per sweep
    /// (fused: per batch).
    pub fn record_batch(&self, g: &mut Graph, color_cap: u32) -> u32 {
        let scheme = self.settings.scheme;
        let batch = self.settings.sweeps_per_batch;
        if self.fused {
            self.record_fused(g, "fused", scheme, batch);
            return 1;
        }
        if scheme == Scheme::GaussSeidel {
            for i in 0..batch {
                self.record_fused(g, &format!("serial[{i}]"), scheme, 1);
            }
            return 1;
        }
        for i in 0..batch {
            self.record_gather(g, &format!("gather[{i}]"), false);
            if scheme == Scheme::ColoredGaussSeidel {
                for c in 0..color_cap {
                    self.record_color(g, &format!("color_sweep[{i}.{c}]"), c);
                }
            } else {
                self.record_jacobi(g, &format!("jacobi[{i}]"), scheme == Scheme::Hybrid);
            }
            self.record_merit(g, &format!("merit[{i}]"));
        }
        if scheme == Scheme::ColoredGaussSeidel {
            color_cap + 2
        } else {
            3
        }
    }

    fn rebuild(&mut self, color_cap: u32) -> Result<(), ProxError> {
        let per_color = !self.fused && self.settings.scheme == Scheme::ColoredGaussSeidel;
        let cap = if per_color { color_cap } else { 0 };
        let compile = |g: &Graph| g.compile(&self.ctx, CompileOptions::default());
        let count = |g: &Graph| {
            g.nodes()
                .iter()
                .filter(|n| matches!(n.kind, crate::vk::NodeKind::Dispatch(_)))
                .count() as u32
        };
        let mut prepare = Graph::new("prox.prepare");
        self.record_prepare(&mut prepare, cap);
        let mut batch = Graph::new("prox.batch");
        let per_sweep = self.record_batch(&mut batch, cap);
        let mut finish = Graph::new("prox.finish");
        self.record_finish(&mut finish);
        let counts = DispatchCounts {
            prepare: count(&prepare),
            per_sweep,
            sweeps: count(&batch),
            finish: count(&finish),
        };
        self.graphs = Some(Graphs {
            prepare: compile(&prepare)?,
            batch: compile(&batch)?,
            finish: compile(&finish)?,
            color_cap: cap,
            counts,
        });
        Ok(())
    }

    pub(crate) fn grow_to(&mut self, k: usize) -> Result<(), ProxError> {
        if k <= self.arrays.capacity {
            return Ok(());
        }
        self.arrays = ContactArrays::new(&self.ctx, k.next_power_of_two())?;
        self.device_coloring = None;
        self.pairs = None;
        let cap = self.graphs.as_ref().map_or(8, |g| g.color_cap.max(8));
        self.rebuild(cap)
    }

    /// Host coloring of contacts with node lists `contacts` per the settings (random, or
    /// greedy).
    pub(crate) fn color_on_host(&self, contacts: &[[u32; 8]]) -> ContactColoring {
        let active: Vec<bool> = self.inv_mass_host.iter().map(|&w| w > 0.0).collect();
        let mask = (!self.settings.graph_fixed_nodes).then_some(active.as_slice());
        let graph = ContactGraph::new(contacts, self.nodes, mask);
        match self.settings.coloring {
            ColoringMethod::Random => random_vivace(
                &graph,
                self.settings.random_seed,
                self.settings.random_max_rounds,
            ),
            _ => greedy_largest_first(&graph),
        }
    }

    /// Uploads `contacts` (checked; the capacity grows if needed), colored on the host or the
    /// GPU as the settings say and stored color-major.
    pub fn set_contacts(&mut self, contacts: &[Contact]) -> Result<&ContactLayout, ProxError> {
        for (k, c) in contacts.iter().enumerate() {
            check_contact(k, c, self.nodes).map_err(ProxError::Input)?;
        }
        let k = contacts.len();
        self.grow_to(k)?;
        let colored = self.settings.scheme == Scheme::ColoredGaussSeidel;
        if colored && self.settings.coloring == ColoringMethod::JonesPlassmann {
            write_contacts(&self.arrays, contacts, true)?;
            self.meta.write(&[k as u32, 0, k as u32, 0])?;
            return self.color_raw_on_device();
        }
        let nodes: Vec<[u32; 8]> = contacts.iter().map(|c| c.nodes).collect();
        let coloring = colored.then(|| self.color_on_host(&nodes));
        let (order, offsets, colors) = match &coloring {
            Some(c) => {
                let g = ColorGroups::new(c);
                (g.order, g.offsets, c.num_colors)
            }
            None => ((0..k as u32).collect(), Vec::new(), 0),
        };
        let sorted: Vec<Contact> = order.iter().map(|&i| contacts[i as usize]).collect();
        write_contacts(&self.arrays, &sorted, false)?;
        if k > 0 {
            self.arrays.orig.write_at(0, &order)?;
        }
        self.finish_layout(order, offsets, colors, k)
    }

    /// Writes the color offsets and meta for contacts in solver order `order` and records the
    /// layout; grows the color capacity of the per-color graphs if needed.
    pub(crate) fn finish_layout(
        &mut self,
        order: Vec<u32>,
        offsets: Vec<u32>,
        colors: u32,
        k: usize,
    ) -> Result<&ContactLayout, ProxError> {
        self.write_color_offsets(&offsets, k)?;
        self.meta.write(&[k as u32, colors, k as u32, 0])?;
        self.layout = ContactLayout {
            contacts: k as u32,
            colors,
            order,
            color_offsets: offsets,
        };
        self.grow_colors(colors)?;
        Ok(&self.layout)
    }

    /// Color offsets padded with the contact count up to the buffer's length.
    fn write_color_offsets(&self, offsets: &[u32], k: usize) -> Result<(), ProxError> {
        let mut all = vec![k as u32; self.arrays.color_offsets.len()];
        if offsets.len() > all.len() {
            return Err(ProxError::Input(format!(
                "{} colors exceed the buffer",
                offsets.len()
            )));
        }
        all[..offsets.len()].copy_from_slice(offsets);
        if offsets.is_empty() {
            all[0] = 0;
        }
        self.arrays.color_offsets.write(&all)?;
        Ok(())
    }

    fn grow_colors(&mut self, colors: u32) -> Result<(), ProxError> {
        let needs = self
            .graphs
            .as_ref()
            .is_some_and(|g| g.color_cap > 0 && colors > g.color_cap);
        if needs {
            self.rebuild(colors.div_ceil(8) * 8)?;
        }
        Ok(())
    }

    /// Jones–Plassmann on the raw contacts, grouping, permutation into solver order.
    pub(crate) fn color_raw_on_device(&mut self) -> Result<&ContactLayout, ProxError> {
        if self.device_coloring.is_none() {
            self.device_coloring = Some(DeviceColoring::new(self)?);
        }
        let dc = self
            .device_coloring
            .as_ref()
            .ok_or(ProxError::Input("no coloring".into()))?;
        let colors = dc.run(self)?;
        self.meta.write_at(1, &[colors])?;
        let k = self.meta.read()?[0] as usize;
        let order = self.arrays.orig.read()?[..k].to_vec();
        let mut offsets = self.arrays.color_offsets.read()?;
        offsets.truncate(colors as usize + 1);
        self.layout = ContactLayout {
            contacts: k as u32,
            colors,
            order,
            color_offsets: offsets,
        };
        self.grow_colors(colors)?;
        Ok(&self.layout)
    }

    /// Solves the uploaded problem on the stepper's velocities: u′ → u = u′ + W Jᵀ λ.
    pub fn solve(&mut self) -> Result<ProxSolveReport, ProxError> {
        let t = Instant::now();
        let g = self
            .graphs
            .as_ref()
            .ok_or(ProxError::Input("no graphs".into()))?;
        g.prepare.run()?;
        let max = self.settings.solver.max_iterations;
        let mut batches = 0;
        let ctrl = loop {
            g.batch.run()?;
            batches += 1;
            let mut c = [0u32; CTRL_READ];
            let all = self.ctrl.read()?;
            c.copy_from_slice(&all[..CTRL_READ]);
            if c[0] != 0 || c[1] >= max {
                break c;
            }
            if batches > max {
                return Err(ProxError::Input(format!(
                    "solve made no progress after {batches} batches"
                )));
            }
        };
        g.finish.run()?;
        let residual = f32::from_bits(self.ctrl.read()?[8]);
        let mut dispatches = g.counts;
        dispatches.sweeps *= batches;
        Ok(ProxSolveReport {
            contacts: self.layout.contacts,
            colors: self.layout.colors,
            sweeps: ctrl[1],
            rollbacks: ctrl[2],
            r_increases: ctrl[3],
            exit: match ctrl[0] {
                1 => Exit::Absolute,
                2 => Exit::Relative,
                _ => Exit::MaxIterations,
            },
            merit: f32::from_bits(ctrl[6]),
            r_scale: f32::from_bits(ctrl[4]),
            residual,
            batches,
            dispatches,
            ms: t.elapsed().as_secs_f64() * 1e3,
        })
    }

    /// The impulses (N·s, (normal, s, t)) in the original contact order.
    pub fn impulses(&self) -> Result<Vec<[f32; 3]>, ProxError> {
        let k = self.layout.contacts as usize;
        let lam = self.arrays.lam.read()?;
        let mut out = vec![[0.0; 3]; k];
        for (i, &o) in self.layout.order.iter().enumerate().take(k) {
            let l = lam[i];
            out[o as usize] = [l[0], l[1], l[2]];
        }
        Ok(out)
    }

    /// Merit of every sweep of the last solve (N·s).
    pub fn merit_history(&self) -> Result<Vec<f32>, ProxError> {
        let c = self.ctrl.read()?;
        let sweeps = c[1] as usize;
        Ok(
            c[CTRL_HISTORY..CTRL_HISTORY + sweeps.min(c.len() - CTRL_HISTORY)]
                .iter()
                .map(|&b| f32::from_bits(b))
                .collect(),
        )
    }

    /// Colors of the raw contacts from the last Jones–Plassmann coloring on the GPU, if any.
    pub fn device_colors(&self) -> Option<&GpuBuffer<u32>> {
        self.device_coloring.as_ref().map(|d| d.colors())
    }

    /// The contact count buffer `[contacts, colors, true count, 0]`.
    pub fn meta(&self) -> &GpuBuffer<u32> {
        &self.meta
    }

    /// The r-factor state (`kernels/prox/prox.glsl`, `PROX_*` words, history from
    /// [`CTRL_HISTORY`]).
    pub fn ctrl(&self) -> &GpuBuffer<u32> {
        &self.ctrl
    }

    /// `wvel = W Jᵀ λ` per node.
    pub fn wvel(&self) -> &GpuBuffer<[f32; 4]> {
        &self.wvel
    }

    /// λ per contact (solver order).
    pub fn lambda(&self) -> &GpuBuffer<[f32; 4]> {
        &self.arrays.lam
    }

    /// The last accepted λ (solver order).
    pub fn saved(&self) -> &GpuBuffer<[f32; 4]> {
        &self.arrays.saved
    }

    /// `(b, r)` per contact (solver order).
    pub fn bias(&self) -> &GpuBuffer<[f32; 4]> {
        &self.arrays.bias
    }

    /// Node → contact incidence `(offsets (n + 1), entries 8 k + slot)`.
    pub fn incidence(&self) -> (&GpuBuffer<u32>, &GpuBuffer<u32>) {
        (&self.csr_off, &self.arrays.csr_ent)
    }

    /// Contact arrays in solver order.
    pub fn contact_buffers(&self) -> ContactBuffers<'_> {
        let a = &self.arrays;
        ContactBuffers {
            nodes: &a.nodes,
            weights: &a.weights,
            frame: &a.frame,
            orig: &a.orig,
        }
    }

    /// The context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// Inverse masses as read at construction.
    pub fn inv_mass_host(&self) -> &[f32] {
        &self.inv_mass_host
    }

    pub(crate) fn meta_buffer(&self) -> &GpuBuffer<u32> {
        &self.meta
    }

    pub(crate) fn inv_mass_slice(&self) -> BufferSlice {
        self.inv_mass.clone()
    }
}

/// Writes contacts (f32 layout) into the solver arrays (`raw = false`) or the raw arrays.
fn write_contacts(a: &ContactArrays, contacts: &[Contact], raw: bool) -> Result<(), ProxError> {
    if contacts.is_empty() {
        return Ok(());
    }
    let mut nodes = Vec::with_capacity(2 * contacts.len());
    let mut weights = Vec::with_capacity(2 * contacts.len());
    let mut frame = Vec::with_capacity(3 * contacts.len());
    for c in contacts {
        for h in 0..2 {
            let mut n = [NO_NODE; 4];
            let mut w = [0.0f32; 4];
            for j in 0..4 {
                n[j] = c.nodes[4 * h + j];
                w[j] = c.weights[4 * h + j] as f32;
            }
            nodes.push(n);
            weights.push(w);
        }
        let [n, s, t] = c.frame();
        frame.push([n.x as f32, n.y as f32, n.z as f32, c.friction as f32]);
        frame.push([s.x as f32, s.y as f32, s.z as f32, c.restitution as f32]);
        frame.push([t.x as f32, t.y as f32, t.z as f32, c.gap as f32]);
    }
    let (bn, bw, bf) = if raw {
        (&a.raw_nodes, &a.raw_weights, &a.raw_frame)
    } else {
        (&a.nodes, &a.weights, &a.frame)
    };
    bn.write_at(0, &nodes)?;
    bw.write_at(0, &weights)?;
    bf.write_at(0, &frame)?;
    Ok(())
}
