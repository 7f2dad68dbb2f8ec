#version 460
// Pass 1 of the spatial hash: for primitive i (triangles 0..nt, then edges nt..nt+ne), the number
// of grid cells its inflated box overlaps; saturated[0] = 1 when a count saturates
// (spatial_hash.glsl::range_cells). Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs::cell_counts.
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 3) writeonly buffer Counts { uint counts[]; };
layout(std430, binding = 4) writeonly buffer Saturated { uint saturated[]; };
void main() {
    uint i = flat_index();
    if (i >= p.nt + p.ne) return;
    vec3 lo, hi;
    if (i < p.nt) {
        uvec4 f = tris[i];
        vec3 a = x[f.x].xyz, b = x[f.y].xyz, c = x[f.z].xyz;
        lo = min(min(a, b), c) - vec3(p.pad_t);
        hi = max(max(a, b), c) + vec3(p.pad_t);
    } else {
        uvec2 e = edges[i - p.nt];
        vec3 a = x[e.x].xyz, b = x[e.y].xyz;
        lo = min(a, b) - vec3(p.pad_e);
        hi = max(a, b) + vec3(p.pad_e);
    }
    uint n = range_cells(cell_of(lo), cell_of(hi));
    counts[i] = n;
    if (n >= count_saturation()) saturated[0] = 1u; // the host grows the cells and redoes
}
