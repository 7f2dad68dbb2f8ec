//! In-time assembly of the Newton matrix (`kernels/fem/tet_eigensystem.comp`,
//! `kernels/fem/assemble_hessian.comp`): diagonal blocks, their inverses, off-diagonal edge
//! blocks and the warm start's stiffness estimates of a pool of tets (all three models),
//! cloth membranes and hinges and rod springs and bends, against an f64 assembly of the
//! reference element Hessians (`TetRest::hessian_analytic`, `ThinElement::hessian`), with the
//! tets' Hessians projected to PSD and exact (project-on-demand Newton).
use nalgebra::{Matrix3, Vector3};
use rand::Rng;
use supple::cpu_reference::fem::{Material, TetRest};
use supple::cpu_reference::pcg::block_inverse_abs;
use supple::cpu_reference::thin::NO_VERTEX;
use supple::fem::elements::{edge_structure, BlockAssembly, EdgeSparsity};
use supple::fem::thin::{cloth_elements, rod_elements, ClothMaterial};
use supple::fem::{ElementModel, TetElements};
use supple::mesh::procedural::{box_tets, cloth_grid, CellSplit};
use supple::vk::{BufferUsage, CompileOptions, GpuBuffer, Graph};
use supple_gpu_tests::{assert_no_validation_errors, context, rng};

fn block(rows: &[[f32; 4]], k: usize) -> Matrix3<f64> {
    Matrix3::from_fn(|r, c| rows[3 * k + r][c] as f64)
}

#[test]
fn in_time_assembly_matches_the_reference_assembly() {
    let ctx = context(false);
    let tets = box_tets([3, 2, 2], [0.1, 0.1, 0.1], [0.0, 0.0, 0.0], CellSplit::Five);
    let cloth = cloth_grid([5, 4], [0.5, 0.4], [-0.25, -0.2, 0.0]);
    let mut rest: Vec<[f64; 3]> = tets.positions.clone();
    let cloth_base = rest.len() as u32;
    rest.extend(cloth.positions.iter().map(|p| [p[0], p[1], p[2] + 1.0]));
    let rod_base = rest.len() as u32;
    let rod: Vec<[f64; 3]> = (0..=8).map(|k| [0.05 * k as f64, 2.0, 0.5]).collect();
    rest.extend(&rod);
    let cloth_material = ClothMaterial {
        youngs_modulus: 1e6,
        poisson_ratio: 0.3,
        thickness: 1e-3,
        bending_stiffness: Some(1e-2),
    };
    let mut thin = cloth_elements(&cloth, &rest, cloth_base, &cloth_material).unwrap();
    thin.extend(rod_elements(&rod, rod_base, 1e7, 0.005, 2e-3));
    let n = rest.len();
    let mut r = rng(17);
    // Large deformation: some tets invert, cloth stretched and compressed.
    let x: Vec<[f64; 3]> = rest
        .iter()
        .map(|p| {
            [
                p[0] * 1.05 + r.random_range(-0.03..0.03),
                p[1] * 0.95 + r.random_range(-0.03..0.03),
                p[2] + r.random_range(-0.03..0.03),
            ]
        })
        .collect();
    // The element kernels read their inputs through texel views.
    let texel = BufferUsage::STORAGE | BufferUsage::TEXEL;
    let upload = |name: &str, v: &[[f32; 4]]| ctx.upload_buffer(name, v, texel).unwrap();
    let positions = upload(
        "positions",
        &x.iter()
            .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32, 0.0])
            .collect::<Vec<_>>(),
    );
    let mass: Vec<f32> = (0..n).map(|_| r.random_range(0.01..0.1)).collect();
    // A few fixed vertices (identity rows, zero edge blocks).
    let inv_mass: Vec<f32> = mass
        .iter()
        .enumerate()
        .map(|(i, m)| if i % 11 == 3 { 0.0 } else { 1.0 / m })
        .collect();
    let mut contact = vec![[0.0f32; 4]; 3 * n];
    for i in (0..n).step_by(5) {
        for k in 0..3 {
            contact[3 * i + k][k] = r.random_range(0.0..50.0);
        }
    }
    let inv_h2 = 3600.0f32;
    let pool: Vec<[u32; 4]> = tets
        .tets
        .iter()
        .copied()
        .chain(thin.iter().map(|e| e.vertices()))
        .collect();
    let (pairs, _, _) = edge_structure(pool.iter().copied());
    let mass_buf = ctx.upload_buffer("mass", &mass, texel).unwrap();
    let inv_mass_buf = ctx.upload_buffer("inv_mass", &inv_mass, texel).unwrap();
    let contact_buf = upload("contact", &contact);
    // For the exact Hessians: a strongly negative block on every 7th vertex makes its diagonal
    // block indefinite (what |D|⁻¹ is for).
    let mut contact_indefinite = contact.clone();
    for i in (0..n).step_by(7) {
        contact_indefinite[3 * i][0] = -1e5;
        contact_indefinite[3 * i + 1][1] = -2e5;
    }
    let contact_indefinite_buf = upload("contact_indefinite", &contact_indefinite);
    let out = |name: &str, len: usize| -> GpuBuffer<[f32; 4]> {
        ctx.create_buffer(name, len, BufferUsage::STORAGE).unwrap()
    };
    let (diag, inv_diag, off) = (
        out("diag", 3 * n),
        out("inv_diag", 3 * n),
        out("off", 3 * pairs.len()),
    );
    let stiffness = ctx
        .create_buffer::<f32>("stiffness", n, BufferUsage::STORAGE)
        .unwrap();
    let sparsity = EdgeSparsity::new(&ctx, pool.iter().copied()).unwrap();
    assert_eq!(sparsity.pairs, pairs);
    let (mu, lambda) = (3e5, 4e5);
    let xv = |v: u32| {
        if v == NO_VERTEX {
            Vector3::zeros()
        } else {
            Vector3::from(x[v as usize])
        }
    };
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
        for project in [true, false] {
            let elements = TetElements::with_thin(
                &ctx,
                &rest,
                &tets.tets,
                &vec![(mu, lambda); tets.tets.len()],
                model,
                &thin,
            )
            .unwrap();
            let mut g = Graph::new("assembly");
            elements.record_hessian_projected(&mut g, &positions, project);
            elements.record_assembly_projected(
                &mut g,
                &positions,
                &BlockAssembly {
                    inv_h2,
                    mass: &mass_buf,
                    inv_mass: &inv_mass_buf,
                    contact_hess: if project {
                        &contact_buf
                    } else {
                        &contact_indefinite_buf
                    },
                    sparsity: &sparsity,
                    diag: &diag,
                    inverse_diag: &inv_diag,
                    off: &off,
                    stiffness: &stiffness,
                },
                project,
            );
            let c = g.compile(&ctx, CompileOptions::default()).unwrap();
            c.run().unwrap();
            let (got_d, got_i, got_o, got_s) = (
                diag.read().unwrap(),
                inv_diag.read().unwrap(),
                off.read().unwrap(),
                stiffness.read().unwrap(),
            );
            let contact = if project {
                &contact
            } else {
                &contact_indefinite
            };
            // Reference assembly in f64.
            let mut want_d: Vec<Matrix3<f64>> = (0..n)
                .map(|i| {
                    Matrix3::identity() * (mass[i] * inv_h2) as f64
                        + Matrix3::from_fn(|r, c| contact[3 * i + r][c] as f64)
                })
                .collect();
            let mut want_s: Vec<f64> = (0..n)
                .map(|i| {
                    3.0 * (mass[i] * inv_h2) as f64
                        + (0..3).map(|k| contact[3 * i + k][k] as f64).sum::<f64>()
                })
                .collect();
            let mut want_o = vec![Matrix3::<f64>::zeros(); pairs.len()];
            let index: std::collections::HashMap<(u32, u32), usize> =
                pairs.iter().enumerate().map(|(k, &p)| (p, k)).collect();
            let mut inverted = 0;
            let mut indefinite = 0;
            let mut indefinite_blocks = 0;
            for (e, vs) in pool.iter().enumerate() {
                let xe = vs.map(xv);
                // The exact tet Hessians (PROJECT = 0) keep their negative eigenvalues; the
                // stiffness estimate is the projected Hessian's trace either way.
                let (h, trace) = if e < tets.tets.len() {
                    let rt = TetRest::new(&vs.map(|v| Vector3::from(rest[v as usize]))).unwrap();
                    inverted += (rt.deformation_gradient(&xe).determinant() < 0.0) as usize;
                    let h = rt.hessian_analytic_projected(&material, &xe, project);
                    if h.symmetric_eigen().eigenvalues.min() < -1e-6 * h.norm() {
                        indefinite += 1;
                    }
                    (h, rt.hessian_analytic(&material, &xe).trace())
                } else {
                    let h = thin[e - tets.tets.len()].hessian(&xe);
                    (h, h.trace())
                };
                let nodes = vs.iter().filter(|&&v| v != NO_VERTEX).count() as f64;
                for a in 0..4 {
                    if vs[a] == NO_VERTEX {
                        continue;
                    }
                    want_d[vs[a] as usize] += h.fixed_view::<3, 3>(3 * a, 3 * a);
                    want_s[vs[a] as usize] += trace / nodes;
                    for b in 0..4 {
                        if vs[b] != NO_VERTEX && vs[a] < vs[b] {
                            want_o[index[&(vs[a], vs[b])]] += h.fixed_view::<3, 3>(3 * a, 3 * b);
                        }
                    }
                }
            }
            assert!(inverted > 0, "the deformation should invert some tets");
            assert_eq!(
                indefinite > 0,
                !project,
                "{model:?}: {indefinite} indefinite tet Hessians (projected: {project})"
            );
            let dscale = want_d.iter().map(|m| m.norm()).fold(0.0, f64::max);
            for i in 0..n {
                let fixed = inv_mass[i] == 0.0;
                let want = if fixed {
                    Matrix3::identity()
                } else {
                    want_d[i]
                };
                let got = block(&got_d, i);
                assert!(
                    (got - want).norm() <= 2e-4 * dscale,
                    "{model:?} vertex {i}: {got} vs {want}"
                );
                let inv = block(&got_i, i);
                if project {
                    assert!(
                        (inv * got - Matrix3::identity()).norm() < 1e-3,
                        "{model:?} vertex {i}: inverse"
                    );
                } else {
                    // Exact blocks, some indefinite: |D|⁻¹ of the block the GPU assembled.
                    let want_inv = Matrix3::from_row_slice(&block_inverse_abs(
                        &got.transpose()
                            .as_slice()
                            .iter()
                            .map(|&v| v as f32)
                            .collect::<Vec<_>>()
                            .try_into()
                            .expect("9 entries"),
                    ));
                    assert!(
                        (inv - want_inv).norm() <= 1e-3 * want_inv.norm(),
                        "{model:?} vertex {i}: |D|⁻¹ {inv} vs {want_inv}"
                    );
                    if want.symmetric_eigen().eigenvalues.min() < 0.0 {
                        indefinite_blocks += 1;
                    }
                }
                let want_st = if fixed { 1.0 } else { want_s[i] };
                assert!(
                    (got_s[i] as f64 - want_st).abs() <= 2e-4 * want_st.abs().max(1.0),
                    "{model:?} vertex {i}: stiffness {} vs {want_st}",
                    got_s[i]
                );
            }
            for (k, &(i, j)) in pairs.iter().enumerate() {
                let fixed = inv_mass[i as usize] == 0.0 || inv_mass[j as usize] == 0.0;
                let want = if fixed { Matrix3::zeros() } else { want_o[k] };
                let got = block(&got_o, k);
                assert!(
                    (got - want).norm() <= 2e-4 * dscale,
                    "{model:?} edge ({i}, {j}): {got} vs {want}"
                );
            }
            // The exact-Hessian case covers indefinite diagonal blocks.
            assert!(
                project || indefinite_blocks > 0,
                "{model:?}: no indefinite diagonal block"
            );
            // Deterministic: a second run writes the same bits.
            c.run().unwrap();
            assert!(diag
                .read()
                .unwrap()
                .iter()
                .zip(&got_d)
                .all(|(a, b)| a.map(f32::to_bits) == b.map(f32::to_bits)));
            assert!(off
                .read()
                .unwrap()
                .iter()
                .zip(&got_o)
                .all(|(a, b)| a.map(f32::to_bits) == b.map(f32::to_bits)));
        }
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn a_scene_beyond_the_largest_storage_binding_is_refused_up_front() {
    let ctx = context(false);
    let limit = ctx.caps().max_storage_buffer_range;
    // 5 tets per cell: per-corner gradients take 5 · 64 bytes per cell.
    let cells = ((limit as f64 / 320.0).cbrt().ceil() as u32) + 1;
    let scene = supple::scene::Scene::parse(
        &format!(
            r#"
[simulation]
frame_rate = 60.0

[[body]]
name = "big"
mesh = {{ generator = "box", size = [1.0, 1.0, 1.0], cells = [{cells}, {cells}, {cells}] }}
material = {{ model = "stable-neo-hookean", youngs_modulus = 1e5, poisson_ratio = 0.3, density = 1000.0 }}
"#
        ),
        "big",
        &[],
    )
    .unwrap();
    let before = ctx.device_bytes();
    let e = supple::simulation::Simulation::new(&ctx, &scene)
        .err()
        .expect("the scene must be refused")
        .to_string();
    assert!(
        e.contains("fem.corner_grad")
            && e.contains(&format!("maxStorageBufferRange is {limit} bytes")),
        "{e}"
    );
    assert_eq!(ctx.device_bytes(), before, "nothing is left allocated");
    assert_no_validation_errors(&ctx);
}
