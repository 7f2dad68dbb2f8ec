//! Proximal operators of RAINBOW's PROX contact model (report §2.4, eqs. 1–3, 22; code
//! `proximal_contact/proximal_operators.py`). For the indicator of a closed convex set C the
//! proximal operator `prox_f(z) = argmin_x f(x) + ½‖x − z‖²` is the Euclidean projection onto C:
//! - [`prox_r_plus`]: onto R+ (normal impulse, Signorini);
//! - [`prox_disk`]: onto the Coulomb disk {γ ∈ R² : ‖γ‖ ≤ μ λn} (RAINBOW's `prox_sphere`, which
//!   returns 0 when λn ≤ 0);
//! - [`prox_origin`]: frictionless (everything maps to 0);
//! - [`prox_ellipse`]: onto an anisotropic friction ellipse by bisection on the Lagrange
//!   multiplier (RAINBOW's `prox_ellipsoid`, not wired into its soft-body sweep, nor into ours).
//!
//! The GPU twins are in `kernels/prox/prox.glsl`.

/// Bisection tolerance of [`prox_ellipse`] (RAINBOW's `ellipsoid_tolerance`, written `10e-10`).
pub const ELLIPSE_TOLERANCE: f64 = 10e-10;
/// Bracket expansion factor of [`prox_ellipse`] (RAINBOW's `ellipsoid_expansion`).
pub const ELLIPSE_EXPANSION: f64 = 1.5;
/// Bisection iterations of [`prox_ellipse`] at most (RAINBOW's `ellipsoid_max_iterations`).
pub const ELLIPSE_MAX_ITERATIONS: u32 = 100;

/// Projection onto R+: `max(0, z)` (a NaN maps to 0).
pub fn prox_r_plus(z: f64) -> f64 {
    if z > 0.0 {
        z
    } else {
        0.0
    }
}

/// Projection of the friction impulse `z` (s, t components, N·s) onto the disk of radius
/// `mu * lambda_n`: `z` itself inside, `z` scaled onto the circle outside, 0 when
/// `lambda_n <= 0`.
pub fn prox_disk(z: [f64; 2], mu: f64, lambda_n: f64) -> [f64; 2] {
    if lambda_n <= 0.0 {
        return [0.0, 0.0];
    }
    let radius = mu * lambda_n;
    let sq = z[0] * z[0] + z[1] * z[1];
    if sq <= radius * radius {
        return z;
    }
    let scale = radius / sq.sqrt();
    [z[0] * scale, z[1] * scale]
}

/// Frictionless contact: the friction impulse is always 0.
pub fn prox_origin(_z: [f64; 2]) -> [f64; 2] {
    [0.0, 0.0]
}

/// Projection of `z` onto the ellipse `(x/a)² + (y/b)² ≤ 1` with semi-axes `a = mu[0] λn`,
/// `b = mu[1] λn` (anisotropic Coulomb friction). As RAINBOW: 0 when `lambda_n <= 0`, the
/// origin when both coefficients are 0, the disk when they are equal; otherwise the multiplier
/// t ≥ 0 of `x_i = a_i² z_i / (a_i² + t)` is found by bisection on
/// `g(t) = Σ a_i² z_i² / (a_i² + t)² − 1` after scaling everything into [-1, 1].
pub fn prox_ellipse(z: [f64; 2], mu: [f64; 2], lambda_n: f64) -> [f64; 2] {
    if lambda_n <= 0.0 {
        return [0.0, 0.0];
    }
    if mu[0] == 0.0 && mu[1] == 0.0 {
        return prox_origin(z);
    }
    if mu[0] == mu[1] {
        return prox_disk(z, mu[0], lambda_n);
    }
    let axes = [mu[0] * lambda_n, mu[1] * lambda_n];
    let scale = 1.0
        / [1.0, axes[0], axes[1], z[0].abs(), z[1].abs()]
            .into_iter()
            .fold(0.0, f64::max);
    let sa = [scale * axes[0], scale * axes[1]];
    let sz = [scale * z[0], scale * z[1]];
    let (aa, zz) = (
        [sa[0] * sa[0], sa[1] * sa[1]],
        [sz[0] * sz[0], sz[1] * sz[1]],
    );
    // A zero semi-axis (one coefficient 0) makes the set a segment: its component is 0.
    let inside = (0..2).all(|i| if aa[i] > 0.0 { true } else { zz[i] == 0.0 })
        && (0..2)
            .filter(|&i| aa[i] > 0.0)
            .map(|i| zz[i] / aa[i])
            .sum::<f64>()
            - 1.0
            < ELLIPSE_TOLERANCE;
    if inside {
        return z;
    }
    let g = |t: f64| {
        (0..2)
            .map(|i| aa[i] * zz[i] / ((aa[i] + t) * (aa[i] + t)))
            .sum::<f64>()
            - 1.0
    };
    let mut t0 = 0.0;
    let mut t1 = sa[0].max(sa[1]) * (zz[0] + zz[1]).sqrt();
    let mut expansions = 0;
    while g(t1) > 0.0 && expansions < 200 {
        t1 *= ELLIPSE_EXPANSION;
        expansions += 1;
    }
    let mut tk = 0.5 * (t0 + t1);
    for _ in 0..ELLIPSE_MAX_ITERATIONS {
        if (t1 - t0).abs() < ELLIPSE_TOLERANCE {
            break;
        }
        let gk = g(tk);
        if gk.abs() < ELLIPSE_TOLERANCE {
            break;
        }
        if gk > 0.0 {
            t0 = tk;
        } else {
            t1 = tk;
        }
        tk = 0.5 * (t0 + t1);
    }
    let t = tk / (scale * scale);
    [
        axes[0] * axes[0] * z[0] / (axes[0] * axes[0] + t),
        axes[1] * axes[1] * z[1] / (axes[1] * axes[1] + t),
    ]
}

/// The contact prox of one contact: `λn = prox_R+(z_n)`, `λf = prox_disk(z_f)` with the cone
/// radius `mu * radius_lambda_n` (the new λn for Gauss–Seidel and hybrid, the old one for
/// Jacobi, report Alg. 2/4/5).
pub fn prox_contact(z: [f64; 3], mu: f64, radius_lambda_n: Option<f64>) -> [f64; 3] {
    let n = prox_r_plus(z[0]);
    let f = prox_disk([z[1], z[2]], mu, radius_lambda_n.unwrap_or(n));
    [n, f[0], f[1]]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f64; 2], b: [f64; 2], tol: f64) -> bool {
        (a[0] - b[0]).abs() <= tol && (a[1] - b[1]).abs() <= tol
    }

    #[test]
    fn r_plus_is_max_with_zero() {
        for z in [-3.0, -1e-300, 0.0, 1e-300, 2.5] {
            assert_eq!(prox_r_plus(z), z.max(0.0));
        }
        assert_eq!(prox_r_plus(f64::NAN), 0.0);
    }

    #[test]
    fn disk_inside_unchanged_outside_scaled_nonpositive_normal_zero() {
        // Inside: unchanged.
        assert_eq!(prox_disk([0.3, -0.4], 1.0, 1.0), [0.3, -0.4]);
        // On the circle: unchanged.
        assert_eq!(prox_disk([0.6, 0.8], 0.5, 2.0), [0.6, 0.8]);
        // Outside: scaled onto the circle of radius mu * lambda_n, same direction.
        let p = prox_disk([3.0, 4.0], 0.5, 2.0);
        assert!(close(p, [0.6, 0.8], 1e-15), "{p:?}");
        // lambda_n <= 0: zero, whatever z.
        assert_eq!(prox_disk([3.0, 4.0], 0.5, 0.0), [0.0, 0.0]);
        assert_eq!(prox_disk([1e-9, 0.0], 0.5, -1.0), [0.0, 0.0]);
        // mu = 0: zero unless z = 0.
        assert_eq!(prox_disk([1.0, 1.0], 0.0, 1.0), [0.0, 0.0]);
        assert_eq!(prox_origin([1.0, 2.0]), [0.0, 0.0]);
    }

    #[test]
    fn disk_is_the_euclidean_projection() {
        // The projection minimises |x - z| over the disk: compare with a dense sampling.
        let (mu, ln) = (0.7, 1.3);
        let r = mu * ln;
        for z in [[2.0, -0.5], [-0.1, 0.2], [0.0, -5.0], [0.9, 0.1]] {
            let p = prox_disk(z, mu, ln);
            let d = ((p[0] - z[0]).powi(2) + (p[1] - z[1]).powi(2)).sqrt();
            for i in 0..400 {
                for k in 0..=20 {
                    let a = i as f64 / 400.0 * std::f64::consts::TAU;
                    let q = [r * k as f64 / 20.0 * a.cos(), r * k as f64 / 20.0 * a.sin()];
                    let dq = ((q[0] - z[0]).powi(2) + (q[1] - z[1]).powi(2)).sqrt();
                    assert!(dq >= d - 1e-12, "z {z:?}: {q:?} closer than {p:?}");
                }
            }
        }
    }

    #[test]
    fn contact_prox_uses_the_given_cone_radius() {
        // Gauss–Seidel / hybrid: radius from the new normal impulse.
        let p = prox_contact([2.0, 3.0, 4.0], 0.5, None);
        assert!(
            p[0] == 2.0 && (p[1] - 0.6).abs() < 1e-15 && (p[2] - 0.8).abs() < 1e-15,
            "{p:?}"
        );
        // Jacobi: radius from the old normal impulse (here 4 -> radius 2).
        let p = prox_contact([2.0, 3.0, 4.0], 0.5, Some(4.0));
        assert!(
            (p[1] - 1.2).abs() < 1e-15 && (p[2] - 1.6).abs() < 1e-15,
            "{p:?}"
        );
        // A negative normal z gives a zero impulse (and zero friction with the new radius).
        assert_eq!(prox_contact([-1.0, 3.0, 4.0], 0.5, None), [0.0, 0.0, 0.0]);
    }

    #[test]
    fn ellipse_projection() {
        // Equal coefficients: the disk.
        assert_eq!(
            prox_ellipse([3.0, 4.0], [0.5, 0.5], 2.0),
            prox_disk([3.0, 4.0], 0.5, 2.0)
        );
        // Inside: unchanged; λn <= 0: zero; frictionless: zero.
        assert_eq!(prox_ellipse([0.1, 0.1], [1.0, 0.5], 1.0), [0.1, 0.1]);
        assert_eq!(prox_ellipse([5.0, 0.1], [1.0, 0.5], 0.0), [0.0, 0.0]);
        assert_eq!(prox_ellipse([5.0, 0.1], [0.0, 0.0], 1.0), [0.0, 0.0]);
        // On an axis: the vertex of the ellipse.
        let p = prox_ellipse([5.0, 0.0], [1.0, 0.5], 2.0);
        assert!(close(p, [2.0, 0.0], 1e-8), "{p:?}");
        let p = prox_ellipse([0.0, -5.0], [1.0, 0.5], 2.0);
        assert!(close(p, [0.0, -1.0], 1e-8), "{p:?}");
        // General point: on the boundary, and z - x along the outward normal (x/a², y/b²).
        let (a, b) = (2.0, 1.0);
        let z = [3.0, 2.0];
        let p = prox_ellipse(z, [1.0, 0.5], 2.0);
        let on = (p[0] / a).powi(2) + (p[1] / b).powi(2);
        assert!((on - 1.0).abs() < 1e-7, "{p:?}: {on}");
        let normal = [p[0] / (a * a), p[1] / (b * b)];
        let d = [z[0] - p[0], z[1] - p[1]];
        let cross = normal[0] * d[1] - normal[1] * d[0];
        assert!(cross.abs() < 1e-7, "z - x not along the normal: {cross}");
        assert!(normal[0] * d[0] + normal[1] * d[1] > 0.0);
    }
}
