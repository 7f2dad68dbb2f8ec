//! Fuzz target: the TetGen parser (`.node`, then `.ele` after the first 0xFF byte).
#![no_main]
use libfuzzer_sys::fuzz_target;
use supple_mesh::import::load_tetgen_bytes;

fuzz_target!(|data: &[u8]| {
    let (node, ele) = match data.iter().position(|&b| b == 0xff) {
        Some(i) => (&data[..i], Some(("fuzz.ele", &data[i + 1..]))),
        None => (data, None),
    };
    // Never a panic; errors are one line.
    if let Err(e) = load_tetgen_bytes("fuzz.node", node, ele, None) {
        assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
    }
});
