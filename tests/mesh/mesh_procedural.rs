//! Procedural geometry: counts, orientation, volumes, topology.

use std::collections::{HashMap, HashSet};
use supple_mesh::procedural::*;
use supple_mesh::tetrahedralize::dihedral_range_deg;
use supple_mesh::TetMesh;

fn boundary(m: &TetMesh) -> Vec<[u32; 3]> {
    let faces = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];
    let mut count: HashMap<[u32; 3], ([u32; 3], u32)> = HashMap::new();
    for t in &m.tets {
        for f in faces {
            let tri = [t[f[0]], t[f[1]], t[f[2]]];
            let mut k = tri;
            k.sort_unstable();
            count.entry(k).or_insert((tri, 0)).1 += 1;
        }
    }
    assert!(count.values().all(|&(_, c)| c <= 2), "non-manifold face");
    count
        .into_values()
        .filter(|&(_, c)| c == 1)
        .map(|(t, _)| t)
        .collect()
}

fn euler(tris: &[[u32; 3]]) -> i64 {
    let mut edges = HashSet::new();
    let mut verts = HashSet::new();
    for t in tris {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            edges.insert((a.min(b), a.max(b)));
            verts.insert(a);
        }
    }
    verts.len() as i64 - edges.len() as i64 + tris.len() as i64
}

/// All tets positive and not degenerate; every vertex used; returns the volume.
fn check_tets(name: &str, m: &TetMesh) -> f64 {
    assert!(!m.tets.is_empty(), "{name}: empty");
    for t in 0..m.tets.len() {
        assert!(m.tet_volume(t) > 0.0, "{name}: tet {t} not positive");
    }
    let mut used = vec![false; m.positions.len()];
    m.tets
        .iter()
        .flatten()
        .for_each(|&v| used[v as usize] = true);
    assert!(used.iter().all(|&u| u), "{name}: unreferenced vertex");
    let (lo, _) = dihedral_range_deg(m);
    assert!(lo > 5.0, "{name}: min dihedral {lo}");
    m.total_volume_abs()
}

#[test]
fn five_tet_box_matches_peer_grid_tets() {
    let m = box_tets(
        [10, 10, 10],
        [0.05; 3],
        [-0.25, -0.25, 0.1],
        CellSplit::Five,
    );
    assert_eq!(m.positions.len(), 1331);
    assert_eq!(m.tets.len(), 5000);
    assert_eq!(boundary(&m).len(), 1200);
    let v = check_tets("box5", &m);
    assert!((v - 0.125).abs() < 1e-12);
    // Same numbering and tet order as the peer benchmark's grid_tets(): cell (0,0,0) is even,
    // cell (1,0,0) is odd.
    assert_eq!(
        &m.tets[..5],
        &[
            [1, 122, 12, 0],
            [121, 0, 132, 122],
            [11, 132, 0, 12],
            [133, 12, 122, 132],
            [12, 122, 132, 0]
        ]
    );
    assert_eq!(
        &m.tets[5..10],
        &[
            [1, 2, 12, 122],
            [123, 122, 134, 2],
            [13, 12, 2, 134],
            [133, 134, 122, 12],
            [12, 2, 134, 122]
        ]
    );
    assert_eq!(m.positions[1], [-0.2, -0.25, 0.1]);
    assert_eq!(m.positions[121], [-0.25, -0.25, 0.15000000000000002]);
}

#[test]
fn six_tet_box_and_beam() {
    let m = box_tets([3, 4, 5], [0.1, 0.2, 0.3], [1.0, 2.0, 3.0], CellSplit::Six);
    assert_eq!(m.positions.len(), 4 * 5 * 6);
    assert_eq!(m.tets.len(), 6 * 60);
    // Two triangles per boundary quad: faces of neighbouring cells match.
    assert_eq!(boundary(&m).len(), 2 * 2 * (3 * 4 + 4 * 5 + 3 * 5));
    let v = check_tets("box6", &m);
    assert!((v - 0.3 * 0.8 * 1.5).abs() < 1e-12);
    let b = beam([1.0, 0.1, 0.1], 0.05, [0.0; 3], CellSplit::Five);
    assert_eq!(b.tets.len(), 5 * 20 * 2 * 2);
    assert!((check_tets("beam", &b) - 0.01).abs() < 1e-12);
    assert_eq!(euler(&boundary(&b)), 2);
}

#[test]
fn sphere_volume_and_topology() {
    let r = 0.2;
    let m = sphere([0.0, 0.0, 1.0], r, 16).expect("sphere");
    let v = check_tets("sphere", &m);
    let exact = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    assert!(
        (v - exact).abs() / exact < 0.03,
        "sphere volume {v} vs {exact}"
    );
    assert_eq!(euler(&boundary(&m)), 2);
    for p in &m.positions {
        let d = (p[0] * p[0] + p[1] * p[1] + (p[2] - 1.0).powi(2)).sqrt();
        assert!(d <= r * (1.0 + 1e-9));
    }
    assert!(sphere([0.0; 3], -1.0, 10).is_err());
}

#[test]
fn squishy_ball_has_tentacles() {
    let (r, len, tr) = (0.1, 0.08, 0.02);
    let m = squishy_ball([0.0; 3], r, 12, len, tr, 40).expect("ball");
    let v = check_tets("squishy", &m);
    let ball = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    assert!(v > ball * 1.02, "tentacles add volume: {v} vs {ball}");
    assert_eq!(euler(&boundary(&m)), 2);
    // Tentacle tips reach out to about r + len.
    let reach = m
        .positions
        .iter()
        .map(|p| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt())
        .fold(0.0, f64::max);
    assert!(
        reach > r + 0.8 * len && reach <= r + len + 1e-9,
        "reach {reach}"
    );
}

#[test]
fn trefoil_knot_is_one_solid_torus() {
    let (s, tr) = (0.05, 0.016);
    let m = trefoil_knot([0.0; 3], s, tr, 60).expect("trefoil");
    let v = check_tets("trefoil", &m);
    // Tube volume = pi r^2 L (centre line length about 28.826 * scale).
    let c = trefoil_curve([0.0; 3], s, 2000);
    let len: f64 = c
        .positions
        .windows(2)
        .map(|w| {
            ((w[1][0] - w[0][0]).powi(2)
                + (w[1][1] - w[0][1]).powi(2)
                + (w[1][2] - w[0][2]).powi(2))
            .sqrt()
        })
        .sum();
    let exact = std::f64::consts::PI * tr * tr * len;
    assert!(
        (v - exact).abs() / exact < 0.05,
        "trefoil volume {v} vs {exact}"
    );
    // A single closed tube that never touches itself: the boundary is one torus.
    assert_eq!(euler(&boundary(&m)), 0);
    assert!(trefoil_knot([0.0; 3], s, 0.7 * s, 30).is_err());
}

#[test]
fn reef_knot_is_two_separate_strands() {
    let (r, tr) = (0.05, 0.012);
    let m = reef_knot([0.0; 3], r, tr, 60).expect("reef");
    let v = check_tets("reef", &m);
    // Two tubes, each: two legs of 3r, a half circle of radius r, plus two half-sphere caps.
    let len = 2.0 * (6.0 * r + std::f64::consts::PI * r);
    let exact =
        std::f64::consts::PI * tr * tr * len + 2.0 * 4.0 / 3.0 * std::f64::consts::PI * tr.powi(3);
    assert!(
        (v - exact).abs() / exact < 0.05,
        "reef volume {v} vs {exact}"
    );
    // Two sphere-like boundary components.
    assert_eq!(euler(&boundary(&m)), 4);
}

#[test]
fn cloth_grid_counts_and_orientation() {
    let c = cloth_grid([7, 3], [1.4, 0.6], [0.0, 0.0, 2.0]);
    assert_eq!(c.positions.len(), 8 * 4);
    assert_eq!(c.triangles.len(), 2 * 21);
    let mut area = 0.0;
    for t in &c.triangles {
        let [a, b, d] = t.map(|i| c.positions[i as usize]);
        let nz = (b[0] - a[0]) * (d[1] - a[1]) - (b[1] - a[1]) * (d[0] - a[0]);
        assert!(nz > 0.0, "triangle not counter-clockwise seen from +z");
        area += 0.5 * nz;
    }
    assert!((area - 1.4 * 0.6).abs() < 1e-12);
    assert!(c.positions.iter().all(|p| p[2] == 2.0));
    let big = cloth_grid([100, 100], [1.0, 1.0], [0.0; 3]);
    assert_eq!(big.positions.len(), 101 * 101);
    assert_eq!(big.triangles.len(), 20000);
}

#[test]
fn rods_and_hair() {
    let r = rod([0.0; 3], [1.0, 0.0, 0.0], 10);
    assert_eq!(r.positions.len(), 11);
    assert_eq!(r.strands, vec![0..11]);
    assert!((r.positions[10][0] - 1.0).abs() < 1e-15);
    let h = hair_strands([4, 5], 0.01, 0.3, 20, [0.0, 0.0, 1.0]);
    assert_eq!(h.strands.len(), 20);
    assert_eq!(h.positions.len(), 20 * 21);
    for s in &h.strands {
        assert_eq!(s.end - s.start, 21);
        let (a, b) = (
            h.positions[s.start as usize],
            h.positions[s.end as usize - 1],
        );
        assert!((a[2] - b[2] - 0.3).abs() < 1e-12);
    }
    let x = helix([0.0; 3], 0.01, 0.005, 3.0, 90);
    assert_eq!(x.positions.len(), 91);
    let top = x.positions[90];
    assert!((top[2] - 0.015).abs() < 1e-12 && (top[0] - 0.01).abs() < 1e-12);
}

#[test]
fn arch_voussoirs_are_separate_wedges_a_joint_apart() {
    let (r, t, depth, gap) = (0.5, 0.1, 0.2, 5e-4);
    let (blocks, along, across) = (9, 2, 1);
    let m = arch(r, t, depth, blocks, along, across, gap);
    let per_block_v = (along + 1) * (across + 1) * (across + 1);
    let per_block_t = 5 * along * across * across;
    assert_eq!(m.positions.len(), blocks * per_block_v);
    assert_eq!(m.tets.len(), blocks * per_block_t);
    check_tets("arch", &m);
    // Each voussoir's tets use only its own vertices, so the stones are separate pieces.
    for (k, tet) in m.tets.iter().enumerate() {
        let block = k / per_block_t;
        assert!(
            tet.iter().all(|&v| v as usize / per_block_v == block),
            "tet {k} crosses voussoirs"
        );
    }
    // Every vertex lies in the half ring (radius within gap of [r, r + t]), depth centred on y = 0.
    for p in &m.positions {
        let rho = (p[0] * p[0] + p[2] * p[2]).sqrt();
        assert!(rho > r - gap && rho < r + t + gap, "{p:?}: radius {rho}");
        assert!((p[1].abs() - 0.5 * depth).abs() < 1e-12 || p[1].abs() < 0.5 * depth);
    }
    // The feet stand gap / 2 above z = 0; the crown reaches r + t.
    let zmin = m
        .positions
        .iter()
        .map(|p| p[2])
        .fold(f64::INFINITY, f64::min);
    let zmax = m
        .positions
        .iter()
        .map(|p| p[2])
        .fold(f64::NEG_INFINITY, f64::max);
    assert!((zmin - 0.5 * gap).abs() < 1e-12, "feet at z = {zmin}");
    assert!(
        zmax < r + t + gap && zmax > (r + t) * (std::f64::consts::PI / 18.0).cos(),
        "{zmax}"
    );
    // Facing joint faces are parallel planes `gap` apart: each vertex of voussoir k's upper
    // joint face lies `gap` from the plane of voussoir k + 1's lower face.
    let span = std::f64::consts::PI / blocks as f64;
    for k in 0..blocks - 1 {
        let th = (k + 1) as f64 * span;
        let e_theta = [-th.sin(), 0.0, th.cos()];
        let side = |p: &[f64; 3]| p[0] * e_theta[0] + p[2] * e_theta[2];
        let below = &m.positions[k * per_block_v..(k + 1) * per_block_v];
        let above = &m.positions[(k + 1) * per_block_v..(k + 2) * per_block_v];
        let top = below.iter().map(side).fold(f64::NEG_INFINITY, f64::max);
        let bottom = above.iter().map(side).fold(f64::INFINITY, f64::min);
        assert!((top + 0.5 * gap).abs() < 1e-12, "joint {k}: {top}");
        assert!((bottom - 0.5 * gap).abs() < 1e-12, "joint {k}: {bottom}");
    }
}
