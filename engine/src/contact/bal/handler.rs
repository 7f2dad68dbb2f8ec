//! The barrier-augmented Lagrangian method as a contact plug-in (`collision.method = "bal"`):
//! an [`EnergyTerm`] of the Newton stepper that runs Algorithm 1 (spec §A3) through the
//! generic hooks of `phase.rs` — its energy at iterates and trials, its own float gradient,
//! diagonal blocks and warm-start stiffness added to the stepper's system
//! ([`EnergyTerm::add_gradient`], [`EnergyTerm::add_hessian`]), its off-diagonal blocks as the
//! PCG's matrix-free couplings, the CCD bound as the line search's first step, the relative
//! gradient test ‖∇L‖ ≤ tol ‖∇L⁰‖ ([`EnergyTerm::converged`]) and the dual update after every
//! accepted iterate ([`Phase::Accepted`]).
//!
//! Candidate pairs come from a proximity search over every body's surface at a search distance
//! s > d̂. A pair that is not a candidate was farther than s apart at the search positions, so
//! it stays farther than d̂ apart while every vertex moves less than (s − d̂)/2 from them: the
//! line search's first step is also bounded by that (the max displacement since the search
//! plus α max|p|), and the search runs again at the iterate when the budget is half spent.

use super::rules::{augmentation_rule, grown_sigma, initial_sigma, sigma_bounds};
use super::system::{NodeSums, SystemAdd};
use super::{AugRule, BalBindings, BalContact, BalParams, Candidates, FrictionLagMode, SigmaRule};
use crate::contact::{
    start_check, ContactFrameStats, ContactHandler, ContactMethod, ContactNeeds, EnergyTerm,
    IterationInfo, StepObserver, SystemBindings,
};
use crate::error::SimError;
use crate::linear::pcg::MatrixFreeCouplings;
use crate::model::SimModel;
use crate::phase::{ContactHost, PcgExit, Phase, Phases, StepperInfo};
use crate::proximity::{MaxDisplacement, ProximityMesh, ProximityOptions, ProximitySearch};
use crate::scene::{BalFrictionLag, BalSigmaRule, Scene};
use crate::state::GpuState;
use crate::vk::{BufferUsage, CompileOptions, CompiledGraph, Context, GpuBuffer, Graph};
use std::sync::{Mutex, MutexGuard};

/// The barrier-augmented Lagrangian method.
pub struct BalMethod;

fn failed(m: impl std::fmt::Display) -> SimError {
    SimError::solver("bal", m.to_string())
}

impl ContactMethod for BalMethod {
    fn name(&self) -> &'static str {
        "bal"
    }

    fn needs(&self, scene: &Scene) -> ContactNeeds {
        ContactNeeds {
            energy_stiffness: 0.0,
            outer_iterations: 1,
            term_gradients: true,
            // Spec §A7 #12: 30 halvings from the CCD bound, then the PCG resumption.
            line_search_halvings: Some(30),
            line_search_resumes: scene.collision.bal.pcg_resumes,
            // A scripted body pushes free ones through the barrier (IPC's boundary conditions).
            scripted_unknowns: true,
        }
    }

    fn needs_intersection_free_start(&self) -> bool {
        true
    }

    fn check(&self, _scene: &Scene, stepper: &StepperInfo) -> Result<(), SimError> {
        let wanted = Phases::STEP_START | Phases::ACCEPTED;
        if !(stepper.minimises_energy && stepper.phases.contains(wanted)) {
            return Err(SimError::unsupported(
                "collision.method",
                format!(
                    "bal collision handling is an energy term of a minimising stepper with \
                     accepted iterates (simulation.solver = \"newton\"), not {}",
                    stepper.name
                ),
            ));
        }
        Ok(())
    }

    fn build(
        &self,
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        state: &GpuState,
        stepper: &mut dyn ContactHost,
    ) -> Result<Vec<Box<dyn ContactHandler>>, SimError> {
        start_check::check_start(
            model,
            &model.positions,
            &crate::contact::colliders::from_scene(scene),
            0.0,
            self.name(),
            "at the start",
        )?;
        let bindings = stepper.energy_bindings().ok_or_else(|| {
            SimError::unsupported(
                "collision.method",
                "bal collision handling needs a minimising stepper (newton)",
            )
        })?;
        let system = bindings.system.clone().ok_or_else(|| {
            SimError::unsupported(
                "collision.method",
                format!(
                    "bal collision handling needs a stepper with a float linear system (newton), \
                     not {}",
                    stepper.info().name
                ),
            )
        })?;
        let h = BalHandler::new(
            ctx,
            scene,
            model,
            state,
            &bindings.x_trial,
            &bindings.inv_mass,
            system,
        )?;
        stepper.attach_energy(ctx, &h)?;
        Ok(vec![Box::new(h)])
    }
}

/// The method's settings, converted from `[collision.bal]` (SI units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BalSettings {
    /// d̂ (m).
    pub d_hat: f64,
    /// ε_v (m/s).
    pub eps_v: f64,
    /// Time step h (s).
    pub h: f64,
    /// Friction coefficient χ (`collision.friction`).
    pub chi: f64,
    /// ξ of the CCD bound.
    pub xi: f64,
    /// σ growth rule.
    pub sigma_rule: SigmaRule,
    /// Augmentation on (false: the inexact-Newton baseline, A′ = ∅).
    pub augmentation: bool,
    /// When friction is re-lagged.
    pub friction_lag: FrictionLagMode,
    /// Relative gradient tolerance of the Newton loop.
    pub tolerance: f64,
    /// Memory cap on active pairs at line-search trials.
    pub max_active_pairs: Option<u32>,
    /// Proximity search distance s (m).
    pub search_distance: f64,
    /// Initial active-pair capacity.
    pub pair_capacity: usize,
}

impl BalSettings {
    /// The settings of `scene` for a surface of `surface_vertices` vertices with mean edge
    /// length `mean_edge` (m).
    pub fn from_scene(scene: &Scene, surface_vertices: usize, mean_edge: f64) -> BalSettings {
        let b = &scene.collision.bal;
        BalSettings {
            d_hat: b.d_hat,
            eps_v: b.eps_v,
            h: scene.simulation.time_step(),
            chi: scene.collision.friction,
            xi: b.ccd_separation,
            sigma_rule: match b.sigma_rule {
                BalSigmaRule::AsPrinted => SigmaRule::AsPrinted,
                BalSigmaRule::Capped => SigmaRule::Capped,
            },
            augmentation: b.augmentation,
            friction_lag: match b.friction_lag {
                BalFrictionLag::PerIteration => FrictionLagMode::PerIteration,
                BalFrictionLag::PerStep => FrictionLagMode::PerStep,
            },
            tolerance: b.newton_tolerance,
            max_active_pairs: b.max_active_pairs,
            search_distance: b
                .search_distance
                .unwrap_or(b.d_hat + 0.5 * mean_edge.max(b.d_hat)),
            pair_capacity: b
                .pair_capacity
                .map_or(4 * surface_vertices.max(16), |c| c as usize),
        }
    }

    fn params(&self, sigma: f64) -> BalParams {
        BalParams::new(sigma, self.d_hat, self.eps_v, self.h, self.chi, self.xi)
    }
}

/// Per-frame statistics of the BAL method (report.json block `bal`; every count summed over
/// the frame's steps unless named max/min).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BalFrameStats {
    /// Time steps.
    pub steps: u32,
    /// Newton iterations (linear solves).
    pub newton_iterations: u32,
    /// Most Newton iterations of one step.
    pub newton_iterations_max: u32,
    /// Steps whose last solve ended without the relative gradient test holding (iteration cap,
    /// failed line search or the stepper's displacement tolerance); the scripted vertices' last
    /// bounded move after a converged solve (within the script tolerance) does not count.
    pub unconverged_steps: u32,
    /// Steps that ended at the stepper's Newton iteration cap.
    pub steps_at_cap: u32,
    /// PCG iterations (resumptions included).
    pub pcg_iterations: u32,
    /// PCG runs that stopped at the tolerance.
    pub pcg_exit_tolerance: u32,
    /// PCG runs that stopped on stagnation.
    pub pcg_exit_stagnation: u32,
    /// PCG runs that stopped at the iteration cap.
    pub pcg_exit_cap: u32,
    /// PCG runs that stopped on a breakdown (p·q ≤ 0 or r·z ≤ 0).
    pub pcg_exit_breakdown: u32,
    /// PCG resumptions after failed line searches (Appendix B).
    pub pcg_resumes: u32,
    /// Line searches that accepted no step.
    pub line_search_failures: u32,
    /// Most active pairs |A| at an iterate.
    pub active_max: u32,
    /// Iterations whose A′ rule rebuilt A′ (Algorithm 1 line 8).
    pub augmentation_rebuilds: u32,
    /// Iterations that kept A′.
    pub augmentation_keeps: u32,
    /// Most pairs in A′ at an iterate.
    pub augmented_max: u32,
    /// |A′| per step, in order: the most pairs in A′ at an iterate of each step.
    pub augmented_per_step: Vec<u32>,
    /// Largest σ (N/m).
    pub sigma_max: f64,
    /// Smallest σ⁰ of a step (N/m).
    pub sigma0_min: f64,
    /// Smallest distance over the active pairs at an iterate, divided by d̂ (+∞ written as
    /// null when no pair was active).
    pub min_distance_over_dhat: Option<f64>,
    /// Smallest accepted line-search step α (null when none was accepted).
    pub alpha_min: Option<f64>,
    /// Smallest first step of a line search (the CCD and search-validity bound, ≤ 1).
    pub ccd_bound_min: Option<f64>,
    /// Line-search halvings forced by the active-pair cap (`max_active_pairs`).
    pub cap_rejections: u32,

    /// Proximity searches run.
    pub searches: u32,
    /// Workspace rebuilds (active list grown or search reallocated).
    pub rebuilds: u32,
    /// GPU ms of the BAL graphs: active set.
    pub gpu_ms_active: f64,
    /// GPU ms: terms at iterates (A′ rule, friction lag, evaluate, system adds).
    pub gpu_ms_evaluate: f64,
    /// GPU ms: energies at line-search trials.
    pub gpu_ms_trial: f64,
    /// GPU ms: CCD bound and displacement checks.
    pub gpu_ms_ccd: f64,
    /// GPU ms: dual updates.
    pub gpu_ms_dual: f64,
    /// GPU ms: proximity searches.
    pub gpu_ms_search: f64,
}

impl ContactFrameStats for BalFrameStats {
    const NAME: &'static str = "bal";
}

fn min_opt(a: Option<f64>, b: f64) -> Option<f64> {
    Some(a.map_or(b, |a| a.min(b)))
}

/// What the handler keeps between graph runs.
struct Inner {
    ctx: Context,
    search: ProximitySearch,
    bal: BalContact,
    system: SystemAdd,
    /// Workspaces replaced in this step (the stepper's PCG graphs may still bind them until
    /// they are recorded again at its next solve).
    retired: Vec<(BalContact, SystemAdd)>,
    generation: u64,
    /// Positions at the last search, and a zero vector (for max|p|): bound by the graphs.
    _x_search: GpuBuffer<[f32; 4]>,
    _zeros: GpuBuffer<[f32; 4]>,
    moved: MaxDisplacement,
    step_length: MaxDisplacement,
    displacement: CompiledGraph,
    snapshot: CompiledGraph,
    // Algorithm 1 state of the step in progress.
    iteration: u32,
    sigma: f64,
    sigma0: f64,
    dmin_prev: f64,
    aug_nonempty: bool,
    gradient0: f64,
    converged: bool,
    /// Whether the step's last gradient test held: the step's status. Unlike `converged` a
    /// scripted move does not clear it; the solve that follows a move sets it again, and the
    /// bounded move after the step's last solve (within the script tolerance) runs no test.
    step_converged: bool,
    /// Energy of the last `evaluate` (J), for `add_gradient`'s change.
    last_energy: f64,
    step_iterations: u32,
    /// Newton iterations of the solve in progress (a bounded scripted move starts a new one).
    solve_iterations: u32,
    /// Whether a solve of the step in progress reached the stepper's Newton iteration cap.
    solve_at_cap: bool,
    /// Most pairs in A′ at an iterate of the step in progress.
    step_augmented: u32,
    stats: BalFrameStats,
}

/// The BAL method bound to one simulation (its energy term).
pub struct BalHandler {
    settings: BalSettings,
    nv: usize,
    /// Newton iteration cap (for the steps-at-cap count).
    newton_cap: u32,
    bounds: (f64, f64),
    x: GpuBuffer<[f32; 4]>,
    system_bindings: SystemBindings,
    bindings: BalBindings,
    inv_mass: GpuBuffer<f32>,
    rest_sq: Vec<f32>,
    /// 0 for free vertices, −1 − v for fixed vertex v: as the couplings' group mask it keeps
    /// the contact blocks between free vertices only (fixed rows of the Newton system are
    /// identity rows; a block coupling one to a free vertex would make the system indefinite).
    free_groups: GpuBuffer<i32>,
    observer: Option<StepObserver>,
    inner: Mutex<Inner>,
}

impl BalHandler {
    /// The method over every body's surface at the state's positions, on the stepper's system
    /// whose fixed vertices are those with `inv_mass` 0 (the solve's inverse masses: scripted
    /// vertices may be unknowns there).
    pub fn new(
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        state: &GpuState,
        x_trial: &GpuBuffer<[f32; 4]>,
        inv_mass: &GpuBuffer<f32>,
        system: SystemBindings,
    ) -> Result<BalHandler, SimError> {
        let nv = model.positions.len();
        if !model.curve_segments().is_empty() {
            return Err(SimError::unsupported(
                "collision.method",
                "bal collision handling covers surfaces (tets, cloth); rods have no surface",
            ));
        }
        let field = |m: String| SimError::unsupported("collision", m);
        let mesh =
            ProximityMesh::new(model.surface_triangles(), model.vertex_bodies()).map_err(field)?;
        let surface_vertices = {
            let mut seen = vec![false; nv];
            for t in &mesh.triangles {
                for &v in t {
                    seen[v as usize] = true;
                }
            }
            seen.iter().filter(|&&s| s).count()
        };
        let mean_edge = mesh.mean_edge_length(&model.positions);
        let settings = BalSettings::from_scene(scene, surface_vertices, mean_edge);
        let rest_sq: Vec<f32> = mesh
            .edges
            .iter()
            .map(|e| {
                let (a, b) = (
                    model.positions[e[0] as usize],
                    model.positions[e[1] as usize],
                );
                ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)) as f32
            })
            .collect();
        let free: Vec<f64> = (0..nv)
            .filter(|&i| model.inv_mass[i] > 0.0)
            .map(|i| model.masses[i])
            .collect();
        let mean_mass = free.iter().sum::<f64>() / free.len().max(1) as f64;
        let bbox = bbox_diagonal(&model.positions);
        let bounds = sigma_bounds(
            mean_mass.max(f64::MIN_POSITIVE),
            bbox,
            settings.d_hat,
            settings.h,
        );
        let search = ProximitySearch::new(
            ctx,
            mesh,
            &model.positions,
            ProximityOptions::new(settings.search_distance),
        )
        .map_err(failed)?;
        let bindings = BalBindings {
            x: state.x.clone(),
            x_trial: x_trial.clone(),
            x_start: state.x_prev.clone(),
            direction: system.direction.clone(),
        };
        let bal = BalContact::new(
            ctx,
            bindings.clone(),
            Candidates::from_search(&search),
            nv,
            &rest_sq,
            settings.pair_capacity,
            settings.params(bounds.0),
        )
        .map_err(failed)?;
        let solve_inv_mass = inv_mass.read()?;
        let groups: Vec<i32> = (0..nv)
            .map(|v| {
                if solve_inv_mass.get(v).is_some_and(|&w| w > 0.0) {
                    0
                } else {
                    -1 - v as i32
                }
            })
            .collect();
        let free_groups = ctx.upload_buffer("bal.free_groups", &groups, BufferUsage::STORAGE)?;
        let sys = SystemAdd::new(ctx, NodeSums::of(&bal), &system, inv_mass, nv)?;
        let x_search = ctx.create_buffer("bal.x_search", nv.max(1), BufferUsage::STORAGE)?;
        let zeros = ctx.create_buffer("bal.zeros", nv.max(1), BufferUsage::STORAGE)?;
        let moved = MaxDisplacement::new(ctx, nv)?;
        let step_length = MaxDisplacement::new(ctx, nv)?;
        let opts = CompileOptions {
            graph_timestamps: true,
            ..Default::default()
        };
        let mut g = Graph::new("bal.displacement");
        moved.record(&mut g, &x_search, &state.x);
        step_length.record(&mut g, &zeros, &system.direction);
        let displacement = g.compile(ctx, opts)?;
        let mut g = Graph::new("bal.snapshot");
        g.fill("bal.zero", &zeros, 0);
        g.copy("bal.snapshot", &state.x, &x_search);
        let snapshot = g.compile(ctx, opts)?;
        let inner = Inner {
            ctx: ctx.clone(),
            search,
            bal,
            system: sys,
            retired: Vec::new(),
            generation: 0,
            _x_search: x_search,
            _zeros: zeros,
            moved,
            step_length,
            displacement,
            snapshot,
            iteration: 0,
            sigma: bounds.0,
            sigma0: bounds.0,
            dmin_prev: f64::INFINITY,
            aug_nonempty: false,
            gradient0: 0.0,
            converged: false,
            step_converged: false,
            last_energy: 0.0,
            step_iterations: 0,
            solve_iterations: 0,
            solve_at_cap: false,
            step_augmented: 0,
            stats: BalFrameStats::default(),
        };
        let h = BalHandler {
            settings,
            nv,
            newton_cap: scene.solver.newton_max_iterations,
            bounds,
            x: state.x.clone(),
            system_bindings: system,
            bindings,
            inv_mass: inv_mass.clone(),
            rest_sq,
            free_groups,
            observer: None,
            inner: Mutex::new(inner),
        };
        {
            let mut inner = h.lock()?;
            h.research(&mut inner)?;
        }
        Ok(h)
    }

    fn lock(&self) -> Result<MutexGuard<'_, Inner>, SimError> {
        self.inner
            .lock()
            .map_err(|_| failed("state lock poisoned by an earlier panic"))
    }

    /// Runs the proximity search at the state's positions; rebuilds the workspace when the
    /// search reallocated (its candidate buffers changed).
    fn research(&self, inner: &mut Inner) -> Result<(), SimError> {
        let x: Vec<[f64; 3]> = self.x.read()?[..self.nv]
            .iter()
            .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
            .collect();
        let before = inner.search.generation();
        inner.search.set_positions(&x).map_err(failed)?;
        inner.search.run().map_err(failed)?;
        inner.stats.gpu_ms_search += inner
            .search
            .profile()
            .map_err(failed)?
            .map_or(0.0, |p| p.total_ms);
        inner.stats.searches += 1;
        inner.snapshot.run()?;
        if inner.search.generation() != before {
            let params = inner.bal.params();
            let bal = BalContact::new(
                &inner.ctx,
                self.bindings.clone(),
                Candidates::from_search(&inner.search),
                self.nv,
                &self.rest_sq,
                inner.bal.capacity(),
                params,
            )
            .map_err(failed)?;
            self.replace(inner, bal)?;
        }
        Ok(())
    }

    /// Makes `bal` the workspace (the old one retired until the step ends).
    fn replace(&self, inner: &mut Inner, bal: BalContact) -> Result<(), SimError> {
        let system = SystemAdd::new(
            &inner.ctx,
            NodeSums::of(&bal),
            &self.system_bindings,
            &self.inv_mass,
            self.nv,
        )?;
        let old_bal = std::mem::replace(&mut inner.bal, bal);
        let old_sys = std::mem::replace(&mut inner.system, system);
        inner.retired.push((old_bal, old_sys));
        inner.generation += 1;
        inner.stats.rebuilds += 1;
        Ok(())
    }

    /// The active set at the iterate (growing the workspace if it overflowed); min d (m).
    fn active_set(&self, inner: &mut Inner) -> Result<f64, SimError> {
        let capacity = inner.bal.capacity();
        let rep = inner.bal.run_active_set().map_err(failed)?;
        if rep.regrown > 0 || inner.bal.capacity() != capacity {
            // The workspace reallocated its node buffers: the system graphs and the PCG's
            // couplings must bind the new ones.
            inner.system = SystemAdd::new(
                &inner.ctx,
                NodeSums::of(&inner.bal),
                &self.system_bindings,
                &self.inv_mass,
                self.nv,
            )?;
            inner.generation += 1;
            inner.stats.rebuilds += 1;
        }
        inner.stats.active_max = inner.stats.active_max.max(rep.count);
        if rep.count > 0 {
            inner.stats.min_distance_over_dhat = min_opt(
                inner.stats.min_distance_over_dhat,
                rep.min_distance / self.settings.d_hat,
            );
        }
        Ok(if rep.count > 0 {
            rep.min_distance
        } else {
            f64::INFINITY
        })
    }

    fn set_sigma(&self, inner: &mut Inner, sigma: f64) -> Result<(), SimError> {
        inner.sigma = sigma;
        inner.stats.sigma_max = inner.stats.sigma_max.max(sigma);
        inner
            .bal
            .set_params(self.settings.params(sigma))
            .map_err(failed)
    }

    fn apply_rule(&self, inner: &mut Inner, dmin: f64) -> Result<(), SimError> {
        let rule = if self.settings.augmentation {
            augmentation_rule(
                dmin,
                inner.dmin_prev,
                !inner.aug_nonempty,
                self.settings.d_hat,
            )
        } else {
            AugRule::Empty
        };
        match rule {
            AugRule::Empty => inner.aug_nonempty = false,
            AugRule::Rebuild => {
                inner.aug_nonempty = true;
                inner.stats.augmentation_rebuilds += 1;
            }
            AugRule::Keep => inner.stats.augmentation_keeps += 1,
        }
        inner.dmin_prev = dmin;
        let augmented = inner.bal.apply_rule(rule).map_err(failed)?;
        inner.step_augmented = inner.step_augmented.max(augmented);
        inner.stats.augmented_max = inner.stats.augmented_max.max(augmented);
        Ok(())
    }

    fn evaluate_inner(&self, inner: &mut Inner) -> Result<(f64, f64), SimError> {
        let dmin = self.active_set(inner)?;
        if inner.iteration == 0 {
            // σ⁰ needs the stepper's gradient at x⁰ (add_gradient): evaluate the unit-σ
            // barrier with A′ = ∅ and no friction first.
            self.set_sigma(inner, 1.0)?;
            inner.dmin_prev = dmin;
            inner.bal.apply_rule(AugRule::Empty).map_err(failed)?;
        } else {
            if dmin < 1e-2 * self.settings.d_hat {
                let s = grown_sigma(self.settings.sigma_rule, inner.sigma, inner.sigma0);
                self.set_sigma(inner, s)?;
            }
            self.apply_rule(inner, dmin)?;
            if self.settings.friction_lag == FrictionLagMode::PerIteration {
                inner.bal.lag_friction().map_err(failed)?;
            }
        }
        let e = inner.bal.evaluate().map_err(failed)?;
        let ms = inner.bal.gpu_ms().map_err(failed)?;
        inner.stats.gpu_ms_active += ms.active;
        inner.stats.gpu_ms_evaluate += ms.rule + ms.lag + ms.evaluate;
        inner.last_energy = e.total();
        Ok((e.total(), ms.active + ms.rule + ms.lag + ms.evaluate))
    }

    /// σ⁰ from the unit-σ barrier gradient and the stepper's gradient (−rhs) at x⁰, then the
    /// terms at σ⁰ with the A′ rule and the friction lag of iteration 0; returns the change of
    /// the terms' energy (J).
    fn start_sigma(&self, inner: &mut Inner) -> Result<f64, SimError> {
        // The sums on the device (no per-vertex readback).
        inner.system.sigma0.run()?;
        inner.stats.gpu_ms_evaluate += inner.system.sigma0.gpu_ms()?;
        let (dot, n2) = inner.system.sigma0_sums()?;
        let sigma0 = initial_sigma(dot, n2, self.bounds);
        inner.sigma0 = sigma0;
        inner.stats.sigma0_min = if inner.stats.steps == 0 && inner.stats.sigma0_min == 0.0 {
            sigma0
        } else {
            inner.stats.sigma0_min.min(sigma0)
        };
        self.set_sigma(inner, sigma0)?;
        let dmin = inner.dmin_prev;
        inner.aug_nonempty = false;
        self.apply_rule(inner, dmin)?;
        inner.bal.lag_friction().map_err(failed)?;
        let before = inner.last_energy;
        let e = inner.bal.evaluate().map_err(failed)?;
        inner.last_energy = e.total();
        Ok(e.total() - before)
    }

    fn gradient_inner(&self, inner: &mut Inner) -> Result<(f64, f64), SimError> {
        let mut change = 0.0;
        let first = inner.iteration == 0;
        if first {
            change = self.start_sigma(inner)?;
        }
        inner.system.gradient.run()?;
        let ms = inner.system.gradient.gpu_ms()?;
        inner.stats.gpu_ms_evaluate += ms;
        let norm = inner.system.rhs_norm()?;
        if first {
            // A solve after a scripted move or pull update in the same step (a round) has the
            // step's accuracy target: relative to the step's first ‖∇L⁰‖, not to its own
            // (often far smaller) start, which would put 1e-4 of it below the f32 rounding
            // of the gradient.
            inner.gradient0 = if inner.step_iterations > 0 {
                inner.gradient0.max(norm)
            } else {
                norm
            };
        }
        inner.converged =
            norm <= self.settings.tolerance * inner.gradient0 || inner.gradient0 == 0.0;
        inner.step_converged = inner.converged;
        inner.iteration += 1;
        Ok((change, ms))
    }

    fn max_step_inner(&self, inner: &mut Inner) -> Result<f32, SimError> {
        let budget = self.settings.search_distance - self.settings.d_hat;
        inner.displacement.run()?;
        let mut ms = inner.displacement.gpu_ms()?;
        let mut moved = inner.moved.read()?;
        let p = inner.step_length.read()?;
        if 2.0 * (moved + p) > budget && moved > 0.0 {
            self.research(inner)?;
            moved = 0.0;
        }
        let ccd = inner.bal.max_step().map_err(failed)?;
        ms += inner.bal.gpu_ms().map_err(failed)?.ccd;
        inner.stats.gpu_ms_ccd += ms;
        let valid = if p > 0.0 {
            (budget - 2.0 * moved) / (2.0 * p)
        } else {
            f64::INFINITY
        };
        let alpha = ccd.min(valid).clamp(0.0, 1.0);
        inner.stats.ccd_bound_min = min_opt(inner.stats.ccd_bound_min, alpha);
        Ok(alpha as f32)
    }
}

fn bbox_diagonal(x: &[[f64; 3]]) -> f64 {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in x {
        for ((l, h), &c) in lo.iter_mut().zip(hi.iter_mut()).zip(p) {
            *l = l.min(c);
            *h = h.max(c);
        }
    }
    lo.iter()
        .zip(&hi)
        .map(|(l, h)| (h - l).powi(2))
        .sum::<f64>()
        .sqrt()
}

impl MatrixFreeCouplings for BalHandler {
    fn rows(&self) -> usize {
        self.nv
    }

    fn record_add_product(
        &self,
        g: &mut Graph,
        input: &GpuBuffer<[f32; 4]>,
        q: &GpuBuffer<[f32; 4]>,
    ) {
        // Only the blocks between free vertices (see `free_groups`).
        if let Ok(inner) = self.inner.lock() {
            inner.bal.record_spmv(g, input, q, Some(&self.free_groups));
        }
    }
    // The warm start's grouped products leave the contact couplings out (the trait's default):
    // the kernel masks by one group buffer, and the stiffness groups would also need the
    // free-vertex mask.
}

impl EnergyTerm for BalHandler {
    fn evaluate(&self) -> Result<(f64, f64), SimError> {
        let mut inner = self.lock()?;
        self.evaluate_inner(&mut inner)
    }

    fn trial(&self) -> Result<(f64, f64), SimError> {
        let mut inner = self.lock()?;
        let e = inner.bal.trial().map_err(failed)?;
        let ms = inner.bal.gpu_ms().map_err(failed)?.trial;
        inner.stats.gpu_ms_trial += ms;
        if let Some(cap) = self.settings.max_active_pairs {
            if e.active > cap {
                // §5.2: more pairs than the memory cap would be active: reject (halve α).
                inner.stats.cap_rejections += 1;
                return Ok((f64::INFINITY, ms));
            }
        }
        Ok((e.total(), ms))
    }

    fn operator(&self) -> Option<&dyn MatrixFreeCouplings> {
        Some(self)
    }

    fn operator_generation(&self) -> u64 {
        self.inner.lock().map_or(u64::MAX, |i| i.generation)
    }

    fn max_step(&self) -> Result<f32, SimError> {
        let mut inner = self.lock()?;
        self.max_step_inner(&mut inner)
    }

    fn bounds_steps(&self) -> bool {
        true
    }

    fn uses_penalty_sums(&self) -> bool {
        false
    }

    fn add_gradient(&self) -> Result<(f64, f64), SimError> {
        let mut inner = self.lock()?;
        self.gradient_inner(&mut inner)
    }

    fn add_hessian(&self) -> Result<f64, SimError> {
        let mut inner = self.lock()?;
        inner.system.hessian.run()?;
        let ms = inner.system.hessian.gpu_ms()?;
        inner.stats.gpu_ms_evaluate += ms;
        Ok(ms)
    }

    fn converged(&self) -> bool {
        self.inner.lock().is_ok_and(|i| i.converged)
    }

    fn iteration_done(&self, info: &IterationInfo) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let s = &mut inner.stats;
        s.newton_iterations += 1;
        s.pcg_iterations += info.pcg_iterations;
        s.pcg_resumes += info.pcg_resumes;
        match info.pcg_exit {
            PcgExit::Tolerance => s.pcg_exit_tolerance += 1,
            PcgExit::Stagnation => s.pcg_exit_stagnation += 1,
            PcgExit::Cap => s.pcg_exit_cap += 1,
            PcgExit::Breakdown => s.pcg_exit_breakdown += 1,
        }
        if info.alpha > 0.0 {
            s.alpha_min = min_opt(s.alpha_min, info.alpha as f64);
        } else {
            s.line_search_failures += 1;
        }
        inner.step_iterations += 1;
        inner.solve_iterations += 1;
        if inner.solve_iterations >= self.newton_cap {
            inner.solve_at_cap = true;
        }
    }
}

impl ContactHandler for BalHandler {
    fn name(&self) -> &'static str {
        "bal"
    }

    fn phases(&self, _time: f64) -> Phases {
        Phases::STEP_START | Phases::ACCEPTED | Phases::FINISHED | Phases::SCRIPT_MOVED
    }

    fn bookkeeping_phases(&self) -> Phases {
        Phases::FINISHED
    }

    fn at(&mut self, phase: Phase, state: &GpuState) -> Result<(), SimError> {
        if matches!(phase, Phase::Accepted | Phase::ScriptMoved) {
            if let Some(observe) = self.observer.as_mut() {
                observe(&state.x.read()?[..state.num_vertices()]);
            }
        }
        let mut inner = self.lock()?;
        match phase {
            Phase::StepStart => {
                inner.retired.clear();
                inner.bal.reset().map_err(failed)?;
                inner.iteration = 0;
                inner.step_iterations = 0;
                inner.solve_iterations = 0;
                inner.solve_at_cap = false;
                inner.step_augmented = 0;
                inner.converged = false;
                inner.step_converged = false;
                inner.aug_nonempty = false;
                inner.dmin_prev = f64::INFINITY;
                // A fresh search when half the validity budget is spent.
                inner.displacement.run()?;
                let moved = inner.moved.read()?;
                let budget = self.settings.search_distance - self.settings.d_hat;
                if 4.0 * moved > budget {
                    self.research(&mut inner)?;
                }
            }
            Phase::ScriptMoved => {
                // The solve starts again from the moved positions (Algorithm 1 from its start:
                // σ⁰, A′ and the multipliers anew); the step's counts go on.
                inner.bal.reset().map_err(failed)?;
                inner.iteration = 0;
                inner.converged = false;
                inner.aug_nonempty = false;
                inner.dmin_prev = f64::INFINITY;
                inner.solve_iterations = 0;
            }
            Phase::Accepted => {
                inner.bal.dual_update().map_err(failed)?;
                let ms = inner.bal.gpu_ms().map_err(failed)?.dual;
                inner.stats.gpu_ms_dual += ms;
            }
            Phase::Finished => {
                let n = inner.step_iterations;
                let at_cap = inner.solve_at_cap;
                let converged = inner.step_converged;
                let augmented = inner.step_augmented;
                let s = &mut inner.stats;
                s.steps += 1;
                s.augmented_per_step.push(augmented);
                s.newton_iterations_max = s.newton_iterations_max.max(n);
                if !converged {
                    s.unconverged_steps += 1;
                }
                if at_cap {
                    s.steps_at_cap += 1;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn energy(&self) -> Option<&dyn EnergyTerm> {
        Some(self)
    }

    fn energy_mut(&mut self) -> Option<&mut dyn EnergyTerm> {
        Some(self)
    }

    fn observes_steps(&self) -> bool {
        true
    }

    /// The observer sees every accepted Newton iterate (the positions the barrier keeps apart).
    fn set_observer(&mut self, observer: Option<StepObserver>) {
        self.observer = observer;
    }

    fn positions_changed(&mut self, _state: &GpuState) -> Result<(), SimError> {
        let mut inner = self.lock()?;
        self.research(&mut inner)
    }

    fn take_frame_stats(&mut self) -> serde_json::Value {
        let stats = match self.inner.lock() {
            Ok(mut i) => std::mem::take(&mut i.stats),
            Err(_) => BalFrameStats::default(),
        };
        serde_json::to_value(stats).unwrap_or(serde_json::Value::Null)
    }
}
