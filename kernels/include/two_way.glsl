// Two-way interior point collision handling (two-way IPM paper §4–5): the shared state record,
// the contact constraints of the backward step and the projected Gauss–Seidel update.
// Twin of engine/src/cpu_reference/two_way.rs (same formulas, same order).
//
// A contact constraint is a proximity pair: TYPE_VT (x0 = vertex, x1..x3 = triangle) or TYPE_EE
// (x0, x1 = edge a, x2, x3 = edge b). Its form follows the closest features at the
// linearisation point x^(l) (shared/notes/two-way-ipm-constraints.md):
// - vertex–face and edge–edge interiors: c = V(x) / V(r) - 1, V the signed volume of the four
//   vertices, V(r) = s A δ / 3 (vertex–face, A the triangle area) or s |ea × eb| δ / 6 (two edges
//   δ apart along their common normal), s the sign of V at x^(l);
// - vertex–edge: c = A(x) / A(r) - 1, A the area of (p, e0, e1), A(r) = |e1 - e0| δ / 2;
// - vertex–vertex (Eq. 16): c = |q - p| / δ - 1.
// V(r) and A(r) are constants of the linearisation. Every c equals d / δ - 1 at x^(l) (d the
// exact distance); J = ∂c/∂x at x^(l).
#ifndef SUPPLE_TWO_WAY_GLSL
#define SUPPLE_TWO_WAY_GLSL
#include "distance.glsl"

const uint TYPE_VT = 0u;
const uint TYPE_EE = 1u;

// State flags (TwState.flags).
const uint TW_CONVERGED = 1u;   // max_i r_i < ε
const uint TW_LIMIT = 2u;       // L steps done
const uint TW_SEARCH = 4u;      // D^(l) fell under D_min: a new proximity search is needed
const uint TW_STOP = 7u;

// Vertex not in a shared-fraction group (two_way_group_fraction.comp).
const uint TW_NO_GROUP = 0xffffffffu;

// Device state of one solve (engine/src/collision/two_way.rs::TwState).
struct TwState {
    float bound;        // D^(l) (m)
    uint max_disp;      // float bits of max_i |x_i^(l+1) - x_i^(l)| of the current step
    uint max_r;         // float bits of max_i r_i after the current step
    uint steps;         // steps l done in this solve
    uint flags;
    uint min_dist;      // float bits of the smallest pair distance seen in this solve
    uint last_max_r;    // float bits of max_i r_i after the last step
    uint pairs;         // contact constraints of the current search
    uint disp_lo[3];    // float_to_ordered of the current step's smallest displacement components
    uint disp_hi[3];    // float_to_ordered of the current step's largest displacement components
    uint searches;      // searches queued within step batches and accepted (two_way_accept.comp)
    uint pairs_max;     // the most constraints of those searches
    uint colors_max;    // the most contact colors of those searches
    uint uncolored_max; // the most constraints of one of those searches left without a color
};

// The translation-invariant reuse bound's rounding margin, relative to 2 max_i |Δx_i|
// (two_way_update.comp; cpu_reference/two_way.rs::SPREAD_MARGIN).
const float TW_SPREAD_MARGIN = 1e-6;

// Per-step settings (push constants of every per-step kernel).
struct TwParams {
    float d_min;        // D_min (m)
    float delta;        // δ (m)
    float sigma;        // σ
    float gamma;        // step fraction of D_i: α_i |y_i - x_i| <= gamma D_i
    float epsilon;      // ε
    uint max_steps;     // L
    uint n;             // vertices
    uint offset;        // first constraint of this dispatch (edge sweeps) / color (contacts)
    uint count;         // constraints of this dispatch (edge sweeps)
    float min_sep;      // ξ (m): distances never drop below it (forward step uses D_i - ξ)
    float barrier_k;    // log-barrier baseline: strength k relative to m/h² (dimensionless)
    float barrier_range;// log-barrier baseline: range d̂ (m)
    float release_dist; // floor release: pairs closer than θ are floor pairs (m; 0: release off)
    float step_sep;     // floor of the distance-bounded step (m): ξ, or 2ξ with floor release
};

// Forward-step fraction α (Eq. 20) of a vertex with allowance d (its distance bound minus the
// step floor) and motion length len: α len <= gamma d, α = 0 when d <= 0.
float tw_alpha(float d, float len, float gamma) {
    if (!(d > 0.0)) return 0.0;
    if (len > gamma * d) return gamma * d / len;
    return 1.0;
}

// Height above a collider's offset surface to which the two-way method moves a target that is
// closer (m; twice colliders.glsl's COLLIDER_GUARD, two_way_collider_bound.comp).
const float TW_COLLIDER_TARGET = 4e-6;

uint tw_index() {
    return gl_WorkGroupID.x * WG + gl_LocalInvocationID.x;
}

// Gradient of V = (x1 - x0) · ((x2 - x0) × (x3 - x0)) / 6.
void tw_volume_gradient(vec3 x[4], out vec3 g[4]) {
    vec3 a = x[1] - x[0], b = x[2] - x[0], c = x[3] - x[0];
    g[1] = cross(b, c) / 6.0;
    g[2] = cross(c, a) / 6.0;
    g[3] = cross(a, b) / 6.0;
    g[0] = -(g[1] + g[2] + g[3]);
}

// Volume constraint; base = |V(r)| / δ. Returns false when degenerate.
bool tw_volume(vec3 x[4], float base, float delta, out float c, out vec3 J[4]) {
    vec3 g[4];
    tw_volume_gradient(x, g);
    float v = dot(x[1] - x[0], g[1]);
    float vr = (v < 0.0 ? -1.0 : 1.0) * base * delta;
    if (!(abs(vr) > 0.0)) return false;
    c = v / vr - 1.0;
    for (uint k = 0u; k < 4u; k++) J[k] = g[k] / vr;
    return true;
}

// Area constraint of point p = x[ip] and edge (x[ie0], x[ie1]); other slots get J = 0.
bool tw_area(vec3 x[4], uint ip, uint ie0, uint ie1, float delta, out float c, out vec3 J[4]) {
    vec3 p = x[ip], e0 = x[ie0], e1 = x[ie1];
    vec3 u = cross(e0 - p, e1 - p);
    float lu = length(u);
    float ar = length(e1 - e0) * delta * 0.5;
    if (!(lu > 0.0) || !(ar > 0.0)) return false;
    vec3 nrm = u / lu;
    c = 0.5 * lu / ar - 1.0;
    for (uint k = 0u; k < 4u; k++) J[k] = vec3(0.0);
    J[ie0] = 0.5 * cross(e1 - p, nrm) / ar;
    J[ie1] = 0.5 * cross(nrm, e0 - p) / ar;
    J[ip] = -(J[ie0] + J[ie1]);
    return true;
}

// Point–point constraint (Eq. 16) of x[ia] and x[ib].
bool tw_point(vec3 x[4], uint ia, uint ib, float delta, out float c, out vec3 J[4]) {
    vec3 d = x[ib] - x[ia];
    float l = length(d);
    if (!(l > 0.0)) return false;
    c = l / delta - 1.0;
    for (uint k = 0u; k < 4u; k++) J[k] = vec3(0.0);
    J[ib] = d / (l * delta);
    J[ia] = -J[ib];
    return true;
}

// The exact closest-feature distance of a pair (TYPE_VT or TYPE_EE).
Closest tw_closest(uint type, vec3 x[4]) {
    if (type == TYPE_VT) return point_triangle_distance(x[0], x[1], x[2], x[3]);
    return edge_edge_distance(x[0], x[1], x[2], x[3]);
}

// d without its component along edge direction e.
vec3 tw_off_edge(vec3 d, vec3 e) {
    float ee = dot(e, e);
    return ee > 0.0 ? d - (dot(d, e) / ee) * e : d;
}

// Floor release: a unit direction n (or 0) for the separating-plane test of a pair at x with
// closest features `kind` and closest-point difference diff (first primitive minus second):
// the triangle normal (vertex–face) or the edges' cross product (edge–edge interiors), diff
// made perpendicular to the edge (vertex–edge), else diff; oriented like diff. Any unit vector
// gives a sound test; these are perpendicular to the closest features up to rounding, where
// diff itself (rounded relative to the primitives' size, not the distance) can be off by far
// more than the distance over the primitives' extent.
vec3 tw_separating_direction(uint type, uint kind, vec3 x[4], vec3 diff) {
    vec3 n = diff;
    if (type == TYPE_VT) {
        if (kind == PT_T) n = cross(x[2] - x[1], x[3] - x[1]);
        else if (kind == PT_E0) n = tw_off_edge(diff, x[2] - x[1]);
        else if (kind == PT_E1) n = tw_off_edge(diff, x[3] - x[2]);
        else if (kind == PT_E2) n = tw_off_edge(diff, x[1] - x[3]);
    } else {
        if (kind == EE_AB) n = cross(x[1] - x[0], x[3] - x[2]);
        else if (kind == EE_AB0 || kind == EE_AB1) n = tw_off_edge(diff, x[1] - x[0]);
        else if (kind == EE_A0B || kind == EE_A1B) n = tw_off_edge(diff, x[3] - x[2]);
    }
    if (dot(n, diff) < 0.0) n = -n;
    float l = length(n);
    return l > 0.0 ? n / l : vec3(0.0);
}

// Contact constraint of a pair at its linearisation point x (closest features `kind`).
bool tw_contact(uint type, uint kind, vec3 x[4], float delta, out float c, out vec3 J[4]) {
    if (type == TYPE_VT) {
        if (kind == PT_T) {
            float area2 = length(cross(x[2] - x[1], x[3] - x[1]));
            return tw_volume(x, area2 / 6.0, delta, c, J);
        }
        if (kind == PT_E0) return tw_area(x, 0u, 1u, 2u, delta, c, J);
        if (kind == PT_E1) return tw_area(x, 0u, 2u, 3u, delta, c, J);
        if (kind == PT_E2) return tw_area(x, 0u, 3u, 1u, delta, c, J);
        return tw_point(x, 0u, 1u + kind, delta, c, J);
    }
    if (kind == EE_AB) {
        float cr = length(cross(x[1] - x[0], x[3] - x[2]));
        return tw_volume(x, cr / 6.0, delta, c, J);
    }
    if (kind == EE_AB0) return tw_area(x, 2u, 0u, 1u, delta, c, J);
    if (kind == EE_AB1) return tw_area(x, 3u, 0u, 1u, delta, c, J);
    if (kind == EE_A0B) return tw_area(x, 0u, 2u, 3u, delta, c, J);
    if (kind == EE_A1B) return tw_area(x, 1u, 2u, 3u, delta, c, J);
    // Vertex pairs: A0B0, A0B1, A1B0, A1B1.
    return tw_point(x, kind >> 1u, 2u + (kind & 1u), delta, c, J);
}

// One projected Gauss–Seidel update of constraint value c (at x), Jacobian J and multiplier
// lambda on targets y (inverse weights w: 0 for pinned vertices). Returns the new lambda.
float tw_pgs(float c, vec3 J[4], vec3 x[4], inout vec3 y[4], vec4 w, float lambda) {
    float r = c;
    float denom = 0.0;
    for (uint k = 0u; k < 4u; k++) {
        r += dot(J[k], y[k] - x[k]);
        denom += w[k] * dot(J[k], J[k]);
    }
    if (!(denom > 0.0)) return lambda;
    float ln = max(0.0, lambda - r / denom);
    float dl = ln - lambda;
    for (uint k = 0u; k < 4u; k++) y[k] += (w[k] * dl) * J[k];
    return ln;
}

// Log-barrier baseline (§3.4, Eq. 8): B(d) = k (d - d̂)² max(-ln(d / d̂), 0). Returns dB/dd
// (negative: repulsive) for 0 < d < d̂, else 0.
float tw_barrier_derivative(float d, float k, float range) {
    if (!(d > 0.0) || !(d < range)) return 0.0;
    float e = d - range;
    return k * (-2.0 * e * log(d / range) - e * e / d);
}

#endif
