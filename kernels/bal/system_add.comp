#version 460
// Adds the BAL terms' per-node sums (kernels/bal/gather.comp) to the Newton stepper's float
// system (phase.rs SystemBindings). MODE 0 (after the stepper's gradient pass): rhs -= node
// gradient, and the squared norm of the new rhs per vertex (for the relative gradient test of
// Algorithm 1). MODE 1 (after the stepper's Hessian assembly): diagonal blocks += node blocks,
// their inverses recomputed (|D|⁻¹, block3_abs.glsl), stiffness e_j += node stiffness. Fixed vertices (inverse mass 0)
// stay untouched (zero right-hand side, identity blocks; norm 0). MODE 2 (at a step's first
// iterate, node gradient at unit sigma, rhs the stepper's -grad E): per vertex the terms of
// sigma0's sums, -b.r into bg_dot and |b|^2 into norm2 (0 on fixed vertices; spec A3, A7 #2).
// Host: engine/src/contact/bal/system.rs. Reference: cpu_reference/bal/kernels.rs (system_add).
#include "common.glsl"
#include "polar.glsl"
#include "block3_abs.glsl"
layout(constant_id = 1) const uint MODE = 0u;
layout(std430, binding = 0) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 1) readonly buffer NodeGrad { vec4 node_grad[]; };
layout(std430, binding = 2) readonly buffer NodeDiag { vec4 node_diag[]; };
layout(std430, binding = 3) readonly buffer NodeStiff { float node_stiff[]; };
layout(std430, binding = 4) buffer Rhs { vec4 rhs[]; };
layout(std430, binding = 5) buffer Diag { vec4 diag[]; };
layout(std430, binding = 6) writeonly buffer Minv { vec4 minv[]; };
layout(std430, binding = 7) buffer Stiffness { float stiffness[]; };
layout(std430, binding = 8) writeonly buffer Norm2 { float norm2[]; };
layout(std430, binding = 9) writeonly buffer BgDot { float bg_dot[]; };
layout(push_constant) uniform P { uint nv; } p;

void main() {
    uint v = gl_GlobalInvocationID.x;
    if (v >= p.nv) return;
    bool fixed_vertex = inv_mass[v] == 0.0;
    if (MODE == 2u) {
        vec3 b = node_grad[v].xyz;
        norm2[v] = fixed_vertex ? 0.0 : dot(b, b);
        bg_dot[v] = fixed_vertex ? 0.0 : -dot(b, rhs[v].xyz);
        return;
    }
    if (MODE == 0u) {
        if (fixed_vertex) {
            norm2[v] = 0.0;
            return;
        }
        vec3 r = rhs[v].xyz - node_grad[v].xyz;
        rhs[v] = vec4(r, 0.0);
        norm2[v] = dot(r, r);
    } else {
        if (fixed_vertex) return;
        mat3 d;
        for (uint r = 0u; r < 3u; ++r) {
            vec4 row = diag[3u * v + r] + node_diag[3u * v + r];
            diag[3u * v + r] = vec4(row.xyz, 0.0);
            d[0][r] = row.x;
            d[1][r] = row.y;
            d[2][r] = row.z;
        }
        // Not inverse(): its determinant overflows f32 for a barrier block of 1e13 N/m.
        mat3 inv = block_inverse_abs(d);
        for (uint r = 0u; r < 3u; ++r) minv[3u * v + r] = vec4(inv[0][r], inv[1][r], inv[2][r], 0.0);
        stiffness[v] += node_stiff[v];
    }
}
