//! Two-way friction by velocity filtering on lavapipe: the `two_way_friction` kernel against
//! `cpu_reference::two_way::friction_sweep` on the solver's own pairs and colors, and a cloth
//! sliding over a pinned cloth slows down with friction while every frame stays
//! intersection-free (exact checker).

use rand::Rng;
use supple::contact::two_way::{TwoWay, TwoWayReport, TwoWaySettings};
use supple::cpu_reference::two_way as reference;
use supple::math::Vec3;
use supple::mesh::procedural::cloth_grid;
use supple::proximity::ProximityMesh;
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple_gpu_tests::{assert_no_validation_errors, body_surface, context, step_checked};

fn v3(p: &[f32; 4]) -> Vec3 {
    Vec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
}

/// Two 0.1 m cloth sheets of `cells`² quads, the top one `gap` above, turned by 0.3 rad and
/// shifted by `shift` (no parallel edges between the sheets, so closest points are unique).
fn sheets(cells: usize, gap: f64, shift: [f64; 2]) -> (ProximityMesh, Vec<[f64; 3]>, usize) {
    let a = cloth_grid([cells, cells], [0.1, 0.1], [0.0, 0.0, 0.0]);
    let b = cloth_grid([cells, cells], [0.1, 0.1], [0.0, 0.0, gap]);
    let bottom = a.positions.len();
    let mut x = a.positions.clone();
    let (sn, cs) = 0.3f64.sin_cos();
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
    (ProximityMesh::new(tris, body).expect("mesh"), x, bottom)
}

/// The friction pass on the GPU equals the reference sweep (same pairs, same color order) on
/// random sheets, pushes and coefficients, with the bottom sheet pinned or free.
#[test]
fn friction_kernel_matches_the_reference_sweep() {
    let ctx = context(true);
    let mut rng = supple_gpu_tests::rng(0xf21c_7105);
    let (mut changed, mut untouched) = (0, 0);
    for case in 0..8 {
        let cells = rng.random_range(5..9);
        let gap = rng.random_range(0.0012..0.0035);
        let shift = [rng.random_range(-0.01..0.01), rng.random_range(-0.01..0.01)];
        let (mesh, x, bottom) = sheets(cells, gap, shift);
        let n = x.len();
        let mu = rng.random_range(0.05..1.5);
        let pinned = rng.random_bool(0.5);
        let inv_w: Vec<f32> = (0..n)
            .map(|i| if i < bottom && pinned { 0.0 } else { 1.0 })
            .collect();
        // Targets: a lateral slide plus a random push down of the top sheet (some pairs end
        // inside the δ shell, some do not), small random noise on every vertex.
        let slide = [rng.random_range(-0.01..0.01), rng.random_range(-0.01..0.01)];
        let push = rng.random_range(0.0..0.003);
        let y: Vec<[f64; 3]> = x
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mut q = *p;
                for c in q.iter_mut() {
                    *c += rng.random_range(-2e-4..2e-4);
                }
                if i >= bottom {
                    q[0] += slide[0];
                    q[1] += slide[1];
                    q[2] -= push;
                }
                q
            })
            .collect();
        let st = TwoWaySettings::default();
        let mut tw = TwoWay::new(&ctx, mesh, &x, &inv_w, st).expect("solver");
        tw.set_target(&y).expect("target");
        tw.set_friction(mu).expect("mu");
        let y0: Vec<Vec3> = tw.target().read().unwrap()[..n].iter().map(v3).collect();
        let mut report = TwoWayReport::default();
        tw.apply_friction(&mut report).expect("friction");
        assert_eq!(report.searches, 1, "the first pass searches at x");
        let (cons, n_vt) = tw.read_constraints().unwrap();
        let (offsets, grouped) = tw.read_contact_colors().unwrap();
        let xs: Vec<Vec3> = tw.positions().read().unwrap()[..n].iter().map(v3).collect();
        let inv: Vec<f64> = inv_w.iter().map(|&w| w as f64).collect();
        let mut yr = y0.clone();
        let mut k = 0;
        for c in 0..offsets.len() - 1 {
            let g = &grouped[offsets[c] as usize..offsets[c + 1] as usize];
            k += reference::friction_sweep(&xs, &mut yr, &cons, n_vt, g, &inv, st.delta, mu);
        }
        let gy: Vec<Vec3> = tw.target().read().unwrap()[..n].iter().map(v3).collect();
        for i in 0..n {
            assert!(
                (gy[i] - yr[i]).norm() < 1e-6,
                "case {case} vertex {i}: y gpu {:?} ref {:?} (before {:?})",
                gy[i],
                yr[i],
                y0[i]
            );
            if pinned && i < bottom {
                assert_eq!(gy[i], y0[i], "case {case}: pinned vertex {i} moved");
            }
        }
        changed += k;
        untouched += cons.len() - k;
        // A second pass reuses the search (the reuse bound is fresh).
        let mut report = TwoWayReport::default();
        tw.apply_friction(&mut report).expect("friction");
        assert_eq!(report.searches, 0, "case {case}: searched again");
    }
    assert!(changed > 20, "too few pairs under friction: {changed}");
    assert!(
        untouched > 20,
        "too few pairs outside the shell: {untouched}"
    );
    assert_no_validation_errors(&ctx);
}

/// A small cloth thrown sideways over a pinned cloth: friction 0.5 stops it far sooner than
/// friction 0; both runs stay intersection-free on every frame and on the motion between frames.
#[test]
fn cloth_sliding_on_a_pinned_cloth_is_slowed_by_friction() {
    let run = |mu: f64| -> f64 {
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
friction = {mu}
[[body]]
name = "floor"
mesh = {{ generator = "cloth", size = [0.5, 0.5, 0.0], cells = [10, 10, 1] }}
translation = [0.0, 0.0, 0.3]
material = {{ model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-4 }}
fixed = [{{ region = {{ min = [-1.0, -1.0, 0.299], max = [1.0, 1.0, 0.301] }} }}]
[[body]]
name = "slider"
mesh = {{ generator = "cloth", size = [0.15, 0.15, 0.0], cells = [5, 5, 1] }}
translation = [-0.1, 0.013, 0.3035]
rotation_deg = [0.0, 0.0, 20.0]
velocity = [1.0, 0.0, 0.0]
material = {{ model = "cloth", youngs_modulus = 1e6, poisson_ratio = 0.3, density = 200.0, thickness = 0.001, bending_stiffness = 1e-4 }}
"#
        );
        let ctx = context(false);
        let name = format!("slide mu={mu}");
        let scene = Scene::parse(&toml, &name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut sim = Simulation::new(&ctx, &scene).unwrap_or_else(|e| panic!("{name}: {e}"));
        let surface = body_surface(&sim);
        let slider = sim.model().bodies[1].vertices.clone();
        let mut prev = sim.positions().expect("positions");
        let mean_x = |x: &[[f64; 3]]| {
            slider.clone().map(|v| x[v as usize][0]).sum::<f64>() / slider.len() as f64
        };
        let x0 = mean_x(&prev);
        let mut pairs = 0;
        for f in 0..12 {
            let st = step_checked(&mut sim, &surface, &mut prev, &name, f);
            pairs = pairs.max(
                st.contact::<supple::contact::two_way::CollisionFrameStats>()
                    .contact_pairs,
            );
        }
        assert!(pairs > 0, "{name}: the cloths never came into contact");
        assert_no_validation_errors(&ctx);
        let d = mean_x(&prev) - x0;
        eprintln!("{name}: slid {d:.4} m, max pairs {pairs}");
        d
    };
    let free = run(0.0);
    let rough = run(0.5);
    assert!(free > 0.08, "frictionless slide too short: {free}");
    assert!(
        rough < 0.8 * free,
        "friction 0.5 slid {rough} m, frictionless {free} m"
    );
}
