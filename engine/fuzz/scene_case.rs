//! One scene fuzz case, shared by the fuzz target (`fuzz_targets/scene.rs`) and the suite's
//! replay of its corpus (`engine/tests/scene_fuzz_corpus.rs`).
//!
//! The input is scene text, then optionally a NUL byte and one `--set` override a line. The
//! scene is parsed and checked ([`supple::Scene::parse`]); an error must name a line, a field
//! path or the override at fault, on one line. A valid scene whose bodies are all generated
//! (mesh files are fuzzed by the mesh readers' targets) and small enough to build quickly gets
//! its model built on the CPU ([`supple::model::SimModel::from_scene`]), which must not panic;
//! scenes too large to generate are refused by the checks before anything is allocated.

#![allow(dead_code)]

use supple::model::SimModel;
use supple::scene::{generated_elements, MeshSource, Scene};

/// Largest scene (generated elements) whose model a case builds: the checks bound every scene
/// at [`supple::scene::MAX_GENERATED_ELEMENTS`]; building those takes seconds, too slow for
/// fuzzing, and is exercised by the scene tests.
pub const MAX_BUILT_ELEMENTS: f64 = 2e5;

/// Most overrides read from one input.
const MAX_OVERRIDES: usize = 8;

/// Splits an input into scene text and overrides (`None` when it is not UTF-8).
pub fn split(data: &[u8]) -> Option<(&str, Vec<String>)> {
    let s = std::str::from_utf8(data).ok()?;
    let (text, sets) = s.split_once('\0').unwrap_or((s, ""));
    let overrides = sets
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(MAX_OVERRIDES)
        .map(str::to_string)
        .collect();
    Some((text, overrides))
}

/// Runs one input; panics on a finding. Returns whether the scene was valid.
pub fn run(data: &[u8]) -> bool {
    let Some((text, overrides)) = split(data) else {
        return false;
    };
    match Scene::parse(text, "fuzz.toml", &overrides) {
        Err(e) => {
            let shown = e.to_string();
            assert!(
                e.line.is_some() || e.field.is_some() || e.file.starts_with("--set"),
                "an error naming no line, field or override: {shown}"
            );
            if let Some(f) = &e.field {
                assert!(!f.is_empty(), "an empty field path: {shown}");
            }
            false
        }
        Ok(scene) => {
            build_model(&scene);
            true
        }
    }
}

/// Builds the model of a valid scene of generated bodies that is small enough.
fn build_model(scene: &Scene) {
    let mut total = 0.0;
    for b in &scene.bodies {
        let MeshSource::Generator {
            generator,
            size,
            cells,
        } = &b.mesh
        else {
            return;
        };
        let (elements, work) = generated_elements(*generator, *size, *cells);
        total += elements + work / 100.0;
    }
    if total <= MAX_BUILT_ELEMENTS {
        // Errors are fine (e.g. a generator's own limits); a panic is a finding.
        let _ = SimModel::from_scene(scene);
    }
}
