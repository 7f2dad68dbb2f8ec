#version 460
// y += C p for the off-diagonal contact blocks C of the BAL stencils (spec A8; the paper's
// sum_i (C_i + C_i^T) p): node v sums, over its incidence entries (stencil s, corner k) in sorted
// order, H_s(k, l) p[v_l] for the stencil's other corners l != k (C holds both (k, l) and
// (l, k) of every stencil, so no transpose pass is needed), then adds it to y[v]. A gather per
// row: deterministic, no atomics. Run after the mesh SpMV wrote y = (D + L + L^T) p.
// MASKED = 1: only blocks between vertices of the same stiffness group (the warm start's
// block-diagonal-by-group system, kernels/solver/spmv.comp).
// Host: engine/src/contact/bal/graphs.rs (record_spmv). Reference: cpu_reference/bal/kernels.rs
// (contact_spmv).
#include "common.glsl"
#include "bal.glsl"
layout(constant_id = 1) const uint MASKED = 0;
// The gathered operands come through uniform texel buffer views (texelFetch: a vector gather
// on CPU devices, the texture cache on GPUs); y (read and written by its own row) and the
// groups stay storage buffers.
layout(binding = 0) uniform usamplerBuffer row_ptr;
layout(binding = 1) uniform usamplerBuffer vals;
layout(binding = 2) uniform usamplerBuffer pair_verts;
layout(binding = 3) uniform usamplerBuffer fr_verts;
layout(binding = 4) uniform samplerBuffer hess;
layout(binding = 5) uniform samplerBuffer pv;
layout(std430, binding = 6) buffer Y { vec4 y[]; };
layout(std430, binding = 7) readonly buffer Groups { int groups[]; };
#define STENCIL_VERTS(buf, j) texelFetch(buf, int(j))
#include "stencil.glsl"

void main() {
    uint v = gl_GlobalInvocationID.x;
    if (v >= p.nv) return;
    vec3 acc = vec3(0.0);
    int gv = 0;
    if (MASKED != 0u) gv = groups[v];
    uint end = texelFetch(row_ptr, int(v + 1u)).x;
    for (uint i = texelFetch(row_ptr, int(v)).x; i < end; ++i) {
        uint entry = texelFetch(vals, int(i)).x;
        uint s = entry / 4u, k = entry % 4u;
        uvec4 vs = bal_stencil_vertices(s);
        for (uint l = 0u; l < 4u; ++l) {
            if (l == k) continue;
            if (MASKED != 0u) {
                if (groups[vs[l]] != gv) continue;
            }
            vec3 q = texelFetch(pv, int(vs[l])).xyz;
            int b = int(3u * (16u * s + 4u * k + l));
            acc += vec3(dot(texelFetch(hess, b).xyz, q), dot(texelFetch(hess, b + 1).xyz, q),
                        dot(texelFetch(hess, b + 2).xyz, q));
        }
    }
    y[v] = vec4(y[v].xyz + acc, 0.0);
}
