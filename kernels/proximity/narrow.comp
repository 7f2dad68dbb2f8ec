#version 460
// Exact distance filter of the candidates, one candidate per invocation (indirect dispatch over
// the candidate count): MODE 0 vertex–triangle (v, t), MODE 1 edge–edge as cell entries (a, b)
// (query_ee.comp), mapped to (min edge, max edge) through the sorted values. Keeps
// dist < D (f32, distance.glsl) and appends (a, b, closest-feature kind, squared distance bits)
// with an atomic counter; count[0] is the true count even past the pair capacity.
// Host: engine/src/proximity/spatial_hash.rs. Reference: cpu_reference/proximity.rs::narrow.
#include "common.glsl"
#include "distance.glsl"
#include "spatial_hash.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) readonly buffer X { vec4 x[]; };
layout(std430, binding = 1) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 2) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 3) readonly buffer CandCount { uint cand_count[]; };
layout(std430, binding = 4) readonly buffer Cands { uvec2 cands[]; };
layout(std430, binding = 5) buffer Count { uint count[]; };
layout(std430, binding = 6) writeonly buffer Pairs { uvec4 pairs[]; };
layout(std430, binding = 7) readonly buffer Vals { uint vals[]; };
void main() {
    uint i = flat_index();
    uint cap = MODE == 0u ? p.cvt_cap : p.cee_cap;
    if (i >= min(cand_count[0], cap)) return;
    uvec2 c = cands[i];
    if (MODE == 1u) {
        // Entries to edges (min edge, max edge).
        uint a = vals[c.x], b = vals[c.y];
        c = uvec2(min(a, b), max(a, b));
    }
    Closest cl;
    if (MODE == 0u) {
        uvec4 f = tris[c.y];
        cl = point_triangle_distance(x[c.x].xyz, x[f.x].xyz, x[f.y].xyz, x[f.z].xyz);
    } else {
        uvec2 ea = edges[c.x], eb = edges[c.y];
        cl = edge_edge_distance(x[ea.x].xyz, x[ea.y].xyz, x[eb.x].xyz, x[eb.y].xyz);
    }
    if (cl.sq_dist < p.d * p.d) {
        uint k = atomicAdd(count[0], 1u);
        uint pcap = MODE == 0u ? p.vt_cap : p.ee_cap;
        if (k < pcap) pairs[k] = uvec4(c.x, c.y, cl.kind, floatBitsToUint(cl.sq_dist));
    }
}
