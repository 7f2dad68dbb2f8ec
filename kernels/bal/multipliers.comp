#version 460
// BAL augmentation set and multipliers, per pair slot (Algorithm 1; spec A3, A7 #6-#7).
// MODE 0, the A' rule the host chose from the minimum distances (lines 4-8; params.rule):
//   0 empty: no pair in A', every (mu, s) dropped;
//   1 rebuild: A' = {pairs with d < 1e-2 d_hat}; a pair that was in A' keeps (mu, s), a new one
//     starts at (0, 0);
//   2 keep: the pairs that were in A' (and are still active) stay with their (mu, s).
// MODE 1, the dual update at the new iterate (lines 17-19) for pairs of A':
//   s = max(-mu / sigma - d_hat + d, 0), mu += sigma b(d, d_hat + s)  (mu only grows).
// pair_aug = (mu, s, in A', was in A'); MODE 0 also writes pair_in_aug = 1 for a pair in A', 0
// for every other slot (summed by the host graph into |A'|). Host: engine/src/contact/bal/graphs.rs. Reference:
// cpu_reference/bal/kernels.rs (apply_rule, dual_update).
#include "common.glsl"
#include "bal.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) readonly buffer Params { BalParams prm; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer PairVerts { uvec4 pair_verts[]; };
layout(std430, binding = 3) readonly buffer PairInfo { uvec4 pair_info[]; };
layout(std430, binding = 4) readonly buffer PairD { float pair_d[]; };
layout(std430, binding = 5) buffer PairAug { vec4 pair_aug[]; };
layout(std430, binding = 6) writeonly buffer PairInAug { float pair_in_aug[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.pair_cap) return;
    uvec4 v = pair_verts[i];
    if (v.x == BAL_NONE) {
        if (MODE == 0u) pair_in_aug[i] = 0.0;
        return;
    }
    vec4 aug = pair_aug[i];
    if (MODE == 0u) {
        bool was = aug.w != 0.0;
        bool in_aug = prm.rule == 1u ? pair_d[i] < prm.aug_threshold : (prm.rule == 2u && was);
        if (!in_aug) {
            aug = vec4(0.0);
        } else if (!was) {
            aug = vec4(0.0, 0.0, 1.0, 0.0);
        } else {
            aug.z = 1.0;
        }
        pair_aug[i] = aug;
        pair_in_aug[i] = in_aug ? 1.0 : 0.0;
        return;
    }
    if (aug.z == 0.0) return;
    vec3 xs[4];
    BAL_GATHER(x, v, xs);
    float d = sqrt(bal_closest(pair_info[i].x & 0xFFu, xs).sq_dist);
    aug.y = max(-aug.x / prm.sigma - prm.d_hat + d, 0.0);
    aug.x += prm.sigma * bal_barrier(d, prm.d_hat + aug.y);
    pair_aug[i] = aug;
}
