//! Reference block-sparse symmetric matrices (3×3 blocks) and block-Jacobi preconditioned
//! conjugate gradients, in f64: the twin of `kernels/solver/*.comp` and
//! [`crate::linear`]. The matrix is `A = D + Σ_k (E_ij(B_k) + E_ji(B_kᵀ))`: diagonal blocks `D_r`
//! plus symmetric off-diagonal block pairs (mesh adjacency or contact pairs).

use nalgebra::{Matrix3, Vector3};

/// A symmetric block-sparse matrix with 3×3 blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockMatrix {
    /// Diagonal blocks, one per block row.
    pub diag: Vec<Matrix3<f64>>,
    /// Off-diagonal blocks `(i, j, B)` with `i != j`: `A_ij = B` and `A_ji = Bᵀ`.
    pub off: Vec<(u32, u32, Matrix3<f64>)>,
}

impl BlockMatrix {
    /// Number of block rows.
    pub fn rows(&self) -> usize {
        self.diag.len()
    }

    /// y = A x.
    pub fn mul(&self, x: &[Vector3<f64>]) -> Vec<Vector3<f64>> {
        let mut y: Vec<Vector3<f64>> = self.diag.iter().zip(x).map(|(d, xi)| d * xi).collect();
        for (i, j, b) in &self.off {
            let (i, j) = (*i as usize, *j as usize);
            y[i] += b * x[j];
            y[j] += b.transpose() * x[i];
        }
        y
    }

    /// The dense 3n × 3n matrix (tests).
    pub fn dense(&self) -> nalgebra::DMatrix<f64> {
        let n = self.rows();
        let mut m = nalgebra::DMatrix::zeros(3 * n, 3 * n);
        for (r, d) in self.diag.iter().enumerate() {
            m.view_mut((3 * r, 3 * r), (3, 3)).copy_from(d);
        }
        for (i, j, b) in &self.off {
            let (i, j) = (*i as usize, *j as usize);
            let mut v = m.view_mut((3 * i, 3 * j), (3, 3));
            v += b;
            let mut v = m.view_mut((3 * j, 3 * i), (3, 3));
            v += b.transpose();
        }
        m
    }
}

/// Result of a PCG solve.
#[derive(Debug, Clone, PartialEq)]
pub struct PcgResult {
    /// The solution.
    pub x: Vec<Vector3<f64>>,
    /// Iterations performed.
    pub iterations: u32,
    /// Final ‖r‖ / ‖b‖.
    pub relative_residual: f64,
    /// Why the solve stopped.
    pub exit: SolveExit,
    /// The quadratic model's decrease `½ Σ αᵢ rᵢ·zᵢ` over the iterations.
    pub model_decrease: f64,
    /// `½ r·z` at the end (the preconditioned estimate of the decrease still available).
    pub model_remaining: f64,
}

fn dot(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.dot(y)).sum()
}

/// Block-Jacobi PCG from the initial guess `x0`, stopping at ‖r‖ ≤ `tol`·‖b‖ or `max_iter`.
pub fn pcg(
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    x0: &[Vector3<f64>],
    tol: f64,
    max_iter: u32,
) -> PcgResult {
    let minv: Vec<Matrix3<f64>> = a
        .diag
        .iter()
        .map(|d| d.try_inverse().unwrap_or_else(Matrix3::identity))
        .collect();
    let mut x = x0.to_vec();
    let ax = a.mul(&x);
    let mut r: Vec<Vector3<f64>> = b.iter().zip(&ax).map(|(b, ax)| b - ax).collect();
    let bnorm = dot(b, b).sqrt().max(f64::MIN_POSITIVE);
    let mut z: Vec<Vector3<f64>> = minv.iter().zip(&r).map(|(m, r)| m * r).collect();
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    let mut it = 0;
    let mut model_decrease = 0.0;
    let mut broke = false;
    while it < max_iter && dot(&r, &r).sqrt() > tol * bnorm {
        let q = a.mul(&p);
        let pq = dot(&p, &q);
        if pq <= 0.0 {
            broke = true;
            break;
        }
        let alpha = rz / pq;
        model_decrease += 0.5 * alpha * rz;
        for k in 0..x.len() {
            x[k] += alpha * p[k];
            r[k] -= alpha * q[k];
            z[k] = minv[k] * r[k];
        }
        let rz_new = dot(&r, &z);
        let beta = rz_new / rz;
        rz = rz_new;
        for k in 0..p.len() {
            p[k] = z[k] + beta * p[k];
        }
        it += 1;
    }
    let relative_residual = dot(&r, &r).sqrt() / bnorm;
    let exit = if !relative_residual.is_finite() {
        SolveExit::NonFinite
    } else if relative_residual <= tol {
        SolveExit::Converged
    } else if broke {
        SolveExit::Breakdown
    } else {
        SolveExit::IterationCap
    };
    PcgResult {
        x,
        iterations: it,
        relative_residual,
        exit,
        model_decrease,
        model_remaining: 0.5 * rz,
    }
}

pub use crate::linear::pcg::{decade_thresholds, SolveExit, GROUP_MAX, GROUP_MIN};

/// Stiffness group of one node, `⌊log10(max(e, 10^GROUP_MIN))⌋` clamped to `GROUP_MAX`: the
/// largest `k` with `decade_thresholds()[k - GROUP_MIN] ≤ e` (paper §4.2.2).
pub fn stiffness_group(e: f32, thresholds: &[f32]) -> i32 {
    let e = if e > thresholds[0] { e } else { thresholds[0] };
    let mut g = GROUP_MIN;
    while g < GROUP_MAX && thresholds[(g + 1 - GROUP_MIN) as usize] <= e {
        g += 1;
    }
    g
}

/// Stiffness groups of every node ([`stiffness_group`]).
pub fn stiffness_groups(stiffness: &[f32]) -> Vec<i32> {
    let t = decade_thresholds();
    stiffness.iter().map(|&e| stiffness_group(e, &t)).collect()
}

impl BlockMatrix {
    /// The block-diagonal-by-group part of the matrix: diagonal blocks plus only the
    /// off-diagonal blocks whose two nodes share a group.
    pub fn masked(&self, groups: &[i32]) -> BlockMatrix {
        BlockMatrix {
            diag: self.diag.clone(),
            off: self
                .off
                .iter()
                .filter(|(i, j, _)| groups[*i as usize] == groups[*j as usize])
                .cloned()
                .collect(),
        }
    }

    /// y = A_masked x with A_masked = [`BlockMatrix::masked`]`(groups)`.
    pub fn mul_masked(&self, x: &[Vector3<f64>], groups: &[i32]) -> Vec<Vector3<f64>> {
        self.masked(groups).mul(x)
    }
}

/// Result of a warm-started solve: the grouped (masked) solve and the global one.
#[derive(Debug, Clone, PartialEq)]
pub struct WarmStartedResult {
    /// Stiffness group of every node.
    pub groups: Vec<i32>,
    /// The grouped PCG from zero on the masked system.
    pub warm: PcgResult,
    /// The global PCG started from `warm.x`.
    pub global: PcgResult,
}

/// Block-Jacobi warm start by stiffness groups (paper §4.2): nodes are grouped by
/// [`stiffness_groups`]; block-Jacobi PCG from x = 0 on the masked system (only blocks inside
/// one group) for at most `warm_max_iter` iterations or relative residual `warm_tol`; then
/// block-Jacobi PCG on the full system from that result to `tol` / `max_iter`.
#[allow(clippy::too_many_arguments)]
pub fn pcg_warm_started(
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    stiffness: &[f32],
    tol: f64,
    max_iter: u32,
    warm_tol: f64,
    warm_max_iter: u32,
) -> WarmStartedResult {
    let groups = stiffness_groups(stiffness);
    let zero = vec![Vector3::zeros(); a.rows()];
    let warm = pcg(&a.masked(&groups), b, &zero, warm_tol, warm_max_iter);
    let global = pcg(a, b, &warm.x, tol, max_iter);
    WarmStartedResult {
        groups,
        warm,
        global,
    }
}

/// The device-driven PCG's stop test after an iteration (`kernels/solver/pcg_control.comp`):
/// the best relative residual so far and the iteration it was reached at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcgDecision {
    /// Smallest relative residual so far (the initial one counts as iteration 0).
    pub best: f64,
    /// The iteration that reached `best`.
    pub best_at: u32,
}

impl PcgDecision {
    /// The decision state after init at relative residual `rel`.
    pub fn new(rel: f64) -> PcgDecision {
        PcgDecision {
            best: rel,
            best_at: 0,
        }
    }

    /// Whether to stop after iteration `it` (1-based) reached `rel`: not finite, at most
    /// `tol`, `it ≥ max_iter`, or no new best residual over the last `window` iterations.
    pub fn stop_after(&mut self, it: u32, rel: f64, tol: f64, max_iter: u32, window: u32) -> bool {
        if !rel.is_finite() {
            return true;
        }
        let mut stop = false;
        if rel < self.best {
            (self.best, self.best_at) = (rel, it);
        } else if it - self.best_at >= window {
            stop = true;
        }
        stop || rel <= tol || it >= max_iter
    }

    /// The device's exit reason after iteration `it` (1-based) reached `rel` with the
    /// iteration's `pq` and the new `rz`, or `None` to go on (`kernels/solver/pcg_control.comp`):
    /// a non-finite residual, then the tolerance, a breakdown (p·q ≤ 0 or r·z ≤ 0), the cap,
    /// and stagnation ([`PcgDecision::stop_after`]'s window).
    #[allow(clippy::too_many_arguments)]
    pub fn exit_after(
        &mut self,
        it: u32,
        rel: f64,
        pq: f64,
        rz: f64,
        tol: f64,
        max_iter: u32,
        window: u32,
    ) -> Option<SolveExit> {
        let mut stagnated = false;
        if rel.is_finite() {
            if rel < self.best {
                (self.best, self.best_at) = (rel, it);
            } else if it - self.best_at >= window {
                stagnated = true;
            }
        }
        if !rel.is_finite() {
            Some(SolveExit::NonFinite)
        } else if rel <= tol {
            Some(SolveExit::Converged)
        } else if pq <= 0.0 || rz <= 0.0 {
            Some(SolveExit::Breakdown)
        } else if it >= max_iter {
            Some(SolveExit::IterationCap)
        } else if stagnated {
            Some(SolveExit::Stagnated)
        } else {
            None
        }
    }
}

/// The predicate words of one recorded run of `k` PCG iterations after it ran
/// (`kernels/solver/pcg_control.comp`, run start and direction modes): word j is 1 iff
/// iteration j of the run launched. The solve had run `before` iterations when the run
/// started and stopped after `total` in all (`None`: still unfinished after the run), so
/// iteration j launched iff the solve was unfinished before it: `before + j < total`. A run
/// started after the solve stopped (`total ≤ before`) launches nothing.
pub fn run_predicates(k: u32, before: u32, total: Option<u32>) -> Vec<u32> {
    (0..k)
        .map(|j| total.is_none_or(|t| before + j < t) as u32)
        .collect()
}

/// Block-Jacobi PCG with the device-driven solver's rules: the exit test of
/// [`PcgDecision::exit_after`] after every iteration (`window`: the stagnation window,
/// `u32::MAX` for none), none when ‖b‖ = 0 (x unchanged, residual 0); on a breakdown (p·q ≤ 0
/// or r·z ≤ 0) the breaking iteration takes a step of 0 and counts, and the solve stops.
pub fn pcg_device(
    a: &BlockMatrix,
    b: &[Vector3<f64>],
    x0: &[Vector3<f64>],
    tol: f64,
    max_iter: u32,
    window: u32,
) -> PcgResult {
    let minv: Vec<Matrix3<f64>> = a
        .diag
        .iter()
        .map(|d| d.try_inverse().unwrap_or_else(Matrix3::identity))
        .collect();
    pcg_device_preconditioned(a, &minv, b, x0, tol, max_iter, window)
}

/// [`pcg_device`] with the block-Jacobi preconditioner given (`minv`, one block per row), e.g.
/// the inverse blocks an assembly kernel wrote.
pub fn pcg_device_preconditioned(
    a: &BlockMatrix,
    minv: &[Matrix3<f64>],
    b: &[Vector3<f64>],
    x0: &[Vector3<f64>],
    tol: f64,
    max_iter: u32,
    window: u32,
) -> PcgResult {
    let mut x = x0.to_vec();
    let ax = a.mul(&x);
    let mut r: Vec<Vector3<f64>> = b.iter().zip(&ax).map(|(b, ax)| b - ax).collect();
    let bb = dot(b, b);
    if bb <= 0.0 || bb.is_nan() {
        return PcgResult {
            x,
            iterations: 0,
            relative_residual: 0.0,
            exit: SolveExit::Converged,
            model_decrease: 0.0,
            model_remaining: 0.0,
        };
    }
    let bnorm = bb.sqrt();
    let mut z: Vec<Vector3<f64>> = minv.iter().zip(&r).map(|(m, r)| m * r).collect();
    let mut p = z.clone();
    let mut rz = dot(&r, &z);
    let mut rel = dot(&r, &r).sqrt() / bnorm;
    let mut decision = PcgDecision::new(rel);
    let mut it = 0;
    let mut model_decrease = 0.0;
    let mut exit = if !rel.is_finite() {
        Some(SolveExit::NonFinite)
    } else if rel <= tol {
        Some(SolveExit::Converged)
    } else if max_iter == 0 {
        Some(SolveExit::IterationCap)
    } else if rz <= 0.0 {
        Some(SolveExit::Breakdown)
    } else {
        None
    };
    while exit.is_none() {
        let q = a.mul(&p);
        let pq = dot(&p, &q);
        let alpha = if pq > 0.0 { rz / pq } else { 0.0 };
        let alpha = if alpha.is_finite() { alpha } else { 0.0 };
        model_decrease += 0.5 * alpha * rz;
        for k in 0..x.len() {
            x[k] += alpha * p[k];
            r[k] -= alpha * q[k];
            z[k] = minv[k] * r[k];
        }
        let rz_new = dot(&r, &z);
        let beta = if rz > 0.0 { rz_new / rz } else { 0.0 };
        let beta = if beta.is_finite() { beta } else { 0.0 };
        rz = rz_new;
        for k in 0..p.len() {
            p[k] = z[k] + beta * p[k];
        }
        it += 1;
        rel = dot(&r, &r).sqrt() / bnorm;
        exit = decision.exit_after(it, rel, pq, rz, tol, max_iter, window);
    }
    PcgResult {
        x,
        iterations: it,
        relative_residual: rel,
        exit: exit.unwrap_or(SolveExit::NonFinite),
        model_decrease,
        model_remaining: 0.5 * rz,
    }
}

/// The assembly kernel's block inverse (`kernels/include/block3.glsl` `block_inverse_spd`), in
/// f32 like the kernel: Cholesky of the symmetrised block with every pivot floored at
/// ε·max(diagonal) (ε = f32::EPSILON), D⁻¹ = L⁻ᵀ L⁻¹ (row-major in and out).
pub fn block_inverse_spd(d: &[f32; 9]) -> [f32; 9] {
    let (a00, a11, a22) = (d[0], d[4], d[8]);
    let a10 = 0.5 * (d[3] + d[1]);
    let a20 = 0.5 * (d[6] + d[2]);
    let a21 = 0.5 * (d[7] + d[5]);
    let floor = (f32::EPSILON * a00.max(a11.max(a22))).max(1e-30);
    let l00 = a00.max(floor).sqrt();
    let (l10, l20) = (a10 / l00, a20 / l00);
    let l11 = (a11 - l10 * l10).max(floor).sqrt();
    let l21 = (a21 - l20 * l10) / l11;
    let l22 = (a22 - l20 * l20 - l21 * l21).max(floor).sqrt();
    let (m00, m11, m22) = (1.0 / l00, 1.0 / l11, 1.0 / l22);
    let m10 = -l10 * m00 / l11;
    let m21 = -l21 * m11 / l22;
    let m20 = -(l20 * m00 + l21 * m10) / l22;
    let i00 = m00 * m00 + m10 * m10 + m20 * m20;
    let i01 = m10 * m11 + m20 * m21;
    let i02 = m20 * m22;
    let i11 = m11 * m11 + m21 * m21;
    let i12 = m21 * m22;
    let i22 = m22 * m22;
    [i00, i01, i02, i01, i11, i12, i02, i12, i22]
}

/// The block inverse of `kernels/include/block3_abs.glsl` (`block_inverse_abs`; the assembly
/// kernel's for exact, possibly indefinite Hessians and BAL's `system_add`): |D|⁻¹ = Q |Λ|⁻¹ Qᵀ
/// from the symmetrised block's eigensystem, each |λ| floored at ε·max|λ| (ε = f32::EPSILON):
/// positive definite and finite for any finite block, the identity for a zero block; in f64
/// (row-major in and out).
pub fn block_inverse_abs(d: &[f32; 9]) -> [f64; 9] {
    let r = block_inverse_abs_f64(&nalgebra::Matrix3::from_row_slice(&d.map(f64::from)));
    let mut out = [0.0; 9];
    for (k, o) in out.iter_mut().enumerate() {
        *o = r[(k / 3, k % 3)];
    }
    out
}

/// [`block_inverse_abs`] of an f64 block.
pub fn block_inverse_abs_f64(m: &nalgebra::Matrix3<f64>) -> nalgebra::Matrix3<f64> {
    if m.amax() == 0.0 {
        return nalgebra::Matrix3::identity();
    }
    let sym = 0.5 * (m + m.transpose());
    let eig = sym.symmetric_eigen();
    let top = eig.eigenvalues.abs().max();
    let floor = (f64::from(f32::EPSILON) * top).max(1e-30);
    let inv = eig.eigenvalues.map(|l| 1.0 / l.abs().max(floor));
    eig.eigenvectors * nalgebra::Matrix3::from_diagonal(&inv) * eig.eigenvectors.transpose()
}

#[cfg(test)]
mod tests {
    use super::block_inverse_abs;
    use nalgebra::Matrix3;

    #[test]
    fn absolute_block_inverse_is_the_inverse_of_spd_blocks_and_positive_definite_otherwise() {
        let spd = [4.0, 1.0, 0.5, 1.0, 3.0, 0.25, 0.5, 0.25, 2.0];
        let inv = Matrix3::from_row_slice(&block_inverse_abs(&spd));
        let d = Matrix3::from_row_slice(&spd.map(f64::from));
        assert!((inv * d - Matrix3::identity()).norm() < 1e-9);
        for block in [
            [
                -2.0e3, 5.0e4, 1.0e4, 5.0e4, -1.0e3, 2.0e4, 1.0e4, 2.0e4, -3.0e3,
            ],
            [0.0, 3.0e5, 0.0, 3.0e5, 0.0, 0.0, 0.0, 0.0, -1.0],
        ] {
            let inv = Matrix3::from_row_slice(&block_inverse_abs(&block));
            let eig = inv.symmetric_eigen().eigenvalues;
            assert!(
                eig.iter().all(|v| v.is_finite()) && eig.min() > 0.0,
                "{eig}"
            );
            // |D|⁻¹ |D| = I.
            let d = Matrix3::from_row_slice(&block.map(f64::from));
            let e = d.symmetric_eigen();
            let abs = e.eigenvectors
                * Matrix3::from_diagonal(&e.eigenvalues.abs())
                * e.eigenvectors.transpose();
            assert!((inv * abs - Matrix3::identity()).norm() < 1e-9);
        }
    }
}
