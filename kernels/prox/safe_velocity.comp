#version 460
// Safe mode's velocity update after the position limit, one invocation per node: where the
// conservative bounds moved a node off the stepper's proposal (x ≠ x_proposed), its velocity
// becomes the one its positions took, u = (x − x_start) / h, scaled down to the speed it had
// (|v| after ≤ |v| before) so that the limit never adds kinetic energy (its forward steps also
// push primitives closer than their minimum distance apart, which is no velocity); elsewhere v
// is left as it is (it already equals (x_proposed − x_start) / h up to rounding).
// Host: engine/src/contact/prox/nodes.rs. Reference: cpu_reference/prox/nodes.rs::safe_velocity.
#include "common.glsl"
layout(std430, binding = 0) readonly buffer XStart { vec4 x_start[]; };
layout(std430, binding = 1) readonly buffer XProposed { vec4 x_proposed[]; };
layout(std430, binding = 2) readonly buffer X { vec4 x[]; };
layout(std430, binding = 3) buffer V { vec4 v[]; };
layout(push_constant) uniform Push { uint n; float inv_h; uint pad0; uint pad1; } p;
void main() {
    uint stride = WG * gl_NumWorkGroups.x;
    for (uint a = gl_GlobalInvocationID.x; a < p.n; a += stride) {
        vec3 xa = x[a].xyz;
        if (any(notEqual(xa, x_proposed[a].xyz))) {
            vec3 u = (xa - x_start[a].xyz) * p.inv_h;
            float vv = dot(v[a].xyz, v[a].xyz);
            float uu = dot(u, u);
            if (uu > vv) u *= sqrt(vv / uu);
            v[a].xyz = u;
        }
    }
}
