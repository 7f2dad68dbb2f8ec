//! `supple check-frames DIR`: verifies that exported OBJ frames are intersection-free, each
//! frame on its own (exact triangle–triangle, segment–triangle and segment–segment tests) and
//! each transition between consecutive frames with vertices moving along straight lines
//! (certified vertex–triangle and edge–edge separation), using the independent checker
//! `supple::intersection_check`. Polylines (`l` lines: rod centrelines) must keep their
//! topology; their segments are checked as curves (edges, and their vertices against triangles).
//!
//! With `--scene SCENE` every vertex of every frame is also checked against the scene's analytic
//! colliders at the frame's time (from the run's report.json when it is there, else
//! `k / frame_rate`): a signed distance below the collider's offset is a finding.
//!
//! Collider meshes that `supple run --export-colliders` appends after the bodies (after the
//! `# supple colliders:` line) are not simulated geometry and are left out.
//!
//! Exit code 0 when clean, 1 when a frame intersects, a transition collides, a pair stays
//! undecided or a vertex is inside a collider, 2 on bad input (one line `error: ...` on stderr).

use crate::colliders;
use serde::Serialize;
use std::path::{Path, PathBuf};
use supple::intersection_check::{self as ic, Surface};
use supple::mesh::export::OBJ_COLLIDERS_MARKER;
use supple::scene::{Collider, Scene};

/// Options of `supple check-frames`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// `supple run`'s output folder (its `frames/` is read) or a folder holding frame_0000.obj,
    /// frame_0001.obj, ... (as `supple run --export obj` writes).
    dir: PathBuf,
    /// Also check every frame's vertices against this scene's colliders (signed distance below
    /// the collider's offset is a finding).
    #[arg(long, value_name = "SCENE.toml")]
    scene: Option<PathBuf>,
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
    /// With `--scene`: frames with a vertex closer to a collider than its offset.
    #[serde(skip_serializing_if = "Option::is_none")]
    collider_frames: Option<usize>,
    /// With `--scene`: the smallest signed distance of any vertex to any collider (m).
    #[serde(skip_serializing_if = "Option::is_none")]
    min_collider_distance: Option<f64>,
    /// With `--scene`: where the frame times came from (`DIR/report.json` or `k / frame_rate`).
    #[serde(skip_serializing_if = "Option::is_none")]
    times_from: Option<String>,
    /// With `--scene`: for the first frames that have one, their deepest vertex.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    collider_findings: Vec<ColliderFinding>,
    /// The first problems found, one line each.
    problems: Vec<String>,
}

/// The deepest vertex of a frame with vertices closer to a collider than its offset.
#[derive(Serialize)]
struct ColliderFinding {
    /// Frame index.
    frame: usize,
    /// Simulated time of the frame (s).
    time: f64,
    /// Vertex index in the frame file (0-based).
    vertex: usize,
    /// The body (OBJ object) holding the vertex, when the file names objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<String>,
    /// Index of the collider in the scene.
    collider: usize,
    /// Its signed distance to the collider (m; negative inside).
    distance: f64,
    /// The collider's offset (m).
    offset: f64,
    /// Vertices of the frame closer to some collider than its offset.
    vertices: usize,
}

/// The folder holding the frames: `dir/frames` when `dir` is a `supple run` output folder
/// (it has a `frames/` folder), else `dir`.
fn frames_folder(dir: &Path) -> PathBuf {
    let sub = dir.join("frames");
    if sub.is_dir() {
        sub
    } else {
        dir.to_path_buf()
    }
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
    /// `o NAME` objects: name and first vertex (0-based), in file order.
    objects: Vec<(String, usize)>,
}

/// Loads an OBJ frame; what follows the colliders marker (collider meshes) is left out.
fn load(path: &Path) -> Result<Frame, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut vertices = 0usize;
    let mut objects = Vec::new();
    let mut bodies_end = None;
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with(OBJ_COLLIDERS_MARKER) {
            bodies_end = Some(vertices);
            break;
        }
        if line.starts_with("v ") || line.starts_with("v\t") {
            vertices += 1;
        } else if let Some(name) = line.strip_prefix("o ") {
            objects.push((name.trim().to_string(), vertices));
        }
    }
    let loaded = supple::mesh::load(path).map_err(|e| e.to_string())?;
    let mut frame = Frame {
        positions: loaded.surface.positions,
        triangles: loaded.surface.triangles,
        polylines: loaded.polylines,
        objects,
    };
    if let Some(n) = bodies_end {
        let keep = |v: &u32| (*v as usize) < n;
        frame.positions.truncate(n);
        frame.triangles.retain(|t| t.iter().all(keep));
        frame.polylines.retain(|l| l.iter().all(keep));
    }
    Ok(frame)
}

/// The scene's colliders and the time of each of `frames` frames: `frames[k].time` of the run's
/// report.json (beside `frames_dir`, or in it) when it has one for every frame, else
/// `k / frame_rate`; and where the times came from.
fn collider_times(
    scene_path: &Path,
    frames_dir: &Path,
    frames: usize,
) -> Result<(Scene, Vec<f64>, String), String> {
    let scene = Scene::load(scene_path, &[]).map_err(|e| e.to_string())?;
    let rate = scene.simulation.frame_rate;
    let candidates = [
        frames_dir.parent().map(|p| p.join("report.json")),
        Some(frames_dir.join("report.json")),
    ];
    for report in candidates.into_iter().flatten() {
        let Ok(text) = std::fs::read_to_string(&report) else {
            continue;
        };
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not JSON: {e}", report.display()))?;
        let times: Option<Vec<f64>> = v["frames"].as_array().and_then(|fr| {
            (fr.len() == frames)
                .then(|| fr.iter().map(|f| f["time"].as_f64()).collect())
                .flatten()
        });
        if let Some(t) = times {
            return Ok((scene, t, report.display().to_string()));
        }
    }
    let times = (0..frames).map(|k| k as f64 / rate).collect();
    Ok((
        scene,
        times,
        format!("k / frame_rate ({rate} Hz; no report.json with a time for every frame)"),
    ))
}

/// Per vertex of a frame with `objects` (`o NAME`, first vertex) and `n` vertices, its body's
/// `collider_offset` from `scene` (matched by name). A scene that gives a body a clearance
/// while the frames name no objects, or whose body names miss an object, is refused rather
/// than checked without it.
fn vertex_clearance(
    scene: &Scene,
    objects: &[(String, usize)],
    n: usize,
) -> Result<Vec<f64>, String> {
    let wanted: Vec<&supple::scene::Body> = scene
        .bodies
        .iter()
        .filter(|b| b.collider_offset > 0.0)
        .collect();
    if wanted.is_empty() {
        return Ok(vec![0.0; n]);
    }
    if objects.is_empty() {
        return Err(format!(
            "body '{}' has a collider_offset but the frames name no objects (o NAME) to find \
             its vertices",
            wanted[0].name
        ));
    }
    let mut clearance = vec![0.0; n];
    for (k, (name, first)) in objects.iter().enumerate() {
        let end = objects.get(k + 1).map_or(n, |o| o.1).min(n);
        if let Some(b) = scene.bodies.iter().find(|b| &b.name == name) {
            clearance[(*first).min(end)..end].fill(b.collider_offset);
        }
    }
    for b in wanted {
        if !objects.iter().any(|(name, _)| name == &b.name) {
            return Err(format!(
                "body '{}' has a collider_offset but no object of the frames is named so",
                b.name
            ));
        }
    }
    Ok(clearance)
}

/// The object (body) holding vertex `v` of a frame.
fn body_of(objects: &[(String, usize)], v: usize) -> Option<String> {
    objects
        .iter()
        .rev()
        .find(|(_, first)| *first <= v)
        .map(|(n, _)| n.clone())
}

/// The vertices of one frame closer to a collider than its offset.
#[derive(Default)]
struct ColliderHits {
    /// How many.
    count: usize,
    /// The deepest (relative to its collider's offset): vertex, collider, signed distance,
    /// offset.
    worst: Option<(usize, usize, f64, f64)>,
    /// The smallest signed distance of any vertex to any collider (m).
    min_distance: f64,
}

/// Checks the vertices `x` of a frame at time `t` against `colliders`, vertex v keeping
/// `clearance[v]` (m, its body's `collider_offset`) on top of each collider's offset.
fn collider_check(
    colliders: &[Collider],
    x: &[[f64; 3]],
    clearance: &[f64],
    t: f64,
) -> ColliderHits {
    let mut hits = ColliderHits {
        min_distance: f64::INFINITY,
        ..ColliderHits::default()
    };
    for (v, &p) in x.iter().enumerate() {
        let mut inside = false;
        for (c, col) in colliders.iter().enumerate() {
            let d = colliders::signed_distance(col, p, t);
            let offset = colliders::offset(col) + clearance.get(v).unwrap_or(&0.0);
            hits.min_distance = hits.min_distance.min(d);
            if d < offset {
                inside = true;
                if hits.worst.is_none_or(|(_, _, wd, wo)| d - offset < wd - wo) {
                    hits.worst = Some((v, c, d, offset));
                }
            }
        }
        hits.count += inside as usize;
    }
    hits
}

/// Loads frame `path` and checks that it has the topology of the first frame `first_path`
/// (`surface`, `polylines`); returns its positions.
fn load_like(
    path: &Path,
    first_path: &Path,
    surface: &Surface,
    polylines: &[Vec<u32>],
) -> Result<Vec<[f64; 3]>, String> {
    let f = load(path)?;
    if f.positions.len() != surface.num_vertices() {
        return Err(format!(
            "{}: {} vertices, but {} has {} (every frame must have the same vertices)",
            path.display(),
            f.positions.len(),
            first_path.display(),
            surface.num_vertices()
        ));
    }
    if f.triangles != surface.triangles() {
        return Err(format!(
            "{}: the triangles differ from those of {} (the topology must not change)",
            path.display(),
            first_path.display()
        ));
    }
    if f.polylines != polylines {
        return Err(format!(
            "{}: the polylines differ from those of {} (the topology must not change)",
            path.display(),
            first_path.display()
        ));
    }
    Ok(f.positions)
}

/// Adds frame `frame`'s collider hits (at time `time`) to the summary: a problem line and a
/// finding for its deepest vertex.
fn report_collider_hits(
    summary: &mut Summary,
    hits: &ColliderHits,
    colliders: &[Collider],
    objects: &[(String, usize)],
    frame: usize,
    time: f64,
) {
    let Some((v, c, d, offset)) = hits.worst else {
        return;
    };
    *summary.collider_frames.get_or_insert(0) += 1;
    let body = body_of(objects, v);
    let named = body.as_ref().map(|b| format!(" ({b})")).unwrap_or_default();
    if summary.problems.len() < MAX_PROBLEMS {
        summary.problems.push(format!(
            "frame {frame} (t = {time} s): {} vertices closer to a collider than its offset, e.g. vertex {v}{named} at signed distance {d:e} m from collider[{c}] ({}, offset {offset} m)",
            hits.count,
            colliders::shape_name(&colliders[c])
        ));
    }
    if summary.collider_findings.len() < MAX_PROBLEMS {
        summary.collider_findings.push(ColliderFinding {
            frame,
            time,
            vertex: v,
            body,
            collider: c,
            distance: d,
            offset,
            vertices: hits.count,
        });
    }
}

fn check(args: &Args) -> Result<Summary, String> {
    if !(args.eta.is_finite() && args.eta >= 0.0) {
        return Err(format!(
            "--eta must be a finite distance >= 0, got {}",
            args.eta
        ));
    }
    let frames_dir = frames_folder(&args.dir);
    let files = frame_files(&frames_dir)?;
    let colliders = match &args.scene {
        Some(p) => Some(collider_times(p, &frames_dir, files.len())?),
        None => None,
    };
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
        collider_frames: colliders.as_ref().map(|_| 0),
        min_collider_distance: None,
        times_from: colliders.as_ref().map(|(_, _, from)| from.clone()),
        collider_findings: Vec::new(),
        problems: Vec::new(),
    };
    let mut min_collider = f64::INFINITY;
    let objects = first.objects.clone();
    let clearance = match &colliders {
        Some((scene, _, _)) => vertex_clearance(scene, &objects, first.positions.len())?,
        None => Vec::new(),
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
            load_like(path, &files[0], &surface, &first.polylines)?
        };
        if let Some((scene, times, _)) = &colliders {
            let cs = &scene.colliders;
            let hits = collider_check(cs, &x, &clearance, times[i]);
            min_collider = min_collider.min(hits.min_distance);
            report_collider_hits(&mut summary, &hits, cs, &objects, i, times[i]);
        }
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
    summary.min_collider_distance = min_collider.is_finite().then_some(min_collider);
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
        && summary.uncertain_pairs == 0
        && summary.collider_frames.unwrap_or(0) == 0;
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
        if let Some(n) = summary.collider_frames {
            println!("frames inside colliders: {n}");
            match summary.min_collider_distance {
                Some(d) => println!("min collider distance: {d:e} m"),
                None => println!("min collider distance: none (no colliders)"),
            }
            if let Some(t) = &summary.times_from {
                println!("frame times from:      {t}");
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
