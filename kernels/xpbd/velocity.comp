#version 460
// XPBD velocity update v = (x − x_prev) / h for every vertex (scripted ones included), and the
// substep clock advanced by one (invocation 0). Host: engine/src/xpbd/mod.rs.
// Reference: engine/src/cpu_reference/xpbd.rs (velocities).
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer XPrev { vec4 x_prev[]; };
layout(std430, binding = 2) writeonly buffer V { vec4 v[]; };
layout(std430, binding = 3) buffer Clock { uint clock[]; };
layout(push_constant) uniform P {
    uint n;
    float inv_h;
    uint pad0;
    uint pad1;
} p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i == 0u) clock[0] += 1u;
    if (i >= p.n) return;
    v[i] = vec4((x[i].xyz - x_prev[i].xyz) * p.inv_h, 0.0);
}
