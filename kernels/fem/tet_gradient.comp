#version 460
// Per-tet elastic energy and gradient: E_t = V Ψ(F), ∂E_t/∂x_k = V P(F) b_k with F = Ds Dm⁻¹,
// b_0 = −(b_1 + b_2 + b_3) and b_{1..3} the rows of Dm⁻¹. MODEL 0: stable Neo-Hookean,
// 1: St. Venant–Kirchhoff, 2: fixed corotated (Ψ = μ‖F − R‖² + λ/2 tr(RᵀF − I)², R the
// rotation of F's polar decomposition, include/polar.glsl). Corner gradients go to grad[4 t + k] (gathered per vertex later,
// deterministically). Host: engine/src/fem/elements.rs. Reference: cpu_reference/fem.rs.
// Read-only operands come through uniform texel buffer views (texelFetch: a vector gather on
// CPU devices, the texture cache on GPUs); results are written to storage buffers.
#include "common.glsl"
#include "polar.glsl"
layout(constant_id = 1) const uint MODEL = 0;
layout(binding = 0) uniform samplerBuffer pos_texels;
layout(binding = 1) uniform usamplerBuffer tets_texels;
layout(binding = 2) uniform samplerBuffer rest_texels; // rows of Dm⁻¹ (xyz), volume in rest[3t].w
layout(binding = 3) uniform samplerBuffer lame_texels; // (μ, λ) per tet
layout(std430, binding = 4) writeonly buffer Grad { vec4 grad[]; };
layout(std430, binding = 5) writeonly buffer Energy { float energy[]; };
layout(push_constant) uniform P { uint num_tets; } p;
// The read-only operands by index (texel fetches).
vec4 pos(uint i) { return texelFetch(pos_texels, int(i)); }
uvec4 tets(uint i) { return texelFetch(tets_texels, int(i)); }
vec4 rest(uint i) { return texelFetch(rest_texels, int(i)); }
vec2 lame(uint i) { return texelFetch(lame_texels, int(i)).xy; }

mat3 cofactor(mat3 f) {
    return mat3(cross(f[1], f[2]), cross(f[2], f[0]), cross(f[0], f[1]));
}

void main() {
    uint t = gl_GlobalInvocationID.x;
    if (t >= p.num_tets) return;
    uvec4 v = tets(t);
    vec3 x0 = pos(v.x).xyz;
    mat3 ds = mat3(pos(v.y).xyz - x0, pos(v.z).xyz - x0, pos(v.w).xyz - x0);
    vec4 r0 = rest(3u * t), r1 = rest(3u * t + 1u), r2 = rest(3u * t + 2u);
    // GLSL matrices are column-major: Dm⁻¹ has rows r0, r1, r2.
    mat3 dm_inv = transpose(mat3(r0.xyz, r1.xyz, r2.xyz));
    float volume = r0.w;
    mat3 f = ds * dm_inv;
    float mu = lame(t).x, lambda = lame(t).y;
    mat3 pk1;
    float psi;
    if (MODEL == 0u) {
        float j = determinant(f);
        float ic = dot(f[0], f[0]) + dot(f[1], f[1]) + dot(f[2], f[2]);
        psi = 0.5 * mu * (ic - 3.0) - mu * (j - 1.0) + 0.5 * lambda * (j - 1.0) * (j - 1.0);
        pk1 = mu * f + (lambda * (j - 1.0) - mu) * cofactor(f);
    } else if (MODEL == 2u) {
        mat3 r = polar_rotation(f);
        mat3 d = f - r;
        mat3 rtf = transpose(r) * f;
        float tr = rtf[0][0] + rtf[1][1] + rtf[2][2] - 3.0;
        psi = mu * (dot(d[0], d[0]) + dot(d[1], d[1]) + dot(d[2], d[2])) + 0.5 * lambda * tr * tr;
        pk1 = 2.0 * mu * d + lambda * tr * r;
    } else {
        mat3 e = 0.5 * (transpose(f) * f - mat3(1.0));
        float tr = e[0][0] + e[1][1] + e[2][2];
        float ee = dot(e[0], e[0]) + dot(e[1], e[1]) + dot(e[2], e[2]);
        psi = mu * ee + 0.5 * lambda * tr * tr;
        pk1 = f * (2.0 * mu * e + lambda * tr * mat3(1.0));
    }
    vec3 b1 = r0.xyz, b2 = r1.xyz, b3 = r2.xyz;
    vec3 g1 = volume * (pk1 * b1), g2 = volume * (pk1 * b2), g3 = volume * (pk1 * b3);
    grad[4u * t] = vec4(-(g1 + g2 + g3), 0.0);
    grad[4u * t + 1u] = vec4(g1, 0.0);
    grad[4u * t + 2u] = vec4(g2, 0.0);
    grad[4u * t + 3u] = vec4(g3, 0.0);
    energy[t] = volume * psi;
}
