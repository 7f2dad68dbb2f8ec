//! Shortest-path collision handling for the Newton solver: the penalty energy
//! `E = ½ k min((p − s)·n − offset, 0)²` of every constraint of a detection (the shortest-path
//! paper's Eq. 7) enters the incremental potential. `kernels/recovery/penalty.comp` evaluates it
//! at the iterate (with the gradient and the diagonal Hessian blocks summed per vertex in fixed
//! point, which `kernels/newton/vectors.comp` adds to the Newton system) and at line-search
//! trials (energy only). Reference: [`crate::cpu_reference::recovery_response::penalty`].

use std::cell::Cell;

use crate::linear::pcg::MatrixFreeCouplings;
use crate::primitives::{RadixSort, Reduce, ReduceOp, ReduceResult, SortKeys};
use crate::vk::{
    ids, Access, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph,
    VkError, VkResult,
};

/// The constraint slots a detection writes (see `kernels/recovery/contact_setup.comp`), for
/// solvers that consume them.
pub struct ConstraintSlots<'a> {
    /// Point-side vertices, face, live flag.
    pub idx: &'a GpuBuffer<[u32; 4]>,
    /// Point-side weights.
    pub w: &'a GpuBuffer<[f32; 4]>,
    /// Barycentric coordinates of the boundary point.
    pub b: &'a GpuBuffer<[f32; 4]>,
    /// Outward normals.
    pub n: &'a GpuBuffer<[f32; 4]>,
    /// Face-side vertices.
    pub f: &'a GpuBuffer<[u32; 4]>,
    /// Slots in use.
    pub count: usize,
}

/// Matrix-free couplings C of the penalty Hessian between a constraint's vertices
/// (`kernels/solver/contact_gather.comp`): the PCG product becomes q = (A + C) p.
#[derive(Clone)]
pub struct ContactOperator {
    /// Per constraint slot its weight k_c (N/m; 0 when not violated).
    pub weight: GpuBuffer<f32>,
    /// Per vertex the start of its entries (vertex count + 1 values).
    pub row_ptr: GpuBuffer<u32>,
    /// Entries 5·slot + coefficient, grouped by vertex, in slot order.
    pub entries: GpuBuffer<u32>,
    /// Constraint slots: point-side vertices, live flag.
    pub idx: GpuBuffer<[u32; 4]>,
    /// Constraint slots: face-side vertices.
    pub f: GpuBuffer<[u32; 4]>,
    /// Constraint slots: point-side weights.
    pub w: GpuBuffer<[f32; 4]>,
    /// Constraint slots: barycentrics.
    pub b: GpuBuffer<[f32; 4]>,
    /// Constraint slots: normals.
    pub n: GpuBuffer<[f32; 4]>,
    /// Inverse masses (fixed vertices, 0, take no couplings).
    pub inverse_masses: GpuBuffer<f32>,
}

impl MatrixFreeCouplings for ContactOperator {
    fn rows(&self) -> usize {
        if self.row_ptr.len() < self.inverse_masses.len() + 1 {
            return 0;
        }
        self.inverse_masses.len()
    }

    fn record_add_product(
        &self,
        g: &mut Graph,
        input: &GpuBuffer<[f32; 4]>,
        q: &GpuBuffer<[f32; 4]>,
    ) {
        let n = self.inverse_masses.len();
        let rows = [(n as u32).div_ceil(64).max(1), 1, 1];
        g.dispatch(
            Dispatch::new("pcg.contact_gather", ids::SOLVER_CONTACT_GATHER, rows)
                .workgroup_size(64)
                .read(&self.weight)
                .read(&self.row_ptr)
                .read(&self.entries)
                .read(&self.idx)
                .read(&self.f)
                .read(&self.w)
                .read(&self.b)
                .read(&self.n)
                .read(&self.inverse_masses)
                .read(input)
                .read_write(q)
                .push(&(n as u32)),
        );
    }
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PushPenalty {
    nc: u32,
    offset: f32,
    k: f32,
    exact: u32,
    nv: u32,
}

/// Penalty-energy graphs of one constraint set, bound to a Newton solver's iterate, trial
/// positions and per-vertex penalty sums.
pub struct PenaltyContact {
    evaluate: CompiledGraph,
    trial: CompiledGraph,
    clear: CompiledGraph,
    sums: GpuBuffer<ReduceResult>,
    active: Cell<bool>,
    stiffness: f64,
    operator: Option<ContactOperator>,
}

impl PenaltyContact {
    /// Compiles the graphs: `positions` (the iterate), `trial_positions` (line-search trials),
    /// `accum` (three ivec4 per vertex, read by the Newton vector kernel), stiffness `k` (N/m)
    /// and the separation `offset` (m) the constraints ask for. With `inverse_masses` (one per
    /// vertex) the diagonal blocks are the exact k a² n nᵀ and every evaluation also builds the
    /// couplings' operator ([`PenaltyContact::operator`]); without, they are the majorizers.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: &Context,
        slots: ConstraintSlots<'_>,
        positions: &GpuBuffer<[f32; 4]>,
        trial_positions: &GpuBuffer<[f32; 4]>,
        accum: &GpuBuffer<[i32; 4]>,
        offset: f32,
        k: f64,
        inverse_masses: Option<&GpuBuffer<f32>>,
    ) -> VkResult<PenaltyContact> {
        let invalid = |m: &str| VkError::Graph {
            graph: "recovery.penalty".into(),
            message: m.into(),
        };
        if !(k.is_finite() && k > 0.0) {
            return Err(invalid("penalty stiffness must be positive and finite"));
        }
        if !(offset.is_finite() && offset >= 0.0) {
            return Err(invalid("offset must be finite and >= 0"));
        }
        if accum.len() < 3 * positions.len() {
            return Err(invalid("penalty sums need three ivec4 per vertex"));
        }
        let nc = slots.count;
        let storage = BufferUsage::STORAGE;
        let energies = ctx.create_buffer::<f32>("penalty.energy", nc.max(1), storage)?;
        let sums =
            ctx.create_buffer::<ReduceResult>("penalty.sums", 2, BufferUsage::HOST_READ | storage)?;
        let reduce = Reduce::new(ctx, nc.max(1))?;
        let nv = positions.len();
        let exact = inverse_masses.is_some();
        let push = PushPenalty {
            nc: nc as u32,
            offset,
            k: k as f32,
            exact: exact as u32,
            nv: nv as u32,
        };
        // Couplings: per slot its weight k_c and five (vertex, entry) pairs, sorted by vertex
        // (stable: each vertex's entries stay in slot order) with row pointers.
        let ne = 5 * nc.max(1);
        let weight = ctx.create_buffer::<f32>("penalty.weight", nc.max(1), storage)?;
        let keys = ctx.create_buffer::<u32>("penalty.entry_keys", ne, storage)?;
        let vals = ctx.create_buffer::<u32>("penalty.entry_vals", ne, storage)?;
        let row_ptr = ctx.create_buffer::<u32>("penalty.row_ptr", nv + 1, storage)?;
        let sort = if exact && nc > 0 {
            Some(RadixSort::new(ctx, ne, SortKeys::U32)?)
        } else {
            None
        };
        let key_bits = 32 - (nv as u32).leading_zeros();
        let opts = CompileOptions {
            graph_timestamps: true,
            ..Default::default()
        };
        let record = |name: &str, x: &GpuBuffer<[f32; 4]>, accumulate: bool, slot: usize| {
            let mut g = Graph::new(name);
            if accumulate {
                g.fill("penalty.clear", accum, 0);
            }
            if nc > 0 {
                g.dispatch(
                    Dispatch::new(name, ids::RECOVERY_PENALTY, [nc.div_ceil(64) as u32, 1, 1])
                        .workgroup_size(64)
                        .spec(&[accumulate as u32])
                        .read(x)
                        .read(slots.f)
                        .read(slots.idx)
                        .read(slots.w)
                        .read(slots.b)
                        .read(slots.n)
                        .write(&energies)
                        .bind(
                            accum,
                            if accumulate {
                                Access::READ | Access::WRITE
                            } else {
                                Access::READ
                            },
                        )
                        .bind(
                            &weight,
                            if accumulate {
                                Access::WRITE
                            } else {
                                Access::READ
                            },
                        )
                        .bind(
                            &keys,
                            if accumulate {
                                Access::WRITE
                            } else {
                                Access::READ
                            },
                        )
                        .bind(
                            &vals,
                            if accumulate {
                                Access::WRITE
                            } else {
                                Access::READ
                            },
                        )
                        .push(&push),
                );
                reduce.record(&mut g, &energies, nc, ReduceOp::Sum, &sums, slot);
                if let (true, Some(sort)) = (accumulate, &sort) {
                    sort.record(&mut g, &keys, &vals, 5 * nc, key_bits);
                    g.dispatch(
                        Dispatch::new(
                            "penalty.rows",
                            ids::RECOVERY_PENALTY_ROWS,
                            [(nv as u32 + 1).div_ceil(64), 1, 1],
                        )
                        .workgroup_size(64)
                        .read(&keys)
                        .write(&row_ptr)
                        .push(&[nv as u32, 5 * nc as u32]),
                    );
                }
            } else {
                g.fill("penalty.no_energy", &sums, 0);
            }
            g.compile(ctx, opts)
        };
        let evaluate = record("recovery.penalty", positions, true, 0)?;
        let trial = record("recovery.penalty_trial", trial_positions, false, 1)?;
        let mut g = Graph::new("recovery.penalty_off");
        g.fill("penalty.clear", accum, 0);
        // Off (and before the first evaluation): no couplings.
        g.fill("penalty.clear_rows", &row_ptr, 0);
        let clear = g.compile(ctx, opts)?;
        clear.run()?;
        Ok(PenaltyContact {
            evaluate,
            trial,
            clear,
            sums,
            active: Cell::new(true),
            stiffness: k,
            operator: inverse_masses.map(|im| ContactOperator {
                weight,
                row_ptr,
                entries: vals,
                idx: slots.idx.clone(),
                f: slots.f.clone(),
                w: slots.w.clone(),
                b: slots.b.clone(),
                n: slots.n.clone(),
                inverse_masses: im.clone(),
            }),
        })
    }

    /// Turns the penalty on or off (off: its sums are zeroed and it adds no energy).
    pub fn set_active(&self, on: bool) -> VkResult<()> {
        if self.active.replace(on) && !on {
            self.clear.run()?;
        }
        Ok(())
    }

    /// The operator of the penalty Hessian's couplings between a constraint's vertices, for
    /// [`crate::linear::Pcg::set_contact_operator`] (present with the exact diagonal; its
    /// buffers are rewritten by every [`PenaltyContact::evaluate`]).
    pub fn operator(&self) -> Option<&dyn MatrixFreeCouplings> {
        self.operator
            .as_ref()
            .map(|o| o as &dyn MatrixFreeCouplings)
    }

    /// Whether the penalty acts.
    pub fn active(&self) -> bool {
        self.active.get()
    }

    /// Stiffness k (N/m).
    pub fn stiffness(&self) -> f64 {
        self.stiffness
    }

    fn sum(&self, slot: usize) -> VkResult<f64> {
        match self.sums.mapped() {
            Some(s) if s.len() > slot => Ok(s[slot].value as f64),
            _ => Err(VkError::Graph {
                graph: "recovery.penalty".into(),
                message: "sums buffer is not host-visible".into(),
            }),
        }
    }

    /// Energy (J) at the iterate, leaving its gradient and diagonal Hessian sums for the
    /// Newton vector kernel; returns (energy, GPU ms). Zero when inactive.
    pub fn evaluate(&self) -> VkResult<(f64, f64)> {
        if !self.active() {
            return Ok((0.0, 0.0));
        }
        self.evaluate.run()?;
        Ok((self.sum(0)?, self.evaluate.gpu_ms()?))
    }

    /// Energy (J) at the trial positions; returns (energy, GPU ms). Zero when inactive.
    pub fn trial(&self) -> VkResult<(f64, f64)> {
        if !self.active() {
            return Ok((0.0, 0.0));
        }
        self.trial.run()?;
        Ok((self.sum(1)?, self.trial.gpu_ms()?))
    }
}
