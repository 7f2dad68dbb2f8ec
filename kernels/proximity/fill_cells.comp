#version 460
// Pass 2 of the spatial hash: primitive i writes one entry per overlapped cell at
// offsets[i] + k (offsets = exclusive scan of cell_counts): key = (type, bucket of the cell,
// x order of the box's lower x in the cell) (spatial_hash.glsl::entry_key), value = triangle or
// edge index. Entries past entry_cap are dropped and the last primitive records the true total
// in total[0] (no wrap: counts saturate, see spatial_hash.glsl), so the host detects the overflow. Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs::fill_cells.
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 3) readonly buffer Counts { uint counts[]; };
layout(std430, binding = 4) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 5) writeonly buffer Keys { uint keys[]; };
layout(std430, binding = 6) writeonly buffer Vals { uint vals[]; };
layout(std430, binding = 7) writeonly buffer Total { uint total[]; };
void main() {
    uint i = flat_index();
    uint n = p.nt + p.ne;
    if (i >= n) return;
    vec3 lo, hi;
    uint ty, id;
    if (i < p.nt) {
        uvec4 f = tris[i];
        vec3 a = x[f.x].xyz, b = x[f.y].xyz, c = x[f.z].xyz;
        lo = min(min(a, b), c) - vec3(p.pad_t);
        hi = max(max(a, b), c) + vec3(p.pad_t);
        ty = 0u;
        id = i;
    } else {
        uvec2 e = edges[i - p.nt];
        vec3 a = x[e.x].xyz, b = x[e.y].xyz;
        lo = min(a, b) - vec3(p.pad_e);
        hi = max(a, b) + vec3(p.pad_e);
        ty = 1u;
        id = i - p.nt;
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
                keys[k] = entry_key(ty, cell_bucket(ivec3(xx, y, z)), x_order(lo.x, xx));
                vals[k] = id;
                ++k;
            }
}
