#version 460
// Edge–edge candidates, one invocation per edge entry (query_args.comp gives their range):
// entry a of an edge bucket pairs with the later entries b of its bucket (an edge has at most
// one entry per bucket). A pair is taken only in the bucket of the cell holding the minimum
// corner of the intersection of the two (D/2)-inflated boxes (that cell lies in both boxes, so
// both edges have entries in that bucket: each pair is found exactly once). Pairs sharing a
// vertex or rejected by the body filter are skipped.
//
// Subgroup tiles (llvmpipe runs 8 lanes as one SIMD row; per-lane loads and stores there are
// scalar loops over the lanes, register shuffles are cheap): the subgroup scans the union of
// its lanes' ranges (i, end of the bucket's x slots its box reaches) in tiles of TILE entries.
// Lane k < TILE loads the packed record of entry base + k (place_entries.comp: cell-local
// quantized box, vertices) and its body; the tile's records are then shuffled to all lanes one
// at a time (unrolled, constant lane), so every lane tests its own entry against them with
// register data only (tile_hits), collecting the hits of a tile as bits. Two variants
// (ONE_FRAME); the host dispatches both and query_args.comp gives the one that does not apply
// zero workgroups:
// - ONE_FRAME = 1: the domain spans at most 2^k cells per axis (domain.comp), so the
//   entries of a bucket share one cell and their records one frame: the quantized test is
//   exact and decides the pair alone. The quantized boxes contain the f32 boxes (floor of
//   the same f32 coordinate as cell_of, so the cell of a quantized corner is the cell of the
//   f32 corner), so every pair whose f32 boxes overlap is kept, and its quantized minimum
//   corner lies in exactly one cell, which both edges' entries cover: each pair once. The
//   hits of a lane's tiles are kept in a few register slots and appended with one atomic per
//   lane when a lane's slots are full or the scan ends (append_hits.glsl).
// - ONE_FRAME = 0: a bucket can hold several cells: the quantized test has one unit of slack
//   and is a superset; the hits of a window of up to 32 entries get the exact f32 tests (box
//   overlap, minimum-corner cell, bounding spheres grown by D, spatial_hash.glsl::box_sphere)
//   on the edge boxes (from the records' vertices) and the kept ones are appended with an
//   atomic counter each.
// Candidates are entry pairs (a, b), a < b (narrow.comp maps them to edges); count[0] is the
// true count even past cee_cap. Needs subgroups of at least TILE lanes. narrow.comp keeps
// those with dist < D. Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs::query_edge_edge_one_frame (one frame)
// and query_edge_edge (several cells per bucket).
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_vote : require
#include "common.glsl"
#include "spatial_hash.glsl"
// Entries per tile (at most 32, at most the subgroup size).
layout(constant_id = 1) const uint TILE = 8;
// 1: the body filter rejects some pairs (flags != 3), so bodies are loaded and compared; 0: all
// pairs are allowed and the body loads and shuffles are compiled out.
layout(constant_id = 3) const uint FILTER = 1;
// 1: one cell per bucket (exact quantized test); 0: several (f32 re-check).
layout(constant_id = 2) const uint ONE_FRAME = 0;
layout(std430, binding = 0) readonly buffer Body { uint body[]; };
layout(std430, binding = 1) readonly buffer Keys { uint keys[]; };
layout(std430, binding = 2) readonly buffer X { vec4 x[]; };
layout(std430, binding = 3) readonly buffer Recs { uvec4 recs[]; };
layout(std430, binding = 4) readonly buffer KeyEnds { uint key_ends[]; };
layout(std430, binding = 5) buffer Count { uint count[]; };
layout(std430, binding = 6) writeonly buffer Cands { uvec2 cands[]; };
// query_args.comp: [6] first edge entry, [7] edge entries.
layout(std430, binding = 7) readonly buffer QueryArgs { uint query_args[]; };
#include "append_hits.glsl"

// Inflated box of the edge with vertices e (same f32 operations as place_entries.comp).
void edge_box(uvec2 e, out vec3 lo, out vec3 hi) {
    vec3 a = x[e.x].xyz, b = x[e.y].xyz;
    lo = min(a, b) - vec3(p.pad_e);
    hi = max(a, b) + vec3(p.pad_e);
}

// Whether packed quantized boxes (lo_a, hi_a) and (lo_b, hi_b) overlap with their minimum
// corner in the entries' cell, with `slack` units each way (0: exact in one frame; 1: superset
// of the f32 tests).
bool quantized_test(uint lo_a, uint hi_a, uint lo_b, uint hi_b, int slack) {
    ivec3 la = unpack_local(lo_a), ha = unpack_local(hi_a);
    ivec3 lb = unpack_local(lo_b), hb = unpack_local(hi_b);
    ivec3 m = max(la, lb);
    return all(lessThanEqual(m, min(ha, hb) + slack)) && all(greaterThanEqual(m, ivec3(-slack)))
        && all(lessThanEqual(m, ivec3(int(LOCAL_UNITS) - 1 + slack)));
}

// Hit bits of this lane's entry (record ra, body ba, later entries [jbeg, jend)) against the
// tile of TILE entries starting at base, whose lane r holds record rb and body bb.
uint tile_hits(uvec4 ra, uint ba, uint jbeg, uint jend, int slack, uint base, uvec4 rb, uint bb) {
    uint hits = 0u;
    [[unroll]] for (uint r = 0u; r < TILE; ++r) {
        uint jb = base + r;
        uvec4 rr = subgroupShuffle(rb, r);
        uint br = FILTER == 1u ? subgroupShuffle(bb, r) : 0u;
        bool take = jb >= jbeg && jb < jend;
        take = take && quantized_test(ra.x, ra.y, rr.x, rr.y, slack);
        take = take && rr.z != ra.z && rr.z != ra.w && rr.w != ra.z && rr.w != ra.w;
        take = take && (FILTER == 0u || pair_allowed(ba, br));
        hits |= take ? (1u << r) : 0u;
    }
    return hits;
}

void main() {
    uint k = flat_index();
    bool one_frame = ONE_FRAME == 1u;
    int slack = one_frame ? 0 : 1;
    // No early return: the whole subgroup takes part in the tile loop.
    bool valid = k < query_args[7];
    uint i = query_args[6] + k; // this invocation's edge entry
    uint key = valid ? keys[i] : 0xffffffffu;
    valid = valid && key < sentinel_key() && key_type(key) == 1u;
    uint bucket = 0u, jend = 0u;
    uvec4 ra = uvec4(0u, 0u, 0xffffffffu, 0xffffffffu);
    vec3 lo_a = vec3(0.0), hi_a = vec3(0.0);
    uint ba = 0u;
    if (valid) {
        bucket = key_bucket(key);
        ra = recs[i];
        // Later entries of the bucket up to the x slot of this box's upper x: entries past it
        // lie right of the box in the entry's cell (x_slot), so they never pass the test below
        // in the cell that owns a pair.
        jend = key_ends[entry_key(1u, bucket, x_slot(unpack_local(ra.y).x))];
        if (FILTER == 1u) ba = body[ra.z];
        if (!one_frame) {
            edge_box(ra.zw, lo_a, hi_a);
        }
    }
    vec4 sa = box_sphere(lo_a, hi_a, p.pad_e);
    uint jbeg = i + 1u;
    if (!valid || jbeg >= jend) {
        jbeg = 0xffffffffu;
        jend = 0u;
    }
    const uint T = TILE;
    uint lane = gl_SubgroupInvocationID;
    uint first = subgroupMin(jbeg);
    uint last = subgroupMax(jend);
    if (first >= last) return; // uniform
    first -= first % T;
    uint nv1 = max(p.nv, 1u) - 1u;
    // Tiles with hits, up to SLOTS per lane: (tile start, hit bits); flushed when a lane's
    // slots are full and at the end.
    uvec4 sbase = uvec4(0u), sbits = uvec4(0u);
    uint nslot = 0u;
    if (one_frame) {
        // llvmpipe bounds each loop at 65535 iterations per invocation, and runs a loop body's
        // code for every iteration whatever its branches (masked lanes): chunks of 32768 tiles;
        // in each, a tile loop that stops when a lane's slots are full, then the flush, once per
        // stop instead of once per tile.
        for (uint chunk = first; chunk < last; chunk += 32768u * T) {
            uint stop = min(last, chunk + 32768u * T);
            for (uint base = chunk; base < stop;) {
                for (; base < stop;) {
                    // Entries past the edge entries hold stale records: only in-range ones are
                    // taken, and the body index is clamped so the load stays in bounds.
                    uint j = min(base + min(lane, T - 1u), p.entry_cap - 1u);
                    uvec4 rb = recs[j];
                    uint bb = 0u;
                    if (FILTER == 1u) bb = body[min(rb.z, nv1)];
                    // Register-only tests; hits are collected as bits (no memory access or
                    // atomic here).
                    uint hits = tile_hits(ra, ba, jbeg, jend, slack, base, rb, bb);
                    push_slot(sbase, sbits, nslot, base, hits);
                    base += T;
                    if (subgroupAny(nslot == SLOTS)) break; // uniform
                }
                append_slots(sbase, sbits, i, p.cee_cap, false);
                sbits = uvec4(0u);
                nslot = 0u;
            }
        }
        return;
    }
    // Two nested loops: llvmpipe bounds each loop at 65535 iterations per invocation.
    for (uint outer = first; outer < last; outer += 32768u * T) {
        uint stop = min(last, outer + 32768u * T);
        // Hits of a window of up to 32 entries starting at win, as bits.
        uint win = outer, hw = 0u;
        for (uint base = outer; base < stop; base += T) {
            // Entries past the edge entries hold stale records: only in-range ones are taken,
            // and the body index is clamped so the load stays in bounds.
            uint j = min(base + min(lane, T - 1u), p.entry_cap - 1u);
            uvec4 rb = recs[j];
            uint bb = 0u;
            if (FILTER == 1u) bb = body[min(rb.z, nv1)];
            // Register-only tests; hits are collected as bits (no memory access or atomic in
            // this loop).
            hw |= tile_hits(ra, ba, jbeg, jend, slack, base, rb, bb) << (base - win);
            if (base + 2u * T - win > 32u || base + T >= stop) {
                // Exact f32 tests of the window's hits and append: a loop, skipped at once when
                // no lane of the subgroup has a hit (llvmpipe runs both sides of branches).
                while (hw != 0u) {
                    uint jb = win + uint(findLSB(hw));
                    hw &= hw - 1u;
                    vec3 lo_b, hi_b;
                    edge_box(recs[jb].zw, lo_b, hi_b);
                    vec3 m = max(lo_a, lo_b);
                    bool ok = !any(greaterThan(m, min(hi_a, hi_b)));
                    ok = ok && cell_bucket(cell_of(m)) == bucket;
                    // Bounding spheres: dist >= |c_a - c_b| - r_a - r_b.
                    vec4 sb = box_sphere(lo_b, hi_b, p.pad_e);
                    vec3 dm = sb.xyz - sa.xyz;
                    float rs = (sa.w + sb.w + p.d) * SPHERE_MARGIN;
                    ok = ok && !(dot(dm, dm) > rs * rs);
                    if (ok) {
                        uint off = atomicAdd(count[0], 1u);
                        if (off < p.cee_cap) cands[off] = uvec2(i, jb);
                    }
                }
                win = base + T;
            }
        }
    }
}
