#version 460
// Discrete collision detection, vertex in tet, one invocation per listed vertex v: walks the
// tet BVH for boxes containing x_v and keeps the non-inverted tet not incident to v with the
// largest smallest barycentric coordinate above `margin` (ties: lower tet), ignoring tets that
// touch v's one-ring. Writes the
// shortest-path query (x_v; tet or SP_INVALID, v) of slot first + i.
// Host: engine/src/recovery/shortest_path.rs. Reference: engine/src/cpu_reference/shortest_path.rs
// (vertex_in_tet, inside_margin).
#include "common.glsl"
#include "bvh.glsl"
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Tets { uvec4 tets[]; };
layout(std430, binding = 2) readonly buffer Prims { uint prims[]; };
layout(std430, binding = 3) readonly buffer Children { uvec2 children[]; };
layout(std430, binding = 4) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 5) readonly buffer Vertices { uint vertices[]; };
layout(std430, binding = 6) writeonly buffer QPoint { vec4 q_point[]; };
layout(std430, binding = 7) writeonly buffer QMeta { uvec2 q_meta[]; };
layout(std430, binding = 8) readonly buffer RingOffsets { uint ring_offsets[]; };
layout(std430, binding = 9) readonly buffer Ring { uint ring[]; };
layout(push_constant) uniform P { uint n_tets; uint nq; float margin; uint first; } p;

#include "tet_ring.glsl"

void main() {
    uint i = bvh_thread_index();
    if (i >= p.nq) return;
    uint v = vertices[i];
    vec3 x = pos[v].xyz;
    uint best = BVH_INVALID;
    float best_m = p.margin;
    if (p.n_tets > 0u) {
        uint internal = p.n_tets - 1u;
        uint stack[BVH_STACK];
        uint sp = 0u;
        stack[sp++] = 0u;
        for (uint outer = 0u; outer < 65535u && sp > 0u; ++outer) {
            for (uint inner = 0u; inner < 65535u && sp > 0u; ++inner) {
                uint node = stack[--sp];
                if (!bvh_contains_point(boxes[2u * node].xyz, boxes[2u * node + 1u].xyz, x)) continue;
                if (node < internal) {
                    if (sp + 2u <= BVH_STACK) {
                        uvec2 ch = children[node];
                        stack[sp++] = ch.x;
                        stack[sp++] = ch.y;
                    }
                    continue;
                }
                uint t = prims[node - internal];
                uvec4 tet = tets[t];
                if (touches_ring(tet, v)) continue;
                vec3 a = pos[tet.x].xyz;
                precise vec3 e1 = pos[tet.y].xyz - a;
                precise vec3 e2 = pos[tet.z].xyz - a;
                precise vec3 e3 = pos[tet.w].xyz - a;
                precise vec3 d = x - a;
                precise float vol = dot(e1, cross(e2, e3));
                if (!(vol > 0.0) || isinf(vol)) continue;
                precise float l1 = dot(d, cross(e2, e3)) / vol;
                precise float l2 = dot(e1, cross(d, e3)) / vol;
                precise float l3 = dot(e1, cross(e2, d)) / vol;
                precise float l0 = 1.0 - l1 - l2 - l3;
                float m = min(min(l0, l1), min(l2, l3));
                if (m > best_m || (m == best_m && best != BVH_INVALID && t < best)) {
                    best = t;
                    best_m = m;
                }
            }
        }
    }
    q_point[p.first + i] = vec4(x, 0.0);
    q_meta[p.first + i] = uvec2(best, v);
}
