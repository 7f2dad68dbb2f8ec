#version 460
// Compaction pass 3: writes values[j] for every j with flags[j] != 0, in order, starting at the
// tile's offset from pass 2. Host: engine/src/primitives/compact.rs. Reference: cpu_reference/compact.rs.
#include "common.glsl"
#include "workgroup_scan.glsl"
layout(constant_id = 1) const uint ITEMS = 16;
layout(constant_id = 2) const uint LANE_SERIAL = 0;
layout(std430, binding = 0) readonly buffer Flags { uvec4 flags[]; };
layout(std430, binding = 0) readonly buffer Flags1 { uint flags1[]; }; // same buffers,
layout(std430, binding = 1) readonly buffer Offsets { uint tile_offsets[]; };
layout(std430, binding = 2) readonly buffer Values { uvec4 values[]; };
layout(std430, binding = 2) readonly buffer Values1 { uint values1[]; }; // partial quad
layout(std430, binding = 3) writeonly buffer Out { uint outv[]; };
layout(push_constant) uniform P { uint n; } p;
// Writes the flagged entries of v (flags f, 0 or 1) from slot o on; returns the next slot.
uint emit(uvec4 f, uvec4 v, uint o) {
    if (f.x != 0u) outv[o++] = v.x;
    if (f.y != 0u) outv[o++] = v.y;
    if (f.z != 0u) outv[o++] = v.z;
    if (f.w != 0u) outv[o++] = v.w;
    return o;
}

void main() {
    uint n4 = (p.n + 3u) / 4u;
    uint nfull = p.n / 4u; // quads below nfull are whole; quad nfull < n4 is partial
    // The partial quad, read once (the same address in every invocation).
    uvec4 tail_f = uvec4(0u), tail_v = uvec4(0u);
    if (nfull < n4) {
        LOAD_TAIL4(tail_f, flags1, nfull, p.n, uvec4(0u))
        LOAD_TAIL4(tail_v, values1, nfull, p.n, uvec4(0u))
        tail_f = uvec4(notEqual(tail_f, uvec4(0u)));
    }
    uint tile = gl_WorkGroupID.x * WG * ITEMS;
    if (LANE_SERIAL == 1u) {
        // Pass 1 counted this invocation's range; its first output slot comes from pass 2.
        uint first = tile + gl_LocalInvocationID.x * ITEMS;
        uint last = min(first + ITEMS, n4);
        uint stop = min(last, nfull); // the partial quad is ours when first <= nfull < last
        uint o = tile_offsets[gl_WorkGroupID.x * WG + gl_LocalInvocationID.x];
        for (uint i = first; i < stop; ++i) {
            uvec4 f = uvec4(notEqual(flags[i], uvec4(0u)));
            if (f.x + f.y + f.z + f.w == 0u) continue;
            o = emit(f, values[i], o);
        }
        if (first <= nfull && nfull < last) emit(tail_f, tail_v, o);
        return;
    }
    uint carry = tile_offsets[gl_WorkGroupID.x];
    for (uint k = 0u; k < ITEMS; ++k) {
        if (tile + k * WG >= n4) break; // uniform
        uint i = tile + k * WG + gl_LocalInvocationID.x;
        uvec4 f = i < nfull ? uvec4(notEqual(flags[i], uvec4(0u))) : (i < n4 ? tail_f : uvec4(0u));
        uint cnt = f.x + f.y + f.z + f.w;
        uint round_total;
        uint ex = workgroup_exclusive_add(cnt, round_total);
        if (cnt != 0u) emit(f, i < nfull ? values[i] : tail_v, carry + ex);
        carry += round_total;
    }
}
