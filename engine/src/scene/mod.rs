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
mod bounds;
mod collider;
mod collision;
mod exact;
mod locate;
mod output;
mod overrides;
mod solver;
#[cfg(test)]
mod tests;
mod validate;

pub use body::*;
pub use bounds::{generated_elements, MAX_FUSED_STEPS, MAX_GENERATED_ELEMENTS};
pub use collider::*;
pub use collision::*;
pub use output::*;
pub use solver::*;
pub use validate::check_spin;

use overrides::apply_override;
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

/// The path of the field a "missing field `x`" error at table `table` is about (`table.x`);
/// `table` for any other error.
fn with_missing_field(table: String, message: &str) -> String {
    let missing = message
        .strip_prefix("missing field `")
        .and_then(|m| m.split_once('`'))
        .map(|(name, _)| name);
    match missing {
        Some(name) if table.is_empty() => name.to_string(),
        Some(name) => format!("{table}.{name}"),
        None => table,
    }
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

    /// Parses and checks scene text; `name` labels errors. Every error after the TOML syntax
    /// names the field path and the line of the text where it (or the table holding it) is
    /// written; an error in a value set by one of `overrides` names that override instead of a
    /// line.
    pub fn parse(text: &str, name: &str, overrides: &[String]) -> Result<Scene, SceneError> {
        let at = |line, field, message| SceneError {
            file: name.to_string(),
            line,
            field,
            message,
        };
        let mut doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e.span().map(|s| locate::line_of(text, s.start));
            at(line, None, e.message().trim().to_string())
        })?;
        let file = locate::Locations::of(text);
        for o in overrides {
            apply_override(&mut doc, o)?;
        }
        let merged_text;
        let merged = if overrides.is_empty() {
            text
        } else {
            merged_text = toml::to_string(&doc).map_err(|e| {
                at(
                    None,
                    None,
                    format!("cannot combine the --set overrides: {e}"),
                )
            })?;
            &merged_text
        };
        // Where an error at `field` is: the override that set it, else its line in the file.
        let place = |field: String, message: String| match overrides::setting(overrides, &field) {
            Some(o) => at(None, Some(field), format!("{message} (in --set {o})")),
            None => {
                let line = file.as_ref().and_then(|l| l.line_of_path(&field));
                at(line, Some(field), message)
            }
        };
        let scene: Scene = toml::from_str(merged).map_err(|e| {
            let message = e.message().trim().to_string();
            let found = e.span().and_then(|s| {
                let l = locate::Locations::of(merged)?;
                Some(l.path_at(s.start)?.to_string())
            });
            match found.map(|f| with_missing_field(f, &message)) {
                Some(field) => place(field, message),
                None => at(None, None, message),
            }
        })?;
        scene
            .check()
            .map_err(|(field, message)| place(field, message))?;
        Ok(scene)
    }
}
