//! GPU proximity search by spatial hashing (two-way IPC paper §3.1, RAINBOW report §3.1.4).
//!
//! One search is one compiled command graph:
//! 1. Counting sort of the entries (one per overlapped cell; key = type, bucket of the cell,
//!    buckets = cell coordinates modulo `2^k` per axis, and x slot of the box in the cell):
//!    `cell_counts` counts the cells of each triangle's box inflated by D and each edge's box
//!    inflated by D/2 and adds one per entry to its key's counter (an atomic), an inclusive
//!    [`Scan`] of the per-key counts gives each key's run, and `place_entries` writes every
//!    entry at a slot of its run (taken by counting the key back down) with a packed record
//!    (cell-local quantized box; triangle index or edge vertices), so the queries scan
//!    buckets with contiguous loads. The run ends give the true entry total.
//! 2. `domain` (cells of the vertices ± the inflation) and `query_args` pick the `query_ee`
//!    variant: one cell per bucket when the domain spans at most `2^k` cells per axis.
//! 3. `query_vt`: each vertex tests the triangle entries of its own cell's bucket (vertices in
//!    cell order, subgroup tiles of [`EE_TILE`] entries shuffled to the lanes);
//!    `query_ee`: each edge entry tests the later edge entries of its bucket, taking a pair
//!    only in the bucket of the cell holding the minimum corner of the two boxes' intersection
//!    (each pair once); a subgroup loads the packed records in tiles of [`EE_TILE`] and shuffles
//!    them to its lanes (register-only quantized tests). With one cell per bucket the
//!    quantized test is exact and the hits are appended as entry pairs from register slots;
//!    otherwise they get the exact f32 tests and a conservative bounding-sphere cull. Pairs
//!    sharing a vertex or rejected by the body filter are skipped.
//! 4. `narrow` (indirect dispatch over the candidate counts, `candidate_args`): the exact f32
//!    distance (`distance.glsl`), one candidate per invocation, keeps `dist < D`; kept pairs
//!    are appended with atomic counters.
//! 5. `finish`: status (true counts) and indirect-dispatch arguments for consumers.
//!
//! Overflow (entries or pairs past capacity) is detected from the true counts after the run;
//! [`ProximitySearch::run`] then grows the buffers (outside the per-step graph), recompiles and
//! redoes the search, so no pair is ever dropped silently.
//! Reference: [`crate::cpu_reference::proximity`].

use super::host as reference;
use crate::primitives::{Scan, ScanKind};
use crate::vk::{
    ids, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph,
    GraphProfile, KernelId, VkResult,
};

/// Workgroup size of the proximity kernels.
const WG: u32 = 64;
/// Relative safety margin on box inflations so f32 rounding never culls a pair with dist < D.
const PAD_MARGIN: f64 = 1e-4;
/// Entries per subgroup tile of the queries (`query_vt.comp`, `query_ee.comp`; needs subgroups
/// at least this wide).
const EE_TILE: u32 = 8;
/// Maximum number of grow-and-redo rounds of one [`ProximitySearch::run`].
const MAX_REDO: u32 = 8;

/// Which pairs a search reports, by the bodies of their primitives (body of a primitive = body
/// of its first vertex).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyFilter {
    /// Report pairs within one body (self-contact).
    pub within_body: bool,
    /// Report pairs between different bodies.
    pub between_bodies: bool,
}

impl Default for BodyFilter {
    fn default() -> Self {
        BodyFilter {
            within_body: true,
            between_bodies: true,
        }
    }
}

impl BodyFilter {
    /// Kernel flag bits (bit 0 within, bit 1 between).
    pub fn flags(self) -> u32 {
        self.within_body as u32 | (self.between_bodies as u32) << 1
    }

    /// The filter of kernel flag bits ([`BodyFilter::flags`]).
    pub fn from_flags(flags: u32) -> Self {
        BodyFilter {
            within_body: flags & 1 != 0,
            between_bodies: flags & 2 != 0,
        }
    }

    /// Whether a pair of primitives of bodies `a` and `b` is reported.
    pub fn allows(self, a: u32, b: u32) -> bool {
        if a == b {
            self.within_body
        } else {
            self.between_bodies
        }
    }
}

/// Surface topology searched for proximity pairs (vertex indices into one position array).
#[derive(Debug, Clone, PartialEq)]
pub struct ProximityMesh {
    /// Number of vertices.
    pub num_vertices: usize,
    /// Surface triangles.
    pub triangles: Vec<[u32; 3]>,
    /// Unique surface edges `[a, b]`, `a < b`.
    pub edges: Vec<[u32; 2]>,
    /// Body id of each vertex.
    pub body: Vec<u32>,
}

impl ProximityMesh {
    /// Topology of `triangles` over `body.len()` vertices (edges derived); checks indices.
    pub fn new(triangles: Vec<[u32; 3]>, body: Vec<u32>) -> Result<Self, String> {
        let n = body.len();
        if n >= u32::MAX as usize || triangles.len() >= u32::MAX as usize {
            return Err("mesh too large for u32 indices".into());
        }
        if let Some((i, t)) = triangles
            .iter()
            .enumerate()
            .find(|(_, t)| t.iter().any(|&v| v as usize >= n))
        {
            return Err(format!("triangle {i} {t:?} indexes past {n} vertices"));
        }
        let edges = reference::unique_edges(&triangles);
        Ok(ProximityMesh {
            num_vertices: n,
            triangles,
            edges,
            body,
        })
    }

    /// Topology of `triangles` plus extra `curves` edges (rod centreline segments, `[a, b]` in
    /// any order) over `body.len()` vertices: the edges are the unique union of the triangles'
    /// edges and the curve segments; vertex–triangle pairs cover every vertex, so curve vertices
    /// are tested against triangles. Checks indices and rejects a segment repeating a vertex.
    pub fn with_curves(
        triangles: Vec<[u32; 3]>,
        curves: &[[u32; 2]],
        body: Vec<u32>,
    ) -> Result<Self, String> {
        let mut m = Self::new(triangles, body)?;
        let n = m.num_vertices;
        if m.edges.len() + curves.len() >= u32::MAX as usize {
            return Err("mesh too large for u32 indices".into());
        }
        for (i, e) in curves.iter().enumerate() {
            if e.iter().any(|&v| v as usize >= n) {
                return Err(format!("curve segment {i} {e:?} indexes past {n} vertices"));
            }
            if e[0] == e[1] {
                return Err(format!("curve segment {i} {e:?} repeats a vertex"));
            }
        }
        m.edges
            .extend(curves.iter().map(|e| [e[0].min(e[1]), e[0].max(e[1])]));
        m.edges.sort_unstable();
        m.edges.dedup();
        Ok(m)
    }

    /// One body: the triangles of `mesh` (all vertices in body 0).
    pub fn from_trimesh(mesh: &crate::mesh::TriMesh) -> Result<Self, String> {
        Self::new(mesh.triangles.clone(), vec![0; mesh.positions.len()])
    }

    /// Mean edge length (m) at positions `x` (0 without edges).
    pub fn mean_edge_length(&self, x: &[[f64; 3]]) -> f64 {
        if self.edges.is_empty() {
            return 0.0;
        }
        let s: f64 = self.edges.iter().map(|e| edge_len(x, *e)).sum();
        s / self.edges.len() as f64
    }

    /// Longest edge (m) at positions `x`.
    pub fn max_edge_length(&self, x: &[[f64; 3]]) -> f64 {
        self.edges
            .iter()
            .map(|e| edge_len(x, *e))
            .fold(0.0, f64::max)
    }
}

fn edge_len(x: &[[f64; 3]], e: [u32; 2]) -> f64 {
    let (a, b) = (x[e[0] as usize], x[e[1] as usize]);
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Settings of a proximity search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProximityOptions {
    /// Search distance D (m): pairs with exact distance `< D` are reported.
    pub distance: f64,
    /// Grid cell size h (m); `None`: [`default_cell_size`] at the construction positions.
    pub cell_size: Option<f64>,
    /// Which bodies' pairs are reported.
    pub filter: BodyFilter,
    /// Initial capacity of the cell entries (`None`: estimated from the first positions).
    pub entry_capacity: Option<usize>,
    /// Initial capacity of the vertex–triangle pair list (`None`: 4 per vertex).
    pub vt_capacity: Option<usize>,
    /// Initial capacity of the edge–edge pair list (`None`: 4 per edge).
    pub ee_capacity: Option<usize>,
    /// Initial capacity of both candidate lists (`None`: 16 per vertex / edge).
    pub candidate_capacity: Option<usize>,
    /// Bits per axis `k` of the bucket table, 4..=7 (`None`: from the entry count, at most what
    /// the first positions' cell domain needs); scenes wider than `2^k` cells share buckets
    /// periodically.
    pub axis_bits: Option<u32>,
}

impl ProximityOptions {
    /// Defaults for search distance `distance` (m).
    pub fn new(distance: f64) -> Self {
        ProximityOptions {
            distance,
            cell_size: None,
            filter: BodyFilter::default(),
            entry_capacity: None,
            vt_capacity: None,
            ee_capacity: None,
            candidate_capacity: None,
            axis_bits: None,
        }
    }
}

/// Push constants shared by every proximity kernel (layout of `kernels/proximity/spatial_hash.glsl`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct HashParams {
    /// Vertices.
    pub nv: u32,
    /// Triangles.
    pub nt: u32,
    /// Edges.
    pub ne: u32,
    /// Buckets per primitive type: `2^table_bits`, `table_bits = 3 k` (cell coordinates
    /// modulo `2^k` per axis).
    pub table_bits: u32,
    /// 1 / cell size (1/m).
    pub inv_h: f32,
    /// Search distance D (m).
    pub d: f32,
    /// Inflation of triangle boxes (m).
    pub pad_t: f32,
    /// Inflation of edge boxes (m).
    pub pad_e: f32,
    /// Capacity of the cell entries.
    pub entry_cap: u32,
    /// Capacity of the vertex–triangle pair list.
    pub vt_cap: u32,
    /// Capacity of the edge–edge pair list.
    pub ee_cap: u32,
    /// Body filter bits ([`BodyFilter::flags`]).
    pub flags: u32,
    /// Capacity of the vertex–triangle candidate list.
    pub cvt_cap: u32,
    /// Capacity of the edge–edge candidate list.
    pub cee_cap: u32,
    /// x-order bits of the keys (0..=4): each bucket is split into `2^order_bits` slots by the x
    /// of the entry box's lower corner in its cell, so the queries scan only the slots their
    /// own box reaches.
    pub order_bits: u32,
}

impl HashParams {
    /// Sentinel key of unused entries (past every bucket of both types).
    pub fn sentinel(&self) -> u32 {
        2u32 << (self.table_bits + self.order_bits)
    }

    /// Number of keys (both types, every bucket and x slot); the sentinel is this value.
    pub fn num_keys(&self) -> usize {
        2usize << (self.table_bits + self.order_bits)
    }

    /// Bits per axis of a bucket index (`k`).
    pub fn axis_bits(&self) -> u32 {
        self.table_bits / 3
    }
}

/// One proximity pair: `(vertex, triangle)` or `(edge a, edge b)` with `a < b`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pair {
    /// Vertex index (vertex–triangle) or first edge index (edge–edge).
    pub a: u32,
    /// Triangle index (vertex–triangle) or second edge index (edge–edge).
    pub b: u32,
    /// Closest-feature code (`PointTriangleKind` / `EdgeEdgeKind` of `cpu_reference::distance`).
    pub kind: u32,
    /// Squared distance (m², f32 as computed on the GPU).
    pub sq_dist: f32,
}

impl Pair {
    /// Decodes a GPU pair record `[a, b, kind, sq_dist bits]`.
    pub fn from_gpu(r: [u32; 4]) -> Self {
        Pair {
            a: r[0],
            b: r[1],
            kind: r[2],
            sq_dist: f32::from_bits(r[3]),
        }
    }
}

/// Pairs of one search, read back to the host.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProximityPairs {
    /// Vertex–triangle pairs.
    pub vertex_triangle: Vec<Pair>,
    /// Edge–edge pairs.
    pub edge_edge: Vec<Pair>,
}

/// Outcome of [`ProximitySearch::run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SearchReport {
    /// Cell entries of the final search.
    pub entries: u32,
    /// Vertex–triangle pairs found.
    pub vertex_triangle: u32,
    /// Edge–edge pairs found.
    pub edge_edge: u32,
    /// Vertex–triangle candidates passed to the exact distance filter.
    pub candidates_vertex_triangle: u32,
    /// Edge–edge candidates passed to the exact distance filter.
    pub candidates_edge_edge: u32,
    /// Searches that overflowed a buffer and were redone after growing it.
    pub redone: u32,
    /// Whether the domain spanned at most `2^k` cells per axis, so every bucket held one cell
    /// and the edge–edge query decided pairs on its exact quantized records alone
    /// (`kernels/proximity/query_ee.comp`); otherwise it re-checked them in f32.
    pub one_frame: bool,
}

/// Buffers sized by capacities (reallocated only when a search overflows).
struct SearchBuffers {
    params: HashParams,
    keys: GpuBuffer<u32>,
    vals: GpuBuffer<u32>,
    /// Entries per key (`cell_counts`), counted back to 0 by `place_entries`.
    key_counts: GpuBuffer<u32>,
    /// Inclusive scan of the per-key counts: end of each key's run.
    key_ends: GpuBuffer<u32>,
    key_scan: Scan,
    recs: GpuBuffer<[u32; 4]>,
    pairs_vt: GpuBuffer<[u32; 4]>,
    pairs_ee: GpuBuffer<[u32; 4]>,
    cand_vt: GpuBuffer<[u32; 2]>,
    cand_ee: GpuBuffer<[u32; 2]>,
}

/// The buffers and the compiled search graph.
struct Workspace {
    bufs: SearchBuffers,
    graph: CompiledGraph,
}

/// A GPU proximity search over one surface with its persistent buffers and compiled graph.
pub struct ProximitySearch {
    ctx: Context,
    mesh: ProximityMesh,
    base: HashParams,
    compile: CompileOptions,
    axis_bits: Option<u32>,
    /// Bucket bits per axis that hold the cell domain of the construction positions.
    domain_axis_bits: u32,
    x: GpuBuffer<[f32; 4]>,
    body: GpuBuffer<u32>,
    order: GpuBuffer<u32>,
    tris: GpuBuffer<[u32; 4]>,
    edges: GpuBuffer<[u32; 2]>,
    counts: GpuBuffer<u32>,
    count_vt: GpuBuffer<u32>,
    count_ee: GpuBuffer<u32>,
    ccount_vt: GpuBuffer<u32>,
    ccount_ee: GpuBuffer<u32>,
    narrow_args: GpuBuffer<u32>,
    /// Indirect arguments of the two `query_ee` variants (`query_args.comp`).
    query_args: GpuBuffer<u32>,
    saturated: GpuBuffer<u32>,
    status: GpuBuffer<u32>,
    args: GpuBuffer<u32>,
    ws: Workspace,
    /// Workspace allocations so far (consumers' graphs bind its buffers).
    generation: u64,
}

/// Dispatch shape `[x, y, 1]` covering `n` invocations of `WG` (kernels use `flat_index`).
fn groups_2d(n: usize) -> [u32; 3] {
    let g = n.div_ceil(WG as usize).max(1);
    let x = g.min(65_535);
    [x as u32, g.div_ceil(x) as u32, 1]
}

/// Default grid cell size (m) for mean edge length `mean_edge` and search distance `distance`:
/// `3.5 mean_edge + distance`. With the counting sort, per-entry work (ranking and placing
/// entries) costs more on lavapipe than testing a few more primitives per bucket, so cells span
/// a few edges: on the sample surfaces (bunny, shirt, rocks, bear, torus; D from 0.1 to 1 mean
/// edge) this was the fastest of the sizes tried or within noise of it (docs/measurements.md).
pub fn default_cell_size(mean_edge: f64, distance: f64) -> f64 {
    3.5 * mean_edge + distance
}

/// Converts positions (m) to the GPU layout.
pub fn to_gpu_positions(x: &[[f64; 3]]) -> Vec<[f32; 4]> {
    x.iter()
        .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32, 0.0])
        .collect()
}

impl ProximitySearch {
    /// Uploads `mesh` at positions `x` (m, one per vertex; pass them relative to a nearby origin,
    /// the search runs in f32) and allocates the search for `options`.
    pub fn new(
        ctx: &Context,
        mesh: ProximityMesh,
        x: &[[f64; 3]],
        options: ProximityOptions,
    ) -> Result<Self, String> {
        Self::with_compile_options(ctx, mesh, x, options, CompileOptions::default())
    }

    /// Like [`ProximitySearch::new`], compiling the search graph with `compile` (timestamps for
    /// [`ProximitySearch::profile`]).
    pub fn with_compile_options(
        ctx: &Context,
        mesh: ProximityMesh,
        x: &[[f64; 3]],
        options: ProximityOptions,
        compile: CompileOptions,
    ) -> Result<Self, String> {
        let e = |e: crate::VkError| e.to_string();
        if x.len() != mesh.num_vertices || mesh.body.len() != mesh.num_vertices {
            return Err(format!(
                "{} positions / {} body ids for {} vertices",
                x.len(),
                mesh.body.len(),
                mesh.num_vertices
            ));
        }
        if ctx.caps().subgroup_size < EE_TILE {
            return Err(format!(
                "the proximity search needs subgroups of at least {EE_TILE} lanes, the device has {}",
                ctx.caps().subgroup_size
            ));
        }
        let d = options.distance;
        if !(d.is_finite() && d > 0.0) {
            return Err(format!(
                "search distance must be positive and finite, got {d}"
            ));
        }
        let h = options
            .cell_size
            .unwrap_or_else(|| default_cell_size(mesh.mean_edge_length(x), d));
        // A primitive should overlap few cells (and at most 2^k per axis): never smaller than
        // 1/16 of the longest edge.
        let h = h.max(mesh.max_edge_length(x) / 16.0).max(d);
        if !(h.is_finite() && h > 0.0) {
            return Err(format!("invalid cell size {h}"));
        }
        let (nv, nt, ne) = (mesh.num_vertices, mesh.triangles.len(), mesh.edges.len());
        let base = HashParams {
            nv: nv as u32,
            nt: nt as u32,
            ne: ne as u32,
            table_bits: 0,
            inv_h: (1.0 / h) as f32,
            d: d as f32,
            pad_t: (d * (1.0 + PAD_MARGIN)) as f32,
            pad_e: (0.5 * d * (1.0 + PAD_MARGIN)) as f32,
            entry_cap: 0,
            vt_cap: 0,
            ee_cap: 0,
            flags: options.filter.flags(),
            cvt_cap: 0,
            cee_cap: 0,
            order_bits: 0,
        };
        let gx = to_gpu_positions(x);
        // Fewest bucket bits per axis (4..=7) holding the cell domain at these positions: every
        // bucket is then one cell (exact one-frame edge–edge query) with the smallest key table.
        let domain_axis_bits = (4..=7)
            .find(|&k| {
                reference::buckets_are_cells(
                    &reference::domain(&gx, &base),
                    &HashParams {
                        table_bits: 3 * k,
                        ..base
                    },
                )
            })
            .unwrap_or(7);
        // The estimate allows the largest per-axis span (k = 7).
        let estimate = HashParams {
            table_bits: 21,
            ..base
        };
        let entry_cap = match options.entry_capacity {
            Some(c) => c,
            None => {
                let n: u64 = reference::cell_counts(&gx, &mesh.triangles, &mesh.edges, &estimate)
                    .iter()
                    .map(|&c| c as u64)
                    .sum();
                (n + n / 4 + 1024).min(u32::MAX as u64 / 2) as usize
            }
        };
        let vt_cap = options.vt_capacity.unwrap_or(4 * nv + 64);
        let ee_cap = options.ee_capacity.unwrap_or(4 * ne + 64);
        let cvt_cap = options.candidate_capacity.unwrap_or(16 * nv + 64);
        let cee_cap = options.candidate_capacity.unwrap_or(16 * ne + 64);
        let usage = BufferUsage::STORAGE;
        let tris: Vec<[u32; 4]> = mesh
            .triangles
            .iter()
            .map(|t| [t[0], t[1], t[2], 0])
            .collect();
        let np = (nt + ne).max(1);
        // Vertices sorted by cell at these positions: the lanes of a subgroup of query_vt then
        // mostly share a bucket (any order is correct).
        let inv_h = base.inv_h;
        let mut order: Vec<u32> = (0..nv as u32).collect();
        order.sort_by_key(|&v| {
            let c = reference::cell_of(
                [gx[v as usize][0], gx[v as usize][1], gx[v as usize][2]],
                inv_h,
            );
            (c[2], c[1], c[0], v)
        });
        let order = ctx
            .upload_buffer("proximity.vertex_order", &pad1(order), usage)
            .map_err(e)?;
        let x_buf = ctx
            .upload_buffer("proximity.x", &pad1(gx), usage)
            .map_err(e)?;
        let body = ctx
            .upload_buffer("proximity.body", &pad1(mesh.body.clone()), usage)
            .map_err(e)?;
        let tris = ctx
            .upload_buffer("proximity.tris", &pad1(tris), usage)
            .map_err(e)?;
        let edges = ctx
            .upload_buffer("proximity.edges", &pad1(mesh.edges.clone()), usage)
            .map_err(e)?;
        let counts = ctx
            .create_buffer("proximity.cell_counts", np, usage)
            .map_err(e)?;
        let count_vt = ctx
            .create_buffer("proximity.count_vt", 1, usage)
            .map_err(e)?;
        let count_ee = ctx
            .create_buffer("proximity.count_ee", 1, usage)
            .map_err(e)?;
        let ccount_vt = ctx
            .create_buffer("proximity.candidates_vt", 1, usage)
            .map_err(e)?;
        let ccount_ee = ctx
            .create_buffer("proximity.candidates_ee", 1, usage)
            .map_err(e)?;
        let narrow_args = ctx
            .create_buffer("proximity.narrow_args", 6, BufferUsage::INDIRECT)
            .map_err(e)?;
        let query_args = ctx
            .create_buffer("proximity.query_args", 8, BufferUsage::INDIRECT)
            .map_err(e)?;
        // [saturated flag, cell domain (spatial_hash.glsl::buckets_are_cells), pad].
        let saturated = ctx
            .create_buffer("proximity.saturated", 8, usage)
            .map_err(e)?;
        // Host-visible: read after every search without a staging copy.
        let status = ctx
            .create_buffer("proximity.status", 8, usage | BufferUsage::HOST_READ)
            .map_err(e)?;
        let args = ctx
            .create_buffer("proximity.indirect_args", 6, BufferUsage::INDIRECT)
            .map_err(e)?;
        let mut s = ProximitySearch {
            ctx: ctx.clone(),
            mesh,
            base,
            compile,
            axis_bits: options.axis_bits.map(|k| k.clamp(4, 7)),
            domain_axis_bits,
            x: x_buf,
            body,
            order,
            tris,
            edges,
            counts,
            count_vt,
            count_ee,
            ccount_vt,
            ccount_ee,
            narrow_args,
            query_args,
            saturated,
            status,
            args,
            ws: Workspace::placeholder(ctx).map_err(e)?,
            generation: 0,
        };
        s.ws = s
            .workspace([entry_cap, vt_cap, ee_cap, cvt_cap, cee_cap])
            .map_err(e)?;
        Ok(s)
    }

    /// Allocates capacity-sized buffers and records/compiles the search graph.
    /// `caps`: entries, vertex–triangle pairs, edge–edge pairs, and the two candidate lists.
    fn workspace(&self, caps: [usize; 5]) -> VkResult<Workspace> {
        let [entry_cap, vt_cap, ee_cap, cvt_cap, cee_cap] = caps.map(|c| c.max(1));
        let ctx = &self.ctx;
        let entry_cap = entry_cap.max(1);
        // 2^(3k) buckets per type (or as configured): about the entry count, k in 5..=7, and no
        // more than the domain needs (more buckets would only cost clearing and scanning).
        let k = self.axis_bits.unwrap_or_else(|| {
            (entry_cap.next_power_of_two().trailing_zeros())
                .div_ceil(3)
                .clamp(5, 7)
                .min(self.domain_axis_bits)
        });
        let table_bits = 3 * k;
        // x slots per bucket while the key table stays at most 2^16 keys (k = 4: 8 slots,
        // larger tables: none; 16 slots at k = 4 measured the same).
        let order_bits = 15u32.saturating_sub(table_bits).min(4);
        let params = HashParams {
            table_bits,
            order_bits,
            entry_cap: entry_cap as u32,
            vt_cap: vt_cap.max(1) as u32,
            ee_cap: ee_cap.max(1) as u32,
            cvt_cap: cvt_cap as u32,
            cee_cap: cee_cap as u32,
            ..self.base
        };
        let usage = BufferUsage::STORAGE;
        let keys = ctx.create_buffer("proximity.keys", entry_cap, usage)?;
        let vals = ctx.create_buffer("proximity.vals", entry_cap, usage)?;
        let nkeys = params.num_keys();
        let key_counts = ctx.create_buffer("proximity.key_counts", nkeys, usage)?;
        let key_ends = ctx.create_buffer("proximity.key_ends", nkeys, usage)?;
        let key_scan = Scan::new(ctx, nkeys)?;
        let recs = ctx.create_buffer("proximity.entry_records", entry_cap, usage)?;
        let pairs_vt = ctx.create_buffer("proximity.pairs_vt", vt_cap.max(1), usage)?;
        let pairs_ee = ctx.create_buffer("proximity.pairs_ee", ee_cap.max(1), usage)?;
        let cand_vt = ctx.create_buffer("proximity.cand_vt", cvt_cap, usage)?;
        let cand_ee = ctx.create_buffer("proximity.cand_ee", cee_cap, usage)?;
        let bufs = SearchBuffers {
            params,
            keys,
            vals,
            key_counts,
            key_ends,
            key_scan,
            recs,
            pairs_vt,
            pairs_ee,
            cand_vt,
            cand_ee,
        };
        let mut g = Graph::new("proximity.search");
        self.record_into(&mut g, &bufs);
        let graph = g.compile(ctx, self.compile)?;
        Ok(Workspace { bufs, graph })
    }

    /// Records the search into `g` (the buffers of the current workspace): for graphs that
    /// queue a search behind other work with no host round trip. Whoever runs such a graph
    /// checks the search with [`ProximitySearch::check_recorded`] after it completed.
    pub(crate) fn record_search(&self, g: &mut Graph) {
        self.record_into(g, &self.ws.bufs);
    }

    /// Records fills of the search's own indirect arguments (the edge–edge queries' and the
    /// exact filters') with zero workgroups: before a search recorded in a gated section
    /// ([`crate::vk::GatedGraph`]), whose closed gate keeps the kernels that write them from
    /// running, so its indirect dispatches (which keep their own arguments) launch nothing.
    pub(crate) fn record_clear_indirect_args(&self, g: &mut Graph) {
        g.fill("proximity.clear_query_args", &self.query_args, 0);
        g.fill("proximity.clear_narrow_args", &self.narrow_args, 0);
    }

    /// Records the search nodes over the buffers `b`: the clears and the counting sort of the
    /// cell entries by key, then the queries.
    fn record_into(&self, g: &mut Graph, b: &SearchBuffers) {
        let SearchBuffers {
            params,
            keys,
            vals,
            key_counts,
            key_ends,
            key_scan,
            recs,
            ..
        } = b;
        let params = *params;
        let nkeys = params.num_keys();
        g.fill("proximity.clear_count_vt", &self.count_vt, 0);
        g.fill("proximity.clear_count_ee", &self.count_ee, 0);
        g.fill("proximity.clear_candidates_vt", &self.ccount_vt, 0);
        g.fill("proximity.clear_candidates_ee", &self.ccount_ee, 0);
        g.fill("proximity.clear_saturated", &self.saturated, 0);
        g.fill("proximity.clear_keys", keys, params.sentinel());
        g.fill("proximity.clear_key_counts", key_counts, 0);
        // Counting sort of the entries by key: per-key counts (cell_counts), their inclusive
        // scan, then every entry written at a slot of its key's run (place_entries); one
        // dispatch per primitive type for each.
        for (ty, name, n) in self.primitive_types("proximity.cell_counts") {
            g.dispatch(
                self.per_primitive(name, ids::PROXIMITY_CELL_COUNTS, ty, n)
                    .write(&self.counts)
                    .write(&self.saturated)
                    .read_write(key_counts)
                    .push(&params),
            );
        }
        key_scan.record(g, key_counts, key_ends, nkeys, ScanKind::Inclusive);
        for (ty, name, n) in self.primitive_types("proximity.place") {
            g.dispatch(
                self.per_primitive(name, ids::PROXIMITY_PLACE_ENTRIES, ty, n)
                    .read(key_ends)
                    .read_write(key_counts)
                    .write(keys)
                    .write(vals)
                    .write(recs)
                    .push(&params),
            );
        }
        self.record_queries(g, b);
    }

    /// Records the queries over the sorted entries (vertex–triangle, edge–edge with the domain
    /// test choosing its variant), the exact distance filters and the status.
    fn record_queries(&self, g: &mut Graph, b: &SearchBuffers) {
        let SearchBuffers {
            params,
            keys,
            vals,
            key_ends,
            recs,
            pairs_vt,
            pairs_ee,
            cand_vt,
            cand_ee,
            ..
        } = b;
        let params = *params;
        // Body filter compiled into the queries only when it rejects some pairs.
        let filter = (params.flags != 3) as u32;
        if self.mesh.num_vertices > 0 && !self.mesh.triangles.is_empty() {
            g.dispatch(
                Dispatch::new(
                    "proximity.query_vt",
                    ids::PROXIMITY_QUERY_VT,
                    groups_2d(self.mesh.num_vertices),
                )
                .workgroup_size(WG)
                .spec(&[EE_TILE, filter])
                .read(&self.x)
                .read(&self.body)
                .read(&self.tris)
                .read(recs)
                .read(key_ends)
                .read(&self.order)
                .read_write(&self.ccount_vt)
                .write(cand_vt)
                .push(&params),
            );
        }
        if !self.mesh.edges.is_empty() {
            // The domain decides which query_ee variant runs (the other gets zero groups).
            g.dispatch(
                Dispatch::new(
                    "proximity.domain",
                    ids::PROXIMITY_DOMAIN,
                    groups_2d(self.mesh.num_vertices),
                )
                .workgroup_size(WG)
                .read(&self.x)
                .read_write(&self.saturated)
                .push(&params),
            );
            g.dispatch(
                Dispatch::new("proximity.query_args", ids::PROXIMITY_QUERY_ARGS, [1, 1, 1])
                    .workgroup_size(WG)
                    .spec(&[WG])
                    .read(&self.saturated)
                    .read(key_ends)
                    .write(&self.query_args)
                    .push(&params),
            );
            for (one_frame, name) in [
                (1u32, "proximity.query_ee_one_frame"),
                (0, "proximity.query_ee"),
            ] {
                let first = 3 * (1 - one_frame) as usize;
                g.dispatch(
                    Dispatch::indirect(
                        name,
                        ids::PROXIMITY_QUERY_EE,
                        self.query_args.slice(first..first + 3),
                    )
                    .workgroup_size(WG)
                    .spec(&[EE_TILE, one_frame, filter])
                    .read(&self.body)
                    .read(keys)
                    .read(&self.x)
                    .read(recs)
                    .read(key_ends)
                    .read_write(&self.ccount_ee)
                    .write(cand_ee)
                    .read(&self.query_args)
                    .push(&params),
                );
            }
        }
        g.dispatch(
            Dispatch::new(
                "proximity.candidate_args",
                ids::PROXIMITY_CANDIDATE_ARGS,
                [1, 1, 1],
            )
            .workgroup_size(WG)
            .spec(&[WG])
            .read(&self.ccount_vt)
            .read(&self.ccount_ee)
            .write(&self.narrow_args)
            .push(&params),
        );
        for (mode, name, cc, cand, count, pairs) in [
            (
                0u32,
                "proximity.narrow_vt",
                &self.ccount_vt,
                cand_vt,
                &self.count_vt,
                pairs_vt,
            ),
            (
                1,
                "proximity.narrow_ee",
                &self.ccount_ee,
                cand_ee,
                &self.count_ee,
                pairs_ee,
            ),
        ] {
            let first = 3 * mode as usize;
            g.dispatch(
                Dispatch::indirect(
                    name,
                    ids::PROXIMITY_NARROW,
                    self.narrow_args.slice(first..first + 3),
                )
                .workgroup_size(WG)
                .spec(&[mode])
                .read(&self.x)
                .read(&self.tris)
                .read(&self.edges)
                .read(cc)
                .read(cand)
                .read_write(count)
                .write(pairs)
                .read(vals)
                .push(&params),
            );
        }
        g.dispatch(
            Dispatch::new("proximity.finish", ids::PROXIMITY_FINISH, [1, 1, 1])
                .workgroup_size(WG)
                .spec(&[WG])
                .read(key_ends)
                .read(&self.count_vt)
                .read(&self.count_ee)
                .read(&self.ccount_vt)
                .read(&self.ccount_ee)
                .read(&self.saturated)
                .write(&self.status)
                .write(&self.args)
                .push(&params),
        );
    }

    /// `(type, node name, primitives)` of the triangles (type 0) and edges (type 1) present.
    fn primitive_types(&self, prefix: &str) -> Vec<(u32, String, usize)> {
        [
            (0, "triangles", self.mesh.triangles.len()),
            (1, "edges", self.mesh.edges.len()),
        ]
        .into_iter()
        .filter(|&(_, _, n)| n > 0)
        .map(|(ty, what, n)| (ty, format!("{prefix}_{what}"), n))
        .collect()
    }

    /// A dispatch over the `n` primitives of type `ty` (specialization constant 1) reading
    /// positions, triangles and edges (bindings 0–2).
    fn per_primitive(&self, name: String, kernel: KernelId, ty: u32, n: usize) -> Dispatch {
        Dispatch::new(name, kernel, groups_2d(n))
            .workgroup_size(WG)
            .spec(&[ty])
            .read(&self.x)
            .read(&self.tris)
            .read(&self.edges)
    }

    /// Uploads new positions (m, f64 → f32); the next [`ProximitySearch::run`] searches them.
    pub fn set_positions(&self, x: &[[f64; 3]]) -> Result<(), String> {
        if x.len() != self.mesh.num_vertices {
            return Err(format!(
                "{} positions for {} vertices",
                x.len(),
                self.mesh.num_vertices
            ));
        }
        self.x
            .write(&pad1(to_gpu_positions(x)))
            .map_err(|e| e.to_string())
    }

    /// Positions buffer (`vec4` per vertex, w unused) the search reads; writers may update it
    /// in their own graphs before [`ProximitySearch::run`].
    pub fn positions(&self) -> &GpuBuffer<[f32; 4]> {
        &self.x
    }

    /// Runs one search; on overflow grows the buffers, recompiles and redoes it (up to a few
    /// times), so the pair lists are complete when this returns `Ok`.
    pub fn run(&mut self) -> Result<SearchReport, String> {
        let mut redone = 0;
        loop {
            self.ws.graph.run().map_err(|e| e.to_string())?;
            if let Some(r) = self.check_completed(&mut redone)? {
                return Ok(r);
            }
        }
    }

    /// Submits one search without waiting for it: a later wait (for work submitted after it,
    /// e.g. a graph that reads the pair lists) covers it, then [`ProximitySearch::finish_submitted`]
    /// checks it. Graphs that read the pair lists may be queued behind it before the check.
    pub fn submit(&self) -> Result<crate::vk::Ticket, String> {
        self.ws.graph.submit().map_err(|e| e.to_string())
    }

    /// After a wait covered the search submitted as `ticket` ([`ProximitySearch::submit`]):
    /// `Some` report when the pair lists
    /// are complete; `None` when the search overflowed, the workspace was grown (its
    /// [`ProximitySearch::generation`] changed) and [`ProximitySearch::run`] must search again.
    pub fn finish_submitted(
        &mut self,
        ticket: crate::vk::Ticket,
    ) -> Result<Option<SearchReport>, String> {
        // Covered by the later wait: this returns at once and counts no host wait.
        self.ws.graph.wait(ticket).map_err(|e| e.to_string())?;
        self.check_completed(&mut 0)
    }

    /// After a graph that recorded the search ([`ProximitySearch::record_search`]) completed:
    /// like [`ProximitySearch::finish_submitted`] (`None`: it overflowed and the workspace
    /// grew, so the recording graphs must be recorded again).
    pub(crate) fn check_recorded(&mut self) -> Result<Option<SearchReport>, String> {
        self.check_completed(&mut 0)
    }

    /// Reads the status of a completed search: the report when it fits, otherwise grows the
    /// workspace (counting `redone`) and returns `None`.
    fn check_completed(&mut self, redone: &mut u32) -> Result<Option<SearchReport>, String> {
        let e = |e: crate::VkError| e.to_string();
        let st = self.status.read().map_err(e)?;
        let p = &self.ws.bufs.params;
        let (entries, vt, ee, cvt, cee) = (st[0], st[1], st[2], st[3], st[4]);
        // A saturated primitive count (status[5]) also invalidates the table.
        let entry_over = entries > p.entry_cap || st[5] != 0;
        let cand_over = cvt > p.cvt_cap || cee > p.cee_cap;
        if !entry_over && !cand_over && vt <= p.vt_cap && ee <= p.ee_cap {
            return Ok(Some(SearchReport {
                entries,
                vertex_triangle: vt,
                edge_edge: ee,
                candidates_vertex_triangle: cvt,
                candidates_edge_edge: cee,
                redone: *redone,
                one_frame: st[6] != 0,
            }));
        }
        if *redone >= MAX_REDO {
            return Err(format!(
                "proximity search still overflows after {redone} regrowths \
                 (entries {entries}/{}, vt {vt}/{}, ee {ee}/{}, candidates {cvt}/{} {cee}/{})",
                p.entry_cap, p.vt_cap, p.ee_cap, p.cvt_cap, p.cee_cap
            ));
        }
        *redone += 1;
        let grow = |n: u32, cap: u32| {
            if n > cap {
                (n as usize) + (n as usize) / 4 + 64
            } else {
                cap as usize
            }
        };
        let entry_cap = if entry_over {
            match self.exact_entry_count()? {
                Some(n) => (n + n / 4 + 64).min(u32::MAX as u64 / 2) as usize,
                None => {
                    // A primitive spans too many cells (stretched far beyond the edge
                    // lengths the cell size was chosen for): 4x larger cells.
                    if !(self.base.inv_h > 0.0 && self.base.inv_h.is_finite()) {
                        return Err("non-finite cell size".into());
                    }
                    self.base.inv_h *= 0.25;
                    p.entry_cap as usize
                }
            }
        } else {
            p.entry_cap as usize
        };
        // Pairs are only counted among the stored candidates: when the candidates
        // overflowed, the pair counts are lower bounds, grown again on the redo if needed.
        let caps = [
            entry_cap,
            grow(vt, p.vt_cap),
            grow(ee, p.ee_cap),
            grow(cvt, p.cvt_cap),
            grow(cee, p.cee_cap),
        ];
        // Drop the old workspace before allocating the new one.
        self.ws = Workspace::placeholder(&self.ctx).map_err(e)?;
        self.ws = self.workspace(caps).map_err(e)?;
        self.generation += 1;
        Ok(None)
    }

    /// Changes whenever a search reallocates the workspace (pair lists, candidates, cells):
    /// graphs that bind [`ProximitySearch::pairs_vt`] or the other workspace buffers must be
    /// recorded again.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Sum of the per-primitive cell counts of the last run, in u64; `None` when a primitive
    /// saturated its count (it spans too many cells: the cell size must grow).
    fn exact_entry_count(&self) -> Result<Option<u64>, String> {
        let c = self.counts.read().map_err(|e| e.to_string())?;
        let np = (self.mesh.triangles.len() + self.mesh.edges.len()).max(1) as u32;
        let sat = reference::count_saturation(np);
        if c.iter().any(|&v| v >= sat) {
            return Ok(None);
        }
        Ok(Some(c.iter().map(|&v| v as u64).sum()))
    }

    /// Parameters of the compiled search (capacities, cell size, table size).
    pub fn params(&self) -> HashParams {
        self.ws.bufs.params
    }

    /// The topology being searched.
    pub fn mesh(&self) -> &ProximityMesh {
        &self.mesh
    }

    /// GPU timings of the last run (needs timestamps in the compile options; `None` otherwise).
    pub fn profile(&self) -> Result<Option<GraphProfile>, String> {
        self.ws.graph.profile().map_err(|e| e.to_string())
    }

    /// Triangles `[a, b, c, 0]` as uploaded (the `b` of vertex–triangle pairs indexes them).
    pub fn triangles(&self) -> &GpuBuffer<[u32; 4]> {
        &self.tris
    }

    /// Edges `[a, b]` (`a < b`) as uploaded (edge–edge pairs index them).
    pub fn edges(&self) -> &GpuBuffer<[u32; 2]> {
        &self.edges
    }

    /// Vertex–triangle pair records `[v, t, kind, sq_dist bits]`; the first `status[1]` are valid.
    pub fn pairs_vt(&self) -> &GpuBuffer<[u32; 4]> {
        &self.ws.bufs.pairs_vt
    }

    /// Edge–edge pair records `[a, b, kind, sq_dist bits]`; the first `status[2]` are valid.
    pub fn pairs_ee(&self) -> &GpuBuffer<[u32; 4]> {
        &self.ws.bufs.pairs_ee
    }

    /// Device-side status `{entries, vertex–triangle pairs, edge–edge pairs, vertex–triangle
    /// candidates, edge–edge candidates, saturated flag, one-frame flag
    /// ([`SearchReport::one_frame`]), 0}` (true counts).
    pub fn status(&self) -> &GpuBuffer<u32> {
        &self.status
    }

    /// Indirect-dispatch arguments of the two `query_ee` variants over the edge entries
    /// `{one-frame grid, several-cells grid, first edge entry, edge entries}`; the variant that
    /// does not apply has zero groups (`query_args.comp`).
    pub fn query_args(&self) -> &GpuBuffer<u32> {
        &self.query_args
    }

    /// Indirect-dispatch arguments `{ceil(n_vt / 64), 1, 1, ceil(n_ee / 64), 1, 1}`.
    pub fn indirect_args(&self) -> &GpuBuffer<u32> {
        &self.args
    }

    /// Per-primitive cell counts of the last run (triangles then edges).
    pub fn cell_counts(&self) -> &GpuBuffer<u32> {
        &self.counts
    }

    /// Entry keys of the last run, grouped by key; written for edge entries only (triangle
    /// entries and slots past the entries keep the sentinel).
    pub fn entry_keys(&self) -> &GpuBuffer<u32> {
        &self.ws.bufs.keys
    }

    /// Entry values (edge index) of the edge entries of the last run, grouped by key (order
    /// within a key is that of `fill_cells.comp`'s atomics); triangle entries carry their index
    /// in [`ProximitySearch::entry_records`].
    pub fn entry_values(&self) -> &GpuBuffer<u32> {
        &self.ws.bufs.vals
    }

    /// End of each key's run of entries (keys: triangle buckets, then edge buckets); key `b`
    /// holds entries `[ends[b - 1], ends[b])` (`[0, ends[0])` for key 0).
    pub fn key_ends(&self) -> &GpuBuffer<u32> {
        &self.ws.bufs.key_ends
    }

    /// Per-key counters after the last run: `cell_counts.comp` counts the entries of each key
    /// and `place_entries.comp` counts them back down while taking their slots, so every one
    /// ends at 0 (a test of the two passes' agreement).
    pub fn key_counts(&self) -> &GpuBuffer<u32> {
        &self.ws.bufs.key_counts
    }

    /// Vertex–triangle candidates `(v, triangle entry)` of the last run (the entry's triangle
    /// is [`ProximitySearch::entry_values`] at that index); the first `status[3]` are valid.
    pub fn candidates_vt(&self) -> &GpuBuffer<[u32; 2]> {
        &self.ws.bufs.cand_vt
    }

    /// Edge–edge candidates as entry pairs `(a, b)`, `a < b` (edges: [`ProximitySearch::entry_values`]
    /// at those indices) of the last run; the first `status[4]` are valid.
    pub fn candidates_ee(&self) -> &GpuBuffer<[u32; 2]> {
        &self.ws.bufs.cand_ee
    }

    /// Indirect arguments of the exact distance filter (2D grids, vertex–triangle then edge–edge).
    pub fn narrow_args(&self) -> &GpuBuffer<u32> {
        &self.narrow_args
    }

    /// Packed entry records of the last run in key order: cell-local quantized box corners
    /// `[lo, hi]`, then `[triangle, 0]` or `[v0, v1]` for an edge (see
    /// [`crate::cpu_reference::proximity::entry_records`]).
    pub fn entry_records(&self) -> &GpuBuffer<[u32; 4]> {
        &self.ws.bufs.recs
    }

    /// Reads back the pairs of the last [`ProximitySearch::run`].
    pub fn read_pairs(&self) -> Result<ProximityPairs, String> {
        let e = |e: crate::VkError| e.to_string();
        let st = self.status.read().map_err(e)?;
        let p = &self.ws.bufs.params;
        let vt = self.ws.bufs.pairs_vt.read().map_err(e)?;
        let ee = self.ws.bufs.pairs_ee.read().map_err(e)?;
        Ok(ProximityPairs {
            vertex_triangle: vt[..(st[1].min(p.vt_cap) as usize)]
                .iter()
                .map(|r| Pair::from_gpu(*r))
                .collect(),
            edge_edge: ee[..(st[2].min(p.ee_cap) as usize)]
                .iter()
                .map(|r| Pair::from_gpu(*r))
                .collect(),
        })
    }
}

impl Workspace {
    /// A minimal workspace (used while the real one is rebuilt).
    fn placeholder(ctx: &Context) -> VkResult<Workspace> {
        let usage = BufferUsage::STORAGE;
        let g = Graph::new("proximity.empty");
        let bufs = SearchBuffers {
            params: HashParams::zeroed_default(),
            keys: ctx.create_buffer("proximity.keys", 1, usage)?,
            vals: ctx.create_buffer("proximity.vals", 1, usage)?,
            key_counts: ctx.create_buffer("proximity.key_counts", 1, usage)?,
            key_ends: ctx.create_buffer("proximity.key_ends", 1, usage)?,
            key_scan: Scan::new(ctx, 1)?,
            recs: ctx.create_buffer("proximity.entry_records", 1, usage)?,
            pairs_vt: ctx.create_buffer("proximity.pairs_vt", 1, usage)?,
            pairs_ee: ctx.create_buffer("proximity.pairs_ee", 1, usage)?,
            cand_vt: ctx.create_buffer("proximity.cand_vt", 1, usage)?,
            cand_ee: ctx.create_buffer("proximity.cand_ee", 1, usage)?,
        };
        Ok(Workspace {
            bufs,
            graph: g.compile(ctx, CompileOptions::default())?,
        })
    }
}

impl HashParams {
    fn zeroed_default() -> Self {
        bytemuck::Zeroable::zeroed()
    }
}

/// Pads an empty array with one default element (zero-length buffers are not allowed).
pub(crate) fn pad1<T: Default + Clone>(mut v: Vec<T>) -> Vec<T> {
    if v.is_empty() {
        v.push(T::default());
    }
    v
}
