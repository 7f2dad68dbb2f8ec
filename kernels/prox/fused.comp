#version 460
// A whole PROX sweep (or p.sweeps of them) in ONE dispatch of ONE workgroup, with workgroup
// barriers between the phases instead of dispatches: gather (K1), the scheme's update
// (SCHEME 0 serial Gauss–Seidel in contact order by invocation 0; 1 Jacobi; 2 hybrid; 3
// Gauss–Seidel by colors, meta[1] colors), then the merit, decision and commit (K3). Same
// arithmetic per contact and per node as the separate kernels (bit-identical results). For CPU
// Vulkan devices (lavapipe) and small contact sets, where dispatches cost more than the work.
// Host: engine/src/contact/prox/solver.rs. Reference: cpu_reference/prox/solve.rs.
#define PROX_WITH_UPDATE
#define PROX_WITH_GATHER
#define PROX_WITH_MERIT
#include "common.glsl"
#include "prox.glsl"
layout(constant_id = 1) const uint SCHEME = 3;
layout(std430, binding = 0) coherent buffer Ctrl { uint ctrl[]; };
layout(std430, binding = 1) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 2) readonly buffer ColorOffsets { uint color_offsets[]; };
layout(std430, binding = 3) readonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 4) readonly buffer Weights { vec4 weights[]; };
layout(std430, binding = 5) readonly buffer Frame { vec4 frame[]; };
layout(std430, binding = 6) readonly buffer Bias { vec4 bias[]; };
layout(std430, binding = 7) coherent buffer Lam { vec4 lam[]; };
layout(std430, binding = 8) coherent buffer Saved { vec4 saved[]; };
layout(std430, binding = 9) coherent buffer WVel { vec4 wvel[]; };
layout(std430, binding = 10) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 11) readonly buffer CsrOff { uint csr_off[]; };
layout(std430, binding = 12) readonly buffer CsrEnt { uint csr_ent[]; };
layout(push_constant) uniform Push { ProxParams p; };
#include "prox_solve.glsl"
shared float fused_rs;

void sync() {
    memoryBarrierBuffer();
    barrier();
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    // Uniform: read by every invocation before anything is written.
    uint status = ctrl[PROX_STATUS];
    uint kc = min(meta[0], p.k);
    for (uint it = 0u; it < p.sweeps && status == 0u; ++it) {
        if (lid == 0u) fused_rs = uintBitsToFloat(ctrl[PROX_R_SCALE]);
        for (uint a = lid; a < p.n; a += WG) prox_gather_node(a);
        sync();
        float rs = fused_rs;
        if (SCHEME == 3u) {
            uint colors = meta[1];
            for (uint c = 0u; c < colors; ++c) {
                uint hi = color_offsets[c + 1u];
                for (uint k = color_offsets[c] + lid; k < hi; k += WG) prox_gs_update(k, rs);
                sync();
            }
        } else if (SCHEME == 0u) {
            // Nested loops: llvmpipe caps a single loop at 65,535 iterations.
            if (lid == 0u) {
                for (uint hi = 0u; hi < kc; hi += 4096u) {
                    for (uint k = hi; k < min(kc, hi + 4096u); ++k) prox_gs_update(k, rs);
                }
            }
            sync();
        } else {
            for (uint k = lid; k < kc; k += WG) lam[k] = vec4(prox_contact_update(k, rs, SCHEME == 1u), 0.0);
            sync();
        }
        status = prox_merit_commit(kc);
        sync();
    }
}
