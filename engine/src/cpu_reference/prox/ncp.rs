//! NCP residuals of a contact solution (spec §B9 #5): with `v = A λ + b` per contact,
//! - normal: `max_k |min(λn, vn)| / (max|b| + ε)` ≤ 1e-3;
//! - cone: `(‖λf‖ − μ λn)+` ≤ 1e-6 μ λn for every contact;
//! - sliding contacts (‖vf‖ > 1e-4 m/s): `λf · (−vf)` ≥ 0.999 ‖λf‖ ‖vf‖ and ‖λf‖ ≥ 0.999 μ λn;
//! - sticking contacts (‖λf‖ < 0.999 μ λn): ‖vf‖ ≤ 1e-4 m/s;
//! - and the scale-free natural-map residual `‖λ − prox(λ − D⁻¹ (A λ + b))‖∞` with D the
//!   Delassus diagonal (reported, not bounded: unlike RAINBOW's absolute merit it does not
//!   depend on the impulse scale).

#![allow(clippy::neg_cmp_op_on_partial_ord)]

use super::contact::ProxProblem;
use super::operators::prox_contact;

/// Speed (m/s) above which a contact counts as sliding.
pub const SLIDING_SPEED: f64 = 1e-4;
/// Bound of the normal residual.
pub const NORMAL_BOUND: f64 = 1e-3;
/// Relative bound of the cone excess.
pub const CONE_BOUND: f64 = 1e-6;
/// Fraction of the cone radius and of the anti-alignment the Coulomb checks ask for.
pub const COULOMB_FRACTION: f64 = 0.999;

/// Residuals of one contact solution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NcpResiduals {
    /// `max_k |min(λn, vn)| / (max|b| + ε)`.
    pub normal: f64,
    /// Largest `(‖λf‖ − μλn)+ / (μλn)` (0 when inside every cone; ∞ for friction without a
    /// normal impulse).
    pub cone: f64,
    /// Sliding contacts.
    pub sliding: usize,
    /// Smallest `λf · (−vf) / (‖λf‖ ‖vf‖)` over sliding contacts with friction (1 when none).
    pub sliding_alignment: f64,
    /// Smallest `‖λf‖ / (μ λn)` over sliding contacts with μλn > 0 (1 when none).
    pub sliding_magnitude: f64,
    /// Sticking contacts.
    pub sticking: usize,
    /// Largest ‖vf‖ (m/s) over sticking contacts (0 when none).
    pub sticking_speed: f64,
    /// `‖λ − prox(λ − D⁻¹ (A λ + b))‖∞` (N·s).
    pub natural_map: f64,
}

impl NcpResiduals {
    /// Checks the bounds of spec §B9 #5; the error names the first violated one.
    pub fn check(&self) -> Result<(), String> {
        if !(self.normal <= NORMAL_BOUND) {
            return Err(format!(
                "normal residual {:e} > {NORMAL_BOUND:e}",
                self.normal
            ));
        }
        if !(self.cone <= CONE_BOUND) {
            return Err(format!(
                "cone excess {:e} μλn > {CONE_BOUND:e} μλn",
                self.cone
            ));
        }
        if !(self.sliding_alignment >= COULOMB_FRACTION) {
            return Err(format!(
                "sliding friction not opposite the slip: cos = {}",
                self.sliding_alignment
            ));
        }
        if !(self.sliding_magnitude >= COULOMB_FRACTION) {
            return Err(format!(
                "sliding friction below the cone: ‖λf‖ = {} μλn",
                self.sliding_magnitude
            ));
        }
        if !(self.sticking_speed <= SLIDING_SPEED) {
            return Err(format!(
                "sticking contact slips at {:e} m/s",
                self.sticking_speed
            ));
        }
        Ok(())
    }
}

/// The residuals of `lambda` for problem `p`.
pub fn ncp_residuals(p: &ProxProblem, lambda: &[[f64; 3]]) -> NcpResiduals {
    let v = p.velocities(lambda);
    let max_b =
        p.b.iter()
            .flat_map(|b| b.iter().map(|x| x.abs()))
            .fold(0.0, f64::max);
    let mut r = NcpResiduals {
        normal: 0.0,
        cone: 0.0,
        sliding: 0,
        sliding_alignment: 1.0,
        sliding_magnitude: 1.0,
        sticking: 0,
        sticking_speed: 0.0,
        natural_map: 0.0,
    };
    for (k, c) in p.contacts.iter().enumerate() {
        let (l, vk) = (lambda[k], v[k]);
        r.normal = r.normal.max(l[0].min(vk[0]).abs() / (max_b + f64::EPSILON));
        let lf = (l[1] * l[1] + l[2] * l[2]).sqrt();
        let vf = (vk[1] * vk[1] + vk[2] * vk[2]).sqrt();
        let radius = c.friction * l[0].max(0.0);
        let excess = (lf - radius).max(0.0);
        if excess > 0.0 {
            r.cone = r.cone.max(if radius > 0.0 {
                excess / radius
            } else {
                f64::INFINITY
            });
        }
        if vf > SLIDING_SPEED {
            r.sliding += 1;
            if lf > 0.0 {
                let cos = -(l[1] * vk[1] + l[2] * vk[2]) / (lf * vf);
                r.sliding_alignment = r.sliding_alignment.min(cos);
            }
            if radius > 0.0 {
                r.sliding_magnitude = r.sliding_magnitude.min(lf / radius);
            }
        }
        if lf < COULOMB_FRACTION * radius {
            r.sticking += 1;
            r.sticking_speed = r.sticking_speed.max(vf);
        }
        let d = c.delassus_diagonal(&p.inv_mass);
        let inv_d = if d > 0.0 { 1.0 / d } else { 1.0 };
        let z = [0, 1, 2].map(|i| l[i] - inv_d * vk[i]);
        let pz = prox_contact(z, c.friction, None);
        for i in 0..3 {
            r.natural_map = r.natural_map.max((l[i] - pz[i]).abs());
        }
    }
    r
}
