//! The words steppers and contact methods share: the phases of a time step at which a contact
//! handler may act ([`Phase`], [`Phases`]), what a stepper offers ([`StepperInfo`]), the energy
//! terms a contact method adds to a minimising stepper ([`EnergyTerm`], [`EnergyBindings`]) and
//! the part of a stepper a contact method sees while it is built ([`ContactHost`]). Both
//! `stepper/` and `contact/` build on this module; `contact/` never names `stepper/`.

use crate::error::SimError;
use crate::linear::pcg::MatrixFreeCouplings;
use crate::vk::{Context, GpuBuffer};

bitflags::bitflags! {
    /// A set of [`Phase`]s (what a stepper offers, what a handler wants).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Phases: u8 {
        /// [`Phase::StepStart`].
        const STEP_START = 1;
        /// [`Phase::Predicted`].
        const PREDICTED = 2;
        /// [`Phase::Iteration`].
        const ITERATION = 4;
        /// [`Phase::Accepted`].
        const ACCEPTED = 8;
        /// [`Phase::Finished`].
        const FINISHED = 16;
        /// [`Phase::Velocities`].
        const VELOCITIES = 32;
        /// [`Phase::ScriptMoved`].
        const SCRIPT_MOVED = 64;
    }
}

/// A point in a time step where a stepper hands control to the contact handlers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before anything of the step runs (positions and velocities are the previous step's).
    StepStart,
    /// After a (sub)step's prediction: positions (and, for velocity-based methods, velocities)
    /// hold the free, unconstrained update; `x_prev` the start of the (sub)step.
    Predicted,
    /// After constraint iteration `k` of `of` in a (sub)step (XPBD sweeps).
    Iteration {
        /// The iteration just done (0-based).
        k: u32,
        /// Iterations per (sub)step.
        of: u32,
    },
    /// After an accepted iterate of a minimising stepper (Newton: after the line search): a
    /// handler may replace the positions by a safe state; the iteration continues from them.
    Accepted,
    /// After the step's velocity update (the step is complete; the clock not yet advanced).
    Finished,
    /// After a velocity-level stepper's free velocity update, before its position update:
    /// velocities hold u′ = u + h M⁻¹ f, positions are still the start of the step; a handler
    /// may change the velocities (contact impulses) that the position update then uses.
    Velocities,
    /// After a minimising stepper moved its scripted vertices toward their pose at the step's
    /// end outside a Newton iterate (within the energy terms' step bound), or changed the pull
    /// that draws them there: the objective or the positions changed, and a solve that follows
    /// starts again (a term restarts its per-solve state).
    ScriptMoved,
}

impl Phase {
    /// The set holding this phase.
    pub fn flag(self) -> Phases {
        match self {
            Phase::StepStart => Phases::STEP_START,
            Phase::Predicted => Phases::PREDICTED,
            Phase::Iteration { .. } => Phases::ITERATION,
            Phase::Accepted => Phases::ACCEPTED,
            Phase::Finished => Phases::FINISHED,
            Phase::Velocities => Phases::VELOCITIES,
            Phase::ScriptMoved => Phases::SCRIPT_MOVED,
        }
    }
}

/// What a stepper is and supports; contact methods and the scene checks read it instead of
/// matching on the solver kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepperInfo {
    /// Name as in the scene (`simulation.solver`).
    pub name: &'static str,
    /// The phases at which it calls the contact handlers.
    pub phases: Phases,
    /// Whether it minimises an energy (and accepts energy terms, [`crate::contact::EnergyTerm`]).
    pub minimises_energy: bool,
    /// Whether it moves scripted vertices (`body.motion`).
    pub scripted_motion: bool,
    /// Whether it applies external loads (`body.force`, `Simulation::set_loads`).
    pub loads: bool,
    /// Whether it handles colliders other than one static frictionless ground plane (spheres,
    /// boxes, friction, motion, `Simulation::set_collider`).
    pub general_colliders: bool,
    /// Whether solids may use different material models in one simulation.
    pub mixed_solid_models: bool,
    /// The solid material models it supports (scene names), `None` for all.
    pub solid_models: Option<&'static [&'static str]>,
    /// Whether a step can be recorded into a host's command buffer (`record_into`).
    pub record_into: bool,
}

/// What a minimising stepper hands an energy term: the buffers it evaluates on and the
/// per-vertex sums the stepper adds to its gradient and Hessian diagonal.
#[derive(Clone)]
pub struct EnergyBindings {
    /// The iterate x (m).
    pub x: GpuBuffer<[f32; 4]>,
    /// Line-search trial positions (m).
    pub x_trial: GpuBuffer<[f32; 4]>,
    /// Per-vertex fixed-point sums (three ivec4 per vertex: gradient, Hessian diagonal block)
    /// that the stepper scales by `stiffness`.
    pub accum: GpuBuffer<[i32; 4]>,
    /// Inverse masses (1/kg).
    pub inv_mass: GpuBuffer<f32>,
    /// Stiffness k (N/m) of the penalty-type term (`contact::ContactNeeds::energy_stiffness` × m̄/h²).
    pub stiffness: f64,
    /// The stepper's float system, for terms that add their own gradient and Hessian blocks
    /// ([`EnergyTerm::add_gradient`], [`EnergyTerm::add_hessian`]); `None` when it has none.
    pub system: Option<SystemBindings>,
}

/// A Newton-type stepper's linear system (f32, per vertex) that an energy term may add its
/// contributions to in graphs of its own, beside the fixed-point penalty sums: the stepper runs
/// them through [`EnergyTerm::add_gradient`] after its gradient pass and
/// [`EnergyTerm::add_hessian`] after its assembly. Fixed vertices (inverse mass 0) must stay
/// untouched (zero right-hand side, identity blocks).
#[derive(Clone)]
pub struct SystemBindings {
    /// Right-hand side −∇E (vec4 per vertex, N).
    pub rhs: GpuBuffer<[f32; 4]>,
    /// Diagonal 3×3 blocks of the system matrix (three row vec4s per vertex, N/m).
    pub diag_blocks: GpuBuffer<[f32; 4]>,
    /// Their inverses (the block-Jacobi preconditioner), three row vec4s per vertex (m/N).
    pub inverse_diag_blocks: GpuBuffer<[f32; 4]>,
    /// Per-vertex stiffness estimates e_j of the PCG warm start (N/m).
    pub stiffness: GpuBuffer<f32>,
    /// The Newton direction (the linear solution, vec4 per vertex, m).
    pub direction: GpuBuffer<[f32; 4]>,
}

/// How the stepper's linear solve for one Newton iteration ended and what the line search did
/// ([`EnergyTerm::iteration_done`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IterationInfo {
    /// Global PCG iterations (resumptions included).
    pub pcg_iterations: u32,
    /// Warm-start (grouped) PCG iterations.
    pub pcg_warm_iterations: u32,
    /// Why the last PCG run stopped.
    pub pcg_exit: PcgExit,
    /// PCG resumptions after a failed line search.
    pub pcg_resumes: u32,
    /// The line search's first step (the terms' bound, at most 1).
    pub alpha_start: f32,
    /// The accepted step (0: none accepted).
    pub alpha: f32,
}

/// Why a PCG solve stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PcgExit {
    /// The relative residual reached the tolerance.
    #[default]
    Tolerance,
    /// No new smallest residual over the stagnation window (or a non-finite residual).
    Stagnation,
    /// The iteration cap.
    Cap,
    /// p·q ≤ 0 or r·z ≤ 0: an indefinite system or preconditioner (or an exact zero).
    Breakdown,
}

/// An energy a minimising stepper adds to its objective (a contact penalty or barrier).
pub trait EnergyTerm: Send {
    /// Energy (J) at the iterate, leaving its gradient and Hessian contributions where the
    /// stepper reads them; returns (energy, GPU ms).
    fn evaluate(&self) -> Result<(f64, f64), SimError>;

    /// Energy (J) at the line-search trial positions; returns (energy, GPU ms).
    fn trial(&self) -> Result<(f64, f64), SimError>;

    /// Submits the work of [`EnergyTerm::evaluate`] (with `trial`, of [`EnergyTerm::trial`])
    /// without a wait, where the term can, and returns whether it did; its energy is then read
    /// with [`EnergyTerm::read_submitted_energy`]. The stepper orders it with its own work in
    /// the queue, so that one host wait covers both. The default submits nothing.
    fn submit_energy(&self, _trial: bool) -> Result<bool, SimError> {
        Ok(false)
    }

    /// After [`EnergyTerm::submit_energy`] returned true: waits for that work (no host wait
    /// when a later wait covered it) and returns (energy J, GPU ms) as `evaluate` or `trial`.
    fn read_submitted_energy(&self, trial: bool) -> Result<(f64, f64), SimError> {
        if trial {
            self.trial()
        } else {
            self.evaluate()
        }
    }

    /// Matrix-free Hessian couplings for the linear solver, if any.
    fn operator(&self) -> Option<&dyn MatrixFreeCouplings> {
        None
    }

    /// Changes whenever the term's [`EnergyTerm::operator`] was rebuilt on new buffers (its
    /// workspace grew): the stepper then records its linear solver's graphs again.
    fn operator_generation(&self) -> u64 {
        0
    }

    /// Largest line-search step (fraction of the Newton direction) the term allows.
    fn max_step(&self) -> Result<f32, SimError> {
        Ok(1.0)
    }

    /// Whether [`EnergyTerm::max_step`] may bound a step below 1 (a CCD bound): the stepper
    /// then moves its scripted vertices within that bound too, instead of jumping them to their
    /// pose at the step's end.
    fn bounds_steps(&self) -> bool {
        false
    }

    /// Outer update after a converged inner solve (augmented-Lagrangian multipliers); `true`
    /// when the term is converged.
    fn outer_update(&mut self) -> Result<bool, SimError> {
        Ok(true)
    }

    /// Whether the term writes the stepper's fixed-point penalty sums
    /// ([`EnergyBindings::accum`], scaled by [`EnergyBindings::stiffness`]).
    fn uses_penalty_sums(&self) -> bool {
        true
    }

    /// After the stepper's gradient pass at the iterate (which follows [`EnergyTerm::evaluate`]):
    /// adds the term's own gradient to [`SystemBindings::rhs`]; the term may first rescale
    /// itself from the stepper's gradient (a stiffness chosen from it). Returns (change of the
    /// term's energy since `evaluate`, J; GPU ms).
    fn add_gradient(&self) -> Result<(f64, f64), SimError> {
        Ok((0.0, 0.0))
    }

    /// After the stepper's Hessian assembly: adds the term's diagonal blocks (re-inverting
    /// them) and stiffness estimates to the system; returns GPU ms.
    fn add_hessian(&self) -> Result<f64, SimError> {
        Ok(0.0)
    }

    /// The term's own convergence test of the minimisation at the iterate (after
    /// `add_gradient`); a stepper stops iterating when it holds (besides its own tests).
    fn converged(&self) -> bool {
        false
    }

    /// Told after every Newton iteration's linear solve and line search.
    fn iteration_done(&self, _info: &IterationInfo) {}
}

/// What a stepper offers the contact methods built for it: its description, and for minimising
/// steppers the bindings of an energy term and the wiring of a term into its solve.
pub trait ContactHost {
    /// What the stepper is and supports.
    fn info(&self) -> &StepperInfo;

    /// What an energy term binds to (minimising steppers only).
    fn energy_bindings(&self) -> Option<EnergyBindings> {
        None
    }

    /// Wires `term` into the stepper's solve (e.g. its matrix-free couplings into the linear
    /// solver). The term itself stays with its contact handler, which the stepper reaches
    /// through the contact set it is given every step.
    fn attach_energy(&mut self, _ctx: &Context, _term: &dyn EnergyTerm) -> Result<(), SimError> {
        Err(SimError::unsupported(
            "simulation.solver",
            format!(
                "the {} solver does not minimise an energy",
                self.info().name
            ),
        ))
    }
}
