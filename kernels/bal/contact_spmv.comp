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
layout(std430, binding = 0) readonly buffer RowPtr { uint row_ptr[]; };
layout(std430, binding = 1) readonly buffer Vals { uint vals[]; };
layout(std430, binding = 2) readonly buffer PairVerts { uvec4 pair_verts[]; };
layout(std430, binding = 3) readonly buffer FrVerts { uvec4 fr_verts[]; };
layout(std430, binding = 4) readonly buffer Hess { vec4 hess[]; };
layout(std430, binding = 5) readonly buffer P { vec4 pv[]; };
layout(std430, binding = 6) buffer Y { vec4 y[]; };
layout(std430, binding = 7) readonly buffer Groups { int groups[]; };
#include "stencil.glsl"

void main() {
    uint v = gl_GlobalInvocationID.x;
    if (v >= p.nv) return;
    vec3 acc = vec3(0.0);
    int gv = 0;
    if (MASKED != 0u) gv = groups[v];
    for (uint i = row_ptr[v]; i < row_ptr[v + 1u]; ++i) {
        uint entry = vals[i];
        uint s = entry / 4u, k = entry % 4u;
        uvec4 vs = bal_stencil_vertices(s);
        for (uint l = 0u; l < 4u; ++l) {
            if (l == k) continue;
            if (MASKED != 0u) {
                if (groups[vs[l]] != gv) continue;
            }
            vec3 q = pv[vs[l]].xyz;
            uint b = 3u * (16u * s + 4u * k + l);
            acc += vec3(dot(hess[b].xyz, q), dot(hess[b + 1u].xyz, q), dot(hess[b + 2u].xyz, q));
        }
    }
    y[v] = vec4(y[v].xyz + acc, 0.0);
}
