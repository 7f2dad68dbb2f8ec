#version 460
// Last pass of a search: copies the true counts into status = {entries, vertex–triangle pairs,
// edge–edge pairs, vertex–triangle candidates, edge–edge candidates, saturated flag, one-frame
// flag (spatial_hash.glsl::buckets_are_cells: query_ee took its exact quantized path)} and writes the
// indirect-dispatch arguments of the consumers, args = {ceil(min(count, cap) / per_group), 1, 1}
// for vertex–triangle then edge–edge pairs. Host: engine/src/proximity/spatial_hash.rs.
// Reference: cpu_reference/proximity.rs::indirect_args.
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer KeyEnds { uint key_ends[]; };
layout(std430, binding = 1) readonly buffer CountVt { uint count_vt[]; };
layout(std430, binding = 2) readonly buffer CountEe { uint count_ee[]; };
layout(std430, binding = 3) readonly buffer CandVt { uint cand_vt[]; };
layout(std430, binding = 4) readonly buffer CandEe { uint cand_ee[]; };
layout(std430, binding = 5) readonly buffer Saturated { uint saturated[]; };
layout(std430, binding = 6) writeonly buffer Status { uint status[]; };
layout(std430, binding = 7) writeonly buffer Args { uint args[]; };
layout(constant_id = 1) const uint PER_GROUP = 64;
void main() {
    if (gl_GlobalInvocationID.x != 0u) return;
    uint vt = count_vt[0], ee = count_ee[0];
    status[0] = key_ends[(2u << (p.table_bits + p.order_bits)) - 1u]; // all entries
    status[1] = vt;
    status[2] = ee;
    status[3] = cand_vt[0];
    status[4] = cand_ee[0];
    status[5] = saturated[0];
    uvec3 not_lo = uvec3(saturated[1], saturated[2], saturated[3]);
    uvec3 up = uvec3(saturated[4], saturated[5], saturated[6]);
    status[6] = buckets_are_cells(not_lo, up) ? 1u : 0u;
    args[0] = (min(vt, p.vt_cap) + PER_GROUP - 1u) / PER_GROUP;
    args[1] = 1u;
    args[2] = 1u;
    args[3] = (min(ee, p.ee_cap) + PER_GROUP - 1u) / PER_GROUP;
    args[4] = 1u;
    args[5] = 1u;
}
