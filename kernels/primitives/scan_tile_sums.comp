#version 460
// Scan / compaction pass 1: the sum (MODE 0) or the count of non-zero entries (MODE 1) of each
// tile of WG*ITEMS uvec4s; with LANE_SERIAL = 1, of each invocation's ITEMS consecutive uvec4s
// (sums[tile * WG + lid]), so pass 3 reads its input only once. Host: engine/src/primitives/scan.rs. Reference: cpu_reference/scan.rs.
#include "common.glsl"
#include "workgroup_scan.glsl"
layout(constant_id = 1) const uint ITEMS = 16;
layout(constant_id = 2) const uint MODE = 0;
layout(constant_id = 3) const uint LANE_SERIAL = 0;
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 0) readonly buffer Src1 { uint src1[]; }; // same buffer, partial quad
layout(std430, binding = 1) writeonly buffer Sums { uint tile_sums[]; };
layout(push_constant) uniform P { uint n; } p;
uint quad_sum(uvec4 v) {
    if (MODE == 1u) v = uvec4(notEqual(v, uvec4(0u)));
    return v.x + v.y + v.z + v.w;
}

void main() {
    uint n4 = (p.n + 3u) / 4u;
    uint nfull = p.n / 4u; // quads below nfull are whole; quad nfull < n4 is partial
    if (LANE_SERIAL == 1u) {
        uint first = gl_WorkGroupID.x * WG * ITEMS + gl_LocalInvocationID.x * ITEMS;
        uint last = min(first + ITEMS, n4);
        uint stop = min(last, nfull); // the partial quad is ours when first <= nfull < last
        uint sum = 0u;
        for (uint i = first; i < stop; ++i) sum += quad_sum(src[i]);
        if (first <= nfull && nfull < last) {
            uvec4 v;
            LOAD_TAIL4(v, src1, nfull, p.n, uvec4(0u))
            sum += quad_sum(v);
        }
        tile_sums[gl_WorkGroupID.x * WG + gl_LocalInvocationID.x] = sum;
        return;
    }
    uint base = gl_WorkGroupID.x * WG * ITEMS + gl_LocalInvocationID.x;
    uint acc = 0u;
    for (uint k = 0u; k < ITEMS; ++k) {
        uint i = base + k * WG;
        if (i < nfull) acc += quad_sum(src[i]);
    }
    if (nfull < n4 && owns_round_quad(nfull, base, ITEMS)) {
        uvec4 v;
        LOAD_TAIL4(v, src1, nfull, p.n, uvec4(0u))
        acc += quad_sum(v);
    }
    uint total = workgroup_add(acc);
    if (gl_LocalInvocationID.x == 0u) tile_sums[gl_WorkGroupID.x] = total;
}
