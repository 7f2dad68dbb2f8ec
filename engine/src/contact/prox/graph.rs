//! The contact graph and its host colorings (report §3.2.3, Alg. 6; spec §B3): vertices are
//! contacts, an edge joins two contacts that share a node (RAINBOW's final
//! `build_contact_graph(.., "soft_body")`: the 8-node sets intersect). Built once per step from
//! the node → contact incidence (O(Σ degree²), not RAINBOW's O(K²) pair loop).
//!
//! Colorings (every one valid: no two contacts of a color share a node of the graph):
//! - [`greedy_largest_first`]: networkx `greedy_color(G)` with its default `largest_first`
//!   strategy (decreasing degree, ties by index), RAINBOW's choice;
//! - [`random_vivace`]: Vivace's random coloring (Fratarcangeli et al. 2016) as RAINBOW's
//!   `random_graph_coloring`: palettes of `degree` colors, random picks, keep picks without a
//!   conflict among uncolored neighbours, remove used colors from neighbours' palettes, a fresh
//!   color when a palette empties, at most `max_rounds` rounds then sequential new colors. The
//!   random picks come from a counter-based hash of (seed, round, contact), so a fixed seed gives
//!   the same coloring on every run and machine.
//!
//! The GPU's Jones–Plassmann coloring is [`super::solver`]'s (8-node kernels).
//!
//! Nodes can be left out of the graph (`active`): two contacts that share only fixed nodes
//! (inverse mass 0, whose velocity correction is always 0) do not interact, so a graph over the
//! free nodes is still exact for Gauss–Seidel by colors and needs fewer colors. RAINBOW's graph
//! uses every node.

use super::model::{Contact, NO_NODE};
use crate::coloring::{OVERFLOW, UNCOLORED};

/// Bijective 32-bit mixer (lowbias32), the hash of the GPU colorings' priorities.
fn mix(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// A pseudo-random 32-bit value of `i` for `seed` (the GPU colorings' priority function).
fn priority(i: u32, seed: u32) -> u32 {
    mix(i ^ mix(seed ^ 0x9e37_79b9))
}

/// Counting sort of `colors` (values below `num_colors`): offsets and indices, stable.
fn group_by_color(colors: &[u32], num_colors: u32) -> (Vec<u32>, Vec<u32>) {
    let mut offsets = vec![0u32; num_colors as usize + 1];
    for &c in colors.iter().filter(|&&c| c < num_colors) {
        offsets[c as usize + 1] += 1;
    }
    for k in 0..num_colors as usize {
        offsets[k + 1] += offsets[k];
    }
    let mut cursor = offsets.clone();
    let mut order = vec![0u32; offsets[num_colors as usize] as usize];
    for (i, &c) in colors.iter().enumerate().filter(|(_, &c)| c < num_colors) {
        order[cursor[c as usize] as usize] = i as u32;
        cursor[c as usize] += 1;
    }
    (offsets, order)
}

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
        let (offsets, order) = group_by_color(&coloring.colors, coloring.num_colors);
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
