//! Collision response from shortest paths to boundary (Chen, Diaz and Yuksel 2023, §4): the
//! reference of `kernels/recovery/contact_{setup,project,apply}.comp` (host:
//! `engine/src/recovery/response.rs`). Constraints `(x_p − s(x))·n ≥ offset` are projected
//! Jacobi-style with position-based Coulomb friction; per-vertex corrections are summed in
//! fixed point (so the GPU's integer atomics give the same sum in any order) and averaged.

// `!(x > 0.0)` on purpose: NaN must fail these tests as the kernels' comparisons do.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use super::shortest_path::{Answer, INVALID};
use nalgebra::Vector3;

/// Fixed-point scale of the correction sums (units per metre; ±128 m range in i32).
pub const FIXED_SCALE: f32 = 16_777_216.0;

/// One collision constraint (see `contact_setup.comp`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Point-side vertices (`p1` = [`INVALID`] for a vertex).
    pub p: [u32; 2],
    /// Point-side weights.
    pub w: [f32; 2],
    /// Boundary face of the closest point.
    pub face: u32,
    /// Barycentric coordinates of the closest point on the face.
    pub b: [f32; 3],
    /// Outward normal at the closest point.
    pub n: [f32; 3],
    /// Whether the slot holds a constraint.
    pub active: bool,
}

fn v3(p: [f32; 4]) -> Vector3<f32> {
    Vector3::new(p[0], p[1], p[2])
}

/// Builds the constraint of query slot `i` (vertex slots first, then edge slots).
#[allow(clippy::too_many_arguments)]
pub fn setup(
    positions: &[[f32; 4]],
    faces: &[[u32; 3]],
    vertices: &[u32],
    edges: &[[u32; 2]],
    i: usize,
    query_point: [f32; 3],
    a: &Answer,
) -> Contact {
    let nv = vertices.len();
    let (p, w) = if i < nv {
        ([vertices[i], INVALID], [1.0, 0.0])
    } else {
        let e = edges[i - nv];
        let xa = v3(positions[e[0] as usize]);
        let ab = v3(positions[e[1] as usize]) - xa;
        let ll = ab.dot(&ab);
        let q = Vector3::new(query_point[0], query_point[1], query_point[2]);
        let t = if ll > 0.0 {
            (q - xa).dot(&ab) / ll
        } else {
            0.5
        };
        let t = t.clamp(0.0, 1.0);
        (e, [1.0 - t, t])
    };
    let mut c = Contact {
        p,
        w,
        face: INVALID,
        b: [0.0; 3],
        n: a.normal,
        active: false,
    };
    if a.face == INVALID {
        return c;
    }
    let f = faces[a.face as usize];
    if f.contains(&p[0]) || (p[1] != INVALID && f.contains(&p[1])) {
        return c;
    }
    let t0 = v3(positions[f[0] as usize]);
    let e1 = v3(positions[f[1] as usize]) - t0;
    let e2 = v3(positions[f[2] as usize]) - t0;
    let d = Vector3::new(a.point[0], a.point[1], a.point[2]) - t0;
    let (d11, d12, d22) = (e1.dot(&e1), e1.dot(&e2), e2.dot(&e2));
    let (d1, d2) = (d.dot(&e1), d.dot(&e2));
    let den = d11 * d22 - d12 * d12;
    if den > 0.0 {
        let u = (d22 * d1 - d12 * d2) / den;
        let v = (d11 * d2 - d12 * d1) / den;
        c.b = [1.0 - u - v, u, v];
        c.face = a.face;
        c.active = true;
    }
    c
}

/// Per-vertex fixed-point correction sums and counts.
pub type Accum = Vec<[i32; 4]>;

fn add(acc: &mut Accum, v: u32, d: Vector3<f32>) {
    let q = d.map(|x| (x * FIXED_SCALE + 0.5).floor() as i32);
    let a = &mut acc[v as usize];
    a[0] = a[0].wrapping_add(q.x);
    a[1] = a[1].wrapping_add(q.y);
    a[2] = a[2].wrapping_add(q.z);
    a[3] += 1;
}

/// Projects one constraint into `acc` (the kernel's arithmetic), closing at most `max_step`
/// (m) of its violation.
#[allow(clippy::too_many_arguments)]
pub fn project(
    positions: &[[f32; 4]],
    prev: &[[f32; 4]],
    inv_mass: &[f32],
    faces: &[[u32; 3]],
    c: &Contact,
    offset: f32,
    mu: f32,
    max_step: f32,
    acc: &mut Accum,
) {
    if !c.active {
        return;
    }
    let f = faces[c.face as usize];
    let n = Vector3::new(c.n[0], c.n[1], c.n[2]);
    let two = c.p[1] != INVALID;
    let m0 = inv_mass[c.p[0] as usize];
    let m1 = if two { inv_mass[c.p[1] as usize] } else { 0.0 };
    let mf = f.map(|v| inv_mass[v as usize]);
    let mut xp = v3(positions[c.p[0] as usize]) * c.w[0];
    let mut xq = v3(prev[c.p[0] as usize]) * c.w[0];
    if two {
        xp += v3(positions[c.p[1] as usize]) * c.w[1];
        xq += v3(prev[c.p[1] as usize]) * c.w[1];
    }
    let xs = v3(positions[f[0] as usize]) * c.b[0]
        + v3(positions[f[1] as usize]) * c.b[1]
        + v3(positions[f[2] as usize]) * c.b[2];
    let xsq = v3(prev[f[0] as usize]) * c.b[0]
        + v3(prev[f[1] as usize]) * c.b[1]
        + v3(prev[f[2] as usize]) * c.b[2];
    let cval = (xp - xs).dot(&n) - offset;
    if !(cval < 0.0) {
        return;
    }
    let cval = cval.max(-max_step);
    let (w, b) = (c.w, c.b);
    let wsum = w[0] * w[0] * m0
        + w[1] * w[1] * m1
        + b[0] * b[0] * mf[0]
        + b[1] * b[1] * mf[1]
        + b[2] * b[2] * mf[2];
    if !(wsum > 0.0) {
        return;
    }
    let dl = -cval / wsum;
    let rel = (xp - xq) - (xs - xsq);
    let tang = rel - n * rel.dot(&n);
    let tl = tang.norm();
    let limit = mu * (-cval);
    let k = if tl <= limit {
        1.0
    } else if tl > 0.0 {
        limit / tl
    } else {
        0.0
    };
    let g = n * dl - tang * (k / wsum);
    add(acc, c.p[0], g * (m0 * w[0]));
    if two {
        add(acc, c.p[1], g * (m1 * w[1]));
    }
    for j in 0..3 {
        add(acc, f[j], -g * (mf[j] * b[j]));
    }
}

/// Applies the averaged corrections times the over-relaxation `relax` and clears `acc`.
pub fn apply(positions: &mut [[f32; 4]], acc: &mut Accum, relax: f32) {
    for (p, a) in positions.iter_mut().zip(acc.iter_mut()) {
        if a[3] > 0 {
            let s = 1.0 / FIXED_SCALE;
            for k in 0..3 {
                p[k] += a[k] as f32 * s / a[3] as f32 * relax;
            }
            *a = [0; 4];
        }
    }
}
