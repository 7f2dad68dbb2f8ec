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

/// Padding of unused vertex slots of a constraint.
pub const PAD: u32 = u32::MAX;
/// Color of a constraint not colored yet.
pub const UNCOLORED: u32 = u32::MAX;
/// Color of a constraint that found all [`MAX_COLORS`] colors taken by its neighbours.
pub const OVERFLOW: u32 = u32::MAX - 1;
/// Colors the GPU coloring can assign (a 256-bit mask per vertex).
pub const MAX_COLORS: u32 = 256;

/// Checks a coloring: every constraint has a color below `max_colors` and no two constraints
/// of the same color share a vertex (padding [`PAD`] ignored). Returns the number of colors.
pub fn check_coloring(
    constraints: &[[u32; 4]],
    colors: &[u32],
    max_colors: u32,
) -> Result<u32, String> {
    if colors.len() != constraints.len() {
        return Err(format!(
            "{} colors for {} constraints",
            colors.len(),
            constraints.len()
        ));
    }
    let mut seen: Vec<(u32, u32, usize)> = Vec::new();
    let mut num_colors = 0;
    for (i, (c, &color)) in constraints.iter().zip(colors).enumerate() {
        if color >= max_colors {
            return Err(format!(
                "constraint {i} has color {color:#x} (limit {max_colors})"
            ));
        }
        num_colors = num_colors.max(color + 1);
        let mut vs: Vec<u32> = c.iter().copied().filter(|&v| v != PAD).collect();
        vs.sort_unstable();
        vs.dedup();
        seen.extend(vs.into_iter().map(|v| (v, color, i)));
    }
    seen.sort_unstable();
    for w in seen.windows(2) {
        if w[0].0 == w[1].0 && w[0].1 == w[1].1 {
            return Err(format!(
                "constraints {} and {} share vertex {} and color {}",
                w[0].2, w[1].2, w[0].0, w[0].1
            ));
        }
    }
    Ok(num_colors)
}

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
