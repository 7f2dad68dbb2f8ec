#version 460
// Pass 2 of the spatial hash (counting sort of the cell entries, part 2): primitive i visits
// its cells again in cell_counts.comp's order (same box, same keys) and writes each entry at a
// slot of its key's run [key_ends[key - 1], key_ends[key]) (key_ends = inclusive scan of the
// per-key counts of cell_counts.comp): the last free one, taken by decrementing key_counts
// with an atomic (the order within a key is that of the atomics: not deterministic, and no
// consumer depends on it). The entries are then grouped by key
// (type, bucket, x slot) and a bucket's entries are contiguous, in x-slot order. Every entry
// stores a packed record recs[slot]: its box's corners quantized relative to the entry's cell
// (spatial_hash.glsl::pack_local) and, for a triangle, (triangle index, 0) (query_vt.comp),
// for an edge its two vertices (query_ee.comp); an edge entry also stores keys[slot] = key and
// vals[slot] = edge index. One dispatch per primitive type (TYPE; lanes of one type do not
// run the other's stores). keys and vals of triangle entries and of slots past the stored
// entries are not written (no consumer reads them).
// Host: engine/src/proximity/spatial_hash.rs.
// Reference: cpu_reference/proximity.rs::entry_records (per entry).
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 3) readonly buffer KeyEnds { uint key_ends[]; };
layout(std430, binding = 4) buffer KeyCounts { uint key_counts[]; };
layout(std430, binding = 5) writeonly buffer Keys { uint keys[]; };
layout(std430, binding = 6) writeonly buffer Vals { uint vals[]; };
layout(std430, binding = 7) writeonly buffer Recs { uvec4 recs[]; };
// 0: triangles (primitives 0..nt), 1: edges (primitives nt..nt+ne).
layout(constant_id = 1) const uint TYPE = 0;
#include "primitive_box.glsl"
void main() {
    uint i = flat_index() + (TYPE == 0u ? 0u : p.nt);
    if (i >= (TYPE == 0u ? p.nt : p.nt + p.ne)) return;
    vec3 lo, hi;
    uvec2 e;
    primitive_box(i, TYPE, lo, hi, e);
    uint id = TYPE == 0u ? i : i - p.nt;
    ivec3 c0 = cell_of(lo), c1 = cell_of(hi);
    if (range_cells(c0, c1) >= count_saturation()) return; // flagged by cell_counts.comp
    for (int z = c0.z; z <= c1.z; ++z)
        for (int y = c0.y; y <= c1.y; ++y)
            for (int xx = c0.x; xx <= c1.x; ++xx) {
                ivec3 c = ivec3(xx, y, z);
                uint key = cell_entry_key(TYPE, lo, c);
                // Take the last free slot of the key's run (the count goes back to 0).
                uint slot = KEY_START(key_ends, key) + atomicAdd(key_counts[key], 0xffffffffu) - 1u;
                if (slot >= p.entry_cap) continue; // overflow: the host grows and redoes
                uvec2 box = uvec2(pack_local(lo, c), pack_local(hi, c));
                if (TYPE == 0u) {
                    recs[slot] = uvec4(box, id, 0u);
                } else {
                    keys[slot] = key;
                    vals[slot] = id;
                    recs[slot] = uvec4(box, e.x, e.y);
                }
            }
}
