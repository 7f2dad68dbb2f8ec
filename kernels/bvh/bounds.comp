#version 460
// LBVH build, step 1: bounds of the primitive-box centroids, reduced per subgroup and merged with
// atomicMax on order-preserving u32 keys: bounds[0..3] = ~key(min), bounds[3..6] = key(max)
// (the host fills bounds with 0 first). Host: engine/src/bvh/lbvh.rs.
// Reference: engine/src/cpu_reference/bvh.rs (centroid_bounds).
#include "common.glsl"
#include "bvh.glsl"
layout(constant_id = 1) const uint ARITY = 3;
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Idx { uint idx[]; };
layout(std430, binding = 2) buffer Bounds { uint bounds[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = bvh_thread_index();
    bool ok = i < p.n;
    uvec3 mn = uvec3(0xFFFFFFFFu);
    uvec3 mx = uvec3(0u);
    if (ok) {
        vec3 lo = vec3(1.0 / 0.0), hi = vec3(-1.0 / 0.0);
        for (uint k = 0u; k < ARITY; ++k) {
            vec3 x = pos[idx[ARITY * i + k]].xyz;
            lo = min(lo, x);
            hi = max(hi, x);
        }
        precise vec3 c = (lo + hi) * 0.5;
        mn = uvec3(float_to_ordered(c.x), float_to_ordered(c.y), float_to_ordered(c.z));
        mx = mn;
    }
    mn = subgroupMin(mn);
    mx = subgroupMax(mx);
    if (subgroupElect()) {
        for (uint k = 0u; k < 3u; ++k) {
            atomicMax(bounds[k], ~mn[k]);
            atomicMax(bounds[3u + k], mx[k]);
        }
    }
}
