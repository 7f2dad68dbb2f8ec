//! Proximity search (spatial hashing) on lavapipe: every kernel against its plain-Rust reference,
//! the pair sets against the brute-force f64 set on sample and random deformed meshes, rod
//! curves as extra edges, the body filter, overflow detection and redo, and the reuse bound under adversarial motion.

use rand::Rng;
use std::collections::{HashMap, HashSet};
use supple::cpu_reference::distance::{edge_edge, point_triangle};
use supple::cpu_reference::proximity as reference;
use supple::math::Vec3;
use supple::mesh::TriMesh;
use supple::proximity::{
    BodyFilter, MaxDisplacement, Pair, ProximityMesh, ProximityOptions, ProximitySearch,
    ReuseTracker,
};
use supple::vk::{CompileOptions, Graph};
use supple_gpu_tests::{assert_no_validation_errors, context, rng};

/// Pairs whose exact distance is within this relative band of D may differ (f32 rounding).
const BOUNDARY: f64 = 1e-5;

/// f32 distances are accurate relative to the coordinates they are computed from, not to the
/// distance: a pair's absolute slack is this many f32 epsilons times its extent (the largest
/// coordinate difference among its vertices). Drivers may contract a*b+c into fma and divide
/// to 2.5 ulp (Vulkan's precision rules), so results differ from the IEEE reference that much.
const ULPS_OF_EXTENT: f64 = 16.0 * f32::EPSILON as f64;

/// Largest coordinate difference among `pts`.
fn extent(pts: &[Vec3]) -> f64 {
    pts.iter().map(|p| (p - pts[0]).amax()).fold(0.0, f64::max)
}

fn data(rel: &str) -> String {
    format!("{}/../data/meshes/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn load_surface(rel: &str) -> TriMesh {
    let l = supple::mesh::load(data(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    if l.tets.tets.is_empty() {
        l.surface
    } else {
        l.tets.boundary_surface_compact().0
    }
}

/// Positions rounded to f32 (what the GPU sees), widened back to f64 for the references.
fn f32_round(x: &[[f64; 3]]) -> Vec<[f64; 3]> {
    x.iter().map(|p| p.map(|c| c as f32 as f64)).collect()
}

fn mean_edge(m: &ProximityMesh, x: &[[f64; 3]]) -> f64 {
    m.mean_edge_length(x)
}

/// `rest + U(-s l, s l)^3` per vertex, positions relative to the bounding-box centre.
fn deform(rest: &[[f64; 3]], l: f64, s: f64, seed: u64) -> Vec<[f64; 3]> {
    let mut r = rng(seed);
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in rest {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let c: [f64; 3] = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
    let x: Vec<[f64; 3]> = rest
        .iter()
        .map(|p| std::array::from_fn(|k| p[k] - c[k] + r.random_range(-s * l..=s * l)))
        .collect();
    f32_round(&x)
}

fn v(p: [f64; 3]) -> Vec3 {
    Vec3::new(p[0], p[1], p[2])
}

/// Exact vertex–triangle distance and the pair's f32 slack.
fn vt_dist(x: &[[f64; 3]], m: &ProximityMesh, a: u32, b: u32) -> (f64, f64) {
    let t = m.triangles[b as usize];
    let p = [a, t[0], t[1], t[2]].map(|i| v(x[i as usize]));
    let d = point_triangle(&p[0], &p[1], &p[2], &p[3]).sq_dist.sqrt();
    (d, ULPS_OF_EXTENT * extent(&p))
}

/// Exact edge–edge distance and the pair's f32 slack.
fn ee_dist(x: &[[f64; 3]], m: &ProximityMesh, a: u32, b: u32) -> (f64, f64) {
    let (ea, eb) = (m.edges[a as usize], m.edges[b as usize]);
    let p = [ea[0], ea[1], eb[0], eb[1]].map(|i| v(x[i as usize]));
    let d = edge_edge(&p[0], &p[1], &p[2], &p[3]).sq_dist.sqrt();
    (d, ULPS_OF_EXTENT * extent(&p))
}

/// Compares a GPU pair list with the brute-force set: no duplicates, no pair sharing a vertex,
/// every difference within the boundary band |dist - d| <= BOUNDARY d + the pair's f32 slack,
/// and every GPU distance within 1e-4 of the exact one (relative) + that slack. Returns the
/// number of boundary differences.
fn compare(
    what: &str,
    gpu: &[Pair],
    brute: &[reference::RefPair],
    d: f64,
    dist: impl Fn(u32, u32) -> (f64, f64),
) -> usize {
    let mut g: HashMap<(u32, u32), f32> = HashMap::new();
    for p in gpu {
        assert!(
            g.insert((p.a, p.b), p.sq_dist).is_none(),
            "{what}: duplicate pair ({}, {})",
            p.a,
            p.b
        );
    }
    let mut boundary = 0;
    let mut b: HashMap<(u32, u32), f64> = HashMap::new();
    for r in brute {
        b.insert((r.a, r.b), r.dist);
        if !g.contains_key(&(r.a, r.b)) {
            let slack = dist(r.a, r.b).1;
            assert!(
                r.dist >= d * (1.0 - BOUNDARY) - slack,
                "{what}: GPU misses pair ({}, {}) at distance {} < D = {d}",
                r.a,
                r.b,
                r.dist
            );
            boundary += 1;
        }
    }
    for (&(a, bb), &sq) in &g {
        let (exact, slack) = dist(a, bb);
        assert!(
            ((sq as f64).sqrt() - exact).abs() <= 1e-4 * exact.max(d) + slack,
            "{what}: pair ({a}, {bb}) GPU distance {} vs exact {exact}",
            (sq as f64).sqrt()
        );
        if !b.contains_key(&(a, bb)) {
            assert!(
                exact < d * (1.0 + BOUNDARY) + slack,
                "{what}: GPU reports pair ({a}, {bb}) at distance {exact} >= D = {d}"
            );
            boundary += 1;
        }
    }
    boundary
}

fn check_against_brute_force(
    s: &ProximitySearch,
    m: &ProximityMesh,
    x: &[[f64; 3]],
    d: f64,
    filter: BodyFilter,
    what: &str,
) -> (usize, usize) {
    let got = s.read_pairs().expect("read pairs");
    let brute = reference::brute_force(x, &m.triangles, &m.edges, &m.body, d, filter);
    for p in &got.vertex_triangle {
        assert!(
            !m.triangles[p.b as usize].contains(&p.a),
            "{what}: adjacent vertex–triangle pair"
        );
    }
    for p in &got.edge_edge {
        let (ea, eb) = (m.edges[p.a as usize], m.edges[p.b as usize]);
        assert!(
            p.a < p.b && !ea.iter().any(|q| eb.contains(q)),
            "{what}: adjacent or unordered edge–edge pair"
        );
    }
    let bvt = compare(
        &format!("{what} vt"),
        &got.vertex_triangle,
        &brute.vertex_triangle,
        d,
        |a, b| vt_dist(x, m, a, b),
    );
    let bee = compare(
        &format!("{what} ee"),
        &got.edge_edge,
        &brute.edge_edge,
        d,
        |a, b| ee_dist(x, m, a, b),
    );
    eprintln!(
        "{what}: D = {d:.4e}: {} vt / {} ee pairs (brute force {} / {}), boundary differences {bvt} / {bee}",
        got.vertex_triangle.len(),
        got.edge_edge.len(),
        brute.vertex_triangle.len(),
        brute.edge_edge.len()
    );
    (brute.vertex_triangle.len(), brute.edge_edge.len())
}

#[test]
fn kernels_match_reference() {
    let ctx = context(false);
    // Default cells, and small cells: the torus then spans more than 2^k cells per axis, so
    // buckets hold several (periodic) cells.
    for cell in [None, Some(0.35)] {
        kernels_case(&ctx, cell);
    }
    assert_no_validation_errors(&ctx);
}

fn kernels_case(ctx: &supple::Context, cell: Option<f64>) {
    let surf = load_surface("surface/torus.ply");
    let m = ProximityMesh::from_trimesh(&surf).expect("mesh");
    let l = mean_edge(&m, &surf.positions);
    let x = deform(&surf.positions, l, 0.2, 1);
    let mut o = ProximityOptions::new(0.5 * l);
    o.cell_size = cell.map(|c| c * l);
    o.axis_bits = cell.map(|_| 4);
    let mut s = ProximitySearch::new(ctx, m.clone(), &x, o).expect("search");
    let rep = s.run().expect("run");
    let p = s.params();
    let span: Vec<f32> = (0..3)
        .map(|k| {
            let (lo, hi) = x
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), q| (a.min(q[k]), b.max(q[k])));
            ((hi - lo) as f32) * p.inv_h
        })
        .collect();
    eprintln!("cells per axis {span:?}, 2^k = {}", 1u32 << p.axis_bits());
    // Both cases split the buckets into x slots (k = 4 here).
    assert!(p.order_bits > 0, "x slots exercised");
    if cell.is_some() {
        assert!(
            span.iter().any(|&c| c > (1u32 << p.axis_bits()) as f32),
            "no wrap"
        );
    }
    let gx = supple::proximity::spatial_hash::to_gpu_positions(&x);
    // Pass 1: cell counts.
    let counts = reference::cell_counts(&gx, &m.triangles, &m.edges, &p);
    let gpu_counts = s.cell_counts().read().expect("read");
    assert_eq!(&gpu_counts[..counts.len()], &counts[..], "cell counts");
    // Pass 2 (counting sort): entries grouped by key; within a key their order is that of the
    // atomics, so values are compared per key as sets, and the later checks use the GPU order.
    let (keys, vals, total) = reference::fill_cells(&gx, &m.triangles, &m.edges, &p);
    assert_eq!(total, rep.entries as u64, "entry total");
    let n_used = total as usize;
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.sort_by_key(|&i| keys[i]);
    let sorted_keys: Vec<u32> = idx.iter().map(|&i| keys[i]).collect();
    let nkeys = p.num_keys();
    // Triangle entries come first; only edge entries get keys and values (the rest keep the
    // sentinel key).
    let first_edge = sorted_keys.partition_point(|&k| (k as usize) < nkeys / 2);
    let gpu_keys = s.entry_keys().read().expect("read");
    assert_eq!(
        &gpu_keys[first_edge..],
        &sorted_keys[first_edge..],
        "edge keys grouped in key order"
    );
    assert!(
        gpu_keys[..first_edge].iter().all(|&k| k == p.sentinel()),
        "triangle entries keep the sentinel key"
    );
    let mut key_counts = vec![0u32; nkeys];
    for &k in &keys[..n_used] {
        key_counts[k as usize] += 1;
    }
    // place_entries counted every key back down to 0 while taking its slots.
    assert!(
        s.key_counts().read().expect("read").iter().all(|&c| c == 0),
        "per-key counters back at 0"
    );
    // Key runs: inclusive scan of the counts.
    let ends = s.key_ends().read().expect("read");
    let gpu_counts: Vec<u32> = (0..nkeys)
        .map(|k| ends[k] - if k == 0 { 0 } else { ends[k - 1] })
        .collect();
    assert_eq!(gpu_counts, key_counts, "entries per key");
    let ranges: Vec<[u32; 2]> = (0..nkeys)
        .map(|k| {
            let start = if k == 0 { 0 } else { ends[k - 1] };
            if ends[k] > start {
                [start, ends[k]]
            } else {
                [0, 0]
            }
        })
        .collect();
    assert_eq!(
        ranges,
        reference::bucket_ranges(&sorted_keys, &p),
        "key runs"
    );
    // Values: the edge index of edge entries, the triangle index (record word 2) of triangle
    // entries; the sentinel entries past the total are never written (unspecified).
    let gpu_recs = s.entry_records().read().expect("read");
    let mut svals = s.entry_values().read().expect("read");
    for (i, v) in svals.iter_mut().enumerate().take(first_edge) {
        *v = gpu_recs[i][2];
    }
    // Keys as the references take them (the GPU leaves triangle keys at the sentinel).
    let skeys = sorted_keys.clone();
    for r in ranges.iter().filter(|r| r[1] > r[0]) {
        let (a, b) = (r[0] as usize, r[1] as usize);
        let mut g = svals[a..b].to_vec();
        let mut e: Vec<u32> = idx[a..b].iter().map(|&i| vals[i]).collect();
        g.sort_unstable();
        e.sort_unstable();
        assert_eq!(g, e, "values of the run {r:?}");
    }
    // Pass 3: packed entry records (cell-local quantized boxes; triangle or edge vertices).
    let recs = reference::entry_records(&gx, &m.triangles, &m.edges, &skeys, &svals, &p);
    let mut n_recs = 0;
    for (i, r) in recs.iter().enumerate() {
        if let Some(r) = r {
            assert_eq!(gpu_recs[i], *r, "entry record {i}");
            n_recs += (i >= first_edge) as usize;
        }
    }
    assert!(n_recs > 0, "the test should have edge entries");
    // Domain and the choice of the query_ee variant.
    let dom = reference::domain(&gx, &p);
    let one_frame = reference::buckets_are_cells(&dom, &p);
    assert_eq!(rep.one_frame, one_frame, "one-frame flag");
    assert_eq!(
        one_frame,
        cell.is_none(),
        "default cells fit 2^k, small cells wrap"
    );
    assert_eq!(
        s.query_args().read().expect("read"),
        reference::query_args(&dom, &ends, &p, 64).to_vec(),
        "query_ee variant arguments"
    );
    // Queries: GPU candidates = reference candidates minus some culled by the (conservative)
    // bounding-sphere test, which never culls a pair closer than D. The edge–edge candidates
    // are entry pairs: exactly the one-frame reference, or mapped to edges a subset of the
    // f32 reference.
    let st = s.status().read().expect("read");
    let cvt: Vec<[u32; 2]> = s.candidates_vt().read().expect("read")[..st[3] as usize].to_vec();
    let cee_entries: Vec<[u32; 2]> =
        s.candidates_ee().read().expect("read")[..st[4] as usize].to_vec();
    let cee: Vec<[u32; 2]> = cee_entries
        .iter()
        .map(|&[a, b]| {
            let (ea, eb) = (svals[a as usize], svals[b as usize]);
            [ea.min(eb), ea.max(eb)]
        })
        .collect();
    if one_frame {
        let r1 = reference::query_edge_edge_one_frame(&m.body, &recs, &ranges, &skeys, &p);
        let gs: HashSet<[u32; 2]> = cee_entries.iter().copied().collect();
        let rs: HashSet<[u32; 2]> = r1.iter().copied().collect();
        assert_eq!(gs.len(), cee_entries.len(), "ee: duplicate candidates");
        assert_eq!(gs, rs, "ee: one-frame candidates");
        let edges: HashSet<[u32; 2]> = cee.iter().copied().collect();
        assert_eq!(edges.len(), cee.len(), "ee: a pair of edges found twice");
    }
    let rvt = reference::query_vertex_triangle(&gx, &m.body, &m.triangles, &svals, &ranges, &p);
    // Vertex–triangle: exactly the quantized reference, a superset of the f32 box test.
    let qvt =
        reference::query_vertex_triangle_quantized(&gx, &m.body, &m.triangles, &recs, &ranges, &p);
    let gvt: HashSet<[u32; 2]> = cvt.iter().copied().collect();
    assert_eq!(gvt.len(), cvt.len(), "vt: duplicate candidates");
    assert_eq!(
        gvt,
        qvt.iter().copied().collect::<HashSet<_>>(),
        "vt: quantized candidates"
    );
    assert!(
        rvt.iter().all(|c| gvt.contains(c)),
        "vt: f32 candidates missing from the quantized ones"
    );
    let ree = reference::query_edge_edge(&gx, &m.body, &m.edges, &skeys, &svals, &ranges, &p);
    for (what, mode, g, r) in [("vt", 0, &cvt, &rvt), ("ee", 1, &cee, &ree)] {
        if mode == 0 {
            continue; // checked above
        }
        if one_frame {
            // A superset of the f32 candidates (the quantized boxes contain the f32 boxes).
            let gs: HashSet<[u32; 2]> = g.iter().copied().collect();
            let rs: HashSet<[u32; 2]> = r.iter().copied().collect();
            assert!(
                rs.is_subset(&gs),
                "ee: f32 candidates missing from the one-frame ones"
            );
            continue;
        }
        let gs: HashSet<[u32; 2]> = g.iter().copied().collect();
        let rs: HashSet<[u32; 2]> = r.iter().copied().collect();
        assert_eq!(gs.len(), g.len(), "{what}: duplicate candidates");
        assert_eq!(rs.len(), r.len(), "{what}: duplicate reference candidates");
        assert!(
            gs.is_subset(&rs),
            "{what}: GPU candidates not in the reference"
        );
        let culled: Vec<[u32; 2]> = rs.difference(&gs).copied().collect();
        let near = reference::narrow(&gx, &m.triangles, &m.edges, &culled, mode, &p);
        assert!(
            near.iter().all(|q| q.sq_dist >= p.d * p.d * (1.0 - 2e-5)),
            "{what}: a culled candidate is closer than D: {near:?}"
        );
        assert!(!r.is_empty(), "{what}: the test should produce candidates");
        eprintln!(
            "{what}: {} candidates, {} culled by spheres",
            g.len(),
            culled.len()
        );
    }
    // Exact distance filter: the GPU pairs are the reference filter of the GPU candidates.
    let got = s.read_pairs().expect("pairs");
    let fvt = reference::narrow(&gx, &m.triangles, &m.edges, &cvt, 0, &p);
    let fee = reference::narrow(&gx, &m.triangles, &m.edges, &cee, 1, &p);
    for (what, g, r) in [
        ("vt", &got.vertex_triangle, &fvt),
        ("ee", &got.edge_edge, &fee),
    ] {
        let gm: HashMap<(u32, u32), (f32, u32)> = g
            .iter()
            .map(|q| ((q.a, q.b), (q.sq_dist, q.kind)))
            .collect();
        let rm: HashMap<(u32, u32), (f32, u32)> = r
            .iter()
            .map(|q| ((q.a, q.b), (q.sq_dist, q.kind)))
            .collect();
        assert_eq!(gm.len(), g.len(), "{what}: duplicates");
        let d2 = p.d * p.d;
        let mut kinds_differ = 0;
        for (k, &(sq, kind)) in &rm {
            match gm.get(k) {
                Some(&(gs, gk)) => {
                    assert!(
                        (gs - sq).abs() <= 1e-5 * sq.max(d2),
                        "{what} {k:?}: GPU sq dist {gs} vs reference {sq}"
                    );
                    kinds_differ += (gk != kind) as usize;
                }
                None => assert!(sq >= d2 * (1.0 - 2e-5), "{what}: GPU misses {k:?} ({sq})"),
            }
        }
        for (k, &(gs, _)) in &gm {
            if !rm.contains_key(k) {
                assert!(gs >= d2 * (1.0 - 2e-5), "{what}: GPU extra {k:?} ({gs})");
            }
        }
        // Kinds agree away from ties (f32 rounding may flip a near-tie).
        assert!(
            kinds_differ * 100 <= r.len(),
            "{what}: {kinds_differ} of {} kinds differ",
            r.len()
        );
        assert!(!r.is_empty(), "{what}: the test should produce pairs");
    }
    let nargs = s.narrow_args().read().expect("read");
    assert_eq!(
        nargs,
        reference::grid_args(st[3], st[4], &p, 64).to_vec(),
        "narrow args"
    );
    // Finish: status and indirect arguments.
    assert_eq!(
        &st[..5],
        &[
            rep.entries,
            rep.vertex_triangle,
            rep.edge_edge,
            rep.candidates_vertex_triangle,
            rep.candidates_edge_edge
        ],
        "status"
    );
    let args = s.indirect_args().read().expect("read");
    assert_eq!(
        args,
        reference::indirect_args(st[1], st[2], &p, 64).to_vec(),
        "indirect args"
    );
}

#[test]
fn matches_brute_force_on_sample_meshes() {
    let ctx = context(false);
    for (i, rel) in [
        "surface/torus.ply",
        "surface/models/bear.ascii.stl",
        "tet/sphere_low/sphere_low.vtu",
        "surface/bunny.ply",
    ]
    .iter()
    .enumerate()
    {
        let surf = load_surface(rel);
        let m = ProximityMesh::from_trimesh(&surf).expect("mesh");
        let l = mean_edge(&m, &surf.positions);
        for (j, (noise, scale)) in [(0.0, 0.5), (0.1, 0.1), (0.3, 0.5), (0.3, 1.5)]
            .iter()
            .enumerate()
        {
            let x = deform(&surf.positions, l, *noise, (10 * i + j) as u64);
            let d = scale * l;
            let mut s = ProximitySearch::new(&ctx, m.clone(), &x, ProximityOptions::new(d))
                .expect("search");
            s.run().expect("run");
            let what = format!("{rel} noise {noise} D {scale} l");
            check_against_brute_force(&s, &m, &x, d, BodyFilter::default(), &what);
        }
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn crumpled_cloth_and_body_filter() {
    // Default cells, then 1 cm cells (the 1 m cloths span more than 2^k cells: periodic buckets).
    for cell in [None, Some(0.012)] {
        cloth_case(cell);
    }
}

fn cloth_case(cell: Option<f64>) {
    let ctx = context(false);
    // Two cloths of 24 x 24 cells, randomly crumpled and interpenetrating: bodies 0 and 1.
    let a = supple::mesh::procedural::cloth_grid([24, 24], [1.0, 1.0], [0.0, 0.0, 0.0]);
    let nv = a.positions.len();
    let mut tris = a.triangles.clone();
    tris.extend(a.triangles.iter().map(|t| t.map(|i| i + nv as u32)));
    let mut body = vec![0u32; nv];
    body.extend(vec![1u32; nv]);
    let mut r = rng(7);
    let mut rest: Vec<[f64; 3]> = a.positions.clone();
    rest.extend(
        a.positions
            .iter()
            .map(|p| [p[0] + 0.1, p[1] + 0.05, p[2] + 0.02]),
    );
    let x: Vec<[f64; 3]> = rest
        .iter()
        .map(|p| {
            let z = 0.08 * (7.0 * p[0]).sin() * (5.0 * p[1]).cos();
            [
                p[0] + r.random_range(-0.01..0.01),
                p[1] + r.random_range(-0.01..0.01),
                p[2] + z + r.random_range(-0.03..0.03),
            ]
        })
        .collect();
    let x = f32_round(&x);
    let m = ProximityMesh::new(tris, body).expect("mesh");
    let d = 0.03;
    for filter in [
        BodyFilter::default(),
        BodyFilter {
            within_body: false,
            between_bodies: true,
        },
        BodyFilter {
            within_body: true,
            between_bodies: false,
        },
    ] {
        let mut o = ProximityOptions::new(d);
        o.filter = filter;
        o.cell_size = cell;
        o.axis_bits = cell.map(|_| 5);
        let mut s = ProximitySearch::new(&ctx, m.clone(), &x, o).expect("search");
        s.run().expect("run");
        let (nvt, nee) =
            check_against_brute_force(&s, &m, &x, d, filter, &format!("cloth {filter:?}"));
        assert!(nvt > 0 && nee > 0, "the scene should produce pairs");
    }
    assert_no_validation_errors(&ctx);
}

/// Rods as curves: a crumpled cloth (body 0) and three random-walk polylines (bodies 1–3) through
/// and near it, passed as extra edges. The GPU pairs match brute force, which has rod–rod and
/// rod–cloth edge–edge pairs and rod-vertex–triangle pairs.
#[test]
fn rod_curves_match_brute_force() {
    let ctx = context(false);
    let a = supple::mesh::procedural::cloth_grid([12, 12], [0.5, 0.5], [-0.25, -0.25, 0.0]);
    let mut r = rng(11);
    let mut x: Vec<[f64; 3]> = a
        .positions
        .iter()
        .map(|p| {
            let z = 0.04 * (9.0 * p[0]).sin() * (7.0 * p[1]).cos();
            [p[0], p[1], p[2] + z + r.random_range(-0.005..0.005)]
        })
        .collect();
    let tris = a.triangles.clone();
    let mut body = vec![0u32; x.len()];
    let mut curves: Vec<[u32; 2]> = Vec::new();
    for rod in 0..3u32 {
        let first = x.len() as u32;
        let mut p = [
            r.random_range(-0.2..0.2),
            r.random_range(-0.2..0.2),
            r.random_range(-0.05..0.05),
        ];
        for k in 0..40u32 {
            x.push(p);
            body.push(1 + rod);
            if k > 0 {
                curves.push([first + k - 1, first + k]);
            }
            for c in &mut p {
                *c += r.random_range(-0.02..0.02);
            }
        }
    }
    let x = f32_round(&x);
    let m = ProximityMesh::with_curves(tris.clone(), &curves, body.clone()).expect("mesh");
    // Edges: the cloth's plus every curve segment (none is a cloth edge).
    let plain = ProximityMesh::new(tris.clone(), body.clone()).expect("mesh");
    assert_eq!(m.edges.len(), plain.edges.len() + curves.len());
    assert!(curves.iter().all(|c| m
        .edges
        .binary_search(&[c[0].min(c[1]), c[0].max(c[1])])
        .is_ok()));
    let d = 0.02;
    let mut s =
        ProximitySearch::new(&ctx, m.clone(), &x, ProximityOptions::new(d)).expect("search");
    s.run().expect("run");
    check_against_brute_force(&s, &m, &x, d, BodyFilter::default(), "rods");
    let got = s.read_pairs().expect("pairs");
    let nc = a.positions.len() as u32;
    let is_rod_edge = |e: u32| m.edges[e as usize][0] >= nc;
    let rod_rod = got
        .edge_edge
        .iter()
        .filter(|p| is_rod_edge(p.a) && is_rod_edge(p.b))
        .count();
    let rod_cloth = got
        .edge_edge
        .iter()
        .filter(|p| is_rod_edge(p.a) != is_rod_edge(p.b))
        .count();
    let rod_vertex_tri = got.vertex_triangle.iter().filter(|p| p.a >= nc).count();
    eprintln!("rods: {rod_rod} rod-rod, {rod_cloth} rod-cloth edge pairs, {rod_vertex_tri} rod vertex-triangle pairs");
    assert!(
        rod_rod > 0 && rod_cloth > 0 && rod_vertex_tri > 0,
        "{rod_rod} {rod_cloth} {rod_vertex_tri}"
    );
    // Bad curve input is named.
    let e =
        ProximityMesh::with_curves(tris.clone(), &[[0, x.len() as u32]], body.clone()).unwrap_err();
    assert!(e.contains("curve segment 0"), "{e}");
    let e = ProximityMesh::with_curves(tris, &[[3, 3]], body).unwrap_err();
    assert!(e.contains("repeats a vertex"), "{e}");
    assert_no_validation_errors(&ctx);
}

#[test]
fn overflow_is_detected_and_redone() {
    let ctx = context(false);
    let surf = load_surface("surface/torus.ply");
    let m = ProximityMesh::from_trimesh(&surf).expect("mesh");
    let l = mean_edge(&m, &surf.positions);
    let x = deform(&surf.positions, l, 0.3, 3);
    let d = 0.7 * l;
    let mut o = ProximityOptions::new(d);
    o.entry_capacity = Some(16);
    o.vt_capacity = Some(1);
    o.ee_capacity = Some(1);
    o.candidate_capacity = Some(1);
    let mut s = ProximitySearch::new(&ctx, m.clone(), &x, o).expect("search");
    let rep = s.run().expect("run");
    assert!(rep.redone >= 1, "overflow not detected: {rep:?}");
    let p = s.params();
    assert!(
        p.entry_cap >= rep.entries && p.vt_cap >= rep.vertex_triangle && p.ee_cap >= rep.edge_edge
    );
    let (nvt, nee) = check_against_brute_force(&s, &m, &x, d, BodyFilter::default(), "overflow");
    assert!(nvt > 1 && nee > 1);
    // Pairs overflow alone (entries fit): grow again from a deformed state with more pairs.
    let x2 = deform(&surf.positions, l, 0.6, 4);
    s.set_positions(&x2).expect("positions");
    let rep2 = s.run().expect("run");
    eprintln!("first {rep:?}, second {rep2:?}");
    check_against_brute_force(&s, &m, &x2, d, BodyFilter::default(), "overflow 2");
    assert_no_validation_errors(&ctx);
}

#[test]
fn stretched_primitive_grows_the_cells() {
    let ctx = context(false);
    let surf = load_surface("surface/torus.ply");
    let m = ProximityMesh::from_trimesh(&surf).expect("mesh");
    let l = mean_edge(&m, &surf.positions);
    let x = deform(&surf.positions, l, 0.3, 21);
    let d = 0.5 * l;
    let mut s =
        ProximitySearch::new(&ctx, m.clone(), &x, ProximityOptions::new(d)).expect("search");
    s.run().expect("run");
    // One vertex flies 20 000 edge lengths away: its triangles span far more than 4096 cells
    // per axis; the search must grow the cell size, redo, and still return the full set.
    let mut far = x.clone();
    far[0][0] += 2.0e4 * l;
    let far = f32_round(&far);
    s.set_positions(&far).expect("positions");
    let h0 = 1.0 / s.params().inv_h;
    let rep = s.run().expect("run");
    let h1 = 1.0 / s.params().inv_h;
    eprintln!("stretched: {rep:?}, cell size {h0} -> {h1}");
    assert!(rep.redone >= 1 && h1 > h0, "cell size did not grow");
    check_against_brute_force(&s, &m, &far, d, BodyFilter::default(), "stretched");
    assert_no_validation_errors(&ctx);
}

#[test]
fn displacement_kernel_matches_reference() {
    let ctx = context(false);
    let mut r = rng(5);
    let n = 10_000;
    let x0: Vec<[f32; 4]> = (0..n)
        .map(|_| {
            [
                r.random_range(-1.0..1.0),
                r.random_range(-1.0..1.0),
                r.random_range(-1.0..1.0),
                0.0,
            ]
        })
        .collect();
    let x1: Vec<[f32; 4]> = x0
        .iter()
        .map(|p| {
            [
                p[0] + r.random_range(-0.01..0.01),
                p[1],
                p[2] + r.random_range(-0.02..0.02),
                0.0,
            ]
        })
        .collect();
    let usage = supple::vk::BufferUsage::STORAGE;
    let b0 = ctx.upload_buffer("x0", &x0, usage).expect("upload");
    let b1 = ctx.upload_buffer("x1", &x1, usage).expect("upload");
    let md = MaxDisplacement::new(&ctx, n).expect("alloc");
    let mut g = Graph::new("displacement");
    md.record(&mut g, &b0, &b1);
    g.compile(&ctx, CompileOptions::default())
        .expect("compile")
        .run()
        .expect("run");
    let want = reference::displacements(&x0, &x1);
    let got = md.lengths().read().expect("read");
    for (i, (a, b)) in got.iter().zip(&want).enumerate() {
        assert!(
            (a - b).abs() <= 1e-6 * b.max(1e-6),
            "vertex {i}: {a} vs {b}"
        );
    }
    let max = supple::cpu_reference::reduce::max(&want);
    assert_eq!(md.read().expect("read") as f32, max);
    assert_no_validation_errors(&ctx);
}

#[test]
fn reuse_tracker_never_skips_a_needed_search() {
    let ctx = context(false);
    let surf = load_surface("surface/torus.ply");
    let m = ProximityMesh::from_trimesh(&surf).expect("mesh");
    let l = mean_edge(&m, &surf.positions);
    let mut x = deform(&surf.positions, l, 0.1, 9);
    let (d_min, d_max) = (0.3 * l, 0.8 * l);
    let mut tracker = ReuseTracker::new(d_min, d_max).expect("tracker");
    let mut s =
        ProximitySearch::new(&ctx, m.clone(), &x, ProximityOptions::new(d_max)).expect("search");
    let usage = supple::vk::BufferUsage::STORAGE;
    let gx = supple::proximity::spatial_hash::to_gpu_positions(&x);
    let prev = ctx.upload_buffer("prev", &gx, usage).expect("upload");
    let cur = ctx.upload_buffer("cur", &gx, usage).expect("upload");
    let md = MaxDisplacement::new(&ctx, x.len()).expect("alloc");
    let mut g = Graph::new("displacement");
    md.record(&mut g, &prev, &cur);
    let dg = g.compile(&ctx, CompileOptions::default()).expect("compile");
    let mut r = rng(11);
    let mut pairs = None;
    let (mut searches, steps) = (0, 40);
    let centre = [0.0f64; 3];
    for step in 0..steps {
        if tracker.needs_search() {
            s.set_positions(&x).expect("positions");
            s.run().expect("run");
            pairs = Some(s.read_pairs().expect("pairs"));
            tracker.searched();
            searches += 1;
        }
        // Adversarial motion: contraction towards the centre (opposite sides approach at
        // nearly twice the step), a random jitter, and every few steps a large jump.
        let step_len = if step % 7 == 6 {
            0.4 * l
        } else {
            r.random_range(0.0..0.08) * l
        };
        let x_new: Vec<[f64; 3]> = x
            .iter()
            .map(|p| {
                let dir: [f64; 3] = std::array::from_fn(|k| centre[k] - p[k]);
                let n = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2])
                    .sqrt()
                    .max(1e-12);
                let j: [f64; 3] = std::array::from_fn(|_| r.random_range(-0.3..0.3));
                std::array::from_fn(|k| p[k] + step_len * (0.7 * dir[k] / n + 0.3 * j[k] / 0.52))
            })
            .collect();
        let x_new = f32_round(&x_new);
        prev.write(&supple::proximity::spatial_hash::to_gpu_positions(&x))
            .expect("write");
        cur.write(&supple::proximity::spatial_hash::to_gpu_positions(&x_new))
            .expect("write");
        dg.run().expect("run");
        let max_disp = md.read().expect("read");
        let exact = x
            .iter()
            .zip(&x_new)
            .map(|(a, b)| {
                ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
            })
            .fold(0.0, f64::max);
        assert!(
            max_disp >= exact * (1.0 - 1e-6),
            "GPU max displacement {max_disp} below exact {exact}"
        );
        x = x_new;
        tracker.moved(max_disp);
        if tracker.needs_search() {
            continue;
        }
        // The pair set must hold every pair closer than the bound (>= D_min).
        let bound = tracker.bound();
        assert!(bound >= d_min);
        let have = pairs.as_ref().expect("searched");
        let brute = reference::brute_force(
            &x,
            &m.triangles,
            &m.edges,
            &m.body,
            bound,
            BodyFilter::default(),
        );
        let vt: std::collections::HashSet<(u32, u32)> =
            have.vertex_triangle.iter().map(|p| (p.a, p.b)).collect();
        let ee: std::collections::HashSet<(u32, u32)> =
            have.edge_edge.iter().map(|p| (p.a, p.b)).collect();
        for (set, list, what) in [
            (&vt, &brute.vertex_triangle, "vt"),
            (&ee, &brute.edge_edge, "ee"),
        ] {
            for p in list {
                assert!(
                    set.contains(&(p.a, p.b)) || p.dist >= bound * (1.0 - BOUNDARY),
                    "step {step}: reused set misses {what} pair ({}, {}) at {} < bound {bound}",
                    p.a,
                    p.b,
                    p.dist
                );
            }
        }
    }
    eprintln!("reuse: {searches} searches in {steps} steps");
    assert!(
        searches > 2 && searches < steps,
        "{searches} searches in {steps} steps"
    );
    assert_no_validation_errors(&ctx);
}
