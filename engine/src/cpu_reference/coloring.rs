//! Reference of the GPU constraint-graph coloring (`kernels/coloring/*.comp`,
//! [`crate::coloring::gpu`]): random-priority Jones–Plassmann simulated round by round, so that
//! it produces exactly the GPU's colors and round count for the same seed, plus the coloring
//! checker used by the tests and the counting-sort grouping.
//!
//! Constraints are `[u32; 4]` lists of the vertices they touch, padded with [`PAD`]; two
//! constraints conflict when they share a vertex.

pub use crate::coloring::{check_coloring, MAX_COLORS, OVERFLOW, PAD, UNCOLORED};

/// Bijective 32-bit mixer (lowbias32); the same code is in `kernels/coloring/jp_priority.comp` and `jp_select.comp`.
pub fn mix(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// Priority of constraint `i` for `seed`: a bijection of `i`, so priorities never tie.
pub fn priority(i: u32, seed: u32) -> u32 {
    mix(i ^ mix(seed ^ 0x9e37_79b9))
}

/// Result of [`jones_plassmann`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JpColoring {
    /// Color of each constraint (< [`MAX_COLORS`]) or [`OVERFLOW`].
    pub colors: Vec<u32>,
    /// Rounds until every constraint had a color (or overflowed).
    pub rounds: u32,
    /// Number of constraints that overflowed.
    pub overflowed: usize,
}

/// Valid vertex slots of a constraint (padding and vertices `>= num_vertices` are ignored, as on
/// the GPU).
fn slots(c: &[u32; 4], num_vertices: usize) -> impl Iterator<Item = usize> + '_ {
    c.iter()
        .copied()
        .filter(move |&v| (v as usize) < num_vertices)
        .map(|v| v as usize)
}

/// Jones–Plassmann coloring, round by round exactly as the GPU kernels run it: each round,
/// every uncolored constraint whose priority is the largest among the uncolored constraints
/// touching each of its vertices takes the smallest color not used by its colored neighbours.
pub fn jones_plassmann(constraints: &[[u32; 4]], num_vertices: usize, seed: u32) -> JpColoring {
    let n = constraints.len();
    let prio: Vec<u32> = (0..n as u32).map(|i| priority(i, seed)).collect();
    let mut colors = vec![UNCOLORED; n];
    let mut used = vec![[0u64; 4]; num_vertices];
    let mut vmax = vec![0u32; num_vertices];
    let mut remaining = n;
    let mut rounds = 0;
    let mut overflowed = 0;
    while remaining > 0 {
        rounds += 1;
        vmax.iter_mut().for_each(|m| *m = 0);
        for (i, c) in constraints.iter().enumerate() {
            if colors[i] == UNCOLORED {
                for v in slots(c, num_vertices) {
                    vmax[v] = vmax[v].max(prio[i]);
                }
            }
        }
        let mut chosen = Vec::new();
        for (i, c) in constraints.iter().enumerate() {
            if colors[i] == UNCOLORED && slots(c, num_vertices).all(|v| vmax[v] == prio[i]) {
                let taken = slots(c, num_vertices)
                    .fold([0u64; 4], |m, v| [0, 1, 2, 3].map(|w| m[w] | used[v][w]));
                let free = taken
                    .iter()
                    .position(|&w| w != u64::MAX)
                    .map_or(MAX_COLORS, |w| 64 * w as u32 + taken[w].trailing_ones());
                chosen.push((i, free));
            }
        }
        for (i, color) in chosen {
            remaining -= 1;
            if color >= MAX_COLORS {
                colors[i] = OVERFLOW;
                overflowed += 1;
            } else {
                colors[i] = color;
                for v in slots(&constraints[i], num_vertices) {
                    used[v][color as usize / 64] |= 1u64 << (color % 64);
                }
            }
        }
    }
    JpColoring {
        colors,
        rounds,
        overflowed,
    }
}

/// Counting sort of constraints by color: `(offsets, order)` with `offsets.len() ==
/// num_colors + 1` and the constraints of color `c` at `order[offsets[c]..offsets[c + 1]]`, in
/// increasing index. Colors `>= num_colors` are left out.
pub fn group_by_color(colors: &[u32], num_colors: u32) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; num_colors as usize + 1];
    for &c in colors {
        if c < num_colors {
            offsets[c as usize + 1] += 1;
        }
    }
    for k in 0..num_colors as usize {
        offsets[k + 1] += offsets[k];
    }
    let mut cursor = offsets.clone();
    let mut order = vec![0u32; offsets[num_colors as usize] as usize];
    for (i, &c) in colors.iter().enumerate() {
        if c < num_colors {
            order[cursor[c as usize] as usize] = i as u32;
            cursor[c as usize] += 1;
        }
    }
    (offsets, order)
}
