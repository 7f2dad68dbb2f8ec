#version 460
// Vertex–triangle candidates: vertex v looks up the bucket of its own cell (every triangle
// within D of v has its D-inflated box, hence an entry, in that cell; a triangle has at most
// one entry per bucket). A triangle is skipped when v is outside its inflated box (gathered
// entry boxes), when it contains v, when the body filter rejects it or when v is outside its
// bounding sphere (spatial_hash.glsl::box_sphere) grown by D.
//
// Invocation k handles vertex order[k] (vertices sorted by cell at construction, so the lanes
// of a subgroup mostly share a cell; any order is correct). Subgroup tiles as in query_ee.comp:
// the subgroup takes the distinct buckets of its lanes one at a time (smallest first); for each,
// lane k < TILE loads triangle entry base + k of the bucket (box, vertices, body) and the
// tile's entries are shuffled to all lanes one at a time (unrolled, constant lane), so the
// lanes of that bucket test their vertex against them with register data only, collecting
// hits as bits; the hits of a window of up to 32 entries are appended with an atomic counter
// (v, t); count[0] is the true count even past cvt_cap (overflow is detected on the host).
// Needs subgroups of at least TILE lanes. narrow.comp keeps those with exact dist < D.
// Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs::query_vertex_triangle.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "spatial_hash.glsl"
// Entries per tile (at most 32, at most the subgroup size).
layout(constant_id = 1) const uint TILE = 8;
// 1: the body filter rejects some pairs (flags != 3), so bodies are loaded and compared; 0: all
// pairs are allowed and the body loads and shuffles are compiled out.
layout(constant_id = 2) const uint FILTER = 1;
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Body { uint body[]; };
layout(std430, binding = 2) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 3) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 4) readonly buffer KeyEnds { uint key_ends[]; };
layout(std430, binding = 5) readonly buffer Order { uint order[]; };
layout(std430, binding = 6) buffer Count { uint count[]; };
layout(std430, binding = 7) writeonly buffer Cands { uvec2 cands[]; };
void main() {
    uint k = flat_index();
    // No early return: the whole subgroup takes part in the tile loops.
    bool pending = k < p.nv;
    uint v = pending ? order[k] : 0u;
    vec3 q = pending ? x[v].xyz : vec3(0.0);
    uint bv = 0u;
    if (FILTER == 1u && pending) bv = body[v];
    ivec3 cq = cell_of(q);
    uint bucket = pending ? cell_bucket(cq) : 0xffffffffu;
    // Triangle entries of the bucket whose box's lower x slot is at most q's: the later ones
    // lie right of q in q's cell (x_slot).
    uint qslot = x_slot(local_units(q, cq).x);
    const uint T = TILE;
    uint lane = gl_SubgroupInvocationID;
    uint nt1 = max(p.nt, 1u) - 1u;
    // One distinct bucket of the subgroup per iteration (at most 8 on llvmpipe).
    for (uint lead = subgroupMin(bucket); lead != 0xffffffffu; lead = subgroupMin(bucket)) {
        bool mine = bucket == lead;
        // Triangle entries of the bucket, up to the largest x slot of its lanes.
        uint lane_end = mine ? key_ends[entry_key(0u, lead, qslot)] : 0u;
        uvec2 r = uvec2(KEY_START(key_ends, entry_key(0u, lead, 0u)), subgroupMax(lane_end));
        uint first = r.x - r.x % T;
        // Two nested loops: llvmpipe bounds each loop at 65535 iterations per invocation.
        for (uint outer = first; outer < r.y; outer += 32768u * T) {
            uint stop = min(r.y, outer + 32768u * T);
            uint win = outer, hw = 0u;
            for (uint base = outer; base < stop; base += T) {
                // Entries outside the bucket are loaded but never taken; indices stay in bounds.
                uint j = min(base + min(lane, T - 1u), p.entry_cap - 1u);
                vec4 blo = boxes[2u * j];
                vec3 bhi = boxes[2u * j + 1u].xyz;
                uvec4 f = tris[min(floatBitsToUint(blo.w), nt1)];
                uint bb = 0u;
                if (FILTER == 1u) bb = body[f.x];
                uint hits = 0u;
                [[unroll]] for (uint rr = 0u; rr < T; ++rr) {
                    uint jb = base + rr;
                    vec3 lo_t = subgroupShuffle(blo.xyz, rr);
                    vec3 hi_t = subgroupShuffle(bhi, rr);
                    uvec3 ft = subgroupShuffle(f.xyz, rr);
                    uint bt = FILTER == 1u ? subgroupShuffle(bb, rr) : 0u;
                    bool take = mine && jb >= r.x && jb < r.y;
                    take = take && !any(lessThan(q, lo_t)) && !any(greaterThan(q, hi_t));
                    take = take && ft.x != v && ft.y != v && ft.z != v;
                    take = take && (FILTER == 0u || pair_allowed(bv, bt));
                    // Bounding sphere of the triangle's box: dist >= |q - c| - r.
                    vec4 sph = box_sphere(lo_t, hi_t, p.pad_t);
                    float rs = (sph.w + p.d) * SPHERE_MARGIN;
                    vec3 dq = q - sph.xyz;
                    take = take && !(dot(dq, dq) > rs * rs);
                    hits |= take ? (1u << rr) : 0u;
                }
                hw |= hits << (base - win);
                if (base + 2u * T - win > 32u || base + T >= stop) {
                    // Append: a loop, skipped at once when no lane has a hit.
                    while (hw != 0u) {
                        uint jb = win + uint(findLSB(hw));
                        hw &= hw - 1u;
                        uint t = floatBitsToUint(boxes[2u * jb].w);
                        uint off = atomicAdd(count[0], 1u);
                        if (off < p.cvt_cap) cands[off] = uvec2(v, t);
                    }
                    win = base + T;
                }
            }
        }
        if (mine) bucket = 0xffffffffu;
    }
}
