//! Two-way interior point collision handling (two-way IPM paper, Algorithm 1), plain Rust in
//! f64: twin of `kernels/collision/two_way_*.comp` and `kernels/include/two_way.glsl` (same
//! constraints, same update order within a color), and a complete host solver
//! ([`Solver`]) on brute-force proximity pairs for property tests.
//!
//! Each step l: the contact pairs found by the last proximity search (distance < D_max at the
//! search) give per-vertex distances D_i at x^(l) (Eq. 18); the backward step runs one projected
//! Gauss–Seidel sweep over the contact colors, then the edge-length colors, updating the target
//! y and the multipliers λ (Eq. 13, linearised at x^(l)); the forward step moves every vertex
//! toward y by at most γ_f D_i (γ_f = γ / 2, Eq. 20) and advances its clock r_i; the reuse bound
//! D^(l+1) = D^(l) − 2 max_i |Δx_i| asks for a new search under D_min (§3.1).

use super::distance::{edge_edge, point_triangle, EdgeEdgeKind, PointTriangleKind};
use crate::contact::colliders::Collider;
use crate::contact::two_way::solve::{TwState, FLAG_SEARCH};
use crate::math::Vec3;

/// Pair type of a contact constraint: vertex–triangle `[v, t0, t1, t2]`.
pub const TYPE_VT: u32 = 0;
/// Pair type of a contact constraint: edge–edge `[a0, a1, b0, b1]`.
pub const TYPE_EE: u32 = 1;

/// A linearised constraint: value c(x) and gradient J = ∂c/∂x_k for its four vertex slots.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Linear {
    /// Constraint value (dimensionless, ≥ 0 when satisfied).
    pub c: f64,
    /// Gradient per vertex slot (1/m).
    pub jacobian: [Vec3; 4],
}

/// Capacities a proximity search's status is checked against (`two_way_accept.comp`'s push
/// constants; [`crate::proximity::spatial_hash::HashParams`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchCapacities {
    /// Cell entries.
    pub entries: u32,
    /// Vertex–triangle pairs.
    pub vertex_triangle: u32,
    /// Edge–edge pairs.
    pub edge_edge: u32,
    /// Vertex–triangle candidates.
    pub candidates_vertex_triangle: u32,
    /// Edge–edge candidates.
    pub candidates_edge_edge: u32,
}

/// `two_way_accept.comp`: the solve state after a search queued within a step batch, from the
/// search's status `{entries, vt, ee, candidates vt, candidates ee, saturated, one frame}`, the
/// constraint count `pairs` and the coloring's status `{0, overflowed, colors, rounds}`. A
/// search that fit its buffers is taken (bound `d_max`, the search flag cleared, counters
/// updated); one that overflowed drops the bound to −1 and sets the search flag, which stops
/// every later step of the batch.
pub fn accept_search(
    state: &TwState,
    status: &[u32; 7],
    caps: &SearchCapacities,
    pairs: u32,
    coloring: &[u32; 4],
    d_max: f32,
) -> TwState {
    let mut s = *state;
    let fits = status[0] <= caps.entries
        && status[5] == 0
        && status[1] <= caps.vertex_triangle
        && status[2] <= caps.edge_edge
        && status[3] <= caps.candidates_vertex_triangle
        && status[4] <= caps.candidates_edge_edge;
    if !fits {
        s.bound = -1.0;
        s.flags |= FLAG_SEARCH;
        return s;
    }
    s.bound = d_max;
    s.flags &= !FLAG_SEARCH;
    s.pairs = pairs;
    s.searches += 1;
    s.pairs_max = s.pairs_max.max(pairs);
    s.colors_max = s.colors_max.max(coloring[2]);
    s.uncolored_max = s.uncolored_max.max(coloring[1]);
    s
}

/// Closest-feature code of a pair, decided in f32 exactly as the GPU decides it (parallel edges
/// and other ties make the choice precision-dependent; the constraint form follows it).
pub fn closest_kind_f32(ty: u32, x: &[Vec3; 4]) -> u32 {
    let q = x.map(|p| p.map(|c| c as f32));
    if ty == TYPE_VT {
        point_triangle(&q[0], &q[1], &q[2], &q[3]).kind as u32
    } else {
        edge_edge(&q[0], &q[1], &q[2], &q[3]).kind as u32
    }
}

/// Closest-feature code and distance (m) of a pair at `x` (codes of `cpu_reference::distance`).
pub fn closest(ty: u32, x: &[Vec3; 4]) -> (u32, f64) {
    if ty == TYPE_VT {
        let c = point_triangle(&x[0], &x[1], &x[2], &x[3]);
        (c.kind as u32, c.sq_dist.sqrt())
    } else {
        let c = edge_edge(&x[0], &x[1], &x[2], &x[3]);
        (c.kind as u32, c.sq_dist.sqrt())
    }
}

fn volume(x: &[Vec3; 4], base: f64, delta: f64) -> Option<Linear> {
    let (a, b, c) = (x[1] - x[0], x[2] - x[0], x[3] - x[0]);
    let g1 = b.cross(&c) / 6.0;
    let g2 = c.cross(&a) / 6.0;
    let g3 = a.cross(&b) / 6.0;
    let g0 = -(g1 + g2 + g3);
    let v = a.dot(&g1);
    let vr = if v < 0.0 { -1.0 } else { 1.0 } * base * delta;
    if vr.abs() <= 0.0 || !vr.is_finite() {
        return None;
    }
    Some(Linear {
        c: v / vr - 1.0,
        jacobian: [g0 / vr, g1 / vr, g2 / vr, g3 / vr],
    })
}

fn area(x: &[Vec3; 4], ip: usize, ie0: usize, ie1: usize, delta: f64) -> Option<Linear> {
    let (p, e0, e1) = (x[ip], x[ie0], x[ie1]);
    let u = (e0 - p).cross(&(e1 - p));
    let lu = u.norm();
    let ar = (e1 - e0).norm() * delta * 0.5;
    if lu <= 0.0 || ar <= 0.0 {
        return None;
    }
    let n = u / lu;
    let mut j = [Vec3::zeros(); 4];
    j[ie0] = 0.5 * (e1 - p).cross(&n) / ar;
    j[ie1] = 0.5 * n.cross(&(e0 - p)) / ar;
    j[ip] = -(j[ie0] + j[ie1]);
    Some(Linear {
        c: 0.5 * lu / ar - 1.0,
        jacobian: j,
    })
}

fn point(x: &[Vec3; 4], ia: usize, ib: usize, delta: f64) -> Option<Linear> {
    let d = x[ib] - x[ia];
    let l = d.norm();
    if l <= 0.0 {
        return None;
    }
    let mut j = [Vec3::zeros(); 4];
    j[ib] = d / (l * delta);
    j[ia] = -j[ib];
    Some(Linear {
        c: l / delta - 1.0,
        jacobian: j,
    })
}

/// The contact constraint of a pair of type `ty` linearised at `x`, its form chosen by the
/// closest features (`two_way.glsl::tw_contact`, decided in f32 as on the GPU); `None` when
/// degenerate (zero distance).
pub fn contact_constraint(ty: u32, x: &[Vec3; 4], delta: f64) -> Option<Linear> {
    let kind = closest_kind_f32(ty, x);
    if ty == TYPE_VT {
        return match PointTriangleKind::from_code(kind)? {
            PointTriangleKind::Face => {
                let a2 = (x[2] - x[1]).cross(&(x[3] - x[1])).norm();
                volume(x, a2 / 6.0, delta)
            }
            PointTriangleKind::Edge01 => area(x, 0, 1, 2, delta),
            PointTriangleKind::Edge12 => area(x, 0, 2, 3, delta),
            PointTriangleKind::Edge20 => area(x, 0, 3, 1, delta),
            k => point(x, 0, 1 + k as usize, delta),
        };
    }
    match EdgeEdgeKind::from_code(kind)? {
        EdgeEdgeKind::AB => {
            let cr = (x[1] - x[0]).cross(&(x[3] - x[2])).norm();
            volume(x, cr / 6.0, delta)
        }
        EdgeEdgeKind::AB0 => area(x, 2, 0, 1, delta),
        EdgeEdgeKind::AB1 => area(x, 3, 0, 1, delta),
        EdgeEdgeKind::A0B => area(x, 0, 2, 3, delta),
        EdgeEdgeKind::A1B => area(x, 1, 2, 3, delta),
        k => point(x, (k as usize) >> 1, 2 + (k as usize & 1), delta),
    }
}

/// The edge-length constraint `σ − |x_i − x_j| / L0` (Eq. 17) at `xi`, `xj` (slots 0 and 1).
pub fn edge_constraint(xi: &Vec3, xj: &Vec3, rest: f64, sigma: f64) -> Option<Linear> {
    let d = xi - xj;
    let l = d.norm();
    if l <= 0.0 {
        return None;
    }
    let g = d / (l * rest);
    Some(Linear {
        c: sigma - l / rest,
        jacobian: [-g, g, Vec3::zeros(), Vec3::zeros()],
    })
}

/// One projected Gauss–Seidel update (`two_way.glsl::tw_pgs`): returns the new multiplier and
/// moves the targets `y` of the constraint's vertices (inverse weights `w`).
pub fn pgs(lin: &Linear, x: &[Vec3; 4], y: &mut [Vec3; 4], w: [f64; 4], lambda: f64) -> f64 {
    let mut r = lin.c;
    let mut denom = 0.0;
    for k in 0..4 {
        r += lin.jacobian[k].dot(&(y[k] - x[k]));
        denom += w[k] * lin.jacobian[k].norm_squared();
    }
    if denom <= 0.0 {
        return lambda;
    }
    let ln = (lambda - r / denom).max(0.0);
    let dl = ln - lambda;
    for k in 0..4 {
        y[k] += lin.jacobian[k] * (w[k] * dl);
    }
    ln
}

/// Settings of Algorithm 1 (SI units; the paper's Table 3 defaults in [`Settings::paper`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// D_min (m): a new proximity search when the reuse bound falls below it.
    pub d_min: f64,
    /// D_max (m): the proximity search distance.
    pub d_max: f64,
    /// δ (m): the separation the contact constraints ask for.
    pub delta: f64,
    /// σ: the stretch limit of the edge-length constraints.
    pub sigma: f64,
    /// Step fraction γ_f of D_i a vertex may move per step (the paper's γ/2; OGC's γ_p).
    pub step_fraction: f64,
    /// ε: stop when every clock r_i is below it.
    pub epsilon: f64,
    /// L: steps per solve at most.
    pub max_steps: u32,
    /// ξ (m): minimum separation kept by the forward step (D_i − ξ).
    pub min_separation: f64,
    /// Floor release θ (m; 0: off): pairs closer than θ are floor pairs ([`release_fractions`]).
    pub release_distance: f64,
}

impl Settings {
    /// The paper's Table 3: L = 512, D_min = 2 mm, D_max = 4 mm, δ = 1 mm, σ = 1.1, γ = 0.9,
    /// ε = 1e-4.
    pub fn paper() -> Self {
        use crate::contact::two_way::settings::paper;
        Settings {
            d_min: paper::D_MIN,
            d_max: paper::D_MAX,
            delta: paper::DELTA,
            sigma: paper::SIGMA,
            step_fraction: 0.5 * paper::GAMMA,
            epsilon: paper::EPSILON,
            max_steps: paper::MAX_STEPS,
            min_separation: paper::MIN_SEPARATION,
            release_distance: 0.0,
        }
    }
}

impl From<&crate::contact::two_way::TwoWaySettings> for Settings {
    /// The reference solver's settings for the GPU solver's.
    fn from(s: &crate::contact::two_way::TwoWaySettings) -> Settings {
        Settings {
            d_min: s.d_min,
            d_max: s.d_max,
            delta: s.delta,
            sigma: s.sigma,
            step_fraction: s.step_fraction(),
            epsilon: s.epsilon,
            max_steps: s.max_steps,
            min_separation: s.min_separation,
            release_distance: s.floor_release.unwrap_or(0.0),
        }
    }
}

/// Per-vertex distances D_i (Eq. 18, before the min with D^(l)): the smallest distance of the
/// pairs `cons` (first `n_vt` vertex–triangle) involving each vertex, +∞ for the others.
pub fn vertex_distances(x: &[Vec3], cons: &[[u32; 4]], n_vt: usize) -> Vec<f64> {
    let mut d = vec![f64::INFINITY; x.len()];
    for (i, c) in cons.iter().enumerate() {
        let q = c.map(|v| x[v as usize]);
        let (_, dist) = closest(if i < n_vt { TYPE_VT } else { TYPE_EE }, &q);
        for &v in c {
            d[v as usize] = d[v as usize].min(dist);
        }
    }
    d
}

/// The forward step (Eq. 20) with step fraction `fraction` = γ_f: moves `x` toward `y`, updates
/// the clocks `r`; returns the reuse bound's decrease ([`bound_decrease`]; m). Vertices with
/// `on_surface[i] == false` (none of the collision surface's primitives uses them) move freely;
/// the others keep every distance above the minimum separation `min_sep` (they use D_i − ξ and
/// stop when it is ≤ 0).
#[allow(clippy::too_many_arguments)]
pub fn forward(
    x: &mut [Vec3],
    y: &[Vec3],
    dmin: &[f64],
    bound: f64,
    fraction: f64,
    r: &mut [f64],
    on_surface: &[bool],
    min_sep: f64,
) -> f64 {
    let alpha = forward_fractions(x, y, dmin, bound, fraction, on_surface, min_sep);
    apply_fractions(x, y, &alpha, r)
}

/// The per-vertex fractions α_i of [`forward`] (1 off the collision surface).
pub fn forward_fractions(
    x: &[Vec3],
    y: &[Vec3],
    dmin: &[f64],
    bound: f64,
    fraction: f64,
    on_surface: &[bool],
    min_sep: f64,
) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let d = if on_surface[i] {
                bound.min(dmin[i]) - min_sep
            } else {
                f64::INFINITY
            };
            step_alpha(d, (y[i] - x[i]).norm(), fraction)
        })
        .collect()
}

/// The translation-invariant reuse bound's rounding margin, relative to 2 max_i |Δx_i|
/// (`two_way.glsl::TW_SPREAD_MARGIN`).
pub const SPREAD_MARGIN: f64 = 1e-6;

/// How far the vertices' displacements `d` can bring two primitives closer (m; twin of
/// `two_way_update.comp`): min(2 max_i |d_i|, |hi − lo| + [`SPREAD_MARGIN`] · 2 max_i |d_i|),
/// lo and hi the corners of the box of the d_i. Distances do not change under a common
/// translation t, so a pair's distance falls by at most 2 max_i |d_i − t|, which is at most
/// |hi − lo| for t the box's centre: a body moving as a whole keeps its reuse bound.
pub fn bound_decrease(d: impl IntoIterator<Item = Vec3>) -> f64 {
    let mut lo = Vec3::repeat(f64::INFINITY);
    let mut hi = Vec3::repeat(f64::NEG_INFINITY);
    let mut max: f64 = 0.0;
    for v in d {
        lo = lo.inf(&v);
        hi = hi.sup(&v);
        max = max.max(v.norm());
    }
    let spread = (hi - lo).map(|c| c.max(0.0)).norm();
    (2.0 * max).min(spread + SPREAD_MARGIN * 2.0 * max)
}

/// Moves every vertex by its fraction, x_i += α_i (y_i − x_i), r_i *= 1 − α_i; returns the
/// reuse bound's decrease ([`bound_decrease`] of the displacements; m).
pub fn apply_fractions(x: &mut [Vec3], y: &[Vec3], alpha: &[f64], r: &mut [f64]) -> f64 {
    bound_decrease((0..x.len()).map(|i| {
        let d = (y[i] - x[i]) * alpha[i];
        x[i] += d;
        r[i] *= 1.0 - alpha[i];
        d
    }))
}

/// Shared step fractions (`collision.shared_step`, twin of `two_way_group_fraction.comp` and
/// the group branch of `two_way_forward.comp`): every vertex of group g (`groups[i] == g`,
/// `u32::MAX`: none) takes the smallest fraction of the group's collision-surface vertices,
/// unless one of them was floor-released this step (`released[i]`), in which case the group
/// keeps its per-vertex fractions. No vertex's fraction grows, so each still moves at most its
/// own distance-bounded step (the safety argument of [`forward`] holds per vertex).
pub fn share_fractions(alpha: &mut [f64], released: &[bool], on_surface: &[bool], groups: &[u32]) {
    let mut shared: std::collections::BTreeMap<u32, Option<f64>> = Default::default();
    for i in 0..alpha.len() {
        let g = groups[i];
        if g == u32::MAX {
            continue;
        }
        let slot = shared.entry(g).or_insert(Some(1.0));
        if on_surface[i] {
            *slot = match (*slot, released[i]) {
                (_, true) | (None, _) => None,
                (Some(a), false) => Some(a.min(alpha[i])),
            };
        }
    }
    for i in 0..alpha.len() {
        if let Some(Some(a)) = shared.get(&groups[i]) {
            alpha[i] = *a;
        }
    }
}

/// Per-vertex and per-pair distances of a floor-release step at x^(l) (twin of
/// `two_way_distances.comp` with floor release on).
#[derive(Debug, Clone, PartialEq)]
pub struct FloorDistances {
    /// D_i before the min with D^(l): the smallest distance over all pairs of vertex i (m).
    pub dmin: Vec<f64>,
    /// The smallest distance over the vertex's non-floor pairs (at least θ apart; m).
    pub dfree: Vec<f64>,
    /// Per pair: the separating direction ([`separating_direction`]) and the distance.
    pub closest: Vec<(Vec3, f64)>,
}

/// [`FloorDistances`] of the pairs `cons` (first `n_vt` vertex–triangle) at `x` with floor
/// distance θ = `release`.
pub fn floor_distances(x: &[Vec3], cons: &[[u32; 4]], n_vt: usize, release: f64) -> FloorDistances {
    let mut f = FloorDistances {
        dmin: vec![f64::INFINITY; x.len()],
        dfree: vec![f64::INFINITY; x.len()],
        closest: Vec::with_capacity(cons.len()),
    };
    for (i, c) in cons.iter().enumerate() {
        let q = c.map(|v| x[v as usize]);
        let ty = if i < n_vt { TYPE_VT } else { TYPE_EE };
        let (_, diff, d) = closest_points(ty, &q);
        let n = separating_direction(ty, closest_kind_f32(ty, &q), &q, &diff);
        for &v in c {
            f.dmin[v as usize] = f.dmin[v as usize].min(d);
            if d >= release {
                f.dfree[v as usize] = f.dfree[v as usize].min(d);
            }
        }
        f.closest.push((n, d));
    }
    f
}

/// `d` without its component along `e`.
fn off_edge(d: &Vec3, e: Vec3) -> Vec3 {
    let ee = e.dot(&e);
    if ee > 0.0 {
        d - e * (d.dot(&e) / ee)
    } else {
        *d
    }
}

/// The unit direction n (or 0) of a pair's separating-plane test (twin of
/// `two_way.glsl::tw_separating_direction`): the triangle normal (vertex–face), the edges'
/// cross product (edge–edge interiors), the closest-point difference `diff` made perpendicular
/// to the edge (vertex–edge), else `diff`; oriented like `diff` (from the second primitive to
/// the first). Any unit vector gives a sound test ([`release_fractions`]); these are
/// perpendicular to the closest features up to rounding.
pub fn separating_direction(ty: u32, kind: u32, x: &[Vec3; 4], diff: &Vec3) -> Vec3 {
    let n = if ty == TYPE_VT {
        match PointTriangleKind::from_code(kind) {
            Some(PointTriangleKind::Face) => (x[2] - x[1]).cross(&(x[3] - x[1])),
            Some(PointTriangleKind::Edge01) => off_edge(diff, x[2] - x[1]),
            Some(PointTriangleKind::Edge12) => off_edge(diff, x[3] - x[2]),
            Some(PointTriangleKind::Edge20) => off_edge(diff, x[1] - x[3]),
            _ => *diff,
        }
    } else {
        match EdgeEdgeKind::from_code(kind) {
            Some(EdgeEdgeKind::AB) => (x[1] - x[0]).cross(&(x[3] - x[2])),
            Some(EdgeEdgeKind::AB0 | EdgeEdgeKind::AB1) => off_edge(diff, x[1] - x[0]),
            Some(EdgeEdgeKind::A0B | EdgeEdgeKind::A1B) => off_edge(diff, x[3] - x[2]),
            _ => *diff,
        }
    };
    let n = if n.dot(diff) < 0.0 { -n } else { n };
    let l = n.norm();
    if l > 0.0 {
        n / l
    } else {
        Vec3::zeros()
    }
}

/// The step fraction α of Eq. 20 for allowance `d` (distance bound minus the step floor) and
/// motion length `len` (`two_way.glsl::tw_alpha`).
pub fn step_alpha(d: f64, len: f64, fraction: f64) -> f64 {
    if d.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        0.0
    } else if len > fraction * d {
        fraction * d / len
    } else {
        1.0
    }
}

/// The released fraction α_i' of vertex `i`: from D_i' = min(D^(l), dfree_i) − ξ_s, capped by
/// its collider fraction `cap` ([`collider_fractions`]; 1 without one).
#[allow(clippy::too_many_arguments)]
fn released_alpha(
    x: &[Vec3],
    y: &[Vec3],
    dfree: f64,
    bound: f64,
    fraction: f64,
    step_sep: f64,
    cap: f64,
    i: usize,
) -> f64 {
    let len = (y[i] - x[i]).norm();
    step_alpha(bound.min(dfree) - step_sep, len, fraction).min(cap)
}

/// The floor-release step fractions (twin of `two_way_release.comp`): `Some(α_C)` for the
/// floor-bound vertices whose component passed the test, `None` for every other vertex (it
/// takes the distance-bounded step).
///
/// Floor pairs are the pairs closer than θ = `release` at x^(l); their vertices are *floor
/// bound* (dmin_i < θ); the floor pairs connect the floor-bound vertices into components. Every
/// vertex j has a *released* fraction α_j' = min(1, γ_f D_j' / |y_j − x_j|) from
/// D_j' = min(D^(l), dfree_j) − ξ_s, dfree_j its smallest distance over non-floor pairs (at
/// least θ apart), ξ_s = 2ξ the floor of the distance-bounded step (D_j = min(D^(l), dmin_j) −
/// ξ_s), ξ the guaranteed minimum separation. A component C moves by one fraction
/// α_C = min_{j ∈ C} α_j' if all its floor pairs pass the separating-plane test on that motion:
/// with n the pair's [`separating_direction`] at x^(l) scaled to |n| ≤ 1 (any such n is sound;
/// a good one passes more pairs), h_k(t) = n·(x_k + t α_C (y_k − x_k)) the heights of its
/// vertices and g(t) = min over the first primitive's vertices of h_k(t) − max over the
/// second's, the pair passes when min(g(0), g(1)) > ξ + 16 ε ext + 4 ε mag (ε the f32 epsilon,
/// ext the largest |point − x_0| over the pair's start and end points, mag their largest
/// coordinate: the f32 rounding of the heights and end points), or, failing that, when the
/// conservative CCD ([`super::ccd::ccd`]) with minimum separation ξ finds no hit on the same
/// straight-line motion (rotating edges, curved contact). Otherwise the whole component takes
/// the distance-bounded step.
///
/// Guarantee (every x^(l+1) and every straight-line motion x^(l) → x^(l+1) keeps every pair
/// more than ξ apart, given x^(l) does, with γ_f < ½):
/// - every vertex moves by α_j (y_j − x_j) with 0 ≤ α_j ≤ α_j' (α_C ≤ α_j' in a passed
///   component; the distance-bounded fraction otherwise, and D_j ≤ D_j' since dmin_j ≤ dfree_j);
/// - a floor pair lies inside one component. If the component passed, each h_k(t) is linear in
///   t, so g is concave (a minimum of linear functions minus a maximum of them) and
///   g(t) ≥ min(g(0), g(1)) on [0, 1]; every point a of the first primitive (a convex
///   combination of its vertices) has n·a ≥ min_k h_k(t) and every point b of the second
///   n·b ≤ max_k h_k(t), so |a − b| ≥ n·(a − b) ≥ g(t) > ξ (or the CCD, conservative up to its
///   stated error bounds, found no time at which the pair is within ξ). If it failed, all four
///   vertices take
///   the distance-bounded step, at most γ_f (d − ξ_s) each: the pair stays above ξ_s > ξ if it
///   was, and does not move if d ≤ ξ_s (α = 0 for all four);
/// - a non-floor pair (d ≥ θ): each of its vertices moves at most γ_f (d − ξ_s) (both D_j and
///   D_j' are at most d − ξ_s), so the two sides close by at most 2 γ_f (d − ξ_s) < d − ξ_s: the
///   paper's argument;
/// - pairs outside the proximity list: the reuse bound D^(l) bounds D_j' as it bounds D_j, and
///   D^(l+1) = D^(l) − 2 max_j |Δx_j| counts the released displacements.
///
/// One fraction per component is what lets stacked layers move together (their gaps keep their
/// size); a per-vertex fraction, or a test robust to any per-vertex fallback, fails exactly
/// there. The CCD alone cannot release a pair sitting at ξ (its advancement declares a hit
/// within 1.01 ξ + tol): hence the bounded step's floor 2ξ, and the plane test first (exact and
/// O(1)).
#[allow(clippy::too_many_arguments)]
pub fn release_fractions(
    x: &[Vec3],
    y: &[Vec3],
    cons: &[[u32; 4]],
    n_vt: usize,
    f: &FloorDistances,
    bound: f64,
    fraction: f64,
    min_sep: f64,
    step_sep: f64,
    release: f64,
    cap: &[f64],
) -> Vec<Option<f64>> {
    let eps = f32::EPSILON as f64;
    let n = x.len();
    let floor: Vec<usize> = (0..cons.len())
        .filter(|&i| f.closest[i].1 < release)
        .collect();
    // Components by union–find.
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for &i in &floor {
        let c = cons[i];
        for k in 1..4 {
            let (a, b) = (
                root(&mut parent, c[0] as usize),
                root(&mut parent, c[k] as usize),
            );
            parent[a] = b;
        }
    }
    let mut alpha = vec![f64::INFINITY; n];
    for &i in &floor {
        for &v in &cons[i] {
            let v = v as usize;
            let r = root(&mut parent, v);
            alpha[r] = alpha[r].min(released_alpha(
                x, y, f.dfree[v], bound, fraction, step_sep, cap[v], v,
            ));
        }
    }
    let mut failed = vec![false; n];
    for &i in &floor {
        let c = cons[i];
        let r = root(&mut parent, c[0] as usize);
        let a = alpha[r];
        let (nrm, _) = f.closest[i];
        let ln = nrm.norm();
        let first = if i < n_vt { 1 } else { 2 };
        let pass = ln > 0.0 && {
            let nrm = nrm * ((1.0 - 4.0 * eps) / ln);
            let r0 = x[c[0] as usize];
            let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
            let (mut ext, mut mag) = (0.0f64, 0.0f64);
            for (k, &j) in c.iter().enumerate() {
                let j = j as usize;
                let e = x[j] + (y[j] - x[j]) * a;
                let h = [nrm.dot(&(x[j] - r0)), nrm.dot(&(e - r0))];
                for t in 0..2 {
                    if k < first {
                        lo[t] = lo[t].min(h[t]);
                    } else {
                        hi[t] = hi[t].max(h[t]);
                    }
                }
                ext = ext.max((x[j] - r0).norm()).max((e - r0).norm());
                mag = mag.max(x[j].amax()).max(e.amax());
            }
            (lo[0] - hi[0]).min(lo[1] - hi[1]) > min_sep + 16.0 * eps * ext + 4.0 * eps * mag
        };
        // Else the conservative CCD with minimum separation ξ on the same motion (in f32, as on
        // the GPU): no hit passes too.
        let pass = pass || {
            let q0 = c.map(|j| x[j as usize].map(|v| v as f32));
            let q1 = c.map(|j| {
                let j = j as usize;
                (x[j] + (y[j] - x[j]) * a).map(|v| v as f32)
            });
            let kind = if i < n_vt {
                super::ccd::CcdKind::PointTriangle
            } else {
                super::ccd::CcdKind::EdgeEdge
            };
            !super::ccd::ccd(kind, &q0, &q1, min_sep as f32).hit
        };
        if !pass {
            failed[r] = true;
        }
    }
    let mut out = vec![None; n];
    for &i in &floor {
        for &v in &cons[i] {
            let v = v as usize;
            let r = root(&mut parent, v);
            if !failed[r] {
                out[v] = Some(alpha[r]);
            }
        }
    }
    out
}

/// One forward step from `x` toward `y` as the GPU takes it: with floor release (`release` =
/// Some(θ), [`floor_distances`], [`release_fractions`], [`forward_released`], distance-bounded
/// steps kept above 2ξ) or the paper's bound ([`vertex_distances`], [`forward`]) with the minimum
/// separation ξ = `min_separation`. Returns the reuse bound's decrease ([`bound_decrease`]; m).
#[allow(clippy::too_many_arguments)]
pub fn forward_step(
    x: &mut [Vec3],
    y: &[Vec3],
    cons: &[[u32; 4]],
    n_vt: usize,
    bound: f64,
    fraction: f64,
    min_separation: f64,
    release: Option<f64>,
    r: &mut [f64],
    on_surface: &[bool],
) -> f64 {
    let none = vec![u32::MAX; x.len()];
    let ones = vec![1.0; x.len()];
    forward_step_capped(
        x,
        y,
        cons,
        n_vt,
        bound,
        fraction,
        min_separation,
        release,
        r,
        on_surface,
        &none,
        &ones,
    )
}

/// [`forward_step`] with shared step fractions per vertex group ([`share_fractions`];
/// `groups[i] == u32::MAX`: vertex i takes its own fraction) and a collider fraction per vertex
/// (`cap`, [`collider_fractions`]; 1: none): every fraction, a floor-released component's
/// included, is capped at `cap_i` before and after the groups share theirs (twin of the
/// collider caps in `two_way_release.comp`, `two_way_group_fraction.comp` and
/// `two_way_forward.comp`).
#[allow(clippy::too_many_arguments)]
pub fn forward_step_capped(
    x: &mut [Vec3],
    y: &[Vec3],
    cons: &[[u32; 4]],
    n_vt: usize,
    bound: f64,
    fraction: f64,
    min_separation: f64,
    release: Option<f64>,
    r: &mut [f64],
    on_surface: &[bool],
    groups: &[u32],
    cap: &[f64],
) -> f64 {
    let (mut alpha, was_released) = match release {
        Some(theta) => {
            let f = floor_distances(x, cons, n_vt, theta);
            let step_sep = 2.0 * min_separation;
            let released = release_fractions(
                x,
                y,
                cons,
                n_vt,
                &f,
                bound,
                fraction,
                min_separation,
                step_sep,
                theta,
                cap,
            );
            released_step_fractions(
                x, y, &f, &released, bound, fraction, on_surface, step_sep, theta,
            )
        }
        None => {
            let dmin = vertex_distances(x, cons, n_vt);
            let alpha = forward_fractions(x, y, &dmin, bound, fraction, on_surface, min_separation);
            let none = vec![false; alpha.len()];
            (alpha, none)
        }
    };
    let capped = |alpha: &mut [f64]| {
        for (i, a) in alpha.iter_mut().enumerate() {
            *a = a.min(cap[i]);
        }
    };
    capped(&mut alpha);
    share_fractions(&mut alpha, &was_released, on_surface, groups);
    capped(&mut alpha);
    apply_fractions(x, y, &alpha, r)
}

/// Height above a collider's offset surface to which the two-way method moves a target that is
/// closer (m; `two_way.glsl::TW_COLLIDER_TARGET`).
pub const COLLIDER_TARGET: f64 = 4e-6;

/// The two-way backward step's collider constraints (twin of `two_way_collider_bound.comp`):
/// every free vertex's target (`free[i]`) closer than [`COLLIDER_TARGET`] above a collider's
/// offset surface at time `t` (its offset plus the vertex's clearance `clearance[i]`, m) is
/// moved out along the collider's normal to the vertex's own height above that surface
/// (at `x[i]`), at least [`COLLIDER_TARGET`], one pass in collider order.
pub fn collider_targets(
    x: &[Vec3],
    y: &mut [Vec3],
    free: &[bool],
    clearance: &[f64],
    colliders: &[Collider],
    t: f64,
) {
    for (i, yi) in y.iter_mut().enumerate() {
        if !free[i] {
            continue;
        }
        for c in colliders {
            let (gap, n) = c.gap(yi, t);
            let d = gap - c.offset - clearance[i];
            if d < COLLIDER_TARGET {
                let height = (c.gap(&x[i], t).0 - c.offset - clearance[i]).max(COLLIDER_TARGET);
                *yi += n * (height - d);
            }
        }
    }
}

/// The two-way forward step's collider fractions (twin of `two_way_collider_bound.comp`): per
/// free vertex, the largest α in [0, 1] such that the straight move x_i + s (y_i − x_i), s ≤ α,
/// stays at least m = ½ min(d, [`COLLIDER_TARGET`]) above the offset surface (offset plus the
/// vertex's `clearance`) of every collider it is outside of at time `t` (d > 0 its distance
/// above it now): planes by their linear distance, spheres by the first crossing of the sphere
/// inflated by m, boxes by the 1-Lipschitz bound `step_alpha(d, |y_i − x_i|, fraction)`. 1 for
/// fixed vertices and where no collider is in reach.
pub fn collider_fractions(
    x: &[Vec3],
    y: &[Vec3],
    free: &[bool],
    clearance: &[f64],
    colliders: &[Collider],
    t: f64,
    fraction: f64,
) -> Vec<f64> {
    use crate::contact::colliders::Shape;
    (0..x.len())
        .map(|i| {
            let mut alpha: f64 = 1.0;
            if !free[i] {
                return alpha;
            }
            let dv = y[i] - x[i];
            for c in colliders {
                let (gap, n) = c.gap(&x[i], t);
                let d = gap - c.offset - clearance[i];
                if d.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                    continue;
                }
                let m = 0.5 * d.min(COLLIDER_TARGET);
                let a = match c.shape {
                    Shape::Plane { .. } => {
                        let dd = n.dot(&dv);
                        if dd < 0.0 {
                            ((d - m) / -dd).clamp(0.0, 1.0)
                        } else {
                            1.0
                        }
                    }
                    Shape::Sphere { center, .. } => {
                        let e = x[i] - (Vec3::from(center) + Vec3::from(c.velocity) * t);
                        let (aa, b) = (dv.dot(&dv), e.dot(&dv));
                        if !(aa > 0.0) || b >= 0.0 {
                            1.0
                        } else {
                            let cc = (d - m) * (2.0 * e.norm() - (d - m));
                            let disc = b * b - aa * cc;
                            if disc < 0.0 {
                                1.0
                            } else {
                                (cc / (-b + disc.sqrt())).clamp(0.0, 1.0)
                            }
                        }
                    }
                    Shape::Box { .. } => step_alpha(d, dv.norm(), fraction),
                };
                alpha = alpha.min(a);
            }
            alpha
        })
        .collect()
}

/// `release`) with a fraction in `released` ([`release_fractions`]) move by it. Returns the
/// reuse bound's decrease ([`bound_decrease`]; m).
#[allow(clippy::too_many_arguments)]
pub fn forward_released(
    x: &mut [Vec3],
    y: &[Vec3],
    f: &FloorDistances,
    released: &[Option<f64>],
    bound: f64,
    fraction: f64,
    r: &mut [f64],
    on_surface: &[bool],
    step_sep: f64,
    release: f64,
) -> f64 {
    let (alpha, _) = released_step_fractions(
        x, y, f, released, bound, fraction, on_surface, step_sep, release,
    );
    apply_fractions(x, y, &alpha, r)
}

/// The per-vertex fractions of [`forward_released`], and per vertex whether it took its
/// released fraction.
#[allow(clippy::too_many_arguments)]
pub fn released_step_fractions(
    x: &[Vec3],
    y: &[Vec3],
    f: &FloorDistances,
    released: &[Option<f64>],
    bound: f64,
    fraction: f64,
    on_surface: &[bool],
    step_sep: f64,
    release: f64,
) -> (Vec<f64>, Vec<bool>) {
    (0..x.len())
        .map(|i| {
            let len = (y[i] - x[i]).norm();
            match (on_surface[i], released[i]) {
                (false, _) => (1.0, false),
                (true, Some(a)) if f.dmin[i] < release => (a, true),
                (true, _) => (
                    step_alpha(bound.min(f.dmin[i]) - step_sep, len, fraction),
                    false,
                ),
            }
        })
        .unzip()
}

/// One color of the contact sweep: constraints `group` (indices into `cons`, first `n_vt`
/// vertex–triangle) linearised at `x`, updating `y` and `lambda`.
#[allow(clippy::too_many_arguments)]
pub fn contact_sweep(
    x: &[Vec3],
    y: &mut [Vec3],
    cons: &[[u32; 4]],
    n_vt: usize,
    group: &[u32],
    lambda: &mut [f64],
    inv_w: &[f64],
    delta: f64,
) {
    for &i in group {
        let i = i as usize;
        let c = cons[i];
        let q = c.map(|v| x[v as usize]);
        let ty = if i < n_vt { TYPE_VT } else { TYPE_EE };
        let Some(lin) = contact_constraint(ty, &q, delta) else {
            continue;
        };
        let mut t = c.map(|v| y[v as usize]);
        lambda[i] = pgs(&lin, &q, &mut t, c.map(|v| inv_w[v as usize]), lambda[i]);
        for k in 0..4 {
            y[c[k] as usize] = t[k];
        }
    }
}

/// Signed weights `w` (`diff = Σ_k w_k x_k`), difference vector and distance (m) of the closest
/// points of a pair at `x` (`two_way.glsl::tw_closest`).
pub fn closest_points(ty: u32, x: &[Vec3; 4]) -> ([f64; 4], Vec3, f64) {
    if ty == TYPE_VT {
        let c = point_triangle(&x[0], &x[1], &x[2], &x[3]);
        (c.weights, c.diff, c.sq_dist.sqrt())
    } else {
        let c = edge_edge(&x[0], &x[1], &x[2], &x[3]);
        (c.weights, c.diff, c.sq_dist.sqrt())
    }
}

/// One color of the friction sweep (velocity filtering, two-way IPM §6.3; twin of
/// `kernels/collision/two_way_friction.comp`): for every pair of `group` with closest points
/// at `x` (weights w, distance d, normal n = diff / d), the relative target displacement
/// Δ = Σ_k w_k (y_k − x_k) and the normal penetration estimate I_n = max(0, δ − (d + Δ·n)); the
/// tangential part Δ_t = Δ − (Δ·n) n is reduced by min(μ I_n, |Δ_t|) and the normal part raised
/// by I_n (both impulses, so later pairs of the same vertices see only the penetration left),
/// distributed with the impulse weights w_k inv_w_k / Σ_j w_j² inv_w_j. Returns the number of
/// pairs whose target was changed.
#[allow(clippy::too_many_arguments)]
pub fn friction_sweep(
    x: &[Vec3],
    y: &mut [Vec3],
    cons: &[[u32; 4]],
    n_vt: usize,
    group: &[u32],
    inv_w: &[f64],
    delta: f64,
    mu: f64,
) -> usize {
    let mut changed = 0;
    for &i in group {
        let i = i as usize;
        let c = cons[i];
        let q = c.map(|v| x[v as usize]);
        let ty = if i < n_vt { TYPE_VT } else { TYPE_EE };
        let (w, diff, d) = closest_points(ty, &q);
        if d <= 0.0 {
            continue;
        }
        let n = diff / d;
        let mut rel = Vec3::zeros();
        let mut denom = 0.0;
        for k in 0..4 {
            let v = c[k] as usize;
            rel += (y[v] - q[k]) * w[k];
            denom += w[k] * w[k] * inv_w[v];
        }
        let dn = rel.dot(&n);
        let depth = delta - (d + dn);
        if depth <= 0.0 || denom <= 0.0 {
            continue;
        }
        let rt = rel - n * dn;
        let lt = rt.norm();
        let mut corr = n * -depth;
        if lt > 0.0 {
            corr += rt * ((mu * depth).min(lt) / lt);
        }
        for k in 0..4 {
            let v = c[k] as usize;
            y[v] -= corr * (w[k] * inv_w[v] / denom);
        }
        changed += 1;
    }
    changed
}

/// The quadratic repulsion energy of the two-way pairs (two-way IPM §6.2; twin of
/// `kernels/collision/two_way_repulsion.comp`) and its derivatives, in f64.
#[derive(Debug, Clone, PartialEq)]
pub struct Repulsion {
    /// Σ ½ k (d_r − d)² over the pairs closer than d_r (J).
    pub energy: f64,
    /// ∂E/∂x per vertex: Σ k (d − d_r) w_j n (N).
    pub gradient: Vec<Vec3>,
    /// Per vertex Σ k |w_j| S n nᵀ (N/m; S = Σ_j |w_j|, row-major): the block-diagonal
    /// majorizer of the Gauss–Newton Hessian k ∇d ∇dᵀ that the Newton matrix takes.
    pub hessian_majorizer: Vec<[f64; 9]>,
    /// Pairs closer than d_r.
    pub active: usize,
}

/// [`Repulsion`] of the pairs `cons` (first `n_vt` vertex–triangle) at `x`: stiffness `k`
/// (N/m), repulsion distance `d_r` (m); d is the exact closest-point distance.
pub fn repulsion(x: &[Vec3], cons: &[[u32; 4]], n_vt: usize, k: f64, d_r: f64) -> Repulsion {
    let mut out = Repulsion {
        energy: 0.0,
        gradient: vec![Vec3::zeros(); x.len()],
        hessian_majorizer: vec![[0.0; 9]; x.len()],
        active: 0,
    };
    for (i, c) in cons.iter().enumerate() {
        let q = c.map(|v| x[v as usize]);
        let (w, diff, d) = closest_points(if i < n_vt { TYPE_VT } else { TYPE_EE }, &q);
        let value = d - d_r;
        if d <= 0.0 || value >= 0.0 {
            continue;
        }
        out.active += 1;
        out.energy += 0.5 * k * value * value;
        let n = diff / d;
        let sum_abs: f64 = w.iter().map(|a| a.abs()).sum();
        for j in 0..4 {
            let v = c[j] as usize;
            out.gradient[v] += n * (k * value * w[j]);
            for r in 0..3 {
                for s in 0..3 {
                    out.hessian_majorizer[v][3 * r + s] += k * sum_abs * w[j].abs() * n[r] * n[s];
                }
            }
        }
    }
    out
}

/// Derivative dB/dd of the log barrier of the two-way IPM paper's baseline (§3.4, Eq. 8),
/// B(d) = k (d − d̂)² max(−ln(d / d̂), 0): negative (repulsive) for 0 < d < d̂, else 0.
pub fn barrier_derivative(d: f64, k: f64, range: f64) -> f64 {
    if !(d > 0.0 && d < range) {
        return 0.0;
    }
    let e = d - range;
    k * (-2.0 * e * (d / range).ln() - e * e / d)
}

/// The log barrier B(d) of Eq. 8 (m² when k is dimensionless).
pub fn barrier(d: f64, k: f64, range: f64) -> f64 {
    if !(d > 0.0 && d < range) {
        return 0.0;
    }
    k * (d - range).powi(2) * -(d / range).ln()
}

/// One color of the log-barrier baseline (twin of `two_way_barrier.comp`): every pair of
/// `group` closer than `range` at `x` moves the step target `y` of its vertices by
/// −½ w_i ∂B/∂x_i (the gradient-descent step of Eq. 7 preconditioned by the inverse weights).
#[allow(clippy::too_many_arguments)]
pub fn barrier_sweep(
    x: &[Vec3],
    y: &mut [Vec3],
    cons: &[[u32; 4]],
    n_vt: usize,
    group: &[u32],
    inv_w: &[f64],
    k: f64,
    range: f64,
) {
    for &i in group {
        let i = i as usize;
        let c = cons[i];
        let q = c.map(|v| x[v as usize]);
        let (weights, diff, d) = closest_points(if i < n_vt { TYPE_VT } else { TYPE_EE }, &q);
        let db = barrier_derivative(d, k, range);
        if db == 0.0 {
            continue;
        }
        let g = diff * (-0.5 * db / d);
        for s in 0..4 {
            let v = c[s] as usize;
            y[v] += g * (inv_w[v] * weights[s]);
        }
    }
}

/// One color of the edge-length sweep over `edges[range]` (rest lengths `rest`).
#[allow(clippy::too_many_arguments)]
pub fn edge_sweep(
    x: &[Vec3],
    y: &mut [Vec3],
    edges: &[[u32; 2]],
    rest: &[f64],
    range: std::ops::Range<usize>,
    lambda: &mut [f64],
    inv_w: &[f64],
    sigma: f64,
) {
    for e in range {
        let [i, j] = edges[e].map(|v| v as usize);
        let Some(lin) = edge_constraint(&x[i], &x[j], rest[e], sigma) else {
            continue;
        };
        let q = [x[i], x[j], Vec3::zeros(), Vec3::zeros()];
        let mut t = [y[i], y[j], Vec3::zeros(), Vec3::zeros()];
        lambda[e] = pgs(&lin, &q, &mut t, [inv_w[i], inv_w[j], 0.0, 0.0], lambda[e]);
        y[i] = t[0];
        y[j] = t[1];
    }
}

/// Why a host solve stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every clock r_i fell below ε.
    Converged,
    /// L steps were taken.
    StepLimit,
}

/// Outcome of a host solve.
#[derive(Debug, Clone, PartialEq)]
pub struct SolveReport {
    /// Steps taken.
    pub steps: u32,
    /// Proximity searches run.
    pub searches: u32,
    /// Why it stopped.
    pub stop: Stop,
    /// Largest clock r_i at the end.
    pub max_r: f64,
}

/// The complete Algorithm 1 on the host, with brute-force proximity and greedy colorings: for
/// property tests of the method itself (the GPU solver is compared step by step with the
/// functions above).
pub struct Solver {
    /// Settings.
    pub settings: Settings,
    /// Surface triangles.
    pub triangles: Vec<[u32; 3]>,
    /// Surface edges (unique, sorted).
    pub edges: Vec<[u32; 2]>,
    /// Rest lengths of the edges (m).
    pub rest: Vec<f64>,
    /// Inverse weights (0: pinned).
    pub inv_w: Vec<f64>,
}

impl Solver {
    /// A solver for `triangles` over positions at rest `x_rest` (edge rest lengths).
    pub fn new(triangles: Vec<[u32; 3]>, x_rest: &[Vec3], settings: Settings) -> Self {
        let edges = super::proximity::unique_edges(&triangles);
        let rest = edges
            .iter()
            .map(|e| (x_rest[e[0] as usize] - x_rest[e[1] as usize]).norm())
            .collect();
        Solver {
            settings,
            triangles,
            edges,
            rest,
            inv_w: vec![1.0; x_rest.len()],
        }
    }

    /// Runs Algorithm 1 from the intersection-free `x` toward `y` (both updated in place);
    /// `observe` sees every intermediate state x^(l).
    pub fn solve(
        &self,
        x: &mut [Vec3],
        y: &mut [Vec3],
        mut observe: impl FnMut(&[Vec3]),
    ) -> SolveReport {
        let s = &self.settings;
        let n = x.len();
        let mut r = vec![1.0; n];
        let mut lambda_e = vec![0.0; self.edges.len()];
        let edge_cons = crate::coloring::pad(&self.edges);
        let edge_colors =
            crate::coloring::greedy_coloring(&edge_cons, n, crate::coloring::GreedyOrder::Index)
                .map(|c| c.colors)
                .unwrap_or_else(|_| vec![0; self.edges.len()]);
        let num_edge_colors = edge_colors.iter().map(|&c| c + 1).max().unwrap_or(0);
        let mut searches = 0;
        let mut steps = 0;
        let mut bound = f64::NEG_INFINITY;
        let mut cons: Vec<[u32; 4]> = Vec::new();
        let mut n_vt = 0;
        let mut groups: Vec<Vec<u32>> = Vec::new();
        let mut lambda: Vec<f64> = Vec::new();
        let body = vec![0u32; n];
        let mut on_surface = vec![false; n];
        for v in self
            .triangles
            .iter()
            .flatten()
            .chain(self.edges.iter().flatten())
        {
            on_surface[*v as usize] = true;
        }
        loop {
            if bound < s.d_min {
                let xs: Vec<[f64; 3]> = x.iter().map(|p| [p.x, p.y, p.z]).collect();
                let pairs = super::proximity::brute_force(
                    &xs,
                    &self.triangles,
                    &self.edges,
                    &body,
                    s.d_max,
                    Default::default(),
                );
                cons.clear();
                for p in &pairs.vertex_triangle {
                    let t = self.triangles[p.b as usize];
                    cons.push([p.a, t[0], t[1], t[2]]);
                }
                n_vt = cons.len();
                for p in &pairs.edge_edge {
                    let (a, b) = (self.edges[p.a as usize], self.edges[p.b as usize]);
                    cons.push([a[0], a[1], b[0], b[1]]);
                }
                let coloring =
                    crate::coloring::greedy_coloring(&cons, n, crate::coloring::GreedyOrder::Index)
                        .map(|c| c.colors)
                        .unwrap_or_else(|_| vec![0; cons.len()]);
                let nc = coloring.iter().map(|&c| c + 1).max().unwrap_or(0);
                groups = (0..nc)
                    .map(|c| {
                        (0..cons.len() as u32)
                            .filter(|&i| coloring[i as usize] == c)
                            .collect()
                    })
                    .collect();
                lambda = vec![0.0; cons.len()];
                bound = s.d_max;
                searches += 1;
            }
            for g in &groups {
                contact_sweep(x, y, &cons, n_vt, g, &mut lambda, &self.inv_w, s.delta);
            }
            for c in 0..num_edge_colors {
                for e in 0..self.edges.len() {
                    if edge_colors[e] == c {
                        edge_sweep(
                            x,
                            y,
                            &self.edges,
                            &self.rest,
                            e..e + 1,
                            &mut lambda_e,
                            &self.inv_w,
                            s.sigma,
                        );
                    }
                }
            }
            let release = (s.release_distance > 0.0).then_some(s.release_distance);
            let disp = forward_step(
                x,
                y,
                &cons,
                n_vt,
                bound,
                s.step_fraction,
                s.min_separation,
                release,
                &mut r,
                &on_surface,
            );
            observe(x);
            steps += 1;
            bound -= disp;
            let max_r = r.iter().cloned().fold(0.0, f64::max);
            if max_r < s.epsilon {
                return SolveReport {
                    steps,
                    searches,
                    stop: Stop::Converged,
                    max_r,
                };
            }
            if steps >= s.max_steps {
                return SolveReport {
                    steps,
                    searches,
                    stop: Stop::StepLimit,
                    max_r,
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: f64, b: f64, c: f64) -> Vec3 {
        Vec3::new(a, b, c)
    }

    /// The reuse bound's decrease: a common translation costs only the rounding margin,
    /// opposite moves cost their relative motion 2 max |d|, and the box never costs more than
    /// 2 max |d| (six moves along ± the axes, whose box diagonal is 2√3 max |d|); no vertex, 0.
    #[test]
    fn bound_decrease_is_translation_invariant_and_at_most_twice_the_largest_move() {
        let t = v(0.01, -0.02, 0.03);
        let same = bound_decrease([t, t, t]);
        assert!(same <= 2.0 * SPREAD_MARGIN * t.norm() * 1.000_001, "{same}");
        assert!(same > 0.0);
        let opposite = bound_decrease([t, -t]);
        assert!((opposite - 2.0 * t.norm()).abs() < 1e-15, "{opposite}");
        let axes = [
            v(1.0, 0.0, 0.0),
            v(-1.0, 0.0, 0.0),
            v(0.0, 1.0, 0.0),
            v(0.0, -1.0, 0.0),
            v(0.0, 0.0, 1.0),
            v(0.0, 0.0, -1.0),
        ];
        assert_eq!(bound_decrease(axes), 2.0);
        let spread = bound_decrease([t, t + v(1e-3, 0.0, 0.0)]);
        assert!(
            (spread - (1e-3 + 2.0 * SPREAD_MARGIN * (t + v(1e-3, 0.0, 0.0)).norm())).abs() < 1e-12
        );
        assert_eq!(bound_decrease(std::iter::empty()), 0.0);
    }

    /// Every constraint form equals d / δ − 1 at its linearisation point and its Jacobian
    /// matches central differences.
    #[test]
    fn barrier_derivative_matches_finite_differences() {
        let (k, range) = (3.0, 1e-3);
        for d in [1e-6, 1e-5, 2e-4, 5e-4, 9.9e-4] {
            let h = d * 1e-5;
            let fd = (barrier(d + h, k, range) - barrier(d - h, k, range)) / (2.0 * h);
            let db = barrier_derivative(d, k, range);
            assert!(db < 0.0, "repulsive at {d}");
            assert!((fd - db).abs() <= 1e-5 * db.abs(), "{d}: fd {fd} vs {db}");
        }
        // No force at or past the range, nor at zero distance.
        for d in [range, 2.0 * range, 0.0] {
            assert_eq!(barrier_derivative(d, k, range), 0.0);
            assert_eq!(barrier(d, k, range), 0.0);
        }
    }

    #[test]
    fn constraints_equal_scaled_distance_and_match_finite_differences() {
        let delta = 1e-3;
        let cases: Vec<(u32, [Vec3; 4])> = vec![
            // vertex over a face
            (
                TYPE_VT,
                [
                    v(0.2, 0.2, 0.003),
                    v(0.0, 0.0, 0.0),
                    v(1.0, 0.0, 0.0),
                    v(0.0, 1.0, 0.0),
                ],
            ),
            // vertex under a face (negative side)
            (
                TYPE_VT,
                [
                    v(0.2, 0.3, -0.002),
                    v(0.0, 0.0, 0.0),
                    v(1.0, 0.0, 0.0),
                    v(0.0, 1.0, 0.0),
                ],
            ),
            // vertex near an edge
            (
                TYPE_VT,
                [
                    v(0.5, -0.002, 0.001),
                    v(0.0, 0.0, 0.0),
                    v(1.0, 0.0, 0.0),
                    v(0.0, 1.0, 0.0),
                ],
            ),
            // vertex near a vertex
            (
                TYPE_VT,
                [
                    v(-0.001, -0.002, 0.001),
                    v(0.0, 0.0, 0.0),
                    v(1.0, 0.0, 0.0),
                    v(0.0, 1.0, 0.0),
                ],
            ),
            // crossing edges
            (
                TYPE_EE,
                [
                    v(-1.0, 0.0, 0.0),
                    v(1.0, 0.1, 0.0),
                    v(0.0, -1.0, 0.002),
                    v(0.1, 1.0, 0.003),
                ],
            ),
            // edge end near the other's interior
            (
                TYPE_EE,
                [
                    v(-1.0, 0.0, 0.0),
                    v(1.0, 0.0, 0.0),
                    v(0.3, 0.002, 0.001),
                    v(0.3, 1.0, 0.5),
                ],
            ),
            // parallel edges (vertex–edge closest features)
            (
                TYPE_EE,
                [
                    v(0.0, 0.0, 0.0),
                    v(1.0, 0.0, 0.0),
                    v(0.5, 0.0, 0.002),
                    v(1.5, 0.0, 0.002),
                ],
            ),
        ];
        for (ty, x) in cases {
            let lin = contact_constraint(ty, &x, delta).expect("non-degenerate");
            let (_, d) = closest(ty, &x);
            assert!(
                (lin.c - (d / delta - 1.0)).abs() < 1e-8,
                "{ty} {x:?}: c {} d {d}",
                lin.c
            );
            // The constraint's own formula (fixed form and constants) differentiated numerically.
            let kind = closest_kind_f32(ty, &x);
            let h = 1e-7;
            for k in 0..4 {
                for a in 0..3 {
                    let eval = |s: f64| {
                        let mut q = x;
                        q[k][a] += s;
                        fixed_form(ty, kind, &x, &q, delta)
                    };
                    let fd = (eval(h) - eval(-h)) / (2.0 * h);
                    let j = lin.jacobian[k][a];
                    assert!(
                        (fd - j).abs() <= 1e-4 * j.abs().max(1.0),
                        "{ty} kind {kind} slot {k} axis {a}: fd {fd} vs J {j}"
                    );
                }
            }
        }
    }

    /// The constraint of closest features `kind` chosen at `x0`, evaluated at `x` with the
    /// constants (V(r), A(r)) of `x0`.
    fn fixed_form(ty: u32, kind: u32, x0: &[Vec3; 4], x: &[Vec3; 4], delta: f64) -> f64 {
        let vol = |x: &[Vec3; 4]| (x[1] - x[0]).dot(&(x[2] - x[0]).cross(&(x[3] - x[0]))) / 6.0;
        let area = |p: Vec3, a: Vec3, b: Vec3| 0.5 * (a - p).cross(&(b - p)).norm();
        let face = ty == TYPE_VT && kind == PointTriangleKind::Face as u32;
        let ee = ty == TYPE_EE && kind == EdgeEdgeKind::AB as u32;
        if face || ee {
            let base = if face {
                (x0[2] - x0[1]).cross(&(x0[3] - x0[1])).norm() / 6.0
            } else {
                (x0[1] - x0[0]).cross(&(x0[3] - x0[2])).norm() / 6.0
            };
            let vr = vol(x0).signum() * base * delta;
            return vol(x) / vr - 1.0;
        }
        let (p, e0, e1): (usize, usize, usize) = match (ty, kind) {
            (TYPE_VT, 3) => (0, 1, 2),
            (TYPE_VT, 4) => (0, 2, 3),
            (TYPE_VT, 5) => (0, 3, 1),
            (TYPE_EE, 4) => (2, 0, 1),
            (TYPE_EE, 5) => (3, 0, 1),
            (TYPE_EE, 6) => (0, 2, 3),
            (TYPE_EE, 7) => (1, 2, 3),
            _ => {
                let (a, b) = if ty == TYPE_VT {
                    (0, 1 + kind as usize)
                } else {
                    ((kind as usize) >> 1, 2 + (kind as usize & 1))
                };
                return (x[b] - x[a]).norm() / delta - 1.0;
            }
        };
        let ar = (x0[e1] - x0[e0]).norm() * delta * 0.5;
        area(x[p], x[e0], x[e1]) / ar - 1.0
    }

    /// Velocity filtering of a vertex sliding over a pinned triangle: the tangential motion is cut
    /// by μ times the penetration estimate (all of it when that exceeds it), the normal motion is
    /// stopped at the δ shell, and pairs whose target stays outside the shell are not touched.
    #[test]
    fn friction_cuts_tangential_motion_by_mu_times_depth() {
        let delta = 1e-3;
        let x = vec![
            v(0.2, 0.2, 0.002),
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
            v(0.0, 1.0, 0.0),
        ];
        let cons = [[0u32, 1, 2, 3]];
        let inv_w = [1.0, 0.0, 0.0, 0.0];
        let run = |target: Vec3, mu: f64| {
            let mut y = x.clone();
            y[0] = target;
            let n = friction_sweep(&x, &mut y, &cons, 1, &[0], &inv_w, delta, mu);
            (y, n)
        };
        // Target 0.5 mm above the plane: depth 0.5 mm; 10 mm of sliding cut by μ · 0.5 mm.
        let (y, n) = run(v(0.21, 0.2, 0.0005), 0.5);
        assert_eq!(n, 1);
        assert!((y[0].x - (0.21 - 0.5 * 0.5e-3)).abs() < 1e-12, "{:?}", y[0]);
        assert!((y[0].y - 0.2).abs() < 1e-12 && (y[0].z - delta).abs() < 1e-12);
        assert_eq!(&y[1..], &x[1..], "pinned vertices moved");
        // Large μ: sticks (tangential motion removed entirely, not reversed).
        let (y, _) = run(v(0.21, 0.2, 0.0005), 1e4);
        assert!((y[0].x - 0.2).abs() < 1e-12, "{:?}", y[0]);
        // Outside the shell: no friction.
        let (y, n) = run(v(0.21, 0.2, 0.0015), 0.5);
        assert_eq!(n, 0);
        assert_eq!(y[0], v(0.21, 0.2, 0.0015));
        // A free triangle shares the correction by the impulse weights: the relative
        // displacement changes by exactly the cut, momentum (Σ w-weighted) is conserved.
        let mut y = x.clone();
        y[0] = v(0.21, 0.2, 0.0005);
        let inv = [1.0; 4];
        friction_sweep(&x, &mut y, &cons, 1, &[0], &inv, delta, 0.5);
        let sum: Vec3 = (0..4)
            .map(|k| y[k] - x[k])
            .fold(Vec3::zeros(), |a, b| a + b);
        assert!((sum.x - 0.01).abs() < 1e-12, "total displacement {sum:?}");
        let (w, _, _) = closest_points(TYPE_VT, &[x[0], x[1], x[2], x[3]]);
        let rel: Vec3 = (0..4)
            .map(|k| (y[k] - x[k]) * w[k])
            .fold(Vec3::zeros(), |a, b| a + b);
        assert!((rel.x - (0.01 - 0.5 * 0.5e-3)).abs() < 1e-12, "{rel:?}");
    }

    /// The repulsion gradient is the energy's derivative (central differences) and the
    /// majorizer bounds the Gauss–Newton Hessian k ∇d ∇dᵀ along random directions.
    #[test]
    fn repulsion_gradient_matches_finite_differences_and_majorizer_bounds() {
        let x = vec![
            v(0.2, 0.3, 0.0007),
            v(0.0, 0.0, 0.0),
            v(1.0, 0.0, 0.0),
            v(0.0, 1.0, 0.0),
            v(0.5, -0.0004, 0.0003),
            v(0.5, 0.5, -0.4),
        ];
        // A vertex over the face and an edge (4, 5) crossing near edge (1, 2).
        let cons = [[0u32, 1, 2, 3], [1, 2, 4, 5]];
        let (k, dr) = (250.0, 1e-3);
        let r = repulsion(&x, &cons, 1, k, dr);
        assert_eq!(r.active, 2);
        let h = 1e-8;
        for vtx in 0..x.len() {
            for a in 0..3 {
                let e = |s: f64| {
                    let mut q = x.clone();
                    q[vtx][a] += s;
                    repulsion(&q, &cons, 1, k, dr).energy
                };
                let fd = (e(h) - e(-h)) / (2.0 * h);
                let g = r.gradient[vtx][a];
                assert!(
                    (fd - g).abs() <= 1e-5 * g.abs().max(1e-3),
                    "v{vtx} {a}: {fd} vs {g}"
                );
            }
        }
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
            ((seed >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
        };
        for _ in 0..50 {
            let u: Vec<Vec3> = (0..x.len()).map(|_| v(rnd(), rnd(), rnd())).collect();
            // Gauss–Newton: Σ_pairs k (∇d · u)².
            let mut gn = 0.0;
            for (i, c) in cons.iter().enumerate() {
                let q = c.map(|vv| x[vv as usize]);
                let (w, diff, d) = closest_points(if i < 1 { TYPE_VT } else { TYPE_EE }, &q);
                let n = diff / d;
                let t: f64 = (0..4).map(|j| w[j] * n.dot(&u[c[j] as usize])).sum();
                gn += k * t * t;
            }
            let maj: f64 = (0..x.len())
                .map(|vv| {
                    let m = &r.hessian_majorizer[vv];
                    let uu = u[vv];
                    (0..3)
                        .map(|a| (0..3).map(|b| uu[a] * m[3 * a + b] * uu[b]).sum::<f64>())
                        .sum::<f64>()
                })
                .sum();
            assert!(
                maj >= gn * (1.0 - 1e-12),
                "majorizer {maj} < Gauss–Newton {gn}"
            );
        }
        // Beyond d_r: nothing.
        assert_eq!(repulsion(&x, &cons, 1, k, 1e-6).active, 0);
    }

    /// Random vertex–triangle and edge–edge pairs at the floor (1.01–3 ξ apart) with random
    /// targets (independent, common or mixed motion up to ~1 mm): whenever
    /// `release_fractions` releases the pair, it stays more than ξ apart along the whole
    /// straight-line motion (sampled at 2,000 times), and the test is neither vacuous nor
    /// trivial (some pairs are released, some are not).
    #[test]
    fn released_floor_pairs_stay_above_the_minimum_separation() {
        let mut seed = 0x1234_5678_9abc_def0u64;
        let mut rnd = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let (xi, theta, bound) = (1e-5, 1e-4, 4e-3);
        let (mut released, mut total) = (0, 0);
        for case in 0..600 {
            let ty = (case % 2) as u32;
            let h = xi * (1.01 + 2.0 * rnd());
            let x: Vec<Vec3> = if ty == TYPE_VT {
                let (u, w) = (0.001 + 0.0035 * rnd(), 0.001 + 0.0035 * rnd());
                vec![v(u, w, h), v(0., 0., 0.), v(0.01, 0., 0.), v(0., 0.01, 0.)]
            } else {
                let (sa, ca) = (3.0 * rnd()).sin_cos();
                vec![
                    v(-0.005, 0.0, h),
                    v(0.005, 0.0, h),
                    v(-0.005 * ca, -0.005 * sa, 0.0),
                    v(0.005 * ca, 0.005 * sa, 0.0),
                ]
            };
            let common = v(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5) * 2e-3;
            let (own, shared) = match case % 3 {
                0 => (2e-3, 0.0),
                1 => (0.0, 1.0),
                _ => (2e-4, 1.0),
            };
            let y: Vec<Vec3> = x
                .iter()
                .map(|p| p + common * shared + v(rnd() - 0.5, rnd() - 0.5, rnd() - 0.5) * own)
                .collect();
            let cons = [[0u32, 1, 2, 3]];
            let n_vt = (ty == TYPE_VT) as usize;
            let f = floor_distances(&x, &cons, n_vt, theta);
            assert!(f.closest[0].1 < theta);
            let ones = vec![1.0; x.len()];
            let rel = release_fractions(
                &x,
                &y,
                &cons,
                n_vt,
                &f,
                bound,
                0.45,
                xi,
                2.0 * xi,
                theta,
                &ones,
            );
            total += 1;
            let Some(a) = rel[0] else { continue };
            assert!(
                rel.iter().all(|r| *r == Some(a)),
                "one fraction per component"
            );
            released += 1;
            for k in 0..=2000 {
                let t = a * k as f64 / 2000.0;
                let q = [0, 1, 2, 3].map(|j| x[j] + (y[j] - x[j]) * t);
                let (_, d) = closest(ty, &q);
                assert!(d > xi, "case {case}: {d} at t = {t} (fraction {a})");
            }
        }
        assert!(
            released > total / 10 && released < total,
            "{released} of {total} released"
        );
    }

    /// A vertex driven through a triangle is stopped on its side, the solve never crosses.
    #[test]
    fn vertex_driven_through_a_triangle_stays_on_its_side() {
        // Triangle 0-1-2 in z = 0 (pinned), a lone vertex 3 above it, connected by a degenerate
        // triangle far away so it is part of the surface: use two triangles.
        let x0 = vec![
            v(-1.0, -1.0, 0.0),
            v(1.0, -1.0, 0.0),
            v(0.0, 1.0, 0.0),
            v(0.0, 0.0, 0.0025),
            v(0.0, 0.0, 0.5),
            v(0.1, 0.0, 0.5),
        ];
        let tris = vec![[0, 1, 2], [3, 4, 5]];
        let mut s = Solver::new(tris, &x0, Settings::paper());
        s.inv_w[0] = 0.0;
        s.inv_w[1] = 0.0;
        s.inv_w[2] = 0.0;
        let mut x = x0.clone();
        let mut y = x0.clone();
        y[3].z = -0.01;
        let mut min_z = f64::INFINITY;
        let rep = s.solve(&mut x, &mut y, |x| min_z = min_z.min(x[3].z));
        assert!(min_z > 0.0, "vertex crossed the plane: {min_z}");
        assert!(rep.steps >= 1);
        // The backward step projected the target to δ above the plane and x converged to it.
        assert!((y[3].z - 1e-3).abs() < 1e-6, "target {}", y[3].z);
        assert_eq!(rep.stop, Stop::Converged);
        assert!((x[3].z - 1e-3).abs() < 1e-4, "x {}", x[3].z);
    }

    #[test]
    fn shared_fractions_take_the_group_minimum_over_surface_vertices() {
        // Group 0: vertices 0, 1 (surface) and 2 (interior); group 1: 3 (surface, released);
        // vertex 4 in no group.
        let on = [true, true, false, true, true];
        let groups = [0, 0, 0, 1, u32::MAX];
        let mut alpha = vec![0.4, 0.7, 1.0, 0.2, 0.9];
        let released = [false, false, false, true, false];
        share_fractions(&mut alpha, &released, &on, &groups);
        // Group 0 at its surface minimum, interior included; group 1 keeps per-vertex (its
        // vertex was released); vertex 4 unchanged.
        assert_eq!(alpha, vec![0.4, 0.4, 0.4, 0.2, 0.9]);
        // A group with no surface vertex moves freely.
        let mut alpha = vec![0.5];
        share_fractions(&mut alpha, &[false], &[false], &[0]);
        assert_eq!(alpha, vec![1.0]);
    }
}
