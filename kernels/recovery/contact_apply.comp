#version 460
// Applies the averaged fixed-point corrections, times the over-relaxation factor, of contact_project.comp to every vertex with a
// count and clears the accumulator. Host: engine/src/recovery/response.rs.
// Reference: engine/src/cpu_reference/recovery_response.rs (apply).
#include "common.glsl"
layout(std430, binding = 0) buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) buffer Accum { ivec4 accum[]; };
layout(push_constant) uniform P { uint n; float inv_scale; float relax; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    ivec4 a = accum[i];
    if (a.w > 0) {
        precise vec3 d = vec3(a.xyz) * p.inv_scale / float(a.w) * p.relax;
        pos[i] = vec4(pos[i].xyz + d, pos[i].w);
        accum[i] = ivec4(0);
    }
}
