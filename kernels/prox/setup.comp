#version 460
// PROX solve setup, one invocation per contact (grid-stride over the capacity, meta[0]
// contacts): b = C Σ w u′ (+ ε n·Σ w u on the normal row), r_k = r_factor / A_kk (A_kk =
// Σ_a m_a⁻¹ (Σ_{slots at a} w)², r_factor when 0), λ = saved = 0. Invocation 0 resets the
// r-factor state in ctrl (running, r scale 1, last merit +∞).
// Host: engine/src/contact/prox/solver.rs. Reference: cpu_reference/prox/contact.rs (ProxProblem::new,
// initial_r).
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 1) readonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 2) readonly buffer Weights { vec4 weights[]; };
layout(std430, binding = 3) readonly buffer Frame { vec4 frame[]; };
layout(std430, binding = 4) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 5) readonly buffer UFree { vec4 u_free[]; };
layout(std430, binding = 6) readonly buffer UStart { vec4 u_start[]; };
layout(std430, binding = 7) writeonly buffer Bias { vec4 bias[]; };
layout(std430, binding = 8) writeonly buffer Lam { vec4 lam[]; };
layout(std430, binding = 9) writeonly buffer Saved { vec4 saved[]; };
layout(std430, binding = 10) buffer Ctrl { uint ctrl[]; };
layout(push_constant) uniform Push { ProxParams p; };

uint slot_node(uint k, uint j) { return nodes[2u * k + (j >> 2u)][j & 3u]; }
float slot_weight(uint k, uint j) { return weights[2u * k + (j >> 2u)][j & 3u]; }

void main() {
    if (gl_GlobalInvocationID.x == 0u) {
        ctrl[PROX_STATUS] = 0u;
        ctrl[PROX_SWEEPS] = 0u;
        ctrl[PROX_ROLLBACKS] = 0u;
        ctrl[PROX_INCREASES] = 0u;
        ctrl[PROX_R_SCALE] = floatBitsToUint(1.0);
        ctrl[PROX_LAST_MERIT] = 0x7f800000u;
        ctrl[PROX_MERIT] = 0u;
        ctrl[PROX_ACCEPTED] = 0u;
        ctrl[PROX_RESIDUAL] = 0u;
    }
    uint kc = min(meta[0], p.k);
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint k = gl_GlobalInvocationID.x; k < kc; k += stride) {
        vec3 rel = vec3(0.0), rel0 = vec3(0.0);
        float diag = 0.0;
        for (uint j = 0u; j < 8u; ++j) {
            uint a = slot_node(k, j);
            if (a == NO_NODE) continue;
            float wt = slot_weight(k, j);
            rel += wt * u_free[a].xyz;
            rel0 += wt * u_start[a].xyz;
            bool first = true;
            for (uint i = 0u; i < j; ++i) {
                if (slot_node(k, i) == a) first = false;
            }
            if (first) {
                float sum = 0.0;
                for (uint i = j; i < 8u; ++i) {
                    if (slot_node(k, i) == a) sum += slot_weight(k, i);
                }
                diag += inv_mass[a] * sum * sum;
            }
        }
        vec4 n = frame[3u * k], s = frame[3u * k + 1u], t = frame[3u * k + 2u];
        vec3 b = vec3(dot(n.xyz, rel), dot(s.xyz, rel), dot(t.xyz, rel));
        if (s.w > 0.0) b.x += s.w * dot(n.xyz, rel0);
        float r = diag > 0.0 ? p.r_factor / diag : p.r_factor;
        bias[k] = vec4(b, r);
        lam[k] = vec4(0.0);
        saved[k] = vec4(0.0);
    }
}
