//! Two-way repulsion energy in the Newton dynamics on lavapipe: the `two_way_repulsion` kernel's
//! energy, gradient and Hessian-block sums against `cpu_reference::two_way::repulsion` on the
//! solver's own pairs, and a cloth dropped on a pinned cloth needs fewer collision steps with
//! repulsion on, every frame intersection-free (exact checker).

use rand::Rng;
use supple::contact::two_way::{Repulsion, TwoWay, TwoWayReport, TwoWaySettings};
use supple::cpu_reference::recovery_response::{PENALTY_GRAD_SCALE, PENALTY_HESS_SCALE};
use supple::cpu_reference::two_way as reference;
use supple::math::Vec3;
use supple::mesh::procedural::cloth_grid;
use supple::proximity::ProximityMesh;
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple::vk::BufferUsage;
use supple_gpu_tests::{assert_no_validation_errors, body_surface, context, step_checked};

fn v3(p: &[f32; 4]) -> Vec3 {
    Vec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
}

/// Energy, gradient and majorizer sums of the kernel equal the reference at the iterate, and
/// the trial energy equals the reference at the trial positions, on random sheets.
#[test]
fn repulsion_kernel_matches_the_reference() {
    let ctx = context(true);
    let mut rng = supple_gpu_tests::rng(0x4e9_0151);
    let mut active = 0;
    for case in 0..6 {
        let cells = rng.random_range(5..9);
        let gap = rng.random_range(0.0008..0.0025);
        let a = cloth_grid([cells, cells], [0.1, 0.1], [0.0, 0.0, 0.0]);
        let b = cloth_grid([cells, cells], [0.1, 0.1], [0.0, 0.0, gap]);
        let bottom = a.positions.len();
        let (sn, cs) = 0.3f64.sin_cos();
        let shift = [rng.random_range(-0.01..0.01), rng.random_range(-0.01..0.01)];
        let mut x = a.positions.clone();
        x.extend(b.positions.iter().map(|p| {
            let (u, v) = (p[0] - 0.05, p[1] - 0.05);
            [
                0.05 + cs * u - sn * v + shift[0],
                0.05 + sn * u + cs * v + shift[1],
                p[2],
            ]
        }));
        let mut tris = a.triangles.clone();
        tris.extend(b.triangles.iter().map(|t| t.map(|v| v + bottom as u32)));
        let body: Vec<u32> = (0..x.len()).map(|i| (i >= bottom) as u32).collect();
        let mesh = ProximityMesh::new(tris, body).expect("mesh");
        let n = x.len();
        let mut tw =
            TwoWay::new(&ctx, mesh, &x, &vec![1.0; n], TwoWaySettings::default()).expect("solver");
        tw.search_if_stale(&mut TwoWayReport::default())
            .expect("search");
        let (cons, n_vt) = tw.read_constraints().unwrap();
        // The Newton iterate: x with small random moves (the pairs stay those of the search).
        let jiggle = |rng: &mut rand_pcg::Pcg64| -> Vec<[f32; 4]> {
            x.iter()
                .map(|p| {
                    let mut q = [0f32; 4];
                    for k in 0..3 {
                        q[k] = (p[k] + rng.random_range(-3e-4..3e-4)) as f32;
                    }
                    q
                })
                .collect()
        };
        let it = jiggle(&mut rng);
        let tr = jiggle(&mut rng);
        let st = BufferUsage::STORAGE;
        let positions = ctx.upload_buffer("test.iterate", &it, st).unwrap();
        let trial = ctx.upload_buffer("test.trial", &tr, st).unwrap();
        let accum = ctx
            .upload_buffer("test.accum", &vec![[7i32; 4]; 3 * n], st)
            .unwrap();
        let k = rng.random_range(10.0..1000.0);
        let d_r = rng.random_range(0.0008..0.002);
        let rep = Repulsion::new(&ctx, &tw, &positions, &trial, &accum, k, d_r).expect("rep");
        let (e, _) = rep.evaluate().expect("evaluate");
        let (et, _) = rep.trial().expect("trial");
        let xi: Vec<Vec3> = it.iter().map(v3).collect();
        let xt: Vec<Vec3> = tr.iter().map(v3).collect();
        let r = reference::repulsion(&xi, &cons, n_vt, k, d_r);
        let rt = reference::repulsion(&xt, &cons, n_vt, k, d_r);
        let tol_e = |want: f64| 1e-3 * want + 1e-3 * k * 1e-9;
        assert!(
            (e - r.energy).abs() <= tol_e(r.energy),
            "case {case}: E gpu {e} ref {}",
            r.energy
        );
        assert!(
            (et - rt.energy).abs() <= tol_e(rt.energy),
            "case {case}: trial E gpu {et} ref {}",
            rt.energy
        );
        let acc = accum.read().unwrap();
        // Sums are fixed point without k: the gradient in 2^-26 m, the blocks in 2^-20.
        let g_unit = k / PENALTY_GRAD_SCALE;
        let h_unit = k / PENALTY_HESS_SCALE;
        for i in 0..n {
            let g = acc[3 * i];
            let d = acc[3 * i + 1];
            let o = acc[3 * i + 2];
            let want = r.gradient[i];
            let gmax = r.gradient.iter().map(|g| g.norm()).fold(0.0, f64::max);
            for c in 0..3 {
                let got = g[c] as f64 * g_unit;
                assert!(
                    (got - want[c]).abs() <= 2e-3 * gmax + 8.0 * g_unit,
                    "case {case} vertex {i}: gradient {got} vs {}",
                    want[c]
                );
            }
            let h = r.hessian_majorizer[i];
            let pairs = [
                (d[0], h[0]),
                (d[1], h[4]),
                (d[2], h[8]),
                (o[0], h[1]),
                (o[1], h[2]),
                (o[2], h[5]),
            ];
            for (got, want) in pairs {
                let got = got as f64 * h_unit;
                assert!(
                    (got - want).abs() <= 1e-3 * k + 8.0 * h_unit,
                    "case {case} vertex {i}: block {got} vs {want}"
                );
            }
        }
        active += r.active;
    }
    assert!(active > 20, "too few pairs inside d_r: {active}");
    assert_no_validation_errors(&ctx);
}

/// A cloth dropped on a pinned cloth: with the repulsion energy the dynamics keep the sheets
/// apart themselves, so the collision handler takes fewer steps and the smallest distance is
/// larger; both runs stay intersection-free on every frame and between frames.
#[test]
fn repulsion_reduces_collision_steps_of_a_cloth_drop() {
    let run = |k: f64| -> (u32, f32) {
        let toml = format!(
            r#"
[simulation]
frame_rate = 60.0
frames = 1
[solver]
newton_max_iterations = 3
pcg_tolerance = 1e-3
[collision]
method = "two-way"
d_min = 0.004
d_max = 0.008
delta = 0.002
repulsion_stiffness = {k}
repulsion_distance = 0.004
[[body]]
name = "floor"
mesh = {{ generator = "cloth", size = [0.4, 0.4, 0.0], cells = [8, 8, 1] }}
translation = [0.0, 0.0, 0.3]
material = {{ model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-4 }}
fixed = [{{ region = {{ min = [-1.0, -1.0, 0.299], max = [1.0, 1.0, 0.301] }} }}]
[[body]]
name = "drop"
mesh = {{ generator = "cloth", size = [0.2, 0.2, 0.0], cells = [5, 5, 1] }}
translation = [0.011, 0.007, 0.31]
rotation_deg = [0.0, 0.0, 25.0]
material = {{ model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-4 }}
"#
        );
        let ctx = context(false);
        let name = format!("drop k={k}");
        let scene = Scene::parse(&toml, &name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut sim = Simulation::new(&ctx, &scene).unwrap_or_else(|e| panic!("{name}: {e}"));
        let surface = body_surface(&sim);
        let mut prev = sim.positions().expect("positions");
        let (mut steps, mut min_d, mut pairs) = (0, f32::INFINITY, 0);
        for f in 0..16 {
            let st = step_checked(&mut sim, &surface, &mut prev, &name, f);
            steps += st
                .contact::<supple::contact::two_way::CollisionFrameStats>()
                .steps;
            pairs = pairs.max(
                st.contact::<supple::contact::two_way::CollisionFrameStats>()
                    .contact_pairs,
            );
            if let Some(d) = st
                .contact::<supple::contact::two_way::CollisionFrameStats>()
                .min_distance
            {
                min_d = min_d.min(d);
            }
        }
        assert!(pairs > 0, "{name}: the cloths never came into contact");
        assert_no_validation_errors(&ctx);
        eprintln!("{name}: {steps} collision steps, min distance {min_d}, max pairs {pairs}");
        (steps, min_d)
    };
    let (steps_off, min_off) = run(0.0);
    let (steps_on, min_on) = run(10.0);
    assert!(
        steps_on < steps_off && min_on > min_off,
        "repulsion: {steps_on} steps, min {min_on}; without: {steps_off} steps, min {min_off}"
    );
}
