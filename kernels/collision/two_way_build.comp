#version 460
// Two-way IPM, after a proximity search: MODE 0 gives every pair (appended by the search in a
// run-dependent order; slot i < nvt the vertex–triangle pair i, else the edge–edge pair
// i - nvt) its sort key (type, a, b) (vertex–triangle before edge–edge; unused slots get the
// largest key) and writes meta = {vertex–triangle count nvt, total, ceil(total / WG), 1, 1};
// after the radix sort of the keys, MODE 2 gathers constraint k = the four vertices of slot
// vals[k], read from the pair lists (no copy of the unsorted constraints is stored) — a
// canonical order, so the coloring and every later step are deterministic. The constraints
// are split over two bindings (two_way_split.glsl); MODE 1 (after the coloring) writes the indirect arguments of
// every color's sweep, {ceil(size_c / WG), 1, 1}.
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::constraints.
#include "common.glsl"
#include "two_way.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) readonly buffer Status { uint status[]; };
layout(std430, binding = 1) readonly buffer PairsVt { uvec4 pairs_vt[]; };
layout(std430, binding = 2) readonly buffer PairsEe { uvec4 pairs_ee[]; };
layout(std430, binding = 3) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 4) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 5) buffer ConsLo { uvec4 cons_lo[]; };
layout(std430, binding = 6) buffer Meta { uint meta[]; };
layout(std430, binding = 7) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 8) writeonly buffer ColorArgs { uint color_args[]; };
layout(std430, binding = 9) buffer Keys { uvec2 keys[]; };
layout(std430, binding = 10) buffer Vals { uint vals[]; };
layout(std430, binding = 11) buffer ConsHi { uvec4 cons_hi[]; };
layout(push_constant) uniform Push {
    uint vt_cap;
    uint ee_cap;
    uint colors;
    uint b_bits;   // bits of the second index of a pair (1..=31)
    uint key_bits; // bits of the whole key (1 + a bits + b bits)
};
#define TW_SPLIT_CONS
#define TW_SPLIT_CONS_WRITE
#include "two_way_split.glsl"

// The four vertices of pair slot j (vertex–triangle below meta[0], else edge–edge).
uvec4 pair_vertices(uint j) {
    uint nvt = meta[0];
    if (j < nvt) {
        uvec4 pr = pairs_vt[j];
        uvec4 t = tris[pr.y];
        return uvec4(pr.x, t.x, t.y, t.z);
    }
    uvec4 pr = pairs_ee[j - nvt];
    uvec2 ea = edges[pr.x], eb = edges[pr.y];
    return uvec4(ea.x, ea.y, eb.x, eb.y);
}
void main() {
    uint i = tw_index();
    if (MODE == 1u) {
        if (i < colors) {
            uint n = offsets[i + 1u] - offsets[i];
            color_args[3u * i] = (n + WG - 1u) / WG;
            color_args[3u * i + 1u] = 1u;
            color_args[3u * i + 2u] = 1u;
        }
        return;
    }
    if (MODE == 2u) {
        if (i < meta[1]) tw_set_con(i, pair_vertices(vals[i]));
        return;
    }
    uint nvt = min(status[1], vt_cap);
    uint nee = min(status[2], ee_cap);
    if (i == 0u) {
        meta[0] = nvt;
        meta[1] = nvt + nee;
        meta[2] = (nvt + nee + WG - 1u) / WG;
        meta[3] = 1u;
        meta[4] = 1u;
    }
    if (i >= vt_cap + ee_cap) return;
    // 64-bit key (type << (key_bits - 1)) | (a << b_bits) | b as (lo, hi) words.
    uint type = 0u, a = 0u, b = 0u;
    if (i < nvt) {
        uvec4 pr = pairs_vt[i];
        a = pr.x;
        b = pr.y;
    } else if (i < nvt + nee) {
        uvec4 pr = pairs_ee[i - nvt];
        type = 1u;
        a = pr.x;
        b = pr.y;
    }
    uvec2 key;
    if (i < nvt + nee) {
        // a << b_bits as 64 bits (1 <= b_bits <= 31), then the type bit.
        key = uvec2(b | (a << b_bits), a >> (32u - b_bits));
        uint tb = key_bits - 1u;
        if (tb < 32u) key.x |= type << tb; else key.y |= type << (tb - 32u);
    } else {
        key = uvec2(0xFFFFFFFFu);
    }
    keys[i] = key;
    vals[i] = i;
}
