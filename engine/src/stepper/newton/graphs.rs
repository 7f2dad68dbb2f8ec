//! What [`super::NewtonStepper::new`] allocates and records: the step's workspace buffers, the
//! sparsity of the Newton matrix (unique element edges), and the graphs of one step (script,
//! predict, evaluate, Hessian assembly, line-search trial and acceptance, velocity update),
//! compiled once and run every step.

use super::NewtonSettings;
use crate::fem::elements::{BlockAssembly, EdgeSparsity};
use crate::fem::TetElements;
use crate::linear::Pcg;
use crate::model::SimModel;
use crate::primitives::{Reduce, ReduceOp, ReduceResult};
use crate::state::GpuState;
use crate::vk::{
    ids, Access, BufferSlice, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch,
    GpuBuffer, Graph, VkResult,
};

/// Workgroup size of the Newton vector kernels.
const WG: u32 = 64;

fn groups(n: usize) -> [u32; 3] {
    [(n as u32).div_ceil(WG).max(1), 1, 1]
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct VecPush {
    gravity: [f32; 4],
    n: u32,
    h: f32,
    kappa: f32,
    num_colliders: u32,
    slip: f32,
    penalty_k: f32,
    dhat: f32,
    _pad: u32,
}

/// Modes of `kernels/newton/script.comp` (its specialization constant 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(super) enum ScriptMode {
    /// x = p(t) for scripted vertices.
    Jump = 0,
    /// d = p(t) − x for scripted vertices, 0 for free ones.
    Direction = 1,
    /// x += α d for scripted vertices.
    Advance = 2,
    /// s ← 2 s − s_last, s_last ← s, y = p(t) + s for scripted vertices (the pull's start: the
    /// last step's multiplier extrapolated by its change over that step).
    PullStart = 3,
    /// s += p(t) − x, y = p(t) + s for scripted vertices (the multiplier step).
    PullUpdate = 4,
    /// The solve's mass of scripted vertices times [`STIFFEN_FACTOR`], s and s_last divided by
    /// it (the same multipliers), y = p(t) + s.
    Stiffen = 5,
}

/// How much [`ScriptMode::Stiffen`] multiplies the pull's weight by.
pub(super) const STIFFEN_FACTOR: f32 = 10.0;

impl ScriptMode {
    /// The graph and node name.
    pub fn name(self) -> &'static str {
        match self {
            ScriptMode::Jump => "newton.script",
            ScriptMode::Direction => "newton.script_direction",
            ScriptMode::Advance => "newton.script_advance",
            ScriptMode::PullStart => "newton.script_pull_start",
            ScriptMode::PullUpdate => "newton.script_pull_update",
            ScriptMode::Stiffen => "newton.script_stiffen",
        }
    }
}

/// Modes of `kernels/newton/vectors.comp` (its specialization constant 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(super) enum VectorsMode {
    /// y = x + h v + h² (g + f/m); x_start = x.
    Predict = 0,
    /// Gradient, energy and right-hand side at x, friction re-lagged.
    Gradient = 1,
    /// x_trial = x + α d, inertia energy at x_trial.
    Trial = 2,
    /// v = (x − x_start) / h.
    Velocity = 3,
    /// Gradient at x with the friction lag kept.
    GradientLagged = 4,
}

/// Slots of [`Workspace::sums`].
pub(super) const SUM_SLOTS: usize = 8;

/// Where an evaluation reduces its element energy, inertia energy and max |g| in
/// [`Workspace::sums`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EnergySlots {
    /// Element energy.
    pub element: usize,
    /// Inertia energy.
    pub inertia: usize,
    /// Largest per-vertex gradient norm.
    pub gradient: usize,
}

/// The slots of line-search trials and of the device loop's evaluations (its control kernel
/// reads them).
pub(super) const TRIAL_SLOTS: EnergySlots = EnergySlots {
    element: 0,
    inertia: 1,
    gradient: 2,
};

/// The slots of the host loop's evaluations (apart from the trials').
pub(super) const EVALUATION_SLOTS: EnergySlots = EnergySlots {
    element: 4,
    inertia: 5,
    gradient: 6,
};

/// The step's buffers besides the state and the linear solver's.
pub(super) struct Workspace {
    /// Inertia target y.
    pub y: GpuBuffer<[f32; 4]>,
    /// Line-search trial positions.
    pub x_trial: GpuBuffer<[f32; 4]>,
    /// Per-vertex inertia energy.
    pub inertia: GpuBuffer<f32>,
    /// Lagged friction data (two vec4 per vertex).
    pub friction: GpuBuffer<[f32; 4]>,
    /// Collider contact Hessian blocks (three rows per vertex).
    pub contact_hess: GpuBuffer<[f32; 4]>,
    /// End time of the step in progress (s), for scripted motion and moving colliders.
    pub time: GpuBuffer<f32>,
    /// Penalty-term sums (three ivec4 per vertex), zero until an energy term writes them.
    pub penalty_accum: GpuBuffer<[i32; 4]>,
    /// Per-vertex gradient norms.
    pub gnorm: GpuBuffer<f32>,
    /// Per-vertex direction norms.
    pub dnorm: GpuBuffer<f32>,
    /// Line-search step α.
    pub alpha: GpuBuffer<f32>,
    /// Host-visible reductions: slots 0–3 element energy, inertia energy, max |g|, max |d|
    /// (line-search trials, the pull's error, the device loop); 4–6 element energy, inertia
    /// energy and max |g| of the host loop's evaluations ([`EVALUATION_SLOTS`]), so that an
    /// evaluation and a trial queued behind it are read after one wait.
    pub sums: GpuBuffer<ReduceResult>,
}

impl Workspace {
    /// Allocates the buffers for `n` vertices (penalty sums cleared).
    pub fn new(ctx: &Context, n: usize) -> VkResult<Workspace> {
        let storage = BufferUsage::STORAGE;
        let vec4 = |name: &str| ctx.create_buffer::<[f32; 4]>(name, n, storage);
        let penalty_accum = ctx.create_buffer::<[i32; 4]>("newton.penalty", 3 * n, storage)?;
        {
            let mut g = Graph::new("newton.penalty_init");
            g.fill("newton.penalty_clear", &penalty_accum, 0);
            g.compile(ctx, CompileOptions::default())?.run()?;
        }
        Ok(Workspace {
            y: vec4("newton.y")?,
            // Read through texel views by the element kernels (positions) and the assembly.
            x_trial: ctx.create_buffer("newton.x_trial", n, storage | BufferUsage::TEXEL)?,
            inertia: ctx.create_buffer::<f32>("newton.vertex_energy", n, storage)?,
            friction: ctx.create_buffer::<[f32; 4]>("newton.friction", 2 * n, storage)?,
            contact_hess: ctx.create_buffer::<[f32; 4]>(
                "newton.contact_hess",
                3 * n,
                storage | BufferUsage::TEXEL,
            )?,
            time: ctx.create_buffer::<f32>("newton.time", 1, BufferUsage::HOST_WRITE | storage)?,
            penalty_accum,
            gnorm: ctx.create_buffer::<f32>("newton.gnorm", n, storage)?,
            dnorm: ctx.create_buffer::<f32>("newton.dnorm", n, storage)?,
            alpha: ctx.create_buffer::<f32>(
                "newton.alpha",
                1,
                BufferUsage::HOST_WRITE | storage,
            )?,
            // Host-visible: read every line-search trial without a staging copy.
            sums: ctx.create_buffer::<ReduceResult>(
                "newton.sums",
                SUM_SLOTS,
                BufferUsage::HOST_READ | storage,
            )?,
        })
    }
}

/// The per-vertex data the solve reads in place of the state's: the state's own buffers, or,
/// where scripted vertices are unknowns pulled to their pose (an augmented Lagrangian,
/// [`crate::contact::ContactNeeds::scripted_unknowns`]), copies in which they are free, weigh
/// w m and ignore the colliders (as fixed vertices do).
pub(super) struct SolveBuffers {
    /// Masses (kg): w m for pulled scripted vertices.
    pub mass: GpuBuffer<f32>,
    /// Inverse masses: 0 only for vertices the solve keeps fixed.
    pub inv_mass: GpuBuffer<f32>,
    /// Collider clearances (m): [`IGNORES_COLLIDERS`] for pulled scripted vertices.
    pub collider_offsets: GpuBuffer<f32>,
    /// The pull's shift s (m; one vec4 per vertex while pulled, one in all otherwise): the
    /// multiplier, kept from step to step.
    pub shift: GpuBuffer<[f32; 4]>,
    /// The shift the last step ended with (m; sized as `shift`): the pull's start extrapolates
    /// s by its change over the last step.
    pub shift_last: GpuBuffer<[f32; 4]>,
    /// Whether scripted vertices are pulled unknowns.
    pub pulled: bool,
}

/// The collider clearance (m) of a vertex that no collider acts on.
pub(super) const IGNORES_COLLIDERS: f32 = -1e30;

impl SolveBuffers {
    /// The state's buffers, or copies with the model's scripted vertices pulled with weight
    /// `pull` (× their mass) when `pull` is given and the model has scripted motion.
    pub fn new(
        ctx: &Context,
        model: &SimModel,
        state: &GpuState,
        pull: Option<f64>,
    ) -> VkResult<SolveBuffers> {
        let storage = BufferUsage::STORAGE;
        let (Some(w), true) = (pull, model.has_motion()) else {
            return Ok(SolveBuffers {
                mass: state.mass.clone(),
                inv_mass: state.inv_mass.clone(),
                collider_offsets: state.collider_offsets.clone(),
                shift: ctx.create_buffer("newton.script_shift", 1, storage)?,
                shift_last: ctx.create_buffer("newton.script_shift_last", 1, storage)?,
                pulled: false,
            });
        };
        let n = model.positions.len();
        let scripted = |i: usize| model.vertex_motion.get(i).is_some_and(|&m| m != u32::MAX);
        let mass: Vec<f32> = (0..n)
            .map(|i| (model.masses[i] * if scripted(i) { w } else { 1.0 }) as f32)
            .collect();
        let inv_mass: Vec<f32> = (0..n)
            .map(|i| {
                if scripted(i) {
                    1.0 / mass[i]
                } else {
                    model.inv_mass[i] as f32
                }
            })
            .collect();
        let offsets: Vec<f32> = model
            .vertex_collider_offsets()
            .iter()
            .enumerate()
            .map(|(i, &o)| {
                if scripted(i) {
                    IGNORES_COLLIDERS
                } else {
                    o as f32
                }
            })
            .collect();
        Ok(SolveBuffers {
            mass: ctx.upload_buffer("newton.solve_mass", &mass, storage | BufferUsage::TEXEL)?,
            inv_mass: ctx.upload_buffer(
                "newton.solve_inv_mass",
                &inv_mass,
                storage | BufferUsage::TEXEL,
            )?,
            collider_offsets: ctx.upload_buffer(
                "newton.solve_collider_offsets",
                &offsets,
                storage,
            )?,
            shift: ctx.create_buffer("newton.script_shift", n, storage)?,
            shift_last: ctx.create_buffer("newton.script_shift_last", n, storage)?,
            pulled: true,
        })
    }
}

/// The Newton matrix's off-diagonal structure: unique element edges and, per edge, the element
/// entries that add into it.
pub(super) struct Sparsity(pub EdgeSparsity);

impl Sparsity {
    /// The structure of the model's element pool (tets, then thin elements).
    pub fn new(ctx: &Context, model: &SimModel) -> VkResult<Sparsity> {
        let pool = model
            .tets
            .iter()
            .copied()
            .chain(model.thin_elements.iter().map(|e| e.vertices()));
        Ok(Sparsity(EdgeSparsity::new(ctx, pool)?))
    }

    /// Unique edges (i < j).
    pub fn pairs(&self) -> &[(u32, u32)] {
        &self.0.pairs
    }
}

/// The compiled graphs of one step.
pub(super) struct Graphs {
    /// Scripted vertices to their pose at the step's end (with scripted motion only).
    pub script: Option<CompiledGraph>,
    /// The direction from the scripted vertices to that pose (0 for free vertices).
    pub script_direction: Option<CompiledGraph>,
    /// The scripted vertices advanced by α along that direction.
    pub script_advance: Option<CompiledGraph>,
    /// Pulled scripted vertices: the pull's start (after the prediction), the multiplier step,
    /// the weight's growth, and max |p(t) − x| into sum 3 (direction in the PCG solution).
    pub pull: Option<PullGraphs>,
    /// y and x_start.
    pub predict: CompiledGraph,
    /// Gradient, energy and right-hand side at x, friction re-lagged (sums at
    /// [`EVALUATION_SLOTS`]).
    pub evaluate: CompiledGraph,
    /// The same with the friction lag kept.
    pub evaluate_lagged: CompiledGraph,
    /// Element Hessians, assembly, inverse diagonal blocks.
    pub hessian: CompiledGraph,
    /// The same with the exact (unprojected) tet Hessians (project-on-demand Newton only).
    pub hessian_exact: Option<CompiledGraph>,
    /// x_trial = x + α d and its energy; |d|.
    pub trial: CompiledGraph,
    /// x = x_trial.
    pub accept: CompiledGraph,
    /// Velocity update.
    pub finish: CompiledGraph,
}

/// The graphs of pulled scripted vertices ([`Graphs::pull`]).
pub(super) struct PullGraphs {
    /// y = p(t) + s.
    pub start: CompiledGraph,
    /// s += p(t) − x, y = p(t) + s.
    pub update: CompiledGraph,
    /// w ×= [`STIFFEN_FACTOR`].
    pub stiffen: CompiledGraph,
    /// d = p(t) − x and max |d| into sum 3.
    pub error: CompiledGraph,
}

/// Everything a graph of the step binds.
pub(super) struct Bindings<'a> {
    pub ctx: &'a Context,
    pub state: &'a GpuState,
    pub ws: &'a Workspace,
    pub elements: &'a TetElements,
    pub pcg: &'a Pcg,
    pub sparsity: &'a Sparsity,
    pub reduce: &'a Reduce,
    pub solve: &'a SolveBuffers,
    pub settings: &'a NewtonSettings,
    /// Penalty-term stiffness k (N/m).
    pub penalty_k: f64,
    /// Whether any vertex is scripted.
    pub has_motion: bool,
}

impl Bindings<'_> {
    fn n(&self) -> usize {
        self.state.num_vertices()
    }

    /// One dispatch of `vectors.comp` in `mode`; all modes share one binding layout and `acc`
    /// gives the real accesses of the first 13 bindings.
    fn vectors(&self, g: &mut Graph, name: &str, mode: VectorsMode, acc: [Access; 13]) {
        let (rd, wr) = (Access::READ, Access::WRITE);
        let (s, ws, st) = (self.state, self.ws, self.settings);
        // f_ext, colliders, time: read; friction lag and contact blocks: written by the
        // gradient, friction read by trials.
        let (fr, ch) = match mode {
            VectorsMode::Gradient => (wr, wr),
            VectorsMode::GradientLagged => (rd, wr),
            _ => (rd, rd),
        };
        let acc: Vec<Access> = acc
            .into_iter()
            .chain([rd, rd, rd, fr, ch, rd, rd])
            .collect();
        let bufs: [BufferSlice; 20] = [
            (&s.x).into(),
            (&s.v).into(),
            (&ws.y).into(),
            (&s.x_prev).into(),
            (&self.solve.mass).into(),
            (&self.solve.inv_mass).into(),
            self.elements.vertex_gradient().into(),
            self.pcg.rhs().into(),
            self.pcg.solution().into(),
            (&ws.x_trial).into(),
            (&ws.inertia).into(),
            (&ws.gnorm).into(),
            (&ws.alpha).into(),
            (&s.f_ext).into(),
            (&s.colliders).into(),
            (&ws.time).into(),
            (&ws.friction).into(),
            (&ws.contact_hess).into(),
            (&ws.penalty_accum).into(),
            (&self.solve.collider_offsets).into(),
        ];
        let push = VecPush {
            gravity: crate::math::vec4(st.gravity),
            n: self.n() as u32,
            h: st.h as f32,
            kappa: st.contact_stiffness as f32,
            num_colliders: s.num_colliders() as u32,
            slip: st.friction_slip as f32,
            penalty_k: self.penalty_k as f32,
            dhat: st.barrier_distance as f32,
            _pad: 0,
        };
        let mut d = Dispatch::new(name, ids::NEWTON_VECTORS, groups(self.n()))
            .workgroup_size(WG)
            .spec(&[mode as u32]);
        for (b, a) in bufs.into_iter().zip(acc) {
            d = d.bind(b, a);
        }
        g.dispatch(d.push(&push));
    }

    /// Element and inertia energies into the sums at `slots`.
    fn energy_sums(&self, g: &mut Graph, slots: EnergySlots) {
        let n_el = self.elements.num_elements();
        let ws = self.ws;
        self.reduce.record(
            g,
            self.elements.energies(),
            n_el,
            ReduceOp::Sum,
            &ws.sums,
            slots.element,
        );
        self.reduce.record(
            g,
            &ws.inertia,
            self.n(),
            ReduceOp::Sum,
            &ws.sums,
            slots.inertia,
        );
    }

    /// Gradient (mode `Gradient` or `GradientLagged`) and energies at x, max |g| into sum 2
    /// (sums 0–2, [`TRIAL_SLOTS`], as the device loop reads them).
    pub fn evaluate_nodes(&self, name: &str, vector_name: &str, mode: VectorsMode) -> Graph {
        self.evaluate_nodes_at(name, vector_name, mode, TRIAL_SLOTS)
    }

    /// [`Bindings::evaluate_nodes`] into the sums at `slots`.
    pub fn evaluate_nodes_at(
        &self,
        name: &str,
        vector_name: &str,
        mode: VectorsMode,
        slots: EnergySlots,
    ) -> Graph {
        let (r, wr) = (Access::READ, Access::WRITE);
        let mut g = Graph::new(name);
        self.elements.record_gradient(&mut g, &self.state.x);
        self.vectors(
            &mut g,
            vector_name,
            mode,
            [r, r, r, r, r, r, r, wr, wr, r, wr, wr, r],
        );
        self.energy_sums(&mut g, slots);
        self.reduce.record(
            &mut g,
            &self.ws.gnorm,
            self.n(),
            ReduceOp::Max,
            &self.ws.sums,
            slots.gradient,
        );
        g
    }

    /// The tets' analytic eigensystems and the in-time assembly of the element Hessians into
    /// the diagonal and edge blocks, inverse diagonal blocks and the stiffness estimates of the
    /// warm start.
    pub fn hessian_nodes(&self) -> Graph {
        self.hessian_nodes_projected(true)
    }

    /// [`Bindings::hessian_nodes`] with the tets' Hessians projected to PSD (`project`)
    /// or exact.
    pub fn hessian_nodes_projected(&self, project: bool) -> Graph {
        let (s, pcg) = (self.state, self.pcg);
        let mut g = Graph::new(if project {
            "newton.hessian"
        } else {
            "newton.hessian_exact"
        });
        self.elements
            .record_hessian_projected(&mut g, &s.x, project);
        let h = self.settings.h;
        self.elements.record_assembly_projected(
            &mut g,
            &s.x,
            &BlockAssembly {
                inv_h2: (1.0 / (h * h)) as f32,
                mass: &self.solve.mass,
                inv_mass: &self.solve.inv_mass,
                contact_hess: &self.ws.contact_hess,
                sparsity: &self.sparsity.0,
                diag: pcg.diag_blocks(),
                inverse_diag: pcg.inverse_diag_blocks(),
                off: pcg.off_blocks(),
                stiffness: pcg.stiffness(),
            },
            project,
        );
        g
    }

    /// x_trial = x + α d with its energy (the element kernel also leaves the gradient at
    /// x_trial, reused when the trial is accepted), and max |d| into sum 3.
    pub fn trial_nodes(&self) -> Graph {
        let (r, wr, rw) = (Access::READ, Access::WRITE, Access::READ | Access::WRITE);
        let mut g = Graph::new("newton.trial");
        // The direction (binding 8) is only read here, but vectors.comp binds it writable in
        // every mode and the norm below reads it: declared written so that the synchronization
        // validation in the tests, which goes by the SPIR-V, sees the barrier it expects.
        self.vectors(
            &mut g,
            "newton.trial",
            VectorsMode::Trial,
            [r, r, r, r, r, r, r, r, rw, wr, wr, r, r],
        );
        self.elements.record_gradient(&mut g, &self.ws.x_trial);
        self.energy_sums(&mut g, TRIAL_SLOTS);
        g.dispatch(
            Dispatch::new("newton.direction_norm", ids::NEWTON_NORM, groups(self.n()))
                .workgroup_size(WG)
                .read(self.pcg.solution())
                .write(&self.ws.dnorm)
                .push(&(self.n() as u32)),
        );
        self.reduce.record(
            &mut g,
            &self.ws.dnorm,
            self.n(),
            ReduceOp::Max,
            &self.ws.sums,
            3,
        );
        g
    }

    /// One dispatch of `script.comp` in `mode` into `g`.
    fn script_dispatch(&self, g: &mut Graph, mode: ScriptMode) {
        let (r, rw) = (Access::READ, Access::READ | Access::WRITE);
        let (s, ws, solve) = (self.state, self.ws, self.solve);
        let n = self.n();
        // Every mode binds x, the direction, y, the shift and the mass writable (the SPIR-V
        // says so); each is declared with what the mode does to it.
        let x_acc = match mode {
            ScriptMode::Jump | ScriptMode::Advance => rw,
            _ => r,
        };
        let (pull_acc, shift_acc) = match mode {
            ScriptMode::PullStart | ScriptMode::PullUpdate | ScriptMode::Stiffen => (rw, rw),
            _ => (r, r),
        };
        let last_acc = match mode {
            ScriptMode::PullStart | ScriptMode::Stiffen => rw,
            _ => r,
        };
        let mass_acc = if mode == ScriptMode::Stiffen { rw } else { r };
        let factor = if mode == ScriptMode::Stiffen {
            STIFFEN_FACTOR
        } else {
            1.0
        };
        g.dispatch(
            Dispatch::new(mode.name(), ids::NEWTON_SCRIPT, groups(n))
                .workgroup_size(WG)
                .spec(&[mode as u32])
                .bind(&s.x, x_acc)
                .read(&s.x0)
                .read(&s.vertex_motion)
                .read(&s.motions)
                .read(&ws.time)
                .bind(self.pcg.solution(), rw)
                .read(&ws.alpha)
                .bind(&ws.y, pull_acc)
                .bind(&solve.shift, shift_acc)
                .bind(&solve.mass, mass_acc)
                .bind(&solve.shift_last, last_acc)
                .push(&[n as u32, factor.to_bits()]),
        );
    }

    /// The graph of `script.comp` in `mode` (with scripted motion only): the jump to the
    /// pose at the step's end, the direction to it, or the advance along it by α.
    pub fn script_nodes(&self, mode: ScriptMode) -> Option<Graph> {
        if !self.has_motion {
            return None;
        }
        let mut g = Graph::new(mode.name());
        self.script_dispatch(&mut g, mode);
        Some(g)
    }

    /// The graphs of pulled scripted vertices (none unless the solve pulls them).
    pub fn pull_graphs(&self) -> VkResult<Option<PullGraphs>> {
        if !(self.has_motion && self.solve.pulled) {
            return Ok(None);
        }
        let one = |mode: ScriptMode| {
            let mut g = Graph::new(mode.name());
            self.script_dispatch(&mut g, mode);
            g.compile(self.ctx, opts())
        };
        let mut error = Graph::new("newton.script_error");
        self.script_dispatch(&mut error, ScriptMode::Direction);
        error.dispatch(
            Dispatch::new(
                "newton.script_error_norm",
                ids::NEWTON_NORM,
                groups(self.n()),
            )
            .workgroup_size(WG)
            .read(self.pcg.solution())
            .write(&self.ws.dnorm)
            .push(&(self.n() as u32)),
        );
        self.reduce.record(
            &mut error,
            &self.ws.dnorm,
            self.n(),
            ReduceOp::Max,
            &self.ws.sums,
            3,
        );
        Ok(Some(PullGraphs {
            start: one(ScriptMode::PullStart)?,
            update: one(ScriptMode::PullUpdate)?,
            stiffen: one(ScriptMode::Stiffen)?,
            error: error.compile(self.ctx, opts())?,
        }))
    }

    /// y and x_start (free vertices pushed out of the colliders' offsets).
    pub fn predict_nodes(&self) -> Graph {
        let (r, wr) = (Access::READ, Access::WRITE);
        let rw = r | wr;
        let mut g = Graph::new("newton.predict");
        self.vectors(
            &mut g,
            "newton.predict",
            VectorsMode::Predict,
            [rw, r, wr, wr, r, r, r, r, r, r, r, r, r],
        );
        g
    }

    /// x = x_trial.
    pub fn accept_nodes(&self) -> Graph {
        let mut g = Graph::new("newton.accept");
        g.copy("newton.accept", &self.ws.x_trial, &self.state.x);
        g
    }

    /// The velocity update (free vertices pushed out of the colliders' offsets first).
    pub fn finish_nodes(&self) -> Graph {
        let (r, wr) = (Access::READ, Access::WRITE);
        let rw = r | wr;
        let mut g = Graph::new("newton.finish");
        self.vectors(
            &mut g,
            "newton.velocity",
            VectorsMode::Velocity,
            [rw, wr, r, r, r, r, r, r, r, r, r, r, r],
        );
        // The step's end state for the host (the frame's readback), covered by the wait
        // that follows this graph.
        self.state.mirror.record_copy(&mut g);
        g
    }

    /// Every graph of a step.
    pub fn record(&self) -> VkResult<Graphs> {
        let c = |g: Graph| g.compile(self.ctx, opts());
        Ok(Graphs {
            script: self.script_nodes(ScriptMode::Jump).map(c).transpose()?,
            script_direction: self
                .script_nodes(ScriptMode::Direction)
                .map(c)
                .transpose()?,
            script_advance: self.script_nodes(ScriptMode::Advance).map(c).transpose()?,
            pull: self.pull_graphs()?,
            predict: c(self.predict_nodes())?,
            evaluate: c(self.evaluate_nodes_at(
                "newton.evaluate",
                "newton.gradient",
                VectorsMode::Gradient,
                EVALUATION_SLOTS,
            ))?,
            evaluate_lagged: c(self.evaluate_nodes_at(
                "newton.evaluate_lagged",
                "newton.gradient_lagged",
                VectorsMode::GradientLagged,
                EVALUATION_SLOTS,
            ))?,
            hessian: c(self.hessian_nodes())?,
            hessian_exact: if self.settings.project_on_demand {
                Some(c(self.hessian_nodes_projected(false))?)
            } else {
                None
            },
            trial: c(self.trial_nodes())?,
            accept: c(self.accept_nodes())?,
            finish: c(self.finish_nodes())?,
        })
    }
}

/// Whole-graph timestamps (per-part GPU times).
fn opts() -> CompileOptions {
    CompileOptions {
        graph_timestamps: true,
        ..Default::default()
    }
}
