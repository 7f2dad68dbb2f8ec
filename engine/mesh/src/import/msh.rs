//! Gmsh `.msh` reader: versions 2.2 and 4.1, ASCII and binary (either endianness). Tets
//! (type 4) are kept, triangles (type 2) become the surface, every other element is counted
//! as ignored. Node tags may be unsorted or sparse.

use super::{cap, show, Cursor, Raw, TagMap};
use crate::error::{Location, MeshError, MeshResult};

/// Number of nodes of a Gmsh element type (`None` for types this reader does not know).
pub(crate) fn nodes_per_element(t: i64) -> Option<usize> {
    Some(match t {
        1 => 2,
        2 => 3,
        3 => 4,
        4 => 4,
        5 => 8,
        6 => 6,
        7 => 5,
        8 => 3,
        9 => 6,
        10 => 9,
        11 => 10,
        12 => 27,
        13 => 18,
        14 => 14,
        15 => 1,
        16 => 8,
        17 => 20,
        18 => 15,
        19 => 13,
        20 => 9,
        21 => 10,
        22 => 12,
        23 => 15,
        24 => 15,
        25 => 21,
        26 => 4,
        27 => 5,
        28 => 6,
        29 => 20,
        30 => 35,
        31 => 56,
        92 => 64,
        93 => 125,
        _ => return None,
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Version {
    V2,
    V41,
}

struct Ctx<'a> {
    c: Cursor<'a>,
    version: Version,
    binary: bool,
    big_endian: bool,
    raw: Raw,
    map: Option<TagMap>,
}

fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
}

impl<'a> Ctx<'a> {
    fn rd_i32(&mut self, what: &str) -> MeshResult<i32> {
        let b = self.c.bytes(4, what)?;
        let a = [b[0], b[1], b[2], b[3]];
        Ok(if self.big_endian {
            i32::from_be_bytes(a)
        } else {
            i32::from_le_bytes(a)
        })
    }
    fn rd_u64(&mut self, what: &str) -> MeshResult<u64> {
        let b = self.c.bytes(8, what)?;
        Ok(self.u64_of(b))
    }
    #[inline]
    fn u64_of(&self, b: &[u8]) -> u64 {
        let a = [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
        if self.big_endian {
            u64::from_be_bytes(a)
        } else {
            u64::from_le_bytes(a)
        }
    }
    #[inline]
    fn f64_of(&self, b: &[u8]) -> f64 {
        f64::from_bits(self.u64_of(b))
    }
    #[inline]
    fn i32_of(&self, b: &[u8]) -> i32 {
        let a = [b[0], b[1], b[2], b[3]];
        if self.big_endian {
            i32::from_be_bytes(a)
        } else {
            i32::from_le_bytes(a)
        }
    }

    /// Next non-blank text line with its number; EOF is a truncation naming `what`.
    fn line(&mut self, what: &str) -> MeshResult<(usize, &'a [u8])> {
        match self.c.next_line() {
            Some(l) => Ok(l),
            None => Err(self
                .c
                .err_trunc(format!("file ends where {what} was expected"))),
        }
    }

    fn loc_line(&self, l: usize) -> Location {
        if self.c.binary {
            self.c.byte_loc()
        } else {
            Location::line(self.c.file, l)
        }
    }

    fn count_line(&mut self, what: &str) -> MeshResult<Vec<u64>> {
        let (l, s) = self.line(what)?;
        let mut v = Vec::new();
        for t in tokens(s).take(8) {
            v.push(super::parse_u64(t).ok_or_else(|| MeshError::Syntax {
                loc: self.loc_line(l),
                msg: format!("'{}' is not a valid count ({what})", show(t)),
            })?);
        }
        Ok(v)
    }

    /// Expects the `$EndX` line that closes a section.
    fn expect_end(&mut self, name: &str) -> MeshResult<()> {
        let end = format!("$End{name}");
        match self.c.next_line() {
            None => Err(self.c.err_trunc(format!("file ends before {end}"))),
            Some((l, s)) => {
                let s = s.trim_ascii();
                if s == end.as_bytes() {
                    Ok(())
                } else {
                    Err(MeshError::CountMismatch {
                        loc: self.loc_line(l),
                        msg: format!("found '{}' where {end} was expected (more records than the section's count)", show(s)),
                    })
                }
            }
        }
    }

    /// Skips an unknown section up to and including its `$EndX` line.
    fn skip_section(&mut self, name: &[u8]) -> MeshResult<()> {
        let mut end = b"$End".to_vec();
        end.extend_from_slice(name);
        let hay = &self.c.d[self.c.pos..];
        let found = hay.windows(end.len()).position(|w| w == end.as_slice());
        match found {
            None => Err(self
                .c
                .err_trunc(format!("section ${} has no {}", show(name), show(&end)))),
            Some(i) => {
                let skipped = &hay[..i + end.len()];
                self.c.line += skipped.iter().filter(|&&b| b == b'\n').count();
                self.c.pos += i + end.len();
                self.c.rest_of_line();
                Ok(())
            }
        }
    }

    fn node_coords(
        &mut self,
        l: usize,
        s: &[u8],
        ncoord: usize,
        what: &str,
    ) -> MeshResult<[f64; 3]> {
        let mut p = [0.0; 3];
        let mut k = 0;
        for t in tokens(s) {
            if k < 3 {
                let v = super::parse_f64(t).ok_or_else(|| MeshError::Syntax {
                    loc: Location::line(self.c.file, l),
                    msg: format!("'{}' is not a valid coordinate", show(t)),
                })?;
                if !v.is_finite() {
                    return Err(MeshError::NonFinite {
                        loc: Location::line(self.c.file, l),
                        msg: format!("{what} coordinate is '{}'", show(t)),
                    });
                }
                p[k] = v;
            }
            k += 1;
        }
        if k != ncoord {
            return Err(MeshError::CountMismatch {
                loc: Location::line(self.c.file, l),
                msg: format!("expected {ncoord} coordinates for {what}, found {k} values (a count in the section header disagrees with the data)"),
            });
        }
        Ok(p)
    }

    fn finish_nodes(&mut self, tags: &[u64]) -> MeshResult<()> {
        let map = TagMap::build(tags).map_err(|t| MeshError::Syntax {
            loc: self.c.loc(),
            msg: format!("node tag {t} occurs twice"),
        })?;
        self.map = Some(map);
        Ok(())
    }

    fn nodes_v2(&mut self) -> MeshResult<()> {
        let counts = self.count_line("the number of nodes")?;
        let n = *counts
            .first()
            .ok_or_else(|| self.c.err_syntax("missing node count"))?;
        let mut tags =
            Vec::with_capacity(cap(n, if self.binary { 28 } else { 8 }, self.c.remaining()));
        self.raw.positions.reserve(tags.capacity());
        if self.binary {
            self.c.fits(n, 28, "nodes")?;
            let data = self.c.bytes(n as usize * 28, "node data")?;
            for (i, r) in data.chunks_exact(28).enumerate() {
                let tag = self.i32_of(&r[0..4]);
                let p = [
                    self.f64_of(&r[4..12]),
                    self.f64_of(&r[12..20]),
                    self.f64_of(&r[20..28]),
                ];
                if !p.iter().all(|v| v.is_finite()) {
                    return Err(MeshError::NonFinite {
                        loc: Location::byte(self.c.file, self.c.pos - data.len() + i * 28),
                        msg: format!("node {tag} is {p:?}"),
                    });
                }
                tags.push(tag as i64 as u64);
                self.raw.positions.push(p);
            }
        } else {
            for i in 0..n {
                let (l, s) = self.line("a node line")?;
                if s.starts_with(b"$") {
                    return Err(MeshError::CountMismatch {
                        loc: Location::line(self.c.file, l),
                        msg: format!(
                            "$Nodes announces {n} nodes but '{}' follows node {i}",
                            show(s.trim_ascii())
                        ),
                    });
                }
                let mut it = tokens(s);
                let t = it.next().unwrap_or_default();
                let tag = super::parse_u64(t).ok_or_else(|| MeshError::Syntax {
                    loc: Location::line(self.c.file, l),
                    msg: format!("'{}' is not a valid node tag", show(t)),
                })?;
                let rest = &s[(t.as_ptr() as usize - s.as_ptr() as usize) + t.len()..];
                let p = self.node_coords(l, rest, 3, &format!("node {tag}"))?;
                tags.push(tag);
                self.raw.positions.push(p);
            }
        }
        self.finish_nodes(&tags)?;
        self.expect_end("Nodes")
    }

    fn nodes_v41(&mut self) -> MeshResult<()> {
        let (nblocks, n) = if self.binary {
            let h = [
                self.rd_u64("$Nodes header")?,
                self.rd_u64("$Nodes header")?,
                self.rd_u64("$Nodes header")?,
                self.rd_u64("$Nodes header")?,
            ];
            (h[0], h[1])
        } else {
            let h = self.count_line("the $Nodes header")?;
            if h.len() != 4 {
                return Err(self.c.err_syntax("the $Nodes header needs 4 numbers"));
            }
            (h[0], h[1])
        };
        let min_rec = if self.binary { 32 } else { 8 };
        self.c
            .fits(nblocks, if self.binary { 20 } else { 8 }, "node blocks")?;
        let mut tags: Vec<u64> = Vec::with_capacity(cap(n, min_rec, self.c.remaining()));
        self.raw.positions.reserve(tags.capacity());
        for _ in 0..nblocks {
            let (dim, nb) = if self.binary {
                let dim = self.rd_i32("node block header")?;
                self.rd_i32("node block header")?;
                let par = self.rd_i32("node block header")?;
                let nb = self.rd_u64("node block header")?;
                (
                    if par != 0 {
                        dim.clamp(0, 3) as usize
                    } else {
                        0
                    },
                    nb,
                )
            } else {
                let h = self.count_line("a node block header")?;
                if h.len() != 4 {
                    return Err(self.c.err_syntax("a node block header needs 4 numbers"));
                }
                (if h[2] != 0 { h[0].min(3) as usize } else { 0 }, h[3])
            };
            let ncoord = 3 + dim;
            if self.binary {
                self.c.fits(nb, 8 + ncoord * 8, "nodes in the block")?;
                let tb = self.c.bytes(nb as usize * 8, "node tags")?;
                tags.extend(tb.chunks_exact(8).map(|b| self.u64_of(b)));
                let start = self.c.pos;
                let cb = self.c.bytes(nb as usize * ncoord * 8, "node coordinates")?;
                for (i, r) in cb.chunks_exact(ncoord * 8).enumerate() {
                    let p = [
                        self.f64_of(&r[0..8]),
                        self.f64_of(&r[8..16]),
                        self.f64_of(&r[16..24]),
                    ];
                    if !(p[0].is_finite() && p[1].is_finite() && p[2].is_finite()) {
                        return Err(MeshError::NonFinite {
                            loc: Location::byte(self.c.file, start + i * ncoord * 8),
                            msg: format!("node coordinates {p:?}"),
                        });
                    }
                    self.raw.positions.push(p);
                }
            } else {
                let first = tags.len();
                for i in 0..nb {
                    let (l, s) = self.line("a node tag")?;
                    let mut it = tokens(s);
                    let t = it.next().unwrap_or_default();
                    if it.next().is_some() || s.starts_with(b"$") {
                        return Err(MeshError::CountMismatch {
                            loc: Location::line(self.c.file, l),
                            msg: format!("node block announces {nb} nodes but line {} is not a node tag (found after {i})", show(s.trim_ascii())),
                        });
                    }
                    tags.push(super::parse_u64(t).ok_or_else(|| MeshError::Syntax {
                        loc: Location::line(self.c.file, l),
                        msg: format!("'{}' is not a valid node tag", show(t)),
                    })?);
                }
                for i in 0..nb {
                    let (l, s) = self.line("node coordinates")?;
                    let tag = tags[first + i as usize];
                    let p = self.node_coords(l, s, ncoord, &format!("node {tag}"))?;
                    self.raw.positions.push(p);
                }
            }
        }
        if tags.len() as u64 != n {
            return Err(self.c.err_count(format!(
                "$Nodes header announces {n} nodes but its blocks hold {}",
                tags.len()
            )));
        }
        self.finish_nodes(&tags)?;
        self.expect_end("Nodes")
    }

    fn map_nodes<const K: usize>(
        &self,
        nodes: &[u64],
        loc: impl Fn() -> Location,
        etag: u64,
    ) -> MeshResult<[u32; K]> {
        let map = self.map.as_ref().ok_or_else(|| MeshError::Syntax {
            loc: loc(),
            msg: "$Elements before $Nodes".into(),
        })?;
        let mut out = [0u32; K];
        for (o, &t) in out.iter_mut().zip(nodes) {
            *o = map.get(t).ok_or_else(|| MeshError::IndexOutOfRange {
                loc: loc(),
                msg: format!(
                    "element {etag} references node tag {t}, which $Nodes does not define"
                ),
            })?;
        }
        Ok(out)
    }

    fn add_element(
        &mut self,
        etype: i64,
        nodes: &[u64],
        loc: impl Fn() -> Location,
        etag: u64,
    ) -> MeshResult<()> {
        match etype {
            4 => {
                let t = self.map_nodes::<4>(nodes, loc, etag)?;
                self.raw.tets.push(t);
            }
            2 => {
                let t = self.map_nodes::<3>(nodes, loc, etag)?;
                self.raw.triangles.push(t);
            }
            _ => self.raw.ignored += 1,
        }
        Ok(())
    }

    fn elements_v2(&mut self) -> MeshResult<()> {
        let counts = self.count_line("the number of elements")?;
        let n = *counts
            .first()
            .ok_or_else(|| self.c.err_syntax("missing element count"))?;
        if self.binary {
            let mut done: u64 = 0;
            let mut nodes64 = Vec::new();
            while done < n {
                let hpos = self.c.pos;
                let etype = self.rd_i32("element block header")? as i64;
                let cnt = self.rd_i32("element block header")?;
                let ntags = self.rd_i32("element block header")?;
                if cnt <= 0 || ntags < 0 || cnt as u64 > n - done {
                    return Err(MeshError::CountMismatch {
                        loc: Location::byte(self.c.file, hpos),
                        msg: format!("element block of {cnt} elements with {ntags} tags does not fit the {n} elements announced ({done} read)"),
                    });
                }
                let nn = nodes_per_element(etype).ok_or_else(|| MeshError::Unsupported {
                    loc: Location::byte(self.c.file, hpos),
                    msg: format!("element type {etype}"),
                })?;
                let rec = (1 + ntags as usize + nn) * 4;
                self.c.fits(cnt as u64, rec, "elements in the block")?;
                let start = self.c.pos;
                let data = self.c.bytes(cnt as usize * rec, "element data")?;
                if etype != 4 && etype != 2 {
                    self.raw.ignored += cnt as usize;
                } else {
                    for (i, r) in data.chunks_exact(rec).enumerate() {
                        let etag = self.i32_of(&r[0..4]) as i64 as u64;
                        nodes64.clear();
                        let off = 4 * (1 + ntags as usize);
                        nodes64.extend(
                            r[off..]
                                .chunks_exact(4)
                                .map(|b| self.i32_of(b) as i64 as u64),
                        );
                        let file = self.c.file;
                        let nd = std::mem::take(&mut nodes64);
                        self.add_element(
                            etype,
                            &nd,
                            || Location::byte(file, start + i * rec),
                            etag,
                        )?;
                        nodes64 = nd;
                    }
                }
                done += cnt as u64;
            }
        } else {
            for i in 0..n {
                let (l, s) = self.line("an element line")?;
                if s.starts_with(b"$") {
                    return Err(MeshError::CountMismatch {
                        loc: Location::line(self.c.file, l),
                        msg: format!(
                            "$Elements announces {n} elements but '{}' follows element {i}",
                            show(s.trim_ascii())
                        ),
                    });
                }
                let mut v = [0u64; 64];
                let mut k = 0;
                for t in tokens(s) {
                    if k == v.len() {
                        return Err(MeshError::Syntax {
                            loc: Location::line(self.c.file, l),
                            msg: "element line too long".into(),
                        });
                    }
                    v[k] = super::parse_u64(t).ok_or_else(|| MeshError::Syntax {
                        loc: Location::line(self.c.file, l),
                        msg: format!("'{}' is not a valid integer", show(t)),
                    })?;
                    k += 1;
                }
                if k < 3 || k < 3 + v[2] as usize {
                    return Err(MeshError::Syntax {
                        loc: Location::line(self.c.file, l),
                        msg: "element line too short".into(),
                    });
                }
                let (etag, etype, ntags) = (v[0], v[1] as i64, v[2] as usize);
                let nodes = &v[3 + ntags..k];
                if let Some(nn) = nodes_per_element(etype) {
                    if nodes.len() != nn {
                        return Err(MeshError::Syntax {
                            loc: Location::line(self.c.file, l),
                            msg: format!(
                                "element {etag} of type {etype} needs {nn} nodes, has {}",
                                nodes.len()
                            ),
                        });
                    }
                }
                let file = self.c.file;
                self.add_element(etype, nodes, || Location::line(file, l), etag)?;
            }
        }
        self.expect_end("Elements")
    }

    fn elements_v41(&mut self) -> MeshResult<()> {
        let (nblocks, n) = if self.binary {
            let h = [
                self.rd_u64("$Elements header")?,
                self.rd_u64("$Elements header")?,
                self.rd_u64("$Elements header")?,
                self.rd_u64("$Elements header")?,
            ];
            (h[0], h[1])
        } else {
            let h = self.count_line("the $Elements header")?;
            if h.len() != 4 {
                return Err(self.c.err_syntax("the $Elements header needs 4 numbers"));
            }
            (h[0], h[1])
        };
        self.c
            .fits(nblocks, if self.binary { 20 } else { 8 }, "element blocks")?;
        let rem = self.c.remaining();
        self.raw
            .tets
            .reserve(cap(n, if self.binary { 40 } else { 10 }, rem));
        let mut total: u64 = 0;
        for _ in 0..nblocks {
            let hpos = self.c.pos;
            let (etype, nb, hline) = if self.binary {
                self.rd_i32("element block header")?;
                self.rd_i32("element block header")?;
                let et = self.rd_i32("element block header")? as i64;
                (et, self.rd_u64("element block header")?, 0)
            } else {
                let l = self.c.line;
                let h = self.count_line("an element block header")?;
                if h.len() != 4 {
                    return Err(self.c.err_syntax("an element block header needs 4 numbers"));
                }
                (h[2] as i64, h[3], l)
            };
            total = total.saturating_add(nb);
            if self.binary {
                let nn = nodes_per_element(etype).ok_or_else(|| MeshError::Unsupported {
                    loc: Location::byte(self.c.file, hpos),
                    msg: format!("element type {etype}"),
                })?;
                let rec = (1 + nn) * 8;
                self.c.fits(nb, rec, "elements in the block")?;
                let start = self.c.pos;
                let data = self.c.bytes(nb as usize * rec, "element data")?;
                match etype {
                    4 => {
                        let map = self.map.as_ref().ok_or_else(|| MeshError::Syntax {
                            loc: Location::byte(self.c.file, hpos),
                            msg: "$Elements before $Nodes".into(),
                        })?;
                        let be = self.big_endian;
                        let rd = |b: &[u8]| {
                            let a = [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
                            if be {
                                u64::from_be_bytes(a)
                            } else {
                                u64::from_le_bytes(a)
                            }
                        };
                        for (i, r) in data.chunks_exact(40).enumerate() {
                            let mut t = [0u32; 4];
                            for k in 0..4 {
                                let tag = rd(&r[8 + 8 * k..16 + 8 * k]);
                                t[k] = match map.get(tag) {
                                    Some(v) => v,
                                    None => {
                                        return Err(MeshError::IndexOutOfRange {
                                            loc: Location::byte(self.c.file, start + i * rec),
                                            msg: format!("element {} references node tag {tag}, which $Nodes does not define", rd(&r[0..8])),
                                        })
                                    }
                                };
                            }
                            self.raw.tets.push(t);
                        }
                    }
                    2 => {
                        let mut nodes = [0u64; 3];
                        for (i, r) in data.chunks_exact(rec).enumerate() {
                            for (k, nd) in nodes.iter_mut().enumerate() {
                                *nd = self.u64_of(&r[8 + 8 * k..16 + 8 * k]);
                            }
                            let etag = self.u64_of(&r[0..8]);
                            let file = self.c.file;
                            self.add_element(
                                2,
                                &nodes,
                                || Location::byte(file, start + i * rec),
                                etag,
                            )?;
                        }
                    }
                    _ => self.raw.ignored += nb as usize,
                }
            } else {
                let nn = nodes_per_element(etype);
                for i in 0..nb {
                    let (l, s) = self.line("an element line")?;
                    let mut v = [0u64; 130];
                    let mut k = 0;
                    for t in tokens(s) {
                        if k == v.len() {
                            return Err(MeshError::Syntax {
                                loc: Location::line(self.c.file, l),
                                msg: "element line too long".into(),
                            });
                        }
                        v[k] = super::parse_u64(t).ok_or_else(|| {
                            if s.starts_with(b"$") {
                                MeshError::CountMismatch {
                                    loc: Location::line(self.c.file, l),
                                    msg: format!("element block (line {hline}) announces {nb} elements but '{}' follows element {i}", show(s.trim_ascii())),
                                }
                            } else {
                                MeshError::Syntax { loc: Location::line(self.c.file, l), msg: format!("'{}' is not a valid integer", show(t)) }
                            }
                        })?;
                        k += 1;
                    }
                    if k < 2 || nn.is_some_and(|nn| nn + 1 != k) {
                        return Err(MeshError::CountMismatch {
                            loc: Location::line(self.c.file, l),
                            msg: format!("element of type {etype} should have {} nodes, the line has {} values", nn.unwrap_or(0), k),
                        });
                    }
                    let file = self.c.file;
                    self.add_element(etype, &v[1..k], || Location::line(file, l), v[0])?;
                }
            }
        }
        if total != n {
            return Err(self.c.err_count(format!(
                "$Elements header announces {n} elements but its blocks hold {total}"
            )));
        }
        self.expect_end("Elements")
    }
}

pub(crate) fn parse(name: &str, data: &[u8]) -> MeshResult<Raw> {
    let mut c = Cursor::new(name, data);
    match c.next_line() {
        Some((_, s)) if s.trim_ascii() == b"$MeshFormat" => {}
        Some((l, s)) => {
            return Err(MeshError::Unsupported {
                loc: Location::line(name, l),
                msg: format!(
                    "not a Gmsh file: starts with '{}' instead of $MeshFormat",
                    show(s.trim_ascii())
                ),
            })
        }
        None => {
            return Err(MeshError::Truncated {
                loc: Location::file(name),
                msg: "empty file".into(),
            })
        }
    }
    let (l, hdr) = c
        .next_line()
        .ok_or_else(|| c.err_trunc("file ends inside $MeshFormat"))?;
    let toks: Vec<&[u8]> = tokens(hdr).collect();
    if toks.len() < 3 {
        return Err(MeshError::Syntax {
            loc: Location::line(name, l),
            msg: "$MeshFormat needs 'version file-type data-size'".into(),
        });
    }
    let version = match toks[0] {
        b"2" | b"2.0" | b"2.1" | b"2.2" => Version::V2,
        b"4.1" => Version::V41,
        v => {
            return Err(MeshError::Unsupported {
                loc: Location::line(name, l),
                msg: format!("MSH version {} (2.2 and 4.1 are supported)", show(v)),
            })
        }
    };
    let binary = match toks[1] {
        b"0" => false,
        b"1" => true,
        t => {
            return Err(MeshError::Syntax {
                loc: Location::line(name, l),
                msg: format!("file-type '{}' (0 or 1 expected)", show(t)),
            })
        }
    };
    if toks[2] != b"8" {
        return Err(MeshError::Unsupported {
            loc: Location::line(name, l),
            msg: format!("data-size {} (only 8 is supported)", show(toks[2])),
        });
    }
    let mut ctx = Ctx {
        c,
        version,
        binary,
        big_endian: false,
        raw: Raw::default(),
        map: None,
    };
    if binary {
        let p = ctx.c.pos;
        let one = ctx.c.bytes(4, "the endianness marker")?;
        ctx.big_endian = match one {
            [1, 0, 0, 0] => false,
            [0, 0, 0, 1] => true,
            _ => {
                return Err(MeshError::Syntax {
                    loc: Location::byte(name, p),
                    msg: "bad binary endianness marker (expected the integer 1)".into(),
                })
            }
        };
        ctx.c.eat_newline();
    }
    ctx.expect_end("MeshFormat")?;
    let mut have_nodes = false;
    let mut have_elements = false;
    while !(have_nodes && have_elements) {
        let Some((l, s)) = ctx.c.next_line() else {
            break;
        };
        let s = s.trim_ascii();
        match s {
            b"$Nodes" => {
                if have_nodes {
                    return Err(MeshError::Unsupported {
                        loc: ctx.loc_line(l),
                        msg: "more than one $Nodes section".into(),
                    });
                }
                match ctx.version {
                    Version::V2 => ctx.nodes_v2()?,
                    Version::V41 => ctx.nodes_v41()?,
                }
                have_nodes = true;
            }
            b"$Elements" => {
                if !have_nodes {
                    return Err(MeshError::Syntax {
                        loc: ctx.loc_line(l),
                        msg: "$Elements before $Nodes".into(),
                    });
                }
                match ctx.version {
                    Version::V2 => ctx.elements_v2()?,
                    Version::V41 => ctx.elements_v41()?,
                }
                have_elements = true;
            }
            _ if s.starts_with(b"$") && !s.starts_with(b"$End") => {
                let name = s[1..].to_vec();
                ctx.skip_section(&name)?;
            }
            _ => {
                return Err(MeshError::Syntax {
                    loc: ctx.loc_line(l),
                    msg: format!("expected a $Section header, found '{}'", show(s)),
                })
            }
        }
    }
    if !have_nodes {
        return Err(MeshError::Truncated {
            loc: Location::file(name),
            msg: "no $Nodes section".into(),
        });
    }
    if !have_elements {
        ctx.raw.warnings.push("no $Elements section".into());
    }
    let v = match version {
        Version::V2 => "2.2",
        Version::V41 => "4.1",
    };
    ctx.raw.format = format!("gmsh-msh-{v}-{}", if binary { "binary" } else { "ascii" });
    Ok(ctx.raw)
}
