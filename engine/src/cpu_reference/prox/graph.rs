//! The contact graph and its colorings (report §3.2.3, Alg. 6; spec §B3): vertices are contacts,
//! an edge joins two contacts that share a node (RAINBOW's final `build_contact_graph(..,
//! "soft_body")`: the 8-node sets intersect). Built once per step from the node → contact
//! incidence (O(Σ degree²), not RAINBOW's O(K²) pair loop).
//!
//! Colorings (every one valid: no two contacts of a color share a node of the graph):
//! - [`greedy_largest_first`]: networkx `greedy_color(G)` with its default `largest_first`
//!   strategy (decreasing degree, ties by index), RAINBOW's choice;
//! - [`random_vivace`]: Vivace's random coloring (Fratarcangeli et al. 2016) as RAINBOW's
//!   `random_graph_coloring`: palettes of `degree` colors, random picks, keep picks without a
//!   conflict among uncolored neighbours, remove used colors from neighbours' palettes, a fresh
//!   color when a palette empties, at most `max_rounds` rounds then sequential new colors. The
//!   random picks come from a counter-based hash of (seed, round, contact), so a fixed seed gives
//!   the same coloring on every run and machine;
//! - [`jones_plassmann`]: the GPU's random-priority Jones–Plassmann coloring on 8-node contacts
//!   (twin of `kernels/prox/jp_priority.comp` and `jp_select.comp`, same priorities as
//!   [`crate::cpu_reference::coloring::jones_plassmann`]).
//!
//! Nodes can be left out of the graph (`active`): two contacts that share only fixed nodes
//! (inverse mass 0, whose velocity correction is always 0) do not interact, so a graph over the
//! free nodes is still exact for Gauss–Seidel by colors and needs fewer colors. RAINBOW's graph
//! uses every node.

use super::contact::{Contact, NO_NODE};
use crate::cpu_reference::coloring::{priority, MAX_COLORS, OVERFLOW, UNCOLORED};

/// The contact graph in CSR form; neighbour lists sorted, no self loops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactGraph {
    /// `neighbours[offsets[k]..offsets[k + 1]]` are the neighbours of contact k.
    pub offsets: Vec<u32>,
    /// Concatenated neighbour lists.
    pub neighbours: Vec<u32>,
}

/// A coloring of the contacts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContactColoring {
    /// Color of each contact.
    pub colors: Vec<u32>,
    /// Number of colors.
    pub num_colors: u32,
}

/// Contacts grouped color by color: color c holds `order[offsets[c]..offsets[c + 1]]`, in
/// increasing contact index ("colors listed in contact order", as RAINBOW).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColorGroups {
    /// `num_colors + 1` offsets into `order`.
    pub offsets: Vec<u32>,
    /// Contact indices, color-major.
    pub order: Vec<u32>,
}

impl ColorGroups {
    /// Groups `coloring` by color (a stable counting sort).
    pub fn new(coloring: &ContactColoring) -> Self {
        let (offsets, order) =
            crate::cpu_reference::coloring::group_by_color(&coloring.colors, coloring.num_colors);
        ColorGroups { offsets, order }
    }

    /// Number of colors.
    pub fn num_colors(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The contacts of color `c`.
    pub fn color(&self, c: usize) -> &[u32] {
        &self.order[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }
}

/// Node slots of a contact that belong to the graph.
fn graph_nodes<'a>(
    nodes: &'a [u32; 8],
    active: Option<&'a [bool]>,
) -> impl Iterator<Item = usize> + 'a {
    nodes
        .iter()
        .filter(|&&a| a != NO_NODE)
        .map(|&a| a as usize)
        .filter(move |&a| active.is_none_or(|m| m[a]))
}

impl ContactGraph {
    /// The graph of contacts with node lists `nodes` over `num_nodes` nodes; with `active`,
    /// only nodes marked true join contacts. Node indices must be below `num_nodes` (checked by
    /// [`super::contact::check_contact`]; out-of-range ones are ignored here).
    pub fn new(nodes: &[[u32; 8]], num_nodes: usize, active: Option<&[bool]>) -> Self {
        let in_range = |a: &usize| *a < num_nodes;
        let mut start = vec![0u32; num_nodes + 1];
        for c in nodes {
            for a in graph_nodes(c, active).filter(in_range) {
                start[a + 1] += 1;
            }
        }
        for a in 0..num_nodes {
            start[a + 1] += start[a];
        }
        let mut cursor = start.clone();
        let mut incident = vec![0u32; start[num_nodes] as usize];
        for (k, c) in nodes.iter().enumerate() {
            for a in graph_nodes(c, active).filter(in_range) {
                incident[cursor[a] as usize] = k as u32;
                cursor[a] += 1;
            }
        }
        let mut offsets = Vec::with_capacity(nodes.len() + 1);
        let mut neighbours = Vec::new();
        let mut stamp = vec![u32::MAX; nodes.len()];
        offsets.push(0);
        for (k, c) in nodes.iter().enumerate() {
            stamp[k] = k as u32;
            let first = neighbours.len();
            for a in graph_nodes(c, active).filter(in_range) {
                for &j in &incident[start[a] as usize..start[a + 1] as usize] {
                    if stamp[j as usize] != k as u32 {
                        stamp[j as usize] = k as u32;
                        neighbours.push(j);
                    }
                }
            }
            neighbours[first..].sort_unstable();
            offsets.push(neighbours.len() as u32);
        }
        ContactGraph {
            offsets,
            neighbours,
        }
    }

    /// The graph of `contacts` (every node, as RAINBOW, or the `active` ones).
    pub fn of_contacts(contacts: &[Contact], num_nodes: usize, active: Option<&[bool]>) -> Self {
        let nodes: Vec<[u32; 8]> = contacts.iter().map(|c| c.nodes).collect();
        Self::new(&nodes, num_nodes, active)
    }

    /// Number of contacts.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether the graph has no contacts.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Neighbours of contact `k`.
    pub fn neighbours(&self, k: usize) -> &[u32] {
        &self.neighbours[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    /// Degree of contact `k`.
    pub fn degree(&self, k: usize) -> usize {
        (self.offsets[k + 1] - self.offsets[k]) as usize
    }

    /// Number of edges.
    pub fn edges(&self) -> usize {
        self.neighbours.len() / 2
    }

    /// Checks a coloring: one color per contact, no edge inside a color. Returns the number of
    /// colors.
    pub fn check(&self, colors: &[u32]) -> Result<u32, String> {
        if colors.len() != self.len() {
            return Err(format!(
                "{} colors for {} contacts",
                colors.len(),
                self.len()
            ));
        }
        let mut num = 0;
        for (k, &c) in colors.iter().enumerate() {
            if c == UNCOLORED || c == OVERFLOW {
                return Err(format!("contact {k} is not colored ({c:#x})"));
            }
            num = num.max(c + 1);
            if let Some(&j) = self
                .neighbours(k)
                .iter()
                .find(|&&j| colors[j as usize] == c)
            {
                return Err(format!("contacts {k} and {j} share a node and color {c}"));
            }
        }
        Ok(num)
    }
}

/// Greedy coloring in networkx's `largest_first` order: contacts by decreasing degree (ties by
/// index), each taking the smallest color no colored neighbour has.
pub fn greedy_largest_first(graph: &ContactGraph) -> ContactColoring {
    let n = graph.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&k| (std::cmp::Reverse(graph.degree(k)), k));
    let mut colors = vec![UNCOLORED; n];
    let mut mark: Vec<usize> = Vec::new();
    let mut num_colors = 0;
    for k in order {
        for &j in graph.neighbours(k) {
            let c = colors[j as usize];
            if c != UNCOLORED {
                if mark.len() <= c as usize {
                    mark.resize(c as usize + 1, usize::MAX);
                }
                mark[c as usize] = k;
            }
        }
        let c = (0..).find(|&c| mark.get(c) != Some(&k)).unwrap_or(0) as u32;
        colors[k] = c;
        num_colors = num_colors.max(c + 1);
    }
    ContactColoring { colors, num_colors }
}

/// Vivace's random coloring as RAINBOW's `random_graph_coloring` (palette size = degree,
/// shrink factor 1), with picks `hash(seed, round, contact) mod |palette|` from the palette in
/// increasing order. Deterministic for a fixed seed.
pub fn random_vivace(graph: &ContactGraph, seed: u32, max_rounds: u32) -> ContactColoring {
    let n = graph.len();
    let mut palettes: Vec<Vec<u32>> = (0..n)
        .map(|k| (0..graph.degree(k) as u32).collect())
        .collect();
    // RAINBOW's `C` is a defaultdict(int): a contact never picked has color 0.
    let mut pick = vec![0u32; n];
    let mut uncolored = vec![true; n];
    let mut remaining: Vec<usize> = (0..n).collect();
    let mut round = 0;
    while !remaining.is_empty() && round < max_rounds {
        for &k in &remaining {
            let p = &palettes[k];
            if !p.is_empty() {
                let h = priority(
                    k as u32,
                    seed ^ priority(round, seed.wrapping_add(0x51ed_270b)),
                );
                pick[k] = p[(h as usize) % p.len()];
            }
        }
        let kept: Vec<usize> = remaining
            .iter()
            .copied()
            .filter(|&k| {
                !graph
                    .neighbours(k)
                    .iter()
                    .any(|&j| uncolored[j as usize] && pick[j as usize] == pick[k])
            })
            .collect();
        for &k in &kept {
            uncolored[k] = false;
        }
        for &k in &kept {
            for &j in graph.neighbours(k) {
                if uncolored[j as usize] {
                    palettes[j as usize].retain(|&c| c != pick[k]);
                }
            }
        }
        remaining.retain(|&k| uncolored[k]);
        // Fresh colors past every color picked so far for contacts whose palette emptied.
        let mut max_used = pick.iter().copied().max().unwrap_or(0);
        for &k in &remaining {
            if palettes[k].is_empty() {
                max_used += 1;
                palettes[k].push(max_used);
            }
        }
        round += 1;
    }
    if !remaining.is_empty() {
        let mut max_used = pick.iter().copied().max().unwrap_or(0);
        for &k in &remaining {
            max_used += 1;
            pick[k] = max_used;
        }
    }
    // Compact the used colors to 0..num_colors (RAINBOW's color groups skip unused ones too).
    let mut used: Vec<u32> = pick.clone();
    used.sort_unstable();
    used.dedup();
    let colors = pick
        .iter()
        .map(|c| used.binary_search(c).map_or(0, |i| i as u32))
        .collect();
    ContactColoring {
        colors,
        num_colors: used.len() as u32,
    }
}

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
