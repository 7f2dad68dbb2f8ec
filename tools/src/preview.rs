//! Headless PNG preview of simulation frames: a software rasterizer (z-buffer, Lambert shading,
//! one orthographic camera shared by all frames) drawing each chosen frame's surface side by side,
//! with rod polylines as dark depth-tested lines.

use std::path::Path;

/// Width and height of one frame's tile in pixels.
const TILE: (usize, usize) = (360, 300);

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn normalize(a: [f64; 3]) -> [f64; 3] {
    let l = dot(a, a).sqrt().max(1e-30);
    [a[0] / l, a[1] / l, a[2] / l]
}

/// Renders `frames` (each the surface vertex positions for `triangles` and the polylines
/// `curves`) into one PNG strip.
pub fn write_preview(
    path: &Path,
    triangles: &[[u32; 3]],
    curves: &[Vec<u32>],
    frames: &[(u32, Vec<[f64; 3]>)],
) -> std::io::Result<()> {
    // Camera: looking at the union bounding box from the front-left, Z up, orthographic.
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for (_, x) in frames {
        for p in x {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
    }
    let center = [
        (lo[0] + hi[0]) / 2.0,
        (lo[1] + hi[1]) / 2.0,
        (lo[2] + hi[2]) / 2.0,
    ];
    let view = normalize([-0.55, 1.0, -0.45]); // direction the camera looks along
    let right = normalize(cross(view, [0.0, 0.0, 1.0]));
    let up = cross(right, view);
    let light = normalize([0.4, -0.6, 0.9]);
    let project = |p: [f64; 3]| {
        let d = sub(p, center);
        (dot(d, right), dot(d, up), dot(d, view))
    };
    let mut extent: f64 = 1e-6;
    for (_, x) in frames {
        for p in x {
            let (u, v, _) = project(*p);
            extent = extent
                .max(u.abs() / TILE.0 as f64)
                .max(v.abs() / TILE.1 as f64);
        }
    }
    let scale = 0.45 / extent; // pixels per metre
    let (w, h) = (TILE.0 * frames.len().max(1), TILE.1);
    let mut rgb = vec![255u8; w * h * 3];
    for (tile, (_, x)) in frames.iter().enumerate() {
        let mut depth = vec![f64::INFINITY; TILE.0 * TILE.1];
        let ox = tile * TILE.0;
        for t in triangles {
            let [a, b, c] = t.map(|i| x[i as usize]);
            let n = normalize(cross(sub(b, a), sub(c, a)));
            if dot(n, view) > 0.0 {
                continue; // back face
            }
            let shade = 0.25 + 0.75 * dot(n, light).max(0.0);
            let color = [
                (70.0 + 150.0 * shade) as u8,
                (110.0 + 120.0 * shade) as u8,
                (170.0 + 85.0 * shade) as u8,
            ];
            let s = [a, b, c].map(|p| {
                let (u, v, d) = project(p);
                (
                    TILE.0 as f64 / 2.0 + u * scale,
                    TILE.1 as f64 / 2.0 - v * scale,
                    d,
                )
            });
            let area =
                (s[1].0 - s[0].0) * (s[2].1 - s[0].1) - (s[2].0 - s[0].0) * (s[1].1 - s[0].1);
            if area.abs() < 1e-12 {
                continue;
            }
            let (x0, x1) = (
                s.iter().map(|p| p.0).fold(f64::INFINITY, f64::min),
                s.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
            );
            let (y0, y1) = (
                s.iter().map(|p| p.1).fold(f64::INFINITY, f64::min),
                s.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max),
            );
            for py in (y0.floor().max(0.0) as usize)
                ..=(y1.ceil().min(TILE.1 as f64 - 1.0).max(0.0) as usize)
            {
                for px in (x0.floor().max(0.0) as usize)
                    ..=(x1.ceil().min(TILE.0 as f64 - 1.0).max(0.0) as usize)
                {
                    let (qx, qy) = (px as f64 + 0.5, py as f64 + 0.5);
                    let w0 = ((s[1].0 - qx) * (s[2].1 - qy) - (s[2].0 - qx) * (s[1].1 - qy)) / area;
                    let w1 = ((s[2].0 - qx) * (s[0].1 - qy) - (s[0].0 - qx) * (s[2].1 - qy)) / area;
                    let w2 = 1.0 - w0 - w1;
                    if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                        continue;
                    }
                    let z = w0 * s[0].2 + w1 * s[1].2 + w2 * s[2].2;
                    let k = py * TILE.0 + px;
                    if z < depth[k] {
                        depth[k] = z;
                        let o = 3 * (py * w + ox + px);
                        rgb[o..o + 3].copy_from_slice(&color);
                    }
                }
            }
        }
        // Rods: 2-pixel-wide lines, depth-tested against the surfaces (drawn slightly in front).
        let screen = |p: [f64; 3]| {
            let (u, v, d) = project(p);
            (
                TILE.0 as f64 / 2.0 + u * scale,
                TILE.1 as f64 / 2.0 - v * scale,
                d,
            )
        };
        for c in curves {
            for s in c.windows(2) {
                let (Some(&a), Some(&b)) = (x.get(s[0] as usize), x.get(s[1] as usize)) else {
                    continue;
                };
                let (a, b) = (screen(a), screen(b));
                let steps = ((b.0 - a.0).abs().max((b.1 - a.1).abs()).ceil() as usize).max(1);
                for k in 0..=steps {
                    let t = k as f64 / steps as f64;
                    let (qx, qy, z) = (
                        a.0 + t * (b.0 - a.0),
                        a.1 + t * (b.1 - a.1),
                        a.2 + t * (b.2 - a.2) - 1.0 / scale,
                    );
                    for (dx, dy) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
                        let (fx, fy) = ((qx - 0.5 + dx).floor(), (qy - 0.5 + dy).floor());
                        if fx < 0.0 || fy < 0.0 || fx >= TILE.0 as f64 || fy >= TILE.1 as f64 {
                            continue;
                        }
                        let (px, py) = (fx as usize, fy as usize);
                        let k = py * TILE.0 + px;
                        if z < depth[k] {
                            depth[k] = z;
                            let o = 3 * (py * w + ox + px);
                            rgb[o..o + 3].copy_from_slice(&[40, 40, 50]);
                        }
                    }
                }
            }
        }
        // Tile separator.
        for py in 0..h {
            let o = 3 * (py * w + ox);
            rgb[o..o + 3].copy_from_slice(&[200, 200, 200]);
        }
    }
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut enc = png::Encoder::new(file, w as u32, h as u32);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut writer = enc.write_header().map_err(std::io::Error::other)?;
    writer
        .write_image_data(&rgb)
        .map_err(std::io::Error::other)?;
    writer.finish().map_err(std::io::Error::other)
}
