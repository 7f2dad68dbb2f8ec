#version 460
// One color of linear vector bending constraints C = Σᵢ kᵢ xᵢ ∈ R³ (3 or 4 corners) with
// compliance α: the isometric bending of Bergou et al. 2006 on cloth hinges (kᵢ cotangent
// weights) and the discrete curvature x₀ − 2x₁ + x₂ of rods. ∇ᵢC = kᵢ I, so the XPBD system
// is diagonal: Δλ = (−C − α̃ λ) / (Σ wᵢ kᵢ² + α̃) (a vec3), xᵢ += wᵢ kᵢ Δλ. Bend k of the color
// is `offset + k`; bend_data holds (k₀..k₃) and (α, 0, 0, 0); a fourth vertex 0xffffffff is
// unused. Host: engine/src/xpbd/mod.rs. Reference: engine/src/cpu_reference/xpbd.rs (solve_bend).
#include "common.glsl"
layout(std430, binding = 0) buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 2) readonly buffer Bends { uvec4 bends[]; };
layout(std430, binding = 3) readonly buffer BendData { vec4 bend_data[]; };
layout(std430, binding = 4) buffer Lambda { vec4 lambda[]; };
layout(push_constant) uniform P {
    uint offset;
    uint count;
    float inv_h2;
    uint pad;
} p;
void main() {
    uint k = gl_GlobalInvocationID.x;
    if (k >= p.count) return;
    uint b = p.offset + k;
    uvec4 v = bends[b];
    vec4 kw = bend_data[2u * b];
    float alpha = bend_data[2u * b + 1u].x;
    bool four = v.w != 0xffffffffu;
    vec3 x0 = x[v.x].xyz, x1 = x[v.y].xyz, x2 = x[v.z].xyz, x3 = vec3(0.0);
    vec4 w = vec4(inv_mass[v.x], inv_mass[v.y], inv_mass[v.z], 0.0);
    if (four) {
        x3 = x[v.w].xyz;
        w.w = inv_mass[v.w];
    }
    vec3 c = kw.x * x0 + kw.y * x1 + kw.z * x2 + kw.w * x3;
    float wsum = w.x * kw.x * kw.x + w.y * kw.y * kw.y + w.z * kw.z * kw.z + w.w * kw.w * kw.w;
    float at = alpha * p.inv_h2;
    float denom = wsum + at;
    if (!(denom > 0.0)) return;
    vec3 lam = lambda[b].xyz;
    vec3 dl = (-c - at * lam) * (1.0 / denom);
    lambda[b] = vec4(lam + dl, 0.0);
    x[v.x] = vec4(x0 + (w.x * kw.x) * dl, 0.0);
    x[v.y] = vec4(x1 + (w.y * kw.y) * dl, 0.0);
    x[v.z] = vec4(x2 + (w.z * kw.z) * dl, 0.0);
    if (four) x[v.w] = vec4(x3 + (w.w * kw.w) * dl, 0.0);
}
