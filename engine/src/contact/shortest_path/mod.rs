//! Collision handling by the shortest path to the boundary of Chen, Diaz and Yuksel (2023) on
//! the GPU (`collision.method = "shortest-path"`; plug-in in [`handler`]): recovery from
//! intersections with discrete collision detection: vertex-in-tet detection over a tet LBVH
//! and, for every penetrating point, the closest boundary point reachable by a valid path
//! (topological tet traversal with a branching stack, infeasible-region culling).
//! Kernels: `kernels/recovery/*.comp`; reference: [`crate::cpu_reference::shortest_path`].

mod ccd;
pub mod handler;
mod penalty;
mod query;
mod response;
mod settings;
pub mod types;

pub use crate::scene::DetectionMode;
pub use ccd::{CcdDetection, CcdFailsafe, CcdStage};
pub use penalty::{ConstraintSlots, PenaltyContact};
pub use query::{QuerySettings, ShortestPathError, ShortestPathQuery};
pub use response::{Detection, ShortestPathContact};
pub use settings::ShortestPathSettings;

/// Shortest-path collision handling over one frame (report.json `shortest_path`; the paper's
/// Table 1 columns per detection are these sums divided by `detections`).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ShortestPathFrameStats {
    /// Detections run (one per XPBD substep, or one per iteration with
    /// `detect_every_iteration`).
    pub detections: u32,
    /// Query points (vertices plus edges) per detection.
    pub points: u32,
    /// Penetrating points with a valid path, summed over the detections (DCD collisions).
    pub collisions: u32,
    /// Largest collision count of one detection.
    pub max_collisions: u32,
    /// Shortest-path work counters summed over the detections.
    pub counters: types::Counters,
    /// GPU milliseconds of BVH builds and discrete detection.
    pub ms_detect: f64,
    /// GPU milliseconds of shortest-path queries and constraint setup.
    pub ms_shortest_path: f64,
    /// GPU milliseconds of constraint projections.
    pub ms_response: f64,
    /// CCD detections run.
    pub ccd_detections: u32,
    /// CCD hits (constraints written), summed over the CCD detections (CCD collisions).
    pub ccd_collisions: u32,
    /// Largest hit count of one CCD detection.
    pub ccd_max_collisions: u32,
    /// Candidate pairs tested, summed over the CCD detections.
    pub ccd_pairs: u64,
    /// Proximity searches for the CCD candidates.
    pub ccd_searches: u32,
    /// CCD detections whose motion since the search exceeded D/2 (pairs may be missing; raise
    /// `ccd_distance`).
    pub ccd_unsafe: u32,
    /// GPU milliseconds of CCD (displacement checks, searches, CCD kernels, fail-safe).
    pub ms_ccd: f64,
    /// Pairs the CCD fail-safe found still colliding after the response (their vertices went
    /// back to the start of the substep), summed over its rounds.
    pub failsafe_pairs: u32,
    /// Substeps the fail-safe undid entirely (its rounds did not settle).
    pub failsafe_full_rollbacks: u32,
}

impl std::ops::AddAssign for ShortestPathFrameStats {
    /// Accumulates frames: sums, maxima of the maximum fields, the latest point count.
    fn add_assign(&mut self, o: ShortestPathFrameStats) {
        self.detections += o.detections;
        self.points = o.points.max(self.points);
        self.collisions += o.collisions;
        self.max_collisions = self.max_collisions.max(o.max_collisions);
        self.counters += o.counters;
        self.ms_detect += o.ms_detect;
        self.ms_shortest_path += o.ms_shortest_path;
        self.ms_response += o.ms_response;
        self.ccd_detections += o.ccd_detections;
        self.ccd_collisions += o.ccd_collisions;
        self.ccd_max_collisions = self.ccd_max_collisions.max(o.ccd_max_collisions);
        self.ccd_pairs += o.ccd_pairs;
        self.ccd_searches += o.ccd_searches;
        self.ccd_unsafe += o.ccd_unsafe;
        self.ms_ccd += o.ms_ccd;
        self.failsafe_pairs += o.failsafe_pairs;
        self.failsafe_full_rollbacks += o.failsafe_full_rollbacks;
    }
}

impl ShortestPathFrameStats {
    /// Adds one fail-safe run.
    pub fn add_failsafe(&mut self, f: &CcdFailsafe) {
        self.failsafe_pairs += f.pairs;
        self.failsafe_full_rollbacks += f.full_rollback as u32;
        self.ms_ccd += f.ms;
    }

    /// Adds one CCD detection.
    pub fn add_ccd(&mut self, d: &CcdDetection) {
        self.ccd_detections += 1;
        self.ccd_collisions += d.hits;
        self.ccd_max_collisions = self.ccd_max_collisions.max(d.hits);
        self.ccd_pairs += d.pairs as u64;
        self.ccd_searches += d.searched as u32;
        self.ccd_unsafe += d.unsafe_motion as u32;
        self.ms_ccd += d.ms;
    }

    /// Adds one detection.
    pub fn add_detection(&mut self, d: &Detection) {
        let c = &d.counters;
        self.detections += 1;
        self.points = d.points;
        self.collisions += c.found;
        self.max_collisions = self.max_collisions.max(c.found);
        self.counters += *c;
        self.ms_detect += d.ms_detect;
        self.ms_shortest_path += d.ms_query;
    }
}

impl crate::contact::ContactFrameStats for ShortestPathFrameStats {
    const NAME: &'static str = "shortest_path";
}
