#version 460
// Scan pass 3: scans each tile with its offset from pass 2. INCLUSIVE = 1 gives the inclusive
// scan. Host: engine/src/primitives/scan.rs. Reference: cpu_reference/scan.rs.
#include "common.glsl"
#include "workgroup_scan.glsl"
layout(constant_id = 1) const uint ITEMS = 16;
layout(constant_id = 2) const uint INCLUSIVE = 0;
layout(constant_id = 3) const uint LANE_SERIAL = 0;
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 0) readonly buffer Src1 { uint src1[]; }; // same buffers, partial quad
layout(std430, binding = 1) readonly buffer Offsets { uint tile_offsets[]; };
layout(std430, binding = 2) writeonly buffer Dst { uvec4 dst[]; };
layout(std430, binding = 2) writeonly buffer Dst1 { uint dst1[]; };
layout(push_constant) uniform P { uint n; } p;
uvec4 inclusive4(uvec4 v) {
    return uvec4(v.x, v.x + v.y, v.x + v.y + v.z, v.x + v.y + v.z + v.w);
}

void main() {
    uint n4 = (p.n + 3u) / 4u;
    uint nfull = p.n / 4u; // quads below nfull are whole; quad nfull < n4 is partial
    uint tile = gl_WorkGroupID.x * WG * ITEMS;
    if (LANE_SERIAL == 1u) {
        // Pass 1 summed this invocation's range; its offset comes from pass 2.
        uint first = tile + gl_LocalInvocationID.x * ITEMS;
        uint last = min(first + ITEMS, n4);
        uint stop = min(last, nfull); // the partial quad is ours when first <= nfull < last
        uint run = tile_offsets[gl_WorkGroupID.x * WG + gl_LocalInvocationID.x];
        for (uint i = first; i < stop; ++i) {
            uvec4 v = src[i];
            uvec4 inc = inclusive4(v);
            dst[i] = uvec4(run) + (INCLUSIVE == 1u ? inc : inc - v);
            run += inc.w;
        }
        if (first <= nfull && nfull < last) {
            uvec4 v;
            LOAD_TAIL4(v, src1, nfull, p.n, uvec4(0u))
            uvec4 inc = inclusive4(v);
            uvec4 r = uvec4(run) + (INCLUSIVE == 1u ? inc : inc - v);
            STORE_TAIL4(dst1, nfull, p.n, r)
        }
        return;
    }
    // The partial quad, read once (the same address in every invocation).
    uvec4 tail = uvec4(0u);
    if (nfull < n4) {
        LOAD_TAIL4(tail, src1, nfull, p.n, uvec4(0u))
    }
    uint carry = tile_offsets[gl_WorkGroupID.x];
    for (uint k = 0u; k < ITEMS; ++k) {
        if (tile + k * WG >= n4) break; // uniform
        uint i = tile + k * WG + gl_LocalInvocationID.x;
        uvec4 v = i < nfull ? src[i] : (i < n4 ? tail : uvec4(0u));
        uvec4 inc = inclusive4(v);
        uint round_total;
        uint ex = workgroup_exclusive_add(inc.w, round_total);
        uvec4 r = uvec4(carry + ex) + (INCLUSIVE == 1u ? inc : inc - v);
        if (i < nfull) {
            dst[i] = r;
        } else if (i < n4) {
            STORE_TAIL4(dst1, i, p.n, r)
        }
        carry += round_total;
    }
}
