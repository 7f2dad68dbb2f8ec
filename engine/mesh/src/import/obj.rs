//! Wavefront `.obj` surface reader: `v` positions (the file's own vertex order is kept),
//! `f` faces with `v`, `v/vt`, `v//vn`, `v/vt/vn` and negative (relative) indices, polygons
//! fan-triangulated, and `l` polylines (`v` or `v/vt` indices, at least two). Texture
//! coordinates, normals, groups and materials are ignored; `p` elements are counted as ignored.

use super::{show, Cursor, Raw};
use crate::error::{Location, MeshError, MeshResult};

pub(crate) fn parse(name: &str, data: &[u8]) -> MeshResult<Raw> {
    let mut c = Cursor::new(name, data);
    c.comment = Some(b'#');
    let mut raw = Raw {
        format: "obj".into(),
        surface_only: true,
        ..Default::default()
    };
    // Faces whose positive index pointed past the vertices read so far: checked at the end.
    let mut pending: Vec<(usize, i64)> = Vec::new();
    let mut poly: Vec<u32> = Vec::new();
    while let Some((l, s)) = c.next_line() {
        let mut it = s
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty());
        let Some(kw) = it.next() else { continue };
        match kw {
            b"v" => {
                let mut p = [0.0; 3];
                for (k, slot) in p.iter_mut().enumerate() {
                    let t = it.next().ok_or_else(|| MeshError::Syntax {
                        loc: Location::line(name, l),
                        msg: format!("vertex needs 3 coordinates, has {k}"),
                    })?;
                    let v = super::parse_f64(t).ok_or_else(|| MeshError::Syntax {
                        loc: Location::line(name, l),
                        msg: format!("'{}' is not a valid coordinate", show(t)),
                    })?;
                    if !v.is_finite() {
                        return Err(MeshError::NonFinite {
                            loc: Location::line(name, l),
                            msg: format!("vertex coordinate is '{}'", show(t)),
                        });
                    }
                    *slot = v;
                }
                raw.positions.push(p);
            }
            b"f" | b"fo" => {
                poly.clear();
                let nv = raw.positions.len();
                for t in it {
                    poly.push(index(name, l, t, nv, "face", &mut pending)?);
                }
                if poly.len() < 3 {
                    return Err(MeshError::Syntax {
                        loc: Location::line(name, l),
                        msg: format!("face with {} vertices (at least 3 needed)", poly.len()),
                    });
                }
                for k in 1..poly.len() - 1 {
                    raw.triangles.push([poly[0], poly[k], poly[k + 1]]);
                }
            }
            b"l" => {
                let nv = raw.positions.len();
                let mut line = Vec::new();
                for t in it {
                    line.push(index(name, l, t, nv, "line", &mut pending)?);
                }
                if line.len() < 2 {
                    return Err(MeshError::Syntax {
                        loc: Location::line(name, l),
                        msg: format!("line with {} vertices (at least 2 needed)", line.len()),
                    });
                }
                raw.polylines.push(line);
            }
            b"p" => raw.ignored += 1,
            _ => {}
        }
    }
    let nv = raw.positions.len();
    if let Some(&(l, v)) = pending.iter().find(|&&(_, v)| v as u64 > nv as u64) {
        return Err(MeshError::IndexOutOfRange {
            loc: Location::line(name, l),
            msg: format!("element index {v} but the file has {nv} vertices"),
        });
    }
    if nv == 0 {
        return Err(MeshError::Truncated {
            loc: Location::file(name),
            msg: "no vertices ('v' lines)".into(),
        });
    }
    Ok(raw)
}

/// Resolves one `f` or `l` entry (`v`, `v/vt`, `v//vn`, `v/vt/vn`, negative = relative) on line
/// `l` to a 0-based vertex index; positive indices past the `nv` vertices read so far are
/// recorded in `pending` and checked at the end.
fn index(
    name: &str,
    l: usize,
    t: &[u8],
    nv: usize,
    what: &str,
    pending: &mut Vec<(usize, i64)>,
) -> MeshResult<u32> {
    let first = t.split(|&b| b == b'/').next().unwrap_or_default();
    let v = super::parse_i64(first).ok_or_else(|| MeshError::Syntax {
        loc: Location::line(name, l),
        msg: format!("'{}' is not a valid {what} index", show(t)),
    })?;
    if v > 0 {
        if v as u64 > nv as u64 {
            pending.push((l, v));
        }
        u32::try_from(v - 1).map_err(|_| MeshError::IndexOutOfRange {
            loc: Location::line(name, l),
            msg: format!("{what} index {v} is too large"),
        })
    } else if v < 0 {
        let i = nv as i64 + v;
        if i < 0 {
            return Err(MeshError::IndexOutOfRange {
                loc: Location::line(name, l),
                msg: format!(
                    "relative {what} index {v} points before the first vertex ({nv} vertices so far)"
                ),
            });
        }
        u32::try_from(i).map_err(|_| MeshError::IndexOutOfRange {
            loc: Location::line(name, l),
            msg: format!("{what} index {v} is too large"),
        })
    } else {
        Err(MeshError::IndexOutOfRange {
            loc: Location::line(name, l),
            msg: format!("{what} index 0 (OBJ indices start at 1)"),
        })
    }
}
