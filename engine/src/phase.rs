//! The words steppers and contact methods share: the phases of a time step at which a contact
//! handler may act ([`Phase`], [`Phases`]) and what a stepper offers ([`StepperInfo`]). Both
//! `stepper/` and `contact/` build on this module; neither knows the other's types.

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
