//! Plain-Rust twins of the BAL GPU kernels (`kernels/bal/`, host `engine/src/contact/bal/`), on the GPU
//! data layout: candidate stencils from the proximity search's pair records, the active list
//! sorted by 64-bit pair key, the augmentation state carried by key, the A′ rule and the dual
//! update, friction lags, per-stencil terms (contact slots then friction slots), the
//! node → stencil-corner incidence, the per-node gathers, the contact-block SpMV and the CCD
//! step bound. Values are f64 (the terms come from [`super::pair`] and [`super::friction`]); the
//! CCD bound runs the f32 CCD like the GPU ([`crate::cpu_reference::ccd`]).

use super::super::ccd::{ccd, CcdKind};
use super::super::distance::{edge_edge, point_triangle};
use super::super::fem::Mat12;
use super::barrier::{barrier, barrier_first_derivative, mollifier_threshold};
use super::distance::{closest, StencilKind};
use super::friction::{friction_terms, lag, FrictionLag};
use super::pair::{pair_energy, pair_terms, Augmentation, PairParams};
use nalgebra::Vector3;

/// Marker of an empty slot's vertices.
pub const NONE: u32 = u32::MAX;

pub use crate::contact::bal::KeyBits;

/// The 64-bit key of an active pair (orders like [`super::problem::PairKey`]; candidates not
/// closer than d̂ carry the inactive bit `1 << (total − 1)` on top).
pub fn pair_key(kind: StencilKind, a: u32, b: u32, bits: KeyBits) -> u64 {
    ((kind as u64) << (bits.a + bits.b)) | ((a as u64) << bits.b) | b as u64
}

/// One candidate stencil of the proximity search's records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CandidateStencil {
    /// Candidate slot (vertex–triangle records first, then edge–edge from `cap_vt`).
    pub slot: usize,
    /// Stencil kind.
    pub kind: StencilKind,
    /// Vertex or first edge.
    pub a: u32,
    /// Triangle or second edge.
    pub b: u32,
    /// Corner vertices.
    pub vertices: [u32; 4],
}

/// The valid candidate stencils of the search's records (`candidates.glsl`).
pub fn candidate_stencils(
    pairs_vt: &[[u32; 4]],
    pairs_ee: &[[u32; 4]],
    counts: [u32; 2],
    triangles: &[[u32; 4]],
    edges: &[[u32; 2]],
) -> Vec<CandidateStencil> {
    let cap_vt = pairs_vt.len();
    let mut out = Vec::new();
    for (i, r) in pairs_vt.iter().enumerate().take(counts[0] as usize) {
        let t = triangles[r[1] as usize];
        out.push(CandidateStencil {
            slot: i,
            kind: StencilKind::PointTriangle,
            a: r[0],
            b: r[1],
            vertices: [r[0], t[0], t[1], t[2]],
        });
    }
    for (i, r) in pairs_ee.iter().enumerate().take(counts[1] as usize) {
        let (ea, eb) = (edges[r[0] as usize], edges[r[1] as usize]);
        out.push(CandidateStencil {
            slot: cap_vt + i,
            kind: StencilKind::EdgeEdge,
            a: r[0],
            b: r[1],
            vertices: [ea[0], ea[1], eb[0], eb[1]],
        });
    }
    out
}

fn corners(v: &[u32; 4], x: &[Vector3<f64>]) -> [Vector3<f64>; 4] {
    v.map(|i| x[i as usize])
}

/// Mollifier threshold of a candidate from the rest squared edge lengths (0 for vertex–triangle).
pub fn candidate_mollifier(c: &CandidateStencil, rest_sq: &[f64]) -> f64 {
    match c.kind {
        StencilKind::PointTriangle => 0.0,
        StencilKind::EdgeEdge => mollifier_threshold(rest_sq[c.a as usize], rest_sq[c.b as usize]),
    }
}

/// One pair of the active list (GPU: `pair_verts`, `pair_info`, `pair_d`, `pair_aug`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ActivePair {
    /// Sort key.
    pub key: u64,
    /// Stencil kind.
    pub kind: StencilKind,
    /// Closest-feature code at the list's positions.
    pub code: u32,
    /// Primitives.
    pub a: u32,
    /// Primitives.
    pub b: u32,
    /// Corner vertices.
    pub vertices: [u32; 4],
    /// Distance (m).
    pub d: f64,
    /// Edge–edge mollifier threshold (m⁴; 0 for vertex–triangle).
    pub mollifier_eps: f64,
    /// `(μ, s, in A′, was in A′)`.
    pub aug: [f64; 4],
}

/// `active_keys.comp` + sort + `active_build.comp`: the candidates closer than d̂, in key order.
pub fn active_set(
    cands: &[CandidateStencil],
    x: &[Vector3<f64>],
    d_hat: f64,
    rest_sq: &[f64],
    bits: KeyBits,
) -> Vec<ActivePair> {
    let mut out: Vec<ActivePair> = cands
        .iter()
        .filter_map(|c| {
            let (sq, code, _) = closest(c.kind, &corners(&c.vertices, x));
            let d = sq.sqrt();
            (d < d_hat).then_some(ActivePair {
                key: pair_key(c.kind, c.a, c.b, bits),
                kind: c.kind,
                code,
                a: c.a,
                b: c.b,
                vertices: c.vertices,
                d,
                mollifier_eps: candidate_mollifier(c, rest_sq),
                aug: [0.0; 4],
            })
        })
        .collect();
    out.sort_by_key(|p| p.key);
    out
}

/// Carries `(μ, s)` of the pairs of A′ in `prev` to the same keys in `new`, marking them "was
/// in A′" (flag cleared until the rule).
pub fn carry(prev: &[ActivePair], new: &mut [ActivePair]) {
    for p in new.iter_mut() {
        p.aug = [0.0; 4];
        if let Ok(i) = prev.binary_search_by_key(&p.key, |q| q.key) {
            let q = prev[i].aug;
            if q[2] != 0.0 {
                p.aug = [q[0], q[1], 0.0, 1.0];
            }
        }
    }
}

/// `multipliers.comp` MODE 0: rule 0 empty, 1 rebuild (`d < threshold`), 2 keep.
pub fn apply_rule(rule: u32, threshold: f64, pairs: &mut [ActivePair]) {
    for p in pairs.iter_mut() {
        let was = p.aug[3] != 0.0;
        let in_aug = match rule {
            1 => p.d < threshold,
            2 => was,
            _ => false,
        };
        p.aug = if !in_aug {
            [0.0; 4]
        } else if !was {
            [0.0, 0.0, 1.0, 0.0]
        } else {
            [p.aug[0], p.aug[1], 1.0, p.aug[3]]
        };
    }
}

/// `multipliers.comp` MODE 1 at positions `x`: `s = max(−μ/σ − d̂ + d, 0)`, `μ += σ b(d, d̂ + s)`.
pub fn dual_update(pairs: &mut [ActivePair], x: &[Vector3<f64>], sigma: f64, d_hat: f64) {
    for p in pairs.iter_mut().filter(|p| p.aug[2] != 0.0) {
        let d = closest(p.kind, &corners(&p.vertices, x)).0.sqrt();
        p.aug[1] = (-p.aug[0] / sigma - d_hat + d).max(0.0);
        p.aug[0] += sigma * barrier(d, d_hat + p.aug[1]);
    }
}

fn augmentation(p: &ActivePair) -> Option<Augmentation> {
    (p.aug[2] != 0.0).then_some(Augmentation {
        mu: p.aug[0],
        s: p.aug[1],
    })
}

/// `friction_lag.comp`: the lag of every pair (`None` without a positive normal force or χ).
pub fn friction_lags(
    pairs: &[ActivePair],
    x: &[Vector3<f64>],
    sigma: f64,
    d_hat: f64,
    chi: f64,
) -> Vec<Option<FrictionLag>> {
    pairs
        .iter()
        .map(|p| {
            if !(p.d < d_hat && chi > 0.0) {
                return None;
            }
            let mut l = -sigma * barrier_first_derivative(p.d, d_hat);
            if let Some(a) = augmentation(p) {
                l += a.mu - sigma * barrier_first_derivative(p.d, d_hat + a.s);
            }
            let v = p.vertices.map(|i| i as usize);
            (l > 0.0)
                .then(|| lag(p.kind, v, &corners(&p.vertices, x), l))
                .flatten()
        })
        .collect()
}

/// Terms of one stencil slot (`pair_terms.comp`).
#[derive(Debug, Clone, PartialEq)]
pub struct StencilTerm {
    /// Corner vertices (`[NONE; 4]` for an empty slot).
    pub vertices: [u32; 4],
    /// Energy: augmentation part (contact slots) or friction (friction slots) (J).
    pub energy: f64,
    /// Gradient per corner (N).
    pub gradient: [Vector3<f64>; 4],
    /// PSD Hessian (N/m).
    pub hessian: Mat12,
    /// Warm-start stiffness per corner (N/m).
    pub stiffness: [f64; 4],
}

impl StencilTerm {
    fn empty() -> Self {
        StencilTerm {
            vertices: [NONE; 4],
            energy: 0.0,
            gradient: [Vector3::zeros(); 4],
            hessian: Mat12::zeros(),
            stiffness: [0.0; 4],
        }
    }
}

/// Parameters of the stencil terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TermParams {
    /// σ (N/m).
    pub sigma: f64,
    /// d̂ (m).
    pub d_hat: f64,
    /// ε_v h (m).
    pub eps_f: f64,
    /// χ.
    pub chi: f64,
}

/// `pair_terms.comp`: `2 P` slots, contact pairs (padded to `capacity`) then friction lags.
pub fn stencil_terms(
    pairs: &[ActivePair],
    lags: &[Option<FrictionLag>],
    capacity: usize,
    x: &[Vector3<f64>],
    x_start: &[Vector3<f64>],
    p: TermParams,
) -> Vec<StencilTerm> {
    let mut out = vec![StencilTerm::empty(); 2 * capacity];
    for (i, pair) in pairs.iter().enumerate() {
        let params = PairParams {
            sigma: p.sigma,
            d_hat: p.d_hat,
            augmentation: augmentation(pair),
            mollifier_eps: pair.mollifier_eps,
        };
        if let Some(ev) = pair_terms(pair.kind, &corners(&pair.vertices, x), &params) {
            out[i] = StencilTerm {
                vertices: pair.vertices,
                energy: ev.energy.augmentation,
                gradient: std::array::from_fn(|k| ev.gradient.fixed_rows::<3>(3 * k).into_owned()),
                hessian: ev.hessian,
                stiffness: ev.corner_stiffness,
            };
        }
    }
    for (i, l) in lags.iter().enumerate() {
        if let Some(l) = l {
            let v = l.vertices.map(|k| k as u32);
            let (e, g, h, st) =
                friction_terms(l, &corners(&v, x), &corners(&v, x_start), p.chi, p.eps_f);
            out[capacity + i] = StencilTerm {
                vertices: v,
                energy: e,
                gradient: std::array::from_fn(|k| g.fixed_rows::<3>(3 * k).into_owned()),
                hessian: h,
                stiffness: st,
            };
        }
    }
    out
}

/// `active_keys.comp` / `candidate_energy.comp`: the summed mollified barrier energy of the
/// candidates at `x` (J).
pub fn candidate_energy(
    cands: &[CandidateStencil],
    x: &[Vector3<f64>],
    sigma: f64,
    d_hat: f64,
    rest_sq: &[f64],
) -> f64 {
    cands
        .iter()
        .map(|c| {
            let p = PairParams {
                sigma,
                d_hat,
                augmentation: None,
                mollifier_eps: candidate_mollifier(c, rest_sq),
            };
            pair_energy(c.kind, &corners(&c.vertices, x), &p).barrier
        })
        .sum()
}

/// `stencil_energy.comp`: summed augmentation (contact slots) and friction energies at `x` (J).
pub fn stencil_energy(
    pairs: &[ActivePair],
    lags: &[Option<FrictionLag>],
    x: &[Vector3<f64>],
    x_start: &[Vector3<f64>],
    p: TermParams,
) -> f64 {
    let mut e = 0.0;
    for pair in pairs.iter().filter(|q| q.aug[2] != 0.0) {
        let params = PairParams {
            sigma: p.sigma,
            d_hat: p.d_hat,
            augmentation: augmentation(pair),
            mollifier_eps: pair.mollifier_eps,
        };
        e += pair_energy(pair.kind, &corners(&pair.vertices, x), &params).augmentation;
    }
    for l in lags.iter().flatten() {
        let v = l.vertices.map(|k| k as u32);
        e += friction_terms(l, &corners(&v, x), &corners(&v, x_start), p.chi, p.eps_f).0;
    }
    e
}

/// Per-node sums of `gather.comp`: gradient (N), diagonal block (N/m) and stiffness (N/m).
pub fn gather(
    terms: &[StencilTerm],
    nv: usize,
) -> (Vec<Vector3<f64>>, Vec<nalgebra::Matrix3<f64>>, Vec<f64>) {
    let mut g = vec![Vector3::zeros(); nv];
    let mut d = vec![nalgebra::Matrix3::zeros(); nv];
    let mut e = vec![0.0; nv];
    for t in terms.iter().filter(|t| t.vertices[0] != NONE) {
        for k in 0..4 {
            let v = t.vertices[k] as usize;
            g[v] += t.gradient[k];
            d[v] += t.hessian.fixed_view::<3, 3>(3 * k, 3 * k);
            e[v] += t.stiffness[k];
        }
    }
    (g, d, e)
}

/// `system_add.comp` MODE 0: `rhs -= node gradient` on free vertices (inverse mass ≠ 0);
/// returns the squared norm of the new right-hand side (N²).
pub fn system_add_gradient(
    inv_mass: &[f64],
    node_gradient: &[Vector3<f64>],
    rhs: &mut [Vector3<f64>],
) -> f64 {
    let mut norm2 = 0.0;
    for (v, r) in rhs.iter_mut().enumerate() {
        if inv_mass[v] != 0.0 {
            *r -= node_gradient[v];
            norm2 += r.norm_squared();
        }
    }
    norm2
}

/// `system_add.comp` MODE 2: the sums of σ⁰ (spec §A3, §A7 #2) over free vertices, from the
/// unit-σ node gradient b (N) and the stepper's right-hand side r = −∇E (N): (−Σ b·r, Σ |b|²).
pub fn system_add_sigma0(
    inv_mass: &[f64],
    node_gradient: &[Vector3<f64>],
    rhs: &[Vector3<f64>],
) -> (f64, f64) {
    let (mut dot, mut norm2) = (0.0, 0.0);
    for v in (0..rhs.len()).filter(|&v| inv_mass[v] != 0.0) {
        dot -= node_gradient[v].dot(&rhs[v]);
        norm2 += node_gradient[v].norm_squared();
    }
    (dot, norm2)
}

/// `system_add.comp` MODE 1: diagonal blocks `+=` node blocks (N/m), their inverses (m/N)
/// recomputed ([`crate::cpu_reference::pcg::block_inverse_abs_f64`]) and stiffness `+=` node stiffness (N/m), on free vertices only.
pub fn system_add_hessian(
    inv_mass: &[f64],
    node_diag: &[nalgebra::Matrix3<f64>],
    node_stiffness: &[f64],
    diag: &mut [nalgebra::Matrix3<f64>],
    inverse: &mut [nalgebra::Matrix3<f64>],
    stiffness: &mut [f64],
) {
    for v in (0..diag.len()).filter(|&v| inv_mass[v] != 0.0) {
        diag[v] += node_diag[v];
        inverse[v] = crate::cpu_reference::pcg::block_inverse_abs_f64(&diag[v]);
        stiffness[v] += node_stiffness[v];
    }
}

/// `contact_spmv.comp`: `y += C p`, C the off-diagonal blocks of every stencil.
pub fn contact_spmv(terms: &[StencilTerm], p: &[Vector3<f64>], y: &mut [Vector3<f64>]) {
    for t in terms.iter().filter(|t| t.vertices[0] != NONE) {
        for k in 0..4 {
            for l in (0..4).filter(|&l| l != k) {
                y[t.vertices[k] as usize] +=
                    t.hessian.fixed_view::<3, 3>(3 * k, 3 * l) * p[t.vertices[l] as usize];
            }
        }
    }
}

/// `ccd_bound.comp` in f32 like the GPU: the smallest conservative time of impact of the
/// candidates' straight motion `x → x + dir` keeping `ξ d(x)` (1 without a hit).
pub fn ccd_bound(cands: &[CandidateStencil], x: &[[f32; 4]], dir: &[[f32; 4]], xi: f32) -> f32 {
    let v3 = |p: &[f32; 4]| Vector3::new(p[0], p[1], p[2]);
    let mut t = 1.0f32;
    for c in cands {
        let x0 = c.vertices.map(|i| v3(&x[i as usize]));
        let x1: [Vector3<f32>; 4] =
            std::array::from_fn(|k| x0[k] + v3(&dir[c.vertices[k] as usize]));
        let (sq, kind) = match c.kind {
            StencilKind::PointTriangle => (
                point_triangle(&x0[0], &x0[1], &x0[2], &x0[3]).sq_dist,
                CcdKind::PointTriangle,
            ),
            StencilKind::EdgeEdge => (
                edge_edge(&x0[0], &x0[1], &x0[2], &x0[3]).sq_dist,
                CcdKind::EdgeEdge,
            ),
        };
        let r = ccd(kind, &x0, &x1, xi * sq.sqrt());
        if r.hit {
            t = t.min(r.toi);
        }
    }
    t
}
