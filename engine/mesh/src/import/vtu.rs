//! VTK XML `.vtu` (UnstructuredGrid) reader: `ascii`, inline `binary` (base64) and `appended`
//! (base64 or raw) arrays, UInt32/UInt64 headers, uncompressed or `vtkZLibDataCompressor`.
//!
//! Decompression is bounded: the declared uncompressed size must equal what the piece's
//! `NumberOfPoints`/`NumberOfCells` require, each block is inflated through a size-limited
//! reader, and the total inflated bytes per file are capped relative to the file size, so a
//! zlib bomb is rejected before it can allocate.

use super::{cap, show, Raw};
use crate::error::{Location, MeshError, MeshResult};
use base64::Engine;
use quick_xml::events::{BytesStart, Event};
use std::borrow::Cow;
use std::io::Read;

#[derive(Debug, Clone, Default)]
struct Array {
    name: String,
    ty: String,
    format: String,
    offset: Option<u64>,
    ncomp: u64,
    /// Byte ranges of the inline text content in the file (direct children only).
    text: Vec<(usize, usize)>,
    line: usize,
}

struct Ctx<'a> {
    name: &'a str,
    data: &'a [u8],
    header_u64: bool,
    big_endian: bool,
    compressed: bool,
    /// Start of the appended data (just after `_`) and its end.
    appended: Option<(usize, usize, bool)>,
    /// Offsets of all appended arrays (sorted), to delimit base64 segments.
    offsets: Vec<u64>,
    /// Remaining bytes that decompression may produce for this file.
    inflate_budget: u64,
}

fn line_of(data: &[u8], pos: usize) -> usize {
    1 + data[..pos.min(data.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).rposition(|w| w == needle)
}

fn type_size(ty: &str) -> Option<usize> {
    Some(match ty {
        "Int8" | "UInt8" => 1,
        "Int16" | "UInt16" => 2,
        "Int32" | "UInt32" | "Float32" => 4,
        "Int64" | "UInt64" | "Float64" => 8,
        _ => return None,
    })
}

/// Decodes base64 that may be several separately padded chunks concatenated (VTK encodes the
/// header and the data separately).
fn b64_decode(text: &[u8]) -> Option<Vec<u8>> {
    let clean: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let mut out = Vec::with_capacity(clean.len() / 4 * 3 + 3);
    let mut start = 0;
    let mut i = 0;
    while i < clean.len() {
        if clean[i] == b'=' {
            while i < clean.len() && clean[i] == b'=' {
                i += 1;
            }
            base64::engine::general_purpose::STANDARD
                .decode_vec(&clean[start..i], &mut out)
                .ok()?;
            start = i;
        } else {
            i += 1;
        }
    }
    if start < clean.len() {
        base64::engine::general_purpose::STANDARD
            .decode_vec(&clean[start..], &mut out)
            .ok()?;
    }
    Some(out)
}

impl<'a> Ctx<'a> {
    fn err_at(&self, a: &Array, kind: fn(Location, String) -> MeshError, msg: String) -> MeshError {
        kind(Location::line(self.name, a.line), msg)
    }

    fn word(&self, b: &[u8]) -> u64 {
        if self.header_u64 {
            let a = [b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]];
            if self.big_endian {
                u64::from_be_bytes(a)
            } else {
                u64::from_le_bytes(a)
            }
        } else {
            let a = [b[0], b[1], b[2], b[3]];
            (if self.big_endian {
                u32::from_be_bytes(a)
            } else {
                u32::from_le_bytes(a)
            }) as u64
        }
    }

    /// Turns header+payload bytes into exactly `expected` bytes of array data.
    fn unpack<'b>(&mut self, a: &Array, buf: &'b [u8], expected: u64) -> MeshResult<Cow<'b, [u8]>> {
        let w = if self.header_u64 { 8 } else { 4 };
        let trunc = |m: String| MeshError::Truncated {
            loc: Location::line(self.name, a.line),
            msg: m,
        };
        let count = |m: String| MeshError::CountMismatch {
            loc: Location::line(self.name, a.line),
            msg: m,
        };
        if !self.compressed {
            if buf.len() < w {
                return Err(trunc(format!("array '{}' has no size header", a.name)));
            }
            let n = self.word(&buf[..w]);
            if n != expected {
                return Err(count(format!(
                    "array '{}' holds {n} bytes but the piece needs {expected}",
                    a.name
                )));
            }
            if (buf.len() - w) as u64 <= n.saturating_sub(1) && n > 0 {
                return Err(trunc(format!(
                    "array '{}' needs {n} bytes but only {} remain",
                    a.name,
                    buf.len() - w
                )));
            }
            return Ok(Cow::Borrowed(&buf[w..w + n as usize]));
        }
        if buf.len() < 3 * w {
            return Err(trunc(format!(
                "array '{}' has no compression header",
                a.name
            )));
        }
        let nb = self.word(&buf[..w]);
        let bs = self.word(&buf[w..2 * w]);
        let lbs = self.word(&buf[2 * w..3 * w]);
        let hdr_len = nb
            .checked_mul(w as u64)
            .and_then(|x| x.checked_add(3 * w as u64))
            .filter(|&h| h <= buf.len() as u64);
        let Some(hdr_len) = hdr_len else {
            return Err(trunc(format!(
                "array '{}' declares {nb} compressed blocks that cannot fit in the file",
                a.name
            )));
        };
        let total = if nb == 0 {
            0
        } else {
            let last = if lbs == 0 { bs } else { lbs };
            (nb - 1)
                .checked_mul(bs)
                .and_then(|x| x.checked_add(last))
                .unwrap_or(u64::MAX)
        };
        if total != expected {
            return Err(count(format!(
                "array '{}' decompresses to {total} bytes ({nb} blocks of {bs}) but the piece needs {expected}",
                a.name
            )));
        }
        if total > self.inflate_budget {
            return Err(MeshError::Unsupported {
                loc: Location::line(self.name, a.line),
                msg: format!("array '{}' would inflate to {total} bytes, far more than the file size justifies", a.name),
            });
        }
        self.inflate_budget -= total;
        let mut out = Vec::with_capacity(total as usize);
        let mut pos = hdr_len as usize;
        for k in 0..nb as usize {
            let cs = self.word(&buf[3 * w + k * w..3 * w + (k + 1) * w]);
            let want = if k + 1 == nb as usize && lbs != 0 {
                lbs
            } else {
                bs
            };
            if cs > (buf.len() - pos) as u64 {
                return Err(trunc(format!(
                    "compressed block {k} of array '{}' needs {cs} bytes, {} remain",
                    a.name,
                    buf.len() - pos
                )));
            }
            let block = &buf[pos..pos + cs as usize];
            pos += cs as usize;
            let before = out.len();
            let mut dec = flate2::read::ZlibDecoder::new(block).take(want + 1);
            dec.read_to_end(&mut out).map_err(|e| MeshError::Syntax {
                loc: Location::line(self.name, a.line),
                msg: format!("zlib block {k} of array '{}' is corrupt: {e}", a.name),
            })?;
            if (out.len() - before) as u64 != want {
                return Err(count(format!(
                    "zlib block {k} of array '{}' inflates to {} bytes, {want} declared",
                    a.name,
                    out.len() - before
                )));
            }
        }
        Ok(Cow::Owned(out))
    }

    /// The raw bytes (exactly `expected`) of a binary or appended array.
    fn binary_bytes(&mut self, a: &Array, expected: u64) -> MeshResult<Vec<u8>> {
        match a.format.as_str() {
            "binary" => {
                let text: Vec<u8> = a
                    .text
                    .iter()
                    .flat_map(|&(s, e)| self.data[s..e].iter().copied())
                    .collect();
                let dec = b64_decode(&text).ok_or_else(|| {
                    self.err_at(
                        a,
                        |loc, msg| MeshError::Syntax { loc, msg },
                        format!("array '{}' is not valid base64", a.name),
                    )
                })?;
                Ok(self.unpack(a, &dec, expected)?.into_owned())
            }
            "appended" => {
                let Some((start, end, raw)) = self.appended else {
                    return Err(self.err_at(
                        a,
                        |loc, msg| MeshError::Syntax { loc, msg },
                        format!(
                            "array '{}' is appended but there is no AppendedData",
                            a.name
                        ),
                    ));
                };
                let off = a.offset.ok_or_else(|| {
                    self.err_at(
                        a,
                        |loc, msg| MeshError::Syntax { loc, msg },
                        format!("appended array '{}' has no offset", a.name),
                    )
                })?;
                if off > (end - start) as u64 {
                    return Err(self.err_at(
                        a,
                        |loc, msg| MeshError::Truncated { loc, msg },
                        format!(
                            "array '{}' starts at offset {off}, past the end of the appended data",
                            a.name
                        ),
                    ));
                }
                let s = start + off as usize;
                if raw {
                    let buf = &self.data[s..end];
                    Ok(self.unpack(a, buf, expected)?.into_owned())
                } else {
                    let next = self
                        .offsets
                        .iter()
                        .copied()
                        .find(|&o| o > off)
                        .map(|o| (start + o as usize).min(end))
                        .unwrap_or(end);
                    let text = &self.data[s..next];
                    let dec = b64_decode(text).ok_or_else(|| {
                        self.err_at(
                            a,
                            |loc, msg| MeshError::Syntax { loc, msg },
                            format!("array '{}' is not valid base64", a.name),
                        )
                    })?;
                    Ok(self.unpack(a, &dec, expected)?.into_owned())
                }
            }
            f => Err(self.err_at(
                a,
                |loc, msg| MeshError::Unsupported { loc, msg },
                format!("DataArray format '{f}'"),
            )),
        }
    }

    fn floats(&mut self, a: &Array, n: u64) -> MeshResult<Vec<f64>> {
        let sz = type_size(&a.ty)
            .filter(|_| a.ty.starts_with("Float"))
            .ok_or_else(|| {
                self.err_at(
                    a,
                    |loc, msg| MeshError::Unsupported { loc, msg },
                    format!("Points of type '{}'", a.ty),
                )
            })?;
        let mut out = Vec::with_capacity(cap(n, 2, self.data.len()));
        if a.format == "ascii" {
            self.ascii_values(a, n, super::parse_f64, &mut out)?;
        } else {
            let expected = n.saturating_mul(sz as u64);
            let b = self.binary_bytes(a, expected)?;
            let be = self.big_endian;
            out.extend(b.chunks_exact(sz).map(|x| {
                if sz == 8 {
                    let a8 = [x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]];
                    if be {
                        f64::from_be_bytes(a8)
                    } else {
                        f64::from_le_bytes(a8)
                    }
                } else {
                    let a4 = [x[0], x[1], x[2], x[3]];
                    (if be {
                        f32::from_be_bytes(a4)
                    } else {
                        f32::from_le_bytes(a4)
                    }) as f64
                }
            }));
        }
        if let Some(i) = out.iter().position(|v| !v.is_finite()) {
            return Err(self.err_at(
                a,
                |loc, msg| MeshError::NonFinite { loc, msg },
                format!("point {} has coordinate {}", i / 3, out[i]),
            ));
        }
        Ok(out)
    }

    fn ints(&mut self, a: &Array, n: u64) -> MeshResult<Vec<i64>> {
        let sz = type_size(&a.ty)
            .filter(|_| a.ty.contains("Int"))
            .ok_or_else(|| {
                self.err_at(
                    a,
                    |loc, msg| MeshError::Unsupported { loc, msg },
                    format!("integer array '{}' of type '{}'", a.name, a.ty),
                )
            })?;
        let signed = !a.ty.starts_with('U');
        let mut out = Vec::with_capacity(cap(n, 2, self.data.len()));
        if a.format == "ascii" {
            self.ascii_values(a, n, super::parse_i64, &mut out)?;
        } else {
            let expected = n.saturating_mul(sz as u64);
            let b = self.binary_bytes(a, expected)?;
            let be = self.big_endian;
            out.extend(b.chunks_exact(sz).map(|x| {
                let mut a8 = [0u8; 8];
                if be {
                    a8[8 - sz..].copy_from_slice(x);
                    a8.reverse();
                } else {
                    a8[..sz].copy_from_slice(x);
                }
                let u = u64::from_le_bytes(a8);
                if signed && sz < 8 {
                    let shift = 64 - 8 * sz as u32;
                    ((u << shift) as i64) >> shift
                } else {
                    u as i64
                }
            }));
        }
        Ok(out)
    }

    /// The line of value `k` of an ASCII array; the `DataArray`'s line for encoded arrays.
    fn value_line(&self, a: &Array, k: usize) -> usize {
        if a.format != "ascii" {
            return a.line;
        }
        let mut count = 0usize;
        for &(s, e) in &a.text {
            let mut line = line_of(self.data, s);
            for tok in self.data[s..e].split_inclusive(|b| b.is_ascii_whitespace()) {
                if !tok.trim_ascii().is_empty() {
                    if count == k {
                        return line;
                    }
                    count += 1;
                }
                if tok.last() == Some(&b'\n') {
                    line += 1;
                }
            }
        }
        a.line
    }

    fn ascii_values<T>(
        &self,
        a: &Array,
        n: u64,
        parse: impl Fn(&[u8]) -> Option<T>,
        out: &mut Vec<T>,
    ) -> MeshResult<()> {
        let mut count = 0u64;
        for &(s, e) in &a.text {
            let mut line = line_of(self.data, s);
            for tok in self.data[s..e].split_inclusive(|b| b.is_ascii_whitespace()) {
                if tok.last() == Some(&b'\n') {
                    line += 1;
                }
                let t = tok.trim_ascii();
                if t.is_empty() {
                    continue;
                }
                count += 1;
                if count > n {
                    continue;
                }
                out.push(parse(t).ok_or_else(|| MeshError::Syntax {
                    loc: Location::line(self.name, line),
                    msg: format!("'{}' is not a valid number in array '{}'", show(t), a.name),
                })?);
            }
        }
        if count != n {
            return Err(MeshError::CountMismatch {
                loc: Location::line(self.name, a.line),
                msg: format!(
                    "array '{}' has {count} values but the piece needs {n}",
                    a.name
                ),
            });
        }
        Ok(())
    }
}

fn attr(e: &BytesStart, key: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
}

pub(crate) fn parse(name: &str, data: &[u8]) -> MeshResult<Raw> {
    // Split off the appended data: raw appended binary is not XML.
    let (xml_end, appended) = match find(data, b"<AppendedData") {
        Some(i) => {
            let tag_end = data[i..].iter().position(|&b| b == b'>').map(|p| i + p + 1);
            let Some(tag_end) = tag_end else {
                return Err(MeshError::Truncated {
                    loc: Location::line(name, line_of(data, i)),
                    msg: "unterminated <AppendedData> tag".into(),
                });
            };
            let tag = &data[i..tag_end];
            let raw = find(tag, b"\"raw\"").is_some() || find(tag, b"'raw'").is_some();
            let Some(us) = data[tag_end..].iter().position(|&b| b == b'_') else {
                return Err(MeshError::Truncated {
                    loc: Location::line(name, line_of(data, i)),
                    msg: "AppendedData without the '_' marker".into(),
                });
            };
            let start = tag_end + us + 1;
            let Some(end) = rfind(&data[start..], b"</AppendedData>").map(|e| start + e) else {
                return Err(MeshError::Truncated {
                    loc: Location::byte(name, data.len()),
                    msg: "file ends inside the appended data (no </AppendedData>)".into(),
                });
            };
            // Trailing whitespace before the closing tag is not data (base64 only).
            let end = if raw {
                end
            } else {
                start + data[start..end].trim_ascii_end().len()
            };
            (i, Some((start, end, raw)))
        }
        None => (data.len(), None),
    };
    let xml = &data[..xml_end];
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut piece: Option<(u64, u64, usize)> = None;
    let mut header_u64 = false;
    let mut big_endian = false;
    let mut compressed = false;
    let mut saw_vtkfile = false;
    let mut section = String::new();
    let mut arrays: Vec<(String, Array)> = Vec::new();
    let mut open: Option<Array> = None;
    let mut depth_in_array = 0usize;
    loop {
        let pos = reader.buffer_position() as usize;
        let ev = match reader.read_event() {
            Ok(ev) => ev,
            Err(e) => {
                return Err(MeshError::Syntax {
                    loc: Location::line(name, line_of(data, pos)),
                    msg: format!("XML error: {e}").replace('\n', " "),
                });
            }
        };
        let after = reader.buffer_position() as usize;
        match ev {
            Event::Eof => break,
            Event::Start(ref e) | Event::Empty(ref e) => {
                let empty = matches!(ev, Event::Empty(_));
                let tag = e.name().as_ref().to_vec();
                if open.is_some() {
                    if !empty {
                        depth_in_array += 1;
                    }
                    continue;
                }
                match tag.as_slice() {
                    b"VTKFile" => {
                        saw_vtkfile = true;
                        let ty = attr(e, b"type").unwrap_or_default();
                        if ty != "UnstructuredGrid" {
                            return Err(MeshError::Unsupported {
                                loc: Location::line(name, line_of(data, pos)),
                                msg: format!("VTKFile type '{ty}' (only UnstructuredGrid)"),
                            });
                        }
                        header_u64 = attr(e, b"header_type").as_deref() == Some("UInt64");
                        big_endian = attr(e, b"byte_order").as_deref() == Some("BigEndian");
                        match attr(e, b"compressor").as_deref() {
                            None | Some("") => {}
                            Some("vtkZLibDataCompressor") => compressed = true,
                            Some(c) => {
                                return Err(MeshError::Unsupported {
                                    loc: Location::line(name, line_of(data, pos)),
                                    msg: format!("compressor '{c}' (only vtkZLibDataCompressor)"),
                                })
                            }
                        }
                    }
                    b"Piece" => {
                        if piece.is_some() {
                            return Err(MeshError::Unsupported {
                                loc: Location::line(name, line_of(data, pos)),
                                msg: "more than one Piece".into(),
                            });
                        }
                        let num = |k: &[u8]| -> MeshResult<u64> {
                            let v = attr(e, k).unwrap_or_default();
                            super::parse_u64(v.trim().as_bytes()).ok_or_else(|| MeshError::Syntax {
                                loc: Location::line(name, line_of(data, pos)),
                                msg: format!(
                                    "Piece attribute {} = '{}' is not a count",
                                    String::from_utf8_lossy(k),
                                    show(v.as_bytes())
                                ),
                            })
                        };
                        piece = Some((
                            num(b"NumberOfPoints")?,
                            num(b"NumberOfCells")?,
                            line_of(data, pos),
                        ));
                    }
                    b"Points" | b"Cells" | b"PointData" | b"CellData" | b"FieldData" if !empty => {
                        section = String::from_utf8_lossy(&tag).into_owned();
                    }
                    b"DataArray" => {
                        let a = Array {
                            name: attr(e, b"Name").unwrap_or_default(),
                            ty: attr(e, b"type").unwrap_or_default(),
                            format: attr(e, b"format").unwrap_or_else(|| "ascii".into()),
                            offset: attr(e, b"offset")
                                .and_then(|o| super::parse_u64(o.trim().as_bytes())),
                            ncomp: attr(e, b"NumberOfComponents")
                                .and_then(|o| super::parse_u64(o.trim().as_bytes()))
                                .unwrap_or(1),
                            text: Vec::new(),
                            line: line_of(data, pos),
                        };
                        if empty {
                            arrays.push((section.clone(), a));
                        } else {
                            open = Some(a);
                            depth_in_array = 0;
                        }
                    }
                    _ => {}
                }
            }
            Event::End(ref e) => {
                if open.is_some() {
                    if depth_in_array > 0 {
                        depth_in_array -= 1;
                        continue;
                    }
                    if let Some(a) = open.take() {
                        arrays.push((section.clone(), a));
                    }
                    continue;
                }
                if matches!(
                    e.name().as_ref(),
                    b"Points" | b"Cells" | b"PointData" | b"CellData" | b"FieldData"
                ) {
                    section.clear();
                }
            }
            Event::Text(_) | Event::CData(_) | Event::GeneralRef(_) => {
                if let Some(a) = open.as_mut() {
                    if depth_in_array == 0 {
                        a.text.push((pos, after));
                    }
                }
            }
            _ => {}
        }
    }
    if !saw_vtkfile {
        return Err(MeshError::Unsupported {
            loc: Location::line(name, 1),
            msg: "no <VTKFile> element".into(),
        });
    }
    let Some((np, nc, piece_line)) = piece else {
        return Err(MeshError::Truncated {
            loc: Location::file(name),
            msg: "no <Piece> element".into(),
        });
    };
    if appended.is_none() && open.is_some() {
        return Err(MeshError::Truncated {
            loc: Location::byte(name, data.len()),
            msg: "file ends inside a DataArray".into(),
        });
    }
    let mut offsets: Vec<u64> = arrays.iter().filter_map(|(_, a)| a.offset).collect();
    offsets.sort_unstable();
    let mut ctx = Ctx {
        name,
        data,
        header_u64,
        big_endian,
        compressed,
        appended,
        offsets,
        inflate_budget: (32u64 << 20) + 256 * data.len() as u64,
    };
    let get = |sec: &str, nm: Option<&str>| -> Option<Array> {
        arrays
            .iter()
            .find(|(s, a)| s == sec && nm.is_none_or(|n| a.name == n))
            .map(|(_, a)| a.clone())
    };
    let piece_loc = Location::line(name, piece_line);
    let pts = get("Points", None).ok_or_else(|| MeshError::Truncated {
        loc: piece_loc.clone(),
        msg: "no Points DataArray".into(),
    })?;
    if pts.ncomp != 3 {
        return Err(MeshError::Unsupported {
            loc: Location::line(name, pts.line),
            msg: format!("Points with {} components", pts.ncomp),
        });
    }
    let n3 = np.checked_mul(3).ok_or_else(|| MeshError::CountMismatch {
        loc: piece_loc.clone(),
        msg: format!("NumberOfPoints {np} is absurd"),
    })?;
    let coords = ctx.floats(&pts, n3)?;
    let mut raw = Raw {
        positions: coords.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect(),
        ..Default::default()
    };
    drop(coords);
    if nc > 0 {
        let conn_a = get("Cells", Some("connectivity")).ok_or_else(|| MeshError::Truncated {
            loc: piece_loc.clone(),
            msg: "no connectivity DataArray".into(),
        })?;
        let off_a = get("Cells", Some("offsets")).ok_or_else(|| MeshError::Truncated {
            loc: piece_loc.clone(),
            msg: "no offsets DataArray".into(),
        })?;
        let ty_a = get("Cells", Some("types")).ok_or_else(|| MeshError::Truncated {
            loc: piece_loc.clone(),
            msg: "no types DataArray".into(),
        })?;
        let offs = ctx.ints(&off_a, nc)?;
        let types = ctx.ints(&ty_a, nc)?;
        let last = *offs.last().unwrap_or(&0);
        if last < 0 || offs.windows(2).any(|w| w[1] < w[0]) || offs.first().is_some_and(|&o| o < 0)
        {
            return Err(MeshError::CountMismatch {
                loc: Location::line(name, off_a.line),
                msg: "cell offsets are negative or decreasing".into(),
            });
        }
        let conn = ctx.ints(&conn_a, last as u64)?;
        let npts = raw.positions.len();
        let mut prev = 0usize;
        for (i, (&o, &ty)) in offs.iter().zip(&types).enumerate() {
            let pts = &conn[prev..o as usize];
            prev = o as usize;
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
                    loc: Location::line(name, off_a.line),
                    msg: format!(
                        "cell {i} of type {ty} has {} points, {want} expected",
                        pts.len()
                    ),
                });
            }
            let mut t = [0u32; 4];
            for (j, (slot, &v)) in t.iter_mut().zip(pts).enumerate() {
                *slot = match super::index_in(v, 0, npts) {
                    Some(s) => s,
                    None => {
                        let k = prev - pts.len() + j;
                        return Err(MeshError::IndexOutOfRange {
                            loc: Location::line(name, ctx.value_line(&conn_a, k)),
                            msg: format!(
                                "cell {i} references point {v} (connectivity value {k}); there are {npts} points (ids 0..={}){}",
                                npts.saturating_sub(1),
                                super::one_based_note(&conn, npts)
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
    let enc = match (&pts.format[..], appended) {
        ("ascii", _) => "ascii".to_string(),
        ("binary", _) => "base64".to_string(),
        (_, Some((_, _, true))) => "appended-raw".to_string(),
        _ => "appended-base64".to_string(),
    };
    raw.format = format!(
        "vtu-{enc}{}",
        if compressed && pts.format != "ascii" {
            "-zlib"
        } else {
            ""
        }
    );
    Ok(raw)
}
