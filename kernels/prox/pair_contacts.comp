#version 460
// Supple's proximity pairs → PROX contacts, one invocation per pair (vertex–triangle pairs
// first, then edge–edge; counts from the search's status): exact closest points (distance.glsl)
// give the signed weights (Σ w x = closest-point difference), the unit difference the normal
// (from the second primitive toward the first), the distance the gap. A pair at distance 0 has
// no normal and becomes an inactive contact (no nodes). Invocation 0 writes meta[0] (contacts,
// capped at the capacity) and meta[2] (the true count).
// Host: engine/src/contact/prox/pairs.rs. Reference: cpu_reference/prox/generation.rs::pair_contact.
#include "common.glsl"
#include "distance.glsl"
#include "prox.glsl"
layout(std430, binding = 0) readonly buffer SearchStatus { uint search_status[]; };
layout(std430, binding = 1) readonly buffer PairsVt { uvec4 pairs_vt[]; };
layout(std430, binding = 2) readonly buffer PairsEe { uvec4 pairs_ee[]; };
layout(std430, binding = 3) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 4) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 5) readonly buffer X { vec4 x[]; };
layout(std430, binding = 6) buffer Meta { uint meta[]; };
layout(std430, binding = 7) writeonly buffer Nodes { uvec4 nodes[]; };
layout(std430, binding = 8) writeonly buffer Weights { vec4 weights[]; };
layout(std430, binding = 9) writeonly buffer Frame { vec4 frame[]; };
layout(push_constant) uniform Push {
    uint cap;      // contact capacity
    uint vt_cap;   // pair list capacities
    uint ee_cap;
    uint pad;
    float mu;      // friction
    float eps;     // restitution
} q;
void main() {
    uint nvt = min(search_status[1], q.vt_cap);
    uint nee = min(search_status[2], q.ee_cap);
    uint total = nvt + nee;
    if (gl_GlobalInvocationID.x == 0u) {
        meta[0] = min(total, q.cap);
        meta[2] = total;
    }
    uint kc = min(total, q.cap);
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint k = gl_GlobalInvocationID.x; k < kc; k += stride) {
        uvec4 v;
        Closest cl;
        if (k < nvt) {
            uvec4 r = pairs_vt[k];
            uvec4 t = tris[r.y];
            v = uvec4(r.x, t.x, t.y, t.z);
            cl = point_triangle_distance(x[v.x].xyz, x[v.y].xyz, x[v.z].xyz, x[v.w].xyz);
        } else {
            uvec4 r = pairs_ee[k - nvt];
            uvec2 ea = edges[r.x], eb = edges[r.y];
            v = uvec4(ea.x, ea.y, eb.x, eb.y);
            cl = edge_edge_distance(x[v.x].xyz, x[v.y].xyz, x[v.z].xyz, x[v.w].xyz);
        }
        float d = length(cl.diff);
        vec3 n = vec3(0.0, 0.0, 1.0);
        if (d > 0.0) {
            n = cl.diff / d;
            nodes[2u * k] = v;
            weights[2u * k] = cl.w;
        } else {
            nodes[2u * k] = uvec4(NO_NODE);
            weights[2u * k] = vec4(0.0);
            d = 0.0;
        }
        nodes[2u * k + 1u] = uvec4(NO_NODE);
        weights[2u * k + 1u] = vec4(0.0);
        vec3 s, t;
        prox_tangents(n, s, t);
        frame[3u * k] = vec4(n, q.mu);
        frame[3u * k + 1u] = vec4(s, q.eps);
        frame[3u * k + 2u] = vec4(t, d);
    }
}
