//! The four PROX schemes (report Alg. 2, 4, 5, 7; RAINBOW `proximal_contact/*_solver.py`) and
//! the r-factor strategy of RAINBOW's `solver_interface.py` (the report only says "R ← νR").
//!
//! Every sweep starts from `w = W Jᵀ λᵏ` and computes, per contact k,
//! `z_k = λ_k − r_k (J_k w + b_k)`, `λn = max(0, z_n)`, `λf = proj_{disk(μ λn)}(z_f)`:
//! - **Gauss–Seidel** (Alg. 2): contacts in order, each with the current w, the cone radius from
//!   the new λn, then `w += W J_kᵀ Δλ_k` (only the contact's rows: spec B5 #10);
//! - **Jacobi** (Alg. 4): every contact from the same w, cone radius from the old λn;
//! - **hybrid** (Alg. 5): Jacobi with the cone radius from the new λn of the same contact;
//! - **Gauss–Seidel by colors** (Alg. 7): colors in sequence, the contacts of a color from the
//!   same w, then `w += Σ_color W J_kᵀ Δλ_k`: the exact block Gauss–Seidel update (the
//!   contacts of a color touch disjoint nodes), equal to serial Gauss–Seidel in color-major
//!   order. [`ColorUpdate`] also has the report's average (Alg. 7 line 15) and the code's
//!   index-prefix rebuild (spec B5 #1) for comparison; neither is used by the solver.
//!
//! After each sweep, with `sol` the last accepted iterate: merit = ‖λ − sol‖∞; converged when
//! merit < `absolute_tolerance` or |merit − last merit| < `relative_tolerance` · last merit
//! (then λ is returned); otherwise a merit above the last one rejects the sweep (r ← ν_reduce r,
//! λ ← sol) and anything else accepts it (r ← ν_increase r first when the merit fell by less
//! than `too_small_merit_change`). After `max_iterations` sweeps the last accepted iterate is
//! returned. r starts at `r_factor / A_kk` and is scaled globally. A merit that is not finite
//! counts as a divergence (rejected; RAINBOW's comparisons would accept a NaN).

use super::contact::{gather, initial_r, Contact, ProxProblem};
use super::graph::ColorGroups;
use super::operators::prox_contact;
pub use crate::contact::prox::model::{Exit, Scheme, SolverParams};
use crate::math::Vec3;

/// How a color's updates enter w in [`sweep_colored`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorUpdate {
    /// `w ← w + Σ dw`: exact (the solver's choice).
    Sum,
    /// `w ← w + Σ dw / len`: the report's Alg. 7 line 15 (under-relaxes).
    Average,
    /// RAINBOW's code: before each color, `w = w₀ + Σ_{i < first contact of the color} dw_i`
    /// (drops earlier colors' contacts with larger indices).
    IndexPrefix,
}

/// What the r-factor strategy does after a sweep with merit `merit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Stop and return the current iterate.
    Converged(Exit),
    /// Divergence: scale r by `nu_reduce` and roll back to the last accepted iterate.
    Reject,
    /// Accept; `grow` when r is scaled by `nu_increase` first.
    Accept {
        /// Whether the merit fell by less than `too_small_merit_change`.
        grow: bool,
    },
}

/// RAINBOW's `check_convergence` + `update_r_factor` decision for `merit` after a last accepted
/// merit `last` (∞ before the first acceptance).
pub fn decide(merit: f64, last: f64, p: &SolverParams) -> Decision {
    if !merit.is_finite() {
        return Decision::Reject;
    }
    if merit < p.absolute_tolerance {
        return Decision::Converged(Exit::Absolute);
    }
    if (merit - last).abs() < p.relative_tolerance * last {
        return Decision::Converged(Exit::Relative);
    }
    if merit > last {
        Decision::Reject
    } else {
        Decision::Accept {
            grow: last - merit < p.too_small_merit_change,
        }
    }
}

/// Statistics of one solve.
#[derive(Debug, Clone, PartialEq)]
pub struct SolveReport {
    /// Sweeps done.
    pub sweeps: u32,
    /// Rejected sweeps (rollbacks).
    pub rollbacks: u32,
    /// Sweeps after which r grew.
    pub r_increases: u32,
    /// Why the solve stopped.
    pub exit: Exit,
    /// Merit of every sweep (N·s).
    pub merits: Vec<f64>,
    /// Merits of the accepted sweeps, in order.
    pub accepted_merits: Vec<f64>,
    /// Final global r scale.
    pub r_scale: f64,
}

/// `z = λ − r (J_k w + b)` and the contact prox; `old_normal` gives Jacobi's cone radius.
fn contact_update(
    c: &Contact,
    b: &[f64; 3],
    r: f64,
    lambda: [f64; 3],
    w: &[Vec3],
    old_normal: Option<f64>,
) -> [f64; 3] {
    let jw = c.jacobian(w);
    let z = [0, 1, 2].map(|i| lambda[i] - r * (jw[i] + b[i]));
    prox_contact(z, c.friction, old_normal)
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// One serial Gauss–Seidel sweep over the contacts in `order` with r-factors `r · scale`.
pub fn sweep_serial(
    p: &ProxProblem,
    order: &[u32],
    r: &[f64],
    scale: f64,
    lambda: &mut [[f64; 3]],
) {
    let mut w = gather(&p.contacts, &p.inv_mass, lambda);
    for &k in order {
        let k = k as usize;
        let c = &p.contacts[k];
        let new = contact_update(c, &p.b[k], r[k] * scale, lambda[k], &w, None);
        let d = sub(new, lambda[k]);
        lambda[k] = new;
        c.scatter(&p.inv_mass, d, &mut w);
    }
}

/// One Jacobi (`hybrid = false`) or hybrid sweep with r-factors `r · scale`.
pub fn sweep_jacobi(p: &ProxProblem, hybrid: bool, r: &[f64], scale: f64, lambda: &mut [[f64; 3]]) {
    let w = gather(&p.contacts, &p.inv_mass, lambda);
    let new: Vec<[f64; 3]> = (0..p.len())
        .map(|k| {
            let old = (!hybrid).then_some(lambda[k][0]);
            contact_update(&p.contacts[k], &p.b[k], r[k] * scale, lambda[k], &w, old)
        })
        .collect();
    lambda.copy_from_slice(&new);
}

/// One Gauss–Seidel sweep by colors (`groups`) with r-factors `r · scale`, the color's updates
/// entering w as `update` says.
pub fn sweep_colored(
    p: &ProxProblem,
    groups: &ColorGroups,
    update: ColorUpdate,
    r: &[f64],
    scale: f64,
    lambda: &mut [[f64; 3]],
) {
    let w0 = gather(&p.contacts, &p.inv_mass, lambda);
    let mut w = w0.clone();
    let mut dws: Vec<Vec<Vec3>> = Vec::new();
    if update == ColorUpdate::IndexPrefix {
        dws = vec![Vec::new(); p.len()];
    }
    for c in 0..groups.num_colors() {
        let members = groups.color(c);
        if update == ColorUpdate::IndexPrefix {
            let first = members.iter().copied().min().unwrap_or(0) as usize;
            w = w0.clone();
            for dw in dws.iter().take(first).filter(|d| !d.is_empty()) {
                for (a, d) in w.iter_mut().zip(dw) {
                    *a += d;
                }
            }
        }
        let news: Vec<[f64; 3]> = members
            .iter()
            .map(|&k| {
                let k = k as usize;
                contact_update(&p.contacts[k], &p.b[k], r[k] * scale, lambda[k], &w, None)
            })
            .collect();
        let mut sum = vec![Vec3::zeros(); w.len()];
        for (&k, &new) in members.iter().zip(&news) {
            let k = k as usize;
            let d = sub(new, lambda[k]);
            lambda[k] = new;
            match update {
                ColorUpdate::Sum | ColorUpdate::Average => {
                    p.contacts[k].scatter(&p.inv_mass, d, &mut sum)
                }
                ColorUpdate::IndexPrefix => {
                    let mut dw = vec![Vec3::zeros(); w.len()];
                    p.contacts[k].scatter(&p.inv_mass, d, &mut dw);
                    dws[k] = dw;
                }
            }
        }
        let scale_sum = match update {
            ColorUpdate::Sum => 1.0,
            ColorUpdate::Average => 1.0 / members.len().max(1) as f64,
            ColorUpdate::IndexPrefix => 0.0,
        };
        if scale_sum != 0.0 {
            for (a, d) in w.iter_mut().zip(&sum) {
                *a += d * scale_sum;
            }
        }
    }
}

/// One sweep of `scheme` (the colored scheme needs `groups`).
pub fn sweep(
    p: &ProxProblem,
    scheme: Scheme,
    groups: Option<&ColorGroups>,
    r: &[f64],
    scale: f64,
    lambda: &mut [[f64; 3]],
) -> Result<(), String> {
    match scheme {
        Scheme::GaussSeidel => {
            let order: Vec<u32> = (0..p.len() as u32).collect();
            sweep_serial(p, &order, r, scale, lambda);
        }
        Scheme::Jacobi => sweep_jacobi(p, false, r, scale, lambda),
        Scheme::Hybrid => sweep_jacobi(p, true, r, scale, lambda),
        Scheme::ColoredGaussSeidel => {
            let g = groups.ok_or("the colored Gauss–Seidel scheme needs a coloring")?;
            if g.order.len() != p.len() {
                return Err(format!(
                    "coloring of {} contacts for {}",
                    g.order.len(),
                    p.len()
                ));
            }
            sweep_colored(p, g, ColorUpdate::Sum, r, scale, lambda);
        }
    }
    Ok(())
}

/// Solves `p` with `scheme` from `lambda0` (zeros when `None`, as RAINBOW) with RAINBOW's
/// r-factor strategy; returns the impulses (N·s, per contact (normal, s, t)) and statistics.
pub fn solve(
    p: &ProxProblem,
    scheme: Scheme,
    groups: Option<&ColorGroups>,
    params: &SolverParams,
    lambda0: Option<&[[f64; 3]]>,
) -> Result<(Vec<[f64; 3]>, SolveReport), String> {
    let r = initial_r(&p.contacts, &p.inv_mass, params.r_factor);
    let mut lambda = match lambda0 {
        Some(l) if l.len() == p.len() => l.to_vec(),
        Some(l) => {
            return Err(format!(
                "{} initial impulses for {} contacts",
                l.len(),
                p.len()
            ))
        }
        None => vec![[0.0; 3]; p.len()],
    };
    let mut sol = lambda.clone();
    let mut report = SolveReport {
        sweeps: 0,
        rollbacks: 0,
        r_increases: 0,
        exit: Exit::MaxIterations,
        merits: Vec::new(),
        accepted_merits: Vec::new(),
        r_scale: 1.0,
    };
    let mut last = f64::INFINITY;
    for _ in 0..params.max_iterations {
        sweep(p, scheme, groups, &r, report.r_scale, &mut lambda)?;
        report.sweeps += 1;
        let merit = lambda
            .iter()
            .zip(&sol)
            .flat_map(|(a, b)| (0..3).map(move |i| (a[i] - b[i]).abs()))
            .fold(0.0, |m: f64, x| {
                if m.is_nan() || x.is_nan() {
                    f64::NAN
                } else {
                    m.max(x)
                }
            });
        report.merits.push(merit);
        match decide(merit, last, params) {
            Decision::Converged(exit) => {
                report.exit = exit;
                return Ok((lambda, report));
            }
            Decision::Reject => {
                report.r_scale *= params.nu_reduce;
                report.rollbacks += 1;
                lambda.copy_from_slice(&sol);
            }
            Decision::Accept { grow } => {
                if grow {
                    report.r_scale *= params.nu_increase;
                    report.r_increases += 1;
                }
                last = merit;
                report.accepted_merits.push(merit);
                sol.copy_from_slice(&lambda);
            }
        }
    }
    Ok((sol, report))
}
