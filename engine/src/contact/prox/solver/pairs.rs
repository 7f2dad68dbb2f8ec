//! Supple's proximity pairs as PROX contacts on the GPU (the fast path of spec decision 1):
//! `kernels/prox/pair_contacts.comp` turns the vertex–triangle and edge–edge pairs of a
//! [`ProximitySearch`] into raw contacts (exact closest points: weights, normal, gap), then the
//! contacts are colored (host greedy/random on the node lists read back, or Jones–Plassmann on
//! the GPU) and permuted into solver order. Reference: `cpu_reference::prox::pairs`.

use super::{ContactLayout, ProxError, ProxSolver, WG};
use crate::contact::prox::graph::ColorGroups;
use crate::contact::prox::model::Scheme;
use crate::contact::prox::settings::ColoringMethod;
use crate::proximity::ProximitySearch;
use crate::vk::{ids, CompileOptions, CompiledGraph, Dispatch, Graph};

/// Push constants of `pair_contacts.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
struct PairPush {
    cap: u32,
    vt_cap: u32,
    ee_cap: u32,
    pad: u32,
    mu: f32,
    eps: f32,
    pad2: [f32; 2],
}

/// Compiled graphs of the pair path for one search workspace and contact capacity.
pub(crate) struct PairGraphs {
    generation: u64,
    capacity: usize,
    contacts: CompiledGraph,
    permute_identity: CompiledGraph,
    permute_host: CompiledGraph,
}

impl ProxSolver {
    fn pair_graphs(&self, search: &ProximitySearch) -> Result<PairGraphs, ProxError> {
        let a = &self.arrays;
        let (vt_cap, ee_cap) = (search.pairs_vt().len(), search.pairs_ee().len());
        let push = PairPush {
            cap: a.capacity as u32,
            vt_cap: vt_cap as u32,
            ee_cap: ee_cap as u32,
            pad: 0,
            mu: self.settings().friction as f32,
            eps: self.settings().restitution as f32,
            pad2: [0.0; 2],
        };
        let groups = [
            (a.capacity.div_ceil(WG as usize).max(1) as u32).min(65_535),
            1,
            1,
        ];
        let mut g = Graph::new("prox.pair_contacts");
        g.dispatch(
            Dispatch::new("prox.pair_contacts", ids::PROX_PAIR_CONTACTS, groups)
                .workgroup_size(WG)
                .read(search.status())
                .read(search.pairs_vt())
                .read(search.pairs_ee())
                .read(search.triangles())
                .read(search.edges())
                .read(search.positions())
                .read_write(self.meta_buffer())
                .write(&a.raw_nodes)
                .write(&a.raw_weights)
                .write(&a.raw_frame)
                .push(&push),
        );
        let mut identity = Graph::new("prox.permute_identity");
        self.record_permute(&mut identity, None);
        let mut host = Graph::new("prox.permute_host");
        self.record_permute(&mut host, Some(&a.host_grouped));
        let compile = |g: &Graph| g.compile(self.context(), CompileOptions::default());
        Ok(PairGraphs {
            generation: search.generation(),
            capacity: a.capacity,
            contacts: compile(&g)?,
            permute_identity: compile(&identity)?,
            permute_host: compile(&host)?,
        })
    }

    /// Contacts from the pairs of `search`'s last run (at its positions), colored and stored
    /// color-major as the settings say. Friction and restitution come from the settings.
    pub fn contacts_from_pairs(
        &mut self,
        search: &ProximitySearch,
    ) -> Result<&ContactLayout, ProxError> {
        let need = search.pairs_vt().len() + search.pairs_ee().len();
        self.grow_to(need)?;
        let stale = self
            .pairs
            .as_ref()
            .is_none_or(|p| p.generation != search.generation() || p.capacity != self.capacity());
        if stale {
            self.pairs = Some(self.pair_graphs(search)?);
        }
        let graphs = self
            .pairs
            .as_ref()
            .ok_or(ProxError::Input("no pair graphs".into()))?;
        graphs.contacts.run()?;
        let meta = self.meta_buffer().read()?;
        let k = meta[0] as usize;
        if meta[2] as usize > k {
            return Err(ProxError::Input(format!(
                "{} pairs exceed the contact capacity {k}",
                meta[2]
            )));
        }
        let colored = self.settings().scheme == Scheme::ColoredGaussSeidel;
        if colored && self.settings().coloring == ColoringMethod::JonesPlassmann {
            return self.color_raw_on_device();
        }
        let (order, offsets, colors) = if colored {
            let raw = self.arrays.raw_nodes.read()?;
            let nodes: Vec<[u32; 8]> = (0..k)
                .map(|i| {
                    let (a, b) = (raw[2 * i], raw[2 * i + 1]);
                    [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]]
                })
                .collect();
            let c = self.color_on_host(&nodes);
            let g = ColorGroups::new(&c);
            self.arrays.host_grouped.write_at(0, &g.order)?;
            graphs.permute_host.run()?;
            (g.order, g.offsets, c.num_colors)
        } else {
            graphs.permute_identity.run()?;
            ((0..k as u32).collect(), Vec::new(), 0)
        };
        self.finish_layout(order, offsets, colors, k)
    }
}
