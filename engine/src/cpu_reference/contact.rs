//! Reference analytic colliders with penalty contact and lagged Coulomb friction (the CPU twin of
//! `kernels/include/colliders.glsl` as used by `kernels/newton/vectors.comp`).
//!
//! Contact: for each collider c with signed gap `d_c(x, t)` (negative inside) and outward unit
//! normal `n_c`, the potential `½ κ (m/h²) min(0, d_c)²` per vertex; its Hessian block keeps
//! the normal part `κ (m/h²) n nᵀ` (PSD; the curvature term of spheres and box edges is
//! dropped). Friction as in IPC (Li et al. 2020) and the barrier-augmented Lagrangian paper
//! §4.1: at each Newton linearisation point the normal force `λ = κ (m/h²) |d|`, normal n and
//! collider displacement over the step are lagged per vertex (deepest collider), and the
//! dissipative potential `μ λ f₀(‖u_T‖)` with `u_T = (I − n nᵀ)(x − x_start − Δc)` is added;
//! `f₀` is IPC's C¹ smoothing with slip threshold ε (m). Its Hessian block is
//! `μ λ f₁(y)/y (I − n nᵀ)` (PSD part).

use nalgebra::{Matrix3, Vector3};

pub use crate::contact::colliders::{Collider, Shape};

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

/// The deepest penetrated collider's friction data at `x` (time `t`, step `h`), or `None`.
/// `kc` is the contact stiffness κ m/h² (N/m).
pub fn friction_lag(
    colliders: &[Collider],
    x: &Vector3<f64>,
    t: f64,
    h: f64,
    kc: f64,
) -> Option<FrictionLag> {
    let mut best: Option<(f64, FrictionLag)> = None;
    for c in colliders {
        let (d, n) = c.gap(x, t);
        if d < 0.0 && best.as_ref().is_none_or(|b| d < b.0) {
            best = Some((
                d,
                FrictionLag {
                    normal: n,
                    mu_lambda: c.friction * kc * (-d),
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

/// Contact and friction energy (J), gradient (N) and PSD Hessian block (N/m) of one vertex at
/// `x` with step start `x_start`, contact stiffness `kc` (N/m), time `t`, slip threshold `eps`.
pub fn vertex_contact(
    colliders: &[Collider],
    x: &Vector3<f64>,
    x_start: &Vector3<f64>,
    lag: Option<&FrictionLag>,
    kc: f64,
    t: f64,
    eps: f64,
) -> (f64, Vector3<f64>, Matrix3<f64>) {
    let mut e = 0.0;
    let mut g = Vector3::zeros();
    let mut h = Matrix3::zeros();
    for c in colliders {
        let (d, n) = c.gap(x, t);
        if d < 0.0 {
            e += 0.5 * kc * d * d;
            g += kc * d * n;
            h += kc * n * n.transpose();
        }
    }
    if let Some(l) = lag {
        let p = Matrix3::identity() - l.normal * l.normal.transpose();
        let u = p * (x - x_start - l.shift);
        let y = u.norm();
        e += l.mu_lambda * f0(y, eps);
        let w = l.mu_lambda * f1_over_y(y, eps);
        g += w * u;
        h += w * p;
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
            },
            Collider {
                shape: Shape::Sphere {
                    center: [0.0, 0.0, 0.5],
                    radius: 0.3,
                },
                friction: 0.2,
                velocity: [0.1, 0.0, 0.0],
                angular_velocity: [0.0, 0.0, 2.0],
            },
            Collider {
                shape: Shape::Box {
                    min: [1.0, -0.5, -0.5],
                    max: [2.0, 0.5, 0.2],
                },
                friction: 0.5,
                velocity: [0.0, 0.0, -0.2],
                angular_velocity: [0.0; 3],
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
        let c = colliders();
        let (kc, t, eps) = (1e4, 0.25, 1e-3);
        for x in [
            Vector3::new(0.05, 0.02, -0.02),
            Vector3::new(0.03, 0.01, 0.25),
            Vector3::new(1.4, 0.1, 0.1),
        ] {
            let x_start = x + Vector3::new(-0.003, 0.002, 0.01);
            let lag = friction_lag(&c, &x, t, 0.01, kc);
            assert!(lag.is_some(), "{x} penetrates a frictional collider");
            // Evaluate nearby with the lag fixed.
            let x1 = x + Vector3::new(4e-4, -2e-4, 1e-4);
            let (_, g, h) = vertex_contact(&c, &x1, &x_start, lag.as_ref(), kc, t, eps);
            let mut hfd = Matrix3::zeros();
            for k in 0..3 {
                let d = 1e-7;
                let (mut xp, mut xm) = (x1, x1);
                xp[k] += d;
                xm[k] -= d;
                let (ep, gp, _) = vertex_contact(&c, &xp, &x_start, lag.as_ref(), kc, t, eps);
                let (em, gm, _) = vertex_contact(&c, &xm, &x_start, lag.as_ref(), kc, t, eps);
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
            if x.z < 0.0 {
                assert!((h[(2, 2)] - hfd[(2, 2)]).abs() < 1e-4 * scale);
            }
            let e = h.symmetric_eigen().eigenvalues;
            assert!(e.min() >= -1e-9);
        }
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
        let inside = centre + Vector3::new(0.29, 0.0, 0.0);
        let lag = friction_lag(&[c], &inside, t, 0.01, 1e3).expect("in contact");
        let want = Vector3::new(0.1, 2.0 * 0.29, 0.0) * 0.01;
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
