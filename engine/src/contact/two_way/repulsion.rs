//! Quadratic repulsion energy of the two-way solver's proximity pairs in the Newton dynamics
//! (two-way IPM paper §6.2): E = ½ k (d_r − d)² per pair closer than d_r, d the exact pair
//! distance at the Newton iterate. It reuses the Newton solver's penalty machinery: the kernel
//! `two_way_repulsion` writes the per-vertex fixed-point sums that `kernels/newton/vectors.comp`
//! adds to the gradient and the diagonal Hessian blocks (scaled by the solver's penalty k), and
//! the energies summed for the line search. The pairs are those of the solver's last proximity
//! search (complete for d_r ≤ D_min: a pair missing from the list is at least the reuse bound
//! apart); [`Repulsion::sync`] re-records the graphs when the solver replaced its pair buffers.
//! Reference: [`crate::cpu_reference::two_way::repulsion`].

use super::solve::TwoWay;
use crate::primitives::{Reduce, ReduceOp, ReduceResult};
use crate::vk::{
    ids, Access, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph,
    Ticket, VkError, VkResult,
};
use std::cell::{Cell, RefCell};

/// Workgroup size of the repulsion kernel (the solver's per-pair indirect arguments use it).
const WG: u32 = 64;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct RepulsionParams {
    k: f32,
    d_r: f32,
}

/// Graphs recorded over one pair workspace of the solver.
struct Graphs {
    key: (u64, u32),
    evaluate: CompiledGraph,
    trial: CompiledGraph,
}

/// The repulsion energy bound to a Newton solver's iterate, trial positions and penalty sums,
/// over a [`TwoWay`] solver's pairs.
pub struct Repulsion {
    ctx: Context,
    positions: GpuBuffer<[f32; 4]>,
    trial_positions: GpuBuffer<[f32; 4]>,
    accum: GpuBuffer<[i32; 4]>,
    sums: GpuBuffer<ReduceResult>,
    k: f64,
    d_r: f64,
    graphs: RefCell<Option<Graphs>>,
    /// The evaluation's and the trial's runs submitted without a wait, not yet read.
    submitted: Cell<[Option<Ticket>; 2]>,
}

fn graph_err(m: String) -> VkError {
    VkError::Graph {
        graph: "two_way.repulsion".into(),
        message: m,
    }
}

impl Repulsion {
    /// Binds the energy to `positions` (the Newton iterate), `trial_positions` (line-search
    /// trials) and `accum` (three ivec4 per vertex, read by the Newton vector kernel and scaled
    /// there by the solver's penalty stiffness, which must be `k`, N/m), with repulsion distance
    /// `d_r` (m), over the pairs of `tw`.
    pub fn new(
        ctx: &Context,
        tw: &TwoWay,
        positions: &GpuBuffer<[f32; 4]>,
        trial_positions: &GpuBuffer<[f32; 4]>,
        accum: &GpuBuffer<[i32; 4]>,
        k: f64,
        d_r: f64,
    ) -> VkResult<Repulsion> {
        if !(k.is_finite() && k > 0.0) {
            return Err(graph_err(format!(
                "repulsion stiffness must be > 0, got {k}"
            )));
        }
        if !(d_r.is_finite() && d_r > 0.0) {
            return Err(graph_err(format!(
                "repulsion distance must be > 0, got {d_r}"
            )));
        }
        if accum.len() < 3 * positions.len() {
            return Err(graph_err("penalty sums need three ivec4 per vertex".into()));
        }
        let sums = ctx.create_buffer::<ReduceResult>(
            "two_way.repulsion_sums",
            2,
            BufferUsage::HOST_READ | BufferUsage::STORAGE,
        )?;
        let r = Repulsion {
            ctx: ctx.clone(),
            positions: positions.clone(),
            trial_positions: trial_positions.clone(),
            accum: accum.clone(),
            sums,
            k,
            d_r,
            graphs: RefCell::new(None),
            submitted: Cell::new([None, None]),
        };
        r.sync(tw)?;
        Ok(r)
    }

    /// Re-records the graphs if `tw` replaced its pair buffers (call after every solve).
    pub fn sync(&self, tw: &TwoWay) -> VkResult<()> {
        let (cons, _, _, _, key) = tw
            .contact_buffers()
            .ok_or_else(|| graph_err("two-way solver has no pair workspace".into()))?;
        if self.graphs.borrow().as_ref().is_some_and(|g| g.key == key) {
            return Ok(());
        }
        *self.graphs.borrow_mut() = None;
        let cap = cons.len();
        let energies = self.ctx.create_buffer::<f32>(
            "two_way.repulsion_energy",
            cap.max(1),
            BufferUsage::STORAGE,
        )?;
        let reduce = Reduce::new(&self.ctx, cap.max(1))?;
        let push = RepulsionParams {
            k: self.k as f32,
            d_r: self.d_r as f32,
        };
        let opts = CompileOptions {
            graph_timestamps: true,
            ..Default::default()
        };
        let record = |name: &str, x: &GpuBuffer<[f32; 4]>, accumulate: bool, slot: usize| {
            let mut g = Graph::new(name);
            if accumulate {
                g.fill("two_way.repulsion_clear", &self.accum, 0);
            }
            g.fill("two_way.repulsion_zero", &energies, 0);
            g.dispatch(
                Dispatch::indirect(name, ids::COLLISION_TWO_WAY_REPULSION, {
                    tw.meta_buffer().slice(2..5)
                })
                .workgroup_size(WG)
                .spec(&[accumulate as u32])
                .read(x)
                .read(cons.lo())
                .read(tw.meta_buffer())
                .write(&energies)
                .bind(
                    &self.accum,
                    if accumulate {
                        Access::READ | Access::WRITE
                    } else {
                        Access::READ
                    },
                )
                .read(cons.hi())
                .push(&push),
            );
            reduce.record(
                &mut g,
                &energies,
                cap.max(1),
                ReduceOp::Sum,
                &self.sums,
                slot,
            );
            g.compile(&self.ctx, opts)
        };
        let evaluate = record("two_way.repulsion", &self.positions, true, 0)?;
        let trial = record("two_way.repulsion_trial", &self.trial_positions, false, 1)?;
        *self.graphs.borrow_mut() = Some(Graphs {
            key,
            evaluate,
            trial,
        });
        Ok(())
    }

    /// Stiffness k (N/m).
    pub fn stiffness(&self) -> f64 {
        self.k
    }

    /// Repulsion distance d_r (m).
    pub fn distance(&self) -> f64 {
        self.d_r
    }

    fn run(&self, trial: bool) -> VkResult<(f64, f64)> {
        self.submit(trial)?;
        self.read_submitted(trial)
    }

    /// Submits the evaluation (or, with `trial`, the trial energy) without a wait; its energy
    /// is read with [`Repulsion::read_submitted`].
    pub fn submit(&self, trial: bool) -> VkResult<()> {
        let ticket = self.with_graph(trial, |graph| graph.submit())?;
        let mut s = self.submitted.get();
        s[usize::from(trial)] = Some(ticket);
        self.submitted.set(s);
        Ok(())
    }

    /// `f` of the evaluation graph (with `trial`, the trial graph).
    fn with_graph<R>(
        &self,
        trial: bool,
        f: impl FnOnce(&CompiledGraph) -> VkResult<R>,
    ) -> VkResult<R> {
        let graphs = self.graphs.borrow();
        let g = graphs
            .as_ref()
            .ok_or_else(|| graph_err("repulsion graphs not recorded".into()))?;
        f(if trial { &g.trial } else { &g.evaluate })
    }

    /// Waits for the run [`Repulsion::submit`] submitted (no host wait when a later wait
    /// covered it) and returns its (energy J, GPU ms).
    pub fn read_submitted(&self, trial: bool) -> VkResult<(f64, f64)> {
        let slot = usize::from(trial);
        let mut s = self.submitted.get();
        let ticket = s[slot]
            .take()
            .ok_or_else(|| graph_err("no repulsion energy was submitted".into()))?;
        self.submitted.set(s);
        let ms = self.with_graph(trial, |graph| {
            graph.wait(ticket)?;
            graph.gpu_ms()
        })?;
        let e = match self.sums.mapped() {
            Some(s) if s.len() > slot => s[slot].value as f64,
            _ => return Err(graph_err("sums buffer is not host-visible".into())),
        };
        Ok((e, ms))
    }

    /// Energy (J) at the iterate, leaving its gradient and Hessian-block sums for the Newton
    /// vector kernel; returns (energy, GPU ms).
    pub fn evaluate(&self) -> VkResult<(f64, f64)> {
        self.run(false)
    }

    /// Energy (J) at the trial positions; returns (energy, GPU ms).
    pub fn trial(&self) -> VkResult<(f64, f64)> {
        self.run(true)
    }
}
