#version 460
// Two-way IPM forward step (Eq. 18–20): D_i = min(D^(l), dmin[i]) - ξ_s,
// α_i = min(γ D_i / |y_i - x_i|, 1) (γ here is the paper's 0.5 γ, or the OGC relaxation γ_p;
// ξ_s = p.step_sep the floor of this distance-bounded step: the minimum separation ξ, far above
// f32 rounding, so no pair gets closer than ξ and finite precision cannot make two primitives
// touch, or 2ξ with floor release; α_i = 0 when D_i <= 0), x_i += α_i (y_i - x_i),
// r_i *= 1 - α_i. Floor release (p.release_dist = θ > 0, two_way_release.comp): a vertex with a
// pair closer than θ (dmin[i] < θ) whose component passed the release test (blocked[i] = 0,
// blocked[n] = 0) moves by its component's fraction alpha_c[i] instead.
// Resets dmin, dfree and blocked for the next step and raises the step's max displacement and
// max r_i (float bits, atomicMax) and widens the box of its displacement vectors (disp_lo,
// disp_hi; float_to_ordered, atomicMin/Max) for the translation-invariant reuse bound
// (two_way_update.comp). Vertices on no collision surface (tet interiors, rods) move
// freely (α_i = 1). Shared fractions (two_way_group_fraction.comp): every vertex of a group
// whose slot is non-zero moves by the group's fraction instead. Colliders
// (two_way_collider_bound.comp): every α_i is finally capped at its collider fraction
// calpha[i], so no vertex enters a collider's offset. One vertex per invocation.
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::forward and
// cpu_reference/two_way.rs::forward_released.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) buffer State { TwState s; };
layout(std430, binding = 1) buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer Y { vec4 y[]; };
layout(std430, binding = 3) buffer Dmin { uint dmin[]; };
layout(std430, binding = 4) buffer R { float r[]; };
layout(std430, binding = 5) readonly buffer OnSurface { uint on_surface[]; };
layout(std430, binding = 6) buffer Dfree { uint dfree[]; };
layout(std430, binding = 7) buffer Blocked { uint blocked[]; };   // n + 1; [n]: unsettled
layout(std430, binding = 8) readonly buffer AlphaC { uint alpha_c[]; }; // float bits
layout(std430, binding = 9) readonly buffer Group { uint group_of[]; };
layout(std430, binding = 10) readonly buffer GroupFraction { uint group_fraction[]; };
layout(std430, binding = 11) readonly buffer Calpha { float calpha[]; };
layout(push_constant) uniform Push { TwParams p; };
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint i = tw_index();
    uint disp = 0u, rr = 0u;
    uvec3 lo = uvec3(0xffffffffu), hi = uvec3(0u);
    if (i < p.n) {
        float dm = uintBitsToFloat(dmin[i]);
        float d = on_surface[i] != 0u ? min(s.bound, dm) : uintBitsToFloat(0x7f800000u);
        vec3 xi = x[i].xyz;
        vec3 dir = y[i].xyz - xi;
        float len = length(dir);
        float alpha = tw_alpha(d - p.step_sep, len, p.gamma);
        if (on_surface[i] != 0u && dm < p.release_dist && blocked[i] == 0u && blocked[p.n] == 0u)
            alpha = uintBitsToFloat(alpha_c[i]);
        uint g = group_of[i];
        if (g != TW_NO_GROUP && group_fraction[g] != 0u)
            alpha = uintBitsToFloat(group_fraction[g] - 1u);
        alpha = min(alpha, calpha[i]);
        dmin[i] = 0x7f800000u;
        dfree[i] = 0x7f800000u;
        blocked[i] = 0u;
        precise vec3 xn = xi + alpha * dir;
        x[i].xyz = xn;
        float ri = r[i] * (1.0 - alpha);
        r[i] = ri;
        disp = floatBitsToUint(alpha * len);
        rr = floatBitsToUint(ri);
        precise vec3 dx = xn - xi;
        lo = uvec3(float_to_ordered(dx.x), float_to_ordered(dx.y), float_to_ordered(dx.z));
        hi = lo;
    }
    disp = subgroupMax(disp);
    rr = subgroupMax(rr);
    lo = subgroupMin(lo);
    hi = subgroupMax(hi);
    if (subgroupElect()) {
        atomicMax(s.max_disp, disp);
        atomicMax(s.max_r, rr);
        for (uint k = 0u; k < 3u; k++) {
            atomicMin(s.disp_lo[k], lo[k]);
            atomicMax(s.disp_hi[k], hi[k]);
        }
    }
}
