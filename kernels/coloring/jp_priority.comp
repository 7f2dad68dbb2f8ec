#version 460
// Jones–Plassmann round, pass 1: every uncolored constraint writes its priority into the
// per-vertex maximum `vmax` (cleared to 0 before the pass) of each vertex it touches.
// Host: engine/src/coloring/gpu.rs; reference: engine/src/cpu_reference/coloring.rs.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Constraints { uvec4 cons[]; };
layout(std430, binding = 1) readonly buffer Colors { uint color[]; };
layout(std430, binding = 2) buffer VMax { uint vmax[]; };

layout(push_constant) uniform Params {
    uint n;     // constraints
    uint nv;    // vertices (slots >= nv, including the u32::MAX padding, are ignored)
    uint seed;
} pc;

const uint UNCOLORED = 0xFFFFFFFFu;

// Bijective mixer (lowbias32), as cpu_reference::coloring::mix.
uint mix32(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void main() {
    uint stride = WG * gl_NumWorkGroups.x;
    uint key = mix32(pc.seed ^ 0x9e3779b9u);
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        if (color[i] != UNCOLORED) {
            continue;
        }
        uint p = mix32(i ^ key);
        uvec4 c = cons[i];
        for (uint k = 0u; k < 4u; ++k) {
            uint v = c[k];
            if (v < pc.nv) {
                atomicMax(vmax[v], p);
            }
        }
    }
}
