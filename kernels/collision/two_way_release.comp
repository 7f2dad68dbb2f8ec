#version 460
// Two-way IPM floor release, between the backward and the forward step, in ONE dispatch of ONE
// workgroup (a few hundred floor pairs at most, iterated to a fixed point with workgroup
// barriers). Floor pairs: distance d < θ = p.release_dist at x^(l) (two_way_distances.comp);
// floor-bound vertices: those of a floor pair; components: the connected components of the
// floor-bound vertices under the floor pairs.
// The floor pairs come listed (two_way_distances.comp), so the workgroup never scans all pairs.
// 1. Every floor-bound vertex j starts at its released fraction α_j' (D_j' = min(D^(l),
//    dfree[j]) - ξ_s, the forward step's formula, capped by its collider fraction calpha[j]);
//    α is lowered to the minimum over the floor pairs until no pair changes it, so every
//    component C moves by one fraction α_C = min_{j in C} α_j' (common motion of stacked
//    layers keeps their gaps).
// 2. Separating-plane test of every floor pair on that motion: n its separating direction
//    (pointing from the second primitive to the first, scaled to |n| <= 1), h_k(t) the n-height
//    of vertex k (linear in t), g(t) = min over the first primitive's vertices of h_k(t) - max
//    over the second's: concave, and every point of the first primitive is >= g(t) above every
//    point of the second along n, so the pair stays >= min(g(0), g(1)) apart. Pass: min(g(0),
//    g(1)) > ξ + 16 ε |extent| + 4 ε |coordinates| (f32 rounding of heights and end points).
//    A pair that fails it (rotating edges, curved contact) gets the conservative CCD with
//    minimum separation ξ over the same straight-line motion (ccd.glsl): no hit also passes.
// 3. A failed pair blocks its vertices; blocking spreads over the floor pairs to the whole
//    component (blocked[j] = 1): the component takes the distance-bounded step.
// A loop that does not settle within MAX_ROUNDS sets blocked[n] = 1: every floor-bound vertex
// takes the distance-bounded step. The forward step applies alpha[j] to unblocked floor-bound
// vertices. Proof of the guarantee: cpu_reference/two_way.rs::release_fractions.
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::release_fractions.
#include "common.glsl"
#include "two_way.glsl"
#include "ccd.glsl"
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer ConsLo { uvec4 cons_lo[]; };
layout(std430, binding = 4) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 5) readonly buffer Dfree { uint dfree[]; };
layout(std430, binding = 6) readonly buffer PairClosestLo { vec4 closest_lo[]; };
layout(std430, binding = 7) coherent buffer FloorList { uint floor_list[]; };
layout(std430, binding = 8) coherent buffer Alpha { uint alpha[]; };     // float bits per vertex
// n + 2; [n]: unsettled, [n + 1]: floor pairs listed by two_way_distances (reset here).
layout(std430, binding = 9) coherent buffer Blocked { uint blocked[]; };
layout(std430, binding = 10) readonly buffer Calpha { float calpha[]; };
layout(std430, binding = 11) readonly buffer ConsHi { uvec4 cons_hi[]; };
layout(std430, binding = 12) readonly buffer PairClosestHi { vec4 closest_hi[]; };
layout(push_constant) uniform Push { TwParams p; };
#define TW_SPLIT_CONS
#define TW_SPLIT_CLOSEST
#include "two_way_split.glsl"
const float EPS32 = 1.1920929e-7;
const uint MAX_ROUNDS = 4096u;
shared uint changed;

void sync() {
    memoryBarrierBuffer();
    memoryBarrierShared();
    barrier();
}

float released_alpha(uint j) {
    float len = length(y[j].xyz - x[j].xyz);
    float a = tw_alpha(min(s.bound, uintBitsToFloat(dfree[j])) - p.step_sep, len, p.gamma);
    return min(a, calpha[j]);
}

// Lowers every vertex's alpha (ALPHA) or raises blocked (else) to the extreme over the floor
// pairs until a pass changes nothing; returns false if MAX_ROUNDS passes did not settle.
bool settle(uint nf, bool spread_alpha) {
    uint lid = gl_LocalInvocationID.x;
    for (uint round = 0u; round < MAX_ROUNDS; ++round) {
        if (lid == 0u) changed = 0u;
        sync();
        for (uint k = lid; k < nf; k += WG) {
            uvec4 v = tw_con(floor_list[k]);
            if (spread_alpha) {
                uint a = min(min(alpha[v.x], alpha[v.y]), min(alpha[v.z], alpha[v.w]));
                for (uint q = 0u; q < 4u; ++q) {
                    if (alpha[v[q]] != a) {
                        atomicMin(alpha[v[q]], a);
                        atomicOr(changed, 1u);
                    }
                }
            } else {
                uint b = max(max(blocked[v.x], blocked[v.y]), max(blocked[v.z], blocked[v.w]));
                for (uint q = 0u; q < 4u; ++q) {
                    if (blocked[v[q]] != b) {
                        atomicMax(blocked[v[q]], b);
                        atomicOr(changed, 1u);
                    }
                }
            }
        }
        sync();
        bool done = changed == 0u;
        sync();
        if (done) return true;
    }
    return false;
}

void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint lid = gl_LocalInvocationID.x;
    uint nf = blocked[p.n + 1u];
    for (uint k = lid; k < nf; k += WG) {
        uvec4 v = tw_con(floor_list[k]);
        for (uint q = 0u; q < 4u; ++q) alpha[v[q]] = floatBitsToUint(released_alpha(v[q]));
    }
    sync();
    bool ok = settle(nf, true);
    for (uint k = lid; k < nf; k += WG) {
        uint i = floor_list[k];
        uvec4 v = tw_con(i);
        vec4 c = tw_closest_at(i);
        float ln = length(c.xyz);
        bool pass = ln > 0.0;
        if (pass) {
            vec3 n = c.xyz * ((1.0 - 4.0 * EPS32) / ln);
            vec3 ref = x[v.x].xyz;
            uint first = i < meta[0] ? 1u : 2u;
            float inf = uintBitsToFloat(0x7f800000u);
            float lo0 = inf, lo1 = inf, hi0 = -inf, hi1 = -inf, ext = 0.0, mag = 0.0;
            for (uint q = 0u; q < 4u; ++q) {
                uint j = v[q];
                vec3 xj = x[j].xyz;
                vec3 dir = y[j].xyz - xj;
                precise vec3 e = xj + uintBitsToFloat(alpha[j]) * dir;
                float h0 = dot(n, xj - ref), h1 = dot(n, e - ref);
                if (q < first) {
                    lo0 = min(lo0, h0);
                    lo1 = min(lo1, h1);
                } else {
                    hi0 = max(hi0, h0);
                    hi1 = max(hi1, h1);
                }
                ext = max(ext, max(length(xj - ref), length(e - ref)));
                mag = max(mag, max(dist_amax(xj), dist_amax(e)));
            }
            pass = min(lo0 - hi0, lo1 - hi1) > p.min_sep + 16.0 * EPS32 * ext + 4.0 * EPS32 * mag;
        }
        if (!pass) {
            vec3 q0[4], q1[4];
            for (uint q = 0u; q < 4u; ++q) {
                uint j = v[q];
                q0[q] = x[j].xyz;
                precise vec3 e = q0[q] + uintBitsToFloat(alpha[j]) * (y[j].xyz - q0[q]);
                q1[q] = e;
            }
            float toi;
            uint flags;
            ccd_query(i < meta[0] ? CCD_POINT_TRIANGLE : CCD_EDGE_EDGE, q0, q1, p.min_sep, toi, flags);
            pass = (flags & CCD_FLAG_HIT) == 0u;
        }
        if (!pass) {
            blocked[v.x] = 1u;
            blocked[v.y] = 1u;
            blocked[v.z] = 1u;
            blocked[v.w] = 1u;
        }
    }
    sync();
    ok = settle(nf, false) && ok;
    if (lid == 0u) {
        blocked[p.n] = ok ? 0u : 1u;
        blocked[p.n + 1u] = 0u;
    }
}
