#version 460
// LBVH bottom-up AABB refit, one invocation per leaf j: writes the leaf box of primitive
// prims[j] from the current positions, then climbs; at each parent, a per-node visit counter
// (cleared to 0 by the host) lets the first arriving child stop and the second compute the
// parent's box from both children. No invocation waits on another. Used by every build and by
// refit-only updates (topology unchanged). Host: engine/src/bvh/lbvh.rs.
// Reference: engine/src/cpu_reference/bvh.rs (refit).
#include "common.glsl"
#include "bvh.glsl"
layout(constant_id = 1) const uint ARITY = 3;
layout(constant_id = 3) const uint FENCES = 1;
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Idx { uint idx[]; };
layout(std430, binding = 2) readonly buffer Prims { uint prims[]; };
layout(std430, binding = 3) readonly buffer Parent { uint parent[]; };
layout(std430, binding = 4) readonly buffer Children { uvec2 children[]; };
layout(std430, binding = 5) coherent buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 6) coherent buffer Visits { uint visits[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint j = bvh_thread_index();
    bool valid = j < p.n;
    uint prim = prims[min(j, p.n - 1u)];
    vec3 lo = vec3(1.0 / 0.0), hi = vec3(-1.0 / 0.0);
    for (uint k = 0u; k < ARITY; ++k) {
        vec3 x = pos[idx[ARITY * prim + k]].xyz;
        lo = min(lo, x);
        hi = max(hi, x);
    }
    uint node = p.n - 1u + j;
    if (valid) {
        boxes[2u * node] = vec4(lo, 0.0);
        boxes[2u * node + 1u] = vec4(hi, 0.0);
    }
    if (FENCES != 0u) memoryBarrierBuffer();
    // Climb while this invocation is the second to arrive at the parent (at most 96 steps, see
    // bvh.glsl). FENCES = 1 (GPUs): each child box is made visible with memoryBarrierBuffer
    // before the counter increment and the parent is read after it; the climb is unrolled
    // because lavapipe drops the rest of an invocation that executes a fence inside a loop.
    // FENCES = 0 (CPU devices, lavapipe): no fences, which cost ~10x there; the atomic
    // read-modify-write is sequentially consistent on the CPU and its stores are
    // totally ordered (x86-TSO), so the child boxes are visible to the second arrival.
    bool go = valid;
    if (FENCES == 0u) {
        for (uint it = 0u; it < 100u && go; ++it) {
            uint par = parent[node];
            go = par != BVH_INVALID && atomicAdd(visits[par], 1u) != 0u;
            if (go) {
                uvec2 ch = children[par];
                vec4 a0 = boxes[2u * ch.x], a1 = boxes[2u * ch.x + 1u];
                vec4 b0 = boxes[2u * ch.y], b1 = boxes[2u * ch.y + 1u];
                boxes[2u * par] = vec4(min(a0.xyz, b0.xyz), 0.0);
                boxes[2u * par + 1u] = vec4(max(a1.xyz, b1.xyz), 0.0);
                node = par;
            }
        }
        return;
    }
#define REFIT_STEP                                                              \
    if (go) {                                                                   \
        uint par = parent[node];                                                \
        go = par != BVH_INVALID && atomicAdd(visits[par], 1u) != 0u;            \
        if (go) {                                                               \
            memoryBarrierBuffer();                                              \
            uvec2 ch = children[par];                                           \
            vec4 a0 = boxes[2u * ch.x], a1 = boxes[2u * ch.x + 1u];             \
            vec4 b0 = boxes[2u * ch.y], b1 = boxes[2u * ch.y + 1u];             \
            boxes[2u * par] = vec4(min(a0.xyz, b0.xyz), 0.0);                   \
            boxes[2u * par + 1u] = vec4(max(a1.xyz, b1.xyz), 0.0);              \
            memoryBarrierBuffer();                                              \
            node = par;                                                         \
        }                                                                       \
    }
#define REFIT_STEP4 REFIT_STEP REFIT_STEP REFIT_STEP REFIT_STEP
#define REFIT_STEP16 REFIT_STEP4 REFIT_STEP4 REFIT_STEP4 REFIT_STEP4
    REFIT_STEP16 REFIT_STEP16 REFIT_STEP16 REFIT_STEP16 REFIT_STEP16 REFIT_STEP16
    REFIT_STEP4
}
