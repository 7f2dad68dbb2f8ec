#version 460
// Contacts into color-major order, one invocation per position i: the contact
// src = grouped[i] (p.mode = 1, after the GPU coloring's grouping) or i (p.mode = 0) is copied
// from the raw arrays to the solver's arrays, and orig[i] = src.
// Host: engine/src/contact/prox/solver.rs.
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Grouped { uint grouped[]; };
layout(std430, binding = 2) readonly buffer RawNodes { uvec4 raw_nodes[]; };
layout(std430, binding = 3) readonly buffer RawWeights { vec4 raw_weights[]; };
layout(std430, binding = 4) readonly buffer RawFrame { vec4 raw_frame[]; };
layout(std430, binding = 5) writeonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 6) writeonly buffer Weights { vec4 weights[]; };
layout(std430, binding = 7) writeonly buffer Frame { vec4 frame[]; };
layout(std430, binding = 8) writeonly buffer Orig { uint orig[]; };
layout(push_constant) uniform Push { ProxParams p; };
void main() {
    uint kc = min(meta[0], p.k);
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint i = gl_GlobalInvocationID.x; i < kc; i += stride) {
        uint src = p.mode == 1u ? grouped[min(i, p.k - 1u)] : i;
        nodes[2u * i] = raw_nodes[2u * src];
        nodes[2u * i + 1u] = raw_nodes[2u * src + 1u];
        weights[2u * i] = raw_weights[2u * src];
        weights[2u * i + 1u] = raw_weights[2u * src + 1u];
        for (uint r = 0u; r < 3u; ++r) frame[3u * i + r] = raw_frame[3u * src + r];
        orig[i] = src;
    }
}
