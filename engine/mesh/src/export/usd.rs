//! Time-sampled USD stages (`.usda` text layers) for Blender, Houdini and usdview.
//!
//! The stage has `metersPerUnit = 1`, `upAxis = "Z"`, `timeCodesPerSecond = framesPerSecond =
//! fps`, and under the root `Xform` either one body ([`UsdWriter::surface`],
//! [`UsdWriter::tet`]) or one prim per body ([`UsdWriter::bodies`]), plus optionally the
//! analytic colliders under `<root>/colliders` ([`UsdWriter::with_colliders`]): a
//! `UsdGeom.Sphere`, a `UsdGeom.Cube` of size 1 scaled to a box, and a plane as a square
//! `UsdGeom.Mesh` quad, each placed by an `xformOp:translate` that is time-sampled when the
//! collider moves. A body is a `UsdGeom.Mesh` (triangles, `faceVertexCounts` /
//! `faceVertexIndices`, `subdivisionScheme = "none"`, right-handed = counter-clockwise outward)
//! whose `points` and `extent` are sampled at time codes `start, start + 1, ...`, one per frame.
//! For tet meshes the `Mesh` is the boundary surface (its own compact vertex array) and, when
//! asked, a `UsdGeom.TetMesh` prim (USD 24.03 or newer: `tetVertexIndices`,
//! `surfaceFaceVertexIndices`; positively oriented tets are right-handed) holds all vertices; it
//! is marked invisible so viewers draw the surface once. Polylines (rods) added with
//! [`UsdWriter::with_curves`] become a `UsdGeom.BasisCurves` prim `<name>_curves` (`type =
//! "linear"`, `curveVertexCounts`, one `widths` value per curve) with its own time-sampled
//! `points`.
//!
//! Prim names are made valid identifiers (letters, digits, `_`; not starting with a digit) and
//! unique (a `_2`, `_3`, ... suffix); [`UsdWriter::prim_paths`] lists them.
//!
//! [`UsdWriter`] streams: each frame's samples are appended to temporary files beside the output
//! (`<path>.supple-tmp-*`), and [`UsdWriter::finish`] assembles the layer (written atomically),
//! so memory does not grow with the number of frames.

use super::{
    boundary_surface, check_curves, check_tets, check_tris, invalid, with_path, write_atomically,
};
use crate::model::TetMesh;
use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// Stage and prim settings of a USD export.
#[derive(Debug, Clone, PartialEq)]
pub struct UsdOptions {
    /// Frames per second (written as `timeCodesPerSecond` and `framesPerSecond`).
    pub fps: f64,
    /// Time code of the first frame.
    pub start_time: f64,
    /// Name of the root `Xform` prim (the default prim).
    pub root: String,
    /// Name of the body's `Mesh` prim (the `TetMesh` prim is named `<name>_tets`, the
    /// `BasisCurves` prim `<name>_curves`).
    pub name: String,
    /// For tet meshes, also write a `UsdGeom.TetMesh` prim.
    pub tet_mesh: bool,
}

impl Default for UsdOptions {
    fn default() -> Self {
        UsdOptions {
            fps: 60.0,
            start_time: 0.0,
            root: "World".into(),
            name: "body".into(),
            tet_mesh: false,
        }
    }
}

/// Writes a USD stage of a triangle surface with one time sample per entry of `frames` (each
/// holding the positions of all vertices, in topology order).
pub fn write_usda_surface<P: AsRef<[[f64; 3]]>>(
    path: impl AsRef<Path>,
    triangles: &[[u32; 3]],
    frames: &[P],
    opts: &UsdOptions,
) -> io::Result<()> {
    let n = frames.first().map(|f| f.as_ref().len()).unwrap_or(0);
    let mut w = UsdWriter::surface(path, triangles, n, opts)?;
    for f in frames {
        w.write_frame(f.as_ref())?;
    }
    w.finish()
}

/// Writes a USD stage of a tet mesh (boundary `Mesh`, plus `TetMesh` when `opts.tet_mesh`) with
/// one time sample per entry of `frames` (positions of all tet-mesh vertices).
pub fn write_usda_tet<P: AsRef<[[f64; 3]]>>(
    path: impl AsRef<Path>,
    mesh: &TetMesh,
    frames: &[P],
    opts: &UsdOptions,
) -> io::Result<()> {
    let mut w = UsdWriter::tet(path, mesh, opts)?;
    for f in frames {
        w.write_frame(f.as_ref())?;
    }
    w.finish()
}

/// One body of a multi-body stage ([`UsdWriter::bodies`]): the frame vertices it owns and its
/// triangles and polylines over them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UsdBody {
    /// Prim name (made a valid, unique identifier).
    pub name: String,
    /// Indices into each frame's positions of this body's vertices.
    pub vertices: Vec<u32>,
    /// Triangles over `vertices` (local indices): a `Mesh` prim of the vertices they use.
    pub triangles: Vec<[u32; 3]>,
    /// Polylines over `vertices` (local indices, at least two each): a linear `BasisCurves`
    /// prim (named like the body when it has no triangles, else `<name>_curves`).
    pub curves: Vec<Vec<u32>>,
    /// One width (diameter, m) per polyline, or empty for none.
    pub curve_widths: Vec<f64>,
}

/// The geometry of an analytic collider at time 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UsdColliderShape {
    /// A plane drawn as a square `Mesh` quad of side `2 half_size` centred at `point`, facing
    /// `normal` (normalised on use).
    Plane {
        /// A point of the plane, the quad's centre (m).
        point: [f64; 3],
        /// Outward normal.
        normal: [f64; 3],
        /// Half the quad's side (m).
        half_size: f64,
    },
    /// A `Sphere` prim.
    Sphere {
        /// Centre (m).
        center: [f64; 3],
        /// Radius (m).
        radius: f64,
    },
    /// An axis-aligned box: a `Cube` prim of size 1 scaled to `max − min` and moved to its
    /// centre.
    Box {
        /// Lower corner (m).
        min: [f64; 3],
        /// Upper corner (m).
        max: [f64; 3],
    },
}

/// An analytic collider of a stage ([`UsdWriter::with_colliders`]), moving at constant velocity.
#[derive(Debug, Clone, PartialEq)]
pub struct UsdCollider {
    /// Prim name (made a valid, unique identifier within `<root>/colliders`).
    pub name: String,
    /// Shape at time 0.
    pub shape: UsdColliderShape,
    /// Velocity (m/s): at time code `start + k` the shape is moved by `velocity · k / fps`.
    pub velocity: [f64; 3],
}

/// A streaming time-sampled prim: temp file and running extents.
struct Track {
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
    /// Frame vertex indices to write (None: all).
    map: Option<Vec<u32>>,
    extents: Vec<([f32; 3], [f32; 3])>,
}

impl Track {
    fn new(tmp: PathBuf, map: Option<Vec<u32>>) -> io::Result<Track> {
        let f = File::create(&tmp).map_err(|e| with_path(&tmp, e))?;
        Ok(Track {
            tmp,
            out: Some(BufWriter::with_capacity(1 << 20, f)),
            map,
            extents: Vec::new(),
        })
    }

    fn push(&mut self, time: f64, positions: &[[f64; 3]]) -> io::Result<()> {
        let Some(out) = self.out.as_mut() else {
            return Ok(());
        };
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        let mut line = String::with_capacity(64 * 1024);
        line.push_str(&format!("            {}: [", fmt_time(time)));
        let count = self.map.as_ref().map_or(positions.len(), |m| m.len());
        for k in 0..count {
            let i = self.map.as_ref().map_or(k, |m| m[k] as usize);
            let p = positions[i].map(|c| c as f32);
            for a in 0..3 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
            if k > 0 {
                line.push_str(", ");
            }
            line.push_str(&format!("({}, {}, {})", p[0], p[1], p[2]));
            if line.len() > 60 * 1024 {
                out.write_all(line.as_bytes())?;
                line.clear();
            }
        }
        line.push_str("],\n");
        out.write_all(line.as_bytes())?;
        if count == 0 {
            lo = [0.0; 3];
            hi = [0.0; 3];
        }
        self.extents.push((lo, hi));
        Ok(())
    }

    fn close(&mut self) -> io::Result<()> {
        if let Some(mut o) = self.out.take() {
            o.flush()?;
        }
        Ok(())
    }
}

impl Drop for Track {
    fn drop(&mut self) {
        self.out = None;
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// What a time-sampled prim holds besides its points.
enum PrimGeom {
    /// `Mesh` triangles over the track's points.
    Mesh(Vec<[u32; 3]>),
    /// `TetMesh` tets and surface faces over all frame vertices.
    Tets(Vec<[u32; 4]>, Vec<[u32; 3]>),
    /// `BasisCurves` vertex counts and widths (m; empty: not written).
    Curves(Vec<usize>, Vec<f64>),
}

/// A time-sampled prim of the stage.
struct Prim {
    name: String,
    geom: PrimGeom,
    track: Track,
}

/// Streaming writer of a time-sampled USD stage: create it with [`UsdWriter::surface`],
/// [`UsdWriter::tet`] or [`UsdWriter::bodies`], call [`UsdWriter::write_frame`] once per frame,
/// then [`UsdWriter::finish`]. Dropping it without `finish` removes its temporary files and
/// writes nothing.
pub struct UsdWriter {
    path: PathBuf,
    opts: UsdOptions,
    frame_vertices: usize,
    /// Time-sampled prims in stage order.
    prims: Vec<Prim>,
    /// Made by `surface` / `tet`: one body, `with_curves` applies.
    single_body: bool,
    /// Colliders with their unique prim names.
    colliders: Vec<UsdCollider>,
    frames: usize,
}

/// Makes `name` a valid identifier not in `used`, adding `_2`, `_3`, ... when taken; records it.
fn unique_name(name: &str, used: &mut HashSet<String>) -> String {
    let base = prim_name(name);
    let mut candidate = base.clone();
    let mut k = 2;
    while used.contains(&candidate) {
        candidate = format!("{base}_{k}");
        k += 1;
    }
    used.insert(candidate.clone());
    candidate
}

impl UsdWriter {
    /// A stage for a triangle surface of `num_vertices` vertices and these triangles.
    pub fn surface(
        path: impl AsRef<Path>,
        triangles: &[[u32; 3]],
        num_vertices: usize,
        opts: &UsdOptions,
    ) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        check_tris(triangles, num_vertices).map_err(|e| invalid(&path, e))?;
        check_opts(&path, opts)?;
        let track = Track::new(tmp_path(&path, 0), None)?;
        Ok(UsdWriter {
            frame_vertices: num_vertices,
            prims: vec![Prim {
                name: prim_name(&opts.name),
                geom: PrimGeom::Mesh(triangles.to_vec()),
                track,
            }],
            single_body: true,
            colliders: Vec::new(),
            frames: 0,
            opts: opts.clone(),
            path,
        })
    }

    /// A stage for a tet mesh: its boundary surface as a `Mesh` and, when `opts.tet_mesh`, the
    /// tets as a `TetMesh`. Frames give positions of all `mesh.positions.len()` vertices.
    pub fn tet(path: impl AsRef<Path>, mesh: &TetMesh, opts: &UsdOptions) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        check_tets(&mesh.tets, mesh.positions.len()).map_err(|e| invalid(&path, e))?;
        check_opts(&path, opts)?;
        let (surf, map) = boundary_surface(mesh);
        let name = prim_name(&opts.name);
        let mut prims = Vec::new();
        if opts.tet_mesh {
            // Surface faces in the TetMesh's own (full) indexing.
            let faces: Vec<[u32; 3]> = surf
                .triangles
                .iter()
                .map(|t| t.map(|v| map[v as usize]))
                .collect();
            prims.push(Prim {
                name: format!("{name}_tets"),
                geom: PrimGeom::Tets(mesh.tets.clone(), faces),
                track: Track::new(tmp_path(&path, 1), None)?,
            });
        }
        prims.insert(
            0,
            Prim {
                name,
                geom: PrimGeom::Mesh(surf.triangles),
                track: Track::new(tmp_path(&path, 0), Some(map))?,
            },
        );
        Ok(UsdWriter {
            frame_vertices: mesh.positions.len(),
            prims,
            single_body: true,
            colliders: Vec::new(),
            frames: 0,
            opts: opts.clone(),
            path,
        })
    }

    /// A stage with one prim per body: each frame gives the positions of `num_vertices`
    /// vertices, and body `b` shows those of `bodies[b].vertices` as a `Mesh` (its triangles,
    /// over the vertices they use) and/or a `BasisCurves` prim (its polylines). A body with
    /// neither, or indices out of range, is refused. The prim names are the bodies' names made
    /// valid and unique (`colliders` is reserved for [`UsdWriter::with_colliders`]).
    pub fn bodies(
        path: impl AsRef<Path>,
        num_vertices: usize,
        bodies: &[UsdBody],
        opts: &UsdOptions,
    ) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        check_opts(&path, opts)?;
        let mut used: HashSet<String> = HashSet::from(["colliders".to_string()]);
        let mut prims = Vec::new();
        for (i, b) in bodies.iter().enumerate() {
            let bad = |msg: String| invalid(&path, format!("body {i} ('{}'): {msg}", b.name));
            if let Some(v) = b.vertices.iter().find(|&&v| v as usize >= num_vertices) {
                return Err(bad(format!(
                    "vertex {v} is beyond the frame's {num_vertices}"
                )));
            }
            let n = b.vertices.len();
            check_tris(&b.triangles, n).map_err(|e| bad(e.to_string()))?;
            check_curves(&b.curves, n).map_err(|e| bad(e.to_string()))?;
            check_widths(&b.curves, &b.curve_widths).map_err(bad)?;
            if b.triangles.is_empty() && b.curves.is_empty() {
                return Err(bad("no triangles and no polylines to show".into()));
            }
            if !b.triangles.is_empty() {
                // The Mesh's points: the body vertices its triangles use, in body order.
                let mut local = vec![u32::MAX; n];
                let mut map = Vec::new();
                for &v in b.triangles.iter().flatten() {
                    local[v as usize] = 0;
                }
                for (v, l) in local.iter_mut().enumerate() {
                    if *l == 0 {
                        *l = map.len() as u32;
                        map.push(b.vertices[v]);
                    }
                }
                let tris = b
                    .triangles
                    .iter()
                    .map(|t| t.map(|v| local[v as usize]))
                    .collect();
                prims.push(Prim {
                    name: unique_name(&b.name, &mut used),
                    geom: PrimGeom::Mesh(tris),
                    track: Track::new(tmp_path(&path, prims.len()), Some(map))?,
                });
            }
            if !b.curves.is_empty() {
                let name = if b.triangles.is_empty() {
                    b.name.clone()
                } else {
                    format!("{}_curves", b.name)
                };
                let map = b
                    .curves
                    .iter()
                    .flatten()
                    .map(|&v| b.vertices[v as usize])
                    .collect();
                prims.push(Prim {
                    name: unique_name(&name, &mut used),
                    geom: PrimGeom::Curves(
                        b.curves.iter().map(Vec::len).collect(),
                        b.curve_widths.clone(),
                    ),
                    track: Track::new(tmp_path(&path, prims.len()), Some(map))?,
                });
            }
        }
        Ok(UsdWriter {
            frame_vertices: num_vertices,
            prims,
            single_body: false,
            colliders: Vec::new(),
            frames: 0,
            opts: opts.clone(),
            path,
        })
    }

    /// Adds analytic colliders under `<root>/colliders` (see the module docs). Call before the
    /// first frame; shapes must be finite, with positive radii, sizes and plane normals and
    /// boxes with `min < max`.
    pub fn with_colliders(mut self, colliders: &[UsdCollider]) -> io::Result<Self> {
        if self.frames > 0 {
            return Err(invalid(
                &self.path,
                "colliders must be added before the first frame",
            ));
        }
        let mut used: HashSet<String> = self.colliders.iter().map(|c| c.name.clone()).collect();
        for (i, c) in colliders.iter().enumerate() {
            check_collider(c)
                .map_err(|m| invalid(&self.path, format!("collider {i} ('{}'): {m}", c.name)))?;
            self.colliders.push(UsdCollider {
                name: unique_name(&c.name, &mut used),
                ..c.clone()
            });
        }
        Ok(self)
    }

    /// Adds a `BasisCurves` prim of linear polylines `curves` (each an ordered list of at least
    /// two indices into the frame positions) with one width (diameter, m) per curve in `widths`,
    /// or none when `widths` is empty. Call before the first frame; no curves adds nothing. For
    /// a surface stage the `Mesh` then leaves out the vertices that only curves use. Stages made
    /// by [`UsdWriter::bodies`] take their curves per body instead.
    pub fn with_curves(mut self, curves: &[Vec<u32>], widths: &[f64]) -> io::Result<Self> {
        if self.frames > 0 {
            return Err(invalid(
                &self.path,
                "curves must be added before the first frame",
            ));
        }
        if !self.single_body {
            return Err(invalid(
                &self.path,
                "a stage of bodies takes its curves per body (UsdBody::curves)",
            ));
        }
        check_curves(curves, self.frame_vertices).map_err(|e| invalid(&self.path, e))?;
        check_widths(curves, widths).map_err(|m| invalid(&self.path, m))?;
        if curves.is_empty() {
            return Ok(self);
        }
        let mesh = &mut self.prims[0];
        if let (PrimGeom::Mesh(tris), None) = (&mut mesh.geom, &mesh.track.map) {
            // The Mesh drops vertices only the curves use, so viewers show no loose points.
            let n = self.frame_vertices;
            let mut in_tri = vec![false; n];
            for &v in tris.iter().flatten() {
                in_tri[v as usize] = true;
            }
            let mut keep = vec![true; n];
            for &v in curves.iter().flatten() {
                keep[v as usize] = in_tri[v as usize];
            }
            if keep.iter().any(|k| !k) {
                let mut new_index = vec![u32::MAX; n];
                let mut map = Vec::new();
                for (v, _) in keep.iter().enumerate().filter(|(_, k)| **k) {
                    new_index[v] = map.len() as u32;
                    map.push(v as u32);
                }
                for t in tris.iter_mut() {
                    *t = t.map(|v| new_index[v as usize]);
                }
                mesh.track.map = Some(map);
            }
        }
        let name = format!("{}_curves", self.prims[0].name);
        let map: Vec<u32> = curves.iter().flatten().copied().collect();
        let track = Track::new(tmp_path(&self.path, self.prims.len()), Some(map))?;
        self.prims.push(Prim {
            name,
            geom: PrimGeom::Curves(curves.iter().map(Vec::len).collect(), widths.to_vec()),
            track,
        });
        Ok(self)
    }

    /// The paths of the prims the stage will hold, bodies first, then colliders (e.g.
    /// `/World/cube`, `/World/colliders/plane_0`).
    pub fn prim_paths(&self) -> Vec<String> {
        let root = prim_name(&self.opts.root);
        let mut v: Vec<String> = self
            .prims
            .iter()
            .map(|p| format!("/{root}/{}", p.name))
            .collect();
        v.extend(
            self.colliders
                .iter()
                .map(|c| format!("/{root}/colliders/{}", c.name)),
        );
        v
    }

    /// Appends one frame (time code `start_time + frame index`) with the positions of all
    /// vertices.
    pub fn write_frame(&mut self, positions: &[[f64; 3]]) -> io::Result<()> {
        if positions.len() != self.frame_vertices {
            return Err(invalid(
                &self.path,
                format!(
                    "frame has {} positions, expected {}",
                    positions.len(),
                    self.frame_vertices
                ),
            ));
        }
        let time = self.opts.start_time + self.frames as f64;
        for p in &mut self.prims {
            p.track
                .push(time, positions)
                .map_err(|e| with_path(&self.path, e))?;
        }
        self.frames += 1;
        Ok(())
    }

    /// Number of frames written so far.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Assembles the `.usda` file from the streamed frames (atomically) and removes the
    /// temporary files.
    pub fn finish(mut self) -> io::Result<()> {
        if self.frames == 0 {
            return Err(invalid(&self.path, "no frames were written"));
        }
        for p in &mut self.prims {
            p.track.close().map_err(|e| with_path(&self.path, e))?;
        }
        let path = self.path.clone();
        write_atomically(&path, |w| self.assemble(w))
    }

    fn assemble(&self, w: &mut impl Write) -> io::Result<()> {
        let o = &self.opts;
        let end = o.start_time + (self.frames - 1) as f64;
        let root = prim_name(&o.root);
        write!(
            w,
            "#usda 1.0\n(\n    defaultPrim = \"{root}\"\n    doc = \"Written by Supple\"\n    endTimeCode = {}\n    framesPerSecond = {}\n    metersPerUnit = 1\n    startTimeCode = {}\n    timeCodesPerSecond = {}\n    upAxis = \"Z\"\n)\n\n",
            fmt_time(end),
            fmt_time(o.fps),
            fmt_time(o.start_time),
            fmt_time(o.fps)
        )?;
        writeln!(w, "def Xform \"{root}\" (\n    kind = \"component\"\n)\n{{")?;
        for (i, p) in self.prims.iter().enumerate() {
            if i > 0 {
                writeln!(w)?;
            }
            match &p.geom {
                PrimGeom::Mesh(tris) => write_mesh_prim(w, &p.name, tris, &p.track, o)?,
                PrimGeom::Tets(tets, faces) => {
                    write_tet_prim(w, &p.name, tets, faces, &p.track, o)?
                }
                PrimGeom::Curves(counts, widths) => {
                    write_curves_prim(w, &p.name, counts, widths, &p.track, o)?
                }
            }
        }
        if !self.colliders.is_empty() {
            writeln!(w, "\n    def Xform \"colliders\"\n    {{")?;
            for (i, c) in self.colliders.iter().enumerate() {
                if i > 0 {
                    writeln!(w)?;
                }
                write_collider_prim(w, c, self.frames, o)?;
            }
            writeln!(w, "    }}")?;
        }
        writeln!(w, "}}")
    }
}

fn check_widths(curves: &[Vec<u32>], widths: &[f64]) -> Result<(), String> {
    if !widths.is_empty() && widths.len() != curves.len() {
        return Err(format!(
            "{} curve widths for {} curves",
            widths.len(),
            curves.len()
        ));
    }
    if !widths.iter().all(|w| w.is_finite() && *w >= 0.0) {
        return Err("curve widths must be finite and >= 0".into());
    }
    Ok(())
}

fn check_collider(c: &UsdCollider) -> Result<(), String> {
    let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
    if !finite(&c.velocity) {
        return Err("velocity must be finite".into());
    }
    match c.shape {
        UsdColliderShape::Plane {
            point,
            normal,
            half_size,
        } => {
            if !(finite(&point) && finite(&normal) && normal.iter().any(|&x| x != 0.0)) {
                return Err("plane point and normal must be finite, the normal non-zero".into());
            }
            if !(half_size > 0.0 && half_size.is_finite()) {
                return Err("plane half size must be positive and finite".into());
            }
        }
        UsdColliderShape::Sphere { center, radius } => {
            if !(finite(&center) && radius > 0.0 && radius.is_finite()) {
                return Err("sphere centre must be finite and its radius positive".into());
            }
        }
        UsdColliderShape::Box { min, max } => {
            if !(finite(&min) && finite(&max) && (0..3).all(|k| min[k] < max[k])) {
                return Err("box corners must be finite with min < max".into());
            }
        }
    }
    Ok(())
}

/// A `Mesh` prim of triangles whose points are the track's samples.
fn write_mesh_prim(
    w: &mut impl Write,
    name: &str,
    tris: &[[u32; 3]],
    track: &Track,
    o: &UsdOptions,
) -> io::Result<()> {
    writeln!(w, "    def Mesh \"{name}\"\n    {{")?;
    write_extents(w, &track.extents, o.start_time)?;
    write!(w, "        int[] faceVertexCounts = [")?;
    write_list(w, tris.iter().map(|_| "3".to_string()))?;
    writeln!(w, "]")?;
    write!(w, "        int[] faceVertexIndices = [")?;
    write_list(
        w,
        tris.iter().map(|t| format!("{}, {}, {}", t[0], t[1], t[2])),
    )?;
    writeln!(w, "]")?;
    writeln!(w, "        uniform token orientation = \"rightHanded\"")?;
    writeln!(w, "        point3f[] points.timeSamples = {{")?;
    copy_file(&track.tmp, w)?;
    writeln!(w, "        }}")?;
    writeln!(w, "        uniform token subdivisionScheme = \"none\"")?;
    writeln!(w, "    }}")
}

/// A `TetMesh` prim (invisible: viewers draw the boundary `Mesh`).
fn write_tet_prim(
    w: &mut impl Write,
    name: &str,
    tets: &[[u32; 4]],
    faces: &[[u32; 3]],
    track: &Track,
    o: &UsdOptions,
) -> io::Result<()> {
    writeln!(w, "    def TetMesh \"{name}\"\n    {{")?;
    write_extents(w, &track.extents, o.start_time)?;
    writeln!(w, "        uniform token orientation = \"rightHanded\"")?;
    writeln!(w, "        point3f[] points.timeSamples = {{")?;
    copy_file(&track.tmp, w)?;
    writeln!(w, "        }}")?;
    write!(w, "        int3[] surfaceFaceVertexIndices = [")?;
    write_list(
        w,
        faces
            .iter()
            .map(|t| format!("({}, {}, {})", t[0], t[1], t[2])),
    )?;
    writeln!(w, "]")?;
    write!(w, "        int4[] tetVertexIndices = [")?;
    write_list(
        w,
        tets.iter()
            .map(|t| format!("({}, {}, {}, {})", t[0], t[1], t[2], t[3])),
    )?;
    writeln!(w, "]")?;
    writeln!(w, "        token visibility = \"invisible\"")?;
    writeln!(w, "    }}")
}

/// A linear `BasisCurves` prim whose points are the track's samples.
fn write_curves_prim(
    w: &mut impl Write,
    name: &str,
    counts: &[usize],
    widths: &[f64],
    track: &Track,
    o: &UsdOptions,
) -> io::Result<()> {
    writeln!(w, "    def BasisCurves \"{name}\"\n    {{")?;
    write!(w, "        int[] curveVertexCounts = [")?;
    write_list(w, counts.iter().map(|c| c.to_string()))?;
    writeln!(w, "]")?;
    // The extent bounds the curves' points padded by half the widest width.
    let pad = widths.iter().fold(0.0f64, |a, &b| a.max(b)) as f32 / 2.0;
    let ext: Vec<_> = track
        .extents
        .iter()
        .map(|(lo, hi)| (lo.map(|c| c - pad), hi.map(|c| c + pad)))
        .collect();
    write_extents(w, &ext, o.start_time)?;
    writeln!(w, "        point3f[] points.timeSamples = {{")?;
    copy_file(&track.tmp, w)?;
    writeln!(w, "        }}")?;
    writeln!(w, "        uniform token type = \"linear\"")?;
    if !widths.is_empty() {
        write!(w, "        float[] widths = [")?;
        write_list(w, widths.iter().map(|x| format!("{}", *x as f32)))?;
        writeln!(w, "] (\n            interpolation = \"uniform\"\n        )")?;
    }
    writeln!(w, "    }}")
}

/// A collider prim under the `colliders` scope: its shape in local coordinates, grey, and
/// placed by `xformOp:translate` (time-sampled per frame when it moves).
fn write_collider_prim(
    w: &mut impl Write,
    c: &UsdCollider,
    frames: usize,
    o: &UsdOptions,
) -> io::Result<()> {
    let (kind, origin) = match c.shape {
        UsdColliderShape::Plane { point, .. } => ("Mesh", point),
        UsdColliderShape::Sphere { center, .. } => ("Sphere", center),
        UsdColliderShape::Box { min, max } => ("Cube", [0, 1, 2].map(|k| 0.5 * (min[k] + max[k]))),
    };
    writeln!(w, "        def {kind} \"{}\"\n        {{", c.name)?;
    writeln!(
        w,
        "            color3f[] primvars:displayColor = [(0.5, 0.5, 0.5)]"
    )?;
    let mut ops = vec!["\"xformOp:translate\""];
    match c.shape {
        UsdColliderShape::Plane {
            normal, half_size, ..
        } => {
            let corners = quad_corners(normal, half_size);
            let ext = bounds(&corners);
            writeln!(w, "            float3[] extent = {}", fmt_extent(ext))?;
            writeln!(w, "            int[] faceVertexCounts = [4]")?;
            writeln!(w, "            int[] faceVertexIndices = [0, 1, 2, 3]")?;
            writeln!(w, "            uniform token orientation = \"rightHanded\"")?;
            let pts: Vec<String> = corners.iter().map(|p| fmt_vec_f32(*p)).collect();
            writeln!(w, "            point3f[] points = [{}]", pts.join(", "))?;
            writeln!(w, "            uniform token subdivisionScheme = \"none\"")?;
        }
        UsdColliderShape::Sphere { radius, .. } => {
            let r = [radius; 3];
            writeln!(
                w,
                "            float3[] extent = {}",
                fmt_extent((r.map(|x| -x), r))
            )?;
            writeln!(w, "            double radius = {radius}")?;
        }
        UsdColliderShape::Box { min, max } => {
            writeln!(
                w,
                "            float3[] extent = [(-0.5, -0.5, -0.5), (0.5, 0.5, 0.5)]"
            )?;
            writeln!(w, "            double size = 1")?;
            let s = [0, 1, 2].map(|k| max[k] - min[k]);
            writeln!(w, "            float3 xformOp:scale = {}", fmt_vec_f32(s))?;
            ops.push("\"xformOp:scale\"");
        }
    }
    if c.velocity.iter().all(|&v| v == 0.0) {
        writeln!(
            w,
            "            double3 xformOp:translate = {}",
            fmt_vec(origin)
        )?;
    } else {
        writeln!(w, "            double3 xformOp:translate.timeSamples = {{")?;
        for k in 0..frames {
            let t = k as f64 / o.fps;
            let p = [0, 1, 2].map(|a| origin[a] + c.velocity[a] * t);
            writeln!(
                w,
                "                {}: {},",
                fmt_time(o.start_time + k as f64),
                fmt_vec(p)
            )?;
        }
        writeln!(w, "            }}")?;
    }
    writeln!(
        w,
        "            uniform token[] xformOpOrder = [{}]",
        ops.join(", ")
    )?;
    writeln!(w, "        }}")
}

/// Corners of a square of half side `h` through the origin facing unit `normal`,
/// counter-clockwise seen from the normal's side.
fn quad_corners(normal: [f64; 3], h: f64) -> [[f64; 3]; 4] {
    let l = (normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]).sqrt();
    let n = normal.map(|x| x / l);
    // u: any unit vector perpendicular to n; v = n × u, so (u, v, n) is right-handed.
    let a = if n[0].abs() < 0.9 {
        [1.0, 0.0, 0.0]
    } else {
        [0.0, 1.0, 0.0]
    };
    let cross = |p: [f64; 3], q: [f64; 3]| {
        [
            p[1] * q[2] - p[2] * q[1],
            p[2] * q[0] - p[0] * q[2],
            p[0] * q[1] - p[1] * q[0],
        ]
    };
    let u0 = cross(a, n);
    let lu = (u0[0] * u0[0] + u0[1] * u0[1] + u0[2] * u0[2]).sqrt();
    let u = u0.map(|x| x / lu);
    let v = cross(n, u);
    let at = |su: f64, sv: f64| [0, 1, 2].map(|k| h * (su * u[k] + sv * v[k]));
    [at(-1.0, -1.0), at(1.0, -1.0), at(1.0, 1.0), at(-1.0, 1.0)]
}

fn bounds(points: &[[f64; 3]]) -> ([f64; 3], [f64; 3]) {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    (lo, hi)
}

fn fmt_vec(p: [f64; 3]) -> String {
    format!("({}, {}, {})", p[0], p[1], p[2])
}

fn fmt_vec_f32(p: [f64; 3]) -> String {
    format!("({}, {}, {})", p[0] as f32, p[1] as f32, p[2] as f32)
}

fn fmt_extent((lo, hi): ([f64; 3], [f64; 3])) -> String {
    format!("[{}, {}]", fmt_vec_f32(lo), fmt_vec_f32(hi))
}

fn check_opts(path: &Path, o: &UsdOptions) -> io::Result<()> {
    if !(o.fps > 0.0 && o.fps.is_finite() && o.start_time.is_finite()) {
        return Err(invalid(path, "USD fps must be positive and times finite"));
    }
    Ok(())
}

fn tmp_path(path: &Path, prim: usize) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(format!(".{}.supple-tmp-{prim}", std::process::id()));
    PathBuf::from(s)
}

/// A valid USD prim identifier (letters, digits, `_`; not starting with a digit).
fn prim_name(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

/// Time codes and rates: integers without a fraction, otherwise shortest decimal.
fn fmt_time(t: f64) -> String {
    if t.fract() == 0.0 && t.abs() < 1e15 {
        format!("{}", t as i64)
    } else {
        format!("{t}")
    }
}

fn write_extents(w: &mut impl Write, ext: &[([f32; 3], [f32; 3])], start: f64) -> io::Result<()> {
    writeln!(w, "        float3[] extent.timeSamples = {{")?;
    for (i, (lo, hi)) in ext.iter().enumerate() {
        writeln!(
            w,
            "            {}: [({}, {}, {}), ({}, {}, {})],",
            fmt_time(start + i as f64),
            lo[0],
            lo[1],
            lo[2],
            hi[0],
            hi[1],
            hi[2]
        )?;
    }
    writeln!(w, "        }}")
}

fn write_list(w: &mut impl Write, items: impl Iterator<Item = String>) -> io::Result<()> {
    let mut s = String::with_capacity(64 * 1024);
    for (i, it) in items.enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&it);
        if s.len() > 60 * 1024 {
            w.write_all(s.as_bytes())?;
            s.clear();
        }
    }
    w.write_all(s.as_bytes())
}

fn copy_file(src: &Path, w: &mut impl Write) -> io::Result<()> {
    let mut f = File::open(src)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        w.write_all(&buf[..n])?;
    }
}
