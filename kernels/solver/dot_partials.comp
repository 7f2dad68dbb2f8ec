#version 460
// Dot product of two vec3 arrays, pass 1: one partial sum per tile of WG*ITEMS entries, in a
// fixed order (deterministic). Host: engine/src/solver/pcg.rs.
#include "common.glsl"
layout(constant_id = 1) const uint ITEMS = 16;
// a and b come through uniform texel buffer views (texelFetch: a vector gather on CPU devices).
layout(binding = 0) uniform samplerBuffer a;
layout(binding = 1) uniform samplerBuffer b;
layout(std430, binding = 2) writeonly buffer Parts { float parts[]; };
layout(push_constant) uniform P { uint n; } p;
shared float sg_sums[MAX_SUBGROUPS];
void main() {
    uint base = gl_WorkGroupID.x * WG * ITEMS + gl_LocalInvocationID.x;
    float acc = 0.0;
    for (uint k = 0u; k < ITEMS; ++k) {
        uint i = base + k * WG;
        if (i < p.n) acc += dot(texelFetch(a, int(i)).xyz, texelFetch(b, int(i)).xyz);
    }
    float s = subgroupAdd(acc);
    if (gl_NumSubgroups == 1u) {
        if (gl_LocalInvocationID.x == 0u) parts[gl_WorkGroupID.x] = s;
        return;
    }
    if (subgroupElect()) sg_sums[gl_SubgroupID] = s;
    barrier();
    if (gl_LocalInvocationID.x == 0u) {
        float t = 0.0;
        for (uint k = 0u; k < gl_NumSubgroups; ++k) t += sg_sums[k];
        parts[gl_WorkGroupID.x] = t;
    }
}
