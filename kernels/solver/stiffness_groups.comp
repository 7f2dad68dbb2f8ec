#version 460
// Stiffness group per node (paper §4.2.2): g = floor(log10(max(e, 10^GROUP_MIN))), clamped to
// GROUP_MAX, as the largest k with thresholds[k - GROUP_MIN] <= e. The thresholds are the f32
// powers of ten uploaded by the host, so the comparisons (and the groups) equal the CPU
// reference bit for bit; log2 only gives the starting guess.
// Host: engine/src/solver/pcg.rs. Reference: cpu_reference/pcg.rs (stiffness_groups).
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Stiffness { float stiffness[]; };
layout(std430, binding = 1) readonly buffer Thresholds { float thresholds[]; };
layout(std430, binding = 2) writeonly buffer Groups { int groups[]; };
layout(push_constant) uniform P { uint n; int group_min; int group_max; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    float lo = thresholds[0];
    float e = stiffness[i];
    // NaN, zero and negative estimates go to the smallest group; +inf to the largest.
    e = e > lo ? min(e, 3.0e38) : lo;
    int g = clamp(int(floor(log2(e) * 0.30103)), p.group_min, p.group_max);
    // Correct the guess (off by at most one or two) with exact comparisons; bounded loops.
    for (int k = 0; k < 4 && g > p.group_min && e < thresholds[g - p.group_min]; ++k) --g;
    for (int k = 0; k < 4 && g < p.group_max && thresholds[g + 1 - p.group_min] <= e; ++k) ++g;
    groups[i] = g;
}
