#version 460
// Pass 2 of the spatial hash (counting sort of the cell entries, part 1): primitive i
// (triangles 0..nt, then edges nt..nt+ne) visits the cells its inflated box overlaps, in
// z, y, x order; its k-th cell is entry offsets[i] + k (offsets = exclusive scan of
// cell_counts). For each, key = (type, bucket of the cell, x slot of the box's lower x in the
// cell) (spatial_hash.glsl::cell_entry_key), and
// the entry's rank among the entries of its key is taken with an atomic on key_counts (cleared
// before) and stored in ranks. Entries past entry_cap are neither counted nor stored, and the
// last primitive records the true total in total[0] (no wrap: counts saturate, see
// spatial_hash.glsl), so the host detects the overflow. place_entries.comp writes the entries
// at their sorted slots after the scan of key_counts. The order of the entries of one key is
// the order of the atomics (not deterministic; no consumer depends on it). One dispatch per
// primitive type (TYPE).
// Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs::fill_cells (keys in entry order).
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 3) readonly buffer Counts { uint counts[]; };
layout(std430, binding = 4) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 5) buffer KeyCounts { uint key_counts[]; };
layout(std430, binding = 6) writeonly buffer Ranks { uint ranks[]; };
layout(std430, binding = 7) writeonly buffer Total { uint total[]; };
// 0: triangles (primitives 0..nt), 1: edges (primitives nt..nt+ne); one dispatch per type, so
// lanes of one type do not run the other's loads.
layout(constant_id = 1) const uint TYPE = 0;
void main() {
    uint i = flat_index() + (TYPE == 0u ? 0u : p.nt);
    uint n = p.nt + p.ne;
    if (i >= (TYPE == 0u ? p.nt : n)) return;
    vec3 lo, hi;
    uint ty;
    if (TYPE == 0u) {
        uvec4 f = tris[i];
        vec3 a = x[f.x].xyz, b = x[f.y].xyz, c = x[f.z].xyz;
        lo = min(min(a, b), c) - vec3(p.pad_t);
        hi = max(max(a, b), c) + vec3(p.pad_t);
        ty = 0u;
    } else {
        uvec2 e = edges[i - p.nt];
        vec3 a = x[e.x].xyz, b = x[e.y].xyz;
        lo = min(a, b) - vec3(p.pad_e);
        hi = max(a, b) + vec3(p.pad_e);
        ty = 1u;
    }
    ivec3 c0 = cell_of(lo), c1 = cell_of(hi);
    uint off = offsets[i];
    uint cnt = counts[i];
    if (i == n - 1u) total[0] = off + cnt;
    uint k = off;
    uint end = min(off + cnt, p.entry_cap);
    for (int z = c0.z; z <= c1.z && k < end; ++z)
        for (int y = c0.y; y <= c1.y && k < end; ++y)
            for (int xx = c0.x; xx <= c1.x && k < end; ++xx) {
                ranks[k] = atomicAdd(key_counts[cell_entry_key(ty, lo, ivec3(xx, y, z))], 1u);
                ++k;
            }
}
