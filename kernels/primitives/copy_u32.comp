#version 460
// Copies the first n 4-byte words of one bound range to another: a copy as a dispatch, for the
// copies of gated graph sections (engine/src/vk/gate.rs). Reference: cpu_reference::gate::copy_u32.
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) dst[i] = src[i];
}
