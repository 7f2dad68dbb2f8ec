// Conservative continuous collision detection (f32) for point–triangle and edge–edge pairs moving
// linearly from x0 (t = 0) to x1 (t = 1). Twin of engine/src/cpu_reference/ccd.rs (method,
// error bounds and soundness argument documented there): coplanarity cubic, windows where the
// computed cubic is within its error bound (+ N*delta) found by Newton–bisection on the cubic's
// monotone pieces over [-eps, 1+eps], conservative advancement with the exact distance inside
// each window, then the reference-frame sign check with 0.9 backtracking.
#ifndef SUPPLE_CCD_GLSL
#define SUPPLE_CCD_GLSL
#include "distance.glsl"

const uint CCD_POINT_TRIANGLE = 0u;
const uint CCD_EDGE_EDGE = 1u;
const uint CCD_FLAG_HIT = 1u;
const uint CCD_FLAG_CAPPED = 2u;
const uint CCD_MAX_ADVANCE = 256u;
const uint CCD_MAX_ROOT_ITERATIONS = 64u;
const uint CCD_MAX_BACKTRACK = 64u;
const float CCD_EPS = 1.1920929e-7; // f32 machine epsilon

float ccd_cubic(vec4 c, float t) { return ((c.w * t + c.z) * t + c.y) * t + c.x; }
float ccd_cubic_derivative(vec4 c, float t) { return (3.0 * c.w * t + 2.0 * c.z) * t + c.y; }
float ccd_det(vec3 a, vec3 b, vec3 c) { return dot(a, cross(b, c)); }

// Real roots of a t^2 + b t + c (stable), ascending; returns the count.
uint ccd_quadratic_roots(float a, float b, float c, out float r0, out float r1) {
    r0 = 0.0;
    r1 = 0.0;
    if (a == 0.0) {
        if (b == 0.0) return 0u;
        r0 = -c / b;
        r1 = r0;
        return 1u;
    }
    float disc = b * b - 4.0 * a * c;
    if (disc < 0.0) return 0u;
    float sq = sqrt(disc);
    float q = b >= 0.0 ? -(b + sq) / 2.0 : -(b - sq) / 2.0;
    float x0 = q / a;
    float x1 = q != 0.0 ? c / q : x0;
    r0 = min(x0, x1);
    r1 = max(x0, x1);
    return 2u;
}

// Newton–bisection for cubic(t) = level on [l, r] (monotone, opposite signs at the ends);
// returns the final bracket (l, r).
vec2 ccd_solve_monotone(vec4 c, float level, float l, float r) {
    float gl = ccd_cubic(c, l) - level;
    if (gl == 0.0) return vec2(l, l);
    float tol = 4.0 * CCD_EPS;
    float x = 0.5 * (l + r);
    for (uint it = 0u; it < CCD_MAX_ROOT_ITERATIONS; ++it) {
        float gx = ccd_cubic(c, x) - level;
        if (gx == 0.0) return vec2(x, x);
        if ((gx > 0.0) == (gl > 0.0)) l = x; else r = x;
        if (r - l <= tol) break;
        float dg = ccd_cubic_derivative(c, x);
        float xn = x - gx / dg;
        x = ((it % 2u) == 0u && xn > l && xn < r) ? xn : 0.5 * (l + r);
    }
    return vec2(l, r);
}

float ccd_sq_distance(uint kind, vec3 x[4]) {
    if (kind == CCD_POINT_TRIANGLE) return point_triangle_distance(x[0], x[1], x[2], x[3]).sq_dist;
    return edge_edge_distance(x[0], x[1], x[2], x[3]).sq_dist;
}

// Conservative CCD; returns vec2(toi, flags) through toi/flags. min_separation (m) >= 0.
void ccd_query(uint kind, vec3 x0[4], vec3 x1[4], float min_separation, out float toi_out,
               out uint flags_out) {
    // 1. Relative to vertex 0 at t = 0, scaled by a power of two into [-1, 1].
    vec3 a[4], disp[4];
    float m = 0.0;
    for (uint k = 0u; k < 4u; ++k) {
        a[k] = x0[k] - x0[0];
        disp[k] = x1[k] - x0[0];
        m = max(max(m, dist_amax(a[k])), dist_amax(disp[k]));
    }
    float s = dist_inv_pow2_scale(m);
    for (uint k = 0u; k < 4u; ++k) {
        a[k] *= s;
        disp[k] = disp[k] * s - a[k];
    }
    float delta = max(min_separation, 0.0) * s;
    // 2. Coplanarity cubic of q_k(t) = x_k(t) - x_0(t).
    vec3 qa0 = a[1] - a[0], qa1 = a[2] - a[0], qa2 = a[3] - a[0];
    vec3 qv0 = disp[1] - disp[0], qv1 = disp[2] - disp[0], qv2 = disp[3] - disp[0];
    vec4 c = vec4(ccd_det(qa0, qa1, qa2),
                  ccd_det(qv0, qa1, qa2) + ccd_det(qa0, qv1, qa2) + ccd_det(qa0, qa1, qv2),
                  ccd_det(qa0, qv1, qv2) + ccd_det(qv0, qa1, qv2) + ccd_det(qv0, qv1, qa2),
                  ccd_det(qv0, qv1, qv2));
    float rq = max(max(length(qa0) + length(qv0), length(qa1) + length(qv1)),
                   length(qa2) + length(qv2));
    float rc = max(rq, 1.8);
    float e_err = 128.0 * CCD_EPS * rq * rq * rc;
    float level = e_err + 4.0 * rq * rq * delta;
    float tol = 16.0 * CCD_EPS * rc;
    float reach = delta * 1.01 + tol;
    vec3 mean = (disp[0] + disp[1] + disp[2] + disp[3]) * 0.25;
    float first, second;
    if (kind == CCD_POINT_TRIANGLE) {
        first = length(disp[0] - mean);
        second = max(max(length(disp[1] - mean), length(disp[2] - mean)), length(disp[3] - mean));
    } else {
        first = max(length(disp[0] - mean), length(disp[1] - mean));
        second = max(length(disp[2] - mean), length(disp[3] - mean));
    }
    float lip = (first + second) * (1.0 + 8.0 * CCD_EPS);
    // Monotone pieces on [-ext, 1+ext].
    float ext = 16.0 * CCD_EPS;
    float brk[4] = float[4](-ext, 0.0, 0.0, 1.0 + ext);
    uint nb = 1u;
    float r0, r1;
    uint nr = ccd_quadratic_roots(3.0 * c.w, 2.0 * c.z, c.y, r0, r1);
    if (nr >= 1u && r0 > -ext && r0 < 1.0 + ext) { brk[nb] = r0; nb += 1u; }
    if (nr >= 2u && r1 > -ext && r1 < 1.0 + ext) { brk[nb] = r1; nb += 1u; }
    brk[nb] = 1.0 + ext;
    float t_prev = 0.0;
    toi_out = 1.0;
    flags_out = 0u;
    for (uint i = 0u; i < nb; ++i) {
        float pa = brk[i], pb = brk[i + 1u];
        float fa = ccd_cubic(c, pa), fb = ccd_cubic(c, pb);
        if ((fa > level && fb > level) || (fa < -level && fb < -level)) continue;
        float lo = abs(fa) <= level ? pa
                                    : ccd_solve_monotone(c, fa > 0.0 ? level : -level, pa, pb).x;
        float hi = abs(fb) <= level ? pb
                                    : ccd_solve_monotone(c, fb > 0.0 ? level : -level, pa, pb).y;
        lo = max(lo, 0.0);
        hi = min(hi, 1.0);
        if (lo > hi) continue;
        // 3. Conservative advancement through the window (root shortcut for plain CCD).
        bool root_contact = false;
        float glo = ccd_cubic(c, lo), ghi = ccd_cubic(c, hi);
        if (delta == 0.0 && glo * ghi <= 0.0) {
            vec2 rb = ccd_solve_monotone(c, 0.0, lo, hi);
            float tr = 0.5 * (rb.x + rb.y);
            vec3 xr[4];
            for (uint k = 0u; k < 4u; ++k) xr[k] = a[k] + disp[k] * tr;
            float dr = sqrt(ccd_sq_distance(kind, xr));
            root_contact = dr <= tol + lip * (rb.y - rb.x);
        }
        float t = lo;
        bool hit = false;
        bool capped = true;
        for (uint it = 0u; it < CCD_MAX_ADVANCE; ++it) {
            vec3 x[4];
            for (uint k = 0u; k < 4u; ++k) x[k] = a[k] + disp[k] * t;
            float d = sqrt(ccd_sq_distance(kind, x));
            float gap = d - reach;
            if (gap <= 0.0) {
                hit = true;
                capped = false;
                break;
            }
            if (lip <= 0.0) {
                capped = false;
                break;
            }
            float next = t + gap / lip;
            if (next > hi) {
                capped = false;
                break;
            }
            t = next;
            if (root_contact) {
                hit = true;
                capped = false;
                break;
            }
        }
        if (capped) hit = true;
        if (hit) {
            // 4. Reference-frame sign check with 0.9 backtracking.
            float f_ref = ccd_cubic(c, 0.5 * (t_prev + t));
            float toi = t;
            if (abs(f_ref) > e_err) {
                for (uint it = 0u; it < CCD_MAX_BACKTRACK; ++it) {
                    if (ccd_cubic(c, toi) * f_ref > 0.0) break;
                    toi *= 0.9;
                }
                if (ccd_cubic(c, toi) * f_ref <= 0.0) toi = 0.0;
            }
            toi_out = toi;
            flags_out = CCD_FLAG_HIT | (capped ? CCD_FLAG_CAPPED : 0u);
            return;
        }
        t_prev = hi;
    }
}

#endif
