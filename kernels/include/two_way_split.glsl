// Per-constraint arrays of the two-way pair workspace stored over two storage bindings, so no
// binding exceeds the device's maxStorageBufferRange (engine/src/contact/two_way/split.rs):
// element i lives in the low binding when i is below its length, else at i minus that length in
// the high one (a one-element placeholder while everything fits the low one). Include after
// the buffer declarations: with TW_SPLIT_CONS the kernel declares `cons_lo` and `cons_hi`
// (uvec4, the contact constraints), with TW_SPLIT_CLOSEST `closest_lo` and `closest_hi` (vec4,
// the floor-release directions); TW_SPLIT_CONS_WRITE / TW_SPLIT_CLOSEST_WRITE add the setters
// (the declarations must then not be readonly; none may be writeonly).
#ifndef SUPPLE_TWO_WAY_SPLIT_GLSL
#define SUPPLE_TWO_WAY_SPLIT_GLSL

#ifdef TW_SPLIT_CONS
// Contact constraint i (its four vertices).
uvec4 tw_con(uint i) {
    uint n = uint(cons_lo.length());
    return i < n ? cons_lo[i] : cons_hi[i - n];
}
#ifdef TW_SPLIT_CONS_WRITE
// Stores contact constraint i.
void tw_set_con(uint i, uvec4 v) {
    uint n = uint(cons_lo.length());
    if (i < n) cons_lo[i] = v; else cons_hi[i - n] = v;
}
#endif
#endif

#ifdef TW_SPLIT_CLOSEST
// Separating direction and distance of pair i (floor release).
vec4 tw_closest_at(uint i) {
    uint n = uint(closest_lo.length());
    return i < n ? closest_lo[i] : closest_hi[i - n];
}
#ifdef TW_SPLIT_CLOSEST_WRITE
// Stores pair i's separating direction and distance.
void tw_set_closest(uint i, vec4 v) {
    uint n = uint(closest_lo.length());
    if (i < n) closest_lo[i] = v; else closest_hi[i - n] = v;
}
#endif
#endif

#endif
