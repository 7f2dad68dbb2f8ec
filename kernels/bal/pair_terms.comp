#version 460
// BAL per-stencil terms at the iterate x (spec A8, kernel sequence step 5): for every stencil
// slot s in [0, 2P),
// - contact slots (s < P): the pair's barrier + augmented-Lagrangian gradient and PSD-projected
//   12x12 Hessian (bal.glsl: bal_pair_terms; mu, s frozen); energy = its augmentation part only
//   (the barrier part is summed over the candidates, active_keys.comp / candidate_energy.comp);
// - friction slots (s >= P): the lagged friction energy, gradient and PSD Hessian
//   (bal_friction_terms) with chi lambda from the lag and displacements from x_start.
// Outputs per slot: energy; gradient as 4 vec4 (one per corner); the Hessian as 16 3x3 blocks
// (block (k, l) at 16 s + 4 k + l, three vec4 rows each: the diagonal blocks go to D, the 12
// off-diagonal ones are the contact blocks C of spec A8, coordinates (v_k, v_l)); the warm-start
// stiffness per corner (3 x the mean clamped eigenvalue). Empty slots write zeros.
// Host: engine/src/contact/bal/graphs.rs. Reference: cpu_reference/bal/kernels.rs (stencil_terms).
#include "common.glsl"
#include "bal.glsl"
layout(std430, binding = 0) readonly buffer Params { BalParams prm; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer XStart { vec4 x_start[]; };
layout(std430, binding = 3) readonly buffer PairVerts { uvec4 pair_verts[]; };
layout(std430, binding = 4) readonly buffer PairInfo { uvec4 pair_info[]; };
layout(std430, binding = 5) readonly buffer PairAug { vec4 pair_aug[]; };
layout(std430, binding = 6) readonly buffer FrVerts { uvec4 fr_verts[]; };
layout(std430, binding = 7) readonly buffer FrBeta { vec4 fr_beta[]; };
layout(std430, binding = 8) readonly buffer FrT0 { vec4 fr_t0[]; };
layout(std430, binding = 9) readonly buffer FrT1 { vec4 fr_t1[]; };
layout(std430, binding = 10) writeonly buffer Energy { float energy[]; };
layout(std430, binding = 11) writeonly buffer Grad { vec4 grad[]; };
layout(std430, binding = 12) writeonly buffer Hess { vec4 hess[]; };
layout(std430, binding = 13) writeonly buffer Stiff { vec4 stiff[]; };
#include "stencil.glsl"

void main() {
    uint s = gl_GlobalInvocationID.x;
    if (s >= 2u * p.pair_cap) return;
    uvec4 v = bal_stencil_vertices(s);
    float g[12];
    float h[12][12];
    vec4 st = vec4(0.0);
    float e = 0.0;
    [[unroll]] for (uint i = 0u; i < 12u; ++i) {
        g[i] = 0.0;
        [[unroll]] for (uint j = 0u; j < 12u; ++j) h[i][j] = 0.0;
    }
    if (v.x != BAL_NONE) {
        vec3 xs[4];
        BAL_GATHER(x, v, xs);
        if (s < p.pair_cap) {
            uvec4 info = pair_info[s];
            vec2 en;
            bal_pair_terms(info.x & 0xFFu, xs, prm.sigma, prm.d_hat, pair_aug[s],
                           uintBitsToFloat(info.w), en, g, h, st);
            e = en.y;
        } else {
            uint j = s - p.pair_cap;
            vec3 x0[4];
            BAL_GATHER(x_start, v, x0);
            vec4 t0 = fr_t0[j];
            e = bal_friction_terms(fr_beta[j], t0.xyz, fr_t1[j].xyz, prm.chi * t0.w, xs, x0,
                                   prm.eps_f, g, h, st);
        }
    }
    energy[s] = e;
    // Empty slots are never gathered (their incidence keys are the vertex count).
    if (v.x == BAL_NONE) return;
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
        grad[4u * s + k] = vec4(g[3u * k], g[3u * k + 1u], g[3u * k + 2u], 0.0);
        [[unroll]] for (uint l = 0u; l < 4u; ++l) {
            uint b = 3u * (16u * s + 4u * k + l);
            [[unroll]] for (uint r = 0u; r < 3u; ++r) {
                hess[b + r] = vec4(h[3u * k + r][3u * l], h[3u * k + r][3u * l + 1u],
                                   h[3u * k + r][3u * l + 2u], 0.0);
            }
        }
    }
    stiff[s] = st;
}
