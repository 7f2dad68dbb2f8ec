#version 460
// Test kernel that runs for a long, bounded time (a "hung" shader for timeout tests).
#include "common.glsl"
layout(std430, binding = 0) buffer B { uint v[]; };
layout(push_constant) uniform P { uint iterations; } p;
void main() {
    uint x = v[0] + gl_GlobalInvocationID.x;
    for (uint i = 0u; i < p.iterations; ++i) {
        x = x * 1664525u + 1013904223u;
    }
    if (x == 0x12345678u) v[1] = x; // keeps the loop alive
}
