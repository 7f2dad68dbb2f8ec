#version 460
// Radix sort pass 1: per-tile digit counts, stored digit-major: hist[digit * num_tiles + tile]
// (per invocation with LANE_SERIAL), so one exclusive scan of hist gives every (digit, tile)
// its first output slot.
// Host: engine/src/primitives/radix_sort.rs. Reference: cpu_reference/radix_sort.rs.
#include "common.glsl"
#include "radix.glsl"
layout(std430, binding = 0) readonly buffer Keys { uint keys[]; };
layout(std430, binding = 0) readonly buffer Keys4 { uvec4 keys4[]; }; // same buffer, 16-byte loads
layout(std430, binding = 1) writeonly buffer Hist { uint hist[]; };
// One counter per digit, or with LANE_SERIAL two 16-bit counters per word for each invocation
// (an invocation counts at most ITEMS < 2^16 keys), so 11-bit digits fit 32 KiB of shared
// memory with 8 invocations.
shared uint counts[LANE_SERIAL == 1u ? WG * RADIX / 2u : RADIX];

// Lane-serial: counts the keys of quad q (PER_UVEC4 keys in w) that lie before `last`.
void count_quad(uvec4 w, uint q, uint last, uint lid) {
    const uint HALF = RADIX / 2u;
    for (uint c = 0u; c < PER_UVEC4; ++c) {
        if (q * PER_UVEC4 + c < last) {
            uint lo = w[c * (4u / PER_UVEC4)];
            uint d = digit_of(lo, KEY_WORDS == 2u ? w[c * 2u + 1u] : 0u);
            counts[lid * HALF + (d >> 1u)] += 1u << ((d & 1u) * 16u);
        }
    }
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    if (LANE_SERIAL == 1u) {
        // Private counters per invocation over its ITEMS consecutive keys, written per
        // invocation: hist[(digit * num_tiles + tile) * WG + lid]. One scan of that array gives
        // every invocation its first output slot per digit, so the scatter needs no counting.
        const uint HALF = RADIX / 2u;
        for (uint d = 0u; d < HALF; ++d) counts[lid * HALF + d] = 0u;
        uint first = gl_WorkGroupID.x * WG * ITEMS + lid * ITEMS;
        uint last = min(first + ITEMS, p.n);
        // 16-byte loads (PER_UVEC4 keys each): ranges start at multiples of 4 keys; the key
        // array's partial last quad, if this invocation has it, is read word by word.
        uint qlast = (last + PER_UVEC4 - 1u) / PER_UVEC4;
        uint q = first / PER_UVEC4;
        for (; q < min(qlast, p.n * IN_WORDS / 4u); ++q) count_quad(keys4[q], q, last, lid);
        if (q < qlast) {
            uvec4 w;
            LOAD_TAIL4(w, keys, q, p.n * IN_WORDS, uvec4(0u))
            count_quad(w, q, last, lid);
        }
        for (uint d = 0u; d < HALF; ++d) {
            uint c = counts[lid * HALF + d];
            hist[(2u * d * p.num_tiles + gl_WorkGroupID.x) * WG + lid] = c & 0xffffu;
            hist[((2u * d + 1u) * p.num_tiles + gl_WorkGroupID.x) * WG + lid] = c >> 16u;
        }
        return;
    }
    for (uint d = lid; d < RADIX; d += WG) counts[d] = 0u;
    barrier();
    uint tile = gl_WorkGroupID.x * WG * ITEMS;
    for (uint k = 0u; k < ITEMS; ++k) {
        if (tile + k * WG >= p.n) break; // uniform
        uint idx = tile + k * WG + lid;
        if (idx < p.n) {
            uint lo = keys[idx * KEY_WORDS];
            uint hi = KEY_WORDS == 2u ? keys[idx * KEY_WORDS + 1u] : 0u;
            atomicAdd(counts[digit_of(lo, hi)], 1u);
        }
    }
    barrier();
    for (uint d = lid; d < RADIX; d += WG) hist[d * p.num_tiles + gl_WorkGroupID.x] = counts[d];
}
