//! STL reader (ASCII and binary). STL stores every triangle with its own three corners; exactly
//! equal positions are merged (bitwise, `-0.0 == 0.0`) so that the surface is connected, in
//! order of first appearance.

use super::{show, Cursor, Raw};
use crate::error::{Location, MeshError, MeshResult};
use std::collections::HashMap;

struct Merge {
    map: HashMap<[u64; 3], u32>,
}

impl Merge {
    fn add(&mut self, raw: &mut Raw, p: [f64; 3]) -> u32 {
        let key = p.map(|v| (v + 0.0).to_bits());
        *self.map.entry(key).or_insert_with(|| {
            raw.positions.push(p);
            (raw.positions.len() - 1) as u32
        })
    }
}

fn looks_ascii(data: &[u8]) -> bool {
    if !data.starts_with(b"solid") {
        return false;
    }
    if data.len() >= 84 {
        let n = u32::from_le_bytes([data[80], data[81], data[82], data[83]]) as u64;
        if 84 + 50 * n == data.len() as u64 {
            return false;
        }
    }
    let head = &data[..data.len().min(1024)];
    head.windows(5).any(|w| w == b"facet") || head.windows(8).any(|w| w == b"endsolid")
}

pub(crate) fn parse(name: &str, data: &[u8]) -> MeshResult<Raw> {
    let mut raw = Raw {
        surface_only: true,
        ..Default::default()
    };
    if looks_ascii(data) {
        raw.format = "stl-ascii".into();
        let mut c = Cursor::new(name, data);
        let mut m = Merge {
            map: HashMap::new(),
        };
        while let Some(t) = c.token() {
            match t {
                b"solid" | b"endsolid" => {
                    c.rest_of_line();
                }
                b"facet" => {
                    let kw = c.expect_token("normal")?;
                    if kw != b"normal" {
                        return Err(
                            c.err_syntax(format!("expected 'normal', found '{}'", show(kw)))
                        );
                    }
                    for _ in 0..3 {
                        let t = c.expect_token("a normal component")?;
                        super::parse_f64(t).ok_or_else(|| {
                            c.err_syntax(format!("'{}' is not a number", show(t)))
                        })?;
                    }
                    for kw in [&b"outer"[..], b"loop"] {
                        let t = c.expect_token("outer loop")?;
                        if t != kw {
                            return Err(c.err_syntax(format!(
                                "expected 'outer loop', found '{}'",
                                show(t)
                            )));
                        }
                    }
                    let mut tri = [0u32; 3];
                    for slot in &mut tri {
                        let t = c.expect_token("vertex")?;
                        if t != b"vertex" {
                            return Err(c.err_syntax(format!(
                                "expected 'vertex', found '{}' (facets must be triangles)",
                                show(t)
                            )));
                        }
                        let p = [c.f64("x")?, c.f64("y")?, c.f64("z")?];
                        *slot = m.add(&mut raw, p);
                    }
                    for kw in [&b"endloop"[..], b"endfacet"] {
                        let t = c.expect_token(std::str::from_utf8(kw).unwrap_or("end"))?;
                        if t != kw {
                            return Err(c.err_syntax(format!(
                                "expected '{}', found '{}'",
                                show(kw),
                                show(t)
                            )));
                        }
                    }
                    raw.triangles.push(tri);
                }
                _ => return Err(c.err_syntax(format!("unexpected '{}' in ASCII STL", show(t)))),
            }
        }
        if raw.triangles.is_empty() {
            return Err(MeshError::Truncated {
                loc: Location::file(name),
                msg: "no facets".into(),
            });
        }
        return Ok(raw);
    }
    raw.format = "stl-binary".into();
    if data.len() < 84 {
        return Err(MeshError::Truncated {
            loc: Location::byte(name, data.len()),
            msg: format!(
                "binary STL needs an 84-byte header, the file has {} bytes",
                data.len()
            ),
        });
    }
    let n = u32::from_le_bytes([data[80], data[81], data[82], data[83]]) as u64;
    let body = (data.len() - 84) as u64;
    if n * 50 > body {
        if !body.is_multiple_of(50) {
            return Err(MeshError::Truncated {
                loc: Location::byte(name, data.len()),
                msg: format!(
                    "header says {n} triangles but the file ends after {:.2}",
                    body as f64 / 50.0
                ),
            });
        }
        return Err(MeshError::CountMismatch {
            loc: Location::byte(name, 80),
            msg: format!("header says {n} triangles but the file holds {}", body / 50),
        });
    }
    if n * 50 < body {
        raw.warnings.push(format!(
            "{} bytes after the {n} triangles ignored",
            body - n * 50
        ));
    }
    if n == 0 {
        return Err(MeshError::Truncated {
            loc: Location::byte(name, 80),
            msg: "binary STL with 0 triangles".into(),
        });
    }
    let mut m = Merge {
        map: HashMap::with_capacity(n as usize / 2 + 1),
    };
    raw.triangles.reserve(n as usize);
    for (i, r) in data[84..84 + 50 * n as usize].chunks_exact(50).enumerate() {
        let mut tri = [0u32; 3];
        for (k, slot) in tri.iter_mut().enumerate() {
            let o = 12 + 12 * k;
            let f = |j: usize| {
                f32::from_le_bytes([
                    r[o + 4 * j],
                    r[o + 4 * j + 1],
                    r[o + 4 * j + 2],
                    r[o + 4 * j + 3],
                ]) as f64
            };
            let p = [f(0), f(1), f(2)];
            if !p.iter().all(|v| v.is_finite()) {
                return Err(MeshError::NonFinite {
                    loc: Location::byte(name, 84 + 50 * i + o),
                    msg: format!("triangle {i} vertex {k} is {p:?}"),
                });
            }
            *slot = m.add(&mut raw, p);
        }
        raw.triangles.push(tri);
    }
    Ok(raw)
}
