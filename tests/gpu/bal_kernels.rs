//! The BAL contact kernels (`kernels/bal/`, host `engine/src/contact/bal/`) against their plain-Rust
//! twins (`cpu_reference::bal::kernels`) on lavapipe with the validation layer on:
//! - the active set (distances of every candidate, keys, sort, build) equals the reference and
//!   does not depend on the order the candidates come in; fed by the real proximity search too;
//! - an active set larger than the list's capacity grows the list and redoes the pass, keeping
//!   the previous list's multipliers: no pair is dropped;
//! - the A′ rule, the carried multipliers and the dual update equal the reference;
//! - friction lags, per-stencil energies, gradients, PSD Hessians and stiffness equal the
//!   reference; so do the energies at the iterate and at trial positions;
//! - the per-node gathers equal the reference; the contact-block SpMV equals the reference and
//!   a dense product of the same blocks (also masked by stiffness groups);
//! - the CCD step bound equals the f32 reference;
//! - two runs from differently ordered candidates give bit-identical outputs.

// Index loops compare several parallel arrays (GPU layout vs reference) element by element.
#![allow(clippy::needless_range_loop)]

use nalgebra::{DMatrix, DVector, Matrix3, Vector3};
use rand::seq::SliceRandom;
use rand::Rng;
use supple::contact::bal::{AugRule, BalBindings, BalContact, BalParams, Candidates};
use supple::cpu_reference::bal::distance::StencilKind;
use supple::cpu_reference::bal::kernels as twin;
use supple::cpu_reference::bal::kernels::{ActivePair, CandidateStencil, KeyBits, TermParams};
use supple::cpu_reference::distance::{edge_edge, point_triangle};
use supple::cpu_reference::proximity::unique_edges;
use supple::proximity::{ProximityMesh, ProximityOptions, ProximitySearch};
use supple::vk::{BufferUsage, Context, GpuBuffer};
use supple_gpu_tests::{assert_no_validation_errors, context, rng};

const D_HAT: f64 = 1e-3;
const SIGMA: f64 = 300.0;
const H: f64 = 1.0 / 30.0;
const EPS_V: f64 = 1e-3;
const CHI: f64 = 0.4;
const XI: f64 = 0.1;

/// A floor grid of triangles and small tets hovering within ~1.5 d̂ of it, in f32-exact
/// coordinates.
struct Scene {
    x: Vec<Vector3<f64>>,
    triangles: Vec<[u32; 3]>,
    edges: Vec<[u32; 2]>,
    body: Vec<u32>,
}

fn round32(v: Vector3<f64>) -> Vector3<f64> {
    v.map(|c| c as f32 as f64)
}

fn scene(seed: u64, tets: usize) -> Scene {
    scene_sized(seed, tets, 6)
}

/// [`scene`] with an `n` × `n` floor grid; tets fill rows of three, 4.2 mm apart.
fn scene_sized(seed: u64, tets: usize, n: usize) -> Scene {
    let mut r = rng(seed);
    let a = 2e-3;
    let mut x = Vec::new();
    let mut body = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            x.push(Vector3::new(i as f64 * a, j as f64 * a, 0.0));
            body.push(0);
        }
    }
    let mut triangles = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let v = (j * (n + 1) + i) as u32;
            let w = v + (n + 1) as u32;
            triangles.push([v, v + 1, w + 1]);
            triangles.push([v, w + 1, w]);
        }
    }
    for t in 0..tets {
        let base = x.len() as u32;
        // A random rotation of a 3 mm tet whose lowest vertex hovers 0.1–1.4 d̂ above the floor.
        let rot = nalgebra::Rotation3::from_euler_angles(
            r.random_range(0.0..6.3),
            r.random_range(0.0..6.3),
            r.random_range(0.0..6.3),
        );
        let local = [
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(3e-3, 0.0, 0.0),
            Vector3::new(0.0, 3e-3, 0.0),
            Vector3::new(0.0, 0.0, 3e-3),
        ]
        .map(|p| rot * p);
        let low = local.iter().map(|p| p.z).fold(f64::MAX, f64::min);
        let per_row = (((n as f64) * a + 0.6e-3) / 4.2e-3) as usize;
        let cx = 1.5e-3 + (t % per_row) as f64 * 4.2e-3 + r.random_range(0.0..1e-3);
        let cy = 1.5e-3 + (t / per_row) as f64 * 4.2e-3 + r.random_range(0.0..1e-3);
        let lift = r.random_range(0.1..1.4) * D_HAT - low;
        for p in local {
            x.push(Vector3::new(cx, cy, lift) + p);
            body.push(1 + t as u32);
        }
        for f in [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]] {
            triangles.push(f.map(|k| base + k));
        }
    }
    let x: Vec<Vector3<f64>> = x.into_iter().map(round32).collect();
    let edges = unique_edges(&triangles);
    Scene {
        x,
        triangles,
        edges,
        body,
    }
}

fn f4(x: &[Vector3<f64>]) -> Vec<[f32; 4]> {
    x.iter()
        .map(|p| [p.x as f32, p.y as f32, p.z as f32, 0.0])
        .collect()
}

fn rest_sq(s: &Scene) -> Vec<f64> {
    s.edges
        .iter()
        .map(|e| (s.x[e[1] as usize] - s.x[e[0] as usize]).norm_squared())
        .collect()
}

/// The f32 and f64 closest-feature codes and distance of a stencil.
fn codes(kind: StencilKind, v: [u32; 4], x: &[Vector3<f64>]) -> (u32, u32, f64) {
    let p: [Vector3<f64>; 4] = v.map(|i| x[i as usize]);
    let q: [Vector3<f32>; 4] = p.map(|c| c.map(|e| e as f32));
    match kind {
        StencilKind::PointTriangle => {
            let a = point_triangle(&p[0], &p[1], &p[2], &p[3]);
            let b = point_triangle(&q[0], &q[1], &q[2], &q[3]);
            (a.kind as u32, b.kind as u32, a.sq_dist.sqrt())
        }
        StencilKind::EdgeEdge => {
            let a = edge_edge(&p[0], &p[1], &p[2], &p[3]);
            let b = edge_edge(&q[0], &q[1], &q[2], &q[3]);
            (a.kind as u32, b.kind as u32, a.sq_dist.sqrt())
        }
    }
}

/// Whether a value sits within `rel` of a threshold (where f32 and f64 may decide differently).
fn near(v: f64, t: f64, rel: f64) -> bool {
    (v - t).abs() <= rel * t
}

/// Brute-force candidates within 3 d̂ at every position set in `xs`, as proximity records
/// (shuffled, padded with junk past the counts). Pairs where f32 and f64 could disagree (codes
/// or a threshold) are left out: the test compares arithmetic, not borderline decisions.
fn candidate_records(
    s: &Scene,
    xs: &[&[Vector3<f64>]],
    seed: u64,
) -> (Vec<[u32; 4]>, Vec<[u32; 4]>, [u32; 2]) {
    let mut vt = Vec::new();
    let mut ee = Vec::new();
    let rsq = rest_sq(s);
    let ok = |kind: StencilKind, v: [u32; 4], a: usize, b: usize| {
        xs.iter().all(|x| {
            let (c64, c32, d) = codes(kind, v, x);
            let mut fine = c64 == c32 && !near(d, D_HAT, 1e-4) && !near(d, 1e-2 * D_HAT, 1e-3);
            if kind == StencilKind::EdgeEdge {
                let p: [Vector3<f64>; 4] = v.map(|i| x[i as usize]);
                let c = (p[1] - p[0]).cross(&(p[3] - p[2])).norm_squared();
                fine &= !near(c, 1e-3 * rsq[a] * rsq[b], 1e-3);
            }
            fine && d < 3.0 * D_HAT
        })
    };
    let surface: std::collections::BTreeSet<u32> = s.triangles.iter().flatten().copied().collect();
    for &p in &surface {
        for (t, tri) in s.triangles.iter().enumerate() {
            let v = [p, tri[0], tri[1], tri[2]];
            if !tri.contains(&p)
                && s.body[p as usize] != s.body[tri[0] as usize]
                && ok(StencilKind::PointTriangle, v, 0, 0)
            {
                vt.push([p, t as u32, 0, 0]);
            }
        }
    }
    for (i, ea) in s.edges.iter().enumerate() {
        for (j, eb) in s.edges.iter().enumerate().skip(i + 1) {
            let v = [ea[0], ea[1], eb[0], eb[1]];
            if !ea.iter().any(|q| eb.contains(q))
                && s.body[ea[0] as usize] != s.body[eb[0] as usize]
                && ok(StencilKind::EdgeEdge, v, i, j)
            {
                ee.push([i as u32, j as u32, 0, 0]);
            }
        }
    }
    let mut r = rng(seed);
    vt.shuffle(&mut r);
    ee.shuffle(&mut r);
    let counts = [vt.len() as u32, ee.len() as u32];
    // Junk past the counts must never be read as a candidate.
    for _ in 0..7 {
        vt.push([r.random(), r.random(), 0, 0]);
        ee.push([r.random(), r.random(), 0, 0]);
    }
    (vt, ee, counts)
}

struct Setup {
    ctx: Context,
    s: Scene,
    bal: BalContact,
    x: GpuBuffer<[f32; 4]>,
    x_trial: GpuBuffer<[f32; 4]>,
    x_start: GpuBuffer<[f32; 4]>,
    dir: GpuBuffer<[f32; 4]>,
    cands: Vec<CandidateStencil>,
}

fn params() -> BalParams {
    BalParams::new(SIGMA, D_HAT, EPS_V, H, CHI, XI)
}

/// Uploads a scene and its candidates (computed at the given position sets) and builds the BAL
/// workspace with `capacity` pairs.
fn setup(s: Scene, check_at: &[&[Vector3<f64>]], seed: u64, capacity: usize) -> Setup {
    setup_on(context(false), s, check_at, seed, capacity)
}

/// [`setup`] on a given context.
fn setup_on(
    ctx: Context,
    s: Scene,
    check_at: &[&[Vector3<f64>]],
    seed: u64,
    capacity: usize,
) -> Setup {
    let st = BufferUsage::STORAGE | BufferUsage::HOST_WRITE;
    let mut sets: Vec<&[Vector3<f64>]> = vec![&s.x];
    sets.extend_from_slice(check_at);
    let (vt, ee, counts) = candidate_records(&s, &sets, seed);
    let tris4: Vec<[u32; 4]> = s.triangles.iter().map(|t| [t[0], t[1], t[2], 0]).collect();
    let cand = Candidates {
        pairs_vt: ctx.upload_buffer("test.vt", &vt, st).unwrap(),
        pairs_ee: ctx.upload_buffer("test.ee", &ee, st).unwrap(),
        status: ctx
            .upload_buffer("test.status", &[0, counts[0], counts[1], 0, 0, 0, 0, 0], st)
            .unwrap(),
        triangles: ctx.upload_buffer("test.tris", &tris4, st).unwrap(),
        edges: ctx.upload_buffer("test.edges", &s.edges, st).unwrap(),
        num_triangles: s.triangles.len(),
        num_edges: s.edges.len(),
    };
    let cands = twin::candidate_stencils(&vt, &ee, counts, &tris4, &s.edges);
    let x = ctx.upload_buffer("test.x", &f4(&s.x), st).unwrap();
    let x_trial = ctx.upload_buffer("test.x_trial", &f4(&s.x), st).unwrap();
    let x_start = ctx.upload_buffer("test.x_start", &f4(&s.x), st).unwrap();
    let dir = ctx
        .upload_buffer("test.dir", &vec![[0.0f32; 4]; s.x.len()], st)
        .unwrap();
    let bindings = BalBindings {
        x: x.clone(),
        x_trial: x_trial.clone(),
        x_start: x_start.clone(),
        direction: dir.clone(),
    };
    let rs: Vec<f32> = rest_sq(&s).iter().map(|&v| v as f32).collect();
    let bal =
        BalContact::new(&ctx, bindings, cand, s.x.len(), &rs, capacity, params()).expect("bal");
    Setup {
        ctx,
        s,
        bal,
        x,
        x_trial,
        x_start,
        dir,
        cands,
    }
}

impl Setup {
    fn bits(&self) -> KeyBits {
        KeyBits::new(self.s.x.len(), self.s.triangles.len(), self.s.edges.len())
    }

    fn reference_active(&self, x: &[Vector3<f64>]) -> Vec<ActivePair> {
        twin::active_set(&self.cands, x, D_HAT, &rest_sq(&self.s), self.bits())
    }
}

/// Positions of the tets moved by `t` times a per-body displacement (floor fixed).
fn moved(s: &Scene, t: f64, seed: u64) -> Vec<Vector3<f64>> {
    let mut r = rng(seed);
    let bodies = s.body.iter().copied().max().unwrap_or(0) as usize + 1;
    let shift: Vec<Vector3<f64>> = (0..bodies)
        .map(|_| {
            Vector3::new(
                r.random_range(-1.0..1.0),
                r.random_range(-1.0..1.0),
                r.random_range(-1.0..0.2),
            ) * 4e-4
        })
        .collect();
    s.x.iter()
        .zip(&s.body)
        .map(|(p, &b)| {
            round32(if b == 0 {
                *p
            } else {
                p + shift[b as usize] * t
            })
        })
        .collect()
}

fn assert_pairs_match(
    gpu: &[supple::contact::bal::PairRecord],
    reference: &[ActivePair],
    label: &str,
) {
    assert_eq!(gpu.len(), reference.len(), "{label}: active pair count");
    for (g, r) in gpu.iter().zip(reference) {
        assert_eq!(g.key, r.key, "{label}: key order");
        assert_eq!(g.vertices, r.vertices, "{label}: vertices");
        assert_eq!(g.info[0], r.kind as u32 | r.code << 8, "{label}: kind/code");
        assert!(
            (g.distance as f64 - r.d).abs() <= 1e-4 * r.d + 1e-9,
            "{label}: distance {} vs {}",
            g.distance,
            r.d
        );
        for k in 0..4 {
            assert!(
                (g.aug[k] as f64 - r.aug[k]).abs() <= 1e-4 * r.aug[k].abs() + 1e-7,
                "{label}: aug {:?} vs {:?}",
                g.aug,
                r.aug
            );
        }
    }
}

#[test]
fn active_set_matches_reference_and_does_not_depend_on_candidate_order() {
    let mut a = setup(scene(1, 9), &[], 11, 512);
    let ra = a.bal.run_active_set().expect("active set");
    let reference = a.reference_active(&a.s.x);
    assert!(
        reference.len() > 20,
        "only {} active pairs",
        reference.len()
    );
    let kinds = reference
        .iter()
        .map(|p| p.kind as u32 * 16 + p.code)
        .collect::<std::collections::BTreeSet<_>>();
    assert!(kinds.len() >= 4, "distance types covered: {kinds:?}");
    assert_eq!(ra.count as usize, reference.len());
    assert_eq!(ra.regrown, 0);
    let gpu = a.bal.read_pairs().unwrap();
    assert_pairs_match(&gpu, &reference, "active set");
    let dmin = reference.iter().map(|p| p.d).fold(f64::INFINITY, f64::min);
    assert!((ra.min_distance - dmin).abs() <= 1e-4 * dmin);
    // The same candidates in another order: the same list, bit for bit.
    let mut b = setup(scene(1, 9), &[], 99, 512);
    b.bal.run_active_set().unwrap();
    assert_eq!(b.bal.read_pairs().unwrap(), gpu);
    assert_no_validation_errors(&a.ctx);
    assert_no_validation_errors(&b.ctx);
}

#[test]
fn active_set_from_the_proximity_search_matches_reference() {
    let ctx = context(false);
    let s = scene(2, 6);
    let mesh = ProximityMesh::new(s.triangles.clone(), s.body.clone()).unwrap();
    let xs: Vec<[f64; 3]> = s.x.iter().map(|p| [p.x, p.y, p.z]).collect();
    let mut search =
        ProximitySearch::new(&ctx, mesh.clone(), &xs, ProximityOptions::new(3.0 * D_HAT)).unwrap();
    search.run().unwrap();
    let pairs = search.read_pairs().unwrap();
    let st = BufferUsage::STORAGE | BufferUsage::HOST_WRITE;
    let x = ctx.upload_buffer("test.x", &f4(&s.x), st).unwrap();
    let bindings = BalBindings {
        x: x.clone(),
        x_trial: x.clone(),
        x_start: x.clone(),
        direction: x.clone(),
    };
    let rs: Vec<f32> = mesh
        .edges
        .iter()
        .map(|e| (s.x[e[1] as usize] - s.x[e[0] as usize]).norm_squared() as f32)
        .collect();
    let mut bal = BalContact::new(
        &ctx,
        bindings,
        Candidates::from_search(&search),
        s.x.len(),
        &rs,
        256,
        params(),
    )
    .unwrap();
    let rep = bal.run_active_set().unwrap();
    // Reference from the search's own pair records.
    let rec = |p: &supple::proximity::Pair| [p.a, p.b, p.kind, 0];
    let vt: Vec<[u32; 4]> = pairs.vertex_triangle.iter().map(rec).collect();
    let ee: Vec<[u32; 4]> = pairs.edge_edge.iter().map(rec).collect();
    let tris4: Vec<[u32; 4]> = mesh
        .triangles
        .iter()
        .map(|t| [t[0], t[1], t[2], 0])
        .collect();
    let cands = twin::candidate_stencils(
        &vt,
        &ee,
        [vt.len() as u32, ee.len() as u32],
        &tris4,
        &mesh.edges,
    );
    let bits = KeyBits::new(s.x.len(), mesh.triangles.len(), mesh.edges.len());
    let rsq: Vec<f64> = rs.iter().map(|&v| v as f64).collect();
    let reference = twin::active_set(&cands, &s.x, D_HAT, &rsq, bits);
    assert!(reference.len() > 10);
    assert_eq!(rep.count as usize, reference.len());
    let gpu = bal.read_pairs().unwrap();
    assert_eq!(
        gpu.iter().map(|p| p.key).collect::<Vec<_>>(),
        reference.iter().map(|p| p.key).collect::<Vec<_>>()
    );
    assert_no_validation_errors(&ctx);
}

#[test]
fn rule_carry_and_dual_update_match_reference() {
    let s = scene(3, 9);
    let x1 = moved(&s, 1.0, 5);
    let mut a = setup(s, &[&x1.clone()], 7, 512);
    a.bal.run_active_set().unwrap();
    let mut reference = a.reference_active(&a.s.x);
    // Rebuild: pairs under 1e-2 d̂... the scene hovers above that, so use a large threshold.
    let mut p = params();
    p.aug_threshold = (0.6 * D_HAT) as f32;
    a.bal.set_params(p).unwrap();
    let augmented = a.bal.apply_rule(AugRule::Rebuild).unwrap();
    twin::apply_rule(1, 0.6 * D_HAT, &mut reference);
    assert!(
        reference.iter().any(|q| q.aug[2] != 0.0),
        "no pair entered A′"
    );
    // |A′| summed on the device equals the reference's count.
    let in_aug = |pairs: &[ActivePair]| pairs.iter().filter(|q| q.aug[2] != 0.0).count() as u32;
    assert_eq!(augmented, in_aug(&reference), "|A′| after rebuild");
    assert_pairs_match(&a.bal.read_pairs().unwrap(), &reference, "rebuild");
    // Dual update at moved positions, then a new active list there carries (μ, s).
    a.x.write(&f4(&x1)).unwrap();
    a.bal.dual_update().unwrap();
    twin::dual_update(&mut reference, &x1, SIGMA, D_HAT);
    assert!(
        reference.iter().any(|q| q.aug[0] > 0.0),
        "no multiplier grew"
    );
    assert_pairs_match(&a.bal.read_pairs().unwrap(), &reference, "dual update");
    a.bal.run_active_set().unwrap();
    let mut next = a.reference_active(&x1);
    twin::carry(&reference, &mut next);
    assert!(next.iter().any(|q| q.aug[3] != 0.0), "nothing carried");
    assert_pairs_match(&a.bal.read_pairs().unwrap(), &next, "carried");
    let mut keep = next.clone();
    let augmented = a.bal.apply_rule(AugRule::Keep).unwrap();
    twin::apply_rule(2, 0.6 * D_HAT, &mut keep);
    assert_eq!(augmented, in_aug(&keep), "|A′| after keep");
    assert!(augmented > 0, "keep emptied A′");
    assert_pairs_match(&a.bal.read_pairs().unwrap(), &keep, "keep");
    assert_eq!(
        a.bal.apply_rule(AugRule::Empty).unwrap(),
        0,
        "|A′| after empty"
    );
    twin::apply_rule(0, 0.6 * D_HAT, &mut keep);
    assert!(keep.iter().all(|q| q.aug == [0.0; 4]));
    assert_pairs_match(&a.bal.read_pairs().unwrap(), &keep, "empty");
    assert_no_validation_errors(&a.ctx);
}

#[test]
fn overflow_grows_the_list_and_keeps_the_previous_multipliers() {
    let s = scene(4, 9);
    let x1 = moved(&s, -1.0, 8);
    let mut a = setup(s, &[&x1.clone()], 3, 4);
    let r = a.bal.run_active_set().unwrap();
    let mut reference = a.reference_active(&a.s.x);
    assert!(
        reference.len() > 4 && r.regrown >= 1,
        "count {} regrown {}",
        reference.len(),
        r.regrown
    );
    assert!(a.bal.capacity() >= reference.len());
    assert_pairs_match(&a.bal.read_pairs().unwrap(), &reference, "grown");
    let mut p = params();
    p.aug_threshold = (0.6 * D_HAT) as f32;
    a.bal.set_params(p).unwrap();
    a.bal.apply_rule(AugRule::Rebuild).unwrap();
    twin::apply_rule(1, 0.6 * D_HAT, &mut reference);
    a.bal.dual_update().unwrap();
    twin::dual_update(&mut reference, &a.s.x, SIGMA, D_HAT);
    // Move closer: more pairs than the grown capacity; the multipliers survive the regrowth.
    a.x.write(&f4(&x1)).unwrap();
    let before = a.bal.capacity();
    let r = a.bal.run_active_set().unwrap();
    let mut next = a.reference_active(&x1);
    twin::carry(&reference, &mut next);
    if next.len() > before {
        assert!(r.regrown >= 1);
    }
    assert!(next.iter().any(|q| q.aug[3] != 0.0), "nothing carried");
    assert_pairs_match(&a.bal.read_pairs().unwrap(), &next, "grown again");
    assert_no_validation_errors(&a.ctx);
}

/// Evaluates a setup with friction lagged at `x` and the tets displaced to `x1`; returns the
/// reference pairs, lags and terms.
fn evaluated(
    a: &mut Setup,
    x1: &[Vector3<f64>],
) -> (
    Vec<ActivePair>,
    Vec<Option<supple::cpu_reference::bal::friction::FrictionLag>>,
    Vec<twin::StencilTerm>,
) {
    a.bal.run_active_set().unwrap();
    let mut pairs = a.reference_active(&a.s.x);
    let mut p = params();
    p.aug_threshold = (0.5 * D_HAT) as f32;
    a.bal.set_params(p).unwrap();
    a.bal.apply_rule(AugRule::Rebuild).unwrap();
    twin::apply_rule(1, 0.5 * D_HAT, &mut pairs);
    a.bal.dual_update().unwrap();
    twin::dual_update(&mut pairs, &a.s.x, SIGMA, D_HAT);
    a.bal.lag_friction().unwrap();
    let lags = twin::friction_lags(&pairs, &a.s.x, SIGMA, D_HAT, CHI);
    // Terms at x1 (stencils of the list at x), friction displacements from x.
    a.x.write(&f4(x1)).unwrap();
    a.bal.evaluate().unwrap();
    let cap = a.bal.capacity();
    let tp = TermParams {
        sigma: SIGMA,
        d_hat: D_HAT,
        eps_f: EPS_V * H,
        chi: CHI,
    };
    let terms = twin::stencil_terms(&pairs, &lags, cap, x1, &a.s.x, tp);
    (pairs, lags, terms)
}

fn max_abs(v: impl Iterator<Item = f64>) -> f64 {
    v.fold(0.0, |m, x| m.max(x.abs()))
}

/// Compares the GPU's per-slot stencil terms with the reference; returns the non-empty slots
/// compared.
fn compare_terms(a: &Setup, terms: &[twin::StencilTerm]) -> usize {
    let (e, g, h, st) = a.bal.read_terms().unwrap();
    let mut checked = 0;
    for (s, t) in terms.iter().enumerate() {
        let gs = max_abs(t.gradient.iter().flat_map(|v| v.iter().copied())) + 1e-12;
        let hs = t.hessian.amax() + 1e-12;
        assert!(
            (e[s] as f64 - t.energy).abs() <= 1e-3 * t.energy.abs() + 1e-12,
            "slot {s} energy {} vs {}",
            e[s],
            t.energy
        );
        if t.vertices[0] == u32::MAX {
            // Empty slots: energy 0; their gradient and Hessian are never gathered or read.
            continue;
        }
        for k in 0..4 {
            for c in 0..3 {
                let d = g[4 * s + k][c] as f64 - t.gradient[k][c];
                assert!(
                    d.abs() <= 2e-3 * gs,
                    "slot {s} gradient {k}.{c}: {} vs {}",
                    g[4 * s + k][c],
                    t.gradient[k][c]
                );
            }
            for l in 0..4 {
                for r in 0..3 {
                    for c in 0..3 {
                        let gv = h[3 * (16 * s + 4 * k + l) + r][c] as f64;
                        let rv = t.hessian[(3 * k + r, 3 * l + c)];
                        assert!(
                            (gv - rv).abs() <= 3e-3 * hs,
                            "slot {s} H({k}{r},{l}{c}): {gv} vs {rv} (scale {hs})"
                        );
                    }
                }
            }
            assert!(
                (st[s][k] as f64 - t.stiffness[k]).abs()
                    <= 3e-3 * t.stiffness.iter().fold(1e-12, |m: f64, v| m.max(v.abs())),
                "slot {s} stiffness"
            );
        }
        checked += (t.vertices[0] != u32::MAX) as usize;
    }
    checked
}

#[test]
fn friction_lags_and_stencil_terms_match_reference() {
    let s = scene(5, 9);
    let x1 = moved(&s, 0.3, 9);
    let mut a = setup(s, &[&x1.clone()], 5, 512);
    let (pairs, lags, terms) = evaluated(&mut a, &x1);
    assert!(pairs.iter().any(|q| q.aug[2] != 0.0));
    assert!(lags.iter().filter(|l| l.is_some()).count() > 10);
    // Lags.
    let gl = a.bal.read_friction().unwrap();
    for (i, l) in lags.iter().enumerate() {
        match l {
            None => assert_eq!(gl[i].0[0], u32::MAX, "slot {i}: unexpected lag"),
            Some(l) => {
                assert_eq!(gl[i].0, l.vertices.map(|v| v as u32));
                assert!((gl[i].2[3] as f64 - l.lambda).abs() <= 1e-3 * l.lambda, "λ");
                for k in 0..4 {
                    assert!((gl[i].1[k] as f64 - l.weights[k]).abs() <= 1e-5, "β");
                }
                // The basis spans the same plane (signs may differ only through rounding of
                // a degenerate choice; compare the projector).
                let t = |v: [f32; 4]| Vector3::new(v[0] as f64, v[1] as f64, v[2] as f64);
                let pg = t(gl[i].2) * t(gl[i].2).transpose() + t(gl[i].3) * t(gl[i].3).transpose();
                let pr = l.basis[0] * l.basis[0].transpose() + l.basis[1] * l.basis[1].transpose();
                assert!((pg - pr).amax() <= 1e-4, "slot {i}: contact plane");
            }
        }
    }
    let checked = compare_terms(&a, &terms);
    assert!(checked > 30, "{checked} stencils compared");
    assert_no_validation_errors(&a.ctx);
}

#[test]
fn energies_gathers_and_contact_spmv_match_reference_and_dense_product() {
    let s = scene(6, 9);
    let x1 = moved(&s, 0.3, 10);
    let x2 = moved(&s, 0.5, 10);
    let mut a = setup(s, &[&x1.clone(), &x2.clone()], 6, 512);
    let (pairs, lags, terms) = evaluated(&mut a, &x1);
    let nv = a.s.x.len();
    let tp = TermParams {
        sigma: SIGMA,
        d_hat: D_HAT,
        eps_f: EPS_V * H,
        chi: CHI,
    };
    // Energies at the iterate and at a trial point.
    let sums = a.bal.read_sums().unwrap();
    let rs = rest_sq(&a.s);
    let barrier = twin::candidate_energy(&a.cands, &x1, SIGMA, D_HAT, &rs);
    let stencils = twin::stencil_energy(&pairs, &lags, &x1, &a.s.x, tp);
    assert!(barrier > 0.0 && stencils > 0.0);
    assert!(
        (sums[0].value as f64 - barrier).abs() <= 1e-3 * barrier,
        "barrier {} vs {barrier}",
        sums[0].value
    );
    assert!(
        (sums[1].value as f64 - stencils).abs() <= 1e-3 * stencils,
        "stencils {} vs {stencils}",
        sums[1].value
    );
    a.x_trial.write(&f4(&x2)).unwrap();
    let trial = a.bal.trial().unwrap();
    let bt = twin::candidate_energy(&a.cands, &x2, SIGMA, D_HAT, &rs);
    let stt = twin::stencil_energy(&pairs, &lags, &x2, &a.s.x, tp);
    assert!(
        (trial.barrier - bt).abs() <= 1e-3 * bt,
        "trial barrier {} vs {bt}",
        trial.barrier
    );
    assert!(
        (trial.stencils - stt).abs() <= 1e-3 * stt,
        "trial stencils {} vs {stt}",
        trial.stencils
    );
    // The active-pair count at the trial (the memory cap's input).
    let active_trial = a.reference_active(&x2).len() as u32;
    assert!(active_trial > 0);
    assert_eq!(trial.active, active_trial);
    // Gathers.
    let (rg, rd, re) = twin::gather(&terms, nv);
    let gg = a.bal.node_gradient().read().unwrap();
    let gd = a.bal.node_diag().read().unwrap();
    let ge = a.bal.node_stiffness().read().unwrap();
    let gs = max_abs(rg.iter().flat_map(|v| v.iter().copied()));
    let ds = max_abs(rd.iter().flat_map(|m| m.iter().copied()));
    let es = max_abs(re.iter().copied());
    for v in 0..nv {
        for c in 0..3 {
            assert!(
                (gg[v][c] as f64 - rg[v][c]).abs() <= 2e-3 * gs,
                "node {v} gradient"
            );
            for r in 0..3 {
                assert!(
                    (gd[3 * v + r][c] as f64 - rd[v][(r, c)]).abs() <= 3e-3 * ds,
                    "node {v} diag"
                );
            }
        }
        assert!(
            (ge[v] as f64 - re[v]).abs() <= 3e-3 * es,
            "node {v} stiffness"
        );
    }
    // SpMV: y = y0 + C p, against the reference and a dense product of the GPU's own blocks.
    let mut r = rng(12);
    let pv: Vec<Vector3<f64>> = (0..nv)
        .map(|_| {
            round32(Vector3::new(
                r.random_range(-1.0..1.0),
                r.random_range(-1.0..1.0),
                r.random_range(-1.0..1.0),
            ))
        })
        .collect();
    let y0: Vec<Vector3<f64>> = (0..nv)
        .map(|_| {
            round32(Vector3::new(
                r.random_range(-1.0..1.0),
                r.random_range(-1.0..1.0),
                r.random_range(-1.0..1.0),
            ))
        })
        .collect();
    let st = BufferUsage::STORAGE | BufferUsage::HOST_WRITE;
    // The contact SpMV reads p through a texel view.
    let pb = a
        .ctx
        .upload_buffer("test.p", &f4(&pv), st | BufferUsage::TEXEL)
        .unwrap();
    let yb = a.ctx.upload_buffer("test.y", &f4(&y0), st).unwrap();
    let groups: Vec<i32> = (0..nv).map(|_| r.random_range(0..2)).collect();
    let gb = a.ctx.upload_buffer("test.groups", &groups, st).unwrap();
    for masked in [false, true] {
        yb.write(&f4(&y0)).unwrap();
        let mut g = supple::vk::Graph::new("test.spmv");
        a.bal.record_spmv(&mut g, &pb, &yb, masked.then_some(&gb));
        g.compile(&a.ctx, Default::default())
            .unwrap()
            .run()
            .unwrap();
        let y = yb.read().unwrap();
        // Reference: the f64 twin (masking applied to its blocks).
        let mut yr = y0.clone();
        let masked_terms: Vec<twin::StencilTerm> = terms
            .iter()
            .map(|t| {
                let mut t = t.clone();
                if masked && t.vertices[0] != u32::MAX {
                    for k in 0..4 {
                        for l in 0..4 {
                            if groups[t.vertices[k] as usize] != groups[t.vertices[l] as usize] {
                                t.hessian.fixed_view_mut::<3, 3>(3 * k, 3 * l).fill(0.0);
                            }
                        }
                    }
                }
                t
            })
            .collect();
        twin::contact_spmv(&masked_terms, &pv, &mut yr);
        let cp = max_abs(
            yr.iter()
                .zip(&y0)
                .flat_map(|(a, b)| (a - b).iter().copied().collect::<Vec<_>>()),
        );
        assert!(cp > 0.0);
        for v in 0..nv {
            for c in 0..3 {
                assert!(
                    (y[v][c] as f64 - yr[v][c]).abs() <= 3e-3 * cp + 1e-6,
                    "masked {masked} node {v}: {} vs {}",
                    y[v][c],
                    yr[v][c]
                );
            }
        }
        // Dense product of the GPU's own off-diagonal blocks (f64): the same within f32 sums.
        let (_, _, hb, _) = a.bal.read_terms().unwrap();
        let mut dense = DMatrix::<f64>::zeros(3 * nv, 3 * nv);
        for (s, t) in terms.iter().enumerate() {
            if t.vertices[0] == u32::MAX {
                continue;
            }
            for k in 0..4 {
                for l in (0..4).filter(|&l| l != k) {
                    let (vk, vl) = (t.vertices[k] as usize, t.vertices[l] as usize);
                    if masked && groups[vk] != groups[vl] {
                        continue;
                    }
                    let blk = Matrix3::from_fn(|r, c| hb[3 * (16 * s + 4 * k + l) + r][c] as f64);
                    let mut view = dense.fixed_view_mut::<3, 3>(3 * vk, 3 * vl);
                    view += blk;
                }
            }
        }
        let pd = DVector::from_iterator(3 * nv, pv.iter().flat_map(|v| v.iter().copied()));
        let yd = &dense * &pd;
        for v in 0..nv {
            for c in 0..3 {
                let want = y0[v][c] + yd[3 * v + c];
                assert!(
                    (y[v][c] as f64 - want).abs() <= 1e-5 * cp + 1e-6,
                    "dense: node {v}: {} vs {want}",
                    y[v][c]
                );
            }
        }
    }
    assert_no_validation_errors(&a.ctx);
}

#[test]
fn ccd_bound_matches_the_f32_reference() {
    let s = scene(7, 9);
    let a = setup(s, &[], 4, 256);
    let mut r = rng(13);
    // Tets pushed down toward the floor (some would cross it at α = 1) and sideways.
    let dir: Vec<Vector3<f64>> =
        a.s.body
            .iter()
            .map(|&b| {
                if b == 0 {
                    Vector3::zeros()
                } else {
                    round32(Vector3::new(
                        r.random_range(-1.0..1.0) * 1e-3,
                        r.random_range(-1.0..1.0) * 1e-3,
                        -r.random_range(0.5..3.0) * 1e-3,
                    ))
                }
            })
            .collect();
    a.dir.write(&f4(&dir)).unwrap();
    let alpha = a.bal.max_step().unwrap();
    let want = twin::ccd_bound(&a.cands, &f4(&a.s.x), &f4(&dir), XI as f32) as f64;
    assert!(want < 1.0, "the direction should collide");
    assert!((alpha - want).abs() <= 1e-6, "α_max {alpha} vs {want}");
    // The bound is safe: every candidate keeps at least ξ of its distance at α_max.
    let xa: Vec<Vector3<f64>> = a.s.x.iter().zip(&dir).map(|(p, d)| p + d * alpha).collect();
    for c in &a.cands {
        let (_, _, d0) = codes(c.kind, c.vertices, &a.s.x);
        let (_, _, d1) = codes(c.kind, c.vertices, &xa);
        assert!(d1 >= 0.9 * XI * d0, "pair {:?}: {d1} < ξ {d0}", c.vertices);
    }
    a.x_start.write(&f4(&a.s.x)).unwrap();
    assert_no_validation_errors(&a.ctx);
}

#[test]
fn reruns_are_bit_identical() {
    let run = |seed: u64| {
        let s = scene(8, 9);
        let x1 = moved(&s, 0.3, 14);
        let mut a = setup(s, &[&x1.clone()], seed, 512);
        evaluated(&mut a, &x1);
        let out = (
            a.bal.node_gradient().read().unwrap(),
            a.bal.node_diag().read().unwrap(),
            a.bal.node_stiffness().read().unwrap(),
            a.bal.read_sums().unwrap(),
        );
        assert_no_validation_errors(&a.ctx);
        out
    };
    let (a, b) = (run(21), run(22));
    let bits = |v: &[[f32; 4]]| {
        v.iter()
            .flat_map(|q| q.map(f32::to_bits))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&a.0), bits(&b.0));
    assert_eq!(bits(&a.1), bits(&b.1));
    assert_eq!(
        a.2.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        b.2.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    assert_eq!(a.3[0].value.to_bits(), b.3[0].value.to_bits());
}

/// A tet whose lower edge runs 0.5 d̂ above a floor edge, 1° off parallel: the edge–edge pair's
/// mollifier acts (its Hessian spans all 12 dimensions: the full Jacobi path).
fn parallel_edge_scene() -> Scene {
    let mut s = scene(1, 0);
    let base = s.x.len() as u32;
    let dy = 1.8e-3 * 1f64.to_radians().tan();
    for p in [
        Vector3::new(1.1e-3, 4e-3, 0.5e-3),
        Vector3::new(2.9e-3, 4e-3 + dy, 0.5e-3),
        Vector3::new(2e-3, 5e-3, 2.5e-3),
        Vector3::new(2e-3, 3e-3, 2.5e-3),
    ] {
        s.x.push(round32(p));
        s.body.push(1);
    }
    for f in [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]] {
        s.triangles.push(f.map(|k| base + k));
    }
    s.edges = unique_edges(&s.triangles);
    s
}

#[test]
fn mollified_nearly_parallel_edges_match_reference() {
    let s = parallel_edge_scene();
    let x1 = moved(&s, 0.2, 15);
    let mut a = setup(s, &[&x1.clone()], 16, 256);
    let (pairs, _, terms) = evaluated(&mut a, &x1);
    let rs = rest_sq(&a.s);
    let mollified = pairs
        .iter()
        .filter(|p| {
            p.kind == StencilKind::EdgeEdge && {
                let q: [Vector3<f64>; 4] = p.vertices.map(|v| x1[v as usize]);
                let c = (q[1] - q[0]).cross(&(q[3] - q[2])).norm_squared();
                c < 1e-3 * rs[p.a as usize] * rs[p.b as usize]
            }
        })
        .count();
    assert!(mollified >= 1, "no mollified edge-edge pair");
    assert!(compare_terms(&a, &terms) >= mollified);
    assert_no_validation_errors(&a.ctx);
}

#[test]
fn system_add_matches_reference() {
    use supple::contact::bal::system::{NodeSums, SystemAdd};
    use supple::contact::SystemBindings;
    let ctx = context(false);
    let n = 37;
    let mut r = rng(23);
    let st = BufferUsage::STORAGE | BufferUsage::HOST_WRITE;
    let inv_mass: Vec<f32> = (0..n).map(|i| if i % 5 == 0 { 0.0 } else { 1.0 }).collect();
    let v4 = |r: &mut rand_pcg::Pcg64, k: usize| -> Vec<[f32; 4]> {
        (0..k)
            .map(|_| {
                [
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                    0.0,
                ]
            })
            .collect()
    };
    // SPD diagonal blocks: identity scaled plus a small symmetric part.
    let spd = |r: &mut rand_pcg::Pcg64, scale: f32| -> Vec<[f32; 4]> {
        let mut out = Vec::new();
        for _ in 0..n {
            let a: f32 = r.random_range(0.0..0.2);
            out.push([scale, a, 0.0, 0.0]);
            out.push([a, scale, a, 0.0]);
            out.push([0.0, a, scale, 0.0]);
        }
        out
    };
    let node_grad = v4(&mut r, n);
    let node_diag = spd(&mut r, 2.0);
    let node_stiff: Vec<f32> = (0..n).map(|_| r.random_range(0.0..5.0)).collect();
    let rhs = v4(&mut r, n);
    let diag = spd(&mut r, 3.0);
    let stiff: Vec<f32> = (0..n).map(|_| r.random_range(1.0..5.0)).collect();
    let up4 = |name: &str, d: &[[f32; 4]]| ctx.upload_buffer(name, d, st).unwrap();
    let up1 = |name: &str, d: &[f32]| ctx.upload_buffer(name, d, st).unwrap();
    let system = SystemBindings {
        rhs: up4("rhs", &rhs),
        diag_blocks: up4("diag", &diag),
        inverse_diag_blocks: up4("inv", &vec![[0.0; 4]; 3 * n]),
        stiffness: up1("stiff", &stiff),
        direction: up4("dir", &vec![[0.0; 4]; n]),
    };
    let (g, d, s, w) = (
        up4("node_grad", &node_grad),
        up4("node_diag", &node_diag),
        up1("node_stiff", &node_stiff),
        up1("inv_mass", &inv_mass),
    );
    let add = SystemAdd::new(
        &ctx,
        NodeSums {
            gradient: &g,
            diag: &d,
            stiffness: &s,
        },
        &system,
        &w,
        n,
    )
    .unwrap();
    // σ⁰'s sums first (they read the right-hand side before the gradient pass changes it).
    add.sigma0.run().unwrap();
    let (dot_gpu, n2_gpu) = add.sigma0_sums().unwrap();
    add.gradient.run().unwrap();
    add.hessian.run().unwrap();
    // Reference.
    let vec3 = |v: &[[f32; 4]]| -> Vec<Vector3<f64>> {
        v.iter()
            .map(|p| Vector3::new(p[0] as f64, p[1] as f64, p[2] as f64))
            .collect()
    };
    let mat3 = |v: &[[f32; 4]]| -> Vec<Matrix3<f64>> {
        v.chunks(3)
            .map(|c| Matrix3::from_fn(|i, j| c[i][j] as f64))
            .collect()
    };
    let w64: Vec<f64> = inv_mass.iter().map(|&x| x as f64).collect();
    let (dot_ref, n2_ref) = twin::system_add_sigma0(&w64, &vec3(&node_grad), &vec3(&rhs));
    assert!(dot_ref.abs() > 0.1 && n2_ref > 1.0, "{dot_ref} {n2_ref}");
    assert!(
        (dot_gpu - dot_ref).abs() < 1e-4 * n2_ref,
        "σ⁰ dot {dot_gpu} vs {dot_ref}"
    );
    assert!(
        (n2_gpu - n2_ref).abs() < 1e-5 * n2_ref,
        "σ⁰ |b|² {n2_gpu} vs {n2_ref}"
    );
    let mut rhs_ref = vec3(&rhs);
    let norm2 = twin::system_add_gradient(&w64, &vec3(&node_grad), &mut rhs_ref);
    let mut diag_ref = mat3(&diag);
    let mut inv_ref = vec![Matrix3::zeros(); n];
    let mut stiff_ref: Vec<f64> = stiff.iter().map(|&x| x as f64).collect();
    let ns: Vec<f64> = node_stiff.iter().map(|&x| x as f64).collect();
    twin::system_add_hessian(
        &w64,
        &mat3(&node_diag),
        &ns,
        &mut diag_ref,
        &mut inv_ref,
        &mut stiff_ref,
    );
    let rhs_gpu = vec3(&system.rhs.read().unwrap());
    let diag_gpu = mat3(&system.diag_blocks.read().unwrap());
    let inv_gpu = mat3(&system.inverse_diag_blocks.read().unwrap());
    let stiff_gpu = system.stiffness.read().unwrap();
    for v in 0..n {
        assert!((rhs_gpu[v] - rhs_ref[v]).norm() < 1e-5, "rhs {v}");
        assert!((diag_gpu[v] - diag_ref[v]).norm() < 1e-5, "diag {v}");
        assert!(
            (stiff_gpu[v] as f64 - stiff_ref[v]).abs() < 1e-5,
            "stiffness {v}"
        );
        if w64[v] != 0.0 {
            assert!((inv_gpu[v] - inv_ref[v]).norm() < 1e-4, "inverse {v}");
        } else {
            // Fixed vertices: untouched.
            assert_eq!(inv_gpu[v], Matrix3::zeros(), "inverse {v}");
        }
    }
    let norm = add.rhs_norm().unwrap();
    assert!(
        (norm - norm2.sqrt()).abs() < 1e-4 * norm2.sqrt().max(1.0),
        "{norm} vs {}",
        norm2.sqrt()
    );
    assert_no_validation_errors(&ctx);
}
