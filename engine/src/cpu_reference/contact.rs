//! Reference analytic colliders with barrier contact and lagged Coulomb friction (the CPU twin
//! of `kernels/include/colliders.glsl` as used by `kernels/newton/vectors.comp`).
//!
//! Contact: for each collider c with signed gap `g_c(x, t)` (negative inside), offset
//! (thickness) `o_c` and outward unit normal `n_c`, the distance above the offset surface is
//! `d = g_c − o_c` and the potential `κ (m/h²) b(d)` with IPC's barrier
//! `b(d) = −(d − d̂)² ln(d/d̂)` on `0 < d < d̂` (Li et al. 2020); `d` is clamped from below at
//! [`COLLIDER_GUARD`] (the stepper keeps iterates outside: a line-search trial that enters an
//! offset is rejected, [`segment_clear`]). Its Hessian block keeps the normal part
//! `κ (m/h²) b''(d) n nᵀ` (PSD; the curvature term of spheres and box edges is dropped).
//! Friction as in IPC and the barrier-augmented Lagrangian paper §4.1: at each Newton
//! linearisation point the normal force `λ = κ (m/h²) |b'(d)|`, normal n and collider
//! displacement over the step are lagged per vertex (nearest collider within d̂), and the
//! dissipative potential `μ λ f₀(‖u_T‖)` with `u_T = (I − n nᵀ)(x − x_start − Δc)` is added;
//! `f₀` is IPC's C¹ smoothing with slip threshold ε (m). Its Hessian block is
//! `μ λ f₁(y)/y (I − n nᵀ)` (PSD part).

use nalgebra::{Matrix3, Vector3};

pub use crate::contact::colliders::{Collider, Shape};

pub use crate::contact::colliders::COLLIDER_GUARD;

/// Friction lagged at a Newton linearisation point for one vertex.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrictionLag {
    /// Contact normal.
    pub normal: Vector3<f64>,
    /// μ λ (N).
    pub mu_lambda: f64,
    /// Collider displacement over the step (m).
    pub shift: Vector3<f64>,
}

/// Distance of `x` above collider `c`'s offset surface at time `t` (m; negative inside) and
/// the outward normal.
pub fn distance(c: &Collider, x: &Vector3<f64>, t: f64) -> (f64, Vector3<f64>) {
    let (g, n) = c.gap(x, t);
    (g - c.offset, n)
}

/// IPC's barrier `b(d) = −(d − d̂)² ln(d/d̂)` on `d < d̂` (0 beyond) and its first and second
/// derivatives.
pub fn barrier(d: f64, dhat: f64) -> (f64, f64, f64) {
    if d >= dhat {
        return (0.0, 0.0, 0.0);
    }
    let l = (d / dhat).ln();
    let b = -(d - dhat) * (d - dhat) * l;
    let b1 = (dhat - d) * (2.0 * l + 1.0 - dhat / d);
    let b2 = -(2.0 * l + 1.0 - dhat / d) + (dhat - d) * (2.0 / d + dhat / (d * d));
    (b, b1, b2)
}

/// `x` moved out along the normal to `target` above each collider's offset surface that it is
/// less than [`COLLIDER_GUARD`] above (one pass in collider order; `collider_push_out`).
pub fn push_out(colliders: &[Collider], x: &Vector3<f64>, t: f64, target: f64) -> Vector3<f64> {
    let mut x = *x;
    for c in colliders {
        let (d, n) = distance(c, &x, t);
        if d < COLLIDER_GUARD {
            x += (target - d) * n;
        }
    }
    x
}

/// Whether the segment `a → b` stays at least [`COLLIDER_GUARD`] above every collider's offset
/// surface at time `t` (`collider_segment_clear`): planes by the end point, spheres by the
/// segment's closest point to the centre, boxes by conservative advancement (32 at most); a
/// segment that starts within an offset is judged by its end point alone.
pub fn segment_clear(colliders: &[Collider], a: &Vector3<f64>, b: &Vector3<f64>, t: f64) -> bool {
    let ab = b - a;
    let len = ab.norm();
    for c in colliders {
        if distance(c, b, t).0 < COLLIDER_GUARD {
            return false;
        }
        if len == 0.0 || distance(c, a, t).0 < COLLIDER_GUARD {
            continue;
        }
        match c.shape {
            Shape::Plane { .. } => {}
            Shape::Sphere { center, .. } => {
                let centre = Vector3::from(center) + Vector3::from(c.velocity) * t;
                let s = ((centre - a).dot(&ab) / (len * len)).clamp(0.0, 1.0);
                if distance(c, &(a + s * ab), t).0 < COLLIDER_GUARD {
                    return false;
                }
            }
            Shape::Box { .. } => {
                let mut s = 0.0;
                let mut done = false;
                for _ in 0..32 {
                    let d = distance(c, &(a + s * ab), t).0;
                    if d < COLLIDER_GUARD {
                        return false;
                    }
                    s += (d - 0.5 * COLLIDER_GUARD) / len;
                    if s >= 1.0 {
                        done = true;
                        break;
                    }
                }
                if !done {
                    return false;
                }
            }
        }
    }
    true
}

/// The nearest collider's friction data at `x` (time `t`, step `h`) within the barrier's reach
/// `dhat`, or `None`. `kc` is the barrier stiffness κ m/h² (N/m).
pub fn friction_lag(
    colliders: &[Collider],
    x: &Vector3<f64>,
    t: f64,
    h: f64,
    kc: f64,
    dhat: f64,
) -> Option<FrictionLag> {
    let mut best: Option<(f64, FrictionLag)> = None;
    for c in colliders {
        let (d, n) = distance(c, x, t);
        let d = d.max(COLLIDER_GUARD);
        if d < dhat && best.as_ref().is_none_or(|b| d < b.0) {
            best = Some((
                d,
                FrictionLag {
                    normal: n,
                    mu_lambda: c.friction * kc * (-barrier(d, dhat).1),
                    shift: c.surface_velocity(x, t) * h,
                },
            ));
        }
    }
    best.map(|b| b.1).filter(|l| l.mu_lambda > 0.0)
}

/// IPC's f₁(y)/y for slip threshold ε: `2/ε − y/ε²` below ε, `1/y` above.
pub fn f1_over_y(y: f64, eps: f64) -> f64 {
    if y < eps {
        2.0 / eps - y / (eps * eps)
    } else {
        1.0 / y
    }
}

/// IPC's f₀(y): `−y³/(3ε²) + y²/ε + ε/3` below ε, `y` above.
pub fn f0(y: f64, eps: f64) -> f64 {
    if y < eps {
        -y * y * y / (3.0 * eps * eps) + y * y / eps + eps / 3.0
    } else {
        y
    }
}

/// What one vertex's contact evaluation needs besides its position.
#[derive(Debug, Clone, Copy)]
pub struct ContactParams {
    /// Barrier stiffness κ m/h² (N/m).
    pub kc: f64,
    /// Time (s) of the colliders' pose.
    pub t: f64,
    /// Friction slip threshold ε (m).
    pub eps: f64,
    /// Barrier activation distance d̂ (m).
    pub dhat: f64,
}

/// Barrier and friction energy (J), gradient (N) and PSD Hessian block (N/m) of one vertex at
/// `x` with step start `x_start`.
pub fn vertex_contact(
    colliders: &[Collider],
    x: &Vector3<f64>,
    x_start: &Vector3<f64>,
    lag: Option<&FrictionLag>,
    p: &ContactParams,
) -> (f64, Vector3<f64>, Matrix3<f64>) {
    let mut e = 0.0;
    let mut g = Vector3::zeros();
    let mut h = Matrix3::zeros();
    for c in colliders {
        let (d, n) = distance(c, x, p.t);
        let (b, b1, b2) = barrier(d.max(COLLIDER_GUARD), p.dhat);
        e += p.kc * b;
        g += p.kc * b1 * n;
        h += p.kc * b2 * n * n.transpose();
    }
    if let Some(l) = lag {
        let pr = Matrix3::identity() - l.normal * l.normal.transpose();
        let u = pr * (x - x_start - l.shift);
        let y = u.norm();
        e += l.mu_lambda * f0(y, p.eps);
        let w = l.mu_lambda * f1_over_y(y, p.eps);
        g += w * u;
        h += w * pr;
    }
    (e, g, h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn colliders() -> Vec<Collider> {
        vec![
            Collider {
                shape: Shape::Plane {
                    normal: [0.0, 0.0, 1.0],
                    offset: 0.0,
                },
                friction: 0.4,
                velocity: [0.0; 3],
                angular_velocity: [0.0; 3],
                offset: 0.0,
            },
            Collider {
                shape: Shape::Sphere {
                    center: [0.0, 0.0, 0.5],
                    radius: 0.3,
                },
                friction: 0.2,
                velocity: [0.1, 0.0, 0.0],
                angular_velocity: [0.0, 0.0, 2.0],
                offset: 0.0,
            },
            Collider {
                shape: Shape::Box {
                    min: [1.0, -0.5, -0.5],
                    max: [2.0, 0.5, 0.2],
                },
                friction: 0.5,
                velocity: [0.0, 0.0, -0.2],
                angular_velocity: [0.0; 3],
                offset: 0.0,
            },
        ]
    }

    #[test]
    fn gaps_are_signed_distances() {
        let c = colliders();
        let (d, n) = c[0].gap(&Vector3::new(3.0, 1.0, -0.01), 0.0);
        assert!((d + 0.01).abs() < 1e-15 && n == Vector3::z());
        // The sphere moved 0.1 m along x after 1 s.
        let (d, n) = c[1].gap(&Vector3::new(0.1, 0.0, 0.9), 1.0);
        assert!((d - 0.1).abs() < 1e-12 && (n - Vector3::z()).norm() < 1e-12);
        // Inside the box, nearest to the top face (0.05 below it).
        let (d, n) = c[2].gap(&Vector3::new(1.5, 0.0, 0.15), 0.0);
        assert!((d + 0.05).abs() < 1e-12 && n == Vector3::z());
        // Outside beside a vertical edge.
        let (d, _) = c[2].gap(&Vector3::new(2.3, 0.9, 0.0), 0.0);
        assert!((d - 0.5).abs() < 1e-12);
    }

    #[test]
    fn contact_gradient_and_hessian_match_finite_differences() {
        let mut c = colliders();
        c[1].offset = 0.01;
        let p = ContactParams {
            kc: 1e4,
            t: 0.25,
            eps: 1e-3,
            dhat: 0.05,
        };
        // Each within d̂ above one collider's offset surface (the sphere's centre is at
        // (0.025, 0, 0.5) at t = 0.25, its offset surface at radius 0.31; the box's top at 0.15).
        for x in [
            Vector3::new(0.05, 0.02, 0.02),
            Vector3::new(0.025, 0.01, 0.5 + 0.33),
            Vector3::new(1.4, 0.1, 0.17),
        ] {
            let x_start = x + Vector3::new(-0.003, 0.002, 0.01);
            let lag = friction_lag(&c, &x, p.t, 0.01, p.kc, p.dhat);
            assert!(lag.is_some(), "{x} is near a frictional collider");
            // Evaluate nearby with the lag fixed.
            let x1 = x + Vector3::new(4e-4, -2e-4, 1e-4);
            let (_, g, h) = vertex_contact(&c, &x1, &x_start, lag.as_ref(), &p);
            let mut hfd = Matrix3::zeros();
            for k in 0..3 {
                let d = 1e-7;
                let (mut xp, mut xm) = (x1, x1);
                xp[k] += d;
                xm[k] -= d;
                let (ep, gp, _) = vertex_contact(&c, &xp, &x_start, lag.as_ref(), &p);
                let (em, gm, _) = vertex_contact(&c, &xm, &x_start, lag.as_ref(), &p);
                let fd = (ep - em) / (2.0 * d);
                assert!(
                    (fd - g[k]).abs() < 1e-4 * (1.0 + g[k].abs()),
                    "{fd} vs {}",
                    g[k]
                );
                hfd.set_column(k, &((gp - gm) / (2.0 * d)));
            }
            // The PSD block only drops negative (curvature, friction-direction) terms: it
            // dominates the exact Hessian, and along the normal of a plane contact it is exact.
            let diff = h - 0.5 * (hfd + hfd.transpose());
            let scale = 1.0 + h.norm();
            assert!(
                diff.symmetric_eigen().eigenvalues.min() >= -1e-4 * scale,
                "{diff}"
            );
            if x.z < 0.05 {
                assert!((h[(2, 2)] - hfd[(2, 2)]).abs() < 1e-4 * scale);
            }
            let e = h.symmetric_eigen().eigenvalues;
            assert!(e.min() >= -1e-9);
        }
    }

    #[test]
    fn the_barrier_is_positive_decreasing_and_convex_below_its_reach() {
        let dhat = 1e-3;
        assert_eq!(barrier(dhat, dhat), (0.0, 0.0, 0.0));
        assert_eq!(barrier(2.0 * dhat, dhat), (0.0, 0.0, 0.0));
        let mut last = 0.0;
        for k in 1..100 {
            let d = dhat * (1.0 - k as f64 / 100.0);
            let (b, b1, b2) = barrier(d, dhat);
            assert!(b > last && b1 < 0.0 && b2 > 0.0, "d = {d}: {b} {b1} {b2}");
            last = b;
        }
    }

    #[test]
    fn pushes_and_segments_respect_the_offset() {
        let mut c = colliders();
        for k in &mut c {
            k.offset = 0.02;
        }
        let t = 0.0;
        // A point inside each collider is pushed to the target above every offset surface (a
        // point already outside stays).
        let out = Vector3::new(-2.0, 2.0, 0.5);
        assert_eq!(push_out(&c, &out, t, 1e-3), out);
        for x in [
            Vector3::new(0.5, 0.5, -0.1),
            Vector3::new(0.0, 0.0, 0.6),
            Vector3::new(1.5, 0.0, 0.1),
        ] {
            let y = push_out(&c, &x, t, 1e-3);
            for k in &c {
                assert!(distance(k, &y, t).0 >= 1e-3 - 1e-12, "{x} → {y}");
            }
        }
        // A segment passing through the sphere between two clear end points is not clear; one
        // beside it is; one ending within the plane's offset is not.
        let (a, b) = (Vector3::new(-0.5, 0.0, 0.5), Vector3::new(0.45, 0.0, 0.5));
        assert!(distance(&c[1], &a, t).0 > 0.0 && distance(&c[1], &b, t).0 > 0.0);
        assert!(!segment_clear(&c[1..2], &a, &b, t));
        let side = Vector3::new(0.0, 0.4, 0.0);
        assert!(segment_clear(&c[1..2], &(a + side), &(b + side), t));
        let ground = &c[0..1];
        assert!(!segment_clear(ground, &a, &Vector3::new(0.0, 0.0, 0.01), t));
        assert!(segment_clear(ground, &a, &Vector3::new(0.0, 0.0, 0.03), t));
        // Through the box (x from 0.5 to 2.5 at height 0): not clear; above it: clear.
        let (a, b) = (Vector3::new(0.5, 0.0, 0.0), Vector3::new(2.5, 0.0, 0.0));
        assert!(!segment_clear(&c[2..3], &a, &b, t));
        // A segment from within an offset to outside is judged by its end (a way out).
        let inside = Vector3::new(0.0, 0.0, 0.81);
        assert!(distance(&c[1], &inside, t).0 < 0.0);
        assert!(segment_clear(
            &c[1..2],
            &inside,
            &Vector3::new(0.0, 0.0, 0.9),
            t
        ));
        assert!(!segment_clear(
            &c[1..2],
            &inside,
            &Vector3::new(0.0, 0.0, 0.6),
            t
        ));
        let up = Vector3::new(0.0, 0.0, 0.3);
        assert!(segment_clear(&c[2..3], &(a + up), &(b + up), t));
    }

    #[test]
    fn a_spinning_sphere_drags_its_surface() {
        let c = colliders()[1];
        let t = 0.5;
        let centre = Vector3::new(0.05, 0.0, 0.5);
        // Top of the sphere: ω = 2 ẑ gives no extra velocity on the axis, ω × r elsewhere.
        let top = centre + Vector3::new(0.0, 0.0, 0.3);
        assert!((c.surface_velocity(&top, t) - Vector3::new(0.1, 0.0, 0.0)).norm() < 1e-12);
        let side = centre + Vector3::new(0.3, 0.0, 0.0);
        let v = c.surface_velocity(&side, t);
        assert!((v - Vector3::new(0.1, 0.6, 0.0)).norm() < 1e-12, "{v}");
        // The friction lag carries that surface displacement over the step.
        let near = centre + Vector3::new(0.3005, 0.0, 0.0);
        let lag = friction_lag(&[c], &near, t, 0.01, 1e3, 1e-3).expect("in contact");
        let want = Vector3::new(0.1, 2.0 * 0.3005, 0.0) * 0.01;
        assert!((lag.shift - want).norm() < 1e-12, "{}", lag.shift);
        // Only the sphere spins: the other shapes ignore it.
        let plane = Collider {
            angular_velocity: [1.0, 2.0, 3.0],
            ..colliders()[0]
        };
        assert_eq!(plane.surface_velocity(&side, t), Vector3::zeros());
    }

    #[test]
    fn friction_is_smoothed_coulomb() {
        let eps = 1e-3;
        // Above the threshold the force magnitude is exactly μλ.
        let y = 0.01;
        assert!((f1_over_y(y, eps) * y - 1.0).abs() < 1e-15);
        // f₀ is C¹ at ε.
        assert!((f0(eps, eps) - eps).abs() < 1e-15);
        assert!((f1_over_y(eps, eps) * eps - 1.0).abs() < 1e-12);
    }
}
