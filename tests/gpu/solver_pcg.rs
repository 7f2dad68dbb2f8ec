//! Block-Jacobi PCG on the GPU against the f64 reference PCG and a dense direct solve, on random
//! symmetric positive-definite block systems.
use nalgebra::{DVector, Matrix3, Vector3};
use rand::Rng;
use supple::cpu_reference::pcg::{pcg, BlockMatrix};
use supple::solver::{BlockMatrixF32, Pcg};
use supple_gpu_tests::{assert_no_validation_errors, context, rng};

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
