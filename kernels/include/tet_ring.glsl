// One-ring exclusion of discrete collision detection (kernels/recovery/{vertex,edge}_in_tet.comp;
// reference: TetBoundary::touches_ring in engine/src/cpu_reference/shortest_path.rs). Expects
// the buffers ring_offsets and ring (tet-edge neighbours of each vertex, CSR).
#ifndef SUPPLE_TET_RING_GLSL
#define SUPPLE_TET_RING_GLSL

// Whether the tet contains v or one of its tet-edge neighbours (a vertex poking into a
// neighbouring tet is a local inversion, not a collision).
bool touches_ring(uvec4 tet, uint v) {
    bool hit = any(equal(tet, uvec4(v)));
    uint hi = ring_offsets[v + 1u];
    for (uint i = ring_offsets[v]; i < hi; ++i) hit = hit || any(equal(tet, uvec4(ring[i])));
    return hit;
}

#endif
