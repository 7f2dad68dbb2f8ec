#version 460
// PROX Gauss–Seidel by colors (report Alg. 7 with the exact sum, spec B5 #1): one dispatch per
// color (indirect, sized by the color), one invocation per contact of color p.color (contacts
// stored color-major): z from the current wvel, prox, then wvel += W J_kᵀ Δλ at the contact's
// nodes with plain read-modify-writes: contacts of one color share no free node.
// Host: engine/src/contact/prox/solver.rs. Reference: cpu_reference/prox/solve.rs::sweep_colored.
#define PROX_WITH_UPDATE
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer Ctrl { uint ctrl[]; };
layout(std430, binding = 1) readonly buffer ColorOffsets { uint color_offsets[]; };
layout(std430, binding = 2) readonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 3) readonly buffer Weights { vec4 weights[]; };
layout(std430, binding = 4) readonly buffer Frame { vec4 frame[]; };
layout(std430, binding = 5) readonly buffer Bias { vec4 bias[]; };
layout(std430, binding = 6) buffer Lam { vec4 lam[]; };
layout(std430, binding = 7) buffer WVel { vec4 wvel[]; };
layout(std430, binding = 8) readonly buffer InvMass { float inv_mass[]; };
layout(push_constant) uniform Push { ProxParams p; };
#include "prox_solve.glsl"
void main() {
    if (ctrl[PROX_STATUS] != 0u) return;
    uint first = color_offsets[p.color];
    uint count = color_offsets[p.color + 1u] - first;
    uint i = gl_GlobalInvocationID.x;
    if (i >= count) return;
    prox_gs_update(first + i, uintBitsToFloat(ctrl[PROX_R_SCALE]));
}
