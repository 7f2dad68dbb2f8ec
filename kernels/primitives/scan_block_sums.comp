#version 460
// Scan pass 2 (one workgroup): exclusive scan of m tile sums in place; writes the grand total
// to sums[m]. Host: engine/src/primitives/scan.rs.
#include "common.glsl"
#include "workgroup_scan.glsl"
layout(std430, binding = 0) buffer Sums { uint sums[]; };
layout(push_constant) uniform P { uint m; } p;
void main() {
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
