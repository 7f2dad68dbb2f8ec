#version 460
// Barrier part of L at the bound positions (the iterate or a line-search trial): entry i is the
// mollified barrier energy sigma b(d, d_hat) of the i-th candidate in the canonical order of the
// last active-set sort (active_keys.comp), so the host's reduction sums them in an order that
// does not depend on the order the proximity search appended them in (bit-identical reruns).
// Also counts the candidates closer than d_hat there (an integer atomic): the active-pair count
// the line search's memory cap (paper 5.2) checks at a trial point.
// Host: engine/src/contact/bal/graphs.rs. Reference: cpu_reference/bal/kernels.rs (candidate_energy).
#include "common.glsl"
#include "bal.glsl"
layout(std430, binding = 0) readonly buffer Params { BalParams prm; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer CandVt { uvec4 cand_vt[]; };
layout(std430, binding = 3) readonly buffer CandEe { uvec4 cand_ee[]; };
layout(std430, binding = 4) readonly buffer Status { uint cand_status[]; };
layout(std430, binding = 5) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 6) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 7) readonly buffer RestSq { float rest_sq[]; };
layout(std430, binding = 8) readonly buffer Vals { uint vals[]; };
layout(std430, binding = 9) writeonly buffer Energy { float energy[]; };
layout(std430, binding = 10) buffer Count { uint count[]; };
#include "candidates.glsl"

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.cap_vt + p.cap_ee) return;
    uint c = vals[i];
    uint kind, a, b;
    uvec4 v;
    float e = 0.0;
    if (bal_candidate(c, kind, a, b, v)) {
        vec3 xs[4];
        BAL_GATHER(x, v, xs);
        float mol = kind == BAL_KIND_EE ? 1e-3 * rest_sq[a] * rest_sq[b] : 0.0;
        vec2 en;
        float d = bal_pair_energy(kind, xs, prm.sigma, prm.d_hat, vec4(0.0), mol, en);
        e = en.x;
        if (d < prm.d_hat) atomicAdd(count[0], 1u);
    }
    energy[i] = e;
}
