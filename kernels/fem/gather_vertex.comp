#version 460
// Per-vertex sum of the corner gradients of its incident tets, in a fixed (CSR) order, so the
// result is deterministic (no float atomics). Host: engine/src/fem/elements.rs.
// Read-only operands come through uniform texel buffer views (texelFetch: a vector gather on
// CPU devices, the texture cache on GPUs); results are written to storage buffers.
#include "common.glsl"
layout(binding = 0) uniform samplerBuffer grad_texels;
layout(binding = 1) uniform usamplerBuffer start_texels;
layout(binding = 2) uniform usamplerBuffer corners_texels; // 4 t + k
layout(std430, binding = 3) writeonly buffer Out { vec4 vertex_grad[]; };
layout(push_constant) uniform P { uint num_vertices; } p;
// The read-only operands by index (texel fetches).
vec4 grad(uint i) { return texelFetch(grad_texels, int(i)); }
uint start(uint i) { return texelFetch(start_texels, int(i)).x; }
uint corners(uint i) { return texelFetch(corners_texels, int(i)).x; }
void main() {
    uint v = gl_GlobalInvocationID.x;
    if (v >= p.num_vertices) return;
    vec3 acc = vec3(0.0);
    uint end = start(v + 1u);
    for (uint e = start(v); e < end; ++e) {
        acc += grad(corners(e)).xyz;
    }
    vertex_grad[v] = vec4(acc, 0.0);
}
