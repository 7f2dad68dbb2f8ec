#version 460
// Per-thin-element energy and corner gradients (cloth membranes and hinges, rod springs and
// bends; see include/thin.glsl), written after the tets' in the shared element pool:
// grad[4 (offset + e) + k], energy[offset + e]. Host: engine/src/fem/thin.rs.
// Reference: cpu_reference/thin.rs.
// Read-only operands come through uniform texel buffer views (texelFetch: a vector gather on
// CPU devices, the texture cache on GPUs); results are written to storage buffers.
#include "common.glsl"
#include "thin.glsl"
layout(binding = 0) uniform samplerBuffer pos_texels;
layout(binding = 1) uniform usamplerBuffer verts_texels;
layout(binding = 2) uniform usamplerBuffer kind_texels;
layout(binding = 3) uniform samplerBuffer data_texels;
layout(std430, binding = 4) writeonly buffer Grad { vec4 grad[]; };
layout(std430, binding = 5) writeonly buffer Energy { float energy[]; };
layout(push_constant) uniform P { uint count; uint offset; } p;
// The read-only operands by index (texel fetches).
vec4 pos(uint i) { return texelFetch(pos_texels, int(i)); }
uvec4 verts(uint i) { return texelFetch(verts_texels, int(i)); }
uint kind(uint i) { return texelFetch(kind_texels, int(i)).x; }
vec4 data(uint i) { return texelFetch(data_texels, int(i)); }

void main() {
    uint e = gl_GlobalInvocationID.x;
    if (e >= p.count) return;
    uvec4 v = verts(e);
    vec3 x[4];
    for (uint k = 0u; k < 4u; ++k) {
        // if, not ?: (lavapipe evaluates both sides of a select; v[k] may be THIN_NONE).
        x[k] = vec3(0.0);
        if (v[k] != THIN_NONE) x[k] = pos(v[k]).xyz;
    }
    vec4 d0 = data(2u * e), d1 = data(2u * e + 1u);
    vec3 g[4] = vec3[4](vec3(0.0), vec3(0.0), vec3(0.0), vec3(0.0));
    float en = 0.0;
    uint k_ = kind(e);
    if (k_ == THIN_MEMBRANE) {
        mat2x3 f = membrane_f(x[0], x[1], x[2], d0);
        float area = d1.x, mu = d1.y, lambda = d1.z;
        mat2 gs = 0.5 * (transpose(f) * f - mat2(1.0));
        float tr = gs[0][0] + gs[1][1];
        en = area * (mu * (dot(gs[0], gs[0]) + dot(gs[1], gs[1])) + 0.5 * lambda * tr * tr);
        mat2 s = membrane_s(f, mu, lambda);
        mat2x3 fs = f * s;
        // ∂E/∂x_a = A (F S) b_a.
        for (uint a = 0u; a < 3u; ++a) g[a] = area * (fs * membrane_b(d0, a));
    } else if (k_ == THIN_QUADRATIC) {
        vec3 s = vec3(0.0);
        for (uint k = 0u; k < 4u; ++k) s += d0[k] * x[k];
        en = 0.5 * dot(s, s);
        for (uint k = 0u; k < 4u; ++k) {
            if (v[k] != THIN_NONE) g[k] = d0[k] * s;
        }
    } else {
        vec3 d = x[1] - x[0];
        float l = length(d);
        float dl = l - d0.x;
        en = 0.5 * d0.y * dl * dl;
        vec3 f = l > 0.0 ? (d0.y * dl / l) * d : vec3(0.0);
        g[0] = -f;
        g[1] = f;
    }
    uint base = 4u * (p.offset + e);
    for (uint k = 0u; k < 4u; ++k) grad[base + k] = vec4(g[k], 0.0);
    energy[p.offset + e] = en;
}
