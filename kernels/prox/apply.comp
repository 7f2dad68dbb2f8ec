#version 460
// PROX finish, one invocation per node: u = u′ + W Jᵀ λ (the final gather's wvel added to the
// stepper's velocities in place; fixed nodes have wvel = 0).
// Host: engine/src/contact/prox/solver.rs. Reference: cpu_reference/prox/contact.rs::ProxProblem::apply.
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer WVel { vec4 wvel[]; };
layout(std430, binding = 1) buffer U { vec4 u[]; };
layout(push_constant) uniform Push { ProxParams p; };
void main() {
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint a = gl_GlobalInvocationID.x; a < p.n; a += stride) u[a].xyz += wvel[a].xyz;
}
