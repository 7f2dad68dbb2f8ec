#version 460
// One Jacobi projection of the collision constraints (x_p - s(x)) . n >= offset, one invocation
// per constraint slot base + i (shortest-path slots, or CCD slots of ccd_contacts.comp): a violated constraint moves the point side (weights w) along +n and the face
// side (barycentrics b) along -n in proportion to inverse masses (PBD, zero compliance), then
// applies position-based Coulomb friction (a projection closes at most max_step of the
// violation) (Bender et al. 2015): the relative tangential motion
// over the substep is cancelled when it is below mu times the normal correction, otherwise
// reduced by that much. Corrections are summed per vertex in fixed point (integer atomics:
// deterministic in any order) with a count; contact_apply.comp averages them.
// Host: engine/src/recovery/response.rs. Reference: engine/src/cpu_reference/recovery_response.rs.
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer PosPrev { vec4 pos_prev[]; };
layout(std430, binding = 2) readonly buffer InvMass { float inv_mass[]; };
layout(std430, binding = 3) readonly buffer CF { uvec4 c_f[]; };           // face-side vertices
layout(std430, binding = 4) readonly buffer CIdx { uvec4 c_idx[]; };
layout(std430, binding = 5) readonly buffer CW { vec4 c_w[]; };
layout(std430, binding = 6) readonly buffer CB { vec4 c_b[]; };
layout(std430, binding = 7) readonly buffer CN { vec4 c_n[]; };
layout(std430, binding = 8) buffer Accum { ivec4 accum[]; };
// LIST = 1 (CCD constraints): invocation i projects slot list[i], i < list_count[0].
layout(std430, binding = 9) readonly buffer ListCount { uint list_count[]; };
layout(std430, binding = 10) readonly buffer List { uint list[]; };
layout(constant_id = 1) const uint LIST = 0u;
layout(push_constant) uniform P {
    uint nc; uint base; float offset; float mu; float scale; float max_step;
} p;
const uint NONE = 0xFFFFFFFFu;

void add(uint v, vec3 d) {
    ivec3 q = ivec3(floor(d * p.scale + vec3(0.5)));
    atomicAdd(accum[v].x, q.x);
    atomicAdd(accum[v].y, q.y);
    atomicAdd(accum[v].z, q.z);
    atomicAdd(accum[v].w, 1);
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (LIST != 0u) {
        if (i >= list_count[0]) return;
        i = list[i];
    } else {
        if (i >= p.nc) return;
        i += p.base;
    }
    uvec4 c = c_idx[i];
    if (c.w == 0u) return;
    uvec4 f = c_f[i];
    vec2 w = c_w[i].xy;
    vec3 b = c_b[i].xyz;
    vec3 n = c_n[i].xyz;
    bool two = c.y != NONE;
    // An edge on the face side (CCD edge–edge): f.z = NONE with weight 0.
    bool three = f.z != NONE;
    if (!three) f.z = f.y;
    float m0 = inv_mass[c.x];
    float m1 = 0.0;
    if (two) m1 = inv_mass[c.y];
    float mf0 = inv_mass[f.x], mf1 = inv_mass[f.y], mf2 = 0.0;
    if (three) mf2 = inv_mass[f.z];
    if (!three) b.z = 0.0;
    precise vec3 xp = pos[c.x].xyz * w.x;
    precise vec3 xq = pos_prev[c.x].xyz * w.x;
    if (two) {
        xp = xp + pos[c.y].xyz * w.y;
        xq = xq + pos_prev[c.y].xyz * w.y;
    }
    precise vec3 xs = pos[f.x].xyz * b.x + pos[f.y].xyz * b.y + pos[f.z].xyz * b.z;
    precise vec3 xsq = pos_prev[f.x].xyz * b.x + pos_prev[f.y].xyz * b.y + pos_prev[f.z].xyz * b.z;
    precise float cval = dot(xp - xs, n) - p.offset;
    if (!(cval < 0.0)) return;
    // One projection closes at most max_step of the violation (deep, possibly ambiguous
    // penetrations are resolved over several iterations instead of in one jump).
    cval = max(cval, -p.max_step);
    precise float wsum = w.x * w.x * m0 + w.y * w.y * m1 + b.x * b.x * mf0 + b.y * b.y * mf1 +
                         b.z * b.z * mf2;
    if (!(wsum > 0.0)) return;
    precise float dl = -cval / wsum;
    // Friction from the relative tangential motion over the substep.
    precise vec3 rel = (xp - xq) - (xs - xsq);
    precise vec3 tang = rel - n * dot(rel, n);
    precise float tl = length(tang);
    precise float limit = p.mu * (-cval);
    precise float k = tl <= limit ? 1.0 : (tl > 0.0 ? limit / tl : 0.0);
    precise vec3 g = n * dl - tang * (k / wsum);
    add(c.x, g * (m0 * w.x));
    if (two) add(c.y, g * (m1 * w.y));
    add(f.x, -g * (mf0 * b.x));
    add(f.y, -g * (mf1 * b.y));
    if (three) add(f.z, -g * (mf2 * b.z));
}
