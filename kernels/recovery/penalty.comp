#version 460
// Penalty energy of the shortest-path collision constraints for the Newton solver (Chen, Diaz
// and Yuksel 2023, Eq. 7): per constraint slot, c = (p − s)·n − offset with p = Σ w x_p (vertex
// or edge point) and s = Σ b x_f (closest boundary point, barycentrics fixed at detection);
// E = ½ k min(c, 0)². Always writes the slot's energy (at the bound positions: the current
// iterate or a line-search trial). ACCUMULATE = 1 also sums, per vertex v with coefficient a
// (w for the point side, −b for the face side), the gradient factor c a n and the diagonal
// block |a| S n nᵀ, S = Σ_j |a_j|, in fixed point (integer atomics: the same sums in any order);
// the Newton vector kernel multiplies them by k (kernels/newton/vectors.comp). The Hessian
// k a aᵀ ⊗ n nᵀ couples the point and face vertices, which the Newton matrix's fixed block
// sparsity cannot hold; its diagonal blocks alone overshoot (a stiff constraint's Newton step
// would close it several times over). The blocks k S |a_i| n nᵀ majorize it instead (Cauchy–
// Schwarz: (Σ a_i n·d_i)² ≤ S Σ |a_i| (n·d_i)²), so a step closes a lone constraint exactly.
// With p.exact = 1 the blocks are the exact diagonal a² n nᵀ instead, and the couplings enter the
// PCG matrix-free (kernels/solver/contact_gather.comp): ACCUMULATE then also writes the slot's
// weight k_c (k when violated, else 0) and five (vertex, 5·slot + j) incidence entries (vertex =
// vertex count when the entry is absent or the slot inactive), which the host sorts by vertex.
// Host: engine/src/recovery/penalty.rs. Reference: cpu_reference/recovery_response.rs (penalty).
#include "common.glsl"
#include "penalty.glsl"
layout(constant_id = 1) const uint ACCUMULATE = 0;
layout(std430, binding = 0) readonly buffer Pos { vec4 pos[]; };
layout(std430, binding = 1) readonly buffer CF { uvec4 c_f[]; };
layout(std430, binding = 2) readonly buffer CIdx { uvec4 c_idx[]; };
layout(std430, binding = 3) readonly buffer CW { vec4 c_w[]; };
layout(std430, binding = 4) readonly buffer CB { vec4 c_b[]; };
layout(std430, binding = 5) readonly buffer CN { vec4 c_n[]; };
layout(std430, binding = 6) writeonly buffer Energy { float energy[]; };
// Three ivec4 per vertex: (Σ c a n, 0), (Σ a² n nᵀ diagonal xx yy zz, 0), (xy xz yz, 0).
layout(std430, binding = 7) buffer Accum { ivec4 accum[]; };
layout(std430, binding = 8) writeonly buffer Weight { float weight[]; };
layout(std430, binding = 9) writeonly buffer Keys { uint entry_key[]; };
layout(std430, binding = 10) writeonly buffer Vals { uint entry_val[]; };
layout(push_constant) uniform P { uint nc; float offset; float k; uint exact; uint nv; } p;
const uint NONE = 0xFFFFFFFFu;

void add(uint v, float a, float sum_abs, float cval, vec3 n) {
    float h = (p.exact != 0u ? a * a : abs(a) * sum_abs) * PENALTY_HESS_SCALE;
    ivec3 g = ivec3(floor(n * (cval * a * PENALTY_GRAD_SCALE) + vec3(0.5)));
    ivec3 d = ivec3(floor(n * n * h + vec3(0.5)));
    ivec3 o = ivec3(floor(vec3(n.x * n.y, n.x * n.z, n.y * n.z) * h + vec3(0.5)));
    atomicAdd(accum[3u * v].x, g.x);
    atomicAdd(accum[3u * v].y, g.y);
    atomicAdd(accum[3u * v].z, g.z);
    atomicAdd(accum[3u * v + 1u].x, d.x);
    atomicAdd(accum[3u * v + 1u].y, d.y);
    atomicAdd(accum[3u * v + 1u].z, d.z);
    atomicAdd(accum[3u * v + 2u].x, o.x);
    atomicAdd(accum[3u * v + 2u].y, o.y);
    atomicAdd(accum[3u * v + 2u].z, o.z);
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.nc) return;
    energy[i] = 0.0;
    if (ACCUMULATE != 0u) {
        weight[i] = 0.0;
        for (uint j = 0u; j < 5u; ++j) {
            entry_key[5u * i + j] = p.nv;
            entry_val[5u * i + j] = 5u * i + j;
        }
    }
    uvec4 c = c_idx[i];
    if (c.w == 0u) return;
    uvec4 f = c_f[i];
    vec2 w = c_w[i].xy;
    vec3 b = c_b[i].xyz;
    vec3 n = c_n[i].xyz;
    bool two = c.y != NONE;
    bool three = f.z != NONE;
    if (!three) {
        f.z = f.y;
        b.z = 0.0;
    }
    precise vec3 xp = pos[c.x].xyz * w.x;
    if (two) xp = xp + pos[c.y].xyz * w.y;
    precise vec3 xs = pos[f.x].xyz * b.x + pos[f.y].xyz * b.y + pos[f.z].xyz * b.z;
    precise float cval = dot(xp - xs, n) - p.offset;
    if (!(cval < 0.0)) return;
    energy[i] = 0.5 * p.k * cval * cval;
    if (ACCUMULATE != 0u) {
        weight[i] = p.k;
        entry_key[5u * i] = c.x;
        if (two) entry_key[5u * i + 1u] = c.y;
        entry_key[5u * i + 2u] = f.x;
        entry_key[5u * i + 3u] = f.y;
        if (three) entry_key[5u * i + 4u] = f.z;
        float wy = two ? w.y : 0.0;
        float sum_abs = abs(w.x) + abs(wy) + abs(b.x) + abs(b.y) + abs(b.z);
        add(c.x, w.x, sum_abs, cval, n);
        if (two) add(c.y, w.y, sum_abs, cval, n);
        add(f.x, -b.x, sum_abs, cval, n);
        add(f.y, -b.y, sum_abs, cval, n);
        if (three) add(f.z, -b.z, sum_abs, cval, n);
    }
}
