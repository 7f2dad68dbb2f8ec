#version 460
// Two-way IPM, start of a step: the exact distance of every contact pair at x^(l) lowers
// dmin[i] (float bits, atomicMin) of each of its vertices (Eq. 18) and the solve's minimum
// distance. With floor release (p.release_dist = θ > 0): also stores the pair's separating
// direction and distance (closest i = (n, d), split over two bindings, two_way.glsl::tw_separating_direction) and, for
// pairs at least θ apart (non-floor pairs) and closer than D^(l), lowers dfree[i] of its
// vertices (the forward step uses min(D^(l), dfree[i])); floor pairs (closer than θ) are
// appended to floor_list (count in blocked[n + 1], reset by two_way_release.comp). One pair per invocation (indirect dispatch over the
// pair count, meta[2..5]).
// Host: engine/src/collision/two_way.rs. Reference: cpu_reference/two_way.rs::vertex_distances
// and cpu_reference/two_way.rs::floor_distances.
#include "common.glsl"
#include "two_way.glsl"
layout(std430, binding = 0) buffer State { TwState s; };
layout(std430, binding = 1) readonly buffer X { vec4 x[]; };
layout(std430, binding = 2) readonly buffer ConsLo { uvec4 cons_lo[]; };
layout(std430, binding = 3) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 4) buffer Dmin { uint dmin[]; };
layout(std430, binding = 5) buffer Dfree { uint dfree[]; };
layout(std430, binding = 6) buffer PairClosestLo { vec4 closest_lo[]; };
layout(std430, binding = 7) writeonly buffer FloorList { uint floor_list[]; };
layout(std430, binding = 8) buffer Blocked { uint blocked[]; }; // [n + 1]: floor pairs listed
layout(std430, binding = 9) readonly buffer ConsHi { uvec4 cons_hi[]; };
layout(std430, binding = 10) buffer PairClosestHi { vec4 closest_hi[]; };
layout(push_constant) uniform Push { TwParams p; };
#define TW_SPLIT_CONS
#define TW_SPLIT_CLOSEST
#define TW_SPLIT_CLOSEST_WRITE
#include "two_way_split.glsl"
void main() {
    if ((s.flags & TW_STOP) != 0u) return;
    uint i = tw_index();
    if (i >= meta[1]) return;
    uvec4 v = tw_con(i);
    vec3 q[4] = vec3[4](x[v.x].xyz, x[v.y].xyz, x[v.z].xyz, x[v.w].xyz);
    Closest cl = tw_closest(i < meta[0] ? TYPE_VT : TYPE_EE, q);
    float dist = sqrt(cl.sq_dist);
    uint d = floatBitsToUint(dist);
    atomicMin(dmin[v.x], d);
    atomicMin(dmin[v.y], d);
    atomicMin(dmin[v.z], d);
    atomicMin(dmin[v.w], d);
    if (p.release_dist > 0.0) {
        if (dist < p.release_dist) floor_list[atomicAdd(blocked[p.n + 1u], 1u)] = i;
        tw_set_closest(i, vec4(tw_separating_direction(i < meta[0] ? TYPE_VT : TYPE_EE, cl.kind, q, cl.diff), dist));
        // Only min(D^(l), dfree) is used: farther pairs cannot lower it (and a plain read
        // first skips most atomics).
        if (!(dist < p.release_dist) && dist < s.bound) {
            for (uint q = 0u; q < 4u; ++q) {
                if (dfree[v[q]] > d) atomicMin(dfree[v[q]], d);
            }
        }
    }
    uint m = subgroupMin(d);
    if (subgroupElect()) atomicMin(s.min_dist, m);
}
