// Rotation of the polar decomposition F = R S with det R = +1, as the CPU reference computes it
// (engine/src/cpu_reference/fem.rs, polar_rotation: SVD F = U Σ Vᵀ, R = U D Vᵀ with D flipping
// the direction of the smallest singular value when det(U Vᵀ) < 0): the maximiser of tr(RᵀF).
// V and Σ² from cyclic Jacobi sweeps on FᵀF; u1 = F v1 / σ1, u2 = the part of F v2 orthogonal
// to u1, normalised; R = [u1 u2 (u1 × u2) det V] Vᵀ never divides by the smallest singular
// value, so flat and inverted tets get a rotation too.

// Eigenvalues (descending) and unit eigenvectors (columns) of a symmetric 3×3 matrix.
void sym_eigen3(mat3 a, out vec3 lam, out mat3 v) {
    v = mat3(1.0);
    // Fixed trip counts (llvmpipe's loop limiter is shared by a SIMD row).
    for (uint sweep = 0u; sweep < 6u; ++sweep) {
        for (uint k = 0u; k < 3u; ++k) {
            uint p = k == 2u ? 1u : 0u;
            uint q = k == 0u ? 1u : 2u;
            float apq = a[q][p];
            if (abs(apq) < 1e-30) continue;
            float theta = (a[q][q] - a[p][p]) / (2.0 * apq);
            float t = sign(theta) / (abs(theta) + sqrt(theta * theta + 1.0));
            if (theta == 0.0) t = 1.0;
            float c = inversesqrt(t * t + 1.0);
            float s = t * c;
            mat3 j = mat3(1.0);
            j[p][p] = c;
            j[q][q] = c;
            j[q][p] = s;   // row p, column q
            j[p][q] = -s;  // row q, column p
            a = transpose(j) * a * j;
            v = v * j;
        }
    }
    lam = vec3(a[0][0], a[1][1], a[2][2]);
    // Sort descending (three compare-swaps).
    for (uint pass = 0u; pass < 3u; ++pass) {
        uint i = pass == 1u ? 1u : 0u;
        uint k = pass == 1u ? 2u : 1u;
        if (pass == 2u) { i = 0u; k = 1u; }
        if (lam[k] > lam[i]) {
            float tl = lam[i]; lam[i] = lam[k]; lam[k] = tl;
            vec3 tv = v[i]; v[i] = v[k]; v[k] = tv;
        }
    }
}

mat3 polar_rotation(mat3 f) {
    vec3 lam;
    mat3 v;
    sym_eigen3(transpose(f) * f, lam, v);
    vec3 a1 = f * v[0];
    float l1 = length(a1);
    vec3 u1 = l1 > 1e-30 ? a1 / l1 : vec3(1.0, 0.0, 0.0);
    vec3 a2 = f * v[1];
    a2 -= dot(a2, u1) * u1;
    float l2 = length(a2);
    // Any unit vector orthogonal to u1 when F has rank < 2.
    vec3 other = abs(u1.x) < 0.9 ? vec3(1.0, 0.0, 0.0) : vec3(0.0, 1.0, 0.0);
    vec3 u2 = l2 > 1e-30 * max(l1, 1e-30) ? a2 / l2 : normalize(cross(u1, other));
    vec3 u3 = cross(u1, u2) * sign(determinant(v));
    return mat3(u1, u2, u3) * transpose(v);
}
