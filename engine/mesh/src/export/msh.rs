//! Gmsh MSH 4.1 writer (ASCII and binary) for tet meshes: one volume entity holding all nodes
//! and all 4-node tetrahedra (element type 4); node tag `i + 1` is vertex `i`.

use super::{check_tets, invalid, write_file};
use crate::model::TetMesh;
use std::io::{self, Write};
use std::path::Path;

/// ASCII or binary MSH 4.1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MshEncoding {
    /// Text (shortest round-trip decimals: exact).
    Ascii,
    /// Native little-endian binary (`4.1 1 8`).
    Binary,
}

/// Writes `mesh` as Gmsh MSH 4.1.
pub fn write_msh(path: impl AsRef<Path>, mesh: &TetMesh, encoding: MshEncoding) -> io::Result<()> {
    let path = path.as_ref();
    check_tets(&mesh.tets, mesh.positions.len()).map_err(|e| invalid(path, e))?;
    write_file(path, |w| write_msh_to(w, mesh, encoding))
}

/// Writes MSH 4.1 for `mesh` to any writer.
pub fn write_msh_to(w: &mut impl Write, mesh: &TetMesh, encoding: MshEncoding) -> io::Result<()> {
    check_tets(&mesh.tets, mesh.positions.len())?;
    let (np, ne) = (mesh.positions.len() as u64, mesh.tets.len() as u64);
    let mut lo = [0.0f64; 3];
    let mut hi = [0.0f64; 3];
    if let Some(p0) = mesh.positions.first() {
        lo = *p0;
        hi = *p0;
    }
    for p in &mesh.positions {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    match encoding {
        MshEncoding::Ascii => {
            writeln!(w, "$MeshFormat\n4.1 0 8\n$EndMeshFormat")?;
            writeln!(w, "$Entities\n0 0 0 1")?;
            writeln!(
                w,
                "1 {} {} {} {} {} {} 0 0",
                lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]
            )?;
            writeln!(w, "$EndEntities")?;
            writeln!(w, "$Nodes")?;
            if np == 0 {
                writeln!(w, "0 0 0 0")?;
            } else {
                writeln!(w, "1 {np} 1 {np}")?;
                writeln!(w, "3 1 0 {np}")?;
                for i in 1..=np {
                    writeln!(w, "{i}")?;
                }
                for p in &mesh.positions {
                    writeln!(w, "{} {} {}", p[0], p[1], p[2])?;
                }
            }
            writeln!(w, "$EndNodes")?;
            writeln!(w, "$Elements")?;
            if ne == 0 {
                writeln!(w, "0 0 0 0")?;
            } else {
                writeln!(w, "1 {ne} 1 {ne}")?;
                writeln!(w, "3 1 4 {ne}")?;
                for (i, t) in mesh.tets.iter().enumerate() {
                    writeln!(
                        w,
                        "{} {} {} {} {}",
                        i + 1,
                        t[0] + 1,
                        t[1] + 1,
                        t[2] + 1,
                        t[3] + 1
                    )?;
                }
            }
            writeln!(w, "$EndElements")?;
        }
        MshEncoding::Binary => {
            let mut b: Vec<u8> = Vec::with_capacity(64 * 1024);
            let flush = |w: &mut dyn Write, b: &mut Vec<u8>, force: bool| -> io::Result<()> {
                if force || b.len() >= 60 * 1024 {
                    w.write_all(b)?;
                    b.clear();
                }
                Ok(())
            };
            let sz = |b: &mut Vec<u8>, v: u64| b.extend_from_slice(&v.to_le_bytes());
            let int = |b: &mut Vec<u8>, v: i32| b.extend_from_slice(&v.to_le_bytes());
            b.extend_from_slice(b"$MeshFormat\n4.1 1 8\n");
            int(&mut b, 1);
            b.extend_from_slice(b"\n$EndMeshFormat\n$Entities\n");
            for v in [0u64, 0, 0, 1] {
                sz(&mut b, v);
            }
            int(&mut b, 1);
            for c in lo.iter().chain(hi.iter()) {
                b.extend_from_slice(&c.to_le_bytes());
            }
            sz(&mut b, 0); // physical tags
            sz(&mut b, 0); // bounding surfaces
            b.extend_from_slice(b"\n$EndEntities\n$Nodes\n");
            if np == 0 {
                for v in [0u64, 0, 0, 0] {
                    sz(&mut b, v);
                }
            } else {
                for v in [1u64, np, 1, np] {
                    sz(&mut b, v);
                }
                int(&mut b, 3);
                int(&mut b, 1);
                int(&mut b, 0);
                sz(&mut b, np);
                for i in 1..=np {
                    sz(&mut b, i);
                    flush(w, &mut b, false)?;
                }
                for p in &mesh.positions {
                    for c in p {
                        b.extend_from_slice(&c.to_le_bytes());
                    }
                    flush(w, &mut b, false)?;
                }
            }
            b.extend_from_slice(b"\n$EndNodes\n$Elements\n");
            if ne == 0 {
                for v in [0u64, 0, 0, 0] {
                    sz(&mut b, v);
                }
            } else {
                for v in [1u64, ne, 1, ne] {
                    sz(&mut b, v);
                }
                int(&mut b, 3);
                int(&mut b, 1);
                int(&mut b, 4);
                sz(&mut b, ne);
                for (i, t) in mesh.tets.iter().enumerate() {
                    sz(&mut b, i as u64 + 1);
                    for &v in t {
                        sz(&mut b, v as u64 + 1);
                    }
                    flush(w, &mut b, false)?;
                }
            }
            b.extend_from_slice(b"\n$EndElements\n");
            flush(w, &mut b, true)?;
        }
    }
    Ok(())
}
