//! USD text layer (`.usda`) reader for the subset Supple's exporter writes, and what other tools
//! write in the same terms: `def Mesh` prims (`points`, `faceVertexCounts`,
//! `faceVertexIndices`, `orientation`, `holeIndices`), `def TetMesh` prims (`points`,
//! `tetVertexIndices`, `surfaceFaceVertexIndices`, `orientation`) and `def BasisCurves` prims
//! (`points`, `curveVertexCounts`, `type`, `wrap`), nested under any `Xform`s or `Scope`s.
//!
//! - Time-sampled attributes (`points.timeSamples = { 0: [...], 1: [...] }`) are read at their
//!   earliest time code; the other samples are skipped without being stored.
//! - Several prims are merged into one mesh: all `TetMesh` prims when there is any (Supple writes
//!   each body's surface as a `Mesh` beside its `TetMesh`, so the `Mesh` prims are then left out,
//!   with a warning naming them), otherwise all `Mesh` prims plus the `BasisCurves` as polylines.
//!   [`super::load_usd_prim`] reads one prim (or the prims under it) instead.
//! - `xformOp`s (translate, scale, rotateX/Y/Z, the rotateXYZ family, orient, transform,
//!   `!invert!`, `!resetXformStack!`) of the prims and their ancestors are applied to the points,
//!   and the layer's `metersPerUnit` scales them to metres (with a warning). Any other op is an
//!   error: nothing is left out silently. An `upAxis` other than Z is reported, not rotated.
//! - Prims of other types (the colliders' `Sphere`, `Cube`, `Plane`...) are counted as ignored
//!   and named in a warning; composition arcs (`references`, `payload`, `subLayers`...) are not
//!   followed (a warning says so); `class` prims and prims with `active = false` are not read.
//!
//! Binary crate files (`.usdc`, or a `.usd` holding one) and `.usdz` packages are refused with a
//! message saying how to get a `.usda`. Like every parser here, this one never recurses on the
//! input's nesting, never panics, and allocates in proportion to the file size only.

use super::{show, Raw};
use crate::error::{Location, MeshError, MeshResult};

// ----------------------------------------------------------------------------------------------
// Lexer.

/// One token of a `.usda` layer.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok<'a> {
    /// One of `( ) [ ] { } = , : ;`.
    Punct(u8),
    /// A quoted string's content (escapes left as they are).
    Str(&'a [u8]),
    /// An identifier (type names, attribute names with `:` and `.`, keywords).
    Ident(&'a [u8]),
    /// A number (or `inf`/`nan` spelled with a sign).
    Num(&'a [u8]),
    /// A prim path `</World/body>` (content without the brackets).
    Path(&'a [u8]),
    /// An asset path `@x.usda@`.
    Asset(&'a [u8]),
    /// End of the data.
    Eof,
}

struct Lexer<'a> {
    d: &'a [u8],
    pos: usize,
    line: usize,
    file: &'a str,
    /// Line of the token last returned by `next`.
    tok_line: usize,
    /// Real numbers are read as f32 (the attribute's type is a float type, like `point3f`).
    single: bool,
}

impl<'a> Lexer<'a> {
    fn loc(&self) -> Location {
        Location::line(self.file, self.tok_line)
    }

    fn syntax(&self, msg: impl Into<String>) -> MeshError {
        MeshError::Syntax {
            loc: self.loc(),
            msg: msg.into(),
        }
    }

    /// Skips whitespace and `#` comments, counting lines.
    fn skip_ws(&mut self) {
        while let Some(&b) = self.d.get(self.pos) {
            match b {
                b'\n' => {
                    self.line += 1;
                    self.pos += 1;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => self.pos += 1,
                b'#' => {
                    while self.d.get(self.pos).is_some_and(|&c| c != b'\n') {
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// Consumes bytes up to and including the closing `delim` (a 1- or 3-byte delimiter),
    /// counting lines; returns the content, or an error for an unterminated string.
    fn delimited(&mut self, open: usize, delim: &[u8], what: &str) -> MeshResult<&'a [u8]> {
        let start = self.pos;
        while self.pos < self.d.len() {
            let b = self.d[self.pos];
            if b == b'\\' && delim.len() != 3 && delim != b"@" {
                self.pos += 2;
                continue;
            }
            if self.d[self.pos..].starts_with(delim) {
                let content = &self.d[start..self.pos];
                self.pos += delim.len();
                return Ok(content);
            }
            if b == b'\n' {
                self.line += 1;
            }
            self.pos += 1;
        }
        self.pos = self.d.len();
        Err(MeshError::Syntax {
            loc: Location::line(self.file, open),
            msg: format!("unterminated {what} (the file ends inside it)"),
        })
    }

    fn next(&mut self) -> MeshResult<Tok<'a>> {
        self.skip_ws();
        self.tok_line = self.line;
        let Some(&b) = self.d.get(self.pos) else {
            return Ok(Tok::Eof);
        };
        let open = self.line;
        match b {
            b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'=' | b',' | b':' | b';' => {
                self.pos += 1;
                Ok(Tok::Punct(b))
            }
            b'"' | b'\'' => {
                let triple = [b, b, b];
                if self.d[self.pos..].starts_with(&triple) {
                    self.pos += 3;
                    Ok(Tok::Str(self.delimited(open, &triple, "string")?))
                } else {
                    self.pos += 1;
                    Ok(Tok::Str(self.delimited(open, &[b], "string")?))
                }
            }
            b'<' => {
                self.pos += 1;
                Ok(Tok::Path(self.delimited(open, b">", "prim path")?))
            }
            b'@' => {
                if self.d[self.pos..].starts_with(b"@@@") {
                    self.pos += 3;
                    Ok(Tok::Asset(self.delimited(open, b"@@@", "asset path")?))
                } else {
                    self.pos += 1;
                    Ok(Tok::Asset(self.delimited(open, b"@", "asset path")?))
                }
            }
            b'0'..=b'9' | b'-' | b'+' | b'.' => {
                let start = self.pos;
                self.pos += 1;
                while self.d.get(self.pos).is_some_and(|&c| {
                    c.is_ascii_alphanumeric() || c == b'.' || c == b'+' || c == b'-' || c == b'_'
                }) {
                    self.pos += 1;
                }
                Ok(Tok::Num(&self.d[start..self.pos]))
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = self.pos;
                while self.d.get(self.pos).is_some_and(|&c| {
                    c.is_ascii_alphanumeric() || c == b'_' || c == b':' || c == b'.'
                }) {
                    self.pos += 1;
                }
                // A trailing ':' belongs to a time-sample or dictionary separator.
                while self.pos > start + 1 && self.d[self.pos - 1] == b':' {
                    self.pos -= 1;
                }
                Ok(Tok::Ident(&self.d[start..self.pos]))
            }
            other => {
                self.pos += 1;
                Err(self.syntax(format!("unexpected character '{}'", show(&[other]))))
            }
        }
    }

    fn peek(&mut self) -> MeshResult<Tok<'a>> {
        let (p, l, t) = (self.pos, self.line, self.tok_line);
        let tok = self.next();
        self.pos = p;
        self.line = l;
        self.tok_line = t;
        tok
    }

    fn expect_punct(&mut self, p: u8, context: &str) -> MeshResult<()> {
        match self.next()? {
            Tok::Punct(q) if q == p => Ok(()),
            other => Err(self.syntax(format!(
                "expected '{}' {context}, found {}",
                p as char,
                describe(other)
            ))),
        }
    }

    /// Consumes `p` if it is the next token.
    fn eat(&mut self, p: u8) -> MeshResult<bool> {
        if self.peek()? == Tok::Punct(p) {
            self.next()?;
            return Ok(true);
        }
        Ok(false)
    }

    /// Skips one value: a scalar token, or a bracketed group `(...)`, `[...]`, `{...}` with
    /// everything nested in it (no recursion).
    fn skip_value(&mut self) -> MeshResult<()> {
        let first = self.next()?;
        let mut stack = match first {
            Tok::Punct(b'(') => vec![b')'],
            Tok::Punct(b'[') => vec![b']'],
            Tok::Punct(b'{') => vec![b'}'],
            Tok::Eof => return Err(self.truncated("a value")),
            Tok::Punct(c) => {
                return Err(self.syntax(format!("expected a value, found '{}'", c as char)))
            }
            Tok::Asset(_) => {
                // A reference or payload: `@file@</prim>`.
                if matches!(self.peek()?, Tok::Path(_)) {
                    self.next()?;
                }
                return Ok(());
            }
            _ => return Ok(()),
        };
        let open = self.tok_line;
        while let Some(&close) = stack.last() {
            match self.next()? {
                Tok::Punct(b'(') => stack.push(b')'),
                Tok::Punct(b'[') => stack.push(b']'),
                Tok::Punct(b'{') => stack.push(b'}'),
                Tok::Punct(c @ (b')' | b']' | b'}')) => {
                    if c != close {
                        return Err(self.syntax(format!(
                            "'{}' closes a group that needs '{}'",
                            c as char, close as char
                        )));
                    }
                    stack.pop();
                }
                Tok::Eof => {
                    return Err(MeshError::Truncated {
                        loc: Location::line(self.file, open),
                        msg: format!(
                            "the file ends inside this group (no closing '{}')",
                            close as char
                        ),
                    })
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn truncated(&self, what: &str) -> MeshError {
        MeshError::Truncated {
            loc: self.loc(),
            msg: format!("the file ends where {what} was expected"),
        }
    }
}

/// A token for messages.
fn describe(t: Tok) -> String {
    match t {
        Tok::Punct(c) => format!("'{}'", c as char),
        Tok::Str(s) => format!("string \"{}\"", show(s)),
        Tok::Ident(s) | Tok::Num(s) => format!("'{}'", show(s)),
        Tok::Path(s) => format!("path <{}>", show(s)),
        Tok::Asset(s) => format!("asset @{}@", show(s)),
        Tok::Eof => "the end of the file".into(),
    }
}

// ----------------------------------------------------------------------------------------------
// Typed values.

/// A numeric array attribute: its values flattened, where its value starts in the file (to find
/// the line of a bad entry again), and the line of the attribute.
#[derive(Debug, Clone, Default)]
struct Numbers<T> {
    values: Vec<T>,
    start: (usize, usize),
    line: usize,
}

/// How to read one number.
trait Number: Sized + Copy {
    fn parse(lx: &Lexer, tok: &[u8]) -> MeshResult<Self>;
}

impl Number for f64 {
    fn parse(lx: &Lexer, t: &[u8]) -> MeshResult<f64> {
        let bad = || lx.syntax(format!("'{}' is not a number", show(t)));
        let v = if lx.single {
            // Parsed as f32 directly: a float attribute's value is exactly that f32.
            std::str::from_utf8(t)
                .ok()
                .and_then(|s| s.parse::<f32>().ok())
                .ok_or_else(bad)? as f64
        } else {
            super::parse_f64(t).ok_or_else(bad)?
        };
        if !v.is_finite() {
            return Err(MeshError::NonFinite {
                loc: lx.loc(),
                msg: format!("value '{}'", show(t)),
            });
        }
        Ok(v)
    }
}

impl Number for i64 {
    fn parse(lx: &Lexer, t: &[u8]) -> MeshResult<i64> {
        super::parse_i64(t).ok_or_else(|| lx.syntax(format!("'{}' is not an integer", show(t))))
    }
}

/// Reads one number token (`inf`/`nan` spelled as identifiers are non-finite errors).
fn number<T: Number>(lx: &mut Lexer) -> MeshResult<T> {
    match lx.next()? {
        Tok::Num(t) => T::parse(lx, t),
        Tok::Ident(t) if [&b"inf"[..], b"nan", b"NaN", b"Inf"].contains(&t) => {
            Err(MeshError::NonFinite {
                loc: lx.loc(),
                msg: format!("value '{}'", show(t)),
            })
        }
        Tok::Eof => Err(lx.truncated("a number")),
        other => Err(lx.syntax(format!("expected a number, found {}", describe(other)))),
    }
}

/// Reads a value made of numbers: one number (`arity` 1) or a tuple of `arity` numbers, or an
/// array `[...]` of those; appends them flattened. `None` (a blocked value) reads as nothing and
/// returns false.
fn numbers<T: Number>(lx: &mut Lexer, arity: usize, out: &mut Vec<T>) -> MeshResult<bool> {
    match lx.peek()? {
        Tok::Ident(b"None") => {
            lx.next()?;
            Ok(false)
        }
        Tok::Punct(b'[') => {
            lx.next()?;
            loop {
                if lx.eat(b']')? {
                    return Ok(true);
                }
                element(lx, arity, out)?;
                if !lx.eat(b',')? {
                    lx.expect_punct(b']', "to close the array")?;
                    return Ok(true);
                }
            }
        }
        _ => element(lx, arity, out).map(|_| true),
    }
}

/// One array element: a number, or a tuple of `arity` numbers (a tuple of tuples for matrices,
/// flattened).
fn element<T: Number>(lx: &mut Lexer, arity: usize, out: &mut Vec<T>) -> MeshResult<()> {
    if arity == 1 {
        out.push(number(lx)?);
        return Ok(());
    }
    lx.expect_punct(b'(', &format!("to open a tuple of {arity} values"))?;
    let start = out.len();
    loop {
        if lx.peek()? == Tok::Punct(b'(') {
            // A row of a matrix.
            lx.next()?;
            loop {
                out.push(number(lx)?);
                if !lx.eat(b',')? {
                    break;
                }
            }
            lx.expect_punct(b')', "to close a matrix row")?;
        } else {
            out.push(number(lx)?);
        }
        if !lx.eat(b',')? {
            break;
        }
        if lx.peek()? == Tok::Punct(b')') {
            break;
        }
    }
    lx.expect_punct(b')', "to close a tuple")?;
    if out.len() - start != arity {
        return Err(lx.syntax(format!(
            "a tuple of {} values where {arity} were expected",
            out.len() - start
        )));
    }
    Ok(())
}

/// Reads a token value (`"rightHanded"`) or an array of them; `None` reads as nothing.
fn tokens(lx: &mut Lexer, out: &mut Vec<String>) -> MeshResult<()> {
    let one = |lx: &mut Lexer, out: &mut Vec<String>| -> MeshResult<()> {
        match lx.next()? {
            Tok::Str(s) => {
                out.push(String::from_utf8_lossy(s).into_owned());
                Ok(())
            }
            other => Err(lx.syntax(format!(
                "expected a token string, found {}",
                describe(other)
            ))),
        }
    };
    match lx.peek()? {
        Tok::Ident(b"None") => {
            lx.next()?;
            Ok(())
        }
        Tok::Punct(b'[') => {
            lx.next()?;
            loop {
                if lx.eat(b']')? {
                    return Ok(());
                }
                one(lx, out)?;
                if !lx.eat(b',')? {
                    return lx.expect_punct(b']', "to close the array");
                }
            }
        }
        _ => one(lx, out),
    }
}

/// Reads an attribute value with `read`, or for `.timeSamples` the value at the earliest time
/// code (the others are skipped). Returns the number of time samples (0 for a plain value) and
/// where the value read starts (position, line).
fn value_or_first_sample(
    lx: &mut Lexer,
    time_sampled: bool,
    mut read: impl FnMut(&mut Lexer) -> MeshResult<()>,
) -> MeshResult<(usize, (usize, usize))> {
    lx.skip_ws();
    let mut start = (lx.pos, lx.line);
    if !time_sampled {
        read(lx)?;
        return Ok((0, start));
    }
    lx.expect_punct(b'{', "to open the time samples")?;
    let mut best = f64::INFINITY;
    let mut count = 0;
    loop {
        if lx.eat(b'}')? {
            return Ok((count, start));
        }
        let t: f64 = number(lx)?;
        lx.expect_punct(b':', "after a time code")?;
        if t < best {
            best = t;
            lx.skip_ws();
            start = (lx.pos, lx.line);
            read(lx)?;
        } else {
            lx.skip_value()?;
        }
        count += 1;
        if !lx.eat(b',')? {
            lx.expect_punct(b'}', "to close the time samples")?;
            return Ok((count, start));
        }
    }
}

/// The line of number `k` of a value starting at `start` (position, line).
fn line_of_number(lx: &Lexer, start: (usize, usize), k: usize) -> usize {
    let mut l = Lexer {
        d: lx.d,
        pos: start.0,
        line: start.1,
        file: lx.file,
        tok_line: start.1,
        single: false,
    };
    let mut seen = 0;
    loop {
        match l.next() {
            Ok(Tok::Num(_)) => {
                if seen == k {
                    return l.tok_line;
                }
                seen += 1;
            }
            Ok(Tok::Eof) | Err(_) => return start.1,
            Ok(_) => {}
        }
    }
}

// ----------------------------------------------------------------------------------------------
// Prims.

/// The kinds of prim this reader reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Geom {
    Mesh,
    TetMesh,
    Curves,
}

/// Prims may nest this deep (deeper is refused: paths stay short to walk).
const MAX_DEPTH: usize = 256;
/// At most this many prims per file (Supple reads mesh files, not whole scenes); with
/// [`MAX_DEPTH`] this bounds the memory a malicious layer can make the reader use.
const MAX_PRIMS: usize = 1_000_000;

/// One prim as parsed: its name, type, parent, and (boxed, only when present) its geometry
/// attributes and transform ops. Paths are built on demand ([`path_of`]).
#[derive(Debug, Default)]
struct Prim {
    name: String,
    ty: String,
    line: usize,
    parent: Option<usize>,
    depth: usize,
    /// A `def` prim not under a `class` and not deactivated.
    concrete: bool,
    geo: Option<Box<GeomAttrs>>,
    xform: Option<Box<Xform>>,
}

/// The attributes of a `Mesh`, `TetMesh` or `BasisCurves` prim that this reader uses.
#[derive(Debug, Default)]
struct GeomAttrs {
    points: Option<Numbers<f64>>,
    points_samples: usize,
    face_counts: Option<Numbers<i64>>,
    face_indices: Option<Numbers<i64>>,
    hole_indices: Option<Numbers<i64>>,
    tet_indices: Option<Numbers<i64>>,
    surface_faces: Option<Numbers<i64>>,
    curve_counts: Option<Numbers<i64>>,
    orientation: Option<String>,
    curve_type: Option<String>,
    curve_wrap: Option<String>,
}

/// A prim's `xformOpOrder` (with its line) and `xformOp:...` values (name, values, line).
#[derive(Debug, Default)]
struct Xform {
    order: Option<(Vec<String>, usize)>,
    ops: Vec<(String, Vec<f64>, usize)>,
}

impl Prim {
    fn geo_mut(&mut self) -> &mut GeomAttrs {
        self.geo.get_or_insert_with(Box::default)
    }

    fn xform_mut(&mut self) -> &mut Xform {
        self.xform.get_or_insert_with(Box::default)
    }

    fn geom(&self) -> Option<Geom> {
        match self.ty.as_str() {
            "Mesh" => Some(Geom::Mesh),
            "TetMesh" => Some(Geom::TetMesh),
            "BasisCurves" => Some(Geom::Curves),
            _ => None,
        }
    }
}

/// Layer-level facts gathered while parsing.
#[derive(Debug, Default)]
struct Layer {
    meters_per_unit: Option<(f64, usize)>,
    up_axis: Option<String>,
    /// Composition arcs found (`references`, line), reported as not followed.
    arcs: Vec<(&'static str, usize)>,
    /// Prims with `active = false`.
    deactivated: Vec<usize>,
}

/// The full path of prim `i` (`/World/body`).
fn path_of(prims: &[Prim], i: usize) -> String {
    let mut names = Vec::new();
    let mut cur = Some(i);
    while let Some(k) = cur {
        names.push(prims[k].name.as_str());
        cur = prims[k].parent;
    }
    names.iter().rev().fold(String::new(), |mut s, n| {
        s.push('/');
        s.push_str(n);
        s
    })
}

/// `s` for a one-line message: control characters (a name may hold a newline) escaped.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Prim `i`'s path for messages: one line, at most about 120 characters, elided in the middle.
fn shown_path(prims: &[Prim], i: usize) -> String {
    let p = esc(&path_of(prims, i));
    if p.chars().count() <= 120 {
        return p;
    }
    let head: String = p.chars().take(40).collect();
    let tail: Vec<char> = p.chars().rev().take(70).collect();
    format!("{head}...{}", tail.iter().rev().collect::<String>())
}

/// True when prim `i` is the prim at path `sel` (components) or under it.
fn is_under(prims: &[Prim], i: usize, sel: &[&str]) -> bool {
    let mut chain = Vec::new();
    let mut cur = Some(i);
    while let Some(k) = cur {
        chain.push(prims[k].name.as_str());
        cur = prims[k].parent;
    }
    chain.reverse();
    chain.len() >= sel.len() && chain.iter().zip(sel).all(|(a, b)| a == b)
}

/// Prim or layer metadata `( ... )`: records `active = false`, composition arcs, and at layer
/// level `metersPerUnit` and `upAxis`; skips everything else.
fn metadata(lx: &mut Lexer, layer: &mut Layer, at_layer: bool) -> MeshResult<bool> {
    let mut active = true;
    lx.expect_punct(b'(', "to open metadata")?;
    loop {
        let tok = lx.next()?;
        let key = match tok {
            Tok::Punct(b')') => return Ok(active),
            Tok::Punct(b';') | Tok::Str(_) => continue,
            Tok::Ident(k @ (b"add" | b"delete" | b"prepend" | b"append" | b"reorder")) => {
                match lx.next()? {
                    Tok::Ident(k2) => k2,
                    _ => k,
                }
            }
            Tok::Ident(k) => k,
            Tok::Eof => return Err(lx.truncated("')' closing the metadata")),
            other => {
                return Err(lx.syntax(format!(
                    "expected a metadata name, found {}",
                    describe(other)
                )))
            }
        };
        let line = lx.tok_line;
        lx.expect_punct(b'=', "after a metadata name")?;
        match key {
            b"metersPerUnit" if at_layer => {
                layer.meters_per_unit = Some((number(lx)?, line));
            }
            b"upAxis" if at_layer => {
                let mut v = Vec::new();
                tokens(lx, &mut v)?;
                layer.up_axis = v.pop();
            }
            b"active" => {
                active = !matches!(lx.next()?, Tok::Ident(b"false") | Tok::Num(b"0"));
            }
            b"references" | b"payload" | b"subLayers" | b"inherits" | b"specializes"
            | b"variants" => {
                let kind = match key {
                    b"references" => "references",
                    b"payload" => "payload",
                    b"subLayers" => "subLayers",
                    b"inherits" => "inherits",
                    b"specializes" => "specializes",
                    _ => "variants",
                };
                layer.arcs.push((kind, line));
                lx.skip_value()?;
            }
            _ => lx.skip_value()?,
        }
    }
}

/// Reads one attribute (after its type and name) of prim `p` into it, or skips it.
fn attribute(lx: &mut Lexer, p: &mut Prim, name: &[u8], line: usize) -> MeshResult<()> {
    let (base, time_sampled) = match name.strip_suffix(b".timeSamples") {
        Some(b) => (b, true),
        None => (name, false),
    };
    let ints = |lx: &mut Lexer, arity: usize| -> MeshResult<Option<Numbers<i64>>> {
        let mut values = Vec::new();
        let mut have = false;
        let (_, start) = value_or_first_sample(lx, time_sampled, |lx| {
            values.clear();
            have = numbers(lx, arity, &mut values)?;
            Ok(())
        })?;
        Ok(have.then_some(Numbers {
            values,
            start,
            line,
        }))
    };
    let token = |lx: &mut Lexer| -> MeshResult<Option<String>> {
        let mut v = Vec::new();
        value_or_first_sample(lx, time_sampled, |lx| {
            v.clear();
            tokens(lx, &mut v)
        })?;
        Ok(v.pop())
    };
    match (p.geom(), base) {
        (Some(_), b"points") => {
            let mut values = Vec::new();
            let mut have = false;
            let (samples, start) = value_or_first_sample(lx, time_sampled, |lx| {
                values.clear();
                have = numbers(lx, 3, &mut values)?;
                Ok(())
            })?;
            let g = p.geo_mut();
            g.points = have.then_some(Numbers {
                values,
                start,
                line,
            });
            g.points_samples = samples;
        }
        (Some(Geom::Mesh), b"faceVertexCounts") => p.geo_mut().face_counts = ints(lx, 1)?,
        (Some(Geom::Mesh), b"faceVertexIndices") => p.geo_mut().face_indices = ints(lx, 1)?,
        (Some(Geom::Mesh), b"holeIndices") => p.geo_mut().hole_indices = ints(lx, 1)?,
        (Some(Geom::TetMesh), b"tetVertexIndices") => p.geo_mut().tet_indices = ints(lx, 4)?,
        (Some(Geom::TetMesh), b"surfaceFaceVertexIndices") => {
            p.geo_mut().surface_faces = ints(lx, 3)?
        }
        (Some(Geom::Curves), b"curveVertexCounts") => p.geo_mut().curve_counts = ints(lx, 1)?,
        (Some(_), b"orientation") => p.geo_mut().orientation = token(lx)?,
        (Some(Geom::Curves), b"type") => p.geo_mut().curve_type = token(lx)?,
        (Some(Geom::Curves), b"wrap") => p.geo_mut().curve_wrap = token(lx)?,
        (_, b"xformOpOrder") => {
            let mut v = Vec::new();
            value_or_first_sample(lx, time_sampled, |lx| {
                v.clear();
                tokens(lx, &mut v)
            })?;
            p.xform_mut().order = Some((v, line));
        }
        (_, op) if op.starts_with(b"xformOp:") => {
            let mut values = Vec::new();
            value_or_first_sample(lx, time_sampled, |lx| {
                values.clear();
                if lx.peek()? == Tok::Ident(b"None") {
                    return lx.next().map(|_| ());
                }
                flat_numbers(lx, &mut values)
            })?;
            p.xform_mut()
                .ops
                .push((String::from_utf8_lossy(op).into_owned(), values, line));
        }
        _ => lx.skip_value()?,
    }
    Ok(())
}

/// Reads every number of one value (a scalar, a tuple, a tuple of tuples), flattened.
fn flat_numbers(lx: &mut Lexer, out: &mut Vec<f64>) -> MeshResult<()> {
    let mut depth = 0usize;
    loop {
        match lx.next()? {
            Tok::Punct(b'(' | b'[') => depth += 1,
            Tok::Punct(b')' | b']') => depth = depth.saturating_sub(1),
            Tok::Punct(b',') => {}
            Tok::Num(t) => out.push(f64::parse(lx, t)?),
            Tok::Eof => return Err(lx.truncated("a value")),
            other => return Err(lx.syntax(format!("expected a number, found {}", describe(other)))),
        }
        if depth == 0 {
            return Ok(());
        }
    }
}

/// Parses the whole layer into its prims.
fn parse_prims(lx: &mut Lexer, layer: &mut Layer) -> MeshResult<Vec<Prim>> {
    if lx.peek()? == Tok::Punct(b'(') {
        metadata(lx, layer, true)?;
    }
    let mut prims: Vec<Prim> = Vec::new();
    // Open prims: index into `prims`, and whether it is under a `class`.
    let mut open: Vec<(usize, bool)> = Vec::new();
    loop {
        let tok = lx.next()?;
        let line = lx.tok_line;
        match tok {
            Tok::Eof => {
                if let Some(&(i, _)) = open.last() {
                    return Err(MeshError::Truncated {
                        loc: Location::line(lx.file, prims[i].line),
                        msg: format!(
                            "the file ends inside prim {} (no closing '}}')",
                            shown_path(&prims, i)
                        ),
                    });
                }
                return Ok(prims);
            }
            Tok::Punct(b'}') if !open.is_empty() => {
                open.pop();
            }
            Tok::Punct(b';') => {}
            Tok::Ident(spec @ (b"def" | b"over" | b"class")) => {
                let mut ty = String::new();
                let name = match lx.next()? {
                    Tok::Str(n) => n,
                    Tok::Ident(t) => {
                        ty = String::from_utf8_lossy(t).into_owned();
                        match lx.next()? {
                            Tok::Str(n) => n,
                            other => {
                                return Err(lx.syntax(format!(
                                    "expected the prim's name in quotes, found {}",
                                    describe(other)
                                )))
                            }
                        }
                    }
                    other => {
                        return Err(lx.syntax(format!(
                            "expected a prim type or name after '{}', found {}",
                            show(spec),
                            describe(other)
                        )))
                    }
                };
                let (parent, under_class) = match open.last() {
                    Some(&(i, c)) => (Some(i), c),
                    None => (None, false),
                };
                let mut active = true;
                if lx.peek()? == Tok::Punct(b'(') {
                    active = metadata(lx, layer, false)?;
                }
                lx.expect_punct(b'{', "to open the prim's body")?;
                let depth = parent.map_or(0, |i| prims[i].depth + 1);
                if depth >= MAX_DEPTH || prims.len() >= MAX_PRIMS {
                    return Err(MeshError::Unsupported {
                        loc: Location::line(lx.file, line),
                        msg: format!(
                            "more than {MAX_PRIMS} prims or prims nested more than {MAX_DEPTH} deep (Supple reads mesh files, not whole scenes)"
                        ),
                    });
                }
                let parent_concrete = parent.is_none_or(|i| prims[i].concrete);
                if !active {
                    layer.deactivated.push(prims.len());
                }
                let is_class = spec == b"class";
                prims.push(Prim {
                    name: String::from_utf8_lossy(name).into_owned(),
                    ty,
                    line,
                    parent,
                    depth,
                    concrete: spec == b"def"
                        && !is_class
                        && !under_class
                        && active
                        && parent_concrete,
                    ..Default::default()
                });
                open.push((prims.len() - 1, under_class || is_class));
            }
            _ if open.is_empty() => {
                return Err(lx.syntax(format!(
                    "expected 'def', 'over' or 'class' at the top level, found {}",
                    describe(tok)
                )))
            }
            Tok::Ident(b"variantSet") => {
                // variantSet "name" = { "a" { ... } ... }: not read.
                lx.next()?;
                lx.expect_punct(b'=', "after the variant set's name")?;
                lx.skip_value()?;
                layer.arcs.push(("variantSet", line));
            }
            Tok::Ident(_) => {
                let Some(&(i, _)) = open.last() else {
                    continue;
                };
                property(lx, tok, &mut prims[i])?;
            }
            other => {
                return Err(lx.syntax(format!(
                    "expected a property or a prim, found {}",
                    describe(other)
                )))
            }
        }
    }
}

/// Parses one property of prim `p` starting with identifier `first`: qualifiers, a type (with
/// `[]` for arrays) or `rel`, the name, an optional `= value` and optional metadata.
fn property<'a>(lx: &mut Lexer<'a>, first: Tok<'a>, p: &mut Prim) -> MeshResult<()> {
    let mut tok = first;
    let line = lx.tok_line;
    // Qualifiers.
    while let Tok::Ident(
        b"custom" | b"uniform" | b"varying" | b"config" | b"add" | b"delete" | b"prepend"
        | b"append",
    ) = tok
    {
        tok = lx.next()?;
    }
    if tok == Tok::Ident(b"reorder") {
        // reorder nameChildren = [...] / reorder properties = [...]
        lx.next()?;
        lx.expect_punct(b'=', "after 'reorder ...'")?;
        return lx.skip_value();
    }
    let Tok::Ident(ty) = tok else {
        return Err(lx.syntax(format!("expected a property type, found {}", describe(tok))));
    };
    if ty != b"rel" && lx.eat(b'[')? {
        lx.expect_punct(b']', "after '[' in an array type")?;
    }
    let name = match lx.next()? {
        Tok::Ident(n) => n,
        other => {
            return Err(lx.syntax(format!(
                "expected the name of a '{}' property, found {}",
                show(ty),
                describe(other)
            )))
        }
    };
    if lx.eat(b'=')? {
        if ty == b"rel" || name.ends_with(b".connect") {
            lx.skip_value()?;
        } else {
            // float3, point3f, quatf, half3...: single (or lower) precision reals.
            lx.single = ty.ends_with(b"f")
                || ty.ends_with(b"h")
                || ty.starts_with(b"float")
                || ty.starts_with(b"half");
            let r = attribute(lx, p, name, line);
            lx.single = false;
            r?;
        }
    }
    if lx.peek()? == Tok::Punct(b'(') {
        lx.skip_value()?;
    }
    Ok(())
}

// ----------------------------------------------------------------------------------------------
// Transforms.

/// An affine map `p -> m p + t` (column vectors).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Affine {
    m: [[f64; 3]; 3],
    t: [f64; 3],
}

impl Affine {
    const IDENTITY: Affine = Affine {
        m: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        t: [0.0; 3],
    };

    /// `self ∘ o`: the map that applies `o` first, then `self`.
    fn compose(self, o: &Affine) -> Affine {
        let row = |i: usize| self.m[i];
        let m = [0, 1, 2].map(|i| [0, 1, 2].map(|j| (0..3).map(|k| row(i)[k] * o.m[k][j]).sum()));
        let t = [0, 1, 2].map(|i| self.t[i] + (0..3).map(|k| row(i)[k] * o.t[k]).sum::<f64>());
        Affine { m, t }
    }

    fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        let mut out = self.t;
        for (i, o) in out.iter_mut().enumerate() {
            *o += self.m[i][0] * p[0] + self.m[i][1] * p[1] + self.m[i][2] * p[2];
        }
        out
    }

    fn inverse(&self) -> Option<Affine> {
        let m = &self.m;
        let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
        let scale = m.iter().flatten().fold(0.0f64, |a, &b| a.max(b.abs()));
        if !(det.abs() > 1e-300 && det.abs() > 1e-12 * scale * scale * scale) {
            return None;
        }
        let mut inv = [[0.0; 3]; 3];
        for (i, row) in inv.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                let (a, b) = ((j + 1) % 3, (j + 2) % 3);
                let (c, d) = ((i + 1) % 3, (i + 2) % 3);
                *v = (m[a][c] * m[b][d] - m[a][d] * m[b][c]) / det;
            }
        }
        let t = [0, 1, 2].map(|i| -(0..3).map(|k| inv[i][k] * self.t[k]).sum::<f64>());
        Some(Affine { m: inv, t })
    }

    fn rotation(axis: usize, degrees: f64) -> Affine {
        let (s, c) = degrees.to_radians().sin_cos();
        let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
        let mut r = Affine::IDENTITY;
        r.m[a][a] = c;
        r.m[a][b] = -s;
        r.m[b][a] = s;
        r.m[b][b] = c;
        r
    }
}

/// The local transform of prim `p` from its `xformOpOrder`; `Ok((map, reset))` where `reset`
/// says the parents' transforms do not apply (`!resetXformStack!`).
fn local_transform(name: &str, prims: &[Prim], i: usize) -> MeshResult<(Affine, bool)> {
    let Some(Xform {
        order: Some((order, order_line)),
        ops,
    }) = prims[i].xform.as_deref()
    else {
        return Ok((Affine::IDENTITY, false));
    };
    let mut total = Affine::IDENTITY;
    let mut reset = false;
    for entry in order {
        if entry == "!resetXformStack!" {
            total = Affine::IDENTITY;
            reset = true;
            continue;
        }
        let (invert, op_name) = match entry.strip_prefix("!invert!") {
            Some(n) => (true, n),
            None => (false, entry.as_str()),
        };
        let shown = esc(op_name);
        let unsupported = |line: usize, what: String| MeshError::Unsupported {
            loc: Location::line(name, line),
            msg: format!("prim {}: {what}", shown_path(prims, i)),
        };
        let (vals, line) = ops
            .iter()
            .rev()
            .find(|(n, _, _)| n == op_name)
            .map(|(_, v, l)| (v, *l))
            .ok_or_else(|| {
                unsupported(
                    *order_line,
                    format!("xformOpOrder names {shown}, which the prim does not define"),
                )
            })?;
        let kind = op_name.split(':').nth(1).unwrap_or("");
        let want = |n: usize| -> MeshResult<()> {
            if vals.len() == n {
                Ok(())
            } else {
                Err(unsupported(
                    line,
                    format!("{shown} has {} values, {n} expected", vals.len()),
                ))
            }
        };
        let mut op = Affine::IDENTITY;
        match kind {
            "translate" => {
                want(3)?;
                op.t = [vals[0], vals[1], vals[2]];
            }
            "scale" => {
                want(3)?;
                for (k, &v) in vals.iter().enumerate() {
                    op.m[k][k] = v;
                }
            }
            "rotateX" | "rotateY" | "rotateZ" => {
                want(1)?;
                op = Affine::rotation(usize::from(kind.as_bytes()[6] - b'X'), vals[0]);
            }
            k if k.len() == 9 && k.starts_with("rotate") => {
                // rotateXYZ etc.: about the first axis first.
                want(3)?;
                for (i, a) in k.as_bytes()[6..].iter().enumerate() {
                    if !(b'X'..=b'Z').contains(a) {
                        return Err(unsupported(line, format!("unknown transform op {shown}")));
                    }
                    op = Affine::rotation(usize::from(a - b'X'), vals[i]).compose(&op);
                }
            }
            "orient" => {
                want(4)?;
                let n = vals.iter().map(|v| v * v).sum::<f64>().sqrt();
                if n == 0.0 {
                    return Err(unsupported(line, format!("{shown} is a zero quaternion")));
                }
                let [w, x, y, z] = [vals[0] / n, vals[1] / n, vals[2] / n, vals[3] / n];
                op.m = [
                    [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
                    [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
                    [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
                ];
            }
            "transform" => {
                want(16)?;
                // USD matrices act on row vectors: rows 0..3 are the images of the axes, row 3
                // the translation.
                for i in 0..3 {
                    for j in 0..3 {
                        op.m[i][j] = vals[j * 4 + i];
                    }
                    op.t[i] = vals[12 + i];
                }
                if vals[3] != 0.0 || vals[7] != 0.0 || vals[11] != 0.0 || vals[15] != 1.0 {
                    return Err(unsupported(line, format!("{shown} is not an affine matrix")));
                }
            }
            _ => {
                return Err(unsupported(
                    line,
                    format!("transform op {shown} is not supported (translate, scale, rotateX/Y/Z, rotateXYZ..., orient and transform are)"),
                ))
            }
        }
        if invert {
            op = op
                .inverse()
                .ok_or_else(|| unsupported(line, format!("{shown} cannot be inverted")))?;
        }
        // The first op in the order is the outermost.
        total = total.compose(&op);
    }
    Ok((total, reset))
}

/// The transform from prim `i`'s space to the layer's, ancestors included.
fn world_transform(name: &str, prims: &[Prim], i: usize) -> MeshResult<Affine> {
    let mut chain = Vec::new();
    let mut cur = Some(i);
    while let Some(k) = cur {
        let (local, reset) = local_transform(name, prims, k)?;
        chain.push(local);
        if reset {
            break;
        }
        cur = prims[k].parent;
    }
    Ok(chain
        .iter()
        .rev()
        .fold(Affine::IDENTITY, |acc, l| acc.compose(l)))
}

// ----------------------------------------------------------------------------------------------
// Assembling the mesh.

/// One geometry prim being added: its attributes, its path for messages and its transform.
struct Source<'p> {
    g: &'p GeomAttrs,
    ty: &'p str,
    path: String,
    line: usize,
    world: Affine,
}

/// Prims that warrant a warning, by reason (their indices, and for time samples the count).
#[derive(Default)]
struct Notes {
    time_sampled: Vec<(usize, usize)>,
    polygons: Vec<usize>,
    holes: Vec<usize>,
    left_handed: Vec<usize>,
    not_linear: Vec<usize>,
}

/// Checks entry `k` of index array `arr` against `n` points.
fn check_index(
    lx: &Lexer,
    s: &Source,
    arr: &Numbers<i64>,
    attr: &str,
    k: usize,
    n: usize,
) -> MeshResult<u32> {
    let v = arr.values[k];
    super::index_in(v, 0, n).ok_or_else(|| MeshError::IndexOutOfRange {
        loc: Location::line(lx.file, line_of_number(lx, arr.start, k)),
        msg: format!(
            "{} {}: {attr}[{k}] = {v}, but the prim has {n} points (indices 0..={})",
            s.ty,
            s.path,
            n.saturating_sub(1)
        ),
    })
}

fn missing(lx: &Lexer, s: &Source, attr: &str) -> MeshError {
    MeshError::Truncated {
        loc: Location::line(lx.file, s.line),
        msg: format!("{} {} has no {attr}", s.ty, s.path),
    }
}

/// Appends the prim's points (transformed) to `raw`; returns the index of the first and the
/// count.
fn add_points(lx: &Lexer, s: &Source, raw: &mut Raw) -> MeshResult<(u32, usize)> {
    let pts =
        s.g.points
            .as_ref()
            .ok_or_else(|| missing(lx, s, "points"))?;
    let base = raw.positions.len();
    let n = pts.values.len() / 3;
    if base.checked_add(n).is_none_or(|t| t > u32::MAX as usize) {
        return Err(MeshError::Unsupported {
            loc: Location::line(lx.file, pts.line),
            msg: "more than 2^32 points in all".into(),
        });
    }
    raw.positions.extend(
        pts.values
            .chunks_exact(3)
            .map(|c| s.world.apply([c[0], c[1], c[2]])),
    );
    Ok((base as u32, n))
}

fn left_handed(g: &GeomAttrs) -> bool {
    g.orientation.as_deref() == Some("leftHanded")
}

/// Adds a `Mesh` prim's faces (fan-triangulated, holes left out, left-handed ones reversed).
fn add_mesh(lx: &Lexer, s: &Source, raw: &mut Raw, notes: &mut Notes, i: usize) -> MeshResult<()> {
    let (base, n) = add_points(lx, s, raw)?;
    let counts =
        s.g.face_counts
            .as_ref()
            .ok_or_else(|| missing(lx, s, "faceVertexCounts"))?;
    let idx =
        s.g.face_indices
            .as_ref()
            .ok_or_else(|| missing(lx, s, "faceVertexIndices"))?;
    let holes: std::collections::HashSet<i64> =
        s.g.hole_indices
            .as_ref()
            .map(|h| h.values.iter().copied().collect())
            .unwrap_or_default();
    let flip = left_handed(s.g);
    let mut k = 0usize;
    let mut polygons = false;
    let mut poly = Vec::new();
    for (f, &c) in counts.values.iter().enumerate() {
        if c < 3 {
            return Err(MeshError::Syntax {
                loc: Location::line(lx.file, line_of_number(lx, counts.start, f)),
                msg: format!(
                    "Mesh {}: face {f} has {c} vertices (at least 3 needed)",
                    s.path
                ),
            });
        }
        let c = c as usize;
        if k.checked_add(c).is_none_or(|e| e > idx.values.len()) {
            return Err(MeshError::CountMismatch {
                loc: Location::line(lx.file, counts.line),
                msg: format!(
                    "Mesh {}: faceVertexCounts need more than the {} faceVertexIndices",
                    s.path,
                    idx.values.len()
                ),
            });
        }
        poly.clear();
        for j in k..k + c {
            poly.push(base + check_index(lx, s, idx, "faceVertexIndices", j, n)?);
        }
        k += c;
        if holes.contains(&(f as i64)) {
            continue;
        }
        polygons |= c > 3;
        for j in 1..c - 1 {
            let t = [poly[0], poly[j], poly[j + 1]];
            raw.triangles
                .push(if flip { [t[0], t[2], t[1]] } else { t });
        }
    }
    if k != idx.values.len() {
        return Err(MeshError::CountMismatch {
            loc: Location::line(lx.file, counts.line),
            msg: format!(
                "Mesh {}: faceVertexCounts add up to {k} but there are {} faceVertexIndices",
                s.path,
                idx.values.len()
            ),
        });
    }
    if polygons {
        notes.polygons.push(i);
    }
    if !holes.is_empty() {
        notes.holes.push(i);
    }
    if flip {
        notes.left_handed.push(i);
    }
    Ok(())
}

/// Adds a `TetMesh` prim's tets and surface faces (left-handed ones reversed).
fn add_tet_mesh(
    lx: &Lexer,
    s: &Source,
    raw: &mut Raw,
    notes: &mut Notes,
    i: usize,
) -> MeshResult<()> {
    let (base, n) = add_points(lx, s, raw)?;
    let tets =
        s.g.tet_indices
            .as_ref()
            .ok_or_else(|| missing(lx, s, "tetVertexIndices"))?;
    let flip = left_handed(s.g);
    raw.tets.reserve(tets.values.len() / 4);
    for k in (0..tets.values.len() / 4).map(|t| 4 * t) {
        let mut t = [0u32; 4];
        for (j, slot) in t.iter_mut().enumerate() {
            *slot = base + check_index(lx, s, tets, "tetVertexIndices", k + j, n)?;
        }
        if flip {
            t.swap(2, 3);
        }
        raw.tets.push(t);
    }
    if let Some(faces) = &s.g.surface_faces {
        for k in (0..faces.values.len() / 3).map(|t| 3 * t) {
            let mut t = [0u32; 3];
            for (j, slot) in t.iter_mut().enumerate() {
                *slot = base + check_index(lx, s, faces, "surfaceFaceVertexIndices", k + j, n)?;
            }
            raw.triangles
                .push(if flip { [t[0], t[2], t[1]] } else { t });
        }
    }
    if flip {
        notes.left_handed.push(i);
    }
    Ok(())
}

/// Adds a `BasisCurves` prim's curves as polylines over its points (periodic ones closed).
fn add_curves(
    lx: &Lexer,
    s: &Source,
    raw: &mut Raw,
    notes: &mut Notes,
    i: usize,
) -> MeshResult<()> {
    let (base, n) = add_points(lx, s, raw)?;
    let counts =
        s.g.curve_counts
            .as_ref()
            .ok_or_else(|| missing(lx, s, "curveVertexCounts"))?;
    let periodic = s.g.curve_wrap.as_deref() == Some("periodic");
    let mut k = 0usize;
    for (c_i, &c) in counts.values.iter().enumerate() {
        if c < 2 || k.checked_add(c as usize).is_none_or(|e| e > n) {
            return Err(MeshError::CountMismatch {
                loc: Location::line(lx.file, line_of_number(lx, counts.start, c_i)),
                msg: format!(
                    "BasisCurves {}: curve {c_i} has {c} vertices (at least 2, and {n} points in all)",
                    s.path
                ),
            });
        }
        let mut line: Vec<u32> = (k..k + c as usize).map(|v| base + v as u32).collect();
        if periodic {
            line.push(base + k as u32);
        }
        raw.polylines.push(line);
        k += c as usize;
    }
    if k != n {
        return Err(MeshError::CountMismatch {
            loc: Location::line(lx.file, counts.line),
            msg: format!(
                "BasisCurves {}: curveVertexCounts add up to {k} but there are {n} points",
                s.path
            ),
        });
    }
    if s.g.curve_type.as_deref() != Some("linear") {
        notes.not_linear.push(i);
    }
    Ok(())
}

/// A short list of prims for a warning: the first three paths and how many more.
fn list_prims(prims: &[Prim], idx: &[usize], with_type: bool) -> String {
    let mut s = idx
        .iter()
        .take(3)
        .map(|&i| {
            if with_type {
                format!("{} {}", prims[i].ty, shown_path(prims, i))
            } else {
                shown_path(prims, i)
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    if idx.len() > 3 {
        s.push_str(&format!(" and {} more", idx.len() - 3));
    }
    s
}

/// The warnings collected in `notes`.
fn note_warnings(prims: &[Prim], notes: &Notes, raw: &mut Raw) {
    if let Some(&(_, samples)) = notes.time_sampled.first() {
        let idx: Vec<usize> = notes.time_sampled.iter().map(|&(i, _)| i).collect();
        raw.warnings.push(format!(
            "time-sampled points ({samples} time samples in {}): the earliest sample is read",
            list_prims(prims, &idx, false)
        ));
    }
    let mut say = |idx: &[usize], what: &str| {
        if !idx.is_empty() {
            raw.warnings
                .push(format!("{what}: {}", list_prims(prims, idx, false)));
        }
    };
    say(
        &notes.polygons,
        "polygons with more than 3 vertices fan-triangulated",
    );
    say(&notes.holes, "faces listed in holeIndices left out");
    say(
        &notes.left_handed,
        "leftHanded orientation, elements reversed to Supple's counter-clockwise outward",
    );
    say(
        &notes.not_linear,
        "BasisCurves that are not linear, read as polylines through their control points",
    );
}

/// Parses a `.usda` layer: all geometry prims merged (see the module documentation), or, with
/// `select`, the prim at that path and the geometry prims under it.
pub(crate) fn parse_select(name: &str, data: &[u8], select: Option<&str>) -> MeshResult<Raw> {
    if data.starts_with(b"PXR-USDC") {
        return Err(MeshError::Unsupported {
            loc: Location::file(name),
            msg: "binary USD crate file: Supple reads USD text layers; convert it with `usdcat IN -o OUT.usda`".into(),
        });
    }
    if data.starts_with(b"PK\x03\x04") {
        return Err(MeshError::Unsupported {
            loc: Location::file(name),
            msg: "USDZ package: Supple reads USD text layers; unpack it and convert the layer with `usdcat IN -o OUT.usda`".into(),
        });
    }
    let header_end = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let header = &data[..header_end];
    if !header.starts_with(b"#usda ") {
        return Err(MeshError::Unsupported {
            loc: Location::line(name, 1),
            msg: format!(
                "not a USD text layer: the first line is '{}', not '#usda 1.0'",
                show(header)
            ),
        });
    }
    let mut lx = Lexer {
        d: data,
        pos: header_end,
        line: 1,
        file: name,
        tok_line: 1,
        single: false,
    };
    let mut layer = Layer::default();
    let prims = parse_prims(&mut lx, &mut layer)?;
    let sel: Option<Vec<&str>> = select.map(|s| s.split('/').filter(|c| !c.is_empty()).collect());
    let selected = |i: usize| sel.as_ref().is_none_or(|c| is_under(&prims, i, c));
    if let Some(s) = select {
        if !(0..prims.len()).any(selected) {
            let all: Vec<usize> = (0..prims.len()).collect();
            return Err(MeshError::Unsupported {
                loc: Location::file(name),
                msg: format!(
                    "no prim {} (prims: {})",
                    esc(s),
                    list_prims(&prims, &all, false)
                ),
            });
        }
    }
    let chosen: Vec<usize> = (0..prims.len())
        .filter(|&i| prims[i].concrete && selected(i))
        .collect();
    let of = |g: Geom| -> Vec<usize> {
        chosen
            .iter()
            .copied()
            .filter(|&i| prims[i].geom() == Some(g))
            .collect()
    };
    let (tet_prims, mesh_prims, curve_prims) =
        (of(Geom::TetMesh), of(Geom::Mesh), of(Geom::Curves));
    let other: Vec<usize> = chosen
        .iter()
        .copied()
        .filter(|&i| prims[i].geom().is_none() && is_gprim(&prims[i].ty))
        .collect();
    if tet_prims.is_empty() && mesh_prims.is_empty() && curve_prims.is_empty() {
        let what = if other.is_empty() {
            String::new()
        } else {
            format!(" (found {})", list_prims(&prims, &other, true))
        };
        return Err(MeshError::Unsupported {
            loc: Location::file(name),
            msg: format!("no Mesh, TetMesh or BasisCurves prim{what}"),
        });
    }
    let mut raw = Raw {
        format: "usda".into(),
        ..Default::default()
    };
    let mut notes = Notes::default();
    let empty = GeomAttrs::default();
    let source = |i: usize| -> MeshResult<Source> {
        Ok(Source {
            g: prims[i].geo.as_deref().unwrap_or(&empty),
            ty: &prims[i].ty,
            path: shown_path(&prims, i),
            line: prims[i].line,
            world: world_transform(name, &prims, i)?,
        })
    };
    let read = if tet_prims.is_empty() {
        raw.surface_only = true;
        [mesh_prims.clone(), curve_prims.clone()].concat()
    } else {
        tet_prims.clone()
    };
    for &i in &read {
        let s = source(i)?;
        match prims[i].geom() {
            Some(Geom::TetMesh) => add_tet_mesh(&lx, &s, &mut raw, &mut notes, i)?,
            Some(Geom::Mesh) => add_mesh(&lx, &s, &mut raw, &mut notes, i)?,
            _ => add_curves(&lx, &s, &mut raw, &mut notes, i)?,
        }
        if s.g.points_samples > 1 {
            notes.time_sampled.push((i, s.g.points_samples));
        }
    }
    note_warnings(&prims, &notes, &mut raw);
    if !tet_prims.is_empty() {
        let left = [mesh_prims, curve_prims].concat();
        if !left.is_empty() {
            raw.ignored += left.len();
            raw.warnings.push(format!(
                "{} Mesh/BasisCurves prims not read ({}): the file has TetMesh prims (Supple writes a TetMesh's surface as a Mesh beside it); select a prim by its path to read it",
                left.len(),
                list_prims(&prims, &left, false)
            ));
        }
    }
    if !other.is_empty() {
        raw.ignored += other.len();
        raw.warnings.push(format!(
            "{} prims of other types not read: {}",
            other.len(),
            list_prims(&prims, &other, true)
        ));
    }
    layer_warnings(name, &prims, &layer, &mut raw)?;
    Ok(raw)
}

/// Geometric prim types other than the three read here (reported when skipped).
fn is_gprim(ty: &str) -> bool {
    matches!(
        ty,
        "Sphere"
            | "Cube"
            | "Cylinder"
            | "Capsule"
            | "Cone"
            | "Plane"
            | "Points"
            | "NurbsPatch"
            | "NurbsCurves"
            | "HermiteCurves"
            | "PointInstancer"
            | "Cylinder_1"
            | "Capsule_1"
    )
}

/// Applies `metersPerUnit` and reports the layer's up axis, composition arcs and deactivated
/// prims.
fn layer_warnings(name: &str, prims: &[Prim], layer: &Layer, raw: &mut Raw) -> MeshResult<()> {
    if let Some((mpu, line)) = layer.meters_per_unit {
        if !(mpu > 0.0 && mpu.is_finite()) {
            return Err(MeshError::Syntax {
                loc: Location::line(name, line),
                msg: format!("metersPerUnit = {mpu} (must be positive)"),
            });
        }
        if mpu != 1.0 {
            for p in &mut raw.positions {
                *p = p.map(|c| c * mpu);
            }
            raw.warnings
                .push(format!("metersPerUnit = {mpu}: points scaled to metres"));
        }
    }
    if let Some(up) = &layer.up_axis {
        if up != "Z" {
            raw.warnings.push(format!(
                "upAxis is {}: Supple's scenes are Z-up; the mesh is not rotated",
                esc(up)
            ));
        }
    }
    if !layer.arcs.is_empty() {
        let mut arcs: Vec<String> = layer
            .arcs
            .iter()
            .take(3)
            .map(|(kind, line)| format!("{kind} at line {line}"))
            .collect();
        if layer.arcs.len() > 3 {
            arcs.push(format!("{} more", layer.arcs.len() - 3));
        }
        raw.warnings.push(format!(
            "composition not followed ({}): only what this file defines is read",
            arcs.join(", ")
        ));
    }
    if !layer.deactivated.is_empty() {
        raw.warnings.push(format!(
            "inactive prims not read: {}",
            list_prims(prims, &layer.deactivated, false)
        ));
    }
    Ok(())
}

/// Parses a `.usda` layer, merging all its geometry prims.
pub(crate) fn parse(name: &str, data: &[u8]) -> MeshResult<Raw> {
    parse_select(name, data, None)
}
