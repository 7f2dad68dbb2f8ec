//! Mesh topology: orientation fix, boundary extraction, unique edges, tet-face adjacency,
//! vertex-to-element maps (tet meshes) and edges, bending stencils and boundary edges
//! (triangle meshes).
//!
//! Tet face convention: face `f` of tet `[a, b, c, d]` is the face opposite vertex `f`, with
//! the vertex order given by [`TET_FACES`]; for a positively oriented tet
//! (`det[b-a, c-a, d-a] > 0`) every face listed there is counter-clockwise seen from outside,
//! i.e. its normal points out of the tet.

use crate::model::{tet_signed_volume, TetMesh, TriMesh};

/// Local vertex indices of the four faces of a tet; face `f` is opposite local vertex `f` and
/// is oriented outward for a positively oriented tet.
pub const TET_FACES: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];

/// Marker for "no neighbour" in adjacency tables.
pub const NO_NEIGHBOR: u32 = u32::MAX;

/// Compressed sparse rows: row `i` is `items[offsets[i]..offsets[i+1]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Csr {
    /// Row start offsets; `offsets.len() == rows + 1`.
    pub offsets: Vec<u32>,
    /// Concatenated row contents.
    pub items: Vec<u32>,
}

impl Csr {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Contents of row `i`.
    pub fn row(&self, i: usize) -> &[u32] {
        &self.items[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Builds the map from each of `n` vertices to the elements that use it (element order).
    pub fn vertex_to_elements<const K: usize>(n: usize, elems: &[[u32; K]]) -> Csr {
        let mut counts = vec![0u32; n + 1];
        for e in elems {
            for &v in e {
                if (v as usize) < n {
                    counts[v as usize + 1] += 1;
                }
            }
        }
        for i in 0..n {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut items = vec![0u32; counts[n] as usize];
        for (ei, e) in elems.iter().enumerate() {
            for &v in e {
                if (v as usize) < n {
                    items[fill[v as usize] as usize] = ei as u32;
                    fill[v as usize] += 1;
                }
            }
        }
        Csr {
            offsets: counts,
            items,
        }
    }
}

/// Result of matching the faces of a tet mesh.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaceMatching {
    /// For tet `t` and face `f` (opposite local vertex `f`), the tet across that face or
    /// [`NO_NEIGHBOR`].
    pub adjacency: Vec<[u32; 4]>,
    /// Number of distinct faces shared by more than two tets (non-manifold).
    pub nonmanifold_faces: usize,
}

/// Groups `(min vertex, rest key, payload)` records by min vertex (counting sort), sorts each
/// group by its rest key, and returns `((min vertex, rest key), payload)` in that order, so that
/// equal full keys are adjacent. Records with a min vertex `>= n` are dropped.
fn bucket_by_min_vertex(
    n: usize,
    items: impl Iterator<Item = (u32, u64, u32)> + Clone,
) -> Vec<((u32, u64), u32)> {
    let mut offsets = vec![0u32; n + 1];
    let mut total = 0usize;
    for (v, _, _) in items.clone() {
        if (v as usize) < n {
            offsets[v as usize + 1] += 1;
            total += 1;
        }
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut out = vec![((0u32, 0u64), 0u32); total];
    for (v, k, p) in items {
        if (v as usize) < n {
            out[fill[v as usize] as usize] = ((v, k), p);
            fill[v as usize] += 1;
        }
    }
    for w in offsets.windows(2) {
        let bucket = &mut out[w[0] as usize..w[1] as usize];
        if bucket.len() > 1 {
            bucket.sort_unstable_by_key(|e| e.0 .1);
        }
    }
    out
}

fn sorted3(mut k: [u32; 3]) -> [u32; 3] {
    if k[0] > k[1] {
        k.swap(0, 1);
    }
    if k[1] > k[2] {
        k.swap(1, 2);
    }
    if k[0] > k[1] {
        k.swap(0, 1);
    }
    k
}

impl TetMesh {
    /// Flips every tet with negative signed volume by swapping its last two vertices; returns
    /// how many were flipped. Tets with exactly zero volume are left as they are.
    pub fn orient(&mut self) -> usize {
        let mut flipped = 0;
        let n = self.positions.len();
        for t in self.tets.iter_mut() {
            if t.iter().any(|&v| v as usize >= n) {
                continue;
            }
            let [a, b, c, d] = t.map(|i| self.positions[i as usize]);
            if tet_signed_volume(a, b, c, d) < 0.0 {
                t.swap(2, 3);
                flipped += 1;
            }
        }
        flipped
    }

    /// Number of tets with negative signed volume (without changing anything).
    pub fn count_inverted(&self) -> usize {
        (0..self.tets.len())
            .filter(|&t| self.tet_volume(t) < 0.0)
            .count()
    }

    /// Matches tet faces: neighbour across each face, and the count of non-manifold faces.
    ///
    /// Faces are bucketed by their smallest vertex (a counting sort, linear time) and matched
    /// within each small bucket, which is several times faster than one global sort.
    pub fn face_matching(&self) -> FaceMatching {
        let n = self.positions.len();
        let mut adjacency = vec![[NO_NEIGHBOR; 4]; self.tets.len()];
        let mut nonmanifold_faces = 0;
        // Pass 1: count faces per smallest vertex.
        let mut offsets = vec![0u32; n + 1];
        for tet in &self.tets {
            if tet.iter().any(|&v| v as usize >= n) {
                continue;
            }
            for lf in TET_FACES {
                let m = tet[lf[0]].min(tet[lf[1]]).min(tet[lf[2]]);
                offsets[m as usize + 1] += 1;
            }
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        // Pass 2: scatter (rest key, tet*4+face) into the buckets.
        let mut fill = offsets.clone();
        let mut rec = vec![(0u64, 0u32); offsets[n] as usize];
        for (t, tet) in self.tets.iter().enumerate() {
            if tet.iter().any(|&v| v as usize >= n) {
                continue;
            }
            for (f, lf) in TET_FACES.iter().enumerate() {
                let k = sorted3([tet[lf[0]], tet[lf[1]], tet[lf[2]]]);
                let slot = &mut fill[k[0] as usize];
                rec[*slot as usize] = (((k[1] as u64) << 32) | k[2] as u64, (t * 4 + f) as u32);
                *slot += 1;
            }
        }
        // Pass 3: match within each bucket.
        for w in offsets.windows(2) {
            let b = &mut rec[w[0] as usize..w[1] as usize];
            if b.len() < 2 {
                continue;
            }
            b.sort_unstable_by_key(|e| e.0);
            let mut i = 0;
            while i < b.len() {
                let mut j = i + 1;
                while j < b.len() && b[j].0 == b[i].0 {
                    j += 1;
                }
                if j - i == 2 {
                    let (x, y) = (b[i].1, b[i + 1].1);
                    adjacency[(x / 4) as usize][(x % 4) as usize] = y / 4;
                    adjacency[(y / 4) as usize][(y % 4) as usize] = x / 4;
                } else if j - i > 2 {
                    nonmanifold_faces += 1;
                }
                i = j;
            }
        }
        FaceMatching {
            adjacency,
            nonmanifold_faces,
        }
    }

    /// Number of tets with the same four vertices as an earlier tet (in any order).
    pub fn duplicate_tets(&self) -> usize {
        let n = self.positions.len();
        let keys = bucket_by_min_vertex(
            n,
            self.tets.iter().enumerate().map(|(t, tet)| {
                let mut k = *tet;
                k.sort_unstable();
                (
                    k[0],
                    ((k[1] as u64) << 42)
                        ^ ((k[2] as u64) << 21)
                        ^ k[3] as u64
                        ^ ((k[3] as u64 >> 21) << 63),
                    t as u32,
                )
            }),
        );
        // Confirm candidate duplicates exactly (the packed key may collide above 2^21 vertices).
        let mut count = 0;
        let mut i = 0;
        while i < keys.len() {
            let mut j = i + 1;
            while j < keys.len() && keys[j].0 == keys[i].0 {
                j += 1;
            }
            if j - i > 1 {
                let mut group: Vec<[u32; 4]> = keys[i..j]
                    .iter()
                    .map(|&(_, t)| {
                        let mut k = self.tets[t as usize];
                        k.sort_unstable();
                        k
                    })
                    .collect();
                group.sort_unstable();
                count += group.windows(2).filter(|w| w[0] == w[1]).count();
            }
            i = j;
        }
        count
    }

    /// For each tet and each face `f` (opposite local vertex `f`, see [`TET_FACES`]), the index
    /// of the tet across that face, or [`NO_NEIGHBOR`] on the boundary. Faces shared by more
    /// than two tets (non-manifold) are reported as having no neighbour.
    pub fn face_adjacency(&self) -> Vec<[u32; 4]> {
        self.face_matching().adjacency
    }

    /// Boundary triangles: faces used by exactly one tet, oriented outward (for positively
    /// oriented tets), with the mesh's own vertex indices.
    pub fn boundary_triangles(&self) -> Vec<[u32; 3]> {
        self.boundary_from_matching(&self.face_matching())
    }

    fn boundary_from_matching(&self, m: &FaceMatching) -> Vec<[u32; 3]> {
        // Faces shared by >2 tets have no neighbour recorded; exclude them by re-counting.
        let mut out = Vec::new();
        let mut nm: Option<std::collections::HashSet<[u32; 3]>> = None;
        if m.nonmanifold_faces > 0 {
            let mut count = std::collections::HashMap::<[u32; 3], u32>::new();
            for tet in &self.tets {
                for lf in TET_FACES {
                    *count
                        .entry(sorted3([tet[lf[0]], tet[lf[1]], tet[lf[2]]]))
                        .or_default() += 1;
                }
            }
            nm = Some(
                count
                    .into_iter()
                    .filter(|&(_, c)| c > 2)
                    .map(|(k, _)| k)
                    .collect(),
            );
        }
        for (t, tet) in self.tets.iter().enumerate() {
            for (f, lf) in TET_FACES.iter().enumerate() {
                if m.adjacency[t][f] == NO_NEIGHBOR {
                    let tri = [tet[lf[0]], tet[lf[1]], tet[lf[2]]];
                    if let Some(set) = &nm {
                        if set.contains(&sorted3(tri)) {
                            continue;
                        }
                    }
                    out.push(tri);
                }
            }
        }
        out
    }

    /// The boundary surface as a triangle mesh that keeps this mesh's vertex array and indexing.
    pub fn boundary_surface(&self) -> TriMesh {
        TriMesh {
            positions: self.positions.clone(),
            triangles: self.boundary_triangles(),
        }
    }

    /// The boundary surface with only the vertices it uses, plus the map from each compact
    /// vertex to its index in this mesh (ascending original order).
    pub fn boundary_surface_compact(&self) -> (TriMesh, Vec<u32>) {
        let tris = self.boundary_triangles();
        let mut new_index = vec![u32::MAX; self.positions.len()];
        for t in &tris {
            for &v in t {
                new_index[v as usize] = 0;
            }
        }
        let mut map = Vec::new();
        for (i, slot) in new_index.iter_mut().enumerate() {
            if *slot == 0 {
                *slot = map.len() as u32;
                map.push(i as u32);
            }
        }
        let positions = map.iter().map(|&i| self.positions[i as usize]).collect();
        let triangles = tris
            .iter()
            .map(|t| t.map(|v| new_index[v as usize]))
            .collect();
        (
            TriMesh {
                positions,
                triangles,
            },
            map,
        )
    }

    /// Unique edges `[a, b]` with `a < b`, sorted.
    pub fn edges(&self) -> Vec<[u32; 2]> {
        let mut e = Vec::with_capacity(self.tets.len() * 6);
        for t in &self.tets {
            for (i, j) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
                let (a, b) = (t[i].min(t[j]), t[i].max(t[j]));
                e.push([a, b]);
            }
        }
        e.sort_unstable();
        e.dedup();
        e
    }

    /// Map from each vertex to the tets that use it.
    pub fn vertex_to_tets(&self) -> Csr {
        Csr::vertex_to_elements(self.positions.len(), &self.tets)
    }

    /// Number of vertices not used by any tet.
    pub fn unreferenced_vertices(&self) -> usize {
        let mut used = vec![false; self.positions.len()];
        for t in &self.tets {
            for &v in t {
                if let Some(u) = used.get_mut(v as usize) {
                    *u = true;
                }
            }
        }
        used.iter().filter(|u| !**u).count()
    }
}

/// Edge-use summary of a triangle mesh.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EdgeUse {
    /// Unique edges `[a, b]`, `a < b`, sorted.
    pub edges: Vec<[u32; 2]>,
    /// Number of triangles using each edge (same order as `edges`).
    pub uses: Vec<u32>,
}

/// How the triangles of a surface meet along their edges (edges of repeated-vertex triangles
/// joining a vertex to itself are not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EdgeCheck {
    /// Edges used by exactly one triangle: the surface is open there.
    pub boundary: usize,
    /// Edges used by more than two triangles.
    pub nonmanifold: usize,
    /// Edges shared by exactly two triangles that run along them in the same direction: the two
    /// triangles' orientations (normals) disagree.
    pub misoriented: usize,
}

impl EdgeCheck {
    /// True for a closed, consistently oriented, manifold surface (every edge shared by exactly
    /// two triangles running along it in opposite directions).
    pub fn is_closed(&self) -> bool {
        self.boundary == 0 && self.nonmanifold == 0 && self.misoriented == 0
    }
}

impl TriMesh {
    /// Counts boundary, non-manifold and inconsistently oriented edges.
    pub fn edge_check(&self) -> EdgeCheck {
        let rec = self.edge_records();
        let mut out = EdgeCheck::default();
        let mut i = 0;
        while i < rec.len() {
            let mut j = i + 1;
            while j < rec.len() && rec[j].0 == rec[i].0 {
                j += 1;
            }
            let [a, b] = rec[i].0;
            if a != b {
                match j - i {
                    1 => out.boundary += 1,
                    2 => {
                        // Direction of the edge in each triangle: from its smaller vertex or not.
                        let forward = |r: &([u32; 2], u32, u8)| {
                            let tri = self.triangles[r.1 as usize];
                            tri[r.2 as usize] == a
                        };
                        if forward(&rec[i]) == forward(&rec[i + 1]) {
                            out.misoriented += 1;
                        }
                    }
                    _ => out.nonmanifold += 1,
                }
            }
            i = j;
        }
        out
    }

    fn edge_records(&self) -> Vec<([u32; 2], u32, u8)> {
        let mut rec = Vec::with_capacity(self.triangles.len() * 3);
        for (t, tri) in self.triangles.iter().enumerate() {
            for k in 0..3u8 {
                let (a, b) = (tri[k as usize], tri[(k as usize + 1) % 3]);
                rec.push(([a.min(b), a.max(b)], t as u32, k));
            }
        }
        rec.sort_unstable();
        rec
    }

    /// Unique edges with the number of triangles using each.
    pub fn edge_use(&self) -> EdgeUse {
        let rec = self.edge_records();
        let mut out = EdgeUse::default();
        for r in rec {
            if out.edges.last() == Some(&r.0) {
                if let Some(u) = out.uses.last_mut() {
                    *u += 1;
                }
            } else {
                out.edges.push(r.0);
                out.uses.push(1);
            }
        }
        out
    }

    /// Unique edges `[a, b]` with `a < b`, sorted.
    pub fn edges(&self) -> Vec<[u32; 2]> {
        self.edge_use().edges
    }

    /// Edges used by exactly one triangle, in that triangle's winding order.
    pub fn boundary_edges(&self) -> Vec<[u32; 2]> {
        let rec = self.edge_records();
        let mut out = Vec::new();
        let mut i = 0;
        while i < rec.len() {
            let mut j = i + 1;
            while j < rec.len() && rec[j].0 == rec[i].0 {
                j += 1;
            }
            if j - i == 1 {
                let (t, k) = (rec[i].1 as usize, rec[i].2 as usize);
                let tri = self.triangles[t];
                out.push([tri[k], tri[(k + 1) % 3]]);
            }
            i = j;
        }
        out
    }

    /// Number of edges used by more than two triangles.
    pub fn nonmanifold_edges(&self) -> usize {
        self.edge_use().uses.iter().filter(|&&u| u > 2).count()
    }

    /// Dihedral bending stencils `[e0, e1, o0, o1]`: for every interior edge shared by exactly
    /// two triangles, `e0 -> e1` is the edge as directed in the first triangle (whose third
    /// vertex is `o0`) and `o1` is the third vertex of the second triangle.
    pub fn bending_stencils(&self) -> Vec<[u32; 4]> {
        let rec = self.edge_records();
        let mut out = Vec::new();
        let mut i = 0;
        while i < rec.len() {
            let mut j = i + 1;
            while j < rec.len() && rec[j].0 == rec[i].0 {
                j += 1;
            }
            if j - i == 2 {
                let (t0, k0) = (rec[i].1 as usize, rec[i].2 as usize);
                let (t1, k1) = (rec[i + 1].1 as usize, rec[i + 1].2 as usize);
                let a = self.triangles[t0];
                let b = self.triangles[t1];
                out.push([a[k0], a[(k0 + 1) % 3], a[(k0 + 2) % 3], b[(k1 + 2) % 3]]);
            }
            i = j;
        }
        out
    }

    /// Map from each vertex to the triangles that use it.
    pub fn vertex_to_triangles(&self) -> Csr {
        Csr::vertex_to_elements(self.positions.len(), &self.triangles)
    }

    /// Signed enclosed volume (divergence theorem, positive for outward-facing triangles);
    /// meaningful for closed, consistently oriented surfaces (see [`TriMesh::edge_check`]). The
    /// cones are taken from the centre of the vertices' bounding box, which keeps the sum accurate
    /// for surfaces far from the origin.
    pub fn enclosed_volume(&self) -> f64 {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in &self.positions {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        let o = if self.positions.is_empty() {
            [0.0; 3]
        } else {
            [0, 1, 2].map(|k| 0.5 * (lo[k] + hi[k]))
        };
        self.triangles
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.positions[i as usize]);
                tet_signed_volume(o, a, b, c)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_tets() -> TetMesh {
        TetMesh {
            positions: vec![
                [0.0, 0.0, 0.0],
                [1.0, 0.0, 0.0],
                [0.0, 1.0, 0.0],
                [0.0, 0.0, 1.0],
                [1.0, 1.0, 1.0],
            ],
            tets: vec![[0, 1, 2, 3], [2, 1, 3, 4]],
        }
    }

    #[test]
    fn orient_flips_negative() {
        let mut m = two_tets();
        assert!(m.tet_volume(1) < 0.0);
        assert_eq!(m.orient(), 1);
        assert!(m.tet_volume(0) > 0.0 && m.tet_volume(1) > 0.0);
        assert_eq!(m.orient(), 0);
    }

    #[test]
    fn single_tet_faces_point_outward() {
        let m = TetMesh {
            tets: vec![[0, 1, 2, 3]],
            ..two_tets()
        };
        let s = m.boundary_surface();
        assert_eq!(s.triangles.len(), 4);
        assert!(s.enclosed_volume() > 0.0);
        assert!((s.enclosed_volume() - m.total_volume_abs()).abs() < 1e-15);
        for (f, tri) in s.triangles.iter().enumerate() {
            // face f is opposite local vertex f
            assert!(!tri.contains(&(f as u32)));
        }
    }

    #[test]
    fn adjacency_and_boundary() {
        let mut m = two_tets();
        m.orient();
        let adj = m.face_adjacency();
        assert_eq!(adj[0][0], 1); // face opposite vertex 0 of tet 0 is (1,2,3)
        assert_eq!(adj[1].iter().filter(|&&n| n == 0).count(), 1);
        let s = m.boundary_surface();
        assert_eq!(s.triangles.len(), 6);
        assert!((s.enclosed_volume() - m.total_volume_abs()).abs() < 1e-12);
        let (c, map) = m.boundary_surface_compact();
        assert_eq!(map, vec![0, 1, 2, 3, 4]);
        assert_eq!(c.triangles.len(), 6);
        assert_eq!(m.edges().len(), 9);
        let v2t = m.vertex_to_tets();
        assert_eq!(v2t.row(1), &[0, 1]);
        assert_eq!(v2t.row(4), &[1]);
    }

    #[test]
    fn trimesh_stencils() {
        let s = TriMesh {
            positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]],
            triangles: vec![[0, 1, 2], [2, 1, 3]],
        };
        assert_eq!(s.edges().len(), 5);
        assert_eq!(s.boundary_edges().len(), 4);
        let st = s.bending_stencils();
        assert_eq!(st.len(), 1);
        let mut e = [st[0][0], st[0][1]];
        e.sort();
        assert_eq!(e, [1, 2]);
        assert_eq!([st[0][2].min(st[0][3]), st[0][2].max(st[0][3])], [0, 3]);
        assert_eq!(s.nonmanifold_edges(), 0);
    }
}
