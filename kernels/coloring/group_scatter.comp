#version 460
// Counting sort by color, pass 3 (after the exclusive scan of the counts, copied into
// `cursor`): each constraint of color c < 64 takes the next slot of its color's range.
// The order inside one color is unspecified (its constraints share no vertex).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Colors { uint color[]; };
layout(std430, binding = 1) buffer Cursor { uint cursor[]; };
layout(std430, binding = 2) writeonly buffer Grouped { uint grouped[]; };

layout(push_constant) uniform Params {
    uint n;
} pc;

void main() {
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        uint c = color[i];
        if (c < 256u) {
            uint slot = atomicAdd(cursor[c], 1u);
            grouped[slot] = i;
        }
    }
}
