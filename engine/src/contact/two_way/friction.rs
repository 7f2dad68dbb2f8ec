//! Friction between deformable surfaces under the two-way method by velocity filtering (two-way
//! IPM paper §6.3, Bridson et al. 2002): at the start of every [`super::TwoWay`] solve the target y
//! (the frictionless dynamics update) is filtered over the current contact pairs, one
//! `two_way_friction` dispatch per contact color (the contact sweep's indirect arguments, so no
//! two threads touch one vertex). Each pair's tangential relative displacement is reduced by
//! at most μ times its normal penetration estimate (Coulomb) and its normal one is lifted to the
//! δ shell (both impulses, as in Bridson et al.: later pairs of the same vertices then see only
//! the penetration left, so a vertex with several pairs is not slowed several times over).
//! Reference: [`crate::cpu_reference::two_way::friction_sweep`].

use crate::vk::{ids, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph};

/// Workgroup size of the friction kernel.
const WG: u32 = 64;

/// Push constants of `two_way_friction.comp`.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct FrictionParams {
    delta: f32,
    mu: f32,
    color: u32,
}

/// What the friction pass reads and writes of a two-way solver (its current pair workspace).
pub(crate) struct FrictionInputs<'a> {
    /// The solver's context.
    pub ctx: &'a Context,
    /// Safe positions x.
    pub positions: &'a GpuBuffer<[f32; 4]>,
    /// Target y (filtered in place).
    pub target: &'a GpuBuffer<[f32; 4]>,
    /// Contact constraints (over two bindings).
    pub cons: &'a super::split::SplitBuffer<[u32; 4]>,
    /// Solver metadata words.
    pub meta: &'a GpuBuffer<u32>,
    /// Per-color offsets of the grouped constraints.
    pub offsets: &'a GpuBuffer<u32>,
    /// Constraints grouped by color.
    pub grouped: &'a GpuBuffer<u32>,
    /// Inverse weights.
    pub inverse_weights: &'a GpuBuffer<f32>,
    /// Per-color indirect arguments.
    pub color_args: &'a GpuBuffer<u32>,
    /// Color capacity of the workspace.
    pub color_cap: u32,
    /// Identity of the workspace (its recording serial, color capacity).
    pub key: (u64, u32),
    /// δ (m).
    pub delta: f64,
}

/// Friction state of a two-way solver: the coefficient and the graph recorded over the
/// solver's current pair workspace (re-recorded when that workspace is replaced).
#[derive(Default)]
pub struct Friction {
    mu: f64,
    /// The graph, the workspace key and the μ it was recorded for.
    graph: Option<((u64, u32), f64, CompiledGraph)>,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Friction {
    /// The Coulomb coefficient μ.
    pub fn mu(&self) -> f64 {
        self.mu
    }

    /// Sets μ (checked by the caller).
    pub(crate) fn set_mu(&mut self, mu: f64) {
        self.mu = mu;
    }

    /// Records (if the workspace changed) and runs the per-color friction graph; with `wait`
    /// false it is only submitted (a later wait covers it: the step batch reads the target).
    pub(crate) fn run(&mut self, tw: FrictionInputs<'_>, wait: bool) -> Result<(), String> {
        let (cons, offsets, grouped, color_cap, key) =
            (tw.cons, tw.offsets, tw.grouped, tw.color_cap, tw.key);
        // μ is baked into the push constants: re-record when it changed too.
        let stale = self
            .graph
            .as_ref()
            .is_none_or(|(k, mu, _)| *k != key || *mu != self.mu);
        if stale {
            self.graph = None;
            let mut g = Graph::new("two_way.friction");
            for c in 0..color_cap {
                let a = 3 * c as usize;
                g.dispatch(
                    Dispatch::indirect(
                        format!("two_way.friction[{c}]"),
                        ids::COLLISION_TWO_WAY_FRICTION,
                        tw.color_args.slice(a..a + 3),
                    )
                    .workgroup_size(WG)
                    .read(tw.positions)
                    .read_write(tw.target)
                    .read(cons.lo())
                    .read(tw.meta)
                    .read(offsets)
                    .read(grouped)
                    .read(tw.inverse_weights)
                    .read(cons.hi())
                    .push(&FrictionParams {
                        delta: tw.delta as f32,
                        mu: self.mu as f32,
                        color: c,
                    }),
                );
            }
            let compiled = g.compile(tw.ctx, CompileOptions::default()).map_err(err)?;
            self.graph = Some((key, self.mu, compiled));
        }
        let graph = &self.graph.as_ref().ok_or("no friction graph")?.2;
        if wait {
            graph.run().map_err(err)
        } else {
            graph.submit().map(|_| ()).map_err(err)
        }
    }
}
