#version 460
// Scan pass 2 (one workgroup): exclusive scan of m tile sums in place; writes the grand total
// to sums[m]. Host: engine/src/primitives/scan.rs.
#include "common.glsl"
#include "workgroup_scan.glsl"
layout(constant_id = 1) const uint LANE_SERIAL = 0;
layout(std430, binding = 0) buffer Sums { uint sums[]; };
layout(push_constant) uniform P { uint m; } p;
void main() {
    if (LANE_SERIAL == 1u) {
        // Each invocation owns a contiguous chunk: sum it, scan the chunk sums, then write.
        uint chunk = (p.m + WG - 1u) / WG;
        uint first = gl_LocalInvocationID.x * chunk;
        uint last = min(first + chunk, p.m);
        uint sum = 0u;
        for (uint i = first; i < last; ++i) sum += sums[i];
        uint total;
        uint run = workgroup_exclusive_add(sum, total);
        for (uint i = first; i < last; ++i) {
            uint v = sums[i];
            sums[i] = run;
            run += v;
        }
        if (gl_LocalInvocationID.x == 0u) sums[p.m] = total;
        return;
    }
    uint carry = 0u;
    for (uint base = 0u; base < p.m; base += WG) {
        uint i = base + gl_LocalInvocationID.x;
        uint v = i < p.m ? sums[i] : 0u;
        uint total;
        uint ex = workgroup_exclusive_add(v, total);
        if (i < p.m) sums[i] = carry + ex;
        carry += total;
    }
    if (gl_LocalInvocationID.x == 0u) sums[p.m] = carry;
}
