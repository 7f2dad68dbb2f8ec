//! Floor release of the two-way forward step on lavapipe (`two_way_release.comp`): a free
//! triangle sitting at the minimum separation over a pinned plate (or between two plates, or
//! stacked on a plate that moves with it) moves when its target takes it apart, along the
//! plates or together with its stack, and stays where it is, at least ξ away, when its target
//! pushes it in; every GPU step equals the f64 reference step
//! (`cpu_reference::two_way::{floor_distances, release_fractions, forward_released}`) and is
//! checked by the exact trajectory checker.

use supple::contact::two_way::{TwoWay, TwoWayReport, TwoWaySettings};
use supple::cpu_reference::two_way as reference;
use supple::intersection_check::{frame_intersections, trajectory_check, Surface};
use supple::math::Vec3;
use supple::proximity::ProximityMesh;
use supple_gpu_tests::{assert_no_validation_errors, context, reference_forward};

/// ξ of the default settings (m).
const XI: f64 = 1e-5;
/// Height of the free triangle over the bottom plate (and under the top plate): 1.05 ξ, at the
/// floor (the distance-bounded step allows 0.45 (D_i − ξ) ≈ 0.2 µm).
const H: f64 = 1.05 * XI;

/// Vertices 0..3: a free 1 cm triangle lying flat at z = H; 3..6: a plate at z = 0; 6..9
/// (with `top`): a plate at z = 2H. The free triangle's target is moved by `offset`, and the
/// bottom plate's too with `stack` (else the plates stay); every inverse weight is 0, so the
/// backward step leaves the targets alone and the forward step alone is tested.
fn plates(
    top: bool,
    stack: bool,
    offset: [f64; 3],
) -> (ProximityMesh, Vec<[f64; 3]>, Vec<[f64; 3]>) {
    let mut x = vec![
        [0.0, 0.0, H],
        [0.01, 0.0, H],
        [0.0, 0.01, H],
        [-0.05, -0.05, 0.0],
        [0.06, -0.04, 0.0],
        [0.0, 0.06, 0.0],
    ];
    let mut tris = vec![[0, 1, 2], [3, 4, 5]];
    let mut body = vec![0, 0, 0, 1, 1, 1];
    if top {
        x.extend([
            [-0.04, -0.06, 2.0 * H],
            [0.06, -0.03, 2.0 * H],
            [-0.02, 0.05, 2.0 * H],
        ]);
        tris.push([6, 7, 8]);
        body.extend([2, 2, 2]);
    }
    let mut y = x.clone();
    for p in &mut y[..if stack { 6 } else { 3 }] {
        for k in 0..3 {
            p[k] += offset[k];
        }
    }
    (ProximityMesh::new(tris, body).expect("mesh"), x, y)
}

fn v3(p: &[f32; 4]) -> Vec3 {
    Vec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
}

fn settings(release: bool, max_steps: u32) -> TwoWaySettings {
    let d = TwoWaySettings::default();
    assert_eq!(d.min_separation, XI);
    TwoWaySettings {
        steps_per_batch: 1,
        max_steps,
        floor_release: if release { d.floor_release } else { None },
        ..d
    }
}

/// The reference forward step of `st` from `x` toward `y` with reuse bound `bound`.
fn reference_step(
    st: &TwoWaySettings,
    x: &[Vec3],
    y: &[Vec3],
    cons: &[[u32; 4]],
    n_vt: usize,
    bound: f64,
) -> Vec<Vec3> {
    let mut x1 = x.to_vec();
    reference_forward(st, &mut x1, y, cons, n_vt, bound);
    x1
}

/// Runs `steps` forward steps; every step is compared with the reference step, checked by the
/// exact trajectory checker and keeps every pair at least ξ apart. Returns the free vertex 0's
/// displacement after the first step and after the last.
fn run(release: bool, top: bool, stack: bool, offset: [f64; 3], steps: u32) -> (f64, f64) {
    let ctx = context(true);
    let (mesh, x, y) = plates(top, stack, offset);
    let n = x.len();
    let st = settings(release, steps);
    let mut tw = TwoWay::new(&ctx, mesh.clone(), &x, &vec![0.0; n], st).expect("solver");
    tw.set_target(&y).expect("target");
    let surface = Surface::new(n, &mesh.triangles).expect("surface");
    let yv: Vec<Vec3> = tw.target().read().unwrap()[..n].iter().map(v3).collect();
    let mut prev: Vec<[f32; 4]> = tw.positions().read().unwrap()[..n].to_vec();
    let start = v3(&prev[0]);
    let mut bound = st.d_max;
    let mut first = None;
    let mut checked = 0;
    // The search the steps use, run up front so the observer knows the pairs.
    let mut report = TwoWayReport::default();
    tw.search_if_stale(&mut report).expect("search");
    let (cons, n_vt) = tw.read_constraints().expect("constraints");
    assert!(!cons.is_empty(), "no pairs");
    let label = format!("release {release}, top plate {top}, stack {stack}, offset {offset:?}");
    let rep = tw
        .solve_observed(|state, xs| {
            let x0: Vec<Vec3> = prev.iter().map(v3).collect();
            let x1: Vec<Vec3> = xs.iter().map(v3).collect();
            let want = reference_step(&st, &x0, &yv, &cons, n_vt, bound);
            for i in 0..n {
                assert!(
                    (x1[i] - want[i]).norm() < 1e-8,
                    "{label}, step {}: vertex {i} gpu {:?} reference {:?}",
                    state.steps,
                    x1[i],
                    want[i]
                );
            }
            let f64s = |p: &[[f32; 4]]| -> Vec<[f64; 3]> {
                p.iter()
                    .map(|q| [q[0] as f64, q[1] as f64, q[2] as f64])
                    .collect()
            };
            let rep = trajectory_check(&surface, &f64s(&prev), &f64s(xs), 1e-9);
            assert!(
                rep.is_clean(),
                "{label}: colliding step {:?}",
                rep.collisions.first()
            );
            assert!(
                frame_intersections(&surface, &f64s(xs)).is_empty(),
                "{label}"
            );
            let dmin = reference::vertex_distances(&x1, &cons, n_vt);
            let closest = dmin.iter().cloned().fold(f64::INFINITY, f64::min);
            assert!(closest >= XI, "{label}: a pair {closest} m apart, below ξ");
            first.get_or_insert((x1[0] - start).norm());
            bound = state.bound as f64;
            prev = xs.to_vec();
            checked += 1;
        })
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(
        rep.searches, 0,
        "{label}: the pairs changed during the solve"
    );
    assert_eq!(rep.steps, checked, "{label}");
    assert!(checked >= 1, "{label}: no step observed");
    assert_no_validation_errors(&ctx);
    (first.unwrap(), (v3(&prev[0]) - start).norm())
}

/// A pair at the floor whose target takes it apart (up and sideways), along the plates
/// (sliding between two plates, both pairs at the floor) or up together with the plate below
/// (a stack moving as one; its gap keeps its size): frozen by the distance-bounded step
/// (≈ 0.2 µm), with floor release it moves its whole released step at once.
#[test]
fn floor_pairs_moving_apart_sliding_or_stacked_move_only_with_release() {
    for (top, stack, offset) in [
        (false, false, [1e-3, 0.0, 5e-4]),
        (true, false, [2e-3, 1e-3, 0.0]),
        (false, true, [1e-3, 0.0, 5e-4]),
    ] {
        let (off_first, _) = run(false, top, stack, offset, 1);
        let (on_first, _) = run(true, top, stack, offset, 1);
        let want = Vec3::from(offset).norm();
        // Released: α' = min(1, 0.45 (D_max − 2ξ) / |Δ|) with D_max = 4 mm.
        let expect = want.min(0.45 * (4e-3 - 2.0 * XI));
        assert!(
            off_first < 1e-6,
            "top {top}, stack {stack}: without release the floor pair should be frozen, moved {off_first}"
        );
        assert!(
            (on_first - expect).abs() < 1e-6,
            "top {top}, stack {stack}: with release moved {on_first}, expected {expect}"
        );
    }
}

/// A pair at the floor whose target pushes it in (down through the bottom plate, or up into the
/// top one, and sideways): the release test fails, its vertices take the distance-bounded step
/// and the pair stays at least ξ apart over 24 steps.
#[test]
fn floor_pairs_pushed_together_stay_at_least_xi_apart() {
    for (top, offset) in [(false, [1e-3, 0.0, -1e-3]), (true, [1e-3, 5e-4, 1e-3])] {
        let (first, last) = run(true, top, false, offset, 24);
        assert!(
            first < 1e-6 && last < 1e-6,
            "top {top}: pushed-in floor pair moved {first} then {last}"
        );
    }
}
