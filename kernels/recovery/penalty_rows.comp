#version 460
// Row pointers of the penalty's vertex → constraint-entry incidence: the entries written by
// kernels/recovery/penalty.comp, sorted (stably) by vertex, start for vertex v at the first key
// ≥ v (a binary search with a fixed trip count); row_ptr[nv] ends the last vertex's list.
// Host: engine/src/recovery/penalty.rs. Reference: cpu_reference/recovery_response.rs
// (penalty_hessian_mul, which sums the same couplings per constraint).
#include "common.glsl"
layout(std430, binding = 0) readonly buffer Keys { uint entry_key[]; };
layout(std430, binding = 1) writeonly buffer RowPtr { uint row_ptr[]; };
layout(push_constant) uniform P { uint nv; uint ne; } p;
void main() {
    uint v = gl_GlobalInvocationID.x;
    if (v > p.nv) return;
    uint lo = 0u, hi = p.ne;
    for (uint it = 0u; it < 32u; ++it) {
        if (lo < hi) {
            uint mid = (lo + hi) / 2u;
            if (entry_key[mid] < v) {
                lo = mid + 1u;
            } else {
                hi = mid;
            }
        }
    }
    row_ptr[v] = lo;
}
