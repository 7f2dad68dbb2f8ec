#version 460
// XPBD substep prediction (Macklin et al. 2016, Alg. 1 lines 1-3): x_prev = x; free vertices
// (inverse mass > 0) integrate v += h (g + f w), v *= damp, x += h v; scripted vertices move to
// their Motion at the substep's end time t = (clock + 1) h (Rodrigues rotation about the unit
// axis k through c, plus v t); fixed vertices stay. Host: engine/src/xpbd/mod.rs.
// Reference: engine/src/cpu_reference/xpbd.rs (predict).
#include "common.glsl"
layout(std430, binding = 0) buffer X { vec4 x[]; };
layout(std430, binding = 1) buffer V { vec4 v[]; };
layout(std430, binding = 2) writeonly buffer XPrev { vec4 x_prev[]; };
layout(std430, binding = 3) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 4) readonly buffer FExt { vec4 f_ext[]; };
layout(std430, binding = 5) readonly buffer X0 { vec4 x0[]; };
layout(std430, binding = 6) readonly buffer VertexMotion { uint vertex_motion[]; };
layout(std430, binding = 7) readonly buffer Motions { vec4 motions[]; }; // (k, ω), (c, until), (v, 0)
layout(std430, binding = 8) readonly buffer Clock { uint clock[]; };
layout(push_constant) uniform P {
    vec4 gravity; // xyz (m/s²)
    uint n;
    float h;      // substep (s)
    float damp;   // velocity factor max(0, 1 − damping h)
    uint pad;
} p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    vec3 xi = x[i].xyz;
    x_prev[i] = vec4(xi, 0.0);
    uint m = vertex_motion[i];
    float w = inv_mass[i];
    if (m != 0xffffffffu) {
        vec4 ka = motions[3u * m], c = motions[3u * m + 1u], mv = motions[3u * m + 2u];
        float t = min(float(clock[0] + 1u) * p.h, c.w);
        vec3 d = x0[i].xyz - c.xyz;
        float theta = ka.w * t;
        vec3 k = ka.xyz;
        vec3 r = d;
        if (dot(k, k) > 0.0) {
            float ct = cos(theta), st = sin(theta);
            r = d * ct + cross(k, d) * st + k * (dot(k, d) * (1.0 - ct));
        }
        x[i] = vec4(r + c.xyz + mv.xyz * t, 0.0);
    } else if (w > 0.0) {
        vec3 vel = v[i].xyz + p.h * (p.gravity.xyz + f_ext[i].xyz * w);
        vel *= p.damp;
        v[i] = vec4(vel, 0.0);
        x[i] = vec4(xi + p.h * vel, 0.0);
    }
}
