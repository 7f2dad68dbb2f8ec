#version 460
// After a batch of Jones–Plassmann rounds on the meta[0] contacts: status[0] += uncolored,
// status[1] += overflowed, status[2] = max(status[2], largest color + 1) (status cleared
// before). As kernels/coloring/jp_count.comp, bounded by the device-side contact count.
// Host: engine/src/contact/prox/coloring.rs.
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Colors { uint color[]; };
layout(std430, binding = 2) buffer Status { uint status[]; };
layout(push_constant) uniform Push { ProxParams p; };
const uint UNCOLORED = 0xFFFFFFFFu;
const uint OVERFLOW = 0xFFFFFFFEu;
void main() {
    uint kc = min(meta[0], p.k);
    uint stride = WG * gl_NumWorkGroups.x;
    uint uncolored = 0u, overflowed = 0u, colors = 0u;
    for (uint i = gl_GlobalInvocationID.x; i < kc; i += stride) {
        uint c = color[i];
        if (c == UNCOLORED) uncolored += 1u;
        else if (c == OVERFLOW) overflowed += 1u;
        else colors = max(colors, c + 1u);
    }
    uncolored = subgroupAdd(uncolored);
    overflowed = subgroupAdd(overflowed);
    colors = subgroupMax(colors);
    if (subgroupElect()) {
        if (uncolored != 0u) atomicAdd(status[0], uncolored);
        if (overflowed != 0u) atomicAdd(status[1], overflowed);
        atomicMax(status[2], colors);
    }
}
