//! `[output]`: what `supple run` writes.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Output settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Output {
    /// Output folder.
    pub dir: PathBuf,
    /// Per-frame export format.
    pub export: Option<ExportFormat>,
    /// Frames rendered into the PNG preview.
    pub preview_frames: Vec<u32>,
}

impl Default for Output {
    fn default() -> Self {
        Output {
            dir: PathBuf::from("out"),
            export: None,
            preview_frames: Vec::new(),
        }
    }
}

/// Per-frame export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExportFormat {
    /// Wavefront OBJ surfaces.
    Obj,
    /// Binary PLY surfaces.
    Ply,
    /// One time-sampled USD stage.
    Usd,
    /// VTK unstructured grids.
    Vtu,
}
