//! Legacy VTK `.vtk` reader: `DATASET UNSTRUCTURED_GRID`, ASCII or (big-endian) BINARY, with
//! both the classic `CELLS n size` layout (versions 2.0-4.2) and the 5.1
//! `OFFSETS`/`CONNECTIVITY` layout (int32 or int64). Tets (type 10) and triangles (type 5) are
//! kept; other cell types are counted as ignored.

use super::{cap, show, Cursor, Raw};
use crate::error::{Location, MeshError, MeshResult};

struct Ctx<'a> {
    c: Cursor<'a>,
    binary: bool,
}

/// Where an integer block starts, to locate its `k`-th value again when it is found bad.
#[derive(Debug, Clone, Copy)]
struct BlockAt {
    pos: usize,
    line: usize,
    width: usize,
}

impl<'a> Ctx<'a> {
    fn keyword(&mut self, want: &str) -> MeshResult<()> {
        let t = self.c.expect_token(want)?;
        if !t.eq_ignore_ascii_case(want.as_bytes()) {
            return Err(self
                .c
                .err_syntax(format!("expected {want}, found '{}'", show(t))));
        }
        Ok(())
    }

    /// Reads `n` integers (ASCII tokens, or big-endian binary of `width` bytes) and where they
    /// start.
    fn ints_at(&mut self, n: u64, width: usize, what: &str) -> MeshResult<(Vec<i64>, BlockAt)> {
        if !self.binary {
            self.c.skip_ws();
        }
        let at = BlockAt {
            pos: self.c.pos,
            line: self.c.line,
            width,
        };
        Ok((self.ints(n, width, what)?, at))
    }

    /// The location of value `k` of the block starting at `at`: its byte offset in binary
    /// files, its line in ASCII ones.
    fn value_loc(&self, at: BlockAt, k: usize) -> Location {
        if self.binary {
            return Location::byte(
                self.c.file,
                at.pos.saturating_add(k.saturating_mul(at.width)),
            );
        }
        let mut c = Cursor::new(self.c.file, self.c.d);
        c.pos = at.pos;
        c.line = at.line;
        for _ in 0..k {
            if c.token().is_none() {
                break;
            }
        }
        c.skip_ws();
        Location::line(self.c.file, c.line)
    }

    /// Reads `n` integers (ASCII tokens, or big-endian binary of `width` bytes).
    fn ints(&mut self, n: u64, width: usize, what: &str) -> MeshResult<Vec<i64>> {
        if self.binary {
            self.c.fits(n, width, what)?;
            let b = self.c.bytes(n as usize * width, what)?;
            Ok(if width == 8 {
                b.chunks_exact(8)
                    .map(|x| i64::from_be_bytes([x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]]))
                    .collect()
            } else {
                b.chunks_exact(4)
                    .map(|x| i32::from_be_bytes([x[0], x[1], x[2], x[3]]) as i64)
                    .collect()
            })
        } else {
            let mut v = Vec::with_capacity(cap(n, 2, self.c.remaining()));
            for _ in 0..n {
                v.push(self.c.i64(what)?);
            }
            Ok(v)
        }
    }

    fn int_width(&self, ty: &[u8]) -> MeshResult<usize> {
        match ty.to_ascii_lowercase().as_slice() {
            b"vtktypeint64" | b"vtktypeuint64" | b"long" | b"unsigned_long" => Ok(8),
            b"vtktypeint32" | b"vtktypeuint32" | b"int" | b"unsigned_int" => Ok(4),
            _ => Err(self
                .c
                .err_unsupported(format!("integer array type '{}'", show(ty)))),
        }
    }

    fn end_binary_block(&mut self) {
        if self.binary {
            self.c.eat_newline();
        }
    }
}

/// Where the cell point ids are in the file: the 5.1 `CONNECTIVITY` block (value `k` is
/// connectivity entry `k`), or the classic `CELLS` list where each cell's ids follow its count.
#[derive(Debug, Clone, Copy)]
enum CellValues {
    Connectivity(BlockAt),
    CountPrefixed(BlockAt),
}

pub(crate) fn parse(name: &str, data: &[u8]) -> MeshResult<Raw> {
    let mut c = Cursor::new(name, data);
    let head = c.rest_of_line();
    let head_s = String::from_utf8_lossy(head);
    let Some(ver) = head_s.trim().strip_prefix("# vtk DataFile Version") else {
        return Err(MeshError::Unsupported {
            loc: Location::line(name, 1),
            msg: "not a legacy VTK file (missing '# vtk DataFile Version' header)".into(),
        });
    };
    let ver = ver.trim().to_string();
    c.rest_of_line(); // title
    let enc = c.expect_token("ASCII or BINARY")?;
    let binary = if enc.eq_ignore_ascii_case(b"ASCII") {
        false
    } else if enc.eq_ignore_ascii_case(b"BINARY") {
        true
    } else {
        return Err(c.err_syntax(format!("expected ASCII or BINARY, found '{}'", show(enc))));
    };
    let mut x = Ctx { c, binary };
    x.keyword("DATASET")?;
    let ds = x.c.expect_token("the dataset type")?;
    if !ds.eq_ignore_ascii_case(b"UNSTRUCTURED_GRID") {
        return Err(x.c.err_unsupported(format!(
            "DATASET {} (only UNSTRUCTURED_GRID is supported)",
            show(ds)
        )));
    }
    let mut raw = Raw::default();
    let mut have_points = false;
    // Offsets, connectivity, the CELLS line, and where the values are (see `CellValues`).
    let mut cells: Option<(Vec<i64>, Vec<i64>, Location, CellValues)> = None;
    let mut new_layout = false;
    let mut types: Option<Vec<i64>> = None;
    while let Some(kw) = x.c.token() {
        let kw_u = kw.to_ascii_uppercase();
        match kw_u.as_slice() {
            b"POINTS" => {
                let n = x.c.u64("the number of points")?;
                let ty =
                    x.c.expect_token("the point data type")?
                        .to_ascii_lowercase();
                x.c.rest_of_line();
                if x.binary {
                    let w = match ty.as_slice() {
                        b"float" => 4,
                        b"double" => 8,
                        _ => {
                            return Err(x
                                .c
                                .err_unsupported(format!("binary POINTS of type '{}'", show(&ty))))
                        }
                    };
                    x.c.fits(n, 3 * w, "points")?;
                    let start = x.c.pos;
                    let b = x.c.bytes(n as usize * 3 * w, "point data")?;
                    raw.positions.reserve(n as usize);
                    for (i, r) in b.chunks_exact(3 * w).enumerate() {
                        let mut p = [0.0; 3];
                        for (k, v) in p.iter_mut().enumerate() {
                            let s = &r[k * w..(k + 1) * w];
                            *v = if w == 8 {
                                f64::from_be_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]])
                            } else {
                                f32::from_be_bytes([s[0], s[1], s[2], s[3]]) as f64
                            };
                        }
                        if !p.iter().all(|v| v.is_finite()) {
                            return Err(MeshError::NonFinite {
                                loc: Location::byte(name, start + i * 3 * w),
                                msg: format!("point {i} is {p:?}"),
                            });
                        }
                        raw.positions.push(p);
                    }
                    x.end_binary_block();
                } else {
                    raw.positions.reserve(cap(n, 6, x.c.remaining()));
                    for _ in 0..n {
                        raw.positions
                            .push([x.c.f64("x")?, x.c.f64("y")?, x.c.f64("z")?]);
                    }
                }
                have_points = true;
            }
            b"METADATA" => {
                // Skip to the next blank line.
                x.c.rest_of_line();
                loop {
                    if x.c.at_end() {
                        break;
                    }
                    let l = x.c.rest_of_line();
                    if l.trim_ascii().is_empty() {
                        break;
                    }
                }
            }
            b"CELLS" => {
                let line = x.c.loc();
                let a = x.c.u64("the number of cells")?;
                let b = x.c.u64("the cell list size")?;
                x.c.rest_of_line();
                let nxt = x.c.peek_token();
                if nxt.is_some_and(|t| t.eq_ignore_ascii_case(b"OFFSETS")) {
                    new_layout = true;
                    x.c.token();
                    let ty = x.c.expect_token("the offsets type")?;
                    let w = x.int_width(ty)?;
                    x.c.rest_of_line();
                    let offsets = x.ints(a, w, "an offset")?;
                    x.end_binary_block();
                    let t = x.c.expect_token("CONNECTIVITY")?;
                    if !t.eq_ignore_ascii_case(b"CONNECTIVITY") {
                        return Err(x.c.bad_number(t, "CONNECTIVITY"));
                    }
                    let ty = x.c.expect_token("the connectivity type")?;
                    let w = x.int_width(ty)?;
                    x.c.rest_of_line();
                    let (conn, at) = x.ints_at(b, w, "a connectivity index")?;
                    x.end_binary_block();
                    cells = Some((offsets, conn, line.clone(), CellValues::Connectivity(at)));
                } else {
                    // Classic layout: `a` records "npts i0 i1 ..." totalling `b` integers.
                    let (list, at) = x.ints_at(b, 4, "a cell list value")?;
                    x.end_binary_block();
                    let mut offsets = Vec::with_capacity(cap(a, 1, list.len()) + 1);
                    let mut conn = Vec::with_capacity(list.len());
                    offsets.push(0);
                    let mut k = 0usize;
                    for i in 0..a {
                        let Some(&np) = list.get(k) else {
                            return Err(MeshError::CountMismatch {
                                loc: line.clone(),
                                msg: format!("CELLS announces {a} cells in {b} integers but the list ends after {i} cells"),
                            });
                        };
                        if np < 0 || np as u64 > (list.len() - k - 1) as u64 {
                            return Err(MeshError::CountMismatch {
                                loc: line.clone(),
                                msg: format!("cell {i} claims {np} points but the CELLS list (size {b}) has only {} values left", list.len() - k - 1),
                            });
                        }
                        conn.extend_from_slice(&list[k + 1..k + 1 + np as usize]);
                        k += 1 + np as usize;
                        offsets.push(conn.len() as i64);
                    }
                    if k != list.len() {
                        return Err(MeshError::CountMismatch {
                            loc: line.clone(),
                            msg: format!("CELLS size {b} but the {a} cells use {k} integers"),
                        });
                    }
                    cells = Some((offsets, conn, line.clone(), CellValues::CountPrefixed(at)));
                }
            }
            b"CELL_TYPES" => {
                let n = x.c.u64("the number of cell types")?;
                x.c.rest_of_line();
                types = Some(x.ints(n, 4, "a cell type")?);
                x.end_binary_block();
            }
            b"CELL_DATA" | b"POINT_DATA" | b"FIELD" => break,
            _ => return Err(x.c.err_syntax(format!("unexpected keyword '{}'", show(kw)))),
        }
    }
    if !have_points {
        return Err(x.c.err_trunc("no POINTS section"));
    }
    let np = raw.positions.len();
    if let Some((offsets, conn, line, values)) = cells {
        let loc = line;
        let ncells = offsets.len().saturating_sub(1);
        let Some(types) = types else {
            return Err(MeshError::Truncated {
                loc: loc.clone(),
                msg: "CELLS without CELL_TYPES".into(),
            });
        };
        if types.len() != ncells {
            return Err(MeshError::CountMismatch {
                loc: loc.clone(),
                msg: format!("{ncells} cells but {} cell types", types.len()),
            });
        }
        if offsets.first() != Some(&0)
            || offsets.last().copied() != Some(conn.len() as i64)
            || offsets.windows(2).any(|w| w[1] < w[0])
        {
            return Err(MeshError::CountMismatch {
                loc: loc.clone(),
                msg: format!(
                    "cell offsets are inconsistent with the {} connectivity entries",
                    conn.len()
                ),
            });
        }
        for (i, ty) in types.iter().enumerate() {
            let (s, e) = (offsets[i] as usize, offsets[i + 1] as usize);
            let pts = &conn[s..e];
            let want = match ty {
                10 => 4,
                5 => 3,
                _ => {
                    raw.ignored += 1;
                    continue;
                }
            };
            if pts.len() != want {
                return Err(MeshError::Syntax {
                    loc: loc.clone(),
                    msg: format!(
                        "cell {i} of type {ty} has {} points, {want} expected",
                        pts.len()
                    ),
                });
            }
            let mut t = [0u32; 4];
            for (j, (slot, &v)) in t.iter_mut().zip(pts).enumerate() {
                *slot = match super::index_in(v, 0, np) {
                    Some(s) => s,
                    None => {
                        // Where value j of cell i is in the file.
                        let (at, k) = match values {
                            CellValues::Connectivity(at) => (at, s + j),
                            CellValues::CountPrefixed(at) => (at, s + i + 1 + j),
                        };
                        return Err(MeshError::IndexOutOfRange {
                            loc: x.value_loc(at, k),
                            msg: format!(
                                "cell {i} references point {v}; there are {np} points (ids 0..={}){}",
                                np.saturating_sub(1),
                                super::one_based_note(&conn, np)
                            ),
                        });
                    }
                };
            }
            if want == 4 {
                raw.tets.push(t);
            } else {
                raw.triangles.push([t[0], t[1], t[2]]);
            }
        }
    }
    let ver_s = if new_layout { "5.1".to_string() } else { ver };
    raw.format = format!("vtk-{}-{}", ver_s, if binary { "binary" } else { "ascii" });
    Ok(raw)
}
