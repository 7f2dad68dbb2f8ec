#version 460
// Indirect-dispatch arguments of the two query_ee.comp variants, one invocation, over the edge
// entries only (they follow the triangle entries: keys of type 1): the one-frame variant gets
// the workgroups when the domain (domain.comp) spans at most 2^k cells per axis
// (spatial_hash.glsl::buckets_are_cells), the several-cells variant otherwise; the other gets
// zero workgroups. args = {one-frame x, y, z, several-cells x, y, z, first edge entry, edge
// entries}. Host: engine/src/proximity/spatial_hash.rs. Reference:
// cpu_reference/proximity.rs::query_args.
#include "common.glsl"
#include "spatial_hash.glsl"
// Workgroup size of query_ee.comp.
layout(constant_id = 1) const uint QUERY_WG = 64;
layout(std430, binding = 0) readonly buffer Saturated { uint saturated[]; };
layout(std430, binding = 1) readonly buffer KeyEnds { uint key_ends[]; };
layout(std430, binding = 2) writeonly buffer Args { uint args[]; };
void main() {
    if (gl_GlobalInvocationID.x != 0u) return;
    uvec3 not_lo = uvec3(saturated[1], saturated[2], saturated[3]);
    uvec3 up = uvec3(saturated[4], saturated[5], saturated[6]);
    bool one = buckets_are_cells(not_lo, up);
    uint first = key_ends[(1u << (p.table_bits + p.order_bits)) - 1u];
    uint n = key_ends[(2u << (p.table_bits + p.order_bits)) - 1u] - first;
    // [x, y, 1] with x <= 65535 covering n invocations; no group without edge entries.
    uint g = (n + QUERY_WG - 1u) / QUERY_WG;
    uint gx = min(g, 65535u);
    uvec3 groups = uvec3(gx, g == 0u ? 1u : (g + gx - 1u) / gx, 1u);
    uvec3 none = uvec3(0u, 1u, 1u);
    uvec3 a = one ? groups : none, b = one ? none : groups;
    args[0] = a.x; args[1] = a.y; args[2] = a.z;
    args[3] = b.x; args[4] = b.y; args[5] = b.z;
    args[6] = first;
    args[7] = n;
}
