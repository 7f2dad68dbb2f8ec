#version 460
// Two-way IPM backward step (§4.2) in ONE dispatch of ONE workgroup: the whole projected
// multicolor Gauss–Seidel sweep, every contact color then every edge-length color, with a
// workgroup barrier between colors instead of a dispatch per color. Same updates in the same
// color order as two_way_contact_sweep + two_way_edge_sweep (bit-identical results). For CPU
// Vulkan devices (lavapipe), where hundreds of dependent dispatches per step cost far more than
// the arithmetic; on GPUs one workgroup would idle the device (the per-color kernels are used).
// BARRIER = 1: the log-barrier baseline's gradient pass instead (every contact color, no edge
// constraints; the graph copies the dynamics target into y first).
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs (contact_sweep,
// edge_sweep, barrier_sweep).
#define TW_CONTACT_SWEEP
#define TW_EDGE_SWEEP
#define TW_BARRIER_SWEEP
#include "common.glsl"
#include "two_way.glsl"
layout(constant_id = 1) const uint BARRIER = 0;
layout(std430, binding = 0) readonly buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) buffer Y { vec4 y[]; };
layout(std430, binding = 3) readonly buffer ConsLo { uvec4 cons_lo[]; };
layout(std430, binding = 4) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 5) readonly buffer Offsets { uint offsets[]; };   // MAX_COLORS + 1
layout(std430, binding = 6) readonly buffer Grouped { uint grouped[]; };
layout(std430, binding = 7) buffer Lambda { float lambda[]; };
layout(std430, binding = 8) readonly buffer InvW { float inv_w[]; };
layout(std430, binding = 9) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 10) readonly buffer Rest { float rest[]; };
layout(std430, binding = 11) buffer LambdaE { float lambda_e[]; };
layout(std430, binding = 12) readonly buffer EdgeOffsets { uint edge_offsets[]; }; // p.count + 1
layout(std430, binding = 13) readonly buffer ConsHi { uvec4 cons_hi[]; };
layout(push_constant) uniform Push { TwParams p; };
#include "two_way_sweep.glsl"
void main() {
    // Uniform across the workgroup: every invocation reads the same flags.
    if ((s.flags & TW_STOP) != 0u) return;
    uint lid = gl_LocalInvocationID.x;
    // p.offset = the contact color limit (MAX_COLORS); colors past the last are empty.
    uint total = offsets[p.offset];
    for (uint c = 0u; c < p.offset && offsets[c] < total; ++c) {
        uint first = offsets[c], count = offsets[c + 1u] - first;
        for (uint k = lid; k < count; k += WG) {
            if (BARRIER != 0u) {
                tw_barrier_update(grouped[first + k]);
            } else {
                tw_contact_update(grouped[first + k]);
            }
        }
        memoryBarrierBuffer();
        barrier();
    }
    for (uint c = 0u; BARRIER == 0u && c < p.count; ++c) {
        for (uint e = edge_offsets[c] + lid; e < edge_offsets[c + 1u]; e += WG) tw_edge_update(e);
        memoryBarrierBuffer();
        barrier();
    }
}
