#version 460
// Per-thin-element PSD Hessian (12×12 row-major, vertex-major rows, unused corners zero),
// written after the tets' Hessians: hess[144 (offset + e) + 12 r + c]. Membrane: clamped
// geometric stress term plus the material term, in closed form per (corner, axis) pair
//   H = A [δ_cd b_aᵀ S₊ b_b + μ ((u_c·u_d)(b_a·b_b) + (u_c·b_b)(u_d·b_a)) + λ (u_c·b_a)(u_d·b_b)]
// with u_c = row c of F. Quadratic: wᵢ wⱼ I. Spring: k [n nᵀ + max(0, 1 − L/l)(I − n nᵀ)].
// Host: engine/src/fem/thin.rs. Reference: cpu_reference/thin.rs (ThinElement::hessian).
#include "common.glsl"
#include "thin.glsl"
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Verts { uvec4 verts[]; };
layout(std430, binding = 2) readonly buffer Kind { uint kind[]; };
layout(std430, binding = 3) readonly buffer Data { vec4 data[]; };
layout(std430, binding = 4) writeonly buffer Hess { float hess[]; };
layout(push_constant) uniform P { uint count; uint offset; } p;

void main() {
    uint e = gl_GlobalInvocationID.x;
    if (e >= p.count) return;
    uvec4 v = verts[e];
    vec3 x[4];
    for (uint k = 0u; k < 4u; ++k) {
        // if, not ?: (lavapipe evaluates both sides of a select; v[k] may be THIN_NONE).
        x[k] = vec3(0.0);
        if (v[k] != THIN_NONE) x[k] = pos[v[k]].xyz;
    }
    vec4 d0 = data[2u * e], d1 = data[2u * e + 1u];
    uint base = 144u * (p.offset + e);
    for (uint i = 0u; i < 144u; ++i) hess[base + i] = 0.0;
    uint k_ = kind[e];
    if (k_ == THIN_MEMBRANE) {
        mat2x3 f = membrane_f(x[0], x[1], x[2], d0);
        float area = d1.x, mu = d1.y, lambda = d1.z;
        mat2 s = membrane_s(f, mu, lambda);
        // S₊: clamp the negative eigenvalue(s) of the symmetric 2×2 stress.
        float a = s[0][0], b = 0.5 * (s[0][1] + s[1][0]), d = s[1][1];
        float mean = 0.5 * (a + d), r = sqrt(0.25 * (a - d) * (a - d) + b * b);
        float l1 = mean + r, l2 = mean - r;
        mat2 sp = mat2(a, b, b, d);
        if (l2 < 0.0) {
            // Eigenvector of l1: the longer of the two candidate rows, rescaled by its largest
            // component before normalising (squares of tiny stresses underflow f32 to 0/0).
            vec2 v1 = vec2(l1 - d, b), v2 = vec2(b, l1 - a);
            vec2 v = dot(v1, v1) >= dot(v2, v2) ? v1 : v2;
            float vm = max(abs(v.x), abs(v.y));
            vec2 ev = a >= d ? vec2(1.0, 0.0) : vec2(0.0, 1.0);
            if (vm > 0.0) ev = normalize(v / vm);
            sp = l1 > 0.0 ? l1 * outerProduct(ev, ev) : mat2(0.0);
        }
        mat3x2 ft = transpose(f); // column c = u_c
        for (uint ra = 0u; ra < 3u; ++ra) {
            vec2 ba = membrane_b(d0, ra);
            for (uint rb = 0u; rb < 3u; ++rb) {
                vec2 bb = membrane_b(d0, rb);
                float geo = dot(ba, sp * bb);
                float bab = dot(ba, bb);
                for (uint c = 0u; c < 3u; ++c) {
                    vec2 uc = ft[c];
                    for (uint dd = 0u; dd < 3u; ++dd) {
                        vec2 ud = ft[dd];
                        float h = (c == dd ? geo : 0.0)
                            + mu * (dot(uc, ud) * bab + dot(uc, bb) * dot(ud, ba))
                            + lambda * dot(uc, ba) * dot(ud, bb);
                        hess[base + 12u * (3u * ra + c) + 3u * rb + dd] = area * h;
                    }
                }
            }
        }
    } else if (k_ == THIN_QUADRATIC) {
        for (uint ra = 0u; ra < 4u; ++ra) {
            for (uint rb = 0u; rb < 4u; ++rb) {
                if (v[ra] == THIN_NONE || v[rb] == THIN_NONE) continue;
                float w = d0[ra] * d0[rb];
                for (uint c = 0u; c < 3u; ++c) hess[base + 12u * (3u * ra + c) + 3u * rb + c] = w;
            }
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
        for (uint ra = 0u; ra < 2u; ++ra) {
            for (uint rb = 0u; rb < 2u; ++rb) {
                float sgn = ra == rb ? 1.0 : -1.0;
                for (uint r = 0u; r < 3u; ++r) {
                    for (uint c = 0u; c < 3u; ++c) {
                        hess[base + 12u * (3u * ra + r) + 3u * rb + c] = sgn * blk[c][r];
                    }
                }
            }
        }
    }
}
