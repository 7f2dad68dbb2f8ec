#version 460
// PROX K3 in ONE workgroup: merit = ‖λ − saved‖∞ reduced on the device (max: exact in any
// order), RAINBOW's convergence test and r-factor update (rollback or acceptance, growth when
// the merit fell by less than too_small) into ctrl, then the commit of λ or the rollback.
// Host: engine/src/contact/prox/solver.rs. Reference: cpu_reference/prox/solve.rs (solve, decide).
#define PROX_WITH_MERIT
#include "common.glsl"
#include "prox.glsl"
layout(std430, binding = 0) buffer Ctrl { uint ctrl[]; };
layout(std430, binding = 1) readonly buffer Meta { uint meta[]; };
layout(std430, binding = 2) buffer Lam { vec4 lam[]; };
layout(std430, binding = 3) buffer Saved { vec4 saved[]; };
layout(push_constant) uniform Push { ProxParams p; };
#include "prox_solve.glsl"
void main() {
    // Uniform: every invocation reads the status before invocation 0 writes it.
    if (ctrl[PROX_STATUS] != 0u) return;
    prox_merit_commit(min(meta[0], p.k));
}
