//! Recording of the BAL graphs (one compiled graph per phase of a Newton iteration, compiled
//! once per workspace allocation).

use super::buffers::{slot, PairBuffers};
use super::{BalBindings, Candidates, Graphs, KeyBits, Push};
use crate::primitives::ReduceOp;
use crate::vk::{
    ids, CompileOptions, Context, Dispatch, GpuBuffer, Graph, KernelId, TexelFormat, VkResult,
};

/// Workgroup size of the BAL kernels.
const WG: u32 = 64;

fn groups(n: usize) -> [u32; 3] {
    [(n as u32).div_ceil(WG).max(1), 1, 1]
}

/// The push constants of a workspace.
pub(crate) fn push(c: &Candidates, b: &PairBuffers, nv: usize, bits: KeyBits) -> Push {
    Push {
        cap_vt: c.pairs_vt.len() as u32,
        cap_ee: c.pairs_ee.len() as u32,
        pair_cap: b.capacity as u32,
        nv: nv as u32,
        bits_a: bits.a,
        bits_b: bits.b,
        key_bits: bits.total(),
        entries: 8 * b.capacity as u32,
    }
}

fn dispatch(name: &str, kernel: KernelId, n: usize, push: &Push) -> Dispatch {
    Dispatch::new(name, kernel, groups(n))
        .workgroup_size(WG)
        .push(push)
}

/// Binds the candidate records (bindings of `candidates.glsl`).
fn candidates(d: Dispatch, c: &Candidates) -> Dispatch {
    d.read(&c.pairs_vt)
        .read(&c.pairs_ee)
        .read(&c.status)
        .read(&c.triangles)
        .read(&c.edges)
}

/// Candidate barrier energies at `x`, summed into `out_slot`.
fn candidate_energy(
    g: &mut Graph,
    b: &PairBuffers,
    c: &Candidates,
    x: &GpuBuffer<[f32; 4]>,
    push: &Push,
    out_slot: usize,
) {
    let n = c.capacity();
    let count = if out_slot == slot::BARRIER {
        &b.count_iterate
    } else {
        &b.count_trial
    };
    g.fill("bal.clear_energy_count", count, 0);
    g.dispatch(
        candidates(
            dispatch("bal.candidate_energy", ids::BAL_CANDIDATE_ENERGY, n, push)
                .read(&b.params)
                .read(x),
            c,
        )
        .read(&b.rest_sq)
        .read(&b.vals)
        .write(&b.cand_energy)
        .read_write(count),
    );
    b.reduce.record(
        g,
        &b.cand_energy,
        n.max(1),
        ReduceOp::Sum,
        &b.sums,
        out_slot,
    );
}

/// Binds the stencil inputs of `pair_terms.comp` / `stencil_energy.comp` (bindings 0–9).
fn stencil_inputs(
    d: Dispatch,
    b: &PairBuffers,
    x: &GpuBuffer<[f32; 4]>,
    xs: &BalBindings,
) -> Dispatch {
    d.read(&b.params)
        .read(x)
        .read(&xs.x_start)
        .read(&b.pair_verts)
        .read(&b.pair_info)
        .read(&b.pair_aug)
        .read(&b.fr_verts)
        .read(&b.fr_beta)
        .read(&b.fr_t0)
        .read(&b.fr_t1)
}

/// Every graph of a workspace.
pub(crate) fn compile(
    ctx: &Context,
    xs: &BalBindings,
    c: &Candidates,
    b: &PairBuffers,
    nv: usize,
    bits: KeyBits,
) -> VkResult<Graphs> {
    let opts = CompileOptions {
        graph_timestamps: true,
        ..Default::default()
    };
    let push = push(c, b, nv, bits);
    let n = c.capacity();
    let p = b.capacity;
    // reset: empty list, A′, lags and counts.
    let mut g = Graph::new("bal.reset");
    g.fill("bal.reset_verts", &b.pair_verts, u32::MAX);
    g.fill("bal.reset_aug", &b.pair_aug, 0);
    g.fill("bal.reset_keys", &b.pair_keys, u32::MAX);
    g.fill("bal.reset_d", &b.pair_d, 0x7f80_0000);
    g.fill("bal.reset_counter", &b.counter, 0);
    g.fill("bal.reset_prev_count", &b.prev_count, 0);
    g.fill("bal.reset_friction", &b.fr_verts, u32::MAX);
    g.fill("bal.reset_sums", &b.sums, 0);
    let reset = g.compile(ctx, opts)?;
    // save: the current list becomes the previous one.
    let mut g = Graph::new("bal.save");
    g.copy("bal.save_keys", &b.pair_keys, &b.prev_keys);
    g.copy("bal.save_aug", &b.pair_aug, &b.prev_aug);
    g.copy(
        "bal.save_count",
        b.counter.slice(0..1),
        b.prev_count.slice(0..1),
    );
    let save = g.compile(ctx, opts)?;
    // active: keys, sort, build, min d.
    let mut g = Graph::new("bal.active");
    g.fill("bal.clear_counter", &b.counter, 0);
    g.dispatch(
        candidates(
            dispatch("bal.active_keys", ids::BAL_ACTIVE_KEYS, n, &push)
                .read(&b.params)
                .read(&xs.x),
            c,
        )
        .write(&b.keys)
        .write(&b.vals)
        .read_write(&b.counter),
    );
    b.sort_candidates
        .record(&mut g, &b.keys, &b.vals, n.max(1), bits.total());
    g.dispatch(
        candidates(
            dispatch("bal.active_build", ids::BAL_ACTIVE_BUILD, p, &push)
                .read(&b.params)
                .read(&xs.x),
            c,
        )
        .read(&b.rest_sq)
        .read(&b.keys)
        .read(&b.vals)
        .read(&b.counter)
        .read(&b.prev_keys)
        .read(&b.prev_aug)
        .read(&b.prev_count)
        .write(&b.pair_verts)
        .write(&b.pair_info)
        .write(&b.pair_d)
        .write(&b.pair_aug)
        .write(&b.pair_keys),
    );
    b.reduce.record(
        &mut g,
        &b.pair_d,
        p,
        ReduceOp::Min,
        &b.sums,
        slot::MIN_DISTANCE,
    );
    let active = g.compile(ctx, opts)?;
    // rule / dual: multipliers.comp in its two modes.
    // The rule (mode 0) also flags A′'s pairs and sums the flags into |A′|.
    let multipliers = |name: &str, mode: u32| -> VkResult<_> {
        let mut g = Graph::new(name);
        let d = dispatch(name, ids::BAL_MULTIPLIERS, p, &push)
            .spec(&[mode])
            .read(&b.params)
            .read(&xs.x)
            .read(&b.pair_verts)
            .read(&b.pair_info)
            .read(&b.pair_d)
            .read_write(&b.pair_aug);
        if mode == 0 {
            g.dispatch(d.write(&b.pair_in_aug));
            b.reduce.record(
                &mut g,
                &b.pair_in_aug,
                p,
                ReduceOp::Sum,
                &b.sums,
                slot::AUGMENTED,
            );
        } else {
            // Bound but not accessed in this mode.
            g.dispatch(d.read(&b.pair_in_aug));
        }
        g.compile(ctx, opts)
    };
    let rule = multipliers("bal.rule", 0)?;
    let dual = multipliers("bal.dual_update", 1)?;
    // lag: friction stencils.
    let mut g = Graph::new("bal.lag");
    g.dispatch(
        dispatch("bal.friction_lag", ids::BAL_FRICTION_LAG, p, &push)
            .read(&b.params)
            .read(&xs.x)
            .read(&b.pair_verts)
            .read(&b.pair_info)
            .read(&b.pair_d)
            .read(&b.pair_aug)
            .write(&b.fr_verts)
            .write(&b.fr_beta)
            .write(&b.fr_t0)
            .write(&b.fr_t1),
    );
    let lag = g.compile(ctx, opts)?;
    // evaluate: energies, stencil terms, incidence, gathers.
    let mut g = Graph::new("bal.evaluate");
    candidate_energy(&mut g, b, c, &xs.x, &push, slot::BARRIER);
    g.dispatch(
        stencil_inputs(
            dispatch("bal.pair_terms", ids::BAL_PAIR_TERMS, 2 * p, &push),
            b,
            &xs.x,
            xs,
        )
        .write(&b.st_energy)
        .write(&b.st_grad)
        .write(&b.st_hess)
        .write(&b.st_stiff),
    );
    b.reduce.record(
        &mut g,
        &b.st_energy,
        2 * p,
        ReduceOp::Sum,
        &b.sums,
        slot::STENCIL,
    );
    g.dispatch(
        dispatch("bal.corner_keys", ids::BAL_CORNER_KEYS, 8 * p, &push)
            .read(&b.pair_verts)
            .read(&b.fr_verts)
            .write(&b.inc_keys)
            .write(&b.inc_vals),
    );
    let key_bits = 32 - (nv as u32).leading_zeros();
    b.sort_entries
        .record(&mut g, &b.inc_keys, &b.inc_vals, 8 * p, key_bits.max(1));
    g.dispatch(
        Dispatch::new("bal.rows", ids::RECOVERY_PENALTY_ROWS, groups(nv + 1))
            .workgroup_size(WG)
            .read(&b.inc_keys)
            .write(&b.row_ptr)
            .push(&[nv as u32, 8 * p as u32]),
    );
    g.dispatch(
        dispatch("bal.gather", ids::BAL_GATHER, nv, &push)
            .read(&b.row_ptr)
            .read(&b.inc_vals)
            .read(&b.st_grad)
            .read(&b.st_hess)
            .read(&b.st_stiff)
            .write(&b.node_grad)
            .write(&b.node_diag)
            .write(&b.node_stiff),
    );
    let evaluate = g.compile(ctx, opts)?;
    // trial: energies at x_trial.
    let mut g = Graph::new("bal.trial");
    candidate_energy(&mut g, b, c, &xs.x_trial, &push, slot::BARRIER_TRIAL);
    g.dispatch(
        stencil_inputs(
            dispatch("bal.stencil_energy", ids::BAL_STENCIL_ENERGY, 2 * p, &push),
            b,
            &xs.x_trial,
            xs,
        )
        .write(&b.st_energy),
    );
    b.reduce.record(
        &mut g,
        &b.st_energy,
        2 * p,
        ReduceOp::Sum,
        &b.sums,
        slot::STENCIL_TRIAL,
    );
    let trial = g.compile(ctx, opts)?;
    // ccd: the step bound along the direction.
    let mut g = Graph::new("bal.ccd");
    g.dispatch(
        candidates(
            dispatch("bal.ccd_bound", ids::BAL_CCD_BOUND, n, &push)
                .read(&b.params)
                .read(&xs.x)
                .read(&xs.direction),
            c,
        )
        .write(&b.toi),
    );
    b.reduce
        .record(&mut g, &b.toi, n.max(1), ReduceOp::Min, &b.sums, slot::CCD);
    let ccd = g.compile(ctx, opts)?;
    Ok(Graphs {
        save,
        active,
        rule,
        dual,
        lag,
        evaluate,
        trial,
        ccd,
        reset,
    })
}

/// Records `y += C p` (masked by stiffness groups when given).
pub(crate) fn record_spmv(
    g: &mut Graph,
    b: &PairBuffers,
    push: Push,
    p: &GpuBuffer<[f32; 4]>,
    y: &GpuBuffer<[f32; 4]>,
    groups_buf: Option<&GpuBuffer<i32>>,
) {
    let masked = groups_buf.is_some() as u32;
    g.dispatch(
        dispatch(
            "bal.contact_spmv",
            ids::BAL_CONTACT_SPMV,
            push.nv as usize,
            &push,
        )
        .spec(&[masked])
        .read_texels(&b.row_ptr, TexelFormat::R32Uint)
        .read_texels(&b.inc_vals, TexelFormat::R32Uint)
        .read_texels(&b.pair_verts, TexelFormat::Rgba32Uint)
        .read_texels(&b.fr_verts, TexelFormat::Rgba32Uint)
        .read_texels(&b.st_hess, TexelFormat::Rgba32Float)
        .read_texels(p, TexelFormat::Rgba32Float)
        .read_write(y)
        .read(groups_buf.unwrap_or(&b.no_groups)),
    );
}
