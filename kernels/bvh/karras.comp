#version 460
// LBVH build, step 3: Karras (2012) binary radix tree over the sorted Morton codes, one
// invocation per internal node i (0..n-2): children (node indices), parents and the leaf range
// of each internal node. Equal codes are ordered by leaf index (prefix 64 + clz(i ^ j)).
// The host fills parent with BVH_INVALID first (the root keeps it).
// Host: engine/src/bvh/lbvh.rs. Reference: engine/src/cpu_reference/bvh.rs (karras_topology).
#include "common.glsl"
#include "bvh.glsl"
layout(std430, binding = 0) readonly buffer Keys { uvec2 keys[]; };
layout(std430, binding = 1) writeonly buffer Children { uvec2 children[]; };
layout(std430, binding = 2) writeonly buffer Parent { uint parent[]; };
layout(std430, binding = 3) writeonly buffer Ranges { uvec2 ranges[]; };
layout(push_constant) uniform P { uint n; } p;

int delta(int i, int j) {
    if (j < 0 || j >= int(p.n)) return -1;
    uvec2 a = keys[i];
    uvec2 b = keys[j];
    uint xh = a.y ^ b.y;
    uint xl = a.x ^ b.x;
    if (xh != 0u) return 31 - findMSB(xh);
    if (xl != 0u) return 63 - findMSB(xl);
    return 95 - findMSB(uint(i) ^ uint(j));
}

void main() {
    uint ui = bvh_thread_index();
    if (p.n < 2u || ui >= p.n - 1u) return;
    int i = int(ui);
    int d = delta(i, i + 1) - delta(i, i - 1) >= 0 ? 1 : -1;
    int dmin = delta(i, i - d);
    int lmax = 2;
    while (delta(i, i + lmax * d) > dmin) lmax *= 2;
    int l = 0;
    for (int t = lmax / 2; t >= 1; t /= 2) {
        if (delta(i, i + (l + t) * d) > dmin) l += t;
    }
    int j = i + l * d;
    int dnode = delta(i, j);
    int s = 0;
    int t = l;
    for (;;) {
        t = (t + 1) >> 1;
        if (delta(i, i + (s + t) * d) > dnode) s += t;
        if (t <= 1) break;
    }
    int gamma = i + s * d + min(d, 0);
    int lo = min(i, j);
    int hi = max(i, j);
    uint internal = p.n - 1u;
    uint left = lo == gamma ? internal + uint(gamma) : uint(gamma);
    uint right = hi == gamma + 1 ? internal + uint(gamma + 1) : uint(gamma + 1);
    children[ui] = uvec2(left, right);
    ranges[ui] = uvec2(uint(lo), uint(hi));
    parent[left] = ui;
    parent[right] = ui;
}
