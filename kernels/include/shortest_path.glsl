// Shortest path to boundary (Chen, Diaz and Yuksel 2023): topological line traversal with a
// branching stack and a visited list, and infeasible-region culling. Twin of
// engine/src/cpu_reference/shortest_path.rs (same loops, same order, same f32 formulas); host
// scheduling: engine/src/recovery/shortest_path.rs. Expects the buffers declared by
// kernels/recovery/shortest_path.comp.
#ifndef SUPPLE_SHORTEST_PATH_GLSL
#define SUPPLE_SHORTEST_PATH_GLSL

#define SP_STACK 32u
#define SP_VISITED 128u
const uint SP_INVALID = 0xFFFFFFFFu;
const uint SP_INVALID_PATH = 0u;
const uint SP_VALID = 1u;
const uint SP_OVERFLOW = 2u;

// Local vertices of the face opposite local vertex f (outward for positive tets).
const uvec3 SP_TET_FACES[4] = uvec3[4](uvec3(1u, 2u, 3u), uvec3(0u, 3u, 2u), uvec3(0u, 1u, 3u),
                                       uvec3(0u, 2u, 1u));

// Whether the line through s with direction d crosses triangle (a, b, c) with all barycentric
// coordinates >= -eps.
bool sp_line_crosses(vec3 a, vec3 b, vec3 c, vec3 s, vec3 d, float eps) {
    precise vec3 ra = a - s;
    precise vec3 rb = b - s;
    precise vec3 rc = c - s;
    precise float u = dot(d, cross(rb, rc));
    precise float v = dot(d, cross(rc, ra));
    precise float w = dot(d, cross(ra, rb));
    precise float sum = u + v + w;
    if (!(abs(sum) > 0.0)) return false;
    precise float m = min(min(u / sum, v / sum), w / sum);
    return m >= -eps;
}

// Traversal from boundary face `face` at s along the line toward p: SP_VALID when it reaches
// tet `target`, SP_INVALID_PATH when every branch ends at the boundary, SP_OVERFLOW when the
// stack or visited list is full. Written without early returns or breaks inside loops:
// lavapipe (Mesa 22.3) mis-executed those under divergence (results depended on the other
// invocations of the SIMD row).
uint sp_traverse(uint face, vec3 s, vec3 p, uint target, float eps, inout uint tets_visited,
                 inout uint branches) {
    uint start = faces[face].w;
    uint result = start == target ? SP_VALID : SP_INVALID_PATH;
    bool done = start == target;
    precise vec3 d = p - s;
    uint visited[SP_VISITED];
    uint stack[SP_STACK];
    uint nv = 1u;
    uint sp = 1u;
    visited[0] = start;
    stack[0] = start;
    // Every tet is pushed at most once, so SP_VISITED pops bound the loop.
    for (uint it = 0u; it < SP_VISITED && sp > 0u && !done; ++it) {
        sp -= 1u;
        uint t = stack[sp];
        tets_visited += 1u;
        uvec4 tet = tets[t];
        uvec4 adj = adjacency[t];
        uint pushed = 0u;
        [[unroll]] for (uint f = 0u; f < 4u; ++f) {
            uint nb = adj[f];
            uvec3 lf = SP_TET_FACES[f];
            vec3 a = pos[tet[lf.x]].xyz;
            vec3 b = pos[tet[lf.y]].xyz;
            vec3 c = pos[tet[lf.z]].xyz;
            bool open = !done && nb != SP_INVALID && sp_line_crosses(a, b, c, s, d, eps);
            // Unrolled scan: llvmpipe's loop limiter counts every loop iteration of a SIMD
            // row, so the hot scan must not be a loop.
            [[unroll]] for (uint k = 0u; k < SP_VISITED; ++k) {
                open = open && (k >= nv || visited[k] != nb);
            }
            if (open) {
                if (nb == target) {
                    result = SP_VALID;
                    done = true;
                } else if (nv >= SP_VISITED || sp >= SP_STACK) {
                    result = SP_OVERFLOW;
                    done = true;
                } else {
                    visited[nv] = nb;
                    nv += 1u;
                    stack[sp] = nb;
                    sp += 1u;
                    pushed += 1u;
                }
            }
        }
        if (!done) branches += max(pushed, 1u) - 1u;
    }
    // A loop cut short (bound or llvmpipe's loop limiter) must not pass for an invalid path.
    if (!done && sp > 0u) {
        result = SP_OVERFLOW;
        atomicAdd(counters[9], 1u);
    }
    return result;
}

bool sp_leaves(vec3 dir, vec3 e, float eps_r) {
    precise float de = dot(dir, e);
    precise float bound = eps_r * length(dir) * length(e);
    return de > bound;
}

// Infeasible-region test: true when p has a component along a boundary direction leaving s
// (the closest point of `face`, feature `kind`).
bool sp_infeasible(uint face, uint kind, vec3 s, vec3 p, float eps_r) {
    uvec4 tri = faces[face];
    precise vec3 dir = p - s;
    if (kind <= PT_T2) {
        uint v = tri[kind];
        uint hi = nb_offsets[v + 1u];
        for (uint i = nb_offsets[v]; i < hi; ++i) {
            if (sp_leaves(dir, pos[nbs[i]].xyz - s, eps_r)) return true;
        }
        return false;
    }
    if (kind <= PT_E2) {
        uint k = kind - PT_E0;
        uint other = face_across[face][k];
        if (other == SP_INVALID) return false;
        uint v0 = tri[k];
        uint v1 = tri[(k + 1u) % 3u];
        uvec4 o = faces[other];
        uint w = SP_INVALID;
        for (uint j = 0u; j < 3u; ++j) {
            if (w == SP_INVALID && o[j] != v0 && o[j] != v1) w = o[j];
        }
        if (w == SP_INVALID) return false;
        vec3 a = pos[v0].xyz;
        precise vec3 e = pos[v1].xyz - a;
        precise vec3 r = pos[w].xyz - a;
        precise float ee = dot(e, e);
        if (!(ee > 0.0)) return false;
        precise vec3 u = r - e * (dot(r, e) / ee);
        return sp_leaves(dir, u, eps_r);
    }
    return false;
}

vec3 sp_face_normal(uint f) {
    uvec4 t = faces[f];
    vec3 a = pos[t.x].xyz;
    precise vec3 n = cross(pos[t.y].xyz - a, pos[t.z].xyz - a);
    return n;
}

// Outward unit normal at the closest point: the face normal, or the area-weighted mean around
// its edge or vertex.
vec3 sp_boundary_normal(uint face, uint kind) {
    precise vec3 n = sp_face_normal(face);
    if (kind >= PT_E0 && kind <= PT_E2) {
        uint o = face_across[face][kind - PT_E0];
        if (o != SP_INVALID) n = n + sp_face_normal(o);
    } else if (kind <= PT_T2) {
        uint v = faces[face][kind];
        n = vec3(0.0);
        uint hi = vf_offsets[v + 1u];
        for (uint i = vf_offsets[v]; i < hi; ++i) n = n + sp_face_normal(vfs[i]);
    }
    float l = length(n);
    return l > 0.0 ? n / l : n;
}

#endif
