// Exact distances between contact primitives (f32): point–point, point–edge, point–triangle,
// edge–edge. Twin of engine/src/cpu_reference/distance.rs: same candidates, same order, same
// comparisons (see there for the method and its robustness argument).
//
// Every query returns a Closest: squared distance, closest-feature code (IPC Toolkit order, see
// the constants below), signed weights w with diff = sum_k w[k] x_k = closest point of the first
// primitive minus closest point of the second (barycentrics are read off the weights), and diff.
// The gradient of the squared distance w.r.t. vertex k is 2 w[k] diff.
#ifndef SUPPLE_DISTANCE_GLSL
#define SUPPLE_DISTANCE_GLSL

// Point–edge kinds.
const uint PE_V0 = 0u;
const uint PE_V1 = 1u;
const uint PE_E = 2u;
// Point–triangle kinds: P_T0, P_T1, P_T2, P_E0 (t0,t1), P_E1 (t1,t2), P_E2 (t2,t0), P_T.
const uint PT_T0 = 0u;
const uint PT_T1 = 1u;
const uint PT_T2 = 2u;
const uint PT_E0 = 3u;
const uint PT_E1 = 4u;
const uint PT_E2 = 5u;
const uint PT_T = 6u;
// Edge–edge kinds: EA0_EB0, EA0_EB1, EA1_EB0, EA1_EB1, EA_EB0, EA_EB1, EA0_EB, EA1_EB, EA_EB.
const uint EE_A0B0 = 0u;
const uint EE_A0B1 = 1u;
const uint EE_A1B0 = 2u;
const uint EE_A1B1 = 3u;
const uint EE_AB0 = 4u;
const uint EE_AB1 = 5u;
const uint EE_A0B = 6u;
const uint EE_A1B = 7u;
const uint EE_AB = 8u;

struct Closest {
    float sq_dist; // m^2
    uint kind;
    vec4 w;        // signed weights of x0..x3
    vec3 diff;     // closest point of the first primitive minus the second's (m)
};

// 2^-e where m = f 2^e, f in [0.5, 1): exact rescaling of m into [0.5, 1).
float dist_inv_pow2_scale(float m) {
    if (m == 0.0 || isinf(m) || isnan(m)) return 1.0;
    int e;
    frexp(m, e);
    e = clamp(e, -125, 126);
    return ldexp(1.0, -e);
}

float dist_amax(vec3 v) {
    vec3 a = abs(v);
    return max(max(a.x, a.y), a.z);
}

// Vertices relative to x[0], scaled by a power of two into [-1, 1]; returns the scale.
float dist_normalize(inout vec3 x[4], uint count) {
    vec3 o = x[0];
    float m = 0.0;
    for (uint k = 0u; k < 4u; ++k) {
        x[k] = k < count ? x[k] - o : vec3(0.0);
        m = max(m, dist_amax(x[k]));
    }
    float s = dist_inv_pow2_scale(m);
    for (uint k = 0u; k < 4u; ++k) x[k] *= s;
    return s;
}

// Point–edge core in normalized coordinates: squared distance, code (PE_*), parameter s.
float dist_pe_core(vec3 p, vec3 e0, vec3 e1, out uint code, out float s) {
    vec3 e = e1 - e0;
    float ee = dot(e, e);
    s = ee > 0.0 ? dot(p - e0, e) / ee : 0.0;
    if (s <= 0.0) {
        code = PE_V0;
        s = 0.0;
        vec3 d = p - e0;
        return dot(d, d);
    } else if (s >= 1.0) {
        code = PE_V1;
        s = 1.0;
        vec3 d = p - e1;
        return dot(d, d);
    }
    code = PE_E;
    vec3 d = p - (e0 + e * s);
    return dot(d, d);
}

Closest point_point_distance(vec3 p, vec3 q) {
    vec3 x[4] = vec3[4](p, q, vec3(0.0), vec3(0.0));
    float sc = dist_normalize(x, 2u);
    vec3 d = -x[1];
    return Closest(dot(d, d) / (sc * sc), 0u, vec4(1.0, -1.0, 0.0, 0.0), d / sc);
}

Closest point_edge_distance(vec3 p, vec3 e0, vec3 e1) {
    vec3 x[4] = vec3[4](p, e0, e1, vec3(0.0));
    float sc = dist_normalize(x, 3u);
    uint code;
    float s;
    float d2 = dist_pe_core(x[0], x[1], x[2], code, s);
    vec3 c = x[1] + (x[2] - x[1]) * s;
    return Closest(d2 / (sc * sc), code, vec4(1.0, s - 1.0, -s, 0.0), (x[0] - c) / sc);
}

// Face candidate (normalized, p = x[0]): true with squared distance and barycentrics when the
// projection of p is strictly inside the triangle.
bool dist_face_candidate(vec3 x[4], out float d2, out vec3 b) {
    vec3 p = x[0], t0 = x[1], t1 = x[2], t2 = x[3];
    vec3 n = cross(t1 - t0, t2 - t0);
    float nn = dot(n, n);
    d2 = 0.0;
    b = vec3(0.0);
    if (nn > 0.0) {
        float b0 = dot(cross(t1 - p, t2 - p), n);
        float b1 = dot(cross(t2 - p, t0 - p), n);
        float b2 = dot(cross(t0 - p, t1 - p), n);
        if (b0 > 0.0 && b1 > 0.0 && b2 > 0.0) {
            float sum = b0 + b1 + b2;
            b = vec3(b0 / sum, b1 / sum, b2 / sum);
            vec3 c = t0 * b.x + t1 * b.y + t2 * b.z;
            vec3 d = p - c;
            d2 = dot(d, d);
            return true;
        }
    }
    return false;
}

// Point–triangle core (normalized): squared distance, kind, barycentrics.
float dist_pt_core(vec3 x[4], out uint kind, out vec3 bary) {
    uint c;
    float s;
    float d = dist_pe_core(x[0], x[1], x[2], c, s);
    float best = d;
    kind = c == PE_V0 ? PT_T0 : (c == PE_V1 ? PT_T1 : PT_E0);
    bary = vec3(1.0 - s, s, 0.0);
    d = dist_pe_core(x[0], x[2], x[3], c, s);
    if (d < best) {
        best = d;
        kind = c == PE_V0 ? PT_T1 : (c == PE_V1 ? PT_T2 : PT_E1);
        bary = vec3(0.0, 1.0 - s, s);
    }
    d = dist_pe_core(x[0], x[3], x[1], c, s);
    if (d < best) {
        best = d;
        kind = c == PE_V0 ? PT_T2 : (c == PE_V1 ? PT_T0 : PT_E2);
        bary = vec3(s, 0.0, 1.0 - s);
    }
    vec3 b;
    if (dist_face_candidate(x, d, b) && d < best) {
        best = d;
        kind = PT_T;
        bary = b;
    }
    return best;
}

Closest point_triangle_distance(vec3 p, vec3 t0, vec3 t1, vec3 t2) {
    vec3 x[4] = vec3[4](p, t0, t1, t2);
    float sc = dist_normalize(x, 4u);
    uint kind;
    vec3 b;
    float d2 = dist_pt_core(x, kind, b);
    vec3 c = x[1] * b.x + x[2] * b.y + x[3] * b.z;
    return Closest(d2 / (sc * sc), kind, vec4(1.0, -b), (x[0] - c) / sc);
}

// Interior–interior candidate (normalized, ea0 = x[0]): true with squared distance and the
// line parameters when the edges are not parallel and both parameters lie in (0, 1).
bool dist_line_line_candidate(vec3 x[4], out float d2, out float s, out float t) {
    vec3 ea = x[1] - x[0];
    vec3 eb = x[3] - x[2];
    vec3 n = cross(ea, eb);
    float nn = dot(n, n);
    d2 = 0.0;
    s = 0.0;
    t = 0.0;
    if (nn > 0.0) {
        vec3 w = x[2] - x[0];
        s = dot(cross(w, eb), n) / nn;
        t = dot(cross(w, ea), n) / nn;
        if (s > 0.0 && s < 1.0 && t > 0.0 && t < 1.0) {
            vec3 d = (x[0] + ea * s) - (x[2] + eb * t);
            d2 = dot(d, d);
            return true;
        }
    }
    return false;
}

// Edge–edge core (normalized): squared distance, kind, parameters s (edge a) and t (edge b).
float dist_ee_core(vec3 x[4], out uint kind, out float s, out float t) {
    uint c;
    float u;
    float d = dist_pe_core(x[0], x[2], x[3], c, u);
    float best = d;
    kind = c == PE_V0 ? EE_A0B0 : (c == PE_V1 ? EE_A0B1 : EE_A0B);
    s = 0.0;
    t = u;
    d = dist_pe_core(x[1], x[2], x[3], c, u);
    if (d < best) {
        best = d;
        kind = c == PE_V0 ? EE_A1B0 : (c == PE_V1 ? EE_A1B1 : EE_A1B);
        s = 1.0;
        t = u;
    }
    d = dist_pe_core(x[2], x[0], x[1], c, u);
    if (d < best) {
        best = d;
        kind = c == PE_V0 ? EE_A0B0 : (c == PE_V1 ? EE_A1B0 : EE_AB0);
        s = u;
        t = 0.0;
    }
    d = dist_pe_core(x[3], x[0], x[1], c, u);
    if (d < best) {
        best = d;
        kind = c == PE_V0 ? EE_A0B1 : (c == PE_V1 ? EE_A1B1 : EE_AB1);
        s = u;
        t = 1.0;
    }
    float ls, lt;
    if (dist_line_line_candidate(x, d, ls, lt) && d < best) {
        best = d;
        kind = EE_AB;
        s = ls;
        t = lt;
    }
    return best;
}

Closest edge_edge_distance(vec3 ea0, vec3 ea1, vec3 eb0, vec3 eb1) {
    vec3 x[4] = vec3[4](ea0, ea1, eb0, eb1);
    float sc = dist_normalize(x, 4u);
    uint kind;
    float s, t;
    float d2 = dist_ee_core(x, kind, s, t);
    vec3 ca = x[0] + (x[1] - x[0]) * s;
    vec3 cb = x[2] + (x[3] - x[2]) * t;
    return Closest(d2 / (sc * sc), kind, vec4(1.0 - s, s, t - 1.0, -t), (ca - cb) / sc);
}

#endif
