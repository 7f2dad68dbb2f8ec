// RAINBOW's PROX contact solver on the GPU: shared declarations (include after "common.glsl").
// Contacts are stored color-major (SoA): per contact k
//   nodes[2k], nodes[2k+1]     8 node slots (NO_NODE unused)
//   weights[2k], weights[2k+1] signed barycentric weights (-ω first body, +ω second)
//   frame[3k..3k+2]            n (w: μ), s (w: restitution ε), t (w: gap)
//   bias[k]                    b = J u′ (+ ε e_n n·Σ w u), w: r_k = r_factor / A_kk
//   lam[k], saved[k]           λ = (λn, λs, λt) and the last accepted λ
// and per node a: wvel[a] = (W Jᵀ λ)_a (velocity correction), inv_mass[a].
// ctrl holds the r-factor strategy's state (PROX_* word offsets below).
// Host: engine/src/contact/prox/. Reference: engine/src/cpu_reference/prox/.
#ifndef SUPPLE_PROX_GLSL
#define SUPPLE_PROX_GLSL

const uint NO_NODE = 0xFFFFFFFFu;

// ctrl words.
const uint PROX_STATUS = 0u;      // 0 running, 1 absolute, 2 relative, 3 max iterations
const uint PROX_SWEEPS = 1u;
const uint PROX_ROLLBACKS = 2u;
const uint PROX_INCREASES = 3u;
const uint PROX_R_SCALE = 4u;     // f32 bits
const uint PROX_LAST_MERIT = 5u;  // f32 bits (+inf before the first acceptance)
const uint PROX_MERIT = 6u;       // f32 bits, last computed
const uint PROX_ACCEPTED = 7u;
const uint PROX_RESIDUAL = 8u;    // f32 bits: natural-map residual of the returned λ
const uint PROX_HISTORY = 16u;    // merits of every sweep (f32 bits), max_iterations words

// Push constants of every PROX kernel (64 bytes).
struct ProxParams {
    uint k;              // contacts (capacity-bounded; kernels also read meta[0])
    uint n;              // nodes
    uint max_iterations;
    uint color;          // per-color kernel: its color; fused: number of colors
    float abs_tol;
    float rel_tol;
    float nu_reduce;
    float nu_increase;
    float too_small;
    float r_factor;
    uint sweeps;         // fused: sweeps per dispatch
    uint mode;           // kernel-specific
    uint seed;           // Jones–Plassmann priorities
    uint pad1, pad2, pad3;
};

// Projection onto R+ (a NaN maps to 0), as cpu_reference::prox::operators::prox_r_plus.
float prox_r_plus(float z) { return z > 0.0 ? z : 0.0; }

// Projection onto the disk of radius mu * ln (0 when ln <= 0), as prox_disk.
vec2 prox_disk(vec2 z, float mu, float ln) {
    if (ln <= 0.0) return vec2(0.0);
    float radius = mu * ln;
    float sq = dot(z, z);
    if (sq <= radius * radius) return z;
    return z * (radius / sqrt(sq));
}

// The contact prox: λn = prox_R+(z_n), λf = prox_disk(z_f, μ, radius_n < 0 ? λn : radius_n).
vec3 prox_contact(vec3 z, float mu, float radius_n) {
    float ln = prox_r_plus(z.x);
    vec2 f = prox_disk(z.yz, mu, radius_n < 0.0 ? ln : radius_n);
    return vec3(ln, f);
}

// Tangents completing the unit normal n (Duff et al. 2017), as contact::tangents.
void prox_tangents(vec3 n, out vec3 s, out vec3 t) {
    float sgn = n.z >= 0.0 ? 1.0 : -1.0;
    float a = -1.0 / (sgn + n.z);
    float b = n.x * n.y * a;
    s = vec3(1.0 + sgn * n.x * n.x * a, sgn * b, -sgn * n.x);
    t = vec3(b, sgn + n.y * n.y * a, -n.y);
}

#endif
