#version 460
// Two-way IPM backward step (§4.2): one color of the projected multicolor Gauss–Seidel sweep
// over the contact constraints, linearised at x^(l), updating the target y and the
// multipliers λ (warm-started across steps). Constraints of one color share no vertex, so the
// updates of y are race-free. Indirect dispatch over the color's size (color_args).
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::contact_sweep.
#define TW_CONTACT_SWEEP
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer ConsLo { uvec4 cons_lo[]; };
layout(std430, binding = 4) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 5) readonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 6) readonly buffer Grouped { uint grouped[]; };
layout(std430, binding = 7) buffer Lambda { float lambda[]; };
layout(std430, binding = 8) readonly buffer InvW { float inv_w[]; };
layout(std430, binding = 9) readonly buffer ConsHi { uvec4 cons_hi[]; };
layout(push_constant) uniform Push { TwParams p; };
#include "two_way_sweep.glsl"
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint k = tw_index();
    uint first = offsets[p.offset];
    if (k >= offsets[p.offset + 1u] - first) return;
    tw_contact_update(grouped[first + k]);
}
