// Collecting the hits of the query tiles (query_ee.comp, query_vt.comp) in a few register slots
// per lane and appending them with one atomic per lane and flush instead of one per hit (on
// llvmpipe every atomic, store and most subgroup operations are scalar loops over the lanes, so
// the number of flushes is what costs). Include after declaring `count` (uint[],
// count[0]: true number of candidates), `cands` (uvec2[]) and `recs` (uvec4[]).
#ifndef SUPPLE_APPEND_HITS_GLSL
#define SUPPLE_APPEND_HITS_GLSL

// Tiles with hits a lane keeps before the subgroup flushes them.
const uint SLOTS = 4u;

// Records the hit bits of the tile starting at `base` in the next free slot (no-op without
// hits). Register selects only (no dynamic indexing, which llvmpipe lowers to memory).
void push_slot(inout uvec4 sbase, inout uvec4 sbits, inout uint nslot, uint base, uint hits) {
    bool put = hits != 0u;
    sbase = mix(sbase, uvec4(base), bvec4(put && nslot == 0u, put && nslot == 1u,
                                         put && nslot == 2u, put && nslot == 3u));
    sbits = mix(sbits, uvec4(hits), bvec4(put && nslot == 0u, put && nslot == 1u,
                                         put && nslot == 2u, put && nslot == 3u));
    nslot += put ? 1u : 0u;
}

// Appends (a, e) for the entry e = sbase[k] + b of every set bit b of every slot's sbits[k]
// (or (a, recs[e].z), the triangle of a triangle entry's record, when `record_id`): one atomic
// per lane with hits reserves its total, then the lane writes its hits in slot and bit order,
// one per iteration of a single loop (as many iterations as the busiest lane has hits).
void append_slots(uvec4 sbase, uvec4 sbits, uint a, uint cap, bool record_id) {
    uint cnt = bitCount(sbits.x) + bitCount(sbits.y) + bitCount(sbits.z) + bitCount(sbits.w);
    uint off = 0u;
    if (cnt != 0u) off = atomicAdd(count[0], cnt);
    for (uint end = off + cnt; off < end; ++off) {
        // First non-empty slot, its lowest hit, then shift the slots down when it empties.
        uint e = sbase.x + uint(findLSB(sbits.x));
        if (off < cap) cands[off] = uvec2(a, record_id ? recs[e].z : e);
        sbits.x &= sbits.x - 1u;
        if (sbits.x == 0u) {
            sbits = uvec4(sbits.yzw, 0u);
            sbase = uvec4(sbase.yzw, 0u);
        }
    }
}

#endif
