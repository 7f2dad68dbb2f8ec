#version 460
// LBVH nearest primitive within a radius, one invocation per query point: depth-first traversal
// pruning nodes whose box is farther than the best squared distance so far (starting at r^2;
// box distances scaled by NEAREST_PRUNE so rounding never prunes the answer); leaves use the
// exact distance of distance.glsl (ARITY 2: point–edge, 3: point–triangle). Writes the
// primitive with the smallest squared distance <= r^2 (ties: lower index) and that squared
// distance, or BVH_INVALID and r^2 when none is in range.
// Host: engine/src/bvh/lbvh.rs. Reference: engine/src/cpu_reference/bvh.rs (nearest).
#include "common.glsl"
#include "bvh.glsl"
#include "distance.glsl"
layout(constant_id = 1) const uint ARITY = 3;
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Idx { uint idx[]; };
layout(std430, binding = 2) readonly buffer Prims { uint prims[]; };
layout(std430, binding = 3) readonly buffer Children { uvec2 children[]; };
layout(std430, binding = 4) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 5) readonly buffer Points { vec4 points[]; };
layout(std430, binding = 6) writeonly buffer OutPrim { uint out_prim[]; };
layout(std430, binding = 7) writeonly buffer OutD2 { float out_d2[]; };
layout(push_constant) uniform P { uint n; uint nq; float r2; } p;
const float NEAREST_PRUNE = 0.9999;
void main() {
    uint q = bvh_thread_index();
    if (q >= p.nq) return;
    vec3 x = points[q].xyz;
    uint best = BVH_INVALID;
    float best_d2 = p.r2;
    if (p.n > 0u) {
        uint internal = p.n - 1u;
        uint stack[BVH_STACK];
        uint sp = 0u;
        stack[sp++] = 0u;
        for (uint outer = 0u; outer < 65535u && sp > 0u; ++outer) {
            for (uint inner = 0u; inner < 65535u && sp > 0u; ++inner) {
                uint node = stack[--sp];
                float bd = bvh_box_sq_dist(boxes[2u * node].xyz, boxes[2u * node + 1u].xyz, x);
                if (bd * NEAREST_PRUNE > best_d2) continue;
                if (node >= internal) {
                    uint pb = prims[node - internal];
                    float d2;
                    if (ARITY == 2u) {
                        d2 = point_edge_distance(x, pos[idx[2u * pb]].xyz, pos[idx[2u * pb + 1u]].xyz).sq_dist;
                    } else {
                        d2 = point_triangle_distance(x, pos[idx[ARITY * pb]].xyz,
                                                     pos[idx[ARITY * pb + 1u]].xyz,
                                                     pos[idx[ARITY * pb + 2u]].xyz).sq_dist;
                    }
                    if (d2 <= best_d2 && (d2 < best_d2 || pb < best)) {
                        best = pb;
                        best_d2 = d2;
                    }
                } else if (sp + 2u <= BVH_STACK) {
                    uvec2 ch = children[node];
                    stack[sp++] = ch.x;
                    stack[sp++] = ch.y;
                }
            }
        }
    }
    out_prim[q] = best;
    out_d2[q] = best_d2;
}
