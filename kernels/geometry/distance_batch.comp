#version 460
// One exact distance query per invocation. Query i reads vertices x[4 * (first + i) + k].xyz
// (k = 0..3; unused vertices ignored) and writes its squared distance, closest-feature kind and
// signed weights (barycentrics; see include/distance.glsl). mode: 0 point–point, 1 point–edge,
// 2 point–triangle, 3 edge–edge. Host: engine/src/geometry/distance.rs.
// Reference: engine/src/cpu_reference/distance.rs.
#include "common.glsl"
#include "distance.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) writeonly buffer SqDist { float sq_dist[]; };
layout(std430, binding = 2) writeonly buffer Kind { uint kind[]; };
layout(std430, binding = 3) writeonly buffer Weights { vec4 weights[]; };
layout(push_constant) uniform P { uint first; uint count; uint mode; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.count) return;
    uint q = p.first + i;
    vec3 v0 = x[4u * q].xyz, v1 = x[4u * q + 1u].xyz, v2 = x[4u * q + 2u].xyz,
         v3 = x[4u * q + 3u].xyz;
    Closest r;
    if (p.mode == 0u) r = point_point_distance(v0, v1);
    else if (p.mode == 1u) r = point_edge_distance(v0, v1, v2);
    else if (p.mode == 2u) r = point_triangle_distance(v0, v1, v2, v3);
    else r = edge_edge_distance(v0, v1, v2, v3);
    sq_dist[q] = r.sq_dist;
    kind[q] = r.kind;
    weights[q] = r.w;
}
