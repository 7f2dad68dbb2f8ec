#version 460
// Two-way IPM, after a proximity search, its constraint build and coloring run within a step
// batch (TwoWay::set_batch_searches; the section is gated on the search flag): when the search
// fit its buffers (the status checks of ProximitySearch::finish_submitted), the solve takes the
// new pairs — reuse bound D_max, the search flag cleared, the pair count, and the counters the
// host reads after the batch. When it overflowed, the constraints hold an incomplete pair set:
// the reuse bound is dropped under D_min and the search flag kept, so every later step of the
// batch returns at once and the host searches again with larger buffers. One invocation.
// Host: engine/src/contact/two_way/solve.rs. Reference: cpu_reference/two_way.rs (a search at x
// is valid whatever the bound, Solver::solve).
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) buffer State { TwState s; };
// {entries, vt, ee, candidates vt, candidates ee, saturated, one frame} (proximity/finish.comp)
layout(std430, binding = 1) readonly buffer SearchStatus { uint status[]; };
layout(std430, binding = 2) readonly buffer Meta { uint meta[]; };
// {0, overflowed, colors used, rounds} (coloring/jp_workgroup.comp)
layout(std430, binding = 3) readonly buffer ColoringStatus { uint coloring[]; };
layout(push_constant) uniform Push {
    float d_max;
    uint entry_cap;
    uint vt_cap;
    uint ee_cap;
    uint cvt_cap;
    uint cee_cap;
};
void main() {
    if (gl_GlobalInvocationID.x != 0u) return;
    bool fits = status[0] <= entry_cap && status[5] == 0u && status[1] <= vt_cap
        && status[2] <= ee_cap && status[3] <= cvt_cap && status[4] <= cee_cap;
    if (!fits) {
        s.bound = -1.0;
        s.flags |= TW_SEARCH;
        return;
    }
    s.bound = d_max;
    s.flags &= ~TW_SEARCH;
    s.pairs = meta[1];
    s.searches += 1u;
    s.pairs_max = max(s.pairs_max, meta[1]);
    s.colors_max = max(s.colors_max, coloring[2]);
    s.uncolored_max = max(s.uncolored_max, coloring[1]);
}
