#version 460
// Log-barrier baseline of the two-way IPM paper (§3.4, Eq. 7–8) in place of the backward step:
// one color of the barrier gradient at x^(l). The step's target starts as the dynamics target
// y^[k+1] (copied by the graph) and every pair closer than the range d̂ subtracts its share of
// the preconditioned gradient (two_way_sweep.glsl::tw_barrier_update); the forward step then
// moves x toward it with the same bounded step sizes. Constraints of one color share no vertex:
// race-free, deterministic. The fused sweep (two_way_fused_sweep.comp, BARRIER = 1) does every
// color in one dispatch.
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::barrier_sweep.
#define TW_BARRIER_SWEEP
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer ConsLo { uvec4 cons_lo[]; };
layout(std430, binding = 4) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 5) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 6) readonly buffer Grouped { uint grouped[]; };
layout(std430, binding = 7) readonly buffer InvW { float inv_w[]; };
layout(std430, binding = 8) readonly buffer ConsHi { uvec4 cons_hi[]; };
layout(push_constant) uniform Push { TwParams p; };
#include "two_way_sweep.glsl"
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint k = tw_index();
    uint first = offsets[p.offset];
    if (k >= offsets[p.offset + 1u] - first) return;
    tw_barrier_update(grouped[first + k]);
}
