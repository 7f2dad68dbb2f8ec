//! VTK XML UnstructuredGrid (`.vtu`) writer for tet meshes (cell type 10, `VTK_TETRA`).

use super::{check_tets, invalid, write_file};
use crate::model::TetMesh;
use std::io::{self, Write};
use std::path::Path;

/// How the `.vtu` data arrays are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VtuEncoding {
    /// Inline ASCII numbers (shortest round-trip decimals: exact).
    Ascii,
    /// One `AppendedData` block of raw little-endian binary with `UInt64` size headers (compact,
    /// exact; what ParaView writes by default without compression).
    Raw,
}

/// Writes `mesh` as `.vtu` with Float64 points and Int64 connectivity/offsets.
pub fn write_vtu(path: impl AsRef<Path>, mesh: &TetMesh, encoding: VtuEncoding) -> io::Result<()> {
    let path = path.as_ref();
    check_tets(&mesh.tets, mesh.positions.len()).map_err(|e| invalid(path, e))?;
    write_file(path, |w| write_vtu_to(w, mesh, encoding))
}

/// Writes `.vtu` XML for `mesh` to any writer.
pub fn write_vtu_to(w: &mut impl Write, mesh: &TetMesh, encoding: VtuEncoding) -> io::Result<()> {
    check_tets(&mesh.tets, mesh.positions.len())?;
    let (np, nc) = (mesh.positions.len(), mesh.tets.len());
    writeln!(w, "<?xml version=\"1.0\"?>")?;
    writeln!(w, "<!-- written by Supple -->")?;
    writeln!(w, "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">")?;
    writeln!(w, "  <UnstructuredGrid>")?;
    writeln!(
        w,
        "    <Piece NumberOfPoints=\"{np}\" NumberOfCells=\"{nc}\">"
    )?;
    match encoding {
        VtuEncoding::Ascii => {
            writeln!(w, "      <Points>")?;
            writeln!(w, "        <DataArray type=\"Float64\" Name=\"Points\" NumberOfComponents=\"3\" format=\"ascii\">")?;
            for p in &mesh.positions {
                writeln!(w, "          {} {} {}", p[0], p[1], p[2])?;
            }
            writeln!(w, "        </DataArray>")?;
            writeln!(w, "      </Points>")?;
            writeln!(w, "      <Cells>")?;
            writeln!(
                w,
                "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">"
            )?;
            for t in &mesh.tets {
                writeln!(w, "          {} {} {} {}", t[0], t[1], t[2], t[3])?;
            }
            writeln!(w, "        </DataArray>")?;
            writeln!(
                w,
                "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">"
            )?;
            for (i, _) in mesh.tets.iter().enumerate() {
                writeln!(w, "          {}", 4 * (i + 1))?;
            }
            writeln!(w, "        </DataArray>")?;
            writeln!(
                w,
                "        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">"
            )?;
            for _ in &mesh.tets {
                writeln!(w, "          10")?;
            }
            writeln!(w, "        </DataArray>")?;
            writeln!(w, "      </Cells>")?;
            writeln!(w, "    </Piece>")?;
            writeln!(w, "  </UnstructuredGrid>")?;
        }
        VtuEncoding::Raw => {
            let sizes = [24 * np as u64, 32 * nc as u64, 8 * nc as u64, nc as u64];
            let mut offs = [0u64; 4];
            for i in 1..4 {
                offs[i] = offs[i - 1] + 8 + sizes[i - 1];
            }
            writeln!(w, "      <Points>")?;
            writeln!(
                w,
                "        <DataArray type=\"Float64\" Name=\"Points\" NumberOfComponents=\"3\" format=\"appended\" offset=\"{}\"/>",
                offs[0]
            )?;
            writeln!(w, "      </Points>")?;
            writeln!(w, "      <Cells>")?;
            writeln!(w, "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"appended\" offset=\"{}\"/>", offs[1])?;
            writeln!(w, "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"appended\" offset=\"{}\"/>", offs[2])?;
            writeln!(w, "        <DataArray type=\"UInt8\" Name=\"types\" format=\"appended\" offset=\"{}\"/>", offs[3])?;
            writeln!(w, "      </Cells>")?;
            writeln!(w, "    </Piece>")?;
            writeln!(w, "  </UnstructuredGrid>")?;
            writeln!(w, "  <AppendedData encoding=\"raw\">")?;
            w.write_all(b"   _")?;
            let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
            let flush = |w: &mut dyn Write, buf: &mut Vec<u8>, force: bool| -> io::Result<()> {
                if force || buf.len() >= 60 * 1024 {
                    w.write_all(buf)?;
                    buf.clear();
                }
                Ok(())
            };
            buf.extend_from_slice(&sizes[0].to_le_bytes());
            for p in &mesh.positions {
                for c in p {
                    buf.extend_from_slice(&c.to_le_bytes());
                }
                flush(w, &mut buf, false)?;
            }
            buf.extend_from_slice(&sizes[1].to_le_bytes());
            for t in &mesh.tets {
                for &v in t {
                    buf.extend_from_slice(&(v as i64).to_le_bytes());
                }
                flush(w, &mut buf, false)?;
            }
            buf.extend_from_slice(&sizes[2].to_le_bytes());
            for i in 0..nc {
                buf.extend_from_slice(&(4 * (i as i64 + 1)).to_le_bytes());
                flush(w, &mut buf, false)?;
            }
            buf.extend_from_slice(&sizes[3].to_le_bytes());
            for _ in 0..nc {
                buf.push(10);
                flush(w, &mut buf, false)?;
            }
            flush(w, &mut buf, true)?;
            writeln!(w)?;
            writeln!(w, "  </AppendedData>")?;
        }
    }
    writeln!(w, "</VTKFile>")
}
