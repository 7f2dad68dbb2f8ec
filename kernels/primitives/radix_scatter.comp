#version 460
// Radix sort pass 3: stable scatter of each tile's keys and values to their sorted slots.
// Within a round of WG keys, a key's rank among equal digits of its subgroup comes from 8
// ballots (one per digit bit); subgroups then take turns advancing the per-digit cursors, so
// equal digits keep their input order (stability).
// Host: engine/src/primitives/radix_sort.rs. Reference: cpu_reference/radix_sort.rs.
#include "common.glsl"
#include "radix.glsl"
layout(std430, binding = 0) readonly buffer KeysIn { uint keys_in[]; };
layout(std430, binding = 1) readonly buffer ValsIn { uint vals_in[]; };
layout(std430, binding = 2) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 3) writeonly buffer KeysOut { uint keys_out[]; };
layout(std430, binding = 4) writeonly buffer ValsOut { uint vals_out[]; };
shared uint cursor[RADIX];

uint popcount4(uvec4 m) {
    return bitCount(m.x) + bitCount(m.y) + bitCount(m.z) + bitCount(m.w);
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    for (uint d = lid; d < RADIX; d += WG) cursor[d] = offsets[d * p.num_tiles + gl_WorkGroupID.x];
    barrier();
    uint tile = gl_WorkGroupID.x * WG * ITEMS;
    for (uint k = 0u; k < ITEMS; ++k) {
        if (tile + k * WG >= p.n) break; // uniform
        uint idx = tile + k * WG + lid;
        bool valid = idx < p.n;
        uint lo = 0u, hi = 0u, val = 0u;
        if (valid) {
            lo = keys_in[idx * KEY_WORDS];
            if (KEY_WORDS == 2u) hi = keys_in[idx * KEY_WORDS + 1u];
            val = vals_in[idx];
        }
        uint digit = digit_of(lo, hi);
        uvec4 peers = subgroupBallot(valid);
        for (uint b = 0u; b < 8u; ++b) {
            bool bit = ((digit >> b) & 1u) != 0u;
            uvec4 m = subgroupBallot(bit);
            peers &= bit ? m : ~m;
        }
        uint rank = popcount4(peers & gl_SubgroupLtMask);
        uint count = popcount4(peers);
        for (uint s = 0u; s < gl_NumSubgroups; ++s) {
            if (gl_SubgroupID == s) {
                uint base = valid ? cursor[digit] : 0u;
                subgroupBarrier();
                if (valid) {
                    uint dst = base + rank;
                    keys_out[dst * KEY_WORDS] = lo;
                    if (KEY_WORDS == 2u) keys_out[dst * KEY_WORDS + 1u] = hi;
                    vals_out[dst] = val;
                    if (rank + 1u == count) cursor[digit] = base + count;
                }
                subgroupMemoryBarrierShared();
                subgroupBarrier();
            }
            if (gl_NumSubgroups > 1u) barrier();
        }
    }
}
