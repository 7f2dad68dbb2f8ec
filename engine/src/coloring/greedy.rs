//! Greedy coloring on the host for static constraint sets (edges, elements): each constraint,
//! in a degree-based order, takes the smallest color not used by its already colored
//! neighbours. Deterministic (ties broken by index); no color limit.

use super::{validate, Coloring, ColoringError, PAD};
use std::collections::BTreeSet;

/// Order in which greedy coloring visits the constraints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GreedyOrder {
    /// Index order.
    Index,
    /// Decreasing conflict degree (Welsh–Powell), ties by index.
    LargestFirst,
    /// Smallest-last (Matula–Beck degeneracy order): uses at most degeneracy + 1 colors.
    SmallestLast,
}

/// Conflict graph in CSR form: `(offsets, neighbours)`.
fn conflict_graph(constraints: &[[u32; 4]], num_vertices: usize) -> (Vec<usize>, Vec<u32>) {
    // Vertex -> constraints incidence.
    let mut start = vec![0usize; num_vertices + 1];
    for c in constraints {
        for &v in c.iter().filter(|&&v| v != PAD) {
            start[v as usize + 1] += 1;
        }
    }
    for v in 0..num_vertices {
        start[v + 1] += start[v];
    }
    let mut cursor = start.clone();
    let mut incident = vec![0u32; start[num_vertices]];
    for (i, c) in constraints.iter().enumerate() {
        for &v in c.iter().filter(|&&v| v != PAD) {
            incident[cursor[v as usize]] = i as u32;
            cursor[v as usize] += 1;
        }
    }
    let n = constraints.len();
    let mut stamp = vec![u32::MAX; n];
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut adj = Vec::new();
    for (i, c) in constraints.iter().enumerate() {
        stamp[i] = i as u32;
        for &v in c.iter().filter(|&&v| v != PAD) {
            for &j in &incident[start[v as usize]..start[v as usize + 1]] {
                if stamp[j as usize] != i as u32 {
                    stamp[j as usize] = i as u32;
                    adj.push(j);
                }
            }
        }
        offsets.push(adj.len());
    }
    (offsets, adj)
}

/// Greedy coloring of `constraints` (vertex slots padded with [`PAD`]) over `num_vertices`
/// vertices, visiting them in `order`.
pub fn greedy_coloring(
    constraints: &[[u32; 4]],
    num_vertices: usize,
    order: GreedyOrder,
) -> Result<Coloring, ColoringError> {
    validate(constraints, num_vertices)?;
    let n = constraints.len();
    let (offsets, adj) = conflict_graph(constraints, num_vertices);
    let neighbours = |i: usize| &adj[offsets[i]..offsets[i + 1]];
    let visit: Vec<usize> = match order {
        GreedyOrder::Index => (0..n).collect(),
        GreedyOrder::LargestFirst => {
            let mut v: Vec<usize> = (0..n).collect();
            v.sort_by_key(|&i| (std::cmp::Reverse(neighbours(i).len()), i));
            v
        }
        GreedyOrder::SmallestLast => {
            let mut degree: Vec<usize> = (0..n).map(|i| neighbours(i).len()).collect();
            let mut queue: BTreeSet<(usize, usize)> = (0..n).map(|i| (degree[i], i)).collect();
            let mut removed = vec![false; n];
            let mut out = Vec::with_capacity(n);
            while let Some((_, i)) = queue.pop_first() {
                removed[i] = true;
                out.push(i);
                for &j in neighbours(i) {
                    let j = j as usize;
                    if !removed[j] {
                        queue.remove(&(degree[j], j));
                        degree[j] -= 1;
                        queue.insert((degree[j], j));
                    }
                }
            }
            out.reverse();
            out
        }
    };
    let mut colors = vec![u32::MAX; n];
    // mark[c] == i + 1 when color c is taken by a neighbour of constraint i.
    let mut mark: Vec<usize> = Vec::new();
    let mut num_colors = 0u32;
    for i in visit {
        for &j in neighbours(i) {
            let c = colors[j as usize];
            if c != u32::MAX {
                if mark.len() <= c as usize {
                    mark.resize(c as usize + 1, 0);
                }
                mark[c as usize] = i + 1;
            }
        }
        let c = (0..)
            .find(|&c| !matches!(mark.get(c), Some(&m) if m == i + 1))
            .unwrap_or(0);
        colors[i] = c as u32;
        num_colors = num_colors.max(c as u32 + 1);
    }
    Ok(Coloring { colors, num_colors })
}
