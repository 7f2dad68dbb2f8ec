//! Tests of the PROX reference solver: colored Gauss–Seidel is serial Gauss–Seidel in
//! color-major order (and the report's average and the code's index-prefix update are not),
//! impulses never add kinetic energy, NCP residuals within bounds, RAINBOW's r-factor
//! bookkeeping.

use super::*;
use crate::math::Vec3;

/// splitmix64: deterministic test numbers without a dependency.
pub(crate) struct Rng(pub u64);

impl Rng {
    pub(crate) fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
    pub(crate) fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }
}

/// A stack of free nodes (`nx × ny × nz`, no elastic coupling) resting on a fixed floor
/// triangle fan: floor contacts (vertex–triangle weights), vertical node–node contacts and some
/// tilted side contacts; free velocities = gravity over one 1 ms step plus random tangential
/// velocities (some contacts slide, some stick). Friction μ in [0.1, 1].
pub(crate) fn stack_problem(seed: u64, dims: [usize; 3]) -> (ProxProblem, Vec<Vec3>) {
    let mut rng = Rng(seed);
    let [nx, ny, nz] = dims;
    let floor = [
        Vec3::new(-1.0, -1.0, 0.0),
        Vec3::new(3.0, -1.0, 0.0),
        Vec3::new(-1.0, 3.0, 0.0),
    ];
    let mut inv_mass = vec![0.0; 3];
    let idx = |x: usize, y: usize, z: usize| 3 + x + nx * (y + ny * z);
    let mut pos = floor.to_vec();
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                pos.push(Vec3::new(0.1 * x as f64, 0.1 * y as f64, 0.1 * z as f64));
                inv_mass.push(rng.range(0.5, 2.0));
            }
        }
    }
    let mu = |rng: &mut Rng| rng.range(0.1, 1.0);
    let mut contacts = Vec::new();
    for y in 0..ny {
        for x in 0..nx {
            let p = pos[idx(x, y, 0)];
            // Barycentric coordinates of p's projection in the floor triangle.
            let b1 = (p.x + 1.0) / 4.0;
            let b2 = (p.y + 1.0) / 4.0;
            let b0 = 1.0 - b1 - b2;
            contacts.push(Contact::new(
                &[idx(x, y, 0) as u32, 0, 1, 2],
                &[1.0, -b0, -b1, -b2],
                Vec3::new(0.0, 0.0, 1.0),
                mu(&mut rng),
                0.0,
            ));
            for z in 1..nz {
                contacts.push(Contact::new(
                    &[idx(x, y, z - 1) as u32, idx(x, y, z) as u32],
                    &[-1.0, 1.0],
                    Vec3::new(rng.range(-0.2, 0.2), rng.range(-0.2, 0.2), 1.0),
                    mu(&mut rng),
                    0.0,
                ));
            }
        }
    }
    for z in 0..nz {
        for y in 0..ny {
            for x in 1..nx {
                if rng.next_f64() < 0.5 {
                    contacts.push(Contact::new(
                        &[idx(x - 1, y, z) as u32, idx(x, y, z) as u32],
                        &[-1.0, 1.0],
                        Vec3::new(1.0, 0.0, rng.range(-0.3, 0.3)),
                        mu(&mut rng),
                        0.0,
                    ));
                }
            }
        }
    }
    let h = 1e-3;
    let u_free: Vec<Vec3> = inv_mass
        .iter()
        .map(|&w| {
            if w == 0.0 {
                Vec3::zeros()
            } else {
                let fast = rng.next_f64() < 0.5;
                let s = if fast { 0.05 } else { 0.002 };
                Vec3::new(
                    rng.range(-s, s),
                    rng.range(-s, s),
                    -9.81 * h - rng.range(0.0, 0.01),
                )
            }
        })
        .collect();
    let p = ProxProblem::new(contacts, inv_mass, &u_free, &u_free).expect("valid problem");
    (p, u_free)
}

fn tight() -> SolverParams {
    SolverParams {
        absolute_tolerance: 1e-14,
        relative_tolerance: 1e-15,
        max_iterations: 20_000,
        too_small_merit_change: 0.0,
        ..SolverParams::default()
    }
}

fn greedy_groups(p: &ProxProblem) -> ColorGroups {
    let g = ContactGraph::of_contacts(&p.contacts, p.inv_mass.len(), None);
    ColorGroups::new(&greedy_largest_first(&g))
}

fn max_rel_diff(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
    let scale = a
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()))
        .max(1e-300);
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

#[test]
fn colored_sweep_is_serial_gauss_seidel_in_color_major_order() {
    for seed in 0..4 {
        let (p, _) = stack_problem(seed, [4, 3, 3]);
        let groups = greedy_groups(&p);
        assert!(groups.num_colors() > 1);
        let r = initial_r(&p.contacts, &p.inv_mass, 0.1);
        // Start from a non-trivial iterate: two serial sweeps from zero.
        let mut start = vec![[0.0; 3]; p.len()];
        let order: Vec<u32> = (0..p.len() as u32).collect();
        solve::sweep_serial(&p, &order, &r, 1.0, &mut start);
        solve::sweep_serial(&p, &order, &r, 1.0, &mut start);
        let mut serial = start.clone();
        solve::sweep_serial(&p, &groups.order, &r, 1.0, &mut serial);
        let mut colored = start.clone();
        solve::sweep_colored(&p, &groups, ColorUpdate::Sum, &r, 1.0, &mut colored);
        let d = max_rel_diff(&serial, &colored);
        assert!(d < 1e-12, "seed {seed}: colored vs serial {d:e}");
        // The report's average and the code's index-prefix rebuild are not Gauss–Seidel: the
        // same comparison catches them.
        for update in [ColorUpdate::Average, ColorUpdate::IndexPrefix] {
            let mut other = start.clone();
            solve::sweep_colored(&p, &groups, update, &r, 1.0, &mut other);
            let d = max_rel_diff(&serial, &other);
            assert!(
                d > 1e-3,
                "seed {seed}: {update:?} matches serial GS ({d:e})"
            );
        }
    }
}

#[test]
fn impulses_never_add_kinetic_energy() {
    for seed in 0..6 {
        let (p, u_free) = stack_problem(100 + seed, [3, 3, 2]);
        let groups = greedy_groups(&p);
        let before = kinetic_energy(&p.inv_mass, &u_free);
        for params in [SolverParams::default(), tight()] {
            for scheme in Scheme::ALL {
                let (lambda, rep) = solve(&p, scheme, Some(&groups), &params, None).unwrap();
                let after = kinetic_energy(&p.inv_mass, &p.apply(&u_free, &lambda));
                assert!(
                    after <= before + 1e-9,
                    "seed {seed} {scheme:?} ({} sweeps, {:?}): {before} -> {after} J",
                    rep.sweeps,
                    rep.exit
                );
            }
        }
    }
}

#[test]
fn ncp_residuals_within_bounds_for_every_scheme() {
    for seed in 0..4 {
        let (p, _) = stack_problem(200 + seed, [3, 2, 2]);
        let groups = greedy_groups(&p);
        for scheme in Scheme::ALL {
            let (lambda, rep) = solve(&p, scheme, Some(&groups), &tight(), None).unwrap();
            let res = ncp_residuals(&p, &lambda);
            res.check().unwrap_or_else(|e| {
                panic!(
                    "seed {seed} {scheme:?} after {} sweeps ({:?}): {e}; {res:?}",
                    rep.sweeps, rep.exit
                )
            });
            assert!(
                res.natural_map < 1e-9,
                "{scheme:?}: natural map {:e}",
                res.natural_map
            );
            assert!(
                res.sliding > 0 && res.sticking > 0,
                "{res:?}: want both regimes"
            );
        }
    }
}

#[test]
fn r_factor_bookkeeping_matches_rainbow() {
    let (p, _) = stack_problem(7, [3, 3, 3]);
    let groups = greedy_groups(&p);
    for scheme in Scheme::ALL {
        let (_, rep) = solve(&p, scheme, Some(&groups), &SolverParams::default(), None).unwrap();
        // Accepted merits never increase; every sweep is accepted, rejected or the last.
        assert!(
            rep.accepted_merits.windows(2).all(|w| w[1] <= w[0]),
            "{scheme:?}"
        );
        let decided = rep.accepted_merits.len() as u32 + rep.rollbacks;
        let last = u32::from(rep.exit != Exit::MaxIterations);
        assert_eq!(decided + last, rep.sweeps, "{scheme:?}");
        let expected = 0.7f64.powi(rep.rollbacks as i32) * 1.3f64.powi(rep.r_increases as i32);
        assert!((rep.r_scale - expected).abs() < 1e-12 * expected);
    }
    // r ten times RAINBOW's: Jacobi diverges at first, rolls back and still converges.
    let params = SolverParams {
        r_factor: 1.0,
        ..SolverParams::default()
    };
    let (_, rep) = solve(&p, Scheme::Jacobi, None, &params, None).unwrap();
    assert!(rep.rollbacks > 0, "no rollback with r x10: {rep:?}");
    assert!(
        rep.exit != Exit::MaxIterations && rep.sweeps <= 200,
        "{rep:?}"
    );
}

#[test]
fn decisions_follow_rainbow_code() {
    let p = SolverParams::default();
    assert_eq!(
        decide(5e-4, f64::INFINITY, &p),
        Decision::Converged(Exit::Absolute)
    );
    assert_eq!(
        decide(1.0, f64::INFINITY, &p),
        Decision::Accept { grow: false }
    );
    assert_eq!(decide(0.995, 1.0, &p), Decision::Accept { grow: true });
    assert_eq!(decide(0.5, 1.0, &p), Decision::Accept { grow: false });
    assert_eq!(decide(1.5, 1.0, &p), Decision::Reject);
    assert_eq!(
        decide(1.00005, 1.0, &p),
        Decision::Converged(Exit::Relative)
    );
    assert_eq!(decide(f64::NAN, 1.0, &p), Decision::Reject);
}

#[test]
fn solve_refuses_a_colored_scheme_without_coloring() {
    let (p, _) = stack_problem(1, [2, 2, 1]);
    let e = solve(
        &p,
        Scheme::ColoredGaussSeidel,
        None,
        &SolverParams::default(),
        None,
    )
    .unwrap_err();
    assert!(e.contains("coloring"), "{e}");
}
