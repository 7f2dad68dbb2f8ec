#version 460
// |d_i| per vertex (for the Newton stopping test ‖d‖∞ < tolerance). Host: engine/src/newton.rs.
#include "common.glsl"
layout(std430, binding = 0) readonly buffer D { vec4 d[]; };
layout(std430, binding = 1) writeonly buffer N { float norms[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) norms[i] = length(d[i].xyz);
}
