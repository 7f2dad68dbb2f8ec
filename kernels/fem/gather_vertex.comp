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
void main() {
    uint v = gl_GlobalInvocationID.x;
    if (v >= p.num_vertices) return;
    vec3 acc = vec3(0.0);
    uint end = texelFetch(start_texels, int(v + 1u)).x;
    for (uint e = texelFetch(start_texels, int(v)).x; e < end; ++e) {
        acc += texelFetch(grad_texels, int(texelFetch(corners_texels, int(e)).x)).xyz;
    }
    vertex_grad[v] = vec4(acc, 0.0);
}
