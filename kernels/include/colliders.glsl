// Analytic colliders (plane, sphere, box) moving at constant velocity, barrier contact and
// lagged, IPC-smoothed Coulomb friction per vertex. Reference: engine/src/cpu_reference/contact.rs.
// Collider c in `colliders[4c ..]`: (kind, μ, offset | radius, thickness), (normal | centre | min, 0),
// (max | sphere spin ω, 0), (velocity, 0); kind 0 plane n·x ≥ offset, 1 sphere, 2 box (solid,
// axis-aligned). A spinning sphere's surface moves at v + ω × (x − centre) (friction only).
// Vertices are kept at a signed gap ≥ the collider's thickness (its offset, m) plus their body's
// clearance (collider_vertex_offset): the distance above it, d = gap − thickness − clearance, is
// what contact acts on.
// The including shader declares `colliders` (vec4[]).
const uint COLLIDER_PLANE = 0u;
const uint COLLIDER_SPHERE = 1u;
const uint COLLIDER_BOX = 2u;

// Signed gap (negative inside) and outward unit normal of x at time t.
float collider_gap(uint c, vec3 x, float t, out vec3 n) {
    vec4 c0 = colliders[4u * c], c1 = colliders[4u * c + 1u], c2 = colliders[4u * c + 2u];
    vec3 shift = colliders[4u * c + 3u].xyz * t;
    uint kind = uint(c0.x);
    if (kind == COLLIDER_PLANE) {
        n = c1.xyz;
        return dot(n, x) - c0.z - dot(n, shift);
    }
    if (kind == COLLIDER_SPHERE) {
        vec3 d = x - (c1.xyz + shift);
        float l = length(d);
        n = vec3(0.0, 0.0, 1.0);
        if (l > 0.0) n = d / l;
        return l - c0.z;
    }
    vec3 lo = c1.xyz + shift, hi = c2.xyz + shift;
    vec3 out_d = x - clamp(x, lo, hi);
    float l = length(out_d);
    if (l > 0.0) {
        n = out_d / l;
        return l;
    }
    float best = 1e30;
    n = vec3(0.0, 0.0, 1.0);
    for (uint k = 0u; k < 3u; ++k) {
        float dl = x[k] - lo[k], dh = hi[k] - x[k];
        vec3 e = vec3(0.0);
        e[k] = 1.0;
        if (dl < best) { best = dl; n = -e; }
        if (dh < best) { best = dh; n = e; }
    }
    return -best;
}

// Smallest distance above a collider's offset that a projection or an accepted Newton iterate
// leaves (m): the f32 rounding of a gap stays well below it.
const float COLLIDER_GUARD = 2e-6;
// Energy of a Newton iterate that enters a collider's offset (rejected by the line search).
const float COLLIDER_INFEASIBLE = 1e30;

// Thickness (offset, m) of collider c.
float collider_offset(uint c) { return colliders[4u * c].w; }

// The clearance (m) of the vertex in hand on top of every collider's offset (its body's
// `collider_offset`): a kernel sets it from its per-vertex buffer before calling the functions
// below for that vertex (0 where it does not).
float collider_vertex_offset = 0.0;

// Distance of x above collider c's offset surface at time t (m; negative inside) and normal,
// the offset surface including collider_vertex_offset.
float collider_distance(uint c, vec3 x, float t, out vec3 n) {
    return collider_gap(c, x, t, n) - collider_offset(c) - collider_vertex_offset;
}

// Moves x out along the normal to `target` above each collider's offset surface that it is
// less than COLLIDER_GUARD above (one pass in collider order).
vec3 collider_push_out(vec3 x, float t, float target, uint count) {
    for (uint c = 0u; c < count; ++c) {
        vec3 n;
        float d = collider_distance(c, x, t, n);
        if (d < COLLIDER_GUARD) x += (target - d) * n;
    }
    return x;
}

// Whether the segment a → b stays at least COLLIDER_GUARD above every collider's offset
// surface at time t: planes by the end point (the distance is linear along the segment),
// spheres by the segment's closest point to the centre, boxes by conservative advancement
// (the distance is 1-Lipschitz; undecided after 32 advances counts as entering). A segment
// that starts within an offset (a contact method moved the vertex there after an accepted
// iterate) is judged by its end point alone, so that the solve can move the vertex out.
bool collider_segment_clear(vec3 a, vec3 b, float t, uint count) {
    vec3 ab = b - a;
    float len = length(ab);
    for (uint c = 0u; c < count; ++c) {
        uint kind = uint(colliders[4u * c].x);
        vec3 n;
        if (collider_distance(c, b, t, n) < COLLIDER_GUARD) return false;
        if (kind == COLLIDER_PLANE || len == 0.0) continue;
        if (collider_distance(c, a, t, n) < COLLIDER_GUARD) continue;
        if (kind == COLLIDER_SPHERE) {
            vec3 centre = colliders[4u * c + 1u].xyz + colliders[4u * c + 3u].xyz * t;
            float s = clamp(dot(centre - a, ab) / (len * len), 0.0, 1.0);
            if (collider_distance(c, a + s * ab, t, n) < COLLIDER_GUARD) return false;
            continue;
        }
        float s = 0.0;
        bool done = false;
        for (uint k = 0u; k < 32u; ++k) {
            float d = collider_distance(c, a + s * ab, t, n);
            if (d < COLLIDER_GUARD) return false;
            s += (d - 0.5 * COLLIDER_GUARD) / len;
            if (s >= 1.0) { done = true; break; }
        }
        if (!done) return false;
    }
    return true;
}

// IPC's barrier b(d) = −(d − d̂)² ln(d/d̂) on 0 < d < d̂ (0 beyond), b' and b'' (d ≥ COLLIDER_GUARD).
float collider_barrier(float d, float dh) {
    return d < dh ? -(d - dh) * (d - dh) * log(d / dh) : 0.0;
}
float collider_barrier_d1(float d, float dh) {
    return d < dh ? (dh - d) * (2.0 * log(d / dh) + 1.0 - dh / d) : 0.0;
}
float collider_barrier_d2(float d, float dh) {
    return d < dh ? -(2.0 * log(d / dh) + 1.0 - dh / d) + (dh - d) * (2.0 / d + dh / (d * d)) : 0.0;
}

// Friction lag at the linearisation point x: the nearest collider within the barrier's reach
// (n, μλ with λ = kc |b'(d)|) and its displacement over the step (h); μλ = 0 when there is none.
void friction_lag(vec3 x, float t, float h, float kc, float dh, uint count, out vec4 lag_n, out vec4 lag_shift) {
    float nearest = dh;
    lag_n = vec4(0.0);
    lag_shift = vec4(0.0);
    for (uint c = 0u; c < count; ++c) {
        vec3 n;
        float d = max(collider_distance(c, x, t, n), COLLIDER_GUARD);
        if (d < nearest) {
            nearest = d;
            lag_n = vec4(n, colliders[4u * c].y * kc * (-collider_barrier_d1(d, dh)));
            vec3 v = colliders[4u * c + 3u].xyz;
            if (uint(colliders[4u * c].x) == COLLIDER_SPHERE) {
                v += cross(colliders[4u * c + 2u].xyz, x - (colliders[4u * c + 1u].xyz + v * t));
            }
            lag_shift = vec4(v * h, 0.0);
        }
    }
}

float friction_f0(float y, float eps) {
    return y < eps ? -y * y * y / (3.0 * eps * eps) + y * y / eps + eps / 3.0 : y;
}

float friction_f1_over_y(float y, float eps) {
    return y < eps ? 2.0 / eps - y / (eps * eps) : 1.0 / y;
}

// Barrier + friction energy at x (step start xs); adds the gradient to g and the PSD Hessian
// block to hess. The barrier kc b(d) acts within d̂ of each collider's offset surface (d clamped
// to COLLIDER_GUARD from below: callers keep iterates outside).
float vertex_contact(vec3 x, vec3 xs, vec4 lag_n, vec4 lag_shift, float kc, float t, float eps,
                     float dh, uint count, inout vec3 g, inout mat3 hess) {
    float e = 0.0;
    for (uint c = 0u; c < count; ++c) {
        vec3 n;
        float d = max(collider_distance(c, x, t, n), COLLIDER_GUARD);
        if (d < dh) {
            e += kc * collider_barrier(d, dh);
            g += kc * collider_barrier_d1(d, dh) * n;
            hess += kc * collider_barrier_d2(d, dh) * outerProduct(n, n);
        }
    }
    if (lag_n.w > 0.0) {
        mat3 p = mat3(1.0) - outerProduct(lag_n.xyz, lag_n.xyz);
        vec3 u = p * (x - xs - lag_shift.xyz);
        float y = length(u);
        e += lag_n.w * friction_f0(y, eps);
        float w = lag_n.w * friction_f1_over_y(y, eps);
        g += w * u;
        hess += w * p;
    }
    return e;
}
