#version 460
// One color of distance (edge-length) constraints C = ‖xₐ − x_b‖ − L with compliance α
// (cloth mass-spring edges and rod stretch segments), XPBD update
// Δλ = (−C − α̃ λ) / (wₐ + w_b + α̃), α̃ = α/h². Edge k of the color is `offset + k`;
// edge_data holds (L, α, 0, 0). Host: engine/src/xpbd/mod.rs.
// Reference: engine/src/cpu_reference/xpbd.rs (solve_edge).
#include "common.glsl"
layout(std430, binding = 0) buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec4 edges[]; };
layout(std430, binding = 3) readonly buffer EdgeData { vec4 edge_data[]; };
layout(std430, binding = 4) buffer Lambda { float lambda[]; };
layout(push_constant) uniform P {
    uint offset;
    uint count;
    float inv_h2;
    uint pad;
} p;
void main() {
    uint k = gl_GlobalInvocationID.x;
    if (k >= p.count) return;
    uint e = p.offset + k;
    uvec4 v = edges[e];
    vec4 d = edge_data[e];
    vec3 xa = x[v.x].xyz, xb = x[v.y].xyz;
    float wa = inv_mass[v.x], wb = inv_mass[v.y];
    vec3 dx = xa - xb;
    float l = length(dx);
    float at = d.y * p.inv_h2;
    float denom = wa + wb + at;
    if (!(l > 0.0) || !(denom > 0.0)) return;
    vec3 n = dx * (1.0 / l);
    float dl = (-(l - d.x) - at * lambda[e]) / denom;
    lambda[e] += dl;
    x[v.x] = vec4(xa + (wa * dl) * n, 0.0);
    x[v.y] = vec4(xb - (wb * dl) * n, 0.0);
}
