//! Implicit Euler as minimisation of the incremental potential
//! `E(x) = 1/(2h²) ‖x − y‖²_M + Ψ(x)`, `y = xₜ + h vₜ + h² g`, by Newton's method on the GPU:
//! per-element gradients and PSD-projected Hessians ([`crate::fem`]), assembly into 3×3 block
//! storage (`kernels/fem/assemble_hessian.comp`), block-Jacobi PCG ([`crate::linear`]) and a
//! backtracking line search on the energy reduced on the GPU. Every step runs from graphs
//! compiled once ([`graphs`]); the host reads back scalars only (energies, norms, PCG
//! residuals). Analytic colliders (plane, sphere, box; static or moving) enter the energy as
//! IPC's log barrier on the distance above each collider's offset, with lagged Coulomb friction
//! re-linearised at every Newton iteration (reference: `cpu_reference::contact`); a line-search
//! trial that moves a vertex into an offset has infinite energy, so no accepted iterate enters
//! one; the step starts and ends with vertices pushed out (moving colliders, initial states); cloth and rod elements share the tets' element pool
//! ([`crate::fem::thin`]). Contact methods add energy terms ([`crate::contact::EnergyTerm`])
//! through the per-vertex penalty sums and act after every accepted iterate
//! ([`Phase::Accepted`]).

pub mod device_loop;
mod graphs;
pub mod script;
mod settings;

pub use settings::NewtonSettings;

use crate::contact::{
    ContactNeeds, ContactSet, EnergyBindings, EnergyTerm, IterationInfo, SystemBindings,
};
use crate::error::SimError;
use crate::fem::{ElementModel, TetElements};
use crate::linear::{warm_run_length, Pcg, SolveExit, WarmSolveStats};
use crate::model::SimModel;
use crate::phase::{PcgExit, Phase, Phases, StepperInfo};
use crate::primitives::Reduce;
use crate::scene::Scene;
use crate::state::GpuState;
use crate::stepper::{check_scene, ContactHost, StepReport, Stepper};
use crate::vk::{CompiledGraph, Context, GpuBuffer, VkResult};
use device_loop::DeviceLoop;
use graphs::{Bindings, Graphs, SolveBuffers, Sparsity, Workspace, EVALUATION_SLOTS, SUM_SLOTS};
use script::ScriptProgress;

/// A line search's result: the accepted objective (`None`: no step accepted), the last α tried
/// and the direction's largest vertex displacement (m).
type SearchResult = (Option<f64>, f32, f64);

/// The Newton right-hand side, the diagonal blocks and the energy ([`NewtonStepper::linearize`]).
pub type Linearization = (Vec<[f32; 4]>, Vec<[f32; 4]>, f64);

/// What the Newton stepper is and supports.
pub const INFO: StepperInfo = StepperInfo {
    name: "newton",
    phases: Phases::STEP_START
        .union(Phases::ACCEPTED)
        .union(Phases::FINISHED)
        .union(Phases::SCRIPT_MOVED),
    minimises_energy: true,
    scripted_motion: true,
    loads: true,
    general_colliders: true,
    mixed_solid_models: false,
    solid_models: None,
    record_into: false,
};

/// Most PCG iterations recorded per submission: a solve that needs more costs one more host
/// wait per run; iterations recorded after the device decided to stop still cost an empty
/// indirect dispatch each.
const PCG_ITERATIONS_PER_RUN: u32 = 32;

/// The same where the device skips the iterations after the stop (VK_EXT_conditional_rendering,
/// [`Context::conditional_rendering`]): a recorded iteration it does not need then costs
/// nothing, so a solve up to this many iterations is one submission and one host wait.
const PCG_ITERATIONS_PER_SKIPPING_RUN: u32 = 128;

/// PCG iterations per run for `settings`: enough for the whole warm start and solve when the
/// caps are small, [`PCG_ITERATIONS_PER_RUN`] at most ([`PCG_ITERATIONS_PER_SKIPPING_RUN`]
/// where the device `skips` iterations after the stop); even (the r·z slots alternate).
fn pcg_run_length(settings: &NewtonSettings, skips: bool) -> u32 {
    let most = if skips {
        PCG_ITERATIONS_PER_SKIPPING_RUN
    } else {
        PCG_ITERATIONS_PER_RUN
    };
    let cap = settings
        .pcg_max_iterations
        .max(settings.warm_start.max_iterations)
        .min(most);
    cap.max(2).next_multiple_of(2)
}

/// The error for a Newton system at time `t` whose PCG solve ended at a residual that is not
/// finite: a NaN would otherwise freeze the simulation silently (no trial step is accepted and
/// no vertex moves).
fn not_finite_system(t: f64, residual: f64) -> SimError {
    SimError::solver(
        "newton",
        format!(
            "the Newton system at t = {t} s is not finite (PCG residual {residual}): NaN or \
             infinity in the Hessian or gradient"
        ),
    )
}

/// Which graphs of the step were submitted without a wait of their own.
#[derive(Debug, Clone, Copy, Default)]
struct Submitted {
    predict: bool,
    /// The scripted vertices' jump went with the prediction.
    script: bool,
    hessian: bool,
    accept: bool,
    /// An evaluation at x (`Some(relag)`: [`Graphs::evaluate`] or, `false`,
    /// [`Graphs::evaluate_lagged`]), read after a later wait ([`NewtonStepper::iterate_queued`]).
    evaluate: Option<bool>,
}

/// A Newton–PCG implicit Euler stepper for the tets, cloth and rods of a [`SimModel`].
pub struct NewtonStepper {
    settings: NewtonSettings,
    info: StepperInfo,
    /// Handle of the state's positions (for energy terms).
    x: GpuBuffer<[f32; 4]>,
    /// The masses, inverse masses and collider clearances the solve reads.
    solve: SolveBuffers,
    /// The pull's weight on scripted vertices now (× their mass; see [`script`]).
    pull_weight: std::cell::Cell<f64>,
    ws: Workspace,
    /// Penalty-term stiffness k (N/m): `penalty_stiffness` m̄/h².
    penalty_k: f64,
    pcg: Pcg,
    /// The energy terms' operator generation the PCG graphs were last recorded with
    /// ([`NewtonStepper::refresh_operator`]).
    operator_generation: u64,
    ctx: Context,
    graphs: Graphs,
    /// The device-driven loop, run when no contact handler acts (with settings it supports).
    device_loop: Option<DeviceLoop>,
    /// Graphs submitted without a wait whose GPU time is still to be added to the report.
    submitted: std::cell::Cell<Submitted>,
    /// Kept alive for the graphs that bind them.
    _elements: TetElements,
    _sparsity: Sparsity,
    _reduce: Reduce,
}

/// The energy terms' part of an evaluation of the objective.
#[derive(Clone, Copy)]
enum TermEnergies<'a> {
    /// Evaluated (run and waited for) before the stepper's evaluation.
    Now(&'a dyn Fn() -> Result<(f64, f64), SimError>),
    /// Submitted before the stepper's evaluation ([`ContactSet::submit_energy`]), read after
    /// its wait.
    Submitted(&'a ContactSet),
}

impl NewtonStepper {
    /// The scene's Newton stepper over `state`, with what the contact method `needs`.
    pub fn from_scene(
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        state: &GpuState,
        needs: &ContactNeeds,
    ) -> Result<NewtonStepper, SimError> {
        check_scene(&INFO, scene)?;
        NewtonStepper::new(
            ctx,
            model,
            state,
            ElementModel::of_scene(scene),
            NewtonSettings::from_scene(scene, needs),
        )
    }

    /// Uploads the model's elements, allocates the step's workspace and compiles every graph
    /// of a step over `state`.
    pub fn new(
        ctx: &Context,
        model: &SimModel,
        state: &GpuState,
        model_kind: ElementModel,
        settings: NewtonSettings,
    ) -> Result<NewtonStepper, SimError> {
        let n = model.positions.len();
        if state.num_vertices() != n {
            return Err(SimError::invalid(
                "state",
                format!("{} vertices for a model of {n}", state.num_vertices()),
            ));
        }
        let ws = Workspace::new(ctx, n)?;
        let free_masses: Vec<f64> = (0..n)
            .filter(|&i| model.inv_mass[i] > 0.0)
            .map(|i| model.masses[i])
            .collect();
        let mean_mass = free_masses.iter().sum::<f64>() / free_masses.len().max(1) as f64;
        let penalty_k = settings.penalty_stiffness * mean_mass / (settings.h * settings.h);
        if !(penalty_k.is_finite() && penalty_k >= 0.0) {
            return Err(SimError::invalid(
                "penalty_stiffness",
                format!(
                    "{} gives k = {penalty_k} N/m (must be finite, >= 0)",
                    settings.penalty_stiffness
                ),
            ));
        }
        let elements = TetElements::with_thin(
            ctx,
            &model.positions,
            &model.tets,
            &model.tet_lame,
            model_kind,
            &model.thin_elements,
        )?;
        let sparsity = Sparsity::new(ctx, model)?;
        let run = pcg_run_length(&settings, ctx.conditional_rendering());
        let warm_run = warm_run_length(settings.warm_start.max_iterations, run);
        let pcg = Pcg::with_sparsity_and_warm_run(ctx, n, sparsity.pairs(), run, warm_run)?;
        pcg.set_stagnation_window(settings.pcg_stagnation_window);
        let reduce = Reduce::new(ctx, n.max(elements.num_elements()))?;
        let solve = SolveBuffers::new(ctx, model, state, settings.script_pull)?;
        let bindings = Bindings {
            ctx,
            state,
            ws: &ws,
            elements: &elements,
            pcg: &pcg,
            sparsity: &sparsity,
            reduce: &reduce,
            solve: &solve,
            settings: &settings,
            penalty_k,
            has_motion: model.has_motion(),
        };
        let graphs = bindings.record()?;
        let device_loop =
            if settings.device_loop && device_loop::eligible(&settings, pcg.iterations_per_run()) {
                Some(DeviceLoop::record(&bindings)?)
            } else {
                None
            };
        Ok(NewtonStepper {
            pull_weight: std::cell::Cell::new(settings.script_pull.unwrap_or(0.0)),
            settings,
            info: INFO,
            x: state.x.clone(),
            solve,
            ws,
            penalty_k,
            pcg,
            operator_generation: 0,
            ctx: ctx.clone(),
            graphs,
            device_loop,
            submitted: std::cell::Cell::new(Submitted::default()),
            _elements: elements,
            _sparsity: sparsity,
            _reduce: reduce,
        })
    }

    fn read_sums(&self) -> Result<[f64; SUM_SLOTS], SimError> {
        let s = self.ws.sums.mapped().unwrap_or(&[]);
        if s.len() < SUM_SLOTS {
            return Err(SimError::solver(
                "newton",
                "sums buffer is not host-visible",
            ));
        }
        Ok(std::array::from_fn(|k| s[k].value as f64))
    }

    /// The evaluation's (element, inertia) energies and max |g| from the sums.
    fn evaluation_sums(&self) -> Result<(f64, f64, f64), SimError> {
        let s = self.read_sums()?;
        let e = EVALUATION_SLOTS;
        Ok((s[e.element], s[e.inertia], s[e.gradient]))
    }

    /// Writes the step's end time and submits the script and prediction graphs without
    /// waiting: the evaluation that follows reads nothing on the host before its own graph ran,
    /// and its wait covers them (queue order). Their GPU time is added by
    /// [`NewtonStepper::collect_submitted_ms`].
    fn predict(&self, state: &GpuState, jump_script: bool) -> Result<(), SimError> {
        self.ws.time.write(&[state.clock.next_time() as f32])?;
        let g = &self.graphs;
        if let (Some(script), true) = (&g.script, jump_script) {
            script.submit()?;
        }
        g.predict.submit()?;
        self.submitted.set(Submitted {
            predict: true,
            script: jump_script,
            ..self.submitted.get()
        });
        Ok(())
    }

    /// Adds the GPU time of the graphs submitted without a wait of their own (prediction,
    /// Hessian assembly, acceptance) once a later wait covered them: reading their timestamps
    /// then needs no host wait.
    fn collect_submitted_ms(&self, report: &mut StepReport) -> Result<(), SimError> {
        let g = &self.graphs;
        let s = self.submitted.replace(Submitted::default());
        if s.predict {
            if let (Some(script), true) = (&g.script, s.script) {
                report.gpu_ms.predict += script.gpu_ms()?;
            }
            report.gpu_ms.predict += g.predict.gpu_ms()?;
        }
        if s.hessian {
            report.gpu_ms.hessian += g.hessian.gpu_ms()?;
        }
        if s.accept {
            report.gpu_ms.line_search += g.accept.gpu_ms()?;
        }
        if let Some(relag) = s.evaluate {
            report.gpu_ms.evaluate += self.evaluation_graph(relag).gpu_ms()?;
        }
        Ok(())
    }

    /// The evaluation graph, friction re-lagged with `relag`.
    fn evaluation_graph(&self, relag: bool) -> &crate::vk::CompiledGraph {
        if relag {
            &self.graphs.evaluate
        } else {
            &self.graphs.evaluate_lagged
        }
    }

    /// Evaluates the energy terms and the gradient at x (friction re-lagged with `relag`);
    /// returns the objective and leaves the gradient norm in the report.
    fn evaluate(
        &self,
        energies: TermEnergies,
        relag: bool,
        report: &mut StepReport,
    ) -> Result<f64, SimError> {
        // The terms' work first: the evaluation reads their gradient sums.
        let now = match energies {
            TermEnergies::Now(f) => Some(f()?),
            TermEnergies::Submitted(_) => None,
        };
        let graph = self.evaluation_graph(relag);
        graph.run()?;
        let (term_energy, ms) = match (now, energies) {
            (Some(e), _) => e,
            // Covered by the evaluation's wait.
            (None, TermEnergies::Submitted(c)) => c.read_submitted_energy(false)?,
            (None, TermEnergies::Now(f)) => f()?,
        };
        report.gpu_ms.evaluate += ms;
        report.gpu_ms.evaluate += graph.gpu_ms()?;
        self.collect_submitted_ms(report)?;
        let (element, inertia, gradient) = self.evaluation_sums()?;
        report.gradient_norm = gradient;
        Ok(element + inertia + term_energy)
    }

    /// Backtracking line search on the objective from `energy`, starting at step `alpha0` (the
    /// energy terms' bound, at most 1); returns the accepted energy
    /// (if any), the last step α and the direction's largest vertex displacement.
    /// With `chain` (every contact handler reads the iterate in queue order), the acceptance is
    /// submitted without a wait of its own. With `first_done` the trial at `alpha0` already ran
    /// (queued behind the PCG solve, [`NewtonStepper::iterate_queued`]). `contacts` adds its
    /// energy terms' trial energies.
    fn line_search(
        &self,
        energy: f64,
        alpha0: f32,
        contacts: &ContactSet,
        chain: bool,
        first_done: bool,
        report: &mut StepReport,
    ) -> Result<(Option<f64>, f32, f64), SimError> {
        let g = &self.graphs;
        let mut alpha = alpha0;
        let mut ran = first_done;
        let mut dmax = 0.0;
        let floor = self
            .settings
            .max_halvings
            .map(|n| alpha0 * 0.5f32.powi(n as i32));
        while floor.map_or(alpha > 1e-6, |f| alpha >= f && alpha > 0.0) {
            let (term_energy, ms) = if std::mem::take(&mut ran) {
                contacts.trial_energy()?
            } else {
                self.ws.alpha.write(&[alpha])?;
                let trial = g.trial.submit()?;
                if contacts.submit_energy(true)? {
                    // The terms' trial energies behind the trial positions: their wait
                    // covers both (one host wait per trial).
                    let e = contacts.read_submitted_energy(true)?;
                    g.trial.wait(trial)?;
                    e
                } else {
                    g.trial.wait(trial)?;
                    contacts.trial_energy()?
                }
            };
            report.gpu_ms.line_search += g.trial.gpu_ms()?;
            report.gpu_ms.line_search += ms;
            let s = self.read_sums()?;
            dmax = s[3];
            let e = s[0] + s[1] + term_energy;
            if e <= energy + 1e-12 * energy.abs().max(1e-12) {
                if chain {
                    // Covered by the next evaluation's (or the velocity update's) wait.
                    g.accept.submit()?;
                    self.submitted.set(Submitted {
                        accept: true,
                        ..self.submitted.get()
                    });
                } else {
                    g.accept.run()?;
                    report.gpu_ms.line_search += g.accept.gpu_ms()?;
                }
                return Ok((Some(e), alpha, dmax));
            }
            alpha *= 0.5;
        }
        Ok((None, alpha, dmax))
    }

    /// Assembles the Newton system (with the energy terms' own blocks) and solves it with PCG.
    fn solve(
        &self,
        t: f64,
        contacts: &ContactSet,
        report: &mut StepReport,
    ) -> Result<IterationInfo, SimError> {
        let solve = self.solve_with(&self.graphs.hessian, contacts, report)?;
        self.account_solve(t, solve, report)
    }

    /// Assembles the Newton system with the element Hessians of `hessian` (projected or exact)
    /// and the energy terms' blocks and runs the PCG solve (not yet accounted).
    fn solve_with(
        &self,
        hessian: &CompiledGraph,
        contacts: &ContactSet,
        report: &mut StepReport,
    ) -> Result<WarmSolveStats, SimError> {
        let st = &self.settings;
        if contacts.reads_in_queue_order() {
            // No contact handler reads the system on the host: the PCG solve's wait covers the
            // assembly and the energy terms' blocks added after it (queue order).
            hessian.submit()?;
            self.submitted.set(Submitted {
                hessian: true,
                ..self.submitted.get()
            });
            report.gpu_ms.hessian += contacts.add_hessians()?;
        } else {
            hessian.run()?;
            report.gpu_ms.hessian += hessian.gpu_ms()?;
            report.gpu_ms.hessian += contacts.add_hessians()?;
        }
        let solve = self.pcg.solve_resident_warm(
            st.pcg_tolerance,
            st.pcg_max_iterations,
            &st.warm_start,
        )?;
        self.collect_submitted_ms(report)?;
        Ok(solve)
    }

    /// Checks and reports a Newton system's PCG `solve` (one Newton iteration).
    fn account_solve(
        &self,
        t: f64,
        solve: WarmSolveStats,
        report: &mut StepReport,
    ) -> Result<IterationInfo, SimError> {
        if !solve.relative_residual.is_finite() {
            return Err(not_finite_system(t, solve.relative_residual as f64));
        }
        report.newton_iterations += 1;
        Ok(self.record_solve(solve, report))
    }

    /// Records a PCG `solve`'s iterations, residual, exit and GPU time in the report (not the
    /// Newton iteration: see [`NewtonStepper::account_solve`]).
    fn record_solve(&self, solve: WarmSolveStats, report: &mut StepReport) -> IterationInfo {
        report.pcg_warm_iterations += solve.warm_iterations;
        report.pcg_residual = solve.relative_residual as f64;
        report.pcg_residual_max = report.pcg_residual_max.max(report.pcg_residual);
        report.gpu_ms.pcg += self.pcg.last_gpu_ms();
        report.pcg_iterations += solve.iterations;
        report.record_pcg(solve.exit, solve.model);
        IterationInfo {
            pcg_iterations: solve.iterations,
            pcg_warm_iterations: solve.warm_iterations,
            pcg_exit: match solve.exit {
                SolveExit::Converged => PcgExit::Tolerance,
                SolveExit::IterationCap => PcgExit::Cap,
                SolveExit::Breakdown => PcgExit::Breakdown,
                SolveExit::Stagnated | SolveExit::NonFinite => PcgExit::Stagnation,
            },
            ..IterationInfo::default()
        }
    }

    /// Why a PCG solve of `iterations` ending at `residual` stopped.
    fn pcg_exit(&self, iterations: u32, residual: f32) -> PcgExit {
        if residual <= self.settings.pcg_tolerance {
            PcgExit::Tolerance
        } else if iterations >= self.settings.pcg_max_iterations {
            PcgExit::Cap
        } else {
            PcgExit::Stagnation
        }
    }

    /// The line search from `energy` (starting at the terms' bound); when it fails, PCG
    /// resumes from its last solution for one stagnation window and the search is retried, at
    /// most `pcg_resumes` times (the barrier-augmented Lagrangian paper's Appendix B).
    fn search_with_resumes(
        &self,
        energy: f64,
        contacts: &ContactSet,
        info: &mut IterationInfo,
        report: &mut StepReport,
    ) -> Result<(Option<f64>, f32, f64), SimError> {
        let st = &self.settings;
        loop {
            let alpha0 = contacts.max_step()?.min(1.0);
            info.alpha_start = alpha0;
            let chain = contacts.reads_in_queue_order();
            let r = self.line_search(energy, alpha0, contacts, chain, false, report)?;
            if r.0.is_some() || info.pcg_resumes >= st.pcg_resumes {
                info.alpha = if r.0.is_some() { r.1 } else { 0.0 };
                return Ok(r);
            }
            info.pcg_resumes += 1;
            let window = st.pcg_stagnation_window.min(st.pcg_max_iterations).max(1);
            let (iterations, residual) = self.pcg.solve_resident(st.pcg_tolerance, window)?;
            report.gpu_ms.pcg += self.pcg.last_gpu_ms();
            report.pcg_iterations += iterations;
            info.pcg_iterations += iterations;
            info.pcg_exit = self.pcg_exit(iterations, residual);
        }
    }

    /// Evaluates the energy terms and the stepper's gradient at x, then adds the terms' own
    /// gradients to the system; returns the objective (see [`NewtonStepper::evaluate`]).
    fn evaluate_terms(
        &self,
        contacts: &ContactSet,
        relag: bool,
        report: &mut StepReport,
    ) -> Result<f64, SimError> {
        let energies = || contacts.evaluate_energy();
        let terms = if contacts.submit_energy(false)? {
            TermEnergies::Submitted(contacts)
        } else {
            TermEnergies::Now(&energies)
        };
        let energy = self.evaluate(terms, relag, report)?;
        let (change, ms) = contacts.add_gradients()?;
        report.gpu_ms.evaluate += ms;
        Ok(energy + change)
    }

    /// One Newton iteration's solve and line search from the objective `energy`. With
    /// project-on-demand Newton the exact tet Hessians come first: their direction is searched
    /// once (no PCG resumption) unless the PCG met negative curvature (a breakdown) or a
    /// non-finite residual, and when that search accepts nothing the iteration solves again
    /// with the projected Hessians (counted in [`StepReport::projection_fallbacks`], one Newton
    /// iteration either way, the PCG iterations of both solves counted).
    fn solve_and_search(
        &self,
        t: f64,
        energy: f64,
        contacts: &ContactSet,
        report: &mut StepReport,
    ) -> Result<(IterationInfo, SearchResult), SimError> {
        let mut spent = 0;
        if let Some(exact) = &self.graphs.hessian_exact {
            report.exact_hessian_iterations += 1;
            let solve = self.solve_with(exact, contacts, report)?;
            let usable = solve.relative_residual.is_finite() && solve.exit != SolveExit::Breakdown;
            let mut info = self.record_solve(solve, report);
            if usable {
                let alpha0 = contacts.max_step()?.min(1.0);
                info.alpha_start = alpha0;
                let chain = contacts.reads_in_queue_order();
                let r = self.line_search(energy, alpha0, contacts, chain, false, report)?;
                if r.0.is_some() {
                    info.alpha = r.1;
                    report.newton_iterations += 1;
                    return Ok((info, r));
                }
            }
            // The same Newton iteration again, projected (counted once, by that solve).
            report.projection_fallbacks += 1;
            spent = info.pcg_iterations;
        }
        let mut info = self.solve(t, contacts, report)?;
        info.pcg_iterations += spent;
        let r = self.search_with_resumes(energy, contacts, &mut info, report)?;
        Ok((info, r))
    }

    /// Newton iterations from the objective `energy` at x until the direction or the gradient is
    /// small, the line search fails or the iteration cap; returns the objective at the end.
    fn iterate(
        &mut self,
        t: f64,
        mut energy: f64,
        state: &GpuState,
        contacts: &mut ContactSet,
        report: &mut StepReport,
    ) -> Result<f64, SimError> {
        let st = self.settings.clone();
        for _ in 0..st.max_iterations {
            if st.gradient_tolerance > 0.0 && report.gradient_norm <= st.gradient_tolerance {
                break;
            }
            if contacts.terms_converged() {
                break;
            }
            self.refresh_operator(contacts)?;
            let (info, (accepted, alpha, dmax)) =
                self.solve_and_search(t, energy, contacts, report)?;
            let go_on =
                self.iteration_done(&info, accepted, alpha, dmax, state, contacts, report)?;
            if let Some(e) = accepted {
                energy = e;
            }
            if !go_on {
                break;
            }
            // Rebuild the rhs at the accepted x, re-lagging friction there when fully implicit
            // (the energy changes with the lag: read it again).
            energy = self.evaluate_terms(contacts, st.friction_per_iteration, report)?;
        }
        Ok(energy)
    }

    /// The end of a Newton iteration shared by [`NewtonStepper::iterate`] and
    /// [`NewtonStepper::iterate_queued`]: tells the contact handlers, records the direction,
    /// moves them to an `accepted` iterate; returns whether the iterations go on (a step was
    /// accepted and it moved x by no less than the tolerance).
    #[allow(clippy::too_many_arguments)]
    fn iteration_done(
        &self,
        info: &IterationInfo,
        accepted: Option<f64>,
        alpha: f32,
        dmax: f64,
        state: &GpuState,
        contacts: &mut ContactSet,
        report: &mut StepReport,
    ) -> Result<bool, SimError> {
        contacts.iteration_done(info);
        report.last_direction = dmax;
        if accepted.is_some() {
            contacts.at(Phase::Accepted, state)?;
        }
        Ok(!(accepted.is_none() || dmax * (alpha as f64) < self.settings.tolerance))
    }

    /// Whether the step's Newton iterations run queued ([`NewtonStepper::iterate_queued`]):
    /// with always-projected Hessians, contact handlers that read the iterates in queue order
    /// and add no energy term (the line search starts at α = 1 and no term waits between the
    /// parts), the stepper's own scripted motion (no pull, no bounded move), no PCG
    /// resumption, and a warm start that fits one PCG run (the solve then does not read the
    /// previous solution, so a solve discarded by the gradient test leaves no trace).
    fn queues_search(&self, contacts: &ContactSet) -> bool {
        let st = &self.settings;
        !contacts.is_empty()
            && self.graphs.hessian_exact.is_none()
            && !contacts.has_energy()
            && contacts.reads_in_queue_order()
            && self.graphs.pull.is_none()
            && !self.bounded_script(contacts)
            && st.pcg_resumes == 0
            && st.max_outer_iterations == 1
            && st.warm_start.enabled
            && st.warm_start.max_iterations <= self.pcg.iterations_per_run()
    }

    /// Submits the evaluation at x (friction re-lagged with `relag`) without a wait: its sums
    /// ([`graphs::EVALUATION_SLOTS`]) are read after the next wait
    /// ([`NewtonStepper::read_evaluation`]).
    fn submit_evaluation(&self, relag: bool) -> Result<(), SimError> {
        self.evaluation_graph(relag).submit()?;
        self.submitted.set(Submitted {
            evaluate: Some(relag),
            ..self.submitted.get()
        });
        Ok(())
    }

    /// After a wait that covered a submitted evaluation: its objective (no energy terms), the
    /// gradient norm into the report and the GPU times of what was submitted.
    fn read_evaluation(&self, report: &mut StepReport) -> Result<f64, SimError> {
        self.collect_submitted_ms(report)?;
        let (element, inertia, gradient) = self.evaluation_sums()?;
        report.gradient_norm = gradient;
        Ok(element + inertia)
    }

    /// [`NewtonStepper::iterate`] for [`NewtonStepper::queues_search`], with the same decisions
    /// and arithmetic and fewer host waits, from an evaluation at x already submitted: each
    /// iteration submits the Hessian assembly, then the PCG solve with the first line-search
    /// trial (α = 1) queued behind it, and waits once for both; the evaluation's objective and
    /// gradient norm are read after that wait, and when the gradient test stops the iteration
    /// the queued solve and trial are discarded (x is unchanged: no acceptance was queued). A
    /// rejected first trial costs the search's further trials their own waits, as before. The
    /// evaluation at an accepted x is submitted without a wait. Returns the objective at the
    /// end, `None` when it is that of the evaluation still in the queue
    /// ([`NewtonStepper::finish_step`] reads it).
    fn iterate_queued(
        &mut self,
        t: f64,
        state: &GpuState,
        contacts: &mut ContactSet,
        report: &mut StepReport,
    ) -> Result<Option<f64>, SimError> {
        let st = self.settings.clone();
        let mut energy = None;
        for _ in 0..st.max_iterations {
            self.refresh_operator(contacts)?;
            let alpha0 = contacts.max_step()?.min(1.0);
            let (solve, first_done) = self.solve_with_first_trial(alpha0)?;
            let objective = match energy {
                Some(e) => e,
                None => self.read_evaluation(report)?,
            };
            energy = Some(objective);
            if st.gradient_tolerance > 0.0 && report.gradient_norm <= st.gradient_tolerance {
                break;
            }
            let mut info = self.account_solve(t, solve, report)?;
            info.alpha_start = alpha0;
            let (accepted, alpha, dmax) =
                self.line_search(objective, alpha0, contacts, true, first_done, report)?;
            info.alpha = if accepted.is_some() { alpha } else { 0.0 };
            let go_on =
                self.iteration_done(&info, accepted, alpha, dmax, state, contacts, report)?;
            if let Some(e) = accepted {
                energy = Some(e);
            }
            if !go_on {
                break;
            }
            self.submit_evaluation(st.friction_per_iteration)?;
            energy = None;
        }
        Ok(energy)
    }

    /// The Hessian assembly (submitted) and the PCG solve with the line-search trial at
    /// `alpha0` queued behind it; returns the solve and whether the trial ran after all of it
    /// (otherwise the line search runs it again).
    fn solve_with_first_trial(&self, alpha0: f32) -> Result<(WarmSolveStats, bool), SimError> {
        let st = &self.settings;
        // Every graph that reads α before this one has completed (the last trial was waited
        // for); the pending evaluation does not read it.
        self.ws.alpha.write(&[alpha0])?;
        self.graphs.hessian.submit()?;
        self.submitted.set(Submitted {
            hessian: true,
            ..self.submitted.get()
        });
        Ok(self.pcg.solve_resident_warm_then(
            st.pcg_tolerance,
            st.pcg_max_iterations,
            &st.warm_start,
            Some(&self.graphs.trial),
        )?)
    }

    /// The outer loop of a step's solve from the objective `energy` at x: Newton iterations,
    /// then the energy terms' outer update, until they are converged or the outer cap; returns
    /// the objective at the end.
    fn solve_step(
        &mut self,
        t: f64,
        mut energy: f64,
        state: &GpuState,
        contacts: &mut ContactSet,
        report: &mut StepReport,
    ) -> Result<f64, SimError> {
        for outer in 0..self.settings.max_outer_iterations {
            if outer > 0 {
                // The terms changed (multipliers, stiffness): the objective at x changed too.
                energy = self.evaluate_terms(contacts, true, report)?;
            }
            energy = self.iterate(t, energy, state, contacts, report)?;
            if contacts.outer_update()? {
                break;
            }
        }
        Ok(energy)
    }

    /// Records the PCG graphs again when an energy term's matrix-free couplings were rebuilt
    /// since they were recorded ([`EnergyTerm::operator_generation`]: a term's workspace grew).
    fn refresh_operator(&mut self, contacts: &ContactSet) -> Result<(), SimError> {
        let (generation, op) = contacts.operator();
        if generation != self.operator_generation {
            self.pcg.set_contact_operator(&self.ctx, op)?;
            self.operator_generation = generation;
        }
        Ok(())
    }

    /// Prediction and first linearisation of the next step without solving or advancing: the
    /// Newton right-hand side `−∇E` (one vec4 per vertex), the diagonal blocks of the Newton
    /// matrix (three rows per vertex) and the incremental potential E at the current positions,
    /// with `energies` added. For checks against `cpu_reference::newton`.
    pub fn linearize(
        &self,
        state: &GpuState,
        energies: &[&dyn EnergyTerm],
    ) -> Result<Linearization, SimError> {
        let mut report = StepReport::default();
        self.predict(state, true)?;
        let sum = || -> Result<(f64, f64), SimError> {
            let mut s = (0.0, 0.0);
            for e in energies {
                let (j, ms) = e.evaluate()?;
                s = (s.0 + j, s.1 + ms);
            }
            Ok(s)
        };
        let energy = self.evaluate(TermEnergies::Now(&sum), true, &mut report)?;
        self.graphs.hessian.run()?;
        Ok((
            self.pcg.rhs().read()?,
            self.pcg.diag_blocks().read()?,
            energy,
        ))
    }

    /// The per-vertex stiffness estimate of the PCG warm start from the last Hessian assembly.
    pub fn stiffness_estimate(&self) -> VkResult<Vec<f32>> {
        self.pcg.stiffness().read()
    }

    /// The velocity update and the end of the step; the step's objective is read here when
    /// the evaluation that gives it was still in the queue.
    fn finish_step(
        &self,
        state: &mut GpuState,
        contacts: &mut ContactSet,
        mut report: StepReport,
    ) -> Result<StepReport, SimError> {
        // The finish graph copies x and v into the state's readback copies.
        self.graphs.finish.run()?;
        report.gpu_ms.finish += self.graphs.finish.gpu_ms()?;
        if self.submitted.get().evaluate.is_some() {
            report.energy = self.read_evaluation(&mut report)?;
        }
        self.collect_submitted_ms(&mut report)?;
        let kept = contacts.keeps_state_at(Phase::Finished, state.clock.time());
        contacts.at(Phase::Finished, state)?;
        if kept {
            state.mirror.mark_filled();
        }
        state.clock.advance();
        Ok(report)
    }

    /// The settings the stepper was built with.
    pub fn settings(&self) -> &NewtonSettings {
        &self.settings
    }
}

impl ContactHost for NewtonStepper {
    fn info(&self) -> &StepperInfo {
        &self.info
    }

    fn energy_bindings(&self) -> Option<EnergyBindings> {
        Some(EnergyBindings {
            x: self.x.clone(),
            x_trial: self.ws.x_trial.clone(),
            accum: self.ws.penalty_accum.clone(),
            inv_mass: self.solve.inv_mass.clone(),
            stiffness: self.penalty_k,
            system: Some(SystemBindings {
                rhs: self.pcg.rhs().clone(),
                diag_blocks: self.pcg.diag_blocks().clone(),
                inverse_diag_blocks: self.pcg.inverse_diag_blocks().clone(),
                stiffness: self.pcg.stiffness().clone(),
                direction: self.pcg.solution().clone(),
            }),
        })
    }

    fn attach_energy(&mut self, ctx: &Context, term: &dyn EnergyTerm) -> Result<(), SimError> {
        if term.uses_penalty_sums() && self.penalty_k <= 0.0 {
            return Err(SimError::invalid(
                "penalty_stiffness",
                "an energy term needs penalty_stiffness > 0",
            ));
        }
        if let Some(op) = term.operator() {
            self.pcg.set_contact_operator(ctx, Some(op))?;
        }
        Ok(())
    }
}

impl Stepper for NewtonStepper {
    fn step(
        &mut self,
        state: &mut GpuState,
        contacts: &mut ContactSet,
    ) -> Result<StepReport, SimError> {
        let mut report = StepReport::default();
        // The state changes from here: a readback queued before is stale.
        state.mirror.forget();
        contacts.at(Phase::StepStart, state)?;
        let t = state.clock.next_time();
        if let (Some(dl), true) = (&self.device_loop, contacts.is_empty()) {
            // No handler acts between iterates: the device decides the whole step.
            let st = &self.settings;
            self.pcg
                .set_solve_limits(st.pcg_tolerance, st.pcg_max_iterations, &st.warm_start)?;
            self.ws.time.write(&[t as f32])?;
            report.energy = dl.step(t, &mut report)?;
            // Its finish section copied x and v into the readback copies (no handler).
            state.mirror.mark_filled();
            contacts.at(Phase::Finished, state)?;
            state.clock.advance();
            return Ok(report);
        }
        // The scripted pose is the one at the step's end.
        self.ws.time.write(&[t as f32])?;
        if let Some(pull) = &self.graphs.pull {
            // Scripted vertices are unknowns pulled to their pose.
            self.predict(state, false)?;
            pull.start.submit()?;
            let energy = self.evaluate_terms(contacts, true, &mut report)?;
            report.gpu_ms.predict += pull.start.gpu_ms()?;
            report.energy = self.solve_with_pull(t, energy, state, contacts, &mut report)?;
            return self.finish_step(state, contacts, report);
        }
        let bounded = self.bounded_script(contacts);
        let script = if bounded {
            self.advance_script(state, contacts, true, &mut report)?
        } else {
            ScriptProgress::Reached
        };
        self.predict(state, !bounded)?;
        if self.queues_search(contacts) {
            self.submit_evaluation(true)?;
            if let Some(energy) = self.iterate_queued(t, state, contacts, &mut report)? {
                report.energy = energy;
            }
            // Without energy terms: nothing to update, one outer iteration.
            contacts.outer_update()?;
            return self.finish_step(state, contacts, report);
        }
        let energy = self.evaluate_terms(contacts, true, &mut report)?;
        report.energy = self.solve_with_script(t, energy, script, state, contacts, &mut report)?;
        self.finish_step(state, contacts, report)
    }
}
