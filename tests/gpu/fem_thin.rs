//! GPU cloth and rod elements (`kernels/fem/thin_gradient.comp`) against the f64 reference
//! elements (`supple::cpu_reference::thin`): energies and per-vertex gradients, in a pool shared
//! with tets (their Hessians are assembled in time: `fem_assembly.rs`).
use nalgebra::Vector3;
use rand::Rng;
use supple::cpu_reference::thin::NO_VERTEX;
use supple::fem::thin::{cloth_elements, rod_elements, ClothMaterial};
use supple::fem::{ElementModel, TetElements};
use supple::mesh::procedural::{box_tets, cloth_grid, CellSplit};
use supple::vk::{BufferUsage, CompileOptions, Graph};
use supple_gpu_tests::{assert_no_validation_errors, context, rng};

#[test]
fn gpu_thin_elements_match_the_reference_in_a_pool_with_tets() {
    let ctx = context(false);
    // One tet box, one 6x5 cloth sheet, one 12-segment rod, in one vertex array.
    let tets = box_tets([2, 2, 1], [0.1, 0.1, 0.1], [0.0, 0.0, 0.0], CellSplit::Five);
    let cloth = cloth_grid([6, 5], [0.6, 0.5], [-0.3, -0.25, 0.0]);
    let mut rest: Vec<[f64; 3]> = tets.positions.clone();
    let cloth_base = rest.len() as u32;
    rest.extend(cloth.positions.iter().map(|p| [p[0], p[1], p[2] + 1.0]));
    let rod_base = rest.len() as u32;
    let rod: Vec<[f64; 3]> = (0..=12).map(|k| [0.05 * k as f64, 2.0, 0.5]).collect();
    rest.extend(&rod);
    let material = ClothMaterial {
        youngs_modulus: 1e6,
        poisson_ratio: 0.3,
        thickness: 1e-3,
        bending_stiffness: Some(1e-2),
    };
    let mut thin = cloth_elements(&cloth, &rest, cloth_base, &material).unwrap();
    thin.extend(rod_elements(&rod, rod_base, 1e7, 0.005, 2e-3));
    assert!(
        thin.len() > 60 + 12 + 11,
        "membranes, hinges, springs and bends"
    );
    // Random deformation: stretched and compressed, folded, out of plane.
    let mut r = rng(5);
    let x: Vec<[f64; 3]> = rest
        .iter()
        .map(|p| {
            [
                p[0] * 1.05 + r.random_range(-0.02..0.02),
                p[1] * 0.97 + r.random_range(-0.02..0.02),
                p[2] + r.random_range(-0.02..0.02),
            ]
        })
        .collect();
    let x32: Vec<[f32; 4]> = x
        .iter()
        .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32, 0.0])
        .collect();
    let positions = ctx
        .upload_buffer("positions", &x32, BufferUsage::STORAGE | BufferUsage::TEXEL)
        .unwrap();
    let lame = vec![(3e4, 5e4); tets.tets.len()];
    let elements = TetElements::with_thin(
        &ctx,
        &rest,
        &tets.tets,
        &lame,
        ElementModel::StableNeoHookean,
        &thin,
    )
    .unwrap();
    assert_eq!(elements.num_elements(), tets.tets.len() + thin.len());
    let mut g = Graph::new("thin");
    elements.record_gradient(&mut g, &positions);
    g.compile(&ctx, CompileOptions::default())
        .unwrap()
        .run()
        .unwrap();
    let energies = elements.energies().read().unwrap();
    let grads = elements.vertex_gradient().read().unwrap();
    let t0 = tets.tets.len();
    let xv = |v: u32| {
        if v == NO_VERTEX {
            Vector3::zeros()
        } else {
            Vector3::from(x[v as usize])
        }
    };
    let mut want_g = vec![Vector3::<f64>::zeros(); x.len()];
    let mut kinds_seen = [0usize; 3];
    for (e, el) in thin.iter().enumerate() {
        let vs = el.vertices();
        let xe = vs.map(xv);
        let (we, wg, wh) = (el.energy(&xe), el.gradient(&xe), el.hessian(&xe));
        let scale = wh.abs().max().max(1e-9);
        let got_e = energies[t0 + e] as f64;
        assert!(
            (got_e - we).abs() <= 1e-3 * we.abs() + 1e-6 * scale * 1e-4,
            "element {e} {el:?}: energy {got_e} vs {we}"
        );
        for (a, &v) in vs.iter().enumerate() {
            if v != NO_VERTEX {
                want_g[v as usize] += wg.fixed_rows::<3>(3 * a);
            }
        }
        kinds_seen[match el {
            supple::fem::thin::ThinElement::Membrane { .. } => 0,
            supple::fem::thin::ThinElement::Quadratic { .. } => 1,
            supple::fem::thin::ThinElement::Spring { .. } => 2,
        }] += 1;
    }
    assert!(kinds_seen.iter().all(|&k| k > 0), "{kinds_seen:?}");
    // Thin vertices get only thin gradients (tets are a separate body).
    let gscale = want_g.iter().map(|g| g.norm()).fold(0.0, f64::max);
    for v in cloth_base as usize..x.len() {
        let got = Vector3::new(grads[v][0], grads[v][1], grads[v][2]).cast::<f64>();
        assert!(
            (got - want_g[v]).norm() <= 2e-3 * gscale,
            "vertex {v}: {got} vs {}",
            want_g[v]
        );
    }
    assert_no_validation_errors(&ctx);
}
