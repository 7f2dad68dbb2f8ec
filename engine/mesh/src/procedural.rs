//! Procedural geometry for scenes and tests. All lengths are in metres; every tet mesh is
//! positively oriented (`det[b-a, c-a, d-a] > 0`) with no degenerate tet, every triangle mesh is
//! counter-clockwise seen from its front (+z for cloth).
//!
//! - [`box_tets`] / [`beam`]: a lattice of cubic (box) cells split into 5 tets (alternating
//!   parity so the faces of neighbouring cells match; identical vertex and tet order to Newton's
//!   `add_soft_grid` / the peer benchmark's `grid_tets()`) or 6 tets (Freudenthal/Kuhn split along
//!   each cell's main diagonal).
//! - [`sphere`], [`squishy_ball`], [`trefoil_knot`], [`reef_knot`]: smooth solids meshed by
//!   isosurface stuffing ([`crate::tetrahedralize::stuff_implicit`]); `resolution` is the number
//!   of lattice cells along the longest bounding-box axis.
//! - [`arch`]: a masonry arch of separate wedge-shaped voussoirs.
//! - [`cloth_grid`]: a rectangular cloth of any resolution.
//! - [`rod`], [`hair_strands`], [`helix`]: polylines for rods and hair.

use crate::model::{tet_signed_volume, Polyline, TetMesh, TriMesh};
use crate::tetrahedralize::{stuff_implicit, TetrahedralizeError};

type V3 = [f64; 3];

/// How each cubic cell of [`box_tets`] is split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellSplit {
    /// Five tets per cell, with the split mirrored on alternate cells so faces match.
    Five,
    /// Six tets per cell around the cell's main diagonal.
    Six,
}

/// A box of `cells[0] x cells[1] x cells[2]` cells of size `cell = [hx, hy, hz]` (metres) with its
/// minimum corner at `origin`. Vertex `(x, y, z)` has index `(nx+1)(ny+1) z + (nx+1) y + x`.
/// A zero cell count is treated as one. With [`CellSplit::Five`] a box of `n^3` cells has
/// `(n+1)^3` vertices, `5 n^3` tets and `12 n^2` boundary triangles.
pub fn box_tets(cells: [usize; 3], cell: [f64; 3], origin: [f64; 3], split: CellSplit) -> TetMesh {
    let [nx, ny, nz] = cells.map(|c| c.max(1));
    let mut positions = Vec::with_capacity((nx + 1) * (ny + 1) * (nz + 1));
    for z in 0..=nz {
        for y in 0..=ny {
            for x in 0..=nx {
                positions.push([
                    origin[0] + x as f64 * cell[0],
                    origin[1] + y as f64 * cell[1],
                    origin[2] + z as f64 * cell[2],
                ]);
            }
        }
    }
    let gi = |x: usize, y: usize, z: usize| ((nx + 1) * (ny + 1) * z + (nx + 1) * y + x) as u32;
    let per = if split == CellSplit::Five { 5 } else { 6 };
    let mut tets = Vec::with_capacity(per * nx * ny * nz);
    for z in 0..nz {
        for y in 0..ny {
            for x in 0..nx {
                match split {
                    CellSplit::Five => {
                        let (v0, v1, v2, v3) = (
                            gi(x, y, z),
                            gi(x + 1, y, z),
                            gi(x + 1, y, z + 1),
                            gi(x, y, z + 1),
                        );
                        let (v4, v5, v6, v7) = (
                            gi(x, y + 1, z),
                            gi(x + 1, y + 1, z),
                            gi(x + 1, y + 1, z + 1),
                            gi(x, y + 1, z + 1),
                        );
                        if (x & 1) ^ (y & 1) ^ (z & 1) == 1 {
                            tets.extend([
                                [v0, v1, v4, v3],
                                [v2, v3, v6, v1],
                                [v5, v4, v1, v6],
                                [v7, v6, v3, v4],
                                [v4, v1, v6, v3],
                            ]);
                        } else {
                            tets.extend([
                                [v1, v2, v5, v0],
                                [v3, v0, v7, v2],
                                [v4, v7, v0, v5],
                                [v6, v5, v2, v7],
                                [v5, v2, v7, v0],
                            ]);
                        }
                    }
                    CellSplit::Six => {
                        // Corner c = bit0 x, bit1 y, bit2 z.
                        let c = |b: usize| gi(x + (b & 1), y + ((b >> 1) & 1), z + ((b >> 2) & 1));
                        for perm in [
                            [0, 1, 2],
                            [0, 2, 1],
                            [1, 0, 2],
                            [1, 2, 0],
                            [2, 0, 1],
                            [2, 1, 0],
                        ] {
                            let b1 = 1 << perm[0];
                            let b2 = b1 | (1 << perm[1]);
                            tets.push([c(0), c(b1), c(b2), c(7)]);
                        }
                    }
                }
            }
        }
    }
    let mut m = TetMesh { positions, tets };
    orient_positive(&mut m);
    m
}

/// A masonry arch of `blocks` wedge-shaped voussoirs (separate pieces, no shared vertex), the
/// whole arch in the x–z plane: a half ring of inner radius `inner_radius` and radial
/// `thickness` about the y axis (centre at the origin, springing line on z = 0, crown on +z),
/// `depth` along y centred on y = 0. Each voussoir spans π / `blocks` of the half ring; its two
/// joint faces are planes through the radial line of the joint moved by `gap / 2` into the block,
/// so neighbouring stones face each other `gap` apart and the two feet lie `gap / 2` above
/// z = 0. A voussoir is a [`CellSplit::Five`] lattice of `along` cells along the arc and
/// `across` cells through the thickness and through the depth, bent onto the ring
/// (`5 along across²` tets). Voussoir k (from the +x foot) holds vertices
/// `k n .. (k + 1) n` and tets `k m .. (k + 1) m`. Positive tets need `gap` well below a
/// block's inner arc (`π inner_radius / blocks`); the scene checks that.
pub fn arch(
    inner_radius: f64,
    thickness: f64,
    depth: f64,
    blocks: usize,
    along: usize,
    across: usize,
    gap: f64,
) -> TetMesh {
    let (blocks, along, across) = (blocks.max(1), along.max(1), across.max(1));
    let unit = box_tets(
        [along, across, across],
        [1.0 / along as f64, 1.0 / across as f64, 1.0 / across as f64],
        [0.0; 3],
        CellSplit::Five,
    );
    let span = std::f64::consts::PI / blocks as f64;
    let mut out = TetMesh {
        positions: Vec::with_capacity(blocks * unit.positions.len()),
        tets: Vec::with_capacity(blocks * unit.tets.len()),
    };
    for k in 0..blocks {
        let (a, b) = (k as f64 * span, (k + 1) as f64 * span);
        // Tangent (increasing angle) at the joints: e_θ = (−sin θ, 0, cos θ).
        let (ta, tb) = ([-a.sin(), 0.0, a.cos()], [-b.sin(), 0.0, b.cos()]);
        let base = out.positions.len() as u32;
        for p in &unit.positions {
            // u along the arc, v outward through the thickness, w along the depth.
            let (u, v, w) = (p[0], p[1], p[2]);
            let th = a + u * span;
            let r = inner_radius + v * thickness;
            let shift = |c: usize| 0.5 * gap * ((1.0 - u) * ta[c] - u * tb[c]);
            out.positions.push([
                r * th.cos() + shift(0),
                (w - 0.5) * depth,
                r * th.sin() + shift(2),
            ]);
        }
        out.tets
            .extend(unit.tets.iter().map(|t| t.map(|i| i + base)));
    }
    // The map (u, v, w) -> (θ, r, y) keeps orientation ((e_θ, e_r, e_y) is right-handed); flip
    // consistently should the unit block's order ever change.
    orient_positive(&mut out);
    out
}

/// A beam of size `size` (metres) with its minimum corner at `origin`, split into cubic-ish cells
/// of edge at most `cell_size` (at least one cell per axis).
pub fn beam(size: [f64; 3], cell_size: f64, origin: [f64; 3], split: CellSplit) -> TetMesh {
    let cells = size.map(|s| {
        if cell_size > 0.0 && s.is_finite() {
            ((s / cell_size).ceil() as usize).clamp(1, 1 << 12)
        } else {
            1
        }
    });
    let cell = [
        size[0] / cells[0] as f64,
        size[1] / cells[1] as f64,
        size[2] / cells[2] as f64,
    ];
    box_tets(cells, cell, origin, split)
}

/// A solid sphere of `radius` (metres) around `center`, meshed with `resolution` lattice cells
/// across its diameter (8 or more recommended).
pub fn sphere(
    center: [f64; 3],
    radius: f64,
    resolution: usize,
) -> Result<TetMesh, TetrahedralizeError> {
    positive("radius", radius)?;
    let f = |p: V3| dist(p, center) - radius;
    let m = radius * 1.0001;
    let (lo, hi) = (
        [center[0] - m, center[1] - m, center[2] - m],
        [center[0] + m, center[1] + m, center[2] + m],
    );
    Ok(stuff_implicit(f, lo, hi, resolution)?.0)
}

/// A "squishy ball": a sphere of `radius` with `tentacles` tapered tentacles (base radius
/// `tentacle_radius`, tip radius half of it) reaching `tentacle_length` beyond the sphere along
/// evenly spread (Fibonacci-sphere) directions, smoothly blended into the body. Use a
/// resolution whose cell (longest extent / resolution) is below `tentacle_radius`.
pub fn squishy_ball(
    center: [f64; 3],
    radius: f64,
    tentacles: usize,
    tentacle_length: f64,
    tentacle_radius: f64,
    resolution: usize,
) -> Result<TetMesh, TetrahedralizeError> {
    positive("radius", radius)?;
    positive("tentacle_radius", tentacle_radius)?;
    if tentacles > 0 {
        positive("tentacle_length", tentacle_length)?;
    }
    if tentacle_radius >= radius {
        return Err(TetrahedralizeError::BadParameter(
            "tentacle_radius must be smaller than radius".into(),
        ));
    }
    let dirs = fibonacci_sphere(tentacles);
    let segs: Vec<(V3, V3)> = dirs
        .iter()
        .map(|d| {
            let a = add(center, scale(*d, 0.7 * radius));
            let b = add(
                center,
                scale(*d, radius + tentacle_length - 0.5 * tentacle_radius),
            );
            (a, b)
        })
        .collect();
    let k = 0.5 * tentacle_radius;
    let f = |p: V3| {
        let mut v = dist(p, center) - radius;
        for &(a, b) in &segs {
            let (d, t) = segment_distance(p, a, b);
            let r = tentacle_radius * (1.0 - 0.5 * t);
            v = smin(v, d - r, k);
        }
        v
    };
    let reach = radius + tentacle_length.max(0.0) + tentacle_radius;
    let (lo, hi) = (
        [center[0] - reach, center[1] - reach, center[2] - reach],
        [center[0] + reach, center[1] + reach, center[2] + reach],
    );
    Ok(stuff_implicit(f, lo, hi, resolution)?.0)
}

/// A trefoil knot tube: centre line `scale * (sin t + 2 sin 2t, cos t - 2 cos 2t, -sin 3t)` around
/// `center`, tube radius `tube_radius` (must be below `0.6 * scale` so the tube does not touch
/// itself). The knot spans about `6 * scale` across.
pub fn trefoil_knot(
    center: [f64; 3],
    scale_m: f64,
    tube_radius: f64,
    resolution: usize,
) -> Result<TetMesh, TetrahedralizeError> {
    positive("scale", scale_m)?;
    positive("tube_radius", tube_radius)?;
    if tube_radius >= 0.6 * scale_m {
        return Err(TetrahedralizeError::BadParameter(
            "tube_radius must be below 0.6 * scale".into(),
        ));
    }
    let n = 480;
    let pts: Vec<V3> = (0..=n)
        .map(|i| {
            let t = std::f64::consts::TAU * i as f64 / n as f64;
            let c = [
                t.sin() + 2.0 * (2.0 * t).sin(),
                t.cos() - 2.0 * (2.0 * t).cos(),
                -(3.0 * t).sin(),
            ];
            add(center, scale(c, scale_m))
        })
        .collect();
    tube(&[pts], tube_radius, resolution)
}

/// The centre line of a trefoil knot (see [`trefoil_knot`]) as one closed polyline strand of
/// `segments` segments (the last vertex repeats the first).
pub fn trefoil_curve(center: [f64; 3], scale_m: f64, segments: usize) -> Polyline {
    let n = segments.max(3);
    let positions: Vec<V3> = (0..=n)
        .map(|i| {
            let t = std::f64::consts::TAU * i as f64 / n as f64;
            add(
                center,
                scale(
                    [
                        t.sin() + 2.0 * (2.0 * t).sin(),
                        t.cos() - 2.0 * (2.0 * t).cos(),
                        -(3.0 * t).sin(),
                    ],
                    scale_m,
                ),
            )
        })
        .collect();
    Polyline {
        strands: vec![0..positions.len() as u32],
        positions,
    }
}

/// Two interlocked strands, reef/bow-knot-like: each strand is a U-shaped bight (legs of length
/// `3 * bight_radius` plus a half-circle of radius `bight_radius`) and each bight's tip passes
/// through the other's loop; the bights lie in perpendicular planes (xy and xz) and open in
/// opposite x directions. Tube radius `tube_radius` must be below `0.4 * bight_radius`. The two
/// strands are separate connected components of the returned mesh.
pub fn reef_knot(
    center: [f64; 3],
    bight_radius: f64,
    tube_radius: f64,
    resolution: usize,
) -> Result<TetMesh, TetrahedralizeError> {
    positive("bight_radius", bight_radius)?;
    positive("tube_radius", tube_radius)?;
    if tube_radius >= 0.4 * bight_radius {
        return Err(TetrahedralizeError::BadParameter(
            "tube_radius must be below 0.4 * bight_radius".into(),
        ));
    }
    let r = bight_radius;
    let d = 0.5 * r; // arc centres at x = +d (strand A) and x = -d (strand B)
    let leg = 3.0 * r;
    let bight = |sign: f64, plane_y: bool| -> Vec<V3> {
        // Leg at +r, half circle around (sign*d, 0), leg at -r; opening towards -sign x.
        let mut pts = Vec::new();
        let lateral = |s: f64| {
            if plane_y {
                [0.0, s, 0.0]
            } else {
                [0.0, 0.0, s]
            }
        };
        let m = 24;
        for i in 0..=m {
            let x = sign * (d - leg) + sign * leg * i as f64 / m as f64;
            let l = lateral(r);
            pts.push(add(center, [x + l[0], l[1], l[2]]));
        }
        let arc = 48;
        for i in 1..arc {
            let th = std::f64::consts::FRAC_PI_2 - std::f64::consts::PI * i as f64 / arc as f64;
            let l = lateral(r * th.sin());
            pts.push(add(center, [sign * (d + r * th.cos()), l[1], l[2]]));
        }
        for i in 0..=m {
            let x = sign * d - sign * leg * i as f64 / m as f64;
            let l = lateral(-r);
            pts.push(add(center, [x, l[1], l[2]]));
        }
        pts
    };
    tube(
        &[bight(1.0, true), bight(-1.0, false)],
        tube_radius,
        resolution,
    )
}

/// A tet mesh of the union of tubes of radius `r` around polylines (rounded ends).
fn tube(lines: &[Vec<V3>], r: f64, resolution: usize) -> Result<TetMesh, TetrahedralizeError> {
    let segs: Vec<(V3, V3)> = lines
        .iter()
        .flat_map(|l| l.windows(2).map(|w| (w[0], w[1])))
        .collect();
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in lines.iter().flatten() {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a] - r * 1.001);
            hi[a] = hi[a].max(p[a] + r * 1.001);
        }
    }
    // Segment bounding boxes for a cheap rejection.
    let f = |p: V3| {
        let mut best = f64::INFINITY;
        for &(a, b) in &segs {
            // Lower bound of the distance from p to the segment's box.
            let mut lb = 0.0f64;
            for k in 0..3 {
                let (l, h) = (a[k].min(b[k]), a[k].max(b[k]));
                let e = (l - p[k]).max(p[k] - h).max(0.0);
                lb += e * e;
            }
            if lb >= best * best {
                continue;
            }
            best = best.min(segment_distance(p, a, b).0);
        }
        best - r
    };
    Ok(stuff_implicit(f, lo, hi, resolution)?.0)
}

/// A cloth rectangle of `cells[0] x cells[1]` quads (two triangles each, alternating diagonals)
/// spanning `size` metres in the xy-plane from `origin`, normals along +z. Vertex `(i, j)` has
/// index `j (nx+1) + i`. A zero cell count is treated as one.
pub fn cloth_grid(cells: [usize; 2], size: [f64; 2], origin: [f64; 3]) -> TriMesh {
    let [nx, ny] = cells.map(|c| c.max(1));
    let (dx, dy) = (size[0] / nx as f64, size[1] / ny as f64);
    let mut positions = Vec::with_capacity((nx + 1) * (ny + 1));
    for j in 0..=ny {
        for i in 0..=nx {
            positions.push([
                origin[0] + i as f64 * dx,
                origin[1] + j as f64 * dy,
                origin[2],
            ]);
        }
    }
    let triangles = quad_grid_triangles(nx, ny, true, |i, j| (j * (nx + 1) + i) as u32);
    TriMesh {
        positions,
        triangles,
    }
}

/// Two triangles per quad `(i, j)` of an `nx × ny` grid of vertex indices `v(i, j)`
/// (`i ≤ nx`, `j ≤ ny`), counter-clockwise in (i, j); with `checkerboard` the diagonals alternate
/// (no preferred shear direction), otherwise every quad is split along `(i, j)–(i+1, j+1)`.
pub(crate) fn quad_grid_triangles(
    nx: usize,
    ny: usize,
    checkerboard: bool,
    v: impl Fn(usize, usize) -> u32,
) -> Vec<[u32; 3]> {
    let mut triangles = Vec::with_capacity(2 * nx * ny);
    for j in 0..ny {
        for i in 0..nx {
            let (a, b, c, d) = (v(i, j), v(i + 1, j), v(i + 1, j + 1), v(i, j + 1));
            if !checkerboard || (i + j) % 2 == 0 {
                triangles.push([a, b, c]);
                triangles.push([a, c, d]);
            } else {
                triangles.push([a, b, d]);
                triangles.push([b, c, d]);
            }
        }
    }
    triangles
}

/// A straight rod from `start` to `end` with `segments` segments (at least one).
pub fn rod(start: [f64; 3], end: [f64; 3], segments: usize) -> Polyline {
    let n = segments.max(1);
    let positions: Vec<V3> = (0..=n)
        .map(|i| lerp(start, end, i as f64 / n as f64))
        .collect();
    Polyline {
        strands: vec![0..positions.len() as u32],
        positions,
    }
}

/// Straight hair strands hanging along -z: roots on a `roots[0] x roots[1]` grid with `spacing`
/// metres between roots, starting at `origin`; each strand has `length` metres and `segments`
/// segments.
pub fn hair_strands(
    roots: [usize; 2],
    spacing: f64,
    length: f64,
    segments: usize,
    origin: [f64; 3],
) -> Polyline {
    let n = segments.max(1);
    let mut positions = Vec::with_capacity(roots[0] * roots[1] * (n + 1));
    let mut strands = Vec::with_capacity(roots[0] * roots[1]);
    for j in 0..roots[1] {
        for i in 0..roots[0] {
            let root = [
                origin[0] + i as f64 * spacing,
                origin[1] + j as f64 * spacing,
                origin[2],
            ];
            let start = positions.len() as u32;
            for s in 0..=n {
                positions.push([root[0], root[1], root[2] - length * s as f64 / n as f64]);
            }
            strands.push(start..positions.len() as u32);
        }
    }
    Polyline { positions, strands }
}

/// A helical strand (curly hair, spring) around the z axis through `center`: `radius`, `pitch`
/// (rise per turn, metres), `turns` turns, `segments` segments, starting at angle 0 and rising
/// along +z.
pub fn helix(center: [f64; 3], radius: f64, pitch: f64, turns: f64, segments: usize) -> Polyline {
    let n = segments.max(1);
    let positions: Vec<V3> = (0..=n)
        .map(|i| {
            let s = turns * i as f64 / n as f64;
            let th = std::f64::consts::TAU * s;
            [
                center[0] + radius * th.cos(),
                center[1] + radius * th.sin(),
                center[2] + pitch * s,
            ]
        })
        .collect();
    Polyline {
        strands: vec![0..positions.len() as u32],
        positions,
    }
}

/// Flips tets with negative volume (swaps their last two vertices).
fn orient_positive(m: &mut TetMesh) {
    for t in 0..m.tets.len() {
        if m.tet_volume(t) < 0.0 {
            m.tets[t].swap(2, 3);
        }
    }
}

fn positive(name: &str, v: f64) -> Result<(), TetrahedralizeError> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(TetrahedralizeError::BadParameter(format!(
            "{name} must be positive and finite (got {v})"
        )))
    }
}

/// `n` nearly evenly spread unit vectors (Fibonacci sphere).
fn fibonacci_sphere(n: usize) -> Vec<V3> {
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    (0..n)
        .map(|i| {
            let z = 1.0 - 2.0 * (i as f64 + 0.5) / n as f64;
            let r = (1.0 - z * z).max(0.0).sqrt();
            let th = golden * i as f64;
            [r * th.cos(), r * th.sin(), z]
        })
        .collect()
}

/// Polynomial smooth minimum with blend width `k`.
fn smin(a: f64, b: f64, k: f64) -> f64 {
    let h = (k - (a - b).abs()).max(0.0) / k;
    a.min(b) - h * h * k * 0.25
}

/// Distance from `p` to segment `ab` and the parameter of the closest point.
fn segment_distance(p: V3, a: V3, b: V3) -> (f64, f64) {
    let ab = sub(b, a);
    let l2 = dot(ab, ab);
    let t = if l2 > 0.0 {
        (dot(sub(p, a), ab) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (dist(p, lerp(a, b, t)), t)
}

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
fn dist(a: V3, b: V3) -> f64 {
    dot(sub(a, b), sub(a, b)).sqrt()
}
fn lerp(a: V3, b: V3, t: f64) -> V3 {
    [
        a[0] + t * (b[0] - a[0]),
        a[1] + t * (b[1] - a[1]),
        a[2] + t * (b[2] - a[2]),
    ]
}

/// Total signed volume of a tet mesh (sum of signed tet volumes).
pub fn signed_volume(m: &TetMesh) -> f64 {
    m.tets
        .iter()
        .map(|t| {
            let [a, b, c, d] = t.map(|i| m.positions[i as usize]);
            tet_signed_volume(a, b, c, d)
        })
        .sum()
}

/// Coils a beam lying along +x (from `x = 0`; width along y, thickness along z, thickness
/// centred at `z = zc`) into a spiral: `x` becomes the angle `θ = x / radius` around the z
/// axis, the radius shrinks by `radial_pitch` and the height grows by `axial_pitch` per turn.
/// A pitch smaller than the beam's thickness (radial) or width (axial) with more than one turn
/// makes the beam pass through itself without inverting any tet (for `radius` above the
/// thickness): the self-intersecting test shapes of the shortest-path queries.
pub fn coil(m: &TetMesh, radius: f64, zc: f64, radial_pitch: f64, axial_pitch: f64) -> TetMesh {
    let tau = std::f64::consts::TAU;
    let positions = m
        .positions
        .iter()
        .map(|p| {
            let th = p[0] / radius;
            let r = radius + (p[2] - zc) - radial_pitch * th / tau;
            [r * th.cos(), r * th.sin(), p[1] + axial_pitch * th / tau]
        })
        .collect();
    let mut out = TetMesh {
        positions,
        tets: m.tets.clone(),
    };
    // The map keeps orientation when the local frame (tangent, width, -radial) is right-handed;
    // flip consistently otherwise.
    if signed_volume(&out) < 0.0 {
        for t in &mut out.tets {
            t.swap(2, 3);
        }
    }
    out
}

/// Curls the tentacles of a [`squishy_ball`] (same `center`, `radius` and `tentacles`): every
/// point beyond `radius` along its nearest tentacle direction is bent with constant curvature
/// `1 / bend_radius` (about an axis perpendicular to the tentacle), so long tentacles curl back
/// into the body and into each other. A smooth immersion for `bend_radius` above the tentacle
/// radius: self-intersecting, no inverted tet.
pub fn curl_tentacles(
    m: &TetMesh,
    center: [f64; 3],
    radius: f64,
    tentacles: usize,
    bend_radius: f64,
) -> TetMesh {
    let dirs = fibonacci_sphere(tentacles);
    let cross = |a: V3, b: V3| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let unit = |a: V3| scale(a, 1.0 / dot(a, a).sqrt());
    let frames: Vec<(V3, V3)> = dirs
        .iter()
        .map(|&a| {
            let e = if a[2].abs() < 0.9 {
                [0.0, 0.0, 1.0]
            } else {
                [1.0, 0.0, 0.0]
            };
            (a, unit(cross(a, e)))
        })
        .collect();
    let positions = m
        .positions
        .iter()
        .map(|&p| {
            let r = sub(p, center);
            let Some(&(a, b)) = frames
                .iter()
                .max_by(|x, y| dot(r, x.0).total_cmp(&dot(r, y.0)))
            else {
                return p;
            };
            let t = dot(r, a);
            if t <= radius {
                return p;
            }
            let u = dot(r, b);
            let th = (t - radius) / bend_radius;
            let rest = sub(r, add(scale(a, t), scale(b, u)));
            let k = bend_radius - u;
            add(
                center,
                add(
                    rest,
                    add(
                        scale(a, radius + k * th.sin()),
                        scale(b, bend_radius - k * th.cos()),
                    ),
                ),
            )
        })
        .collect();
    TetMesh {
        positions,
        tets: m.tets.clone(),
    }
}

/// Self-intersecting sample shapes without inverted tets (the shortest-path method's test
/// meshes, used by its tests and `supple bench recovery`): a beam folded through itself, a pre-intersected noodle
/// coil and a squishy ball with curled tentacles. `refine` (≥ 1) divides the cell size.
pub fn self_intersecting_samples(refine: usize) -> Vec<(&'static str, TetMesh)> {
    let r = refine.max(1) as f64;
    let folded = coil(
        &beam([2.4, 0.2, 0.1], 0.05 / r, [0.0; 3], CellSplit::Six),
        0.3,
        0.05,
        0.05,
        0.013,
    );
    let noodle = coil(
        &beam([2.4, 0.08, 0.08], 0.04 / r, [0.0; 3], CellSplit::Six),
        0.2,
        0.04,
        0.011,
        0.037,
    );
    let mut out = vec![("folded beam", folded), ("pre-intersected noodle", noodle)];
    if let Ok(ball) = squishy_ball([0.0; 3], 0.3, 8, 0.5, 0.07, 20 * refine.max(1)) {
        out.push((
            "curled squishy ball",
            curl_tentacles(&ball, [0.0; 3], 0.3, 8, 0.09),
        ));
    }
    out
}
