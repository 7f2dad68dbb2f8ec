//! Two-way interior point collision handling on the GPU (two-way IPM paper, Algorithm 1):
//! from an intersection-free state x toward a target y (a dynamics update), every step runs a
//! backward step (one projected multicolor Gauss–Seidel sweep over the contact and edge-length
//! constraints, §4) and a CCD-free forward step (every vertex moves at most γ_f D_i, §5), so any
//! intermediate x^(l) is intersection-free.
//!
//! Scheduling: [`TwoWay::solve`] alternates host round trips with compiled graphs:
//! - on a new proximity search (the reuse bound D^(l) fell under D_min, §3.1): the spatial-hash
//!   search ([`ProximitySearch`], reading the solver's x directly), `two_way_build` (pairs →
//!   constraints), the GPU Jones–Plassmann coloring of the contact constraints, and the
//!   per-color indirect arguments;
//! - then batches of `steps_per_batch` steps recorded in one graph; every step is
//!   `two_way_distances` (D_i, Eq. 18), one `two_way_contact_sweep` per contact color (indirect
//!   dispatch sized by the color), one `two_way_edge_sweep` per edge color (colors precomputed
//!   once on the host), `two_way_forward` (Eq. 20) and `two_way_update` (reuse bound, clocks,
//!   stop flags). The reuse bound falls by the spread of the step's displacements (the box of
//!   the Δx_i), not 2 max |Δx_i|: distances do not change under a common translation, so a
//!   body moving as a whole (a falling cloth) keeps its pairs
//!   (`cpu_reference::two_way::bound_decrease`). Kernels of a stopped solve return at once, so
//!   a batch may end early on the device without a host round trip per step.
//!
//! Host waits: one per batch (to read the stop flags, [`TwState`]) and one per search (the
//! search is submitted without a wait and the constraint build queued behind it; host coloring
//! reads the constraints after that wait). The clock reset, the friction pass and the per-color
//! indirect arguments are submitted without a wait: only graphs queued after them read their
//! results, and the next wait covers them. With [`TwoWay::set_prefetch_searches`] (the contact
//! handler without its repulsion energy), a solve that ends with its reuse bound under D_min
//! submits the next solve's first search and build at once: the caller's next wait covers
//! them and that search costs no wait of its own.
//! With [`TwoWay::set_batch_searches`] (scenes: `collision.batch_searches`, on by default) and
//! the fused sweep, every batch is `two_way.search_batch`: units of two steps, each followed by
//! a section gated on the search flag ([`GatedGraph`]) with the search, the constraint build,
//! the coloring in one workgroup (`jp_workgroup.comp`) and `two_way_accept.comp`, which hands
//! the new pairs to the next steps (or, when the search overflowed its buffers, stops them for
//! the host to search again): one host wait per batch however many searches it ran (recorded
//! in `solve/record.rs`).
//!
//! Storage: the contact constraints and the floor-release directions (16 bytes per pair) are
//! split over two bindings where one would exceed the device's `maxStorageBufferRange`
//! ([`super::split`]); the unsorted constraints are not stored (the gather after the sort reads
//! the pair lists). A workspace the device cannot bind is refused before any of it is
//! allocated, naming the buffer, its size and the limit.
//!
//! Contact multipliers λ are warm-started across steps while the pair set is unchanged and
//! reset by a new search (the pairs change); edge multipliers persist for the solver's life.
//! Reference: [`crate::cpu_reference::two_way`].

pub use super::settings::{
    Backward, ContactColoring, StepBound, SweepDispatch, TwoWaySettings, AUTO_SMALL_VERTICES,
};
use super::split::SplitBuffer;
use crate::coloring::{greedy_coloring, pad, GpuColoring, GreedyOrder, MAX_COLORS};
use crate::primitives::{RadixSort, SortKeys};
use crate::proximity::spatial_hash::pad1;
use crate::proximity::{ProximityMesh, ProximityOptions, ProximitySearch};
use crate::vk::{
    ids, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GatedGraph, GpuBuffer,
    Graph, GraphProfile,
};
use record::PairWorkspace;
use std::time::Instant;

mod record;

/// Workgroup size of the two-way kernels.
const WG: u32 = 64;
/// Float bits of +∞ (the reset value of the per-vertex distances).
const INF_BITS: u32 = 0x7f80_0000;
/// Float bits of 1.0 (the reset value of the clocks).
const ONE_BITS: u32 = 0x3f80_0000;
/// A vertex that takes its own step fraction ([`TwoWay::set_vertex_groups`];
/// `two_way.glsl::TW_NO_GROUP`).
pub const NO_GROUP: u32 = u32::MAX;

/// Stop flag: every clock below ε.
pub const FLAG_CONVERGED: u32 = 1;
/// Stop flag: L steps taken.
pub const FLAG_LIMIT: u32 = 2;
/// Stop flag: the reuse bound fell under D_min, a proximity search is needed (also set with
/// [`FLAG_CONVERGED`] or [`FLAG_LIMIT`]: what continues from the state searches first).
pub const FLAG_SEARCH: u32 = 4;

/// Device state of a solve (`two_way.glsl::TwState`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct TwState {
    /// Reuse bound D^(l) (m).
    pub bound: f32,
    /// Float bits of the current step's largest displacement.
    pub max_disp: u32,
    /// Float bits of the current step's largest clock.
    pub max_r: u32,
    /// Steps taken in this solve.
    pub steps: u32,
    /// Stop flags ([`FLAG_CONVERGED`], [`FLAG_LIMIT`], [`FLAG_SEARCH`]).
    pub flags: u32,
    /// Float bits of the smallest pair distance seen in this solve (m).
    pub min_dist: u32,
    /// Float bits of the largest clock after the last step.
    pub last_max_r: u32,
    /// Contact constraints of the current search.
    pub pairs: u32,
    /// [`crate::bvh::tree::float_to_ordered`] of the current step's smallest displacement
    /// components.
    pub disp_lo: [u32; 3],
    /// The same of the current step's largest displacement components.
    pub disp_hi: [u32; 3],
    /// Searches run within step batches ([`TwoWay::set_batch_searches`]) and accepted since the
    /// host last cleared this.
    pub searches: u32,
    /// The most contact constraints of those searches.
    pub pairs_max: u32,
    /// The most contact colors of those searches.
    pub colors_max: u32,
    /// The most constraints of one of those searches left without a color.
    pub uncolored_max: u32,
}

/// Speculative searches ([`TwoWay::set_speculative_searches`]) only while the largest clock
/// after the last batch is at least this (1 at a solve's start): a solve nearly done tends to
/// converge before its bound runs out. On `cloth_sphere_64`'s first 16 frames every batch that
/// followed one needing a search and then needed one itself started at a clock of 0.21 or more
/// (a solve's first batch starts at 1), while 14 of the 22 that converged first started below 0.2
/// (docs/measurements.md).
const SPECULATION_MIN_CLOCK: f32 = 0.2;

/// How a step batch ran ([`TwoWay::run_batch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BatchRun {
    /// The steps alone.
    Plain,
    /// The steps with a search and build queued behind them (taken by the host).
    Speculated,
    /// The steps with search sections within them ([`TwoWay::set_batch_searches`]).
    Searched,
}

/// Node name prefixes of the steps (the profile's forward time; the rest of a batch with
/// searches within it is the searches').
const STEP_NODES: [&str; 7] = [
    "two_way.distances",
    "two_way.collider_bound",
    "two_way.release",
    "two_way.reset_group",
    "two_way.group_fraction",
    "two_way.forward",
    "two_way.update",
];

/// The empty displacement box's lower corner (every ordered float is at most this).
const EMPTY_LO: [u32; 3] = [u32::MAX; 3];

/// Push constants of the per-step kernels (`two_way.glsl::TwParams`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct TwParams {
    d_min: f32,
    delta: f32,
    sigma: f32,
    gamma: f32,
    epsilon: f32,
    max_steps: u32,
    n: u32,
    offset: u32,
    count: u32,
    min_sep: f32,
    barrier_k: f32,
    barrier_range: f32,
    release_dist: f32,
    step_sep: f32,
}

/// Telemetry of one [`TwoWay::solve`].
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct TwoWayReport {
    /// Steps l taken.
    pub steps: u32,
    /// Proximity searches run.
    pub searches: u32,
    /// Searches within a step batch that overflowed their buffers (the buffers grew and the
    /// host searched again; [`TwoWay::set_batch_searches`]).
    pub searches_redone: u32,
    /// Graph runs of step batches (host round trips).
    pub batches: u32,
    /// Whether every clock fell below ε (otherwise L was reached; x is safe either way).
    pub converged: bool,
    /// Largest clock r_i at the end.
    pub max_r: f32,
    /// Smallest pair distance seen (m; +∞ without pairs).
    pub min_distance: f32,
    /// Contact constraints of the last search.
    pub contact_pairs: u32,
    /// Colors of the last contact coloring.
    pub contact_colors: u32,
    /// Most contact constraints of a search left out of the backward step because they would
    /// need more than [`MAX_COLORS`] colors (host or GPU coloring; safety is unaffected).
    pub uncolored_contacts: u32,
    /// Colors of the edge-length constraints.
    pub edge_colors: u32,
    /// Dispatches recorded per step.
    pub dispatches_per_step: u32,
    /// Host milliseconds in proximity searches, constraint building and coloring.
    pub ms_proximity: f64,
    /// Host milliseconds in step batches (backward and forward steps).
    pub ms_steps: f64,
    /// GPU milliseconds in backward steps (needs `profile`).
    pub gpu_ms_backward: f64,
    /// GPU milliseconds in forward steps, distances and bound updates (needs `profile`).
    pub gpu_ms_forward: f64,
}

impl std::ops::AddAssign for TwoWayReport {
    fn add_assign(&mut self, o: TwoWayReport) {
        self.steps += o.steps;
        self.searches += o.searches;
        self.batches += o.batches;
        self.searches_redone += o.searches_redone;
        self.converged = o.converged;
        self.max_r = o.max_r;
        self.min_distance = self.min_distance.min(o.min_distance);
        self.contact_pairs = self.contact_pairs.max(o.contact_pairs);
        self.contact_colors = self.contact_colors.max(o.contact_colors);
        self.uncolored_contacts = self.uncolored_contacts.max(o.uncolored_contacts);
        self.edge_colors = o.edge_colors;
        self.dispatches_per_step = o.dispatches_per_step;
        self.ms_proximity += o.ms_proximity;
        self.ms_steps += o.ms_steps;
        self.gpu_ms_backward += o.gpu_ms_backward;
        self.gpu_ms_forward += o.gpu_ms_forward;
    }
}

/// The GPU two-way solver over one surface (cloth, tet boundaries, several bodies).
pub struct TwoWay {
    ctx: Context,
    settings: TwoWaySettings,
    search: ProximitySearch,
    n: usize,
    state: GpuBuffer<TwState>,
    y: GpuBuffer<[f32; 4]>,
    /// The dynamics target of the solve (log-barrier baseline only: each step restarts from it).
    y0: Option<GpuBuffer<[f32; 4]>>,
    r: GpuBuffer<f32>,
    dmin: GpuBuffer<u32>,
    /// Floor release: per vertex, the smallest distance over its non-floor pairs (float bits).
    dfree: GpuBuffer<u32>,
    /// Floor release: per vertex, 1 when its component failed the release test; entry n: 1
    /// when the test did not settle (every floor-bound vertex takes the bounded step); entry
    /// n + 1: the number of floor pairs listed in the step's `floor_list`.
    blocked: GpuBuffer<u32>,
    /// Floor release: per floor-bound vertex, its component's step fraction (float bits).
    alpha_c: GpuBuffer<u32>,
    /// Shared step fractions: per vertex, its group ([`NO_GROUP`]: its own fraction).
    group_of: GpuBuffer<u32>,
    /// Shared step fractions: per group, 0 (per-vertex this step) or the fraction's float bits
    /// + 1 (`two_way_group_fraction.comp`).
    group_fraction: GpuBuffer<u32>,
    /// Groups in use (largest group index + 1; 0: none, [`TwoWay::set_vertex_groups`]).
    num_groups: usize,
    inv_w: GpuBuffer<f32>,
    on_surface: GpuBuffer<u32>,
    meta: GpuBuffer<u32>,
    color_args: GpuBuffer<u32>,
    edges: GpuBuffer<[u32; 2]>,
    rest: GpuBuffer<f32>,
    lambda_e: GpuBuffer<f32>,
    edge_ranges: Vec<(u32, u32)>,
    /// Edge color offsets (`edge_ranges` as an exclusive scan, colors + 1 entries).
    edge_offsets: GpuBuffer<u32>,
    /// Dispatch the sweep fused in one workgroup ([`SweepDispatch`]).
    fused: bool,
    reset: CompiledGraph,
    args: Option<CompiledGraph>,
    ws: Option<PairWorkspace>,
    /// Workspaces recorded so far (the next one's [`PairWorkspace::serial`]).
    ws_serial: u64,
    /// Largest binding of a split pair array (bytes; the device's `maxStorageBufferRange`
    /// unless lowered by [`TwoWay::set_max_binding_bytes`]).
    binding_limit: u64,
    searches: u32,
    last_colors: u32,
    /// Color contact constraints on the host ([`ContactColoring`]).
    host_coloring: bool,
    host_scratch: HostColoringScratch,
    /// Submit the next solve's first search at the end of a solve that needs one
    /// ([`TwoWay::set_prefetch_searches`]).
    prefetch_searches: bool,
    /// The search and constraint build submitted at the end of the last solve, at the
    /// current x: (search ticket, build ticket), checked by the next search.
    prefetched: Option<(crate::vk::Ticket, crate::vk::Ticket)>,
    /// Queue a search behind a batch expected to use up its bound
    /// ([`TwoWay::set_speculative_searches`]).
    speculative_searches: bool,
    /// Search sections per step batch ([`TwoWay::set_batch_searches`]; 0: off).
    batch_searches: u32,
    /// The last step batch used up the reuse bound (it ended needing a search): the next
    /// batch is expected to as well.
    expect_search: bool,
    /// Friction by velocity filtering (`collision/friction.rs`; off while μ = 0).
    friction: super::friction::Friction,
    /// Analytic colliders as the kernels' vec4 quadruples ([`TwoWay::set_colliders`]).
    colliders: GpuBuffer<[f32; 4]>,
    /// Colliders in use (0: the collider pass is not recorded).
    num_colliders: usize,
    /// The time at which the colliders are placed (s; [`TwoWay::set_collider_time`]).
    collider_time: GpuBuffer<f32>,
    /// Per vertex, the largest fraction of its move that keeps it out of every collider's
    /// offset (1 without one in reach; `two_way_collider_bound.comp`).
    collider_alpha: GpuBuffer<f32>,
    /// Per vertex, its clearance from colliders on top of their offsets (m; its body's
    /// `collider_offset`).
    collider_offsets: GpuBuffer<f32>,
}

/// Refuses, before anything is allocated, a pair workspace of `total` pairs that the device
/// cannot bind: the split arrays (16 bytes per pair, [`SplitBuffer`]; the separating
/// directions only with floor release, `release`) against two bindings of `split_limit` bytes, the others (the sort keys, 8 bytes per pair, and the 4-byte arrays)
/// against one binding of `device_limit` bytes. The error names the buffer, its size and the
/// limit.
fn check_workspace_sizes(
    total: usize,
    release: bool,
    split_limit: u64,
    device_limit: u64,
) -> Result<(), String> {
    super::split::split_lengths("two_way.constraints", total.max(1), 16, split_limit)?;
    if release {
        super::split::split_lengths("two_way.pair_closest", total.max(1), 16, split_limit)?;
    }
    let whole = [
        ("two_way.sort_keys", 8),
        ("two_way.sort_values", 4),
        ("two_way.lambda", 4),
        ("two_way.floor_list", 4),
        ("coloring.color", 4),
    ];
    for (name, elem) in whole {
        let bytes = (total.max(1) as u64).saturating_mul(elem);
        if bytes > device_limit {
            return Err(format!(
                "buffer '{name}' needs {bytes} bytes but the device's maxStorageBufferRange is \
                 {device_limit} bytes"
            ));
        }
    }
    Ok(())
}

fn groups(n: usize) -> [u32; 3] {
    [(n.div_ceil(WG as usize).max(1)) as u32, 1, 1]
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Host buffers of [`host_color`], kept across searches (cleared and refilled, reallocated only
/// when the pair count grows past their capacity).
#[derive(Default)]
struct HostColoringScratch {
    cons: Vec<[u32; 4]>,
    used: Vec<u64>,
    colors: Vec<u32>,
    offsets: Vec<u32>,
    cursor: Vec<u32>,
    grouped: Vec<u32>,
}

/// Greedy host coloring of the first `pairs` contact constraints of `ws` (read back), written
/// into the coloring's `offsets`/`grouped` buffers that the sweeps read; returns the colors
/// used and the constraints left uncolored. Constraints that would need a color past
/// [`MAX_COLORS`] (very dense contact) sit out this search's backward steps: the backward step
/// only guides the target, the forward step still bounds every vertex by the distances of all
/// pairs, so safety is unaffected (convergence may take more steps).
///
/// Greedy in index order (the canonical pair order, so deterministic) with a used-color mask
/// per vertex: O(pairs) time and O(vertices) memory, where a conflict graph of dense contact
/// would hold hundreds of neighbours per constraint. Same colors as `greedy_coloring` with
/// `GreedyOrder::Index` below the limit.
fn host_color(
    ws: &PairWorkspace,
    pairs: usize,
    n: usize,
    h: &mut HostColoringScratch,
) -> Result<(u32, u32), String> {
    const WORDS: usize = MAX_COLORS as usize / 64;
    h.cons.clear();
    h.cons.resize(pairs, [0; 4]);
    ws.bufs.cons.read_into(&mut h.cons)?;
    h.used.clear();
    h.used.resize(WORDS * n, 0);
    h.colors.clear();
    h.colors.resize(pairs, MAX_COLORS);
    let mut num_colors = 0;
    let mut uncolored = 0;
    for (i, c) in h.cons.iter().enumerate() {
        if let Some(&v) = c.iter().find(|&&v| v as usize >= n) {
            return Err(format!("contact constraint {i} indexes vertex {v} of {n}"));
        }
        let mut taken = [0u64; WORDS];
        for &v in c {
            for (w, t) in taken.iter_mut().enumerate() {
                *t |= h.used[WORDS * v as usize + w];
            }
        }
        let Some(w) = taken.iter().position(|&t| t != u64::MAX) else {
            uncolored += 1;
            continue;
        };
        let bit = (!taken[w]).trailing_zeros() as usize;
        for &v in c {
            h.used[WORDS * v as usize + w] |= 1 << bit;
        }
        let col = (64 * w + bit) as u32;
        h.colors[i] = col;
        num_colors = num_colors.max(col + 1);
    }
    // Counting sort by color: offsets (MAX_COLORS + 1 entries) and grouped indices.
    h.offsets.clear();
    h.offsets.resize(MAX_COLORS as usize + 1, 0);
    for &col in h.colors.iter().filter(|&&col| col < MAX_COLORS) {
        h.offsets[col as usize + 1] += 1;
    }
    for k in 0..MAX_COLORS as usize {
        h.offsets[k + 1] += h.offsets[k];
    }
    h.cursor.clone_from(&h.offsets);
    h.grouped.clear();
    h.grouped.resize(pairs - uncolored, 0);
    for (i, &col) in h.colors.iter().enumerate() {
        if col < MAX_COLORS {
            h.grouped[h.cursor[col as usize] as usize] = i as u32;
            h.cursor[col as usize] += 1;
        }
    }
    ws.bufs.coloring.offsets().write(&h.offsets).map_err(err)?;
    ws.bufs
        .coloring
        .grouped()
        .write_at(0, &h.grouped)
        .map_err(err)?;
    Ok((num_colors, uncolored as u32))
}

impl TwoWay {
    /// A solver for the surface `mesh` at the intersection-free positions `x` (m; also the rest
    /// state of the edge-length constraints), with inverse weights `inv_weight` per vertex (1:
    /// free, 0: pinned or scripted — the backward step never moves it).
    pub fn new(
        ctx: &Context,
        mesh: ProximityMesh,
        x: &[[f64; 3]],
        inv_weight: &[f32],
        settings: TwoWaySettings,
    ) -> Result<TwoWay, String> {
        settings.validate()?;
        let n = mesh.num_vertices;
        if inv_weight.len() != n {
            return Err(format!(
                "{} inverse weights for {n} vertices",
                inv_weight.len()
            ));
        }
        let mut opts = ProximityOptions::new(settings.d_max);
        opts.filter = settings.filter;
        opts.vt_capacity = settings.initial_pair_capacity;
        opts.ee_capacity = settings.initial_pair_capacity;
        let edges_host = mesh.edges.clone();
        let mut on_surface = vec![0u32; n.max(1)];
        for t in &mesh.triangles {
            for &v in t {
                on_surface[v as usize] = 1;
            }
        }
        // Curve (rod) vertices are bounded too: their segments are collision edges.
        for v in mesh.edges.iter().flatten() {
            on_surface[*v as usize] = 1;
        }
        let search = ProximitySearch::new(ctx, mesh, x, opts)?;
        let storage = BufferUsage::STORAGE;
        let init = TwState {
            bound: -1.0,
            min_dist: INF_BITS,
            disp_lo: EMPTY_LO,
            ..Default::default()
        };
        let state = ctx
            .upload_buffer("two_way.state", &[init], storage)
            .map_err(err)?;
        let y = ctx
            .upload_buffer(
                "two_way.y",
                &crate::proximity::spatial_hash::to_gpu_positions(x),
                storage,
            )
            .map_err(err)?;
        let r = ctx
            .create_buffer("two_way.r", n.max(1), storage)
            .map_err(err)?;
        let dmin = ctx
            .upload_buffer("two_way.dmin", &vec![INF_BITS; n.max(1)], storage)
            .map_err(err)?;
        let dfree = ctx
            .upload_buffer("two_way.dfree", &vec![INF_BITS; n.max(1)], storage)
            .map_err(err)?;
        let blocked = ctx
            .upload_buffer("two_way.blocked", &vec![0u32; n + 2], storage)
            .map_err(err)?;
        let alpha_c = ctx
            .upload_buffer("two_way.alpha_c", &vec![0u32; n.max(1)], storage)
            .map_err(err)?;
        let group_of = ctx
            .upload_buffer("two_way.group_of", &vec![NO_GROUP; n.max(1)], storage)
            .map_err(err)?;
        let group_fraction = ctx
            .create_buffer("two_way.group_fraction", n.max(1), storage)
            .map_err(err)?;
        let inv_w = ctx
            .upload_buffer("two_way.inv_w", &pad1(inv_weight.to_vec()), storage)
            .map_err(err)?;
        let on_surface = ctx
            .upload_buffer("two_way.on_surface", &on_surface, storage)
            .map_err(err)?;
        let meta = ctx
            .upload_buffer(
                "two_way.meta",
                &[0u32, 0, 0, 1, 1, 0, 0, 0],
                BufferUsage::INDIRECT,
            )
            .map_err(err)?;
        let color_args = ctx
            .create_buffer(
                "two_way.color_args",
                3 * MAX_COLORS as usize,
                BufferUsage::INDIRECT,
            )
            .map_err(err)?;
        // Edge-length constraints, grouped by a host greedy coloring (static topology).
        let barrier = matches!(settings.backward, Backward::LogBarrier { .. });
        let (edge_order, edge_ranges) =
            if settings.edge_constraints && !barrier && !edges_host.is_empty() {
                let c = greedy_coloring(&pad(&edges_host), n, GreedyOrder::SmallestLast)
                    .map_err(err)?;
                let mut order: Vec<usize> = (0..edges_host.len()).collect();
                order.sort_by_key(|&e| (c.colors[e], e));
                let mut ranges = Vec::new();
                let mut start = 0;
                for col in 0..c.num_colors {
                    let end = start
                        + order[start..]
                            .iter()
                            .take_while(|&&e| c.colors[e] == col)
                            .count();
                    ranges.push((start as u32, (end - start) as u32));
                    start = end;
                }
                (order, ranges)
            } else {
                (Vec::new(), Vec::new())
            };
        let grouped_edges: Vec<[u32; 2]> = edge_order.iter().map(|&e| edges_host[e]).collect();
        let rest: Vec<f32> = grouped_edges
            .iter()
            .map(|e| {
                let (a, b) = (x[e[0] as usize], x[e[1] as usize]);
                (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>().sqrt() as f32
            })
            .collect();
        if let Some(i) = rest.iter().position(|&l| !(l > 0.0)) {
            return Err(format!("edge {:?} has zero rest length", grouped_edges[i]));
        }
        let ne = grouped_edges.len();
        let edges = ctx
            .upload_buffer("two_way.edges", &pad1(grouped_edges), storage)
            .map_err(err)?;
        let rest = ctx
            .upload_buffer("two_way.rest", &pad1(rest), storage)
            .map_err(err)?;
        let lambda_e = ctx
            .upload_buffer("two_way.lambda_e", &vec![0f32; ne.max(1)], storage)
            .map_err(err)?;
        let y0 = if barrier {
            Some(
                ctx.create_buffer::<[f32; 4]>("two_way.y0", y.len(), storage)
                    .map_err(err)?,
            )
        } else {
            None
        };
        let mut scan = vec![0u32];
        for &(_, count) in &edge_ranges {
            scan.push(scan[scan.len() - 1] + count);
        }
        let edge_offsets = ctx
            .upload_buffer("two_way.edge_offsets", &scan, storage)
            .map_err(err)?;
        // CPU devices, and small problems on GPUs: one dispatch and one host pass beat hundreds.
        let small = ctx.caps().device_type == "cpu" || n <= AUTO_SMALL_VERTICES;
        let mut g = Graph::new("two_way.reset");
        g.fill("two_way.reset_clocks", &r, ONE_BITS);
        if let Some(y0) = &y0 {
            g.copy("two_way.save_target", &y, y0);
        }
        let reset = g.compile(ctx, CompileOptions::default()).map_err(err)?;
        let colliders = ctx
            .upload_buffer("two_way.colliders", &[[0f32; 4]; 4], storage)
            .map_err(err)?;
        let collider_time = ctx
            .upload_buffer(
                "two_way.collider_time",
                &[0f32],
                BufferUsage::HOST_WRITE | storage,
            )
            .map_err(err)?;
        let collider_alpha = ctx
            .upload_buffer("two_way.collider_alpha", &vec![1f32; n.max(1)], storage)
            .map_err(err)?;
        let collider_offsets = ctx
            .upload_buffer("two_way.collider_offsets", &vec![0f32; n.max(1)], storage)
            .map_err(err)?;
        let mut s = TwoWay {
            ctx: ctx.clone(),
            settings,
            search,
            n,
            state,
            y,
            y0,
            r,
            dmin,
            dfree,
            blocked,
            alpha_c,
            group_of,
            group_fraction,
            num_groups: 0,
            inv_w,
            on_surface,
            meta,
            color_args,
            edges,
            rest,
            lambda_e,
            edge_ranges,
            edge_offsets,
            fused: match settings.sweep_dispatch {
                SweepDispatch::Fused => true,
                SweepDispatch::PerColor => false,
                SweepDispatch::Auto => small,
            },
            reset,
            args: None,
            ws: None,
            ws_serial: 0,
            binding_limit: ctx.caps().max_storage_buffer_range,
            searches: 0,
            last_colors: 0,
            host_coloring: match settings.contact_coloring {
                ContactColoring::Host => true,
                ContactColoring::Gpu => false,
                ContactColoring::Auto => small,
            },
            host_scratch: HostColoringScratch::default(),
            prefetch_searches: false,
            prefetched: None,
            speculative_searches: false,
            batch_searches: settings.batch_searches,
            expect_search: false,
            friction: Default::default(),
            colliders,
            num_colliders: 0,
            collider_time,
            collider_alpha,
            collider_offsets,
        };
        s.workspace(16)?;
        Ok(s)
    }

    fn params(&self, offset: u32, count: u32) -> TwParams {
        let s = &self.settings;
        TwParams {
            d_min: s.d_min as f32,
            delta: s.delta as f32,
            sigma: s.sigma as f32,
            gamma: s.step_fraction() as f32,
            epsilon: s.epsilon as f32,
            max_steps: s.max_steps,
            n: self.n as u32,
            offset,
            count,
            min_sep: s.min_separation as f32,
            barrier_k: match s.backward {
                Backward::LogBarrier { strength, .. } => strength as f32,
                Backward::GaussSeidel => 0.0,
            },
            barrier_range: match s.backward {
                Backward::LogBarrier { range, .. } => range as f32,
                Backward::GaussSeidel => 0.0,
            },
            release_dist: s.floor_release.unwrap_or(0.0) as f32,
            step_sep: (if s.floor_release.is_some() { 2.0 } else { 1.0 } * s.min_separation) as f32,
        }
    }

    /// Lowers the largest binding the split pair arrays may use (bytes, at most the device's
    /// `maxStorageBufferRange`) and reallocates the pair workspace at the current capacities;
    /// the next solve starts with a proximity search. A small scene then exercises the split
    /// storage (for tests; results are bit-identical).
    pub fn set_max_binding_bytes(&mut self, bytes: u64) -> Result<(), String> {
        let device = self.ctx.caps().max_storage_buffer_range;
        if bytes < 16 || bytes > device {
            return Err(format!(
                "max binding bytes must be in [16, {device}] (maxStorageBufferRange), got {bytes}"
            ));
        }
        let p = self.search.params();
        let release = self.settings.floor_release.is_some();
        check_workspace_sizes((p.vt_cap + p.ee_cap) as usize, release, bytes, device)?;
        self.binding_limit = bytes;
        let cap = self.ws.as_ref().map_or(16, |w| w.color_cap);
        self.workspace(cap)?;
        // The new buffers hold no constraints yet: the next solve starts with a search.
        let mut st = self.read_state()?;
        st.bound = -1.0;
        self.state.write(&[st]).map_err(err)
    }

    /// How the contact constraints are stored: elements in the low and in the high binding
    /// (`[capacity, 0]` while one binding holds them all).
    pub fn constraint_bindings(&self) -> Option<[usize; 2]> {
        self.ws.as_ref().map(|w| {
            let lo = w.bufs.cons.lo_len();
            [lo, w.bufs.cons.len() - lo]
        })
    }

    /// Commands (dispatches and copies) recorded per step.
    pub fn dispatches_per_step(&self) -> u32 {
        let release = self.settings.floor_release.is_some() as u32;
        // Shared fractions: the slot reset and the group pass.
        let shared = 2 * (self.num_groups > 0) as u32;
        let colliders = (self.num_colliders > 0) as u32;
        release + shared + colliders + self.dispatches_per_step_without_release()
    }

    /// Shared step fractions (`collision.step_fraction`): `groups[i]` is vertex i's group
    /// (< the vertex count) or [`NO_GROUP`]; every vertex of a group then moves by one
    /// fraction per step, the smallest of its collision-surface vertices' own fractions, so
    /// the group keeps its shape during the solve (a group with a floor-released vertex takes
    /// per-vertex fractions for that step). Safety is unchanged: no vertex moves more than its
    /// own distance-bounded step. Re-records the step graphs (a set-up call, not per step).
    pub fn set_vertex_groups(&mut self, groups: &[u32]) -> Result<(), String> {
        if groups.len() != self.n {
            return Err(format!(
                "{} vertex groups for {} vertices",
                groups.len(),
                self.n
            ));
        }
        if let Some((v, &g)) = groups
            .iter()
            .enumerate()
            .find(|&(_, &g)| g != NO_GROUP && g as usize >= self.n)
        {
            return Err(format!(
                "vertex {v}: group {g} is not below the vertex count {}",
                self.n
            ));
        }
        if self.n > 0 {
            self.group_of.write(groups).map_err(err)?;
        }
        self.num_groups = groups
            .iter()
            .filter(|&&g| g != NO_GROUP)
            .max()
            .map_or(0, |&g| g as usize + 1);
        let cap = self.ws.as_ref().map_or(16, |w| w.color_cap);
        self.workspace(cap)
    }

    /// Analytic colliders (issue 26: never entered): `packed` as
    /// [`crate::contact::colliders::pack_colliders`] makes them, `count` of them, and per vertex
    /// its clearance on top of their offsets (`vertex_offsets`, m; empty: 0). Every step
    /// then moves targets out of the colliders' offsets and caps each vertex's fraction so that
    /// its straight move never enters one (`two_way_collider_bound.comp`); fixed and scripted vertices are
    /// left alone. Re-records the step graphs (a set-up call, not per step); the collider
    /// geometry itself may be rewritten between solves (write or copy into
    /// [`TwoWay::colliders`], and [`TwoWay::set_collider_time`]).
    pub fn set_colliders(
        &mut self,
        packed: &[[f32; 4]],
        count: usize,
        vertex_offsets: &[f32],
    ) -> Result<(), String> {
        if !vertex_offsets.is_empty() {
            if vertex_offsets.len() != self.n {
                return Err(format!(
                    "{} collider clearances for {} vertices",
                    vertex_offsets.len(),
                    self.n
                ));
            }
            if let Some(i) = vertex_offsets
                .iter()
                .position(|o| !(*o >= 0.0 && o.is_finite()))
            {
                return Err(format!(
                    "vertex {i}: collider clearance {} is not a non-negative length",
                    vertex_offsets[i]
                ));
            }
            self.collider_offsets.write(vertex_offsets).map_err(err)?;
        }
        if packed.len() < 4 * count {
            return Err(format!(
                "{} collider quadruples for {count} colliders (4 per collider)",
                packed.len()
            ));
        }
        if packed.len() != self.colliders.len() {
            self.colliders = self
                .ctx
                .create_buffer(
                    "two_way.colliders",
                    packed.len().max(4),
                    BufferUsage::STORAGE,
                )
                .map_err(err)?;
        }
        if !packed.is_empty() {
            self.colliders.write(packed).map_err(err)?;
        }
        self.num_colliders = count;
        let cap = self.ws.as_ref().map_or(16, |w| w.color_cap);
        self.workspace(cap)
    }

    /// The colliders' buffer ([`TwoWay::set_colliders`]; vec4 quadruples).
    pub fn colliders(&self) -> &GpuBuffer<[f32; 4]> {
        &self.colliders
    }

    /// The time (s) at which the colliders are placed for the next solves (a moving collider's
    /// pose at the end of the time step in progress); a host write, no wait.
    pub fn set_collider_time(&self, t: f64) -> Result<(), String> {
        self.collider_time.write(&[t as f32]).map_err(err)
    }

    /// Reads the per-vertex collider fractions of the last step (1: no collider in reach).
    pub fn read_collider_fractions(&self) -> Result<Vec<f32>, String> {
        let mut b = self.collider_alpha.read().map_err(err)?;
        b.truncate(self.n);
        Ok(b)
    }

    fn dispatches_per_step_without_release(&self) -> u32 {
        let colors = self.ws.as_ref().map_or(0, |w| w.color_cap);
        if self.fused {
            // Distances, (target copy,) the fused pass(es), forward, update.
            return if self.y0.is_some() {
                5
            } else {
                3 + self.settings.sweeps
            };
        }
        if self.y0.is_some() {
            // Distances, target copy, one barrier dispatch per color, forward, update.
            return 4 + colors;
        }
        3 + self.settings.sweeps * (colors + self.edge_ranges.len() as u32)
    }

    /// Current positions x (`vec4` per vertex, m): the safe state. Writers outside the solver
    /// must call [`TwoWay::positions_changed`] afterwards.
    pub fn positions(&self) -> &GpuBuffer<[f32; 4]> {
        self.search.positions()
    }

    /// Target y (`vec4` per vertex, m): write the dynamics target here before a solve.
    pub fn target(&self) -> &GpuBuffer<[f32; 4]> {
        &self.y
    }

    /// Uploads new intersection-free positions (m); the next solve searches again.
    pub fn set_positions(&mut self, x: &[[f64; 3]]) -> Result<(), String> {
        // A search submitted at the old x reads them: done before they are overwritten.
        self.drop_prefetched()?;
        self.search.set_positions(x)?;
        self.positions_changed()
    }

    /// Declares that x was changed outside the solver: the next solve searches again.
    pub fn positions_changed(&mut self) -> Result<(), String> {
        // A search submitted at the old x is not used.
        self.drop_prefetched()?;
        let mut st = self.read_state()?;
        st.bound = -1.0;
        self.state.write(&[st]).map_err(err)
    }

    /// Uploads the target y (m).
    pub fn set_target(&self, y: &[[f64; 3]]) -> Result<(), String> {
        if y.len() != self.n {
            return Err(format!("{} targets for {} vertices", y.len(), self.n));
        }
        self.y
            .write(&pad1(crate::proximity::spatial_hash::to_gpu_positions(y)))
            .map_err(err)
    }

    /// Reads the device state.
    pub fn read_state(&self) -> Result<TwState, String> {
        self.state
            .read()
            .map_err(err)?
            .first()
            .copied()
            .ok_or_else(|| "empty state buffer".to_string())
    }

    /// Settings.
    pub fn settings(&self) -> &TwoWaySettings {
        &self.settings
    }

    /// Contact constraints `[v0, v1, v2, v3]` of the current search and how many of them are
    /// vertex–triangle (the rest edge–edge), read back (for tests and tools).
    pub fn read_constraints(&self) -> Result<(Vec<[u32; 4]>, usize), String> {
        let ws = self.ws.as_ref().ok_or("no workspace")?;
        let meta = self.meta.read().map_err(err)?;
        let c = ws
            .bufs
            .cons
            .read_prefix((meta[1] as usize).min(ws.bufs.cons.len()))?;
        Ok((c, meta[0] as usize))
    }

    /// The contact constraints grouped by color: color `k` owns
    /// `grouped[offsets[k]..offsets[k + 1]]` (for tests).
    pub fn read_contact_colors(&self) -> Result<(Vec<u32>, Vec<u32>), String> {
        let ws = self.ws.as_ref().ok_or("no workspace")?;
        let offsets = ws.bufs.coloring.offsets().read().map_err(err)?;
        let grouped = ws.bufs.coloring.grouped().read().map_err(err)?;
        Ok((offsets, grouped))
    }

    /// Contact multipliers λ (first `pairs` valid) and edge multipliers (in edge-color order).
    pub fn read_multipliers(&self) -> Result<(Vec<f32>, Vec<f32>), String> {
        let ws = self.ws.as_ref().ok_or("no workspace")?;
        Ok((
            ws.bufs.lambda.read().map_err(err)?,
            self.lambda_e.read().map_err(err)?,
        ))
    }

    /// Edge-length constraints `(edges, rest lengths)` in color order and each color's
    /// `(offset, count)`.
    pub fn read_edge_constraints(
        &self,
    ) -> Result<(Vec<[u32; 2]>, Vec<f32>, Vec<(u32, u32)>), String> {
        Ok((
            self.edges.read().map_err(err)?,
            self.rest.read().map_err(err)?,
            self.edge_ranges.clone(),
        ))
    }

    /// Per-node GPU timings of the last batch (with `profile`).
    pub fn profile(&self) -> Result<Option<GraphProfile>, String> {
        match &self.ws {
            Some(w) => w.batch.profile().map_err(err),
            None => Ok(None),
        }
    }

    /// Runs a proximity search at x, rebuilds and colors the contact constraints; returns the
    /// number of contact constraints.
    fn search(&mut self, report: &mut TwoWayReport) -> Result<u32, String> {
        let t = Instant::now();
        self.search_and_build()?;
        let ws = self.ws.as_ref().ok_or("no workspace")?;
        let meta = self.meta.read().map_err(err)?;
        let pairs = meta[1] as usize;
        // The Jones–Plassmann kernels bind the constraints as one buffer: split ones are
        // colored on the host (only where the device's bindings are smaller than the pair
        // set, i.e. on lavapipe, which colors on the host anyway).
        let num_colors = if self.host_coloring || ws.bufs.cons.is_split() {
            let (colors, uncolored) = host_color(ws, pairs, self.n, &mut self.host_scratch)?;
            report.uncolored_contacts = report.uncolored_contacts.max(uncolored);
            colors
        } else {
            let seed = 0x9e37_79b9u32.wrapping_mul(self.searches + 1);
            let stats = ws
                .bufs
                .coloring
                .plan(&self.ctx, ws.bufs.cons.lo(), pairs, self.n, seed)
                .and_then(|plan| plan.run_partial())
                .map_err(|e| format!("coloring {pairs} contact constraints: {e}"))?;
            report.uncolored_contacts = report.uncolored_contacts.max(stats.overflowed);
            stats.num_colors
        };
        if num_colors > ws.color_cap {
            let cap = num_colors.div_ceil(8) * 8;
            self.workspace(cap.min(MAX_COLORS))?;
        }
        // After any re-recording (which replaces this graph: dropping it in flight would
        // wait). Read by the step batch only: its wait covers this (queue order).
        if let Some(a) = &self.args {
            a.submit().map_err(err)?;
        }
        self.searches += 1;
        self.last_colors = num_colors;
        report.searches += 1;
        report.contact_pairs = report.contact_pairs.max(pairs as u32);
        report.contact_colors = report.contact_colors.max(num_colors);
        report.ms_proximity += t.elapsed().as_secs_f64() * 1e3;
        Ok(pairs as u32)
    }

    /// The proximity search at x and the constraint build from its pairs, with one host wait
    /// when the search fits its workspace: the search is submitted without a wait and the
    /// build queued behind it; a search that overflowed grows its workspace and runs again
    /// (the build's output is then discarded and built again).
    fn search_and_build(&mut self) -> Result<(), String> {
        let current = |s: &TwoWay| {
            s.ws.as_ref()
                .is_some_and(|w| w.search_generation == s.search.generation())
        };
        if let Some((search, build)) = self.prefetched.take() {
            // Submitted at this x at the end of the last solve; a later wait (the stepper's)
            // usually covered it: then this waits for nothing.
            let ws = self.ws.as_ref().ok_or("no workspace")?;
            ws.build.wait(build).map_err(err)?;
            if self.search.finish_submitted(search)?.is_some() {
                return Ok(());
            }
        } else if current(self) {
            let ticket = self.search.submit()?;
            let ws = self.ws.as_ref().ok_or("no workspace")?;
            ws.build.run().map_err(err)?;
            if self.search.finish_submitted(ticket)?.is_some() {
                return Ok(());
            }
        }
        self.search.run()?;
        // A regrown search has new pair buffers even when the pair capacities stayed.
        if !current(self) {
            let cap = self.ws.as_ref().map_or(16, |w| w.color_cap);
            self.workspace(cap)?;
        }
        let ws = self.ws.as_ref().ok_or("no workspace")?;
        ws.build.run().map_err(err)
    }

    /// Algorithm 1 from the current positions x toward the target y; x stays intersection-free
    /// at every step (given an intersection-free start).
    pub fn solve(&mut self) -> Result<TwoWayReport, String> {
        self.run_solve(None)
    }

    /// Like [`TwoWay::solve`], calling `observe(state, x)` after every batch with the positions
    /// read back (for tests: with `steps_per_batch = 1` every forward step is observed).
    pub fn solve_observed(
        &mut self,
        mut observe: impl FnMut(&TwState, &[[f32; 4]]),
    ) -> Result<TwoWayReport, String> {
        self.run_solve(Some(&mut observe))
    }

    fn run_solve(
        &mut self,
        mut observe: Option<&mut dyn FnMut(&TwState, &[[f32; 4]])>,
    ) -> Result<TwoWayReport, String> {
        let mut report = TwoWayReport {
            min_distance: f32::INFINITY,
            edge_colors: self.edge_ranges.len() as u32,
            ..Default::default()
        };
        // Friction (friction.rs): filters y at the current pairs, searching at x first if stale.
        self.apply_friction_if_on(&mut report)?;
        // The clock reset is read by the first step batch only: its wait covers this.
        self.reset.submit().map_err(err)?;
        let mut st = self.read_state()?;
        st.steps = 0;
        st.flags = 0;
        st.max_disp = 0;
        st.disp_lo = EMPTY_LO;
        st.disp_hi = [0; 3];
        st.max_r = 0;
        st.last_max_r = ONE_BITS;
        st.min_dist = INF_BITS;
        st.searches = 0;
        st.pairs_max = 0;
        st.colors_max = 0;
        st.uncolored_max = 0;
        // A search within a batch overflowed its buffers: the host searches next (growing
        // them until the pairs fit).
        let mut host_search = false;
        loop {
            if st.bound < self.settings.d_min as f32
                && !host_search
                && self.prefetched.is_none()
                && self.batch_searches_recorded()
            {
                // The batch's first steps return at once and its first search runs.
                st.flags |= FLAG_SEARCH;
            } else if st.bound < self.settings.d_min as f32 {
                let pairs = self.search(&mut report)?;
                st.bound = self.settings.d_max as f32;
                st.flags &= !FLAG_SEARCH;
                st.pairs = pairs;
                host_search = false;
            }
            self.state.write(&[st]).map_err(err)?;
            let t = Instant::now();
            let run = self.run_batch(f32::from_bits(st.last_max_r))?;
            report.ms_steps += t.elapsed().as_secs_f64() * 1e3;
            report.batches += 1;
            self.add_batch_profile(run, &mut report)?;
            st = self.read_state()?;
            self.expect_search = st.bound < self.settings.d_min as f32;
            if run == BatchRun::Searched {
                host_search = !self.take_batch_searches(&mut st, &mut report)?;
                report.searches_redone += host_search as u32;
            }
            if run == BatchRun::Speculated {
                // The search and build queued behind the batch ran at its end x and replaced
                // the constraints: take them now (a search at x is valid whatever the bound).
                st.pairs = self.search(&mut report)?;
                st.bound = self.settings.d_max as f32;
                st.flags &= !FLAG_SEARCH;
                self.state.write(&[st]).map_err(err)?;
            }
            if let Some(f) = observe.as_mut() {
                let x = self.search.positions().read().map_err(err)?;
                f(&st, &x[..self.n]);
            }
            if st.flags & (FLAG_CONVERGED | FLAG_LIMIT) != 0 {
                break;
            }
            st.flags &= !FLAG_SEARCH;
            if st.steps >= self.settings.max_steps {
                break;
            }
        }
        // (A batch with searches within it runs the next solve's first search itself.)
        if self.prefetch_searches
            && st.bound < self.settings.d_min as f32
            && !self.batch_searches_recorded()
        {
            self.prefetch_search()?;
        }

        report.steps = st.steps;
        report.converged = st.flags & FLAG_CONVERGED != 0;
        report.max_r = f32::from_bits(st.last_max_r);
        report.min_distance = f32::from_bits(st.min_dist);
        report.dispatches_per_step = self.dispatches_per_step();
        Ok(report)
    }

    /// Runs one step batch and says how: the batch with searches within it where recorded
    /// ([`TwoWay::set_batch_searches`]); otherwise, with [`TwoWay::set_speculative_searches`],
    /// where the last batch used up its bound and the solve is not nearly done (its largest
    /// clock `clock` at least [`SPECULATION_MIN_CLOCK`]), the batch with a proximity search
    /// and constraint build queued behind it (one host wait covers the three, and the caller
    /// takes the search at once: [`TwoWay::search`] finds it submitted); else the steps
    /// alone.
    fn run_batch(&mut self, clock: f32) -> Result<BatchRun, String> {
        let ws = self.ws.as_ref().ok_or("no workspace")?;
        if let Some(g) = &ws.search_batch {
            g.run().map_err(err)?;
            return Ok(BatchRun::Searched);
        }
        let ahead =
            self.expect_search && clock >= SPECULATION_MIN_CLOCK && self.prefetched.is_none();
        if !(ahead && self.speculative_searches) {
            ws.batch.run().map_err(err)?;
            return Ok(BatchRun::Plain);
        }
        let batch = ws.batch.submit().map_err(err)?;
        self.prefetch_search()?;
        if let Some((_, build)) = self.prefetched {
            // The later ticket: one wait for the batch, the search and the build.
            self.ctx.wait(build, "two_way.batch").map_err(err)?;
        }
        let ws = self.ws.as_ref().ok_or("no workspace")?;
        ws.batch.wait(batch).map_err(err)?;
        Ok(if self.prefetched.is_some() {
            BatchRun::Speculated
        } else {
            BatchRun::Plain
        })
    }

    /// Adds the GPU times of the last batch's steps (with profiling) to the report.
    fn add_batch_profile(&self, run: BatchRun, report: &mut TwoWayReport) -> Result<(), String> {
        let ws = self.ws.as_ref().ok_or("no workspace")?;
        let graph = match (run, &ws.search_batch) {
            (BatchRun::Searched, Some(g)) => g,
            _ => &ws.batch,
        };
        let Some(p) = graph.profile().map_err(err)? else {
            return Ok(());
        };
        for node in &p.nodes {
            if node.name.contains("sweep") || node.name.contains("barrier") {
                report.gpu_ms_backward += node.gpu_ms;
            } else if STEP_NODES.iter().any(|k| node.name.starts_with(k)) {
                report.gpu_ms_forward += node.gpu_ms;
            }
        }
        Ok(())
    }

    /// After a batch with search sections ([`TwoWay::set_batch_searches`]): where its last
    /// search overflowed (it stopped the steps and left the bound under D_min), grows the
    /// search buffers (the solve's next search then runs on the host); takes the
    /// device's search counters into the report and clears them in `st`. Returns whether the
    /// searches fit their buffers.
    fn take_batch_searches(
        &mut self,
        st: &mut TwState,
        report: &mut TwoWayReport,
    ) -> Result<bool, String> {
        // A search section runs whenever a step flags one (also on a stop), so a batch ends
        // with the bound under D_min only when its last search overflowed: only then is the
        // search's status read back.
        let fits =
            st.bound >= self.settings.d_min as f32 || self.search.check_recorded()?.is_some();
        if !fits {
            // Grown: the graphs that bind the search buffers are recorded again.
            let cap = self.ws.as_ref().map_or(16, |w| w.color_cap);
            self.workspace(cap)?;
        }
        self.searches += st.searches;
        report.searches += st.searches;
        report.contact_pairs = report.contact_pairs.max(st.pairs_max);
        report.contact_colors = report.contact_colors.max(st.colors_max);
        report.uncolored_contacts = report.uncolored_contacts.max(st.uncolored_max);
        st.searches = 0;
        st.pairs_max = 0;
        st.colors_max = 0;
        st.uncolored_max = 0;
        Ok(fits)
    }

    /// With `units > 0` (and the fused sweep), every step batch is `units` × 2 steps, each two
    /// followed by a section gated on the state's search flag: the proximity search at x, its
    /// constraint build, its coloring in one workgroup (`jp_workgroup.comp`) and
    /// `two_way_accept.comp`, all in one graph. A search runs exactly when a step used up the
    /// reuse bound, as without this, but the host no longer waits for each (and colors none):
    /// one host wait per batch. Constraints split over two bindings and the per-color sweeps
    /// (recorded for a color count the host reads) keep host-run searches.
    pub fn set_batch_searches(&mut self, units: u32) -> Result<(), String> {
        if units == self.batch_searches {
            return Ok(());
        }
        self.batch_searches = units;
        match self.ws.as_ref().map(|w| w.color_cap) {
            Some(cap) => self.workspace(cap),
            None => Ok(()),
        }
    }

    /// Whether step batches may queue searches within them ([`TwoWay::set_batch_searches`]
    /// on and possible for this workspace).
    pub fn batch_searches_recorded(&self) -> bool {
        self.ws.as_ref().is_some_and(|w| w.search_batch.is_some())
    }

    /// With `on`, a step batch that follows one which used up its reuse bound (the batches
    /// then need a search each, e.g. where a cloth strikes an obstacle) has the proximity search
    /// and the constraint build queued behind it, at the positions it ends at: one host wait
    /// instead of two per search. That search is taken whatever the batch's bound (a search at
    /// x is always valid), so a batch that did not use up its bound costs a search sooner than
    /// needed: the steps and positions may then differ from a solve without it, each as safe.
    /// Unlike [`TwoWay::set_prefetch_searches`], nothing is left pending at a solve's end: the
    /// pair set read between solves (the repulsion energy) is the last search's, as without it.
    pub fn set_speculative_searches(&mut self, on: bool) {
        self.speculative_searches = on;
        self.expect_search = false;
    }

    /// With `on`, a solve that ends with its reuse bound under D_min submits the next solve's
    /// first proximity search and constraint build at once, without a wait (x does not change
    /// until that solve): whatever the caller waits for next covers them, and the next search
    /// reads their result instead of a wait of its own (the coloring and everything after it
    /// as before). For callers that read nothing of the pair set between solves (the two-way
    /// contact handler without its repulsion energy); a solve's results are the same.
    pub fn set_prefetch_searches(&mut self, on: bool) -> Result<(), String> {
        self.prefetch_searches = on;
        if on {
            Ok(())
        } else {
            self.drop_prefetched()
        }
    }

    /// Forgets the search submitted for the next solve (if any) once it has completed (its
    /// buffers may be rewritten or dropped after this).
    fn drop_prefetched(&mut self) -> Result<(), String> {
        match self.prefetched.take() {
            Some((_, build)) => self.ctx.wait(build, "two_way.build").map_err(err),
            None => Ok(()),
        }
    }

    /// Submits the search and the constraint build at x for the next solve
    /// ([`TwoWay::set_prefetch_searches`]); not when the workspace must grow first.
    fn prefetch_search(&mut self) -> Result<(), String> {
        let current = self
            .ws
            .as_ref()
            .is_some_and(|w| w.search_generation == self.search.generation());
        if !current {
            return Ok(());
        }
        let search = self.search.submit()?;
        let ws = self.ws.as_ref().ok_or("no workspace")?;
        let build = ws.build.submit().map_err(err)?;
        self.prefetched = Some((search, build));
        Ok(())
    }

    /// Runs a proximity search at x (new pairs, colors and indirect arguments) when the reuse
    /// bound asks for one, and marks the state as searched (for passes before the steps, tests).
    pub fn search_if_stale(&mut self, report: &mut TwoWayReport) -> Result<(), String> {
        let mut st = self.read_state()?;
        if st.bound < self.settings.d_min as f32 {
            st.pairs = self.search(report)?;
            st.bound = self.settings.d_max as f32;
            st.flags &= !FLAG_SEARCH;
            self.state.write(&[st]).map_err(err)?;
        }
        Ok(())
    }

    /// The device context.
    pub(crate) fn context(&self) -> &Context {
        &self.ctx
    }

    /// Inverse weights per vertex (0: pinned).
    pub(crate) fn inverse_weights(&self) -> &GpuBuffer<f32> {
        &self.inv_w
    }

    /// `meta` (`[0]`: vertex–triangle constraints, `[1]`: all, `[2..5]`: per-pair indirect args).
    pub(crate) fn meta_buffer(&self) -> &GpuBuffer<u32> {
        &self.meta
    }

    /// Indirect arguments per contact color (3 words each).
    pub(crate) fn color_args_buffer(&self) -> &GpuBuffer<u32> {
        &self.color_args
    }

    /// The pair workspace's constraints, color offsets, grouped indices, color capacity and a
    /// key that changes whenever those buffers or the capacity are replaced.
    #[allow(clippy::type_complexity)]
    pub(crate) fn contact_buffers(
        &self,
    ) -> Option<(
        &SplitBuffer<[u32; 4]>,
        &GpuBuffer<u32>,
        &GpuBuffer<u32>,
        u32,
        (u64, u32),
    )> {
        self.ws.as_ref().map(|w| {
            (
                &w.bufs.cons,
                w.bufs.coloring.offsets(),
                w.bufs.coloring.grouped(),
                w.color_cap,
                (w.serial, w.color_cap),
            )
        })
    }

    /// The friction state.
    pub(crate) fn friction_state(&self) -> &super::friction::Friction {
        &self.friction
    }

    /// The friction state (taken out and put back around a pass).
    pub(crate) fn friction_mut(&mut self) -> &mut super::friction::Friction {
        &mut self.friction
    }
}

/// Friction by velocity filtering (`friction.rs`).
impl TwoWay {
    /// Sets the Coulomb coefficient μ of friction between the surfaces (0: off, the default);
    /// with μ > 0 every solve starts with a friction pass ([`TwoWay::apply_friction`]).
    pub fn set_friction(&mut self, mu: f64) -> Result<(), String> {
        if !(mu.is_finite() && mu >= 0.0) {
            return Err(format!("friction must be finite and >= 0, got {mu}"));
        }
        self.friction_mut().set_mu(mu);
        Ok(())
    }

    /// The Coulomb coefficient μ of friction between the surfaces.
    pub fn friction(&self) -> f64 {
        self.friction_state().mu()
    }

    /// The friction pass alone: a proximity search at x if the reuse bound asks for one, then
    /// one velocity-filtering dispatch per contact color on the target y (none with μ = 0).
    /// Returns the host milliseconds spent.
    pub fn apply_friction(&mut self, report: &mut TwoWayReport) -> Result<f64, String> {
        self.friction_pass(report, true)
    }

    /// [`TwoWay::apply_friction`]; with `wait` false the pass is submitted without a wait of
    /// its own (the solve's first step batch reads the target after it, in queue order).
    fn friction_pass(&mut self, report: &mut TwoWayReport, wait: bool) -> Result<f64, String> {
        self.search_if_stale(report)?;
        if self.friction_state().mu() <= 0.0 {
            return Ok(0.0);
        }
        let t = Instant::now();
        let mut f = std::mem::take(self.friction_mut());
        let r = match self.friction_inputs() {
            Some(inputs) => f.run(inputs, wait),
            None => Err("two-way solver has no pair workspace".into()),
        };
        *self.friction_mut() = f;
        r?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    }

    /// The hook at the start of a solve: the friction pass when μ > 0.
    pub(crate) fn apply_friction_if_on(&mut self, report: &mut TwoWayReport) -> Result<(), String> {
        if self.friction_state().mu() > 0.0 {
            let ms = self.friction_pass(report, false)?;
            report.ms_proximity += ms;
        }
        Ok(())
    }
}

/// The friction pass's view of the solver.
impl TwoWay {
    fn friction_inputs(&self) -> Option<super::friction::FrictionInputs<'_>> {
        let (cons, offsets, grouped, color_cap, key) = self.contact_buffers()?;
        Some(super::friction::FrictionInputs {
            ctx: self.context(),
            positions: self.positions(),
            target: self.target(),
            cons,
            meta: self.meta_buffer(),
            offsets,
            grouped,
            inverse_weights: self.inverse_weights(),
            color_args: self.color_args_buffer(),
            color_cap,
            key,
            delta: self.settings().delta,
        })
    }
}
