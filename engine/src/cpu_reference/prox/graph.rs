//! Reference of the GPU Jones–Plassmann coloring of 8-node contacts
//! (`kernels/prox/jp_priority.comp`, `jp_select.comp`; same priorities as
//! [`crate::cpu_reference::coloring::jones_plassmann`]), and the tests of every contact-graph
//! coloring; the graph and the host colorings are [`crate::contact::prox::graph`]'s.

pub use crate::contact::prox::graph::{
    greedy_largest_first, random_vivace, ColorGroups, ContactColoring, ContactGraph,
};
use crate::cpu_reference::coloring::{priority, MAX_COLORS, OVERFLOW, UNCOLORED};

/// Result of [`jones_plassmann`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JpColoring {
    /// Color of each contact (< [`MAX_COLORS`]) or [`OVERFLOW`].
    pub colors: Vec<u32>,
    /// Rounds until every contact had a color (or overflowed).
    pub rounds: u32,
    /// Contacts that found all [`MAX_COLORS`] colors taken.
    pub overflowed: usize,
}

/// Random-priority Jones–Plassmann coloring of 8-node contacts, round by round exactly as the
/// GPU kernels run it (priorities of [`crate::cpu_reference::coloring::priority`]). Node slots
/// that are [`NO_NODE`], out of range or not `active` are ignored.
pub fn jones_plassmann(
    nodes: &[[u32; 8]],
    num_nodes: usize,
    active: Option<&[bool]>,
    seed: u32,
) -> JpColoring {
    let n = nodes.len();
    let slots = |c: &[u32; 8]| -> Vec<usize> {
        c.iter()
            .filter(|&&a| (a as usize) < num_nodes)
            .map(|&a| a as usize)
            .filter(|&a| active.is_none_or(|m| m[a]))
            .collect()
    };
    let node_lists: Vec<Vec<usize>> = nodes.iter().map(slots).collect();
    let prio: Vec<u32> = (0..n as u32).map(|i| priority(i, seed)).collect();
    let mut colors = vec![UNCOLORED; n];
    let mut used = vec![[0u64; 4]; num_nodes];
    let mut vmax = vec![0u32; num_nodes];
    let (mut remaining, mut rounds, mut overflowed) = (n, 0, 0);
    while remaining > 0 {
        rounds += 1;
        vmax.iter_mut().for_each(|m| *m = 0);
        for k in (0..n).filter(|&k| colors[k] == UNCOLORED) {
            for &a in &node_lists[k] {
                vmax[a] = vmax[a].max(prio[k]);
            }
        }
        let mut chosen = Vec::new();
        for k in (0..n).filter(|&k| colors[k] == UNCOLORED) {
            if node_lists[k].iter().all(|&a| vmax[a] == prio[k]) {
                let taken = node_lists[k]
                    .iter()
                    .fold([0u64; 4], |m, &a| [0, 1, 2, 3].map(|w| m[w] | used[a][w]));
                let free = taken
                    .iter()
                    .position(|&w| w != u64::MAX)
                    .map_or(MAX_COLORS, |w| 64 * w as u32 + taken[w].trailing_ones());
                chosen.push((k, free));
            }
        }
        for (k, color) in chosen {
            remaining -= 1;
            if color >= MAX_COLORS {
                colors[k] = OVERFLOW;
                overflowed += 1;
            } else {
                colors[k] = color;
                for &a in &node_lists[k] {
                    used[a][color as usize / 64] |= 1u64 << (color % 64);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::prox::model::NO_NODE;

    fn random_nodes(seed: u32, n: usize, num_nodes: u32) -> Vec<[u32; 8]> {
        (0..n as u32)
            .map(|k| {
                let mut c = [NO_NODE; 8];
                let arity = 2 + priority(k, seed) % 7;
                for j in 0..arity {
                    c[j as usize] = priority(k * 8 + j, seed ^ 0xabc) % num_nodes;
                }
                c
            })
            .collect()
    }

    #[test]
    fn graph_equals_pairwise_node_sharing() {
        let nodes = random_nodes(3, 120, 90);
        let g = ContactGraph::new(&nodes, 90, None);
        for i in 0..nodes.len() {
            for j in 0..nodes.len() {
                let share = i != j
                    && nodes[i]
                        .iter()
                        .any(|&a| a != NO_NODE && nodes[j].contains(&a));
                assert_eq!(g.neighbours(i).contains(&(j as u32)), share, "{i} {j}");
            }
        }
        // With an activity mask only active nodes join.
        let active: Vec<bool> = (0..90).map(|a| a % 3 != 0).collect();
        let g = ContactGraph::new(&nodes, 90, Some(&active));
        for i in 0..nodes.len() {
            for j in 0..nodes.len() {
                let share = i != j
                    && nodes[i]
                        .iter()
                        .any(|&a| a != NO_NODE && active[a as usize] && nodes[j].contains(&a));
                assert_eq!(g.neighbours(i).contains(&(j as u32)), share);
            }
        }
    }

    #[test]
    fn every_coloring_is_valid_and_deterministic() {
        for (seed, n, nv) in [
            (1, 0, 4),
            (2, 1, 8),
            (3, 50, 40),
            (4, 400, 300),
            (5, 300, 60),
        ] {
            let nodes = random_nodes(seed, n, nv);
            let g = ContactGraph::new(&nodes, nv as usize, None);
            let greedy = greedy_largest_first(&g);
            assert_eq!(g.check(&greedy.colors).unwrap(), greedy.num_colors);
            let random = random_vivace(&g, 7, 200);
            assert_eq!(g.check(&random.colors).unwrap(), random.num_colors);
            assert_eq!(
                random,
                random_vivace(&g, 7, 200),
                "fixed seed: same coloring"
            );
            // Few rounds: the sequential fallback still gives a valid coloring.
            let short = random_vivace(&g, 7, 1);
            g.check(&short.colors).unwrap();
            let jp = jones_plassmann(&nodes, nv as usize, None, 11);
            assert_eq!(jp.overflowed, 0);
            let k = g.check(&jp.colors).unwrap();
            // Greedy never needs more than max degree + 1 colors.
            let max_degree = (0..g.len()).map(|k| g.degree(k)).max().unwrap_or(0) as u32;
            assert!(greedy.num_colors <= max_degree + 1 && k <= max_degree + 1);
        }
    }

    #[test]
    fn color_groups_are_color_major_in_contact_order() {
        let c = ContactColoring {
            colors: vec![1, 0, 1, 2, 0],
            num_colors: 3,
        };
        let g = ColorGroups::new(&c);
        assert_eq!(g.offsets, vec![0, 2, 4, 5]);
        assert_eq!(g.order, vec![1, 4, 0, 2, 3]);
        assert_eq!(g.color(1), &[0, 2]);
    }
}
