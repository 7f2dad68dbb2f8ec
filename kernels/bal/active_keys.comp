#version 460
// BAL active set, pass 1 (spec A8, kernel sequence step 1): per candidate slot of the proximity
// search, the exact f32 distance at x and the 64-bit key (inactive, kind, a, b) with the slot as
// sort value; the inactive bit is set for pairs not closer than d_hat, and empty slots get the
// sentinel (all ones). A radix sort of the whole capacity thus orders the candidates
// canonically, whatever order the search appended them in: the active pairs first in key
// order, then the other candidates in key order (the order every later candidate sum runs in),
// then the empty slots. Active pairs are counted with an integer atomic (only the count depends
// on it, never an order). Host: engine/src/contact/bal/graphs.rs. Reference: cpu_reference/bal/
// kernels.rs (active_set).
#include "common.glsl"
#include "bal.glsl"
layout(std430, binding = 0) readonly buffer Params { BalParams prm; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer CandVt { uvec4 cand_vt[]; };
layout(std430, binding = 3) readonly buffer CandEe { uvec4 cand_ee[]; };
layout(std430, binding = 4) readonly buffer Status { uint cand_status[]; };
layout(std430, binding = 5) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 6) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 7) writeonly buffer Keys { uvec2 keys[]; };
layout(std430, binding = 8) writeonly buffer Vals { uint vals[]; };
layout(std430, binding = 9) buffer Counter { uint counter[]; };
#include "candidates.glsl"

void main() {
    uint c = gl_GlobalInvocationID.x;
    if (c >= p.cap_vt + p.cap_ee) return;
    uint kind, a, b;
    uvec4 v;
    uvec2 key = bal_sentinel(p.key_bits);
    if (bal_candidate(c, kind, a, b, v)) {
        vec3 xs[4];
        BAL_GATHER(x, v, xs);
        float d = sqrt(bal_closest(kind, xs).sq_dist);
        key = bal_key(kind, a, b, p.bits_a, p.bits_b);
        if (d < prm.d_hat) {
            atomicAdd(counter[0], 1u);
        } else {
            key |= bal_shift64(1u, p.key_bits - 1u);
        }
    }
    keys[c] = key;
    vals[c] = c;
}
