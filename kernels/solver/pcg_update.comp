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
layout(std430, binding = 0) readonly buffer Minv { vec4 minv[]; };
layout(std430, binding = 1) readonly buffer Scalars { float scalars[]; };
layout(std430, binding = 2) buffer X { vec4 x[]; };
layout(std430, binding = 3) buffer R { vec4 r[]; };
layout(std430, binding = 4) buffer Z { vec4 z[]; };
layout(std430, binding = 5) buffer Pv { vec4 pv[]; };
layout(std430, binding = 6) readonly buffer Q { vec4 q[]; };
layout(std430, binding = 7) readonly buffer Bv { vec4 bv[]; };
layout(std430, binding = 8) readonly buffer PartPq { float part_pq[]; };
layout(std430, binding = 9) writeonly buffer PartRz { float part_rz[]; };
layout(std430, binding = 10) writeonly buffer PartRr { float part_rr[]; };
layout(std430, binding = 11) writeonly buffer PartBb { float part_bb[]; };
// m: partials (workgroups of the row kernels); rz_slot: the current r·z in scalars.
layout(push_constant) uniform P { uint n; uint m; uint rz_slot; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    bool live = i < p.n;
    float rz = 0.0, rr = 0.0, bb = 0.0;
    if (MODE == 0u) {
        if (live) {
            vec3 b = bv[i].xyz;
            vec3 ri = b - q[i].xyz;
            vec3 zi = block_mul(minv[3u * i], minv[3u * i + 1u], minv[3u * i + 2u], ri);
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
            x[i] = vec4(x[i].xyz + alpha * pv[i].xyz, 0.0);
            vec3 ri = r[i].xyz - alpha * q[i].xyz;
            vec3 zi = block_mul(minv[3u * i], minv[3u * i + 1u], minv[3u * i + 2u], ri);
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
