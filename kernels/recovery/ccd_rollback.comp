#version 460
// Fail-safe of the CCD response, one invocation per vertex: a vertex flagged by a fail-safe
// pass of ccd_contacts.comp (its pair still collides over the substep after the response) goes
// back to its start-of-substep position, and the flag is cleared. Repeated until no pair
// collides, this leaves only motions CCD has checked (at worst the whole substep undone, which
// is as intersection-free as its start). Host: engine/src/recovery/ccd.rs.
// Reference: cpu_reference/recovery_response.rs (rollback).
#include "common.glsl"
layout(std430, binding = 0) buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer PosPrev { vec4 pos_prev[]; };
layout(std430, binding = 2) buffer Back { uint rollback[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    if (rollback[i] != 0u) {
        pos[i] = pos_prev[i];
        rollback[i] = 0u;
    }
}
