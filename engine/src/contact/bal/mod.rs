//! Barrier-augmented Lagrangian (BAL) contact on the GPU (issue 23; spec
//! `../shared/notes/bal-spec.md` §A8): the kernels' workspace ([`BalContact`]) and the contact
//! plug-in ([`handler`]: `collision.method = "bal"`, an energy term of the Newton stepper that
//! follows the contract below through the generic hooks of `phase.rs`).
//! Reference of every kernel: [`crate::cpu_reference::bal::kernels`]; of the method:
//! [`crate::cpu_reference::bal::solver`].
//!
//! # What the Newton stepper must offer (the wiring contract)
//!
//! **Buffers BAL reads** (bound once, in [`BalBindings`], all `vec4` per vertex, f32, metres):
//! the iterate `x`; the line-search trial positions `x_trial`; the start-of-step positions
//! `x_start` (friction displacements); the Newton direction `p` (the PCG solution, for the CCD
//! bound). **Candidate pairs** ([`Candidates`]): the buffers of a
//! [`crate::proximity::ProximitySearch`] over the contact surface, run on `x` with a search
//! distance of at least `d̂ + 2 max|p|` (so that every pair that can come within d̂ during the
//! step is a candidate; the reuse bound of `proximity::ReuseTracker` tells when to search again,
//! and a search that reallocates changes its `generation()`: rebuild the `BalContact` then).
//!
//! **What BAL writes for the stepper** (per vertex, deterministic gathers, no float atomics):
//! [`BalContact::node_gradient`] (N, add to ∇E before forming the right-hand side −∇L),
//! [`BalContact::node_diag`] (N/m, three rows per vertex: add to the diagonal blocks D before
//! inverting them for the block-Jacobi preconditioner), [`BalContact::node_stiffness`] (N/m, add
//! to the warm start's per-node e_j next to the elastic and M/h² terms, spec §A6/#10), and the
//! off-diagonal contact blocks C, applied by [`BalContact::record_spmv`] inside the PCG graph
//! right after the mesh SpMV (`y += C p`; with the stiffness groups for the warm start's masked
//! SpMV). Energies (J) come back as scalars: [`BalContact::evaluate`] at `x`,
//! [`BalContact::trial`] at `x_trial`.
//!
//! **When it is called** (Algorithm 1, spec §A3; the host decisions are the functions of
//! [`rules`], which the CPU reference solver uses too):
//! 1. Start of step: [`BalContact::reset`] (μ = 0, A′ = ∅), then `set_params` with σ⁰ =
//!    [`rules::initial_sigma`] clamped to [`rules::sigma_bounds`] (the unit-σ barrier gradient
//!    is [`BalContact::node_gradient`] after `evaluate` with σ = 1 and A′ empty, dotted with
//!    the elastic + inertia gradient).
//! 2. Every Newton iteration at xˡ: [`BalContact::run_active_set`] (A and its min d; an overflow
//!    grows the list and redoes the pass before returning, so no pair is ever dropped), the A′
//!    rule [`BalContact::apply_rule`] ([`rules::augmentation_rule`] from this and the previous
//!    iteration's min d; always `Empty` for the inexact-Newton baseline), the friction lag
//!    [`BalContact::lag_friction`] (every iteration, or at l = 0 only for per-step friction),
//!    [`BalContact::evaluate`] (energy, node gradient, diagonal blocks, stiffness, C), then the
//!    PCG with `record_spmv`.
//! 3. Before the line search: [`BalContact::max_step`] = α_max, the CCD bound over every
//!    candidate (the search starts at `min(1, α_max)`); every trial: [`BalContact::trial`],
//!    whose [`BalEnergy::active`] is the active-pair count at the trial (the memory cap of
//!    §5.2 halves α while it exceeds the cap, before the decrease test). The capacity given at
//!    construction should exceed that cap, so the active list never overflows.
//! 4. After the accepted step (not converged): [`BalContact::dual_update`] at xˡ⁺¹ (s, μ with
//!    σˡ); then, once the next iteration's `run_active_set` reported min d at xˡ⁺¹, σ by
//!    [`rules::grown_sigma`] if it is below 10⁻² d̂ (`set_params` before `apply_rule` and
//!    `evaluate`). Convergence: ‖∇L‖ ≤ 10⁻⁴ ‖∇L⁰‖ with ∇L the stepper's gradient plus
//!    `node_gradient`.
//!
//! Buffers are allocated once (pair capacity given at construction, grown only on overflow);
//! graphs are compiled once per allocation. Every run is deterministic: pairs are ordered by
//! their 64-bit key whatever order the search produced them in, and every sum is a gather.

mod buffers;
mod graphs;
pub mod handler;
pub mod rules;
pub mod system;

pub use rules::{AugRule, FrictionLagMode, KeyBits, SigmaRule};

use crate::primitives::ReduceResult;
use crate::proximity::ProximitySearch;
use crate::vk::{CompiledGraph, Context, GpuBuffer, Graph, VkError};
use buffers::{slot, PairBuffers};

/// Parameters the kernels read at run time (the host writes them between graph runs).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BalParams {
    /// σ (N/m): barrier stiffness and augmentation penalty.
    pub sigma: f32,
    /// d̂ (m).
    pub d_hat: f32,
    /// Friction mollifier ε = ε_v h (m).
    pub eps_f: f32,
    /// χ, the friction coefficient.
    pub chi: f32,
    /// ξ: the CCD bound keeps every pair at least ξ times its distance apart.
    pub xi: f32,
    /// Augmentation threshold 10⁻² d̂ (m).
    pub aug_threshold: f32,
    /// A′ rule code of [`AugRule`].
    pub rule: u32,
    /// Unused (alignment).
    pub pad: f32,
}

impl BalParams {
    /// Parameters for σ (N/m), d̂ (m), ε_v (m/s), h (s), χ and ξ, with the paper's 10⁻² d̂.
    pub fn new(sigma: f64, d_hat: f64, eps_v: f64, h: f64, chi: f64, xi: f64) -> Self {
        BalParams {
            sigma: sigma as f32,
            d_hat: d_hat as f32,
            eps_f: (eps_v * h) as f32,
            chi: chi as f32,
            xi: xi as f32,
            aug_threshold: (1e-2 * d_hat) as f32,
            rule: AugRule::Empty as u32,
            pad: 0.0,
        }
    }
}

/// Errors of the BAL kernels.
#[derive(Debug, thiserror::Error)]
pub enum BalError {
    /// A Vulkan error.
    #[error(transparent)]
    Vk(#[from] VkError),
    /// An argument or buffer does not fit (the message names it).
    #[error("bal: {0}")]
    Invalid(String),
}

/// Candidate pairs: the buffers of a proximity search (records `[a, b, kind, d² bits]`, the
/// first `status[1]` vertex–triangle and `status[2]` edge–edge ones valid).
#[derive(Clone)]
pub struct Candidates {
    /// Vertex–triangle records.
    pub pairs_vt: GpuBuffer<[u32; 4]>,
    /// Edge–edge records.
    pub pairs_ee: GpuBuffer<[u32; 4]>,
    /// Status words (counts at 1 and 2).
    pub status: GpuBuffer<u32>,
    /// Triangles `[a, b, c, 0]`.
    pub triangles: GpuBuffer<[u32; 4]>,
    /// Edges `[a, b]`.
    pub edges: GpuBuffer<[u32; 2]>,
    /// Number of triangles.
    pub num_triangles: usize,
    /// Number of edges.
    pub num_edges: usize,
}

impl Candidates {
    /// The candidate buffers of a search (valid until it reallocates: `generation()`).
    pub fn from_search(s: &ProximitySearch) -> Self {
        Candidates {
            pairs_vt: s.pairs_vt().clone(),
            pairs_ee: s.pairs_ee().clone(),
            status: s.status().clone(),
            triangles: s.triangles().clone(),
            edges: s.edges().clone(),
            num_triangles: s.mesh().triangles.len(),
            num_edges: s.mesh().edges.len(),
        }
    }

    /// Candidate slots: vertex–triangle capacity + edge–edge capacity.
    pub fn capacity(&self) -> usize {
        self.pairs_vt.len() + self.pairs_ee.len()
    }
}

/// The stepper's buffers BAL binds (see the module doc).
#[derive(Clone)]
pub struct BalBindings {
    /// Iterate x.
    pub x: GpuBuffer<[f32; 4]>,
    /// Line-search trial positions.
    pub x_trial: GpuBuffer<[f32; 4]>,
    /// Start-of-step positions (friction).
    pub x_start: GpuBuffer<[f32; 4]>,
    /// Newton direction (CCD bound).
    pub direction: GpuBuffer<[f32; 4]>,
}

/// Outcome of [`BalContact::run_active_set`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ActiveSetReport {
    /// Active pairs |A| (d < d̂).
    pub count: u32,
    /// Smallest distance over A (m; +∞ when A is empty).
    pub min_distance: f64,
    /// Times the list overflowed its capacity and was grown and redone.
    pub regrown: u32,
}

/// Energies of [`BalContact::evaluate`] / [`BalContact::trial`] (J).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BalEnergy {
    /// σ Σ b(d, d̂) over every candidate (mollified).
    pub barrier: f64,
    /// Σ over A′ of the augmentation terms plus Σ of the friction potentials.
    pub stencils: f64,
    /// Candidates closer than d̂ at these positions (the §5.2 memory cap checks it at trials).
    pub active: u32,
}

impl BalEnergy {
    /// Total (J).
    pub fn total(&self) -> f64 {
        self.barrier + self.stencils
    }
}

/// GPU milliseconds of the last run of each BAL graph (whole-graph timestamps).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct BalGpuMs {
    /// Active set (distances, key sort, build, min d).
    pub active: f64,
    /// A′ rule.
    pub rule: f64,
    /// Friction lag.
    pub lag: f64,
    /// Terms at the iterate, incidence sort and gathers.
    pub evaluate: f64,
    /// Energies at the trial positions.
    pub trial: f64,
    /// CCD step bound.
    pub ccd: f64,
    /// Dual update.
    pub dual: f64,
}

/// The structure of a workspace, fixed at recording: push constants of every BAL kernel.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Push {
    cap_vt: u32,
    cap_ee: u32,
    pair_cap: u32,
    nv: u32,
    bits_a: u32,
    bits_b: u32,
    key_bits: u32,
    entries: u32,
}

struct Graphs {
    save: CompiledGraph,
    active: CompiledGraph,
    rule: CompiledGraph,
    dual: CompiledGraph,
    lag: CompiledGraph,
    evaluate: CompiledGraph,
    trial: CompiledGraph,
    ccd: CompiledGraph,
    reset: CompiledGraph,
}

/// The BAL kernels of one contact surface with their persistent buffers and graphs.
pub struct BalContact {
    ctx: Context,
    bindings: BalBindings,
    candidates: Candidates,
    nv: usize,
    bits: KeyBits,
    rest_sq: Vec<f32>,
    bufs: PairBuffers,
    graphs: Graphs,
    params: BalParams,
}

/// Largest number of items one 1-D dispatch of 64-wide workgroups covers.
const MAX_ITEMS: usize = 65_535 * 64;

impl BalContact {
    /// Allocates a workspace for `pair_capacity` active pairs over `candidates` and `nv`
    /// vertices and compiles its graphs; `rest_edge_sq` holds each candidate edge's rest squared
    /// length (m², the edge–edge mollifier thresholds).
    pub fn new(
        ctx: &Context,
        bindings: BalBindings,
        candidates: Candidates,
        nv: usize,
        rest_edge_sq: &[f32],
        pair_capacity: usize,
        params: BalParams,
    ) -> Result<Self, BalError> {
        if rest_edge_sq.len() != candidates.num_edges {
            return Err(BalError::Invalid(format!(
                "rest_edge_sq has {} entries for {} edges",
                rest_edge_sq.len(),
                candidates.num_edges
            )));
        }
        for (name, b) in [
            ("x", &bindings.x),
            ("x_trial", &bindings.x_trial),
            ("x_start", &bindings.x_start),
            ("direction", &bindings.direction),
        ] {
            if b.len() < nv {
                return Err(BalError::Invalid(format!(
                    "binding {name} holds {} vertices, need {nv}",
                    b.len()
                )));
            }
        }
        check_params(&params)?;
        let bits = KeyBits::new(nv, candidates.num_triangles, candidates.num_edges);
        if bits.a + bits.b > 62 {
            return Err(BalError::Invalid(
                "mesh too large for 64-bit pair keys".into(),
            ));
        }
        let bufs = Self::allocate(ctx, &candidates, nv, pair_capacity, rest_edge_sq)?;
        let graphs = graphs::compile(ctx, &bindings, &candidates, &bufs, nv, bits)?;
        let c = BalContact {
            ctx: ctx.clone(),
            bindings,
            candidates,
            nv,
            bits,
            rest_sq: rest_edge_sq.to_vec(),
            bufs,
            graphs,
            params,
        };
        c.bufs.params.write(&[params])?;
        c.graphs.reset.run()?;
        Ok(c)
    }

    fn allocate(
        ctx: &Context,
        cand: &Candidates,
        nv: usize,
        capacity: usize,
        rest_sq: &[f32],
    ) -> Result<PairBuffers, BalError> {
        let cap = capacity.max(1);
        if cand.capacity() > MAX_ITEMS || 8 * cap > MAX_ITEMS || nv + 1 > MAX_ITEMS {
            return Err(BalError::Invalid(format!(
                "{} candidates / {cap} pairs / {nv} vertices exceed one dispatch ({MAX_ITEMS})",
                cand.capacity()
            )));
        }
        Ok(PairBuffers::new(ctx, cand, nv, cap, rest_sq)?)
    }

    /// Writes new run-time parameters (σ, …); the rule is set by [`BalContact::apply_rule`].
    pub fn set_params(&mut self, params: BalParams) -> Result<(), BalError> {
        check_params(&params)?;
        self.params = BalParams {
            rule: self.params.rule,
            ..params
        };
        self.bufs.params.write(&[self.params])?;
        Ok(())
    }

    /// The current parameters.
    pub fn params(&self) -> BalParams {
        self.params
    }

    /// Pair capacity P of the active list.
    pub fn capacity(&self) -> usize {
        self.bufs.capacity
    }

    /// Key bit widths.
    pub fn key_bits(&self) -> KeyBits {
        self.bits
    }

    /// Start of a time step: empties the active list, A′ (μ = 0) and the friction lags.
    pub fn reset(&self) -> Result<(), BalError> {
        self.graphs.reset.run()?;
        Ok(())
    }

    fn active_at(&self, trial: bool) -> Result<u32, BalError> {
        let b = if trial {
            &self.bufs.count_trial
        } else {
            &self.bufs.count_iterate
        };
        let s = b
            .mapped()
            .ok_or_else(|| BalError::Invalid("count buffer is not host-visible".into()))?;
        Ok(s[0])
    }

    fn sum(&self, i: usize) -> Result<f64, BalError> {
        let s = self
            .bufs
            .sums
            .mapped()
            .ok_or_else(|| BalError::Invalid("sums buffer is not host-visible".into()))?;
        Ok(s[i].value as f64)
    }

    /// Active set at `x` (spec §A8 steps 1–2): distances of every candidate, the pairs closer
    /// than d̂ sorted by key, their augmentation state carried from the previous list by key,
    /// and min d. When the list overflows its capacity, the workspace grows (≥ 25 % more),
    /// the graphs are recompiled, the previous list is restored and the pass is redone: no
    /// pair is ever dropped. Allocation happens only then.
    pub fn run_active_set(&mut self) -> Result<ActiveSetReport, BalError> {
        self.graphs.save.run()?;
        let mut regrown = 0;
        loop {
            self.graphs.active.run()?;
            let count = match self.bufs.counter.mapped() {
                Some(c) => c[0],
                None => self.bufs.counter.read()?[0],
            };
            if (count as usize) <= self.bufs.capacity {
                return Ok(ActiveSetReport {
                    count,
                    min_distance: self.sum(slot::MIN_DISTANCE)?,
                    regrown,
                });
            }
            regrown += 1;
            let grown = (count as usize) + (count as usize) / 4 + 64;
            self.grow(grown)?;
        }
    }

    /// Reallocates for `capacity` pairs keeping the previous list (keys, μ, s, count).
    fn grow(&mut self, capacity: usize) -> Result<(), BalError> {
        let keys = self.bufs.prev_keys.read()?;
        let aug = self.bufs.prev_aug.read()?;
        let count = self.bufs.prev_count.read()?;
        let n = (count[0] as usize).min(keys.len());
        self.bufs = Self::allocate(
            &self.ctx,
            &self.candidates,
            self.nv,
            capacity,
            &self.rest_sq,
        )?;
        self.graphs = graphs::compile(
            &self.ctx,
            &self.bindings,
            &self.candidates,
            &self.bufs,
            self.nv,
            self.bits,
        )?;
        self.graphs.reset.run()?;
        self.bufs.params.write(&[self.params])?;
        if n > 0 {
            self.bufs.prev_keys.write_at(0, &keys[..n])?;
            self.bufs.prev_aug.write_at(0, &aug[..n])?;
        }
        self.bufs.prev_count.write_at(0, &[n as u32])?;
        Ok(())
    }

    /// Applies the A′ rule (Algorithm 1 lines 4–8) to the active list; returns |A′|.
    pub fn apply_rule(&mut self, rule: AugRule) -> Result<u32, BalError> {
        self.params.rule = rule as u32;
        self.bufs.params.write(&[self.params])?;
        self.graphs.rule.run()?;
        Ok(self.sum(slot::AUGMENTED)?.round() as u32)
    }

    /// Lags friction on the active list at `x` (spec §A5).
    pub fn lag_friction(&self) -> Result<(), BalError> {
        self.graphs.lag.run()?;
        Ok(())
    }

    /// Terms at `x`: energies, and the per-node gradient, diagonal blocks and stiffness plus the
    /// per-stencil blocks C that [`BalContact::record_spmv`] applies.
    pub fn evaluate(&self) -> Result<BalEnergy, BalError> {
        self.graphs.evaluate.run()?;
        Ok(BalEnergy {
            barrier: self.sum(slot::BARRIER)?,
            stencils: self.sum(slot::STENCIL)?,
            active: self.active_at(false)?,
        })
    }

    /// Energies at `x_trial` (same A′ and friction lags as the iterate's).
    pub fn trial(&self) -> Result<BalEnergy, BalError> {
        self.graphs.trial.run()?;
        Ok(BalEnergy {
            barrier: self.sum(slot::BARRIER_TRIAL)?,
            stencils: self.sum(slot::STENCIL_TRIAL)?,
            active: self.active_at(true)?,
        })
    }

    /// α_max: the conservative CCD bound of `x → x + direction` over every candidate.
    pub fn max_step(&self) -> Result<f64, BalError> {
        self.graphs.ccd.run()?;
        self.sum(slot::CCD)
    }

    /// Dual update of A′ at `x` (Algorithm 1 lines 17–19).
    pub fn dual_update(&self) -> Result<(), BalError> {
        self.graphs.dual.run()?;
        Ok(())
    }

    /// Records `y += C p` (the off-diagonal contact blocks of the last [`BalContact::evaluate`])
    /// into `g`; with `groups` only the blocks between vertices of the same stiffness group
    /// (the warm start's masked SpMV).
    pub fn record_spmv(
        &self,
        g: &mut Graph,
        p: &GpuBuffer<[f32; 4]>,
        y: &GpuBuffer<[f32; 4]>,
        groups: Option<&GpuBuffer<i32>>,
    ) {
        graphs::record_spmv(g, &self.bufs, self.push(), p, y, groups);
    }

    pub(crate) fn push(&self) -> Push {
        graphs::push(&self.candidates, &self.bufs, self.nv, self.bits)
    }

    /// Per-vertex gradient of the BAL terms (N) after [`BalContact::evaluate`].
    pub fn node_gradient(&self) -> &GpuBuffer<[f32; 4]> {
        &self.bufs.node_grad
    }

    /// Per-vertex diagonal Hessian blocks (N/m; rows 3v..3v+2) after `evaluate`.
    pub fn node_diag(&self) -> &GpuBuffer<[f32; 4]> {
        &self.bufs.node_diag
    }

    /// Per-vertex warm-start stiffness e_j (N/m) after `evaluate`.
    pub fn node_stiffness(&self) -> &GpuBuffer<f32> {
        &self.bufs.node_stiff
    }

    /// Reads the active list: per pair `(key, vertices, info, distance, [μ, s, in A′, was])`.
    pub fn read_pairs(&self) -> Result<Vec<PairRecord>, BalError> {
        let n = (self.bufs.counter.read()?[0] as usize).min(self.bufs.capacity);
        let keys = self.bufs.pair_keys.read()?;
        let verts = self.bufs.pair_verts.read()?;
        let info = self.bufs.pair_info.read()?;
        let d = self.bufs.pair_d.read()?;
        let aug = self.bufs.pair_aug.read()?;
        Ok((0..n)
            .map(|i| PairRecord {
                key: keys[i][0] as u64 | (keys[i][1] as u64) << 32,
                vertices: verts[i],
                info: info[i],
                distance: d[i],
                aug: aug[i],
            })
            .collect())
    }

    /// Reads the friction lags: per pair slot `(vertices, β, t0 with λ in w, t1)`.
    #[allow(clippy::type_complexity)]
    pub fn read_friction(&self) -> Result<Vec<([u32; 4], [f32; 4], [f32; 4], [f32; 4])>, BalError> {
        let (v, b, t0, t1) = (
            self.bufs.fr_verts.read()?,
            self.bufs.fr_beta.read()?,
            self.bufs.fr_t0.read()?,
            self.bufs.fr_t1.read()?,
        );
        Ok((0..v.len()).map(|i| (v[i], b[i], t0[i], t1[i])).collect())
    }

    /// Reads the stencil terms of the last [`BalContact::evaluate`]: energies (2P), gradients
    /// (4 vec4 per slot), Hessian blocks (48 vec4 per slot), stiffness (vec4 per slot).
    #[allow(clippy::type_complexity)]
    pub fn read_terms(
        &self,
    ) -> Result<(Vec<f32>, Vec<[f32; 4]>, Vec<[f32; 4]>, Vec<[f32; 4]>), BalError> {
        Ok((
            self.bufs.st_energy.read()?,
            self.bufs.st_grad.read()?,
            self.bufs.st_hess.read()?,
            self.bufs.st_stiff.read()?,
        ))
    }

    /// GPU milliseconds of the last run of each graph.
    pub fn gpu_ms(&self) -> Result<BalGpuMs, BalError> {
        let ms = |g: &CompiledGraph| -> Result<f64, BalError> {
            Ok(g.profile()?.map_or(0.0, |p| p.total_ms))
        };
        let g = &self.graphs;
        Ok(BalGpuMs {
            active: ms(&g.active)?,
            rule: ms(&g.rule)?,
            lag: ms(&g.lag)?,
            evaluate: ms(&g.evaluate)?,
            trial: ms(&g.trial)?,
            ccd: ms(&g.ccd)?,
            dual: ms(&g.dual)?,
        })
    }

    /// Profiles of the last run of the evaluate graph (per-node times when the context had
    /// `set_node_timestamps(true)` at construction).
    pub fn evaluate_profile(&self) -> Result<Option<crate::vk::GraphProfile>, BalError> {
        Ok(self.graphs.evaluate.profile()?)
    }

    /// The results of the last runs (energies, min d, CCD bound) in their slots.
    pub fn read_sums(&self) -> Result<Vec<ReduceResult>, BalError> {
        Ok(self.bufs.sums.read()?)
    }
}

/// One pair of the GPU active list (see [`BalContact::read_pairs`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairRecord {
    /// 64-bit key (kind, a, b).
    pub key: u64,
    /// Corner vertices.
    pub vertices: [u32; 4],
    /// `[kind | code << 8, a, b, mollifier threshold bits]`.
    pub info: [u32; 4],
    /// Distance (m).
    pub distance: f32,
    /// `[μ, s, in A′, was in A′]`.
    pub aug: [f32; 4],
}

fn check_params(p: &BalParams) -> Result<(), BalError> {
    let bad = |name: &str, v: f32| {
        BalError::Invalid(format!("{name} must be positive and finite, got {v}"))
    };
    if !(p.d_hat.is_finite() && p.d_hat > 0.0) {
        return Err(bad("d_hat", p.d_hat));
    }
    if !(p.sigma.is_finite() && p.sigma > 0.0) {
        return Err(bad("sigma", p.sigma));
    }
    if !(p.eps_f.is_finite() && p.eps_f > 0.0) {
        return Err(bad("eps_f (eps_v h)", p.eps_f));
    }
    if !(p.chi.is_finite() && p.chi >= 0.0) {
        return Err(BalError::Invalid(format!(
            "chi must be finite and >= 0, got {}",
            p.chi
        )));
    }
    if !(p.xi > 0.0 && p.xi < 1.0) {
        return Err(BalError::Invalid(format!(
            "xi must lie in (0, 1), got {}",
            p.xi
        )));
    }
    Ok(())
}
