#version 460
// Jones–Plassmann coloring AND the grouping by color in ONE dispatch of ONE workgroup, of a
// constraint count read from a device buffer (`count[COUNT_INDEX]`, clamped to the capacity):
// rounds run until every constraint has a color (or overflowed), with workgroup barriers
// between the passes instead of a dispatch (or a host check) per pass. For graphs that color
// constraints a device search just produced, with no host round trip: the two-way contact
// solver's searches queued within a step batch (engine/src/contact/two_way/solve.rs).
// Same priorities, same rounds and same colors as jp_priority + jp_select
// (cpu_reference/coloring.rs::jones_plassmann); then the counting sort of group_count +
// the exclusive scan + group_scatter (offsets: MAX_COLORS + 1 entries; the order inside one
// color is unspecified, as its constraints share no vertex).
// Host: engine/src/coloring/gpu.rs (GpuColoring::record_workgroup).
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Constraints { uvec4 cons[]; };
layout(std430, binding = 1) readonly buffer Count { uint count[]; };
layout(std430, binding = 2) buffer Colors { uint color[]; };
layout(std430, binding = 3) buffer VMax { uint vmax[]; };
layout(std430, binding = 4) buffer Used { uint used[]; };   // USED_WORDS words per vertex
layout(std430, binding = 5) writeonly buffer Offsets { uint offsets[]; };
layout(std430, binding = 6) writeonly buffer Grouped { uint grouped[]; };
// {uncolored (0), overflowed, colors used, rounds}
layout(std430, binding = 7) writeonly buffer Status { uint status[]; };
const uint USED_WORDS = 8u;
const uint MAX_COLORS = 256u;
const uint UNCOLORED = 0xFFFFFFFFu;
const uint OVERFLOW = 0xFFFFFFFEu;

layout(push_constant) uniform Params {
    uint capacity;     // constraints the buffers hold
    uint nv;           // vertices (slots >= nv are padding)
    uint seed;
    uint count_index;  // the constraint count is count[count_index]
} pc;

shared uint s_remaining;
shared uint s_overflowed;
shared uint s_slot[MAX_COLORS];

uint mix32(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void sync() {
    memoryBarrierBuffer();
    memoryBarrierShared();
    barrier();
}

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint n = min(count[pc.count_index], pc.capacity);
    uint key = mix32(pc.seed ^ 0x9e3779b9u);
    for (uint w = lid; w < USED_WORDS * pc.nv; w += WG) used[w] = 0u;
    for (uint i = lid; i < n; i += WG) color[i] = UNCOLORED;
    if (lid == 0u) s_overflowed = 0u;
    uint rounds = 0u;
    uint remaining = n;
    while (remaining > 0u) {
        rounds += 1u;
        // Clear the maxima at the vertices of the uncolored constraints (no other vertex is read).
        for (uint i = lid; i < n; i += WG) {
            if (color[i] != UNCOLORED) continue;
            uvec4 c = cons[i];
            for (uint k = 0u; k < 4u; ++k) {
                if (c[k] < pc.nv) vmax[c[k]] = 0u;
            }
        }
        if (lid == 0u) s_remaining = 0u;
        sync();
        for (uint i = lid; i < n; i += WG) {
            if (color[i] != UNCOLORED) continue;
            uint p = mix32(i ^ key);
            uvec4 c = cons[i];
            for (uint k = 0u; k < 4u; ++k) {
                if (c[k] < pc.nv) atomicMax(vmax[c[k]], p);
            }
        }
        sync();
        // Winners share no vertex: each reads and writes only masks no other winner touches.
        for (uint i = lid; i < n; i += WG) {
            if (color[i] != UNCOLORED) continue;
            uint p = mix32(i ^ key);
            uvec4 c = cons[i];
            bool win = true;
            for (uint k = 0u; k < 4u; ++k) {
                if (c[k] < pc.nv && vmax[c[k]] != p) win = false;
            }
            if (!win) {
                atomicAdd(s_remaining, 1u);
                continue;
            }
            uint col = OVERFLOW;
            for (uint w = 0u; w < USED_WORDS; ++w) {
                uint m = 0u;
                for (uint k = 0u; k < 4u; ++k) {
                    if (c[k] < pc.nv) m |= used[USED_WORDS * c[k] + w];
                }
                if (m != 0xFFFFFFFFu) {
                    col = 32u * w + uint(findLSB(~m));
                    break;
                }
            }
            color[i] = col;
            if (col < MAX_COLORS) {
                uint word = col >> 5u, bit = 1u << (col & 31u);
                for (uint k = 0u; k < 4u; ++k) {
                    if (c[k] < pc.nv) atomicOr(used[USED_WORDS * c[k] + word], bit);
                }
            } else {
                atomicAdd(s_overflowed, 1u);
            }
        }
        sync();
        remaining = s_remaining;
        // Every invocation has read the count before the next round clears it.
        barrier();
    }
    // Counting sort by color.
    for (uint c = lid; c < MAX_COLORS; c += WG) s_slot[c] = 0u;
    sync();
    for (uint i = lid; i < n; i += WG) {
        uint c = color[i];
        if (c < MAX_COLORS) atomicAdd(s_slot[c], 1u);
    }
    sync();
    if (lid == 0u) {
        uint sum = 0u, colors = 0u;
        for (uint c = 0u; c < MAX_COLORS; ++c) {
            uint k = s_slot[c];
            if (k != 0u) colors = c + 1u;
            offsets[c] = sum;
            s_slot[c] = sum;
            sum += k;
        }
        offsets[MAX_COLORS] = sum;
        status[0] = 0u;
        status[1] = s_overflowed;
        status[2] = colors;
        status[3] = rounds;
    }
    sync();
    for (uint i = lid; i < n; i += WG) {
        uint c = color[i];
        if (c < MAX_COLORS) grouped[atomicAdd(s_slot[c], 1u)] = i;
    }
}
