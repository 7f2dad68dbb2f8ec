#version 460
// Gated sections of a command graph (engine/src/vk/gate.rs): writes the indirect dispatch
// arguments of the `count` dispatches of one section (slots first .. first + count, `args`
// bound from slot first): their
// recorded workgroup counts while the condition word `flags[word] & mask` is non-zero, zero
// workgroups otherwise (the section's dispatches then launch nothing).
// Reference: cpu_reference::gate::gate_args.
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Flags { uint flags[]; };
layout(std430, binding = 1) readonly buffer Counts { uvec4 counts[]; };
layout(std430, binding = 2) writeonly buffer Args { uvec4 args[]; };
layout(push_constant) uniform P {
    uint word;
    uint mask;
    uint first;
    uint count;
} p;
void main() {
    bool open = (flags[p.word] & p.mask) != 0u;
    // args is bound from the section's first slot; counts whole.
    for (uint k = gl_LocalInvocationID.x; k < p.count; k += WG) {
        args[k] = open ? counts[p.first + k] : uvec4(0u, 1u, 1u, 0u);
    }
}
