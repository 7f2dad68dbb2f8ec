//! Headless PNG preview of simulation frames (`preview.png` of `supple run`): a software
//! rasterizer (z-buffer, two-sided Lambert shading, one orthographic camera shared by all
//! frames) drawing each chosen frame side by side: the bodies in distinct colours, rods as
//! depth-tested lines, the analytic colliders at the frame's time (planes as a gridded square
//! around the bodies, spheres with stripes that show their spin, boxes), a label with the frame
//! and time on each panel, and a legend of the bodies' colours on the first.

use crate::run_meta::{ColliderMeta, ShapeMeta};
use std::path::Path;

/// Width and height of one frame's tile in pixels.
const TILE: (usize, usize) = (360, 300);
/// Body colours (the viewer's palette).
const PALETTE: [[u8; 3]; 10] = [
    [0x4e, 0x79, 0xa7],
    [0xf2, 0x8e, 0x2b],
    [0xe1, 0x57, 0x59],
    [0x59, 0xa1, 0x4f],
    [0xb0, 0x7a, 0xa1],
    [0xed, 0xc9, 0x48],
    [0x17, 0xbe, 0xcf],
    [0xff, 0x9d, 0xa7],
    [0x9c, 0x75, 0x5f],
    [0x76, 0xb7, 0xb2],
];
const NO_BODY: [u8; 3] = [150, 150, 150];
const BACKGROUND: [u8; 3] = [246, 247, 249];
const COLLIDER: [u8; 3] = [189, 182, 168];
const COLLIDER_STRIPE: [u8; 3] = [165, 157, 142];
const PLANE: [u8; 3] = [222, 225, 230];
const GRID: [u8; 3] = [165, 172, 182];

type V3 = [f64; 3];

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn normalize(a: V3) -> V3 {
    let l = dot(a, a).sqrt().max(1e-30);
    [a[0] / l, a[1] / l, a[2] / l]
}

/// Rotation of `p` about the unit `axis` by `angle` (Rodrigues).
fn rotate(p: V3, axis: V3, angle: f64) -> V3 {
    let (s, c) = angle.sin_cos();
    add(
        add(scale(p, c), scale(cross(axis, p), s)),
        scale(axis, dot(axis, p) * (1.0 - c)),
    )
}

/// What the preview draws besides the frames' positions.
#[derive(Debug, Clone, Default)]
pub struct PreviewScene {
    /// Surface triangles over the frame vertices.
    pub triangles: Vec<[u32; 3]>,
    /// Rod polylines over the frame vertices.
    pub curves: Vec<Vec<u32>>,
    /// Body of each frame vertex (`u32::MAX`: none, drawn grey).
    pub vertex_body: Vec<u32>,
    /// Body names, for the legend.
    pub body_names: Vec<String>,
    /// The analytic colliders at t = 0.
    pub colliders: Vec<ColliderMeta>,
}

impl PreviewScene {
    /// The preview scene of a run: bodies and colliders from [`crate::run_meta`].
    pub fn of_run(sim: &supple::simulation::Simulation, scene: &supple::scene::Scene) -> Self {
        let bodies = crate::run_meta::bodies(sim);
        let mut vertex_body = vec![u32::MAX; sim.surface_vertices().len()];
        for (i, b) in bodies.iter().enumerate() {
            let [first, count] = b.surface_vertices;
            if let Some(s) = vertex_body.get_mut(first..first + count) {
                s.fill(i as u32);
            }
        }
        PreviewScene {
            triangles: sim.surface().to_vec(),
            curves: sim.curves().to_vec(),
            vertex_body,
            body_names: bodies.into_iter().map(|b| b.name).collect(),
            colliders: crate::run_meta::colliders(scene),
        }
    }
}

/// One panel of the preview.
#[derive(Debug, Clone)]
pub struct PreviewFrame {
    /// Frame number (as exported).
    pub frame: u32,
    /// Simulated time of the frame (s).
    pub time: f64,
    /// Positions of the frame vertices (m).
    pub positions: Vec<V3>,
}

/// A colour image with a depth buffer per tile.
struct Canvas {
    w: usize,
    rgb: Vec<u8>,
    depth: Vec<f64>,
    /// Left edge of the tile being drawn.
    ox: usize,
}

/// A projected point: pixel x, pixel y, depth (larger is farther).
type Screen = (f64, f64, f64);

impl Canvas {
    fn put(&mut self, px: usize, py: usize, z: f64, color: [u8; 3]) {
        let k = py * TILE.0 + px;
        if z < self.depth[k] {
            self.depth[k] = z;
            let o = 3 * (py * self.w + self.ox + px);
            self.rgb[o..o + 3].copy_from_slice(&color);
        }
    }

    /// Fills the triangle `s` with the colour `shade` gives for barycentric weights.
    fn triangle(&mut self, s: [Screen; 3], shade: &dyn Fn([f64; 3]) -> [u8; 3]) {
        let area = (s[1].0 - s[0].0) * (s[2].1 - s[0].1) - (s[2].0 - s[0].0) * (s[1].1 - s[0].1);
        if !area.is_finite() || area.abs() < 1e-12 {
            return;
        }
        let fold = |f: fn(f64, f64) -> f64, init: f64, c: fn(&Screen) -> f64| {
            s.iter().map(c).fold(init, f)
        };
        let (x0, x1) = (
            fold(f64::min, f64::INFINITY, |p| p.0),
            fold(f64::max, f64::NEG_INFINITY, |p| p.0),
        );
        let (y0, y1) = (
            fold(f64::min, f64::INFINITY, |p| p.1),
            fold(f64::max, f64::NEG_INFINITY, |p| p.1),
        );
        if x1 < 0.0 || y1 < 0.0 || x0 >= TILE.0 as f64 || y0 >= TILE.1 as f64 {
            return;
        }
        let (ya, yb) = (
            y0.floor().max(0.0) as usize,
            y1.ceil().min(TILE.1 as f64 - 1.0) as usize,
        );
        let (xa, xb) = (
            x0.floor().max(0.0) as usize,
            x1.ceil().min(TILE.0 as f64 - 1.0) as usize,
        );
        for py in ya..=yb {
            for px in xa..=xb {
                let (qx, qy) = (px as f64 + 0.5, py as f64 + 0.5);
                let w0 = ((s[1].0 - qx) * (s[2].1 - qy) - (s[2].0 - qx) * (s[1].1 - qy)) / area;
                let w1 = ((s[2].0 - qx) * (s[0].1 - qy) - (s[0].0 - qx) * (s[2].1 - qy)) / area;
                let w2 = 1.0 - w0 - w1;
                if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                    continue;
                }
                let z = w0 * s[0].2 + w1 * s[1].2 + w2 * s[2].2;
                let k = py * TILE.0 + px;
                if z < self.depth[k] {
                    let c = shade([w0, w1, w2]);
                    self.put(px, py, z, c);
                }
            }
        }
    }

    /// A 2-pixel-wide depth-tested line from `a` to `b`, drawn `bias` closer than it is.
    fn line(&mut self, a: Screen, b: Screen, bias: f64, color: [u8; 3]) {
        let steps = ((b.0 - a.0).abs().max((b.1 - a.1).abs()).ceil() as usize).clamp(1, 4096);
        for k in 0..=steps {
            let t = k as f64 / steps as f64;
            let (qx, qy, z) = (
                a.0 + t * (b.0 - a.0),
                a.1 + t * (b.1 - a.1),
                a.2 + t * (b.2 - a.2) - bias,
            );
            for (dx, dy) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
                let (fx, fy) = ((qx - 0.5 + dx).floor(), (qy - 0.5 + dy).floor());
                if fx >= 0.0 && fy >= 0.0 && fx < TILE.0 as f64 && fy < TILE.1 as f64 {
                    self.put(fx as usize, fy as usize, z, color);
                }
            }
        }
    }

    /// Text at pixel (x, y) of the tile (top-left of the first glyph), `size` pixels per font
    /// pixel, on a light box; drawn over everything.
    fn text(&mut self, x: usize, y: usize, size: usize, s: &str, color: [u8; 3]) {
        let (gw, gh) = (6 * size, 8 * size);
        let n = s.chars().count();
        for py in y.saturating_sub(2)..(y + gh + 1).min(TILE.1) {
            for px in x.saturating_sub(3)..(x + n * gw + 2).min(TILE.0) {
                self.put(px, py, f64::NEG_INFINITY, [255, 255, 255]);
            }
        }
        for (i, ch) in s.chars().enumerate() {
            let rows = glyph(ch);
            for (r, row) in rows.iter().enumerate() {
                for c in 0..5 {
                    if row & (0x10 >> c) == 0 {
                        continue;
                    }
                    for (dy, dx) in (0..size).flat_map(|a| (0..size).map(move |b| (a, b))) {
                        let (px, py) = (x + i * gw + c * size + dx, y + r * size + dy);
                        if px < TILE.0 && py < TILE.1 {
                            self.depth[py * TILE.0 + px] = f64::INFINITY;
                            self.put(px, py, f64::NEG_INFINITY, color);
                        }
                    }
                }
            }
        }
    }
}

/// A 5×7 bitmap of `ch` (one byte per row, bit 4 = left column); lowercase letters are drawn
/// for uppercase ones, `?` for characters without a glyph.
fn glyph(ch: char) -> [u8; 7] {
    match ch.to_ascii_lowercase() {
        '0' => [0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e],
        '1' => [0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e],
        '2' => [0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f],
        '3' => [0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e],
        '4' => [0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02],
        '5' => [0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e],
        '6' => [0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e],
        '7' => [0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
        '8' => [0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e],
        '9' => [0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c],
        'a' => [0x00, 0x00, 0x0e, 0x01, 0x0f, 0x11, 0x0f],
        'b' => [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1e],
        'c' => [0x00, 0x00, 0x0e, 0x10, 0x10, 0x11, 0x0e],
        'd' => [0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f],
        'e' => [0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e],
        'f' => [0x06, 0x09, 0x08, 0x1c, 0x08, 0x08, 0x08],
        'g' => [0x00, 0x0f, 0x11, 0x11, 0x0f, 0x01, 0x0e],
        'h' => [0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11],
        'i' => [0x04, 0x00, 0x0c, 0x04, 0x04, 0x04, 0x0e],
        'j' => [0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0c],
        'k' => [0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12],
        'l' => [0x0c, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e],
        'm' => [0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11],
        'n' => [0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11],
        'o' => [0x00, 0x00, 0x0e, 0x11, 0x11, 0x11, 0x0e],
        'p' => [0x00, 0x00, 0x1e, 0x11, 0x1e, 0x10, 0x10],
        'q' => [0x00, 0x00, 0x0d, 0x13, 0x0f, 0x01, 0x01],
        'r' => [0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10],
        's' => [0x00, 0x00, 0x0e, 0x10, 0x0e, 0x01, 0x1e],
        't' => [0x08, 0x08, 0x1c, 0x08, 0x08, 0x09, 0x06],
        'u' => [0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0d],
        'v' => [0x00, 0x00, 0x11, 0x11, 0x11, 0x0a, 0x04],
        'w' => [0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0a],
        'x' => [0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11],
        'y' => [0x00, 0x00, 0x11, 0x11, 0x0f, 0x01, 0x0e],
        'z' => [0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f],
        ' ' => [0; 7],
        '.' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c],
        ',' => [0x00, 0x00, 0x00, 0x00, 0x0c, 0x04, 0x08],
        ':' => [0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00],
        '=' => [0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00],
        '-' => [0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00],
        '+' => [0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00],
        '_' => [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f],
        '(' => [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02],
        ')' => [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08],
        '/' => [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00],
        '#' => [0x0a, 0x0a, 0x1f, 0x0a, 0x1f, 0x0a, 0x0a],
        _ => [0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04],
    }
}

/// The orthographic camera shared by all tiles.
struct Camera {
    center: V3,
    right: V3,
    up: V3,
    view: V3,
    /// Pixels per metre.
    scale: f64,
    light: V3,
}

impl Camera {
    fn screen(&self, p: V3) -> Screen {
        let d = sub(p, self.center);
        (
            TILE.0 as f64 / 2.0 + dot(d, self.right) * self.scale,
            TILE.1 as f64 / 2.0 - dot(d, self.up) * self.scale + 8.0,
            dot(d, self.view),
        )
    }

    /// Two-sided Lambert shade of `base` for the face normal `n`.
    fn shade(&self, n: V3, base: [u8; 3]) -> [u8; 3] {
        let n = if dot(n, self.view) > 0.0 {
            scale(n, -1.0)
        } else {
            n
        };
        let k = 0.45 + 0.55 * dot(n, self.light).max(0.0);
        base.map(|c| (f64::from(c) * k).round().clamp(0.0, 255.0) as u8)
    }
}

/// Bounding box of `points`.
fn bbox<'a>(points: impl Iterator<Item = &'a V3>) -> (V3, V3) {
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for p in points {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    (lo, hi)
}

/// Bounding box of a finite collider at time `t`.
fn collider_box(c: &ColliderMeta, t: f64) -> Option<(V3, V3)> {
    let d = scale(c.velocity, t);
    match c.shape {
        ShapeMeta::Sphere { center, radius } => {
            let c = add(center, d);
            Some((sub(c, [radius; 3]), add(c, [radius; 3])))
        }
        ShapeMeta::Box { min, max } => Some((add(min, d), add(max, d))),
        ShapeMeta::Plane { .. } => None,
    }
}

/// The camera looking at the bodies (all frames) from the front-left, Z up, with nearby finite
/// colliders in view too (a collider's box is clipped to the bodies' box grown by its size).
fn camera(scene: &PreviewScene, frames: &[PreviewFrame]) -> Camera {
    let (lo, hi) = bbox(frames.iter().flat_map(|f| f.positions.iter()));
    let (lo, hi) = if lo[0].is_finite() {
        (lo, hi)
    } else {
        ([-0.5; 3], [0.5; 3])
    };
    let size = sub(hi, lo).into_iter().fold(1e-3, f64::max);
    let mut points = vec![lo, hi];
    for f in frames {
        for c in &scene.colliders {
            if let Some((a, b)) = collider_box(c, f.time) {
                let clip = |p: V3| {
                    let mut q = p;
                    for k in 0..3 {
                        q[k] = q[k].clamp(lo[k] - size, hi[k] + size);
                    }
                    q
                };
                points.push(clip(a));
                points.push(clip(b));
            }
        }
    }
    let (lo, hi) = bbox(points.iter());
    let center = scale(add(lo, hi), 0.5);
    let view = normalize([-0.55, 1.0, -0.45]); // the direction the camera looks along
    let right = normalize(cross(view, [0.0, 0.0, 1.0]));
    let up = cross(right, view);
    let mut extent: f64 = 1e-6;
    for k in 0..8 {
        let corner = [0, 1, 2].map(|a| if k >> a & 1 == 1 { hi[a] } else { lo[a] });
        let d = sub(corner, center);
        extent = extent
            .max(dot(d, right).abs() / TILE.0 as f64)
            .max(dot(d, up).abs() / (TILE.1 as f64 - 40.0));
    }
    Camera {
        center,
        right,
        up,
        view,
        scale: 0.47 / extent,
        light: normalize([0.4, -0.6, 0.9]),
    }
}

/// Draws a plane collider as a square around `around` (half size `half`) with a grid.
fn draw_plane(
    cv: &mut Canvas,
    cam: &Camera,
    normal: V3,
    offset: f64,
    d: V3,
    around: V3,
    half: f64,
) {
    let n = normalize(normal);
    let u = normalize(if n[2].abs() < 0.9 {
        cross(n, [0.0, 0.0, 1.0])
    } else {
        cross(n, [1.0, 0.0, 0.0])
    });
    let w = cross(n, u);
    let o = add(
        add(sub(around, scale(n, dot(n, around))), scale(n, offset)),
        d,
    );
    let step0 = half / 8.0;
    let e = 10f64.powf(step0.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .map(|m| m * e)
        .into_iter()
        .find(|&s| s >= step0)
        .unwrap_or(10.0 * e);
    let corners = [(-half, -half), (half, -half), (half, half), (-half, half)];
    let world = |(a, b): (f64, f64)| add(o, add(scale(u, a), scale(w, b)));
    // Grid lines at world multiples of the step along u and w, about 1.2 pixels wide.
    let line_w = 1.2 / cam.scale;
    let on_line = |x: f64| {
        let r = x.rem_euclid(step);
        r < line_w || step - r < line_w
    };
    let uo = dot(o, u) - dot(d, u);
    let wo = dot(o, w) - dot(d, w);
    for tri in [[0, 1, 2], [0, 2, 3]] {
        let c = tri.map(|k| corners[k]);
        let s = c.map(|p| cam.screen(world(p)));
        cv.triangle(s, &|b| {
            let a = b[0] * c[0].0 + b[1] * c[1].0 + b[2] * c[2].0;
            let bb = b[0] * c[0].1 + b[1] * c[1].1 + b[2] * c[2].1;
            if on_line(a + uo) || on_line(bb + wo) {
                GRID
            } else {
                PLANE
            }
        });
    }
}

/// Draws a closed collider mesh (unit sphere or unit cube mapped by `map`).
fn draw_solid(cv: &mut Canvas, cam: &Camera, verts: &[V3], tris: &[[usize; 3]], stripes: &[bool]) {
    for (k, t) in tris.iter().enumerate() {
        let [a, b, c] = t.map(|i| verts[i]);
        let n = normalize(cross(sub(b, a), sub(c, a)));
        let base = if stripes.get(k).copied().unwrap_or(false) {
            COLLIDER_STRIPE
        } else {
            COLLIDER
        };
        let color = cam.shade(n, base);
        cv.triangle([a, b, c].map(|p| cam.screen(p)), &|_| color);
    }
}

fn draw_collider(cv: &mut Canvas, cam: &Camera, c: &ColliderMeta, t: f64, around: V3, half: f64) {
    let d = scale(c.velocity, t);
    match c.shape {
        ShapeMeta::Plane { normal, offset } => draw_plane(cv, cam, normal, offset, d, around, half),
        ShapeMeta::Sphere { center, radius } => {
            let (nu, nv) = (32usize, 16usize);
            let w = c.angular_velocity;
            let rate = dot(w, w).sqrt();
            let mut verts = Vec::new();
            for j in 0..=nv {
                for i in 0..=nu {
                    let (th, ph) = (
                        j as f64 / nv as f64 * std::f64::consts::PI,
                        i as f64 / nu as f64 * std::f64::consts::TAU,
                    );
                    let mut p = [th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()];
                    if rate > 0.0 {
                        p = rotate(p, scale(w, 1.0 / rate), rate * t);
                    }
                    verts.push(add(add(center, d), scale(p, radius)));
                }
            }
            let (mut tris, mut stripes) = (Vec::new(), Vec::new());
            for j in 0..nv {
                for i in 0..nu {
                    let k = j * (nu + 1) + i;
                    tris.push([k, k + nu + 1, k + 1]);
                    tris.push([k + 1, k + nu + 1, k + nu + 2]);
                    stripes.extend([(i / 4) % 2 == 1; 2]);
                }
            }
            draw_solid(cv, cam, &verts, &tris, &stripes);
        }
        ShapeMeta::Box { min, max } => {
            let verts: Vec<V3> = (0..8)
                .map(|k| [0, 1, 2].map(|a| if k >> a & 1 == 1 { max[a] } else { min[a] } + d[a]))
                .collect();
            let faces = [
                [0, 2, 3, 1],
                [4, 5, 7, 6],
                [0, 1, 5, 4],
                [2, 6, 7, 3],
                [0, 4, 6, 2],
                [1, 3, 7, 5],
            ];
            let tris: Vec<[usize; 3]> = faces
                .iter()
                .flat_map(|f| [[f[0], f[1], f[2]], [f[0], f[2], f[3]]])
                .collect();
            draw_solid(cv, cam, &verts, &tris, &[]);
            for k in 0..8usize {
                for bit in [1, 2, 4] {
                    if k & bit == 0 {
                        let (a, b) = (cam.screen(verts[k]), cam.screen(verts[k | bit]));
                        cv.line(a, b, 1.0 / cam.scale, [120, 114, 104]);
                    }
                }
            }
        }
    }
}

fn body_color(scene: &PreviewScene, v: u32) -> [u8; 3] {
    match scene.vertex_body.get(v as usize) {
        Some(&b) if (b as usize) < scene.body_names.len().max(1) && b != u32::MAX => {
            PALETTE[b as usize % PALETTE.len()]
        }
        _ => NO_BODY,
    }
}

/// Draws the bodies of one frame: shaded triangles and dark rod lines.
fn draw_bodies(cv: &mut Canvas, cam: &Camera, scene: &PreviewScene, x: &[V3]) {
    for t in &scene.triangles {
        let (Some(&a), Some(&b), Some(&c)) = (
            x.get(t[0] as usize),
            x.get(t[1] as usize),
            x.get(t[2] as usize),
        ) else {
            continue;
        };
        let color = cam.shade(
            normalize(cross(sub(b, a), sub(c, a))),
            body_color(scene, t[0]),
        );
        cv.triangle([a, b, c].map(|p| cam.screen(p)), &|_| color);
    }
    for c in &scene.curves {
        for s in c.windows(2) {
            let (Some(&a), Some(&b)) = (x.get(s[0] as usize), x.get(s[1] as usize)) else {
                continue;
            };
            let color = body_color(scene, s[0]).map(|k| k / 2);
            cv.line(cam.screen(a), cam.screen(b), 1.0 / cam.scale, color);
        }
    }
}

/// `t = 0.250 s`-style time.
fn time_label(t: f64) -> String {
    if t != 0.0 && (t.abs() < 1e-3 || t.abs() >= 1e4) {
        format!("t = {t:.3e} s")
    } else {
        format!("t = {t:.3} s")
    }
}

/// Renders `frames` of `scene` into one PNG strip: one labelled panel per frame.
pub fn write_preview(
    path: &Path,
    scene: &PreviewScene,
    frames: &[PreviewFrame],
) -> std::io::Result<()> {
    let cam = camera(scene, frames);
    let (lo, hi) = bbox(frames.iter().flat_map(|f| f.positions.iter()));
    let (around, half) = if lo[0].is_finite() {
        let r = 0.5 * dot(sub(hi, lo), sub(hi, lo)).sqrt();
        (scale(add(lo, hi), 0.5), (3.0 * r).max(0.5))
    } else {
        ([0.0; 3], 1.0)
    };
    let (w, h) = (TILE.0 * frames.len().max(1), TILE.1);
    let mut cv = Canvas {
        w,
        rgb: BACKGROUND.repeat(w * h),
        depth: vec![f64::INFINITY; TILE.0 * TILE.1],
        ox: 0,
    };
    for (tile, f) in frames.iter().enumerate() {
        cv.ox = tile * TILE.0;
        cv.depth.fill(f64::INFINITY);
        draw_bodies(&mut cv, &cam, scene, &f.positions);
        for c in &scene.colliders {
            draw_collider(&mut cv, &cam, c, f.time, around, half);
        }
        cv.text(
            8,
            8,
            2,
            &format!("frame {}  {}", f.frame, time_label(f.time)),
            [30, 35, 43],
        );
        if tile == 0 && scene.body_names.len() > 1 {
            for (i, name) in scene.body_names.iter().enumerate().take(8) {
                let y = TILE.1 - 14 * (scene.body_names.len().min(8) - i) - 4;
                let color = PALETTE[i % PALETTE.len()];
                for py in y..y + 9 {
                    for px in 8..17 {
                        cv.put(px, py, f64::NEG_INFINITY, color);
                    }
                }
                let label: String = name.chars().take(40).collect();
                cv.text(22, y + 1, 1, &label, [30, 35, 43]);
            }
        }
        // Tile separator.
        for py in 0..h {
            let o = 3 * (py * w + cv.ox);
            cv.rgb[o..o + 3].copy_from_slice(&[200, 200, 200]);
        }
    }
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut enc = png::Encoder::new(file, w as u32, h as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(std::io::Error::other)?;
    writer
        .write_image_data(&cv.rgb)
        .map_err(std::io::Error::other)?;
    writer.finish().map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A unit-ish tetrahedron surface resting on the ground, a sphere beside it.
    fn scene() -> (PreviewScene, Vec<PreviewFrame>) {
        let x = vec![
            [0.0, 0.0, 0.0],
            [0.2, 0.0, 0.0],
            [0.0, 0.2, 0.0],
            [0.0, 0.0, 0.2],
            [0.5, 0.0, 0.0],
            [0.7, 0.0, 0.0],
            [0.5, 0.2, 0.0],
            [0.5, 0.0, 0.2],
        ];
        let tet = |o: u32| {
            [
                [o, o + 2, o + 1],
                [o, o + 1, o + 3],
                [o, o + 3, o + 2],
                [o + 1, o + 2, o + 3],
            ]
        };
        let s = PreviewScene {
            triangles: tet(0).into_iter().chain(tet(4)).collect(),
            curves: vec![],
            vertex_body: vec![0, 0, 0, 0, 1, 1, 1, 1],
            body_names: vec!["a".into(), "b".into()],
            colliders: vec![
                ColliderMeta {
                    shape: ShapeMeta::Plane {
                        normal: [0.0, 0.0, 1.0],
                        offset: 0.0,
                    },
                    friction: 0.0,
                    velocity: [0.0; 3],
                    angular_velocity: [0.0; 3],
                },
                ColliderMeta {
                    shape: ShapeMeta::Sphere {
                        center: [0.3, 0.6, 0.1],
                        radius: 0.1,
                    },
                    friction: 0.0,
                    velocity: [0.0, 0.0, 1.0],
                    angular_velocity: [0.0, 0.0, 2.0],
                },
            ],
        };
        let frames = vec![
            PreviewFrame {
                frame: 0,
                time: 0.0,
                positions: x.clone(),
            },
            PreviewFrame {
                frame: 7,
                time: 0.25,
                positions: x,
            },
        ];
        (s, frames)
    }

    fn count(rgb: &[u8], w: usize, x0: usize, x1: usize, color: [u8; 3], tol: i32) -> usize {
        rgb.chunks_exact(3)
            .enumerate()
            .filter(|(i, _)| (x0..x1).contains(&(i % w)))
            .filter(|(_, p)| (0..3).all(|k| (i32::from(p[k]) - i32::from(color[k])).abs() <= tol))
            .count()
    }

    #[test]
    fn preview_draws_bodies_apart_colliders_ground_and_labels() {
        let (s, frames) = scene();
        let dir = std::env::temp_dir().join(format!("supple-preview-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.png");
        write_preview(&path, &s, &frames).unwrap();
        let dec = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&path).unwrap()));
        let mut r = dec.read_info().unwrap();
        let mut buf = vec![0; r.output_buffer_size().unwrap()];
        let info = r.next_frame(&mut buf).unwrap();
        let (w, h) = (info.width as usize, info.height as usize);
        assert_eq!((w, h), (2 * TILE.0, TILE.1));
        let rgb = &buf[..w * h * 3];
        // Shaded body colours are the palette scaled by 0.45..1: count pixels whose hue is
        // close to each body's (channel ratios), in the first tile.
        let hue_count = |base: [u8; 3]| {
            rgb.chunks_exact(3)
                .enumerate()
                .filter(|(i, _)| i % w < TILE.0)
                .filter(|(_, p)| {
                    let k = f64::from(p[0].max(p[1]).max(p[2]))
                        / f64::from(base[0].max(base[1]).max(base[2]));
                    (0.4..=1.01).contains(&k)
                        && (0..3).all(|c| (f64::from(p[c]) - k * f64::from(base[c])).abs() < 4.0)
                })
                .count()
        };
        assert!(
            hue_count(PALETTE[0]) > 200,
            "body a: {}",
            hue_count(PALETTE[0])
        );
        assert!(
            hue_count(PALETTE[1]) > 200,
            "body b: {}",
            hue_count(PALETTE[1])
        );
        // The ground plane and its grid, and the sphere.
        assert!(count(rgb, w, 0, TILE.0, PLANE, 0) > 2000);
        assert!(count(rgb, w, 0, TILE.0, GRID, 0) > 100);
        let sphere = |x0, x1| {
            (0..=255)
                .map(|k| {
                    let c = COLLIDER
                        .map(|v| (f64::from(v) * (0.45 + 0.55 * k as f64 / 255.0)).round() as u8);
                    count(rgb, w, x0, x1, c, 0)
                })
                .sum::<usize>()
        };
        assert!(sphere(0, TILE.0) > 100, "{}", sphere(0, TILE.0));
        // The moving sphere is elsewhere in the second panel: the panels differ there.
        let left: Vec<&[u8]> = rgb.chunks_exact(3 * w).map(|r| &r[..3 * TILE.0]).collect();
        let right: Vec<&[u8]> = rgb.chunks_exact(3 * w).map(|r| &r[3 * TILE.0..]).collect();
        assert_ne!(left, right);
        // The label: dark text pixels in the top strip of both panels.
        let dark = |x0: usize| {
            (8..26)
                .flat_map(|y| (x0 + 8..x0 + 200).map(move |x| (x, y)))
                .filter(|&(x, y)| rgb[3 * (y * w + x)] == 30)
                .count()
        };
        assert!(
            dark(0) > 50 && dark(TILE.0) > 50,
            "{} {}",
            dark(0),
            dark(TILE.0)
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn glyphs_cover_the_label_characters() {
        for ch in "frame 0123456789 t = -.e s".chars() {
            assert_ne!(glyph(ch), glyph('\u{1}'), "{ch}");
        }
    }
}
