//! The LBVH: persistent tree buffers for a fixed primitive set, build/refit recording and the
//! query recorders. Positions are `vec4` per vertex (`w` ignored), in metres, supplied by the
//! caller at record time; the caller keeps them alive as long as the compiled graph.

use super::tree::{Aabb, Topology, Tree, INVALID};
use crate::primitives::{RadixSort, SortKeys};
use crate::vk::{
    ids, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph, KernelId,
    VkError,
};

/// Errors of LBVH construction.
#[derive(Debug, thiserror::Error)]
pub enum BvhError {
    /// A Vulkan error (allocation, readback...).
    #[error(transparent)]
    Vk(#[from] VkError),
    /// Invalid input (index count not a multiple of the arity, too many primitives...).
    #[error("lbvh: {0}")]
    Invalid(String),
}

/// Primitive type of a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrimitiveKind {
    /// Edges (2 vertex indices each).
    Edges,
    /// Triangles (3 vertex indices each).
    Triangles,
    /// Tetrahedra (4 vertex indices each).
    Tetrahedra,
}

impl PrimitiveKind {
    /// Vertices per primitive.
    pub fn arity(self) -> usize {
        match self {
            PrimitiveKind::Edges => 2,
            PrimitiveKind::Triangles => 3,
            PrimitiveKind::Tetrahedra => 4,
        }
    }
}

/// Morton code width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MortonBits {
    /// 30-bit codes (10 bits per axis; 4 radix-sort passes).
    B30,
    /// 63-bit codes (21 bits per axis; 8 radix-sort passes).
    B63,
}

impl MortonBits {
    /// Bits per axis.
    pub fn per_axis(self) -> u32 {
        match self {
            MortonBits::B30 => 10,
            MortonBits::B63 => 21,
        }
    }
}

/// Output of overlap queries: a pair list with an atomic counter.
pub struct PairOutput {
    /// Pairs (self-overlap: `[a, b]` primitives with `a < b`; box queries: `[query, prim]`).
    pub pairs: GpuBuffer<[u32; 2]>,
    /// `[true pair count, stack-overflow flag]`; the count exceeds the capacity on overflow.
    pub counter: GpuBuffer<u32>,
}

impl PairOutput {
    /// Allocates room for `capacity` pairs.
    pub fn new(ctx: &Context, capacity: usize) -> Result<Self, BvhError> {
        Ok(PairOutput {
            pairs: ctx.create_buffer("lbvh.pairs", capacity.max(1), BufferUsage::STORAGE)?,
            counter: ctx.create_buffer("lbvh.pair_counter", 2, BufferUsage::STORAGE)?,
        })
    }

    /// Number of pairs the buffer holds.
    pub fn capacity(&self) -> usize {
        self.pairs.len()
    }

    /// Reads the result: `Ok(pairs)` or `Err(true_count)` when the buffer was too small (grow
    /// to at least that count and record the query again).
    pub fn read(&self) -> Result<Result<Vec<[u32; 2]>, usize>, BvhError> {
        let c = self.counter.read()?;
        if c[1] != 0 {
            return Err(BvhError::Invalid("traversal stack overflow".into()));
        }
        let count = c[0] as usize;
        if count > self.capacity() {
            return Ok(Err(count));
        }
        let mut p = self.pairs.read()?;
        p.truncate(count);
        Ok(Ok(p))
    }
}

/// Output of nearest-primitive queries.
pub struct NearestOutput {
    /// Nearest primitive per query ([`INVALID`] when none within the radius).
    pub prim: GpuBuffer<u32>,
    /// Its squared distance (m²; the squared radius when none).
    pub sq_dist: GpuBuffer<f32>,
}

impl NearestOutput {
    /// Allocates outputs for `capacity` queries.
    pub fn new(ctx: &Context, capacity: usize) -> Result<Self, BvhError> {
        Ok(NearestOutput {
            prim: ctx.create_buffer("lbvh.nearest_prim", capacity.max(1), BufferUsage::STORAGE)?,
            sq_dist: ctx.create_buffer("lbvh.nearest_d2", capacity.max(1), BufferUsage::STORAGE)?,
        })
    }
}

/// Output of point-in-tet queries.
pub struct PointInTetOutput {
    /// Containing tet per query ([`INVALID`] when none).
    pub tet: GpuBuffer<u32>,
    /// Barycentric coordinates of the point in that tet (zero when none).
    pub bary: GpuBuffer<[f32; 4]>,
}

impl PointInTetOutput {
    /// Allocates outputs for `capacity` queries.
    pub fn new(ctx: &Context, capacity: usize) -> Result<Self, BvhError> {
        Ok(PointInTetOutput {
            tet: ctx.create_buffer("lbvh.pit_tet", capacity.max(1), BufferUsage::STORAGE)?,
            bary: ctx.create_buffer("lbvh.pit_bary", capacity.max(1), BufferUsage::STORAGE)?,
        })
    }
}

/// A tree read back from the GPU, in the reference's layout.
pub type TreeReadback = Tree;

/// An LBVH over a fixed set of primitives; positions may change between builds and refits.
pub struct Lbvh {
    kind: PrimitiveKind,
    bits: MortonBits,
    n: usize,
    workgroup: u32,
    fences: bool,
    indices: GpuBuffer<u32>,
    bounds: GpuBuffer<u32>,
    keys: GpuBuffer<[u32; 2]>,
    prims: GpuBuffer<u32>,
    children: GpuBuffer<[u32; 2]>,
    parent: GpuBuffer<u32>,
    ranges: GpuBuffer<[u32; 2]>,
    boxes: GpuBuffer<[f32; 4]>,
    visits: GpuBuffer<u32>,
    no_verts: GpuBuffer<u32>,
    sort: RadixSort,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PushN {
    n: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PushSelf {
    n: u32,
    capacity: u32,
    margin: f32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PushBoxes {
    n: u32,
    nq: u32,
    capacity: u32,
    margin: f32,
    qk: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PushQuery {
    n: u32,
    nq: u32,
    param: f32,
}

/// Largest workgroup count per grid dimension every device supports.
const MAX_GROUPS: u32 = 65_535;

impl Lbvh {
    /// Allocates a tree over the primitives `indices` (`kind.arity()` vertex indices each).
    pub fn new(
        ctx: &Context,
        kind: PrimitiveKind,
        indices: &[u32],
        bits: MortonBits,
    ) -> Result<Lbvh, BvhError> {
        let k = kind.arity();
        if !indices.len().is_multiple_of(k) {
            return Err(BvhError::Invalid(format!(
                "{} indices is not a multiple of {k}",
                indices.len()
            )));
        }
        let n = indices.len() / k;
        if n >= (1usize << 31) {
            return Err(BvhError::Invalid(format!("{n} primitives is too many")));
        }
        let nodes = (2 * n).saturating_sub(1).max(1);
        let idx_data: Vec<u32> = if indices.is_empty() {
            vec![0]
        } else {
            indices.to_vec()
        };
        let s = BufferUsage::STORAGE;
        Ok(Lbvh {
            kind,
            bits,
            n,
            workgroup: ctx.caps().subgroup_size.max(64),
            fences: ctx.caps().device_type != "cpu",
            indices: ctx.upload_buffer("lbvh.indices", &idx_data, s)?,
            bounds: ctx.create_buffer("lbvh.bounds", 6, s)?,
            keys: ctx.create_buffer("lbvh.keys", n.max(1), s)?,
            prims: ctx.create_buffer("lbvh.prims", n.max(1), s)?,
            children: ctx.create_buffer("lbvh.children", n.max(2) - 1, s)?,
            parent: ctx.create_buffer("lbvh.parent", nodes, s)?,
            ranges: ctx.create_buffer("lbvh.ranges", n.max(2) - 1, s)?,
            boxes: ctx.create_buffer("lbvh.boxes", 2 * nodes, s)?,
            visits: ctx.create_buffer("lbvh.visits", n.max(2) - 1, s)?,
            no_verts: ctx.upload_buffer("lbvh.no_verts", &[INVALID], s)?,
            sort: RadixSort::new(ctx, n.max(1), SortKeys::U64)?,
        })
    }

    /// Number of primitives.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether the tree has no primitives.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Primitive type.
    pub fn kind(&self) -> PrimitiveKind {
        self.kind
    }

    /// Chooses the refit's memory ordering for graphs recorded from now on: `true` puts a
    /// buffer memory barrier around every parent update (the default on GPUs), `false` relies on
    /// the CPU's ordering of the atomic visit counter (the default on CPU devices such as
    /// lavapipe, where the fences cost about 10x).
    pub fn set_refit_fences(&mut self, on: bool) {
        self.fences = on;
    }

    /// Node boxes (two `vec4` per node: min, max), for consumers that traverse in their own kernels.
    pub fn node_boxes(&self) -> &GpuBuffer<[f32; 4]> {
        &self.boxes
    }

    /// Primitive of each leaf (Morton order), for consumers that traverse in their own kernels.
    pub fn leaf_prims(&self) -> &GpuBuffer<u32> {
        &self.prims
    }

    /// Children of each internal node, for consumers that traverse in their own kernels.
    pub fn node_children(&self) -> &GpuBuffer<[u32; 2]> {
        &self.children
    }

    fn grid(&self, count: usize) -> [u32; 3] {
        let groups = count.div_ceil(self.workgroup as usize) as u32;
        [groups.min(MAX_GROUPS), groups.div_ceil(MAX_GROUPS), 1]
    }

    fn dispatch(&self, name: &str, kernel: KernelId, count: usize) -> Dispatch {
        Dispatch::new(format!("lbvh.{name}"), kernel, self.grid(count))
            .workgroup_size(self.workgroup)
            .spec(&[
                self.kind.arity() as u32,
                self.bits.per_axis(),
                self.fences as u32,
            ])
    }

    /// Records a full rebuild (Morton codes, sort, Karras tree, refit) from `positions`.
    pub fn record_build(&self, g: &mut Graph, positions: &GpuBuffer<[f32; 4]>) {
        let n = self.n;
        if n == 0 {
            return;
        }
        let push = PushN { n: n as u32 };
        g.fill("lbvh.clear_bounds", &self.bounds, 0);
        g.dispatch(
            self.dispatch("bounds", ids::BVH_BOUNDS, n)
                .read(positions)
                .read(&self.indices)
                .read_write(&self.bounds)
                .push(&push),
        );
        g.dispatch(
            self.dispatch("morton", ids::BVH_MORTON, n)
                .read(positions)
                .read(&self.indices)
                .read(&self.bounds)
                .write(&self.keys)
                .write(&self.prims)
                .push(&push),
        );
        self.sort
            .record(g, &self.keys, &self.prims, n, 3 * self.bits.per_axis());
        g.fill("lbvh.clear_parent", &self.parent, INVALID);
        if n > 1 {
            g.dispatch(
                self.dispatch("karras", ids::BVH_KARRAS, n - 1)
                    .read(&self.keys)
                    .write(&self.children)
                    .write(&self.parent)
                    .write(&self.ranges)
                    .push(&push),
            );
        }
        self.record_refit(g, positions);
    }

    /// Records a refit of every node box from `positions` (topology from the last build).
    pub fn record_refit(&self, g: &mut Graph, positions: &GpuBuffer<[f32; 4]>) {
        let n = self.n;
        if n == 0 {
            return;
        }
        g.fill("lbvh.clear_visits", &self.visits, 0);
        g.dispatch(
            self.dispatch("refit", ids::BVH_REFIT, n)
                .read(positions)
                .read(&self.indices)
                .read(&self.prims)
                .read(&self.parent)
                .read(&self.children)
                .read_write(&self.boxes)
                .read_write(&self.visits)
                .push(&PushN { n: n as u32 }),
        );
    }

    /// Records the self-overlap query: primitive pairs sharing no vertex whose boxes overlap
    /// within `margin` (m, per axis), each unordered pair once, into `out` (counter cleared here).
    pub fn record_self_overlap(&self, g: &mut Graph, margin: f32, out: &PairOutput) {
        g.fill("lbvh.clear_pairs", &out.counter, 0);
        if self.n < 2 {
            return;
        }
        g.dispatch(
            self.dispatch("self_overlap", ids::BVH_SELF_OVERLAP, self.n)
                .read(&self.indices)
                .read(&self.prims)
                .read(&self.children)
                .read(&self.ranges)
                .read(&self.boxes)
                .write(&out.pairs)
                .read_write(&out.counter)
                .push(&PushSelf {
                    n: self.n as u32,
                    capacity: out.capacity() as u32,
                    margin,
                }),
        );
    }

    /// Records the query of `nq` boxes (`query_boxes[2q]` = min, `[2q + 1]` = max) against the
    /// tree: pairs `[q, prim]` whose boxes overlap within `margin` (m), skipping primitives that
    /// share a vertex with `query_verts[qk * q..qk * (q + 1)]` when given as `Some((verts, qk))`.
    pub fn record_box_overlap(
        &self,
        g: &mut Graph,
        query_boxes: &GpuBuffer<[f32; 4]>,
        nq: usize,
        query_verts: Option<(&GpuBuffer<u32>, usize)>,
        margin: f32,
        out: &PairOutput,
    ) {
        assert!(query_boxes.len() >= 2 * nq, "query boxes buffer too small");
        g.fill("lbvh.clear_pairs", &out.counter, 0);
        if self.n == 0 || nq == 0 {
            return;
        }
        let (qv, qk) = match query_verts {
            Some((b, k)) if k > 0 => {
                assert!(b.len() >= k * nq, "query vertex buffer too small");
                (b, k)
            }
            _ => (&self.no_verts, 0),
        };
        g.dispatch(
            self.dispatch("box_overlap", ids::BVH_BOX_OVERLAP, nq)
                .read(&self.indices)
                .read(&self.prims)
                .read(&self.children)
                .read(&self.boxes)
                .read(query_boxes)
                .read(qv)
                .write(&out.pairs)
                .read_write(&out.counter)
                .push(&PushBoxes {
                    n: self.n as u32,
                    nq: nq as u32,
                    capacity: out.capacity() as u32,
                    margin,
                    qk: qk as u32,
                }),
        );
    }

    /// Records the nearest-primitive query (edge or triangle trees) of `nq` points within
    /// `radius` (m), using the exact distances of `distance.glsl`.
    pub fn record_nearest(
        &self,
        g: &mut Graph,
        positions: &GpuBuffer<[f32; 4]>,
        points: &GpuBuffer<[f32; 4]>,
        nq: usize,
        radius: f32,
        out: &NearestOutput,
    ) {
        assert!(
            self.kind != PrimitiveKind::Tetrahedra,
            "nearest queries need an edge or triangle tree"
        );
        assert!(
            points.len() >= nq && out.prim.len() >= nq,
            "nearest buffers too small"
        );
        if nq == 0 {
            return;
        }
        g.dispatch(
            self.dispatch("nearest", ids::BVH_NEAREST, nq)
                .read(positions)
                .read(&self.indices)
                .read(&self.prims)
                .read(&self.children)
                .read(&self.boxes)
                .read(points)
                .write(&out.prim)
                .write(&out.sq_dist)
                .push(&PushQuery {
                    n: self.n as u32,
                    nq: nq as u32,
                    param: radius * radius,
                }),
        );
    }

    /// Records the point-in-tet query (tet trees) of `nq` points: the tet whose box contains
    /// the point and whose smallest barycentric coordinate is largest and `>= -eps`.
    pub fn record_point_in_tet(
        &self,
        g: &mut Graph,
        positions: &GpuBuffer<[f32; 4]>,
        points: &GpuBuffer<[f32; 4]>,
        nq: usize,
        eps: f32,
        out: &PointInTetOutput,
    ) {
        assert!(
            self.kind == PrimitiveKind::Tetrahedra,
            "point-in-tet queries need a tet tree"
        );
        assert!(
            points.len() >= nq && out.tet.len() >= nq,
            "point-in-tet buffers too small"
        );
        if nq == 0 {
            return;
        }
        g.dispatch(
            Dispatch::new("lbvh.point_in_tet", ids::BVH_POINT_IN_TET, self.grid(nq))
                .workgroup_size(self.workgroup)
                .read(positions)
                .read(&self.indices)
                .read(&self.prims)
                .read(&self.children)
                .read(&self.boxes)
                .read(points)
                .write(&out.tet)
                .write(&out.bary)
                .push(&PushQuery {
                    n: self.n as u32,
                    nq: nq as u32,
                    param: eps,
                }),
        );
    }

    /// Median GPU milliseconds of a full build and of a refit from `positions` over `repeats`
    /// runs each, measured with graph timestamps (`ms_lbvh_build`, `ms_lbvh_refit` of the
    /// benchmarks). Leaves the tree built.
    pub fn measure_build_refit_ms(
        &self,
        ctx: &Context,
        positions: &GpuBuffer<[f32; 4]>,
        repeats: usize,
    ) -> Result<(f64, f64), BvhError> {
        let opts = CompileOptions {
            graph_timestamps: true,
            ..Default::default()
        };
        let mut gb = Graph::new("lbvh_build");
        self.record_build(&mut gb, positions);
        let build = gb.compile(ctx, opts)?;
        let mut gr = Graph::new("lbvh_refit");
        self.record_refit(&mut gr, positions);
        let refit = gr.compile(ctx, opts)?;
        let median = |c: &CompiledGraph| -> Result<f64, BvhError> {
            let mut t = Vec::with_capacity(repeats.max(1));
            for _ in 0..repeats.max(1) {
                c.run()?;
                t.push(c.profile()?.map_or(f64::NAN, |p| p.total_ms));
            }
            t.sort_by(f64::total_cmp);
            Ok(t[t.len() / 2])
        };
        let ms_build = median(&build)?;
        let ms_refit = median(&refit)?;
        Ok((ms_build, ms_refit))
    }

    /// Reads the whole tree back (tests and debugging), in the reference's layout.
    pub fn read_tree(&self) -> Result<TreeReadback, BvhError> {
        let n = self.n;
        let internal = n.saturating_sub(1);
        let nodes = (2 * n).saturating_sub(1);
        let keys = self.keys.read()?;
        let boxes = self.boxes.read()?;
        Ok(Tree {
            arity: self.kind.arity(),
            bits_per_axis: self.bits.per_axis(),
            keys: keys[..n]
                .iter()
                .map(|k| k[0] as u64 | ((k[1] as u64) << 32))
                .collect(),
            prims: self.prims.read()?[..n].to_vec(),
            topology: Topology {
                children: self.children.read()?[..internal].to_vec(),
                parent: self.parent.read()?[..nodes].to_vec(),
                ranges: self.ranges.read()?[..internal].to_vec(),
            },
            boxes: (0..nodes)
                .map(|i| Aabb {
                    min: [boxes[2 * i][0], boxes[2 * i][1], boxes[2 * i][2]],
                    max: [
                        boxes[2 * i + 1][0],
                        boxes[2 * i + 1][1],
                        boxes[2 * i + 1][2],
                    ],
                })
                .collect(),
        })
    }

    /// Reads the centroid bounds of the last build (min, max), decoded from the atomic keys.
    pub fn read_centroid_bounds(&self) -> Result<Aabb, BvhError> {
        use super::tree::ordered_to_float;
        let b = self.bounds.read()?;
        Ok(Aabb {
            min: [0, 1, 2].map(|k| ordered_to_float(!b[k])),
            max: [0, 1, 2].map(|k| ordered_to_float(b[3 + k])),
        })
    }
}
