#version 460
// Two-way IPM floor release, between the backward and the forward step: the separating-plane
// test of every floor pair (distance d < θ = p.release_dist at x^(l), as stored by
// two_way_distances). Each vertex j of the pair may take its released step toward y_j,
// e_j = x_j + α_j' (y_j - x_j), α_j' from D_j' = min(D^(l), dfree[j]) - ξ_s (the forward step's
// formula), or any shorter step along the same segment (its distance-bounded step if it gets
// blocked). With n the pair's separating direction at x^(l) (two_way_distances.comp; pointing
// from the second primitive to the first, scaled to |n| <= 1), every point of the first primitive stays at n-height >= lo = min over its
// vertices of min(n·x_j, n·e_j) and every point of the second at <= hi (max of the same), on
// every straight-line motion of that kind, so the pair stays >= lo - hi apart. The test asks
// lo - hi > ξ + 16 ε |extent| + 4 ε |coordinates| (f32 rounding of the heights and of the
// endpoints); a pair that fails it blocks its four vertices (blocked[j] = 1): they take the
// distance-bounded step. Proof of the guarantee: cpu_reference/two_way.rs::release_blocked.
// One pair per invocation (indirect dispatch over the pair count, meta[2..5]).
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::release_blocked.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer Cons { uvec4 cons[]; };
layout(std430, binding = 4) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 5) readonly buffer Dfree { uint dfree[]; };
layout(std430, binding = 6) readonly buffer PairClosest { vec4 closest[]; };
layout(std430, binding = 7) buffer Blocked { uint blocked[]; };
layout(push_constant) uniform Push { TwParams p; };
const float EPS32 = 1.1920929e-7;
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint i = tw_index();
    if (i >= meta[1]) return;
    vec4 c = closest[i];
    if (!(c.w < p.release_dist)) return;
    uvec4 v = cons[i];
    uint first = i < meta[0] ? 1u : 2u;
    float ln = length(c.xyz);
    bool ok = ln > 0.0;
    if (ok) {
        vec3 n = c.xyz * ((1.0 - 4.0 * EPS32) / ln);
        vec3 ref = x[v.x].xyz;
        float lo = uintBitsToFloat(0x7f800000u), hi = -lo, ext = 0.0, mag = 0.0;
        for (uint k = 0u; k < 4u; ++k) {
            uint j = v[k];
            vec3 xj = x[j].xyz;
            vec3 dir = y[j].xyz - xj;
            float len = length(dir);
            float alpha = tw_alpha(min(s.bound, uintBitsToFloat(dfree[j])) - p.step_sep, len, p.gamma);
            precise vec3 e = xj + alpha * dir;
            float h0 = dot(n, xj - ref), h1 = dot(n, e - ref);
            if (k < first) lo = min(lo, min(h0, h1));
            else hi = max(hi, max(h0, h1));
            ext = max(ext, max(length(xj - ref), length(e - ref)));
            mag = max(mag, max(dist_amax(xj), dist_amax(e)));
        }
        ok = lo - hi > p.min_sep + 16.0 * EPS32 * ext + 4.0 * EPS32 * mag;
    }
    if (!ok) {
        blocked[v.x] = 1u;
        blocked[v.y] = 1u;
        blocked[v.z] = 1u;
        blocked[v.w] = 1u;
    }
}
