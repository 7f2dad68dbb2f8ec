#version 460
// Jones–Plassmann round, pass 2: an uncolored constraint whose priority equals `vmax` at each
// of its vertices (priorities are a bijection of the index, so it beats every uncolored
// neighbour) takes the smallest color absent from the 256-bit used-color masks of its vertices
// (USED_WORDS words each) and ORs that color into them. Winners share no vertex, so each reads
// and writes only masks no other winner touches in this pass. All 256 colors taken: OVERFLOW.
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Constraints { uvec4 cons[]; };
layout(std430, binding = 1) readonly buffer VMax { uint vmax[]; };
layout(std430, binding = 2) buffer Colors { uint color[]; };
layout(std430, binding = 3) buffer Used { uint used[]; };   // USED_WORDS words per vertex
const uint USED_WORDS = 8u;

layout(push_constant) uniform Params {
    uint n;
    uint nv;
    uint seed;
} pc;

const uint UNCOLORED = 0xFFFFFFFFu;
const uint OVERFLOW = 0xFFFFFFFEu;

uint mix32(uint x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

void main() {
    uint stride = WG * gl_NumWorkGroups.x;
    uint key = mix32(pc.seed ^ 0x9e3779b9u);
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += stride) {
        if (color[i] != UNCOLORED) {
            continue;
        }
        uint p = mix32(i ^ key);
        uvec4 c = cons[i];
        bool win = true;
        for (uint k = 0u; k < 4u; ++k) {
            uint v = c[k];
            if (v < pc.nv && vmax[v] != p) {
                win = false;
            }
        }
        if (!win) {
            continue;
        }
        uint col = OVERFLOW;
        for (uint w = 0u; w < USED_WORDS; ++w) {
            uint m = 0u;
            for (uint k = 0u; k < 4u; ++k) {
                uint v = c[k];
                if (v < pc.nv) {
                    m |= used[USED_WORDS * v + w];
                }
            }
            if (m != 0xFFFFFFFFu) {
                col = 32u * w + uint(findLSB(~m));
                break;
            }
        }
        color[i] = col;
        if (col < 32u * USED_WORDS) {
            uint word = col >> 5u;
            uint bit = 1u << (col & 31u);
            for (uint k = 0u; k < 4u; ++k) {
                uint v = c[k];
                if (v < pc.nv) {
                    atomicOr(used[USED_WORDS * v + word], bit);
                }
            }
        }
    }
}
