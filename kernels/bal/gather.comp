#version 460
// Deterministic per-node gathers of the BAL stencil terms (spec A8 step 6): node v sums, over its
// incidence entries (stencil s, corner k) in sorted order, the corner's gradient, its diagonal
// Hessian block (k, k) and its warm-start stiffness. The Newton stepper adds these to its
// gradient, its diagonal blocks D and its per-node stiffness e_j (engine/src/contact/bal/mod.rs).
// Host: engine/src/contact/bal/graphs.rs. Reference: cpu_reference/bal/kernels.rs (gather).
#include "common.glsl"
#include "bal.glsl"
layout(std430, binding = 0) readonly buffer RowPtr { uint row_ptr[]; };
layout(std430, binding = 1) readonly buffer Vals { uint vals[]; };
layout(std430, binding = 2) readonly buffer Grad { vec4 grad[]; };
layout(std430, binding = 3) readonly buffer Hess { vec4 hess[]; };
layout(std430, binding = 4) readonly buffer Stiff { vec4 stiff[]; };
layout(std430, binding = 5) writeonly buffer NodeGrad { vec4 node_grad[]; };
layout(std430, binding = 6) writeonly buffer NodeDiag { vec4 node_diag[]; };
layout(std430, binding = 7) writeonly buffer NodeStiff { float node_stiff[]; };

void main() {
    uint v = gl_GlobalInvocationID.x;
    if (v >= p.nv) return;
    vec3 g = vec3(0.0), r0 = vec3(0.0), r1 = vec3(0.0), r2 = vec3(0.0);
    float e = 0.0;
    for (uint i = row_ptr[v]; i < row_ptr[v + 1u]; ++i) {
        uint entry = vals[i];
        uint s = entry / 4u, k = entry % 4u;
        g += grad[entry].xyz;
        uint b = 3u * (16u * s + 5u * k);
        r0 += hess[b].xyz;
        r1 += hess[b + 1u].xyz;
        r2 += hess[b + 2u].xyz;
        e += stiff[s][k];
    }
    node_grad[v] = vec4(g, 0.0);
    node_diag[3u * v] = vec4(r0, 0.0);
    node_diag[3u * v + 1u] = vec4(r1, 0.0);
    node_diag[3u * v + 2u] = vec4(r2, 0.0);
    node_stiff[v] = e;
}
