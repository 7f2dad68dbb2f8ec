#version 460
// Writes VkDispatchIndirectCommand {ceil(count / per_group), 1, 1} from a device-side count, so
// consumers of a compacted list launch exactly enough workgroups. Host: primitives/compact.rs.
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Count { uint counts[]; };
layout(std430, binding = 1) writeonly buffer Args { uint args[]; };
layout(push_constant) uniform P { uint count_index; uint per_group; } p;
void main() {
    if (gl_GlobalInvocationID.x == 0u) {
        uint c = counts[p.count_index];
        args[0] = (c + p.per_group - 1u) / p.per_group;
        args[1] = 1u;
        args[2] = 1u;
    }
}
