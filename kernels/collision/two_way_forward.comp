#version 460
// Two-way IPM forward step (Eq. 18–20): D_i = min(D^(l), dmin[i]) - ξ,
// α_i = min(γ D_i / |y_i - x_i|, 1) (γ here is the paper's 0.5 γ, or the OGC relaxation γ_p;
// ξ a minimum separation far above f32 rounding, so no pair gets closer than ξ and finite
// precision cannot make two primitives touch; α_i = 0 when D_i <= 0), x_i += α_i (y_i - x_i),
// r_i *= 1 - α_i; resets dmin[i] for the next step and raises the step's max displacement and
// max r_i (float bits, atomicMax). Vertices on no collision surface (tet interiors, rods) move
// freely (α_i = 1). One vertex per invocation.
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::forward.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) buffer State { TwState s; };
layout(std430, binding = 1) buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer Y { vec4 y[]; };
layout(std430, binding = 3) buffer Dmin { uint dmin[]; };
layout(std430, binding = 4) buffer R { float r[]; };
layout(std430, binding = 5) readonly buffer OnSurface { uint on_surface[]; };
layout(push_constant) uniform Push { TwParams p; };
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint i = tw_index();
    uint disp = 0u, rr = 0u;
    if (i < p.n) {
        float d = on_surface[i] != 0u ? min(s.bound, uintBitsToFloat(dmin[i])) : uintBitsToFloat(0x7f800000u);
        dmin[i] = 0x7f800000u;
        vec3 xi = x[i].xyz;
        vec3 dir = y[i].xyz - xi;
        float len = length(dir);
        d -= p.min_sep;
        float alpha = 1.0;
        if (!(d > 0.0)) alpha = 0.0;
        else if (len > p.gamma * d) alpha = p.gamma * d / len;
        x[i].xyz = xi + alpha * dir;
        float ri = r[i] * (1.0 - alpha);
        r[i] = ri;
        disp = floatBitsToUint(alpha * len);
        rr = floatBitsToUint(ri);
    }
    disp = subgroupMax(disp);
    rr = subgroupMax(rr);
    if (subgroupElect()) {
        atomicMax(s.max_disp, disp);
        atomicMax(s.max_r, rr);
    }
}
