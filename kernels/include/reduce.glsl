// Shared by the f32 reduction kernels. OP: 0 sum, 1 min, 2 max, 3 argmin (ties: lowest index).
// NaN inputs are treated as +inf by min/argmin and as -inf by max; they propagate in sum.
layout(constant_id = 1) const uint ITEMS = 16;
layout(constant_id = 2) const uint OP = 0;
struct Partial { float value; uint index; };
shared Partial reduce_scratch[MAX_SUBGROUPS];

float reduce_identity() {
    return OP == 0u ? 0.0 : (OP == 2u ? uintBitsToFloat(0xff800000u) : uintBitsToFloat(0x7f800000u));
}

float sanitize(float v) {
    if (OP != 0u && isnan(v)) return OP == 2u ? uintBitsToFloat(0xff800000u) : uintBitsToFloat(0x7f800000u);
    return v;
}

Partial combine(Partial a, Partial b) {
    if (OP == 0u) return Partial(a.value + b.value, 0u);
    if (OP == 1u) return Partial(min(a.value, b.value), 0u);
    if (OP == 2u) return Partial(max(a.value, b.value), 0u);
    bool take_b = b.value < a.value || (b.value == a.value && b.index < a.index);
    return take_b ? b : a;
}

Partial subgroup_reduce(Partial x) {
    if (OP == 0u) return Partial(subgroupAdd(x.value), 0u);
    if (OP == 1u) return Partial(subgroupMin(x.value), 0u);
    if (OP == 2u) return Partial(subgroupMax(x.value), 0u);
    float m = subgroupMin(x.value);
    uint i = subgroupMin(x.value == m ? x.index : 0xffffffffu);
    return Partial(m, i);
}

// Reduction over the workgroup; the result is valid in invocation 0.
Partial workgroup_reduce(Partial x) {
    Partial r = subgroup_reduce(x);
    if (gl_NumSubgroups == 1u) return r;
    if (subgroupElect()) reduce_scratch[gl_SubgroupID] = r;
    barrier();
    Partial acc = reduce_scratch[0];
    for (uint s = 1u; s < gl_NumSubgroups; ++s) acc = combine(acc, reduce_scratch[s]);
    barrier();
    return acc;
}
