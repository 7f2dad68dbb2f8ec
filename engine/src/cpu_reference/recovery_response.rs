//! Collision response from shortest paths to boundary (Chen, Diaz and Yuksel 2023, §4): the
//! reference of `kernels/recovery/contact_{setup,project,apply}.comp` and of the CCD
//! constraints of `ccd_contacts.comp` (host: `engine/src/recovery/{response,ccd}.rs`). Constraints `(x_p − s(x))·n ≥ offset` are projected
//! Jacobi-style with position-based Coulomb friction; per-vertex corrections are summed in
//! fixed point (so the GPU's integer atomics give the same sum in any order) and averaged.

// `!(x > 0.0)` on purpose: NaN must fail these tests as the kernels' comparisons do.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use super::ccd::{ccd, CcdKind};
use super::distance::{edge_edge, point_triangle};
use super::shortest_path::{Answer, INVALID};
use nalgebra::Vector3;

pub use crate::contact::shortest_path::types::{Contact, FIXED_SCALE};

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
        f: [0; 3],
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
        c.f = f;
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
    c: &Contact,
    offset: f32,
    mu: f32,
    max_step: f32,
    acc: &mut Accum,
) {
    if !c.active {
        return;
    }
    let three = c.f[2] != INVALID;
    let f = if three { c.f } else { [c.f[0], c.f[1], c.f[1]] };
    let mut b = c.b;
    if !three {
        b[2] = 0.0;
    }
    let n = Vector3::new(c.n[0], c.n[1], c.n[2]);
    let two = c.p[1] != INVALID;
    let m0 = inv_mass[c.p[0] as usize];
    let m1 = if two { inv_mass[c.p[1] as usize] } else { 0.0 };
    let mut mf = f.map(|v| inv_mass[v as usize]);
    if !three {
        mf[2] = 0.0;
    }
    let mut xp = v3(positions[c.p[0] as usize]) * c.w[0];
    let mut xq = v3(prev[c.p[0] as usize]) * c.w[0];
    if two {
        xp += v3(positions[c.p[1] as usize]) * c.w[1];
        xq += v3(prev[c.p[1] as usize]) * c.w[1];
    }
    let xs = v3(positions[f[0] as usize]) * b[0]
        + v3(positions[f[1] as usize]) * b[1]
        + v3(positions[f[2] as usize]) * b[2];
    let xsq = v3(prev[f[0] as usize]) * b[0]
        + v3(prev[f[1] as usize]) * b[1]
        + v3(prev[f[2] as usize]) * b[2];
    let cval = (xp - xs).dot(&n) - offset;
    if !(cval < 0.0) {
        return;
    }
    let cval = cval.max(-max_step);
    let w = c.w;
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
    for j in 0..if three { 3 } else { 2 } {
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

/// The CCD constraint of one proximity pair moving linearly from `x0` to `x1` (vertex order of
/// [`CcdKind`]; `tri` = the triangle index of a vertex–triangle pair), or `None` when the
/// conservative CCD at separation `offset` (m) reports no hit (`ccd_contacts.comp`).
pub fn ccd_contact(
    kind: CcdKind,
    v: [u32; 4],
    tri: u32,
    x0: &[[f32; 4]; 4],
    x1: &[[f32; 4]; 4],
    offset: f32,
) -> Option<Contact> {
    let a = x0.map(v3);
    let b = x1.map(v3);
    let r = ccd(kind, &a, &b, offset);
    if !r.hit {
        return None;
    }
    let t = r.toi;
    let xt: [Vector3<f32>; 4] = std::array::from_fn(|k| a[k] + (b[k] - a[k]) * t);
    let (w, mut n) = match kind {
        CcdKind::PointTriangle => {
            let c = point_triangle(&xt[0], &xt[1], &xt[2], &xt[3]);
            let n = (xt[2] - xt[1]).cross(&(xt[3] - xt[1]));
            let w = c.weights;
            let rel =
                b[0] - a[0] + (b[1] - a[1]) * w[1] + (b[2] - a[2]) * w[2] + (b[3] - a[3]) * w[3];
            if rel.dot(&n) > 0.0 {
                return None;
            }
            (w, n)
        }
        CcdKind::EdgeEdge => {
            let c = edge_edge(&xt[0], &xt[1], &xt[2], &xt[3]);
            let s = edge_edge(&a[0], &a[1], &a[2], &a[3]);
            let n = (xt[1] - xt[0]).cross(&(xt[3] - xt[2]));
            let n = if !(n.norm() > 1e-3 * (xt[1] - xt[0]).norm() * (xt[3] - xt[2]).norm()) {
                s.diff
            } else if n.dot(&s.diff) < 0.0 {
                -n
            } else {
                n
            };
            (c.weights, n)
        }
    };
    let l = n.norm();
    if !(l > 0.0) {
        return None;
    }
    n /= l;
    let vt = kind == CcdKind::PointTriangle;
    Some(Contact {
        p: [v[0], if vt { INVALID } else { v[1] }],
        w: [w[0], if vt { 0.0 } else { w[1] }],
        face: if vt { tri } else { INVALID },
        f: if vt {
            [v[1], v[2], v[3]]
        } else {
            [v[2], v[3], INVALID]
        },
        b: if vt {
            [-w[1], -w[2], -w[3]]
        } else {
            [-w[2], -w[3], 0.0]
        },
        n: [n.x, n.y, n.z],
        active: true,
    })
}

/// One fail-safe round's rollback (`ccd_rollback.comp`): every vertex flagged in `flags` goes
/// back to its start-of-substep position `prev`, and the flag is cleared.
pub fn rollback(positions: &mut [[f32; 4]], prev: &[[f32; 4]], flags: &mut [u32]) {
    for ((x, p), f) in positions.iter_mut().zip(prev).zip(flags.iter_mut()) {
        if *f != 0 {
            *x = *p;
            *f = 0;
        }
    }
}

/// Fixed-point scale of the penalty gradient sums (units per metre; `kernels/include/penalty.glsl`).
pub const PENALTY_GRAD_SCALE: f64 = 67_108_864.0;
/// Fixed-point scale of the penalty Hessian sums (units per 1, ±2048 in i32;
/// `kernels/include/penalty.glsl`).
pub const PENALTY_HESS_SCALE: f64 = 1_048_576.0;

/// The penalty energy of a constraint set and its derivatives (`kernels/recovery/penalty.comp`).
#[derive(Debug, Clone, PartialEq)]
pub struct Penalty {
    /// Σ ½ k min(c, 0)² over the constraints (J).
    pub energy: f64,
    /// ∂E/∂x per vertex (N).
    pub gradient: Vec<[f64; 3]>,
    /// Per vertex, the 3×3 block Σ k S |a| n nᵀ (row-major, N/m; a: the vertex's coefficient
    /// in the constraint, S = Σ_j |a_j|): block-diagonal, it majorizes the penalty Hessian
    /// k a aᵀ ⊗ n nᵀ, whose couplings between a constraint's vertices the Newton matrix cannot
    /// hold (Cauchy–Schwarz), so a Newton step never overshoots a constraint.
    pub hessian_majorizer: Vec<[f64; 9]>,
    /// Per vertex the exact diagonal blocks Σ k a² n nᵀ of the penalty Hessian (one term per
    /// coefficient; the couplings are [`penalty_hessian_mul`] minus these).
    pub hessian_diagonal: Vec<[f64; 9]>,
}

/// A constraint's (vertex, coefficient) terms (w for the point side, −b for the face side), its
/// normal and its value (p − s)·n − offset at `positions`, in f64.
fn violation(
    positions: &[[f32; 4]],
    c: &Contact,
    offset: f64,
) -> (Vec<(u32, f64)>, Vector3<f64>, f64) {
    let mut terms: Vec<(u32, f64)> = vec![(c.p[0], c.w[0] as f64)];
    if c.p[1] != INVALID {
        terms.push((c.p[1], c.w[1] as f64));
    }
    let sides = if c.f[2] != INVALID { 3 } else { 2 };
    for j in 0..sides {
        terms.push((c.f[j], -(c.b[j] as f64)));
    }
    let nrm = Vector3::new(c.n[0] as f64, c.n[1] as f64, c.n[2] as f64);
    let x = |v: u32| {
        let p = positions[v as usize];
        Vector3::new(p[0] as f64, p[1] as f64, p[2] as f64)
    };
    let value = terms
        .iter()
        .map(|&(v, a)| a * x(v))
        .sum::<Vector3<f64>>()
        .dot(&nrm)
        - offset;
    (terms, nrm, value)
}

/// The penalty energy ½ k min((p − s)·n − offset, 0)² of the shortest-path paper's Eq. 7 over
/// the active constraints, with p and s moving with their vertices (weights and barycentrics
/// fixed), in f64.
pub fn penalty(positions: &[[f32; 4]], contacts: &[Contact], offset: f64, k: f64) -> Penalty {
    let n = positions.len();
    let mut out = Penalty {
        energy: 0.0,
        gradient: vec![[0.0; 3]; n],
        hessian_majorizer: vec![[0.0; 9]; n],
        hessian_diagonal: vec![[0.0; 9]; n],
    };
    for c in contacts.iter().filter(|c| c.active) {
        let (terms, nrm, value) = violation(positions, c, offset);
        if !(value < 0.0) {
            continue;
        }
        out.energy += 0.5 * k * value * value;
        let sum_abs: f64 = terms.iter().map(|t| t.1.abs()).sum();
        for &(v, a) in &terms {
            let g = &mut out.gradient[v as usize];
            let h = &mut out.hessian_majorizer[v as usize];
            let hd = &mut out.hessian_diagonal[v as usize];
            for r in 0..3 {
                g[r] += k * value * a * nrm[r];
                for s in 0..3 {
                    h[3 * r + s] += k * sum_abs * a.abs() * nrm[r] * nrm[s];
                    hd[3 * r + s] += k * a * a * nrm[r] * nrm[s];
                }
            }
        }
    }
    out
}

/// The product of the exact penalty Hessian Σ_c k a aᵀ ⊗ n nᵀ (violated constraints at
/// `positions`) with `p`, rows and columns of fixed vertices (inverse mass 0) left out: what the
/// Newton PCG multiplies by (`kernels/solver/contact_gather.comp` plus the diagonal blocks).
pub fn penalty_hessian_mul(
    positions: &[[f32; 4]],
    contacts: &[Contact],
    offset: f64,
    k: f64,
    inverse_masses: &[f32],
    p: &[[f64; 3]],
) -> Vec<[f64; 3]> {
    let mut q = vec![[0.0; 3]; positions.len()];
    let free = |v: u32| inverse_masses[v as usize] != 0.0;
    for c in contacts.iter().filter(|c| c.active) {
        let (terms, nrm, value) = violation(positions, c, offset);
        if !(value < 0.0) {
            continue;
        }
        let t: f64 = terms
            .iter()
            .filter(|t| free(t.0))
            .map(|&(v, a)| a * Vector3::from(p[v as usize]).dot(&nrm))
            .sum();
        for &(v, a) in terms.iter().filter(|t| free(t.0)) {
            for r in 0..3 {
                q[v as usize][r] += k * a * t * nrm[r];
            }
        }
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block-diagonal majorizer bounds the penalty's true Hessian k a aᵀ ⊗ n nᵀ from above
    /// along every direction, and the gradient is the energy's derivative.
    #[test]
    fn penalty_majorizer_bounds_the_hessian_and_the_gradient_is_exact() {
        // An edge point (vertices 0, 1) pushed into a face (2, 3, 4); deterministic "random"
        // numbers from a fixed LCG.
        let mut seed = 12345u64;
        let mut r = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
        };
        let nrm = Vector3::new(0.3, -0.5, 0.8).normalize();
        let c = Contact {
            p: [0, 1],
            w: [0.3, 0.7],
            face: 0,
            f: [2, 3, 4],
            b: [0.2, 0.5, 0.3],
            n: [nrm.x as f32, nrm.y as f32, nrm.z as f32],
            active: true,
        };
        let x: Vec<[f32; 4]> = (0..5)
            .map(|i| {
                let z = if i < 2 { -0.05 } else { 0.0 };
                [
                    r() as f32 * 0.01,
                    r() as f32 * 0.01,
                    z + r() as f32 * 0.001,
                    0.0,
                ]
            })
            .collect();
        let k = 1e4;
        let p = penalty(&x, &[c], 1e-3, k);
        assert!(p.energy > 0.0);
        let a = [0.3f32, 0.7, -0.2, -0.5, -0.3].map(|v| v as f64);
        for _ in 0..100 {
            let d: Vec<Vector3<f64>> = (0..5).map(|_| Vector3::new(r(), r(), r())).collect();
            let along: f64 = (0..5).map(|i| a[i] * nrm.dot(&d[i])).sum();
            let exact = k * along * along;
            let bound: f64 = (0..5)
                .map(|i| {
                    let m = nalgebra::Matrix3::from_row_slice(&p.hessian_majorizer[i]);
                    d[i].dot(&(m * d[i]))
                })
                .sum();
            assert!(exact <= bound * (1.0 + 1e-6) + 1e-9, "{exact} > {bound}");
            // The exact Hessian product: dᵀ H d = k (Σ a_i n·d_i)², its diagonal blocks a_i².
            let pd: Vec<[f64; 3]> = d.iter().map(|v| [v.x, v.y, v.z]).collect();
            let hd = penalty_hessian_mul(&x, &[c], 1e-3, k, &[1.0; 5], &pd);
            // (with the normal as stored, in f32)
            let n32 = Vector3::from(c.n.map(f64::from));
            let along32: f64 = (0..5).map(|i| a[i] * n32.dot(&d[i])).sum();
            let exact32 = k * along32 * along32;
            let quad: f64 = (0..5).map(|i| d[i].dot(&Vector3::from(hd[i]))).sum();
            assert!(
                (quad - exact32).abs() <= 1e-9 * exact32.max(1.0),
                "{quad} vs {exact32}"
            );
            for i in 0..5 {
                let m = nalgebra::Matrix3::from_row_slice(&p.hessian_diagonal[i]);
                let want = k * a[i] * a[i] * n32.dot(&d[i]).powi(2);
                assert!((d[i].dot(&(m * d[i])) - want).abs() <= 1e-9 * want.max(1.0));
            }
            // A fixed vertex takes no part.
            let mut im = [1.0f32; 5];
            im[3] = 0.0;
            let hf = penalty_hessian_mul(&x, &[c], 1e-3, k, &im, &pd);
            assert_eq!(hf[3], [0.0; 3]);
        }
        // Central differences of the energy against the gradient.
        let h = 1e-4f32;
        for v in 0..5 {
            for dim in 0..3 {
                let mut xp = x.clone();
                let mut xm = x.clone();
                xp[v][dim] += h;
                xm[v][dim] -= h;
                let fd = (penalty(&xp, &[c], 1e-3, k).energy - penalty(&xm, &[c], 1e-3, k).energy)
                    / (2.0 * h as f64);
                let g = p.gradient[v][dim];
                assert!(
                    (fd - g).abs() <= 1e-2 * g.abs().max(1.0),
                    "{v}[{dim}]: {fd} vs {g}"
                );
            }
        }
    }
}
