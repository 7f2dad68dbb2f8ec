#version 460
// One conservative CCD query per invocation. Query i reads vertices x0/x1[4 * (first + i) + k].xyz
// (start and end of the linear trajectory; point–triangle [p, t0, t1, t2] or edge–edge
// [ea0, ea1, eb0, eb1] by mode 0/1) and writes its time of impact (1 when no hit) and flags
// (bit 0 hit, bit 1 advancement cap reached). min_separation (m) > 0 gives the
// minimum-separation variant. Host: engine/src/geometry/ccd.rs.
// Reference: engine/src/cpu_reference/ccd.rs.
#include "common.glsl"
#include "ccd.glsl"
layout(std430, binding = 0) readonly buffer X0 { vec4 x0[]; };
layout(std430, binding = 1) readonly buffer X1 { vec4 x1[]; };
layout(std430, binding = 2) writeonly buffer Toi { float toi[]; };
layout(std430, binding = 3) writeonly buffer Flags { uint flags[]; };
layout(push_constant) uniform P { uint first; uint count; uint mode; float min_separation; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.count) return;
    uint q = p.first + i;
    vec3 a[4], b[4];
    for (uint k = 0u; k < 4u; ++k) {
        a[k] = x0[4u * q + k].xyz;
        b[k] = x1[4u * q + k].xyz;
    }
    float t;
    uint f;
    ccd_query(p.mode, a, b, p.min_separation, t, f);
    toi[q] = t;
    flags[q] = f;
}
