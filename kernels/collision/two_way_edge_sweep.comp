#version 460
// Two-way IPM backward step: one color of the projected Gauss–Seidel sweep over the edge-length
// constraints c = σ - |x_i - x_j| / L0 >= 0 (Eq. 17), appended after the contact colors. Edges are
// stored grouped by their precomputed (host greedy) color; this dispatch covers
// edges[p.offset .. p.offset + p.count].
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::edge_sweep.
#define TW_EDGE_SWEEP
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 4) readonly buffer Rest { float rest[]; };
layout(std430, binding = 5) buffer LambdaE { float lambda_e[]; };
layout(std430, binding = 6) readonly buffer InvW { float inv_w[]; };
layout(push_constant) uniform Push { TwParams p; };
#include "two_way_sweep.glsl"
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint k = tw_index();
    if (k >= p.count) return;
    tw_edge_update(p.offset + k);
}
