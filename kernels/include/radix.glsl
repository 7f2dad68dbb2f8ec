// Shared by the radix-sort kernels. Keys are KEY_WORDS uints each (1: u32, 2: u64 as lo, hi);
// a tile is WG * ITEMS consecutive keys; digit = DIGIT_BITS bits at `shift` (may straddle the
// two words of a u64 key).
layout(constant_id = 1) const uint ITEMS = 256;
layout(constant_id = 2) const uint KEY_WORDS = 1;
// 1: each invocation owns ITEMS consecutive keys of the tile and ranks them serially with
// per-invocation digit counters in shared memory (CPU devices: no subgroup ops per key).
// 0: rounds of WG consecutive keys ranked with subgroup ballots (GPUs: coalesced access).
layout(constant_id = 3) const uint LANE_SERIAL = 0;
// Bits per digit: 8 (256 counters per tile or invocation) up to 11 (2048).
layout(constant_id = 4) const uint DIGIT_BITS = 8;
const uint RADIX = 1u << DIGIT_BITS;
// Lane-serial u32 passes only: 1 when the input (IN_PACKED) or output (OUT_PACKED) holds
// interleaved (key, value) pairs in the key buffer (one 8-byte store per pair instead of two
// 4-byte ones); the first pass reads the caller's separate arrays, the last one writes them.
layout(constant_id = 5) const uint IN_PACKED = 0;
layout(constant_id = 6) const uint OUT_PACKED = 0;
// Lane-serial kernels: keys per 16-byte load.
const uint PER_UVEC4 = IN_PACKED == 1u ? 2u : 4u / KEY_WORDS;
// Words per key in the input key buffer (2 for pairs or u64 keys); it holds at least p.n keys.
const uint IN_WORDS = 4u / PER_UVEC4;
layout(push_constant) uniform P { uint n; uint shift; uint num_tiles; } p;

uint digit_of(uint lo, uint hi) {
    uint s = p.shift;
    uint w = s >= 32u ? hi >> (s - 32u) : (s == 0u ? lo : (lo >> s) | (hi << (32u - s)));
    return w & (RADIX - 1u);
}

