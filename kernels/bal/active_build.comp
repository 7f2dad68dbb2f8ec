#version 460
// BAL active set, pass 2: after the radix sort of active_keys.comp's keys, slot i < count of the
// pair list gets the i-th active pair in key order: corner vertices, kind and closest-feature
// code, primitives, mollifier threshold, distance and key. Its augmentation state is carried
// from the previous list by key (binary search in the previous sorted keys, spec A7 #7): a pair
// that was in A' keeps (mu, s) and is marked "was in A'" (w = 1); the flag (z) is set by the A'
// rule afterwards (multipliers.comp, MODE 0). Slots past the count are emptied (distance +inf).
// A count above the capacity is an overflow the host handles by growing the list and redoing
// the pass (engine/src/contact/bal/graphs.rs); pairs are never dropped silently.
// Reference: cpu_reference/bal/kernels.rs (active_set, carry).
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
layout(std430, binding = 8) readonly buffer Keys { uvec2 keys[]; };
layout(std430, binding = 9) readonly buffer Vals { uint vals[]; };
layout(std430, binding = 10) readonly buffer Counter { uint counter[]; };
layout(std430, binding = 11) readonly buffer PrevKeys { uvec2 prev_keys[]; };
layout(std430, binding = 12) readonly buffer PrevAug { vec4 prev_aug[]; };
layout(std430, binding = 13) readonly buffer PrevCount { uint prev_count[]; };
layout(std430, binding = 14) writeonly buffer PairVerts { uvec4 pair_verts[]; };
layout(std430, binding = 15) writeonly buffer PairInfo { uvec4 pair_info[]; };
layout(std430, binding = 16) writeonly buffer PairD { float pair_d[]; };
layout(std430, binding = 17) writeonly buffer PairAug { vec4 pair_aug[]; };
layout(std430, binding = 18) writeonly buffer PairKeys { uvec2 pair_keys[]; };
#include "candidates.glsl"

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.pair_cap) return;
    uint count = min(counter[0], p.pair_cap);
    uint kind, a, b;
    uvec4 v;
    if (i >= count || !bal_candidate(vals[i], kind, a, b, v)) {
        pair_verts[i] = uvec4(BAL_NONE);
        pair_info[i] = uvec4(0u);
        pair_d[i] = BAL_INF;
        pair_aug[i] = vec4(0.0);
        pair_keys[i] = bal_sentinel(p.key_bits);
        return;
    }
    uvec2 key = keys[i];
    vec3 xs[4];
    BAL_GATHER(x, v, xs);
    Closest cl = bal_closest(kind, xs);
    float mol = kind == BAL_KIND_EE ? 1e-3 * rest_sq[a] * rest_sq[b] : 0.0;
    pair_verts[i] = v;
    pair_info[i] = uvec4(kind | (cl.kind << 8), a, b, floatBitsToUint(mol));
    pair_d[i] = sqrt(cl.sq_dist);
    pair_keys[i] = key;
    // Lower bound of key in the previous sorted keys (fixed trip count).
    uint n = min(prev_count[0], p.pair_cap);
    uint lo = 0u, hi = n;
    for (uint it = 0u; it < 32u; ++it) {
        if (lo < hi) {
            uint mid = (lo + hi) / 2u;
            if (bal_key_less(prev_keys[mid], key)) lo = mid + 1u; else hi = mid;
        }
    }
    vec4 aug = vec4(0.0);
    uint j = min(lo, max(p.pair_cap, 1u) - 1u);
    if (lo < n && prev_keys[j] == key) {
        vec4 q = prev_aug[j];
        if (q.z != 0.0) aug = vec4(q.x, q.y, 0.0, 1.0);
    }
    pair_aug[i] = aug;
}
