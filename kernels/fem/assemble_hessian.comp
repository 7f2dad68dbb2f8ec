#version 460
// Assembles the Newton matrix H = M/h² + C + Σ_e H_e (C: per-vertex contact/friction blocks
// from newton/vectors.comp) straight into block storage, with no buffer of element Hessians
// ("in-time assembly"): each invocation owns one block and gathers, in fixed CSR order (no
// atomics: deterministic), its elements' 3×3 contributions, computed on the spot: a tet's block
// (a, b) = U K_ab Uᵀ from its analytic eigensystem (fem/tet_eigensystem.comp), a thin element's
// in closed form from the positions (membrane: clamped geometric stress plus material term;
// quadratic: wₐ w_b I; spring: k [n nᵀ + max(0, 1 − L/l)(I − n nᵀ)], ±). MODE 0: one diagonal
// block and its inverse per vertex (fixed vertices get identity rows); MODE 1: one off-diagonal
// block per element edge (i, j) (zero when i or j is fixed). Pool element e < num_tets is tet e,
// else thin element e − num_tets.
// MODE 0 also estimates each vertex's stiffness for the PCG warm start (barrier-augmented
// Lagrangian paper §4.2): the stencils' mean eigenvalues assembled per node,
// e_j = 3 m_j/h² + tr(C_j) + Σ_{e∋j} tr(H_e)/k_e (k_e: nodes of element e; the projected
// Hessians are PSD, so the trace is the eigenvalue sum).
// Host: engine/src/fem/elements.rs (record_assembly). Reference: cpu_reference/newton.rs.
// Read-only operands come through uniform texel buffer views (texelFetch: a vector gather on
// CPU devices, the texture cache on GPUs); results are written to storage buffers.
#include "common.glsl"
#include "thin.glsl"
#include "block3.glsl"
#include "polar.glsl"
#include "block3_abs.glsl"
layout(constant_id = 1) const uint MODE = 0;
// 1: the element blocks are projected (PSD): the diagonal blocks' inverses by Cholesky with
// floored pivots; 0: exact, possibly indefinite (project-on-demand Newton): by |D|⁻¹.
layout(constant_id = 2) const uint PROJECTED = 1;
layout(binding = 0) uniform samplerBuffer eig_texels;
layout(binding = 1) uniform samplerBuffer pos_texels;
layout(binding = 2) uniform usamplerBuffer thin_verts_texels;
layout(binding = 3) uniform usamplerBuffer thin_kind_texels;
layout(binding = 4) uniform samplerBuffer thin_data_texels;
layout(binding = 5) uniform usamplerBuffer start_texels;
layout(binding = 6) uniform usamplerBuffer entries_texels; // MODE 0: 4e+a; MODE 1: 16e+4a+b
layout(binding = 7) uniform samplerBuffer mass_texels;
layout(binding = 8) uniform samplerBuffer inv_mass_texels;
layout(binding = 9) uniform usamplerBuffer pairs_texels;
layout(std430, binding = 10) writeonly buffer Blocks { vec4 blocks[]; };
layout(std430, binding = 11) writeonly buffer Minv { vec4 minv[]; };
layout(binding = 12) uniform samplerBuffer contact_hess_texels; // 3 rows per vertex
layout(std430, binding = 13) writeonly buffer Stiffness { float stiffness[]; };
layout(push_constant) uniform P { uint count; float inv_h2; uint num_tets; } p;
// The read-only operands by index (texel fetches).
vec4 eig(uint i) { return texelFetch(eig_texels, int(i)); }
vec4 pos(uint i) { return texelFetch(pos_texels, int(i)); }
uvec4 thin_verts(uint i) { return texelFetch(thin_verts_texels, int(i)); }
uint thin_kind(uint i) { return texelFetch(thin_kind_texels, int(i)).x; }
vec4 thin_data(uint i) { return texelFetch(thin_data_texels, int(i)); }
uint start(uint i) { return texelFetch(start_texels, int(i)).x; }
uint entries(uint i) { return texelFetch(entries_texels, int(i)).x; }
float mass(uint i) { return texelFetch(mass_texels, int(i)).x; }
float inv_mass(uint i) { return texelFetch(inv_mass_texels, int(i)).x; }
uvec2 pairs(uint i) { return texelFetch(pairs_texels, int(i)).xy; }
vec4 contact_hess(uint i) { return texelFetch(contact_hess_texels, int(i)); }

const float SQRT_HALF = 0.70710678118654752;

mat3 diag3(vec3 d) {
    return mat3(d.x, 0.0, 0.0, 0.0, d.y, 0.0, 0.0, 0.0, d.z);
}

// Twist (sign −1) or flip (sign +1) mode of pair index pp applied to w: (eᵢ w_j ± e_j wᵢ)/√2.
vec3 pair_mode(vec3 w, uint pp, float sgn) {
    vec3 o = vec3(0.0);
    if (pp == 0u) { o.x = w.y; o.y = sgn * w.x; }
    else if (pp == 1u) { o.x = w.z; o.z = sgn * w.x; }
    else { o.y = w.z; o.z = sgn * w.y; }
    return SQRT_HALF * o;
}

vec3 tet_w(uint base, uint a) {
    vec3 w1 = eig(base + 3u).xyz, w2 = eig(base + 4u).xyz, w3 = eig(base + 5u).xyz;
    if (a == 0u) return -(w1 + w2 + w3);
    return eig(base + 2u + a).xyz;
}

// Block (a, b) of tet t's projected Hessian (row r, column c = H[3a + r][3b + c]).
mat3 tet_block(uint t, uint a, uint b) {
    uint base = 8u * t;
    vec4 e0 = eig(base), e1 = eig(base + 1u), e2 = eig(base + 2u);
    vec4 e3 = eig(base + 3u), e4 = eig(base + 4u), e5 = eig(base + 5u);
    vec4 e6 = eig(base + 6u), e7 = eig(base + 7u);
    mat3 u = mat3(e0.xyz, e1.xyz, e2.xyz);
    vec3 wa = tet_w(base, a), wb = tet_w(base, b);
    mat3 ap = mat3(e6.x, e7.x, e7.y, e7.x, e6.y, e7.z, e7.y, e7.z, e6.z);
    mat3 k = diag3(wa) * ap * diag3(wb);
    vec3 twist = vec3(e0.w, e1.w, e2.w), flip = vec3(e3.w, e4.w, e5.w);
    for (uint pp = 0u; pp < 3u; ++pp) {
        k += twist[pp] * outerProduct(pair_mode(wa, pp, -1.0), pair_mode(wb, pp, -1.0));
        k += flip[pp] * outerProduct(pair_mode(wa, pp, 1.0), pair_mode(wb, pp, 1.0));
    }
    return u * k * transpose(u);
}

// Block (ra, rb) of thin element e's PSD Hessian; `tr` gets the trace of the whole element
// Hessian and `nodes` its number of vertices.
mat3 thin_block(uint e, uint ra, uint rb, out float tr, out float nodes) {
    uvec4 v = thin_verts(e);
    vec3 x[4];
    nodes = 0.0;
    for (uint k = 0u; k < 4u; ++k) {
        // if, not ?: (lavapipe evaluates both sides of a select; v[k] may be THIN_NONE).
        x[k] = vec3(0.0);
        if (v[k] != THIN_NONE) {
            x[k] = pos(v[k]).xyz;
            nodes += 1.0;
        }
    }
    vec4 d0 = thin_data(2u * e), d1 = thin_data(2u * e + 1u);
    uint kind = thin_kind(e);
    mat3 m = mat3(0.0);
    tr = 0.0;
    if (kind == THIN_MEMBRANE) {
        mat2x3 f = membrane_f(x[0], x[1], x[2], d0);
        float area = d1.x, mu = d1.y, lambda = d1.z;
        mat2 s = membrane_s(f, mu, lambda);
        // S₊: clamp the negative eigenvalue(s) of the symmetric 2×2 stress.
        float sa = s[0][0], sb = 0.5 * (s[0][1] + s[1][0]), sd = s[1][1];
        float mean = 0.5 * (sa + sd), r = sqrt(0.25 * (sa - sd) * (sa - sd) + sb * sb);
        float l1 = mean + r, l2 = mean - r;
        mat2 sp = mat2(sa, sb, sb, sd);
        if (l2 < 0.0) {
            // Eigenvector of l1: the longer of the two candidate rows, rescaled by its largest
            // component before normalising (squares of tiny stresses underflow f32 to 0/0).
            vec2 v1 = vec2(l1 - sd, sb), v2 = vec2(sb, l1 - sa);
            vec2 ev0 = v2;
            if (dot(v1, v1) >= dot(v2, v2)) ev0 = v1;
            float vm = max(abs(ev0.x), abs(ev0.y));
            vec2 ev = vec2(0.0, 1.0);
            if (sa >= sd) ev = vec2(1.0, 0.0);
            if (vm > 0.0) ev = normalize(ev0 / vm);
            sp = mat2(0.0);
            if (l1 > 0.0) sp = l1 * outerProduct(ev, ev);
        }
        mat3x2 ft = transpose(f); // column c = u_c
        vec2 ba = membrane_b(d0, ra), bb = membrane_b(d0, rb);
        float geo = dot(ba, sp * bb);
        float bab = dot(ba, bb);
        for (uint c = 0u; c < 3u; ++c) {
            vec2 uc = ft[c];
            for (uint dd = 0u; dd < 3u; ++dd) {
                vec2 ud = ft[dd];
                float h = mu * (dot(uc, ud) * bab + dot(uc, bb) * dot(ud, ba))
                    + lambda * dot(uc, ba) * dot(ud, bb);
                if (c == dd) h += geo;
                m[dd][c] = area * h;
            }
        }
        for (uint q = 0u; q < 3u; ++q) {
            vec2 bq = membrane_b(d0, q);
            float bqq = dot(bq, bq);
            tr += 3.0 * dot(bq, sp * bq);
            for (uint c = 0u; c < 3u; ++c) {
                float ub = dot(ft[c], bq);
                tr += mu * (dot(ft[c], ft[c]) * bqq + ub * ub) + lambda * ub * ub;
            }
        }
        tr *= area;
    } else if (kind == THIN_QUADRATIC) {
        if (v[ra] != THIN_NONE && v[rb] != THIN_NONE) m = mat3(d0[ra] * d0[rb]);
        for (uint q = 0u; q < 4u; ++q) {
            if (v[q] != THIN_NONE) tr += 3.0 * d0[q] * d0[q];
        }
    } else {
        vec3 dx = x[1] - x[0];
        float l = length(dx);
        mat3 blk = d0.y * mat3(1.0);
        if (l > 0.0) {
            vec3 n = dx / l;
            mat3 nn = outerProduct(n, n);
            blk = d0.y * (nn + max(0.0, 1.0 - d0.x / l) * (mat3(1.0) - nn));
        }
        tr = 2.0 * (blk[0][0] + blk[1][1] + blk[2][2]);
        if (ra < 2u && rb < 2u) {
            m = blk;
            if (ra != rb) m = -blk;
        }
    }
    return m;
}

// Block (a, b) of pool element el; `tr_per_node` gets tr(H_e)/k_e.
mat3 element_block(uint el, uint a, uint b, out float tr_per_node) {
    if (el < p.num_tets) {
        tr_per_node = eig(8u * el + 6u).w;
        return tet_block(el, a, b);
    }
    float tr, nodes;
    mat3 m = thin_block(el - p.num_tets, a, b, tr, nodes);
    tr_per_node = tr / max(nodes, 1.0);
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
        if (inv_mass(k) == 0.0) {
            d = mat3(1.0);
            stiffness[k] = 1.0;
        } else {
            float e = 3.0 * mass(k) * p.inv_h2;
            d = mat3(mass(k) * p.inv_h2);
            for (uint r = 0u; r < 3u; ++r) {
                vec4 row = contact_hess(3u * k + r);
                d[0][r] += row.x;
                d[1][r] += row.y;
                d[2][r] += row.z;
                e += row[r];
            }
            uint q_end = start(k + 1u);
            for (uint q = start(k); q < q_end; ++q) {
                uint c = entries(q);
                float tr;
                d += element_block(c / 4u, c % 4u, c % 4u, tr);
                e += tr;
            }
            stiffness[k] = e;
        }
        store(k, d);
        // Cholesky with floored pivots, not inverse(): see block3.glsl.
        mat3 inv;
        if (PROJECTED == 1u) inv = block_inverse_spd(d);
        else inv = block_inverse_abs(d);
        for (uint r = 0u; r < 3u; ++r) minv[3u * k + r] = vec4(inv[0][r], inv[1][r], inv[2][r], 0.0);
    } else {
        mat3 b = mat3(0.0);
        uvec2 ij = pairs(k);
        if (inv_mass(ij.x) != 0.0 && inv_mass(ij.y) != 0.0) {
            uint e_end = start(k + 1u);
            for (uint e = start(k); e < e_end; ++e) {
                uint c = entries(e);
                float tr;
                b += element_block(c / 16u, (c / 4u) % 4u, c % 4u, tr);
            }
        }
        store(k, b);
    }
}
