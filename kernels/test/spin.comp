#version 460
// Test kernel that runs for a long, bounded time (a "hung" shader for timeout tests): every
// iteration (outer x 50000) performs a volatile load, so the compiler cannot fold the loop away.
#include "common.glsl"
layout(std430, binding = 0) volatile buffer B { uint v[]; };
layout(push_constant) uniform P { uint outer; } p;
void main() {
    uint x = gl_GlobalInvocationID.x;
    // llvmpipe caps loops at 65535 iterations per invocation: long runs need many workgroups.
    for (uint o = 0u; o < p.outer; ++o) {
        for (uint i = 0u; i < 50000u; ++i) {
            x = x * 1664525u + v[0];
        }
    }
    if (x == 0x12345678u) v[1] = x;
}
