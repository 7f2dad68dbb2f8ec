#version 460
// Two-way IPM backward step (§4.2): one color of the projected multicolor Gauss–Seidel sweep
// over the contact constraints, linearised at x^(l), updating the target y and the
// multipliers λ (warm-started across steps). Constraints of one color share no vertex, so the
// updates of y are race-free. Indirect dispatch over the color's size (color_args).
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::contact_sweep.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer Cons { uvec4 cons[]; };
layout(std430, binding = 4) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 5) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 6) readonly buffer Grouped { uint grouped[]; };
layout(std430, binding = 7) buffer Lambda { float lambda[]; };
layout(std430, binding = 8) readonly buffer InvW { float inv_w[]; };
layout(push_constant) uniform Push { TwParams p; };
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint k = tw_index();
    uint first = offsets[p.offset];
    if (k >= offsets[p.offset + 1u] - first) return;
    uint i = grouped[first + k];
    uvec4 v = cons[i];
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
