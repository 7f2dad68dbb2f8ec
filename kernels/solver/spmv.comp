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
layout(std430, binding = 0) readonly buffer Diag { vec4 diag[]; };
layout(std430, binding = 1) readonly buffer Off { vec4 off[]; };
layout(std430, binding = 2) readonly buffer RowPtr { uint row_ptr[]; };
layout(std430, binding = 3) readonly buffer Inc { uvec2 incidence[]; }; // (block | transposed << 31, other row)
layout(std430, binding = 4) readonly buffer X { vec4 x[]; };
layout(std430, binding = 5) writeonly buffer Y { vec4 y[]; };
layout(std430, binding = 6) readonly buffer Groups { int groups[]; };
layout(std430, binding = 7) writeonly buffer Parts { float partials[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint r = gl_GlobalInvocationID.x;
    float xy = 0.0;
    if (r < p.n) {
        vec3 xr = x[r].xyz;
        vec3 acc = block_mul(diag[3u * r], diag[3u * r + 1u], diag[3u * r + 2u], xr);
        int gr = MASKED != 0u ? groups[r] : 0;
        for (uint e = row_ptr[r]; e < row_ptr[r + 1u]; ++e) {
            uvec2 inc = incidence[e];
            if (MASKED != 0u && groups[inc.y] != gr) continue;
            uint b = inc.x & 0x7fffffffu;
            vec3 xo = x[inc.y].xyz;
            if ((inc.x >> 31) != 0u) {
                acc += block_mul_transposed(off[3u * b], off[3u * b + 1u], off[3u * b + 2u], xo);
            } else {
                acc += block_mul(off[3u * b], off[3u * b + 1u], off[3u * b + 2u], xo);
            }
        }
        y[r] = vec4(acc, 0.0);
        xy = dot(xr, acc);
    }
    if (PARTIALS != 0u) {
        float s = wg_sum(xy);
        if (gl_LocalInvocationID.x == 0u) partials[gl_WorkGroupID.x] = s;
    }
}
