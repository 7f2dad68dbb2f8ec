#version 460
// Dot product pass 2 (one invocation, fixed order): scalars[slot] = sum of m partials.
// Host: engine/src/solver/pcg.rs.
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Parts { float parts[]; };
layout(std430, binding = 1) buffer Scalars { float scalars[]; };
layout(push_constant) uniform P { uint m; uint slot; } p;
void main() {
    if (gl_GlobalInvocationID.x != 0u) return;
    float t = 0.0;
    for (uint i = 0u; i < p.m; ++i) t += parts[i];
    scalars[p.slot] = t;
}
