//! The problems the CPU BAL solver runs on: bodies of tetrahedra (elastic), fixed vertices,
//! contact surfaces (triangles and edges), and the contact stencils they induce; plus the tiny
//! scenarios of the tests (two tets, a tet on a plane of triangles, two edges, a block on a
//! ramp).

use super::super::fem::{lame, Material, TetRest};
use super::barrier::mollifier_threshold;
use super::distance::{closest, StencilKind};
use nalgebra::Vector3;
use std::collections::BTreeSet;

/// Identity of a contact pair: stencil kind and its two primitives (vertex and triangle, or two
/// edges with `a < b`). Orders like the GPU's 64-bit sort key (kind, a, b).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PairKey {
    /// Stencil kind.
    pub kind: StencilKind,
    /// Vertex (vertex–triangle) or first edge (edge–edge) index.
    pub a: u32,
    /// Triangle (vertex–triangle) or second edge (edge–edge) index.
    pub b: u32,
}

/// One candidate contact stencil.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stencil {
    /// Pair identity.
    pub key: PairKey,
    /// Global vertex ids of the four corners (`[p, t0, t1, t2]` or `[ea0, ea1, eb0, eb1]`).
    pub vertices: [usize; 4],
    /// Edge–edge mollifier threshold ε_× from the rest edge lengths (m⁴; 0 for vertex–triangle).
    pub mollifier_eps: f64,
}

impl Stencil {
    /// Corner positions in `x`.
    pub fn gather(&self, x: &[Vector3<f64>]) -> [Vector3<f64>; 4] {
        self.vertices.map(|v| x[v])
    }
}

/// A simulation problem for [`super::solver::BalSolver`] (SI units).
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Positions (m).
    pub x: Vec<Vector3<f64>>,
    /// Velocities (m/s).
    pub v: Vec<Vector3<f64>>,
    /// Lumped vertex masses (kg); fixed vertices may have any value.
    pub mass: Vec<f64>,
    /// Fixed (kinematic, static) vertices.
    pub fixed: Vec<bool>,
    /// Body id per vertex (named in errors).
    pub body: Vec<u32>,
    /// Rest positions (m): elastic rest shapes and edge–edge mollifier thresholds.
    pub rest: Vec<Vector3<f64>>,
    /// Elastic tetrahedra.
    pub tets: Vec<[usize; 4]>,
    /// Material of each tetrahedron.
    pub materials: Vec<Material>,
    /// Contact triangles.
    pub triangles: Vec<[usize; 3]>,
    /// Contact edges `[a, b]` (`a < b`, unique).
    pub edges: Vec<[usize; 2]>,
    /// Gravity (m/s²).
    pub gravity: Vector3<f64>,
    /// Time step h (s).
    pub h: f64,
}

/// Whether `m` is a usable mass (kg): positive and finite.
fn positive_mass(m: f64) -> bool {
    m > 0.0 && m.is_finite()
}

/// Unique sorted edges of triangles plus extra segments.
pub fn surface_edges(triangles: &[[usize; 3]], extra: &[[usize; 2]]) -> Vec<[usize; 2]> {
    let mut set = BTreeSet::new();
    for t in triangles {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            set.insert([a.min(b), a.max(b)]);
        }
    }
    for e in extra {
        set.insert([e[0].min(e[1]), e[0].max(e[1])]);
    }
    set.into_iter().collect()
}

/// Boundary triangles of a tet mesh (faces used by one tet), oriented outward.
pub fn boundary_triangles(x: &[Vector3<f64>], tets: &[[usize; 4]]) -> Vec<[usize; 3]> {
    let mut count = std::collections::BTreeMap::new();
    for t in tets {
        for f in [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]] {
            let mut k = [t[f[0]], t[f[1]], t[f[2]]];
            k.sort_unstable();
            let opposite = t[6 - f[0] - f[1] - f[2]];
            count
                .entry(k)
                .or_insert((0, [t[f[0]], t[f[1]], t[f[2]]], opposite))
                .0 += 1;
        }
    }
    count
        .into_values()
        .filter(|(n, ..)| *n == 1)
        .map(|(_, f, o)| {
            let n = (x[f[1]] - x[f[0]]).cross(&(x[f[2]] - x[f[0]]));
            if n.dot(&(x[o] - x[f[0]])) > 0.0 {
                [f[0], f[2], f[1]]
            } else {
                f
            }
        })
        .collect()
}

impl Problem {
    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Checks array lengths, indices and values; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.x.len();
        for (name, len) in [
            ("v", self.v.len()),
            ("mass", self.mass.len()),
            ("fixed", self.fixed.len()),
            ("body", self.body.len()),
            ("rest", self.rest.len()),
        ] {
            if len != n {
                return Err(format!("problem.{name}: {len} entries for {n} vertices"));
            }
        }
        if self.materials.len() != self.tets.len() {
            return Err(format!(
                "problem.materials: {} entries for {} tets",
                self.materials.len(),
                self.tets.len()
            ));
        }
        if !(self.h.is_finite() && self.h > 0.0) {
            return Err(format!(
                "problem.h: time step must be positive, got {}",
                self.h
            ));
        }
        if let Some(i) = (0..n).find(|&i| {
            !(self.x[i].iter().all(|c| c.is_finite())
                && self.v[i].iter().all(|c| c.is_finite())
                && self.rest[i].iter().all(|c| c.is_finite()))
        }) {
            return Err(format!("problem.x/v/rest: vertex {i} is not finite"));
        }
        if let Some(i) = (0..n).find(|&i| !self.fixed[i] && !positive_mass(self.mass[i])) {
            return Err(format!(
                "problem.mass: free vertex {i} has mass {}",
                self.mass[i]
            ));
        }
        let bad = |ids: &[usize]| ids.iter().any(|&v| v >= n);
        if let Some(i) = self.tets.iter().position(|t| bad(t)) {
            return Err(format!("problem.tets[{i}] indexes past {n} vertices"));
        }
        if let Some(i) = self.triangles.iter().position(|t| bad(t)) {
            return Err(format!("problem.triangles[{i}] indexes past {n} vertices"));
        }
        if let Some(i) = self.edges.iter().position(|e| bad(e) || e[0] >= e[1]) {
            return Err(format!(
                "problem.edges[{i}] must be [a, b] with a < b < {n}"
            ));
        }
        if !self.gravity.iter().all(|c| c.is_finite()) {
            return Err("problem.gravity is not finite".into());
        }
        Ok(())
    }

    /// Rest data of every tet; the error names the first degenerate one.
    pub fn tet_rests(&self) -> Result<Vec<TetRest>, String> {
        self.tets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                TetRest::new(&t.map(|v| self.rest[v]))
                    .ok_or_else(|| format!("problem.tets[{i}] has a degenerate rest shape"))
            })
            .collect()
    }

    /// Every vertex–triangle and edge–edge stencil whose primitives share no vertex and which
    /// has at least one free vertex, sorted by key (the brute-force broad phase of tiny
    /// problems).
    pub fn stencils(&self) -> Vec<Stencil> {
        let mut out = Vec::new();
        let surface_vertices: BTreeSet<usize> = self
            .triangles
            .iter()
            .flatten()
            .chain(self.edges.iter().flatten())
            .copied()
            .collect();
        let free = |vs: &[usize]| vs.iter().any(|&v| !self.fixed[v]);
        for &p in &surface_vertices {
            for (ti, t) in self.triangles.iter().enumerate() {
                let vs = [p, t[0], t[1], t[2]];
                if !t.contains(&p) && free(&vs) {
                    out.push(Stencil {
                        key: PairKey {
                            kind: StencilKind::PointTriangle,
                            a: p as u32,
                            b: ti as u32,
                        },
                        vertices: vs,
                        mollifier_eps: 0.0,
                    });
                }
            }
        }
        let sq = |e: &[usize; 2]| (self.rest[e[1]] - self.rest[e[0]]).norm_squared();
        for (i, a) in self.edges.iter().enumerate() {
            for (j, b) in self.edges.iter().enumerate().skip(i + 1) {
                let vs = [a[0], a[1], b[0], b[1]];
                if !a.iter().any(|v| b.contains(v)) && free(&vs) {
                    out.push(Stencil {
                        key: PairKey {
                            kind: StencilKind::EdgeEdge,
                            a: i as u32,
                            b: j as u32,
                        },
                        vertices: vs,
                        mollifier_eps: mollifier_threshold(sq(a), sq(b)),
                    });
                }
            }
        }
        out.sort_by_key(|s| s.key);
        out
    }

    /// The first stencil (by key) whose primitives touch or intersect at `x` (distance 0), as
    /// an error naming it and its bodies.
    pub fn first_touching(&self, stencils: &[Stencil], x: &[Vector3<f64>]) -> Option<String> {
        stencils.iter().find_map(|s| {
            let (sq, ..) = closest(s.key.kind, &s.gather(x));
            (sq <= 0.0).then(|| {
                let what = match s.key.kind {
                    StencilKind::PointTriangle => {
                        format!("vertex {} and triangle {}", s.key.a, s.key.b)
                    }
                    StencilKind::EdgeEdge => format!("edges {} and {}", s.key.a, s.key.b),
                };
                format!(
                    "bodies {} and {} touch or intersect at the start ({what}); barrier contact \
                     needs a positive distance between every pair",
                    self.body[s.vertices[0]], self.body[s.vertices[3]]
                )
            })
        })
    }
}

impl Problem {
    /// An error naming the first pair of intersecting surface primitives (exact checker,
    /// [`crate::intersection_check::frame_intersections`]) and their bodies, if any.
    pub fn first_intersecting(&self) -> Result<Option<String>, String> {
        use crate::intersection_check::{frame_intersections, FramePairKind, Surface};
        let tris: Vec<[u32; 3]> = self.triangles.iter().map(|t| t.map(|v| v as u32)).collect();
        let tri_edges = surface_edges(&self.triangles, &[]);
        let curves: Vec<[u32; 2]> = self
            .edges
            .iter()
            .filter(|e| tri_edges.binary_search(e).is_err())
            .map(|e| e.map(|v| v as u32))
            .collect();
        let surface = Surface::with_curves(self.len(), &tris, &curves)
            .map_err(|e| format!("problem surface: {e}"))?;
        let x: Vec<[f64; 3]> = self.x.iter().map(|p| [p.x, p.y, p.z]).collect();
        let hits = frame_intersections(&surface, &x);
        Ok(hits.first().map(|h| {
            let seg = |i: u32| surface.curve_segments()[i as usize][0] as usize;
            let tri = |i: u32| self.triangles[i as usize][0];
            let (va, vb) = match h.kind {
                FramePairKind::TriangleTriangle => (tri(h.first), tri(h.second)),
                FramePairKind::SegmentTriangle => (seg(h.first), tri(h.second)),
                FramePairKind::SegmentSegment => (seg(h.first), seg(h.second)),
            };
            format!(
                "bodies {} and {} intersect at the start ({} {} / {}); barrier contact needs \
                 an intersection-free start",
                self.body[va],
                self.body[vb],
                h.kind.name(),
                h.first,
                h.second
            )
        }))
    }
}

/// Builders of the tiny test problems.
pub mod scenarios {
    use super::*;

    /// A unit-orientation tet `[0, 0, 0], [a, 0, 0], [0, a, 0], [0, 0, a]` shifted by `o`.
    pub fn tet_vertices(o: Vector3<f64>, a: f64) -> [Vector3<f64>; 4] {
        [
            o,
            o + Vector3::new(a, 0.0, 0.0),
            o + Vector3::new(0.0, a, 0.0),
            o + Vector3::new(0.0, 0.0, a),
        ]
    }

    /// An empty problem with time step `h` and gravity `g`.
    pub fn empty(h: f64, g: Vector3<f64>) -> Problem {
        Problem {
            x: vec![],
            v: vec![],
            mass: vec![],
            fixed: vec![],
            body: vec![],
            rest: vec![],
            tets: vec![],
            materials: vec![],
            triangles: vec![],
            edges: vec![],
            gravity: g,
            h,
        }
    }

    /// Adds an elastic body of tets (positions `x`, velocity `v`, density `rho`, Young's
    /// modulus `e`, Poisson ratio `nu`, stable Neo-Hookean) with its boundary as contact
    /// surface; returns its first vertex index.
    #[allow(clippy::too_many_arguments)]
    pub fn add_body(
        p: &mut Problem,
        x: &[Vector3<f64>],
        tets: &[[usize; 4]],
        v: Vector3<f64>,
        rho: f64,
        e: f64,
        nu: f64,
    ) -> usize {
        let base = p.x.len();
        let body = p.body.iter().max().map_or(0, |b| b + 1);
        // Positively oriented (the elastic rest shapes need det Dm > 0).
        let tets: Vec<[usize; 4]> = tets
            .iter()
            .map(|t| {
                let c = t.map(|k| x[k]);
                let vol = (c[1] - c[0]).cross(&(c[2] - c[0])).dot(&(c[3] - c[0]));
                let t = if vol < 0.0 {
                    [t[0], t[1], t[3], t[2]]
                } else {
                    *t
                };
                t.map(|k| k + base)
            })
            .collect();
        p.x.extend_from_slice(x);
        p.rest.extend_from_slice(x);
        p.v.extend(x.iter().map(|_| v));
        p.fixed.extend(x.iter().map(|_| false));
        p.body.extend(x.iter().map(|_| body));
        p.mass.extend(x.iter().map(|_| 0.0));
        let (mu, lambda) = lame(e, nu);
        for t in &tets {
            let c = t.map(|k| p.x[k]);
            let vol = (c[1] - c[0])
                .cross(&(c[2] - c[0]))
                .dot(&(c[3] - c[0]))
                .abs()
                / 6.0;
            for &k in t {
                p.mass[k] += rho * vol / 4.0;
            }
            p.materials.push(Material::StableNeoHookean { mu, lambda });
        }
        let tris = boundary_triangles(&p.x, &tets);
        p.tets.extend(tets);
        p.triangles.extend(tris);
        p.edges = surface_edges(&p.triangles, &[]);
        base
    }

    /// Adds a fixed square `[-r, r]²` at height `z` as two triangles (normal +z).
    pub fn add_floor(p: &mut Problem, r: f64, z: f64) {
        let base = p.x.len();
        let body = p.body.iter().max().map_or(0, |b| b + 1);
        for (x, y) in [(-r, -r), (r, -r), (r, r), (-r, r)] {
            let q = Vector3::new(x, y, z);
            p.x.push(q);
            p.rest.push(q);
            p.v.push(Vector3::zeros());
            p.fixed.push(true);
            p.body.push(body);
            p.mass.push(1.0);
        }
        p.triangles
            .extend([[base, base + 1, base + 2], [base, base + 2, base + 3]]);
        p.edges = surface_edges(&p.triangles, &[]);
    }

    /// Five-tet cube of side `a` with its minimum corner at `o`.
    pub fn cube(o: Vector3<f64>, a: f64) -> (Vec<Vector3<f64>>, Vec<[usize; 4]>) {
        let x: Vec<Vector3<f64>> = (0..8)
            .map(|i| {
                o + Vector3::new((i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64) * a
            })
            .collect();
        let tets = vec![
            [0, 1, 2, 4],
            [1, 3, 2, 7],
            [1, 4, 5, 7],
            [2, 4, 6, 7],
            [1, 2, 4, 7],
        ];
        (x, tets)
    }

    /// Two tets flying at each other along x at `speed` (m/s each): a vertex of the left tet
    /// points at the centre of a face of the right one, `gap` (m) away.
    pub fn two_tets(speed: f64, gap: f64) -> Problem {
        let mut p = empty(1.0 / 30.0, Vector3::zeros());
        let a = 0.1;
        // The left tet's vertex (a, 0, 0) + o hits the face x = 0 of the right tet near its
        // centroid (0, a/3, a/3).
        let left = tet_vertices(Vector3::new(-a - gap, 0.03, 0.031), a).to_vec();
        let right = vec![
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(0.0, a, 0.0),
            Vector3::new(0.0, 0.0, a),
            Vector3::new(a, 0.0, 0.0),
        ];
        add_body(
            &mut p,
            &left,
            &[[0, 1, 2, 3]],
            Vector3::new(speed, 0.0, 0.0),
            1e3,
            1e6,
            0.3,
        );
        add_body(
            &mut p,
            &right,
            &[[0, 1, 2, 3]],
            Vector3::new(-speed, 0.0, 0.0),
            1e3,
            1e6,
            0.3,
        );
        p
    }

    /// A tet dropped from height `height` onto a fixed plane of two triangles (gravity −z).
    pub fn tet_on_plane(height: f64) -> Problem {
        let mut p = empty(1.0 / 30.0, Vector3::new(0.0, 0.0, -9.81));
        add_floor(&mut p, 1.0, 0.0);
        let x = tet_vertices(Vector3::new(0.013, -0.021, height), 0.1);
        add_body(&mut p, &x, &[[0, 1, 2, 3]], Vector3::zeros(), 1e3, 1e6, 0.3);
        p
    }

    /// Edge–edge contact: two wedge-shaped tets whose edges cross at right angles (the lower
    /// tet's top edge along x, the upper tet's bottom edge along y, `gap` apart), flying at
    /// each other along z at `speed` (m/s each).
    pub fn two_edges(speed: f64, gap: f64) -> Problem {
        let mut p = empty(1.0 / 30.0, Vector3::zeros());
        let (s, h) = (0.05, 0.06);
        let lower = vec![
            Vector3::new(-s, 0.0, 0.0),
            Vector3::new(s, 0.003, 0.0),
            Vector3::new(0.0, -s, -h),
            Vector3::new(0.0, s, -h),
        ];
        let upper = vec![
            Vector3::new(0.004, -s, gap),
            Vector3::new(-0.002, s, gap),
            Vector3::new(-s, 0.0, gap + h),
            Vector3::new(s, 0.0, gap + h),
        ];
        add_body(
            &mut p,
            &lower,
            &[[0, 1, 2, 3]],
            Vector3::new(0.0, 0.0, speed),
            1e3,
            1e6,
            0.3,
        );
        add_body(
            &mut p,
            &upper,
            &[[0, 1, 2, 3]],
            Vector3::new(0.0, 0.0, -speed),
            1e3,
            1e6,
            0.3,
        );
        p
    }

    /// A cube block (side `a`, E = 1e7 Pa) resting on a horizontal fixed floor with gravity
    /// tilted by `theta` (rad) about y: the same physics as a ramp of slope θ, with the slope
    /// direction +x. The block starts at rest `gap` above the floor.
    pub fn block_on_ramp(theta: f64, a: f64, gap: f64) -> Problem {
        let g = 9.81;
        let mut p = empty(
            1.0 / 30.0,
            Vector3::new(g * theta.sin(), 0.0, -g * theta.cos()),
        );
        add_floor(&mut p, 2.0, 0.0);
        let (x, tets) = cube(Vector3::new(-a / 2.0, -a / 2.0, gap), a);
        add_body(&mut p, &x, &tets, Vector3::zeros(), 1e3, 1e7, 0.3);
        p
    }
}
