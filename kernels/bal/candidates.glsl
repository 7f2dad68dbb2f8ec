// Candidate stencils of the BAL kernels, read from the proximity search's pair lists
// (engine/src/proximity/spatial_hash.rs): slots [0, cap_vt) are vertex-triangle records
// [v, t, kind, d^2 bits] (the first status[1] valid), slots [cap_vt, cap_vt + cap_ee) edge-edge
// records [ea, eb, kind, d^2 bits] (the first status[2] valid). The including kernel declares
// cand_vt, cand_ee, cand_status, tris and edges. Twin: cpu_reference/bal/kernels.rs
// (candidate_stencils).
#ifndef SUPPLE_BAL_CANDIDATES_GLSL
#define SUPPLE_BAL_CANDIDATES_GLSL

// Kind, primitives (a, b) and corner vertices of candidate slot c; false for an empty slot.
bool bal_candidate(uint c, out uint kind, out uint a, out uint b, out uvec4 v) {
    kind = BAL_KIND_PT;
    a = 0u;
    b = 0u;
    v = uvec4(0u);
    if (c < p.cap_vt) {
        if (c >= min(cand_status[1], p.cap_vt)) return false;
        uvec4 r = cand_vt[c];
        a = r.x;
        b = r.y;
        uvec4 t = tris[b];
        v = uvec4(a, t.x, t.y, t.z);
        return true;
    }
    uint e = c - p.cap_vt;
    if (e >= p.cap_ee || e >= min(cand_status[2], p.cap_ee)) return false;
    uvec4 r = cand_ee[e];
    kind = BAL_KIND_EE;
    a = r.x;
    b = r.y;
    v = uvec4(edges[a], edges[b]);
    return true;
}

#endif
