#version 460
// Matrix-free couplings of the shortest-path penalty Hessian in the PCG SpMV: after
// kernels/solver/spmv.comp wrote q = A p (A holding the exact diagonal blocks k a_v² n nᵀ),
// q_v += Σ over v's entries (slot c, coefficient j) of k_c a_j n_c Σ_{j' ≠ j} a_j' n_c·p_{v_j'},
// i.e. q = (A + C) p with A + C containing the whole Hessian k_c a aᵀ ⊗ n nᵀ of every violated
// constraint. The entries come sorted by vertex (stable, so in slot order) with row pointers
// (engine/src/recovery/penalty.rs), so each row sums in a fixed order: deterministic, no atomics.
// Fixed vertices (inverse mass 0) neither receive nor pass on couplings.
// Host: engine/src/solver/pcg.rs (ContactOperator). Reference: cpu_reference/recovery_response.rs
// (penalty_hessian_mul).
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Weight { float weight[]; };
layout(std430, binding = 1) readonly buffer RowPtr { uint row_ptr[]; };
layout(std430, binding = 2) readonly buffer Vals { uint entry_val[]; };
layout(std430, binding = 3) readonly buffer CIdx { uvec4 c_idx[]; };
layout(std430, binding = 4) readonly buffer CF { uvec4 c_f[]; };
layout(std430, binding = 5) readonly buffer CW { vec4 c_w[]; };
layout(std430, binding = 6) readonly buffer CB { vec4 c_b[]; };
layout(std430, binding = 7) readonly buffer CN { vec4 c_n[]; };
layout(std430, binding = 8) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 9) readonly buffer X { vec4 x[]; };
layout(std430, binding = 10) buffer Q { vec4 q[]; };
layout(push_constant) uniform P { uint n; } p;
const uint NONE = 0xFFFFFFFFu;

void main() {
    uint v = gl_GlobalInvocationID.x;
    if (v >= p.n) return;
    if (inv_mass[v] == 0.0) return;
    vec3 acc = vec3(0.0);
    for (uint e = row_ptr[v]; e < row_ptr[v + 1u]; ++e) {
        uint val = entry_val[e];
        uint c = val / 5u;
        uint j = val - 5u * c;
        uvec4 ci = c_idx[c];
        uvec4 f = c_f[c];
        vec2 w = c_w[c].xy;
        vec3 b = c_b[c].xyz;
        vec3 n = c_n[c].xyz;
        uint vs[5];
        float co[5];
        vs[0] = ci.x;
        co[0] = w.x;
        bool two = ci.y != NONE;
        vs[1] = two ? ci.y : ci.x;
        co[1] = two ? w.y : 0.0;
        vs[2] = f.x;
        co[2] = -b.x;
        vs[3] = f.y;
        co[3] = -b.y;
        bool three = f.z != NONE;
        vs[4] = three ? f.z : f.y;
        co[4] = three ? -b.z : 0.0;
        float s = 0.0;
        for (uint m = 0u; m < 5u; ++m) {
            uint u = vs[m];
            float am = (m == j || inv_mass[u] == 0.0) ? 0.0 : co[m];
            s += am * dot(n, x[u].xyz);
        }
        acc += n * (weight[c] * co[j] * s);
    }
    q[v] = vec4(q[v].xyz + acc, 0.0);
}
