#version 460
// Per-vertex sum of the corner gradients of its incident tets, in a fixed (CSR) order, so the
// result is deterministic (no float atomics). Host: engine/src/fem/elements.rs.
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Grad { vec4 grad[]; };
layout(std430, binding = 1) readonly buffer Start { uint start[]; };
layout(std430, binding = 2) readonly buffer Corners { uint corners[]; }; // 4 t + k
layout(std430, binding = 3) writeonly buffer Out { vec4 vertex_grad[]; };
layout(push_constant) uniform P { uint num_vertices; } p;
void main() {
    uint v = gl_GlobalInvocationID.x;
    if (v >= p.num_vertices) return;
    vec3 acc = vec3(0.0);
    for (uint e = start[v]; e < start[v + 1u]; ++e) acc += grad[corners[e]].xyz;
    vertex_grad[v] = vec4(acc, 0.0);
}
