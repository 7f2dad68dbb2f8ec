//! Conservative continuous collision detection (CCD) for point–triangle and edge–edge pairs
//! moving linearly from `x0` (t = 0) to `x1` (t = 1). Plain-Rust twin of
//! `kernels/include/ccd.glsl`: same steps, same order, same constants.
//!
//! Method (after the barrier-augmented Lagrangian GPU contact paper, §5.3):
//! 1. The four vertices are taken relative to the first one at t = 0 and scaled by a power of
//!    two into [-1, 1] (exact).
//! 2. Coplanarity cubic `f(t) = det[x1-x0, x2-x0, x3-x0](t)`. A contact (distance ≤ δ) at t
//!    implies `|f(t)| ≤ N·δ` (N bounds the triangle normal / edge cross product), so contacts can
//!    only happen where the *computed* cubic satisfies `|f̃(t)| ≤ E + N·δ`, E a rigorous bound
//!    of its rounding error. Those times form at most three windows: the interval
//!    [-ε, 1+ε] is split at the cubic's critical points into monotone pieces and each
//!    window's ends are found by Newton–bisection, keeping the bracket end on the safe side.
//!    Near-grazing roots (double roots that rounding moves off zero) and coplanar motion (f ≡ 0)
//!    are thereby covered: the window simply widens.
//! 3. Inside test in each window, in time order: conservative advancement with the exact
//!    distance, `t += (d(t) - 1.01 δ - tol) / L`, L a Lipschitz bound of d(t); a hit is declared
//!    at the first t with `d(t) ≤ 1.01 δ + tol`. For plain CCD the distance at the coplanarity
//!    root inside the window is checked first (the paper's inside test at the time of
//!    coplanarity); if it is a contact, the hit is declared after the first safe step, since no
//!    contact can precede the window. A thin window (the usual case) thus takes one to three
//!    distance evaluations. If the iteration cap is reached the current t is reported as a hit
//!    (conservative: every step so far was safe).
//! 4. The time of impact is made conservative with the paper's reference-frame check: the sign
//!    of `f` at toi must equal its sign at the reference time halfway between the previous
//!    window (or 0) and toi; otherwise toi ← 0.9·toi until it does.
//!
//! False negatives are impossible up to the stated error bounds; false positives cost only
//! step length. With `min_separation = δ > 0` the toi is the first time the distance reaches δ
//! (the minimum-separation variant).

use super::distance::{edge_edge, point_triangle, Real};
use nalgebra::Vector3;

pub use crate::geometry::ccd::{
    CcdKind, CCD_FLAG_CAPPED, CCD_FLAG_HIT, CCD_MAX_ADVANCE, CCD_MAX_BACKTRACK,
    CCD_MAX_ROOT_ITERATIONS,
};

/// Outcome of a CCD query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CcdResult<T> {
    /// Whether the pair may come within the minimum separation during [0, 1].
    pub hit: bool,
    /// Conservative time of impact in [0, 1] (1 when there is no hit): the pair stays farther
    /// apart than the minimum separation on [0, toi).
    pub toi: T,
    /// The advancement hit its iteration cap; `toi` is then a safe lower bound only.
    pub capped: bool,
}

/// Cubic `c[0] + c[1] t + c[2] t² + c[3] t³` (Horner).
pub fn cubic_eval<T: Real>(c: &[T; 4], t: T) -> T {
    ((c[3] * t + c[2]) * t + c[1]) * t + c[0]
}

fn cubic_derivative<T: Real>(c: &[T; 4], t: T) -> T {
    let (two, three) = (T::of(2.0), T::of(3.0));
    (three * c[3] * t + two * c[2]) * t + c[1]
}

fn det<T: Real>(a: &Vector3<T>, b: &Vector3<T>, c: &Vector3<T>) -> T {
    a.dot(&b.cross(c))
}

/// Coefficients of the coplanarity cubic `det[q1, q2, q3](t)`, `q_k(t) = a_k + t v_k`.
pub fn coplanarity_cubic<T: Real>(a: &[Vector3<T>; 3], v: &[Vector3<T>; 3]) -> [T; 4] {
    [
        det(&a[0], &a[1], &a[2]),
        det(&v[0], &a[1], &a[2]) + det(&a[0], &v[1], &a[2]) + det(&a[0], &a[1], &v[2]),
        det(&a[0], &v[1], &v[2]) + det(&v[0], &a[1], &v[2]) + det(&v[0], &v[1], &a[2]),
        det(&v[0], &v[1], &v[2]),
    ]
}

/// Real roots of `a t² + b t + c` (stable formula), ascending; returns how many (0–2).
pub fn quadratic_roots<T: Real>(a: T, b: T, c: T) -> (usize, [T; 2]) {
    let z = T::zero();
    let two = T::of(2.0);
    if a == z {
        if b == z {
            return (0, [z, z]);
        }
        let r = -c / b;
        return (1, [r, r]);
    }
    let disc = b * b - T::of(4.0) * a * c;
    if disc < z {
        return (0, [z, z]);
    }
    let sq = disc.sqrt();
    let q = if b >= z {
        -(b + sq) / two
    } else {
        -(b - sq) / two
    };
    let r0 = q / a;
    let r1 = if q != z { c / q } else { r0 };
    if r0 <= r1 {
        (2, [r0, r1])
    } else {
        (2, [r1, r0])
    }
}

/// Newton–bisection for `f(t) = level` on [l, r], f monotone there and `f(l) - level`,
/// `f(r) - level` of opposite signs (or zero). Returns a bracket (l', r') ⊂ [l, r] that still
/// contains the crossing.
pub fn solve_monotone<T: Real>(c: &[T; 4], level: T, mut l: T, mut r: T) -> (T, T) {
    let z = T::zero();
    let half = T::of(0.5);
    let gl = cubic_eval(c, l) - level;
    if gl == z {
        return (l, l);
    }
    let tol = T::of(4.0) * T::epsilon();
    let mut x = half * (l + r);
    for it in 0..CCD_MAX_ROOT_ITERATIONS {
        let gx = cubic_eval(c, x) - level;
        if gx == z {
            return (x, x);
        }
        if (gx > z) == (gl > z) {
            l = x;
        } else {
            r = x;
        }
        if r - l <= tol {
            break;
        }
        // Newton step from x on odd iterations, bisection on even ones (or when Newton leaves
        // the bracket): the bracket at least halves every two iterations.
        let dg = cubic_derivative(c, x);
        let xn = x - gx / dg;
        x = if it % 2 == 0 && xn > l && xn < r {
            xn
        } else {
            half * (l + r)
        };
    }
    (l, r)
}

/// Squared distance of the pair at normalized positions `x`.
fn sq_distance<T: Real>(kind: CcdKind, x: &[Vector3<T>; 4]) -> T {
    match kind {
        CcdKind::PointTriangle => point_triangle(&x[0], &x[1], &x[2], &x[3]).sq_dist,
        CcdKind::EdgeEdge => edge_edge(&x[0], &x[1], &x[2], &x[3]).sq_dist,
    }
}

/// Conservative CCD of a point–triangle or edge–edge pair moving linearly from `x0` to `x1`
/// (vertex order as in [`CcdKind`]). `min_separation` (m, ≥ 0) is the distance δ that counts
/// as contact: 0 for plain CCD.
pub fn ccd<T: Real>(
    kind: CcdKind,
    x0: &[Vector3<T>; 4],
    x1: &[Vector3<T>; 4],
    min_separation: T,
) -> CcdResult<T> {
    let (z, o) = (T::zero(), T::one());
    let eps = T::epsilon();
    // 1. Relative to vertex 0 at t = 0, scaled by a power of two into [-1, 1].
    let mut a = [Vector3::zeros(); 4];
    let mut b = [Vector3::zeros(); 4];
    let mut m = z;
    for k in 0..4 {
        a[k] = x0[k] - x0[0];
        b[k] = x1[k] - x0[0];
        m = m.max(a[k].amax()).max(b[k].amax());
    }
    let s = T::inv_pow2_scale(m);
    let mut disp = [Vector3::zeros(); 4];
    for k in 0..4 {
        a[k] *= s;
        b[k] *= s;
        disp[k] = b[k] - a[k];
    }
    let delta = min_separation.max(z) * s;
    // 2. Coplanarity cubic of q_k(t) = x_k(t) - x_0(t).
    let qa = [a[1] - a[0], a[2] - a[0], a[3] - a[0]];
    let qv = [disp[1] - disp[0], disp[2] - disp[0], disp[3] - disp[0]];
    let c = coplanarity_cubic(&qa, &qv);
    let mut rq = z;
    for k in 0..3 {
        rq = rq.max(qa[k].norm() + qv[k].norm());
    }
    let rc = rq.max(T::of(1.8));
    // Rounding of inputs, coefficients and Horner evaluation; plus N·δ with N = 4 rq².
    let e_err = T::of(128.0) * eps * rq * rq * rc;
    let level = e_err + T::of(4.0) * rq * rq * delta;
    let tol = T::of(16.0) * eps * rc;
    // Distance that ends the advancement: δ + tol, plus 1% of δ so that the minimum-separation
    // variant stops before the slow final approach (still conservative: toi comes earlier).
    let reach = delta * T::of(1.01) + tol;
    // Lipschitz bound of d(t): displacements relative to their mean.
    let mean = (disp[0] + disp[1] + disp[2] + disp[3]) * T::of(0.25);
    let (first, second) = match kind {
        CcdKind::PointTriangle => ((disp[0] - mean).norm(), {
            let mut l = z;
            for d in &disp[1..4] {
                l = l.max((d - mean).norm());
            }
            l
        }),
        CcdKind::EdgeEdge => (
            (disp[0] - mean).norm().max((disp[1] - mean).norm()),
            (disp[2] - mean).norm().max((disp[3] - mean).norm()),
        ),
    };
    let lip = (first + second) * (o + T::of(8.0) * eps);
    // Monotone pieces of the cubic on [-ε, 1+ε].
    let ext = T::of(16.0) * eps;
    let mut brk = [-ext, z, z, o + ext];
    let mut nb = 1;
    let (nr, roots) = quadratic_roots(T::of(3.0) * c[3], T::of(2.0) * c[2], c[1]);
    for &r in roots.iter().take(nr) {
        if r > -ext && r < o + ext {
            brk[nb] = r;
            nb += 1;
        }
    }
    brk[nb] = o + ext;
    let at = |t: T| -> [Vector3<T>; 4] { [0, 1, 2, 3].map(|k| a[k] + disp[k] * t) };
    let mut t_prev = z;
    let mut result = CcdResult {
        hit: false,
        toi: o,
        capped: false,
    };
    'pieces: for i in 0..nb {
        let (pa, pb) = (brk[i], brk[i + 1]);
        let (fa, fb) = (cubic_eval(&c, pa), cubic_eval(&c, pb));
        if (fa > level && fb > level) || (fa < -level && fb < -level) {
            continue;
        }
        let lo = if fa.abs() <= level {
            pa
        } else {
            let lv = if fa > z { level } else { -level };
            solve_monotone(&c, lv, pa, pb).0
        };
        let hi = if fb.abs() <= level {
            pb
        } else {
            let lv = if fb > z { level } else { -level };
            solve_monotone(&c, lv, pa, pb).1
        };
        let (lo, hi) = (lo.max(z), hi.min(o));
        if lo > hi {
            continue;
        }
        // 3. Conservative advancement through the window. Plain CCD: when the coplanarity root
        //    inside the window is a contact, the first safe step already gives the toi (no
        //    contact can precede the window), which avoids Zeno-like slow convergence.
        let mut root_contact = false;
        let (glo, ghi) = (cubic_eval(&c, lo), cubic_eval(&c, hi));
        if delta == z && glo * ghi <= z {
            let (rl, rr) = solve_monotone(&c, z, lo, hi);
            let dr = sq_distance(kind, &at(T::of(0.5) * (rl + rr))).sqrt();
            root_contact = dr <= tol + lip * (rr - rl);
        }
        let mut t = lo;
        let mut hit_at = None;
        let mut capped = true;
        for _ in 0..CCD_MAX_ADVANCE {
            let d = sq_distance(kind, &at(t)).sqrt();
            let gap = d - reach;
            if gap <= z {
                hit_at = Some(t);
                capped = false;
                break;
            }
            if lip <= z {
                capped = false;
                break;
            }
            let next = t + gap / lip;
            if next > hi {
                capped = false;
                break;
            }
            t = next;
            if root_contact {
                hit_at = Some(t);
                capped = false;
                break;
            }
        }
        if capped {
            hit_at = Some(t);
        }
        if let Some(th) = hit_at {
            // 4. Reference-frame sign check with 0.9 backtracking.
            let f_ref = cubic_eval(&c, T::of(0.5) * (t_prev + th));
            let mut toi = th;
            if f_ref.abs() > e_err {
                for _ in 0..CCD_MAX_BACKTRACK {
                    if cubic_eval(&c, toi) * f_ref > z {
                        break;
                    }
                    toi *= T::of(0.9);
                }
                if cubic_eval(&c, toi) * f_ref <= z {
                    toi = z;
                }
            }
            result = CcdResult {
                hit: true,
                toi,
                capped,
            };
            break 'pieces;
        }
        t_prev = hi;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f64, y: f64, z: f64) -> Vector3<f64> {
        Vector3::new(x, y, z)
    }

    #[test]
    fn point_through_triangle() {
        let tri = [v(0., 0., 0.), v(1., 0., 0.), v(0., 1., 0.)];
        let x0 = [v(0.2, 0.2, 1.0), tri[0], tri[1], tri[2]];
        let x1 = [v(0.2, 0.2, -1.0), tri[0], tri[1], tri[2]];
        let r = ccd(CcdKind::PointTriangle, &x0, &x1, 0.0);
        assert!(r.hit && r.toi <= 0.5 && r.toi > 0.49, "{r:?}");
        let r = ccd(CcdKind::PointTriangle, &x0, &x1, 0.1);
        assert!(r.hit && r.toi <= 0.45 && r.toi > 0.44, "{r:?}");
        let x1m = [v(2.0, 2.0, -1.0), tri[0], tri[1], tri[2]];
        let r = ccd(CcdKind::PointTriangle, &x0, &x1m, 0.0);
        assert!(!r.hit && r.toi == 1.0, "{r:?}");
    }

    #[test]
    fn edges_cross() {
        let x0 = [
            v(0., 0., 0.),
            v(1., 0., 0.),
            v(0.5, -0.5, 1.),
            v(0.5, 0.5, 1.),
        ];
        let x1 = [
            v(0., 0., 0.),
            v(1., 0., 0.),
            v(0.5, -0.5, -1.),
            v(0.5, 0.5, -1.),
        ];
        let r = ccd(CcdKind::EdgeEdge, &x0, &x1, 0.0);
        assert!(r.hit && r.toi <= 0.5 && r.toi > 0.49, "{r:?}");
    }

    #[test]
    fn coplanar_sliding_point_is_caught() {
        let tri = [v(0., 0., 0.), v(1., 0., 0.), v(0., 1., 0.)];
        let x0 = [v(-1.0, 0.2, 0.0), tri[0], tri[1], tri[2]];
        let x1 = [v(1.0, 0.2, 0.0), tri[0], tri[1], tri[2]];
        let r = ccd(CcdKind::PointTriangle, &x0, &x1, 0.0);
        assert!(r.hit && r.toi <= 0.5, "{r:?}");
    }
}
