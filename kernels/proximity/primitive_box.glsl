// Inflated box of a primitive (cell_counts.comp, place_entries.comp: the same f32 operations,
// so both visit the same cells with the same keys). Include after declaring x (vec4[]), tris
// (uvec4[]) and edges (uvec2[]).
#ifndef SUPPLE_PRIMITIVE_BOX_GLSL
#define SUPPLE_PRIMITIVE_BOX_GLSL

// Box [lo, hi] of primitive i of type ty (0: triangle i, inflated by pad_t; 1: edge i - nt,
// inflated by pad_e, whose vertices go to e).
void primitive_box(uint i, uint ty, out vec3 lo, out vec3 hi, out uvec2 e) {
    e = uvec2(0u);
    if (ty == 0u) {
        uvec4 f = tris[i];
        vec3 a = x[f.x].xyz, b = x[f.y].xyz, c = x[f.z].xyz;
        lo = min(min(a, b), c) - vec3(p.pad_t);
        hi = max(max(a, b), c) + vec3(p.pad_t);
    } else {
        e = edges[i - p.nt];
        vec3 a = x[e.x].xyz, b = x[e.y].xyz;
        lo = min(a, b) - vec3(p.pad_e);
        hi = max(a, b) + vec3(p.pad_e);
    }
}

#endif
