#version 460
// BAL friction lag (spec A5, A7 #8): per pair slot of the active list at the lag point x, the
// friction stencil of slot P + i: corner vertices, closest-point weights beta (0 for corners not
// taking part), the contact-plane basis (t0, t1) and the normal force
// lambda = -sigma b'(d, d_hat) + [in A'] (mu - sigma b'(d, d_hat + s)) in t0.w. Pairs without a
// positive normal force (or chi = 0) leave their friction slot empty. Run after every Newton
// iteration's A' rule (per-iteration lag) or once per step (per-step lag).
// Host: engine/src/contact/bal/graphs.rs. Reference: cpu_reference/bal/kernels.rs (friction_lags).
#include "common.glsl"
#include "bal.glsl"
layout(std430, binding = 0) readonly buffer Params { BalParams prm; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer PairVerts { uvec4 pair_verts[]; };
layout(std430, binding = 3) readonly buffer PairInfo { uvec4 pair_info[]; };
layout(std430, binding = 4) readonly buffer PairD { float pair_d[]; };
layout(std430, binding = 5) readonly buffer PairAug { vec4 pair_aug[]; };
layout(std430, binding = 6) writeonly buffer FrVerts { uvec4 fr_verts[]; };
layout(std430, binding = 7) writeonly buffer FrBeta { vec4 fr_beta[]; };
layout(std430, binding = 8) writeonly buffer FrT0 { vec4 fr_t0[]; };
layout(std430, binding = 9) writeonly buffer FrT1 { vec4 fr_t1[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.pair_cap) return;
    uvec4 v = pair_verts[i];
    float d = pair_d[i];
    float lambda = 0.0;
    if (v.x != BAL_NONE && d < prm.d_hat && prm.chi > 0.0) {
        lambda = -prm.sigma * bal_barrier_d1(d, prm.d_hat);
        vec4 aug = pair_aug[i];
        if (aug.z != 0.0) lambda += aug.x - prm.sigma * bal_barrier_d1(d, prm.d_hat + aug.y);
    }
    if (!(lambda > 0.0)) {
        fr_verts[i] = uvec4(BAL_NONE);
        fr_beta[i] = vec4(0.0);
        fr_t0[i] = vec4(0.0);
        fr_t1[i] = vec4(0.0);
        return;
    }
    uint kind = pair_info[i].x & 0xFFu;
    vec3 xs[4];
    BAL_GATHER(x, v, xs);
    Closest cl = bal_closest(kind, xs);
    uint ri = bal_red_index(kind, cl.kind);
    uint red = BAL_RED_KIND[ri];
    uvec4 c = BAL_RED_CORNERS[ri];
    uint n = bal_red_len(red);
    vec4 beta = vec4(0.0);
    for (uint k = 0u; k < 4u; ++k) {
        if (k < n) beta[c[k]] = cl.w[c[k]];
    }
    vec3 t0, t1;
    bal_tangent_basis(red, c, xs, cl.w, t0, t1);
    fr_verts[i] = v;
    fr_beta[i] = beta;
    fr_t0[i] = vec4(t0, lambda);
    fr_t1[i] = vec4(t1, 0.0);
}
