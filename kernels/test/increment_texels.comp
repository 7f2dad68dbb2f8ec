#version 460
// Test kernel: dst[i] = src[i] + 1 for i < n, src read through a uniform texel buffer view
// (R32_UINT, texelFetch): texel bindings order with storage writes like storage reads.
#include "common.glsl"
layout(binding = 0) uniform usamplerBuffer src;
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) dst[i] = texelFetch(src, int(i)).x + 1u;
}
