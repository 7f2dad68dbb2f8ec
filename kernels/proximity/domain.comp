#version 460
// Cell domain of the search: per vertex, the cells of its position moved by -pad and +pad
// (pad = max(pad_t, pad_e), so every inflated primitive box lies in the cells of its
// vertices' ranges), reduced per subgroup and merged with atomics into saturated[1..7]
// (spatial_hash.glsl::buckets_are_cells; cleared to 0 before). query_args.comp reads it.
// Host: engine/src/proximity/spatial_hash.rs. Reference: cpu_reference/proximity.rs::domain.
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) buffer Saturated { uint saturated[]; };
void main() {
    uint v = flat_index();
    // No early return: the whole subgroup takes part in the reduction.
    bool valid = v < p.nv;
    vec3 q = valid ? x[v].xyz : vec3(0.0);
    float pad = max(p.pad_t, p.pad_e);
    ivec3 c0 = cell_of(q - vec3(pad)), c1 = cell_of(q + vec3(pad));
    uvec3 not_lo = uvec3(0u), up = uvec3(0u);
    if (valid) {
        not_lo = ~uvec3(ordered_cell(c0.x), ordered_cell(c0.y), ordered_cell(c0.z));
        up = uvec3(ordered_cell(c1.x), ordered_cell(c1.y), ordered_cell(c1.z));
    }
    not_lo = subgroupMax(not_lo);
    up = subgroupMax(up);
    if (subgroupElect()) { // atomicMax with 0 (no valid lane) changes nothing
        for (uint a = 0u; a < 3u; ++a) {
            atomicMax(saturated[1u + a], not_lo[a]);
            atomicMax(saturated[4u + a], up[a]);
        }
    }
}
