#version 460
// Counting sort by color, pass 1: counts[c] += 1 for every constraint of color c < 64
// (counts cleared before the pass).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Colors { uint color[]; };
layout(std430, binding = 1) buffer Counts { uint counts[]; };

layout(push_constant) uniform Params {
    uint n;
} pc;

void main() {
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        uint c = color[i];
        if (c < 256u) {
            atomicAdd(counts[c], 1u);
        }
    }
}
