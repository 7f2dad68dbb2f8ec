// Shared prelude of every Supple kernel.
// Workgroup size is specialization constant 0 (set by the host per device); kernels index with
// gl_LocalInvocationID.x and gl_WorkGroupID.x. Subgroup operations are used freely; the host
// guarantees WG is a multiple of the subgroup size.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 64;

// Monotone map f32 -> u32 (a < b ⇔ float_to_ordered(a) < float_to_ordered(b)), for atomic
// minima and maxima of signed floats, and back (engine/src/bvh/tree.rs::float_to_ordered).
uint float_to_ordered(float f) {
    uint b = floatBitsToUint(f);
    return (b & 0x80000000u) != 0u ? ~b : (b | 0x80000000u);
}
float ordered_to_float(uint u) {
    return uintBitsToFloat((u & 0x80000000u) != 0u ? (u & 0x7FFFFFFFu) : ~u);
}

// Largest subgroup count per workgroup that shared scratch arrays support (WG / subgroup size).
#define MAX_SUBGROUPS 64u

// The partial last quad of an array of n 4-byte words (quad q = n / 4 when n % 4 != 0), read or
// written word by word through the array's 4-byte view `buf`: `zero` past n on reads, words
// past n untouched on writes. Streaming kernels use 16-byte views for every full quad and these
// for the partial one, outside their hot loops: a 16-byte access that crosses the bound range is
// undefined (robust drivers may drop or zero all of it), and the words past n may belong to a
// neighbouring slice of the same buffer.
#define LOAD_TAIL4(dst, buf, q, n, zero)                                      \
    dst = zero;                                                               \
    for (uint j_ = 0u; j_ < 4u; ++j_) {                                       \
        if ((q) * 4u + j_ < (n)) dst[j_] = buf[(q) * 4u + j_];                \
    }
#define STORE_TAIL4(buf, q, n, v)                                             \
    for (uint j_ = 0u; j_ < 4u; ++j_) {                                       \
        if ((q) * 4u + j_ < (n)) buf[(q) * 4u + j_] = v[j_];                  \
    }

// Round layout (LANE_SERIAL = 0): whether quad t is one of this invocation's quads
// base, base + WG, ..., base + (ITEMS - 1) WG.
bool owns_round_quad(uint t, uint base, uint items) {
    return t >= base && (t - base) % WG == 0u && (t - base) / WG < items;
}
