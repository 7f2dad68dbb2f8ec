//! `supple view OUT_DIR` and `supple run --export html`: one self-contained HTML file (no
//! network, no third-party JavaScript, raw WebGL2) that plays a run's frames with a slider, an
//! orbit camera, per-body colours, the analytic colliders and the frame's statistics.
//!
//! [`write_html`] is the one writer: it takes the run's description ([`ViewScene`]) and its frames
//! as an iterator, so frames read from disk are encoded one at a time (memory stays at one frame)
//! and an in-memory run (`supple run --export html`, later `supple.viz.write_html`) passes its
//! recorded frames. The page template is `view/template.html` with `view/viewer.js`, embedded at
//! build time.
//!
//! Frames are read from `OUT/frames/frame_NNNN.obj` (or `.ply`), both as merged meshes and with
//! one `o NAME` group per body; `report.json` (optional) gives each frame's statistics and time,
//! and its `bodies`/`colliders` keys ([`crate::run_meta`]) the body ranges and colliders.

use crate::run_meta::{BodyMeta, ColliderMeta};
use serde::Serialize;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The page template (HTML and CSS) with `{{TITLE}}`, `{{DATA}}` and `{{SCRIPT}}` slots.
const TEMPLATE: &str = include_str!("view/template.html");
/// The viewer's JavaScript (raw WebGL2).
const SCRIPT: &str = include_str!("view/viewer.js");

/// Options of `supple view`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run folder (holding frames/ and report.json), or the frames folder itself.
    dir: PathBuf,
    /// Output file (default: OUT_DIR/view.html).
    #[arg(short = 'o', long = "output", value_name = "FILE.html")]
    output: Option<PathBuf>,
    /// Keep every K-th frame (the last frame is always kept).
    #[arg(long, default_value_t = 1, value_name = "K")]
    every: usize,
    /// Store positions as 16-bit integers in each frame's bounding box (half the positions' bytes;
    /// error at most 1/131070 of the frame's extent per axis).
    #[arg(long)]
    quantize: bool,
}

/// A failure with its exit code (2 for bad input, 1 for I/O) and a one-line message.
pub type ViewError = (i32, String);

fn bad(msg: String) -> ViewError {
    (2, msg)
}

/// One body as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ViewBody {
    /// Name (from the scene, or the OBJ group).
    pub name: String,
    /// Material model (empty when unknown).
    pub model: String,
}

/// What the page draws besides the frames: topology, bodies, colliders and run facts.
#[derive(Debug, Clone, Default)]
pub struct ViewScene {
    /// Page title (the scene).
    pub title: String,
    /// Surface triangles over the frame vertices.
    pub triangles: Vec<[u32; 3]>,
    /// Polylines (rods) over the frame vertices.
    pub curves: Vec<Vec<u32>>,
    /// Number of vertices of every frame.
    pub vertices: usize,
    /// Body of each vertex (an index into `bodies`; `u32::MAX`: none, drawn grey).
    pub vertex_body: Vec<u32>,
    /// The bodies.
    pub bodies: Vec<ViewBody>,
    /// Analytic colliders at t = 0.
    pub colliders: Vec<ColliderMeta>,
    /// Run facts shown above the statistics (scene, device, solver, sizes, ...).
    pub summary: serde_json::Map<String, Value>,
    /// Seconds between frames (playback speed; none: 1/30 s).
    pub frame_dt: Option<f64>,
    /// Remarks shown on the page (e.g. why there is one colour).
    pub notes: Vec<String>,
}

/// One frame for the page.
#[derive(Debug, Clone)]
pub struct ViewFrame {
    /// Frame number (the file's).
    pub index: usize,
    /// Simulated time (s), when known.
    pub time: Option<f64>,
    /// Vertex positions (m).
    pub positions: Vec<[f32; 3]>,
    /// The frame's statistics (its `report.json` entry), or null.
    pub stats: Value,
}

/// How positions are stored in the page.
#[derive(Debug, Clone, Copy, Default)]
pub struct ViewOptions {
    /// 16-bit positions in each frame's bounding box instead of 32-bit floats.
    pub quantize: bool,
}

/// What [`write_html`] wrote.
#[derive(Debug, Clone, Copy)]
pub struct Written {
    /// Frames in the page.
    pub frames: usize,
    /// File size in bytes.
    pub bytes: u64,
}

// ------------------------------------------------------------------------------------------
// Encoding

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 (with padding) of `data`.
pub fn base64(data: &[u8]) -> String {
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= c.len() {
                s.push(B64[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// Little-endian bytes of `u32` values.
fn u32_bytes(v: impl Iterator<Item = u32>) -> Vec<u8> {
    v.flat_map(u32::to_le_bytes).collect()
}

/// Per-axis bounding box of `x` (zeros when empty).
fn bounds(x: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    if x.is_empty() {
        return ([0.0; 3], [0.0; 3]);
    }
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for p in x {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    (lo, hi)
}

/// 16-bit positions in the box `lo..hi`: `q = round((x − lo) / (hi − lo) · 65535)` per axis
/// (0 on a flat axis); [`dequantize`] inverts it as the page does.
pub fn quantize(x: &[[f32; 3]], lo: [f32; 3], hi: [f32; 3]) -> Vec<u16> {
    let mut q = Vec::with_capacity(3 * x.len());
    for p in x {
        for k in 0..3 {
            let ext = f64::from(hi[k]) - f64::from(lo[k]);
            let t = if ext > 0.0 {
                (f64::from(p[k]) - f64::from(lo[k])) / ext
            } else {
                0.0
            };
            q.push((t.clamp(0.0, 1.0) * 65535.0).round() as u16);
        }
    }
    q
}

/// The positions the page decodes from [`quantize`]'s output (`lo + q · (hi − lo) / 65535`).
#[cfg(test)]
fn dequantize(q: &[u16], lo: [f32; 3], hi: [f32; 3]) -> Vec<[f32; 3]> {
    q.chunks_exact(3)
        .map(|c| {
            let mut p = [0.0f32; 3];
            for k in 0..3 {
                p[k] = lo[k] + f32::from(c[k]) * ((hi[k] - lo[k]) / 65535.0);
            }
            p
        })
        .collect()
}

/// JSON text safe inside a `<script>` element (`<` escaped, so no `</script>` can occur).
fn script_json<T: Serialize>(v: &T) -> Result<String, ViewError> {
    serde_json::to_string(v)
        .map(|s| s.replace('<', "\\u003c"))
        .map_err(|e| (1, e.to_string()))
}

/// Text safe as HTML element content.
fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[derive(Serialize)]
struct FrameHeader<'a> {
    index: usize,
    time: Option<f64>,
    stats: &'a Value,
    /// Bounding box of the frame (the quantisation box when quantised).
    lo: [f32; 3],
    hi: [f32; 3],
}

#[derive(Serialize)]
struct PageMeta<'a> {
    title: &'a str,
    vertices: usize,
    bodies: &'a [ViewBody],
    colliders: &'a [ColliderMeta],
    summary: &'a serde_json::Map<String, Value>,
    frame_dt: Option<f64>,
    notes: &'a [String],
    quantized: bool,
    /// Bounding box of the bodies over all frames (camera framing).
    lo: [f32; 3],
    hi: [f32; 3],
    triangles: String,
    curve_lengths: String,
    curve_vertices: String,
    vertex_body: String,
}

/// Writes the page for `scene` and `frames` to `path` (frames are encoded as they come, so a
/// lazy iterator keeps memory at one frame). Every frame must have `scene.vertices` positions.
pub fn write_html(
    scene: &ViewScene,
    frames: impl Iterator<Item = Result<ViewFrame, ViewError>>,
    options: ViewOptions,
    path: &Path,
) -> Result<Written, ViewError> {
    let io = |e: std::io::Error| (1, format!("{}: {e}", path.display()));
    let (head, rest) = TEMPLATE
        .split_once("{{DATA}}")
        .ok_or((1, "view template has no {{DATA}} slot".to_string()))?;
    let file = std::fs::File::create(path).map_err(io)?;
    let mut w = std::io::BufWriter::new(file);
    w.write_all(
        head.replace("{{TITLE}}", &html_text(&scene.title))
            .as_bytes(),
    )
    .map_err(io)?;
    // {"frames":[...],"positions":[...],"meta":{...}}: frames first, so they stream; the meta
    // (which needs the bounds over all frames) last.
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    let mut headers = Vec::new();
    w.write_all(b"{\"positions\":[").map_err(io)?;
    for frame in frames {
        let f = frame?;
        if f.positions.len() != scene.vertices {
            return Err(bad(format!(
                "frame {}: {} vertices, but the run has {}",
                f.index,
                f.positions.len(),
                scene.vertices
            )));
        }
        if let Some(p) = f.positions.iter().flatten().find(|c| !c.is_finite()) {
            return Err(bad(format!(
                "frame {}: non-finite position coordinate {p}",
                f.index
            )));
        }
        let (flo, fhi) = bounds(&f.positions);
        for k in 0..3 {
            lo[k] = lo[k].min(flo[k]);
            hi[k] = hi[k].max(fhi[k]);
        }
        let bytes: Vec<u8> = if options.quantize {
            quantize(&f.positions, flo, fhi)
                .into_iter()
                .flat_map(u16::to_le_bytes)
                .collect()
        } else {
            f.positions
                .iter()
                .flatten()
                .flat_map(|c| c.to_le_bytes())
                .collect()
        };
        if !headers.is_empty() {
            w.write_all(b",").map_err(io)?;
        }
        write!(w, "\"{}\"", base64(&bytes)).map_err(io)?;
        headers.push(script_json(&FrameHeader {
            index: f.index,
            time: f.time,
            stats: &f.stats,
            lo: flo,
            hi: fhi,
        })?);
    }
    if headers.is_empty() {
        return Err(bad("no frames to show".into()));
    }
    let (lens, verts): (Vec<u32>, Vec<u32>) = (
        scene.curves.iter().map(|c| c.len() as u32).collect(),
        scene.curves.iter().flatten().copied().collect(),
    );
    let meta = PageMeta {
        title: &scene.title,
        vertices: scene.vertices,
        bodies: &scene.bodies,
        colliders: &scene.colliders,
        summary: &scene.summary,
        frame_dt: scene.frame_dt,
        notes: &scene.notes,
        quantized: options.quantize,
        lo,
        hi,
        triangles: base64(&u32_bytes(scene.triangles.iter().flatten().copied())),
        curve_lengths: base64(&u32_bytes(lens.into_iter())),
        curve_vertices: base64(&u32_bytes(verts.into_iter())),
        vertex_body: base64(&u32_bytes(scene.vertex_body.iter().copied())),
    };
    write!(
        w,
        "],\"frames\":[{}],\"meta\":{}}}",
        headers.join(","),
        script_json(&meta)?
    )
    .map_err(io)?;
    w.write_all(rest.replace("{{SCRIPT}}", SCRIPT).as_bytes())
        .map_err(io)?;
    w.flush().map_err(io)?;
    drop(w);
    let bytes = std::fs::metadata(path).map_err(io)?.len();
    Ok(Written {
        frames: headers.len(),
        bytes,
    })
}

// ------------------------------------------------------------------------------------------
// Reading a run folder

/// What `report.json` tells the viewer.
#[derive(Default)]
struct RunReport {
    /// The report's frame entries by frame number.
    frames: std::collections::BTreeMap<usize, Value>,
    /// Whether frame entries carry `time` (frame 0 = t 0); else frame k is the state after
    /// k + 1 frames (older runs).
    timed: bool,
    frame_dt: Option<f64>,
    bodies: Option<Vec<BodyMeta>>,
    colliders: Option<Vec<ColliderMeta>>,
    summary: serde_json::Map<String, Value>,
}

impl RunReport {
    /// Simulated time of frame `index` (s), when known.
    fn time(&self, index: usize) -> Option<f64> {
        if let Some(t) = self
            .frames
            .get(&index)
            .and_then(|f| f.get("time"))
            .and_then(Value::as_f64)
        {
            return Some(t);
        }
        let dt = self.frame_dt?;
        Some(if self.timed { index } else { index + 1 } as f64 * dt)
    }
}

/// Reads `path` (report.json) when it exists.
fn read_report(path: &Path) -> Result<Option<RunReport>, ViewError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(bad(format!("{}: cannot read: {e}", path.display()))),
    };
    let v: Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("{}: {e}", path.display())))?;
    parse_report(&v, path).map(Some)
}

/// What the report `v` (read from `path`) tells the viewer.
fn parse_report(v: &Value, path: &Path) -> Result<RunReport, ViewError> {
    let name = path.display();
    let Value::Object(top) = v else {
        return Err(bad(format!("{name}: not a JSON object")));
    };
    let mut r = RunReport::default();
    if let Some(fr) = top.get("frames") {
        let list = fr
            .as_array()
            .ok_or_else(|| bad(format!("{name}: frames: not an array")))?;
        for (k, f) in list.iter().enumerate() {
            let index = match f.get("frame") {
                Some(n) => n
                    .as_u64()
                    .ok_or_else(|| bad(format!("{name}: frames[{k}].frame: not a frame number")))?
                    as usize,
                None => k,
            };
            r.timed |= f.get("time").is_some();
            r.frames.insert(index, f.clone());
        }
    }
    let num = |key: &str| top.get(key).and_then(Value::as_f64);
    r.frame_dt = match (num("time_step"), num("substeps")) {
        (Some(h), Some(s)) if h > 0.0 && s >= 1.0 && (h * s).is_finite() => Some(h * s),
        _ => None,
    };
    if let Some(b) = top.get("bodies") {
        r.bodies = Some(
            serde_json::from_value(b.clone()).map_err(|e| bad(format!("{name}: bodies: {e}")))?,
        );
    }
    if let Some(c) = top.get("colliders") {
        r.colliders = Some(
            serde_json::from_value(c.clone())
                .map_err(|e| bad(format!("{name}: colliders: {e}")))?,
        );
    }
    for (k, v) in top {
        if !matches!(k.as_str(), "frames" | "bodies" | "colliders") && !v.is_array() {
            r.summary.insert(k.clone(), v.clone());
        }
    }
    Ok(r)
}

/// The numbered frame files `frame_NNNN.obj` (or `.ply`) of `dir`, in order.
fn frame_files(dir: &Path) -> Result<Vec<(usize, PathBuf)>, ViewError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| bad(format!("{}: cannot read folder: {e}", dir.display())))?;
    let mut found: [Vec<(usize, PathBuf)>; 2] = [Vec::new(), Vec::new()];
    for entry in entries {
        let entry = entry.map_err(|e| bad(format!("{}: {e}", dir.display())))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        for (slot, ext) in [".obj", ".ply"].iter().enumerate() {
            let Some(num) = name
                .strip_prefix("frame_")
                .and_then(|s| s.strip_suffix(ext))
            else {
                continue;
            };
            if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let n = num.parse().map_err(|_| {
                bad(format!(
                    "{}: frame number too large",
                    entry.path().display()
                ))
            })?;
            found[slot].push((n, entry.path()));
        }
    }
    let [obj, ply] = found;
    let mut files = if obj.is_empty() { ply } else { obj };
    if files.is_empty() {
        return Err(bad(format!(
            "{}: no frame_NNNN.obj or frame_NNNN.ply files (the viewer reads OBJ or PLY frames: \
             run with --export obj, or use `supple run --export html`)",
            dir.display()
        )));
    }
    files.sort();
    Ok(files)
}

/// Bodies named by OBJ `o NAME` groups: each vertex belongs to the group its `v` line is in,
/// or else to the group of the first face or polyline using it (`triangles`/`polylines` in
/// file order, as the mesh reader returns them). None without `o` lines.
fn obj_groups(
    text: &str,
    vertices: usize,
    triangles: &[[u32; 3]],
    polylines: &[Vec<u32>],
) -> Option<(Vec<String>, Vec<u32>)> {
    let mut names = Vec::new();
    let mut cur = u32::MAX;
    let (mut vgroup, mut tgroup, mut lgroup) = (Vec::new(), Vec::new(), Vec::new());
    for line in text.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("o") => {
                let name = it.collect::<Vec<_>>().join(" ");
                cur = names.len() as u32;
                names.push(name);
            }
            Some("v") => vgroup.push(cur),
            Some("f") | Some("fo") => {
                let n = it.count();
                tgroup.extend(std::iter::repeat_n(cur, n.saturating_sub(2)));
            }
            Some("l") => lgroup.push(cur),
            _ => {}
        }
    }
    if names.is_empty() || vgroup.len() != vertices {
        return None;
    }
    let mut assign = |v: u32, g: u32| {
        if let Some(slot) = vgroup.get_mut(v as usize) {
            if *slot == u32::MAX {
                *slot = g;
            }
        }
    };
    for (t, &g) in triangles.iter().zip(&tgroup) {
        t.iter().for_each(|&v| assign(v, g));
    }
    for (l, &g) in polylines.iter().zip(&lgroup) {
        l.iter().for_each(|&v| assign(v, g));
    }
    Some((names, vgroup))
}

struct FrameMesh {
    positions: Vec<[f64; 3]>,
    triangles: Vec<[u32; 3]>,
    polylines: Vec<Vec<u32>>,
}

fn load_frame(path: &Path) -> Result<FrameMesh, ViewError> {
    let l = supple::mesh::load(path).map_err(|e| bad(e.to_string()))?;
    Ok(FrameMesh {
        positions: l.surface.positions,
        triangles: l.surface.triangles,
        polylines: l.polylines,
    })
}

fn to_f32(x: &[[f64; 3]]) -> Vec<[f32; 3]> {
    x.iter().map(|p| p.map(|c| c as f32)).collect()
}

/// Body of each vertex from the report's `bodies` (checked against the frame size).
fn vertex_body_from_meta(
    bodies: &[BodyMeta],
    vertices: usize,
    report: &Path,
) -> Result<Vec<u32>, ViewError> {
    let mut vb = vec![u32::MAX; vertices];
    for (i, b) in bodies.iter().enumerate() {
        let [first, count] = b.surface_vertices;
        let end = first
            .checked_add(count)
            .filter(|&e| e <= vertices)
            .ok_or_else(|| {
                bad(format!(
                "{}: bodies[{i}].surface_vertices [{first}, {count}] lies outside the {vertices} \
                 frame vertices",
                report.display()
            ))
            })?;
        vb[first..end].fill(i as u32);
    }
    Ok(vb)
}

/// The scene part of the page for a run whose report is `report` (if any), given the first
/// frame's topology; OBJ groups (`groups`) name bodies when the report does not.
fn scene_of(
    title: String,
    report: Option<&RunReport>,
    report_path: &Path,
    mesh: (&[[u32; 3]], &[Vec<u32>], usize),
    groups: Option<(Vec<String>, Vec<u32>)>,
) -> Result<ViewScene, ViewError> {
    let (triangles, curves, vertices) = mesh;
    let mut scene = ViewScene {
        title,
        triangles: triangles.to_vec(),
        curves: curves.to_vec(),
        vertices,
        ..Default::default()
    };
    match (report.and_then(|r| r.bodies.as_ref()), groups) {
        (Some(bodies), _) => {
            scene.vertex_body = vertex_body_from_meta(bodies, vertices, report_path)?;
            scene.bodies = bodies
                .iter()
                .map(|b| ViewBody {
                    name: b.name.clone(),
                    model: b.model.clone(),
                })
                .collect();
        }
        (None, Some((names, vb))) => {
            scene.vertex_body = vb;
            scene.bodies = names
                .into_iter()
                .map(|name| ViewBody {
                    name,
                    model: String::new(),
                })
                .collect();
        }
        (None, None) => {
            scene.vertex_body = vec![0; vertices];
            scene.bodies = vec![ViewBody {
                name: "all bodies".into(),
                model: String::new(),
            }];
            scene.notes.push(
                "no per-body ranges (report.json without `bodies`, frames without `o` groups): \
                 one colour"
                    .into(),
            );
        }
    }
    match report {
        Some(r) => {
            scene.colliders = r.colliders.clone().unwrap_or_default();
            scene.summary = r.summary.clone();
            scene.frame_dt = r.frame_dt;
            if r.colliders.is_none() {
                scene.notes.push(
                    "report.json without `colliders` (an older run): colliders not drawn".into(),
                );
            }
        }
        None => scene
            .notes
            .push("no report.json: no statistics, times or colliders".into()),
    }
    Ok(scene)
}

/// Which of `count` frames to keep: every `every`-th, and the last.
fn kept(count: usize, every: usize) -> Vec<usize> {
    let mut k: Vec<usize> = (0..count).step_by(every.max(1)).collect();
    if count > 0 && k.last() != Some(&(count - 1)) {
        k.push(count - 1);
    }
    k
}

/// The frames folder of `dir` (`dir/frames`, or `dir` itself) and the run's report.json path.
fn locate(dir: &Path) -> (PathBuf, PathBuf) {
    let frames = dir.join("frames");
    if frames.is_dir() {
        (frames, dir.join("report.json"))
    } else {
        let parent = dir.parent().unwrap_or(Path::new("."));
        let report = if dir.join("report.json").exists() {
            dir.join("report.json")
        } else {
            parent.join("report.json")
        };
        (dir.to_path_buf(), report)
    }
}

/// Writes the page of the run folder `dir` (frames on disk) to `path`.
pub fn write_dir_html(
    dir: &Path,
    path: &Path,
    every: usize,
    options: ViewOptions,
) -> Result<Written, ViewError> {
    if every == 0 {
        return Err(bad("--every: must be at least 1".into()));
    }
    if !dir.is_dir() {
        return Err(bad(format!("{}: not a folder", dir.display())));
    }
    let (frames_dir, report_path) = locate(dir);
    let files = frame_files(&frames_dir)?;
    let report = read_report(&report_path)?;
    let first_path = &files[0].1;
    let first = load_frame(first_path)?;
    let groups = if first_path.extension().is_some_and(|e| e == "obj") {
        let text = std::fs::read_to_string(first_path)
            .map_err(|e| bad(format!("{}: {e}", first_path.display())))?;
        obj_groups(
            &text,
            first.positions.len(),
            &first.triangles,
            &first.polylines,
        )
    } else {
        None
    };
    let title = report
        .as_ref()
        .and_then(|r| r.summary.get("scene"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| dir.display().to_string());
    let scene = scene_of(
        title,
        report.as_ref(),
        &report_path,
        (&first.triangles, &first.polylines, first.positions.len()),
        groups,
    )?;
    let keep = kept(files.len(), every);
    let mut first_positions = Some(first.positions);
    let report = report.as_ref();
    let frames = keep.into_iter().map(|k| {
        let (index, path) = &files[k];
        let positions = match (k, first_positions.take()) {
            (0, Some(x)) => x,
            _ => {
                let m = load_frame(path)?;
                if m.triangles != scene.triangles || m.polylines != scene.curves {
                    return Err(bad(format!(
                        "{}: the triangles or polylines differ from those of {} (the topology \
                         must not change)",
                        path.display(),
                        first_path.display()
                    )));
                }
                if m.positions.len() != scene.vertices {
                    return Err(bad(format!(
                        "{}: {} vertices, but {} has {}",
                        path.display(),
                        m.positions.len(),
                        first_path.display(),
                        scene.vertices
                    )));
                }
                m.positions
            }
        };
        Ok(ViewFrame {
            index: *index,
            time: report.and_then(|r| r.time(*index)),
            positions: to_f32(&positions),
            stats: report
                .and_then(|r| r.frames.get(index).cloned())
                .unwrap_or(Value::Null),
        })
    });
    write_html(&scene, frames, options, path)
}

/// `supple run --export html`: the page of the run in `dir` with the report `report` (as
/// report.json will hold it) from the frames recorded in memory (`(frame, surface
/// positions)`), written to `dir/view.html`.
pub fn write_run_html(
    dir: &Path,
    report: &Value,
    triangles: &[[u32; 3]],
    curves: &[Vec<u32>],
    frames: &[(u32, Vec<[f32; 3]>)],
) -> Result<Written, ViewError> {
    let report_path = dir.join("report.json");
    // Through its text, so the page shows the numbers report.json holds (as `supple view` does).
    let text = serde_json::to_string(report).map_err(|e| (1, e.to_string()))?;
    let report: Value = serde_json::from_str(&text).map_err(|e| (1, e.to_string()))?;
    let report = Some(parse_report(&report, &report_path)?);
    let vertices = frames.first().map_or(0, |f| f.1.len());
    let title = report
        .as_ref()
        .and_then(|r| r.summary.get("scene"))
        .and_then(Value::as_str)
        .unwrap_or("supple run")
        .to_string();
    let scene = scene_of(
        title,
        report.as_ref(),
        &report_path,
        (triangles, curves, vertices),
        None,
    )?;
    let path = dir.join("view.html");
    let report = report.as_ref();
    let written = write_html(
        &scene,
        frames.iter().map(|(f, x)| {
            let index = *f as usize;
            Ok(ViewFrame {
                index,
                time: report.and_then(|r| r.time(index)),
                positions: x.clone(),
                stats: report
                    .and_then(|r| r.frames.get(&index).cloned())
                    .unwrap_or(Value::Null),
            })
        }),
        ViewOptions::default(),
        &path,
    )?;
    eprintln!(
        "[run] wrote {} ({})",
        path.display(),
        size_text(written.bytes)
    );
    Ok(written)
}

/// `1.23 MB`-style size.
fn size_text(bytes: u64) -> String {
    if bytes >= 1_000_000 {
        format!("{:.2} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.1} kB", bytes as f64 / 1e3)
    }
}

/// `supple view`: exit code 2 for bad input, 1 for I/O failures.
pub fn run(args: &Args) -> Result<(), ViewError> {
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| args.dir.join("view.html"));
    let w = write_dir_html(
        &args.dir,
        &out,
        args.every,
        ViewOptions {
            quantize: args.quantize,
        },
    )?;
    println!(
        "wrote {}: {} frames, {} positions, {}",
        out.display(),
        w.frames,
        if args.quantize {
            "16-bit"
        } else {
            "32-bit float"
        },
        size_text(w.bytes)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (i, o) in cases {
            assert_eq!(base64(i.as_bytes()), o, "{i}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn quantized_positions_are_within_half_a_step() {
        let x: Vec<[f32; 3]> = (0..200)
            .map(|i| {
                let t = i as f32 * 0.37;
                [t.sin() * 0.3, 2.0 + t.cos(), 0.125]
            })
            .collect();
        let (lo, hi) = bounds(&x);
        let back = dequantize(&quantize(&x, lo, hi), lo, hi);
        for (p, q) in x.iter().zip(&back) {
            for k in 0..3 {
                let step = (hi[k] - lo[k]) / 65535.0;
                assert!((p[k] - q[k]).abs() <= 0.5 * step + 1e-6, "{p:?} {q:?}");
            }
        }
        // The flat z axis decodes exactly.
        assert!(back.iter().all(|p| p[2] == 0.125));
    }

    #[test]
    fn script_json_never_closes_the_script_element() {
        let s = script_json(&serde_json::json!({ "name": "</script><b>" })).unwrap();
        assert!(!s.contains("</"));
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["name"], "</script><b>");
    }

    #[test]
    fn every_kth_frame_keeps_the_last() {
        assert_eq!(kept(10, 4), vec![0, 4, 8, 9]);
        assert_eq!(kept(9, 4), vec![0, 4, 8]);
        assert_eq!(kept(1, 3), vec![0]);
        assert_eq!(kept(5, 1), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn obj_groups_by_vertex_lines_and_by_faces() {
        // Groups holding their vertices.
        let text = "o cube\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\no rod\nv 0 0 1\nv 0 0 2\nl 4 5\n";
        let (names, vb) = obj_groups(text, 5, &[[0, 1, 2]], &[vec![3, 4]]).unwrap();
        assert_eq!(names, ["cube", "rod"]);
        assert_eq!(vb, [0, 0, 0, 1, 1]);
        // Vertices first, groups holding only faces.
        let text = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 2 1 0\no a\nf 1 2 3\no b\nf 2 4 5\n";
        let (names, vb) = obj_groups(text, 5, &[[0, 1, 2], [1, 3, 4]], &[]).unwrap();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(vb, [0, 0, 0, 1, 1]);
        // Merged (older) frames: no groups.
        assert!(obj_groups("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", 3, &[[0, 1, 2]], &[]).is_none());
    }

    #[test]
    fn frame_times_follow_the_report_convention() {
        let mut r = RunReport {
            frame_dt: Some(0.5),
            ..Default::default()
        };
        // Older runs: frame k is the state after k + 1 frames.
        assert_eq!(r.time(0), Some(0.5));
        // Timed reports: frame k at k frames, or the entry's own time.
        r.timed = true;
        r.frames
            .insert(3, serde_json::json!({ "frame": 3, "time": 1.25 }));
        assert_eq!(r.time(0), Some(0.0));
        assert_eq!(r.time(3), Some(1.25));
    }
}
