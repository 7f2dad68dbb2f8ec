#version 460
// Collision constraints from the shortest-path answers, one invocation per query slot: slot
// i < nv is vertex vertices[i]; slot nv + j is boundary edge edges[j] at the parameter of its
// query point. A slot with a valid path becomes the constraint (x_p - s(x)) . n >= offset with
// s(x) = sum_j b_j x_fj (barycentrics of the closest boundary point on its face, fixed for the
// substep) and the outward normal n at s (Chen et al. 2023, Eq. 6); a face that contains one of
// the point's own vertices gives no constraint; the point's vertices are flagged as penetrating.
// Host: engine/src/recovery/response.rs.
// Reference: engine/src/cpu_reference/recovery_response.rs (setup).
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Faces { uvec4 faces[]; };          // v0 v1 v2 tet
layout(std430, binding = 2) readonly buffer Vertices { uint vertices[]; };
layout(std430, binding = 3) readonly buffer Edges { uvec2 edges[]; };
layout(std430, binding = 4) readonly buffer QPoint { vec4 q_point[]; };
layout(std430, binding = 5) readonly buffer APoint { vec4 a_point[]; };        // s, |p-s|^2
layout(std430, binding = 6) readonly buffer ANormal { vec4 a_normal[]; };
layout(std430, binding = 7) readonly buffer AFace { uvec2 a_face[]; };         // face, kind
layout(std430, binding = 8) writeonly buffer CIdx { uvec4 c_idx[]; };          // p0 p1 face live
layout(std430, binding = 9) writeonly buffer CW { vec4 c_w[]; };               // w0 w1
layout(std430, binding = 10) writeonly buffer CB { vec4 c_b[]; };              // b0 b1 b2
layout(std430, binding = 11) writeonly buffer CN { vec4 c_n[]; };
layout(std430, binding = 12) writeonly buffer CF { uvec4 c_f[]; };             // face vertices
layout(std430, binding = 13) writeonly buffer Pen { uint penetrating[]; };    // per vertex              // n
layout(push_constant) uniform P { uint nq; uint nv; } p;
const uint NONE = 0xFFFFFFFFu;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.nq) return;
    uint face = a_face[i].x;
    uint p0, p1;
    float w0 = 1.0, w1 = 0.0;
    if (i < p.nv) {
        p0 = vertices[i];
        p1 = NONE;
    } else {
        uvec2 e = edges[i - p.nv];
        p0 = e.x;
        p1 = e.y;
        vec3 xa = pos[e.x].xyz;
        precise vec3 ab = pos[e.y].xyz - xa;
        precise float ll = dot(ab, ab);
        precise float t = ll > 0.0 ? dot(q_point[i].xyz - xa, ab) / ll : 0.5;
        t = clamp(t, 0.0, 1.0);
        w0 = 1.0 - t;
        w1 = t;
    }
    bool live = face != NONE;
    uvec4 f = uvec4(0u);
    if (live) f = faces[face];
    if (live && (any(equal(f.xyz, uvec3(p0))) || (p1 != NONE && any(equal(f.xyz, uvec3(p1)))))) {
        live = false;
    }
    vec3 b = vec3(0.0);
    if (live) {
        vec3 t0 = pos[f.x].xyz;
        precise vec3 e1 = pos[f.y].xyz - t0;
        precise vec3 e2 = pos[f.z].xyz - t0;
        precise vec3 d = a_point[i].xyz - t0;
        precise float d11 = dot(e1, e1);
        precise float d12 = dot(e1, e2);
        precise float d22 = dot(e2, e2);
        precise float d1 = dot(d, e1);
        precise float d2 = dot(d, e2);
        precise float den = d11 * d22 - d12 * d12;
        if (den > 0.0) {
            precise float u = (d22 * d1 - d12 * d2) / den;
            precise float v = (d11 * d2 - d12 * d1) / den;
            b = vec3(1.0 - u - v, u, v);
        } else {
            live = false;
        }
    }
    // Vertices of a live constraint are penetrating: the hybrid's CCD leaves them to this
    // constraint (cleared by the host before each detection).
    if (live) {
        penetrating[p0] = 1u;
        if (p1 != NONE) penetrating[p1] = 1u;
    }
    c_idx[i] = uvec4(p0, p1, live ? face : NONE, live ? 1u : 0u);
    c_w[i] = vec4(w0, w1, 0.0, 0.0);
    c_b[i] = vec4(b, 0.0);
    c_n[i] = vec4(a_normal[i].xyz, 0.0);
    c_f[i] = uvec4(f.xyz, 0u);
}
