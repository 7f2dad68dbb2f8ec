// Shared by the radix-sort kernels. Keys are KEY_WORDS uints each (1: u32, 2: u64 as lo, hi);
// a tile is WG * ITEMS consecutive keys; digit = 8 bits at `shift`.
layout(constant_id = 1) const uint ITEMS = 256;
layout(constant_id = 2) const uint KEY_WORDS = 1;
// 1: each invocation owns ITEMS consecutive keys of the tile and ranks them serially with
// per-invocation digit counters in shared memory (CPU devices: no subgroup ops per key).
// 0: rounds of WG consecutive keys ranked with subgroup ballots (GPUs: coalesced access).
layout(constant_id = 3) const uint LANE_SERIAL = 0;
layout(push_constant) uniform P { uint n; uint shift; uint num_tiles; } p;
#define RADIX 256u
// Keys per 16-byte load in the lane-serial kernels (ITEMS is a multiple of 4).
#define KEYS_PER_UVEC4 (4u / KEY_WORDS)

uint digit_of(uint lo, uint hi) {
    uint word = p.shift < 32u ? lo : hi;
    return (word >> (p.shift & 31u)) & (RADIX - 1u);
}
