//! Fuzz target: scene text (and `--set` overrides after a NUL byte) through parsing, checking
//! and, for valid scenes of generated bodies, model building: never a panic, a hang or a memory
//! blow-up; every error names a line, a field path or the override at fault
//! (`engine/fuzz/scene_case.rs`, replayed by `engine/tests/scene_fuzz_corpus.rs`).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../scene_case.rs"]
mod scene_case;

fuzz_target!(|data: &[u8]| {
    scene_case::run(data);
});
