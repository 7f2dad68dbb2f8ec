// Stencil slots of the BAL terms: slots [0, P) are the contact pairs of the active list
// (barrier + augmentation), slots [P, 2P) their lagged friction stencils. The including kernel
// declares pair_verts and fr_verts: storage arrays, or texel buffers read through the
// STENCIL_VERTS(buf, j) macro it defines before including this file. Twin: cpu_reference/bal/kernels.rs (StencilTerm::vertices in stencil_terms).
#ifndef SUPPLE_BAL_STENCIL_GLSL
#define SUPPLE_BAL_STENCIL_GLSL
#ifndef STENCIL_VERTS
#define STENCIL_VERTS(buf, j) buf[j]
#endif

// Corner vertices of stencil slot s (x = BAL_NONE for an empty slot).
uvec4 bal_stencil_vertices(uint s) {
    uint j = s < p.pair_cap ? s : s - p.pair_cap;
    return s < p.pair_cap ? STENCIL_VERTS(pair_verts, j) : STENCIL_VERTS(fr_verts, j);
}

#endif
