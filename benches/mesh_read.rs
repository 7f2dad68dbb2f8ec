//! Read throughput of a binary Gmsh MSH 4.1 file of about one million tetrahedra, through the
//! full `supple_mesh::load` path (file read, parse, validation, orientation check, topology
//! warnings). Prints one JSON object: `{"bench":"mesh_read","mb_per_s":...}`.
//!
//! Run: `cargo bench -p supple-benches --bench mesh_read` (set `SUPPLE_BENCH_CELLS=N` for an
//! N^3-cell lattice, 6 tets per cell; default 55 -> 998,250 tets).

use std::time::Instant;
use supple_mesh::export::{write_msh, MshEncoding};
use supple_mesh::TetMesh;

/// A structured lattice of `n^3` unit cells, each split into 6 tets around its main diagonal.
fn lattice(n: usize) -> TetMesh {
    let h = 1.0 / n as f64;
    let id = |i: usize, j: usize, k: usize| ((k * (n + 1) + j) * (n + 1) + i) as u32;
    let mut positions = Vec::with_capacity((n + 1).pow(3));
    for k in 0..=n {
        for j in 0..=n {
            for i in 0..=n {
                positions.push([i as f64 * h, j as f64 * h, k as f64 * h]);
            }
        }
    }
    let mut tets = Vec::with_capacity(6 * n * n * n);
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let c = |b: usize| id(i + (b & 1), j + ((b >> 1) & 1), k + ((b >> 2) & 1));
                for (a, b) in [(1, 3), (1, 5), (2, 3), (2, 6), (4, 5), (4, 6)] {
                    tets.push([c(0), c(a), c(b), c(7)]);
                }
            }
        }
    }
    let mut m = TetMesh { positions, tets };
    m.orient();
    m
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let n: usize = std::env::var("SUPPLE_BENCH_CELLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(55);
    let mesh = lattice(n);
    let path = std::env::temp_dir().join(format!("supple_mesh_read_{}.msh", std::process::id()));
    if let Err(e) = write_msh(&path, &mesh, MshEncoding::Binary) {
        eprintln!("error: {e}");
        std::process::exit(2);
    }
    let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let mut times = Vec::new();
    let mut parse_times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let loaded = match supple_mesh::load(&path) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        };
        times.push(t.elapsed().as_secs_f64());
        assert_eq!(loaded.tets.tets.len(), mesh.tets.len());
        assert_eq!(loaded.flipped_tets, 0);
        // Parse + validate only, from memory (no disk read).
        let data = std::fs::read(&path).unwrap_or_default();
        let t = Instant::now();
        let again =
            supple_mesh::import::load_bytes("bench.msh", &data, supple_mesh::import::Format::Msh);
        parse_times.push(t.elapsed().as_secs_f64());
        assert!(again.is_ok());
    }
    if std::env::var("SUPPLE_BENCH_KEEP").is_err() {
        let _ = std::fs::remove_file(&path);
    } else {
        eprintln!("kept {}", path.display());
    }
    times.sort_by(|a, b| a.total_cmp(b));
    parse_times.sort_by(|a, b| a.total_cmp(b));
    let median = times[times.len() / 2];
    let mb = bytes as f64 / 1e6;
    let out = serde_json::json!({
        "bench": "mesh_read",
        "format": "gmsh-msh-4.1-binary",
        "tets": mesh.tets.len(),
        "vertices": mesh.positions.len(),
        "bytes": bytes,
        "load_seconds_median": median,
        "load_seconds_best": times[0],
        "mb_per_s": mb / median,
        "mb_per_s_best": mb / times[0],
        "in_memory_mb_per_s": mb / parse_times[parse_times.len() / 2],
        "target_mb_per_s": 100.0,
    });
    println!("{out}");
}
