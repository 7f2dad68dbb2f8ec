#version 460
// LBVH point-in-tet over a tet tree, one invocation per query point: among tets whose box
// contains the point and whose smallest barycentric coordinate is >= -eps, the one with the
// largest smallest coordinate (ties: lower index). Writes the tet (BVH_INVALID if none) and the
// point's barycentric coordinates in it (zero if none).
// Host: engine/src/bvh/lbvh.rs. Reference: engine/src/cpu_reference/bvh.rs (point_in_tet).
#include "common.glsl"
#include "bvh.glsl"
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Idx { uint idx[]; };
layout(std430, binding = 2) readonly buffer Prims { uint prims[]; };
layout(std430, binding = 3) readonly buffer Children { uvec2 children[]; };
layout(std430, binding = 4) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 5) readonly buffer Points { vec4 points[]; };
layout(std430, binding = 6) writeonly buffer OutTet { uint out_tet[]; };
layout(std430, binding = 7) writeonly buffer OutBary { vec4 out_bary[]; };
layout(push_constant) uniform P { uint n; uint nq; float eps; } p;

float min4(vec4 b) { return min(min(b.x, b.y), min(b.z, b.w)); }

void main() {
    uint q = bvh_thread_index();
    if (q >= p.nq) return;
    vec3 x = points[q].xyz;
    uint best = BVH_INVALID;
    vec4 best_b = vec4(0.0);
    float best_m = 0.0;
    if (p.n > 0u) {
        uint internal = p.n - 1u;
        uint stack[BVH_STACK];
        uint sp = 0u;
        stack[sp++] = 0u;
        for (uint outer = 0u; outer < 65535u && sp > 0u; ++outer) {
            for (uint inner = 0u; inner < 65535u && sp > 0u; ++inner) {
                uint node = stack[--sp];
                if (!bvh_contains_point(boxes[2u * node].xyz, boxes[2u * node + 1u].xyz, x)) continue;
                if (node >= internal) {
                    uint t = prims[node - internal];
                    vec3 a = pos[idx[4u * t]].xyz;
                    precise vec3 e1 = pos[idx[4u * t + 1u]].xyz - a;
                    precise vec3 e2 = pos[idx[4u * t + 2u]].xyz - a;
                    precise vec3 e3 = pos[idx[4u * t + 3u]].xyz - a;
                    precise vec3 d = x - a;
                    precise float vol = dot(e1, cross(e2, e3));
                    if (vol == 0.0 || isinf(vol) || isnan(vol)) continue;
                    precise float l1 = dot(d, cross(e2, e3)) / vol;
                    precise float l2 = dot(e1, cross(d, e3)) / vol;
                    precise float l3 = dot(e1, cross(e2, d)) / vol;
                    precise float l0 = 1.0 - l1 - l2 - l3;
                    vec4 b = vec4(l0, l1, l2, l3);
                    float m = min4(b);
                    if (m >= -p.eps && (best == BVH_INVALID || m > best_m || (m == best_m && t < best))) {
                        best = t;
                        best_b = b;
                        best_m = m;
                    }
                } else if (sp + 2u <= BVH_STACK) {
                    uvec2 ch = children[node];
                    stack[sp++] = ch.x;
                    stack[sp++] = ch.y;
                }
            }
        }
    }
    out_tet[q] = best;
    out_bary[q] = best_b;
}
