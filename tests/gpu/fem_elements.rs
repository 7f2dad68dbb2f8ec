//! GPU element energies, gradients and analytic Hessian eigensystems
//! (`kernels/fem/tet_eigensystem.comp`) against the f64 reference elements.
use nalgebra::Matrix3;
use nalgebra::Vector3;
use rand::Rng;
use supple::cpu_reference::fem::{lame, Material, TetEigensystem, TetRest};
use supple::fem::elements::EIGEN_VEC4S_PER_TET;
use supple::fem::{ElementModel, TetElements};
use supple::mesh::procedural::{box_tets, CellSplit};
use supple::vk::{BufferUsage, CompileOptions, Graph};
use supple_gpu_tests::{assert_no_validation_errors, context, rng};

#[test]
fn gpu_energies_and_gradients_match_the_reference() {
    let ctx = context(false);
    let mesh = box_tets(
        [6, 4, 3],
        [0.05, 0.05, 0.05],
        [0.0, 0.0, 0.0],
        CellSplit::Five,
    );
    let (mu, lambda) = lame(5e5, 0.3);
    let mut r = rng(21);
    // Large random deformation (up to 60 % of a cell), some tets invert.
    let deformed: Vec<[f64; 3]> = mesh
        .positions
        .iter()
        .map(|p| {
            [
                p[0] * 1.1 + r.random_range(-0.03..0.03),
                p[1] + r.random_range(-0.03..0.03),
                p[2] * 0.9 + r.random_range(-0.03..0.03),
            ]
        })
        .collect();
    let pos32: Vec<[f32; 4]> = deformed
        .iter()
        .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32, 0.0])
        .collect();
    let positions = ctx
        .upload_buffer(
            "positions",
            &pos32,
            BufferUsage::STORAGE | BufferUsage::TEXEL,
        )
        .unwrap();
    for (model, material) in [
        (
            ElementModel::StableNeoHookean,
            Material::StableNeoHookean { mu, lambda },
        ),
        (
            ElementModel::StVenantKirchhoff,
            Material::StVenantKirchhoff { mu, lambda },
        ),
        (
            ElementModel::CorotatedLinear,
            Material::CorotatedLinear { mu, lambda },
        ),
    ] {
        let elements = TetElements::new(
            &ctx,
            &mesh.positions,
            &mesh.tets,
            &vec![(mu, lambda); mesh.tets.len()],
            model,
        )
        .unwrap();
        let mut g = Graph::new("fem");
        elements.record_gradient(&mut g, &positions);
        let c = g.compile(&ctx, CompileOptions::default()).unwrap();
        c.run().unwrap();
        let energies = elements.energies().read().unwrap();
        let grads = elements.vertex_gradient().read().unwrap();
        // Reference in f64.
        let mut want_g = vec![Vector3::<f64>::zeros(); mesh.positions.len()];
        let mut inverted = 0;
        let mut max_e: f64 = 0.0;
        let mut want_e = Vec::new();
        for tet in &mesh.tets {
            let rest =
                TetRest::new(&tet.map(|v| Vector3::from(mesh.positions[v as usize]))).unwrap();
            let x = tet.map(|v| Vector3::from(deformed[v as usize]));
            inverted += (rest.deformation_gradient(&x).determinant() < 0.0) as usize;
            let e = rest.energy(&material, &x);
            max_e = max_e.max(e.abs());
            want_e.push(e);
            let gr = rest.gradient(&material, &x);
            for (k, &v) in tet.iter().enumerate() {
                want_g[v as usize] += Vector3::new(gr[3 * k], gr[3 * k + 1], gr[3 * k + 2]);
            }
        }
        assert!(inverted > 0, "the test deformation should invert some tets");
        for (t, (got, want)) in energies.iter().zip(&want_e).enumerate() {
            assert!(
                (*got as f64 - want).abs() <= 1e-4 * max_e,
                "{model:?} tet {t}: energy {got} vs {want}"
            );
        }
        let max_g = want_g.iter().map(|g| g.norm()).fold(0.0, f64::max);
        for (v, (got, want)) in grads.iter().zip(&want_g).enumerate() {
            let got = Vector3::new(got[0] as f64, got[1] as f64, got[2] as f64);
            assert!(
                (got - want).norm() <= 1e-4 * max_g,
                "{model:?} vertex {v}: {got:?} vs {want:?}"
            );
        }
        // Analytic eigensystems: the element Hessian they give (as the assembly builds it,
        // block by block) against the reference's analytic and numerical projections.
        let mut g = Graph::new("fem.hessian");
        elements.record_hessian(&mut g, &positions);
        g.compile(&ctx, CompileOptions::default())
            .unwrap()
            .run()
            .unwrap();
        let eig = elements.eigensystems().read().unwrap();
        for (t, tet) in mesh.tets.iter().enumerate() {
            let rest =
                TetRest::new(&tet.map(|v| Vector3::from(mesh.positions[v as usize]))).unwrap();
            let x = tet.map(|v| Vector3::from(deformed[v as usize]));
            let want = rest.hessian_stress_projected(&material, &x);
            let e = &eig[EIGEN_VEC4S_PER_TET * t..EIGEN_VEC4S_PER_TET * (t + 1)];
            let v3 = |k: usize| Vector3::new(e[k][0] as f64, e[k][1] as f64, e[k][2] as f64);
            let w = [v3(3), v3(4), v3(5)];
            let got = TetEigensystem {
                u: Matrix3::from_columns(&[v3(0), v3(1), v3(2)]),
                w: [-(w[0] + w[1] + w[2]), w[0], w[1], w[2]],
                twist: [0, 1, 2].map(|k| e[k][3] as f64),
                flip: [3, 4, 5].map(|k| e[k][3] as f64),
                scale: Matrix3::new(
                    e[6][0] as f64,
                    e[7][0] as f64,
                    e[7][1] as f64,
                    e[7][0] as f64,
                    e[6][1] as f64,
                    e[7][2] as f64,
                    e[7][1] as f64,
                    e[7][2] as f64,
                    e[6][2] as f64,
                ),
            };
            let mut h = nalgebra::SMatrix::<f64, 12, 12>::zeros();
            for a in 0..4 {
                for b in 0..4 {
                    h.fixed_view_mut::<3, 3>(3 * a, 3 * b)
                        .copy_from(&got.block(a, b));
                }
            }
            let scale = want.norm().max(1e-12);
            let err = (h - want).norm() / scale;
            assert!(
                err < 2e-4,
                "{model:?} tet {t}: Hessian relative error {err}"
            );
            let min_eig = h.symmetric_eigen().eigenvalues.min();
            assert!(
                min_eig >= -1e-4 * scale,
                "{model:?} tet {t}: eigenvalue {min_eig}"
            );
            // The stored trace per node (the warm start's stiffness contribution).
            let tr = e[6][3] as f64 * 4.0;
            assert!(
                (tr - want.trace()).abs() <= 2e-4 * want.trace().abs().max(1e-12),
                "{model:?} tet {t}: trace {tr} vs {}",
                want.trace()
            );
        }
        // Deterministic: a second run gives the same bits.
        c.run().unwrap();
        let again = elements.vertex_gradient().read().unwrap();
        assert!(again
            .iter()
            .zip(&grads)
            .all(|(a, b)| a.map(f32::to_bits) == b.map(f32::to_bits)));
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn degenerate_or_out_of_range_tets_are_refused() {
    let ctx = context(false);
    let p = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [2.0, 0.0, 0.0],
    ];
    let e = TetElements::new(
        &ctx,
        &p,
        &[[0, 1, 2, 3]],
        &[(1.0, 1.0)],
        ElementModel::StableNeoHookean,
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("degenerate"), "{e}");
    let e = TetElements::new(
        &ctx,
        &p,
        &[[0, 1, 2, 9]],
        &[(1.0, 1.0)],
        ElementModel::StableNeoHookean,
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("beyond"), "{e}");
    assert_no_validation_errors(&ctx);
}
