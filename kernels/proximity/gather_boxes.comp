#version 460
// Pass 4 of the spatial hash: after sorting, entry i stores its primitive's inflated box next
// to it, boxes[2i] = (lo, primitive index bits), boxes[2i+1] = (hi, 0), so the queries scan
// buckets with contiguous loads instead of index → vertex → position indirections. Edge entries
// also get a packed record recs[i] = (lo, hi, v0, v1) for query_ee.comp: the box's corners
// quantized relative to the entry's own cell (spatial_hash.glsl::pack_local; the cell is the
// one of the box's range whose coordinates match the bucket modulo 2^k) and the edge vertices.
// It also writes the bucket runs into the cleared ranges (start and end of each (type, bucket)
// run of the sorted keys). Host: engine/src/proximity/spatial_hash.rs.
// Reference: cpu_reference/proximity.rs::gather_boxes, edge_records and bucket_ranges.
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 3) readonly buffer Keys { uint keys[]; };
layout(std430, binding = 4) readonly buffer Vals { uint vals[]; };
layout(std430, binding = 5) writeonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 6) writeonly buffer Recs { uvec4 recs[]; };
layout(std430, binding = 7) buffer Ranges { uvec2 ranges[]; };
void main() {
    uint i = flat_index();
    if (i >= p.entry_cap) return;
    uint k = keys[i];
    if (k >= (2u << (p.table_bits + QB))) return;
    // Bucket runs (fused former bucket_ranges pass): entry i marks where its (type, bucket) =
    // key >> QB starts (ranges[.].x = i) and ends (ranges[.].y = i + 1); ranges is cleared to
    // 0 (empty) before.
    uint kb_i = k >> QB;
    bool first = i == 0u || (keys[i - 1u] >> QB) != kb_i;
    bool last = i + 1u >= p.entry_cap || (keys[i + 1u] >> QB) != kb_i;
    if (first) ranges[kb_i].x = i;
    if (last) ranges[kb_i].y = i + 1u;
    uint id = vals[i];
    vec3 lo, hi;
    if ((k >> (p.table_bits + QB)) == 0u) {
        uvec4 f = tris[id];
        vec3 a = x[f.x].xyz, b = x[f.y].xyz, c = x[f.z].xyz;
        lo = min(min(a, b), c) - vec3(p.pad_t);
        hi = max(max(a, b), c) + vec3(p.pad_t);
    } else {
        uvec2 e = edges[id];
        vec3 a = x[e.x].xyz, b = x[e.y].xyz;
        lo = min(a, b) - vec3(p.pad_e);
        hi = max(a, b) + vec3(p.pad_e);
        uint kb = axis_bits();
        uint km = (1u << kb) - 1u;
        uint bucket = (k >> QB) & ((1u << p.table_bits) - 1u);
        uvec3 bc = uvec3(bucket, bucket >> kb, bucket >> (2u * kb)) & uvec3(km);
        ivec3 c0 = cell_of(lo);
        ivec3 c = c0 + ivec3((bc - uvec3(c0)) & uvec3(km));
        recs[i] = uvec4(pack_local(lo, c), pack_local(hi, c), e.x, e.y);
    }
    boxes[2u * i] = vec4(lo, uintBitsToFloat(id));
    boxes[2u * i + 1u] = vec4(hi, uintBitsToFloat(k & ((1u << QB) - 1u)));
}
