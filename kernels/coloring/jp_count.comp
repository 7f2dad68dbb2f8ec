#version 460
// After a batch of Jones–Plassmann rounds: status[0] += uncolored constraints, status[1] +=
// overflowed constraints, status[2] = max(status[2], largest color + 1). `status` is cleared
// before the pass; the host reads these three scalars to decide whether to run more rounds.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Colors { uint color[]; };
layout(std430, binding = 1) buffer Status { uint status[]; };

layout(push_constant) uniform Params {
    uint n;
} pc;

const uint UNCOLORED = 0xFFFFFFFFu;
const uint OVERFLOW = 0xFFFFFFFEu;

void main() {
    uint stride = WG * gl_NumWorkGroups.x;
    uint uncolored = 0u;
    uint overflowed = 0u;
    uint colors = 0u;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        uint c = color[i];
        if (c == UNCOLORED) {
            uncolored += 1u;
        } else if (c == OVERFLOW) {
            overflowed += 1u;
        } else {
            colors = max(colors, c + 1u);
        }
    }
    uncolored = subgroupAdd(uncolored);
    overflowed = subgroupAdd(overflowed);
    colors = subgroupMax(colors);
    if (subgroupElect()) {
        if (uncolored != 0u) {
            atomicAdd(status[0], uncolored);
        }
        if (overflowed != 0u) {
            atomicAdd(status[1], overflowed);
        }
        atomicMax(status[2], colors);
    }
}
