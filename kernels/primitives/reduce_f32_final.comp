#version 460
// Reduction pass 2 (one workgroup): combines m partials in index order into result[slot].
// Host: engine/src/primitives/reduce.rs. Reference: cpu_reference/reduce.rs.
#include "common.glsl"
#include "reduce.glsl"
layout(std430, binding = 0) readonly buffer Parts { Partial parts[]; };
layout(std430, binding = 1) writeonly buffer Result { Partial result[]; };
layout(push_constant) uniform P { uint m; uint slot; } p;
void main() {
    Partial acc = Partial(reduce_identity(), 0xffffffffu);
    for (uint i = gl_LocalInvocationID.x; i < p.m; i += WG) acc = combine(acc, parts[i]);
    Partial r = workgroup_reduce(acc);
    if (gl_LocalInvocationID.x == 0u) result[p.slot] = r;
}
