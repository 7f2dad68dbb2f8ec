// Deterministic workgroup sums for the device-driven PCG (kernels/solver/): every invocation
// contributes one value; invocation 0 adds the WG values in invocation order and every
// invocation gets the same total. Call in uniform control flow (it has barriers). The order is
// fixed by the workgroup size, so the same inputs give the same bits on every run and in every
// workgroup of a dispatch (the step and direction kernels reduce the per-workgroup partials
// redundantly in each workgroup instead of in an extra dispatch).
// wg_sum3 sums three values per invocation with one set of barriers (each component in the
// same order as wg_sum would: the same bits).
shared vec3 wg_sum_scratch[WG];
shared vec3 wg_sum_total;

vec3 wg_sum3(vec3 v) {
    wg_sum_scratch[gl_LocalInvocationID.x] = v;
    barrier();
    if (gl_LocalInvocationID.x == 0u) {
        vec3 t = vec3(0.0);
        for (uint k = 0u; k < WG; ++k) t += wg_sum_scratch[k];
        wg_sum_total = t;
    }
    barrier();
    // No barrier after this read: a later call writes wg_sum_scratch only after this one's
    // second barrier (invocation 0 has summed it), and wg_sum_total only after its own first
    // barrier, which every invocation reaches after this read.
    return wg_sum_total;
}

float wg_sum(float v) {
    return wg_sum3(vec3(v, 0.0, 0.0)).x;
}

// out = the sum of buf[0 .. m) (per-workgroup partials, a samplerBuffer: read with texelFetch):
// invocation l adds buf[l], buf[l + WG], ... in order, then wg_sum. Uniform control flow.
#define SUM_PARTIALS(out, buf, m)                                             \
    {                                                                         \
        float a_ = 0.0;                                                       \
        for (uint k_ = gl_LocalInvocationID.x; k_ < (m); k_ += WG)            \
            a_ += texelFetch(buf, int(k_)).x;                                 \
        out = wg_sum(a_);                                                     \
    }

// The same for three partial arrays of m entries at once: out = (Σ a, Σ b, Σ c).
#define SUM_PARTIALS3(out, a, b, c, m)                                        \
    {                                                                         \
        vec3 a_ = vec3(0.0);                                                  \
        for (uint k_ = gl_LocalInvocationID.x; k_ < (m); k_ += WG)            \
            a_ += vec3(texelFetch(a, int(k_)).x, texelFetch(b, int(k_)).x,    \
                       texelFetch(c, int(k_)).x);                             \
        out = wg_sum3(a_);                                                    \
    }
