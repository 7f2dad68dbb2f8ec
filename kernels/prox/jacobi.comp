#version 460
// PROX K2 of the Jacobi (HYBRID = 0, report Alg. 4: cone radius from the old λn) and hybrid
// (HYBRID = 1, Alg. 5: from the new λn) sweeps, one invocation per contact: every contact from
// the same wvel, λ updated in place (each invocation reads only its own λ).
// Host: engine/src/contact/prox/solver.rs. Reference: cpu_reference/prox/solve.rs::sweep_jacobi.
#define PROX_WITH_UPDATE
#include "common.glsl"
#include "prox.glsl"
layout(constant_id = 1) const uint HYBRID = 0;
layout(std430, binding = 0) readonly buffer Ctrl { uint ctrl[]; };
layout(std430, binding = 1) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 2) readonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 3) readonly buffer Weights { vec4 weights[]; };
layout(std430, binding = 4) readonly buffer Frame { vec4 frame[]; };
layout(std430, binding = 5) readonly buffer Bias { vec4 bias[]; };
layout(std430, binding = 6) buffer Lam { vec4 lam[]; };
layout(std430, binding = 7) readonly buffer WVel { vec4 wvel[]; };
layout(std430, binding = 8) readonly buffer InvMass { float inv_mass[]; };
layout(push_constant) uniform Push { ProxParams p; };
// Gauss–Seidel's scatter writes wvel, which this kernel binds read-only: compiled out.
#define PROX_NO_SCATTER
#include "prox_solve.glsl"
void main() {
    if (ctrl[PROX_STATUS] != 0u) return;
    float rs = uintBitsToFloat(ctrl[PROX_R_SCALE]);
    uint kc = min(meta[0], p.k);
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint k = gl_GlobalInvocationID.x; k < kc; k += stride) {
        lam[k] = vec4(prox_contact_update(k, rs, HYBRID == 0u), 0.0);
    }
}
