//! Topology on real meshes: tet-face adjacency, vertex-to-element maps, cloth edges, boundary
//! edges and bending stencils.

use std::path::Path;
use supple_mesh::load;
use supple_mesh::topology::{NO_NEIGHBOR, TET_FACES};

fn data(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/meshes")
        .join(rel)
}

#[test]
fn tet_adjacency_is_symmetric_and_matches_faces() {
    let l = load(data("tet/sphere_low/sphere_low.vtu")).unwrap();
    let m = &l.tets;
    let adj = m.face_adjacency();
    let mut boundary = 0;
    for (t, faces) in adj.iter().enumerate() {
        for (f, &n) in faces.iter().enumerate() {
            if n == NO_NEIGHBOR {
                boundary += 1;
                continue;
            }
            // The neighbour points back, through a face with the same three vertices.
            let back = adj[n as usize]
                .iter()
                .position(|&x| x == t as u32)
                .expect("symmetric");
            let mut a: Vec<u32> = TET_FACES[f].iter().map(|&k| m.tets[t][k]).collect();
            let mut b: Vec<u32> = TET_FACES[back]
                .iter()
                .map(|&k| m.tets[n as usize][k])
                .collect();
            a.sort();
            b.sort();
            assert_eq!(a, b);
            // Face f is opposite local vertex f.
            assert!(!a.contains(&m.tets[t][f]));
        }
    }
    assert_eq!(boundary, 708);
    let v2t = m.vertex_to_tets();
    assert_eq!(v2t.rows(), m.positions.len());
    assert_eq!(v2t.items.len(), 4 * m.tets.len());
    for v in 0..v2t.rows() {
        for &t in v2t.row(v) {
            assert!(m.tets[t as usize].contains(&(v as u32)));
        }
    }
}

#[test]
fn cloth_edges_and_bending_stencils() {
    let l = load(data(
        "surface/original/pybullet/pybullet_data/cloth_z_up.obj",
    ))
    .unwrap();
    let s = &l.surface;
    assert_eq!(s.positions.len(), 25);
    assert_eq!(s.triangles.len(), 32);
    let edges = s.edges();
    let boundary = s.boundary_edges();
    let stencils = s.bending_stencils();
    // 5x5 grid: 16 boundary edges, V - E + F = 1 for a disc.
    assert_eq!(boundary.len(), 16);
    assert_eq!(25 - edges.len() as i64 + 32, 1);
    assert_eq!(stencils.len(), edges.len() - boundary.len());
    for st in &stencils {
        assert_ne!(st[2], st[3]);
        assert!(!st[..2].contains(&st[2]) && !st[..2].contains(&st[3]));
    }
    assert_eq!(s.nonmanifold_edges(), 0);
    let v2t = s.vertex_to_triangles();
    assert_eq!(v2t.items.len(), 96);
}

#[test]
fn orientation_fix_flips_and_reports() {
    let mut l = load(data("bad/base/tiny.node")).unwrap();
    for t in l.tets.tets.iter_mut().step_by(2) {
        t.swap(0, 1);
    }
    assert_eq!(l.tets.count_inverted(), 50);
    assert_eq!(l.tets.orient(), 50);
    assert_eq!(l.tets.count_inverted(), 0);
    let (surf, _) = l.tets.boundary_surface_compact();
    assert!((surf.enclosed_volume() - 1.0).abs() < 1e-12);
}
