#version 460
// Semi-implicit (symplectic) Euler step, the RAINBOW baseline: v += h (g + f / m) with
// f = −∇E (the gathered elastic gradient), then x += h v. Vertices with inverse mass 0 are
// fixed (kinematic). A ground plane n·x ≥ offset is enforced by projection with the normal
// velocity zeroed (inelastic). `stage` splits the step for a contact handler between the two
// updates: 0 the whole step, 1 the velocity update only, 2 the position update (with the plane)
// from the velocities as they are. Host: engine/src/integrate.rs. Reference: cpu_reference/integrate.rs.
#include "common.glsl"
layout(std430, binding = 0) buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) buffer Vel { vec4 vel[]; };
layout(std430, binding = 2) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 3) readonly buffer Grad { vec4 grad[]; };
layout(push_constant) uniform P {
    vec4 gravity;      // xyz (m/s²)
    vec4 plane;        // xyz normal (unit), w offset (m); normal 0 = no plane
    uint n;
    float h;           // time step (s)
    uint stage;        // 0 whole step, 1 velocities only, 2 positions only
} p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    float w = inv_mass[i];
    if (w == 0.0) return;
    vec3 v = vel[i].xyz;
    if (p.stage != 2u) v = v + p.h * (p.gravity.xyz - w * grad[i].xyz);
    if (p.stage == 1u) {
        vel[i] = vec4(v, 0.0);
        return;
    }
    vec3 x = pos[i].xyz + p.h * v;
    float d = dot(p.plane.xyz, x) - p.plane.w;
    if (dot(p.plane.xyz, p.plane.xyz) > 0.0 && d < 0.0) {
        x -= d * p.plane.xyz;
        float vn = dot(v, p.plane.xyz);
        if (vn < 0.0) v -= vn * p.plane.xyz;
    }
    pos[i] = vec4(x, 0.0);
    vel[i] = vec4(v, 0.0);
}
