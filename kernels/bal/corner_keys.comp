#version 460
// Node -> stencil-corner incidence of the BAL terms (spec A8 "deterministic gathers"): entry
// e = 4 s + k of stencil slot s and corner k gets the key "vertex of the corner" (the vertex
// count nv for empty slots) and value e. A stable radix sort by key groups the entries by node
// in slot order, and row pointers (kernels/recovery/penalty_rows.comp) give each node its list:
// every per-node sum below then runs in a fixed order, without float atomics.
// Host: engine/src/contact/bal/graphs.rs. Reference: cpu_reference/bal/kernels.rs (gather, contact_spmv: the same per-node sums).
#include "common.glsl"
#include "bal.glsl"
layout(std430, binding = 0) readonly buffer PairVerts { uvec4 pair_verts[]; };
layout(std430, binding = 1) readonly buffer FrVerts { uvec4 fr_verts[]; };
layout(std430, binding = 2) writeonly buffer Keys { uint keys[]; };
layout(std430, binding = 3) writeonly buffer Vals { uint vals[]; };
#include "stencil.glsl"

void main() {
    uint e = gl_GlobalInvocationID.x;
    if (e >= p.entries) return;
    uvec4 v = bal_stencil_vertices(e / 4u);
    uint vert = v[e % 4u];
    keys[e] = v.x == BAL_NONE ? p.nv : vert;
    vals[e] = e;
}
