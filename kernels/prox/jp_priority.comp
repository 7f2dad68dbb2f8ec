#version 460
// Jones–Plassmann round on 8-node contacts, pass 1: every uncolored contact writes its
// priority into the per-node maximum vmax (cleared before) of each node it touches; with
// p.mode = 1 nodes of inverse mass 0 are left out of the graph. Priorities as
// kernels/coloring/jp_priority.comp. Host: engine/src/contact/prox/coloring.rs. Reference:
// cpu_reference/prox/graph.rs::jones_plassmann.
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 2) readonly buffer Colors { uint color[]; };
layout(std430, binding = 3) buffer VMax { uint vmax[]; };
layout(std430, binding = 4) readonly buffer InvMass { float inv_mass[]; };
layout(push_constant) uniform Push { ProxParams p; };
const uint UNCOLORED = 0xFFFFFFFFu;
uint mix32(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
bool in_graph(uint a) { return a < p.n && (p.mode == 0u || inv_mass[min(a, p.n - 1u)] > 0.0); }
void main() {
    uint kc = min(meta[0], p.k);
    uint stride = WG * gl_NumWorkGroups.x;
    uint key = mix32(p.seed ^ 0x9e3779b9u);
    for (uint i = gl_GlobalInvocationID.x; i < kc; i += stride) {
        if (color[i] != UNCOLORED) continue;
        uint prio = mix32(i ^ key);
        for (uint h = 0u; h < 2u; ++h) {
            uvec4 na = nodes[2u * i + h];
            for (uint j = 0u; j < 4u; ++j) {
                if (in_graph(na[j])) atomicMax(vmax[na[j]], prio);
            }
        }
    }
}
