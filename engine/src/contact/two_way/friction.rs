//! Friction between deformable surfaces under the two-way method by velocity filtering (two-way
//! IPM paper §6.3, Bridson et al. 2002): at the start of every [`TwoWay`] solve the target y
//! (the frictionless dynamics update) is filtered over the current contact pairs, one
//! `two_way_friction` dispatch per contact color (the contact sweep's indirect arguments, so no
//! two threads touch one vertex). Each pair's tangential relative displacement is reduced by
//! at most μ times its normal penetration estimate (Coulomb) and its normal one is lifted to the
//! δ shell (both impulses, as in Bridson et al.: later pairs of the same vertices then see only
//! the penetration left, so a vertex with several pairs is not slowed several times over).
//! Reference: [`crate::cpu_reference::two_way::friction_sweep`].

use super::solve::{TwoWay, TwoWayReport};
use crate::vk::{ids, CompileOptions, CompiledGraph, Dispatch, Graph};
use std::time::Instant;

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

/// Friction state of a [`TwoWay`] solver: the coefficient and the graph recorded over the
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

impl TwoWay {
    /// Sets the Coulomb coefficient μ of friction between the surfaces (0: off, the default);
    /// with μ > 0 every solve starts with a friction pass ([`TwoWay::apply_friction`]).
    pub fn set_friction(&mut self, mu: f64) -> Result<(), String> {
        if !(mu.is_finite() && mu >= 0.0) {
            return Err(format!("friction must be finite and >= 0, got {mu}"));
        }
        self.friction_mut().mu = mu;
        Ok(())
    }

    /// The Coulomb coefficient μ of friction between the surfaces.
    pub fn friction(&self) -> f64 {
        self.friction_state().mu
    }

    /// The friction pass alone: a proximity search at x if the reuse bound asks for one, then
    /// one velocity-filtering dispatch per contact color on the target y (none with μ = 0).
    /// Returns the host milliseconds spent.
    pub fn apply_friction(&mut self, report: &mut TwoWayReport) -> Result<f64, String> {
        self.search_if_stale(report)?;
        if self.friction_state().mu <= 0.0 {
            return Ok(0.0);
        }
        let t = Instant::now();
        let mut f = std::mem::take(self.friction_mut());
        let r = f.run(self);
        *self.friction_mut() = f;
        r?;
        Ok(t.elapsed().as_secs_f64() * 1e3)
    }

    /// The hook at the start of a solve: the friction pass when μ > 0.
    pub(crate) fn apply_friction_if_on(&mut self, report: &mut TwoWayReport) -> Result<(), String> {
        if self.friction_state().mu > 0.0 {
            let ms = self.apply_friction(report)?;
            report.ms_proximity += ms;
        }
        Ok(())
    }
}

impl Friction {
    /// Records (if the workspace changed) and runs the per-color friction graph on `tw`.
    fn run(&mut self, tw: &TwoWay) -> Result<(), String> {
        let (cons, offsets, grouped, color_cap, key) = tw
            .contact_buffers()
            .ok_or("two-way solver has no pair workspace")?;
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
                        tw.color_args_buffer().slice(a..a + 3),
                    )
                    .workgroup_size(WG)
                    .read(tw.positions())
                    .read_write(tw.target())
                    .read(cons)
                    .read(tw.meta_buffer())
                    .read(offsets)
                    .read(grouped)
                    .read(tw.inverse_weights())
                    .push(&FrictionParams {
                        delta: tw.settings().delta as f32,
                        mu: self.mu as f32,
                        color: c,
                    }),
                );
            }
            let compiled = g
                .compile(tw.context(), CompileOptions::default())
                .map_err(err)?;
            self.graph = Some((key, self.mu, compiled));
        }
        self.graph
            .as_ref()
            .ok_or("no friction graph")?
            .2
            .run()
            .map_err(err)
    }
}
