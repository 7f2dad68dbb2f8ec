//! Tests of the CPU BAL solver on tiny problems: validation, the σ and A′ rules, intersection-
//! free iterates (min distance > 0 and the exact trajectory checker between consecutive
//! Newton iterates), energy behaviour, the friction law on a ramp, the baseline and the
//! active-pair cap.

use super::problem::scenarios::*;
use super::problem::Problem;
use super::solver::*;
use crate::intersection_check::{trajectory_check, Surface};
use nalgebra::Vector3;

fn settings(linear: LinearSolve) -> BalSettings {
    BalSettings {
        linear_solve: linear,
        ..BalSettings::paper()
    }
}

fn surface(p: &Problem) -> Surface {
    let tris: Vec<[u32; 3]> = p.triangles.iter().map(|t| t.map(|v| v as u32)).collect();
    let segs: Vec<[u32; 2]> = p.edges.iter().map(|e| e.map(|v| v as u32)).collect();
    Surface::with_curves(p.len(), &tris, &segs).expect("surface")
}

fn arr(x: &[Vector3<f64>]) -> Vec<[f64; 3]> {
    x.iter().map(|p| [p.x, p.y, p.z]).collect()
}

/// Runs `steps` steps recording iterates; checks every step converged without hitting the cap,
/// every accepted iterate keeps min distance > 0, multipliers never decreased, and the exact
/// checker finds no collision between consecutive iterates. Returns the reports.
fn run_checked(solver: &mut BalSolver, steps: usize, label: &str) -> Vec<StepReport> {
    solver.record_iterates = true;
    let surf = surface(solver.problem());
    let mut out = Vec::new();
    for step in 0..steps {
        let r = solver.step();
        assert!(
            r.converged,
            "{label} step {step}: not converged: {}",
            summary(&r)
        );
        assert!(!r.hit_cap && !r.line_search_failed, "{label} step {step}");
        assert!(
            !r.mu_violation,
            "{label} step {step}: a multiplier decreased"
        );
        for (i, d) in r.min_distance.iter().enumerate() {
            assert!(
                *d > 0.0,
                "{label} step {step} iterate {i}: min distance {d}"
            );
        }
        for w in r.iterates.windows(2) {
            let t = trajectory_check(&surf, &arr(&w[0]), &arr(&w[1]), 1e-12);
            assert!(t.is_clean(), "{label} step {step}: iterates collide: {t:?}");
        }
        out.push(r);
    }
    out
}

#[test]
fn bad_settings_and_problems_are_refused_with_the_field_named() {
    let p = two_tets(1.0, 0.01);
    for (mut s, field) in [
        (BalSettings::paper(), "bal.d_hat"),
        (BalSettings::paper(), "bal.eps_v"),
        (BalSettings::paper(), "bal.friction"),
    ] {
        match field {
            "bal.d_hat" => s.d_hat = 0.0,
            "bal.eps_v" => s.eps_v = -1.0,
            _ => s.friction = -0.1,
        }
        let e = BalSolver::new(p.clone(), s).err().expect("refused");
        assert!(e.contains(field), "{e}");
    }
    // Overlapping tets: the error names the two bodies.
    let mut q = two_tets(1.0, 0.01);
    for i in 4..8 {
        q.x[i].x -= 0.05;
    }
    let e = BalSolver::new(q, BalSettings::paper())
        .err()
        .expect("refused");
    assert!(
        e.contains("bodies 0 and 1") || e.contains("bodies 1 and 0"),
        "{e}"
    );
    let mut q = two_tets(1.0, 0.01);
    q.h = 0.0;
    assert!(BalSolver::new(q, BalSettings::paper())
        .err()
        .unwrap()
        .contains("problem.h"));
    let mut q = two_tets(1.0, 0.01);
    q.x[0].y = f64::NAN;
    assert!(BalSolver::new(q, BalSettings::paper()).is_err());
}

#[test]
fn sigma_corridor_uses_the_reference_barrier_curvature() {
    // d₀ = 1e-8 · 0.2 m; σ_min = 1e11 m̄ / (h² b″(d₀)).
    let (lo, hi) = sigma_bounds(1e-3, 0.2, 1e-3, 1.0 / 30.0);
    let b2 = super::barrier::barrier_second_derivative(2e-9, 1e-3);
    assert!((lo - 1e11 * 1e-3 * 900.0 / b2).abs() <= 1e-12 * lo);
    assert_eq!(hi, 100.0 * lo);
    // d₀ not below d̂ falls back to ½ d̂.
    let (lo, _) = sigma_bounds(1e-3, 1e6, 1e-3, 1.0);
    let b2 = super::barrier::barrier_second_derivative(5e-4, 1e-3);
    assert!((lo - 1e11 * 1e-3 / b2).abs() <= 1e-12 * lo);
}

/// Centre-of-mass velocity of body `b` (m/s).
fn body_velocity(s: &BalSolver, b: u32) -> Vector3<f64> {
    let p = s.problem();
    let (mut m, mut mv) = (0.0, Vector3::zeros());
    for i in (0..p.len()).filter(|&i| p.body[i] == b) {
        m += p.mass[i];
        mv += p.v[i] * p.mass[i];
    }
    mv / m
}

#[test]
fn two_tets_collide_without_intersection() {
    for linear in [LinearSolve::Direct, LinearSolve::Cg] {
        let mut s = BalSolver::new(two_tets(1.0, 0.02), settings(linear)).expect("solver");
        let reps = run_checked(&mut s, 15, &format!("two tets {linear:?}"));
        // They met (vertex–face contact) and the collision took the approach speed away.
        assert!(reps.iter().any(|r| r.active.iter().any(|&a| a > 0)));
        let v = body_velocity(&s, 0).x;
        assert!(v < 0.1, "{linear:?}: left tet still approaching at {v} m/s");
    }
}

#[test]
fn two_edges_collide_without_intersection() {
    let mut s =
        BalSolver::new(two_edges(1.0, 0.02), settings(LinearSolve::Direct)).expect("solver");
    let reps = run_checked(&mut s, 15, "two edges");
    // Edge–edge pairs were active and the collision stopped the approach.
    assert!(reps.iter().any(|r| r.active.iter().any(|&a| a > 0)));
    let v = body_velocity(&s, 0).z - body_velocity(&s, 1).z;
    assert!(v < 0.1, "bodies still approaching at {v} m/s");
}

/// Kinetic + elastic + gravitational energy of the free vertices (J).
fn mechanical_energy(s: &BalSolver) -> f64 {
    let p = s.problem();
    let mut e = 0.0;
    for i in (0..p.len()).filter(|&i| !p.fixed[i]) {
        e += 0.5 * p.mass[i] * p.v[i].norm_squared() - p.mass[i] * p.gravity.dot(&p.x[i]);
    }
    let rests = p.tet_rests().unwrap();
    for ((t, r), m) in p.tets.iter().zip(&rests).zip(&p.materials) {
        e += r.energy(m, &t.map(|v| p.x[v]));
    }
    e
}

#[test]
fn tet_dropped_on_a_plane_lands_rests_and_never_gains_energy() {
    for rule in [SigmaRule::AsPrinted, SigmaRule::Capped] {
        let st = BalSettings {
            sigma_rule: rule,
            ..settings(LinearSolve::Direct)
        };
        let height = 0.05;
        let mut s = BalSolver::new(tet_on_plane(height), st).expect("solver");
        let p = s.problem();
        let mass: f64 = (0..p.len())
            .filter(|&i| !p.fixed[i])
            .map(|i| p.mass[i])
            .sum();
        let drop = mass * 9.81 * height;
        let mut e = mechanical_energy(&s);
        s.record_iterates = true;
        let surf = surface(s.problem());
        let mut aug_seen = false;
        for step in 0..45 {
            let r = s.step();
            assert!(
                r.converged && !r.hit_cap,
                "{rule:?} step {step}: {}",
                summary(&r)
            );
            assert!(r.min_distance.iter().all(|&d| d > 0.0));
            assert!(!r.mu_violation);
            for w in r.iterates.windows(2) {
                assert!(trajectory_check(&surf, &arr(&w[0]), &arr(&w[1]), 1e-12).is_clean());
            }
            aug_seen |= r.augmented.iter().any(|&a| a > 0);
            let e1 = mechanical_energy(&s);
            assert!(
                e1 - e <= 1e-3 * drop,
                "{rule:?} step {step}: energy grew by {} J (drop energy {drop} J)",
                e1 - e
            );
            e = e1;
        }
        // Resting on the plane, above it, slow.
        let p = s.problem();
        let lowest = (0..p.len())
            .filter(|&i| !p.fixed[i])
            .map(|i| p.x[i].z)
            .fold(f64::MAX, f64::min);
        assert!(
            lowest > 0.0 && lowest < 1e-3,
            "{rule:?}: lowest vertex at {lowest}"
        );
        let vmax = (0..p.len()).map(|i| p.v[i].norm()).fold(0.0, f64::max);
        assert!(vmax < 0.05, "{rule:?}: still moving at {vmax} m/s");
        eprintln!("{rule:?}: augmentation used: {aug_seen}");
    }
}

#[test]
fn inexact_newton_baseline_keeps_the_augmentation_set_empty() {
    let st = BalSettings {
        augmentation: false,
        ..settings(LinearSolve::Cg)
    };
    let mut s = BalSolver::new(tet_on_plane(0.05), st).expect("solver");
    let reps = run_checked(&mut s, 30, "baseline");
    assert!(reps.iter().all(|r| r.augmented.iter().all(|&a| a == 0)));
}

/// One line of a step report for failure messages.
fn summary(r: &StepReport) -> String {
    format!(
        "{} iterations, converged {}, cap {}, line search failed {}, active {:?}, ‖∇L‖ last {:?}",
        r.newton_iterations,
        r.converged,
        r.hit_cap,
        r.line_search_failed,
        &r.active[..r.active.len().min(20)],
        r.gradient_norm.last()
    )
}

#[test]
fn active_pair_cap_is_never_exceeded_and_neutral_when_it_does_not_bind() {
    // Free run: intermediate Newton iterates of the collision activate up to `peak` pairs.
    let scene = || two_tets(1.0, 0.02);
    let mut free = BalSolver::new(scene(), settings(LinearSolve::Direct)).unwrap();
    let mut peak = 0;
    for _ in 0..10 {
        peak = peak.max(free.step().active.iter().copied().max().unwrap_or(0));
    }
    assert!(peak >= 5, "free run peaks at {peak} active pairs only");
    // A cap at the peak does not bind: the run is the free run, bit for bit.
    let capped = |cap: usize| {
        let st = BalSettings {
            max_active_pairs: Some(cap),
            ..settings(LinearSolve::Direct)
        };
        BalSolver::new(scene(), st).unwrap()
    };
    let mut same = capped(peak);
    for _ in 0..10 {
        assert_eq!(same.step().cap_halvings, 0);
    }
    assert_eq!(same.positions(), free.positions());
    // A binding cap (below the peak): no accepted iterate ever has more active pairs. The
    // collision needs more pairs than the cap at once here, so the line search stalls at the
    // cap and the step says so (line_search_failed); it never exceeds the cap or intersects.
    let cap = peak - 1;
    let mut s = capped(cap);
    let (mut cut, mut stalled) = (0, 0);
    for step in 0..10 {
        let r = s.step();
        cut += r.cap_halvings;
        stalled += r.line_search_failed as u32;
        assert!(
            r.converged || r.line_search_failed,
            "step {step}: {}",
            summary(&r)
        );
        assert!(r.min_distance.iter().all(|&d| d > 0.0));
        for &a in r.active.iter().skip(1) {
            assert!(a <= cap, "step {step}: {a} active pairs > cap {cap}");
        }
        let n = s.stencils().iter().filter(|st| {
            super::distance::closest(st.key.kind, &st.gather(s.positions()))
                .0
                .sqrt()
                < 1e-3
        });
        assert!(n.count() <= cap, "step {step}: end state over the cap");
    }
    assert!(cut > 0, "the cap never shortened a step");
    eprintln!("cap {cap} (free-run peak {peak}): {cut} halvings, {stalled} stalled steps");
}

/// Centre-of-mass position along the slope (x) of the free vertices.
fn com_x(s: &BalSolver) -> f64 {
    let p = s.problem();
    let (mut m, mut mx) = (0.0, 0.0);
    for i in (0..p.len()).filter(|&i| !p.fixed[i]) {
        m += p.mass[i];
        mx += p.mass[i] * p.x[i].x;
    }
    mx / m
}

/// Runs the block on a ramp for 1 s at h = 1/30 and returns the slope displacements of the
/// centre of mass per step.
fn ramp_run(theta: f64, chi: f64, lag: FrictionLagMode) -> Vec<f64> {
    let st = BalSettings {
        friction: chi,
        friction_lag: lag,
        ..settings(LinearSolve::Direct)
    };
    let mut s = BalSolver::new(block_on_ramp(theta, 0.1, 2e-4), st).expect("solver");
    let mut out = vec![com_x(&s)];
    for step in 0..30 {
        let r = s.step();
        assert!(
            r.converged && !r.hit_cap,
            "ramp θ {theta} χ {chi} step {step}: {}",
            summary(&r)
        );
        assert!(r.min_distance.iter().all(|&d| d > 0.0));
        out.push(com_x(&s));
    }
    out
}

/// Least-squares slope of the per-step velocities over the second half second (m/s²).
fn acceleration(xs: &[f64], h: f64) -> f64 {
    let v: Vec<(f64, f64)> = xs
        .windows(2)
        .enumerate()
        .skip(xs.len() / 2)
        .map(|(i, w)| ((i + 1) as f64 * h, (w[1] - w[0]) / h))
        .collect();
    let n = v.len() as f64;
    let (mt, mv) = (
        v.iter().map(|p| p.0).sum::<f64>() / n,
        v.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let num: f64 = v.iter().map(|p| (p.0 - mt) * (p.1 - mv)).sum();
    let den: f64 = v.iter().map(|p| (p.0 - mt).powi(2)).sum();
    num / den
}

#[test]
fn block_on_a_ramp_sticks_or_slides_by_the_friction_law() {
    let theta = 20f64.to_radians();
    let h = 1.0 / 30.0;
    // Sticks: χ = 0.5 > tan 20° = 0.364; moves less than 1 mm in 1 s.
    let xs = ramp_run(theta, 0.5, FrictionLagMode::PerIteration);
    let moved = (xs[xs.len() - 1] - xs[0]).abs();
    assert!(moved < 1e-3, "sticking block moved {moved} m");
    // Slides: χ = 0.1 < tan θ, a = g (sin θ − χ cos θ) within 5 %.
    let expected = 9.81 * (theta.sin() - 0.1 * theta.cos());
    let mut errors = Vec::new();
    for lag in [FrictionLagMode::PerIteration, FrictionLagMode::PerStep] {
        let a = acceleration(&ramp_run(theta, 0.1, lag), h);
        let err = (a - expected).abs() / expected;
        eprintln!(
            "ramp slide {lag:?}: a = {a:.4} m/s², expected {expected:.4} ({:.2} %)",
            100.0 * err
        );
        errors.push(err);
    }
    assert!(
        errors[0] < 0.05,
        "per-iteration friction off by {:.2} %",
        100.0 * errors[0]
    );
    assert!(
        errors[0] <= errors[1] + 1e-3,
        "per-iteration friction ({:.3} %) less accurate than per-step ({:.3} %)",
        100.0 * errors[0],
        100.0 * errors[1]
    );
}
