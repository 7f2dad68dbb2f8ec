#version 460
// Per-vertex displacement length |x1[i] - x0[i]| (m) for the reuse bound of the proximity
// search (its maximum is taken with the Reduce primitive). Host: engine/src/proximity/reuse.rs.
// Reference: engine/src/cpu_reference/proximity.rs::displacements.
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X0 { vec4 x0[]; };
layout(std430, binding = 1) readonly buffer X1 { vec4 x1[]; };
layout(std430, binding = 2) writeonly buffer Out { float len[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * WG);
    if (i >= p.n) return;
    len[i] = length(x1[i].xyz - x0[i].xyz);
}
