// The inverse of a 3×3 block's absolute value (needs polar.glsl's sym_eigen3 before it).
// Included by fem/assemble_hessian.comp (exact Hessians) and bal/system_add.comp.
// |D|⁻¹ = Q |Λ|⁻¹ Qᵀ of the symmetrised block, each |λ| floored at ε·max|λ|: the
// preconditioner block of an exact, possibly indefinite Hessian (where block_inverse_spd's
// floored Cholesky would square pivots of 1e-15 into a NaN) and of a block whose determinant
// overflows f32 (GLSL inverse() of a 1e13 N/m barrier block is NaN). Positive definite and
// finite for any finite block.
// Reference: cpu_reference::pcg::block_inverse_abs.
mat3 block_inverse_abs(mat3 d) {
    // Scaled to entries ≤ 1 first: the Jacobi sweeps square entries (a barrier block reaches
    // 1e13 N/m, whose squares' products overflow f32).
    float m = 0.0;
    for (uint c = 0u; c < 3u; ++c) m = max(m, max(abs(d[c].x), max(abs(d[c].y), abs(d[c].z))));
    if (m == 0.0) return mat3(1.0);
    mat3 s = (0.5 / m) * (d + transpose(d));
    vec3 lam;
    mat3 q;
    sym_eigen3(s, lam, q);
    vec3 a = abs(lam);
    float floor_ = max(1.1920929e-7 * max(a.x, max(a.y, a.z)), 1e-30);
    vec3 inv = vec3(1.0) / (m * max(a, vec3(floor_)));
    return q * mat3(inv.x, 0.0, 0.0, 0.0, inv.y, 0.0, 0.0, 0.0, inv.z) * transpose(q);
}

