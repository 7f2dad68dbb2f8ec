//! IPC's C2 clamped log barrier on **unsquared** distances (BAL paper Eq. 6) and IPC's
//! edge–edge mollifier, with their first and second derivatives.
//!
//! `b(d, d̂) = −(d − d̂)² ln(d / d̂)` for `0 < d < d̂`, 0 for `d ≥ d̂` (units: m², so σ·b is an
//! energy when σ is in N/m). It is C2 at `d = d̂` (value, slope and curvature vanish there) and
//! tends to +∞ as `d → 0`; `b(d ≤ 0) = +∞` (an intersecting or touching pair is infeasible).

/// `b(d, d̂)` (m²): +∞ for `d ≤ 0`, 0 for `d ≥ d̂`.
pub fn barrier(d: f64, d_hat: f64) -> f64 {
    if d <= 0.0 {
        f64::INFINITY
    } else if d >= d_hat {
        0.0
    } else {
        let t = d - d_hat;
        -t * t * (d / d_hat).ln()
    }
}

/// `∂b/∂d` (m): `−2(d − d̂) ln(d/d̂) − (d − d̂)²/d` below d̂, 0 above (−∞ for `d ≤ 0`).
pub fn barrier_first_derivative(d: f64, d_hat: f64) -> f64 {
    if d <= 0.0 {
        f64::NEG_INFINITY
    } else if d >= d_hat {
        0.0
    } else {
        let t = d - d_hat;
        -2.0 * t * (d / d_hat).ln() - t * t / d
    }
}

/// `∂²b/∂d²` (dimensionless): `−2 ln(d/d̂) − 4(d − d̂)/d + (d − d̂)²/d²` below d̂, 0 above.
pub fn barrier_second_derivative(d: f64, d_hat: f64) -> f64 {
    if d <= 0.0 {
        f64::INFINITY
    } else if d >= d_hat {
        0.0
    } else {
        let t = d - d_hat;
        -2.0 * (d / d_hat).ln() - 4.0 * t / d + t * t / (d * d)
    }
}

/// IPC's edge–edge mollifier threshold `ε_× = 10⁻³ ‖ea_rest‖² ‖eb_rest‖²` (m⁴) from the rest
/// squared lengths of the two edges.
pub fn mollifier_threshold(rest_sq_len_a: f64, rest_sq_len_b: f64) -> f64 {
    1e-3 * rest_sq_len_a * rest_sq_len_b
}

/// IPC's edge–edge mollifier `m(c) = (2 − c/ε) c/ε` for `c < ε`, 1 above, of
/// `c = ‖(ea1 − ea0) × (eb1 − eb0)‖²`; returns `(m, ∂m/∂c, ∂²m/∂c²)`. It takes an edge–edge
/// pair's energy smoothly to zero as the edges turn parallel, where the distance's closest
/// features (and its gradient) jump.
pub fn mollifier(c: f64, eps: f64) -> (f64, f64, f64) {
    if c >= eps || eps <= 0.0 {
        (1.0, 0.0, 0.0)
    } else {
        let r = c / eps;
        ((2.0 - r) * r, (2.0 - 2.0 * r) / eps, -2.0 / (eps * eps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn barrier_derivatives_match_finite_differences() {
        let d_hat = 1e-3;
        for &d in &[1e-7f64, 1e-5, 3e-4, 7e-4, 9.99e-4] {
            let h = d.min(d_hat - d) * 1e-4;
            let fd1 = (barrier(d + h, d_hat) - barrier(d - h, d_hat)) / (2.0 * h);
            let fd2 = (barrier_first_derivative(d + h, d_hat)
                - barrier_first_derivative(d - h, d_hat))
                / (2.0 * h);
            let a1 = barrier_first_derivative(d, d_hat);
            let a2 = barrier_second_derivative(d, d_hat);
            assert!(
                (fd1 - a1).abs() <= 1e-6 * a1.abs().max(1e-12),
                "b' at {d}: {fd1} vs {a1}"
            );
            assert!(
                (fd2 - a2).abs() <= 1e-6 * a2.abs().max(1e-12),
                "b'' at {d}: {fd2} vs {a2}"
            );
        }
        // C2 at d̂, infinite at 0, decreasing and convex inside.
        assert_eq!(barrier(d_hat, d_hat), 0.0);
        assert!(barrier(d_hat * (1.0 - 1e-9), d_hat) < 1e-20);
        assert!(barrier_first_derivative(d_hat * (1.0 - 1e-9), d_hat).abs() < 1e-12);
        assert!(barrier_second_derivative(d_hat * (1.0 - 1e-6), d_hat).abs() < 1e-5);
        assert_eq!(barrier(0.0, d_hat), f64::INFINITY);
        assert_eq!(barrier(-1.0, d_hat), f64::INFINITY);
        for &d in &[1e-6, 1e-4, 5e-4] {
            assert!(barrier_first_derivative(d, d_hat) < 0.0);
            assert!(barrier_second_derivative(d, d_hat) > 0.0);
        }
    }

    #[test]
    fn mollifier_derivatives_match_finite_differences() {
        let eps = 2e-3;
        for &c in &[1e-5, 5e-4, 1.5e-3, 1.99e-3] {
            let h = 1e-8;
            let (m, dm, ddm) = mollifier(c, eps);
            let fd1 = (mollifier(c + h, eps).0 - mollifier(c - h, eps).0) / (2.0 * h);
            let fd2 = (mollifier(c + h, eps).1 - mollifier(c - h, eps).1) / (2.0 * h);
            assert!((0.0..=1.0).contains(&m));
            assert!((fd1 - dm).abs() < 1e-6 * dm.abs().max(1.0));
            assert!((fd2 - ddm).abs() < 1e-6 * ddm.abs().max(1.0));
        }
        // C1 at ε: value 1 and slope 0 from both sides.
        let (m, dm, _) = mollifier(eps * (1.0 - 1e-12), eps);
        assert!((m - 1.0).abs() < 1e-12 && dm.abs() < 1e-6);
        assert_eq!(mollifier(0.0, eps).0, 0.0);
    }
}
