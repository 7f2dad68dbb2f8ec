#version 460
// Indirect-dispatch arguments of the exact distance filter: for the vertex–triangle then the
// edge–edge candidate counts n (clamped to capacity), groups g = ceil(n / WG) as a 2D grid
// {min(g, 65535), ceil(g / 65535), 1} (kernels use flat_index). Host:
// engine/src/proximity/spatial_hash.rs. Reference: cpu_reference/proximity.rs::grid_args.
#include "common.glsl"
#include "spatial_hash.glsl"
layout(constant_id = 1) const uint PER_GROUP = 64;
layout(std430, binding = 0) readonly buffer CountVt { uint count_vt[]; };
layout(std430, binding = 1) readonly buffer CountEe { uint count_ee[]; };
layout(std430, binding = 2) writeonly buffer Args { uint args[]; };
void main() {
    if (gl_GlobalInvocationID.x != 0u) return;
    uint n[2] = uint[2](min(count_vt[0], p.cvt_cap), min(count_ee[0], p.cee_cap));
    for (uint k = 0u; k < 2u; ++k) {
        uint g = max((n[k] + PER_GROUP - 1u) / PER_GROUP, 1u);
        uint gx = min(g, 65535u);
        args[3u * k] = gx;
        args[3u * k + 1u] = (g + gx - 1u) / gx;
        args[3u * k + 2u] = 1u;
    }
}
