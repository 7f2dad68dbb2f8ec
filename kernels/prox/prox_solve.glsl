// PROX sweep building blocks shared by the per-color, Jacobi, merit and fused kernels. Include
// after the buffer declarations: ctrl, nodes, weights, frame, bias, lam, saved, wvel, inv_mass,
// csr_off, csr_ent (as each function needs) and `p` (ProxParams).
// Reference: engine/src/cpu_reference/prox/{contact,solve}.rs.
#ifndef SUPPLE_PROX_SOLVE_GLSL
#define SUPPLE_PROX_SOLVE_GLSL

#ifdef PROX_WITH_UPDATE
// J_k w: (normal, s, t) components of Σ_j w_kj wvel[node_kj] (unused slots have weight 0 and
// read node 0: a clamped index, never a select of a load).
vec3 prox_jacobian_w(uint k) {
    uvec4 na = nodes[2u * k], nb = nodes[2u * k + 1u];
    vec4 wa = weights[2u * k], wb = weights[2u * k + 1u];
    vec3 rel = vec3(0.0);
    for (uint j = 0u; j < 4u; ++j) {
        uint a = na[j] == NO_NODE ? 0u : na[j];
        rel += wa[j] * wvel[a].xyz;
    }
    for (uint j = 0u; j < 4u; ++j) {
        uint a = nb[j] == NO_NODE ? 0u : nb[j];
        rel += wb[j] * wvel[a].xyz;
    }
    return vec3(dot(frame[3u * k].xyz, rel), dot(frame[3u * k + 1u].xyz, rel), dot(frame[3u * k + 2u].xyz, rel));
}

// New impulses of contact k from the current wvel: z = λ − r (J w + b), prox with the cone
// radius from the new λn (radius_n < 0) or the given one (Jacobi: the old λn).
vec3 prox_contact_update(uint k, float r_scale, bool jacobi) {
    vec3 l = lam[k].xyz;
    vec4 b = bias[k];
    vec3 z = l - (b.w * r_scale) * (prox_jacobian_w(k) + b.xyz);
    return prox_contact(z, frame[3u * k].w, jacobi ? l.x : -1.0);
}

#ifndef PROX_NO_SCATTER
// wvel += W J_kᵀ dλ at contact k's nodes (fixed nodes, inverse mass 0, are never written).
void prox_scatter(uint k, vec3 dl) {
    vec3 imp = dl.x * frame[3u * k].xyz + dl.y * frame[3u * k + 1u].xyz + dl.z * frame[3u * k + 2u].xyz;
    for (uint h = 0u; h < 2u; ++h) {
        uvec4 na = nodes[2u * k + h];
        vec4 wa = weights[2u * k + h];
        for (uint j = 0u; j < 4u; ++j) {
            uint a = na[j];
            if (a != NO_NODE) {
                float m = inv_mass[a];
                if (m > 0.0) {
                    wvel[a].xyz += (m * wa[j]) * imp;
                }
            }
        }
    }
}

// Gauss–Seidel update of contact k (serial or one contact of a color).
void prox_gs_update(uint k, float r_scale) {
    vec3 l = lam[k].xyz;
    vec3 nl = prox_contact_update(k, r_scale, false);
    lam[k] = vec4(nl, 0.0);
    prox_scatter(k, nl - l);
}
#endif
#endif

#ifdef PROX_WITH_GATHER
// wvel[a] = m_a⁻¹ Σ_{(k, j) at a} w_kj C_kᵀ λ_k, entries in (original contact, slot) order.
void prox_gather_node(uint a) {
    float m = inv_mass[a];
    vec3 acc = vec3(0.0);
    if (m > 0.0) {
        for (uint e = csr_off[a]; e < csr_off[a + 1u]; ++e) {
            uint entry = csr_ent[e];
            uint k = entry >> 3u, j = entry & 7u;
            vec4 w4 = weights[2u * k + (j >> 2u)];
            float wt = w4[j & 3u];
            vec3 l = lam[k].xyz;
            vec3 imp = l.x * frame[3u * k].xyz + l.y * frame[3u * k + 1u].xyz + l.z * frame[3u * k + 2u].xyz;
            acc += (m * wt) * imp;
        }
    }
    wvel[a] = vec4(acc, 0.0);
}
#endif

#ifdef PROX_WITH_MERIT
shared float prox_red[WG];
shared uint prox_nan[WG];
shared uint prox_decision;
shared uint prox_status;

// After a sweep, in ONE workgroup: merit = ‖λ − saved‖∞ (a max: exact in any order), RAINBOW's
// decision by invocation 0 (cpu_reference::prox::solve::decide), then every invocation commits:
// reject -> λ = saved, accept -> saved = λ, converged -> nothing. Returns the new status
// (0 running, 1 absolute, 2 relative, 3 max iterations; uniform). Call from uniform control
// flow.
uint prox_merit_commit(uint kc) {
    uint lid = gl_LocalInvocationID.x;
    float m = 0.0;
    uint nan_seen = 0u;
    for (uint k = lid; k < kc; k += WG) {
        vec3 d = abs(lam[k].xyz - saved[k].xyz);
        if (any(isnan(d))) nan_seen = 1u;
        m = max(m, max(d.x, max(d.y, d.z)));
    }
    prox_red[lid] = m;
    prox_nan[lid] = nan_seen;
    barrier();
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        if (lid < s) {
            prox_red[lid] = max(prox_red[lid], prox_red[lid + s]);
            prox_nan[lid] |= prox_nan[lid + s];
        }
        barrier();
    }
    if (lid == 0u) {
        float merit = prox_nan[0] != 0u ? uintBitsToFloat(0x7fc00000u) : prox_red[0];
        float last = uintBitsToFloat(ctrl[PROX_LAST_MERIT]);
        float rs = uintBitsToFloat(ctrl[PROX_R_SCALE]);
        uint sweeps = ctrl[PROX_SWEEPS] + 1u;
        ctrl[PROX_SWEEPS] = sweeps;
        ctrl[PROX_MERIT] = floatBitsToUint(merit);
        if (sweeps <= p.max_iterations) ctrl[PROX_HISTORY + sweeps - 1u] = floatBitsToUint(merit);
        // 0 accept, 1 reject, 2 converged (absolute), 3 converged (relative).
        uint d;
        if (isnan(merit) || isinf(merit)) d = 1u;
        else if (merit < p.abs_tol) d = 2u;
        else if (abs(merit - last) < p.rel_tol * last) d = 3u;
        else if (merit > last) d = 1u;
        else d = 0u;
        uint status = 0u;
        if (d == 1u) {
            ctrl[PROX_R_SCALE] = floatBitsToUint(rs * p.nu_reduce);
            ctrl[PROX_ROLLBACKS] += 1u;
        } else if (d == 0u) {
            if (last - merit < p.too_small) {
                ctrl[PROX_R_SCALE] = floatBitsToUint(rs * p.nu_increase);
                ctrl[PROX_INCREASES] += 1u;
            }
            ctrl[PROX_LAST_MERIT] = floatBitsToUint(merit);
            ctrl[PROX_ACCEPTED] += 1u;
        } else {
            status = d - 1u;
        }
        if (status == 0u && sweeps >= p.max_iterations) status = 3u;
        ctrl[PROX_STATUS] = status;
        prox_decision = d;
        prox_status = status;
    }
    barrier();
    uint d = prox_decision;
    if (d == 1u) {
        for (uint k = lid; k < kc; k += WG) lam[k] = saved[k];
    } else if (d == 0u) {
        for (uint k = lid; k < kc; k += WG) saved[k] = lam[k];
    }
    return prox_status;
}
#endif

#endif
