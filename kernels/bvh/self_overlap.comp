#version 460
// LBVH self-overlap, one invocation per leaf j: depth-first traversal (per-invocation stack) for
// leaves k > j (subtrees whose last leaf is <= j are skipped) whose boxes overlap leaf j's within
// the margin and whose primitives share no vertex; each unordered pair is written once as
// (min prim, max prim) at an atomically counted slot. counter[0] ends as the true pair count
// (pairs past the capacity are counted, not written, so the caller can grow and redo);
// counter[1] becomes nonzero if a stack overflowed (cannot happen, see bvh.glsl).
// Host: engine/src/bvh/lbvh.rs. Reference: engine/src/cpu_reference/bvh.rs (self_overlap).
#include "common.glsl"
#include "bvh.glsl"
layout(constant_id = 1) const uint ARITY = 3;
layout(std430, binding = 0) readonly buffer Idx { uint idx[]; };
layout(std430, binding = 1) readonly buffer Prims { uint prims[]; };
layout(std430, binding = 2) readonly buffer Children { uvec2 children[]; };
layout(std430, binding = 3) readonly buffer Ranges { uvec2 ranges[]; };
layout(std430, binding = 4) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 5) writeonly buffer Pairs { uvec2 pairs[]; };
layout(std430, binding = 6) buffer Counter { uint counter[]; };
layout(push_constant) uniform P { uint n; uint capacity; float margin; } p;
void main() {
    uint j = bvh_thread_index();
    if (p.n < 2u || j >= p.n) return;
    uint internal = p.n - 1u;
    uint pa = prims[j];
    uint va[4];
    for (uint k = 0u; k < 4u; ++k) va[k] = k < ARITY ? idx[ARITY * pa + min(k, ARITY - 1u)] : BVH_INVALID;
    vec3 amin = boxes[2u * (internal + j)].xyz;
    vec3 amax = boxes[2u * (internal + j) + 1u].xyz;
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
                uint k = node - internal;
                if (k <= j) continue;
                uint pb = prims[k];
                bool share = false;
                for (uint a = 0u; a < ARITY; ++a)
                    for (uint b = 0u; b < ARITY; ++b) share = share || va[a] == idx[ARITY * pb + b];
                if (share) continue;
                uint slot = atomicAdd(counter[0], 1u);
                if (slot < p.capacity) pairs[slot] = uvec2(min(pa, pb), max(pa, pb));
            } else {
                if (ranges[node].y <= j) continue;
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
