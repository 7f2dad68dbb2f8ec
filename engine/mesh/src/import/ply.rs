//! Stanford `.ply` surface reader: `ascii`, `binary_little_endian` and `binary_big_endian`;
//! the `vertex` element's x/y/z and the `face` element's index list (`vertex_indices` or
//! `vertex_index`), polygons fan-triangulated; an `edge` element's `vertex1` / `vertex2` as
//! polylines (consecutive edges sharing an end joined, as Supple's writer lists them); other
//! elements and properties are skipped.

use super::{cap, show, Cursor, Raw};
use crate::error::{Location, MeshError, MeshResult};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Ty {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl Ty {
    fn parse(t: &[u8]) -> Option<Ty> {
        Some(match t {
            b"char" | b"int8" => Ty::I8,
            b"uchar" | b"uint8" => Ty::U8,
            b"short" | b"int16" => Ty::I16,
            b"ushort" | b"uint16" => Ty::U16,
            b"int" | b"int32" => Ty::I32,
            b"uint" | b"uint32" => Ty::U32,
            b"float" | b"float32" => Ty::F32,
            b"double" | b"float64" => Ty::F64,
            _ => return None,
        })
    }
    fn size(self) -> usize {
        match self {
            Ty::I8 | Ty::U8 => 1,
            Ty::I16 | Ty::U16 => 2,
            Ty::I32 | Ty::U32 | Ty::F32 => 4,
            Ty::F64 => 8,
        }
    }
}

#[derive(Debug)]
struct Prop {
    name: Vec<u8>,
    /// `Some(count type)` for list properties.
    list: Option<Ty>,
    ty: Ty,
}

#[derive(Debug)]
struct Element {
    name: Vec<u8>,
    count: u64,
    props: Vec<Prop>,
    line: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Enc {
    Ascii,
    Le,
    Be,
}

struct Body<'a> {
    c: Cursor<'a>,
    enc: Enc,
}

impl<'a> Body<'a> {
    /// Reads one scalar as f64 (ASCII token or binary value).
    #[inline]
    fn scalar(&mut self, ty: Ty, what: &str) -> MeshResult<f64> {
        if self.enc == Enc::Ascii {
            let t = self.c.expect_token(what)?;
            return super::parse_f64(t).ok_or_else(|| {
                self.c
                    .err_syntax(format!("'{}' is not a valid number ({what})", show(t)))
            });
        }
        let b = self.c.bytes(ty.size(), what)?;
        let be = self.enc == Enc::Be;
        macro_rules! rd {
            ($t:ty, $n:expr) => {{
                let mut a = [0u8; $n];
                a.copy_from_slice(b);
                if be {
                    <$t>::from_be_bytes(a)
                } else {
                    <$t>::from_le_bytes(a)
                }
            }};
        }
        Ok(match ty {
            Ty::I8 => b[0] as i8 as f64,
            Ty::U8 => b[0] as f64,
            Ty::I16 => rd!(i16, 2) as f64,
            Ty::U16 => rd!(u16, 2) as f64,
            Ty::I32 => rd!(i32, 4) as f64,
            Ty::U32 => rd!(u32, 4) as f64,
            Ty::F32 => rd!(f32, 4) as f64,
            Ty::F64 => rd!(f64, 8),
        })
    }
}

impl Body<'_> {
    /// Checks vertex index `v` of `what` `i` (read from byte `at`) against `nv` vertices: the
    /// error names the line (ASCII) or the byte offset of the value (binary).
    fn vertex_index(
        &self,
        v: f64,
        at: usize,
        nv: usize,
        have_vertices: bool,
        what: &str,
        i: u64,
    ) -> MeshResult<u32> {
        if have_vertices && v >= 0.0 && v.fract() == 0.0 && v < nv as f64 {
            return Ok(v as u32);
        }
        let loc = if self.enc == Enc::Ascii {
            self.c.loc()
        } else {
            Location::byte(self.c.file, at)
        };
        let msg = if have_vertices {
            format!("{what} {i} references vertex {v}; there are {nv} vertices")
        } else {
            format!("{what} {i} references vertex {v} before any 'vertex' element")
        };
        Err(MeshError::IndexOutOfRange { loc, msg })
    }
}

/// Joins edges into polylines: an edge continues the previous polyline when it starts where
/// that one ends (how Supple's writer lists each polyline's segments), else starts a new one.
fn chain_edges(edges: &[[u32; 2]]) -> Vec<Vec<u32>> {
    let mut out: Vec<Vec<u32>> = Vec::new();
    for &[a, b] in edges {
        match out.last_mut() {
            Some(line) if line.last() == Some(&a) => line.push(b),
            _ => out.push(vec![a, b]),
        }
    }
    out
}

pub(crate) fn parse(name: &str, data: &[u8]) -> MeshResult<Raw> {
    let mut c = Cursor::new(name, data);
    let (_, magic) = c.next_line().ok_or_else(|| c.err_trunc("empty file"))?;
    if magic.trim_ascii() != b"ply" {
        return Err(MeshError::Unsupported {
            loc: Location::line(name, 1),
            msg: "not a PLY file (first line is not 'ply')".into(),
        });
    }
    let mut enc = None;
    let mut elements: Vec<Element> = Vec::new();
    loop {
        let (l, s) = c
            .next_line()
            .ok_or_else(|| c.err_trunc("file ends inside the header (no end_header)"))?;
        let toks: Vec<&[u8]> = s
            .split(|b| b.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
            .take(8)
            .collect();
        let bad = |m: String| MeshError::Syntax {
            loc: Location::line(name, l),
            msg: m,
        };
        match toks.first().copied() {
            Some(b"end_header") => break,
            Some(b"comment") | Some(b"obj_info") => {}
            Some(b"format") => {
                enc = Some(match toks.get(1).copied() {
                    Some(b"ascii") => Enc::Ascii,
                    Some(b"binary_little_endian") => Enc::Le,
                    Some(b"binary_big_endian") => Enc::Be,
                    other => {
                        return Err(MeshError::Unsupported {
                            loc: Location::line(name, l),
                            msg: format!("PLY format '{}'", show(other.unwrap_or_default())),
                        })
                    }
                });
            }
            Some(b"element") => {
                if toks.len() < 3 {
                    return Err(bad("'element' needs a name and a count".into()));
                }
                let count = super::parse_u64(toks[2]).ok_or_else(|| {
                    bad(format!("'{}' is not a valid element count", show(toks[2])))
                })?;
                elements.push(Element {
                    name: toks[1].to_vec(),
                    count,
                    props: Vec::new(),
                    line: l,
                });
            }
            Some(b"property") => {
                let el = elements
                    .last_mut()
                    .ok_or_else(|| bad("'property' before any 'element'".into()))?;
                if toks.get(1).copied() == Some(b"list") {
                    if toks.len() < 5 {
                        return Err(bad(
                            "'property list' needs count type, item type and name".into()
                        ));
                    }
                    let ct = Ty::parse(toks[2])
                        .ok_or_else(|| bad(format!("unknown type '{}'", show(toks[2]))))?;
                    let it = Ty::parse(toks[3])
                        .ok_or_else(|| bad(format!("unknown type '{}'", show(toks[3]))))?;
                    if matches!(ct, Ty::F32 | Ty::F64) {
                        return Err(bad("list count type must be an integer".into()));
                    }
                    el.props.push(Prop {
                        name: toks[4].to_vec(),
                        list: Some(ct),
                        ty: it,
                    });
                } else {
                    if toks.len() < 3 {
                        return Err(bad("'property' needs a type and a name".into()));
                    }
                    let ty = Ty::parse(toks[1])
                        .ok_or_else(|| bad(format!("unknown type '{}'", show(toks[1]))))?;
                    el.props.push(Prop {
                        name: toks[2].to_vec(),
                        list: None,
                        ty,
                    });
                }
            }
            Some(t) => return Err(bad(format!("unknown header keyword '{}'", show(t)))),
            None => {}
        }
    }
    let enc = enc.ok_or_else(|| c.err_syntax("no 'format' line in the header"))?;
    let mut raw = Raw {
        surface_only: true,
        ..Default::default()
    };
    raw.format = match enc {
        Enc::Ascii => "ply-ascii",
        Enc::Le => "ply-binary-little-endian",
        Enc::Be => "ply-binary-big-endian",
    }
    .into();
    let mut b = Body { c, enc };
    let mut have_vertices = false;
    let mut poly: Vec<u32> = Vec::new();
    for el in &elements {
        let min_rec: usize = el
            .props
            .iter()
            .map(|p| {
                if enc == Enc::Ascii {
                    2
                } else {
                    p.list.map(|t| t.size()).unwrap_or(p.ty.size())
                }
            })
            .sum::<usize>()
            .max(1);
        if enc != Enc::Ascii {
            b.c.fits(el.count, min_rec, &format!("'{}' elements", show(&el.name)))?;
        } else if el.count > 0 && b.c.remaining() == 0 {
            return Err(MeshError::CountMismatch {
                loc: Location::line(name, el.line),
                msg: format!(
                    "header announces {} '{}' but the file has no data",
                    el.count,
                    show(&el.name)
                ),
            });
        }
        let is_vertex = el.name == b"vertex";
        let is_face = el.name == b"face";
        // `edge` elements with scalar `vertex1` / `vertex2` (Supple's polylines).
        let edge_props = if el.name == b"edge" {
            let f = |n: &[u8]| {
                el.props
                    .iter()
                    .position(|p| p.name == n && p.list.is_none())
            };
            f(b"vertex1").zip(f(b"vertex2"))
        } else {
            None
        };
        let mut edges: Vec<[u32; 2]> = Vec::new();
        let (ix, iy, iz) = if is_vertex {
            let f = |n: &[u8]| {
                el.props
                    .iter()
                    .position(|p| p.name == n && p.list.is_none())
            };
            match (f(b"x"), f(b"y"), f(b"z")) {
                (Some(x), Some(y), Some(z)) => (x, y, z),
                _ => {
                    return Err(MeshError::Unsupported {
                        loc: Location::line(name, el.line),
                        msg: "vertex element without x, y, z".into(),
                    })
                }
            }
        } else {
            (0, 0, 0)
        };
        let iface = if is_face {
            el.props
                .iter()
                .position(|p| {
                    p.list.is_some() && (p.name == b"vertex_indices" || p.name == b"vertex_index")
                })
                .or_else(|| el.props.iter().position(|p| p.list.is_some()))
        } else {
            None
        };
        if is_vertex {
            raw.positions
                .reserve(cap(el.count, min_rec, b.c.remaining()));
        }
        if is_face {
            raw.triangles
                .reserve(cap(el.count, min_rec, b.c.remaining()));
        }
        if edge_props.is_some() {
            edges.reserve(cap(el.count, min_rec, b.c.remaining()));
        }
        for i in 0..el.count {
            let mut p = [0.0; 3];
            let mut edge = [0u32; 2];
            for (k, prop) in el.props.iter().enumerate() {
                match prop.list {
                    None => {
                        let at = b.c.pos;
                        let v = b.scalar(prop.ty, "a property value")?;
                        if let Some((e1, e2)) = edge_props {
                            if k == e1 || k == e2 {
                                let nv = raw.positions.len();
                                edge[usize::from(k == e2)] =
                                    b.vertex_index(v, at, nv, have_vertices, "edge", i)?;
                            }
                        }
                        if is_vertex {
                            let slot = if k == ix {
                                0
                            } else if k == iy {
                                1
                            } else if k == iz {
                                2
                            } else {
                                continue;
                            };
                            if !v.is_finite() {
                                return Err(MeshError::NonFinite {
                                    loc: b.c.loc(),
                                    msg: format!("vertex {i} coordinate is {v}"),
                                });
                            }
                            p[slot] = v;
                        }
                    }
                    Some(ct) => {
                        let n = b.scalar(ct, "a list length")?;
                        if !(0.0..=1e9).contains(&n) || n.fract() != 0.0 {
                            return Err(b.c.err_syntax(format!("invalid list length {n}")));
                        }
                        let n = n as u64;
                        if enc != Enc::Ascii {
                            b.c.fits(n, prop.ty.size(), "list items")?;
                        }
                        let keep = iface == Some(k);
                        if keep {
                            poly.clear();
                        }
                        for _ in 0..n {
                            let at = b.c.pos;
                            let v = b.scalar(prop.ty, "a list item")?;
                            if keep {
                                let nv = raw.positions.len();
                                poly.push(b.vertex_index(v, at, nv, have_vertices, "face", i)?);
                            }
                        }
                        if keep {
                            if poly.len() < 3 {
                                return Err(b.c.err_syntax(format!(
                                    "face {i} has {} vertices (at least 3 needed)",
                                    poly.len()
                                )));
                            }
                            for k in 1..poly.len() - 1 {
                                raw.triangles.push([poly[0], poly[k], poly[k + 1]]);
                            }
                        }
                    }
                }
            }
            if is_vertex {
                raw.positions.push(p);
            }
            if edge_props.is_some() {
                edges.push(edge);
            }
        }
        if is_vertex {
            have_vertices = true;
        }
        if edge_props.is_some() {
            raw.polylines.extend(chain_edges(&edges));
        } else if !is_vertex && !is_face {
            raw.ignored += el.count as usize;
        }
    }
    if enc == Enc::Ascii && b.c.token().is_some() {
        return Err(b
            .c
            .err_count("data after the last element announced in the header"));
    }
    Ok(raw)
}
