#version 460
// CCD collision constraints of the hybrid detection (Chen, Diaz and Yuksel 2023, §4.3: CCD for
// new collisions, DCD with the shortest path for what was already intersecting), one invocation
// per proximity pair: the pair's linear motion from pos_prev (start of the substep) to pos is
// tested with the conservative CCD of ccd.glsl at separation `offset`; a hit becomes the
// constraint (sum_k w_k x_k) . n >= offset on the pair's four vertices, with the closest-point
// weights w at the time of impact (point side: vertex, or edge a at s; face side: triangle
// barycentrics, or edge b at t) and n the triangle's outward normal at impact (vertex–triangle:
// only a vertex entering through the face counts; one leaving through it is not pulled back) or
// the edges' cross product at impact oriented by their separation at the start (edge–edge; the
// start separation itself for parallel edges). A miss leaves the slot as it is (constraints stay
// active for the rest of the substep; the host clears them per substep and per new search).
// A slot that becomes live is appended to `live` (count in live_count), the list the
// projection runs over. Edge–edge pairs with a vertex flagged as penetrating by the
// shortest-path detection (contact_setup.comp) are skipped. With `failsafe` set, a hit flags
// the pair's vertices for rollback instead of writing a constraint. MODE 0: vertex–triangle
// pairs, MODE 1: edge–edge pairs (slots base + i).
// Host: engine/src/recovery/ccd.rs. Reference: cpu_reference/recovery_response.rs (ccd_contact).
#include "common.glsl"
#include "ccd.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer PosPrev { vec4 pos_prev[]; };
layout(std430, binding = 2) readonly buffer Status { uint status[]; };   // search: [1] vt, [2] ee
layout(std430, binding = 3) readonly buffer Pairs { uvec4 pairs[]; };    // a b kind sq_dist
layout(std430, binding = 4) readonly buffer Tris { uvec4 tris[]; };
layout(std430, binding = 5) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 6) buffer CIdx { uvec4 c_idx[]; };             // p0 p1 tri live
layout(std430, binding = 7) writeonly buffer CW { vec4 c_w[]; };
layout(std430, binding = 8) writeonly buffer CB { vec4 c_b[]; };
layout(std430, binding = 9) writeonly buffer CN { vec4 c_n[]; };
layout(std430, binding = 10) writeonly buffer CF { uvec4 c_f[]; };
layout(std430, binding = 11) buffer Hits { uint hits[]; };
layout(std430, binding = 12) readonly buffer Pen { uint penetrating[]; };   // per vertex
layout(std430, binding = 13) writeonly buffer Back { uint rollback[]; };   // per vertex
layout(std430, binding = 14) buffer LiveCount { uint live_count[]; };
layout(std430, binding = 15) writeonly buffer Live { uint live[]; };      // live slots
layout(push_constant) uniform P { uint cap; uint base; float offset; uint failsafe; } p;
const uint NONE = 0xFFFFFFFFu;

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint count = min(status[1u + MODE], p.cap);
    if (i >= count) return;
    uvec4 pr = pairs[i];
    uint v[4];
    if (MODE == 0u) {
        uvec4 t = tris[pr.y];
        v = uint[4](pr.x, t.x, t.y, t.z);
    } else {
        uvec2 a = edges[pr.x];
        uvec2 b = edges[pr.y];
        v = uint[4](a.x, a.y, b.x, b.y);
    }
    // Edges of points the shortest path is resolving (penetrating at the start of the substep)
    // are left to it: an edge–edge constraint would hold them on the wrong side of the surface
    // they are leaving. Their vertices keep their vertex–triangle constraints (a vertex leaving
    // through a face is never held, see above).
    if (MODE == 1u) {
        for (uint k = 0u; k < 4u; ++k) {
            if (penetrating[v[k]] != 0u) return;
        }
    }
    vec3 x0[4], x1[4];
    for (uint k = 0u; k < 4u; ++k) {
        x0[k] = pos_prev[v[k]].xyz;
        x1[k] = pos[v[k]].xyz;
    }
    float toi;
    uint flags;
    ccd_query(MODE, x0, x1, p.offset, toi, flags);
    if ((flags & CCD_FLAG_HIT) == 0u) return;
    vec3 xt[4];
    for (uint k = 0u; k < 4u; ++k) xt[k] = x0[k] + (x1[k] - x0[k]) * toi;
    Closest c;
    vec3 n;
    if (MODE == 0u) {
        c = point_triangle_distance(xt[0], xt[1], xt[2], xt[3]);
        n = cross(xt[2] - xt[1], xt[3] - xt[1]);
        // Only a vertex entering through the face (moving against its outward normal) collides:
        // one leaving the body through it (or passing on through a thin part) is not stopped.
        vec3 rel = x1[0] - x0[0] + (x1[1] - x0[1]) * c.w.y + (x1[2] - x0[2]) * c.w.z +
                   (x1[3] - x0[3]) * c.w.w;
        if (dot(rel, n) > 0.0) return;
    } else {
        c = edge_edge_distance(xt[0], xt[1], xt[2], xt[3]);
        n = cross(xt[1] - xt[0], xt[3] - xt[2]);
        Closest s = edge_edge_distance(x0[0], x0[1], x0[2], x0[3]);
        // Nearly parallel edges (sine under 1e-3): the start separation's direction.
        if (!(length(n) > 1e-3 * length(xt[1] - xt[0]) * length(xt[3] - xt[2]))) n = s.diff;
        else if (dot(n, s.diff) < 0.0) n = -n;
    }
    float l = length(n);
    if (!(l > 0.0)) return;
    n /= l;
    atomicAdd(hits[0], 1u);
    if (p.failsafe != 0u) {
        // Fail-safe pass: the pair still collides after the response; its vertices go back
        // to the start of the substep (ccd_rollback.comp).
        for (uint k = 0u; k < 4u; ++k) rollback[v[k]] = 1u;
        return;
    }
    uint slot = p.base + i;
    // A slot that becomes live joins the compact list the projection runs over (one invocation
    // per slot, so the check-then-append has no race).
    if (c_idx[slot].w == 0u) live[atomicAdd(live_count[0], 1u)] = slot;
    c_idx[slot] = uvec4(v[0], MODE == 0u ? NONE : v[1], MODE == 0u ? pr.y : NONE, 1u);
    c_w[slot] = vec4(c.w.x, MODE == 0u ? 0.0 : c.w.y, 0.0, 0.0);
    c_b[slot] = MODE == 0u ? vec4(-c.w.y, -c.w.z, -c.w.w, 0.0) : vec4(-c.w.z, -c.w.w, 0.0, 0.0);
    c_n[slot] = vec4(n, 0.0);
    c_f[slot] = MODE == 0u ? uvec4(v[1], v[2], v[3], 0u) : uvec4(v[2], v[3], NONE, 0u);
}
