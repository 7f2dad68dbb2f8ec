//! Scene files (TOML): bodies, materials, boundary conditions, colliders, solver and output
//! settings, in SI units. Unknown fields, wrong types and impossible values are refused with a
//! message naming the file, the field path (e.g. `body[1].material.poisson_ratio`) and, for
//! syntax and type errors, the line. `--set path.to.field=value` overrides are applied to the
//! TOML document before it is checked, so they are validated exactly like the file.
//!
//! ```toml
//! [simulation]
//! frame_rate = 60.0          # frames per second
//! substeps = 2               # time steps per frame
//! gravity = [0.0, 0.0, -9.81]
//! solver = "newton"          # or "symplectic-euler", "xpbd"
//!
//! [[body]]
//! name = "cube"
//! mesh = { generator = "box", size = [0.5, 0.5, 0.5], cells = [10, 10, 10] }
//! translation = [0.0, 0.0, 0.35]
//! material = { model = "stable-neo-hookean", youngs_modulus = 5e5, poisson_ratio = 0.3, density = 1000.0 }
//!
//! [[collider]]
//! shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
//! friction = 0.3
//! ```

mod body;
mod collider;
mod collision;
mod output;
mod overrides;
mod solver;
#[cfg(test)]
mod tests;
mod validate;

pub use body::*;
pub use collider::*;
pub use collision::*;
pub use output::*;
pub use solver::*;
pub use validate::check_spin;

use overrides::{apply_override, failing_override};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// A problem with a scene: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneError {
    /// The scene file (or `<inline>` / `--set`).
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The field path, when known (e.g. `body[0].material.density`).
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SceneError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for SceneError {}

/// A whole scene.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scene {
    /// Time stepping, gravity and solver choice.
    #[serde(default)]
    pub simulation: SimulationSettings,
    /// Solver parameters.
    #[serde(default)]
    pub solver: NewtonConfig,
    /// XPBD parameters (used with `simulation.solver = "xpbd"`).
    #[serde(default)]
    pub xpbd: XpbdConfig,
    /// Collision handling between deformable surfaces.
    #[serde(default)]
    pub collision: CollisionSettings,
    /// PROX contact parameters (used with `collision.method = "prox"`).
    #[serde(default)]
    pub prox: ProxTable,
    /// Deformable bodies.
    #[serde(default, rename = "body")]
    pub bodies: Vec<Body>,
    /// Analytic colliders.
    #[serde(default, rename = "collider")]
    pub colliders: Vec<Collider>,
    /// What to write.
    #[serde(default)]
    pub output: Output,
}

/// 1-based line of byte offset `pos` in `text`.
fn line_of(text: &str, pos: usize) -> usize {
    text[..pos.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count()
        + 1
}

impl Scene {
    /// Reads and checks a scene file, applying `--set` overrides first.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Scene, SceneError> {
        let text = std::fs::read_to_string(path).map_err(|e| SceneError {
            file: path.display().to_string(),
            line: None,
            field: None,
            message: format!("cannot read: {e}"),
        })?;
        let mut scene = Scene::parse(&text, &path.display().to_string(), overrides)?;
        // Mesh files are relative to the scene file.
        let base = path.parent().unwrap_or(Path::new("."));
        for b in &mut scene.bodies {
            if let MeshSource::File { file } = &mut b.mesh {
                if file.is_relative() {
                    *file = base.join(&*file);
                }
            }
        }
        Ok(scene)
    }

    /// Parses and checks scene text; `name` labels errors.
    pub fn parse(text: &str, name: &str, overrides: &[String]) -> Result<Scene, SceneError> {
        let syntax = |e: toml::de::Error| SceneError {
            file: name.to_string(),
            line: e.span().map(|s| line_of(text, s.start)),
            field: None,
            message: e.message().trim().to_string(),
        };
        let mut doc: toml::Table = text.parse().map_err(syntax)?;
        for o in overrides {
            apply_override(&mut doc, o)?;
        }
        let merged = if overrides.is_empty() {
            text.to_string()
        } else {
            toml::to_string(&doc).unwrap_or_default()
        };
        let scene: Scene = toml::from_str(&merged).map_err(|e| {
            let mut err = syntax(e);
            if !overrides.is_empty() {
                // Lines refer to the merged document, not the file: do not report them.
                err.line = None;
                err.message = format!("{} (after --set overrides)", err.message);
                err.field = failing_override(text, overrides);
            }
            err
        })?;
        scene.validate(name)?;
        Ok(scene)
    }
}
