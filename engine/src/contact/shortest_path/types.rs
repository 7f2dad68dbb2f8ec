//! Data of the shortest-path method shared by its kernels, its host code and its plain-Rust
//! twin: the boundary topology of a tet mesh, queries and answers, work counters, traversal
//! limits and defaults, and the collision constraints built from the answers (GPU layouts in
//! `kernels/recovery/*.glsl`).

use crate::vk::{GpuBuffer, VkResult};
use supple_mesh::topology::TET_FACES;
use supple_mesh::TetMesh;

/// "No tet / no face / no vertex".
pub const INVALID: u32 = u32::MAX;
/// Branching-stack entries per traversal (the GPU's private array).
pub const BRANCH_STACK: usize = 32;
/// Visited-tet entries per traversal (the GPU's private array).
pub const VISITED: usize = 128;
/// Default face extension ε_i of the crossing test (barycentric, dimensionless).
pub const DEFAULT_EPS_I: f32 = 1e-4;
/// Default zero-length threshold (m).
pub const DEFAULT_MIN_DIST: f32 = 1e-6;
/// Default culling tolerance ε_r (cosine): a direction counts as leaving `s` above it.
pub const DEFAULT_EPS_R: f32 = 0.01;

/// Boundary topology of a tet mesh for shortest-path queries (built once on the host).
#[derive(Debug, Clone, PartialEq)]
pub struct TetBoundary {
    /// Tets (four vertex indices, positively oriented at rest).
    pub tets: Vec<[u32; 4]>,
    /// Neighbour across the face opposite each local vertex ([`INVALID`] on the boundary).
    pub adjacency: Vec<[u32; 4]>,
    /// Boundary faces (outward for positive tets), vertex indices.
    pub faces: Vec<[u32; 3]>,
    /// Tet of each boundary face.
    pub face_tet: Vec<u32>,
    /// For each face and edge `k` (vertices `k`, `k+1 mod 3`), the other boundary face on that
    /// edge ([`INVALID`] when there is none or more than one).
    pub face_across: Vec<[u32; 3]>,
    /// Boundary-edge neighbours of each vertex (CSR offsets, `n + 1`).
    pub neighbor_offsets: Vec<u32>,
    /// Boundary-edge neighbours of each vertex (CSR values, ascending per vertex).
    pub neighbors: Vec<u32>,
    /// Boundary faces of each vertex (CSR offsets, `n + 1`).
    pub vertex_face_offsets: Vec<u32>,
    /// Boundary faces of each vertex (CSR values, ascending per vertex).
    pub vertex_faces: Vec<u32>,
    /// Tet-edge neighbours of each vertex (CSR offsets, `n + 1`): detection ignores tets that
    /// touch a point's one-ring (a vertex poking into a neighbouring tet is a local inversion
    /// for the elastic model, not a collision).
    pub ring_offsets: Vec<u32>,
    /// Tet-edge neighbours of each vertex (CSR values, ascending per vertex).
    pub ring: Vec<u32>,
}

fn csr(n: usize, pairs: &mut [(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
    pairs.sort_unstable();
    let mut offsets = vec![0u32; n + 1];
    for &(a, _) in pairs.iter() {
        offsets[a as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    (offsets, pairs.iter().map(|p| p.1).collect())
}

impl TetBoundary {
    /// Builds the topology of `mesh` (face adjacency, boundary faces and their neighbourhoods).
    pub fn new(mesh: &TetMesh) -> TetBoundary {
        let n = mesh.positions.len();
        let adjacency = mesh.face_adjacency();
        let mut faces = Vec::new();
        let mut face_tet = Vec::new();
        for (t, tet) in mesh.tets.iter().enumerate() {
            for (f, lf) in TET_FACES.iter().enumerate() {
                if adjacency[t][f] == INVALID {
                    faces.push([tet[lf[0]], tet[lf[1]], tet[lf[2]]]);
                    face_tet.push(t as u32);
                }
            }
        }
        // Edges of boundary faces: (min, max, face, local edge).
        let mut edges: Vec<(u32, u32, u32, u32)> = Vec::with_capacity(faces.len() * 3);
        for (fi, tri) in faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                edges.push((a.min(b), a.max(b), fi as u32, k as u32));
            }
        }
        edges.sort_unstable();
        let mut face_across = vec![[INVALID; 3]; faces.len()];
        let mut nb_pairs = Vec::new();
        let mut i = 0;
        while i < edges.len() {
            let mut j = i + 1;
            while j < edges.len() && edges[j].0 == edges[i].0 && edges[j].1 == edges[i].1 {
                j += 1;
            }
            if j - i == 2 {
                let (x, y) = (edges[i], edges[i + 1]);
                face_across[x.2 as usize][x.3 as usize] = y.2;
                face_across[y.2 as usize][y.3 as usize] = x.2;
            }
            nb_pairs.push((edges[i].0, edges[i].1));
            nb_pairs.push((edges[i].1, edges[i].0));
            i = j;
        }
        let (neighbor_offsets, neighbors) = csr(n, &mut nb_pairs);
        let mut vf: Vec<(u32, u32)> = faces
            .iter()
            .enumerate()
            .flat_map(|(fi, t)| t.iter().map(move |&v| (v, fi as u32)))
            .collect();
        let (vertex_face_offsets, vertex_faces) = csr(n, &mut vf);
        let mut rp: Vec<(u32, u32)> = mesh
            .edges()
            .iter()
            .flat_map(|e| [(e[0], e[1]), (e[1], e[0])])
            .collect();
        let (ring_offsets, ring) = csr(n, &mut rp);
        TetBoundary {
            tets: mesh.tets.clone(),
            adjacency,
            faces,
            face_tet,
            face_across,
            neighbor_offsets,
            neighbors,
            vertex_face_offsets,
            vertex_faces,
            ring_offsets,
            ring,
        }
    }

    /// Whether tet `t` contains vertex `v` or one of its tet-edge neighbours.
    pub fn touches_ring(&self, t: usize, v: u32) -> bool {
        let tet = self.tets[t];
        if tet.contains(&v) {
            return true;
        }
        let (lo, hi) = (
            self.ring_offsets[v as usize],
            self.ring_offsets[v as usize + 1],
        );
        self.ring[lo as usize..hi as usize]
            .iter()
            .any(|r| tet.contains(r))
    }

    /// Boundary face vertex indices, three per face (the face BVH's primitive indices).
    pub fn face_indices(&self) -> Vec<u32> {
        self.faces.iter().flatten().copied().collect()
    }

    /// Unique boundary edges `[a, b]` with `a < b`, sorted.
    pub fn boundary_edges(&self) -> Vec<[u32; 2]> {
        let mut e: Vec<[u32; 2]> = self
            .faces
            .iter()
            .flat_map(|t| (0..3).map(move |k| [t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3])]))
            .collect();
        e.sort_unstable();
        e.dedup();
        e
    }

    /// Vertices used by a boundary face (`all = false`) or by any tet (`all = true`), ascending.
    pub fn used_vertices(&self, all: bool) -> Vec<u32> {
        let n = self.neighbor_offsets.len() - 1;
        let mut used = vec![false; n];
        let mark =
            |used: &mut Vec<bool>, v: &[u32]| v.iter().for_each(|&v| used[v as usize] = true);
        if all {
            self.tets.iter().for_each(|t| mark(&mut used, t));
        } else {
            self.faces.iter().for_each(|f| mark(&mut used, f));
        }
        (0..n as u32).filter(|&v| used[v as usize]).collect()
    }

    /// Tet vertex indices, four per tet (the tet BVH's primitive indices).
    pub fn tet_indices(&self) -> Vec<u32> {
        self.tets.iter().flatten().copied().collect()
    }
}

/// One shortest-path query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Query {
    /// The penetrating point (m).
    pub point: [f32; 3],
    /// The tet that contains it (the pre-image the path starts from).
    pub tet: u32,
    /// The mesh vertex at `point`, whose own faces are not candidates ([`INVALID`]: none).
    pub vertex: u32,
}

/// The answer to a query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Answer {
    /// Boundary face of the closest boundary point ([`INVALID`] when no valid path exists).
    pub face: u32,
    /// Closest boundary point `s` (m).
    pub point: [f32; 3],
    /// Squared path length `|p - s|²` (m²; infinite when none).
    pub sq_dist: f32,
    /// Closest feature of the face ([`PointTriangleKind`] code).
    pub kind: u32,
    /// Outward unit normal at `s`: the face normal, or the area-weighted mean of the faces
    /// around `s`'s edge or vertex.
    pub normal: [f32; 3],
}

impl Answer {
    /// No valid path.
    pub const NONE: Answer = Answer {
        face: INVALID,
        point: [0.0; 3],
        sq_dist: f32::INFINITY,
        kind: INVALID,
        normal: [0.0; 3],
    };
}

/// Work counters of a batch of queries (the paper's Table 1 operations).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    /// Queries run.
    pub queries: u32,
    /// BVH nodes visited.
    pub bvh_nodes: u32,
    /// Candidate boundary points examined (closer than the best so far).
    pub candidates: u32,
    /// Candidates skipped by infeasible-region culling.
    pub culled: u32,
    /// Ray traversals run.
    pub traversals: u32,
    /// Tets visited by traversals.
    pub tets_visited: u32,
    /// Extra branches pushed (crossing faces beyond the first of a tet).
    pub branches: u32,
    /// Traversals that ran out of stack or visited-list space (their candidate is dropped;
    /// a non-zero count means the answer may be wrong and is reported as an error).
    pub overflows: u32,
    /// Queries that found a valid path.
    pub found: u32,
    /// GPU loops that ended with work left (llvmpipe's loop limiter; a traversal counts as
    /// overflowed too). Always 0 in the reference.
    pub cut_short: u32,
}

impl std::ops::AddAssign for Counters {
    fn add_assign(&mut self, c: Counters) {
        self.queries += c.queries;
        self.bvh_nodes += c.bvh_nodes;
        self.candidates += c.candidates;
        self.culled += c.culled;
        self.traversals += c.traversals;
        self.tets_visited += c.tets_visited;
        self.branches += c.branches;
        self.overflows += c.overflows;
        self.found += c.found;
        self.cut_short += c.cut_short;
    }
}

impl Counters {
    /// The GPU's counter buffer layout (u32 words in field order).
    pub const WORDS: usize = 10;

    /// Reads counters from the GPU's word layout.
    pub fn from_words(w: &[u32]) -> Counters {
        Counters {
            queries: w[0],
            bvh_nodes: w[1],
            candidates: w[2],
            culled: w[3],
            traversals: w[4],
            tets_visited: w[5],
            branches: w[6],
            overflows: w[7],
            found: w[8],
            cut_short: w[9],
        }
    }
}

/// Query parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Face extension ε_i of the crossing test (barycentric).
    pub eps_i: f32,
    /// Culling tolerance ε_r (cosine).
    pub eps_r: f32,
    /// Infeasible-region culling on.
    pub cull: bool,
    /// Candidates closer than this (m) are rejected as zero-length paths (a point on another
    /// boundary face gives no direction to traverse).
    pub min_dist: f32,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            eps_i: DEFAULT_EPS_I,
            eps_r: DEFAULT_EPS_R,
            cull: true,
            min_dist: DEFAULT_MIN_DIST,
        }
    }
}

/// Fixed-point scale of the correction sums (units per metre; ±128 m range in i32).
pub const FIXED_SCALE: f32 = 16_777_216.0;

/// One collision constraint (see `contact_setup.comp`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Point-side vertices (`p1` = [`INVALID`] for a vertex).
    pub p: [u32; 2],
    /// Point-side weights.
    pub w: [f32; 2],
    /// Boundary face of the closest point ([`INVALID`] for a CCD edge–edge constraint).
    pub face: u32,
    /// Face-side vertices (`f[2]` = [`INVALID`] when the face side is an edge).
    pub f: [u32; 3],
    /// Barycentric coordinates of the closest point on the face (or edge).
    pub b: [f32; 3],
    /// Outward normal at the closest point.
    pub n: [f32; 3],
    /// Whether the slot holds a constraint.
    pub active: bool,
}

/// Reads `count` constraint slots (the constraint buffers of a detection or a CCD stage).
pub fn read_contacts(
    c_idx: &GpuBuffer<[u32; 4]>,
    c_w: &GpuBuffer<[f32; 4]>,
    c_b: &GpuBuffer<[f32; 4]>,
    c_n: &GpuBuffer<[f32; 4]>,
    c_f: &GpuBuffer<[u32; 4]>,
    count: usize,
) -> VkResult<Vec<Contact>> {
    let (i, w, b, n, f) = (
        c_idx.read()?,
        c_w.read()?,
        c_b.read()?,
        c_n.read()?,
        c_f.read()?,
    );
    Ok((0..count.min(i.len()))
        .map(|k| Contact {
            p: [i[k][0], i[k][1]],
            w: [w[k][0], w[k][1]],
            face: i[k][2],
            f: [f[k][0], f[k][1], f[k][2]],
            b: [b[k][0], b[k][1], b[k][2]],
            n: [n[k][0], n[k][1], n[k][2]],
            active: i[k][3] != 0,
        })
        .collect())
}
