#version 460
// PCG vector updates with the scalars kept on the device and the dot products of the new
// vectors fused in (per-workgroup partials, one row per invocation, fixed order: wg_sum.glsl).
// MODE 0 (init): r = b − q (q = A x), z = M⁻¹ r, p = z; partials of r·z, r·r and b·b.
// MODE 1 (step): p·q = Σ pq partials (reduced in every workgroup, same order, same bits);
//                α = rz / p·q; x += α p; r −= α q; z = M⁻¹ r; partials of r·z and r·r.
// M⁻¹ holds the inverted 3×3 diagonal blocks (block-Jacobi). The direction update and the
// convergence test are kernels/solver/pcg_control.comp.
// Host: engine/src/linear/pcg.rs. Reference: cpu_reference/pcg.rs (DevicePcg).
#include "common.glsl"
#include "block3.glsl"
#include "wg_sum.glsl"
layout(constant_id = 1) const uint MODE = 0;
// Reads go through uniform texel buffer views (texelFetch; vectorized on CPU devices), writes
// through storage buffers: x, r and p are bound twice (x_in, r_in, pv_in: the values before
// this dispatch, each read only by the invocation that then writes its row).
layout(binding = 0) uniform samplerBuffer minv;
layout(std430, binding = 1) readonly buffer Scalars { float scalars[]; };
layout(std430, binding = 2) buffer X { vec4 x[]; };
layout(std430, binding = 3) buffer R { vec4 r[]; };
layout(std430, binding = 4) buffer Z { vec4 z[]; };
layout(std430, binding = 5) buffer Pv { vec4 pv[]; };
layout(binding = 6) uniform samplerBuffer q;
layout(binding = 7) uniform samplerBuffer bv;
layout(binding = 8) uniform samplerBuffer part_pq;
layout(std430, binding = 9) writeonly buffer PartRz { float part_rz[]; };
layout(std430, binding = 10) writeonly buffer PartRr { float part_rr[]; };
layout(std430, binding = 11) writeonly buffer PartBb { float part_bb[]; };
layout(binding = 12) uniform samplerBuffer x_in;
layout(binding = 13) uniform samplerBuffer r_in;
layout(binding = 14) uniform samplerBuffer pv_in;

vec3 minv_mul(int i, vec3 v) {
    return block_mul(texelFetch(minv, 3 * i), texelFetch(minv, 3 * i + 1),
                     texelFetch(minv, 3 * i + 2), v);
}
// m: partials (workgroups of the row kernels); rz_slot: the current r·z in scalars.
layout(push_constant) uniform P { uint n; uint m; uint rz_slot; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    bool live = i < p.n;
    float rz = 0.0, rr = 0.0, bb = 0.0;
    if (MODE == 0u) {
        if (live) {
            vec3 b = texelFetch(bv, int(i)).xyz;
            vec3 ri = b - texelFetch(q, int(i)).xyz;
            vec3 zi = minv_mul(int(i), ri);
            r[i] = vec4(ri, 0.0);
            z[i] = vec4(zi, 0.0);
            pv[i] = vec4(zi, 0.0);
            rz = dot(ri, zi);
            rr = dot(ri, ri);
            bb = dot(b, b);
        }
    } else {
        float pq;
        SUM_PARTIALS(pq, part_pq, p.m);
        float alpha = pq > 0.0 ? scalars[p.rz_slot] / pq : 0.0;
        // A breakdown (p·q underflowing against r·z) must not turn x into infinities.
        if (isinf(alpha) || isnan(alpha)) alpha = 0.0;
        if (live) {
            int ii = int(i);
            x[i] = vec4(texelFetch(x_in, ii).xyz + alpha * texelFetch(pv_in, ii).xyz, 0.0);
            vec3 ri = texelFetch(r_in, ii).xyz - alpha * texelFetch(q, ii).xyz;
            vec3 zi = minv_mul(ii, ri);
            r[i] = vec4(ri, 0.0);
            z[i] = vec4(zi, 0.0);
            rz = dot(ri, zi);
            rr = dot(ri, ri);
        }
    }
    vec3 s = wg_sum3(vec3(rz, rr, bb));
    if (gl_LocalInvocationID.x == 0u) {
        part_rz[gl_WorkGroupID.x] = s.x;
        part_rr[gl_WorkGroupID.x] = s.y;
        if (MODE == 0u) part_bb[gl_WorkGroupID.x] = s.z;
    }
}
