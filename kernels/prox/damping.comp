#version 460
// RAINBOW's damping in the free velocity update, one invocation per node: its semi-implicit step
// adds h W f_d with the lumped damping force f_d = −c V_a u_a of the start-of-step velocity, so
// u′_a −= (h c V_a w_a) u_a with coeff[a] = h c V_a w_a precomputed on the host (0 for fixed
// nodes). Host: engine/src/contact/prox/nodes.rs. Reference: cpu_reference/prox/nodes.rs::damp.
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Coeff { float coeff[]; };
layout(std430, binding = 1) readonly buffer UStart { vec4 u_start[]; };
layout(std430, binding = 2) buffer U { vec4 u[]; };
layout(push_constant) uniform Push { uint n; float inv_h; uint pad0; uint pad1; } p;
void main() {
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint a = gl_GlobalInvocationID.x; a < p.n; a += stride) {
        u[a].xyz -= coeff[a] * u_start[a].xyz;
    }
}
