#version 460
// Two-way IPM, end of a step (Algorithm 1): D^(l+1) = D^(l) - s with s = min(2 max_i |Δx_i|,
// |hi - lo| + 1e-6 · 2 max_i |Δx_i|), lo and hi the corners of the box of the stored
// displacements Δx_i (the reuse bound, §3.1, made translation-invariant: distances do not change
// under a common translation t, and a pair's distance falls by at most 2 max_i |Δx_i - t| <=
// |hi - lo| for t the box's centre, so a body moving as a whole keeps its pairs; the second term
// covers the f32 rounding of the box, relative to the motion), the step count, and the stop
// flags: converged (max_i r_i < ε) or step limit L, and a new proximity search needed
// (D^(l+1) < D_min; also set on a stop). One invocation.
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::Solver::step.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) buffer State { TwState s; };
layout(push_constant) uniform Push { TwParams p; };
void main() {
    if (gl_GlobalInvocationID.x != 0u || (s.flags & TW_STOP) != 0u) return;
    float twice_max = 2.0 * uintBitsToFloat(s.max_disp);
    // The box is never empty here: the forward step of a running solve widens it with every
    // vertex (p.n >= 1), and a stopped solve returns above.
    vec3 lo = vec3(ordered_to_float(s.disp_lo[0]), ordered_to_float(s.disp_lo[1]),
                   ordered_to_float(s.disp_lo[2]));
    vec3 hi = vec3(ordered_to_float(s.disp_hi[0]), ordered_to_float(s.disp_hi[1]),
                   ordered_to_float(s.disp_hi[2]));
    float spread = length(max(hi - lo, vec3(0.0))) + TW_SPREAD_MARGIN * twice_max;
    s.bound -= min(twice_max, spread);
    s.steps += 1u;
    float mr = uintBitsToFloat(s.max_r);
    s.last_max_r = s.max_r;
    s.max_disp = 0u;
    s.max_r = 0u;
    for (uint k = 0u; k < 3u; k++) {
        s.disp_lo[k] = 0xffffffffu;
        s.disp_hi[k] = 0u;
    }
    if (mr < p.epsilon) s.flags |= TW_CONVERGED;
    else if (s.steps >= p.max_steps) s.flags |= TW_LIMIT;
    // Also on a stop: whatever continues from this state (the next solve) needs a search first,
    // and a batch with searches within it runs it at once (TwoWay::set_batch_searches).
    if (s.bound < p.d_min) s.flags |= TW_SEARCH;
}
