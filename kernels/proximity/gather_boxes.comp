#version 460
// Pass 4 of the spatial hash: after sorting, entry i stores its primitive's inflated box next
// to it, boxes[2i] = (lo, primitive index bits), boxes[2i+1] = (hi, 0), so the queries scan
// buckets with contiguous loads instead of index → vertex → position indirections.
// Host: engine/src/proximity/spatial_hash.rs. Reference: cpu_reference/proximity.rs::gather_boxes.
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 3) readonly buffer Keys { uint keys[]; };
layout(std430, binding = 4) readonly buffer Vals { uint vals[]; };
layout(std430, binding = 5) writeonly buffer Boxes { vec4 boxes[]; };
void main() {
    uint i = flat_index();
    if (i >= p.entry_cap) return;
    uint k = keys[i];
    if (k >= (2u << (p.table_bits + QB))) return;
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
    }
    boxes[2u * i] = vec4(lo, uintBitsToFloat(id));
    boxes[2u * i + 1u] = vec4(hi, uintBitsToFloat(k & ((1u << QB) - 1u)));
}
