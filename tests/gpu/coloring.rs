//! Constraint-graph coloring: GPU Jones–Plassmann equals the plain-Rust reference exactly (same
//! seed) and is valid on random graphs and the sample mesh's graphs; its grouping by color
//! equals the reference counting sort; host greedy coloring is valid; degenerate inputs.
//! `sample_mesh_color_counts` prints the GPU vs greedy color counts (run with `--nocapture`).
use rand::Rng;
use supple::coloring::{
    check_coloring, greedy_coloring, pad, ColoringError, GpuColoring, GreedyOrder, HostColoring,
    MAX_COLORS, PAD,
};
use supple::cpu_reference::coloring::{group_by_color, jones_plassmann};
use supple::vk::{BufferUsage, Context};
use supple_gpu_tests::{assert_no_validation_errors, context, rng};

/// Colors on the GPU and checks colors, validity and grouping against the reference; returns
/// the number of colors.
fn gpu_vs_reference(ctx: &Context, cons: &[[u32; 4]], nv: usize, seed: u32, label: &str) -> u32 {
    let coloring = GpuColoring::new(ctx, cons.len(), nv).expect("workspace");
    let result = coloring
        .color_host(ctx, cons, nv, seed)
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    check_against_reference(cons, nv, seed, label, result)
}

/// Checks a GPU coloring's colors, validity, rounds and grouping against the reference;
/// returns the number of colors.
fn check_against_reference(
    cons: &[[u32; 4]],
    nv: usize,
    seed: u32,
    label: &str,
    result: HostColoring,
) -> u32 {
    let HostColoring {
        colors,
        offsets,
        grouped,
        stats,
    } = result;
    let reference = jones_plassmann(cons, nv, seed);
    assert_eq!(
        colors, reference.colors,
        "{label}: GPU colors differ from reference"
    );
    let k = check_coloring(cons, &colors, MAX_COLORS).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(stats.num_colors, k, "{label}: color count");
    assert!(
        stats.rounds_recorded >= reference.rounds && stats.rounds_recorded < reference.rounds + 8,
        "{label}: {} rounds recorded, reference needs {}",
        stats.rounds_recorded,
        reference.rounds
    );
    let (ref_offsets, ref_order) = group_by_color(&reference.colors, MAX_COLORS);
    assert_eq!(offsets, ref_offsets, "{label}: per-color offsets");
    for c in 0..MAX_COLORS as usize {
        let range = ref_offsets[c] as usize..ref_offsets[c + 1] as usize;
        let mut group = grouped[range.clone()].to_vec();
        group.sort_unstable();
        assert_eq!(group, ref_order[range], "{label}: constraints of color {c}");
    }
    k
}

fn random_constraints(seed: u64, n: usize, nv: usize) -> Vec<[u32; 4]> {
    let mut r = rng(seed);
    (0..n)
        .map(|_| {
            let arity = r.random_range(1..=4);
            let mut c = [PAD; 4];
            for slot in c.iter_mut().take(arity) {
                *slot = r.random_range(0..nv as u32);
            }
            c
        })
        .collect()
}

#[test]
fn gpu_matches_reference_on_random_graphs() {
    let ctx = context(false);
    for (i, &(n, nv)) in [(1, 4), (37, 200), (1000, 3000), (20_000, 5000)]
        .iter()
        .enumerate()
    {
        let cons = random_constraints(100 + i as u64, n, nv);
        for seed in [0, 7, 0xdead_beef] {
            let k = gpu_vs_reference(&ctx, &cons, nv, seed, &format!("random n={n} nv={nv}"));
            let greedy = greedy_coloring(&cons, nv, GreedyOrder::SmallestLast).expect("greedy");
            check_coloring(&cons, &greedy.colors, u32::MAX).expect("greedy valid");
            println!(
                "random n={n} nv={nv} seed={seed}: GPU JP {k} colors, greedy SL {}",
                greedy.num_colors
            );
        }
    }
    // All-padding constraints, repeated vertices inside one constraint.
    let odd = vec![
        [PAD; 4],
        [3, 3, 3, PAD],
        [3, 1, 1, 2],
        [PAD; 4],
        [2, PAD, 0, PAD],
    ];
    gpu_vs_reference(&ctx, &odd, 4, 5, "odd constraints");
    assert_no_validation_errors(&ctx);
}

/// The single-workgroup kernel (`jp_workgroup.comp`, a device-written count, rounds until
/// done in one dispatch) gives the reference's colors, rounds and groups, also when some
/// constraints overflow the 256 colors.
#[test]
fn workgroup_coloring_matches_reference() {
    let ctx = context(false);
    let mut cases: Vec<(String, Vec<[u32; 4]>, usize)> =
        [(1, 4), (37, 200), (1000, 3000), (6000, 4096)]
            .iter()
            .enumerate()
            .map(|(i, &(n, nv))| {
                (
                    format!("random n={n} nv={nv}"),
                    random_constraints(300 + i as u64, n, nv),
                    nv,
                )
            })
            .collect();
    cases.push(("empty".into(), Vec::new(), 3));
    cases.push((
        "odd constraints".into(),
        vec![
            [PAD; 4],
            [3, 3, 3, PAD],
            [3, 1, 1, 2],
            [PAD; 4],
            [2, PAD, 0, PAD],
        ],
        4,
    ));
    // 300 constraints at one vertex: 44 past the 256 colors.
    cases.push((
        "star".into(),
        (0..300).map(|i| [0, 1 + i, PAD, PAD]).collect(),
        301,
    ));
    for (label, cons, nv) in &cases {
        let coloring = GpuColoring::new(&ctx, cons.len().max(1), *nv).expect("workspace");
        for seed in [0, 7, 0xdead_beef] {
            let result = coloring
                .color_host_in_workgroup(&ctx, cons, *nv, seed)
                .unwrap_or_else(|e| panic!("{label}: {e}"));
            let reference = jones_plassmann(cons, *nv, seed);
            assert_eq!(
                result.stats.rounds_recorded, reference.rounds,
                "{label}: rounds"
            );
            assert_eq!(
                result.stats.overflowed as usize, reference.overflowed,
                "{label}: overflowed"
            );
            if reference.overflowed == 0 {
                check_against_reference(cons, *nv, seed, label, result);
            } else {
                assert_eq!(result.colors, reference.colors, "{label}: colors");
                let (ref_offsets, _) = group_by_color(&reference.colors, MAX_COLORS);
                assert_eq!(result.offsets, ref_offsets, "{label}: offsets");
                assert_eq!(
                    result.grouped.len(),
                    cons.len() - reference.overflowed,
                    "{label}: grouped"
                );
            }
        }
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn plan_is_reusable_across_constraint_updates() {
    let ctx = context(false);
    let (n, nv) = (3000, 1500);
    let mut coloring = GpuColoring::new(&ctx, n, nv).expect("workspace");
    coloring.set_rounds_per_run(3);
    let first = random_constraints(1, n, nv);
    let buf = ctx
        .upload_buffer("constraints", &first, BufferUsage::STORAGE)
        .expect("upload");
    let plan = coloring.plan(&ctx, &buf, n, nv, 42).expect("plan");
    for step in 0..3u64 {
        let cons = random_constraints(step + 1, n, nv);
        buf.write(&cons).expect("write");
        let stats = plan.run().expect("coloring");
        let reference = jones_plassmann(&cons, nv, 42);
        let colors = coloring.colors().read().expect("read");
        assert_eq!(&colors[..n], &reference.colors[..], "step {step}");
        assert_eq!(
            check_coloring(&cons, &colors[..n], MAX_COLORS),
            Ok(stats.num_colors)
        );
        assert_eq!(
            stats.runs,
            reference.rounds.div_ceil(3),
            "step {step}: runs"
        );
    }
    assert_no_validation_errors(&ctx);
}

#[test]
fn degenerate_inputs() {
    let ctx = context(true);
    let coloring = GpuColoring::new(&ctx, MAX_COLORS as usize + 8, 10).expect("workspace");
    // No constraints.
    let empty = coloring.color_host(&ctx, &[], 10, 1).expect("empty");
    assert!(empty.colors.is_empty() && empty.grouped.is_empty());
    assert_eq!(empty.stats.num_colors, 0);
    assert!(empty.offsets.iter().all(|&o| o == 0));
    assert_eq!(
        greedy_coloring(&[], 10, GreedyOrder::LargestFirst)
            .unwrap()
            .num_colors,
        0
    );
    // No vertices: padding-only constraints never conflict.
    assert_eq!(
        gpu_vs_reference(&ctx, &[[PAD; 4]; 3], 0, 1, "no vertices"),
        1
    );
    // One constraint.
    let one = [[1, 2, 3, 4]];
    assert_eq!(gpu_vs_reference(&ctx, &one, 10, 3, "one constraint"), 1);
    // Constraints all sharing vertex 0: as many colors as constraints, up to the limit.
    let star = |n: u32| (0..n).map(|i| [0, 1 + i % 9, PAD, PAD]).collect::<Vec<_>>();
    let full = star(MAX_COLORS);
    assert_eq!(
        gpu_vs_reference(&ctx, &full, 10, 9, "star of MAX_COLORS"),
        MAX_COLORS
    );
    let over = star(MAX_COLORS + 1);
    match coloring.color_host(&ctx, &over, 10, 9) {
        Err(ColoringError::TooManyColors { limit, overflowed }) => {
            assert_eq!((limit, overflowed), (MAX_COLORS, 1));
        }
        other => panic!("expected TooManyColors, got {other:?}"),
    }
    // The partial run leaves the overflowing constraints uncolored and out of every group.
    let over3 = star(MAX_COLORS + 3);
    let buf = ctx
        .upload_buffer("star", &over3, BufferUsage::STORAGE)
        .expect("upload");
    let stats = coloring
        .plan(&ctx, &buf, over3.len(), 10, 9)
        .and_then(|plan| plan.run_partial())
        .expect("partial coloring");
    assert_eq!((stats.num_colors, stats.overflowed), (MAX_COLORS, 3));
    let colors = coloring.colors().read().expect("colors");
    let offsets = coloring.offsets().read().expect("offsets");
    let grouped = coloring.grouped().read().expect("grouped");
    let colored: Vec<usize> = (0..over3.len())
        .filter(|&i| colors[i] < MAX_COLORS)
        .collect();
    assert_eq!(colored.len(), over3.len() - 3);
    let mut seen = vec![false; MAX_COLORS as usize];
    for &i in &colored {
        assert!(
            !std::mem::replace(&mut seen[colors[i] as usize], true),
            "color twice at vertex 0"
        );
    }
    assert_eq!(offsets[MAX_COLORS as usize] as usize, colored.len());
    let mut in_groups: Vec<usize> = grouped[..colored.len()]
        .iter()
        .map(|&i| i as usize)
        .collect();
    in_groups.sort_unstable();
    assert_eq!(
        in_groups, colored,
        "the groups hold exactly the colored constraints"
    );
    let greedy = greedy_coloring(&over, 10, GreedyOrder::SmallestLast).expect("greedy");
    assert_eq!(greedy.num_colors, MAX_COLORS + 1);
    check_coloring(&over, &greedy.colors, u32::MAX).expect("greedy valid");
    // Out-of-range vertex and over-capacity requests are errors, not UB.
    assert!(matches!(
        coloring.color_host(&ctx, &[[0, 10, PAD, PAD]], 10, 0),
        Err(ColoringError::VertexOutOfRange {
            constraint: 0,
            vertex: 10,
            ..
        })
    ));
    assert!(matches!(
        greedy_coloring(&[[0, 10, PAD, PAD]], 10, GreedyOrder::Index),
        Err(ColoringError::VertexOutOfRange { .. })
    ));
    assert!(matches!(
        coloring.color_host(&ctx, &[[0, 1, 2, 3]], 11, 0),
        Err(ColoringError::Capacity { .. })
    ));
    // The checker catches conflicts and uncolored constraints.
    assert!(check_coloring(&[[0, 1, PAD, PAD], [1, 2, PAD, PAD]], &[0, 0], 64).is_err());
    assert!(check_coloring(&[[0, 1, PAD, PAD]], &[u32::MAX], 64).is_err());
    assert_no_validation_errors(&ctx);
}

/// Contact-like vertex–triangle pairs on the boundary: `per_vertex` × (boundary vertex count)
/// random boundary vertices, each paired with one of its 12 nearest boundary triangles (by
/// centroid) that does not contain it; duplicates removed.
fn contact_pairs(mesh: &supple::mesh::TetMesh, seed: u64, per_vertex: usize) -> Vec<[u32; 4]> {
    let (surface, map) = mesh.boundary_surface_compact();
    let p = &surface.positions;
    let centroid = |t: &[u32; 3]| {
        let mut c = [0.0; 3];
        for &v in t {
            for k in 0..3 {
                c[k] += p[v as usize][k] / 3.0;
            }
        }
        c
    };
    let centroids: Vec<[f64; 3]> = surface.triangles.iter().map(centroid).collect();
    let mut r = rng(seed);
    let mut pairs = Vec::new();
    for _ in 0..per_vertex * p.len() {
        let v = r.random_range(0..p.len());
        let mut near: Vec<(f64, usize)> = centroids
            .iter()
            .enumerate()
            .filter(|(t, _)| !surface.triangles[*t].contains(&(v as u32)))
            .map(|(t, c)| ((0..3).map(|k| (c[k] - p[v][k]).powi(2)).sum::<f64>(), t))
            .collect();
        near.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let t = surface.triangles[near[r.random_range(0..12.min(near.len()))].1];
        pairs.push([
            map[v],
            map[t[0] as usize],
            map[t[1] as usize],
            map[t[2] as usize],
        ]);
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

#[test]
fn sample_mesh_color_counts() {
    let ctx = context(false);
    let path = format!(
        "{}/../data/meshes/tet/sphere_low/sphere_low.vtu",
        env!("CARGO_MANIFEST_DIR")
    );
    let mesh = supple::mesh::load(&path).expect("sample mesh").tets;
    let nv = mesh.positions.len();
    let graphs = [
        ("tets (arity 4)", mesh.tets.clone()),
        ("edges (arity 2)", pad(&mesh.edges())),
        ("contacts v-t (arity 4)", contact_pairs(&mesh, 11, 2)),
        ("dense contacts v-t", contact_pairs(&mesh, 12, 6)),
    ];
    println!("sphere_low.vtu: {nv} vertices");
    println!(
        "graph                  | constraints | lower bound | GPU JP colors (seeds 1..4) | JP rounds (seeds 1..4) | greedy LF | greedy SL"
    );
    for (name, cons) in &graphs {
        let mut gpu = Vec::new();
        let mut rounds = Vec::new();
        for seed in 1..=4 {
            gpu.push(gpu_vs_reference(&ctx, cons, nv, seed, name));
            rounds.push(jones_plassmann(cons, nv, seed).rounds);
        }
        // Constraints sharing one vertex form a clique: the most at one vertex bounds colors.
        let mut per_vertex = vec![0u32; nv];
        for c in cons {
            let mut vs: Vec<u32> = c.iter().copied().filter(|&v| v != PAD).collect();
            vs.sort_unstable();
            vs.dedup();
            vs.iter().for_each(|&v| per_vertex[v as usize] += 1);
        }
        let bound = per_vertex.iter().copied().max().unwrap_or(0);
        let lf = greedy_coloring(cons, nv, GreedyOrder::LargestFirst).expect("greedy");
        let sl = greedy_coloring(cons, nv, GreedyOrder::SmallestLast).expect("greedy");
        assert_eq!(
            check_coloring(cons, &lf.colors, u32::MAX),
            Ok(lf.num_colors)
        );
        assert_eq!(
            check_coloring(cons, &sl.colors, u32::MAX),
            Ok(sl.num_colors)
        );
        println!(
            "{name:<22} | {:>11} | {:>11} | {:<26} | {:<22} | {:>9} | {:>9}",
            cons.len(),
            bound,
            format!("{gpu:?}"),
            format!("{rounds:?}"),
            lf.num_colors,
            sl.num_colors
        );
    }
    assert_no_validation_errors(&ctx);
}
