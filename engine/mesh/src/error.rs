//! Typed import/validation errors. Every error names the file and the line (text formats) or the
//! byte offset (binary data), and renders as one line `FILE:LINE: what is wrong`.

use std::fmt;

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

/// A file name plus a position in it; displays as `FILE:LINE`, `FILE:byte N` or `FILE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The file path as given by the caller.
    pub file: String,
    /// Where in the file.
    pub pos: Position,
}

impl Location {
    /// A location at a 1-based line.
    pub fn line(file: &str, line: usize) -> Self {
        Location {
            file: file.to_string(),
            pos: Position::Line(line),
        }
    }
    /// A location at a byte offset.
    pub fn byte(file: &str, offset: usize) -> Self {
        Location {
            file: file.to_string(),
            pos: Position::Byte(offset),
        }
    }
    /// A location naming only the file.
    pub fn file(file: &str) -> Self {
        Location {
            file: file.to_string(),
            pos: Position::File,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Position::File => write!(f, "{}", self.file),
            Position::Line(l) => write!(f, "{}:{}", self.file, l),
            Position::Byte(b) => write!(f, "{}:byte {}", self.file, b),
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
            | MeshError::Truncated { loc, .. }
            | MeshError::CountMismatch { loc, .. }
            | MeshError::IndexOutOfRange { loc, .. }
            | MeshError::NonFinite { loc, .. }
            | MeshError::DegenerateTet { loc, .. }
            | MeshError::Unsupported { loc, .. }
            | MeshError::Syntax { loc, .. } => loc,
        }
    }

    /// Short machine-readable kind name (`truncated`, `count_mismatch`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            MeshError::Io { .. } => "io",
            MeshError::Truncated { .. } => "truncated",
            MeshError::CountMismatch { .. } => "count_mismatch",
            MeshError::IndexOutOfRange { .. } => "index_out_of_range",
            MeshError::NonFinite { .. } => "non_finite",
            MeshError::DegenerateTet { .. } => "degenerate_tet",
            MeshError::Unsupported { .. } => "unsupported",
            MeshError::Syntax { .. } => "syntax",
        }
    }
}

/// Shorthand for results of this crate's import functions.
pub type MeshResult<T> = Result<T, MeshError>;
