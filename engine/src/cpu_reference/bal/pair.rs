//! Per-pair energy, gradient and PSD-projected Hessian of the barrier-augmented Lagrangian
//! (BAL paper Eq. 7, spec §A2) for one stencil:
//!
//! `e_i(x) = m_i(x) · [ σ b(d_i, d̂) + [i ∈ A′] ( μ_i (d̂ + s_i − d_i) + σ b(d_i, d̂ + s_i) ) ]`
//!
//! with `d_i` the unsquared distance ([`super::distance`]), `b` the clamped log barrier
//! ([`super::barrier`]), the slack `s_i` and multiplier `μ_i` held constant (frozen for the
//! Newton iteration, spec §A7 #6), and `m_i` IPC's edge–edge mollifier of
//! `c = ‖ea × eb‖²` (1 for vertex–triangle stencils).
//!
//! **Ours (mollifier):** IPC mollifies its barrier on edge–edge pairs; we multiply every
//! distance term of an edge–edge pair by it (barrier, linear multiplier term and augmentation
//! barrier), so the pair's energy stays continuous where nearly parallel edges switch closest
//! features. The Hessian is projected to PSD by clamping the negative eigenvalues of the 12×12
//! stencil Hessian to 0 (spec §A4); the stencil's mean clamped eigenvalue over its 3k degrees
//! of freedom (k corners taking part) is its stiffness estimate for the warm start (§A6, #10).

use super::super::fem::{project_to_psd, Mat12, Vec12};
use super::barrier::{barrier, barrier_first_derivative, barrier_second_derivative, mollifier};
use super::distance::{edge_cross_squared, stencil_distance, StencilKind};
use nalgebra::Vector3;

/// Augmentation state of a pair of A′ (frozen during a Newton iteration).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Augmentation {
    /// Multiplier μ_i (N, ≥ 0).
    pub mu: f64,
    /// Slack s_i (m, ≥ 0).
    pub s: f64,
}

/// What one pair's terms depend on besides its positions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairParams {
    /// σ (N/m): barrier stiffness and augmentation penalty.
    pub sigma: f64,
    /// d̂ (m).
    pub d_hat: f64,
    /// `Some` for pairs of A′.
    pub augmentation: Option<Augmentation>,
    /// Edge–edge mollifier threshold ε_× (m⁴; [`super::barrier::mollifier_threshold`]); 0
    /// for vertex–triangle stencils.
    pub mollifier_eps: f64,
}

/// `(e, ∂e/∂d, ∂²e/∂d²)` of the unmollified distance terms of one pair at distance `d`, split
/// into the base barrier `σ b(d, d̂)` and the augmentation `μ (d̂ + s − d) + σ b(d, d̂ + s)`.
pub fn distance_terms(d: f64, p: &PairParams) -> ([f64; 3], [f64; 3]) {
    let base = [
        p.sigma * barrier(d, p.d_hat),
        p.sigma * barrier_first_derivative(d, p.d_hat),
        p.sigma * barrier_second_derivative(d, p.d_hat),
    ];
    let aug = match p.augmentation {
        Some(a) => {
            let dh = p.d_hat + a.s;
            [
                a.mu * (dh - d) + p.sigma * barrier(d, dh),
                -a.mu + p.sigma * barrier_first_derivative(d, dh),
                p.sigma * barrier_second_derivative(d, dh),
            ]
        }
        None => [0.0; 3],
    };
    (base, aug)
}

/// Energies of one pair: the base barrier and the augmentation (J), mollifier included.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairEnergy {
    /// `m σ b(d, d̂)`.
    pub barrier: f64,
    /// `m (μ (d̂ + s − d) + σ b(d, d̂ + s))` (0 outside A′).
    pub augmentation: f64,
    /// Distance d (m).
    pub d: f64,
}

/// Everything one pair contributes at `x`.
#[derive(Debug, Clone, PartialEq)]
pub struct PairEval {
    /// Energies.
    pub energy: PairEnergy,
    /// Gradient (N) over the 12 stencil coordinates.
    pub gradient: Vec12,
    /// Hessian before projection (N/m).
    pub hessian_raw: Mat12,
    /// PSD-projected Hessian (N/m).
    pub hessian: Mat12,
    /// Warm-start stiffness per corner: 3 × the mean clamped eigenvalue for the corners taking
    /// part, 0 for the others (N/m; the per-node sums form e_j of spec §A6).
    pub corner_stiffness: [f64; 4],
}

/// Mollifier value and derivatives of an edge–edge stencil (`(1, 0, 0)` and zero
/// derivatives for vertex–triangle stencils or a zero threshold).
fn mollify(kind: StencilKind, x: &[Vector3<f64>; 4], eps: f64) -> (f64, f64, f64, Vec12, Mat12) {
    if kind != StencilKind::EdgeEdge || eps <= 0.0 {
        return (1.0, 0.0, 0.0, Vec12::zeros(), Mat12::zeros());
    }
    let (c, gc, hc) = edge_cross_squared(x);
    let (m, dm, ddm) = mollifier(c, eps);
    (m, dm, ddm, gc, hc)
}

/// Energies only (the line search's trial evaluation); distance ≤ 0 gives +∞.
pub fn pair_energy(kind: StencilKind, x: &[Vector3<f64>; 4], p: &PairParams) -> PairEnergy {
    let (sq, _, _) = super::distance::closest(kind, x);
    let d = sq.sqrt();
    let (base, aug) = distance_terms(d, p);
    let (m, ..) = mollify(kind, x, p.mollifier_eps);
    // A mollified pair with m = 0 (exactly parallel edges) still refuses d = 0.
    let scale = |e: f64| if e.is_infinite() { e } else { m * e };
    PairEnergy {
        barrier: scale(base[0]),
        augmentation: scale(aug[0]),
        d,
    }
}

/// Energy, gradient and PSD-projected Hessian of one pair; `None` when `d = 0`.
pub fn pair_terms(kind: StencilKind, x: &[Vector3<f64>; 4], p: &PairParams) -> Option<PairEval> {
    let sd = stencil_distance(kind, x)?;
    let (base, aug) = distance_terms(sd.d, p);
    let e = [base[0] + aug[0], base[1] + aug[1], base[2] + aug[2]];
    let (m, dm, ddm, gc, hc) = mollify(kind, x, p.mollifier_eps);
    let gd = &sd.gradient;
    let gradient = gd * (m * e[1]) + gc * (e[0] * dm);
    let cross = gd * gc.transpose() + gc * gd.transpose();
    let hessian_raw = (gd * gd.transpose() * e[2] + sd.hessian * e[1]) * m
        + cross * (dm * e[1])
        + (gc * gc.transpose() * ddm + hc * dm) * e[0];
    let hessian = project_to_psd(&hessian_raw);
    // Corners taking part: the reduced stencil's, or all four while the mollifier acts.
    let mut used = [false; 4];
    if dm != 0.0 || ddm != 0.0 {
        used = [true; 4];
    } else {
        for &c in &sd.reduced.corners[..sd.reduced.len()] {
            used[c] = true;
        }
    }
    let k = used.iter().filter(|&&u| u).count() as f64;
    let mean = hessian.trace() / (3.0 * k);
    let corner_stiffness = used.map(|u| if u { 3.0 * mean } else { 0.0 });
    Some(PairEval {
        energy: PairEnergy {
            barrier: m * base[0],
            augmentation: m * aug[0],
            d: sd.d,
        },
        gradient,
        hessian_raw,
        hessian,
        corner_stiffness,
    })
}

#[cfg(test)]
mod tests {
    use super::super::distance::tests::{bump, configurations};
    use super::*;

    /// Scales a configuration so that its distance is `target` (m).
    fn scaled(kind: StencilKind, x: &[Vector3<f64>; 4], target: f64) -> [Vector3<f64>; 4] {
        let d = super::super::distance::closest(kind, x).0.sqrt();
        let c = x[0];
        x.map(|p| c + (p - c) * (target / d))
    }

    fn check_fd(kind: StencilKind, x: &[Vector3<f64>; 4], p: &PairParams, label: &str) {
        let ev = pair_terms(kind, x, p).expect("positive distance");
        let total = |y: &[Vector3<f64>; 4]| {
            let e = pair_energy(kind, y, p);
            e.barrier + e.augmentation
        };
        let e0 = total(x);
        assert!((e0 - ev.energy.barrier - ev.energy.augmentation).abs() <= 1e-12 * e0.abs());
        let h = ev.energy.d * 1e-5;
        let gscale = ev.gradient.amax().max(1e-30);
        let hscale = ev.hessian_raw.amax().max(1e-30);
        for i in 0..12 {
            let fd = (total(&bump(x, i, h)) - total(&bump(x, i, -h))) / (2.0 * h);
            assert!(
                (fd - ev.gradient[i]).abs() <= 1e-5 * gscale,
                "{label} ∂e/∂x{i}: fd {fd} vs {}",
                ev.gradient[i]
            );
            let gp = pair_terms(kind, &bump(x, i, h), p).unwrap().gradient;
            let gm = pair_terms(kind, &bump(x, i, -h), p).unwrap().gradient;
            let col = (gp - gm) / (2.0 * h);
            for j in 0..12 {
                assert!(
                    (col[j] - ev.hessian_raw[(j, i)]).abs() <= 1e-4 * hscale,
                    "{label} ∂²e/∂x{j}∂x{i}: fd {} vs {}",
                    col[j],
                    ev.hessian_raw[(j, i)]
                );
            }
        }
        let eig = ev.hessian.symmetric_eigen();
        assert!(eig.eigenvalues.min() >= -1e-9 * hscale, "{label}: not PSD");
    }

    #[test]
    fn pair_gradient_and_hessian_match_finite_differences() {
        let d_hat = 1e-3;
        for (kind, x, code) in configurations() {
            for (t, &dist) in [2e-4, 7e-4].iter().enumerate() {
                let x = scaled(kind, &x, dist);
                for aug in [
                    None,
                    Some(Augmentation { mu: 3.0, s: 0.0 }),
                    Some(Augmentation { mu: 0.5, s: 4e-4 }),
                ] {
                    // Edge–edge stencils once without and once with an active mollifier
                    // (ε_× above c = ‖ea × eb‖²).
                    let epss: &[f64] = if kind == StencilKind::EdgeEdge {
                        let (c, ..) = edge_cross_squared(&x);
                        &[0.0, c * 1.7]
                    } else {
                        &[0.0]
                    };
                    for &eps in epss {
                        let eps = if eps > 0.0 { eps } else { 0.0 };
                        let p = PairParams {
                            sigma: 250.0,
                            d_hat,
                            augmentation: aug,
                            mollifier_eps: eps,
                        };
                        check_fd(
                            kind,
                            &x,
                            &p,
                            &format!("{kind:?} code {code} d{t} {aug:?} ε×{eps}"),
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn energy_vanishes_beyond_the_activation_distances_and_refuses_contact() {
        let (kind, x, _) = configurations()[6];
        let p = PairParams {
            sigma: 1.0,
            d_hat: 1e-3,
            augmentation: None,
            mollifier_eps: 0.0,
        };
        let far = scaled(kind, &x, 2e-3);
        assert_eq!(pair_energy(kind, &far, &p).barrier, 0.0);
        let ev = pair_terms(kind, &far, &p).unwrap();
        assert_eq!(ev.gradient.amax(), 0.0);
        let touching = scaled(kind, &x, 0.0);
        assert_eq!(pair_energy(kind, &touching, &p).barrier, f64::INFINITY);
        // A slack lifts the augmentation barrier's activation distance to d̂ + s.
        let q = PairParams {
            augmentation: Some(Augmentation { mu: 0.0, s: 2e-3 }),
            ..p
        };
        assert!(pair_energy(kind, &far, &q).augmentation > 0.0);
    }
}
