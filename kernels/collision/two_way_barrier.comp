#version 460
// Log-barrier baseline of the two-way IPM paper (§3.4, Eq. 7–8) in place of the backward step:
// one color of the barrier gradient at x^(l). The step's target starts as the dynamics target
// y^[k+1] (copied by the graph) and every pair closer than the range d̂ subtracts its share of
// the preconditioned gradient, t_i -= ½ w_i ∂B/∂x_i with ∂d/∂x_i = w_pair,i n (Closest weights,
// n the unit closest-point difference); the forward step then moves x toward t with the same
// bounded step sizes. Constraints of one color share no vertex: race-free, deterministic.
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::barrier_sweep.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer Cons { uvec4 cons[]; };
layout(std430, binding = 4) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 5) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 6) readonly buffer Grouped { uint grouped[]; };
layout(std430, binding = 7) readonly buffer InvW { float inv_w[]; };
layout(push_constant) uniform Push { TwParams p; };
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint k = tw_index();
    uint first = offsets[p.offset];
    if (k >= offsets[p.offset + 1u] - first) return;
    uint i = grouped[first + k];
    uvec4 v = cons[i];
    vec3 q[4] = vec3[4](x[v.x].xyz, x[v.y].xyz, x[v.z].xyz, x[v.w].xyz);
    Closest cl = tw_closest(i < meta[0] ? TYPE_VT : TYPE_EE, q);
    float d = sqrt(cl.sq_dist);
    float db = tw_barrier_derivative(d, p.barrier_k, p.barrier_range);
    if (db == 0.0) return;
    vec3 g = (-0.5 * db / d) * cl.diff;
    y[v.x].xyz += (inv_w[v.x] * cl.w.x) * g;
    y[v.y].xyz += (inv_w[v.y] * cl.w.y) * g;
    y[v.z].xyz += (inv_w[v.z] * cl.w.z) * g;
    y[v.w].xyz += (inv_w[v.w] * cl.w.w) * g;
}
