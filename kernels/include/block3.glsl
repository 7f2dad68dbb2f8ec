// 3x3 blocks stored as three vec4 rows (w unused): block b occupies vec4s [3b, 3b + 3).
vec3 block_mul(vec4 r0, vec4 r1, vec4 r2, vec3 x) {
    return vec3(dot(r0.xyz, x), dot(r1.xyz, x), dot(r2.xyz, x));
}

vec3 block_mul_transposed(vec4 r0, vec4 r1, vec4 r2, vec3 x) {
    return r0.xyz * x.x + r1.xyz * x.y + r2.xyz * x.z;
}

// Inverse of a symmetric positive (semi)definite 3×3 block by Cholesky, D⁻¹ = L⁻ᵀ L⁻¹, each
// pivot floored at ε·max(diag) (ε = 2^-23, f32's epsilon). Backward stable: the result is the
// inverse of D + E with ‖E‖ ~ ε‖D‖, where GLSL's inverse() (adjugate / determinant) loses the
// small eigenvalues of a block dominated by a rank-one barrier term (paper_sphere frame 32: a
// collider block of 1.2e8 N/m beside 225 N/m gave ‖inverse(D)·D − I‖ = 5.5 and a PCG stuck at
// 1.09; docs/measurements.md issue 22). The floor keeps the preconditioner positive definite
// for a semidefinite or (wrongly) indefinite block. Reference: cpu_reference::pcg::block_inverse_spd.
mat3 block_inverse_spd(mat3 d) {
    float a00 = d[0][0], a11 = d[1][1], a22 = d[2][2];
    float a10 = 0.5 * (d[0][1] + d[1][0]);
    float a20 = 0.5 * (d[0][2] + d[2][0]);
    float a21 = 0.5 * (d[1][2] + d[2][1]);
    float floor_ = max(1.1920929e-7 * max(a00, max(a11, a22)), 1e-30);
    float l00 = sqrt(max(a00, floor_));
    float l10 = a10 / l00, l20 = a20 / l00;
    float l11 = sqrt(max(a11 - l10 * l10, floor_));
    float l21 = (a21 - l20 * l10) / l11;
    float l22 = sqrt(max(a22 - l20 * l20 - l21 * l21, floor_));
    // M = L⁻¹ (lower triangular).
    float m00 = 1.0 / l00, m11 = 1.0 / l11, m22 = 1.0 / l22;
    float m10 = -l10 * m00 / l11;
    float m21 = -l21 * m11 / l22;
    float m20 = -(l20 * m00 + l21 * m10) / l22;
    // D⁻¹ = Mᵀ M.
    float i00 = m00 * m00 + m10 * m10 + m20 * m20;
    float i01 = m10 * m11 + m20 * m21;
    float i02 = m20 * m22;
    float i11 = m11 * m11 + m21 * m21;
    float i12 = m21 * m22;
    float i22 = m22 * m22;
    return mat3(i00, i01, i02, i01, i11, i12, i02, i12, i22);
}
