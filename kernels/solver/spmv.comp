#version 460
// y = A x for a symmetric block-sparse matrix: diagonal blocks plus off-diagonal block pairs,
// gathered per block row through an incidence list (deterministic: no atomics).
// MASKED = 1: only blocks A_ij with groups[i] == groups[j] (the block-diagonal-by-stiffness-group
// system of the warm start, paper §4.2); the diagonal blocks are always included.
// PARTIALS = 1: also writes the workgroup's partial of x·y (one row per invocation, rows
// WG·w .. WG·w + WG − 1; fixed order, wg_sum.glsl) to partials[w]: PCG's p·q fused into its
// SpMV. The device-driven PCG dispatches it indirectly (zero workgroups once converged).
// Host: engine/src/linear/pcg.rs. Reference: cpu_reference/pcg.rs (BlockMatrix::mul,
// mul_masked; DevicePcg for the partials).
#include "common.glsl"
#include "block3.glsl"
#include "wg_sum.glsl"
layout(constant_id = 1) const uint MASKED = 0;
layout(constant_id = 2) const uint PARTIALS = 0;
// The gathered operands are read through uniform texel buffer views (texelFetch): the texture
// path, which CPU devices vectorize (lavapipe runs a storage-buffer gather one invocation at
// a time) and GPUs cache.
layout(binding = 0) uniform samplerBuffer diag;
layout(binding = 1) uniform samplerBuffer off;
layout(binding = 2) uniform usamplerBuffer row_ptr;
layout(binding = 3) uniform usamplerBuffer incidence; // (block | transposed << 31, other row)
layout(binding = 4) uniform samplerBuffer x;
layout(std430, binding = 5) writeonly buffer Y { vec4 y[]; };
layout(std430, binding = 6) readonly buffer Groups { int groups[]; };
layout(std430, binding = 7) writeonly buffer Parts { float partials[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint r = gl_GlobalInvocationID.x;
    float xy = 0.0;
    if (r < p.n) {
        int ri = int(r);
        vec3 xr = texelFetch(x, ri).xyz;
        vec3 acc = block_mul(texelFetch(diag, 3 * ri), texelFetch(diag, 3 * ri + 1),
                             texelFetch(diag, 3 * ri + 2), xr);
        int gr = MASKED != 0u ? groups[r] : 0;
        uint end = texelFetch(row_ptr, ri + 1).x;
        for (uint e = texelFetch(row_ptr, ri).x; e < end; ++e) {
            uvec2 inc = texelFetch(incidence, int(e)).xy;
            if (MASKED != 0u && groups[inc.y] != gr) continue;
            int b = int(inc.x & 0x7fffffffu);
            vec3 xo = texelFetch(x, int(inc.y)).xyz;
            vec4 b0 = texelFetch(off, 3 * b), b1 = texelFetch(off, 3 * b + 1),
                 b2 = texelFetch(off, 3 * b + 2);
            acc += (inc.x >> 31) != 0u ? block_mul_transposed(b0, b1, b2, xo)
                                       : block_mul(b0, b1, b2, xo);
        }
        y[r] = vec4(acc, 0.0);
        xy = dot(xr, acc);
    }
    if (PARTIALS != 0u) {
        float s = wg_sum(xy);
        if (gl_LocalInvocationID.x == 0u) partials[gl_WorkGroupID.x] = s;
    }
}
