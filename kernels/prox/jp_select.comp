#version 460
// Jones–Plassmann round on 8-node contacts, pass 2: an uncolored contact holding the maximum
// priority at each of its graph nodes takes the smallest color absent from their 256-bit
// used-color masks and ORs it in (winners share no graph node); all taken: OVERFLOW.
// Host: engine/src/contact/prox/coloring.rs. Reference: cpu_reference/prox/graph.rs::jones_plassmann.
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 2) readonly buffer VMax { uint vmax[]; };
layout(std430, binding = 3) buffer Colors { uint color[]; };
layout(std430, binding = 4) buffer Used { uint used[]; };   // USED_WORDS words per node
layout(std430, binding = 5) readonly buffer InvMass { float inv_mass[]; };
layout(push_constant) uniform Push { ProxParams p; };
const uint USED_WORDS = 8u;
const uint UNCOLORED = 0xFFFFFFFFu;
const uint OVERFLOW = 0xFFFFFFFEu;
uint mix32(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
bool in_graph(uint a) { return a < p.n && (p.mode == 0u || inv_mass[min(a, p.n - 1u)] > 0.0); }
uint slot(uint i, uint j) { return nodes[2u * i + (j >> 2u)][j & 3u]; }
void main() {
    uint kc = min(meta[0], p.k);
    uint stride = WG * gl_NumWorkGroups.x;
    uint key = mix32(p.seed ^ 0x9e3779b9u);
    for (uint i = gl_GlobalInvocationID.x; i < kc; i += stride) {
        if (color[i] != UNCOLORED) continue;
        uint prio = mix32(i ^ key);
        bool win = true;
        for (uint j = 0u; j < 8u; ++j) {
            uint a = slot(i, j);
            if (in_graph(a) && vmax[a] != prio) win = false;
        }
        if (!win) continue;
        uint col = OVERFLOW;
        for (uint w = 0u; w < USED_WORDS; ++w) {
            uint m = 0u;
            for (uint j = 0u; j < 8u; ++j) {
                uint a = slot(i, j);
                if (in_graph(a)) m |= used[USED_WORDS * a + w];
            }
            if (m != 0xFFFFFFFFu) {
                col = 32u * w + uint(findLSB(~m));
                break;
            }
        }
        color[i] = col;
        if (col < 32u * USED_WORDS) {
            uint word = col >> 5u, bit = 1u << (col & 31u);
            for (uint j = 0u; j < 8u; ++j) {
                uint a = slot(i, j);
                if (in_graph(a)) atomicOr(used[USED_WORDS * a + word], bit);
            }
        }
    }
}
