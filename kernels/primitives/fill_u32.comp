#version 460
// Writes `value` into the first n 4-byte words of the bound range: a fill as a dispatch, for
// the fills of gated graph sections (engine/src/vk/gate.rs), whose workgroup counts are
// indirect. Reference: cpu_reference::gate::fill_u32.
#include "common.glsl"
layout(std430, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform P { uint n; uint value; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) dst[i] = p.value;
}
