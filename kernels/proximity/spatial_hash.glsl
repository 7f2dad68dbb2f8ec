// Shared code of the proximity-search kernels (kernels/proximity/*.comp): push constants, cell
// coordinates, cell hashing and inflated primitive boxes. Host: engine/src/proximity/spatial_hash.rs.
// Reference: engine/src/cpu_reference/proximity.rs (same f32 operations in the same order).
#ifndef SUPPLE_SPATIAL_HASH_GLSL
#define SUPPLE_SPATIAL_HASH_GLSL

// Same block in every proximity kernel (60 bytes).
layout(push_constant) uniform P {
    uint nv;         // vertices
    uint nt;         // triangles (primitives 0..nt of the cell tables)
    uint ne;         // edges (primitives nt..nt+ne)
    uint table_bits; // hash buckets per primitive type: 2^table_bits
    float inv_h;     // 1 / cell size (1/m)
    float d;         // search distance D (m): pairs with dist < D are reported
    float pad_t;     // inflation of triangle boxes (m), >= D
    float pad_e;     // inflation of edge boxes (m), >= D / 2
    uint entry_cap;  // capacity of the cell entry arrays
    uint vt_cap;     // capacity of the vertex-triangle pair list
    uint ee_cap;     // capacity of the edge-edge pair list
    uint flags;      // bit 0: pairs within one body, bit 1: pairs between bodies
    uint cvt_cap;    // capacity of the vertex-triangle candidate list
    uint cee_cap;    // capacity of the edge-edge candidate list
    uint order_bits; // x-order bits of the keys (0..4): 2^order_bits slots per bucket
} p;

// Flat invocation index of a 2D dispatch ([x, y, 1] groups, x-major).
uint flat_index() {
    return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * WG);
}

ivec3 cell_of(vec3 q) { return ivec3(floor(q * p.inv_h)); }

// Bits per axis of a bucket index (table_bits = 3 k).
uint axis_bits() { return p.table_bits / 3u; }

// Bucket of cell c: its coordinates modulo 2^k, interleaved (periodic: injective over any
// 2^k cells per axis, and a primitive spans at most 2^k cells per axis, so it has at most one
// entry per bucket).
uint cell_bucket(ivec3 c) {
    uint k = axis_bits();
    uvec3 u = uvec3(c) & uvec3((1u << k) - 1u);
    return u.x | (u.y << k) | (u.z << (2u * k));
}

// Key of an entry: primitive type (0 triangle, 1 edge), bucket, x slot (x_slot; the entries of
// a bucket are then ordered by the x of their box's lower corner, so a query scans only the
// slots its own box reaches). Keys below sentinel_key().
uint entry_key(uint ty, uint bucket, uint slot) {
    return (((ty << p.table_bits) | bucket) << p.order_bits) | slot;
}

// Key of unused entries (past every bucket of both types).
uint sentinel_key() { return 2u << (p.table_bits + p.order_bits); }

// Bucket of a key.
uint key_bucket(uint key) { return (key >> p.order_bits) & ((1u << p.table_bits) - 1u); }

// Primitive type of a key (0 triangle, 1 edge).
uint key_type(uint key) { return key >> (p.table_bits + p.order_bits); }

// First entry of the bucket with key b: entries of keys below b (ends = inclusive scan of the
// per-key entry counts).
#define KEY_START(ends, b) ((b) == 0u ? 0u : ends[(b) - 1u])

// Largest per-primitive cell count: the sum over all primitives then fits in 31 bits (no
// wrap in the scan); a primitive reaching it marks the search as overflowed (the host reports
// that the cell size is too small).
uint count_saturation() { return 0x7fffffffu / max(p.nt + p.ne, 1u); }

// Number of cells of the inclusive range [lo, hi], saturated at count_saturation().
uint range_cells(ivec3 lo, ivec3 hi) {
    uint sat = count_saturation();
    uvec3 n = uvec3(hi - lo + ivec3(1));
    if (n.x == 0u || n.y == 0u || n.z == 0u) return sat; // NaN or wrapped coordinates
    // More than 2^k cells per axis also saturates (one entry per bucket; the host then grows
    // the cell size and redoes the search).
    uint axis = 1u << axis_bits();
    if (n.x > axis || n.y > axis || n.z > axis) return sat;
    if (n.x >= sat || n.y >= sat || n.z >= sat) return sat;
    uint xy = n.x * n.y;
    if (n.x > sat / n.y || xy >= sat) return sat;
    if (xy > sat / n.z) return sat;
    return min(xy * n.z, sat);
}

// Relative margin of the bounding-sphere culling tests (covers f32 rounding; conservative).
const float SPHERE_MARGIN = 1.001;

// Units per cell of the cell-local quantized coordinates in the packed entry records
// (place_entries.comp, query_vt.comp, query_ee.comp): 10 bits per axis, offset 512 (range [-4, 4) cells,
// clamped). Cell coordinates must stay below 2^23 in magnitude, as for cell_of.
const uint LOCAL_UNITS = 128u;

// floor(v / h * LOCAL_UNITS) relative to cell c, clamped to [-512, 511] per axis.
ivec3 local_units(vec3 v, ivec3 c) {
    vec3 t = v * p.inv_h;
    vec3 f = clamp(floor(t * float(LOCAL_UNITS)), vec3(-1073741824.0), vec3(1073741824.0));
    ivec3 q = ivec3(f) - c * int(LOCAL_UNITS);
    return clamp(q, ivec3(-512), ivec3(511));
}

// local_units packed, 10 bits per axis.
uint pack_local(vec3 v, ivec3 c) {
    uvec3 u = uvec3(local_units(v, c) + 512);
    return u.x | (u.y << 10u) | (u.z << 20u);
}

// x slot of a cell-local x (local_units): 2^order_bits slots over [-1, 1) cell, clamped;
// monotone in x, so an entry whose lower x has a slot above the slot of another box's upper x
// lies right of that box (same cell).
uint x_slot(int ux) {
    int s = (ux + int(LOCAL_UNITS)) >> (8 - int(p.order_bits));
    return uint(clamp(s, 0, (1 << p.order_bits) - 1));
}

// Key of the entry of a primitive of type ty with inflated box lower corner lo in cell c.
uint cell_entry_key(uint ty, vec3 lo, ivec3 c) {
    return entry_key(ty, cell_bucket(c), x_slot(local_units(lo, c).x));
}

// Inverse of the packing of pack_local (cell-local units).
ivec3 unpack_local(uint w) {
    return ivec3(uvec3(w, w >> 10u, w >> 20u) & uvec3(1023u)) - 512;
}

// Bounding sphere (centre, radius) of a primitive from its box [lo, hi] inflated by pad: the
// box's circumscribed sphere shrunk by pad (the half-diagonal of the inflated box exceeds the
// primitive box's by at least pad), so it contains the primitive; no vertex loads.
vec4 box_sphere(vec3 lo, vec3 hi, float pad) {
    return vec4(0.5 * (lo + hi), max(0.5 * length(hi - lo) - pad, 0.0));
}

// Cell domain of the search (domain.comp), words 1..7 of the `saturated` buffer (cleared to
// 0): [1 + a] = max over vertices of ~ordered(lower cell), [4 + a] = max of
// ordered(upper cell), with ordered(c) = uint(c) ^ 0x80000000 (unsigned order = signed order,
// so both are atomicMax from 0).
uint ordered_cell(int c) { return uint(c) ^ 0x80000000u; }

// Whether the domain spans at most 2^k cells per axis: each bucket then holds one cell only,
// so two entries of a bucket share their cell and the packed records' cell-local quantized
// boxes are in one frame (query_ee.comp's exact quantized test). True when there are no
// vertices (lower > upper).
bool buckets_are_cells(uvec3 not_lo, uvec3 hi) {
    ivec3 lo = ivec3(~not_lo ^ uvec3(0x80000000u));
    ivec3 up = ivec3(hi ^ uvec3(0x80000000u));
    bool fits = true;
    for (uint a = 0u; a < 3u; ++a) {
        // 64-bit free: a span past 2^k cells in either sign is caught by the two tests.
        fits = fits && (up[a] < lo[a] || (up[a] - lo[a] >= 0 && uint(up[a] - lo[a]) < (1u << axis_bits())));
    }
    return fits;
}

bool pair_allowed(uint body_a, uint body_b) {
    return (body_a == body_b) ? ((p.flags & 1u) != 0u) : ((p.flags & 2u) != 0u);
}

#endif
