//! Fuzz target: the Vtk parser must never panic, hang or over-allocate.
#![no_main]
use libfuzzer_sys::fuzz_target;
use supple_mesh::import::{load_bytes, Format};

fuzz_target!(|data: &[u8]| {
    // Never a panic; errors are one line.
    if let Err(e) = load_bytes("fuzz.vtk", data, Format::Vtk) {
        assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
    }
});
