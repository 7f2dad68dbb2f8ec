#version 460
// Edge–edge candidates, one invocation per sorted cell entry: entry a of an edge bucket pairs
// with the later entries b of its bucket (an edge has at most one entry per bucket). A pair is
// taken only in the bucket of the cell holding the minimum corner of the intersection of the
// two (D/2)-inflated boxes (that cell lies in both boxes, so both edges have entries in that
// bucket: each pair is found exactly once). Pairs sharing a vertex, rejected by the body filter
// or by bounding spheres grown by D are skipped.
//
// Subgroup tiles (llvmpipe runs 8 lanes as one SIMD row; per-lane loads and stores there are
// scalar loops over the lanes, register shuffles are cheap): the subgroup scans the union of
// its lanes' ranges (i, end of bucket) in tiles of TILE entries. Lane k < TILE loads entry
// base + k (box, vertices, body, bounding sphere); the tile's entries are then shuffled to all
// lanes one at a time (unrolled, constant lane), so every lane tests its own entry against them
// with register data only, collecting hits as bits. Each lane appends its hits of a tile with
// one atomic (min edge, max edge); count[0] is the true count even past cee_cap. Needs
// subgroups of at least TILE lanes. narrow.comp keeps the candidates with exact dist < D.
// Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs::query_edge_edge.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "spatial_hash.glsl"
// Entries per tile (at most 32, at most the subgroup size).
layout(constant_id = 1) const uint TILE = 8;
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Body { uint body[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 3) readonly buffer Keys { uint keys[]; };
layout(std430, binding = 4) readonly buffer Boxes { vec4 boxes[]; };
layout(std430, binding = 5) readonly buffer Ranges { uvec2 ranges[]; };
layout(std430, binding = 6) buffer Count { uint count[]; };
layout(std430, binding = 7) writeonly buffer Cands { uvec2 cands[]; };

// One entry's data for the pair tests.
struct Rec {
    vec3 lo;   // inflated box
    vec3 hi;
    uint id;   // edge index
    uvec2 v;   // vertices
    uint body; // body of v.x
    vec4 sph;  // bounding sphere (centre, radius)
};

// Entry j (a valid edge entry when `ok`; zeros otherwise, never read out of bounds).
Rec load_rec(uint j, bool ok) {
    Rec r;
    if (ok) {
        vec4 l = boxes[2u * j];
        r.lo = l.xyz;
        r.hi = boxes[2u * j + 1u].xyz;
        r.id = floatBitsToUint(l.w);
        r.v = edges[r.id];
        r.body = body[r.v.x];
        vec3 a = x[r.v.x].xyz, b = x[r.v.y].xyz;
        r.sph = vec4(0.5 * (a + b), 0.5 * length(b - a));
    } else {
        r.lo = vec3(0.0);
        r.hi = vec3(0.0);
        r.id = 0u;
        r.v = uvec2(0xffffffffu);
        r.body = 0u;
        r.sph = vec4(0.0);
    }
    return r;
}

bool is_edge_entry(uint j) {
    if (j >= p.entry_cap) return false;
    uint key = keys[j];
    return key < (2u << (p.table_bits + QB)) && (key >> (p.table_bits + QB)) == 1u;
}

void main() {
    uint i = flat_index();
    // No early return: the whole subgroup takes part in the tile loop.
    bool valid = is_edge_entry(i);
    uint bucket = 0u, jend = 0u;
    if (valid) {
        uint key = keys[i];
        bucket = (key >> QB) & ((1u << p.table_bits) - 1u);
        jend = ranges[key >> QB].y;
    }
    Rec a = load_rec(i, valid);
    uint jbeg = i + 1u;
    if (!valid || jbeg >= jend) {
        valid = false;
        jbeg = 0xffffffffu;
        jend = 0u;
    }
    // Tiles of T entries (at most 32: one hit bit per tile entry); lanes past T load nothing.
    const uint T = TILE;
    uint lane = gl_SubgroupInvocationID;
    uint first = subgroupMin(jbeg);
    uint last = subgroupMax(jend);
    if (first >= last) return; // uniform
    first -= first % T;
    // Two nested loops: llvmpipe bounds each loop at 65535 iterations per invocation.
    for (uint outer = first; outer < last; outer += 32768u * T) {
        uint stop = min(last, outer + 32768u * T);
        for (uint base = outer; base < stop; base += T) {
            uint j = base + lane;
            Rec b = load_rec(j, lane < T && is_edge_entry(j));
            // Register-only pair tests against the tile's entries, one broadcast entry per
            // round; hits are collected as bits (no memory access or atomic in this loop).
            uint hits = 0u;
            [[unroll]] for (uint r = 0u; r < T; ++r) {
                uint jb = base + r;
                vec3 blo = subgroupShuffle(b.lo, r);
                vec3 bhi = subgroupShuffle(b.hi, r);
                uvec2 vb = subgroupShuffle(b.v, r);
                uint bb = subgroupShuffle(b.body, r);
                vec4 sb = subgroupShuffle(b.sph, r);
                vec3 m = max(a.lo, blo);
                bool take = jb >= jbeg && jb < jend;
                take = take && !any(greaterThan(m, min(a.hi, bhi)));
                take = take && cell_bucket(cell_of(m)) == bucket;
                take = take && vb.x != a.v.x && vb.x != a.v.y && vb.y != a.v.x && vb.y != a.v.y;
                take = take && pair_allowed(a.body, bb);
                // Bounding spheres: dist >= |mid_a - mid_b| - r_a - r_b.
                vec3 dm = sb.xyz - a.sph.xyz;
                float rs = (a.sph.w + sb.w + p.d) * SPHERE_MARGIN;
                take = take && !(dot(dm, dm) > rs * rs);
                hits |= take ? (1u << r) : 0u;
            }
            // Append this lane's hits (loops, not branches: they are skipped at once when no
            // lane of the subgroup has a hit).
            uint nh = bitCount(hits);
            for (uint once = nh; once != 0u; once = 0u) {
                uint off = atomicAdd(count[0], nh);
                while (hits != 0u) {
                    uint r = uint(findLSB(hits));
                    hits &= hits - 1u;
                    uint eb = floatBitsToUint(boxes[2u * (base + r)].w);
                    if (off < p.cee_cap) cands[off] = uvec2(min(a.id, eb), max(a.id, eb));
                    ++off;
                }
            }
        }
    }
}
