//! Shared test support: a validated context per test and a check that no validation error
//! was reported.

use supple::vk::{Context, ContextOptions, Severity};

/// A context on the default device (lavapipe in CI) with the validation layer on.
/// `force_staging` routes uploads/readbacks through staging buffers.
pub fn context(force_staging: bool) -> Context {
    let mut o = ContextOptions::from_env();
    o.validation = true;
    o.force_staging = force_staging;
    o.wait_timeout = std::time::Duration::from_secs(120);
    o.pipeline_cache = None;
    match Context::new(o) {
        Ok(c) => c,
        Err(e) => panic!("cannot create a Vulkan context with validation (is lavapipe + vulkan-validationlayers installed?): {e}"),
    }
}

/// Panics if the validation layer reported any error on `ctx`.
pub fn assert_no_validation_errors(ctx: &Context) {
    let msgs = ctx.take_validation_messages();
    let errors: Vec<_> = msgs
        .iter()
        .filter(|m| m.severity == Severity::Error)
        .map(|m| m.text.clone())
        .collect();
    assert!(
        errors.is_empty(),
        "validation errors:\n{}",
        errors.join("\n")
    );
}

/// Deterministic random generator for test data.
pub fn rng(seed: u64) -> rand_pcg::Pcg64 {
    use rand::SeedableRng;
    rand_pcg::Pcg64::seed_from_u64(seed)
}

/// Readers for the oracle files in `tests/data/oracles/` (JSON from the IPC Toolkit oracle).
pub mod oracles {
    use serde_json::Value;
    use supple::math::Vec3;

    /// Parses `tests/data/oracles/NAME`.
    pub fn oracle(name: &str) -> Value {
        let path = format!("{}/../data/oracles/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The `cases` array of an oracle document.
    pub fn cases(doc: &Value) -> &[Value] {
        doc["cases"]
            .as_array()
            .map(Vec::as_slice)
            .expect("oracle has a `cases` array")
    }

    /// A number field.
    pub fn num(v: &Value) -> f64 {
        v.as_f64()
            .unwrap_or_else(|| panic!("expected a number, got {v}"))
    }

    /// A string field.
    pub fn text(v: &Value) -> String {
        v.as_str()
            .unwrap_or_else(|| panic!("expected a string, got {v}"))
            .to_string()
    }

    /// Four points `[[x, y, z]; 4]`.
    pub fn points4(v: &Value) -> [Vec3; 4] {
        [0, 1, 2, 3].map(|k| Vec3::new(num(&v[k][0]), num(&v[k][1]), num(&v[k][2])))
    }
}

/// The exact checker's surface of every body of `sim` (boundary triangles and rod centreline
/// segments over model vertices).
pub fn body_surface(sim: &supple::simulation::Simulation) -> supple::intersection_check::Surface {
    let model = sim.model();
    let tris: Vec<[u32; 3]> = model
        .bodies
        .iter()
        .flat_map(|b| b.surface.iter().copied())
        .collect();
    supple::intersection_check::Surface::with_curves(
        model.positions.len(),
        &tris,
        &model.curve_segments(),
    )
    .expect("body surfaces")
}
