#version 460
// Analytic collider projection with position-based Coulomb friction (Bender et al. 2015,
// "Position-based simulation methods", §4.2; Macklin et al. 2014): for each collider whose
// offset a free vertex enters (distance d = gap − offset below COLLIDER_GUARD at the substep's
// end time t = (clock + 1) h) it is pushed out along the normal to COLLIDER_GUARD, and its
// tangential displacement over the substep relative to the collider, Δx_t, is removed entirely
// when ‖Δx_t‖ < μ times the push (static) and otherwise shortened by μ times the push (kinetic). Fixed and scripted vertices (inverse mass 0) are left alone.
// Host: engine/src/xpbd/mod.rs. Reference: engine/src/cpu_reference/xpbd.rs (colliders).
#include "common.glsl"
layout(std430, binding = 0) buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer XPrev { vec4 x_prev[]; };
layout(std430, binding = 2) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 3) readonly buffer Colliders { vec4 colliders[]; };
layout(std430, binding = 4) readonly buffer Clock { uint clock[]; };
// Per vertex, its body's clearance from colliders (m; colliders.glsl collider_vertex_offset).
layout(std430, binding = 5) readonly buffer ColliderOffsets { float collider_offsets[]; };
#include "colliders.glsl"
layout(push_constant) uniform P {
    uint n;
    uint num_colliders;
    float h;
    uint pad;
} p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    if (!(inv_mass[i] > 0.0)) return;
    collider_vertex_offset = collider_offsets[i];
    vec3 xi = x[i].xyz;
    vec3 xp = x_prev[i].xyz;
    float t = float(clock[0] + 1u) * p.h;
    bool moved = false;
    for (uint c = 0u; c < p.num_colliders; ++c) {
        vec3 n;
        float d = collider_distance(c, xi, t, n);
        if (d < COLLIDER_GUARD) {
            moved = true;
            float depth = COLLIDER_GUARD - d;
            xi += depth * n;
            float mu = colliders[4u * c].y;
            vec3 dx = (xi - xp) - colliders[4u * c + 3u].xyz * p.h;
            vec3 dt = dx - dot(dx, n) * n;
            float lt = length(dt);
            float limit = mu * depth;
            if (lt <= limit) {
                xi -= dt;
            } else {
                xi -= dt * (limit / lt);
            }
        }
    }
    if (moved) x[i] = vec4(xi, 0.0);
}
