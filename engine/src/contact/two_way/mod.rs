//! Collision handling between deformable surfaces (cloth, tet boundaries, rods' surfaces):
//! [`two_way`] is the two-way interior point method (backward projected Gauss–Seidel steps and
//! CCD-free forward steps) that keeps every intermediate state intersection-free; [`friction`]
//! filters its targets by Coulomb friction (velocity filtering); [`repulsion`] adds a quadratic
//! repulsion energy of its proximity pairs to the Newton dynamics.

pub mod friction;
pub mod handler;
pub mod repulsion;
pub mod settings;
pub mod solve;
pub mod split;

pub use repulsion::Repulsion;
pub use solve::{
    Backward, ContactColoring, StepBound, SweepDispatch, TwoWay, TwoWayReport, TwoWaySettings,
    NO_GROUP,
};

/// Collision telemetry of one frame (the two-way IPM paper's Table 2 columns and more).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CollisionFrameStats {
    /// Collision solves (one per accepted Newton iteration).
    pub solves: u32,
    /// Two-way steps l summed over the frame.
    pub steps: u32,
    /// Time steps of the frame.
    pub time_steps: u32,
    /// Largest number of steps in one time step (summed over its Newton iterations).
    pub max_steps_per_time_step: u32,
    /// Solves that stopped at the step limit L (their result is safe but short of the target).
    pub unconverged_solves: u32,
    /// Proximity searches.
    pub searches: u32,
    /// Largest contact-constraint count of a search.
    pub contact_pairs: u32,
    /// Largest contact color count of a search.
    pub contact_colors: u32,
    /// Most contact constraints of a search left out of the backward step (past the color
    /// limit; the forward step still bounds them).
    pub uncolored_contacts: u32,
    /// Edge-length constraint colors.
    pub edge_colors: u32,
    /// Largest final clock max_i r_i of a solve.
    pub max_r: f32,
    /// Smallest pair distance seen (m; null when no pair was found).
    pub min_distance: Option<f32>,
    /// Dispatches per two-way step.
    pub dispatches_per_step: u32,
    /// Host milliseconds in proximity searches, constraint building and coloring.
    pub ms_proximity: f64,
    /// Host milliseconds in backward/forward step batches.
    pub ms_steps: f64,
}

impl CollisionFrameStats {
    /// Adds one solve's report.
    pub fn add_solve(&mut self, r: &TwoWayReport) {
        self.solves += 1;
        self.steps += r.steps;
        self.unconverged_solves += (!r.converged) as u32;
        self.searches += r.searches;
        self.contact_pairs = self.contact_pairs.max(r.contact_pairs);
        self.contact_colors = self.contact_colors.max(r.contact_colors);
        self.uncolored_contacts = self.uncolored_contacts.max(r.uncolored_contacts);
        self.edge_colors = r.edge_colors;
        self.max_r = self.max_r.max(r.max_r);
        if r.min_distance.is_finite() {
            self.min_distance = Some(
                self.min_distance
                    .map_or(r.min_distance, |m| m.min(r.min_distance)),
            );
        }
        self.dispatches_per_step = r.dispatches_per_step;
        self.ms_proximity += r.ms_proximity;
        self.ms_steps += r.ms_steps;
    }
}

impl crate::contact::ContactFrameStats for CollisionFrameStats {
    const NAME: &'static str = "two_way";
}
