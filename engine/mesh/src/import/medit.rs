//! MEDIT `.mesh` (ASCII) reader, as written by Gmsh, TetGen (`-g`) and meshio. Vertices,
//! Triangles and Tetrahedra are read; other sections with a known record size are skipped and
//! counted as ignored elements.

use super::{cap, show, Cursor, Raw};
use crate::error::MeshResult;

/// Tokens per record of sections that are skipped.
fn skipped_section_width(kw: &str) -> Option<usize> {
    Some(match kw {
        "edges" => 3,
        "quadrilaterals" => 5,
        "hexahedra" => 9,
        "prisms" => 7,
        "pyramids" => 6,
        "corners"
        | "ridges"
        | "requiredvertices"
        | "requirededges"
        | "requiredtriangles"
        | "requiredquadrilaterals" => 1,
        "normals" | "tangents" => 3,
        "normalatvertices" | "tangentatvertices" => 2,
        "normalattrianglevertices" => 3,
        "normalatquadrilateralvertices" => 3,
        "identifier" | "geometry" => return None,
        _ => return None,
    })
}

pub(crate) fn parse(name: &str, data: &[u8]) -> MeshResult<Raw> {
    let mut c = Cursor::new(name, data);
    c.comment = Some(b'#');
    let mut raw = Raw {
        format: "medit-mesh".into(),
        ..Default::default()
    };
    let first = c.expect_token("MeshVersionFormatted")?;
    if !first.eq_ignore_ascii_case(b"MeshVersionFormatted") {
        return Err(c.err_unsupported(format!("not a MEDIT file: starts with '{}'", show(first))));
    }
    let ver = c.u64("the mesh version")?;
    if !(1..=4).contains(&ver) {
        return Err(c.err_unsupported(format!("MeshVersionFormatted {ver}")));
    }
    let mut have_vertices = false;
    let mut ended = false;
    while let Some(kw) = c.token() {
        let kw_s = String::from_utf8_lossy(kw).to_ascii_lowercase();
        match kw_s.as_str() {
            "end" => {
                ended = true;
                break;
            }
            "dimension" => {
                let d = c.u64("the dimension")?;
                if d != 3 {
                    return Err(c.err_unsupported(format!(
                        "Dimension {d} (only 3-D meshes are supported)"
                    )));
                }
            }
            "vertices" => {
                if have_vertices {
                    return Err(c.err_unsupported("more than one Vertices section"));
                }
                let n = c.u64("the number of vertices")?;
                raw.positions.reserve(cap(n, 8, c.remaining()));
                for _ in 0..n {
                    let p = [c.f64("x")?, c.f64("y")?, c.f64("z")?];
                    c.i64("a vertex reference")?;
                    raw.positions.push(p);
                }
                have_vertices = true;
            }
            "triangles" | "tetrahedra" => {
                if !have_vertices {
                    return Err(c.err_syntax(format!("{kw_s} before Vertices")));
                }
                let tet = kw_s == "tetrahedra";
                let k = if tet { 4 } else { 3 };
                let n = c.u64("the number of elements")?;
                let nv = raw.positions.len();
                if tet {
                    raw.tets.reserve(cap(n, 10, c.remaining()));
                } else {
                    raw.triangles.reserve(cap(n, 8, c.remaining()));
                }
                for i in 0..n {
                    let mut t = [0u32; 4];
                    for slot in t.iter_mut().take(k) {
                        let v = c.i64("a vertex index")?;
                        *slot = super::index_in(v, 1, nv)
                            .ok_or_else(|| c.err_index(format!("{kw_s} element {} references vertex {v}; valid indices are 1..={nv}", i + 1)))?;
                    }
                    c.i64("an element reference")?;
                    if tet {
                        raw.tets.push(t);
                    } else {
                        raw.triangles.push([t[0], t[1], t[2]]);
                    }
                }
            }
            other => match skipped_section_width(other) {
                Some(w) => {
                    let n = c.u64("a record count")?;
                    c.fits(n, 2 * w, "records")?;
                    for _ in 0..n * w as u64 {
                        let t = c.expect_token("a record value")?;
                        if super::parse_f64(t).is_none() {
                            return Err(c.bad_number(t, "a record value"));
                        }
                    }
                    if !matches!(
                        other,
                        "corners"
                            | "ridges"
                            | "requiredvertices"
                            | "requirededges"
                            | "requiredtriangles"
                            | "requiredquadrilaterals"
                    ) && !other.starts_with("normal")
                        && !other.starts_with("tangent")
                    {
                        raw.ignored += n as usize;
                    }
                }
                None => {
                    return Err(c.err_unsupported(format!("unknown MEDIT keyword '{}'", show(kw))))
                }
            },
        }
    }
    if !ended {
        return Err(c.err_trunc("file ends without 'End'"));
    }
    Ok(raw)
}
