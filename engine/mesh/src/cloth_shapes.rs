//! Open cloth surfaces of revolution and swept tubes (the two-way IPM paper's tube, funnel and
//! knot scenes). Lengths in metres; every triangle is counter-clockwise seen from outside (its
//! normal points away from the axis or centre line).
//!
//! - [`cloth_tube`]: an open cylinder along x.
//! - [`cloth_funnel`]: an open truncated cone along z.
//! - [`swept_tube`]: an open tube of circular section around any smooth open polyline.
//! - [`overhand_knot_curve`]: the centre line of an open overhand knot (a trefoil cut open).

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
}
