#version 460
// Node → contact incidence, pass 3, one invocation per node: insertion sort of the node's
// entries by (original contact index, slot), so the gather sums in the reference's order and
// reruns are bit-identical whatever the scheduling of csr_fill.
// Host: engine/src/contact/prox/solver.rs. Reference: cpu_reference/prox/contact.rs::gather.
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 1) readonly buffer Orig { uint orig[]; };
layout(std430, binding = 2) buffer Entries { uint entries[]; };
layout(push_constant) uniform Push { ProxParams p; };
uint sort_key(uint e) { return 8u * orig[e >> 3u] + (e & 7u); }
void main() {
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint a = gl_GlobalInvocationID.x; a < p.n; a += stride) {
        uint lo = offsets[a], hi = offsets[a + 1u];
        for (uint i = lo + 1u; i < hi; ++i) {
            uint e = entries[i];
            uint key = sort_key(e);
            uint j = i;
            while (j > lo && sort_key(entries[j - 1u]) > key) {
                entries[j] = entries[j - 1u];
                j -= 1u;
            }
            entries[j] = e;
        }
    }
}
