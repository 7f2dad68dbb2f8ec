#version 460
// Pass 1 of the spatial hash (counting sort of the cell entries, part 1): primitive i of type
// TYPE (triangles 0..nt, then edges nt..nt+ne; one dispatch per type, so lanes of one type do
// not run the other's loads) counts the grid cells its inflated box overlaps into counts[i]
// (saturated[0] = 1 when a count saturates, spatial_hash.glsl::range_cells: the host grows the
// cells and redoes the search) and visits them in z, y, x order, adding one to key_counts of
// each entry's key (type, bucket of the cell, x slot of the box's lower x in the cell,
// spatial_hash.glsl::cell_entry_key; key_counts cleared before). The inclusive scan of
// key_counts then gives every key's run; place_entries.comp fills them.
// Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs::cell_counts and fill_cells (keys).
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 3) writeonly buffer Counts { uint counts[]; };
layout(std430, binding = 4) writeonly buffer Saturated { uint saturated[]; };
layout(std430, binding = 5) buffer KeyCounts { uint key_counts[]; };
// 0: triangles (primitives 0..nt), 1: edges (primitives nt..nt+ne).
layout(constant_id = 1) const uint TYPE = 0;
#include "primitive_box.glsl"
void main() {
    uint i = flat_index() + (TYPE == 0u ? 0u : p.nt);
    if (i >= (TYPE == 0u ? p.nt : p.nt + p.ne)) return;
    vec3 lo, hi;
    uvec2 e;
    primitive_box(i, TYPE, lo, hi, e);
    ivec3 c0 = cell_of(lo), c1 = cell_of(hi);
    uint n = range_cells(c0, c1);
    counts[i] = n;
    if (n >= count_saturation()) {
        saturated[0] = 1u; // the host grows the cells and redoes
        return;
    }
    for (int z = c0.z; z <= c1.z; ++z)
        for (int y = c0.y; y <= c1.y; ++y)
            for (int xx = c0.x; xx <= c1.x; ++xx)
                atomicAdd(key_counts[cell_entry_key(TYPE, lo, ivec3(xx, y, z))], 1u);
}
