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
