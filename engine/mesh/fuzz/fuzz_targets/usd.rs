//! Fuzz target: the USD text (`.usda`) parser must never panic, hang or over-allocate.
#![no_main]
use libfuzzer_sys::fuzz_target;
use supple_mesh::import::{load_bytes, Format};

fuzz_target!(|data: &[u8]| {
    let _ = load_bytes("fuzz.usda", data, Format::Usd);
});
