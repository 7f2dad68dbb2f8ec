// Barrier-augmented Lagrangian contact (BAL) in f32: IPC's clamped log barrier on unsquared
// distances, stencil distances with gradients and Hessians per distance type, the edge-edge
// mollifier, per-pair barrier + augmented-Lagrangian terms with a Jacobi PSD projection, and
// IPC's lagged friction. Twin of engine/src/cpu_reference/bal/ (barrier.rs, distance.rs,
// pair.rs, friction.rs): same formulas, same branch structure; the CPU twin is f64 and uses a
// library eigensolver, so results agree to f32 rounding.
//
// Stencils are vertex-triangle [p, t0, t1, t2] (kind 0) or edge-edge [ea0, ea1, eb0, eb1]
// (kind 1). Their closest-feature code (distance.glsl) selects a reduced stencil: 2, 3 or 4
// corners with weights w(theta) affine in theta (point-point [1,-1]; point-edge [1,-(1-s),-s];
// point-triangle [1,-(1-b1-b2),-b1,-b2]; edge-edge [1-s,s,-(1-t),-t]); d^2 = min_theta |sum w x|^2
// gives grad d^2 = 2 w_k r and hess d^2 = phi_xx - phi_xt phi_tt^-1 phi_tx (distance.rs).
#ifndef SUPPLE_BAL_GLSL
#define SUPPLE_BAL_GLSL
#extension GL_EXT_control_flow_attributes : require
#include "distance.glsl"

const uint BAL_NONE = 0xFFFFFFFFu;
const uint BAL_KIND_PT = 0u;
const uint BAL_KIND_EE = 1u;
const uint BAL_RED_PP = 0u;
const uint BAL_RED_PE = 1u;
const uint BAL_RED_PT = 2u;
const uint BAL_RED_EE = 3u;
#define BAL_INF uintBitsToFloat(0x7f800000u)

// Reduced stencils by kind * 7 + code (vertex-triangle codes 0..6, edge-edge 7..15).
const uint BAL_RED_KIND[16] = uint[16](0u, 0u, 0u, 1u, 1u, 1u, 2u,
                                       0u, 0u, 0u, 0u, 1u, 1u, 1u, 1u, 3u);
const uvec4 BAL_RED_CORNERS[16] = uvec4[16](
    uvec4(0u, 1u, 0u, 0u), uvec4(0u, 2u, 0u, 0u), uvec4(0u, 3u, 0u, 0u),
    uvec4(0u, 1u, 2u, 0u), uvec4(0u, 2u, 3u, 0u), uvec4(0u, 3u, 1u, 0u), uvec4(0u, 1u, 2u, 3u),
    uvec4(0u, 2u, 0u, 0u), uvec4(0u, 3u, 0u, 0u), uvec4(1u, 2u, 0u, 0u), uvec4(1u, 3u, 0u, 0u),
    uvec4(2u, 0u, 1u, 0u), uvec4(3u, 0u, 1u, 0u), uvec4(0u, 2u, 3u, 0u), uvec4(1u, 2u, 3u, 0u),
    uvec4(0u, 1u, 2u, 3u));

uint bal_red_index(uint kind, uint code) { return min(kind * 7u + code, 15u); }
uint bal_red_len(uint red) { return red == BAL_RED_PP ? 2u : (red == BAL_RED_PE ? 3u : 4u); }
uint bal_red_params(uint red) { return red == BAL_RED_PP ? 0u : (red == BAL_RED_PE ? 1u : 2u); }

// ---- barrier (barrier.rs) ----
float bal_barrier(float d, float dh) {
    if (d <= 0.0) return BAL_INF;
    if (d >= dh) return 0.0;
    float t = d - dh;
    return -t * t * log(d / dh);
}
float bal_barrier_d1(float d, float dh) {
    if (d <= 0.0) return -BAL_INF;
    if (d >= dh) return 0.0;
    float t = d - dh;
    return -2.0 * t * log(d / dh) - t * t / d;
}
float bal_barrier_d2(float d, float dh) {
    if (d <= 0.0) return BAL_INF;
    if (d >= dh) return 0.0;
    float t = d - dh;
    return -2.0 * log(d / dh) - 4.0 * t / d + t * t / (d * d);
}
// (m, m', m'') of IPC's edge-edge mollifier of c = |ea x eb|^2 with threshold eps.
vec3 bal_mollifier(float c, float eps) {
    if (c >= eps || eps <= 0.0) return vec3(1.0, 0.0, 0.0);
    float r = c / eps;
    return vec3((2.0 - r) * r, (2.0 - 2.0 * r) / eps, -2.0 / (eps * eps));
}

// ---- stencil geometry ----
Closest bal_closest(uint kind, vec3 x[4]) {
    if (kind == BAL_KIND_PT) return point_triangle_distance(x[0], x[1], x[2], x[3]);
    return edge_edge_distance(x[0], x[1], x[2], x[3]);
}

// Reduced weights w(theta) and dw/dtheta (rows a = 0, 1) of a reduced kind.
void bal_reduced_weights(uint red, vec2 th, out vec4 w, out vec4 dw0, out vec4 dw1) {
    dw0 = vec4(0.0);
    dw1 = vec4(0.0);
    if (red == BAL_RED_PP) {
        w = vec4(1.0, -1.0, 0.0, 0.0);
    } else if (red == BAL_RED_PE) {
        w = vec4(1.0, -(1.0 - th.x), -th.x, 0.0);
        dw0 = vec4(0.0, 1.0, -1.0, 0.0);
    } else if (red == BAL_RED_PT) {
        w = vec4(1.0, -(1.0 - th.x - th.y), -th.x, -th.y);
        dw0 = vec4(0.0, 1.0, -1.0, 0.0);
        dw1 = vec4(0.0, 1.0, 0.0, -1.0);
    } else {
        w = vec4(1.0 - th.x, th.x, -(1.0 - th.y), -th.y);
        dw0 = vec4(-1.0, 1.0, 0.0, 0.0);
        dw1 = vec4(0.0, 0.0, 1.0, -1.0);
    }
}

// Parameters theta of a reduced stencil from the stencil's signed weights W (distance.rs).
vec2 bal_parameters(uint red, uvec4 c, vec4 W) {
    if (red == BAL_RED_PP) return vec2(0.0);
    if (red == BAL_RED_PE) return vec2(-W[c[2]] / W[c[0]], 0.0);
    if (red == BAL_RED_PT) return vec2(-W[c[2]] / W[c[0]], -W[c[3]] / W[c[0]]);
    return vec2(W[c[1]], -W[c[3]]);
}

// Unsquared distance of a stencil with gradient g (12) and Hessian h (12x12); returns d
// (0 when touching: g and h are then left zero). code and W receive the closest features.
// The reduced weights are scattered to the stencil's corner order first (0 for corners not
// taking part), so every loop below has static bounds and indices.
float bal_distance_derivatives(uint kind, vec3 x[4], out uint code, out vec4 W,
                               out float g[12], out float h[12][12], out float basis[5][12]) {
    [[unroll]] for (uint a = 0u; a < 5u; ++a)
        [[unroll]] for (uint i = 0u; i < 12u; ++i) basis[a][i] = 0.0;
    [[unroll]] for (uint i = 0u; i < 12u; ++i) {
        g[i] = 0.0;
        [[unroll]] for (uint j = 0u; j < 12u; ++j) h[i][j] = 0.0;
    }
    Closest cl = bal_closest(kind, x);
    code = cl.kind;
    W = cl.w;
    float d = sqrt(cl.sq_dist);
    if (!(d > 0.0)) return 0.0;
    uint ri = bal_red_index(kind, code);
    uint red = BAL_RED_KIND[ri];
    uvec4 c = BAL_RED_CORNERS[ri];
    uint n = bal_red_len(red);
    uint m = bal_red_params(red);
    vec2 th = bal_parameters(red, c, W);
    vec4 w, dw0, dw1;
    bal_reduced_weights(red, th, w, dw0, dw1);
    // Reduced weights in stencil corner order.
    vec4 ws = vec4(0.0), d0 = vec4(0.0), d1 = vec4(0.0);
    for (uint k = 0u; k < 4u; ++k) {
        if (k < n) {
            ws[c[k]] = w[k];
            d0[c[k]] = dw0[k];
            d1[c[k]] = dw1[k];
        }
    }
    // r = sum w_k x_k: the query's diff (normalized coordinates, accurate for tiny d), signed
    // so that the reduced weights produce it (the query's weight of the first corner is +-1
    // except for edge interiors, whose weights are the reduced ones).
    float sgn = red == BAL_RED_EE ? 1.0 : W[c[0]];
    vec3 r = cl.diff * sgn;
    // g_a = sum dw_a,k x_k (weights sum to zero: relative to corner 0).
    vec3 ga0 = vec3(0.0), ga1 = vec3(0.0);
    [[unroll]] for (uint k = 1u; k < 4u; ++k) {
        vec3 xk = x[k] - x[0];
        ga0 += xk * d0[k];
        ga1 += xk * d1[k];
    }
    // phi_tt^-1.
    float p00 = 2.0 * dot(ga0, ga0), p01 = 2.0 * dot(ga0, ga1), p11 = 2.0 * dot(ga1, ga1);
    mat2 inv = mat2(0.0);
    if (m == 1u) {
        inv[0][0] = p00 > 0.0 ? 1.0 / p00 : 0.0;
    } else if (m == 2u) {
        float det = p00 * p11 - p01 * p01;
        if (det != 0.0) inv = mat2(p11, -p01, -p01, p00) / det;
    }
    // The Hessians of d^2 and d (and g) lie in span{w (x) e_i, phi_x,theta_a}: at most 5
    // vectors (distance.rs), the basis of the subspace PSD projection.
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
        [[unroll]] for (uint i = 0u; i < 3u; ++i) {
            basis[i][3u * k + i] = ws[k];
            basis[3][3u * k + i] = m >= 1u ? 2.0 * (ws[k] * ga0[i] + d0[k] * r[i]) : 0.0;
            basis[4][3u * k + i] = m >= 2u ? 2.0 * (ws[k] * ga1[i] + d1[k] * r[i]) : 0.0;
        }
    }
    float id = 1.0 / d;
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
        vec3 gk = r * (ws[k] * id);
        g[3u * k] = gk.x;
        g[3u * k + 1u] = gk.y;
        g[3u * k + 2u] = gk.z;
        vec3 ak0 = (ga0 * ws[k] + r * d0[k]) * 2.0;
        vec3 ak1 = (ga1 * ws[k] + r * d1[k]) * 2.0;
        [[unroll]] for (uint l = 0u; l < 4u; ++l) {
            vec3 al0 = (ga0 * ws[l] + r * d0[l]) * 2.0;
            vec3 al1 = (ga1 * ws[l] + r * d1[l]) * 2.0;
            [[unroll]] for (uint i = 0u; i < 3u; ++i) {
                [[unroll]] for (uint j = 0u; j < 3u; ++j) {
                    float v = (i == j ? 2.0 * ws[k] * ws[l] : 0.0);
                    v -= ak0[i] * inv[0][0] * al0[j] + ak0[i] * inv[0][1] * al1[j]
                       + ak1[i] * inv[1][0] * al0[j] + ak1[i] * inv[1][1] * al1[j];
                    // d^2 Hessian / 2d - (2 w_k r)(2 w_l r)^T / 4d^3.
                    h[3u * k + i][3u * l + j] =
                        v * (0.5 * id) - ws[k] * ws[l] * r[i] * r[j] * id * id * id;
                }
            }
        }
    }
    return d;
}

// c = |ea x eb|^2 of an edge-edge stencil with its gradient gc (corners ea0, ea1, eb0, eb1).
float bal_edge_cross(vec3 x[4], out float gc[12]) {
    vec3 u = x[1] - x[0], v = x[3] - x[2];
    float uu = dot(u, u), vv = dot(v, v), uv = dot(u, v);
    vec3 gu = u * (2.0 * vv) - v * (2.0 * uv);
    vec3 gv = v * (2.0 * uu) - u * (2.0 * uv);
    [[unroll]] for (uint i = 0u; i < 3u; ++i) {
        gc[i] = -gu[i];
        gc[3u + i] = gu[i];
        gc[6u + i] = -gv[i];
        gc[9u + i] = gv[i];
    }
    return uu * vv - uv * uv;
}

// Adds s * hess(c) of c = |ea x eb|^2 to h.
void bal_add_edge_cross_hessian(vec3 x[4], float s, inout float h[12][12]) {
    vec3 u = x[1] - x[0], v = x[3] - x[2];
    float uu = dot(u, u), vv = dot(v, v), uv = dot(u, v);
    [[unroll]] for (uint i = 0u; i < 3u; ++i) {
        [[unroll]] for (uint j = 0u; j < 3u; ++j) {
            float e = i == j ? 1.0 : 0.0;
            float huu = 2.0 * vv * e - 2.0 * v[i] * v[j];
            float hvv = 2.0 * uu * e - 2.0 * u[i] * u[j];
            // d(grad_u c)_i / dv_j and its transpose.
            float huv = 4.0 * u[i] * v[j] - 2.0 * v[i] * u[j] - 2.0 * uv * e;
            float hvu = 4.0 * u[j] * v[i] - 2.0 * v[j] * u[i] - 2.0 * uv * e;
            [[unroll]] for (uint a = 0u; a < 2u; ++a) {
                float sa = a == 0u ? -s : s;
                [[unroll]] for (uint b = 0u; b < 2u; ++b) {
                    float sab = b == 0u ? -sa : sa;
                    h[3u * a + i][3u * b + j] += sab * huu;
                    h[3u * (a + 2u) + i][3u * (b + 2u) + j] += sab * hvv;
                    h[3u * a + i][3u * (b + 2u) + j] += sab * huv;
                    h[3u * (b + 2u) + i][3u * a + j] += sab * hvu;
                }
            }
        }
    }
}

// ---- per-pair terms (pair.rs) ----
// (e, e', e'') of the unmollified distance terms: base barrier sigma b(d, dh) plus, for pairs of
// A' (aug.z != 0), mu (dh + s - d) + sigma b(d, dh + s) with aug = (mu, s, flag, _).
void bal_distance_terms(float d, float sigma, float dh, vec4 aug, out vec3 base, out vec3 al) {
    base = sigma * vec3(bal_barrier(d, dh), bal_barrier_d1(d, dh), bal_barrier_d2(d, dh));
    al = vec3(0.0);
    if (aug.z != 0.0) {
        float ds = dh + aug.y;
        al = vec3(aug.x * (ds - d) + sigma * bal_barrier(d, ds),
                  -aug.x + sigma * bal_barrier_d1(d, ds),
                  sigma * bal_barrier_d2(d, ds));
    }
}

// In-place PSD projection of a symmetric 12x12 matrix by cyclic Jacobi rotations; returns the
// sum of the clamped eigenvalues (the projected trace). The rotations work on a local copy with
// fully unrolled loops, so every index is static and the matrices stay out of indexed memory
// (lavapipe scalarizes dynamically indexed private arrays into per-lane gathers).
float bal_project_psd(inout float a[12][12]) {
    float m[12][12];
    float v[12][12];
    [[unroll]] for (uint i = 0u; i < 12u; ++i) {
        [[unroll]] for (uint j = 0u; j < 12u; ++j) {
            m[i][j] = a[i][j];
            v[i][j] = i == j ? 1.0 : 0.0;
        }
    }
    for (uint sweep = 0u; sweep < 16u; ++sweep) {
        float off = 0.0, diag = 0.0;
        [[unroll]] for (uint p = 0u; p < 12u; ++p) {
            diag += m[p][p] * m[p][p];
            [[unroll]] for (uint q = p + 1u; q < 12u; ++q) off += m[p][q] * m[p][q];
        }
        if (!(off > 1e-14 * diag)) break;
        [[unroll]] for (uint p = 0u; p < 11u; ++p) {
            [[unroll]] for (uint q = p + 1u; q < 12u; ++q) {
                float apq = m[p][q];
                if (apq != 0.0) {
                    float theta = (m[q][q] - m[p][p]) / (2.0 * apq);
                    float t = abs(theta) > 1e18
                            ? 0.5 / theta
                            : (theta >= 0.0 ? 1.0 : -1.0) / (abs(theta) + sqrt(theta * theta + 1.0));
                    float cs = inversesqrt(t * t + 1.0);
                    float sn = t * cs;
                    [[unroll]] for (uint k = 0u; k < 12u; ++k) {
                        float akp = m[k][p], akq = m[k][q];
                        m[k][p] = cs * akp - sn * akq;
                        m[k][q] = sn * akp + cs * akq;
                    }
                    [[unroll]] for (uint k = 0u; k < 12u; ++k) {
                        float apk = m[p][k], aqk = m[q][k];
                        m[p][k] = cs * apk - sn * aqk;
                        m[q][k] = sn * apk + cs * aqk;
                    }
                    [[unroll]] for (uint k = 0u; k < 12u; ++k) {
                        float vkp = v[k][p], vkq = v[k][q];
                        v[k][p] = cs * vkp - sn * vkq;
                        v[k][q] = sn * vkp + cs * vkq;
                    }
                }
            }
        }
    }
    float lam[12];
    float trace = 0.0;
    [[unroll]] for (uint k = 0u; k < 12u; ++k) {
        lam[k] = max(m[k][k], 0.0);
        trace += lam[k];
    }
    [[unroll]] for (uint i = 0u; i < 12u; ++i) {
        [[unroll]] for (uint j = i; j < 12u; ++j) {
            float s = 0.0;
            [[unroll]] for (uint k = 0u; k < 12u; ++k) s += v[i][k] * lam[k] * v[j][k];
            a[i][j] = s;
            a[j][i] = s;
        }
    }
    return trace;
}

// PSD projection of a symmetric 12x12 matrix whose rows and columns lie in the span of the five
// 12-vectors `basis` (some may be zero or dependent): with B an orthonormal basis of that span
// (modified Gram-Schmidt, dropping vectors whose remainder is below 1e-4 of their length),
// h = B (B^T h B) B^T exactly, so h+ = B (B^T h B)+ B^T needs only a 5x5 eigen-solve (Jacobi).
// Returns the projected trace. Used for every pair whose Hessian is a function of the distance
// alone (all but mollified edge-edge pairs): 12x12 Jacobi rotations cost ~60x more on lavapipe.
float bal_project_psd_subspace(inout float h[12][12], float basis[5][12]) {
    float b[5][12];
    [[unroll]] for (uint a = 0u; a < 5u; ++a) {
        float len2 = 0.0;
        [[unroll]] for (uint i = 0u; i < 12u; ++i) {
            b[a][i] = basis[a][i];
            len2 += b[a][i] * b[a][i];
        }
        [[unroll]] for (uint c = 0u; c < a; ++c) {
            float dp = 0.0;
            [[unroll]] for (uint i = 0u; i < 12u; ++i) dp += b[c][i] * b[a][i];
            [[unroll]] for (uint i = 0u; i < 12u; ++i) b[a][i] -= dp * b[c][i];
        }
        float rem2 = 0.0;
        [[unroll]] for (uint i = 0u; i < 12u; ++i) rem2 += b[a][i] * b[a][i];
        float sc = rem2 > 1e-8 * len2 && rem2 > 0.0 ? inversesqrt(rem2) : 0.0;
        [[unroll]] for (uint i = 0u; i < 12u; ++i) b[a][i] *= sc;
    }
    // Small matrix S = B^T h B.
    float hb[12][5];
    [[unroll]] for (uint i = 0u; i < 12u; ++i) {
        [[unroll]] for (uint a = 0u; a < 5u; ++a) {
            float acc = 0.0;
            [[unroll]] for (uint j = 0u; j < 12u; ++j) acc += h[i][j] * b[a][j];
            hb[i][a] = acc;
        }
    }
    float sm[5][5];
    float v[5][5];
    [[unroll]] for (uint a = 0u; a < 5u; ++a) {
        [[unroll]] for (uint c = 0u; c < 5u; ++c) {
            float acc = 0.0;
            [[unroll]] for (uint i = 0u; i < 12u; ++i) acc += b[a][i] * hb[i][c];
            sm[a][c] = acc;
            v[a][c] = a == c ? 1.0 : 0.0;
        }
    }
    // Symmetrize (rounding) and diagonalize.
    [[unroll]] for (uint a = 0u; a < 5u; ++a)
        [[unroll]] for (uint c = a + 1u; c < 5u; ++c) {
            float avg = 0.5 * (sm[a][c] + sm[c][a]);
            sm[a][c] = avg;
            sm[c][a] = avg;
        }
    for (uint sweep = 0u; sweep < 16u; ++sweep) {
        float off = 0.0, diag = 0.0;
        [[unroll]] for (uint p = 0u; p < 5u; ++p) {
            diag += sm[p][p] * sm[p][p];
            [[unroll]] for (uint q = p + 1u; q < 5u; ++q) off += sm[p][q] * sm[p][q];
        }
        if (!(off > 1e-14 * diag)) break;
        [[unroll]] for (uint p = 0u; p < 4u; ++p) {
            [[unroll]] for (uint q = p + 1u; q < 5u; ++q) {
                float apq = sm[p][q];
                if (apq != 0.0) {
                    float theta = (sm[q][q] - sm[p][p]) / (2.0 * apq);
                    float t = abs(theta) > 1e18
                            ? 0.5 / theta
                            : (theta >= 0.0 ? 1.0 : -1.0) / (abs(theta) + sqrt(theta * theta + 1.0));
                    float cs = inversesqrt(t * t + 1.0);
                    float sn = t * cs;
                    [[unroll]] for (uint k = 0u; k < 5u; ++k) {
                        float akp = sm[k][p], akq = sm[k][q];
                        sm[k][p] = cs * akp - sn * akq;
                        sm[k][q] = sn * akp + cs * akq;
                    }
                    [[unroll]] for (uint k = 0u; k < 5u; ++k) {
                        float apk = sm[p][k], aqk = sm[q][k];
                        sm[p][k] = cs * apk - sn * aqk;
                        sm[q][k] = sn * apk + cs * aqk;
                    }
                    [[unroll]] for (uint k = 0u; k < 5u; ++k) {
                        float vkp = v[k][p], vkq = v[k][q];
                        v[k][p] = cs * vkp - sn * vkq;
                        v[k][q] = sn * vkp + cs * vkq;
                    }
                }
            }
        }
    }
    // h+ = Q diag(max(lambda, 0)) Q^T with Q = B^T... (12 x 5): Q[i][k] = sum_a b[a][i] v[a][k].
    float q[12][5];
    float lam[5];
    float trace = 0.0;
    [[unroll]] for (uint k = 0u; k < 5u; ++k) {
        lam[k] = max(sm[k][k], 0.0);
        trace += lam[k];
    }
    [[unroll]] for (uint i = 0u; i < 12u; ++i) {
        [[unroll]] for (uint k = 0u; k < 5u; ++k) {
            float acc = 0.0;
            [[unroll]] for (uint a = 0u; a < 5u; ++a) acc += b[a][i] * v[a][k];
            q[i][k] = acc;
        }
    }
    [[unroll]] for (uint i = 0u; i < 12u; ++i) {
        [[unroll]] for (uint j = i; j < 12u; ++j) {
            float acc = 0.0;
            [[unroll]] for (uint k = 0u; k < 5u; ++k) acc += q[i][k] * lam[k] * q[j][k];
            h[i][j] = acc;
            h[j][i] = acc;
        }
    }
    return trace;
}

// Barrier + augmented-Lagrangian energy (split), gradient and PSD Hessian of one pair; returns
// the distance. energy = (m * base, m * al); stiffness = 3 x mean clamped eigenvalue per corner
// taking part (0 for the others). mol_eps = 0 for vertex-triangle stencils.
float bal_pair_terms(uint kind, vec3 x[4], float sigma, float dh, vec4 aug, float mol_eps,
                     out vec2 energy, out float g[12], out float h[12][12], out vec4 stiffness) {
    uint code;
    vec4 W;
    float gd[12];
    float basis[5][12];
    float d = bal_distance_derivatives(kind, x, code, W, gd, h, basis);
    energy = vec2(0.0);
    stiffness = vec4(0.0);
    [[unroll]] for (uint i = 0u; i < 12u; ++i) g[i] = 0.0;
    if (!(d > 0.0)) {
        energy = vec2(BAL_INF, 0.0);
        return d;
    }
    vec3 base, al;
    bal_distance_terms(d, sigma, dh, aug, base, al);
    vec3 e = base + al;
    // Mollifier (edge-edge stencils).
    float gc[12];
    [[unroll]] for (uint i = 0u; i < 12u; ++i) gc[i] = 0.0;
    vec3 mol = vec3(1.0, 0.0, 0.0);
    if (kind == BAL_KIND_EE && mol_eps > 0.0) mol = bal_mollifier(bal_edge_cross(x, gc), mol_eps);
    energy = mol.x * vec2(base.x, al.x);
    // h = m (e'' gd gd^T + e' hd) + m' e' (gd gc^T + gc gd^T) + e (m'' gc gc^T + m' hc).
    [[unroll]] for (uint i = 0u; i < 12u; ++i) {
        g[i] = mol.x * e.y * gd[i] + e.x * mol.y * gc[i];
        [[unroll]] for (uint j = 0u; j < 12u; ++j) {
            h[i][j] = mol.x * (e.z * gd[i] * gd[j] + e.y * h[i][j])
                    + mol.y * e.y * (gd[i] * gc[j] + gc[i] * gd[j])
                    + e.x * mol.z * gc[i] * gc[j];
        }
    }
    // A mollified edge-edge Hessian spans all 12 dimensions: full Jacobi; every other pair's
    // lies in the span of its distance basis.
    float trace;
    if (mol.y != 0.0 || mol.z != 0.0) {
        if (mol.y != 0.0) bal_add_edge_cross_hessian(x, e.x * mol.y, h);
        trace = bal_project_psd(h);
    } else {
        trace = bal_project_psd_subspace(h, basis);
    }
    // Corners taking part: the reduced stencil's, or all four while the mollifier acts.
    uint ri = bal_red_index(kind, code);
    uvec4 c = BAL_RED_CORNERS[ri];
    uint n = bal_red_len(BAL_RED_KIND[ri]);
    bvec4 used = bvec4(false);
    if (mol.y != 0.0 || mol.z != 0.0) {
        used = bvec4(true);
    } else {
        for (uint k = 0u; k < 4u; ++k) if (k < n) used[c[k]] = true;
    }
    float cnt = 0.0;
    for (uint k = 0u; k < 4u; ++k) cnt += used[k] ? 1.0 : 0.0;
    float mean = trace / (3.0 * cnt);
    for (uint k = 0u; k < 4u; ++k) stiffness[k] = used[k] ? 3.0 * mean : 0.0;
    return d;
}

// Energy only of one pair (split as in bal_pair_terms); returns the distance.
float bal_pair_energy(uint kind, vec3 x[4], float sigma, float dh, vec4 aug, float mol_eps,
                      out vec2 energy) {
    Closest cl = bal_closest(kind, x);
    float d = sqrt(cl.sq_dist);
    vec3 base, al;
    bal_distance_terms(d, sigma, dh, aug, base, al);
    float m = 1.0;
    if (kind == BAL_KIND_EE && mol_eps > 0.0) {
        vec3 u = x[1] - x[0], v = x[3] - x[2];
        float cc = dot(u, u) * dot(v, v) - dot(u, v) * dot(u, v);
        m = bal_mollifier(cc, mol_eps).x;
    }
    energy = vec2(isinf(base.x) ? base.x : m * base.x, isinf(al.x) ? al.x : m * al.x);
    return d;
}

// ---- friction (friction.rs) ----
vec3 bal_unit(vec3 v) {
    float n = length(v);
    return n > 0.0 ? v / n : vec3(0.0);
}

// Orthonormal contact-plane basis of a reduced stencil at x with stencil weights W.
void bal_tangent_basis(uint red, uvec4 c, vec3 x[4], vec4 W, out vec3 t0, out vec3 t1) {
    if (red == BAL_RED_PP) {
        vec3 n = (x[c[0]] - x[c[1]]) * sign(W[c[0]]);
        vec3 a = abs(n);
        vec3 axis = (a.x <= a.y && a.x <= a.z) ? vec3(1.0, 0.0, 0.0)
                  : (a.y <= a.z ? vec3(0.0, 1.0, 0.0) : vec3(0.0, 0.0, 1.0));
        t0 = bal_unit(cross(axis, n));
        t1 = bal_unit(cross(n, t0));
    } else if (red == BAL_RED_PE) {
        vec3 e = x[c[2]] - x[c[1]];
        t0 = bal_unit(e);
        t1 = bal_unit(cross(e, x[c[0]] - x[c[1]]));
    } else if (red == BAL_RED_PT) {
        vec3 e0 = x[c[2]] - x[c[1]];
        vec3 n = cross(e0, x[c[3]] - x[c[1]]);
        t0 = bal_unit(e0);
        t1 = bal_unit(cross(n, t0));
    } else {
        vec3 ea = x[c[1]] - x[c[0]];
        vec3 eb = x[c[3]] - x[c[2]];
        t0 = bal_unit(ea);
        t1 = bal_unit(cross(cross(ea, eb), t0));
    }
}

float bal_f0(float y, float eps) {
    return y < eps ? -y * y * y / (3.0 * eps * eps) + y * y / eps + eps / 3.0 : y;
}
float bal_f1_over_y(float y, float eps) {
    return y < eps ? 2.0 / eps - y / (eps * eps) : 1.0 / y;
}
float bal_f2_term(float y, float eps) {
    if (y < eps) return y > 0.0 ? -1.0 / (eps * eps * y) : 0.0;
    return -1.0 / (y * y * y);
}

// Friction energy, gradient, Hessian and per-corner stiffness of one lagged pair: weights beta,
// basis (t0, t1), normal force lambda (scaled by chi here), at x from x_start; eps = eps_v h.
float bal_friction_terms(vec4 beta, vec3 t0, vec3 t1, float chi_lambda, vec3 x[4], vec3 xs[4],
                         float eps, out float g[12], out float h[12][12], out vec4 stiffness) {
    vec3 disp = vec3(0.0);
    [[unroll]] for (uint k = 0u; k < 4u; ++k) disp += (x[k] - xs[k]) * beta[k];
    vec2 u = vec2(dot(t0, disp), dot(t1, disp));
    float y = length(u);
    float energy = chi_lambda * bal_f0(y, eps);
    float fy = bal_f1_over_y(y, eps);
    vec3 force = (t0 * u.x + t1 * u.y) * (chi_lambda * fy);
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
        g[3u * k] = force.x * beta[k];
        g[3u * k + 1u] = force.y * beta[k];
        g[3u * k + 2u] = force.z * beta[k];
    }
    // M = f1/y I + f2_term u u^T, projected (2x2 closed form).
    float f2 = bal_f2_term(y, eps);
    float m00 = fy + f2 * u.x * u.x, m01 = f2 * u.x * u.y, m11 = fy + f2 * u.y * u.y;
    float tr = 0.5 * (m00 + m11);
    float df = sqrt(max(0.25 * (m00 - m11) * (m00 - m11) + m01 * m01, 0.0));
    float l0 = tr + df, l1 = tr - df;
    vec2 e0 = abs(m01) > 0.0 ? normalize(vec2(l0 - m11, m01))
            : (m00 >= m11 ? vec2(1.0, 0.0) : vec2(0.0, 1.0));
    vec2 e1 = vec2(-e0.y, e0.x);
    mat2 mp = max(l0, 0.0) * outerProduct(e0, e0) + max(l1, 0.0) * outerProduct(e1, e1);
    mat3x2 tt = transpose(mat2x3(t0, t1));
    mat3 inner = transpose(tt) * mp * tt * chi_lambda;
    float bb = 0.0;
    [[unroll]] for (uint k = 0u; k < 4u; ++k) {
        bb += beta[k] * beta[k];
        [[unroll]] for (uint l = 0u; l < 4u; ++l) {
            float s = beta[k] * beta[l];
            [[unroll]] for (uint i = 0u; i < 3u; ++i)
                [[unroll]] for (uint j = 0u; j < 3u; ++j) h[3u * k + i][3u * l + j] = inner[j][i] * s;
        }
    }
    float used = 0.0;
    for (uint k = 0u; k < 4u; ++k) used += beta[k] != 0.0 ? 1.0 : 0.0;
    float trace = bb * (inner[0][0] + inner[1][1] + inner[2][2]);
    float mean = trace / (3.0 * max(used, 1.0));
    for (uint k = 0u; k < 4u; ++k) stiffness[k] = beta[k] != 0.0 ? 3.0 * mean : 0.0;
    return energy;
}

// ---- shared bindings and helpers of the BAL kernels ----
// Parameters the host writes between graph runs (engine/src/contact/bal/mod.rs, BalParams): sigma (N/m),
// d_hat (m), friction eps = eps_v h (m), chi, CCD separation fraction xi, augmentation threshold
// (1e-2 d_hat), the A' rule code (0 empty, 1 rebuild, 2 keep) and the mollifier factor.
struct BalParams {
    float sigma;
    float d_hat;
    float eps_f;
    float chi;
    float xi;
    float aug_threshold;
    uint rule;
    float pad;
};

// Push constants of every BAL kernel (structure, fixed when the graphs are recorded): candidate
// capacities (vertex-triangle, edge-edge: the proximity search's), pair capacity P, vertices,
// key bit widths, and corner entries 8 P (4 corners of P contact and P friction stencils).
layout(push_constant) uniform BalPush {
    uint cap_vt;
    uint cap_ee;
    uint pair_cap;
    uint nv;
    uint bits_a;
    uint bits_b;
    uint key_bits;
    uint entries;
} p;

// Key of a pair (kind, a, b) as the 64-bit (kind << (bits_a + bits_b)) | (a << bits_b) | b in
// (lo, hi) words (bits_a + bits_b <= 62; a < 2^bits_a - 1, so no key is all ones: all ones in the
// key bits is the sentinel of inactive slots). Twin: cpu_reference/bal/kernels.rs (pair_key).
uvec2 bal_shift64(uint v, uint sh) {
    if (sh >= 32u) return uvec2(0u, v << (sh - 32u));
    return uvec2(v << sh, sh == 0u ? 0u : (v >> (32u - sh)));
}
uvec2 bal_key(uint kind, uint a, uint b, uint bits_a, uint bits_b) {
    return uvec2(b, 0u) | bal_shift64(a, bits_b) | bal_shift64(kind, bits_a + bits_b);
}
uvec2 bal_sentinel(uint bits) {
    if (bits >= 32u) return uvec2(0xFFFFFFFFu, bits >= 64u ? 0xFFFFFFFFu : ((1u << (bits - 32u)) - 1u));
    return uvec2((1u << bits) - 1u, 0u);
}
bool bal_key_less(uvec2 a, uvec2 b) { return a.y < b.y || (a.y == b.y && a.x < b.x); }

// Corner positions of the stencil with vertices v from the vec4 buffer buf.
#define BAL_GATHER(buf, v, out4) for (uint k_ = 0u; k_ < 4u; ++k_) out4[k_] = buf[v[k_]].xyz

#endif
