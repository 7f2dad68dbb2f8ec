#version 460
// Scripted (kinematic) vertices and their prescribed pose at time t:
// p(t) = R(ω t)(x₀ − c) + c + v t (Rodrigues rotation about the unit axis k through c), with t
// clamped to the motion's stop time (c.w; +inf: never stops).
// MODE 0 (jump): x = p(t) for scripted vertices.
// MODE 1 (direction): dir = p(t) − x for scripted vertices, 0 for free ones (the move that a
// contact term's step bound then limits).
// MODE 2 (advance): x += alpha · dir for scripted vertices (free ones untouched).
// Host: engine/src/stepper/newton/script.rs. Reference: cpu_reference/newton.rs
// (script_direction, script_advance) and model.rs (Motion::position).
#include "common.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer X0 { vec4 x0[]; };
layout(std430, binding = 2) readonly buffer VertexMotion { uint vertex_motion[]; };
layout(std430, binding = 3) readonly buffer Motions { vec4 motions[]; }; // (k, ω), (c, until), (v, 0)
layout(std430, binding = 4) readonly buffer Time { float time[]; };
layout(std430, binding = 5) buffer Dir { vec4 dir[]; };
layout(std430, binding = 6) readonly buffer Alpha { float alpha[]; };
layout(push_constant) uniform P { uint n; } p;

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
    } else {
        x[i] = vec4(x[i].xyz + alpha[0] * dir[i].xyz, 0.0);
    }
}
