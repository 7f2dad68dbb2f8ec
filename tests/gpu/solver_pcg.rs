//! Block-Jacobi PCG on the GPU against the f64 reference PCG and a dense direct solve, on random
//! symmetric positive-definite block systems; the block-Jacobi warm start by stiffness groups
//! (grouping, masked SpMV, warm-started solve) against its CPU reference.
use nalgebra::{DVector, Matrix3, Vector3};
use rand::Rng;
use supple::cpu_reference::pcg::{
    decade_thresholds, pcg, pcg_device, pcg_warm_started, run_predicates, stiffness_groups,
    BlockMatrix,
};
use supple::linear::{BlockMatrixF32, Pcg, SolveExit, WarmStart, GROUP_MAX, GROUP_MIN};
use supple_gpu_tests::{
    assert_no_validation_errors, context, context_with_conditional_rendering, rng,
};

/// A random SPD block matrix: random sparse off-diagonal blocks, diagonal blocks made
/// dominant. `spread` scales rows by up to 10^spread (heterogeneous stiffness).
fn random_system(
    n: usize,
    pairs: usize,
    spread: f64,
    seed: u64,
) -> (BlockMatrix, Vec<Vector3<f64>>) {
    let mut r = rng(seed);
    let scale: Vec<f64> = (0..n)
        .map(|_| 10f64.powf(r.random_range(0.0..=spread)))
        .collect();
    let mut off = Vec::new();
    for _ in 0..pairs {
        let (i, j) = (r.random_range(0..n), r.random_range(0..n));
        if i == j {
            continue;
        }
        let s = (scale[i] * scale[j]).sqrt();
        off.push((
            i as u32,
            j as u32,
            Matrix3::from_fn(|_, _| r.random_range(-1.0..1.0)) * s,
        ));
    }
    let mut diag: Vec<Matrix3<f64>> = (0..n).map(|_| Matrix3::zeros()).collect();
    for (i, j, b) in &off {
        // Gershgorin: add the absolute row sums of both blocks to the diagonals.
        let mass = b.abs().row_sum().max();
        diag[*i as usize] += Matrix3::identity() * mass;
        diag[*j as usize] += Matrix3::identity() * mass;
    }
    for (k, d) in diag.iter_mut().enumerate() {
        let a = Matrix3::from_fn(|_, _| r.random_range(-0.2..0.2)) * scale[k];
        *d += a * a.transpose() + Matrix3::identity() * 0.01 * scale[k];
    }
    let b = (0..n)
        .map(|_| Vector3::from_fn(|_, _| r.random_range(-1.0..1.0)))
        .collect();
    (BlockMatrix { diag, off }, b)
}

/// A shifted 3-D grid Laplacian with 3×3 blocks (like a mass-spring stiffness plus a small
/// mass term): condition number ~ 12 / shift, so PCG needs many iterations.
fn grid_laplacian(side: usize, shift: f64) -> (BlockMatrix, Vec<Vector3<f64>>) {
    let id = |x: usize, y: usize, z: usize| ((z * side + y) * side + x) as u32;
    let n = side * side * side;
    let mut diag = vec![Matrix3::identity() * shift; n];
    let mut off = Vec::new();
    for z in 0..side {
        for y in 0..side {
            for x in 0..side {
                for (dx, dy, dz) in [(1, 0, 0), (0, 1, 0), (0, 0, 1)] {
                    let (nx, ny, nz) = (x + dx, y + dy, z + dz);
                    if nx < side && ny < side && nz < side {
                        let (i, j) = (id(x, y, z), id(nx, ny, nz));
                        off.push((i, j, -Matrix3::identity()));
                        diag[i as usize] += Matrix3::identity();
                        diag[j as usize] += Matrix3::identity();
                    }
                }
            }
        }
    }
    let b = (0..n)
        .map(|k| Vector3::new((k % 7) as f64 - 3.0, 1.0, -((k % 3) as f64)))
        .collect();
    (BlockMatrix { diag, off }, b)
}

/// ‖b − A x‖ / ‖b‖ in f64 for a GPU solution.
fn true_residual(a: &BlockMatrix, b: &[Vector3<f64>], x: &[[f32; 3]]) -> f64 {
    let x: Vec<Vector3<f64>> = x
        .iter()
        .map(|v| Vector3::new(v[0] as f64, v[1] as f64, v[2] as f64))
        .collect();
    let ax = a.mul(&x);
    let r: f64 = b
        .iter()
        .zip(&ax)
        .map(|(b, ax)| (b - ax).norm_squared())
        .sum();
    let bb: f64 = b.iter().map(|v| v.norm_squared()).sum();
    (r / bb).sqrt()
}

fn to_f32(a: &BlockMatrix) -> BlockMatrixF32 {
    let m = |b: &Matrix3<f64>| {
        let mut out = [0f32; 9];
        for r in 0..3 {
            for c in 0..3 {
                out[3 * r + c] = b[(r, c)] as f32;
            }
        }
        out
    };
    BlockMatrixF32 {
        diag: a.diag.iter().map(m).collect(),
        off: a.off.iter().map(|(i, j, b)| (*i, *j, m(b))).collect(),
    }
}

#[test]
fn gpu_pcg_solves_random_spd_block_systems() {
    let ctx = context(false);
    for (n, pairs, spread, seed) in [
        (1, 0, 0.0, 1),
        (50, 200, 0.0, 2),
        (400, 1600, 0.0, 3),
        (400, 1600, 3.0, 4),
    ] {
        let (a, b) = random_system(n, pairs, spread, seed);
        let dense = a.dense();
        let rhs = DVector::from_iterator(3 * n, b.iter().flat_map(|v| [v.x, v.y, v.z]));
        let exact = dense
            .clone()
            .lu()
            .solve(&rhs)
            .expect("SPD system is solvable");
        let x0 = vec![Vector3::zeros(); n];
        let cpu = pcg(&a, &b, &x0, 1e-6, 1000);
        assert!(
            cpu.relative_residual <= 1e-6,
            "reference converges: {}",
            cpu.relative_residual
        );
        let solver = Pcg::new(&ctx, &to_f32(&a), 4).unwrap();
        let b32: Vec<[f32; 3]> = b
            .iter()
            .map(|v| [v.x as f32, v.y as f32, v.z as f32])
            .collect();
        let got = solver.solve(&b32, &vec![[0.0; 3]; n], 1e-4, 2000).unwrap();
        assert!(
            got.relative_residual <= 1e-4,
            "n={n}: GPU residual {}",
            got.relative_residual
        );
        assert!(
            true_residual(&a, &b, &got.x) <= 2e-4,
            "n={n}: recomputed residual"
        );
        let gx = DVector::from_iterator(3 * n, got.x.iter().flat_map(|v| v.map(f64::from)));
        let err = (&gx - &exact).norm() / exact.norm();
        // ‖x − x*‖/‖x*‖ ≤ cond(A)·‖r‖/‖b‖; the test matrices are well conditioned per row scale.
        let cond_bound = if spread > 0.0 {
            10f64.powf(spread)
        } else {
            10.0
        };
        assert!(err <= 1e-4 * cond_bound, "n={n}: relative error {err}");
        // Same algorithm: iteration counts agree up to the run granularity (and f32 rounding).
        let cpu4 = pcg(&a, &b, &x0, 1e-4, 1000);
        assert!(
            got.iterations <= cpu4.iterations + 8,
            "GPU {} vs reference {} iterations",
            got.iterations,
            cpu4.iterations
        );
        println!("n={n} pairs={pairs} spread=1e{spread}: {} iterations (reference {}), residual {:.2e}, error {:.2e}", got.iterations, cpu4.iterations, got.relative_residual, err);
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn gpu_pcg_converges_on_an_ill_conditioned_grid_laplacian() {
    let ctx = context(false);
    let (a, b) = grid_laplacian(10, 0.01);
    let n = a.rows();
    let cpu = pcg(&a, &b, &vec![Vector3::zeros(); n], 1e-4, 5000);
    let solver = Pcg::new(&ctx, &to_f32(&a), 10).unwrap();
    let b32: Vec<[f32; 3]> = b
        .iter()
        .map(|v| [v.x as f32, v.y as f32, v.z as f32])
        .collect();
    let got = solver.solve(&b32, &vec![[0.0; 3]; n], 1e-4, 5000).unwrap();
    let rel = true_residual(&a, &b, &got.x);
    println!("grid 10^3, shift 0.01: GPU {} iterations (reference {}), residual {:.2e} (recomputed {rel:.2e})", got.iterations, cpu.iterations, got.relative_residual);
    assert!(
        cpu.iterations > 30,
        "the system is meant to be hard: {} iterations",
        cpu.iterations
    );
    assert!(rel <= 5e-4, "recomputed residual {rel}");
    assert!(
        got.iterations <= cpu.iterations + 20,
        "GPU {} vs reference {}",
        got.iterations,
        cpu.iterations
    );
    assert_no_validation_errors(&ctx);
}

#[test]
fn warm_start_from_the_solution_needs_no_iteration() {
    let ctx = context(true);
    let (a, b) = random_system(100, 300, 0.0, 9);
    let exact = pcg(&a, &b, &vec![Vector3::zeros(); 100], 1e-10, 1000).x;
    let solver = Pcg::new(&ctx, &to_f32(&a), 2).unwrap();
    let b32: Vec<[f32; 3]> = b
        .iter()
        .map(|v| [v.x as f32, v.y as f32, v.z as f32])
        .collect();
    let x0: Vec<[f32; 3]> = exact
        .iter()
        .map(|v| [v.x as f32, v.y as f32, v.z as f32])
        .collect();
    let got = solver.solve(&b32, &x0, 1e-4, 100).unwrap();
    assert_eq!(got.iterations, 0, "residual {}", got.relative_residual);
    assert_no_validation_errors(&ctx);
}

#[test]
fn bad_matrices_are_refused() {
    let ctx = context(false);
    let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let singular = BlockMatrixF32 {
        diag: vec![eye, [0.0; 9]],
        off: vec![],
    };
    assert!(Pcg::new(&ctx, &singular, 2)
        .err()
        .unwrap()
        .to_string()
        .contains("singular"));
    let outside = BlockMatrixF32 {
        diag: vec![eye],
        off: vec![(0, 3, eye)],
    };
    assert!(Pcg::new(&ctx, &outside, 2).is_err());
    let ok = BlockMatrixF32 {
        diag: vec![eye],
        off: vec![],
    };
    assert!(
        Pcg::new(&ctx, &ok, 3).is_err(),
        "odd iterations per run are refused"
    );
    let solver = Pcg::new(&ctx, &ok, 2).unwrap();
    assert!(solver
        .solve(&[[1.0; 3]; 2], &[[0.0; 3]; 2], 1e-4, 10)
        .is_err());
    assert_no_validation_errors(&ctx);
}

fn vec32(v: &[Vector3<f64>]) -> Vec<[f32; 3]> {
    v.iter()
        .map(|v| [v.x as f32, v.y as f32, v.z as f32])
        .collect()
}

/// Per-node stiffness estimate of a test matrix: the trace of its diagonal block.
fn trace_stiffness(a: &BlockMatrix) -> Vec<f32> {
    a.diag.iter().map(|d| d.trace() as f32).collect()
}

#[test]
fn gpu_stiffness_groups_equal_the_reference() {
    let ctx = context(false);
    let mut r = rng(11);
    let mut e: Vec<f32> = vec![
        0.0,
        -1.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
        1.0,
        9.999_999,
        10.0,
        0.5,
        1e3,
        999.9,
    ];
    // Every threshold and its f32 neighbours: the comparisons must agree bit for bit.
    for t in decade_thresholds() {
        e.extend([
            t,
            f32::from_bits(t.to_bits() - 1),
            f32::from_bits(t.to_bits() + 1),
        ]);
    }
    for _ in 0..3000 {
        let k: f64 = r.random_range(-34.0..38.5);
        e.push(10f64.powf(k) as f32);
    }
    let n = e.len();
    let eye = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    let solver = Pcg::new(
        &ctx,
        &BlockMatrixF32 {
            diag: vec![eye; n],
            off: vec![],
        },
        2,
    )
    .unwrap();
    solver.stiffness().write(&e).unwrap();
    solver.multiply(&vec![[1.0; 3]; n], true).unwrap();
    let got = solver.groups().read().unwrap();
    let want = stiffness_groups(&e);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g,
            w,
            "node {k}: stiffness {:e} ({:#x})",
            e[k],
            e[k].to_bits()
        );
    }
    // The reference itself: ⌊log10⌋ with the documented clamping.
    assert_eq!(
        &want[..14],
        &[
            GROUP_MIN, GROUP_MIN, GROUP_MIN, GROUP_MAX, GROUP_MIN, GROUP_MAX, GROUP_MIN, GROUP_MIN,
            0, 0, 1, -1, 3, 2
        ]
    );
    let mut distinct = want.clone();
    distinct.sort();
    distinct.dedup();
    println!("{n} stiffness values in {} groups", distinct.len());
    assert!(distinct.len() > 60, "the values cover the group range");
    assert_no_validation_errors(&ctx);
}

#[test]
fn gpu_masked_spmv_equals_the_reference() {
    let ctx = context(false);
    let (a, _) = random_system(400, 1600, 0.0, 12);
    let n = a.rows();
    let mut r = rng(13);
    // Stiffness over four decades: four groups.
    let e: Vec<f32> = (0..n)
        .map(|_| 10f32.powf(r.random_range(0.0..4.0)))
        .collect();
    let groups = stiffness_groups(&e);
    let x: Vec<Vector3<f64>> = (0..n)
        .map(|_| Vector3::from_fn(|_, _| r.random_range(-1.0..1.0)))
        .collect();
    // Round the inputs to f32 first so that the two products see the same x.
    let x: Vec<Vector3<f64>> = x.iter().map(|v| v.map(|c| c as f32 as f64)).collect();
    let a32 = to_f32(&a);
    let solver = Pcg::new(&ctx, &a32, 2).unwrap();
    solver.stiffness().write(&e).unwrap();
    let kept = a.masked(&groups).off.len();
    assert!(
        kept > 0 && kept < a.off.len() / 2,
        "the mask keeps some blocks and drops most: {kept} of {}",
        a.off.len()
    );
    let norm = |v: &[Vector3<f64>]| v.iter().map(|c| c.norm_squared()).sum::<f64>().sqrt();
    for masked in [true, false] {
        let got = solver.multiply(&vec32(&x), masked).unwrap();
        let want = if masked {
            a.mul_masked(&x, &groups)
        } else {
            a.mul(&x)
        };
        let diff: Vec<Vector3<f64>> = got
            .iter()
            .zip(&want)
            .map(|(g, w)| Vector3::new(g[0] as f64, g[1] as f64, g[2] as f64) - w)
            .collect();
        let rel = norm(&diff) / norm(&want);
        println!("masked={masked}: relative difference {rel:.2e}");
        assert!(rel <= 1e-5, "masked={masked}: relative difference {rel}");
    }
    assert_eq!(solver.groups().read().unwrap(), groups);
    // The masked product really differs from the full one.
    let full = a.mul(&x);
    let masked = a.mul_masked(&x, &groups);
    let d: Vec<Vector3<f64>> = full.iter().zip(&masked).map(|(f, m)| f - m).collect();
    assert!(norm(&d) > 0.1 * norm(&full));
    assert_no_validation_errors(&ctx);
}

#[test]
fn gpu_warm_started_pcg_reaches_the_reference_solution() {
    let ctx = context(false);
    for (n, pairs, spread, seed) in [(50, 200, 0.0, 21), (400, 1600, 3.0, 22)] {
        let (a, b) = random_system(n, pairs, spread, seed);
        let e = trace_stiffness(&a);
        let dense = a.dense();
        let rhs = DVector::from_iterator(3 * n, b.iter().flat_map(|v| [v.x, v.y, v.z]));
        let exact = dense.lu().solve(&rhs).expect("SPD system is solvable");
        let warm = WarmStart {
            enabled: true,
            max_iterations: 20,
            tolerance: 1e-2,
        };
        let cpu = pcg_warm_started(&a, &b, &e, 1e-4, 1000, 1e-2, 20);
        let solver = Pcg::new(&ctx, &to_f32(&a), 2).unwrap();
        let got = solver
            .solve_warm(&vec32(&b), &e, 1e-4, 2000, &warm)
            .unwrap();
        assert!(
            got.relative_residual <= 1e-4,
            "n={n}: residual {}",
            got.relative_residual
        );
        assert!(
            true_residual(&a, &b, &got.x) <= 2e-4,
            "n={n}: recomputed residual"
        );
        let gx = DVector::from_iterator(3 * n, got.x.iter().flat_map(|v| v.map(f64::from)));
        let err = (&gx - &exact).norm() / exact.norm();
        let cond_bound = if spread > 0.0 {
            10f64.powf(spread)
        } else {
            10.0
        };
        assert!(err <= 1e-4 * cond_bound, "n={n}: relative error {err}");
        assert!(got.warm_iterations > 0 && got.warm_iterations <= 20);
        assert!(
            got.warm_iterations <= cpu.warm.iterations + 2,
            "GPU warm {} vs reference {}",
            got.warm_iterations,
            cpu.warm.iterations
        );
        assert!(
            got.iterations <= cpu.global.iterations + 8,
            "GPU {} vs reference {} iterations",
            got.iterations,
            cpu.global.iterations
        );
        println!(
            "n={n} spread=1e{spread}: warm {} (reference {}) + global {} (reference {}) iterations, residual {:.2e}, error {err:.2e}",
            got.warm_iterations, cpu.warm.iterations, got.iterations, cpu.global.iterations, got.relative_residual
        );
    }
    assert_no_validation_errors(&ctx);
}

/// A heterogeneous 3-D grid: springs `k (d dᵀ + 0.2 I)` between grid neighbours (d the edge
/// direction) with `k = stiff` between two nodes of the lower half (z < side/2), `k = 1`
/// otherwise, plus a mass term `mass·I` on every diagonal block. Returns the matrix, a
/// gravity-like right-hand side and the per-node stiffness estimate (half the trace of every
/// spring block at each end + 3·mass, like the Newton solver's per-element estimate).
fn heterogeneous_grid(
    side: usize,
    stiff: f64,
    mass: f64,
    seed: u64,
) -> (BlockMatrix, Vec<Vector3<f64>>, Vec<f32>) {
    let mut r = rng(seed);
    let id = |x: usize, y: usize, z: usize| ((z * side + y) * side + x) as u32;
    let n = side * side * side;
    let mut diag = vec![Matrix3::identity() * mass; n];
    let mut e = vec![3.0 * mass; n];
    let mut off = Vec::new();
    for z in 0..side {
        for y in 0..side {
            for x in 0..side {
                for (dx, dy, dz) in [(1, 0, 0), (0, 1, 0), (0, 0, 1)] {
                    let (nx, ny, nz) = (x + dx, y + dy, z + dz);
                    if nx < side && ny < side && nz < side {
                        let (i, j) = (id(x, y, z), id(nx, ny, nz));
                        let k = if 2 * z < side && 2 * nz < side {
                            stiff
                        } else {
                            1.0
                        };
                        let d = Vector3::new(dx as f64, dy as f64, dz as f64);
                        let blk = (d * d.transpose() + Matrix3::identity() * 0.2) * k;
                        off.push((i, j, -blk));
                        diag[i as usize] += blk;
                        diag[j as usize] += blk;
                        e[i as usize] += blk.trace() / 2.0;
                        e[j as usize] += blk.trace() / 2.0;
                    }
                }
            }
        }
    }
    let b = (0..n)
        .map(|_| Vector3::new(r.random_range(-0.1..0.1), r.random_range(-0.1..0.1), -1.0) * mass)
        .collect();
    (
        BlockMatrix { diag, off },
        b,
        e.into_iter().map(|v| v as f32).collect(),
    )
}

#[test]
fn warm_start_needs_fewer_global_iterations_on_a_heterogeneous_grid() {
    let ctx = context(false);
    // 1,728 nodes, the lower half 1000x stiffer, mass term 1 (soft springs have stiffness 1).
    let (a, b, e) = heterogeneous_grid(12, 1e3, 1.0, 7);
    let n = a.rows();
    let (tol, max_it) = (1e-4, 5000);
    let warm = WarmStart {
        enabled: true,
        max_iterations: 200,
        tolerance: 1e-3,
    };
    let cpu_cold = pcg(&a, &b, &vec![Vector3::zeros(); n], tol as f64, max_it);
    let cpu = pcg_warm_started(&a, &b, &e, tol as f64, max_it, 1e-3, 200);
    let mut distinct = cpu.groups.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct, vec![0, 3], "two stiffness groups, 10^3 apart");
    let solver = Pcg::new(&ctx, &to_f32(&a), 2).unwrap();
    let b32 = vec32(&b);
    let cold = solver.solve(&b32, &vec![[0.0; 3]; n], tol, max_it).unwrap();
    let off = solver
        .solve_warm(
            &b32,
            &e,
            tol,
            max_it,
            &WarmStart {
                enabled: false,
                ..warm
            },
        )
        .unwrap();
    let got = solver.solve_warm(&b32, &e, tol, max_it, &warm).unwrap();
    println!(
        "heterogeneous grid 12^3 (stiffness 1 vs 1e3, mass 1), tolerance 1e-4: cold PCG {} global iterations (reference {}); warm start {} grouped + {} global iterations (reference {} + {}); warm GPU ms {:.2} of {:.2}",
        cold.iterations,
        cpu_cold.iterations,
        got.warm_iterations,
        got.iterations,
        cpu.warm.iterations,
        cpu.global.iterations,
        solver.last_warm_gpu_ms(),
        solver.last_gpu_ms()
    );
    // Stiffness ratio 1e3: the f32 residual recurrence drifts from the true residual by a few
    // 1e-4 (the cold solve too), so the recomputed residual gets a looser bound, and the
    // solutions are compared with the f64 reference solve.
    let xref = pcg(&a, &b, &vec![Vector3::zeros(); n], 1e-10, 20000).x;
    let xnorm = xref.iter().map(|v| v.norm_squared()).sum::<f64>().sqrt();
    for (name, s) in [("cold", &cold), ("disabled", &off), ("warm", &got)] {
        let rel = true_residual(&a, &b, &s.x);
        let err = s
            .x
            .iter()
            .zip(&xref)
            .map(|(g, w)| (Vector3::new(g[0] as f64, g[1] as f64, g[2] as f64) - w).norm_squared())
            .sum::<f64>()
            .sqrt()
            / xnorm;
        println!(
            "{name}: residual {:.2e} (recomputed in f64 {rel:.2e}), error {err:.2e}",
            s.relative_residual
        );
        assert!(s.relative_residual <= tol);
        assert!(rel <= 2e-3, "{name}: recomputed residual {rel}");
        assert!(err <= 1e-3, "{name}: relative error {err}");
    }
    assert_eq!(
        (off.iterations, off.warm_iterations),
        (cold.iterations, 0),
        "disabled = cold"
    );
    assert!(
        cpu.global.iterations < cpu_cold.iterations,
        "reference: warm start helps"
    );
    assert!(
        got.iterations < cold.iterations,
        "warm-started global PCG {} vs cold {}",
        got.iterations,
        cold.iterations
    );
    assert!(got.warm_iterations > 0 && got.warm_iterations <= 200);
    assert_eq!(solver.groups().read().unwrap(), cpu.groups);
    assert_no_validation_errors(&ctx);
}

/// The device decides after every iteration (issue 22, item 2): the iteration count equals the
/// reference's with the same stop rule, one run of `iterations_per_run` iterations is one
/// submission and one host wait, and an iteration is three dispatches (SpMV with p·q partials,
/// step with r·z and r·r partials, direction with the decision).
#[test]
fn the_device_decides_when_pcg_stops_with_one_wait_per_run() {
    let ctx = context(false);
    let (a, b) = grid_laplacian(6, 0.05);
    let n = a.rows();
    let b32 = vec32(&b);
    let k = 8u32;
    let solver = Pcg::new(&ctx, &to_f32(&a), k).unwrap();
    assert_eq!(solver.iterations_per_run(), k);
    let zero = vec![Vector3::zeros(); n];
    for (tol, max_it) in [(1e-4f32, 500u32), (1e-4, 5), (1e-4, 8), (1e-4, 9)] {
        let cpu = pcg_device(&a, &b, &zero, tol as f64, max_it, u32::MAX);
        let before = ctx.counters();
        let got = solver.solve(&b32, &vec![[0.0; 3]; n], tol, max_it).unwrap();
        let d = ctx.counters() - before;
        println!(
            "tol {tol:e}, cap {max_it}: {} iterations (reference {}), residual {:.2e}; {d:?}",
            got.iterations, cpu.iterations, got.relative_residual
        );
        if cpu.relative_residual > tol as f64 {
            // Capped: the cap is exact, not rounded to a run.
            assert_eq!(got.iterations, max_it);
            assert_eq!(got.exit, SolveExit::IterationCap);
        } else {
            assert!(
                got.iterations.abs_diff(cpu.iterations) <= 1,
                "GPU {} vs reference {} iterations",
                got.iterations,
                cpu.iterations
            );
            assert!(got.relative_residual <= tol);
        }
        let runs = got.iterations.div_ceil(k).max(1) as u64;
        // Setup writes (b, x0) and the result's readback are mapped: no submission.
        assert_eq!(d.submits, runs, "{d:?}");
        assert_eq!(d.host_waits, runs, "{d:?}");
        // Init: SpMV, init vectors, init decision; then 3 dispatches per recorded iteration
        // (and each run's start where the iterations are predicated, see below).
        let run_start = ctx.conditional_rendering() as u64;
        assert_eq!(d.dispatches, 3 + (3 * k as u64 + run_start) * runs, "{d:?}");
    }
    // b = 0: no iteration, x unchanged, residual 0.
    let got = solver
        .solve(&vec![[0.0; 3]; n], &vec![[1.0; 3]; n], 1e-4, 100)
        .unwrap();
    assert_eq!((got.iterations, got.relative_residual), (0, 0.0));
    assert!(got.x.iter().all(|v| *v == [1.0; 3]));
    assert_no_validation_errors(&ctx);
}

/// An unreachable tolerance in f32: the stagnation window stops the solve on the device well
/// before the cap, and two identical solves give the same bits (fixed-order sums).
#[test]
fn stagnation_stops_pcg_on_the_device_and_reruns_are_bit_identical() {
    let ctx = context(false);
    let (a, b) = grid_laplacian(6, 0.05);
    let n = a.rows();
    let b32 = vec32(&b);
    let solver = Pcg::new(&ctx, &to_f32(&a), 16).unwrap();
    solver.set_stagnation_window(10);
    let first = solver.solve(&b32, &vec![[0.0; 3]; n], 0.0, 2000).unwrap();
    println!(
        "tolerance 0, window 10: {} iterations, residual {:.2e}, {:?}",
        first.iterations, first.relative_residual, first.exit
    );
    assert!(
        first.iterations < 2000 && first.iterations > 10,
        "{}",
        first.iterations
    );
    assert!(
        first.relative_residual < 1e-5,
        "{}",
        first.relative_residual
    );
    // The recurred residual keeps falling in f32 until r·z underflows to 0 (an exact zero: a
    // breakdown) or the window sees no new best.
    assert!(
        matches!(first.exit, SolveExit::Stagnated | SolveExit::Breakdown),
        "{:?}",
        first.exit
    );
    let again = solver.solve(&b32, &vec![[0.0; 3]; n], 0.0, 2000).unwrap();
    assert_eq!(first, again, "a rerun differs");
    assert_no_validation_errors(&ctx);
}

/// An indefinite matrix with a positive block-Jacobi preconditioner: [[2I, 3I], [3I, 2I]] has
/// eigenvalues 5 and −1; b in the −1 eigenspace makes p·q < 0 at the first iteration.
fn indefinite_pair() -> (BlockMatrix, Vec<Vector3<f64>>) {
    let a = BlockMatrix {
        diag: vec![Matrix3::identity() * 2.0; 2],
        off: vec![(0, 1, Matrix3::identity() * 3.0)],
    };
    (
        a,
        vec![Vector3::new(1.0, 0.5, 0.0), Vector3::new(-1.0, -0.5, 0.0)],
    )
}

/// A breakdown (p·q ≤ 0 or r·z ≤ 0) stops the solve on the device after the breaking
/// iteration with exit "breakdown", at the reference's iteration count, not at the cap (the
/// old kernels took a step of 0 and went on to the cap).
#[test]
fn a_breakdown_stops_pcg_on_the_device_with_its_own_exit() {
    let ctx = context(false);
    // A grid Laplacian shifted negative (indefinite, diagonal blocks still positive): CG runs
    // a few iterations before p·q turns non-positive.
    let mut cases = vec![indefinite_pair()];
    for shift in [-0.3, -0.6] {
        cases.push(grid_laplacian(4, shift));
    }
    let mut breakdowns = 0;
    for (k, (a, b)) in cases.iter().enumerate() {
        let n = a.rows();
        let zero = vec![Vector3::zeros(); n];
        let want = pcg_device(a, b, &zero, 1e-6, 200, u32::MAX);
        let solver = Pcg::new(&ctx, &to_f32(a), 8).unwrap();
        let got = solver
            .solve(&vec32(b), &vec![[0.0; 3]; n], 1e-6, 200)
            .unwrap();
        println!(
            "case {k}: GPU {:?} after {} iterations (residual {:.3e}), reference {:?} after {} ({:.3e})",
            got.exit, got.iterations, got.relative_residual, want.exit, want.iterations,
            want.relative_residual
        );
        assert_eq!(got.exit, want.exit, "case {k}");
        assert_eq!(got.iterations, want.iterations, "case {k}");
        if want.exit == SolveExit::Breakdown {
            breakdowns += 1;
            assert!(got.iterations < 200, "case {k}: stopped at the cap");
        }
    }
    // The pair breaks down at its first iteration; at least one grid breaks down too.
    let (a, b) = indefinite_pair();
    let got = Pcg::new(&ctx, &to_f32(&a), 8)
        .unwrap()
        .solve(&vec32(&b), &[[0.0; 3]; 2], 1e-6, 200)
        .unwrap();
    assert_eq!((got.exit, got.iterations), (SolveExit::Breakdown, 1));
    assert!(
        got.x.iter().all(|v| *v == [0.0; 3]),
        "a step of 0: {:?}",
        got.x
    );
    assert!(breakdowns >= 2, "only {breakdowns} of the cases broke down");
    assert_no_validation_errors(&ctx);
}

/// The quadratic model's decrease ½ Σ αᵢ rᵢ·zᵢ: equal to the f64 reference's within 1e-3
/// (relative), positive and non-decreasing over iterations on an SPD system (each cap's
/// solve is a prefix of the next: same bits), equal to ½ bᵀx from x = 0 within 1e-3, and its
/// fraction of the estimated optimum grows to 1 as the solve converges.
#[test]
fn the_model_decrease_is_monotone_and_equals_the_reference() {
    let ctx = context(false);
    let (a, b) = grid_laplacian(6, 0.05);
    let n = a.rows();
    let b32 = vec32(&b);
    let zero = vec![Vector3::zeros(); n];
    let solver = Pcg::new(&ctx, &to_f32(&a), 8).unwrap();
    let mut last = 0.0f32;
    let mut last_fraction = 0.0f64;
    for cap in 1..=40u32 {
        let want = pcg_device(&a, &b, &zero, 1e-6, cap, u32::MAX);
        let got = solver.solve(&b32, &vec![[0.0; 3]; n], 1e-6, cap).unwrap();
        assert_eq!(got.iterations, want.iterations, "cap {cap}");
        assert_eq!(got.exit, want.exit, "cap {cap}");
        let d = got.model.decrease;
        let rel_err = (d as f64 - want.model_decrease).abs() / want.model_decrease;
        assert!(
            rel_err <= 1e-3,
            "cap {cap}: {d} vs reference {}",
            want.model_decrease
        );
        assert!(d > 0.0 && d >= last, "cap {cap}: {d} after {last}");
        let half_bx: f64 = 0.5
            * b.iter()
                .zip(&got.x)
                .map(|(b, x)| b.x * x[0] as f64 + b.y * x[1] as f64 + b.z * x[2] as f64)
                .sum::<f64>();
        assert!(
            (half_bx - d as f64).abs() <= 1e-3 * half_bx,
            "cap {cap}: ½bᵀx {half_bx} vs {d}"
        );
        let remaining_err = (got.model.remaining as f64 - want.model_remaining).abs();
        assert!(
            remaining_err <= 1e-3 * want.model_decrease,
            "cap {cap}: remaining {} vs reference {}",
            got.model.remaining,
            want.model_remaining
        );
        let fraction = got.model.fraction();
        assert!(fraction > 0.0 && fraction <= 1.0, "cap {cap}: {fraction}");
        if cap % 10 == 0 {
            println!(
                "cap {cap}: {:?}, decrease {d:.6e} (reference {:.6e}), fraction {fraction:.4}",
                got.exit, want.model_decrease
            );
        }
        (last, last_fraction) = (d, fraction.max(last_fraction));
    }
    let done = solver.solve(&b32, &vec![[0.0; 3]; n], 1e-6, 1000).unwrap();
    assert_eq!(done.exit, SolveExit::Converged);
    assert!(done.model.decrease >= last);
    assert!(done.model.fraction() > 0.9999, "{:?}", done.model);
    assert!(done.model.fraction() >= last_fraction, "{:?}", done.model);
    assert_no_validation_errors(&ctx);
}

/// Issue 22, item 2 ("fewer dispatches"): with VK_EXT_conditional_rendering the iterations
/// recorded after the device decided to stop are skipped, not launched empty. Each run's
/// predicate words equal the reference's (`run_predicates`: 1 exactly for the iterations that
/// ran), the counters count the skipped dispatches, and the solves are bit-identical to those
/// of a context without it (which launches every recorded iteration), plain and warm-started,
/// over one and several runs, a cap, b = 0 and a solve started at its solution.
#[test]
fn iterations_after_the_stop_are_skipped_and_counted_with_conditional_rendering() {
    let on = context_with_conditional_rendering(false, true);
    let off = context_with_conditional_rendering(false, false);
    let lavapipe = on.conditional_rendering();
    let (a, b) = grid_laplacian(6, 0.05);
    let n = a.rows();
    let b32 = vec32(&b);
    let k = 8u32;
    let a32 = to_f32(&a);
    let (s_on, s_off) = (
        Pcg::new(&on, &a32, k).unwrap(),
        Pcg::new(&off, &a32, k).unwrap(),
    );
    assert!(s_off.run_predicates().unwrap().is_none());
    let zero = vec![[0.0f32; 3]; n];
    let exact = s_on.solve(&b32, &zero, 1e-7, 500).unwrap().x;
    // (right-hand side, initial guess, tolerance, cap)
    type Case = (Vec<[f32; 3]>, Vec<[f32; 3]>, f32, u32);
    let cases: Vec<Case> = vec![
        (b32.clone(), zero.clone(), 1e-4, 500),
        (b32.clone(), zero.clone(), 1e-4, 5),
        (b32.clone(), zero.clone(), 1e-4, 8),
        (b32.clone(), zero.clone(), 1e-4, 9),
        (b32.clone(), zero.clone(), 1e-2, 500),
        (zero.clone(), vec![[1.0; 3]; n], 1e-4, 100),
        (b32.clone(), exact, 1e-3, 100),
    ];
    for (rhs, x0, tol, cap) in &cases {
        let before = (on.counters(), off.counters());
        let got = s_on.solve(rhs, x0, *tol, *cap).unwrap();
        let want = s_off.solve(rhs, x0, *tol, *cap).unwrap();
        let (d_on, d_off) = (on.counters() - before.0, off.counters() - before.1);
        println!(
            "tol {tol:e}, cap {cap}: {} iterations; on {d_on:?}; off {d_off:?}",
            got.iterations
        );
        assert_eq!(got, want, "tol {tol:e}, cap {cap}: not bit-identical");
        assert_eq!(
            d_off.dispatches_executed(),
            d_off.dispatches,
            "nothing skipped"
        );
        let runs = got.iterations.div_ceil(k).max(1);
        assert_eq!(d_on.submits, runs as u64);
        if !lavapipe {
            continue;
        }
        // Init (3), per run its start, then 3 dispatches per iteration that ran.
        let executed = 3 + runs as u64 + 3 * got.iterations as u64;
        assert_eq!(d_on.dispatches_executed(), executed, "{d_on:?}");
        assert_eq!(
            d_on.dispatches - d_on.dispatches_executed(),
            3 * (k * runs - got.iterations) as u64
        );
        let (first, more) = s_on.run_predicates().unwrap().unwrap();
        assert_eq!(first, run_predicates(k, 0, Some(got.iterations)));
        if runs > 1 {
            assert_eq!(
                more,
                run_predicates(k, (runs - 1) * k, Some(got.iterations))
            );
        }
    }
    // Warm-started: the grouped run and the global run in one submission, then further runs.
    let e = trace_stiffness(&a);
    for (warm_cap, tol) in [(6u32, 1e-4f32), (20, 1e-4), (4, 1e-1)] {
        let warm = WarmStart {
            enabled: true,
            max_iterations: warm_cap,
            tolerance: 1e-2,
        };
        let before = on.counters();
        let got = s_on.solve_warm(&b32, &e, tol, 500, &warm).unwrap();
        let d = on.counters() - before;
        let want = s_off.solve_warm(&b32, &e, tol, 500, &warm).unwrap();
        println!(
            "warm cap {warm_cap}: {} + {} iterations; {d:?}",
            got.warm_iterations, got.iterations
        );
        assert_eq!(got, want, "warm cap {warm_cap}: not bit-identical");
        if lavapipe {
            assert!(d.dispatches_executed() < d.dispatches, "{d:?}");
        }
    }
    assert_no_validation_errors(&on);
    assert_no_validation_errors(&off);
}

/// A warm start recorded in runs shorter than the global solve's
/// (`Pcg::with_sparsity_and_warm_run`, the Newton solver's runs of the warm start's cap) gives
/// the same bits as one recorded in the global runs, whether its cap fits one of its runs (one
/// submission with the global solve) or it continues over several, and records fewer
/// dispatches per solve when the cap fits.
#[test]
fn a_shorter_warm_start_run_gives_the_same_bits_with_fewer_dispatches() {
    let ctx = context(false);
    let (a, b) = random_system(300, 1200, 2.0, 31);
    let e = trace_stiffness(&a);
    let a32 = to_f32(&a);
    let pairs: Vec<(u32, u32)> = a32.off.iter().map(|(i, j, _)| (*i, *j)).collect();
    let k = 64;
    let full = Pcg::new(&ctx, &a32, k).unwrap();
    let short = Pcg::with_sparsity_and_warm_run(&ctx, a.rows(), &pairs, k, 6).unwrap();
    // The same matrix in both: the blocks the first uploaded.
    short
        .diag_blocks()
        .write(&full.diag_blocks().read().unwrap())
        .unwrap();
    short
        .off_blocks()
        .write(&full.off_blocks().read().unwrap())
        .unwrap();
    short
        .inverse_diag_blocks()
        .write(&full.inverse_diag_blocks().read().unwrap())
        .unwrap();
    assert!(
        Pcg::with_sparsity_and_warm_run(&ctx, a.rows(), &pairs, k, 2 * k).is_err(),
        "a warm run longer than the global runs"
    );
    assert!(
        Pcg::with_sparsity_and_warm_run(&ctx, a.rows(), &pairs, k, 5).is_err(),
        "an odd warm run"
    );
    let b32 = vec32(&b);
    for cap in [6, 20] {
        let warm = WarmStart {
            enabled: true,
            max_iterations: cap,
            // Tight: the warm start runs past a run of 6.
            tolerance: 1e-7,
        };
        let mut recorded = Vec::new();
        let mut solves = Vec::new();
        for solver in [&full, &short] {
            let before = ctx.counters();
            solves.push(solver.solve_warm(&b32, &e, 1e-4, 1000, &warm).unwrap());
            recorded.push((ctx.counters() - before).dispatches);
        }
        let (f, s) = (&solves[0], &solves[1]);
        println!(
            "warm cap {cap}: warm {} + global {} iterations; recorded dispatches {} (warm runs \
             of {k}) and {} (of 6)",
            f.warm_iterations, f.iterations, recorded[0], recorded[1]
        );
        // At the cap of 6: one run of 6. At 20 (it stops at 10 here): beyond the first run.
        assert!(
            f.warm_iterations > 6 || f.warm_iterations == cap,
            "cap {cap}: the warm start stopped after {} iterations",
            f.warm_iterations
        );
        assert_eq!(
            (s.warm_iterations, s.iterations, s.exit),
            (f.warm_iterations, f.iterations, f.exit),
            "cap {cap}"
        );
        assert_eq!(
            s.relative_residual.to_bits(),
            f.relative_residual.to_bits(),
            "cap {cap}"
        );
        let bits =
            |x: &[[f32; 3]]| -> Vec<u32> { x.iter().flatten().map(|v| v.to_bits()).collect() };
        assert!(bits(&s.x) == bits(&f.x), "cap {cap}: the solutions differ");
        if cap <= 6 {
            assert!(
                recorded[1] < recorded[0],
                "cap {cap}: {} recorded dispatches with warm runs of 6, {} with runs of {k}",
                recorded[1],
                recorded[0]
            );
        }
    }
    assert_no_validation_errors(&ctx);
}
