#version 460
// The proximal operators on a batch (for the tests of spec B9 #1): out[i] =
// prox_contact(z_i, μ_i, radius_i) with in[i] = (z, μ) and radius[i] (< 0: the new λn).
// Host: tests/gpu/prox_kernels.rs. Reference: cpu_reference/prox/operators.rs.
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer In { vec4 zin[]; };
layout(std430, binding = 1) readonly buffer Radius { float radius[]; };
layout(std430, binding = 2) writeonly buffer Out { vec4 zout[]; };
layout(push_constant) uniform Push { ProxParams p; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.k) return;
    zout[i] = vec4(prox_contact(zin[i].xyz, zin[i].w, radius[i]), 0.0);
}
