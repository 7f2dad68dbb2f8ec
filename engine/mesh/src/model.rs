//! The mesh model: plain arrays of positions (metres, f64) and element indices (u32).

/// A tetrahedral mesh. Tet `(a, b, c, d)` is positively oriented when
/// `det[b-a, c-a, d-a] > 0` (the Gmsh/VTK convention).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TetMesh {
    /// Vertex positions in metres.
    pub positions: Vec<[f64; 3]>,
    /// Tetrahedra as four vertex indices.
    pub tets: Vec<[u32; 4]>,
}

/// A triangle mesh (cloth, colliders, boundary surfaces); counter-clockwise = outward normal.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriMesh {
    /// Vertex positions in metres.
    pub positions: Vec<[f64; 3]>,
    /// Triangles as three vertex indices.
    pub triangles: Vec<[u32; 3]>,
}

/// A set of polylines (rods, hair strands) sharing one vertex array.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Polyline {
    /// Vertex positions in metres.
    pub positions: Vec<[f64; 3]>,
    /// Each strand is a contiguous range of vertex indices `[start, end)`; segments join
    /// consecutive vertices of a strand.
    pub strands: Vec<std::ops::Range<u32>>,
}

/// Signed volume of the tetrahedron `(a, b, c, d)`: `det[b-a, c-a, d-a] / 6`.
pub fn tet_signed_volume(a: [f64; 3], b: [f64; 3], c: [f64; 3], d: [f64; 3]) -> f64 {
    let u = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let v = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
    let w = [d[0] - a[0], d[1] - a[1], d[2] - a[2]];
    (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
        + u[2] * (v[0] * w[1] - v[1] * w[0]))
        / 6.0
}

impl TetMesh {
    /// Signed volume of tet `t`.
    pub fn tet_volume(&self, t: usize) -> f64 {
        let [a, b, c, d] = self.tets[t].map(|i| self.positions[i as usize]);
        tet_signed_volume(a, b, c, d)
    }

    /// Sum over tets of |signed volume| (the manifest's `total_volume_abs`).
    pub fn total_volume_abs(&self) -> f64 {
        (0..self.tets.len()).map(|t| self.tet_volume(t).abs()).sum()
    }
}
