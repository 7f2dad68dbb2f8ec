//! `supple bench proximity`: GPU proximity search (spatial hashing + exact distance filter) on
//! a surface mesh as loaded, at search distance D: pair counts, median time per search, and a
//! batch of conservative CCD queries on the found pairs.

use crate::stats::Stats;
use serde::Serialize;
use supple::cpu_reference::ccd::CcdKind;
use supple::geometry::{CcdBatch, CcdOutputs};
use supple::proximity::{BodyFilter, ProximityMesh, ProximityOptions, ProximitySearch};
use supple::vk::{BufferUsage, CompileOptions, Context, ContextOptions, Graph};

/// Options of `supple bench proximity`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Surface or volume mesh (volume meshes use their boundary surface).
    #[arg(long)]
    mesh: String,
    /// Search distance D (m, mesh units): pairs with exact distance < D.
    #[arg(long)]
    distance: Option<f64>,
    /// Search distance as a multiple of the mean edge length (instead of --distance).
    #[arg(long)]
    distance_scale: Option<f64>,
    /// Grid cell size as a multiple of the default, 3.5 mean edge length + D.
    #[arg(long, default_value_t = 1.0)]
    cell_scale: f64,
    /// Timed runs of each measurement (min, median and max are reported).
    #[arg(long, default_value_t = 15)]
    repeat: usize,
    /// Also compute the brute-force pair set on the host and report whether it matches.
    #[arg(long)]
    check: bool,
    /// Print one JSON object on stdout (progress goes to stderr).
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    bench: &'static str,
    device: String,
    driver: String,
    lavapipe_threads: Option<u32>,
    mesh: String,
    vertices: usize,
    triangles: usize,
    edges: usize,
    mean_edge: f64,
    distance: f64,
    cell_size: f64,
    /// Bucket bits per axis k (2^k cells per axis before buckets repeat).
    axis_bits: u32,
    entries: u32,
    pairs_vertex_triangle: u32,
    pairs_edge_edge: u32,
    /// Candidates passed to the exact distance filter (vertex–triangle, edge–edge).
    candidates_vertex_triangle: u32,
    candidates_edge_edge: u32,
    /// Whether every bucket held one cell (exact quantized edge–edge test, no f32 re-check).
    one_frame: bool,
    repeat: usize,
    ms_per_search_median: f64,
    ms_per_search_min: f64,
    ms_per_search_wall_median: f64,
    /// GPU milliseconds per search over the timed runs.
    ms_per_search: Stats,
    /// Host wall milliseconds per search over the timed runs.
    ms_per_search_wall: Stats,
    /// GPU milliseconds of the CCD batch over the timed runs (`null` without pairs).
    ms_ccd_batch_stats: Option<Stats>,
    ms_lbvh_build: Option<f64>,
    ms_lbvh_refit: Option<f64>,
    ccd_queries: usize,
    ccd_hits: usize,
    ms_ccd_batch: f64,
    brute_force_match: Option<bool>,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}

/// Runs the benchmark and prints its report.
pub fn run(args: &Args) -> Result<(), String> {
    let loaded = supple::mesh::load(&args.mesh).map_err(|e| e.to_string())?;
    let surf = if loaded.tets.tets.is_empty() {
        loaded.surface
    } else {
        loaded.tets.boundary_surface_compact().0
    };
    if surf.triangles.is_empty() {
        return Err(format!("{}: no surface triangles", args.mesh));
    }
    // Positions relative to the bounding-box centre (the search runs in f32).
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in &surf.positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let c: [f64; 3] = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
    let x: Vec<[f64; 3]> = surf
        .positions
        .iter()
        .map(|p| std::array::from_fn(|k| p[k] - c[k]))
        .collect();
    let m = ProximityMesh::from_trimesh(&surf)?;
    let l = m.mean_edge_length(&x);
    let d = match (args.distance, args.distance_scale) {
        (Some(d), None) => d,
        (None, Some(s)) => s * l,
        _ => return Err("give exactly one of --distance and --distance-scale".into()),
    };
    if !(d.is_finite() && d > 0.0) {
        return Err(format!("distance must be positive, got {d}"));
    }
    let ctx = Context::new(ContextOptions {
        validation: false,
        ..ContextOptions::from_env()
    })
    .map_err(|e| e.to_string())?;
    let mut o = ProximityOptions::new(d);
    let cell = args.cell_scale * supple::proximity::default_cell_size(l, d);
    o.cell_size = Some(cell);
    let nodes = std::env::var("SUPPLE_BENCH_NODES").is_ok_and(|v| v == "1");
    let compile = CompileOptions {
        graph_timestamps: true,
        timestamps: nodes,
        ..Default::default()
    };
    let mut s = ProximitySearch::with_compile_options(&ctx, m.clone(), &x, o, compile)?;
    // Warm-up (also grows the buffers to fit).
    let mut rep = s.run()?;
    let mut gpu = Vec::new();
    let mut wall = Vec::new();
    for _ in 0..args.repeat.max(1) {
        let t0 = std::time::Instant::now();
        rep = s.run()?;
        wall.push(t0.elapsed().as_secs_f64() * 1e3);
        gpu.push(s.profile()?.map(|p| p.total_ms).unwrap_or(f64::NAN));
    }
    if nodes {
        if let Some(p) = s.profile()? {
            for n in &p.nodes {
                eprintln!("  {:<32} {:8.3} ms", n.name, n.gpu_ms);
            }
        }
    }
    let ms_min = gpu.iter().cloned().fold(f64::INFINITY, f64::min);
    let pairs = s.read_pairs()?;
    eprintln!(
        "proximity: {} v / {} t / {} e, D = {d:.4e}, h = {:.4e}: {} vt + {} ee pairs, {} entries",
        m.num_vertices,
        m.triangles.len(),
        m.edges.len(),
        1.0 / s.params().inv_h,
        rep.vertex_triangle,
        rep.edge_edge,
        rep.entries
    );
    let brute_force_match = if args.check {
        let b = supple::cpu_reference::proximity::brute_force(
            &x.iter()
                .map(|p| p.map(|v| v as f32 as f64))
                .collect::<Vec<_>>(),
            &m.triangles,
            &m.edges,
            &m.body,
            d,
            BodyFilter::default(),
        );
        let key = |v: &mut Vec<(u32, u32)>| {
            v.sort_unstable();
            v.clone()
        };
        let same = key(&mut pairs.vertex_triangle.iter().map(|p| (p.a, p.b)).collect())
            == key(&mut b.vertex_triangle.iter().map(|p| (p.a, p.b)).collect())
            && key(&mut pairs.edge_edge.iter().map(|p| (p.a, p.b)).collect())
                == key(&mut b.edge_edge.iter().map(|p| (p.a, p.b)).collect());
        Some(same)
    } else {
        None
    };

    // CCD batch on the found pairs: every vertex moves by U(-0.25 l, 0.25 l)^3 (fixed seed).
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let x1: Vec<[f64; 3]> = x
        .iter()
        .map(|p| p.map(|v| v + (rnd() - 0.5) * 0.5 * l))
        .collect();
    let f4 = |p: [f64; 3]| [p[0] as f32, p[1] as f32, p[2] as f32, 0.0];
    let (mut q0, mut q1) = (Vec::new(), Vec::new());
    for p in &pairs.vertex_triangle {
        let t = m.triangles[p.b as usize];
        for v in [p.a, t[0], t[1], t[2]] {
            q0.push(f4(x[v as usize]));
            q1.push(f4(x1[v as usize]));
        }
    }
    let n_pt = pairs.vertex_triangle.len();
    for p in &pairs.edge_edge {
        let (a, b) = (m.edges[p.a as usize], m.edges[p.b as usize]);
        for v in [a[0], a[1], b[0], b[1]] {
            q0.push(f4(x[v as usize]));
            q1.push(f4(x1[v as usize]));
        }
    }
    let n_ee = pairs.edge_edge.len();
    let (ms_ccd, hits, ccd_stats) = if n_pt + n_ee == 0 {
        (0.0, 0, None)
    } else {
        let e = |e: supple::VkError| e.to_string();
        let b0 = ctx
            .upload_buffer("bench.ccd.x0", &q0, BufferUsage::STORAGE)
            .map_err(e)?;
        let b1 = ctx
            .upload_buffer("bench.ccd.x1", &q1, BufferUsage::STORAGE)
            .map_err(e)?;
        let out_pt = CcdOutputs::new(&ctx, n_pt).map_err(e)?;
        let out_ee = CcdOutputs::new(&ctx, n_ee).map_err(e)?;
        // Edge–edge queries live after the point–triangle ones: upload them separately so
        // both batches index from 0.
        let ee0 = ctx
            .upload_buffer(
                "bench.ccd.ee0",
                &pad(q0[4 * n_pt..].to_vec()),
                BufferUsage::STORAGE,
            )
            .map_err(e)?;
        let ee1 = ctx
            .upload_buffer(
                "bench.ccd.ee1",
                &pad(q1[4 * n_pt..].to_vec()),
                BufferUsage::STORAGE,
            )
            .map_err(e)?;
        let batch = CcdBatch::new(&ctx);
        let mut g = Graph::new("bench.ccd");
        if n_pt > 0 {
            batch.record(&mut g, CcdKind::PointTriangle, &b0, &b1, n_pt, 0.0, &out_pt);
        }
        if n_ee > 0 {
            batch.record(&mut g, CcdKind::EdgeEdge, &ee0, &ee1, n_ee, 0.0, &out_ee);
        }
        let cg = g
            .compile(
                &ctx,
                CompileOptions {
                    graph_timestamps: true,
                    ..Default::default()
                },
            )
            .map_err(e)?;
        cg.run().map_err(e)?;
        let mut t = Vec::new();
        for _ in 0..args.repeat.max(1) {
            cg.run().map_err(e)?;
            t.push(
                cg.profile()
                    .map_err(e)?
                    .map(|p| p.total_ms)
                    .unwrap_or(f64::NAN),
            );
        }
        let hits = out_pt.flags.read().map_err(e)?[..n_pt]
            .iter()
            .chain(&out_ee.flags.read().map_err(e)?[..n_ee])
            .filter(|f| **f & 1 != 0)
            .count();
        let stats = Stats::of(&t);
        (median(&mut t), hits, Some(stats))
    };

    // LBVH over the same triangles: build (Morton codes, sort, Karras tree, refit) and refit.
    let (ms_lbvh_build, ms_lbvh_refit) = {
        let pos: Vec<[f32; 4]> = x
            .iter()
            .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32, 0.0])
            .collect();
        let positions = ctx
            .upload_buffer("bench.lbvh.positions", &pos, BufferUsage::STORAGE)
            .map_err(|err| err.to_string())?;
        let flat: Vec<u32> = surf.triangles.iter().flatten().copied().collect();
        let bvh = supple::bvh::Lbvh::new(
            &ctx,
            supple::bvh::PrimitiveKind::Triangles,
            &flat,
            supple::bvh::MortonBits::B30,
        )
        .map_err(|err| err.to_string())?;
        bvh.measure_build_refit_ms(&ctx, &positions, args.repeat.max(1))
            .map_err(|err| err.to_string())?
    };

    let caps = ctx.caps();
    let (search_stats, wall_stats) = (Stats::of(&gpu), Stats::of(&wall));
    let r = Report {
        bench: "proximity",
        device: caps.name.clone(),
        driver: caps.driver.clone(),
        lavapipe_threads: std::env::var("LP_NUM_THREADS")
            .ok()
            .and_then(|v| v.parse().ok()),
        mesh: args.mesh.clone(),
        vertices: m.num_vertices,
        triangles: m.triangles.len(),
        edges: m.edges.len(),
        mean_edge: l,
        distance: d,
        cell_size: 1.0 / s.params().inv_h as f64,
        axis_bits: s.params().axis_bits(),
        entries: rep.entries,
        pairs_vertex_triangle: rep.vertex_triangle,
        pairs_edge_edge: rep.edge_edge,
        candidates_vertex_triangle: rep.candidates_vertex_triangle,
        candidates_edge_edge: rep.candidates_edge_edge,
        one_frame: rep.one_frame,
        repeat: args.repeat.max(1),
        ms_per_search_median: median(&mut gpu),
        ms_per_search_min: ms_min,
        ms_per_search_wall_median: median(&mut wall),
        ms_per_search: search_stats,
        ms_per_search_wall: wall_stats,
        ms_ccd_batch_stats: ccd_stats,
        ms_lbvh_build: Some(ms_lbvh_build),
        ms_lbvh_refit: Some(ms_lbvh_refit),
        ccd_queries: n_pt + n_ee,
        ccd_hits: hits,
        ms_ccd_batch: ms_ccd,
        brute_force_match,
    };
    if args.json {
        println!("{}", serde_json::to_string(&r).map_err(|e| e.to_string())?);
    } else {
        println!(
            "proximity {}: {} vt + {} ee pairs under D = {:.4e}; search {:.3} ms (GPU median), {:.3} ms wall; CCD {} queries {:.3} ms",
            r.mesh,
            r.pairs_vertex_triangle,
            r.pairs_edge_edge,
            r.distance,
            r.ms_per_search_median,
            r.ms_per_search_wall_median,
            r.ccd_queries,
            r.ms_ccd_batch
        );
    }
    Ok(())
}

/// Pads an empty query array with one zero query (zero-length buffers are not allowed).
fn pad(mut v: Vec<[f32; 4]>) -> Vec<[f32; 4]> {
    while v.len() < 4 {
        v.push([0.0; 4]);
    }
    v
}
