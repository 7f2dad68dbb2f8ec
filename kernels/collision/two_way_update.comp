#version 460
// Two-way IPM, end of a step (Algorithm 1): D^(l+1) = D^(l) - 2 max_i |Δx_i| (the reuse bound,
// §3.1), the step count, and the stop flags: converged (max_i r_i < ε), step limit L, or a new
// proximity search needed (D^(l+1) < D_min). One invocation.
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::Solver::step.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) buffer State { TwState s; };
layout(push_constant) uniform Push { TwParams p; };
void main() {
    if (gl_GlobalInvocationID.x != 0u || (s.flags & TW_STOP) != 0u) return;
    s.bound -= 2.0 * uintBitsToFloat(s.max_disp);
    s.steps += 1u;
    float mr = uintBitsToFloat(s.max_r);
    s.last_max_r = s.max_r;
    s.max_disp = 0u;
    s.max_r = 0u;
    if (mr < p.epsilon) s.flags |= TW_CONVERGED;
    else if (s.steps >= p.max_steps) s.flags |= TW_LIMIT;
    else if (s.bound < p.d_min) s.flags |= TW_SEARCH;
}
