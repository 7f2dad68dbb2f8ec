// Analytic colliders (plane, sphere, box) moving at constant velocity, penalty contact and
// lagged, IPC-smoothed Coulomb friction per vertex. Reference: engine/src/cpu_reference/contact.rs.
// Collider c in `colliders[4c ..]`: (kind, μ, offset | radius, 0), (normal | centre | min, 0),
// (max | sphere spin ω, 0), (velocity, 0); kind 0 plane n·x ≥ offset, 1 sphere, 2 box (solid,
// axis-aligned). A spinning sphere's surface moves at v + ω × (x − centre) (friction only).
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

// Friction lag at the linearisation point x: the deepest penetrated collider's (n, μλ) and its
// displacement over the step (h); μλ = 0 when there is none.
void friction_lag(vec3 x, float t, float h, float kc, uint count, out vec4 lag_n, out vec4 lag_shift) {
    float deepest = 0.0;
    lag_n = vec4(0.0);
    lag_shift = vec4(0.0);
    for (uint c = 0u; c < count; ++c) {
        vec3 n;
        float d = collider_gap(c, x, t, n);
        if (d < deepest) {
            deepest = d;
            lag_n = vec4(n, colliders[4u * c].y * kc * (-d));
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

// Contact + friction energy at x (step start xs); adds the gradient to g and the PSD Hessian
// block to hess.
float vertex_contact(vec3 x, vec3 xs, vec4 lag_n, vec4 lag_shift, float kc, float t, float eps,
                     uint count, inout vec3 g, inout mat3 hess) {
    float e = 0.0;
    for (uint c = 0u; c < count; ++c) {
        vec3 n;
        float d = collider_gap(c, x, t, n);
        if (d < 0.0) {
            e += 0.5 * kc * d * d;
            g += kc * d * n;
            hess += kc * outerProduct(n, n);
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
