//! Tetrahedralization (isosurface stuffing) acceptance: zero inverted tets, volume within 3 % of
//! the enclosed surface volume, minimum dihedral angle >= 8 degrees, a conforming mesh whose
//! boundary lies on the input surface.

use std::collections::HashMap;
use std::path::PathBuf;
use supple_mesh::tetrahedralize::{
    enclosed_volume, stuff_implicit, tetrahedralize, Report, TetrahedralizeError,
};
use supple_mesh::{TetMesh, TriMesh};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../data/meshes/surface")
        .join(name)
}

fn load_surface(name: &str) -> TriMesh {
    match supple_mesh::load(data(name)) {
        Ok(l) => l.surface,
        Err(e) => panic!("cannot load {name}: {e}"),
    }
}

/// Boundary faces (used once) of a tet mesh, outward for positive tets.
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
    assert!(
        count.values().all(|&(_, c)| c <= 2),
        "a face is shared by more than two tets"
    );
    count
        .into_values()
        .filter(|&(_, c)| c == 1)
        .map(|(t, _)| t)
        .collect()
}

fn euler(tris: &[[u32; 3]]) -> i64 {
    let mut edges = std::collections::HashSet::new();
    let mut verts = std::collections::HashSet::new();
    for t in tris {
        for k in 0..3 {
            let (a, b) = (t[k], t[(k + 1) % 3]);
            edges.insert((a.min(b), a.max(b)));
            verts.insert(a);
        }
    }
    verts.len() as i64 - edges.len() as i64 + tris.len() as i64
}

fn point_triangle_distance(p: [f64; 3], t: [[f64; 3]; 3]) -> f64 {
    // Minimum over the interior projection and the three edges.
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let seg = |a: [f64; 3], b: [f64; 3]| {
        let ab = sub(b, a);
        let s = (dot(sub(p, a), ab) / dot(ab, ab)).clamp(0.0, 1.0);
        let q = [a[0] + s * ab[0], a[1] + s * ab[1], a[2] + s * ab[2]];
        dot(sub(p, q), sub(p, q)).sqrt()
    };
    let mut best = seg(t[0], t[1]).min(seg(t[1], t[2])).min(seg(t[2], t[0]));
    let e1 = sub(t[1], t[0]);
    let e2 = sub(t[2], t[0]);
    let n = [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ];
    let nn = dot(n, n);
    if nn > 0.0 {
        let d = dot(sub(p, t[0]), n) / nn;
        let q = [p[0] - d * n[0], p[1] - d * n[1], p[2] - d * n[2]];
        let inside = (0..3).all(|k| {
            let a = t[k];
            let b = t[(k + 1) % 3];
            let c = [
                (b[1] - a[1]) * (q[2] - a[2]) - (b[2] - a[2]) * (q[1] - a[1]),
                (b[2] - a[2]) * (q[0] - a[0]) - (b[0] - a[0]) * (q[2] - a[2]),
                (b[0] - a[0]) * (q[1] - a[1]) - (b[1] - a[1]) * (q[0] - a[0]),
            ];
            dot(c, n) >= 0.0
        });
        if inside {
            best = best.min(d.abs() * nn.sqrt());
        }
    }
    best
}

/// Checks the acceptance numbers and the structural properties; returns the report.
fn check(name: &str, surface: &TriMesh, resolution: usize, expected_euler: i64) -> Report {
    let t0 = std::time::Instant::now();
    let (mesh, rep) = match tetrahedralize(surface, resolution) {
        Ok(r) => r,
        Err(e) => panic!("{name}: {e}"),
    };
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "{name} resolution {resolution}: {} vertices, {} tets, min dihedral {:.2} deg, max {:.2} deg, volume {:.6} vs surface {:.6} ({:.3} %), {:.3} s",
        rep.vertices,
        rep.tets,
        rep.min_dihedral_deg,
        rep.max_dihedral_deg,
        rep.volume,
        rep.surface_volume,
        100.0 * rep.volume_error(),
        secs
    );
    // Zero inverted or degenerate tets.
    let inverted = (0..mesh.tets.len())
        .filter(|&t| !(mesh.tet_volume(t) > 0.0))
        .count();
    assert_eq!(inverted, 0, "{name}: inverted tets");
    assert_eq!(rep.inverted, 0);
    assert!(
        rep.volume_error() < 0.03,
        "{name}: volume error {}",
        rep.volume_error()
    );
    assert!(
        rep.min_dihedral_deg >= 8.0,
        "{name}: min dihedral {}",
        rep.min_dihedral_deg
    );
    let (lo, _) = supple_mesh::tetrahedralize::dihedral_range_deg(&mesh);
    assert!((lo - rep.min_dihedral_deg).abs() < 1e-9);
    // Every vertex is used.
    let mut used = vec![false; mesh.positions.len()];
    mesh.tets
        .iter()
        .flatten()
        .for_each(|&v| used[v as usize] = true);
    assert!(used.iter().all(|&u| u), "{name}: unreferenced vertices");
    // Conforming: faces shared by at most two tets, the boundary is a closed surface whose
    // enclosed volume equals the tets' volume.
    let b = boundary(&mesh);
    let bs = TriMesh {
        positions: mesh.positions.clone(),
        triangles: b.clone(),
    };
    let bv = enclosed_volume(&bs);
    assert!(
        (bv - rep.volume).abs() <= 1e-9 * rep.volume,
        "{name}: boundary volume {bv} vs {}",
        rep.volume
    );
    assert_eq!(euler(&b), expected_euler, "{name}: boundary topology");
    // The boundary lies on the input surface (sampled vertices).
    let scale = rep.cell_size;
    let mut bverts: Vec<u32> = b.iter().flatten().copied().collect();
    bverts.sort_unstable();
    bverts.dedup();
    for &v in bverts.iter().step_by(17) {
        let p = mesh.positions[v as usize];
        let d = surface
            .triangles
            .iter()
            .map(|t| point_triangle_distance(p, t.map(|i| surface.positions[i as usize])))
            .fold(f64::INFINITY, f64::min);
        assert!(
            d < 1e-9 * scale.max(1.0),
            "{name}: boundary vertex {v} is {d} m off the surface"
        );
    }
    rep
}

#[test]
fn bunny_resolution_30_meets_acceptance() {
    let s = load_surface("bunny.ply");
    assert_eq!(s.triangles.len(), 12200);
    let rep = check("bunny", &s, 30, 2);
    assert!((rep.surface_volume - 0.8758003815940704).abs() < 1e-6);
}

#[test]
fn bunny_coarse_and_fine_resolutions() {
    let s = load_surface("bunny.ply");
    for res in [12, 45] {
        check("bunny", &s, res, 2);
    }
}

#[test]
fn torus_meets_acceptance() {
    let s = load_surface("torus.ply");
    for res in [20, 30, 50] {
        check("torus", &s, res, 0);
    }
}

/// A parametric torus (major radius `big`, minor `small`) as a closed outward surface.
fn torus_surface(big: f64, small: f64, nu: usize, nv: usize) -> TriMesh {
    let mut positions = Vec::new();
    for i in 0..nu {
        let u = std::f64::consts::TAU * i as f64 / nu as f64;
        for j in 0..nv {
            let v = std::f64::consts::TAU * j as f64 / nv as f64;
            let r = big + small * v.cos();
            positions.push([r * u.cos(), r * u.sin(), small * v.sin()]);
        }
    }
    let id = |i: usize, j: usize| ((i % nu) * nv + (j % nv)) as u32;
    let mut triangles = Vec::new();
    for i in 0..nu {
        for j in 0..nv {
            triangles.push([id(i, j), id(i + 1, j), id(i + 1, j + 1)]);
            triangles.push([id(i, j), id(i + 1, j + 1), id(i, j + 1)]);
        }
    }
    TriMesh {
        positions,
        triangles,
    }
}

#[test]
fn procedural_torus_matches_its_surface_volume() {
    let s = torus_surface(0.5, 0.2, 96, 48);
    assert!(enclosed_volume(&s) > 0.0, "torus surface must be outward");
    let rep = check("parametric torus", &s, 32, 0);
    let analytic = 2.0 * std::f64::consts::PI.powi(2) * 0.5 * 0.2 * 0.2;
    assert!((rep.volume - analytic).abs() / analytic < 0.03);
}

#[test]
fn triangle_soup_is_welded() {
    // STL-like input: every triangle has its own three vertices.
    let s = load_surface("torus.ply");
    let mut soup = TriMesh::default();
    for t in &s.triangles {
        let base = soup.positions.len() as u32;
        for &v in t {
            soup.positions.push(s.positions[v as usize]);
        }
        soup.triangles.push([base, base + 1, base + 2]);
    }
    let (a, ra) = tetrahedralize(&s, 16).expect("welded");
    let (b, rb) = tetrahedralize(&soup, 16).expect("soup");
    assert_eq!(a.tets.len(), b.tets.len());
    assert!((ra.volume - rb.volume).abs() < 1e-12);
}

#[test]
fn inward_oriented_surface_gives_the_same_mesh() {
    let mut s = load_surface("torus.ply");
    let (a, _) = tetrahedralize(&s, 16).expect("outward");
    for t in &mut s.triangles {
        t.swap(1, 2);
    }
    let (b, rb) = tetrahedralize(&s, 16).expect("inward");
    assert_eq!(a.tets.len(), b.tets.len());
    assert!(rb.surface_volume > 0.0);
}

#[test]
fn axis_aligned_box_on_lattice_planes() {
    // Faces lying exactly on lattice planes exercise the tie rules of the inside test.
    let b = supple_mesh::procedural::box_tets(
        [1, 1, 1],
        [1.0, 1.0, 1.0],
        [0.0; 3],
        supple_mesh::procedural::CellSplit::Six,
    );
    let faces = boundary(&b);
    let s = TriMesh {
        positions: b.positions.clone(),
        triangles: faces,
    };
    for res in [4, 10, 16] {
        let (m, rep) = tetrahedralize(&s, res).expect("box");
        assert!((0..m.tets.len()).all(|t| m.tet_volume(t) > 0.0));
        assert!(
            (rep.volume - 1.0).abs() < 0.02,
            "res {res}: volume {}",
            rep.volume
        );
        assert!(rep.min_dihedral_deg >= 8.0);
    }
}

#[test]
fn implicit_sphere() {
    let f = |p: [f64; 3]| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt() - 0.1;
    let (m, rep) = stuff_implicit(f, [-0.1; 3], [0.1; 3], 16).expect("sphere");
    let exact = 4.0 / 3.0 * std::f64::consts::PI * 1e-3;
    assert!(
        (rep.volume - exact).abs() / exact < 0.03,
        "sphere volume {}",
        rep.volume
    );
    assert!(rep.min_dihedral_deg >= 8.0);
    assert!((0..m.tets.len()).all(|t| m.tet_volume(t) > 0.0));
    assert_eq!(euler(&boundary(&m)), 2);
}

#[test]
fn errors_are_reported_not_panicked() {
    let cloth = supple_mesh::procedural::cloth_grid([4, 4], [1.0, 1.0], [0.0; 3]);
    assert!(matches!(
        tetrahedralize(&cloth, 10),
        Err(TetrahedralizeError::NotClosed(_))
    ));
    let s = load_surface("torus.ply");
    assert!(matches!(
        tetrahedralize(&s, 0),
        Err(TetrahedralizeError::BadResolution(0))
    ));
    assert!(matches!(
        tetrahedralize(&s, 1_000_000),
        Err(TetrahedralizeError::BadResolution(_))
    ));
    let mut bad = s.clone();
    bad.positions[3][1] = f64::NAN;
    assert!(matches!(
        tetrahedralize(&bad, 10),
        Err(TetrahedralizeError::NonFinite(3))
    ));
    let mut bad = s.clone();
    bad.triangles[5][2] = 1 << 30;
    assert!(matches!(
        tetrahedralize(&bad, 10),
        Err(TetrahedralizeError::IndexOutOfRange(5))
    ));
    assert!(matches!(
        tetrahedralize(&TriMesh::default(), 10),
        Err(TetrahedralizeError::EmptySurface)
    ));
    // A shape much thinner than the lattice cell yields no tets: an error, not an empty mesh.
    let thin = supple_mesh::procedural::box_tets(
        [1, 1, 1],
        [1.0, 1.0, 1e-4],
        [0.0; 3],
        supple_mesh::procedural::CellSplit::Six,
    );
    let ts = TriMesh {
        positions: thin.positions.clone(),
        triangles: boundary(&thin),
    };
    assert!(matches!(
        tetrahedralize(&ts, 2),
        Err(TetrahedralizeError::NoTets(_))
    ));
}

#[test]
fn cli_entry_point_writes_and_fails_cleanly() {
    use supple_mesh::tetrahedralize::run_cli;
    let d = std::env::temp_dir().join(format!("supple-tetra-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    // Surface in, .vtu and .msh out; the output re-imports with zero inverted tets.
    for out in ["t.vtu", "t.msh", "t.usda"] {
        let o = d.join(out);
        assert_eq!(run_cli(&data("torus.ply"), &o, 12), 0);
        if out != "t.usda" {
            let l = supple_mesh::load(&o).expect("re-import");
            assert!(!l.tets.tets.is_empty());
            assert_eq!(l.flipped_tets, 0);
        }
    }
    // A tet mesh as input: its boundary is filled again.
    let b = supple_mesh::procedural::box_tets(
        [2, 2, 2],
        [0.5; 3],
        [0.0; 3],
        supple_mesh::procedural::CellSplit::Five,
    );
    let bin = d.join("box.msh");
    supple_mesh::export::write_msh(&bin, &b, supple_mesh::export::MshEncoding::Binary)
        .expect("write");
    assert_eq!(run_cli(&bin, &d.join("box_out.vtu"), 8), 0);
    // Errors: exit code 2.
    let cloth = supple_mesh::procedural::cloth_grid([3, 3], [1.0, 1.0], [0.0; 3]);
    let open = d.join("open.obj");
    supple_mesh::export::write_obj(&open, &cloth).expect("write");
    assert_eq!(run_cli(&open, &d.join("x.vtu"), 10), 2);
    assert_eq!(run_cli(&d.join("missing.obj"), &d.join("x.vtu"), 10), 2);
    assert_eq!(run_cli(&data("torus.ply"), &d.join("x.xyz"), 10), 2);
    assert_eq!(run_cli(&data("torus.ply"), &d.join("x.vtu"), 0), 2);
}
