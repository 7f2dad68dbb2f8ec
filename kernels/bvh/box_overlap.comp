#version 460
// LBVH query boxes against the tree, one invocation per query box q (qboxes[2q] = min,
// qboxes[2q+1] = max): every primitive whose box overlaps within the margin and that shares no
// vertex with the query's qk vertices qverts[qk*q..] (qk = 0: no exclusion) is written as
// (q, prim) at an atomically counted slot. counter[0] ends as the true count (overflow counted,
// never written); counter[1] nonzero if a stack overflowed (cannot happen, see bvh.glsl).
// Host: engine/src/bvh/lbvh.rs. Reference: engine/src/cpu_reference/bvh.rs (box_overlap).
#include "common.glsl"
#include "bvh.glsl"
layout(constant_id = 1) const uint ARITY = 3;
layout(std430, binding = 0) readonly buffer Idx { uint idx[]; };
layout(std430, binding = 1) readonly buffer Prims { uint prims[]; };
layout(std430, binding = 2) readonly buffer Children { uvec2 children[]; };
layout(std430, binding = 3) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 4) readonly buffer QBoxes { vec4 qboxes[]; };
layout(std430, binding = 5) readonly buffer QVerts { uint qverts[]; };
layout(std430, binding = 6) writeonly buffer Pairs { uvec2 pairs[]; };
layout(std430, binding = 7) buffer Counter { uint counter[]; };
layout(push_constant) uniform P { uint n; uint nq; uint capacity; float margin; uint qk; } p;
void main() {
    uint q = bvh_thread_index();
    if (p.n == 0u || q >= p.nq) return;
    uint internal = p.n - 1u;
    vec3 amin = qboxes[2u * q].xyz;
    vec3 amax = qboxes[2u * q + 1u].xyz;
    uint stack[BVH_STACK];
    uint sp = 0u;
    stack[sp++] = 0u;
    for (uint outer = 0u; outer < 65535u && sp > 0u; ++outer) {
        for (uint inner = 0u; inner < 65535u && sp > 0u; ++inner) {
            uint node = stack[--sp];
            vec3 bmin = boxes[2u * node].xyz;
            vec3 bmax = boxes[2u * node + 1u].xyz;
            if (!bvh_overlap(amin, amax, bmin, bmax, p.margin)) continue;
            if (node >= internal) {
                uint pb = prims[node - internal];
                bool share = false;
                for (uint a = 0u; a < p.qk; ++a) {
                    uint v = qverts[p.qk * q + a];
                    for (uint b = 0u; b < ARITY; ++b) share = share || v == idx[ARITY * pb + b];
                }
                if (share) continue;
                uint slot = atomicAdd(counter[0], 1u);
                if (slot < p.capacity) pairs[slot] = uvec2(q, pb);
            } else {
                if (sp + 2u > BVH_STACK) {
                    atomicOr(counter[1], 1u);
                    continue;
                }
                uvec2 ch = children[node];
                stack[sp++] = ch.x;
                stack[sp++] = ch.y;
            }
        }
    }
}
