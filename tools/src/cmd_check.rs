//! `supple check-frames DIR`: verifies that exported OBJ frames are intersection-free, each
//! frame on its own (exact triangle–triangle, segment–triangle and segment–segment tests) and
//! each transition between consecutive frames with vertices moving along straight lines
//! (certified vertex–triangle and edge–edge separation), using the independent checker
//! `supple::intersection_check`. Polylines (`l` lines: rod centrelines) must keep their
//! topology; their segments are checked as curves (edges, and their vertices against triangles).
//!
//! Exit code 0 when clean, 1 when a frame intersects, a transition collides or a pair stays
//! undecided, 2 on bad input (one line `error: ...` on stderr).

use serde::Serialize;
use std::path::{Path, PathBuf};
use supple::intersection_check::{self as ic, Surface};

/// Options of `supple check-frames`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder holding frame_0000.obj, frame_0001.obj, ... (as `supple run --export obj` writes).
    dir: PathBuf,
    /// Distance in metres at or below which two primitives count as touching.
    #[arg(long, default_value_t = 1e-9, value_name = "M")]
    eta: f64,
    /// Print one JSON object on stdout.
    #[arg(long)]
    json: bool,
}

/// At most this many problems are listed.
const MAX_PROBLEMS: usize = 20;

#[derive(Serialize)]
struct Summary {
    /// Number of frames read.
    frames: usize,
    /// Frames with at least one intersecting pair (triangles or polyline segments).
    intersecting_frames: usize,
    /// Transitions (frame i to i + 1) with at least one collision.
    colliding_transitions: usize,
    /// Undecided pairs over all transitions.
    uncertain_pairs: usize,
    /// Smallest distance between primitives sharing no vertex: exact in each frame, sampled
    /// during transitions (null when there is no such pair).
    min_distance: Option<f64>,
    /// The touching distance used, in metres.
    eta: f64,
    /// Vertices per frame.
    vertices: usize,
    /// Triangles per frame.
    triangles: usize,
    /// Polylines (`l` lines, rods) per frame; their segments are checked as curves.
    polylines: usize,
    /// The first problems found, one line each.
    problems: Vec<String>,
}

/// The frame files of `dir`, in order; they must be numbered 0, 1, 2, ... without gaps.
fn frame_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: cannot read folder: {e}", dir.display()))?;
    let mut numbered = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(num) = name
            .strip_prefix("frame_")
            .and_then(|s| s.strip_suffix(".obj"))
        else {
            continue;
        };
        if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let n: usize = num
            .parse()
            .map_err(|_| format!("{}: frame number too large", entry.path().display()))?;
        numbered.push((n, entry.path()));
    }
    if numbered.is_empty() {
        return Err(format!(
            "{}: no frame_NNNN.obj files (write them with `supple run --export obj`)",
            dir.display()
        ));
    }
    numbered.sort();
    for (i, (n, path)) in numbered.iter().enumerate() {
        if *n != i {
            let what = if *n < i { "duplicate" } else { "missing" };
            return Err(format!(
                "{}: {what} frame {i} (frames must be numbered 0, 1, 2, ... without gaps; found {})",
                dir.display(),
                path.display()
            ));
        }
    }
    Ok(numbered.into_iter().map(|(_, p)| p).collect())
}

struct Frame {
    positions: Vec<[f64; 3]>,
    triangles: Vec<[u32; 3]>,
    polylines: Vec<Vec<u32>>,
}

fn load(path: &Path) -> Result<Frame, String> {
    let loaded = supple::mesh::load(path).map_err(|e| e.to_string())?;
    Ok(Frame {
        positions: loaded.surface.positions,
        triangles: loaded.surface.triangles,
        polylines: loaded.polylines,
    })
}

fn check(args: &Args) -> Result<Summary, String> {
    if !(args.eta.is_finite() && args.eta >= 0.0) {
        return Err(format!(
            "--eta must be a finite distance >= 0, got {}",
            args.eta
        ));
    }
    let files = frame_files(&args.dir)?;
    let first = load(&files[0])?;
    let segments: Vec<[u32; 2]> = first
        .polylines
        .iter()
        .flat_map(|l| l.windows(2).map(|w| [w[0], w[1]]))
        .filter(|w| w[0] != w[1])
        .collect();
    let surface = Surface::with_curves(first.positions.len(), &first.triangles, &segments)
        .map_err(|e| format!("{}: {e}", files[0].display()))?;
    let mut summary = Summary {
        frames: files.len(),
        intersecting_frames: 0,
        colliding_transitions: 0,
        uncertain_pairs: 0,
        min_distance: None,
        eta: args.eta,
        vertices: first.positions.len(),
        triangles: first.triangles.len(),
        polylines: first.polylines.len(),
        problems: Vec::new(),
    };
    let mut min_d = f64::INFINITY;
    let problem = |s: &mut Summary, line: String| {
        if s.problems.len() < MAX_PROBLEMS {
            s.problems.push(line);
        }
    };
    let mut prev: Option<Vec<[f64; 3]>> = None;
    let mut first_positions = Some(first.positions);
    for (i, path) in files.iter().enumerate() {
        let x = if let Some(x) = first_positions.take() {
            x
        } else {
            let f = load(path)?;
            if f.positions.len() != surface.num_vertices() {
                return Err(format!(
                    "{}: {} vertices, but {} has {} (every frame must have the same vertices)",
                    path.display(),
                    f.positions.len(),
                    files[0].display(),
                    surface.num_vertices()
                ));
            }
            if f.triangles != surface.triangles() {
                return Err(format!(
                    "{}: the triangles differ from those of {} (the topology must not change)",
                    path.display(),
                    files[0].display()
                ));
            }
            if f.polylines != first.polylines {
                return Err(format!(
                    "{}: the polylines differ from those of {} (the topology must not change)",
                    path.display(),
                    files[0].display()
                ));
            }
            f.positions
        };
        let hits = ic::frame_intersections(&surface, &x);
        if let Some(h) = hits.first() {
            summary.intersecting_frames += 1;
            problem(
                &mut summary,
                format!(
                    "frame {i}: {} intersecting pairs, e.g. {} {} and {}",
                    hits.len(),
                    h.kind.name(),
                    h.first,
                    h.second
                ),
            );
        }
        min_d = min_d.min(ic::min_distance(&surface, &x));
        if let Some(x0) = prev.as_deref() {
            let r = ic::trajectory_check(&surface, x0, &x, args.eta);
            min_d = min_d.min(r.min_distance);
            if let Some(c) = r.collisions.first() {
                summary.colliding_transitions += 1;
                problem(
                    &mut summary,
                    format!(
                        "frames {} -> {i}: {} colliding pairs, e.g. {} {:?} (vertices {:?}) at t = {} with distance {:e} m",
                        i - 1,
                        r.collisions.len(),
                        c.kind.name(),
                        c.primitives,
                        c.vertices,
                        c.time,
                        c.distance
                    ),
                );
            }
            if let Some(u) = r.uncertain.first() {
                summary.uncertain_pairs += r.uncertain.len();
                problem(
                    &mut summary,
                    format!(
                        "frames {} -> {i}: {} undecided pairs, e.g. {} {:?} (vertices {:?}) in t = [{}, {}]",
                        i - 1,
                        r.uncertain.len(),
                        u.kind.name(),
                        u.primitives,
                        u.vertices,
                        u.interval[0],
                        u.interval[1]
                    ),
                );
            }
        }
        prev = Some(x);
    }
    summary.min_distance = min_d.is_finite().then_some(min_d);
    Ok(summary)
}

/// Runs `supple check-frames` and returns the process exit code (0 clean, 1 not, 2 bad input).
pub fn run(args: &Args) -> u8 {
    let summary = match check(args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}", e.replace(['\n', '\r'], " "));
            return 2;
        }
    };
    let clean = summary.intersecting_frames == 0
        && summary.colliding_transitions == 0
        && summary.uncertain_pairs == 0;
    if args.json {
        match serde_json::to_string(&summary) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        }
    } else {
        let lines = if summary.polylines > 0 {
            format!(" ({} polylines, checked as curves)", summary.polylines)
        } else {
            String::new()
        };
        println!(
            "{} frames of {} vertices and {} triangles{lines}, eta {:e} m",
            summary.frames, summary.vertices, summary.triangles, summary.eta
        );
        println!("intersecting frames:   {}", summary.intersecting_frames);
        println!("colliding transitions: {}", summary.colliding_transitions);
        println!("uncertain pairs:       {}", summary.uncertain_pairs);
        match summary.min_distance {
            Some(d) => println!("min distance:          {d:e} m"),
            None => {
                println!("min distance:          none (no pair of primitives sharing no vertex)")
            }
        }
        for p in &summary.problems {
            println!("  {p}");
        }
        println!("{}", if clean { "clean" } else { "NOT clean" });
    }
    if clean {
        0
    } else {
        1
    }
}
