#version 460
// Bandwidth baseline: copies n16 uvec4s. Each invocation moves ITEMS uvec4s; in every round the
// workgroup touches WG consecutive uvec4s so lanes load contiguous memory.
#include "common.glsl"
layout(constant_id = 1) const uint ITEMS = 16;
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform P { uint n16; } p;
void main() {
    uint base = gl_WorkGroupID.x * WG * ITEMS + gl_LocalInvocationID.x;
    for (uint k = 0u; k < ITEMS; ++k) {
        uint i = base + k * WG;
        if (i < p.n16) dst[i] = src[i];
    }
}
