#version 460
// Vertex–triangle candidates: vertex v looks up the bucket of its own cell (every triangle
// within D of v has its D-inflated box, hence an entry, in that cell; a triangle has at most
// one entry per bucket). The scan stops once the entries' in-cell x order passes the vertex's.
// A triangle is skipped when v is outside its inflated box (gathered entry boxes), when it contains v, when the body filter
// rejects it or when v is outside its bounding sphere (spatial_hash.glsl::box_sphere) grown by D. Candidates (v, t) are
// appended with an atomic counter; count[0] is the true count even past cvt_cap (overflow is
// detected on the host). narrow_vt.comp keeps those with exact dist < D.
// Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs::query_vertex_triangle.
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Body { uint body[]; };
layout(std430, binding = 2) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 3) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 4) readonly buffer Ranges { uvec2 ranges[]; };
layout(std430, binding = 5) buffer Count { uint count[]; };
layout(std430, binding = 6) writeonly buffer Cands { uvec2 cands[]; };
void main() {
    uint v = flat_index();
    if (v >= p.nv) return;
    vec3 q = x[v].xyz;
    uint bv = body[v];
    ivec3 cv = cell_of(q);
    uvec2 r = ranges[cell_bucket(cv)];
    // Entries of the bucket are sorted by the x order of their box's lower x in their cell:
    // once it exceeds the vertex's own order, lo.x > q.x for the rest (same-cell entries; other
    // cells' entries in a periodic bucket cannot contain the vertex).
    uint qv = x_order(q.x, cv.x);
    bool done = false;
    // Two nested loops: llvmpipe bounds each loop at 65535 iterations per invocation.
    for (uint base = r.x; base < r.y && !done; base += 32768u) {
        uint stop = min(r.y, base + 32768u);
        for (uint j = base; j < stop; ++j) {
            vec4 bhi = boxes[2u * j + 1u];
            if (floatBitsToUint(bhi.w) > qv) {
                done = true;
                break;
            }
            vec4 blo = boxes[2u * j];
            if (any(lessThan(q, blo.xyz)) || any(greaterThan(q, bhi.xyz))) continue;
            uint t = floatBitsToUint(blo.w);
            uvec4 f = tris[t];
            if (f.x == v || f.y == v || f.z == v) continue;
            if (!pair_allowed(bv, body[f.x])) continue;
            // Bounding sphere of the triangle's box: dist >= |q - c| - r.
            vec4 sph = box_sphere(blo.xyz, bhi.xyz, p.pad_t);
            float rs = (sph.w + p.d) * SPHERE_MARGIN;
            vec3 dq = q - sph.xyz;
            if (dot(dq, dq) > rs * rs) continue;
            uint k = atomicAdd(count[0], 1u);
            if (k < p.cvt_cap) cands[k] = uvec2(v, t);
        }
    }
}
