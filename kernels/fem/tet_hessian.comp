#version 460
// Per-tet element Hessian H = V Dᵀ proj(∂²Ψ/∂F²) D (12×12, vertex-major), with the 9×9
// stress-space Hessian projected to positive semi-definite by cyclic Jacobi eigen-iterations
// (negative eigenvalues clamped to zero). D = ∂vec(F)/∂x, vec column-major. MODEL 0: stable
// Neo-Hookean, 1: St. Venant–Kirchhoff, 2: fixed corotated (with ∂R/∂F: dR = R [ω]×,
// (tr S I − S) ω = axial(RᵀdF − dFᵀR), S = RᵀF; cpu_reference::fem::polar_rotation_derivative). Output: hess[144 t + 12 r + c] (row r, column c).
// Host: engine/src/fem/elements.rs. Reference: cpu_reference/fem.rs (hessian_stress_projected).
#include "common.glsl"
#include "polar.glsl"
layout(constant_id = 1) const uint MODEL = 0;
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Tets { uvec4 tets[]; };
layout(std430, binding = 2) readonly buffer Rest { vec4 rest[]; };
layout(std430, binding = 3) readonly buffer Params { vec2 lame[]; };
layout(std430, binding = 4) writeonly buffer Hess { float hess[]; };
layout(push_constant) uniform P { uint num_tets; uint sweeps; } p;

mat3 cofactor(mat3 f) {
    return mat3(cross(f[1], f[2]), cross(f[2], f[0]), cross(f[0], f[1]));
}

// Directional derivative of P along dF (r: F's polar rotation, used by MODEL 2 only).
mat3 dpk1(mat3 f, mat3 r, mat3 df, float mu, float lambda) {
    if (MODEL == 2u) {
        mat3 s = transpose(r) * f;
        mat3 g = transpose(r) * df;
        mat3 w = g - transpose(g);
        // axial(W) = (W₂₁, W₀₂, W₁₀) (row, column); GLSL indexes [column][row].
        vec3 axial = vec3(w[1][2], w[2][0], w[0][1]);
        float tr_s = s[0][0] + s[1][1] + s[2][2];
        mat3 m = tr_s * mat3(1.0) - s;
        float scale = max(sqrt(dot(s[0], s[0]) + dot(s[1], s[1]) + dot(s[2], s[2])), 1e-30);
        vec3 om = vec3(0.0);
        if (abs(determinant(m)) > 1e-6 * scale * scale * scale) om = inverse(m) * axial;
        // [ω]× column by column.
        mat3 dr = r * mat3(0.0, om.z, -om.y, -om.z, 0.0, om.x, om.y, -om.x, 0.0);
        float tr_g = g[0][0] + g[1][1] + g[2][2];
        return 2.0 * mu * (df - dr) + lambda * tr_g * r + lambda * (tr_s - 3.0) * dr;
    }
    if (MODEL == 0u) {
        float j = determinant(f);
        mat3 g = cofactor(f);
        float gdf = dot(g[0], df[0]) + dot(g[1], df[1]) + dot(g[2], df[2]);
        mat3 dcof = mat3(cross(df[1], f[2]) + cross(f[1], df[2]),
                         cross(df[2], f[0]) + cross(f[2], df[0]),
                         cross(df[0], f[1]) + cross(f[0], df[1]));
        return mu * df + lambda * gdf * g + (lambda * (j - 1.0) - mu) * dcof;
    }
    mat3 e = 0.5 * (transpose(f) * f - mat3(1.0));
    mat3 de = 0.5 * (transpose(df) * f + transpose(f) * df);
    float tr = e[0][0] + e[1][1] + e[2][2];
    float dtr = de[0][0] + de[1][1] + de[2][2];
    return df * (2.0 * mu * e + lambda * tr * mat3(1.0)) + f * (2.0 * mu * de + lambda * dtr * mat3(1.0));
}

void main() {
    uint t = gl_GlobalInvocationID.x;
    if (t >= p.num_tets) return;
    uvec4 v = tets[t];
    vec3 x0 = pos[v.x].xyz;
    mat3 ds = mat3(pos[v.y].xyz - x0, pos[v.z].xyz - x0, pos[v.w].xyz - x0);
    vec4 r0 = rest[3u * t], r1 = rest[3u * t + 1u], r2 = rest[3u * t + 2u];
    mat3 dm_inv = transpose(mat3(r0.xyz, r1.xyz, r2.xyz));
    float volume = r0.w;
    mat3 f = ds * dm_inv;
    float mu = lame[t].x, lambda = lame[t].y;

    // A = ∂²Ψ/∂F² (9×9, column k = vec(dP(F, E_k))), V = identity.
    float a[81];
    float ev[81];
    mat3 rot = mat3(1.0);
    if (MODEL == 2u) rot = polar_rotation(f);
    for (uint k = 0u; k < 9u; ++k) {
        mat3 df = mat3(0.0);
        df[k / 3u][k % 3u] = 1.0;
        mat3 dp = dpk1(f, rot, df, mu, lambda);
        for (uint i = 0u; i < 9u; ++i) {
            a[9u * i + k] = dp[i / 3u][i % 3u];
            ev[9u * i + k] = i == k ? 1.0 : 0.0;
        }
    }
    // Symmetrize, then cyclic Jacobi.
    for (uint i = 0u; i < 9u; ++i) {
        for (uint k = i + 1u; k < 9u; ++k) {
            float s = 0.5 * (a[9u * i + k] + a[9u * k + i]);
            a[9u * i + k] = s;
            a[9u * k + i] = s;
        }
    }
    for (uint sweep = 0u; sweep < p.sweeps; ++sweep) {
        for (uint pp = 0u; pp < 8u; ++pp) {
            for (uint q = pp + 1u; q < 9u; ++q) {
                float apq = a[9u * pp + q];
                if (abs(apq) < 1e-30) continue;
                float app = a[9u * pp + pp], aqq = a[9u * q + q];
                float theta = (aqq - app) / (2.0 * apq);
                float tt = sign(theta) / (abs(theta) + sqrt(theta * theta + 1.0));
                if (theta == 0.0) tt = 1.0;
                float c = inversesqrt(tt * tt + 1.0);
                float s = tt * c;
                for (uint k = 0u; k < 9u; ++k) {
                    float akp = a[9u * k + pp], akq = a[9u * k + q];
                    a[9u * k + pp] = c * akp - s * akq;
                    a[9u * k + q] = s * akp + c * akq;
                }
                for (uint k = 0u; k < 9u; ++k) {
                    float apk = a[9u * pp + k], aqk = a[9u * q + k];
                    a[9u * pp + k] = c * apk - s * aqk;
                    a[9u * q + k] = s * apk + c * aqk;
                }
                for (uint k = 0u; k < 9u; ++k) {
                    float vkp = ev[9u * k + pp], vkq = ev[9u * k + q];
                    ev[9u * k + pp] = c * vkp - s * vkq;
                    ev[9u * k + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    // H_F⁺ = V diag(max(λ, 0)) Vᵀ, stored back into a.
    float lam[9];
    for (uint i = 0u; i < 9u; ++i) lam[i] = max(a[9u * i + i], 0.0);
    for (uint i = 0u; i < 9u; ++i) {
        for (uint k = 0u; k < 9u; ++k) {
            float sum = 0.0;
            for (uint m = 0u; m < 9u; ++m) sum += ev[9u * i + m] * lam[m] * ev[9u * k + m];
            a[9u * i + k] = sum;
        }
    }
    // H_x[3a + i][3b + j] = V Σ_{c,d} b_a[c] b_b[d] H_F[(c,i),(d,j)], vec index of F(i, c) = 3c + i.
    vec3 bv[4];
    bv[1] = r0.xyz;
    bv[2] = r1.xyz;
    bv[3] = r2.xyz;
    bv[0] = -(bv[1] + bv[2] + bv[3]);
    for (uint va = 0u; va < 4u; ++va) {
        for (uint i = 0u; i < 3u; ++i) {
            for (uint vb = 0u; vb < 4u; ++vb) {
                for (uint j = 0u; j < 3u; ++j) {
                    float sum = 0.0;
                    for (uint c = 0u; c < 3u; ++c) {
                        for (uint d = 0u; d < 3u; ++d) {
                            sum += bv[va][c] * bv[vb][d] * a[9u * (3u * c + i) + (3u * d + j)];
                        }
                    }
                    hess[144u * t + 12u * (3u * va + i) + (3u * vb + j)] = volume * sum;
                }
            }
        }
    }
}
