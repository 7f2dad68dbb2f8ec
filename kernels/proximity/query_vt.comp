#version 460
// Vertex–triangle candidates: vertex v looks up the bucket of its own cell (every triangle
// within D of v has its D-inflated box, hence an entry, in that cell; a triangle has at most
// one entry per bucket), up to the x slot of v (entries of later slots lie right of v in its
// cell). A triangle is skipped when v is outside its quantized inflated box (the packed
// record of place_entries.comp, compared in v's cell-local units: a superset of the f32 box
// test; entries of other cells sharing the bucket only add candidates the exact filter
// drops), when it contains v, or when the body filter rejects it.
//
// Invocation k handles vertex order[k] (vertices sorted by cell at construction, so the lanes
// of a subgroup mostly share a cell; any order is correct). Subgroup tiles as in query_ee.comp:
// the subgroup takes the distinct buckets of its lanes one at a time (smallest first); for each,
// lane k < TILE loads triangle entry base + k of the bucket (record, vertices, body) and the
// tile's entries are shuffled to all lanes one at a time (unrolled, constant lane), so the
// lanes of that bucket test their vertex against them with register data only, collecting
// hits as bits in register slots (append_hits.glsl), flushed as (v, t) with one atomic per lane
// when a lane's slots are full or the bucket ends; count[0] is the true count even past
// cvt_cap (overflow is detected on the host). Needs subgroups of at least TILE lanes.
// narrow.comp keeps those with exact dist < D. Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs::query_vertex_triangle_quantized.
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_vote : require
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
layout(std430, binding = 3) readonly buffer Recs { uvec4 recs[]; };
layout(std430, binding = 4) readonly buffer KeyEnds { uint key_ends[]; };
layout(std430, binding = 5) readonly buffer Order { uint order[]; };
layout(std430, binding = 6) buffer Count { uint count[]; };
layout(std430, binding = 7) writeonly buffer Cands { uvec2 cands[]; };
#include "append_hits.glsl"

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
    ivec3 uq = local_units(q, cq);
    uint qslot = x_slot(uq.x);
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
        uvec4 sbase = uvec4(0u), sbits = uvec4(0u);
        uint nslot = 0u;
        // llvmpipe bounds each loop at 65535 iterations per invocation and runs a loop body's
        // code on every iteration whatever its branches: chunks of 32768 tiles, and in each a
        // tile loop that stops when a lane's slots are full, then the flush.
        for (uint chunk = first; chunk < r.y; chunk += 32768u * T) {
            uint stop = min(r.y, chunk + 32768u * T);
            for (uint base = chunk; base < stop;) {
                for (; base < stop;) {
                    // Entries outside the bucket are loaded but never taken; indices stay in
                    // bounds.
                    uint j = min(base + min(lane, T - 1u), p.entry_cap - 1u);
                    uvec4 rb = recs[j];
                    uvec4 f = tris[min(rb.z, nt1)];
                    uint bb = 0u;
                    if (FILTER == 1u) bb = body[f.x];
                    uint hits = 0u;
                    [[unroll]] for (uint rr = 0u; rr < T; ++rr) {
                        uint jb = base + rr;
                        uvec2 box = subgroupShuffle(rb.xy, rr);
                        uvec3 ft = subgroupShuffle(f.xyz, rr);
                        uint bt = FILTER == 1u ? subgroupShuffle(bb, rr) : 0u;
                        bool take = mine && jb >= r.x && jb < r.y;
                        take = take && all(lessThanEqual(unpack_local(box.x), uq))
                            && all(lessThanEqual(uq, unpack_local(box.y)));
                        take = take && ft.x != v && ft.y != v && ft.z != v;
                        take = take && (FILTER == 0u || pair_allowed(bv, bt));
                        hits |= take ? (1u << rr) : 0u;
                    }
                    push_slot(sbase, sbits, nslot, base, hits);
                    base += T;
                    if (subgroupAny(nslot == SLOTS)) break; // uniform
                }
                append_slots(sbase, sbits, v, p.cvt_cap, true);
                sbits = uvec4(0u);
                nslot = 0u;
            }
        }
        if (mine) bucket = 0xffffffffu;
    }
}
