#version 460
// PCG vector updates with scalars kept on the device (no host round trip per iteration).
// MODE 0 (init):      r = b - q (q = A x), z = M^-1 r, p = z
// MODE 1 (step):      alpha = rz / pq; x += alpha p; r -= alpha q; z = M^-1 r
// MODE 2 (direction): beta = rz_new / rz_old; p = z + beta p
// M^-1 holds the inverted 3x3 diagonal blocks (block-Jacobi).
// Host: engine/src/solver/pcg.rs. Reference: cpu_reference/pcg.rs.
#include "common.glsl"
#include "block3.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) readonly buffer Minv { vec4 minv[]; };
layout(std430, binding = 1) readonly buffer Scalars { float scalars[]; };
layout(std430, binding = 2) buffer X { vec4 x[]; };
layout(std430, binding = 3) buffer R { vec4 r[]; };
layout(std430, binding = 4) buffer Z { vec4 z[]; };
layout(std430, binding = 5) buffer Pv { vec4 pv[]; };
layout(std430, binding = 6) readonly buffer Q { vec4 q[]; };
layout(std430, binding = 7) readonly buffer Bv { vec4 bv[]; };
layout(push_constant) uniform P { uint n; uint num_slot; uint den_slot; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    if (MODE == 0u) {
        vec3 ri = bv[i].xyz - q[i].xyz;
        vec3 zi = block_mul(minv[3u * i], minv[3u * i + 1u], minv[3u * i + 2u], ri);
        r[i] = vec4(ri, 0.0);
        z[i] = vec4(zi, 0.0);
        pv[i] = vec4(zi, 0.0);
    } else if (MODE == 1u) {
        float den = scalars[p.den_slot];
        float alpha = den > 0.0 ? scalars[p.num_slot] / den : 0.0;
        // A breakdown (den underflowing against num) must not turn x into infinities.
        if (isinf(alpha) || isnan(alpha)) alpha = 0.0;
        x[i] = vec4(x[i].xyz + alpha * pv[i].xyz, 0.0);
        vec3 ri = r[i].xyz - alpha * q[i].xyz;
        r[i] = vec4(ri, 0.0);
        z[i] = vec4(block_mul(minv[3u * i], minv[3u * i + 1u], minv[3u * i + 2u], ri), 0.0);
    } else {
        float den = scalars[p.den_slot];
        float beta = den > 0.0 ? scalars[p.num_slot] / den : 0.0;
        if (isinf(beta) || isnan(beta)) beta = 0.0;
        pv[i] = vec4(z[i].xyz + beta * pv[i].xyz, 0.0);
    }
}
