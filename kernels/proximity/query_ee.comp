#version 460
// Edge–edge candidates, one invocation per sorted cell entry: entry a of an edge bucket scans
// the later entries b of the bucket (an edge has at most one entry per bucket) until their
// in-cell x order passes a's upper x (sweep in x within the cell). A pair is taken only in the
// bucket of the cell holding the minimum corner of the intersection of the two (D/2)-inflated
// boxes (that cell lies in both boxes, so both edges have entries in that bucket: each pair is
// found exactly once). Boxes come from the gathered entry boxes (contiguous loads). Pairs
// sharing a vertex, rejected by the body filter or by bounding spheres grown by D are skipped.
// Candidates (min edge, max edge) are appended with an atomic counter; count[0] is the true
// count even past cee_cap. narrow_ee.comp keeps those with exact dist < D.
// Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs::query_edge_edge.
#include "common.glsl"
#include "spatial_hash.glsl"
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Body { uint body[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 3) readonly buffer Keys { uint keys[]; };
layout(std430, binding = 4) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 5) readonly buffer Ranges { uvec2 ranges[]; };
layout(std430, binding = 6) buffer Count { uint count[]; };
layout(std430, binding = 7) writeonly buffer Cands { uvec2 cands[]; };
void main() {
    uint i = flat_index();
    if (i >= p.entry_cap) return;
    uint key = keys[i];
    if (key >= (2u << (p.table_bits + QB)) || (key >> (p.table_bits + QB)) != 1u) return;
    uint bucket = (key >> QB) & ((1u << p.table_bits) - 1u);
    uvec2 r = ranges[key >> QB];
    vec4 alo = boxes[2u * i];
    uint ea = floatBitsToUint(alo.w);
    vec3 lo_a = alo.xyz;
    vec3 hi_a = boxes[2u * i + 1u].xyz;
    uvec2 ia = edges[ea];
    vec3 a0 = x[ia.x].xyz, a1 = x[ia.y].xyz;
    vec3 mid_a = 0.5 * (a0 + a1);
    float r_a = 0.5 * length(a1 - a0);
    uint ba = body[ia.x];
    // This entry's cell column: the one of a's range congruent to the bucket's x modulo 2^k.
    uint km = (1u << axis_bits()) - 1u;
    int cx0 = cell_of(lo_a).x;
    int cx = cx0 + int((bucket - uint(cx0)) & km);
    // Later entries are sorted by the x order of their lower x in their own cell: once it
    // exceeds the order of a's upper x in a's cell, the rest of a's cell is separated in x
    // (and entries of other cells never pair with a in this bucket).
    uint qa = x_order(hi_a.x, cx);
    bool done = false;
    // Two nested loops: llvmpipe bounds each loop at 65535 iterations per invocation.
    for (uint base = i + 1u; base < r.y && !done; base += 32768u) {
        uint stop = min(r.y, base + 32768u);
        for (uint j = base; j < stop; ++j) {
            vec4 bhi = boxes[2u * j + 1u];
            if (floatBitsToUint(bhi.w) > qa) {
                done = true;
                break;
            }
            vec4 blo = boxes[2u * j];
            if (any(greaterThan(blo.xyz, hi_a))) continue; // separated
            uint eb = floatBitsToUint(blo.w);
            vec3 hi_b = bhi.xyz;
            vec3 m = max(lo_a, blo.xyz);
            if (any(greaterThan(m, min(hi_a, hi_b)))) continue;
            if (cell_bucket(cell_of(m)) != bucket) continue;
            uvec2 ib = edges[eb];
            if (ib.x == ia.x || ib.x == ia.y || ib.y == ia.x || ib.y == ia.y) continue;
            if (!pair_allowed(ba, body[ib.x])) continue;
            vec3 b0 = x[ib.x].xyz, b1 = x[ib.y].xyz;
            // Bounding spheres: dist >= |mid_a - mid_b| - r_a - r_b.
            vec3 dm = 0.5 * (b0 + b1) - mid_a;
            float rs = (r_a + 0.5 * length(b1 - b0) + p.d) * SPHERE_MARGIN;
            if (dot(dm, dm) > rs * rs) continue;
            uint k = atomicAdd(count[0], 1u);
            if (k < p.cee_cap) cands[k] = uvec2(min(ea, eb), max(ea, eb));
        }
    }
}
