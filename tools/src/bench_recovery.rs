//! `supple bench recovery`: discrete collision detection (vertices and boundary edges in tets)
//! and shortest-path-to-boundary queries on the self-intersecting sample shapes, with and
//! without infeasible-region culling: GPU milliseconds (min/median/max over the runs), the
//! paper's Table 1 operation counts, and the culling speed-up.

use crate::stats::Stats;
use serde::Serialize;
use supple::contact::shortest_path::{QuerySettings, ShortestPathQuery};
use supple::cpu_reference::shortest_path::Counters;
use supple::mesh::procedural::self_intersecting_samples;
use supple::vk::{BufferUsage, CompileOptions, Context, ContextOptions, Graph};

/// Options of `supple bench recovery`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Divide the sample shapes' cell size by this (1 = the test meshes).
    #[arg(long, default_value_t = 1)]
    refine: usize,
    /// Timed runs of each measurement (min, median and max are reported).
    #[arg(long, default_value_t = 10)]
    repeat: usize,
    /// Print one JSON object on stdout (progress goes to stderr).
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Variant {
    /// GPU milliseconds of detection plus queries (build excluded).
    ms: Stats,
    counters: Counters,
}

#[derive(Serialize)]
struct Shape {
    name: String,
    vertices: usize,
    tets: usize,
    boundary_faces: usize,
    queries: usize,
    penetrating: u32,
    ms_build: f64,
    culled: Variant,
    unculled: Variant,
    culling_speedup: f64,
}

#[derive(Serialize)]
struct Report {
    bench: &'static str,
    device: String,
    lavapipe_threads: Option<u32>,
    repeat: usize,
    shapes: Vec<Shape>,
}

fn measure(
    ctx: &Context,
    m: &supple::mesh::TetMesh,
    cull: bool,
    repeat: usize,
) -> Result<(Variant, f64, usize, usize), String> {
    let e = |x: supple::contact::shortest_path::ShortestPathError| x.to_string();
    let v = |x: supple::VkError| x.to_string();
    let n = m.positions.len();
    let probe = ShortestPathQuery::topology(m).map_err(e)?.boundary_edges();
    let nq = n + probe.len();
    let settings = QuerySettings {
        cull,
        ..Default::default()
    };
    let sp = ShortestPathQuery::new(ctx, m, nq, settings).map_err(e)?;
    let x: Vec<[f32; 4]> = m
        .positions
        .iter()
        .map(|p| [p[0] as f32, p[1] as f32, p[2] as f32, 0.0])
        .collect();
    let s = BufferUsage::STORAGE;
    let x = ctx.upload_buffer("bench.x", &x, s).map_err(v)?;
    let all: Vec<u32> = (0..n as u32).collect();
    let verts = ctx.upload_buffer("bench.vertices", &all, s).map_err(v)?;
    let edges = ctx.upload_buffer("bench.edges", &probe, s).map_err(v)?;
    let timed = CompileOptions {
        graph_timestamps: true,
        ..Default::default()
    };
    let mut g = Graph::new("bench.recovery.build");
    sp.record_build(&mut g, &x);
    let build = g.compile(ctx, timed.clone()).map_err(v)?;
    build.run().map_err(v)?;
    let ms_build = build.profile().map_err(v)?.map_or(f64::NAN, |p| p.total_ms);
    let mut g = Graph::new("bench.recovery.query");
    sp.record_vertex_dcd(&mut g, &x, &verts, n);
    sp.record_edge_dcd(&mut g, &x, &edges, probe.len(), n);
    sp.record_query(&mut g, &x, nq);
    let q = g.compile(ctx, timed).map_err(v)?;
    q.run().map_err(v)?;
    let mut t = Vec::new();
    for _ in 0..repeat.max(1) {
        q.run().map_err(v)?;
        t.push(q.profile().map_err(v)?.map_or(f64::NAN, |p| p.total_ms));
    }
    let counters = sp.read_counters().map_err(e)?;
    Ok((
        Variant {
            ms: Stats::of(&t),
            counters,
        },
        ms_build,
        nq,
        sp.boundary().faces.len(),
    ))
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<(), String> {
    let ctx = Context::new(ContextOptions {
        validation: false,
        ..ContextOptions::from_env()
    })
    .map_err(|e| e.to_string())?;
    let mut shapes = Vec::new();
    for (name, m) in self_intersecting_samples(args.refine) {
        eprintln!("[bench] {name}: {} tets", m.tets.len());
        let (culled, ms_build, queries, faces) = measure(&ctx, &m, true, args.repeat)?;
        let (unculled, _, _, _) = measure(&ctx, &m, false, args.repeat)?;
        if culled.counters.overflows > 0 || unculled.counters.overflows > 0 {
            eprintln!(
                "[bench] {name}: OVERFLOW: some answers may be wrong: {:?} / {:?}",
                culled.counters, unculled.counters
            );
        }
        shapes.push(Shape {
            name: name.to_string(),
            vertices: m.positions.len(),
            tets: m.tets.len(),
            boundary_faces: faces,
            queries,
            penetrating: culled.counters.found,
            ms_build,
            culling_speedup: unculled.ms.median / culled.ms.median,
            culled,
            unculled,
        });
    }
    let r = Report {
        bench: "recovery",
        device: ctx.caps().name.clone(),
        lavapipe_threads: std::env::var("LP_NUM_THREADS")
            .ok()
            .and_then(|v| v.parse().ok()),
        repeat: args.repeat.max(1),
        shapes,
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?
        );
    } else {
        for s in &r.shapes {
            println!(
                "{}: {} tets, {} queries, {} penetrating; {:.2} ms with culling, {:.2} ms without ({:.1}x); build {:.2} ms",
                s.name,
                s.tets,
                s.queries,
                s.penetrating,
                s.culled.ms.median,
                s.unculled.ms.median,
                s.culling_speedup,
                s.ms_build
            );
        }
    }
    Ok(())
}
