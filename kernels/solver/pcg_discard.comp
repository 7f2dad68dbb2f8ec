#version 460
// x = 0 where the warm start's relative residual (scalars[slot]) is not finite: the grouped
// system broke down (its masked blocks need not be positive definite), so the global PCG
// starts from 0 instead of from NaNs. Decided on the device (no host round trip).
// Host: engine/src/linear/pcg.rs. Reference: cpu_reference/pcg.rs (DevicePcg).
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Scalars { float scalars[]; };
layout(std430, binding = 1) buffer X { vec4 x[]; };
layout(push_constant) uniform P { uint n; uint slot; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    float rel = scalars[p.slot];
    if (isnan(rel) || isinf(rel)) x[i] = vec4(0.0);
}
