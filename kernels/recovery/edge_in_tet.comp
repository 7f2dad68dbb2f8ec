#version 460
// Discrete collision detection, edge through tet, one invocation per listed edge (a, b): walks
// the tet BVH for boxes overlapping the edge's box; in every non-inverted tet outside the
// one-rings of a and b, clips the segment against the four barycentric half-spaces and takes the centre of the
// part inside; keeps the tet whose centre is deepest enough (smallest barycentric coordinate
// above `margin`) and closest to the edge's midpoint (ties: lower tet). Writes the
// shortest-path query (centre; tet or SP_INVALID, no own vertex) of slot first + i.
// Host: engine/src/recovery/shortest_path.rs. Reference: engine/src/cpu_reference/shortest_path.rs
// (edge_in_tet).
#include "common.glsl"
#include "bvh.glsl"
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Tets { uvec4 tets[]; };
layout(std430, binding = 2) readonly buffer Prims { uint prims[]; };
layout(std430, binding = 3) readonly buffer Children { uvec2 children[]; };
layout(std430, binding = 4) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 5) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 6) writeonly buffer QPoint { vec4 q_point[]; };
layout(std430, binding = 7) writeonly buffer QMeta { uvec2 q_meta[]; };
layout(std430, binding = 8) readonly buffer RingOffsets { uint ring_offsets[]; };
layout(std430, binding = 9) readonly buffer Ring { uint ring[]; };
layout(push_constant) uniform P { uint n_tets; uint ne; float margin; uint first; } p;

#include "tet_ring.glsl"

// Barycentric coordinates of x in the tet (a, e1, e2, e3) with 6*volume vol.
vec4 bary(vec3 a, vec3 e1, vec3 e2, vec3 e3, float vol, vec3 x) {
    precise vec3 d = x - a;
    precise float l1 = dot(d, cross(e2, e3)) / vol;
    precise float l2 = dot(e1, cross(d, e3)) / vol;
    precise float l3 = dot(e1, cross(e2, d)) / vol;
    precise float l0 = 1.0 - l1 - l2 - l3;
    return vec4(l0, l1, l2, l3);
}

void main() {
    uint i = bvh_thread_index();
    if (i >= p.ne) return;
    uvec2 e = edges[i];
    vec3 xa = pos[e.x].xyz;
    vec3 xb = pos[e.y].xyz;
    vec3 lo = min(xa, xb), hi = max(xa, xb);
    uint best = BVH_INVALID;
    float best_off = 0.0;
    vec3 best_c = vec3(0.0);
    if (p.n_tets > 0u) {
        uint internal = p.n_tets - 1u;
        uint stack[BVH_STACK];
        uint sp = 0u;
        stack[sp++] = 0u;
        for (uint outer = 0u; outer < 65535u && sp > 0u; ++outer) {
            for (uint inner = 0u; inner < 65535u && sp > 0u; ++inner) {
                uint node = stack[--sp];
                if (!bvh_overlap(lo, hi, boxes[2u * node].xyz, boxes[2u * node + 1u].xyz, 0.0)) continue;
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
                if (touches_ring(tet, e.x) || touches_ring(tet, e.y)) continue;
                vec3 a = pos[tet.x].xyz;
                precise vec3 e1 = pos[tet.y].xyz - a;
                precise vec3 e2 = pos[tet.z].xyz - a;
                precise vec3 e3 = pos[tet.w].xyz - a;
                precise float vol = dot(e1, cross(e2, e3));
                if (!(vol > 0.0) || isinf(vol)) continue;
                vec4 la = bary(a, e1, e2, e3, vol, xa);
                vec4 lb = bary(a, e1, e2, e3, vol, xb);
                float t0 = 0.0, t1 = 1.0;
                bool empty = false;
                for (uint k = 0u; k < 4u; ++k) {
                    precise float dl = lb[k] - la[k];
                    if (dl > 0.0) {
                        t0 = max(t0, -la[k] / dl);
                    } else if (dl < 0.0) {
                        t1 = min(t1, -la[k] / dl);
                    } else if (la[k] < 0.0) {
                        empty = true;
                    }
                }
                if (empty || !(t1 > t0)) continue;
                precise float tc = 0.5 * (t0 + t1);
                precise vec3 c = xa + (xb - xa) * tc;
                vec4 lc = bary(a, e1, e2, e3, vol, c);
                float m = min(min(lc.x, lc.y), min(lc.z, lc.w));
                if (!(m > p.margin)) continue;
                float off = abs(tc - 0.5);
                if (best == BVH_INVALID || off < best_off || (off == best_off && t < best)) {
                    best = t;
                    best_off = off;
                    best_c = c;
                }
            }
        }
    }
    q_point[p.first + i] = vec4(best_c, 0.0);
    q_meta[p.first + i] = uvec2(best, BVH_INVALID);
}
