#version 460
// Natural-map residual of the returned impulses in ONE workgroup, after the final gather
// (wvel = W Jᵀ λ): max_k ‖λ_k − prox(λ_k − A_kk⁻¹ (J_k w + b_k))‖∞ into ctrl[PROX_RESIDUAL]
// (A_kk⁻¹ = r_k / r_factor, 1 where A_kk = 0, as the reference).
// Host: engine/src/contact/prox/solver.rs. Reference: cpu_reference/prox/ncp.rs (natural_map).
#define PROX_WITH_UPDATE
#define PROX_NO_SCATTER
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) buffer Ctrl { uint ctrl[]; };
layout(std430, binding = 1) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 2) readonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 3) readonly buffer Weights { vec4 weights[]; };
layout(std430, binding = 4) readonly buffer Frame { vec4 frame[]; };
layout(std430, binding = 5) readonly buffer Bias { vec4 bias[]; };
layout(std430, binding = 6) readonly buffer Lam { vec4 lam[]; };
layout(std430, binding = 7) readonly buffer WVel { vec4 wvel[]; };
layout(push_constant) uniform Push { ProxParams p; };
#include "prox_solve.glsl"
shared float red[WG];
void main() {
    uint lid = gl_LocalInvocationID.x;
    uint kc = min(meta[0], p.k);
    float m = 0.0;
    for (uint k = lid; k < kc; k += WG) {
        vec3 l = lam[k].xyz;
        vec4 b = bias[k];
        vec3 z = l - (b.w / p.r_factor) * (prox_jacobian_w(k) + b.xyz);
        vec3 d = abs(l - prox_contact(z, frame[3u * k].w, -1.0));
        m = max(m, max(d.x, max(d.y, d.z)));
    }
    red[lid] = m;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) red[lid] = max(red[lid], red[lid + s]);
        barrier();
    }
    if (lid == 0u) ctrl[PROX_RESIDUAL] = floatBitsToUint(red[0]);
}
