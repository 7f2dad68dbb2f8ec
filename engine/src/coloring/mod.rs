//! Constraint-graph coloring, so a solver can update the constraints of one color in parallel
//! (Gauss–Seidel by colors): constraints are lists of up to four vertices padded with
//! [`PAD`]; two constraints conflict when they share a vertex.
//!
//! - [`gpu::GpuColoring`]: random-priority Jones–Plassmann on the GPU for dynamic constraint
//!   sets (contacts), at most [`MAX_COLORS`] colors, plus the constraints grouped by color.
//!   Reference: [`crate::cpu_reference::coloring`] (same colors for the same seed).
//! - [`greedy::greedy_coloring`]: deterministic greedy coloring on the host for static sets
//!   (edges, elements), unlimited colors, usually fewer than Jones–Plassmann.

pub mod gpu;
pub mod greedy;

pub use crate::cpu_reference::coloring::{check_coloring, MAX_COLORS, OVERFLOW, PAD, UNCOLORED};
pub use gpu::{ColoringPlan, GpuColoring, GpuColoringStats, HostColoring};
pub use greedy::{greedy_coloring, GreedyOrder};

use crate::vk::VkError;

/// A coloring of a constraint set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coloring {
    /// Color of each constraint, in `0..num_colors`.
    pub colors: Vec<u32>,
    /// Number of colors used.
    pub num_colors: u32,
}

/// Why a coloring failed.
#[derive(Debug)]
pub enum ColoringError {
    /// A Vulkan error.
    Vk(VkError),
    /// A constraint names a vertex outside `0..num_vertices` that is not padding.
    VertexOutOfRange {
        /// Index of the constraint.
        constraint: usize,
        /// The offending vertex.
        vertex: u32,
        /// Number of vertices.
        num_vertices: usize,
    },
    /// Some constraints found all [`MAX_COLORS`] colors taken by their neighbours.
    TooManyColors {
        /// The color limit.
        limit: u32,
        /// How many constraints could not be colored.
        overflowed: u32,
    },
    /// More constraints or vertices than the workspace was allocated for.
    Capacity {
        /// What was exceeded (`constraints` or `vertices`).
        what: &'static str,
        /// Requested count.
        requested: usize,
        /// Allocated capacity.
        capacity: usize,
    },
    /// The rounds stopped making progress (a bug: every round colors at least one constraint).
    NotConverged {
        /// Constraints still uncolored.
        uncolored: u32,
    },
}

impl std::fmt::Display for ColoringError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ColoringError::Vk(e) => write!(f, "{e}"),
            ColoringError::VertexOutOfRange {
                constraint,
                vertex,
                num_vertices,
            } => write!(
                f,
                "constraint {constraint} names vertex {vertex}, but there are {num_vertices} vertices"
            ),
            ColoringError::TooManyColors { limit, overflowed } => write!(
                f,
                "{overflowed} constraints need more than {limit} colors (use greedy coloring or split the set)"
            ),
            ColoringError::Capacity {
                what,
                requested,
                capacity,
            } => write!(f, "{requested} {what} exceed the coloring capacity {capacity}"),
            ColoringError::NotConverged { uncolored } => {
                write!(f, "coloring stopped making progress with {uncolored} constraints uncolored")
            }
        }
    }
}

impl std::error::Error for ColoringError {}

impl From<VkError> for ColoringError {
    fn from(e: VkError) -> Self {
        ColoringError::Vk(e)
    }
}

/// Checks that every vertex slot is [`PAD`] or below `num_vertices`.
pub fn validate(constraints: &[[u32; 4]], num_vertices: usize) -> Result<(), ColoringError> {
    for (i, c) in constraints.iter().enumerate() {
        if let Some(&v) = c.iter().find(|&&v| v != PAD && v as usize >= num_vertices) {
            return Err(ColoringError::VertexOutOfRange {
                constraint: i,
                vertex: v,
                num_vertices,
            });
        }
    }
    Ok(())
}

/// Pads constraints of arity `K <= 4` (edges `[u32; 2]`, triangles `[u32; 3]`) to four slots.
pub fn pad<const K: usize>(constraints: &[[u32; K]]) -> Vec<[u32; 4]> {
    constraints
        .iter()
        .map(|c| {
            let mut out = [PAD; 4];
            for (o, &v) in out.iter_mut().zip(c.iter()) {
                *o = v;
            }
            out
        })
        .collect()
}
