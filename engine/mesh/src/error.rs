//! Typed import/validation errors. Every error names the file and the line (text formats) or the
//! byte offset (binary data), and renders as one line `FILE:LINE: what is wrong`. When the
//! problem is in a sibling file that the named file needs (a TetGen `.node` beside the `.ele` the
//! caller named), the line names both: `NAMED: sibling SIBLING:LINE: what is wrong`.

use std::borrow::Cow;
use std::fmt;

/// `s` with control characters (newlines...) escaped, so that it prints on one line.
fn escape_controls(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Where in a file a problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Position {
    /// The file as a whole (no better position known).
    File,
    /// A 1-based line number in a text file.
    Line(usize),
    /// A 0-based byte offset in binary data.
    Byte(usize),
}

/// A file name plus a position in it; displays as `FILE:LINE`, `FILE:byte N` or `FILE`, or as
/// `NAMED: sibling FILE:LINE` when `FILE` was read because the caller named `NAMED`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file the position refers to (the caller's path, or a sibling derived from it).
    pub file: String,
    /// Where in the file.
    pub pos: Position,
    /// The file the caller named, when `file` is a sibling read on its behalf.
    pub named: Option<String>,
}

impl Location {
    /// A location at a 1-based line.
    pub fn line(file: &str, line: usize) -> Self {
        Location {
            file: file.to_string(),
            pos: Position::Line(line),
            named: None,
        }
    }
    /// A location at a byte offset.
    pub fn byte(file: &str, offset: usize) -> Self {
        Location {
            file: file.to_string(),
            pos: Position::Byte(offset),
            named: None,
        }
    }
    /// A location naming only the file.
    pub fn file(file: &str) -> Self {
        Location {
            file: file.to_string(),
            pos: Position::File,
            named: None,
        }
    }

    /// The file the caller named: `named` when the problem is in a sibling, else `file`.
    pub fn named_file(&self) -> &str {
        self.named.as_deref().unwrap_or(&self.file)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(named) = &self.named {
            write!(f, "{}: sibling ", escape_controls(named))?;
        }
        let file = escape_controls(&self.file);
        match self.pos {
            Position::File => write!(f, "{file}"),
            Position::Line(l) => write!(f, "{file}:{l}"),
            Position::Byte(b) => write!(f, "{file}:byte {b}"),
        }
    }
}

/// Everything that can go wrong while importing or validating a mesh file.
#[derive(Debug, thiserror::Error)]
pub enum MeshError {
    /// The file could not be read (missing, permissions...).
    #[error("{loc}: cannot read file: {msg}")]
    Io {
        /// Where.
        loc: Location,
        /// The operating system's message.
        msg: String,
    },
    /// The file is empty (no bytes, or only whitespace).
    #[error("{loc}: empty file: {msg}")]
    Empty {
        /// Where.
        loc: Location,
        /// What the file should have held.
        msg: String,
    },
    /// A sibling file that the named file needs (the `.node` of a TetGen `.ele`) does not exist.
    #[error("{loc}: missing sibling file {sibling}: {msg}")]
    MissingSibling {
        /// The file the caller named.
        loc: Location,
        /// The path of the missing sibling.
        sibling: String,
        /// What the sibling holds and why no other file is used.
        msg: String,
    },
    /// The file ends before the data its headers announce.
    #[error("{loc}: truncated file: {msg}")]
    Truncated {
        /// Where.
        loc: Location,
        /// What was expected.
        msg: String,
    },
    /// A count in a header disagrees with the data that follows.
    #[error("{loc}: count mismatch: {msg}")]
    CountMismatch {
        /// Where.
        loc: Location,
        /// Which counts disagree.
        msg: String,
    },
    /// An element references a vertex that does not exist.
    #[error("{loc}: index out of range: {msg}")]
    IndexOutOfRange {
        /// Where.
        loc: Location,
        /// Which index.
        msg: String,
    },
    /// A coordinate is NaN or infinite (or overflows f64).
    #[error("{loc}: non-finite coordinate: {msg}")]
    NonFinite {
        /// Where.
        loc: Location,
        /// Which value.
        msg: String,
    },
    /// A tetrahedron has (numerically) zero volume; raised only by strict validation.
    #[error("{loc}: degenerate tetrahedron: {msg}")]
    DegenerateTet {
        /// Where.
        loc: Location,
        /// Which tet.
        msg: String,
    },
    /// A tetrahedron has negative volume; raised only by strict validation (mesh arrays, which
    /// are used as given; files have their inverted tets flipped with a warning).
    #[error("{loc}: inverted tetrahedron: {msg}")]
    InvertedTet {
        /// Where.
        loc: Location,
        /// Which tet.
        msg: String,
    },
    /// The format or version is not supported, or the content does not match the extension.
    #[error("{loc}: unsupported format: {msg}")]
    Unsupported {
        /// Where.
        loc: Location,
        /// What is unsupported.
        msg: String,
    },
    /// The content is malformed (a token that is not a number, a missing keyword...).
    #[error("{loc}: syntax error: {msg}")]
    Syntax {
        /// Where.
        loc: Location,
        /// What was found instead of what was expected.
        msg: String,
    },
}

impl MeshError {
    /// The location (file and line/byte) the error refers to.
    pub fn location(&self) -> &Location {
        match self {
            MeshError::Io { loc, .. }
            | MeshError::Empty { loc, .. }
            | MeshError::MissingSibling { loc, .. }
            | MeshError::Truncated { loc, .. }
            | MeshError::CountMismatch { loc, .. }
            | MeshError::IndexOutOfRange { loc, .. }
            | MeshError::NonFinite { loc, .. }
            | MeshError::DegenerateTet { loc, .. }
            | MeshError::InvertedTet { loc, .. }
            | MeshError::Unsupported { loc, .. }
            | MeshError::Syntax { loc, .. } => loc,
        }
    }

    /// The same error, reported as found in a sibling of `named` (the file the caller named):
    /// it then displays as `NAMED: sibling FILE:LINE: ...`. Errors already in `named` are
    /// returned unchanged.
    pub fn in_sibling_of(mut self, named: &str) -> MeshError {
        let loc = self.location_mut();
        if loc.file != named && loc.named.is_none() {
            loc.named = Some(named.to_string());
        }
        self
    }

    /// The same error with control characters in its message escaped, so that it displays on
    /// one line whatever text of the file it quotes (every public import function returns
    /// errors passed through this).
    pub(crate) fn one_line(mut self) -> MeshError {
        let msg = match &mut self {
            MeshError::MissingSibling { sibling, msg, .. } => {
                if let Cow::Owned(s) = escape_controls(sibling) {
                    *sibling = s;
                }
                msg
            }
            MeshError::Io { msg, .. }
            | MeshError::Empty { msg, .. }
            | MeshError::Truncated { msg, .. }
            | MeshError::CountMismatch { msg, .. }
            | MeshError::IndexOutOfRange { msg, .. }
            | MeshError::NonFinite { msg, .. }
            | MeshError::DegenerateTet { msg, .. }
            | MeshError::InvertedTet { msg, .. }
            | MeshError::Unsupported { msg, .. }
            | MeshError::Syntax { msg, .. } => msg,
        };
        if let Cow::Owned(s) = escape_controls(msg) {
            *msg = s;
        }
        self
    }

    fn location_mut(&mut self) -> &mut Location {
        match self {
            MeshError::Io { loc, .. }
            | MeshError::Empty { loc, .. }
            | MeshError::MissingSibling { loc, .. }
            | MeshError::Truncated { loc, .. }
            | MeshError::CountMismatch { loc, .. }
            | MeshError::IndexOutOfRange { loc, .. }
            | MeshError::NonFinite { loc, .. }
            | MeshError::DegenerateTet { loc, .. }
            | MeshError::InvertedTet { loc, .. }
            | MeshError::Unsupported { loc, .. }
            | MeshError::Syntax { loc, .. } => loc,
        }
    }

    /// Short machine-readable kind name (`truncated`, `count_mismatch`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            MeshError::Io { .. } => "io",
            MeshError::Empty { .. } => "empty",
            MeshError::MissingSibling { .. } => "missing_sibling",
            MeshError::Truncated { .. } => "truncated",
            MeshError::CountMismatch { .. } => "count_mismatch",
            MeshError::IndexOutOfRange { .. } => "index_out_of_range",
            MeshError::NonFinite { .. } => "non_finite",
            MeshError::DegenerateTet { .. } => "degenerate_tet",
            MeshError::InvertedTet { .. } => "inverted_tet",
            MeshError::Unsupported { .. } => "unsupported",
            MeshError::Syntax { .. } => "syntax",
        }
    }
}

/// Shorthand for results of this crate's import functions.
pub type MeshResult<T> = Result<T, MeshError>;
