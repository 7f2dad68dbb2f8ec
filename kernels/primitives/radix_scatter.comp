#version 460
// Radix sort pass 3: stable scatter of each tile's keys and values to their sorted slots.
// Within a round of WG keys, a key's rank among equal digits of its subgroup comes from
// DIGIT_BITS ballots (one per digit bit); subgroups then take turns advancing the per-digit
// cursors, so equal digits keep their input order (stability).
// Host: engine/src/primitives/radix_sort.rs. Reference: cpu_reference/radix_sort.rs.
#include "common.glsl"
#include "radix.glsl"
layout(std430, binding = 0) readonly buffer KeysIn { uint keys_in[]; };
layout(std430, binding = 1) readonly buffer ValsIn { uint vals_in[]; };
layout(std430, binding = 0) readonly buffer KeysIn4 { uvec4 keys_in4[]; }; // same buffers,
layout(std430, binding = 1) readonly buffer ValsIn4 { uvec4 vals_in4[]; }; // 16-byte loads
layout(std430, binding = 2) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 3) writeonly buffer KeysOut { uint keys_out[]; };
layout(std430, binding = 4) writeonly buffer ValsOut { uint vals_out[]; };
layout(std430, binding = 3) writeonly buffer PairsOut { uvec2 pairs_out[]; }; // OUT_PACKED
// Lane-serial path: per-invocation cursors, invocation-major (the histogram buffer, free once
// scanned), so an invocation's counters are contiguous.
layout(std430, binding = 5) buffer Cursors { uint cursors[]; };
shared uint cursor[LANE_SERIAL == 1u ? 1u : RADIX];

uint popcount4(uvec4 m) {
    return bitCount(m.x) + bitCount(m.y) + bitCount(m.z) + bitCount(m.w);
}

// Lane-serial: scatters the keys of quad q (PER_UVEC4 keys in w, u32 values in v4 when the
// values are separate u32s) that lie before `last`, advancing the cursors at `base`.
void scatter_quad(uvec4 w, uvec4 v4, uint q, uint last, uint base) {
    for (uint c = 0u; c < PER_UVEC4; ++c) {
        uint idx = q * PER_UVEC4 + c;
        if (idx < last) {
            uint lo = w[c * (4u / PER_UVEC4)];
            uint hi = KEY_WORDS == 2u ? w[c * 2u + 1u] : 0u;
            uint val = IN_PACKED == 1u ? w[c * 2u + 1u] : KEY_WORDS == 1u ? v4[c] : vals_in[idx];
            uint slot = base + digit_of(lo, hi);
            uint dst = cursors[slot];
            cursors[slot] = dst + 1u;
            if (OUT_PACKED == 1u) {
                pairs_out[dst] = uvec2(lo, val);
            } else {
                keys_out[dst * KEY_WORDS] = lo;
                if (KEY_WORDS == 2u) keys_out[dst * KEY_WORDS + 1u] = hi;
                vals_out[dst] = val;
            }
        }
    }
}

// LANE_SERIAL path: invocation `lid` owns keys [first, last) of the tile; its first output slot
// per digit comes from the scanned per-invocation histogram, copied to its own contiguous block
// of cursors in global memory (which costs the same as shared memory on CPU devices and leaves
// room for 11-bit digits). Stable: invocations own consecutive ranges in order.
void scatter_lane_serial() {
    uint lid = gl_LocalInvocationID.x;
    uint first = gl_WorkGroupID.x * WG * ITEMS + lid * ITEMS;
    uint last = min(first + ITEMS, p.n);
    uint base = (gl_WorkGroupID.x * WG + lid) * RADIX;
    for (uint d = 0u; d < RADIX; ++d) {
        cursors[base + d] = offsets[(d * p.num_tiles + gl_WorkGroupID.x) * WG + lid];
    }
    // 16-byte loads (PER_UVEC4 keys each): ranges start at multiples of 4 keys; the arrays'
    // partial last quad, if this invocation has it, is read word by word.
    const bool SPLIT_U32 = KEY_WORDS == 1u && IN_PACKED == 0u;
    uint qlast = (last + PER_UVEC4 - 1u) / PER_UVEC4;
    uint q = first / PER_UVEC4;
    for (; q < min(qlast, p.n * IN_WORDS / 4u); ++q) {
        uvec4 v4 = uvec4(0u);
        if (SPLIT_U32) v4 = vals_in4[q];
        scatter_quad(keys_in4[q], v4, q, last, base);
    }
    if (q < qlast) {
        uvec4 w, v4 = uvec4(0u);
        LOAD_TAIL4(w, keys_in, q, p.n * IN_WORDS, uvec4(0u))
        if (SPLIT_U32) {
            LOAD_TAIL4(v4, vals_in, q, p.n, uvec4(0u))
        }
        scatter_quad(w, v4, q, last, base);
    }
}

void main() {
    if (LANE_SERIAL == 1u) {
        scatter_lane_serial();
        return;
    }
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
        for (uint b = 0u; b < DIGIT_BITS; ++b) {
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
