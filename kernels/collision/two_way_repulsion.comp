#version 460
// Quadratic repulsion energy of the two-way solver's proximity pairs in the Newton dynamics
// (two-way IPM paper §6.2): per contact constraint of the current search (cons, first meta[0]
// vertex–triangle, meta[1] in all; indirect dispatch over meta[2..5]), d the exact pair
// distance at the bound positions (the Newton iterate or a line-search trial) and
// c = d − d_r, E = ½ k c² when c < 0. ∇_j d = w_j n (Closest.w signed weights, n = diff / d),
// so the gradient is k c w_j n, the penalty form Σ c a n with a = w_j of
// kernels/recovery/penalty.comp. Always writes the pair's energy (slots past meta[1] are
// zeroed by the host graph). ACCUMULATE = 1 also sums per vertex, in the fixed point of
// penalty.glsl and without k (kernels/newton/vectors.comp multiplies by the Newton solver's
// penalty_k), the gradient factor c w_j n and the block |w_j| S n nᵀ, S = Σ_j |w_j|: the
// majorizer of the Gauss–Newton Hessian k ∇d ∇dᵀ, whose couplings between the pair's
// vertices the Newton matrix cannot hold (Cauchy–Schwarz: (Σ w_j n·u_j)² ≤ S Σ |w_j| (n·u_j)²,
// so a Newton step never overshoots a lone pair; its diagonal blocks alone would).
// Host: engine/src/collision/repulsion.rs. Reference: cpu_reference/two_way.rs::repulsion.
#include "common.glsl"
#include "two_way.glsl"
#include "penalty.glsl"
layout(constant_id = 1) const uint ACCUMULATE = 0;
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer ConsLo { uvec4 cons_lo[]; };
layout(std430, binding = 2) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 3) writeonly buffer Energy { float energy[]; };
// Three ivec4 per vertex: (Σ c a n, 0), (diagonal xx yy zz, 0), (xy xz yz, 0).
layout(std430, binding = 4) buffer Accum { ivec4 accum[]; };
layout(std430, binding = 5) readonly buffer ConsHi { uvec4 cons_hi[]; };
layout(push_constant) uniform P {
    float k;        // stiffness (N/m), for the energy only
    float d_r;      // repulsion distance (m)
} p;
#define TW_SPLIT_CONS
#include "two_way_split.glsl"

void add(uint v, float a, float sum_abs, float cval, vec3 n) {
    float h = abs(a) * sum_abs * PENALTY_HESS_SCALE;
    ivec3 g = ivec3(floor(n * (cval * a * PENALTY_GRAD_SCALE) + vec3(0.5)));
    ivec3 d = ivec3(floor(n * n * h + vec3(0.5)));
    ivec3 o = ivec3(floor(vec3(n.x * n.y, n.x * n.z, n.y * n.z) * h + vec3(0.5)));
    atomicAdd(accum[3u * v].x, g.x);
    atomicAdd(accum[3u * v].y, g.y);
    atomicAdd(accum[3u * v].z, g.z);
    atomicAdd(accum[3u * v + 1u].x, d.x);
    atomicAdd(accum[3u * v + 1u].y, d.y);
    atomicAdd(accum[3u * v + 1u].z, d.z);
    atomicAdd(accum[3u * v + 2u].x, o.x);
    atomicAdd(accum[3u * v + 2u].y, o.y);
    atomicAdd(accum[3u * v + 2u].z, o.z);
}

void main() {
    uint i = tw_index();
    if (i >= meta[1]) return;
    energy[i] = 0.0;
    uvec4 v = tw_con(i);
    uint type = i < meta[0] ? TYPE_VT : TYPE_EE;
    vec3 q[4] = vec3[4](pos[v.x].xyz, pos[v.y].xyz, pos[v.z].xyz, pos[v.w].xyz);
    Closest cl = tw_closest(type, q);
    float d = sqrt(cl.sq_dist);
    float c = d - p.d_r;
    if (!(d > 0.0) || !(c < 0.0)) return;
    energy[i] = 0.5 * p.k * c * c;
    if (ACCUMULATE != 0u) {
        vec3 n = cl.diff / d;
        float s = abs(cl.w.x) + abs(cl.w.y) + abs(cl.w.z) + abs(cl.w.w);
        add(v.x, cl.w.x, s, c, n);
        add(v.y, cl.w.y, s, c, n);
        add(v.z, cl.w.z, s, c, n);
        add(v.w, cl.w.w, s, c, n);
    }
}
