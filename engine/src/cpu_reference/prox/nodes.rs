//! References of PROX's per-node passes (`kernels/prox/damping.comp`,
//! `kernels/prox/safe_velocity.comp`; host `contact::prox::nodes`), in the kernels' f32.

/// RAINBOW's lumped damping in the free update: `u′_a −= coeff_a u_start_a`.
pub fn damp(coeff: &[f32], u_start: &[[f32; 4]], u: &mut [[f32; 4]]) {
    for ((c, s), v) in coeff.iter().zip(u_start).zip(u.iter_mut()) {
        for d in 0..3 {
            v[d] -= c * s[d];
        }
    }
}

/// Safe mode's velocity update: where the limited position `x` differs from the proposal,
/// `v = u · min(1, |v| / |u|)` with `u = (x − x_start) / h` (`inv_h` = 1/h in f32): the
/// velocity the positions took, never faster than before; elsewhere `v` is left unchanged.
pub fn safe_velocity(
    x_start: &[[f32; 4]],
    x_proposed: &[[f32; 4]],
    x: &[[f32; 4]],
    v: &mut [[f32; 4]],
    inv_h: f32,
) {
    for a in 0..v.len() {
        if (0..3).any(|d| x[a][d] != x_proposed[a][d]) {
            let mut u = [0.0f32; 3];
            for d in 0..3 {
                u[d] = (x[a][d] - x_start[a][d]) * inv_h;
            }
            let vv: f32 = (0..3).map(|d| v[a][d] * v[a][d]).sum();
            let uu: f32 = u.iter().map(|c| c * c).sum();
            if uu > vv {
                let s = (vv / uu).sqrt();
                u.iter_mut().for_each(|c| *c *= s);
            }
            v[a][..3].copy_from_slice(&u);
        }
    }
}
