//! Open cloth surfaces of revolution and swept tubes (the two-way IPM paper's tube, funnel and
//! knot scenes). Lengths in metres; every triangle is counter-clockwise seen from outside (its
//! normal points away from the axis or centre line).
//!
//! - [`cloth_tube`]: an open cylinder along x.
//! - [`cloth_funnel`]: an open truncated cone along z.
//! - [`swept_tube`]: an open tube of circular section around any smooth open polyline.
//! - [`overhand_knot_curve`]: the centre line of an open overhand knot (a trefoil cut open).
//! - [`reef_knot_curves`]: the centre lines of two ropes tied in a loose reef knot, with straight
//!   tails or (bow-knot-like) with ears; [`two_tubes`] sweeps them into one two-tube mesh.

use crate::model::TriMesh;

type V3 = [f64; 3];

/// Triangulates `rings` of `around` vertices each (ring `j` vertex `i` gets index
/// `j * around + i`) into a strip closed around: two triangles per quad, diagonals alternating
/// in a checkerboard. The winding is counter-clockwise seen from the side that
/// `(ring[i + 1] − ring[i]) × (next ring − ring)` points to.
fn ring_strip(rings: Vec<Vec<V3>>, around: usize) -> TriMesh {
    let along = rings.len() - 1;
    // An odd ring cannot alternate consistently around the seam: one diagonal direction then.
    let triangles =
        crate::procedural::quad_grid_triangles(around, along, around % 2 == 0, |i, j| {
            (j * around + i % around) as u32
        });
    TriMesh {
        positions: rings.into_iter().flatten().collect(),
        triangles,
    }
}

/// An open cloth cylinder of `radius` and `length` along x centred on the origin: `around`
/// vertices per ring (at least 3), `along + 1` rings; `(along + 1) * around` vertices and
/// `2 * around * along` triangles, normals outward. Ring `j` is at
/// `x = −length/2 + j length/along`; its vertex `i` at angle `2π i/around` from +y toward +z.
pub fn cloth_tube(radius: f64, length: f64, around: usize, along: usize) -> TriMesh {
    let (around, along) = (around.max(3), along.max(1));
    let rings = (0..=along)
        .map(|j| {
            let x = -0.5 * length + length * j as f64 / along as f64;
            (0..around)
                .map(|i| {
                    let t = std::f64::consts::TAU * i as f64 / around as f64;
                    [x, radius * t.cos(), radius * t.sin()]
                })
                .collect()
        })
        .collect();
    ring_strip(rings, around)
}

/// An open truncated cone (funnel) about z centred on the origin: radius `bottom_radius` at
/// `z = −height/2`, `top_radius` at `z = +height/2`; `around` vertices per ring (at least 3),
/// `along + 1` rings, `2 * around * along` triangles, normals away from the axis.
pub fn cloth_funnel(
    top_radius: f64,
    bottom_radius: f64,
    height: f64,
    around: usize,
    along: usize,
) -> TriMesh {
    let (around, along) = (around.max(3), along.max(1));
    let rings = (0..=along)
        .map(|j| {
            let s = j as f64 / along as f64;
            let (r, z) = (
                bottom_radius + (top_radius - bottom_radius) * s,
                -0.5 * height + height * s,
            );
            (0..around)
                .map(|i| {
                    let t = std::f64::consts::TAU * i as f64 / around as f64;
                    [r * t.cos(), r * t.sin(), z]
                })
                .collect()
        })
        .collect();
    ring_strip(rings, around)
}

fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
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
fn unit(a: V3) -> V3 {
    let l = dot(a, a).sqrt();
    [a[0] / l, a[1] / l, a[2] / l]
}

/// An open tube of `radius` around the open polyline `curve` (at least 2 points, no repeated
/// point): one ring of `around` vertices (at least 3) per curve point, in planes normal to the
/// curve's (averaged) tangent, with parallel-transported frames so the rings do not twist;
/// normals point away from the curve. Rings overlap where the curve bends tighter than `radius`
/// or passes within `2 * radius` of itself: the caller keeps the curve clear of that.
pub fn swept_tube(curve: &[V3], radius: f64, around: usize) -> TriMesh {
    let around = around.max(3);
    let n = curve.len();
    assert!(n >= 2, "swept_tube needs at least two curve points");
    let tangent = |j: usize| {
        let (a, b) = (curve[j.saturating_sub(1)], curve[(j + 1).min(n - 1)]);
        unit(sub(b, a))
    };
    // Initial frame: u normal to the first tangent.
    let t0 = tangent(0);
    let pick = if t0[0].abs() < 0.9 {
        [1.0, 0.0, 0.0]
    } else {
        [0.0, 1.0, 0.0]
    };
    let mut u = unit(cross(cross(t0, pick), t0));
    let mut rings = Vec::with_capacity(n);
    for (j, &c) in curve.iter().enumerate() {
        let t = tangent(j);
        // Parallel transport: project the previous u onto the new normal plane.
        u = unit(sub(u, {
            let d = dot(u, t);
            [d * t[0], d * t[1], d * t[2]]
        }));
        let w = cross(t, u);
        rings.push(
            (0..around)
                .map(|i| {
                    let a = std::f64::consts::TAU * i as f64 / around as f64;
                    let (ca, sa) = (radius * a.cos(), radius * a.sin());
                    [
                        c[0] + ca * u[0] + sa * w[0],
                        c[1] + ca * u[1] + sa * w[1],
                        c[2] + ca * u[2] + sa * w[2],
                    ]
                })
                .collect(),
        );
    }
    ring_strip(rings, around)
}

/// The centre line of an open overhand knot, `segments + 1` points: the trefoil
/// `scale * (sin t + 2 sin 2t, cos t − 2 cos 2t, −sin 3t)` for `t` in `[π + 0.6, 3π − 0.6]`
/// (opened at the tip of its lobe on −y, away from its crossings), then straight tails of `tail`
/// metres continuing its end tangents (both head roughly toward −y, about `2.6 * scale` apart).
/// Strands pass no closer than about `1.2 * scale` to each other.
pub fn overhand_knot_curve(scale: f64, tail: f64, segments: usize) -> Vec<V3> {
    let f = |t: f64| {
        [
            scale * (t.sin() + 2.0 * (2.0 * t).sin()),
            scale * (t.cos() - 2.0 * (2.0 * t).cos()),
            -scale * (3.0 * t).sin(),
        ]
    };
    let pi = std::f64::consts::PI;
    let (t0, t1) = (pi + 0.6, 3.0 * pi - 0.6);
    let m = 2000;
    let knot_len: f64 = (0..m)
        .map(|k| {
            let a = f(t0 + (t1 - t0) * k as f64 / m as f64);
            let b = f(t0 + (t1 - t0) * (k + 1) as f64 / m as f64);
            dot(sub(b, a), sub(b, a)).sqrt()
        })
        .sum();
    let segments = segments.max(8);
    // Spread the segments over the knot and the two tails by length.
    let total = knot_len + 2.0 * tail;
    let n_tail = ((segments as f64 * tail / total).round() as usize).max(1);
    let n_knot = segments - 2 * n_tail;
    let h = 1e-6;
    let start_t = unit(sub(f(t0 + h), f(t0)));
    let end_t = unit(sub(f(t1), f(t1 - h)));
    let (p0, p1) = (f(t0), f(t1));
    let along = |p: V3, d: V3, s: f64| [p[0] + s * d[0], p[1] + s * d[1], p[2] + s * d[2]];
    let mut pts = Vec::with_capacity(segments + 1);
    for k in (1..=n_tail).rev() {
        pts.push(along(p0, start_t, -tail * k as f64 / n_tail as f64));
    }
    for k in 0..=n_knot {
        pts.push(f(t0 + (t1 - t0) * k as f64 / n_knot as f64));
    }
    for k in 1..=n_tail {
        pts.push(along(p1, end_t, tail * k as f64 / n_tail as f64));
    }
    pts
}

/// How the arms of a [`reef_knot_curves`] knot end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnotArms {
    /// Reef knot: each rope's two arms are straight tails.
    Tails,
    /// Bow-knot-like: each rope's two arms widen and bend toward each other into an ear, its two
    /// ends facing each other across a gap at the ear's tip (a bow knot is a reef knot whose
    /// arms are doubled into ears; here the ears are left open at the tip).
    Ears,
}

/// The centre lines of two ropes, A and B, tied in a loose reef (square) knot, each
/// `segments + 1` points evenly spaced along the rope. In units of `scale` (m): rope A makes a
/// bight of radius 2 centred at (1, 0) with its two arms heading to −x (1.6 apart in y away
/// from the knot), rope B is A turned by 180° about z (bight at −x, arms to +x); the two bights
/// interlock with six crossings where the ropes alternate over and under, one scale apart in z.
/// Any two points of the centre lines (of one rope: more than 2.5 scales apart along it) stay
/// about 0.9 scales apart, so tubes of radius up to 0.4 scales fit. `tail` (m) is the length of
/// the straight arms beyond the knot (for [`KnotArms::Ears`], of the ear's straight part).
/// The first point of A is the end of its upper arm (+y); A's last point ends its lower arm.
pub fn reef_knot_curves(scale: f64, tail: f64, segments: usize, arms: KnotArms) -> [Vec<V3>; 2] {
    // Arm half-spacing away from the knot, and the bight's radius (the other rope's bight
    // reaches x = −(1 + b)).
    let (a, b): (f64, f64) = (0.8, 2.0);
    let lift = 0.5 * scale;
    let tail = tail / scale;
    let h = |x: f64| {
        // Arm half-spacing: a away from the own bight, b at it, the arms crossing at x = 0.
        if x <= -1.0 {
            a
        } else if x >= 1.0 {
            b
        } else {
            0.5 * (a + b) + 0.5 * (b - a) * (0.5 * std::f64::consts::PI * x).sin()
        }
    };
    let pi = std::f64::consts::PI;
    // Rope A's 2D path (units of scale), from the end of its upper arm to the end of its lower
    // arm, sampled densely.
    let n = 1500;
    let mut upper: Vec<[f64; 2]> = Vec::new(); // from the arm's end to the bight
    match arms {
        KnotArms::Tails => {
            let x0 = -(1.0 + b) - tail;
            for k in 0..=n {
                let x = x0 + (1.0 - x0) * k as f64 / n as f64;
                upper.push([x, h(x)]);
            }
        }
        KnotArms::Ears => {
            // Beyond the other rope's bight (x < −1 − b − 0.3) the arms widen from a to b over
            // 1.5 scales, run `tail` straight, and bend toward each other on a circle of radius b,
            // stopping short of the tip to leave a gap (the ends then face each other).
            let xw = -(1.0 + b) - 0.3;
            let width = |x: f64| {
                if x >= xw {
                    h(x)
                } else if x > xw - 1.5 {
                    a + (b - a) * 0.5 * (1.0 - (pi * (xw - x) / 1.5).cos())
                } else {
                    b
                }
            };
            let x_tip = xw - 1.5 - tail;
            let gap = (1.2 / (2.0 * b)).asin(); // the ends 1.2 scales apart
            for k in 0..=n / 4 {
                let t = (pi - gap) + (0.5 * pi - (pi - gap)) * k as f64 / (n / 4) as f64;
                upper.push([x_tip + b * t.cos(), b * t.sin()]);
            }
            for k in 1..=n {
                let x = x_tip + (1.0 - x_tip) * k as f64 / n as f64;
                upper.push([x, width(x)]);
            }
        }
    }
    let mut path = upper.clone();
    for k in 1..n {
        let t = 0.5 * pi - pi * k as f64 / n as f64;
        path.push([1.0 + b * t.cos(), b * t.sin()]);
    }
    path.extend(upper.iter().rev().map(|p| [p[0], -p[1]]));
    let other: Vec<[f64; 2]> = path.iter().map(|p| [-p[0], -p[1]]).collect();
    // Arc length along A and the crossings with B (in A's arc length), in order.
    let mut arc = vec![0.0];
    for k in 1..path.len() {
        let (p, q) = (path[k - 1], path[k]);
        arc.push(arc[k - 1] + (q[0] - p[0]).hypot(q[1] - p[1]));
    }
    let mut crossings = Vec::new();
    for k in 1..path.len() {
        for j in 1..other.len() {
            if let Some(t) = segment_crossing(path[k - 1], path[k], other[j - 1], other[j]) {
                crossings.push(arc[k - 1] + t * (arc[k] - arc[k - 1]));
            }
        }
    }
    crossings.sort_by(f64::total_cmp);
    crossings.dedup_by(|x, y| (*x - *y).abs() < 1e-9);
    // Heights: +lift and −lift alternately at A's crossings (A over, under, over, ...), a cosine
    // between them, easing to 0 over 2 scales beyond the first and last crossings. B, being A
    // turned about z with the same heights, is then under where A is over at every crossing.
    let ramp = 2.0;
    let z = |s: f64| -> f64 {
        let v = |k: usize| if k % 2 == 0 { lift } else { -lift };
        let m = crossings.len();
        if m == 0 {
            return 0.0;
        }
        if s <= crossings[0] {
            let d = (crossings[0] - s).min(ramp);
            return v(0) * 0.5 * (1.0 + (pi * d / ramp).cos());
        }
        if s >= crossings[m - 1] {
            let d = (s - crossings[m - 1]).min(ramp);
            return v(m - 1) * 0.5 * (1.0 + (pi * d / ramp).cos());
        }
        let k = crossings.partition_point(|&c| c <= s) - 1;
        v(k) * (pi * (s - crossings[k]) / (crossings[k + 1] - crossings[k])).cos()
    };
    let dense: Vec<V3> = path
        .iter()
        .zip(&arc)
        .map(|(p, &s)| [scale * p[0], scale * p[1], z(s)])
        .collect();
    let a_curve = resample(&dense, segments.max(8));
    let b_curve = a_curve.iter().map(|p| [-p[0], -p[1], p[2]]).collect();
    [a_curve, b_curve]
}

/// Where segments `p0 p1` and `q0 q1` (2D) cross: the parameter along `p0 p1`.
fn segment_crossing(p0: [f64; 2], p1: [f64; 2], q0: [f64; 2], q1: [f64; 2]) -> Option<f64> {
    let (d, e) = (
        [p1[0] - p0[0], p1[1] - p0[1]],
        [q1[0] - q0[0], q1[1] - q0[1]],
    );
    let den = d[0] * e[1] - d[1] * e[0];
    if den.abs() < 1e-300 {
        return None;
    }
    let w = [q0[0] - p0[0], q0[1] - p0[1]];
    let t = (w[0] * e[1] - w[1] * e[0]) / den;
    let u = (w[0] * d[1] - w[1] * d[0]) / den;
    ((0.0..1.0).contains(&t) && (0.0..1.0).contains(&u)).then_some(t)
}

/// `segments + 1` points evenly spaced by arc length along the polyline `dense`.
fn resample(dense: &[V3], segments: usize) -> Vec<V3> {
    let mut arc = vec![0.0];
    for k in 1..dense.len() {
        let d = sub(dense[k], dense[k - 1]);
        arc.push(arc[k - 1] + dot(d, d).sqrt());
    }
    let total = arc[arc.len() - 1];
    let mut out = Vec::with_capacity(segments + 1);
    let mut k = 1;
    for j in 0..=segments {
        let s = total * j as f64 / segments as f64;
        while k < dense.len() - 1 && arc[k] < s {
            k += 1;
        }
        let t = ((s - arc[k - 1]) / (arc[k] - arc[k - 1]).max(1e-300)).clamp(0.0, 1.0);
        let (p, q) = (dense[k - 1], dense[k]);
        out.push([
            p[0] + t * (q[0] - p[0]),
            p[1] + t * (q[1] - p[1]),
            p[2] + t * (q[2] - p[2]),
        ]);
    }
    out
}

/// One mesh of two tubes of `radius` swept along `curves` ([`swept_tube`], `around` vertices
/// per ring): the first tube's vertices first, then the second's.
pub fn two_tubes(curves: &[Vec<V3>; 2], radius: f64, around: usize) -> TriMesh {
    let mut m = swept_tube(&curves[0], radius, around);
    let second = swept_tube(&curves[1], radius, around);
    let offset = m.positions.len() as u32;
    m.positions.extend(second.positions);
    m.triangles
        .extend(second.triangles.iter().map(|t| t.map(|v| v + offset)));
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every edge used by one or two triangles, and every interior edge traversed in opposite
    /// directions by its two triangles (consistent orientation).
    fn assert_oriented_manifold(m: &TriMesh) {
        assert_eq!(m.nonmanifold_edges(), 0);
        let mut directed = std::collections::HashSet::new();
        for t in &m.triangles {
            for k in 0..3 {
                assert!(
                    directed.insert([t[k], t[(k + 1) % 3]]),
                    "edge {:?} twice in one direction",
                    [t[k], t[(k + 1) % 3]]
                );
            }
        }
    }

    fn normal(m: &TriMesh, t: &[u32; 3]) -> (V3, V3) {
        let [a, b, c] = t.map(|v| m.positions[v as usize]);
        let n = cross(sub(b, a), sub(c, a));
        let centre = [
            (a[0] + b[0] + c[0]) / 3.0,
            (a[1] + b[1] + c[1]) / 3.0,
            (a[2] + b[2] + c[2]) / 3.0,
        ];
        (n, centre)
    }

    #[test]
    fn tube_counts_orientation_and_two_boundary_rings() {
        let m = cloth_tube(0.1, 0.6, 16, 10);
        assert_eq!(m.positions.len(), 11 * 16);
        assert_eq!(m.triangles.len(), 2 * 16 * 10);
        assert_oriented_manifold(&m);
        assert_eq!(m.boundary_edges().len(), 32, "two open end rings");
        for t in &m.triangles {
            let (n, c) = normal(&m, t);
            assert!(n[1] * c[1] + n[2] * c[2] > 0.0, "outward normal");
        }
        for p in &m.positions {
            assert!((p[1].hypot(p[2]) - 0.1).abs() < 1e-12 && p[0].abs() <= 0.3 + 1e-12);
        }
    }

    #[test]
    fn odd_rings_stay_manifold() {
        let m = cloth_tube(0.1, 0.6, 7, 3);
        assert_oriented_manifold(&m);
        assert_eq!(m.boundary_edges().len(), 14);
    }

    #[test]
    fn funnel_counts_radii_and_orientation() {
        let m = cloth_funnel(0.3, 0.05, 0.2, 24, 6);
        assert_eq!(m.positions.len(), 7 * 24);
        assert_eq!(m.triangles.len(), 2 * 24 * 6);
        assert_oriented_manifold(&m);
        assert_eq!(m.boundary_edges().len(), 48);
        let r = |p: &V3| p[0].hypot(p[1]);
        assert!(
            (r(&m.positions[0]) - 0.05).abs() < 1e-12 && (m.positions[0][2] + 0.1).abs() < 1e-12
        );
        let top = m.positions.last().unwrap();
        assert!((r(top) - 0.3).abs() < 1e-12 && (top[2] - 0.1).abs() < 1e-12);
        for t in &m.triangles {
            let (n, c) = normal(&m, t);
            assert!(n[0] * c[0] + n[1] * c[1] > 0.0, "normal away from the axis");
        }
    }

    #[test]
    fn swept_tube_of_a_line_is_the_cylinder() {
        let curve: Vec<V3> = (0..=4)
            .map(|j| [-0.3 + 0.15 * j as f64, 0.0, 0.0])
            .collect();
        let m = swept_tube(&curve, 0.1, 12);
        assert_eq!(m.positions.len(), 5 * 12);
        assert_oriented_manifold(&m);
        for (k, p) in m.positions.iter().enumerate() {
            assert!((p[1].hypot(p[2]) - 0.1).abs() < 1e-12);
            assert!((p[0] - curve[k / 12][0]).abs() < 1e-12);
        }
        for t in &m.triangles {
            let (n, c) = normal(&m, t);
            assert!(n[1] * c[1] + n[2] * c[2] > 0.0, "outward normal");
        }
    }

    #[test]
    fn overhand_knot_strands_keep_apart() {
        let c = overhand_knot_curve(0.1, 0.3, 200);
        assert_eq!(c.len(), 201);
        // Points more than 3 scales of arc apart stay 1.15 scales apart (room for a tube).
        let mut arc = vec![0.0];
        for k in 1..c.len() {
            arc.push(arc[k - 1] + dot(sub(c[k], c[k - 1]), sub(c[k], c[k - 1])).sqrt());
        }
        for i in 0..c.len() {
            for j in i + 1..c.len() {
                if arc[j] - arc[i] > 0.3 {
                    let d = dot(sub(c[i], c[j]), sub(c[i], c[j])).sqrt();
                    assert!(d > 0.115, "points {i} and {j}: {d} m");
                }
            }
        }
    }

    /// Smallest distance between points of the two curves and between points of one curve more
    /// than `arc_gap` apart along it.
    fn knot_clearance(c: &[Vec<V3>; 2], arc_gap: f64) -> f64 {
        let mut best = f64::INFINITY;
        let arcs: Vec<Vec<f64>> = c
            .iter()
            .map(|c| {
                let mut arc = vec![0.0];
                for k in 1..c.len() {
                    arc.push(arc[k - 1] + dot(sub(c[k], c[k - 1]), sub(c[k], c[k - 1])).sqrt());
                }
                arc
            })
            .collect();
        for r in 0..2 {
            for i in 0..c[r].len() {
                for j in 0..c[1].len() {
                    if r == 1 && arcs[1][j] - arcs[1][i] <= arc_gap {
                        continue;
                    }
                    if r == 0 {
                        // A against B, and A against itself.
                        let d = sub(c[0][i], c[1][j]);
                        best = best.min(dot(d, d).sqrt());
                        if j < c[0].len() && arcs[0][j] - arcs[0][i] > arc_gap {
                            let d = sub(c[0][i], c[0][j]);
                            best = best.min(dot(d, d).sqrt());
                        }
                    } else {
                        let d = sub(c[1][i], c[1][j]);
                        best = best.min(dot(d, d).sqrt());
                    }
                }
            }
        }
        best
    }

    #[test]
    fn reef_and_bow_knots_interlock_with_room_for_their_tubes() {
        for arms in [KnotArms::Tails, KnotArms::Ears] {
            let (scale, lift) = (0.03, 0.015);
            let c = reef_knot_curves(scale, 0.15, 120, arms);
            assert_eq!((c[0].len(), c[1].len()), (121, 121));
            // B is A turned by 180° about z.
            for (p, q) in c[0].iter().zip(&c[1]) {
                assert_eq!([p[0], p[1], p[2]], [-q[0], -q[1], q[2]]);
            }
            // Six crossings in the plane, each with A and B 2·lift apart in z: the ropes
            // really interlock (a sign error would put both at one height).
            let flat = |c: &Vec<V3>| c.iter().map(|p| [p[0], p[1]]).collect::<Vec<_>>();
            let (fa, fb) = (flat(&c[0]), flat(&c[1]));
            let mut crossings = 0;
            for i in 1..fa.len() {
                for j in 1..fb.len() {
                    if let Some(t) = segment_crossing(fa[i - 1], fa[i], fb[j - 1], fb[j]) {
                        crossings += 1;
                        let za = c[0][i - 1][2] + t * (c[0][i][2] - c[0][i - 1][2]);
                        let u = (0..=100)
                            .map(|k| k as f64 / 100.0)
                            .min_by(|&x, &y| {
                                let at = |s: f64| {
                                    let p = [
                                        fb[j - 1][0] + s * (fb[j][0] - fb[j - 1][0]),
                                        fb[j - 1][1] + s * (fb[j][1] - fb[j - 1][1]),
                                    ];
                                    let q = [
                                        fa[i - 1][0] + t * (fa[i][0] - fa[i - 1][0]),
                                        fa[i - 1][1] + t * (fa[i][1] - fa[i - 1][1]),
                                    ];
                                    (p[0] - q[0]).hypot(p[1] - q[1])
                                };
                                at(x).total_cmp(&at(y))
                            })
                            .unwrap();
                        let zb = c[1][j - 1][2] + u * (c[1][j][2] - c[1][j - 1][2]);
                        assert!(
                            (za - zb).abs() > 1.8 * lift,
                            "{arms:?}: crossing {crossings} heights {za} {zb}"
                        );
                    }
                }
            }
            assert_eq!(crossings, 6, "{arms:?}");
            // Room for tubes of radius 0.4 scales.
            let d = knot_clearance(&c, 2.5 * scale);
            assert!(d > 0.85 * scale, "{arms:?}: centre lines {d} m apart");
            if arms == KnotArms::Ears {
                // The ear's two ends (A's first and last points) face each other across a gap.
                let g = sub(c[0][0], c[0][120]);
                assert!(dot(g, g).sqrt() > 1.1 * scale, "ear gap {:?}", g);
                assert!(c[0][0][0] < -0.1 && c[0][120][0] < -0.1, "ear tip on −x");
            }
        }
    }
}
