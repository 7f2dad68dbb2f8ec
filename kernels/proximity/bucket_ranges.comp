#version 460
// Pass 3 of the spatial hash: after the entries are sorted by key, entry i marks where its
// (type, bucket) = key >> QB starts (ranges[.].x = i) and ends (ranges[.].y = i + 1). ranges is
// cleared to 0 (empty) before; unused entries hold the sentinel key and are skipped.
// Host: engine/src/proximity/spatial_hash.rs. Reference: cpu_reference/proximity.rs::bucket_ranges.
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer Keys { uint keys[]; };
layout(std430, binding = 1) buffer Ranges { uvec2 ranges[]; };
void main() {
    uint i = flat_index();
    if (i >= p.entry_cap) return;
    uint k = keys[i] >> QB;
    if (k >= (2u << p.table_bits)) return;
    bool first = true, last = true;
    if (i > 0u) first = (keys[i - 1u] >> QB) != k;
    if (i + 1u < p.entry_cap) last = (keys[i + 1u] >> QB) != k;
    if (first) ranges[k].x = i;
    if (last) ranges[k].y = i + 1u;
}
