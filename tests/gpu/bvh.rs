//! LBVH kernels (`kernels/bvh/*.comp`, host `supple::bvh`) against the plain-Rust reference
//! (`supple::cpu_reference::bvh`): centroid bounds, Morton codes, tree topology and node boxes
//! equal the reference exactly; every internal box contains its children; overlap,
//! nearest-within-radius and point-in-tet queries equal brute force on random deformed meshes
//! and on the sample mesh `sphere_low`, after builds and after refits; overflow of the pair
//! buffer is reported with the true count. The bunny test prints the build/refit GPU times.
use rand::Rng;
use supple::bvh::{Lbvh, MortonBits, NearestOutput, PairOutput, PointInTetOutput, PrimitiveKind};
use supple::cpu_reference::bvh as reference;
use supple::cpu_reference::bvh::{Aabb, INVALID};
use supple::mesh::{TetMesh, TriMesh};
use supple::vk::{BufferUsage, CompileOptions, Context, GpuBuffer, Graph};
use supple_gpu_tests::{assert_no_validation_errors, context, rng};

fn data(rel: &str) -> String {
    format!("{}/../data/meshes/{rel}", env!("CARGO_MANIFEST_DIR"))
}

fn run(ctx: &Context, g: &Graph) {
    g.compile(ctx, CompileOptions::default())
        .expect("compile")
        .run()
        .expect("run");
}

fn to_f32(p: &[[f64; 3]]) -> Vec<[f32; 4]> {
    p.iter()
        .map(|x| [x[0] as f32, x[1] as f32, x[2] as f32, 0.0])
        .collect()
}

/// Smooth warp plus per-vertex noise of amplitude `noise` (m).
fn deform(p: &[[f32; 4]], seed: u64, noise: f32) -> Vec<[f32; 4]> {
    let mut r = rng(seed);
    p.iter()
        .map(|x| {
            let w = 0.1 * (3.0 * x[1]).sin();
            [
                x[0] + w + noise * r.random_range(-1.0..1.0),
                x[1] + 0.05 * (2.0 * x[2]).cos() + noise * r.random_range(-1.0..1.0),
                x[2] - w + noise * r.random_range(-1.0..1.0),
                0.0,
            ]
        })
        .collect()
}

fn sphere_tets() -> TetMesh {
    supple::mesh::procedural::sphere([0.1, -0.2, 0.3], 0.5, 8).expect("procedural sphere")
}

fn flat<const K: usize>(v: &[[u32; K]]) -> Vec<u32> {
    v.iter().flatten().copied().collect()
}

fn mean_edge(p: &[[f32; 4]], edges: &[[u32; 2]]) -> f32 {
    let s: f32 = edges
        .iter()
        .map(|e| {
            let (a, b) = (p[e[0] as usize], p[e[1] as usize]);
            ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
        })
        .sum();
    s / edges.len().max(1) as f32
}

/// Builds on the GPU and checks bounds, keys, order, topology and boxes against the reference.
fn check_build(
    ctx: &Context,
    pos: &[[f32; 4]],
    idx: &[u32],
    kind: PrimitiveKind,
    bits: MortonBits,
) {
    check_build_fences(ctx, pos, idx, kind, bits, None)
}

/// [`check_build`] with the refit's fence mode forced (`None`: the device default).
fn check_build_fences(
    ctx: &Context,
    pos: &[[f32; 4]],
    idx: &[u32],
    kind: PrimitiveKind,
    bits: MortonBits,
    fences: Option<bool>,
) {
    let arity = kind.arity();
    let mut bvh = Lbvh::new(ctx, kind, idx, bits).expect("lbvh");
    if let Some(f) = fences {
        bvh.set_refit_fences(f);
    }
    let positions = ctx
        .upload_buffer("positions", pos, BufferUsage::STORAGE)
        .expect("upload");
    let mut g = Graph::new("build");
    bvh.record_build(&mut g, &positions);
    run(ctx, &g);
    let want = reference::build(pos, idx, arity, bits.per_axis());
    let boxes = reference::primitive_boxes(pos, idx, arity);
    assert_eq!(
        bvh.read_centroid_bounds().expect("bounds"),
        reference::centroid_bounds(&boxes)
    );
    let got = bvh.read_tree().expect("read tree");
    assert_eq!(got.keys, want.keys, "Morton codes");
    assert_eq!(got.prims, want.prims, "leaf order");
    assert_eq!(got.topology, want.topology, "topology");
    assert_eq!(got.boxes, want.boxes, "node boxes");
    check_containment(&got);

    // Refit after deformation: boxes equal the reference refit of the same topology.
    let moved = deform(pos, 17, 0.01);
    positions.write(&moved).expect("write");
    let mut g = Graph::new("refit");
    bvh.record_refit(&mut g, &positions);
    run(ctx, &g);
    let mut want = want;
    reference::refit(&mut want, &moved, idx);
    let got = bvh.read_tree().expect("read tree");
    assert_eq!(got.topology, want.topology, "refit keeps topology");
    assert_eq!(got.boxes, want.boxes, "refit boxes");
    check_containment(&got);
}

fn check_containment(t: &reference::Tree) {
    let n = t.len();
    for i in 0..n.saturating_sub(1) {
        for c in t.topology.children[i] {
            assert!(
                t.boxes[i].contains_box(&t.boxes[c as usize]),
                "node {i} does not contain child {c}"
            );
        }
    }
}

fn random_soup(n: usize, seed: u64) -> (Vec<[f32; 4]>, Vec<u32>) {
    let mut r = rng(seed);
    let mut pos = Vec::new();
    let mut idx = Vec::new();
    for t in 0..n {
        let c: [f32; 3] = [r.random(), r.random(), r.random()];
        for _ in 0..3 {
            pos.push([
                c[0] + 0.03 * r.random::<f32>(),
                c[1] + 0.03 * r.random::<f32>(),
                c[2] + 0.03 * r.random::<f32>(),
                0.0,
            ]);
        }
        let b = 3 * t as u32;
        idx.extend([b, b + 1, if t % 3 == 1 { b - 1 } else { b + 2 }]);
    }
    // Duplicate a few triangles exactly so that equal Morton codes occur.
    for t in 0..20u32 {
        idx.extend([3 * t, 3 * t + 1, 3 * t + 2]);
    }
    (pos, idx)
}

#[test]
fn build_and_refit_match_reference() {
    let ctx = context(false);
    let (pos, idx) = random_soup(3000, 1);
    for bits in [MortonBits::B63, MortonBits::B30] {
        check_build(&ctx, &pos, &idx, PrimitiveKind::Triangles, bits);
    }
    // Both refit memory-ordering modes (fenced, as on GPUs, and unfenced, as on CPU devices).
    for fences in [true, false] {
        check_build_fences(
            &ctx,
            &pos,
            &idx,
            PrimitiveKind::Triangles,
            MortonBits::B63,
            Some(fences),
        );
    }
    let tets = sphere_tets();
    let tp = deform(&to_f32(&tets.positions), 2, 0.005);
    check_build(
        &ctx,
        &tp,
        &flat(&tets.tets),
        PrimitiveKind::Tetrahedra,
        MortonBits::B63,
    );
    let (surf, _) = tets.boundary_surface_compact();
    let sp = deform(&to_f32(&surf.positions), 3, 0.005);
    check_build(
        &ctx,
        &sp,
        &flat(&surf.edges()),
        PrimitiveKind::Edges,
        MortonBits::B63,
    );
    // Tiny trees: one and two primitives.
    check_build(
        &ctx,
        &pos,
        &idx[..3],
        PrimitiveKind::Triangles,
        MortonBits::B63,
    );
    check_build(
        &ctx,
        &pos,
        &idx[..6],
        PrimitiveKind::Triangles,
        MortonBits::B63,
    );
    assert_no_validation_errors(&ctx);
}

/// Runs build (or refit) + self-overlap and compares with brute force; returns the pair count.
fn self_overlap_case(
    ctx: &Context,
    bvh: &Lbvh,
    positions: &GpuBuffer<[f32; 4]>,
    pos: &[[f32; 4]],
    idx: &[u32],
    margin: f32,
    refit_only: bool,
) -> usize {
    let want = reference::brute_self_overlap(pos, idx, bvh.kind().arity(), margin);
    let out = PairOutput::new(ctx, want.len() + 16).expect("pairs");
    let mut g = Graph::new("self_overlap");
    if refit_only {
        bvh.record_refit(&mut g, positions);
    } else {
        bvh.record_build(&mut g, positions);
    }
    bvh.record_self_overlap(&mut g, margin, &out);
    run(ctx, &g);
    let mut got = out.read().expect("read").expect("no overflow");
    got.sort_unstable();
    assert_eq!(got.len(), want.len(), "pair count (margin {margin})");
    assert_eq!(got, want, "pairs (margin {margin})");
    got.len()
}

fn surface_overlap_checks(ctx: &Context, surf: &TriMesh, seed: u64) {
    let tris = flat(&surf.triangles);
    let edges = surf.edges();
    let eidx = flat(&edges);
    let rest = to_f32(&surf.positions);
    let h = mean_edge(&rest, &edges);
    for (kind, idx) in [
        (PrimitiveKind::Triangles, &tris),
        (PrimitiveKind::Edges, &eidx),
    ] {
        let bvh = Lbvh::new(ctx, kind, idx, MortonBits::B63).expect("lbvh");
        let p0 = deform(&rest, seed, 0.2 * h);
        let positions = ctx
            .upload_buffer("positions", &p0, BufferUsage::STORAGE)
            .expect("upload");
        let mut total = 0;
        for margin in [0.0, 0.5 * h] {
            total += self_overlap_case(ctx, &bvh, &positions, &p0, idx, margin, false);
        }
        // Refit-only updates: move the vertices, keep the topology from the build above.
        for step in 0..2 {
            let p1 = deform(&p0, seed + 10 + step, 0.3 * h);
            positions.write(&p1).expect("write");
            total += self_overlap_case(ctx, &bvh, &positions, &p1, idx, 0.25 * h, true);
        }
        assert!(total > 0, "test produced no pairs");
    }
}

#[test]
fn self_overlap_matches_brute_force_on_deformed_meshes() {
    let ctx = context(false);
    let (surf, _) = sphere_tets().boundary_surface_compact();
    surface_overlap_checks(&ctx, &surf, 5);
    // A crumpled cloth: many near self-contacts.
    let cloth = supple::mesh::procedural::cloth_grid([24, 24], [1.0, 1.0], [0.0, 0.0, 0.0]);
    let mut c = cloth.clone();
    for p in &mut c.positions {
        p[2] = 0.3 * (6.0 * p[0]).sin() * (5.0 * p[1]).cos();
        p[0] = 0.5 * p[0] + 0.2 * (4.0 * p[1]).sin();
    }
    surface_overlap_checks(&ctx, &c, 6);
    assert_no_validation_errors(&ctx);
}

#[test]
fn box_overlap_and_nearest_match_brute_force() {
    let ctx = context(false);
    let (surf, _) = sphere_tets().boundary_surface_compact();
    let edges = surf.edges();
    let rest = to_f32(&surf.positions);
    let h = mean_edge(&rest, &edges);
    let pos = deform(&rest, 8, 0.2 * h);
    let positions = ctx
        .upload_buffer("positions", &pos, BufferUsage::STORAGE)
        .expect("upload");
    // Vertex boxes (points) against triangles, excluding incident triangles.
    let tris = flat(&surf.triangles);
    let bvh = Lbvh::new(&ctx, PrimitiveKind::Triangles, &tris, MortonBits::B63).expect("lbvh");
    let nv = pos.len();
    let qboxes: Vec<[f32; 4]> = pos.iter().flat_map(|p| [*p, *p]).collect();
    let qb: Vec<Aabb> = pos
        .iter()
        .map(|p| Aabb {
            min: [p[0], p[1], p[2]],
            max: [p[0], p[1], p[2]],
        })
        .collect();
    let qverts: Vec<u32> = (0..nv as u32).collect();
    let qboxes_buf = ctx
        .upload_buffer("qboxes", &qboxes, BufferUsage::STORAGE)
        .expect("upload");
    let qverts_buf = ctx
        .upload_buffer("qverts", &qverts, BufferUsage::STORAGE)
        .expect("upload");
    let margin = 0.5 * h;
    let want = reference::brute_box_overlap(&pos, &tris, 3, &qb, &qverts, 1, margin);
    let want_all = reference::brute_box_overlap(&pos, &tris, 3, &qb, &[], 0, margin);
    assert!(want.len() < want_all.len() && !want.is_empty());
    let out = PairOutput::new(&ctx, want_all.len()).expect("pairs");
    for (qv, expect) in [(Some((&qverts_buf, 1)), &want), (None, &want_all)] {
        let mut g = Graph::new("box_overlap");
        bvh.record_build(&mut g, &positions);
        bvh.record_box_overlap(&mut g, &qboxes_buf, nv, qv, margin, &out);
        run(&ctx, &g);
        let mut got = out.read().expect("read").expect("no overflow");
        got.sort_unstable();
        assert_eq!(&got, expect);
    }

    // Nearest triangle / edge within a radius of random points (after a refit as well).
    let mut r = rng(9);
    let nq = 2000;
    let pts: Vec<[f32; 4]> = (0..nq)
        .map(|_| {
            [
                r.random_range(-0.6f32..0.8),
                r.random_range(-0.9f32..0.5),
                r.random_range(-0.4f32..1.0),
                0.0,
            ]
        })
        .collect();
    let pts_buf = ctx
        .upload_buffer("points", &pts, BufferUsage::STORAGE)
        .expect("upload");
    let eidx = flat(&edges);
    let ebvh = Lbvh::new(&ctx, PrimitiveKind::Edges, &eidx, MortonBits::B30).expect("lbvh");
    let near = NearestOutput::new(&ctx, nq).expect("out");
    for (tree, idx) in [(&bvh, &tris), (&ebvh, &eidx)] {
        let arity = tree.kind().arity();
        for (step, radius) in [(0u64, 0.15f32), (1, 0.4)] {
            let p = deform(&pos, 20 + step, 0.1 * h);
            positions.write(&p).expect("write");
            let mut g = Graph::new("nearest");
            if step == 0 {
                tree.record_build(&mut g, &positions);
            } else {
                tree.record_refit(&mut g, &positions);
            }
            tree.record_nearest(&mut g, &positions, &pts_buf, nq, radius, &near);
            run(&ctx, &g);
            let gp = near.prim.read().expect("read");
            let gd = near.sq_dist.read().expect("read");
            let r2 = radius * radius;
            let mut found = 0;
            for q in 0..nq {
                let x = [pts[q][0], pts[q][1], pts[q][2]];
                let want = reference::brute_nearest(&p, idx, arity, x, radius);
                let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 * a.max(b) + 1e-12;
                match (gp[q], want) {
                    (INVALID, None) => {}
                    (INVALID, Some((_, d))) => assert!(close(d, r2), "query {q}: missed"),
                    (g, None) => assert!(close(gd[q], r2), "query {q}: spurious {g}"),
                    (g, Some((w, d))) => {
                        found += 1;
                        let dg = reference::primitive_sq_dist(&p, idx, arity, g as usize, x);
                        assert!(close(gd[q], dg), "query {q}: distance of {g}");
                        assert!(g == w || close(dg, d), "query {q}: {g} vs {w}");
                    }
                }
            }
            assert!(found > nq / 10, "too few queries in range ({found})");
        }
    }
    assert_no_validation_errors(&ctx);
}

fn check_point_in_tet(ctx: &Context, tets: &TetMesh, seed: u64) {
    let idx = flat(&tets.tets);
    let rest = to_f32(&tets.positions);
    let bvh = Lbvh::new(ctx, PrimitiveKind::Tetrahedra, &idx, MortonBits::B63).expect("lbvh");
    let lo = reference::centroid_bounds(&reference::primitive_boxes(&rest, &idx, 4));
    let mut r = rng(seed);
    let mut pts: Vec<[f32; 4]> = (0..3000)
        .map(|_| {
            let mut p = [0.0f32; 4];
            for (k, x) in p.iter_mut().take(3).enumerate() {
                let ext = lo.max[k] - lo.min[k];
                *x = lo.min[k] - 0.1 * ext + 1.2 * ext * r.random::<f32>();
            }
            p
        })
        .collect();
    let positions = ctx
        .upload_buffer("positions", &rest, BufferUsage::STORAGE)
        .expect("upload");
    let nt = tets.tets.len();
    let ncent = nt.min(2000);
    pts.extend((0..ncent).map(|t| {
        let mut c = [0.0f32; 4];
        for v in &tets.tets[t] {
            for k in 0..3 {
                c[k] += 0.25 * rest[*v as usize][k];
            }
        }
        c
    }));
    let nq = pts.len();
    let pts_buf = ctx
        .upload_buffer("points", &pts, BufferUsage::STORAGE)
        .expect("upload");
    let out = PointInTetOutput::new(ctx, nq).expect("out");
    let eps = 1e-6;
    for step in 0..2u64 {
        let p = if step == 0 {
            rest.clone()
        } else {
            deform(&rest, seed + 1, 0.002)
        };
        positions.write(&p).expect("write");
        let mut g = Graph::new("point_in_tet");
        if step == 0 {
            bvh.record_build(&mut g, &positions);
        } else {
            bvh.record_refit(&mut g, &positions);
        }
        bvh.record_point_in_tet(&mut g, &positions, &pts_buf, nq, eps, &out);
        run(ctx, &g);
        let gt = out.tet.read().expect("read");
        let gb = out.bary.read().expect("read");
        let minb = |t: u32, x: [f32; 3]| {
            let v = &idx[4 * t as usize..4 * t as usize + 4];
            reference::tet_barycentric(&p, [v[0], v[1], v[2], v[3]], x)
                .map(|b| b[0].min(b[1]).min(b[2]).min(b[3]))
                .unwrap_or(f32::NEG_INFINITY)
        };
        let mut inside = 0;
        for q in 0..nq {
            let x = [pts[q][0], pts[q][1], pts[q][2]];
            let want = reference::brute_point_in_tet(&p, &idx, x, eps);
            match (gt[q], want) {
                (INVALID, None) => {}
                (INVALID, Some((w, _))) => {
                    assert!(minb(w, x) < -eps + 1e-5, "query {q}: missed tet {w}")
                }
                (g, None) => assert!(minb(g, x) < -eps + 1e-5, "query {q}: spurious tet {g}"),
                (g, Some((w, wb))) => {
                    inside += 1;
                    if g == w {
                        for k in 0..4 {
                            assert!((gb[q][k] - wb[k]).abs() < 1e-4, "query {q}: bary");
                        }
                    } else {
                        assert!(
                            (minb(g, x) - minb(w, x)).abs() < 1e-5,
                            "query {q}: {g} vs {w}"
                        );
                    }
                }
            }
            // Tet centroids (rest shape) lie in their own tet.
            if step == 0 && q >= nq - ncent {
                assert_eq!(gt[q], (q - (nq - ncent)) as u32, "centroid {q}");
            }
        }
        assert!(inside > ncent, "too few points inside ({inside})");
    }
}

#[test]
fn point_in_tet_matches_brute_force() {
    let ctx = context(false);
    check_point_in_tet(&ctx, &sphere_tets(), 11);
    assert_no_validation_errors(&ctx);
}

#[test]
fn sample_mesh_sphere_low() {
    let ctx = context(false);
    let loaded = supple::mesh::load(data("tet/sphere_low/sphere_low.vtu")).expect("sphere_low");
    let tets = loaded.tets;
    assert!(!tets.tets.is_empty());
    let idx = flat(&tets.tets);
    let p = to_f32(&tets.positions);
    check_build(&ctx, &p, &idx, PrimitiveKind::Tetrahedra, MortonBits::B63);
    check_point_in_tet(&ctx, &tets, 12);
    let (surf, _) = tets.boundary_surface_compact();
    let sp = to_f32(&surf.positions);
    check_build(
        &ctx,
        &sp,
        &flat(&surf.triangles),
        PrimitiveKind::Triangles,
        MortonBits::B63,
    );
    surface_overlap_checks(&ctx, &surf, 13);
    assert_no_validation_errors(&ctx);
}

#[test]
fn overflow_reports_true_count() {
    let ctx = context(false);
    let (surf, _) = sphere_tets().boundary_surface_compact();
    let tris = flat(&surf.triangles);
    let pos = to_f32(&surf.positions);
    let h = mean_edge(&pos, &surf.edges());
    let want = reference::brute_self_overlap(&pos, &tris, 3, h);
    assert!(want.len() > 100);
    let positions = ctx
        .upload_buffer("positions", &pos, BufferUsage::STORAGE)
        .expect("upload");
    let bvh = Lbvh::new(&ctx, PrimitiveKind::Triangles, &tris, MortonBits::B63).expect("lbvh");
    let small = PairOutput::new(&ctx, want.len() / 3).expect("pairs");
    let mut g = Graph::new("overflow");
    bvh.record_build(&mut g, &positions);
    bvh.record_self_overlap(&mut g, h, &small);
    run(&ctx, &g);
    assert_eq!(small.read().expect("read"), Err(want.len()));
    // Grow to the reported count and redo: the full set comes back.
    let big = PairOutput::new(&ctx, want.len()).expect("pairs");
    let mut g = Graph::new("redo");
    bvh.record_self_overlap(&mut g, h, &big);
    run(&ctx, &g);
    let mut got = big.read().expect("read").expect("fits");
    got.sort_unstable();
    assert_eq!(got, want);
    assert_no_validation_errors(&ctx);
}

#[test]
fn bunny_build_refit_timing() {
    let ctx = context(false);
    let loaded = supple::mesh::load(data("surface/bunny.ply")).expect("bunny");
    let surf = loaded.surface;
    let tris = flat(&surf.triangles);
    let pos = to_f32(&surf.positions);
    let positions = ctx
        .upload_buffer("positions", &pos, BufferUsage::STORAGE)
        .expect("upload");
    for (bits, name) in [(MortonBits::B63, "63-bit"), (MortonBits::B30, "30-bit")] {
        let bvh = Lbvh::new(&ctx, PrimitiveKind::Triangles, &tris, bits).expect("lbvh");
        let (ms_build, ms_refit) = bvh
            .measure_build_refit_ms(&ctx, &positions, 7)
            .expect("timing");
        assert!(
            ms_build.is_finite() && ms_refit.is_finite(),
            "no timestamps"
        );
        println!(
            "bunny: {} triangles, {name} Morton codes, ms_lbvh_build {ms_build:.3}, \
             ms_lbvh_refit {ms_refit:.3}",
            tris.len() / 3
        );
        let want = reference::build(&pos, &tris, 3, bits.per_axis());
        let got = bvh.read_tree().expect("tree");
        assert_eq!(got.topology, want.topology);
        assert_eq!(got.boxes, want.boxes);
    }
    assert_no_validation_errors(&ctx);
}
