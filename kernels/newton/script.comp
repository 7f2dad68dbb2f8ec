#version 460
// Moves kinematic (scripted) vertices to their prescribed positions at time t:
// x = R(ω t)(x₀ − c) + c + v t (Rodrigues rotation about the unit axis k through c), with t
// clamped to the motion's stop time (c.w; +inf: never stops).
// Host: engine/src/newton.rs. Reference: model.rs (Motion::position).
#include "common.glsl"
layout(std430, binding = 0) buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer X0 { vec4 x0[]; };
layout(std430, binding = 2) readonly buffer VertexMotion { uint vertex_motion[]; };
layout(std430, binding = 3) readonly buffer Motions { vec4 motions[]; }; // (k, ω), (c, until), (v, 0)
layout(std430, binding = 4) readonly buffer Time { float time[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    uint m = vertex_motion[i];
    if (m == 0xffffffffu) return;
    vec4 ka = motions[3u * m], c = motions[3u * m + 1u], v = motions[3u * m + 2u];
    float t = min(time[0], c.w);
    vec3 d = x0[i].xyz - c.xyz;
    float theta = ka.w * t;
    vec3 k = ka.xyz;
    vec3 r = dot(k, k) > 0.0 ? d * cos(theta) + cross(k, d) * sin(theta) + k * dot(k, d) * (1.0 - cos(theta)) : d;
    x[i] = vec4(r + c.xyz + v.xyz * t, 0.0);
}
