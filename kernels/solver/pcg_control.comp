#version 460
// The device-driven PCG's decisions (no host round trip within a solve). Scalars of one solve
// start at `base` (slots below); the host writes TOL, MAX and WINDOW before the solve and reads
// ITER and REL after it. ctl_in / ctl_out are VkDispatchIndirectCommand (+ a done word): the
// SpMV and step kernels of the next iteration run with ctl_out's workgroup count, 0 once done.
// MODE 0 (after init, one workgroup): r·z, r·r, b·b from the partials; rel = ‖r‖/‖b‖ (0 when
//   b = 0); done when b = 0, rel ≤ TOL (or NaN) or MAX = 0, or r·z ≤ 0 (breakdown).
// MODE 1 (direction, every row workgroup, dispatched directly): when ctl_in is done, only
//   passes it on; otherwise β = rz_new / rz_old, p = z + β p, and workgroup 0 counts the
//   iteration, adds ½ α r·z_old to the quadratic model's decrease (α as pcg_update.comp
//   computed it, from the same p·q partials in the same order) and decides: done when rel is
//   not finite, rel ≤ TOL, p·q ≤ 0 or r·z_new ≤ 0 (breakdown: the step was 0 and CG cannot go
//   on), ITER ≥ MAX, or no new best residual for WINDOW iterations (stagnation). REMAIN:
//   ½ r·z now, the preconditioner's estimate of the model decrease still available.
// MODE 2 (run start, one workgroup; only where iterations are predicated, see below): the run's
//   predicate words: live[0] = 1 while the solve is unfinished (DONE = 0), live[1..K] = 0.
// Predicates (VK_EXT_conditional_rendering, `Dispatch::only_if`): iteration j of a run is
// skipped, not launched empty, while live[j] is 0. MODE 1 of iteration j writes live[j + 1]:
// 1 while the solve goes on, 0 once done (also when it only passes the decision on). So
// after a run, live[j] != 0 exactly for the iterations that ran, and an unfinished solve's run
// ends with every word 1. Reference: cpu_reference/pcg.rs (run_predicates).
// EXIT says why (0 running, 1 converged, 2 stagnated, 3 iteration cap, 4 breakdown,
// 5 non-finite residual). A NaN p·q or r·z is not a breakdown: it makes the residual NaN.
// Every workgroup reduces the partials in the same fixed order (wg_sum.glsl): same bits.
// Host: engine/src/linear/pcg.rs. Reference: cpu_reference/pcg.rs (DevicePcg, pcg_decision).
#include "common.glsl"
#include "wg_sum.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) buffer Scalars { float scalars[]; };
layout(std430, binding = 1) readonly buffer CtlIn { uvec4 ctl_in; };
layout(std430, binding = 2) writeonly buffer CtlOut { uvec4 ctl_out; };
// The partials and z are read through uniform texel buffer views (texelFetch); p is bound
// twice: read through pv_in (this invocation's row only), written through pv.
layout(binding = 3) uniform samplerBuffer part_rz;
layout(binding = 4) uniform samplerBuffer part_rr;
layout(binding = 5) uniform samplerBuffer part_bb;
layout(binding = 6) uniform samplerBuffer z;
layout(std430, binding = 7) writeonly buffer Pv { vec4 pv[]; };
layout(binding = 8) uniform samplerBuffer part_pq;
layout(std430, binding = 9) buffer Live { uint live[]; };
layout(binding = 10) uniform samplerBuffer pv_in;
// m: partials and row workgroups; base: first scalar of this solve; old_slot: which of the two
// r·z slots holds the current r·z (the new one goes to the other); it: the iteration's index in
// its run (MODE 1); k: iterations per run, the predicate words (0: none written).
layout(push_constant) uniform P { uint n; uint m; uint base; uint old_slot; uint it; uint k; } p;
const uint RZ = 0u, RR = 2u, BB = 3u, REL = 4u, ITER = 5u, BEST = 6u, BEST_AT = 7u,
           TOL = 8u, MAX = 9u, WINDOW = 10u, DONE = 11u, PQ = 12u, MODEL = 13u, EXIT = 14u,
           REMAIN = 15u;
const float CONVERGED = 1.0, STAGNATED = 2.0, CAP = 3.0, BREAKDOWN = 4.0, NON_FINITE = 5.0;

bool finite(float v) { return !(isnan(v) || isinf(v)); }

// The next iteration's dispatch arguments; DONE tells the host whether another run is needed.
uvec4 control(bool done) {
    scalars[p.base + DONE] = done ? 1.0 : 0.0;
    return uvec4(done ? 0u : p.m, 1u, 1u, done ? 1u : 0u);
}

// The next iteration's predicate word (the last iteration of a run has none).
void set_live(bool done) {
    if (p.it + 1u < p.k) live[p.it + 1u] = done ? 0u : 1u;
}

void main() {
    bool first = gl_WorkGroupID.x == 0u && gl_LocalInvocationID.x == 0u;
    if (MODE == 2u) {
        bool running = scalars[p.base + DONE] == 0.0;
        for (uint j = gl_LocalInvocationID.x; j < p.k; j += WG) {
            live[j] = (j == 0u && running) ? 1u : 0u;
        }
        return;
    }
    if (MODE == 0u) {
        vec3 sums;
        SUM_PARTIALS3(sums, part_rz, part_rr, part_bb, p.m);
        float rz = sums.x, rr = sums.y, bb = sums.z;
        if (!first) return;
        float rel = bb > 0.0 ? sqrt(rr) / sqrt(bb) : 0.0;
        float why = 0.0;
        if (!finite(rel)) why = NON_FINITE;
        else if (!(rel > scalars[p.base + TOL])) why = CONVERGED;
        else if (scalars[p.base + MAX] <= 0.0) why = CAP;
        else if (rz <= 0.0) why = BREAKDOWN;
        bool done = why != 0.0;
        scalars[p.base + RZ] = rz;
        scalars[p.base + RZ + 1u] = 0.0;
        scalars[p.base + RR] = rr;
        scalars[p.base + BB] = bb;
        scalars[p.base + REL] = rel;
        scalars[p.base + ITER] = 0.0;
        scalars[p.base + BEST] = rel;
        scalars[p.base + BEST_AT] = 0.0;
        scalars[p.base + PQ] = 0.0;
        scalars[p.base + MODEL] = 0.0;
        scalars[p.base + EXIT] = why;
        scalars[p.base + REMAIN] = 0.5 * rz;
        ctl_out = control(done);
        return;
    }
    uvec4 c = ctl_in;
    if (c.w != 0u) {
        if (first) {
            ctl_out = c;
            set_live(true);
        }
        return;
    }
    vec3 sums;
    SUM_PARTIALS3(sums, part_rz, part_rr, part_pq, p.m);
    float rz_new = sums.x, rr = sums.y, pq = sums.z;
    float rz_old = scalars[p.base + RZ + p.old_slot];
    float beta = rz_old > 0.0 ? rz_new / rz_old : 0.0;
    if (isinf(beta) || isnan(beta)) beta = 0.0;
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) pv[i] = vec4(texelFetch(z, int(i)).xyz + beta * texelFetch(pv_in, int(i)).xyz, 0.0);
    if (!first) return;
    float it = scalars[p.base + ITER] + 1.0;
    float rel = sqrt(rr) / sqrt(scalars[p.base + BB]);
    // The step length pcg_update.comp used (same partials, same order: same bits).
    float alpha = pq > 0.0 ? rz_old / pq : 0.0;
    if (isinf(alpha) || isnan(alpha)) alpha = 0.0;
    bool stagnated = false;
    if (finite(rel)) {
        if (rel < scalars[p.base + BEST]) {
            scalars[p.base + BEST] = rel;
            scalars[p.base + BEST_AT] = it;
        } else if (it - scalars[p.base + BEST_AT] >= scalars[p.base + WINDOW]) {
            stagnated = true;
        }
    }
    float why = 0.0;
    if (!finite(rel)) why = NON_FINITE;
    else if (!(rel > scalars[p.base + TOL])) why = CONVERGED;
    else if (pq <= 0.0 || rz_new <= 0.0) why = BREAKDOWN;
    else if (it >= scalars[p.base + MAX]) why = CAP;
    else if (stagnated) why = STAGNATED;
    bool done = why != 0.0;
    scalars[p.base + PQ] = pq;
    scalars[p.base + MODEL] += 0.5 * alpha * rz_old;
    scalars[p.base + EXIT] = why;
    scalars[p.base + REMAIN] = 0.5 * rz_new;
    scalars[p.base + RZ + 1u - p.old_slot] = rz_new;
    scalars[p.base + RR] = rr;
    scalars[p.base + REL] = rel;
    scalars[p.base + ITER] = it;
    ctl_out = control(done);
    set_live(done);
}
