#version 460
// Two-way IPM with analytic colliders (issue 26: colliders are never entered), between the
// backward and the forward step: colliders are constraints of the backward step and bounds of
// the forward step, like contact pairs.
// - Target: a free vertex's target y_i closer than TW_COLLIDER_TARGET above a collider's offset
//   surface (at the step's end time) is moved out along the collider's normal to that height
//   (one pass in collider order), so the solve never aims into a collider, whose bound would
//   stop it short of its target for good.
// - Bound: cbound[i] = the smallest distance of x_i above a collider's offset surface (m; +∞
//   without a collider it is outside of). The forward step (two_way_forward.comp), the shared
//   fractions (two_way_group_fraction.comp) and floor release (two_way_release.comp) cap α_i at
//   tw_alpha(cbound[i], |y_i − x_i|, γ): the offset distance is 1-Lipschitz outside a convex
//   shape (plane, sphere, box), so the vertex ends at least (1 − γ) cbound[i] > 0 above it.
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
layout(std430, binding = 6) writeonly buffer Cbound { float cbound[]; };
// Per vertex, its body's clearance from colliders (m; colliders.glsl collider_vertex_offset).
layout(std430, binding = 7) readonly buffer ColliderOffsets { float collider_offsets[]; };
layout(push_constant) uniform Push { TwParams p; };
#include "colliders.glsl"
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint i = tw_index();
    if (i >= p.n) return;
    float bound = uintBitsToFloat(0x7f800000u);
    if (inv_w[i] > 0.0) {
        collider_vertex_offset = collider_offsets[i];
        float t = time[0];
        vec3 yi = y[i].xyz;
        bool moved = false;
        for (uint c = 0u; c < p.count; ++c) {
            vec3 n;
            float d = collider_distance(c, yi, t, n);
            if (d < TW_COLLIDER_TARGET) {
                precise vec3 pushed = yi + (TW_COLLIDER_TARGET - d) * n;
                yi = pushed;
                moved = true;
            }
        }
        if (moved) y[i].xyz = yi;
        vec3 xi = x[i].xyz;
        for (uint c = 0u; c < p.count; ++c) {
            vec3 n;
            float d = collider_distance(c, xi, t, n);
            if (d > 0.0) bound = min(bound, d);
        }
    }
    cbound[i] = bound;
}
