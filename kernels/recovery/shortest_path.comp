#version 460
// Shortest path to boundary, one invocation per query (point p in tet T, optional own vertex):
// depth-first walk of the boundary-face BVH (nearer child first, boxes pruned by the best valid
// squared distance), each usable face's closest point s tested by infeasible-region culling
// and then by the topological line traversal of shortest_path.glsl; the closest valid s wins
// (ties: lower face). Writes s and |p - s|^2, the outward normal at s, the face and feature
// kind (SP_INVALID face: no valid path), and adds the work counters.
// Host: engine/src/recovery/shortest_path.rs. Reference: engine/src/cpu_reference/shortest_path.rs.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "bvh.glsl"
#include "distance.glsl"
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Tets { uvec4 tets[]; };
layout(std430, binding = 2) readonly buffer Adjacency { uvec4 adjacency[]; };
layout(std430, binding = 3) readonly buffer Faces { uvec4 faces[]; };           // v0 v1 v2 tet
layout(std430, binding = 4) readonly buffer FaceAcross { uvec4 face_across[]; };
layout(std430, binding = 5) readonly buffer NbOffsets { uint nb_offsets[]; };
layout(std430, binding = 6) readonly buffer Nbs { uint nbs[]; };
layout(std430, binding = 7) readonly buffer VfOffsets { uint vf_offsets[]; };
layout(std430, binding = 8) readonly buffer Vfs { uint vfs[]; };
layout(std430, binding = 9) readonly buffer Prims { uint prims[]; };
layout(std430, binding = 10) readonly buffer Children { uvec2 children[]; };
layout(std430, binding = 11) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 12) readonly buffer QPoint { vec4 q_point[]; };
layout(std430, binding = 13) readonly buffer QMeta { uvec2 q_meta[]; };        // tet, vertex
layout(std430, binding = 14) writeonly buffer OutPoint { vec4 out_point[]; };  // s, |p-s|^2
layout(std430, binding = 15) writeonly buffer OutNormal { vec4 out_normal[]; };
layout(std430, binding = 16) writeonly buffer OutFace { uvec2 out_face[]; };   // face, kind
layout(std430, binding = 17) buffer Counters { uint counters[]; };
layout(push_constant) uniform P {
    uint n_faces;
    uint nq;
    float eps_i;
    float eps_r;
    uint cull;
    float min_dist;
} p;
#include "shortest_path.glsl"
const float NEAREST_PRUNE = 0.9999;

bool usable(uint f, uint vertex) {
    uvec4 tri = faces[f];
    if (vertex != SP_INVALID && (tri.x == vertex || tri.y == vertex || tri.z == vertex)) return false;
    uvec4 t = tets[tri.w];
    vec3 a = pos[t.x].xyz;
    precise vec3 e1 = pos[t.y].xyz - a;
    precise vec3 e2 = pos[t.z].xyz - a;
    precise vec3 e3 = pos[t.w].xyz - a;
    precise float vol = dot(e1, cross(e2, e3));
    return vol > 0.0;
}

void main() {
    uint q = bvh_thread_index();
    if (q >= p.nq) return;
    uvec2 meta = q_meta[q];
    uint target = meta.x;
    vec3 x = q_point[q].xyz;
    uint best = SP_INVALID;
    uint best_kind = SP_INVALID;
    float best_d2 = uintBitsToFloat(0x7F800000u);
    uint c_nodes = 0u, c_cand = 0u, c_culled = 0u, c_trav = 0u, c_tets = 0u, c_br = 0u, c_ovf = 0u;
    if (p.n_faces > 0u && target != SP_INVALID) {
        uint internal = p.n_faces - 1u;
        uint stack[BVH_STACK];
        uint sp = 0u;
        stack[sp++] = 0u;
        for (uint outer = 0u; outer < 65535u && sp > 0u; ++outer) {
            for (uint inner = 0u; inner < 65535u && sp > 0u; ++inner) {
                uint node = stack[--sp];
                c_nodes += 1u;
                float bd = bvh_box_sq_dist(boxes[2u * node].xyz, boxes[2u * node + 1u].xyz, x);
                if (bd * NEAREST_PRUNE > best_d2) continue;
                if (node < internal) {
                    uvec2 ch = children[node];
                    float dl = bvh_box_sq_dist(boxes[2u * ch.x].xyz, boxes[2u * ch.x + 1u].xyz, x);
                    float dr = bvh_box_sq_dist(boxes[2u * ch.y].xyz, boxes[2u * ch.y + 1u].xyz, x);
                    if (sp + 2u <= BVH_STACK) {
                        if (dl <= dr) {
                            stack[sp++] = ch.y;
                            stack[sp++] = ch.x;
                        } else {
                            stack[sp++] = ch.x;
                            stack[sp++] = ch.y;
                        }
                    } else {
                        c_ovf += 1u;
                    }
                    continue;
                }
                uint f = prims[node - internal];
                if (!usable(f, meta.y)) continue;
                uvec4 tri = faces[f];
                vec3 t0 = pos[tri.x].xyz, t1 = pos[tri.y].xyz, t2 = pos[tri.z].xyz;
                Closest cl = point_triangle_distance(x, t0, t1, t2);
                float sq = cl.sq_dist;
                if (!(sq > p.min_dist * p.min_dist) ||
                    !(sq < best_d2 || (sq == best_d2 && f < best))) continue;
                c_cand += 1u;
                precise vec3 s = t0 * (-cl.w.y) + t1 * (-cl.w.z) + t2 * (-cl.w.w);
                if (p.cull != 0u && sp_infeasible(f, cl.kind, s, x, p.eps_r)) {
                    c_culled += 1u;
                    continue;
                }
                c_trav += 1u;
                uint r = sp_traverse(f, s, x, target, p.eps_i, c_tets, c_br);
                if (r == SP_VALID) {
                    best = f;
                    best_kind = cl.kind;
                    best_d2 = sq;
                } else if (r == SP_OVERFLOW) {
                    c_ovf += 1u;
                }
            }
        }
        // A loop cut short (bound or llvmpipe's loop limiter) is reported, never silent.
        if (sp > 0u) {
            c_ovf += 1u;
            atomicAdd(counters[9], 1u);
        }
    }
    if (best != SP_INVALID) {
        // The closest point again (the same f32 operations as in the loop).
        uvec4 tri = faces[best];
        vec3 t0 = pos[tri.x].xyz, t1 = pos[tri.y].xyz, t2 = pos[tri.z].xyz;
        Closest cl = point_triangle_distance(x, t0, t1, t2);
        precise vec3 s = t0 * (-cl.w.y) + t1 * (-cl.w.z) + t2 * (-cl.w.w);
        out_point[q] = vec4(s, best_d2);
        out_normal[q] = vec4(sp_boundary_normal(best, best_kind), 0.0);
    } else {
        out_point[q] = vec4(0.0, 0.0, 0.0, best_d2);
        out_normal[q] = vec4(0.0);
    }
    out_face[q] = uvec2(best, best_kind);
    atomicAdd(counters[0], 1u);
    if (c_nodes > 0u) atomicAdd(counters[1], c_nodes);
    if (c_cand > 0u) atomicAdd(counters[2], c_cand);
    if (c_culled > 0u) atomicAdd(counters[3], c_culled);
    if (c_trav > 0u) atomicAdd(counters[4], c_trav);
    if (c_tets > 0u) atomicAdd(counters[5], c_tets);
    if (c_br > 0u) atomicAdd(counters[6], c_br);
    if (c_ovf > 0u) atomicAdd(counters[7], c_ovf);
    if (best != SP_INVALID) atomicAdd(counters[8], 1u);
}
