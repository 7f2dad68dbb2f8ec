#version 460
// LBVH build, step 2: Morton code (3 * BITS bits, BITS = 10 or 21 per axis) of each primitive's
// box centroid in the centroid-bounds frame, as a (lo, hi) u32 pair; value = primitive index.
// Host: engine/src/bvh/lbvh.rs. Reference: engine/src/cpu_reference/bvh.rs (morton_codes).
#include "common.glsl"
#include "bvh.glsl"
layout(constant_id = 1) const uint ARITY = 3;
layout(constant_id = 2) const uint BITS = 21;
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer Idx { uint idx[]; };
layout(std430, binding = 2) readonly buffer Bounds { uint bounds[]; };
layout(std430, binding = 3) writeonly buffer Keys { uvec2 keys[]; };
layout(std430, binding = 4) writeonly buffer Vals { uint vals[]; };
layout(push_constant) uniform P { uint n; } p;

// floor((c - lo) * 2^BITS / 2^k) with 2^k the smallest power of two >= hi - lo: the frame is
// rounded up to a power of two so that the scaling is exact and every conforming device (FMA
// contraction, 2.5-ulp division) gives the reference's bits. Costs under one bit per axis.
uint quantize(float c, float lo, float hi) {
    precise float ext = hi - lo;
    if (!(ext > 0.0)) return 0u;
    precise float d = c - lo;
    if (!(d > 0.0)) return 0u;
    uint e = floatBitsToUint(ext);
    uint biased = (e >> 23u) & 0xffu;
    int k = biased == 0u ? -126 : int(biased) - 127 + ((e & 0x7fffffu) != 0u ? 1 : 0);
    int se = clamp(int(BITS) - k, -126, 127);
    float scale = uintBitsToFloat(uint(se + 127) << 23u);
    precise float t = min(d * scale, float(1u << BITS));
    return min(uint(t), (1u << BITS) - 1u);
}

void set_bit(inout uvec2 c, uint at, uint bit) {
    if (at < 32u) {
        c.x |= bit << at;
    } else {
        c.y |= bit << (at - 32u);
    }
}

void main() {
    uint i = bvh_thread_index();
    if (i >= p.n) return;
    vec3 lo = vec3(1.0 / 0.0), hi = vec3(-1.0 / 0.0);
    for (uint k = 0u; k < ARITY; ++k) {
        vec3 x = pos[idx[ARITY * i + k]].xyz;
        lo = min(lo, x);
        hi = max(hi, x);
    }
    precise vec3 c = (lo + hi) * 0.5;
    uvec3 q;
    for (uint k = 0u; k < 3u; ++k) {
        float blo = ordered_to_float(~bounds[k]);
        float bhi = ordered_to_float(bounds[3u + k]);
        q[k] = quantize(c[k], blo, bhi);
    }
    uvec2 code = uvec2(0u);
    for (uint b = 0u; b < BITS; ++b) {
        set_bit(code, 3u * b + 2u, (q.x >> b) & 1u);
        set_bit(code, 3u * b + 1u, (q.y >> b) & 1u);
        set_bit(code, 3u * b, (q.z >> b) & 1u);
    }
    keys[i] = code;
    vals[i] = i;
}
