#version 460
// Two-way IPM shared step fractions (Supple's extension of Eq. 20, `collision.step_fraction`):
// the vertices of one group (a body whose vertices move together, group[i] = its index;
// TW_NO_GROUP: per-vertex fractions) take one fraction per step, the smallest α_i of the
// group's collision-surface vertices, so the group keeps its shape during the solve (its
// interior vertices no longer run ahead of its surface). Each surface vertex's α_i is the
// forward step's (two_way_forward.comp, collider cap included): every vertex moves at most its own distance-bounded
// step, so the paper's guarantee holds unchanged. A group with a floor-released vertex this
// step falls back to per-vertex fractions (the release test assumes its own component
// fractions). Slot encoding: 0 = per-vertex this step, else float bits of the fraction + 1
// (atomicMin; reset to bits(1.0) + 1 by the graph before this dispatch). One vertex per
// invocation.
// Host: engine/src/contact/two_way/solve.rs. Reference: cpu_reference/two_way.rs::share_fractions.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer Dmin { uint dmin[]; };
layout(std430, binding = 4) readonly buffer OnSurface { uint on_surface[]; };
layout(std430, binding = 5) readonly buffer Blocked { uint blocked[]; };   // n + 1; [n]: unsettled
layout(std430, binding = 6) readonly buffer Group { uint group_of[]; };
layout(std430, binding = 7) buffer GroupFraction { uint group_fraction[]; };
layout(std430, binding = 8) readonly buffer Calpha { float calpha[]; };
layout(push_constant) uniform Push { TwParams p; };
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint i = tw_index();
    if (i >= p.n || on_surface[i] == 0u) return;
    uint g = group_of[i];
    if (g == TW_NO_GROUP) return;
    float dm = uintBitsToFloat(dmin[i]);
    if (dm < p.release_dist && blocked[i] == 0u && blocked[p.n] == 0u) {
        atomicMin(group_fraction[g], 0u);
        return;
    }
    float len = length(y[i].xyz - x[i].xyz);
    float alpha = tw_alpha(min(s.bound, dm) - p.step_sep, len, p.gamma);
    alpha = min(alpha, calpha[i]);
    atomicMin(group_fraction[g], floatBitsToUint(alpha) + 1u);
}
