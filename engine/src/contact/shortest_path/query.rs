//! GPU shortest path to boundary (`kernels/recovery/shortest_path.comp`) and vertex-in-tet
//! detection (`kernels/recovery/vertex_in_tet.comp`) for one tet mesh (bodies may be several
//! disconnected pieces of it). Reference: [`crate::cpu_reference::shortest_path`].

use super::types::{Answer, Counters, Params, Query, TetBoundary, INVALID};
use crate::bvh::{BvhError, Lbvh, MortonBits, PrimitiveKind};
use crate::vk::{ids, BufferUsage, Context, Dispatch, GpuBuffer, Graph, VkError};
use supple_mesh::TetMesh;

/// Why a shortest-path structure could not be built or read.
#[derive(Debug, thiserror::Error)]
pub enum ShortestPathError {
    /// A Vulkan failure.
    #[error(transparent)]
    Vk(#[from] VkError),
    /// A BVH failure.
    #[error(transparent)]
    Bvh(#[from] BvhError),
    /// Invalid input.
    #[error("shortest path: {0}")]
    Invalid(String),
    /// A traversal ran out of its fixed stack or visited list: some answers may be wrong.
    #[error("shortest path: {0} traversals overflowed their stack or visited list")]
    Overflow(u32),
}

/// Parameters of the queries (see [`Params`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuerySettings {
    /// Face extension ε_i of the crossing test (barycentric, dimensionless).
    pub eps_i: f32,
    /// Infeasible-region culling tolerance ε_r (cosine).
    pub eps_r: f32,
    /// Infeasible-region culling on.
    pub cull: bool,
    /// Zero-length threshold (m).
    pub min_dist: f32,
    /// Vertex-in-tet detection counts a vertex as inside when its smallest barycentric
    /// coordinate exceeds this margin (dimensionless).
    pub dcd_margin: f32,
}

impl Default for QuerySettings {
    fn default() -> Self {
        use super::types as r;
        QuerySettings {
            eps_i: r::DEFAULT_EPS_I,
            eps_r: r::DEFAULT_EPS_R,
            cull: true,
            min_dist: r::DEFAULT_MIN_DIST,
            dcd_margin: 1e-4,
        }
    }
}

impl QuerySettings {
    /// The traversal parameters.
    pub fn params(&self) -> Params {
        Params {
            eps_i: self.eps_i,
            eps_r: self.eps_r,
            cull: self.cull,
            min_dist: self.min_dist,
        }
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PushQuery {
    n_faces: u32,
    nq: u32,
    eps_i: f32,
    eps_r: f32,
    cull: u32,
    min_dist: f32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PushDcd {
    n_tets: u32,
    n: u32,
    margin: f32,
    first: u32,
}

/// Which discrete detection kernel.
#[derive(Clone, Copy)]
enum DcdKind {
    Vertices,
    Edges,
}

/// Persistent buffers of the shortest-path queries of one tet mesh: topology, a boundary-face
/// LBVH and a tet LBVH, a query list of fixed capacity and its answers.
pub struct ShortestPathQuery {
    boundary: TetBoundary,
    settings: QuerySettings,
    capacity: usize,
    workgroup: u32,
    tets: GpuBuffer<[u32; 4]>,
    adjacency: GpuBuffer<[u32; 4]>,
    faces: GpuBuffer<[u32; 4]>,
    face_across: GpuBuffer<[u32; 4]>,
    nb_offsets: GpuBuffer<u32>,
    nbs: GpuBuffer<u32>,
    vf_offsets: GpuBuffer<u32>,
    vfs: GpuBuffer<u32>,
    ring_offsets: GpuBuffer<u32>,
    ring: GpuBuffer<u32>,
    face_bvh: Lbvh,
    tet_bvh: Lbvh,
    q_point: GpuBuffer<[f32; 4]>,
    q_meta: GpuBuffer<[u32; 2]>,
    out_point: GpuBuffer<[f32; 4]>,
    out_normal: GpuBuffer<[f32; 4]>,
    out_face: GpuBuffer<[u32; 2]>,
    counters: GpuBuffer<u32>,
}

fn nonempty(mut v: Vec<u32>) -> Vec<u32> {
    if v.is_empty() {
        v.push(0);
    }
    v
}

impl ShortestPathQuery {
    /// Builds the topology of `mesh` (its positions only give the vertex count) and allocates
    /// room for `capacity` queries.
    pub fn new(
        ctx: &Context,
        mesh: &TetMesh,
        capacity: usize,
        settings: QuerySettings,
    ) -> Result<ShortestPathQuery, ShortestPathError> {
        Self::from_boundary(ctx, Self::topology(mesh)?, capacity, settings)
    }

    /// Checks the tet indices of `mesh` and builds its boundary topology (host side).
    pub fn topology(mesh: &TetMesh) -> Result<TetBoundary, ShortestPathError> {
        let n = mesh.positions.len();
        if let Some((t, _)) = mesh
            .tets
            .iter()
            .enumerate()
            .find(|(_, t)| t.iter().any(|&v| v as usize >= n))
        {
            return Err(ShortestPathError::Invalid(format!(
                "tet {t} refers to a vertex beyond the {n} vertices"
            )));
        }
        Ok(TetBoundary::new(mesh))
    }

    /// Uploads an already built topology (see [`ShortestPathQuery::topology`]) and allocates room
    /// for `capacity` queries.
    pub fn from_boundary(
        ctx: &Context,
        b: TetBoundary,
        capacity: usize,
        settings: QuerySettings,
    ) -> Result<ShortestPathQuery, ShortestPathError> {
        for (name, v) in [
            ("eps_i", settings.eps_i),
            ("eps_r", settings.eps_r),
            ("min_dist", settings.min_dist),
            ("dcd_margin", settings.dcd_margin),
        ] {
            if !v.is_finite() || v < 0.0 {
                return Err(ShortestPathError::Invalid(format!(
                    "{name} = {v} must be finite and >= 0"
                )));
            }
        }
        let s = BufferUsage::STORAGE;
        let faces: Vec<[u32; 4]> = b
            .faces
            .iter()
            .zip(&b.face_tet)
            .map(|(f, &t)| [f[0], f[1], f[2], t])
            .collect();
        let across: Vec<[u32; 4]> = b
            .face_across
            .iter()
            .map(|a| [a[0], a[1], a[2], INVALID])
            .collect();
        let pad4 = |v: Vec<[u32; 4]>| {
            if v.is_empty() {
                vec![[INVALID; 4]]
            } else {
                v
            }
        };
        let face_bvh = Lbvh::new(
            ctx,
            PrimitiveKind::Triangles,
            &b.face_indices(),
            MortonBits::B30,
        )?;
        let tet_bvh = Lbvh::new(
            ctx,
            PrimitiveKind::Tetrahedra,
            &b.tet_indices(),
            MortonBits::B30,
        )?;
        let cap = capacity.max(1);
        Ok(ShortestPathQuery {
            settings,
            capacity,
            // CPU devices (lavapipe): one SIMD row per workgroup, so llvmpipe's loop limiter
            // budget is not shared between rows.
            workgroup: if ctx.caps().device_type == "cpu" {
                ctx.caps().subgroup_size.max(1)
            } else {
                ctx.caps().subgroup_size.max(32)
            },
            tets: ctx.upload_buffer("sp.tets", &pad4(b.tets.clone()), s)?,
            adjacency: ctx.upload_buffer("sp.adjacency", &pad4(b.adjacency.clone()), s)?,
            faces: ctx.upload_buffer("sp.faces", &pad4(faces), s)?,
            face_across: ctx.upload_buffer("sp.face_across", &pad4(across), s)?,
            nb_offsets: ctx.upload_buffer("sp.nb_offsets", &b.neighbor_offsets, s)?,
            nbs: ctx.upload_buffer("sp.nbs", &nonempty(b.neighbors.clone()), s)?,
            vf_offsets: ctx.upload_buffer("sp.vf_offsets", &b.vertex_face_offsets, s)?,
            vfs: ctx.upload_buffer("sp.vfs", &nonempty(b.vertex_faces.clone()), s)?,
            ring_offsets: ctx.upload_buffer("sp.ring_offsets", &b.ring_offsets, s)?,
            ring: ctx.upload_buffer("sp.ring", &nonempty(b.ring.clone()), s)?,
            face_bvh,
            tet_bvh,
            q_point: ctx.create_buffer("sp.q_point", cap, s)?,
            q_meta: ctx.create_buffer("sp.q_meta", cap, s)?,
            out_point: ctx.create_buffer("sp.out_point", cap, s)?,
            out_normal: ctx.create_buffer("sp.out_normal", cap, s)?,
            out_face: ctx.create_buffer("sp.out_face", cap, s)?,
            // Host-visible: read after every detection without a staging copy.
            counters: ctx.create_buffer(
                "sp.counters",
                Counters::WORDS,
                s | BufferUsage::HOST_READ,
            )?,
            boundary: b,
        })
    }

    /// Boundary faces on the GPU (`[v0, v1, v2, tet]`).
    pub fn faces(&self) -> &GpuBuffer<[u32; 4]> {
        &self.faces
    }

    /// The host copy of the topology (for CPU checks and the reference).
    pub fn boundary(&self) -> &TetBoundary {
        &self.boundary
    }

    /// The query parameters.
    pub fn settings(&self) -> &QuerySettings {
        &self.settings
    }

    /// Queries the buffers hold at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The boundary-face tree (read it back to run the reference on the same tree).
    pub fn face_bvh(&self) -> &Lbvh {
        &self.face_bvh
    }

    /// The tet tree.
    pub fn tet_bvh(&self) -> &Lbvh {
        &self.tet_bvh
    }

    /// Query points (xyz; m). Fill them and [`ShortestPathQuery::query_meta`] for explicit queries.
    pub fn query_points(&self) -> &GpuBuffer<[f32; 4]> {
        &self.q_point
    }

    /// Query tet and own vertex (`[tet, vertex]`, [`INVALID`] for none).
    pub fn query_meta(&self) -> &GpuBuffer<[u32; 2]> {
        &self.q_meta
    }

    /// Answers: closest boundary point (xyz) and squared path length (w).
    pub fn answer_points(&self) -> &GpuBuffer<[f32; 4]> {
        &self.out_point
    }

    /// Answers: outward unit normal at the closest boundary point (xyz).
    pub fn answer_normals(&self) -> &GpuBuffer<[f32; 4]> {
        &self.out_normal
    }

    /// Answers: `[face, closest-feature kind]` ([`INVALID`] face: no valid path).
    pub fn answer_faces(&self) -> &GpuBuffer<[u32; 2]> {
        &self.out_face
    }

    fn grid(&self, count: usize) -> [u32; 3] {
        let groups = count.div_ceil(self.workgroup as usize).max(1) as u32;
        [groups.min(65_535), groups.div_ceil(65_535), 1]
    }

    /// Records full rebuilds of both trees from `positions`.
    pub fn record_build(&self, g: &mut Graph, positions: &GpuBuffer<[f32; 4]>) {
        self.face_bvh.record_build(g, positions);
        self.tet_bvh.record_build(g, positions);
    }

    /// Records refits of both trees (topology kept from the last build).
    pub fn record_refit(&self, g: &mut Graph, positions: &GpuBuffer<[f32; 4]>) {
        self.face_bvh.record_refit(g, positions);
        self.tet_bvh.record_refit(g, positions);
    }

    /// Records vertex-in-tet detection for the first `n` entries of `vertices`: query slot `i`
    /// becomes `(x_v, tet or INVALID, v)` for `v = vertices[i]`.
    pub fn record_vertex_dcd(
        &self,
        g: &mut Graph,
        positions: &GpuBuffer<[f32; 4]>,
        vertices: &GpuBuffer<u32>,
        n: usize,
    ) {
        self.record_dcd(g, DcdKind::Vertices, positions, vertices, n, 0);
    }

    /// Records edge-through-tet detection for the first `n` entries of `edges`: query slot
    /// `first + i` becomes `(centre of the edge's part inside the tet, tet or INVALID, INVALID)`.
    pub fn record_edge_dcd(
        &self,
        g: &mut Graph,
        positions: &GpuBuffer<[f32; 4]>,
        edges: &GpuBuffer<[u32; 2]>,
        n: usize,
        first: usize,
    ) {
        self.record_dcd(g, DcdKind::Edges, positions, edges, n, first);
    }

    fn record_dcd<L: bytemuck::Pod>(
        &self,
        g: &mut Graph,
        kind: DcdKind,
        positions: &GpuBuffer<[f32; 4]>,
        list: &GpuBuffer<L>,
        n: usize,
        first: usize,
    ) {
        let (name, kernel) = match kind {
            DcdKind::Vertices => ("recovery.vertex_in_tet", ids::RECOVERY_VERTEX_IN_TET),
            DcdKind::Edges => ("recovery.edge_in_tet", ids::RECOVERY_EDGE_IN_TET),
        };
        assert!(
            first + n <= self.capacity && n <= list.len(),
            "{name}: slots {first}..{} exceed the query capacity {} or the list",
            first + n,
            self.capacity
        );
        if n == 0 {
            return;
        }
        g.dispatch(
            Dispatch::new(name, kernel, self.grid(n))
                .workgroup_size(self.workgroup)
                .read(positions)
                .read(&self.tets)
                .read(self.tet_bvh.leaf_prims())
                .read(self.tet_bvh.node_children())
                .read(self.tet_bvh.node_boxes())
                .read(list)
                .write(&self.q_point)
                .write(&self.q_meta)
                .read(&self.ring_offsets)
                .read(&self.ring)
                .push(&PushDcd {
                    n_tets: self.tet_bvh.len() as u32,
                    n: n as u32,
                    margin: self.settings.dcd_margin,
                    first: first as u32,
                }),
        );
    }

    /// Records the shortest-path queries of the first `nq` query slots (counters cleared first).
    pub fn record_query(&self, g: &mut Graph, positions: &GpuBuffer<[f32; 4]>, nq: usize) {
        assert!(
            nq <= self.capacity,
            "shortest path: {nq} queries exceed the capacity {}",
            self.capacity
        );
        g.fill("recovery.clear_counters", &self.counters, 0);
        if nq == 0 {
            return;
        }
        g.dispatch(
            Dispatch::new(
                "recovery.shortest_path",
                ids::RECOVERY_SHORTEST_PATH,
                self.grid(nq),
            )
            .workgroup_size(self.workgroup)
            .read(positions)
            .read(&self.tets)
            .read(&self.adjacency)
            .read(&self.faces)
            .read(&self.face_across)
            .read(&self.nb_offsets)
            .read(&self.nbs)
            .read(&self.vf_offsets)
            .read(&self.vfs)
            .read(self.face_bvh.leaf_prims())
            .read(self.face_bvh.node_children())
            .read(self.face_bvh.node_boxes())
            .read(&self.q_point)
            .read(&self.q_meta)
            .write(&self.out_point)
            .write(&self.out_normal)
            .write(&self.out_face)
            .read_write(&self.counters)
            .push(&PushQuery {
                n_faces: self.face_bvh.len() as u32,
                nq: nq as u32,
                eps_i: self.settings.eps_i,
                eps_r: self.settings.eps_r,
                cull: self.settings.cull as u32,
                min_dist: self.settings.min_dist,
            }),
        );
    }

    /// Reads the counters of the last recorded query batch.
    pub fn read_counters(&self) -> Result<Counters, ShortestPathError> {
        let mut w = [0u32; Counters::WORDS];
        self.counters.read_into(&mut w)?;
        Ok(Counters::from_words(&w))
    }

    /// Reads the first `nq` answers.
    pub fn read_answers(&self, nq: usize) -> Result<Vec<Answer>, ShortestPathError> {
        let p = self.out_point.read()?;
        let n = self.out_normal.read()?;
        let f = self.out_face.read()?;
        Ok((0..nq.min(self.capacity))
            .map(|i| Answer {
                face: f[i][0],
                point: [p[i][0], p[i][1], p[i][2]],
                sq_dist: p[i][3],
                kind: f[i][1],
                normal: [n[i][0], n[i][1], n[i][2]],
            })
            .collect())
    }

    /// Reads the first `nq` queries (`(point, tet, vertex)`).
    pub fn read_queries(&self, nq: usize) -> Result<Vec<Query>, ShortestPathError> {
        let p = self.q_point.read()?;
        let m = self.q_meta.read()?;
        Ok((0..nq.min(self.capacity))
            .map(|i| Query {
                point: [p[i][0], p[i][1], p[i][2]],
                tet: m[i][0],
                vertex: m[i][1],
            })
            .collect())
    }
}
