#version 460
// One color of stable Neo-Hookean tet constraints (Macklin & Müller 2021): the deviatoric
// C_D = ‖F‖_F (compliance 1/(μV)) and the hydrostatic C_H = det F − γ, γ = 1 + μ/λ
// (compliance 1/(λV)), α̃ = α/h². Coupled (spec constant 1 = 1, the default): both at once
// from the 2×2 XPBD system [∇C W ∇Cᵀ + α̃] Δλ = −C − α̃ λ, rest-stationary. Sequential (0):
// one XPBD update (Macklin et al. 2016) after the other in the same invocation,
// Δλ = (−C − α̃ λ) / (Σ wᵢ|∇ᵢC|² + α̃), xᵢ += wᵢ ∇ᵢC Δλ. See engine/src/xpbd/mod.rs (TetSolve)
// for why coupled is the default. The tets of one color share no vertex, so
// invocations never write the same vertex. Tet k of the color is
// `offset + k`; tet_data holds Dm⁻¹ as three columns and (α_D, α_H, γ, model).
// Corotated tets (model = 1): the deviatoric constraint is C_D = ‖F − R‖_F (compliance
// 1/(2μV); R the rotation of F, found by the quaternion iteration of Müller et al. 2016
// warm-started from the tet's last rotation in `rot`) and γ = 1. Unlike ‖F‖, it is zero at rest:
// the stable Neo-Hookean pair carries its shear stiffness as a prestress that the Gauss–Newton
// XPBD update does not see, which makes light, stiff elements oscillate and blow up (see
// engine/src/xpbd/mod.rs); the corotated pair has no prestress.
// Host: engine/src/xpbd/mod.rs. Reference: engine/src/cpu_reference/xpbd.rs (solve_tet).
#include "common.glsl"
layout(std430, binding = 0) buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 2) readonly buffer Tets { uvec4 tets[]; };
layout(std430, binding = 3) readonly buffer TetData { vec4 tet_data[]; };
layout(std430, binding = 4) buffer Lambda { vec2 lambda[]; };
layout(std430, binding = 5) buffer Rot { vec4 rot[]; };                  // quaternion xyzw
layout(constant_id = 1) const uint COUPLED = 1u;
const uint ROT_ITERATIONS = 8u;
layout(push_constant) uniform P {
    uint offset;
    uint count;
    float inv_h2; // 1 / h² (substep)
    uint pad;
} p;

// One scalar constraint with corner gradients g1..g3 (g0 = −Σ); updates lam and the corners.
void project(float c, vec3 g1, vec3 g2, vec3 g3, vec4 w, float alpha, inout float lam,
             inout vec3 x0, inout vec3 x1, inout vec3 x2, inout vec3 x3) {
    vec3 g0 = -(g1 + g2 + g3);
    float wsum = w.x * dot(g0, g0) + w.y * dot(g1, g1) + w.z * dot(g2, g2) + w.w * dot(g3, g3);
    float at = alpha * p.inv_h2;
    float denom = wsum + at;
    if (!(denom > 0.0)) return;
    float dl = (-c - at * lam) / denom;
    lam += dl;
    x0 += (w.x * dl) * g0;
    x1 += (w.y * dl) * g1;
    x2 += (w.z * dl) * g2;
    x3 += (w.w * dl) * g3;
}

mat3 quat_to_mat(vec4 q) {
    float x = q.x, y = q.y, z = q.z, w = q.w;
    return mat3(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y),
                2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x),
                2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y));
}

vec4 quat_mul(vec4 a, vec4 b) {
    return vec4(a.w * b.xyz + b.w * a.xyz + cross(a.xyz, b.xyz), a.w * b.w - dot(a.xyz, b.xyz));
}

// The deviatoric part: F (stable Neo-Hookean) or F − R (corotated; updates rot[t]).
mat3 deviatoric(mat3 f, float model, uint t) {
    if (model < 0.5) return f;
    vec4 q = rot[t];
    // Fixed trip count (no break): llvmpipe's loop limiter is shared by a SIMD row.
    for (uint it = 0u; it < ROT_ITERATIONS; ++it) {
        mat3 r = quat_to_mat(q);
        vec3 om = cross(r[0], f[0]) + cross(r[1], f[1]) + cross(r[2], f[2]);
        om *= 1.0 / (abs(dot(r[0], f[0]) + dot(r[1], f[1]) + dot(r[2], f[2])) + 1e-9);
        float wl = length(om);
        if (wl > 1e-9) {
            q = normalize(quat_mul(vec4(om * (sin(0.5 * wl) / wl), cos(0.5 * wl)), q));
        }
    }
    rot[t] = q;
    return f - quat_to_mat(q);
}

void main() {
    uint k = gl_GlobalInvocationID.x;
    if (k >= p.count) return;
    uint t = p.offset + k;
    uvec4 v = tets[t];
    vec3 x0 = x[v.x].xyz, x1 = x[v.y].xyz, x2 = x[v.z].xyz, x3 = x[v.w].xyz;
    vec4 w = vec4(inv_mass[v.x], inv_mass[v.y], inv_mass[v.z], inv_mass[v.w]);
    mat3 b = mat3(tet_data[4u * t].xyz, tet_data[4u * t + 1u].xyz, tet_data[4u * t + 2u].xyz);
    vec4 prm = tet_data[4u * t + 3u];
    mat3 bt = transpose(b);
    vec2 lam = lambda[t];
    if (COUPLED != 0u) {
        mat3 f = mat3(x1 - x0, x2 - x0, x3 - x0) * b;
        mat3 dv = deviatoric(f, prm.w, t);
        float c = sqrt(dot(dv[0], dv[0]) + dot(dv[1], dv[1]) + dot(dv[2], dv[2]));
        mat3 gd = mat3(0.0);
        if (c > 1e-12) gd = (dv * (1.0 / c)) * bt;
        vec3 c0 = cross(f[1], f[2]), c1 = cross(f[2], f[0]), c2 = cross(f[0], f[1]);
        float ch = dot(f[0], c0) - prm.z;
        mat3 gh = mat3(c0, c1, c2) * bt;
        vec3 d0 = -(gd[0] + gd[1] + gd[2]), h0 = -(gh[0] + gh[1] + gh[2]);
        float kdd = w.x * dot(d0, d0) + w.y * dot(gd[0], gd[0]) + w.z * dot(gd[1], gd[1])
                  + w.w * dot(gd[2], gd[2]) + prm.x * p.inv_h2;
        float khh = w.x * dot(h0, h0) + w.y * dot(gh[0], gh[0]) + w.z * dot(gh[1], gh[1])
                  + w.w * dot(gh[2], gh[2]) + prm.y * p.inv_h2;
        float kdh = w.x * dot(d0, h0) + w.y * dot(gd[0], gh[0]) + w.z * dot(gd[1], gh[1])
                  + w.w * dot(gd[2], gh[2]);
        float r0 = -c - prm.x * p.inv_h2 * lam.x;
        float r1 = -ch - prm.y * p.inv_h2 * lam.y;
        float det = kdd * khh - kdh * kdh;
        if (!(det > 0.0)) return;
        float dd = (r0 * khh - kdh * r1) / det;
        float dh = (kdd * r1 - kdh * r0) / det;
        lambda[t] = lam + vec2(dd, dh);
        x[v.x] = vec4(x0 + w.x * (dd * d0 + dh * h0), 0.0);
        x[v.y] = vec4(x1 + w.y * (dd * gd[0] + dh * gh[0]), 0.0);
        x[v.z] = vec4(x2 + w.z * (dd * gd[1] + dh * gh[1]), 0.0);
        x[v.w] = vec4(x3 + w.w * (dd * gd[2] + dh * gh[2]), 0.0);
        return;
    }
    // Deviatoric: C_D = ‖F‖ (or ‖F − R‖), ∂C_D/∂F = F / C_D (or (F − R) / C_D).
    mat3 f = mat3(x1 - x0, x2 - x0, x3 - x0) * b;
    mat3 dv = deviatoric(f, prm.w, t);
    float c = sqrt(dot(dv[0], dv[0]) + dot(dv[1], dv[1]) + dot(dv[2], dv[2]));
    if (c > 1e-12) {
        mat3 g = (dv * (1.0 / c)) * bt;
        project(c, g[0], g[1], g[2], w, prm.x, lam.x, x0, x1, x2, x3);
    }
    // Hydrostatic: C_H = det F − γ, ∂C_H/∂F = cof F.
    f = mat3(x1 - x0, x2 - x0, x3 - x0) * b;
    vec3 c0 = cross(f[1], f[2]), c1 = cross(f[2], f[0]), c2 = cross(f[0], f[1]);
    float ch = dot(f[0], c0) - prm.z;
    mat3 g = mat3(c0, c1, c2) * bt;
    project(ch, g[0], g[1], g[2], w, prm.y, lam.y, x0, x1, x2, x3);
    lambda[t] = lam;
    x[v.x] = vec4(x0, 0.0);
    x[v.y] = vec4(x1, 0.0);
    x[v.z] = vec4(x2, 0.0);
    x[v.w] = vec4(x3, 0.0);
}
