#version 460
// Assembles the Newton matrix H = M/h² + C + Σ_e H_e (C: per-vertex contact/friction blocks
// from newton/vectors.comp; H_e: element Hessians, 12×12 row-major per pool element — tets and
// thin elements) into block storage, by gather in fixed (CSR) order: MODE 0: one diagonal block
// and its inverse per vertex (fixed vertices get identity rows); MODE 1: one off-diagonal block
// per element edge (i, j) = Σ H_e[a, b] over the elements holding it (zero when i or j is fixed).
// MODE 0 also estimates each vertex's stiffness for the PCG warm start (barrier-augmented
// Lagrangian paper §4.2): the stencils' mean eigenvalues assembled per node,
// e_j = 3 m_j/h² + tr(C_j) + Σ_{e∋j} tr(H_e)/k_e (k_e: nodes of element e; the projected
// Hessians are PSD, so the trace is the eigenvalue sum). Reference: cpu_reference/newton.rs.
// Host: engine/src/newton.rs. Reference: cpu_reference/newton.rs.
#include "common.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) readonly buffer Hess { float hess[]; };
layout(std430, binding = 1) readonly buffer Start { uint start[]; };
layout(std430, binding = 2) readonly buffer Entries { uint entries[]; }; // MODE 0: 4e+a; MODE 1: 16e+4a+b
layout(std430, binding = 3) readonly buffer Mass { float mass[]; };
layout(std430, binding = 4) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 5) readonly buffer Pairs { uvec2 pairs[]; };
layout(std430, binding = 6) writeonly buffer Blocks { vec4 blocks[]; };
layout(std430, binding = 7) writeonly buffer Minv { vec4 minv[]; };
layout(std430, binding = 8) readonly buffer ContactHess { vec4 contact_hess[]; }; // 3 rows per vertex
layout(std430, binding = 9) writeonly buffer Stiffness { float stiffness[]; };
layout(std430, binding = 10) readonly buffer ElementNodes { uint element_nodes[]; };
layout(push_constant) uniform P { uint count; float inv_h2; } p;

mat3 element_block(uint t, uint a, uint b) {
    mat3 m;
    for (uint r = 0u; r < 3u; ++r) {
        for (uint c = 0u; c < 3u; ++c) {
            m[c][r] = hess[144u * t + 12u * (3u * a + r) + (3u * b + c)];
        }
    }
    return m;
}

void store(uint k, mat3 m) {
    // Row-major rows as vec4s (row r = (m[0][r], m[1][r], m[2][r])).
    for (uint r = 0u; r < 3u; ++r) blocks[3u * k + r] = vec4(m[0][r], m[1][r], m[2][r], 0.0);
}

void main() {
    uint k = gl_GlobalInvocationID.x;
    if (k >= p.count) return;
    if (MODE == 0u) {
        mat3 d;
        if (inv_mass[k] == 0.0) {
            d = mat3(1.0);
            stiffness[k] = 1.0;
        } else {
            float e = 3.0 * mass[k] * p.inv_h2;
            d = mat3(mass[k] * p.inv_h2);
            for (uint r = 0u; r < 3u; ++r) {
                vec4 row = contact_hess[3u * k + r];
                d[0][r] += row.x;
                d[1][r] += row.y;
                d[2][r] += row.z;
                e += row[r];
            }
            for (uint q = start[k]; q < start[k + 1u]; ++q) {
                uint c = entries[q];
                uint el = c / 4u;
                d += element_block(el, c % 4u, c % 4u);
                float tr = 0.0;
                for (uint r = 0u; r < 12u; ++r) tr += hess[144u * el + 13u * r];
                e += tr / float(element_nodes[el]);
            }
            stiffness[k] = e;
        }
        store(k, d);
        mat3 inv = inverse(d);
        for (uint r = 0u; r < 3u; ++r) minv[3u * k + r] = vec4(inv[0][r], inv[1][r], inv[2][r], 0.0);
    } else {
        mat3 b = mat3(0.0);
        uvec2 ij = pairs[k];
        if (inv_mass[ij.x] != 0.0 && inv_mass[ij.y] != 0.0) {
            for (uint e = start[k]; e < start[k + 1u]; ++e) {
                uint c = entries[e];
                b += element_block(c / 16u, (c / 4u) % 4u, c % 4u);
            }
        }
        store(k, b);
    }
}
