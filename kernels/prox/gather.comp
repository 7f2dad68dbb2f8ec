#version 460
// PROX K1, one invocation per node: wvel[a] = m_a⁻¹ Σ w C_kᵀ λ_k over the node's incidence
// entries (a gather, no atomics). mode 0: a sweep's first step (skipped once the solve has
// stopped); mode 1: the final velocity correction (always).
// Host: engine/src/contact/prox/solver.rs. Reference: cpu_reference/prox/contact.rs::gather.
#define PROX_WITH_GATHER
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer Ctrl { uint ctrl[]; };
layout(std430, binding = 1) readonly buffer CsrOff { uint csr_off[]; };
layout(std430, binding = 2) readonly buffer CsrEnt { uint csr_ent[]; };
layout(std430, binding = 3) readonly buffer Weights { vec4 weights[]; };
layout(std430, binding = 4) readonly buffer Frame { vec4 frame[]; };
layout(std430, binding = 5) readonly buffer Lam { vec4 lam[]; };
layout(std430, binding = 6) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 7) writeonly buffer WVel { vec4 wvel[]; };
layout(push_constant) uniform Push { ProxParams p; };
#include "prox_solve.glsl"
void main() {
    if (p.mode == 0u && ctrl[PROX_STATUS] != 0u) return;
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint a = gl_GlobalInvocationID.x; a < p.n; a += stride) prox_gather_node(a);
}
