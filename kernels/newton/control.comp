#version 460
// The device-driven Newton loop's decisions (engine/src/stepper/newton/device_loop.rs): one
// invocation reads the reductions of the step's kernels and writes the phase word that gates
// the next sections of the iteration graph (engine/src/vk/gate.rs), so a step runs with no host
// round trip between Newton iterations, PCG runs and line-search trials. The rules are the
// host-driven loop's (engine/src/stepper/newton/mod.rs, `iterate` and `line_search`) with the
// same comparisons: energies are kept as exact f32 pairs (two-sum of the element and inertia
// sums, as the host's f64 sum of two f32), the displacement test uses the exact product
// |d|max · α against the f64 tolerance as an f32 pair, the gradient test the largest f32 not
// above the f64 tolerance.
// MODE 0 START (after the step's first evaluation): clears the words, then as MODE 4.
// MODE 1 SOLVED (after every PCG run): while assembling or solving, reads the global solve's
//   done flag; unfinished: SOLVING (the next submission's iterations continue it); done: logs the
//   solve, counts it, α = 1 and SEARCH, or stops the step when its residual is not finite.
// MODE 2 TRIED (after each trial): accepts α when E(x + α d) ≤ E(x) + 1e-12 max(|E(x)|, 1e-12)
//   (ACCEPT) or halves it, failing (FINISH) once α is below the floor (α ≤ 1e-6 without one).
// MODE 3 ACCEPTED (after x = x_trial): FINISH when |d|max · α < tolerance, else EVALUATE.
// MODE 4 EVALUATED (after an evaluation): E(x) and |g|max; FINISH at the iteration cap or when
//   the gradient test passes, else ASSEMBLE.
// MODE 5 FINISHED (the last node of an iteration graph): counts the graph when the step was
//   still running in it; after the velocity update, phase 0 and status DONE.
// Reference: cpu_reference/newton.rs (`device_control`).
#include "common.glsl"
layout(constant_id = 1) const uint MODE = 0;
layout(std430, binding = 0) buffer Control { uint words[]; };
struct Reduced { float value; uint index; };
// Energies: element (0), inertia (1); max |g| (2); max |d| (3).
layout(std430, binding = 1) readonly buffer Sums { Reduced sums[]; };
layout(std430, binding = 2) readonly buffer PcgScalars { float pcg[]; };
layout(std430, binding = 3) buffer Alpha { float alpha[]; };
layout(push_constant) uniform P {
    uint max_iterations;
    float gradient_tolerance; // largest f32 <= the f64 tolerance; 0: no gradient test
    float tolerance_hi;       // the f64 displacement tolerance as hi + lo
    float tolerance_lo;
    float alpha_floor;        // < 0: none (the search fails once α <= 1e-6)
    uint warm;                // whether the warm start ran (its iterations are logged)
    uint slot_iterations;     // result slots of the PCG scalars
    uint slot_residual;
    uint slot_done;
    uint slot_warm_iterations;
    uint slot_exit;           // exit code, model decrease and ½ r·z left (linear/pcg.rs)
    uint slot_model;
    uint slot_remaining;
} p;

// Words of the control buffer (keep in step with device_loop.rs).
const uint PHASE = 0u, SOLVES = 1u, TRIALS = 2u, STATUS = 3u, ENERGY_HI = 4u, ENERGY_LO = 5u,
           GNORM = 6u, DMAX = 7u, GRAPHS = 8u, LOG = 16u, LOG_WORDS = 7u;
// Phase bits: the sections the next gates open.
const uint ASSEMBLE = 1u, SOLVING = 2u, SEARCH = 4u, ACCEPT = 8u, EVALUATE = 16u, FINISH = 32u;
// Status bits.
const uint SEARCH_FAILED = 1u, NOT_FINITE = 2u, DONE = 4u;

float word_f(uint i) { return uintBitsToFloat(words[i]); }
void set_f(uint i, float v) { words[i] = floatBitsToUint(v); }

// a + b = s + e exactly (Knuth's two-sum; `precise` keeps the compiler from reassociating).
void two_sum(float a, float b, out float s, out float e) {
    precise float ps = a + b;
    precise float bb = ps - a;
    precise float err = (a - (ps - bb)) + (b - bb);
    s = ps;
    e = err;
}

void evaluated() {
    float hi, lo;
    two_sum(sums[0].value, sums[1].value, hi, lo);
    set_f(ENERGY_HI, hi);
    set_f(ENERGY_LO, lo);
    float g = sums[2].value;
    set_f(GNORM, g);
    bool stop = words[SOLVES] >= p.max_iterations
        || (p.gradient_tolerance > 0.0 && g <= p.gradient_tolerance);
    words[PHASE] = stop ? FINISH : ASSEMBLE;
}

void main() {
    if (gl_LocalInvocationID.x != 0u) return;
    uint phase = words[PHASE];
    if (MODE == 0u) {
        for (uint i = 0u; i < LOG; ++i) words[i] = 0u;
        words[PHASE] = EVALUATE;
        evaluated();
    } else if (MODE == 1u) {
        if ((phase & (ASSEMBLE | SOLVING)) == 0u) return;
        if (pcg[p.slot_done] == 0.0) {
            words[PHASE] = SOLVING;
            return;
        }
        uint k = words[SOLVES];
        float rel = pcg[p.slot_residual];
        uint at = LOG + k * LOG_WORDS;
        words[at] = uint(pcg[p.slot_iterations]);
        words[at + 1u] = p.warm != 0u ? uint(pcg[p.slot_warm_iterations]) : 0u;
        set_f(at + 2u, rel);
        set_f(at + 3u, 0.0);
        words[at + 4u] = uint(pcg[p.slot_exit]);
        set_f(at + 5u, pcg[p.slot_model]);
        set_f(at + 6u, pcg[p.slot_remaining]);
        words[SOLVES] = k + 1u;
        if (isnan(rel) || isinf(rel)) {
            words[STATUS] |= NOT_FINITE;
            words[PHASE] = 0u;
            return;
        }
        words[TRIALS] = 0u;
        alpha[0] = 1.0;
        words[PHASE] = SEARCH;
    } else if (MODE == 2u) {
        if ((phase & SEARCH) == 0u) return;
        float a = alpha[0];
        set_f(DMAX, sums[3].value);
        float hi, lo;
        two_sum(sums[0].value, sums[1].value, hi, lo);
        float e_hi = word_f(ENERGY_HI);
        precise float diff = (hi - e_hi) + (lo - word_f(ENERGY_LO));
        float slack = 1e-12 * max(abs(e_hi), 1e-12);
        uint at = LOG + (words[SOLVES] - 1u) * LOG_WORDS;
        if (diff <= slack) {
            set_f(ENERGY_HI, hi);
            set_f(ENERGY_LO, lo);
            set_f(at + 3u, a);
            words[PHASE] = ACCEPT;
            return;
        }
        a *= 0.5;
        alpha[0] = a;
        words[TRIALS] += 1u;
        bool go_on = p.alpha_floor < 0.0 ? a > 1e-6 : (a >= p.alpha_floor && a > 0.0);
        if (!go_on) {
            words[STATUS] |= SEARCH_FAILED;
            words[PHASE] = FINISH;
        }
    } else if (MODE == 3u) {
        if ((phase & ACCEPT) == 0u) return;
        float d = word_f(DMAX);
        float a = alpha[0];
        // d·a = prod + err exactly (fma); compared with tolerance_hi + tolerance_lo.
        precise float prod = d * a;
        precise float err = fma(d, a, -prod);
        precise float below = (prod - p.tolerance_hi) + (err - p.tolerance_lo);
        words[PHASE] = below < 0.0 ? FINISH : EVALUATE;
    } else if (MODE == 4u) {
        if ((phase & EVALUATE) == 0u) return;
        evaluated();
    } else {
        // The last node of every iteration graph: counts the graphs the step used.
        if (phase != 0u) words[GRAPHS] += 1u;
        if ((phase & FINISH) == 0u) return;
        words[PHASE] = 0u;
        words[STATUS] |= DONE;
    }
}
