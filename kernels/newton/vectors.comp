#version 460
// Per-vertex vector work of the implicit-Euler Newton solver (incremental potential
// E(x) = 1/(2h²) ‖x − y‖²_M + Ψ(x) + contact + friction − f_ext·x; the shortest-path penalty's
// energy is summed by kernels/recovery/penalty.comp, its gradient and Hessian blocks added here). MODE 0 predict:
// y = x + h v + h² g (fixed: y = x), x_start = x, then free vertices within a collider's offset
// at the step's end (a moving collider reached them, an initial state, a contact method moved
// them) pushed out to d̂/2 above it. MODE 1 gradient at the linearisation point:
// lag friction, g = m/h² (x − y) + ∇Ψ + ∇contact − f_ext (fixed: 0), rhs = −g, d = 0, the
// per-vertex energy (inertia + contact + friction − f·x), |g| and the contact Hessian block.
// MODE 2 trial: x_trial = x + α d, per-vertex energy at x_trial (COLLIDER_INFEASIBLE when the
// move x → x_trial of a free vertex enters a collider's offset). MODE 3 velocity: free vertices
// within an offset pushed out to COLLIDER_GUARD (a safety net: accepted iterates are outside;
// a contact method may have moved a vertex after the last one), then
// v = (x − x_start) / h. MODE 4: as MODE 1 but keeps the friction lag of the step's first
// linearisation (semi-implicit friction, IPC's practice). Contact: include/colliders.glsl (barrier
// stiffness κ m/h², activation distance d̂).
// Host: engine/src/newton.rs. Reference: cpu_reference/newton.rs, cpu_reference/contact.rs.
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
layout(std430, binding = 10) writeonly buffer Energy { float vertex_energy[]; };
layout(std430, binding = 11) writeonly buffer GNorm { float gnorm[]; };
layout(std430, binding = 12) readonly buffer Alpha { float alpha[]; };
layout(std430, binding = 13) readonly buffer ExternalForce { vec4 f_ext[]; }; // constant loads (N)
layout(std430, binding = 14) readonly buffer Colliders { vec4 colliders[]; };
layout(std430, binding = 15) readonly buffer Time { float time[]; }; // end of the step (s)
layout(std430, binding = 16) buffer Friction { vec4 friction[]; }; // (n, μλ), (shift, 0)
layout(std430, binding = 17) writeonly buffer ContactHess { vec4 contact_hess[]; }; // 3 rows
// Shortest-path penalty sums of kernels/recovery/penalty.comp (fixed point, without k).
layout(std430, binding = 18) readonly buffer Penalty { ivec4 penalty[]; };
// Per vertex, its body's clearance from colliders (m; colliders.glsl collider_vertex_offset).
layout(std430, binding = 19) readonly buffer ColliderOffsets { float collider_offsets[]; };
layout(push_constant) uniform P {
    vec4 gravity;
    uint n;
    float h;
    float kappa;       // contact stiffness relative to m/h²
    uint num_colliders;
    float slip;        // friction slip threshold ε (m)
    float penalty_k;   // shortest-path penalty stiffness k (N/m; 0: none)
    float dhat;        // collider barrier activation distance d̂ (m)
} p;
#include "penalty.glsl"
#include "colliders.glsl"

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    collider_vertex_offset = collider_offsets[i];
    bool fixed_vertex = inv_mass[i] == 0.0;
    float k = mass[i] / (p.h * p.h);
    float kc = p.kappa * k;
    float t = time[0];
    if (MODE == 0u) {
        vec3 xi = x[i].xyz;
        y[i] = vec4(fixed_vertex ? xi : xi + p.h * v[i].xyz + p.h * p.h * p.gravity.xyz, 0.0);
        x_start[i] = vec4(xi, 0.0);
        if (!fixed_vertex && p.num_colliders > 0u) {
            vec3 pushed = collider_push_out(xi, t, 0.5 * p.dhat, p.num_colliders);
            if (pushed != xi) x[i] = vec4(pushed, 0.0);
        }
    } else if (MODE == 1u || MODE == 4u) {
        vec3 xi = x[i].xyz;
        vec4 lag_n = vec4(0.0), lag_shift = vec4(0.0);
        if (MODE == 1u) {
            if (!fixed_vertex) friction_lag(xi, t, p.h, kc, p.dhat, p.num_colliders, lag_n, lag_shift);
            friction[2u * i] = lag_n;
            friction[2u * i + 1u] = lag_shift;
        } else {
            lag_n = friction[2u * i];
            lag_shift = friction[2u * i + 1u];
        }
        vec3 dx = xi - y[i].xyz;
        vec3 fe = f_ext[i].xyz;
        vec3 gc = vec3(0.0);
        mat3 hc = mat3(0.0);
        float ec = 0.0;
        if (!fixed_vertex) {
            ec = vertex_contact(xi, x_start[i].xyz, lag_n, lag_shift, kc, t, p.slip, p.dhat,
                                p.num_colliders, gc, hc);
        }
        if (p.penalty_k > 0.0) {
            // Penalty contact: gradient k Σ c a n, diagonal block k Σ a² n nᵀ (or the majorizer
            // k Σ |a| S n nᵀ); the couplings enter the PCG (kernels/solver/contact_gather.comp).
            gc += vec3(penalty[3u * i].xyz) * (p.penalty_k / PENALTY_GRAD_SCALE);
            vec3 d = vec3(penalty[3u * i + 1u].xyz) * (p.penalty_k / PENALTY_HESS_SCALE);
            vec3 o = vec3(penalty[3u * i + 2u].xyz) * (p.penalty_k / PENALTY_HESS_SCALE);
            hc += mat3(d.x, o.x, o.y, o.x, d.y, o.z, o.y, o.z, d.z);
        }
        vec3 g = fixed_vertex ? vec3(0.0) : k * dx + elastic_grad[i].xyz + gc - fe;
        rhs[i] = vec4(-g, 0.0);
        dir[i] = vec4(0.0);
        vertex_energy[i] = 0.5 * k * dot(dx, dx) + ec - dot(fe, xi);
        gnorm[i] = length(g);
        if (fixed_vertex) hc = mat3(0.0);
        for (uint r = 0u; r < 3u; ++r) contact_hess[3u * i + r] = vec4(hc[0][r], hc[1][r], hc[2][r], 0.0);
    } else if (MODE == 2u) {
        vec3 xi = x[i].xyz;
        vec3 xt = xi + alpha[0] * dir[i].xyz;
        x_trial[i] = vec4(xt, 0.0);
        vec3 dx = xt - y[i].xyz;
        vec3 gc = vec3(0.0);
        mat3 hc = mat3(0.0);
        float ec = 0.0;
        if (!fixed_vertex) {
            if (collider_segment_clear(xi, xt, t, p.num_colliders)) {
                ec = vertex_contact(xt, x_start[i].xyz, friction[2u * i], friction[2u * i + 1u],
                                    kc, t, p.slip, p.dhat, p.num_colliders, gc, hc);
            } else {
                ec = COLLIDER_INFEASIBLE;
            }
        }
        vertex_energy[i] = 0.5 * k * dot(dx, dx) + ec - dot(f_ext[i].xyz, xt);
    } else {
        vec3 xi = x[i].xyz;
        if (!fixed_vertex && p.num_colliders > 0u) {
            vec3 pushed = collider_push_out(xi, t, COLLIDER_GUARD, p.num_colliders);
            if (pushed != xi) {
                xi = pushed;
                x[i] = vec4(xi, 0.0);
            }
        }
        v[i] = vec4((xi - x_start[i].xyz) / p.h, 0.0);
    }
}
