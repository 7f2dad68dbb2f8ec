//! Two-way interior point collision handling on lavapipe: every GPU step (backward sweep over the
//! GPU's own constraints and colors, forward step) against the f64 reference, and the safety
//! claim on the whole solve (every intermediate state intersection-free).

use rand::Rng;
use supple::coloring::{check_coloring, MAX_COLORS};
use supple::contact::colliders::{pack_colliders, Collider, Shape};
use supple::contact::two_way::{
    Backward, ContactColoring, StepBound, SweepDispatch, TwoWay, TwoWaySettings,
};
use supple::cpu_reference::two_way as reference;
use supple::intersection_check::{frame_intersections, trajectory_check, Surface};
use supple::math::Vec3;
use supple::mesh::procedural::cloth_grid;
use supple::proximity::ProximityMesh;
use supple_gpu_tests::{
    assert_no_validation_errors, context, reference_forward, reference_forward_capped,
};

/// Two 1 cm-spaced cloth sheets (0.1 m wide, `cells`² quads), `gap` apart in z; the top sheet's
/// target is pushed `push` metres down, through the bottom sheet.
struct Sheets {
    mesh: ProximityMesh,
    x: Vec<[f64; 3]>,
    y: Vec<[f64; 3]>,
    bottom: usize,
}

fn sheets(cells: usize, gap: f64, push: f64) -> Sheets {
    let a = cloth_grid([cells, cells], [0.1, 0.1], [0.0, 0.0, 0.0]);
    // The top sheet is turned by 0.3 rad and shifted by (1/3, 1/5) cell so no vertex sits over a
    // bottom vertex or edge and no edges are parallel (closest-feature ties would let f32 and
    // f64 pick different constraint forms).
    let cell = 0.1 / cells as f64;
    let b = cloth_grid([cells, cells], [0.1, 0.1], [cell / 3.0, cell / 5.0, gap]);
    let bottom = a.positions.len();
    let mut x = a.positions.clone();
    let (sn, cs) = 0.3f64.sin_cos();
    x.extend(b.positions.iter().map(|p| {
        let (u, v) = (p[0] - 0.05, p[1] - 0.05);
        [0.05 + cs * u - sn * v, 0.05 + sn * u + cs * v, p[2]]
    }));
    let mut tris = a.triangles.clone();
    tris.extend(b.triangles.iter().map(|t| t.map(|v| v + bottom as u32)));
    let body: Vec<u32> = (0..x.len()).map(|i| (i >= bottom) as u32).collect();
    let mut y = x.clone();
    for (i, p) in y.iter_mut().enumerate().skip(bottom) {
        // A bump: the middle goes down most.
        let q = x[i];
        let u = (q[0] / 0.1 - 0.5).powi(2) + (q[1] / 0.1 - 0.5).powi(2);
        p[2] -= push * (-(u * 8.0)).exp();
    }
    Sheets {
        mesh: ProximityMesh::new(tris, body).expect("valid mesh"),
        x,
        y,
        bottom,
    }
}

impl Sheets {
    /// The target with the top sheet moved a further `down` metres down and `sideways`
    /// metres along x (the bottom sheet stays).
    fn pushed(&self, down: f64, sideways: f64) -> Vec<[f64; 3]> {
        self.y
            .iter()
            .enumerate()
            .map(|(i, p)| match i >= self.bottom {
                true => [p[0] + sideways, p[1], p[2] - down],
                false => *p,
            })
            .collect()
    }

    /// Inverse weights with the bottom sheet pinned (0) and the top one free (1).
    fn pinned_bottom(&self) -> Vec<f32> {
        let mut w = vec![1.0f32; self.x.len()];
        w[..self.bottom].iter_mut().for_each(|w| *w = 0.0);
        w
    }
}

fn v3(p: &[f32; 4]) -> Vec3 {
    Vec3::new(p[0] as f64, p[1] as f64, p[2] as f64)
}

fn settings() -> TwoWaySettings {
    TwoWaySettings {
        steps_per_batch: 1,
        ..Default::default()
    }
}

/// Each GPU step equals the reference step computed from the GPU's state before it (same
/// constraints, same color order): targets y and positions x within f32 rounding.
#[test]
fn every_gpu_step_matches_the_reference_step() {
    steps_match_the_reference(None, &[]);
}

/// A sphere collider (with an offset) under the middle of the top sheet, which is pushed into
/// it: the GPU's collider pass (targets moved out of the offset, fractions capped by the
/// distance to it) equals the reference step by step, some steps are limited by the collider,
/// and no free vertex ever comes within the offset (issue 26: colliders are never entered).
#[test]
fn every_gpu_step_with_a_collider_matches_the_reference_step() {
    let sphere = Collider {
        shape: Shape::Sphere {
            center: [0.05, 0.05, -0.009],
            radius: 0.01,
        },
        friction: 0.0,
        velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
        offset: 5e-4,
    };
    steps_match_the_reference(
        Some(|i, bottom| {
            if i >= bottom && i % 2 == 0 {
                0
            } else {
                supple::contact::two_way::NO_GROUP
            }
        }),
        &[sphere],
    );
}

/// The same with shared step fractions (`collision.shared_step`): the top sheet is one group,
/// the bottom sheet's vertices take their own fractions.
#[test]
fn every_gpu_step_with_shared_fractions_matches_the_reference_step() {
    steps_match_the_reference(
        Some(|i, bottom| {
            if i >= bottom {
                0
            } else {
                supple::contact::two_way::NO_GROUP
            }
        }),
        &[],
    );
}

/// One triangle whose vertices' straight moves cut through a sphere, a box and (after the
/// move-out) toward a plane: the GPU's collider fractions equal the reference's
/// (`collider_fractions`), the sphere and the box limit their vertices, and no vertex ends
/// within an offset.
#[test]
fn collider_fractions_match_the_reference_on_crossing_moves() {
    let ctx = context(true);
    let x = vec![[-0.05, 0.0, 0.2], [1.0, 0.0, -0.4], [0.4, 0.0, 0.0]];
    let y = vec![[0.05, 0.0, -0.2], [1.0, 0.0, -0.7], [0.8, 0.0, 0.0]];
    let mesh = ProximityMesh::new(vec![[0, 1, 2]], vec![0, 0, 0]).expect("mesh");
    let still = Collider {
        shape: Shape::Plane {
            normal: [0.0, 0.0, 1.0],
            offset: -0.5,
        },
        friction: 0.0,
        velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
        offset: 0.0,
    };
    let colliders = [
        Collider {
            shape: Shape::Sphere {
                center: [0.0, 0.0, 0.0],
                radius: 0.1,
            },
            offset: 0.01,
            ..still
        },
        still,
        Collider {
            shape: Shape::Box {
                min: [0.5, -0.1, -0.1],
                max: [0.7, 0.1, 0.1],
            },
            ..still
        },
    ];
    let mut st = settings();
    st.max_steps = 1;
    // No edge-length constraints: the targets stay as given (apart from the move-out).
    st.edge_constraints = false;
    let mut tw = TwoWay::new(&ctx, mesh, &x, &[1.0; 3], st).expect("solver");
    let clearance = [0.0f32, 0.002, 0.0];
    tw.set_colliders(&pack_colliders(&colliders), 3, &clearance)
        .expect("colliders");
    tw.set_collider_time(0.0).expect("time");
    tw.set_target(&y).expect("target");
    tw.solve().expect("solve");
    let gpu = tw.read_collider_fractions().expect("fractions");
    let xs: Vec<Vec3> = x.iter().map(|p| Vec3::from(*p)).collect();
    let mut ys: Vec<Vec3> = y.iter().map(|p| Vec3::from(*p)).collect();
    let free = [true; 3];
    let clear64: Vec<f64> = clearance.iter().map(|&c| c as f64).collect();
    reference::collider_targets(&xs, &mut ys, &free, &clear64, &colliders, 0.0);
    let cap = reference::collider_fractions(
        &xs,
        &ys,
        &free,
        &clear64,
        &colliders,
        0.0,
        st.step_fraction(),
    );
    for i in 0..3 {
        assert!(
            (gpu[i] as f64 - cap[i]).abs() < 1e-4,
            "vertex {i}: gpu {} ref {}",
            gpu[i],
            cap[i]
        );
    }
    assert!(cap[0] < 0.9, "the sphere limits vertex 0: {cap:?}");
    assert!(cap[2] < 0.9, "the box limits vertex 2: {cap:?}");
    assert_eq!(cap[1], 1.0, "vertex 1's target was moved out of the plane");
    let gy = tw.target().read().expect("target");
    // Moved out to the vertex's own height above the plane (x = −0.4 m).
    assert!(
        (gy[1][2] as f64 - (-0.4)).abs() < 1e-6,
        "vertex 1's target {:?}",
        gy[1]
    );
    let gx = tw.positions().read().expect("positions");
    for (i, p) in gx.iter().take(3).enumerate() {
        for c in &colliders {
            let d = c.gap(&v3(p), 0.0).0 - c.offset - clear64[i];
            assert!(d > 0.0, "vertex {i} ended {d} m above an offset");
        }
    }
    assert_no_validation_errors(&ctx);
}

fn steps_match_the_reference(group: Option<fn(usize, usize) -> u32>, colliders: &[Collider]) {
    let ctx = context(true);
    let s = sheets(8, 0.003, 0.01);
    let n = s.x.len();
    let inv_w = s.pinned_bottom();
    let mut st = settings();
    st.max_steps = 1;
    // The GPU coloring here; the log-barrier step test below runs the host coloring.
    st.contact_coloring = ContactColoring::Gpu;
    let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
    let groups: Vec<u32> = (0..n)
        .map(|i| group.map_or(u32::MAX, |g| g(i, s.bottom)))
        .collect();
    if group.is_some() {
        tw.set_vertex_groups(&groups).expect("groups");
    }
    // Every other top-sheet vertex keeps 0.3 mm more from the collider (a body clearance).
    let clearance: Vec<f32> = (0..n)
        .map(|i| {
            if !colliders.is_empty() && i >= s.bottom && i % 2 == 1 {
                3e-4
            } else {
                0.0
            }
        })
        .collect();
    let clearance64: Vec<f64> = clearance.iter().map(|&c| c as f64).collect();
    if !colliders.is_empty() {
        tw.set_colliders(&pack_colliders(colliders), colliders.len(), &clearance)
            .expect("colliders");
        tw.set_collider_time(0.0).expect("time");
    }
    let free: Vec<bool> = inv_w.iter().map(|&w| w > 0.0).collect();
    let mut shared_steps = 0;
    // With a collider, the top sheet also slides 15 mm sideways over it, so straight moves
    // toward the targets (moved out of the collider) cut through its inflated surface.
    let target: Vec<[f64; 3]> =
        s.y.iter()
            .enumerate()
            .map(|(i, p)| {
                let slide = if !colliders.is_empty() && i >= s.bottom {
                    0.015
                } else {
                    0.0
                };
                [p[0] + slide, p[1], p[2]]
            })
            .collect();
    tw.set_target(&target).expect("target");
    let mut compared_contacts = 0;
    for step in 0..12 {
        // State before the step.
        let x0: Vec<Vec3> = tw.positions().read().unwrap()[..n].iter().map(v3).collect();
        let y0: Vec<Vec3> = tw.target().read().unwrap()[..n].iter().map(v3).collect();
        let state0 = tw.read_state().unwrap();
        let (lam0, lam_e0) = tw.read_multipliers().unwrap();
        let rep = tw.solve().expect("solve");
        assert_eq!(rep.steps, 1);
        let searched = rep.searches > 0;
        let (cons, n_vt) = tw.read_constraints().unwrap();
        let (offsets, grouped) = tw.read_contact_colors().unwrap();
        let (edges, rest, ranges) = tw.read_edge_constraints().unwrap();
        // The GPU coloring is valid: no two constraints of one color share a vertex.
        let mut colors = vec![u32::MAX; cons.len()];
        for c in 0..offsets.len() - 1 {
            for &i in &grouped[offsets[c] as usize..offsets[c + 1] as usize] {
                colors[i as usize] = c as u32;
            }
        }
        check_coloring(&cons, &colors, MAX_COLORS).expect("valid contact coloring");
        // Reference step from the same state.
        let mut x = x0.clone();
        let mut y = y0.clone();
        let mut lambda: Vec<f64> = if searched {
            vec![0.0; cons.len()]
        } else {
            lam0[..cons.len()].iter().map(|&l| l as f64).collect()
        };
        let mut lambda_e: Vec<f64> = lam_e0.iter().map(|&l| l as f64).collect();
        let inv = inv_w.iter().map(|&w| w as f64).collect::<Vec<_>>();
        let bound = if searched {
            st.d_max
        } else {
            state0.bound as f64
        };
        for c in 0..offsets.len() - 1 {
            let g = &grouped[offsets[c] as usize..offsets[c + 1] as usize];
            reference::contact_sweep(&x, &mut y, &cons, n_vt, g, &mut lambda, &inv, st.delta);
        }
        let rest64: Vec<f64> = rest.iter().map(|&l| l as f64).collect();
        for &(o, c) in &ranges {
            reference::edge_sweep(
                &x,
                &mut y,
                &edges,
                &rest64,
                o as usize..(o + c) as usize,
                &mut lambda_e,
                &inv,
                st.sigma,
            );
        }
        let x_before = x.clone();
        reference::collider_targets(&x, &mut y, &free, &clearance64, colliders, 0.0);
        let cap = reference::collider_fractions(
            &x,
            &y,
            &free,
            &clearance64,
            colliders,
            0.0,
            st.step_fraction(),
        );
        let decrease = reference_forward_capped(&st, &mut x, &y, &cons, n_vt, bound, &groups, &cap);
        let gpu_cap = tw.read_collider_fractions().unwrap();
        for i in 0..n {
            if colliders.is_empty() {
                break;
            }
            let (g, r) = (gpu_cap[i] as f64, cap[i]);
            assert!(
                (g - r).abs() < 1e-4,
                "step {step} vertex {i}: collider fraction gpu {g} ref {r}"
            );
        }
        if group.is_some() && colliders.is_empty() {
            // The top sheet moved by one fraction (a uniform share of each vertex's motion).
            let f = |i: usize| {
                let total = (y[i] - x_before[i]).norm();
                (total > 1e-9).then(|| (x[i] - x_before[i]).norm() / total)
            };
            let fr: Vec<f64> = (s.bottom..n).filter_map(f).collect();
            let (lo, hi) = fr
                .iter()
                .fold((1.0f64, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
            assert!(
                hi - lo < 1e-9,
                "step {step}: top sheet fractions {lo}..{hi}"
            );
            shared_steps += (hi < 1.0) as u32;
        }
        let gx: Vec<Vec3> = tw.positions().read().unwrap()[..n].iter().map(v3).collect();
        let gy: Vec<Vec3> = tw.target().read().unwrap()[..n].iter().map(v3).collect();
        let scale = 0.01;
        for i in 0..n {
            assert!(
                (gy[i] - y[i]).norm() < 2e-5 * scale,
                "step {step} vertex {i}: y gpu {:?} ref {:?}",
                gy[i],
                y[i]
            );
            assert!(
                (gx[i] - x[i]).norm() < 2e-5 * scale,
                "step {step} vertex {i}: x gpu {:?} ref {:?}",
                gx[i],
                x[i]
            );
        }
        let (lam1, _) = tw.read_multipliers().unwrap();
        for i in 0..cons.len() {
            assert!(
                (lam1[i] as f64 - lambda[i]).abs() <= 1e-3 * lambda[i].abs().max(1e-3),
                "step {step} constraint {i}: λ gpu {} ref {}",
                lam1[i],
                lambda[i]
            );
        }
        let state1 = tw.read_state().unwrap();
        assert!(
            ((state1.bound as f64) - (bound - decrease)).abs() < 1e-6,
            "step {step}: bound {} vs {}",
            state1.bound,
            bound - decrease
        );
        compared_contacts += cons.len();
        for (i, p) in gx.iter().enumerate() {
            for c in colliders.iter().filter(|_| free[i]) {
                let d = c.gap(p, 0.0).0 - c.offset - clearance64[i];
                assert!(d > 0.0, "step {step} vertex {i}: {d} m above the offset");
            }
        }
    }
    assert!(compared_contacts > 0, "the scene produced no contact pairs");
    if group.is_some() && colliders.is_empty() {
        assert!(
            shared_steps > 0,
            "no step was limited by the shared fraction"
        );
    }
    assert_no_validation_errors(&ctx);
}

/// Checks one forward step x0 → x1 with the independent exact f64 checker: no pair of
/// non-adjacent primitives comes within `ETA` on the straight-line motion, and x1 is
/// intersection-free.
fn assert_step_safe(surface: &Surface, x0: &[[f32; 4]], x1: &[[f32; 4]], label: &str) {
    let a: Vec<[f64; 3]> = x0
        .iter()
        .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
        .collect();
    let b: Vec<[f64; 3]> = x1
        .iter()
        .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
        .collect();
    let rep = trajectory_check(surface, &a, &b, ETA);
    assert!(
        rep.is_clean(),
        "{label}: {} colliding and {} uncertain pairs, e.g. {:?} {:?}",
        rep.collisions.len(),
        rep.uncertain.len(),
        rep.collisions.first(),
        rep.uncertain.first()
    );
    assert!(
        frame_intersections(surface, &b).is_empty(),
        "{label}: intersecting state"
    );
}

/// Contact closer than this (m) counts as a collision in the exact checks.
const ETA: f64 = 1e-9;

/// The whole solve keeps the sheets apart at every step (every forward step verified by the
/// exact trajectory checker) and converges to a target that the backward steps pushed out of
/// the bottom sheet.
#[test]
fn sheets_pushed_through_each_other_stay_apart_at_every_step() {
    let ctx = context(false);
    for bound in [StepBound::HalfDistance, StepBound::Ogc { relaxation: 0.4 }] {
        let s = sheets(8, 0.003, 0.01);
        let n = s.x.len();
        let inv_w = s.pinned_bottom();
        let mut st = settings();
        st.bound = bound;
        let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
        tw.set_target(&s.y).expect("target");
        let surface = Surface::new(n, &s.mesh.triangles).expect("surface");
        let mut prev: Vec<[f32; 4]> = tw.positions().read().unwrap()[..n].to_vec();
        let mut observed = 0;
        let rep = tw
            .solve_observed(|st, x| {
                observed += 1;
                assert_step_safe(&surface, &prev, x, &format!("{bound:?} step {}", st.steps));
                // Top sheet vertices stay above the bottom plane (z = 0).
                for i in s.bottom..n {
                    assert!(x[i][2] > 0.0, "vertex {i} crossed: z {}", x[i][2]);
                }
                prev.copy_from_slice(&x[..n]);
            })
            .expect("solve");
        assert!(rep.converged, "{bound:?}: not converged: {rep:?}");
        assert!(observed as u32 >= rep.steps.min(1));
        assert!(
            rep.steps > 1,
            "{bound:?}: a collision needs several steps: {rep:?}"
        );
        assert!(rep.min_distance > 0.0);
        assert!(rep.contact_colors > 0 && rep.edge_colors > 0);
        // The final state keeps at least a fraction of δ between the sheets.
        let x: Vec<Vec3> = prev.iter().map(v3).collect();
        let top_min = x[s.bottom..]
            .iter()
            .map(|p| p.z)
            .fold(f64::INFINITY, f64::min);
        assert!(
            top_min > 0.5 * st.delta,
            "{bound:?}: top sheet at {top_min}"
        );
        eprintln!("{bound:?}: {rep:?}");
    }
    assert_no_validation_errors(&ctx);
}

/// Two free sheets 1 cm apart (no pairs within D_max) moving together, as a falling cloth: the
/// same 3.7 cm translation as target. Every vertex takes the same distance-bounded fraction, so
/// the translation-invariant reuse bound (`two_way_update.comp`) keeps the first search for the
/// whole solve of several steps, each moving the sheets further than D_max − D_min (the
/// absolute bound 2 max |Δx| would search after every step). Every step is safe for the exact
/// checker, and the sheets arrive where they were sent.
#[test]
fn sheets_moving_together_keep_their_pairs() {
    let ctx = context(false);
    let s = sheets(8, 0.01, 0.0);
    let n = s.x.len();
    let shift = [0.02, -0.01, -0.03];
    let y: Vec<[f64; 3]> =
        s.x.iter()
            .map(|p| [p[0] + shift[0], p[1] + shift[1], p[2] + shift[2]])
            .collect();
    let st = settings();
    let reuse = st.d_max - st.d_min;
    let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &vec![1.0; n], st).expect("solver");
    tw.set_target(&y).expect("target");
    let surface = Surface::new(n, &s.mesh.triangles).expect("surface");
    let mut prev: Vec<[f32; 4]> = tw.positions().read().unwrap()[..n].to_vec();
    let mut largest_step: f64 = 0.0;
    let rep = tw
        .solve_observed(|state, x| {
            assert_step_safe(&surface, &prev, x, &format!("step {}", state.steps));
            for (a, b) in x.iter().zip(&prev) {
                largest_step = largest_step.max((v3(a) - v3(b)).norm());
            }
            prev.copy_from_slice(&x[..n]);
        })
        .expect("solve");
    assert!(rep.converged, "not converged: {rep:?}");
    assert!(rep.steps > 1, "one step: {rep:?}");
    assert_eq!(rep.searches, 1, "{rep:?}");
    assert!(
        2.0 * largest_step > reuse,
        "steps of {largest_step} m need no reuse bound"
    );
    let bound = tw.read_state().unwrap().bound as f64;
    assert!(
        bound > st.d_max - 1e-3 * reuse,
        "bound {bound} after moving together (D_max {})",
        st.d_max
    );
    let target = Vec3::new(shift[0], shift[1], shift[2]);
    for (i, (p, q)) in prev.iter().zip(&s.x).enumerate() {
        let moved = v3(p) - Vec3::new(q[0], q[1], q[2]);
        assert!((moved - target).norm() < 1e-5, "vertex {i} moved {moved:?}");
    }
    assert_no_validation_errors(&ctx);
}

/// Rods as curves: a pinned sheet with two free rods crossing above it (3 mm and 6 mm up) whose
/// targets are pushed 1 cm down, through the sheet and the lower rod. Every step is safe for the
/// exact checker with the rod segments as curves, the rod vertices stay above the sheet and the
/// upper rod above the lower one where they cross, and the rod segments are edge-length
/// constraints.
#[test]
fn rods_pushed_through_a_sheet_stay_apart_at_every_step() {
    let ctx = context(false);
    let a = cloth_grid([8, 8], [0.1, 0.1], [0.0, 0.0, 0.0]);
    let sheet = a.positions.len();
    let mut x = a.positions.clone();
    let mut body = vec![0u32; sheet];
    let mut curves: Vec<[u32; 2]> = Vec::new();
    let segs = 12u32;
    for (r, (from, to, z)) in [
        ([0.01, 0.02], [0.09, 0.08], 0.003),
        ([0.021, 0.09065], [0.079, 0.02105], 0.006),
    ]
    .into_iter()
    .enumerate()
    {
        let first = x.len() as u32;
        for k in 0..=segs {
            let t = k as f64 / segs as f64;
            x.push([
                from[0] + t * (to[0] - from[0]),
                from[1] + t * (to[1] - from[1]),
                z,
            ]);
            body.push(1 + r as u32);
            if k > 0 {
                curves.push([first + k - 1, first + k]);
            }
        }
    }
    let n = x.len();
    let lower = sheet..sheet + segs as usize + 1;
    let upper = lower.end..n;
    let mesh = ProximityMesh::with_curves(a.triangles.clone(), &curves, body).expect("mesh");
    let mut inv_w = vec![1.0f32; n];
    inv_w[..sheet].iter_mut().for_each(|w| *w = 0.0);
    let mut y = x.clone();
    y[sheet..].iter_mut().for_each(|p| p[2] -= 0.01);
    let mut tw = TwoWay::new(&ctx, mesh, &x, &inv_w, settings()).expect("solver");
    // Every rod segment is an edge-length constraint at its rest length.
    let (edges, rest, _) = tw.read_edge_constraints().unwrap();
    for c in &curves {
        let k = edges
            .iter()
            .position(|e| e == c)
            .unwrap_or_else(|| panic!("rod segment {c:?} has no edge constraint"));
        let l = (0..3).map(|j| (x[c[0] as usize][j] - x[c[1] as usize][j]).powi(2));
        assert!((rest[k] as f64 - l.sum::<f64>().sqrt()).abs() < 1e-6);
    }
    tw.set_target(&y).expect("target");
    let surface = Surface::with_curves(n, &a.triangles, &curves).expect("surface");
    let mut prev: Vec<[f32; 4]> = tw.positions().read().unwrap()[..n].to_vec();
    let rep = tw
        .solve_observed(|st, x| {
            assert_step_safe(&surface, &prev, x, &format!("rods step {}", st.steps));
            for i in sheet..n {
                assert!(
                    x[i][2] > 0.0,
                    "rod vertex {i} crossed the sheet: z {}",
                    x[i][2]
                );
            }
            prev.copy_from_slice(&x[..n]);
        })
        .expect("solve");
    assert!(rep.converged, "not converged: {rep:?}");
    assert!(rep.steps > 1 && rep.contact_colors > 0, "{rep:?}");
    // Near where the rods cross (just past their middle vertices), the upper one is above.
    let mid = |r: &std::ops::Range<usize>| prev[r.start + segs as usize / 2][2];
    assert!(mid(&upper) > mid(&lower), "{} {}", mid(&upper), mid(&lower));
    eprintln!("rods: {rep:?}");
    assert_no_validation_errors(&ctx);
}

/// Same input, same bits: the proximity search appends pairs in a run-dependent order, the
/// solver sorts them into a canonical order before coloring, so two solves agree exactly.
#[test]
fn solves_are_deterministic() {
    let ctx = context(false);
    let run = |coloring| {
        let s = sheets(8, 0.003, 0.01);
        let inv_w = s.pinned_bottom();
        let st = TwoWaySettings {
            contact_coloring: coloring,
            ..settings()
        };
        let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
        tw.set_target(&s.y).expect("target");
        let rep = tw.solve().expect("solve");
        (
            rep.steps,
            tw.positions().read().unwrap(),
            tw.target().read().unwrap(),
        )
    };
    for coloring in [ContactColoring::Gpu, ContactColoring::Host] {
        let a = run(coloring);
        let b = run(coloring);
        assert!(a.0 > 1);
        assert_eq!(a, b, "{coloring:?}: two identical solves differ");
    }
    assert_no_validation_errors(&ctx);
}

/// Property test: random pairs of sheets (random turn, offset, gap, push depth and direction,
/// both sheets free or one pinned) pushed into each other; every forward step of every solve
/// passes the exact trajectory check and the final states are intersection-free.
#[test]
fn random_sheet_collisions_never_produce_an_intersecting_step() {
    let ctx = context(false);
    let mut rng = supple_gpu_tests::rng(0x7e0_5eed);
    let mut total_steps = 0;
    for case in 0..12 {
        let cells = rng.random_range(4..9);
        let gap = rng.random_range(0.0015..0.006);
        let push = rng.random_range(0.003..0.03);
        let mut s = sheets(cells, gap, push);
        let n = s.x.len();
        // A random rigid turn and shift of the top sheet and a random lateral push.
        let (sn, cs) = rng.random_range(-1.0f64..1.0).sin_cos();
        let shift = [rng.random_range(-0.02..0.02), rng.random_range(-0.02..0.02)];
        let lateral = [rng.random_range(-0.01..0.01), rng.random_range(-0.01..0.01)];
        for i in s.bottom..n {
            let (u, v) = (s.x[i][0] - 0.05, s.x[i][1] - 0.05);
            let p = [
                0.05 + cs * u - sn * v + shift[0],
                0.05 + sn * u + cs * v + shift[1],
            ];
            let dz = s.y[i][2] - s.x[i][2];
            s.x[i] = [p[0], p[1], s.x[i][2]];
            s.y[i] = [p[0] + lateral[0], p[1] + lateral[1], s.x[i][2] + dz];
        }
        let pinned = rng.random_bool(0.5);
        let mut inv_w = vec![1.0f32; n];
        if pinned {
            inv_w[..s.bottom].iter_mut().for_each(|w| *w = 0.0);
        } else {
            // The bottom sheet is pushed up against the top one.
            for i in 0..s.bottom {
                s.y[i][2] += 0.5 * push;
            }
        }
        let mut st = settings();
        st.steps_per_batch = 1;
        let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
        // Every other case with shared step fractions (`collision.shared_step = "bodies"`: a
        // group per sheet): the same guarantee must hold.
        if case % 2 == 1 {
            let groups: Vec<u32> = (0..n).map(|i| (i >= s.bottom) as u32).collect();
            tw.set_vertex_groups(&groups).expect("groups");
        }
        tw.set_target(&s.y).expect("target");
        let surface = Surface::new(n, &s.mesh.triangles).expect("surface");
        let mut prev: Vec<[f32; 4]> = tw.positions().read().unwrap()[..n].to_vec();
        let rep = tw
            .solve_observed(|st, x| {
                assert_step_safe(
                    &surface,
                    &prev,
                    x,
                    &format!("case {case} step {}", st.steps),
                );
                prev.copy_from_slice(&x[..n]);
            })
            .expect("solve");
        total_steps += rep.steps;
        // The minimum separation ξ holds (up to f32 rounding of the distances).
        assert!(
            rep.min_distance as f64 >= 0.99 * st.min_separation,
            "case {case}: {rep:?}"
        );
    }
    assert!(total_steps > 12, "the cases should need several steps each");
    assert_no_validation_errors(&ctx);
}

fn barrier_settings() -> TwoWaySettings {
    TwoWaySettings {
        backward: Backward::LogBarrier {
            strength: 10.0,
            range: 1e-3,
        },
        ..settings()
    }
}

/// Log-barrier baseline (`two_way_barrier.comp`): each GPU step equals the reference step from
/// the GPU's state before it (target = dynamics target minus the barrier gradient over the
/// GPU's colors, then the forward step), and the barrier acts on some steps.
#[test]
fn every_barrier_step_matches_the_reference_step() {
    let ctx = context(true);
    for dispatch in [SweepDispatch::PerColor, SweepDispatch::Fused] {
        barrier_steps_match_the_reference(&ctx, dispatch);
    }
    assert_no_validation_errors(&ctx);
}

fn barrier_steps_match_the_reference(ctx: &supple::vk::Context, dispatch: SweepDispatch) {
    let s = sheets(8, 0.003, 0.01);
    let n = s.x.len();
    let inv_w = s.pinned_bottom();
    let mut st = barrier_settings();
    st.max_steps = 1;
    st.contact_coloring = ContactColoring::Host;
    st.sweep_dispatch = dispatch;
    let Backward::LogBarrier { strength, range } = st.backward else {
        unreachable!()
    };
    let mut tw = TwoWay::new(ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
    let (_, _, edge_ranges) = tw.read_edge_constraints().unwrap();
    assert!(
        edge_ranges.is_empty(),
        "the baseline has no edge constraints"
    );
    let inv: Vec<f64> = inv_w.iter().map(|&w| w as f64).collect();
    let y_dyn: Vec<Vec3> = s.y.iter().map(|p| Vec3::new(p[0], p[1], p[2])).collect();
    let mut barrier_steps = 0;
    for step in 0..16 {
        // Every solve restarts from the dynamics target (as the simulation loads it).
        tw.set_target(&s.y).expect("target");
        let x0: Vec<Vec3> = tw.positions().read().unwrap()[..n].iter().map(v3).collect();
        let state0 = tw.read_state().unwrap();
        let rep = tw.solve().expect("solve");
        assert_eq!(rep.steps, 1);
        // Distances, the target copy, one fused pass or ≥ one dispatch per color, the floor
        // release test, forward, update.
        if dispatch == SweepDispatch::Fused {
            assert_eq!(rep.dispatches_per_step, 6, "{rep:?}");
        } else {
            assert!(rep.dispatches_per_step >= 5 + rep.contact_colors, "{rep:?}");
        }
        let searched = rep.searches > 0;
        let (cons, n_vt) = tw.read_constraints().unwrap();
        let (offsets, grouped) = tw.read_contact_colors().unwrap();
        // The host coloring is valid and covers every constraint once.
        let mut colors = vec![u32::MAX; cons.len()];
        for c in 0..offsets.len() - 1 {
            for &i in &grouped[offsets[c] as usize..offsets[c + 1] as usize] {
                assert_eq!(colors[i as usize], u32::MAX, "constraint {i} twice");
                colors[i as usize] = c as u32;
            }
        }
        check_coloring(&cons, &colors, MAX_COLORS).expect("valid host contact coloring");
        let mut x = x0.clone();
        let mut y = y_dyn.clone();
        let bound = if searched {
            st.d_max
        } else {
            state0.bound as f64
        };
        for c in 0..offsets.len() - 1 {
            let g = &grouped[offsets[c] as usize..offsets[c + 1] as usize];
            reference::barrier_sweep(&x, &mut y, &cons, n_vt, g, &inv, strength, range);
        }
        if (0..n).any(|i| (y[i] - y_dyn[i]).norm() > 1e-9) {
            barrier_steps += 1;
        }
        reference_forward(&st, &mut x, &y, &cons, n_vt, bound);
        let gx: Vec<Vec3> = tw.positions().read().unwrap()[..n].iter().map(v3).collect();
        let gy: Vec<Vec3> = tw.target().read().unwrap()[..n].iter().map(v3).collect();
        for i in 0..n {
            // The barrier gradient grows as 1/d: compare relative to the target's move.
            let tol = 2e-7 + 1e-4 * (y[i] - y_dyn[i]).norm();
            assert!(
                (gy[i] - y[i]).norm() < tol,
                "step {step} vertex {i}: y gpu {:?} ref {:?}",
                gy[i],
                y[i]
            );
            assert!(
                (gx[i] - x[i]).norm() < 2e-7 + 1e-4 * (x[i] - x0[i]).norm(),
                "step {step} vertex {i}: x gpu {:?} ref {:?}",
                gx[i],
                x[i]
            );
        }
    }
    assert!(
        barrier_steps > 0,
        "{dispatch:?}: no step brought a pair within the barrier range"
    );
}

/// The log-barrier baseline keeps every forward step intersection-free too (same step bound),
/// on the sheets pushed through each other and on random cases; it converges, and the steps of
/// both methods are reported side by side.
#[test]
fn log_barrier_solves_stay_apart_at_every_step() {
    let ctx = context(false);
    let mut rng = supple_gpu_tests::rng(0xba5_1e55);
    for case in 0..4 {
        let (cells, gap, push) = if case == 0 {
            (8, 0.003, 0.01)
        } else {
            (
                rng.random_range(4..9),
                rng.random_range(0.0015..0.006),
                rng.random_range(0.003..0.03),
            )
        };
        let s = sheets(cells, gap, push);
        let n = s.x.len();
        let inv_w = s.pinned_bottom();
        let surface = Surface::new(n, &s.mesh.triangles).expect("surface");
        let mut steps = [0u32; 2];
        for (m, st) in [settings(), barrier_settings()].into_iter().enumerate() {
            let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
            tw.set_target(&s.y).expect("target");
            let mut prev: Vec<[f32; 4]> = tw.positions().read().unwrap()[..n].to_vec();
            let rep = tw
                .solve_observed(|state, x| {
                    if m == 1 {
                        let label = format!("barrier case {case} step {}", state.steps);
                        assert_step_safe(&surface, &prev, x, &label);
                    }
                    prev.copy_from_slice(&x[..n]);
                })
                .expect("solve");
            assert!(rep.converged, "case {case} method {m}: {rep:?}");
            assert!(rep.min_distance as f64 >= 0.99 * st.min_separation);
            steps[m] = rep.steps;
        }
        eprintln!(
            "case {case}: steps gauss-seidel {} log-barrier {}",
            steps[0], steps[1]
        );
    }
    assert_no_validation_errors(&ctx);
}

/// The fused single-workgroup sweep (`two_way_fused_sweep.comp`) performs the per-color
/// kernels' updates in the same color order: positions, targets and multipliers are
/// bit-identical after whole solves, with a fraction of the dispatches.
#[test]
fn fused_sweep_equals_per_color_dispatches() {
    let ctx = context(false);
    let s = sheets(8, 0.003, 0.01);
    let inv_w = s.pinned_bottom();
    let run = |dispatch| {
        let st = TwoWaySettings {
            sweep_dispatch: dispatch,
            contact_coloring: ContactColoring::Host,
            steps_per_batch: 4,
            ..settings()
        };
        let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
        tw.set_target(&s.y).expect("target");
        let rep = tw.solve().expect("solve");
        let (lambda, lambda_e) = tw.read_multipliers().unwrap();
        let pairs = tw.read_constraints().unwrap().0.len();
        (
            rep,
            tw.positions().read().unwrap(),
            tw.target().read().unwrap(),
            lambda[..pairs].to_vec(),
            lambda_e,
        )
    };
    let (fused, per_color) = (run(SweepDispatch::Fused), run(SweepDispatch::PerColor));
    assert!(per_color.0.steps > 1 && per_color.0.contact_colors > 1);
    assert_eq!(fused.0.steps, per_color.0.steps);
    // Distances, the fused pass, the floor release test, forward, update.
    assert_eq!(fused.0.dispatches_per_step, 5);
    assert!(per_color.0.dispatches_per_step > 5 + per_color.0.contact_colors);
    assert!(fused.1 == per_color.1, "positions differ");
    assert!(fused.2 == per_color.2, "targets differ");
    assert!(fused.3 == per_color.3, "contact multipliers differ");
    assert!(fused.4 == per_color.4, "edge multipliers differ");
    assert!(fused.3.iter().any(|&l| l > 0.0), "no active contact");
    assert_no_validation_errors(&ctx);
}

/// Dense contact past the color limit: fine sheets (3.3 mm cells) pressed together with
/// D_max = 8 mm give vertices hundreds of constraints; the host coloring and the GPU
/// (Jones–Plassmann) coloring both leave the constraints past MAX_COLORS out of the backward
/// step (reported), and every forward step stays safe because it bounds each vertex by the
/// distances of all pairs.
#[test]
fn contact_past_the_color_limit_is_reported_and_stays_safe() {
    past_the_color_limit(ContactColoring::Host, 30, 0.008, 24);
    // The GPU coloring's hundreds of Jones–Plassmann rounds are slow on lavapipe: coarser
    // sheets with a proportionally larger D_max (as many constraints per vertex, a quarter of
    // the pairs) and fewer steps.
    past_the_color_limit(ContactColoring::Gpu, 12, 0.014, 4);
}

fn past_the_color_limit(coloring: ContactColoring, cells: usize, d_max: f64, max_steps: u32) {
    let ctx = context(false);
    let s = sheets(cells, 0.002, 0.01);
    let n = s.x.len();
    let inv_w = s.pinned_bottom();
    let st = TwoWaySettings {
        d_min: 0.5 * d_max,
        d_max,
        delta: 0.001,
        max_steps,
        contact_coloring: coloring,
        ..settings()
    };
    let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
    tw.set_target(&s.y).expect("target");
    let surface = Surface::new(n, &s.mesh.triangles).expect("surface");
    let mut prev: Vec<[f32; 4]> = tw.positions().read().unwrap()[..n].to_vec();
    let rep = tw
        .solve_observed(|state, x| {
            assert_step_safe(&surface, &prev, x, &format!("step {}", state.steps));
            prev.copy_from_slice(&x[..n]);
        })
        .expect("solve");
    eprintln!("{coloring:?}: {rep:?}");
    assert_eq!(rep.contact_colors, MAX_COLORS, "{rep:?}");
    assert!(rep.uncolored_contacts > 0, "{rep:?}");
    assert!(rep.min_distance > 0.0 && rep.steps > 1, "{rep:?}");
    assert_no_validation_errors(&ctx);
}

/// Issue 22 item 3: the contact constraints and the floor-release directions are split over two
/// bindings where one would exceed the device's `maxStorageBufferRange`. With the per-binding
/// limit lowered below the pair count of a dense contact set (two sheets with a search
/// distance of several cells), the constraints really use both bindings, and every kernel that
/// reads them (build and gather, distances, floor release, contact or barrier sweeps fused and
/// per color, friction, repulsion) gives the same bits as the unsplit storage. A limit that two
/// bindings cannot meet is refused naming the buffer.
#[test]
fn split_constraint_storage_gives_the_same_bits() {
    use supple::contact::two_way::Repulsion;
    use supple::vk::BufferUsage;
    let ctx = context(false);
    let s = sheets(8, 0.004, 0.01);
    let n = s.x.len();
    let inv_w = vec![1.0f32; n];
    let dense = |backward, sweep_dispatch| TwoWaySettings {
        d_min: 0.012,
        d_max: 0.03,
        backward,
        sweep_dispatch,
        contact_coloring: ContactColoring::Host,
        steps_per_batch: 4,
        ..Default::default()
    };
    // One solve (friction on) and a repulsion evaluation; `limit` lowers the binding size.
    let run = |st: TwoWaySettings, limit: Option<u64>| {
        let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
        if let Some(bytes) = limit {
            tw.set_max_binding_bytes(bytes).expect("binding limit");
        }
        tw.set_friction(0.3).expect("friction");
        tw.set_target(&s.y).expect("target");
        let rep = tw.solve().expect("solve");
        let (cons, n_vt) = tw.read_constraints().expect("constraints");
        let bindings = tw.constraint_bindings().expect("workspace");
        let storage = BufferUsage::STORAGE;
        let x = tw.positions().read().unwrap();
        let it = ctx.upload_buffer("test.iterate", &x, storage).unwrap();
        let trial = ctx.upload_buffer("test.trial", &x, storage).unwrap();
        let accum = ctx
            .upload_buffer("test.accum", &vec![[0i32; 4]; 3 * n], storage)
            .unwrap();
        let repulsion =
            Repulsion::new(&ctx, &tw, &it, &trial, &accum, 100.0, 0.02).expect("repulsion");
        let (energy, _) = repulsion.evaluate().expect("evaluate");
        let run = (
            rep.steps,
            rep.contact_pairs,
            x,
            tw.target().read().unwrap(),
            cons,
            n_vt,
            tw.read_multipliers().expect("multipliers").0,
            energy.to_bits(),
            accum.read().unwrap(),
        );
        (run, bindings)
    };
    let cases = [
        (Backward::GaussSeidel, SweepDispatch::Fused),
        (Backward::GaussSeidel, SweepDispatch::PerColor),
        (
            Backward::LogBarrier {
                strength: 1.0,
                range: 0.01,
            },
            SweepDispatch::PerColor,
        ),
    ];
    for (backward, dispatch) in cases {
        let st = dense(backward, dispatch);
        let (whole, [cap, hi]) = run(st, None);
        let pairs = whole.1 as usize;
        assert_eq!(hi, 0, "{backward:?}: one binding holds them on lavapipe");
        // The smallest low binding two bindings can hold the capacity with; it must be
        // below the pair count, or the high binding would hold none of them.
        let lo = cap.div_ceil(2);
        assert!(
            pairs > lo && whole.0 > 1,
            "{backward:?}: {pairs} pairs, capacity {cap}: the contact set is not dense enough"
        );
        let (split, bindings) = run(st, Some(16 * lo as u64));
        assert_eq!(bindings, [lo, cap - lo], "{backward:?}: split as designed");
        assert!(
            whole == split,
            "{backward:?} {dispatch:?}: split storage changed the results (steps {} vs {})",
            whole.0,
            split.0
        );
    }
    // Past two bindings: refused, naming the buffer, its size and the limit.
    let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, settings()).expect("solver");
    let [cap, _] = tw.constraint_bindings().expect("workspace");
    let limit = 16 * (cap as u64 / 2 - 1);
    let e = tw.set_max_binding_bytes(limit).unwrap_err();
    assert!(
        e.contains("'two_way.constraints'")
            && e.contains(&format!("{} bytes", 16 * cap))
            && e.contains(&format!("{limit} bytes")),
        "{e}"
    );
    assert_no_validation_errors(&ctx);
}

/// Two 8 × 8 sheets 3 mm apart (the top pushed 10 mm down), the bottom one pinned, and their
/// solver with host coloring, batches of 2 steps and friction 0.3.
fn batched_sheets_with_friction(ctx: &supple::vk::Context) -> (Sheets, TwoWay) {
    let s = sheets(8, 0.003, 0.01);
    let inv_w = s.pinned_bottom();
    let st = TwoWaySettings {
        contact_coloring: ContactColoring::Host,
        steps_per_batch: 2,
        ..Default::default()
    };
    let mut tw = TwoWay::new(ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
    tw.set_friction(0.3).expect("friction");
    (s, tw)
}

/// Issue 22: a solve waits on the host once per step batch (to read its stop flags) and once
/// per proximity search (the search and the constraint build behind it); the clock reset, the
/// friction pass and the per-color indirect arguments are submitted without a wait of their
/// own, covered by the next wait in queue order. Host coloring (as on lavapipe), friction on.
#[test]
fn a_solve_waits_once_per_step_batch_and_per_search() {
    let ctx = context(false);
    let (s, mut tw) = batched_sheets_with_friction(&ctx);
    // The first solve grows the search's workspace to the pair counts.
    tw.set_target(&s.y).expect("target");
    tw.solve().expect("first solve");
    // Pushed on from the safe state, searching again at its start.
    let y: Vec<[f64; 3]> =
        s.y.iter()
            .enumerate()
            .map(|(i, p)| {
                let down = if i >= s.bottom { 0.004 } else { 0.0 };
                [p[0], p[1], p[2] - down]
            })
            .collect();
    tw.set_target(&y).expect("target");
    tw.positions_changed().expect("search again");
    let before = ctx.counters();
    let rep = tw.solve().expect("second solve");
    let d = ctx.counters() - before;
    println!("{rep:?}\n{d:?}");
    assert!(rep.searches >= 1 && rep.batches >= 2, "{rep:?}");
    assert_eq!(
        d.host_waits,
        (rep.batches + rep.searches) as u64,
        "host waits of a solve: {rep:?}"
    );
    // Per search: the search, the build, the indirect arguments; per batch one; the clock
    // reset and the friction pass once.
    assert_eq!(
        d.submits,
        (rep.batches + 3 * rep.searches + 2) as u64,
        "submissions of a solve: {rep:?}"
    );
    assert_no_validation_errors(&ctx);
}

/// Issue 22: with prefetched searches (`TwoWay::set_prefetch_searches`, as the two-way contact
/// handler runs it), a solve that ends with its reuse bound under D_min submits the next
/// solve's first search and constraint build without a wait; a later wait (here a graph run
/// between the solves, as the stepper's next wait) covers them, and the next solve uses them
/// without a wait of its own. Same solves bit for bit, fewer host waits.
#[test]
fn prefetched_searches_give_the_same_solves_with_fewer_waits() {
    use supple::vk::{BufferUsage, CompileOptions, Graph};
    let run = |prefetch: bool| {
        let ctx = context(false);
        let word = ctx
            .create_buffer::<u32>("test.word", 1, BufferUsage::STORAGE)
            .expect("buffer");
        let mut g = Graph::new("test.between_solves");
        g.fill("test.between_solves", &word, 0);
        let between = g.compile(&ctx, CompileOptions::default()).expect("graph");
        let (s, mut tw) = batched_sheets_with_friction(&ctx);
        tw.set_prefetch_searches(prefetch).expect("prefetch");
        let mut waits = 0;
        let mut out = Vec::new();
        for k in 0..6 {
            // The top sheet pushed down a little further every solve.
            let down = 0.004 * k as f64;
            let y: Vec<[f64; 3]> =
                s.y.iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let d = if i >= s.bottom { down } else { 0.0 };
                        [p[0], p[1], p[2] - d]
                    })
                    .collect();
            tw.set_target(&y).expect("target");
            let before = ctx.counters();
            let rep = tw.solve().expect("solve");
            between.run().expect("between");
            let x = tw.positions().read().expect("positions");
            waits += (ctx.counters() - before).host_waits;
            out.push((rep.steps, rep.searches, rep.batches, x));
        }
        assert_no_validation_errors(&ctx);
        (out, waits)
    };
    let (plain, plain_waits) = run(false);
    let (prefetched, prefetched_waits) = run(true);
    let searches: u32 = plain.iter().map(|o| o.1).sum();
    println!("{searches} searches: {plain_waits} host waits, {prefetched_waits} prefetched");
    assert!(searches >= 3, "too few searches to test: {searches}");
    for (k, (a, b)) in plain.iter().zip(&prefetched).enumerate() {
        assert_eq!(
            a, b,
            "solve {k}: different steps, searches, batches or positions"
        );
    }
    assert!(
        prefetched_waits < plain_waits,
        "{prefetched_waits} host waits with prefetched searches, {plain_waits} without"
    );
}

/// Totals of [`push_top_sheet`]'s six solves.
struct PushTotals {
    waits: u64,
    searches: u32,
    steps: u32,
    converged: u32,
}

/// Six solves of the top sheet pushed down further every solve (sideways too) with `st`,
/// the solver set up by `setup`; every batch's end is checked against the last by the exact
/// trajectory checker. Returns the host waits, searches, steps and converged solves.
fn push_top_sheet(st: TwoWaySettings, setup: impl Fn(&mut TwoWay), label: &str) -> PushTotals {
    let ctx = context(false);
    let s = sheets(8, 0.003, 0.01);
    let n = s.x.len();
    let inv_w = s.pinned_bottom();
    let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
    setup(&mut tw);
    let surface = Surface::new(n, &s.mesh.triangles).expect("surface");
    let mut prev: Vec<[f32; 4]> = tw.positions().read().unwrap()[..n].to_vec();
    let mut t = PushTotals {
        waits: 0,
        searches: 0,
        steps: 0,
        converged: 0,
    };
    for k in 0..6 {
        let down = 0.004 * k as f64;
        tw.set_target(&s.pushed(down, 0.5 * down)).expect("target");
        let before = ctx.counters();
        let rep = tw
            .solve_observed(|st, x| {
                let at = format!("{label}, solve {k}, step {}", st.steps);
                assert_step_safe(&surface, &prev, x, &at);
                prev.copy_from_slice(&x[..n]);
            })
            .expect("solve");
        t.waits += (ctx.counters() - before).host_waits;
        t.searches += rep.searches;
        t.steps += rep.steps;
        t.converged += rep.converged as u32;
    }
    if st.batch_searches > 0 {
        assert!(
            tw.batch_searches_recorded(),
            "{label}: batch searches not recorded"
        );
    }
    assert_no_validation_errors(&ctx);
    t
}

/// Issue 22: with speculative searches (`TwoWay::set_speculative_searches`, as the two-way
/// contact handler runs it without the repulsion energy), a step batch that follows one which
/// used up its reuse bound has the search and the constraint build queued behind it: one host
/// wait instead of two per such search. The searches it takes early are searches at the
/// current x, so every step stays safe: each forward step (batches of one step, all observed)
/// passes the exact trajectory checker, with and without speculation, and speculation waits
/// less for at least as many searches.
#[test]
fn speculative_searches_wait_less_and_every_step_stays_safe() {
    let run = |speculate: bool| {
        let st = TwoWaySettings {
            contact_coloring: ContactColoring::Host,
            steps_per_batch: 1,
            ..Default::default()
        };
        let t = push_top_sheet(
            st,
            |tw| {
                tw.set_prefetch_searches(true).expect("prefetch");
                tw.set_speculative_searches(speculate);
            },
            &format!("speculate {speculate}"),
        );
        (t.waits, t.searches, t.steps)
    };
    let (plain_waits, plain_searches, plain_steps) = run(false);
    let (waits, searches, steps) = run(true);
    println!(
        "without: {plain_waits} waits, {plain_searches} searches, {plain_steps} steps; \
         speculative: {waits} waits, {searches} searches, {steps} steps"
    );
    assert!(
        plain_searches >= 4,
        "too few searches to test: {plain_searches}"
    );
    assert!(searches >= plain_searches, "{searches} < {plain_searches}");
    assert!(
        waits < plain_waits,
        "{waits} host waits with speculative searches, {plain_waits} without"
    );
}

/// Searches within step batches (`set_batch_searches`: two steps, then a gated search, its
/// build and its single-workgroup coloring, in one graph) keep every state intersection-free
/// (each batch's end checked by the exact trajectory checker against the last), solve the same
/// pushes with fewer host waits than host-run searches, and count their searches.
#[test]
fn batch_searches_wait_less_and_every_state_stays_safe() {
    let run = |units: u32| {
        let st = TwoWaySettings {
            contact_coloring: ContactColoring::Host,
            sweep_dispatch: SweepDispatch::Fused,
            batch_searches: units,
            ..Default::default()
        };
        let t = push_top_sheet(
            st,
            |tw| tw.set_speculative_searches(true),
            &format!("{units} batch searches"),
        );
        (t.waits, t.searches, t.converged)
    };
    let (plain_waits, plain_searches, plain_converged) = run(0);
    let (waits, searches, converged) = run(2);
    println!(
        "host searches: {plain_waits} waits, {plain_searches} searches, {plain_converged} \
         converged; batch searches: {waits} waits, {searches} searches, {converged} converged"
    );
    assert!(
        plain_searches >= 4,
        "too few searches to test: {plain_searches}"
    );
    assert!(searches >= plain_searches, "{searches} < {plain_searches}");
    assert_eq!(converged, plain_converged, "solves converged");
    assert!(
        waits < plain_waits,
        "{waits} host waits with batch searches, {plain_waits} without"
    );
}

/// A search queued within a step batch that overflows its pair buffers stops the batch's
/// steps (its constraints are incomplete): the buffers grow, the host searches again, and
/// every state stays intersection-free with the same convergence as host-run searches.
#[test]
fn a_batch_search_that_overflows_is_redone_on_the_host() {
    let ctx = context(false);
    let s = sheets(8, 0.003, 0.01);
    let n = s.x.len();
    let inv_w = s.pinned_bottom();
    let st = TwoWaySettings {
        contact_coloring: ContactColoring::Host,
        sweep_dispatch: SweepDispatch::Fused,
        batch_searches: 2,
        // Far fewer than the pressed sheets' pairs.
        initial_pair_capacity: Some(4),
        ..Default::default()
    };
    let mut tw = TwoWay::new(&ctx, s.mesh.clone(), &s.x, &inv_w, st).expect("solver");
    let surface = Surface::new(n, &s.mesh.triangles).expect("surface");
    let mut prev: Vec<[f32; 4]> = tw.positions().read().unwrap()[..n].to_vec();
    let (mut redone, mut pairs) = (0, 0);
    for k in 0..4 {
        let down = 0.004 * k as f64;
        tw.set_target(&s.pushed(down, 0.0)).expect("target");
        let rep = tw
            .solve_observed(|st, x| {
                assert_step_safe(&surface, &prev, x, &format!("solve {k}, step {}", st.steps));
                prev.copy_from_slice(&x[..n]);
            })
            .expect("solve");
        assert!(rep.converged, "solve {k}: {rep:?}");
        redone += rep.searches_redone;
        pairs = pairs.max(rep.contact_pairs);
    }
    assert!(
        redone >= 1,
        "no batch search overflowed (most pairs {pairs})"
    );
    assert!(pairs > 4, "most pairs {pairs}");
    assert_no_validation_errors(&ctx);
}

/// `two_way_accept.comp` equals `cpu_reference::two_way::accept_search` bit for bit: a search
/// that fit (the steps had asked for it or not) is taken with its counters; every kind of
/// overflow (entries, a saturated count, either pair list, either candidate list) stops the
/// batch instead.
#[test]
fn the_search_acceptance_kernel_matches_the_reference() {
    use supple::contact::two_way::solve::{TwState, FLAG_CONVERGED, FLAG_SEARCH};
    use supple::cpu_reference::two_way::{accept_search, SearchCapacities};
    use supple::vk::{ids, BufferUsage, CompileOptions, Dispatch, Graph};
    let ctx = context(false);
    let caps = SearchCapacities {
        entries: 100,
        vertex_triangle: 40,
        edge_edge: 50,
        candidates_vertex_triangle: 60,
        candidates_edge_edge: 70,
    };
    let fitting = [100, 40, 50, 60, 70, 0, 1];
    let mut statuses = vec![fitting, [3, 1, 2, 4, 5, 0, 0]];
    for (k, over) in [(0, 101), (5, 1), (1, 41), (2, 51), (3, 61), (4, 71)] {
        let mut s = fitting;
        s[k] = over;
        statuses.push(s);
    }
    let start = TwState {
        bound: 0.001,
        steps: 3,
        pairs: 7,
        searches: 2,
        pairs_max: 60,
        colors_max: 9,
        uncolored_max: 1,
        ..Default::default()
    };
    let d_max: f32 = 0.008;
    let push = [d_max.to_bits(), 100, 40, 50, 60, 70];
    let mut cases = 0;
    for status in &statuses {
        for flags in [FLAG_SEARCH, 0, FLAG_SEARCH | FLAG_CONVERGED] {
            for (pairs, coloring) in [(90u32, [0u32, 0, 12, 5]), (20, [0, 3, 4, 2])] {
                let st = TwState { flags, ..start };
                let state = ctx
                    .upload_buffer("test.state", &[st], BufferUsage::STORAGE)
                    .unwrap();
                let stat = ctx
                    .upload_buffer("test.status", status, BufferUsage::STORAGE)
                    .unwrap();
                let meta = ctx
                    .upload_buffer(
                        "test.meta",
                        &[pairs / 2, pairs, 1, 1, 1],
                        BufferUsage::STORAGE,
                    )
                    .unwrap();
                let col = ctx
                    .upload_buffer("test.coloring", &coloring, BufferUsage::STORAGE)
                    .unwrap();
                let mut g = Graph::new("test.accept");
                g.dispatch(
                    Dispatch::new("accept", ids::COLLISION_TWO_WAY_ACCEPT, [1, 1, 1])
                        .workgroup_size(64)
                        .read_write(&state)
                        .read(&stat)
                        .read(&meta)
                        .read(&col)
                        .push(&push),
                );
                g.compile(&ctx, CompileOptions::default())
                    .unwrap()
                    .run()
                    .unwrap();
                let gpu = state.read().unwrap()[0];
                let want = accept_search(&st, status, &caps, pairs, &coloring, d_max);
                assert_eq!(
                    bytemuck::bytes_of(&gpu),
                    bytemuck::bytes_of(&want),
                    "status {status:?}, flags {flags}: GPU {gpu:?}, reference {want:?}"
                );
                cases += 1;
            }
        }
    }
    assert_eq!(cases, statuses.len() * 6);
    assert_no_validation_errors(&ctx);
}
