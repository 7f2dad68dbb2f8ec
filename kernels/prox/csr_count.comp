#version 460
// Node → contact incidence, pass 1: counts[a] += 1 for every used slot at node a (counts
// cleared before; an exclusive scan of counts[0..=n] then gives the offsets).
// Host: engine/src/contact/prox/solver.rs. Reference: the gather order of cpu_reference/prox/contact.rs.
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 2) buffer Counts { uint counts[]; };
layout(push_constant) uniform Push { ProxParams p; };
void main() {
    uint kc = min(meta[0], p.k);
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint k = gl_GlobalInvocationID.x; k < kc; k += stride) {
        for (uint h = 0u; h < 2u; ++h) {
            uvec4 na = nodes[2u * k + h];
            for (uint j = 0u; j < 4u; ++j) {
                if (na[j] < p.n) atomicAdd(counts[na[j]], 1u);
            }
        }
    }
}
