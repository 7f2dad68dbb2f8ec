#version 460
// Indirect dispatch arguments of the per-color sweep: for each color c < p.color (the color
// capacity recorded in the graph), ceil(count_c / p.mode) workgroups (p.mode = the sweep's
// workgroup size); empty colors get 0 workgroups.
// Host: engine/src/contact/prox/solver.rs.
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer ColorOffsets { uint color_offsets[]; };
layout(std430, binding = 1) writeonly buffer Args { uint args[]; };
layout(push_constant) uniform Push { ProxParams p; };
void main() {
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint c = gl_GlobalInvocationID.x; c < p.color; c += stride) {
        uint count = color_offsets[c + 1u] - color_offsets[c];
        args[3u * c] = (count + p.mode - 1u) / p.mode;
        args[3u * c + 1u] = 1u;
        args[3u * c + 2u] = 1u;
    }
}
