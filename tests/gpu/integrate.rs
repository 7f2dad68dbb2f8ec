//! Symplectic Euler with GPU elastic forces against the f64 reference, on a clamped beam
//! sagging under gravity and a cube falling onto the ground plane.
use nalgebra::Vector3;
use supple::cpu_reference::fem::{lame, Material, TetRest};
use supple::cpu_reference::integrate::{symplectic_euler, Plane};
use supple::fem::{ElementModel, TetElements};
use supple::mesh::procedural::{box_tets, CellSplit};
use supple::stepper::symplectic::{SymplecticEuler, SymplecticEulerParams};
use supple::vk::{BufferUsage, CompileOptions, Graph};
use supple_gpu_tests::{assert_no_validation_errors, context};

struct Case {
    positions: Vec<[f64; 3]>,
    tets: Vec<[u32; 4]>,
    inv_mass: Vec<f64>,
}

fn lumped(
    positions: &[[f64; 3]],
    tets: &[[u32; 4]],
    density: f64,
    fixed: impl Fn(&[f64; 3]) -> bool,
) -> Vec<f64> {
    let mut m = vec![0.0; positions.len()];
    for t in tets {
        let r = TetRest::new(&t.map(|v| Vector3::from(positions[v as usize]))).unwrap();
        for &v in t {
            m[v as usize] += density * r.volume / 4.0;
        }
    }
    positions
        .iter()
        .zip(&m)
        .map(|(p, m)| if fixed(p) { 0.0 } else { 1.0 / m })
        .collect()
}

/// `split`: every step as the velocity stage then the position stage (what a stepper with a
/// contact handler between them records) instead of the whole-step kernel.
fn run(
    case: &Case,
    steps: usize,
    h: f64,
    plane: Plane,
    split: bool,
) -> (Vec<[f32; 4]>, Vec<Vector3<f64>>) {
    let (mu, lambda) = lame(1e5, 0.3);
    let material = Material::StableNeoHookean { mu, lambda };
    let gravity = Vector3::new(0.0, 0.0, -9.81);
    // GPU
    let ctx = context(false);
    let n = case.positions.len();
    let pos32: Vec<[f32; 4]> = case
        .positions
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
    let velocities = ctx
        .upload_buffer("velocities", &vec![[0f32; 4]; n], BufferUsage::STORAGE)
        .unwrap();
    let w32: Vec<f32> = case.inv_mass.iter().map(|&w| w as f32).collect();
    let inv_mass = ctx
        .upload_buffer("inv_mass", &w32, BufferUsage::STORAGE)
        .unwrap();
    let elements = TetElements::new(
        &ctx,
        &case.positions,
        &case.tets,
        &vec![(mu, lambda); case.tets.len()],
        ElementModel::StableNeoHookean,
    )
    .unwrap();
    let params = SymplecticEulerParams {
        gravity: [0.0, 0.0, -9.81, 0.0],
        plane: [
            plane.normal.x as f32,
            plane.normal.y as f32,
            plane.normal.z as f32,
            plane.offset as f32,
        ],
        n: n as u32,
        h: h as f32,
        stage: 0,
        _pad: 0,
    };
    let mut g = Graph::new("step");
    for _ in 0..10 {
        elements.record_gradient(&mut g, &positions);
        let stages: &[u32] = if split { &[1, 2] } else { &[0] };
        for &stage in stages {
            SymplecticEuler.record(
                &mut g,
                &positions,
                &velocities,
                &inv_mass,
                elements.vertex_gradient(),
                &SymplecticEulerParams { stage, ..params },
            );
        }
    }
    let step = g.compile(&ctx, CompileOptions::default()).unwrap();
    for _ in 0..steps / 10 {
        step.run().unwrap();
    }
    let gpu = positions.read().unwrap();
    drop(step);
    assert_no_validation_errors(&ctx);
    // Reference
    let rest: Vec<TetRest> = case
        .tets
        .iter()
        .map(|t| TetRest::new(&t.map(|v| Vector3::from(case.positions[v as usize]))).unwrap())
        .collect();
    let mut x: Vec<Vector3<f64>> = case.positions.iter().map(|p| Vector3::from(*p)).collect();
    let mut v = vec![Vector3::zeros(); n];
    for _ in 0..steps / 10 * 10 {
        let mut grad = vec![Vector3::zeros(); n];
        for (t, tet) in case.tets.iter().enumerate() {
            let gr = rest[t].gradient(&material, &tet.map(|k| x[k as usize]));
            for (k, &vi) in tet.iter().enumerate() {
                grad[vi as usize] += Vector3::new(gr[3 * k], gr[3 * k + 1], gr[3 * k + 2]);
            }
        }
        symplectic_euler(&mut x, &mut v, &case.inv_mass, &grad, gravity, plane, h);
    }
    (gpu, x)
}

#[test]
fn clamped_beam_sags_like_the_reference() {
    let mesh = box_tets(
        [8, 2, 2],
        [0.05, 0.05, 0.05],
        [0.0, 0.0, 1.0],
        CellSplit::Five,
    );
    let inv_mass = lumped(&mesh.positions, &mesh.tets, 1000.0, |p| p[0] < 1e-9);
    let case = Case {
        positions: mesh.positions.clone(),
        tets: mesh.tets.clone(),
        inv_mass,
    };
    let no_plane = Plane {
        normal: Vector3::zeros(),
        offset: 0.0,
    };
    let (gpu, cpu) = run(&case, 200, 2e-4, no_plane, false);
    let tip = cpu
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.x.total_cmp(&b.1.x))
        .map(|(i, _)| i)
        .unwrap();
    let sag = 1.0 + 0.1 - cpu[tip].z;
    assert!(sag > 1e-4, "the free end moves down: {sag}");
    let max_err = gpu
        .iter()
        .zip(&cpu)
        .map(|(g, c)| (Vector3::new(g[0] as f64, g[1] as f64, g[2] as f64) - c).norm())
        .fold(0.0, f64::max);
    assert!(
        max_err < 1e-3 * sag.max(1e-3),
        "GPU vs reference: {max_err} m (sag {sag} m)"
    );
    // Fixed vertices did not move.
    for (i, p) in case
        .positions
        .iter()
        .enumerate()
        .filter(|(i, _)| case.inv_mass[*i] == 0.0)
    {
        assert_eq!(
            [gpu[i][0], gpu[i][1], gpu[i][2]],
            [p[0] as f32, p[1] as f32, p[2] as f32]
        );
    }
}

#[test]
fn falling_cube_stops_at_the_ground_plane() {
    let mesh = box_tets(
        [2, 2, 2],
        [0.05, 0.05, 0.05],
        [0.0, 0.0, 0.01],
        CellSplit::Five,
    );
    let inv_mass = lumped(&mesh.positions, &mesh.tets, 1000.0, |_| false);
    let case = Case {
        positions: mesh.positions.clone(),
        tets: mesh.tets.clone(),
        inv_mass,
    };
    let ground = Plane {
        normal: Vector3::new(0.0, 0.0, 1.0),
        offset: 0.0,
    };
    let (gpu, cpu) = run(&case, 600, 2e-4, ground, false);
    assert!(
        cpu.iter().all(|p| p.z >= -1e-12),
        "reference stays above the plane"
    );
    assert!(
        gpu.iter().all(|p| p[2] >= -1e-6),
        "GPU stays above the plane"
    );
    let lowest = gpu.iter().map(|p| p[2]).fold(f32::INFINITY, f32::min);
    // Without the plane it would have fallen to z = -0.06 m; it lands and rebounds a little.
    assert!(
        lowest < 5e-3,
        "the cube reached the ground: lowest z {lowest}"
    );
    let max_err = gpu
        .iter()
        .zip(&cpu)
        .map(|(g, c)| (Vector3::new(g[0] as f64, g[1] as f64, g[2] as f64) - c).norm())
        .fold(0.0, f64::max);
    assert!(max_err < 1e-3, "GPU vs reference: {max_err} m");
}

#[test]
fn split_stages_equal_the_whole_step_bit_for_bit() {
    // The velocity stage, then the position stage (a contact handler acts between them) give
    // the whole-step kernel's result exactly, ground plane included.
    let mesh = box_tets(
        [2, 2, 2],
        [0.05, 0.05, 0.05],
        [0.0, 0.0, 0.01],
        CellSplit::Five,
    );
    let inv_mass = lumped(&mesh.positions, &mesh.tets, 1000.0, |_| false);
    let case = Case {
        positions: mesh.positions.clone(),
        tets: mesh.tets.clone(),
        inv_mass,
    };
    let ground = Plane {
        normal: Vector3::new(0.0, 0.0, 1.0),
        offset: 0.0,
    };
    let (whole, _) = run(&case, 300, 2e-4, ground, false);
    let (split, _) = run(&case, 300, 2e-4, ground, true);
    let bits = |x: &[[f32; 4]]| -> Vec<u32> { x.iter().flatten().map(|c| c.to_bits()).collect() };
    assert!(bits(&whole) == bits(&split), "split stages differ");
    assert!(
        whole.iter().any(|p| p[2] < 5e-3),
        "the cube reached the ground"
    );
}
