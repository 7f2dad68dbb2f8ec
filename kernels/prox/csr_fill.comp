#version 460
// Node → contact incidence, pass 2: every used slot (k, j) at node a takes the next entry of
// a's range (cursor = a copy of the offsets) and stores 8 k + j. The order inside a node's
// range depends on scheduling; csr_sort makes it deterministic.
// Host: engine/src/contact/prox/solver.rs.
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 2) buffer Cursor { uint cursor[]; };
layout(std430, binding = 3) writeonly buffer Entries { uint entries[]; };
layout(push_constant) uniform Push { ProxParams p; };
void main() {
    uint kc = min(meta[0], p.k);
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint k = gl_GlobalInvocationID.x; k < kc; k += stride) {
        for (uint h = 0u; h < 2u; ++h) {
            uvec4 na = nodes[2u * k + h];
            for (uint j = 0u; j < 4u; ++j) {
                if (na[j] < p.n) {
                    uint slot = atomicAdd(cursor[na[j]], 1u);
                    entries[slot] = 8u * k + 4u * h + j;
                }
            }
        }
    }
}
