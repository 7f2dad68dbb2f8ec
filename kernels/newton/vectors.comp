#version 460
// Per-vertex vector work of the implicit-Euler Newton solver (incremental potential
// E(x) = 1/(2h²) ‖x − y‖²_M + Ψ(x) + ground penalty − f_ext·x). MODE 0 predict: y = x + h v + h² g (fixed: y = x),
// x_start = x. MODE 1 gradient: g = m/h² (x − y) + ∇Ψ (fixed: 0), rhs = −g, d = 0, and the
// per-vertex inertia energy and |g|. MODE 2 trial: x_trial = x + α d, inertia energy at
// x_trial. MODE 3 velocity: v = (x − x_start) / h.
// Host: engine/src/newton.rs. Reference: cpu_reference/newton.rs.
#include "common.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) buffer X { vec4 x[]; };
layout(std430, binding = 1) buffer V { vec4 v[]; };
layout(std430, binding = 2) buffer Y { vec4 y[]; };
layout(std430, binding = 3) buffer XStart { vec4 x_start[]; };
layout(std430, binding = 4) readonly buffer Mass { float mass[]; };
layout(std430, binding = 5) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 6) readonly buffer ElasticGrad { vec4 elastic_grad[]; };
layout(std430, binding = 7) buffer Rhs { vec4 rhs[]; };
layout(std430, binding = 8) buffer Dir { vec4 dir[]; };
layout(std430, binding = 9) buffer XTrial { vec4 x_trial[]; };
layout(std430, binding = 10) writeonly buffer Inertia { float inertia[]; };
layout(std430, binding = 11) writeonly buffer GNorm { float gnorm[]; };
layout(std430, binding = 12) readonly buffer Alpha { float alpha[]; };
layout(std430, binding = 13) readonly buffer ExternalForce { vec4 f_ext[]; }; // constant loads (N): potential −f·x
// plane: ground n·x ≥ offset (xyz = unit normal, all zero = none; w = offset), with the
// penalty ½ κ (m/h²) min(0, n·x − offset)² added to the potential.
layout(push_constant) uniform P { vec4 gravity; vec4 plane; uint n; float h; float kappa; } p;

float plane_gap(vec3 xi) {
    return dot(p.plane.xyz, p.plane.xyz) > 0.0 ? dot(p.plane.xyz, xi) - p.plane.w : 1.0;
}
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    bool fixed_vertex = inv_mass[i] == 0.0;
    float k = mass[i] / (p.h * p.h);
    if (MODE == 0u) {
        vec3 xi = x[i].xyz;
        y[i] = vec4(fixed_vertex ? xi : xi + p.h * v[i].xyz + p.h * p.h * p.gravity.xyz, 0.0);
        x_start[i] = vec4(xi, 0.0);
    } else if (MODE == 1u) {
        vec3 dx = x[i].xyz - y[i].xyz;
        float gap = min(plane_gap(x[i].xyz), 0.0);
        float kc = p.kappa * k;
        vec3 fe = f_ext[i].xyz;
        vec3 g = fixed_vertex ? vec3(0.0) : k * dx + elastic_grad[i].xyz + kc * gap * p.plane.xyz - fe;
        rhs[i] = vec4(-g, 0.0);
        dir[i] = vec4(0.0);
        inertia[i] = 0.5 * k * dot(dx, dx) + 0.5 * kc * gap * gap - dot(fe, x[i].xyz);
        gnorm[i] = length(g);
    } else if (MODE == 2u) {
        vec3 xt = x[i].xyz + alpha[0] * dir[i].xyz;
        x_trial[i] = vec4(xt, 0.0);
        vec3 dx = xt - y[i].xyz;
        float gap = min(plane_gap(xt), 0.0);
        inertia[i] = 0.5 * k * dot(dx, dx) + 0.5 * p.kappa * k * gap * gap - dot(f_ext[i].xyz, xt);
    } else {
        v[i] = vec4((x[i].xyz - x_start[i].xyz) / p.h, 0.0);
    }
}
