#version 460
// Pass 3 of the spatial hash (counting sort of the cell entries, part 2): primitive i visits
// its cells again in fill_cells.comp's order and writes its k-th entry at its sorted slot
// start(key) + ranks[offsets[i] + k], where start(key) = key_ends[key - 1] (0 for key 0;
// key_ends = inclusive scan of the per-key entry counts), so the entries are grouped by key
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
layout(std430, binding = 3) readonly buffer Counts { uint counts[]; };
layout(std430, binding = 4) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 5) readonly buffer KeyEnds { uint key_ends[]; };
layout(std430, binding = 6) readonly buffer Ranks { uint ranks[]; };
layout(std430, binding = 7) writeonly buffer Keys { uint keys[]; };
layout(std430, binding = 8) writeonly buffer Vals { uint vals[]; };
layout(std430, binding = 9) writeonly buffer Recs { uvec4 recs[]; };
// 0: triangles (primitives 0..nt), 1: edges (primitives nt..nt+ne).
layout(constant_id = 1) const uint TYPE = 0;
void main() {
    uint i = flat_index() + (TYPE == 0u ? 0u : p.nt);
    if (i >= (TYPE == 0u ? p.nt : p.nt + p.ne)) return;
    vec3 lo, hi;
    uint ty, id;
    uvec2 e = uvec2(0u);
    if (TYPE == 0u) {
        uvec4 f = tris[i];
        vec3 a = x[f.x].xyz, b = x[f.y].xyz, c = x[f.z].xyz;
        lo = min(min(a, b), c) - vec3(p.pad_t);
        hi = max(max(a, b), c) + vec3(p.pad_t);
        ty = 0u;
        id = i;
    } else {
        e = edges[i - p.nt];
        vec3 a = x[e.x].xyz, b = x[e.y].xyz;
        lo = min(a, b) - vec3(p.pad_e);
        hi = max(a, b) + vec3(p.pad_e);
        ty = 1u;
        id = i - p.nt;
    }
    ivec3 c0 = cell_of(lo), c1 = cell_of(hi);
    uint k = offsets[i];
    uint end = min(k + counts[i], p.entry_cap);
    for (int z = c0.z; z <= c1.z && k < end; ++z)
        for (int y = c0.y; y <= c1.y && k < end; ++y)
            for (int xx = c0.x; xx <= c1.x && k < end; ++xx) {
                ivec3 c = ivec3(xx, y, z);
                uint key = cell_entry_key(ty, lo, c);
                uint slot = KEY_START(key_ends, key) + ranks[k];
                uvec2 box = uvec2(pack_local(lo, c), pack_local(hi, c));
                if (TYPE == 0u) {
                    recs[slot] = uvec4(box, id, 0u);
                } else {
                    keys[slot] = key;
                    vals[slot] = id;
                    recs[slot] = uvec4(box, e.x, e.y);
                }
                ++k;
            }
}
