#version 460
// Reduction pass 1: one Partial per tile of WG*ITEMS vec4s (fixed order: deterministic).
// Host: engine/src/primitives/reduce.rs. Reference: cpu_reference/reduce.rs.
#include "common.glsl"
#include "reduce.glsl"
layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 0) readonly buffer Src1 { float src1[]; }; // same buffer, partial quad
layout(std430, binding = 1) writeonly buffer Parts { Partial parts[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint n4 = (p.n + 3u) / 4u;
    uint nfull = p.n / 4u; // quads below nfull are whole; quad nfull < n4 is partial
    uint base = gl_WorkGroupID.x * WG * ITEMS + gl_LocalInvocationID.x;
    float id = reduce_identity();
    Partial acc = Partial(id, 0xffffffffu);
    for (uint k = 0u; k < ITEMS; ++k) {
        uint i = base + k * WG;
        if (i < nfull) {
            vec4 v = src[i];
            for (uint c = 0u; c < 4u; ++c) acc = combine(acc, Partial(sanitize(v[c]), 4u * i + c));
        }
    }
    // The partial quad comes last in its owner's order, as in the loop.
    if (nfull < n4 && owns_round_quad(nfull, base, ITEMS)) {
        for (uint j = 4u * nfull; j < p.n; ++j) acc = combine(acc, Partial(sanitize(src1[j]), j));
    }
    Partial r = workgroup_reduce(acc);
    if (gl_LocalInvocationID.x == 0u) parts[gl_WorkGroupID.x] = r;
}
