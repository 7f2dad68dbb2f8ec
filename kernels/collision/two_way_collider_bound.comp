#version 460
// Two-way IPM with analytic colliders (issue 26: colliders are never entered), between the
// backward and the forward step: colliders are constraints of the backward step and bounds of
// the forward step, like contact pairs.
// - Target: a free vertex's target y_i closer than TW_COLLIDER_TARGET above a collider's offset
//   surface (at the step's end time: only the backward step's contact constraints put it there)
//   is moved out along the collider's normal to the vertex's own height above that surface, at
//   least TW_COLLIDER_TARGET (one pass in collider order): the solve never aims into a collider
//   (whose bound would stop it short of its target for good), and a vertex squeezed between a
//   body and a collider keeps its distance instead of being pressed to micrometres, where
//   Newton's barrier curvature would exceed what the f32 block-Jacobi preconditioner resolves.
// - Bound: calpha[i] = the largest fraction α of the straight move x_i → y_i (its target after
//   the move-out) over which the vertex stays at least m = ½ min(d_i, TW_COLLIDER_TARGET) above
//   every collider's offset surface that it is outside of (d_i its distance above it now): a
//   plane by its linear distance, a sphere by the first crossing of the sphere inflated by m
//   (exact, so a vertex sliding over a curved collider keeps chords it can take, not γ d_i per
//   step), a box by the 1-Lipschitz bound γ d_i / |y_i − x_i|. 1 without a collider in reach.
//   The forward step (two_way_forward.comp), the shared fractions (two_way_group_fraction.comp)
//   and floor release (two_way_release.comp) cap α_i at calpha[i].
// Fixed and scripted vertices (inv_w = 0) and vertices already within an offset (set there by
// the host) are neither moved nor bounded. One vertex per invocation; p.count = colliders.
// Host: engine/src/contact/two_way/solve.rs. Reference: cpu_reference/two_way.rs::collider_targets
// and cpu_reference/two_way.rs::collider_bounds.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer InvW { float inv_w[]; };
layout(std430, binding = 4) readonly buffer Colliders { vec4 colliders[]; };
layout(std430, binding = 5) readonly buffer Time { float time[]; };
layout(std430, binding = 6) writeonly buffer Calpha { float calpha[]; };
// Per vertex, its body's clearance from colliders (m; colliders.glsl collider_vertex_offset).
layout(std430, binding = 7) readonly buffer ColliderOffsets { float collider_offsets[]; };
layout(push_constant) uniform Push { TwParams p; };
#include "colliders.glsl"

// The largest α in [0, 1] keeping x + s (y − x), s ≤ α, at least m = ½ min(d, TW_COLLIDER_TARGET)
// above collider c's offset surface (d > 0 its distance now; 1 when x is within the offset).
float tw_collider_alpha(uint c, vec3 x, vec3 y, float t) {
    vec3 n;
    float d = collider_distance(c, x, t, n);
    if (!(d > 0.0)) return 1.0;
    float m = 0.5 * min(d, TW_COLLIDER_TARGET);
    vec3 dv = y - x;
    uint kind = uint(colliders[4u * c].x);
    if (kind == COLLIDER_PLANE) {
        float dd = dot(n, dv);
        return dd < 0.0 ? clamp((d - m) / -dd, 0.0, 1.0) : 1.0;
    }
    if (kind == COLLIDER_SPHERE) {
        vec3 e = x - (colliders[4u * c + 1u].xyz + colliders[4u * c + 3u].xyz * t);
        float a = dot(dv, dv), b = dot(e, dv);
        if (!(a > 0.0) || b >= 0.0) return 1.0;
        // |e + s dv| = r, r = |e| − (d − m): the sphere inflated to m above the offset surface.
        float le = length(e);
        float cc = (d - m) * (2.0 * le - (d - m));
        float disc = b * b - a * cc;
        if (disc < 0.0) return 1.0;
        return clamp(cc / (-b + sqrt(disc)), 0.0, 1.0);
    }
    float len = length(dv);
    return tw_alpha(d, len, p.gamma);
}

void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint i = tw_index();
    if (i >= p.n) return;
    float alpha = 1.0;
    if (inv_w[i] > 0.0) {
        collider_vertex_offset = collider_offsets[i];
        float t = time[0];
        vec3 yi = y[i].xyz;
        vec3 xi = x[i].xyz;
        bool moved = false;
        for (uint c = 0u; c < p.count; ++c) {
            vec3 n;
            float d = collider_distance(c, yi, t, n);
            if (d < TW_COLLIDER_TARGET) {
                vec3 nx;
                float height = max(TW_COLLIDER_TARGET, collider_distance(c, xi, t, nx));
                precise vec3 pushed = yi + (height - d) * n;
                yi = pushed;
                moved = true;
            }
        }
        if (moved) y[i].xyz = yi;
        for (uint c = 0u; c < p.count; ++c) alpha = min(alpha, tw_collider_alpha(c, xi, yi, t));
    }
    calpha[i] = alpha;
}
