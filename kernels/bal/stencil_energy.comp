#version 460
// BAL stencil energies at line-search trial positions: per stencil slot, the augmentation part
// of a contact pair (slots < P) or the lagged friction energy (slots >= P), exactly as
// pair_terms.comp writes them at the iterate; summed by the host's reduction.
// Host: engine/src/contact/bal/graphs.rs. Reference: cpu_reference/bal/kernels.rs (stencil_energy).
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
#include "stencil.glsl"

void main() {
    uint s = gl_GlobalInvocationID.x;
    if (s >= 2u * p.pair_cap) return;
    uvec4 v = bal_stencil_vertices(s);
    float e = 0.0;
    if (v.x != BAL_NONE) {
        vec3 xs[4];
        BAL_GATHER(x, v, xs);
        if (s < p.pair_cap) {
            vec4 aug = pair_aug[s];
            if (aug.z != 0.0) {
                uvec4 info = pair_info[s];
                vec2 en;
                bal_pair_energy(info.x & 0xFFu, xs, prm.sigma, prm.d_hat, aug,
                                uintBitsToFloat(info.w), en);
                e = en.y;
            }
        } else {
            uint j = s - p.pair_cap;
            vec3 x0[4];
            BAL_GATHER(x_start, v, x0);
            vec3 disp = vec3(0.0);
            vec4 beta = fr_beta[j];
            for (uint k = 0u; k < 4u; ++k) disp += (xs[k] - x0[k]) * beta[k];
            vec4 t0 = fr_t0[j];
            float y = length(vec2(dot(t0.xyz, disp), dot(fr_t1[j].xyz, disp)));
            e = prm.chi * t0.w * bal_f0(y, prm.eps_f);
        }
    }
    energy[s] = e;
}
