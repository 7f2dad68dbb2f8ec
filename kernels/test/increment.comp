#version 460
// Test kernel: v[i] = src[i] + 1 for i < n (dependent chains prove barrier inference).
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) dst[i] = src[i] + 1u;
}
