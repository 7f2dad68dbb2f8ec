#version 460
// Two-way IPM friction by velocity filtering (§6.3, Bridson et al. 2002): one color of a sweep
// over the contact pairs at the start of a solve, reducing the tangential relative displacement
// of the target y (the frictionless dynamics update) by Coulomb's law. Constraints of one color
// share no vertex, so the updates of y are race-free. Indirect dispatch over the color's size
// (the contact sweep's color_args).
//
// Per pair, at the closest points at x (Closest.w, diff, d = |diff|, n = diff / d):
//   Δ = Σ_k w_k (y_k − x_k)            relative displacement of the target,
//   I_n = max(0, δ − (d + Δ·n))        how far the target would end inside the δ shell,
//   Δ_t = Δ − (Δ·n) n                  tangential part, reduced by min(μ I_n, |Δ_t|),
//   correction = min(μ I_n, |Δ_t|) Δ_t / |Δ_t| − I_n n   (friction and normal impulse),
//   y_k −= w_k inv_w_k / Σ_j w_j² inv_w_j · correction   (impulse weights; 0 = pinned).
// Both impulses are applied (the paper: "update y by both impulses"; Bridson et al.): the
// normal one lifts the pair's target to the δ shell, so a later pair of the same vertices sees
// only what is left of the penetration; without it every pair of a vertex (a vertex over a
// cloth has several: its face, neighbouring faces, edge–edge pairs) would apply the full
// friction again. The backward step's contact constraints still enforce δ exactly afterwards.
// Host: engine/src/collision/friction.rs. Reference: cpu_reference/two_way.rs::friction_sweep.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) buffer Y { vec4 y[]; };
layout(std430, binding = 2) readonly buffer ConsLo { uvec4 cons_lo[]; };
layout(std430, binding = 3) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 4) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 5) readonly buffer Grouped { uint grouped[]; };
layout(std430, binding = 6) readonly buffer InvW { float inv_w[]; };
layout(std430, binding = 7) readonly buffer ConsHi { uvec4 cons_hi[]; };
layout(push_constant) uniform Push {
    float delta;    // δ (m)
    float mu;       // Coulomb coefficient μ
    uint color;     // contact color of this dispatch
} p;
#define TW_SPLIT_CONS
#include "two_way_split.glsl"
void main() {
    uint k = tw_index();
    uint first = offsets[p.color];
    if (k >= offsets[p.color + 1u] - first) return;
    uint i = grouped[first + k];
    uvec4 v = tw_con(i);
    uint type = i < meta[0] ? TYPE_VT : TYPE_EE;
    vec3 q[4] = vec3[4](x[v.x].xyz, x[v.y].xyz, x[v.z].xyz, x[v.w].xyz);
    Closest cl = tw_closest(type, q);
    float d = sqrt(cl.sq_dist);
    if (!(d > 0.0)) return;
    vec3 n = cl.diff / d;
    vec3 t[4] = vec3[4](y[v.x].xyz, y[v.y].xyz, y[v.z].xyz, y[v.w].xyz);
    vec4 iw = vec4(inv_w[v.x], inv_w[v.y], inv_w[v.z], inv_w[v.w]);
    vec3 rel = vec3(0.0);
    float denom = 0.0;
    for (uint j = 0u; j < 4u; j++) {
        rel += cl.w[j] * (t[j] - q[j]);
        denom += cl.w[j] * cl.w[j] * iw[j];
    }
    float dn = dot(rel, n);
    float depth = p.delta - (d + dn);
    if (!(depth > 0.0) || !(denom > 0.0)) return;
    vec3 rt = rel - dn * n;
    float lt = length(rt);
    vec3 corr = -depth * n;
    if (lt > 0.0) corr += (min(p.mu * depth, lt) / lt) * rt;
    for (uint j = 0u; j < 4u; j++) t[j] -= (cl.w[j] * iw[j] / denom) * corr;
    y[v.x].xyz = t[0];
    y[v.y].xyz = t[1];
    y[v.z].xyz = t[2];
    y[v.w].xyz = t[3];
}
