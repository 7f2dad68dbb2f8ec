#version 460
// Conservative CCD step bound of BAL's line search (spec A4, A8 step 8): per candidate slot of
// the proximity search, the time of impact of the straight motion x -> x + dir (ccd.glsl) with
// minimum separation xi d(x), i.e. the largest alpha that keeps the pair at least xi times its
// current distance apart (1 without a hit, and for empty slots); the host's min-reduction gives
// alpha_max. Every accepted iterate thus keeps d > 0. The candidates must hold every pair that
// can come within reach during the step (search distance >= d_hat + 2 max |dir|).
// Host: engine/src/contact/bal/graphs.rs. Reference: cpu_reference/bal/kernels.rs (ccd_bound).
#include "common.glsl"
#include "bal.glsl"
#include "ccd.glsl"
layout(std430, binding = 0) readonly buffer Params { BalParams prm; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer Dir { vec4 dir[]; };
layout(std430, binding = 3) readonly buffer CandVt { uvec4 cand_vt[]; };
layout(std430, binding = 4) readonly buffer CandEe { uvec4 cand_ee[]; };
layout(std430, binding = 5) readonly buffer Status { uint cand_status[]; };
layout(std430, binding = 6) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 7) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 8) writeonly buffer Toi { float toi[]; };
#include "candidates.glsl"

void main() {
    uint c = gl_GlobalInvocationID.x;
    if (c >= p.cap_vt + p.cap_ee) return;
    uint kind, a, b;
    uvec4 v;
    float t = 1.0;
    if (bal_candidate(c, kind, a, b, v)) {
        vec3 x0[4], x1[4];
        for (uint k = 0u; k < 4u; ++k) {
            x0[k] = x[v[k]].xyz;
            x1[k] = x0[k] + dir[v[k]].xyz;
        }
        float d0 = sqrt(bal_closest(kind, x0).sq_dist);
        float hit_t;
        uint flags;
        ccd_query(kind == BAL_KIND_PT ? CCD_POINT_TRIANGLE : CCD_EDGE_EDGE, x0, x1,
                  prm.xi * d0, hit_t, flags);
        if ((flags & CCD_FLAG_HIT) != 0u) t = hit_t;
    }
    toi[c] = t;
}
