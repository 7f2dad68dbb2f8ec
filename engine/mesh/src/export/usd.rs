//! Time-sampled USD stages (`.usda` text layers) for Blender, Houdini and usdview.
//!
//! The stage has `metersPerUnit = 1`, `upAxis = "Z"`, `timeCodesPerSecond = framesPerSecond =
//! fps`, and under the root `Xform` one `UsdGeom.Mesh` (triangles, `faceVertexCounts` /
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
//! [`UsdWriter`] streams: each frame's samples are appended to temporary files beside the output
//! (`<path>.supple-tmp-*`), and [`UsdWriter::finish`] assembles the layer, so memory does not grow
//! with the number of frames.

use super::{boundary_surface, check_curves, check_tets, check_tris, invalid, with_path};
use crate::model::TetMesh;
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

/// A streaming time-sampled body: temp file and running extents.
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

/// Streaming writer of a time-sampled USD stage: create it with [`UsdWriter::surface`] or
/// [`UsdWriter::tet`], call [`UsdWriter::write_frame`] once per frame, then
/// [`UsdWriter::finish`]. Dropping it without `finish` removes its temporary files and writes
/// nothing.
pub struct UsdWriter {
    path: PathBuf,
    opts: UsdOptions,
    frame_vertices: usize,
    surface_tris: Vec<[u32; 3]>,
    surface: Track,
    tet: Option<(Vec<[u32; 4]>, Vec<[u32; 3]>, Track)>,
    /// Polyline vertex counts, widths (m; empty: not written) and their points.
    curves: Option<(Vec<usize>, Vec<f64>, Track)>,
    frames: usize,
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
        let surface = Track::new(tmp_path(&path, "surface"), None)?;
        Ok(UsdWriter {
            frame_vertices: num_vertices,
            surface_tris: triangles.to_vec(),
            surface,
            tet: None,
            curves: None,
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
        let surface = Track::new(tmp_path(&path, "surface"), Some(map.clone()))?;
        let tet = if opts.tet_mesh {
            // Surface faces in the TetMesh's own (full) indexing.
            let faces: Vec<[u32; 3]> = surf
                .triangles
                .iter()
                .map(|t| t.map(|v| map[v as usize]))
                .collect();
            Some((
                mesh.tets.clone(),
                faces,
                Track::new(tmp_path(&path, "tets"), None)?,
            ))
        } else {
            None
        };
        Ok(UsdWriter {
            frame_vertices: mesh.positions.len(),
            surface_tris: surf.triangles,
            surface,
            tet,
            curves: None,
            frames: 0,
            opts: opts.clone(),
            path,
        })
    }

    /// Adds a `BasisCurves` prim of linear polylines `curves` (each an ordered list of at least
    /// two indices into the frame positions) with one width (diameter, m) per curve in `widths`,
    /// or none when `widths` is empty. Call before the first frame; no curves adds nothing. For
    /// a surface stage the `Mesh` then leaves out the vertices that only curves use.
    pub fn with_curves(mut self, curves: &[Vec<u32>], widths: &[f64]) -> io::Result<Self> {
        if self.frames > 0 {
            return Err(invalid(
                &self.path,
                "curves must be added before the first frame",
            ));
        }
        check_curves(curves, self.frame_vertices).map_err(|e| invalid(&self.path, e))?;
        if !widths.is_empty() && widths.len() != curves.len() {
            return Err(invalid(
                &self.path,
                format!("{} curve widths for {} curves", widths.len(), curves.len()),
            ));
        }
        if !widths.iter().all(|w| w.is_finite() && *w >= 0.0) {
            return Err(invalid(&self.path, "curve widths must be finite and >= 0"));
        }
        if curves.is_empty() {
            self.curves = None;
            return Ok(self);
        }
        if self.surface.map.is_none() {
            // The Mesh drops vertices only the curves use, so viewers show no loose points.
            let n = self.frame_vertices;
            let mut in_tri = vec![false; n];
            for &v in self.surface_tris.iter().flatten() {
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
                for t in &mut self.surface_tris {
                    *t = t.map(|v| new_index[v as usize]);
                }
                self.surface.map = Some(map);
            }
        }
        let map: Vec<u32> = curves.iter().flatten().copied().collect();
        let track = Track::new(tmp_path(&self.path, "curves"), Some(map))?;
        self.curves = Some((
            curves.iter().map(Vec::len).collect(),
            widths.to_vec(),
            track,
        ));
        Ok(self)
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
        self.surface
            .push(time, positions)
            .map_err(|e| with_path(&self.path, e))?;
        if let Some((_, _, t)) = self.tet.as_mut() {
            t.push(time, positions)
                .map_err(|e| with_path(&self.path, e))?;
        }
        if let Some((_, _, t)) = self.curves.as_mut() {
            t.push(time, positions)
                .map_err(|e| with_path(&self.path, e))?;
        }
        self.frames += 1;
        Ok(())
    }

    /// Number of frames written so far.
    pub fn frames(&self) -> usize {
        self.frames
    }

    /// Assembles the `.usda` file from the streamed frames and removes the temporary files.
    pub fn finish(mut self) -> io::Result<()> {
        if self.frames == 0 {
            return Err(invalid(&self.path, "no frames were written"));
        }
        let path = self.path.clone();
        self.assemble().map_err(|e| with_path(&path, e))
    }

    fn assemble(&mut self) -> io::Result<()> {
        self.surface.close()?;
        if let Some((_, _, t)) = self.tet.as_mut() {
            t.close()?;
        }
        if let Some((_, _, t)) = self.curves.as_mut() {
            t.close()?;
        }
        let o = &self.opts;
        let file = File::create(&self.path)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let end = o.start_time + (self.frames - 1) as f64;
        let root = prim_name(&o.root);
        let name = prim_name(&o.name);
        write!(
            w,
            "#usda 1.0\n(\n    defaultPrim = \"{root}\"\n    doc = \"Written by Supple\"\n    endTimeCode = {}\n    framesPerSecond = {}\n    metersPerUnit = 1\n    startTimeCode = {}\n    timeCodesPerSecond = {}\n    upAxis = \"Z\"\n)\n\n",
            fmt_time(end),
            fmt_time(o.fps),
            fmt_time(o.start_time),
            fmt_time(o.fps)
        )?;
        writeln!(w, "def Xform \"{root}\" (\n    kind = \"component\"\n)\n{{")?;
        writeln!(w, "    def Mesh \"{name}\"\n    {{")?;
        write_extents(&mut w, &self.surface.extents, o.start_time)?;
        write!(w, "        int[] faceVertexCounts = [")?;
        write_list(&mut w, self.surface_tris.iter().map(|_| "3".to_string()))?;
        writeln!(w, "]")?;
        write!(w, "        int[] faceVertexIndices = [")?;
        write_list(
            &mut w,
            self.surface_tris
                .iter()
                .map(|t| format!("{}, {}, {}", t[0], t[1], t[2])),
        )?;
        writeln!(w, "]")?;
        writeln!(w, "        uniform token orientation = \"rightHanded\"")?;
        writeln!(w, "        point3f[] points.timeSamples = {{")?;
        copy_file(&self.surface.tmp, &mut w)?;
        writeln!(w, "        }}")?;
        writeln!(w, "        uniform token subdivisionScheme = \"none\"")?;
        writeln!(w, "    }}")?;
        if let Some((tets, faces, track)) = &self.tet {
            writeln!(w, "\n    def TetMesh \"{name}_tets\"\n    {{")?;
            write_extents(&mut w, &track.extents, o.start_time)?;
            writeln!(w, "        uniform token orientation = \"rightHanded\"")?;
            writeln!(w, "        point3f[] points.timeSamples = {{")?;
            copy_file(&track.tmp, &mut w)?;
            writeln!(w, "        }}")?;
            write!(w, "        int3[] surfaceFaceVertexIndices = [")?;
            write_list(
                &mut w,
                faces
                    .iter()
                    .map(|t| format!("({}, {}, {})", t[0], t[1], t[2])),
            )?;
            writeln!(w, "]")?;
            write!(w, "        int4[] tetVertexIndices = [")?;
            write_list(
                &mut w,
                tets.iter()
                    .map(|t| format!("({}, {}, {}, {})", t[0], t[1], t[2], t[3])),
            )?;
            writeln!(w, "]")?;
            writeln!(w, "        token visibility = \"invisible\"")?;
            writeln!(w, "    }}")?;
        }
        if let Some((counts, widths, track)) = &self.curves {
            writeln!(w, "\n    def BasisCurves \"{name}_curves\"\n    {{")?;
            write!(w, "        int[] curveVertexCounts = [")?;
            write_list(&mut w, counts.iter().map(|c| c.to_string()))?;
            writeln!(w, "]")?;
            // The extent bounds the curves' points padded by half the widest width.
            let pad = widths.iter().fold(0.0f64, |a, &b| a.max(b)) as f32 / 2.0;
            let ext: Vec<_> = track
                .extents
                .iter()
                .map(|(lo, hi)| (lo.map(|c| c - pad), hi.map(|c| c + pad)))
                .collect();
            write_extents(&mut w, &ext, o.start_time)?;
            writeln!(w, "        point3f[] points.timeSamples = {{")?;
            copy_file(&track.tmp, &mut w)?;
            writeln!(w, "        }}")?;
            writeln!(w, "        uniform token type = \"linear\"")?;
            if !widths.is_empty() {
                write!(w, "        float[] widths = [")?;
                write_list(&mut w, widths.iter().map(|x| format!("{}", *x as f32)))?;
                writeln!(w, "] (\n            interpolation = \"uniform\"\n        )")?;
            }
            writeln!(w, "    }}")?;
        }
        writeln!(w, "}}")?;
        w.flush()
    }
}

fn check_opts(path: &Path, o: &UsdOptions) -> io::Result<()> {
    if !(o.fps > 0.0 && o.fps.is_finite()) || !o.start_time.is_finite() {
        return Err(invalid(path, "USD fps must be positive and times finite"));
    }
    Ok(())
}

fn tmp_path(path: &Path, what: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(format!(".supple-tmp-{what}"));
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
