// Two-way IPM backward step: the projected Gauss–Seidel update of one contact constraint and of
// one edge-length constraint (Eq. 17), and the log-barrier baseline's gradient of one pair,
// shared by the per-color kernels and the fused single-workgroup sweep. Include after the
// buffer declarations: with TW_CONTACT_SWEEP the kernel declares x, y, cons_lo, cons_hi, meta,
// lambda, inv_w; with TW_EDGE_SWEEP x, y, edges, rest, lambda_e, inv_w; with TW_BARRIER_SWEEP
// x, y, cons_lo, cons_hi, meta, inv_w; all declare `p` (TwParams). The constraints are split
// over two bindings (two_way_split.glsl).
// Reference: engine/src/cpu_reference/two_way.rs (contact_sweep, edge_sweep).
#ifndef SUPPLE_TWO_WAY_SWEEP_GLSL
#define SUPPLE_TWO_WAY_SWEEP_GLSL

#if defined(TW_CONTACT_SWEEP) || defined(TW_BARRIER_SWEEP)
#define TW_SPLIT_CONS
#include "two_way_split.glsl"
#endif

#ifdef TW_CONTACT_SWEEP
// Contact constraint i (vertex–triangle when i < meta[0], else edge–edge) linearised at x.
void tw_contact_update(uint i) {
    uvec4 v = tw_con(i);
    uint type = i < meta[0] ? TYPE_VT : TYPE_EE;
    vec3 q[4] = vec3[4](x[v.x].xyz, x[v.y].xyz, x[v.z].xyz, x[v.w].xyz);
    Closest cl = tw_closest(type, q);
    float c;
    vec3 J[4];
    if (!tw_contact(type, cl.kind, q, p.delta, c, J)) return;
    vec3 t[4] = vec3[4](y[v.x].xyz, y[v.y].xyz, y[v.z].xyz, y[v.w].xyz);
    vec4 w = vec4(inv_w[v.x], inv_w[v.y], inv_w[v.z], inv_w[v.w]);
    lambda[i] = tw_pgs(c, J, q, t, w, lambda[i]);
    y[v.x].xyz = t[0];
    y[v.y].xyz = t[1];
    y[v.z].xyz = t[2];
    y[v.w].xyz = t[3];
}
#endif

#ifdef TW_BARRIER_SWEEP
// Log-barrier baseline (§3.4, Eq. 7–8): pair i closer than the range d̂ at x moves the step
// target of its vertices by -½ w_v ∂B/∂x_v, ∂d/∂x_v = w_pair,v n (Closest weights, n the unit
// closest-point difference).
void tw_barrier_update(uint i) {
    uvec4 v = tw_con(i);
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
#endif

#ifdef TW_EDGE_SWEEP
// Edge-length constraint e: c = σ - |x_i - x_j| / L0 >= 0.
void tw_edge_update(uint e) {
    uvec2 v = edges[e];
    vec3 d = x[v.x].xyz - x[v.y].xyz;
    float l = length(d);
    if (!(l > 0.0)) return;
    float l0 = rest[e];
    vec3 J[4] = vec3[4](-d / (l * l0), d / (l * l0), vec3(0.0), vec3(0.0));
    vec3 q[4] = vec3[4](x[v.x].xyz, x[v.y].xyz, vec3(0.0), vec3(0.0));
    vec3 t[4] = vec3[4](y[v.x].xyz, y[v.y].xyz, vec3(0.0), vec3(0.0));
    vec4 w = vec4(inv_w[v.x], inv_w[v.y], 0.0, 0.0);
    lambda_e[e] = tw_pgs(p.sigma - l / l0, J, q, t, w, lambda_e[e]);
    y[v.x].xyz = t[0];
    y[v.y].xyz = t[1];
}
#endif

#endif
