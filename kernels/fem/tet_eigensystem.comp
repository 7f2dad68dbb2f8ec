#version 460
// Per-tet analytic eigensystem of the PSD-projected stress-space Hessian (Smith, de Goes and
// Kim 2019, "Analytic Eigensystems for Isotropic Distortion Energies"): no numerical 9×9
// eigen-solve and no dense element Hessian. With the rotation-variant SVD F = U Σ Vᵀ (σ₃ < 0
// for an inverted tet), ∂²Ψ/∂F² has twist modes U Tᵢⱼ Vᵀ (eigenvalue (Ψᵢ + Ψⱼ)/(σᵢ + σⱼ)), flip
// modes U Lᵢⱼ Vᵀ ((Ψᵢ − Ψⱼ)/(σᵢ − σⱼ)), both in closed form per model, and three scaling modes
// from the 3×3 A = ∂²Ψ/∂σ² (projected by a 3×3 Jacobi eigen-solve). MODEL 0: stable
// Neo-Hookean, 1: St. Venant–Kirchhoff, 2: fixed corotated. PROJECT 1: every eigenvalue
// clamped at 0 (the PSD projection); PROJECT 0: the exact Hessian (the Newton stepper's
// project-on-demand iterations; tr(H_e) below is that of the projected Hessian either way, an
// estimate for the warm start). Output, 8 vec4 per tet, every eigenvalue multiplied by the rest
// volume:
//   eig[8t + 0..2] = (column c of U, twist eigenvalue of pair c), pairs (0,1), (0,2), (1,2);
//   eig[8t + 3..5] = (w_{c+1} = Vᵀ b_{c+1}, flip eigenvalue of pair c) (w₀ = −w₁ − w₂ − w₃);
//   eig[8t + 6] = (A⁺₀₀, A⁺₁₁, A⁺₂₂, tr(H_e)/4), eig[8t + 7] = (A⁺₀₁, A⁺₀₂, A⁺₁₂, 0).
// fem/assemble_hessian.comp builds block (a, b) = U K_ab Uᵀ from them.
// Host: engine/src/fem/elements.rs. Reference: cpu_reference/fem.rs (TetRest::eigensystem).
// Read-only operands come through uniform texel buffer views (texelFetch: a vector gather on
// CPU devices, the texture cache on GPUs); results are written to storage buffers.
#include "common.glsl"
#include "polar.glsl"
layout(constant_id = 1) const uint MODEL = 0;
layout(constant_id = 2) const uint PROJECT = 1;
layout(binding = 0) uniform samplerBuffer pos_texels;
layout(binding = 1) uniform usamplerBuffer tets_texels;
layout(binding = 2) uniform samplerBuffer rest_texels;
layout(binding = 3) uniform samplerBuffer lame_texels;
layout(std430, binding = 4) writeonly buffer Eigen { vec4 eig[]; };
layout(push_constant) uniform P { uint num_tets; } p;
// The read-only operands by index (texel fetches).
vec4 pos(uint i) { return texelFetch(pos_texels, int(i)); }
uvec4 tets(uint i) { return texelFetch(tets_texels, int(i)); }
vec4 rest(uint i) { return texelFetch(rest_texels, int(i)); }
vec2 lame(uint i) { return texelFetch(lame_texels, int(i)).xy; }

// Relative size below which σᵢ + σⱼ counts as zero (cpu_reference::fem::COROTATED_SINGULAR).
const float COROTATED_SINGULAR = 1e-6;

void main() {
    uint t = gl_GlobalInvocationID.x;
    if (t >= p.num_tets) return;
    uvec4 v = tets(t);
    vec3 x0 = pos(v.x).xyz;
    mat3 ds = mat3(pos(v.y).xyz - x0, pos(v.z).xyz - x0, pos(v.w).xyz - x0);
    vec4 r0 = rest(3u * t), r1 = rest(3u * t + 1u), r2 = rest(3u * t + 2u);
    mat3 dm_inv = transpose(mat3(r0.xyz, r1.xyz, r2.xyz));
    float volume = r0.w;
    mat3 f = ds * dm_inv;
    float mu = lame(t).x, lambda = lame(t).y;

    // Rotation-variant SVD (cpu_reference::fem::signed_svd).
    vec3 l2s;
    mat3 vm;
    sym_eigen3(transpose(f) * f, l2s, vm);
    if (determinant(vm) < 0.0) vm[2] = -vm[2];
    vec3 a1 = f * vm[0];
    float l1 = length(a1);
    vec3 u1 = vec3(1.0, 0.0, 0.0);
    if (l1 > 1e-30) u1 = a1 / l1;
    vec3 a2 = f * vm[1];
    a2 -= dot(a2, u1) * u1;
    float l2 = length(a2);
    vec3 other = vec3(0.0, 1.0, 0.0);
    if (abs(u1.x) < 0.9) other = vec3(1.0, 0.0, 0.0);
    vec3 u2 = normalize(cross(u1, other));
    if (l2 > 1e-30 * max(l1, 1e-30)) u2 = a2 / l2;
    vec3 u3 = cross(u1, u2);
    vec3 s = vec3(dot(u1, f * vm[0]), dot(u2, f * vm[1]), dot(u3, f * vm[2]));

    // Twist and flip eigenvalues per pair (i, j), k the third index; A = ∂²Ψ/∂σ².
    float j = s.x * s.y * s.z;
    float i2 = dot(s, s);
    vec3 twist, flip;
    mat3 a;
    for (uint pp = 0u; pp < 3u; ++pp) {
        uint i = pp == 2u ? 1u : 0u;
        uint jj = pp == 0u ? 1u : 2u;
        uint k = 3u - i - jj;
        float si = s[i], sj = s[jj], sk = s[k];
        if (MODEL == 0u) {
            float c = lambda * (j - 1.0) - mu;
            flip[pp] = mu - c * sk;
            twist[pp] = mu + c * sk;
        } else if (MODEL == 1u) {
            float tt = 0.5 * lambda * (i2 - 3.0);
            flip[pp] = mu * (si * si + si * sj + sj * sj - 1.0) + tt;
            twist[pp] = mu * (si * si - si * sj + sj * sj - 1.0) + tt;
        } else {
            flip[pp] = 2.0 * mu;
            float d = si + sj;
            float smax = max(max(abs(s.x), abs(s.y)), max(abs(s.z), 1e-30));
            twist[pp] = 2.0 * mu;
            if (d > COROTATED_SINGULAR * smax) {
                twist[pp] += (2.0 * lambda * (s.x + s.y + s.z - 3.0) - 4.0 * mu) / d;
            }
        }
        // Off-diagonal entry (i, jj) of A.
        float off;
        if (MODEL == 0u) off = sk * (lambda * (2.0 * j - 1.0) - mu);
        else if (MODEL == 1u) off = lambda * si * sj;
        else off = lambda;
        a[jj][i] = off;
        a[i][jj] = off;
    }
    for (uint i = 0u; i < 3u; ++i) {
        float si = s[i];
        float others = s[(i + 1u) % 3u] * s[(i + 2u) % 3u];
        if (MODEL == 0u) a[i][i] = mu + lambda * others * others;
        else if (MODEL == 1u) a[i][i] = mu * (3.0 * si * si - 1.0) + 0.5 * lambda * (i2 - 3.0) + lambda * si * si;
        else a[i][i] = 2.0 * mu + lambda;
    }
    vec3 al;
    mat3 z;
    sym_eigen3(a, al, z);
    vec3 alp = max(al, vec3(0.0));
    mat3 ap = volume * (z * mat3(alp.x, 0.0, 0.0, 0.0, alp.y, 0.0, 0.0, 0.0, alp.z) * transpose(z));
    vec3 twist_p = volume * max(twist, vec3(0.0));
    vec3 flip_p = volume * max(flip, vec3(0.0));

    // w_a = Vᵀ b_a (b₀ = −b₁ − b₂ − b₃; b_{1..3} rows of Dm⁻¹).
    mat3 vt = transpose(vm);
    vec3 w[4];
    w[1] = vt * r0.xyz;
    w[2] = vt * r1.xyz;
    w[3] = vt * r2.xyz;
    w[0] = -(w[1] + w[2] + w[3]);
    // tr(H_e) = Σ_a [Σ_i A⁺ᵢᵢ w_ai² + Σ_pairs (λ_t + λ_f)(w_ai² + w_aj²)/2].
    float tr = 0.0;
    for (uint c = 0u; c < 4u; ++c) {
        vec3 q = w[c] * w[c];
        tr += ap[0][0] * q.x + ap[1][1] * q.y + ap[2][2] * q.z;
        tr += 0.5 * ((twist_p.x + flip_p.x) * (q.x + q.y) + (twist_p.y + flip_p.y) * (q.x + q.z)
                   + (twist_p.z + flip_p.z) * (q.y + q.z));
    }
    if (PROJECT == 0u) {
        ap = volume * a;
        twist = volume * twist;
        flip = volume * flip;
    } else {
        twist = twist_p;
        flip = flip_p;
    }
    uint base = 8u * t;
    eig[base + 0u] = vec4(u1, twist.x);
    eig[base + 1u] = vec4(u2, twist.y);
    eig[base + 2u] = vec4(u3, twist.z);
    eig[base + 3u] = vec4(w[1], flip.x);
    eig[base + 4u] = vec4(w[2], flip.y);
    eig[base + 5u] = vec4(w[3], flip.z);
    eig[base + 6u] = vec4(ap[0][0], ap[1][1], ap[2][2], 0.25 * tr);
    eig[base + 7u] = vec4(ap[1][0], ap[2][0], ap[2][1], 0.0);
}
