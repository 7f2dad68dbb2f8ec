#version 460
// Two-way IPM backward step: one color of the projected Gauss–Seidel sweep over the edge-length
// constraints c = σ - |x_i - x_j| / L0 >= 0 (Eq. 17), appended after the contact colors. Edges are
// stored grouped by their precomputed (host greedy) color; this dispatch covers
// edges[p.offset .. p.offset + p.count].
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::edge_sweep.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 4) readonly buffer Rest { float rest[]; };
layout(std430, binding = 5) buffer Lambda { float lambda[]; };
layout(std430, binding = 6) readonly buffer InvW { float inv_w[]; };
layout(push_constant) uniform Push { TwParams p; };
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint k = tw_index();
    if (k >= p.count) return;
    uint e = p.offset + k;
    uvec2 v = edges[e];
    vec3 d = x[v.x].xyz - x[v.y].xyz;
    float l = length(d);
    if (!(l > 0.0)) return;
    float l0 = rest[e];
    vec3 J[4] = vec3[4](-d / (l * l0), d / (l * l0), vec3(0.0), vec3(0.0));
    vec3 q[4] = vec3[4](x[v.x].xyz, x[v.y].xyz, vec3(0.0), vec3(0.0));
    vec3 t[4] = vec3[4](y[v.x].xyz, y[v.y].xyz, vec3(0.0), vec3(0.0));
    vec4 w = vec4(inv_w[v.x], inv_w[v.y], 0.0, 0.0);
    lambda[e] = tw_pgs(p.sigma - l / l0, J, q, t, w, lambda[e]);
    y[v.x].xyz = t[0];
    y[v.y].xyz = t[1];
}
