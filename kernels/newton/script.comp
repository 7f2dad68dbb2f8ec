#version 460
// Scripted (kinematic) vertices and their prescribed pose at time t:
// p(t) = R(ω t)(x₀ − c) + c + v t (Rodrigues rotation about the unit axis k through c), with t
// clamped to the motion's stop time (c.w; +inf: never stops).
// MODE 0 (jump): x = p(t) for scripted vertices.
// MODE 1 (direction): dir = p(t) − x for scripted vertices, 0 for free ones (the move that a
// contact term's step bound then limits).
// MODE 2 (advance): x += alpha · dir for scripted vertices (free ones untouched).
// Scripted vertices as unknowns of the solve (an augmented-Lagrangian pull, IPC's boundary
// conditions): the pull ½ w m/h² ‖x − y‖² is the inertia term of vectors.comp with the solve's
// mass w m and the target y = p(t) + s, where the shift s (m) carries the multiplier
// (λ = w m/h² s: the pull's force at x = p(t)).
// MODE 3 (pull start): s ← s + (s − s_last), s_last ← the old s, y = p(t) + s for scripted
// vertices: the multiplier the last step ended with, extrapolated by its change over that step
// (a scripted motion that winds up an elastic body needs a reaction that grows step by step;
// where it stays constant the change is zero).
// MODE 4 (pull update): s += p(t) − x, y = p(t) + s for scripted vertices (the multiplier step).
// MODE 5 (stiffen): mass *= factor, s /= factor and s_last /= factor (the same multipliers),
// y = p(t) + s for scripted vertices (the pull's weight w grows).
// Host: engine/src/stepper/newton/script.rs. Reference: cpu_reference/newton.rs
// (script::{direction, advance, pull_start, pull_update, stiffen}) and model.rs (Motion::position).
#include "common.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer X0 { vec4 x0[]; };
layout(std430, binding = 2) readonly buffer VertexMotion { uint vertex_motion[]; };
layout(std430, binding = 3) readonly buffer Motions { vec4 motions[]; }; // (k, ω), (c, until), (v, 0)
layout(std430, binding = 4) readonly buffer Time { float time[]; };
layout(std430, binding = 5) buffer Dir { vec4 dir[]; };
layout(std430, binding = 6) readonly buffer Alpha { float alpha[]; };
layout(std430, binding = 7) buffer Y { vec4 y[]; };         // inertia / pull target (m)
layout(std430, binding = 8) buffer Shift { vec4 shift[]; }; // pull shift s (m)
layout(std430, binding = 9) buffer SolveMass { float solve_mass[]; }; // w m (kg)
layout(std430, binding = 10) buffer ShiftLast { vec4 shift_last[]; }; // s at the last step's end (m)
layout(push_constant) uniform P { uint n; float factor; } p;

vec3 pose(uint i, uint m) {
    vec4 ka = motions[3u * m], c = motions[3u * m + 1u], v = motions[3u * m + 2u];
    float t = min(time[0], c.w);
    vec3 d = x0[i].xyz - c.xyz;
    float theta = ka.w * t;
    vec3 k = ka.xyz;
    vec3 r = dot(k, k) > 0.0 ? d * cos(theta) + cross(k, d) * sin(theta) + k * dot(k, d) * (1.0 - cos(theta)) : d;
    return r + c.xyz + v.xyz * t;
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    uint m = vertex_motion[i];
    if (MODE == 1u) {
        dir[i] = m == 0xffffffffu ? vec4(0.0) : vec4(pose(i, m) - x[i].xyz, 0.0);
        return;
    }
    if (m == 0xffffffffu) return;
    if (MODE == 0u) {
        x[i] = vec4(pose(i, m), 0.0);
    } else if (MODE == 2u) {
        x[i] = vec4(x[i].xyz + alpha[0] * dir[i].xyz, 0.0);
    } else if (MODE == 3u) {
        vec3 s = shift[i].xyz;
        vec3 e = s + (s - shift_last[i].xyz);
        shift_last[i] = vec4(s, 0.0);
        shift[i] = vec4(e, 0.0);
        y[i] = vec4(pose(i, m) + e, 0.0);
    } else if (MODE == 4u) {
        vec3 pi = pose(i, m);
        vec3 s = shift[i].xyz + (pi - x[i].xyz);
        shift[i] = vec4(s, 0.0);
        y[i] = vec4(pi + s, 0.0);
    } else if (MODE == 5u) {
        solve_mass[i] *= p.factor;
        vec3 s = shift[i].xyz / p.factor;
        shift[i] = vec4(s, 0.0);
        shift_last[i] = vec4(shift_last[i].xyz / p.factor, 0.0);
        y[i] = vec4(pose(i, m) + s, 0.0);
    }
}
