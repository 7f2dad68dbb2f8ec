//! Implicit Euler as minimisation of the incremental potential
//! `E(x) = 1/(2h²) ‖x − y‖²_M + Ψ(x)`, `y = xₜ + h vₜ + h² g`, by Newton's method on the GPU:
//! per-element gradients and PSD-projected Hessians ([`crate::fem`]), assembly into 3×3 block
//! storage (`kernels/fem/assemble_hessian.comp`), block-Jacobi PCG ([`crate::linear`]) and a
//! backtracking line search on the energy reduced on the GPU. Every step runs from graphs
//! compiled once; the host reads back scalars only (energies, norms, PCG residuals).
//! Analytic colliders (plane, sphere, box; static or moving) enter the energy as a penalty with
//! lagged Coulomb friction re-linearised at every Newton iteration
//! ([`crate::cpu_reference::contact`]); cloth and rod elements share the tets' element pool
//! ([`crate::fem::thin`]). Proximity-based contact terms plug into the same energy, gradient
//! and block storage (later issues).

use crate::contact::colliders::{pack_colliders, Collider};
use crate::fem::elements::csr;
use crate::fem::thin::NO_VERTEX;
use crate::fem::{ElementModel, TetElements};
use crate::linear::{Pcg, WarmStart};
use crate::model::SimModel;
use crate::primitives::{Reduce, ReduceOp, ReduceResult};
use crate::vk::{
    ids, Access, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph,
    VkResult,
};

/// Newton solver settings (SI units).
#[derive(Debug, Clone, PartialEq)]
pub struct NewtonSettings {
    /// Time step (s).
    pub h: f64,
    /// Gravity (m/s²).
    pub gravity: [f64; 3],
    /// Newton iterations per step at most.
    pub max_iterations: u32,
    /// Stop when the Newton direction's largest vertex displacement is below this (m).
    pub tolerance: f64,
    /// Also stop when the largest per-vertex gradient norm of the incremental potential (the
    /// unbalanced force) is at most this (N; 0: only the displacement test).
    pub gradient_tolerance: f64,
    /// PCG relative residual.
    pub pcg_tolerance: f32,
    /// PCG iterations per Newton iteration at most.
    pub pcg_max_iterations: u32,
    /// Analytic colliders (unit plane normals), with friction coefficients and velocities.
    pub colliders: Vec<Collider>,
    /// Collider penalty stiffness relative to m/h² (dimensionless; 1000 keeps the penetration
    /// under weight at g h² / 1000).
    pub contact_stiffness: f64,
    /// Friction slip threshold ε (m): tangential displacements per step below it are treated
    /// as static friction (IPC's ε_v h).
    pub friction_slip: f64,
    /// Block-Jacobi warm start of PCG by stiffness groups.
    pub warm_start: WarmStart,
    /// PCG stops when its residual has not improved over this many iterations.
    pub pcg_stagnation_window: u32,
    /// Re-lag friction at every Newton iteration (fully implicit, the barrier-augmented
    /// Lagrangian paper §4.1) instead of once per time step (semi-implicit, IPC).
    pub friction_per_iteration: bool,
    /// Stiffness k of the shortest-path penalty contact ([`NewtonStepper::attach_penalty`]) or
    /// of the two-way repulsion ([`NewtonStepper::attach_repulsion`]) relative to m̄/h², m̄ the
    /// mean mass of the free vertices (dimensionless; 0: no penalty).
    pub penalty_stiffness: f64,
}

/// GPU milliseconds per part of a time step (whole-graph timestamps).
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct StepGpuMs {
    /// Scripted motion and prediction of y.
    pub predict: f64,
    /// Gradients, energies and right-hand sides.
    pub evaluate: f64,
    /// Element Hessians and their assembly.
    pub hessian: f64,
    /// PCG solves.
    pub pcg: f64,
    /// Line-search trials and acceptance.
    pub line_search: f64,
    /// Velocity update.
    pub finish: f64,
}

impl StepGpuMs {
    /// Sum of the parts.
    pub fn total(&self) -> f64 {
        self.predict + self.evaluate + self.hessian + self.pcg + self.line_search + self.finish
    }
}

impl std::ops::AddAssign for StepGpuMs {
    fn add_assign(&mut self, o: StepGpuMs) {
        self.predict += o.predict;
        self.evaluate += o.evaluate;
        self.hessian += o.hessian;
        self.pcg += o.pcg;
        self.line_search += o.line_search;
        self.finish += o.finish;
    }
}

/// What one time step did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepStats {
    /// GPU milliseconds per part.
    pub gpu_ms: StepGpuMs,
    /// Newton iterations.
    pub newton_iterations: u32,
    /// PCG iterations summed over the Newton iterations (global solves).
    pub pcg_iterations: u32,
    /// Iterations of the grouped warm-start PCG summed over the Newton iterations.
    pub pcg_warm_iterations: u32,
    /// Incremental potential at the end of the step (J).
    pub energy: f64,
    /// Largest vertex displacement of the last Newton direction (m).
    pub last_direction: f64,
    /// Relative residual ‖r‖/‖b‖ of the last PCG solve.
    pub pcg_residual: f64,
    /// Largest per-vertex gradient norm of the incremental potential at the last evaluation (N).
    pub gradient_norm: f64,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct VecPush {
    gravity: [f32; 4],
    n: u32,
    h: f32,
    kappa: f32,
    num_colliders: u32,
    slip: f32,
    penalty_k: f32,
    _pad: [u32; 2],
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct AsmPush {
    count: u32,
    inv_h2: f32,
}

/// A Newton–PCG implicit Euler stepper for the tets, cloth and rods of a [`SimModel`].
pub struct NewtonStepper {
    settings: NewtonSettings,
    time: std::cell::Cell<f64>,
    time_buf: GpuBuffer<f32>,
    script: Option<CompiledGraph>,
    positions: GpuBuffer<[f32; 4]>,
    velocities: GpuBuffer<[f32; 4]>,
    alpha: GpuBuffer<f32>,
    sums: GpuBuffer<ReduceResult>,
    colliders: GpuBuffer<[f32; 4]>,
    f_ext: GpuBuffer<[f32; 4]>,
    x_trial: GpuBuffer<[f32; 4]>,
    inv_mass: GpuBuffer<f32>,
    penalty_accum: GpuBuffer<[i32; 4]>,
    penalty: Option<crate::contact::shortest_path::PenaltyContact>,
    /// Two-way repulsion energy (uses the penalty sums and k; exclusive with `penalty`).
    repulsion: Option<crate::contact::two_way::Repulsion>,
    penalty_k: f64,
    pcg: Pcg,
    predict: CompiledGraph,
    evaluate: CompiledGraph,
    evaluate_lagged: CompiledGraph,
    hessian: CompiledGraph,
    trial: CompiledGraph,
    accept: CompiledGraph,
    finish: CompiledGraph,
}

const WG: u32 = 64;

fn groups(n: usize) -> [u32; 3] {
    [(n as u32).div_ceil(WG).max(1), 1, 1]
}

impl NewtonStepper {
    /// Uploads the model's elements and state and compiles every graph of a step.
    pub fn new(
        ctx: &Context,
        model: &SimModel,
        model_kind: ElementModel,
        settings: NewtonSettings,
    ) -> VkResult<NewtonStepper> {
        let n = model.positions.len();
        let storage = BufferUsage::STORAGE;
        let f4 = crate::math::vec4s;
        let positions = ctx.upload_buffer("newton.x", &f4(&model.positions), storage)?;
        let velocities = ctx.upload_buffer("newton.v", &f4(&model.velocities), storage)?;
        let vec4 = |name: &str| ctx.create_buffer::<[f32; 4]>(name, n, storage);
        let (y, x_start, x_trial) = (
            vec4("newton.y")?,
            vec4("newton.x_start")?,
            vec4("newton.x_trial")?,
        );
        let mass = ctx.upload_buffer(
            "newton.mass",
            &model.masses.iter().map(|&m| m as f32).collect::<Vec<_>>(),
            storage,
        )?;
        let inv_mass = ctx.upload_buffer(
            "newton.inv_mass",
            &model.inv_mass.iter().map(|&m| m as f32).collect::<Vec<_>>(),
            storage,
        )?;
        let inertia = ctx.create_buffer::<f32>("newton.vertex_energy", n, storage)?;
        let colliders = ctx.upload_buffer(
            "newton.colliders",
            &pack_colliders(&settings.colliders),
            BufferUsage::HOST_WRITE | storage,
        )?;
        let friction = ctx.create_buffer::<[f32; 4]>("newton.friction", 2 * n, storage)?;
        let contact_hess = ctx.create_buffer::<[f32; 4]>("newton.contact_hess", 3 * n, storage)?;
        let time_buf =
            ctx.create_buffer::<f32>("newton.time", 1, BufferUsage::HOST_WRITE | storage)?;
        let f_ext = ctx.upload_buffer("newton.f_ext", &f4(&model.external_forces), storage)?;
        // Penalty-contact sums (three ivec4 per vertex), zero until a penalty is attached.
        let penalty_accum = ctx.create_buffer::<[i32; 4]>("newton.penalty", 3 * n, storage)?;
        {
            let mut g = Graph::new("newton.penalty_init");
            g.fill("newton.penalty_clear", &penalty_accum, 0);
            g.compile(ctx, CompileOptions::default())?.run()?;
        }
        let free_masses: Vec<f64> = (0..n)
            .filter(|&i| model.inv_mass[i] > 0.0)
            .map(|i| model.masses[i])
            .collect();
        let mean_mass = free_masses.iter().sum::<f64>() / free_masses.len().max(1) as f64;
        let penalty_k = settings.penalty_stiffness * mean_mass / (settings.h * settings.h);
        if !(penalty_k.is_finite() && penalty_k >= 0.0) {
            return Err(crate::vk::VkError::Graph {
                graph: "newton".into(),
                message: format!(
                    "penalty stiffness {} gives k = {penalty_k} N/m (must be finite, >= 0)",
                    settings.penalty_stiffness
                ),
            });
        }
        let gnorm = ctx.create_buffer::<f32>("newton.gnorm", n, storage)?;
        let dnorm = ctx.create_buffer::<f32>("newton.dnorm", n, storage)?;
        let alpha =
            ctx.create_buffer::<f32>("newton.alpha", 1, BufferUsage::HOST_WRITE | storage)?;
        // Host-visible: read every line-search trial without a staging copy.
        let sums =
            ctx.create_buffer::<ReduceResult>("newton.sums", 4, BufferUsage::HOST_READ | storage)?;
        let elements = TetElements::with_thin(
            ctx,
            &model.positions,
            &model.tets,
            &model.tet_lame,
            model_kind,
            &model.thin_elements,
        )?;
        let num_elements = elements.num_elements();
        let trial_elements = &elements;
        // Sparsity: unique element edges, and for each edge the (element, a, b) contributions.
        let mut edge_index = std::collections::HashMap::new();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        let mut edge_items: Vec<(usize, u32)> = Vec::new();
        let pool = model
            .tets
            .iter()
            .copied()
            .chain(model.thin_elements.iter().map(|e| e.vertices()));
        for (t, tet) in pool.enumerate() {
            for a in 0..4 {
                for b in 0..4 {
                    let (i, j) = (tet[a], tet[b]);
                    if i < j && j != NO_VERTEX {
                        let e = *edge_index.entry((i, j)).or_insert_with(|| {
                            pairs.push((i, j));
                            pairs.len() - 1
                        });
                        edge_items.push((e, (16 * t + 4 * a + b) as u32));
                    }
                }
            }
        }
        let (e_start, e_entries) = csr(pairs.len(), &edge_items);
        // Diagonal blocks gather over the same vertex -> corner lists as the element gradients.
        let (v_start, v_entries) = elements.vertex_corners();
        let e_start = ctx.upload_buffer("newton.edge_start", &e_start, storage)?;
        let e_entries = ctx.upload_buffer("newton.edge_entries", &e_entries, storage)?;
        let pair_buf = ctx.upload_buffer(
            "newton.pairs",
            &pairs.iter().map(|&(i, j)| [i, j]).collect::<Vec<_>>(),
            storage,
        )?;
        let pcg = Pcg::with_sparsity(ctx, n, &pairs, 10)?;
        pcg.set_stagnation_window(settings.pcg_stagnation_window);
        let nodes: Vec<u32> = model
            .tets
            .iter()
            .map(|_| 4)
            .chain(
                model
                    .thin_elements
                    .iter()
                    .map(|e| e.vertices().iter().filter(|&&v| v != NO_VERTEX).count() as u32),
            )
            .collect();
        let element_nodes = ctx.upload_buffer("newton.element_nodes", &nodes, storage)?;
        let reduce = Reduce::new(ctx, n.max(num_elements))?;
        let h = settings.h;
        let vp = VecPush {
            gravity: crate::math::vec4(settings.gravity),
            n: n as u32,
            h: h as f32,
            kappa: settings.contact_stiffness as f32,
            num_colliders: settings.colliders.len() as u32,
            slip: settings.friction_slip as f32,
            penalty_k: penalty_k as f32,
            _pad: [0; 2],
        };
        let (rd, wr, rw) = (Access::READ, Access::WRITE, Access::READ | Access::WRITE);
        // All vector kernels share one binding layout; `acc` gives each mode's real accesses.
        let vectors = |g: &mut Graph, name: &str, mode: u32, acc: [Access; 13]| {
            // f_ext, colliders, time: read; friction lag and contact blocks: written by the
            // gradient, friction read by trials.
            let (fr, ch) = match mode {
                1 => (wr, wr),
                4 => (rd, wr),
                _ => (rd, rd),
            };
            let acc: Vec<Access> = acc.into_iter().chain([rd, rd, rd, fr, ch, rd]).collect();
            let bufs: [crate::vk::BufferSlice; 19] = [
                (&positions).into(),
                (&velocities).into(),
                (&y).into(),
                (&x_start).into(),
                (&mass).into(),
                (&inv_mass).into(),
                elements.vertex_gradient().into(),
                pcg.rhs().into(),
                pcg.solution().into(),
                (&x_trial).into(),
                (&inertia).into(),
                (&gnorm).into(),
                (&alpha).into(),
                (&f_ext).into(),
                (&colliders).into(),
                (&time_buf).into(),
                (&friction).into(),
                (&contact_hess).into(),
                (&penalty_accum).into(),
            ];
            let mut d = Dispatch::new(name, ids::NEWTON_VECTORS, groups(n))
                .workgroup_size(WG)
                .spec(&[mode]);
            for (b, a) in bufs.into_iter().zip(acc) {
                d = d.bind(b, a);
            }
            g.dispatch(d.push(&vp));
        };
        let energy_sums = |g: &mut Graph| {
            reduce.record(
                g,
                trial_elements.energies(),
                num_elements,
                ReduceOp::Sum,
                &sums,
                0,
            );
            reduce.record(g, &inertia, n, ReduceOp::Sum, &sums, 1);
        };
        let opts = CompileOptions {
            graph_timestamps: true,
            ..Default::default()
        };
        let r = rd;
        // predict: y, x_start.
        let mut g = Graph::new("newton.predict");
        vectors(
            &mut g,
            "newton.predict",
            0,
            [r, r, wr, wr, r, r, r, r, r, r, r, r, r],
        );
        let predict = g.compile(ctx, opts)?;
        // evaluate: gradient and energy at x; rhs = −g; |g|.
        let mut g = Graph::new("newton.evaluate");
        elements.record_gradient(&mut g, &positions);
        vectors(
            &mut g,
            "newton.gradient",
            1,
            [r, r, r, r, r, r, r, wr, wr, r, wr, wr, r],
        );
        energy_sums(&mut g);
        reduce.record(&mut g, &gnorm, n, ReduceOp::Max, &sums, 2);
        let evaluate = g.compile(ctx, opts)?;
        // The same without re-lagging friction (later iterations of a semi-implicit step).
        let mut g = Graph::new("newton.evaluate_lagged");
        elements.record_gradient(&mut g, &positions);
        vectors(
            &mut g,
            "newton.gradient_lagged",
            4,
            [r, r, r, r, r, r, r, wr, wr, r, wr, wr, r],
        );
        energy_sums(&mut g);
        reduce.record(&mut g, &gnorm, n, ReduceOp::Max, &sums, 2);
        let evaluate_lagged = g.compile(ctx, opts)?;
        // hessian: element Hessians, assembly, inverse diagonal blocks.
        let mut g = Graph::new("newton.hessian");
        elements.record_hessian(&mut g, &positions, 8);
        let inv_h2 = (1.0 / (h * h)) as f32;
        for (mode, name, start, entries, count, out) in [
            (
                0u32,
                "newton.assemble_diag",
                v_start,
                v_entries,
                n,
                pcg.diag_blocks(),
            ),
            (
                1u32,
                "newton.assemble_off",
                &e_start,
                &e_entries,
                pairs.len(),
                pcg.off_blocks(),
            ),
        ] {
            g.dispatch(
                Dispatch::new(name, ids::FEM_ASSEMBLE_HESSIAN, groups(count))
                    .workgroup_size(WG)
                    .spec(&[mode])
                    .read(elements.hessians())
                    .read(start)
                    .read(entries)
                    .read(&mass)
                    .read(&inv_mass)
                    .read(&pair_buf)
                    .write(out)
                    .bind(pcg.inverse_diag_blocks(), if mode == 0 { wr } else { rd })
                    .read(&contact_hess)
                    .bind(pcg.stiffness(), if mode == 0 { wr } else { rd })
                    .read(&element_nodes)
                    .push(&AsmPush {
                        count: count as u32,
                        inv_h2,
                    }),
            );
        }
        let hessian = g.compile(ctx, opts)?;
        // trial: x_trial = x + α d, energy at x_trial (the element kernel also leaves the
        // gradient at x_trial, reused when the trial is accepted).
        let mut g = Graph::new("newton.trial");
        // The direction (binding 8) is only read here, but vectors.comp binds it writable in
        // every mode and the norm below reads it: declared written so that the synchronization
        // validation in the tests, which goes by the SPIR-V, sees the barrier it expects.
        vectors(
            &mut g,
            "newton.trial",
            2,
            [r, r, r, r, r, r, r, r, rw, wr, wr, r, r],
        );
        elements.record_gradient(&mut g, &x_trial);
        energy_sums(&mut g);
        // |d| for the stopping test.
        g.dispatch(
            Dispatch::new("newton.direction_norm", ids::NEWTON_NORM, groups(n))
                .workgroup_size(WG)
                .read(pcg.solution())
                .write(&dnorm)
                .push(&(n as u32)),
        );
        reduce.record(&mut g, &dnorm, n, ReduceOp::Max, &sums, 3);
        let trial = g.compile(ctx, opts)?;
        let mut g = Graph::new("newton.accept");
        g.copy("newton.accept", &x_trial, &positions);
        let accept = g.compile(ctx, opts)?;
        let mut g = Graph::new("newton.finish");
        vectors(
            &mut g,
            "newton.velocity",
            3,
            [r, wr, r, r, r, r, r, r, r, r, r, r, r],
        );
        let finish = g.compile(ctx, opts)?;
        // Scripted (kinematic) vertices, moved before each step's prediction.
        let script = if model.has_motion() {
            let x0 = ctx.upload_buffer("newton.x0", &f4(&model.positions), storage)?;
            let vm = ctx.upload_buffer("newton.vertex_motion", &model.vertex_motion, storage)?;
            let mo: Vec<[f32; 4]> = model
                .motions
                .iter()
                .flat_map(|m| {
                    [
                        [
                            m.axis[0] as f32,
                            m.axis[1] as f32,
                            m.axis[2] as f32,
                            m.angular_velocity as f32,
                        ],
                        [
                            m.center[0] as f32,
                            m.center[1] as f32,
                            m.center[2] as f32,
                            m.until as f32,
                        ],
                        [
                            m.velocity[0] as f32,
                            m.velocity[1] as f32,
                            m.velocity[2] as f32,
                            0.0,
                        ],
                    ]
                })
                .collect();
            let motions = ctx.upload_buffer("newton.motions", &mo, storage)?;
            let mut g = Graph::new("newton.script");
            g.dispatch(
                Dispatch::new("newton.script", ids::NEWTON_SCRIPT, groups(n))
                    .workgroup_size(WG)
                    .read_write(&positions)
                    .read(&x0)
                    .read(&vm)
                    .read(&motions)
                    .read(&time_buf)
                    .push(&(n as u32)),
            );
            Some(g.compile(ctx, opts)?)
        } else {
            None
        };
        Ok(NewtonStepper {
            settings,
            time: std::cell::Cell::new(0.0),
            time_buf,
            script,
            positions,
            velocities,
            alpha,
            sums,
            colliders,
            f_ext,
            x_trial,
            inv_mass,
            penalty_accum,
            penalty: None,
            repulsion: None,
            penalty_k,
            pcg,
            predict,
            evaluate,
            evaluate_lagged,
            hessian,
            trial,
            accept,
            finish,
        })
    }

    fn read_sums(&self) -> VkResult<[f64; 4]> {
        let s = self.sums.mapped().unwrap_or(&[]);
        if s.len() < 4 {
            return Err(crate::vk::VkError::Graph {
                graph: "newton".into(),
                message: "sums buffer is not host-visible".into(),
            });
        }
        Ok([
            s[0].value as f64,
            s[1].value as f64,
            s[2].value as f64,
            s[3].value as f64,
        ])
    }

    /// Advances one time step.
    pub fn step(&self) -> VkResult<StepStats> {
        self.step_with(&mut |_| Ok(()))
    }

    /// Advances one time step, calling `after_iteration(positions)` after every accepted Newton
    /// iteration: a collision handler may replace the positions by a safe state there (the
    /// two-way IPM paper's practice, §6.1); the Newton iteration then continues from them.
    pub fn step_with(
        &self,
        after_iteration: &mut dyn FnMut(&GpuBuffer<[f32; 4]>) -> VkResult<()>,
    ) -> VkResult<StepStats> {
        let st = &self.settings;
        let mut stats = StepStats::default();
        let t = self.time.get() + st.h;
        self.time.set(t);
        self.time_buf.write(&[t as f32])?;
        if let Some(script) = &self.script {
            script.run()?;
            stats.gpu_ms.predict += script.gpu_ms()?;
        }
        self.predict.run()?;
        stats.gpu_ms.predict += self.predict.gpu_ms()?;
        let penalty_energy = self.run_penalty(&mut stats)?;
        self.evaluate.run()?;
        stats.gpu_ms.evaluate += self.evaluate.gpu_ms()?;
        let mut energy = {
            let s = self.read_sums()?;
            stats.gradient_norm = s[2];
            s[0] + s[1] + penalty_energy
        };
        for _ in 0..st.max_iterations {
            if st.gradient_tolerance > 0.0 && stats.gradient_norm <= st.gradient_tolerance {
                break;
            }
            self.hessian.run()?;
            stats.gpu_ms.hessian += self.hessian.gpu_ms()?;
            let solve = self.pcg.solve_resident_warm(
                st.pcg_tolerance,
                st.pcg_max_iterations,
                &st.warm_start,
            )?;
            if !solve.relative_residual.is_finite() {
                // A NaN in the Newton system would otherwise freeze the simulation silently
                // (no trial step is accepted and no vertex moves).
                return Err(crate::vk::VkError::Graph {
                    graph: "newton".into(),
                    message: format!(
                        "the Newton system at t = {t} s is not finite (PCG residual {}): \
                         NaN or infinity in the Hessian or gradient",
                        solve.relative_residual
                    ),
                });
            }
            let its = solve.iterations;
            stats.pcg_warm_iterations += solve.warm_iterations;
            stats.pcg_residual = solve.relative_residual as f64;
            stats.gpu_ms.pcg += self.pcg.last_gpu_ms();
            stats.pcg_iterations += its;
            stats.newton_iterations += 1;
            // Backtracking line search on the incremental potential.
            let mut alpha = 1.0f32;
            let mut accepted = false;
            let mut dmax = 0.0;
            while alpha > 1e-6 {
                self.alpha.write(&[alpha])?;
                self.trial.run()?;
                stats.gpu_ms.line_search += self.trial.gpu_ms()?;
                let mut penalty_energy = match &self.penalty {
                    Some(p) => {
                        let (e, ms) = p.trial()?;
                        stats.gpu_ms.line_search += ms;
                        e
                    }
                    None => 0.0,
                };
                if let Some(r) = &self.repulsion {
                    let (e, ms) = r.trial()?;
                    stats.gpu_ms.line_search += ms;
                    penalty_energy += e;
                }
                let s = self.read_sums()?;
                dmax = s[3];
                let e = s[0] + s[1] + penalty_energy;
                if e <= energy + 1e-12 * energy.abs().max(1e-12) {
                    self.accept.run()?;
                    stats.gpu_ms.line_search += self.accept.gpu_ms()?;
                    energy = e;
                    accepted = true;
                    break;
                }
                alpha *= 0.5;
            }
            stats.last_direction = dmax;
            if accepted {
                after_iteration(&self.positions)?;
            }
            if !accepted || dmax * (alpha as f64) < st.tolerance {
                break;
            }
            // Rebuild the rhs at the accepted x, re-lagging friction there when fully implicit
            // (the energy changes with the lag: read it again).
            let evaluate = if st.friction_per_iteration {
                &self.evaluate
            } else {
                &self.evaluate_lagged
            };
            let penalty_energy = self.run_penalty(&mut stats)?;
            evaluate.run()?;
            stats.gpu_ms.evaluate += evaluate.gpu_ms()?;
            let s = self.read_sums()?;
            energy = s[0] + s[1] + penalty_energy;
            stats.gradient_norm = s[2];
        }
        self.finish.run()?;
        stats.gpu_ms.finish += self.finish.gpu_ms()?;
        stats.energy = energy;
        Ok(stats)
    }

    /// Prediction and first linearisation of the next step without solving or advancing: the
    /// Newton right-hand side `−∇E` (one vec4 per vertex), the diagonal blocks of the Newton
    /// matrix (three rows per vertex) and the incremental potential E at the current positions.
    /// For checks against [`crate::cpu_reference::newton`].
    pub fn linearize(&self) -> VkResult<(Vec<[f32; 4]>, Vec<[f32; 4]>, f64)> {
        self.time_buf
            .write(&[(self.time.get() + self.settings.h) as f32])?;
        if let Some(script) = &self.script {
            script.run()?;
        }
        self.predict.run()?;
        let penalty_energy = self.run_penalty(&mut StepStats::default())?;
        self.evaluate.run()?;
        let s = self.read_sums()?;
        self.hessian.run()?;
        Ok((
            self.pcg.rhs().read()?,
            self.pcg.diag_blocks().read()?,
            s[0] + s[1] + penalty_energy,
        ))
    }

    /// Evaluates the attached penalty at the iterate (before the vector kernel reads its sums);
    /// returns its energy.
    fn run_penalty(&self, stats: &mut StepStats) -> VkResult<f64> {
        if let Some(r) = &self.repulsion {
            let (e, ms) = r.evaluate()?;
            stats.gpu_ms.evaluate += ms;
            return Ok(e);
        }
        match &self.penalty {
            Some(p) => {
                let (e, ms) = p.evaluate()?;
                stats.gpu_ms.evaluate += ms;
                Ok(e)
            }
            None => Ok(0.0),
        }
    }

    /// Adds the two-way solver's quadratic repulsion energy ½ k (d_r − d)² (two-way IPM §6.2)
    /// over `tw`'s proximity pairs to the incremental potential, k = `penalty_stiffness` m̄/h²,
    /// through the penalty sums (gradient and block-diagonal majorizer of the Gauss–Newton
    /// Hessian). Exclusive with [`NewtonStepper::attach_penalty`]. The caller keeps the graphs
    /// current with [`crate::contact::two_way::Repulsion::sync`] after every solve of `tw`.
    pub fn attach_repulsion(
        &mut self,
        ctx: &Context,
        tw: &crate::contact::two_way::TwoWay,
        distance: f64,
    ) -> VkResult<()> {
        if self.penalty_k <= 0.0 || self.penalty.is_some() {
            return Err(crate::vk::VkError::Graph {
                graph: "newton".into(),
                message: "repulsion needs penalty_stiffness > 0 and no shortest-path penalty"
                    .into(),
            });
        }
        self.repulsion = Some(crate::contact::two_way::Repulsion::new(
            ctx,
            tw,
            &self.positions,
            &self.x_trial,
            &self.penalty_accum,
            self.penalty_k,
            distance,
        )?);
        Ok(())
    }

    /// The attached two-way repulsion, if any.
    pub fn repulsion(&self) -> Option<&crate::contact::two_way::Repulsion> {
        self.repulsion.as_ref()
    }

    /// Adds the penalty energy ½ k min((p − s)·n − offset, 0)² of `recovery`'s constraint
    /// slots to the incremental potential (the shortest-path paper's Eq. 7), with k =
    /// `penalty_stiffness` m̄/h². The constraints are those of `recovery`'s latest detection:
    /// the caller detects before a step and, if it wants, between Newton iterations. The
    /// Newton matrix holds the exact penalty Hessian: its diagonal blocks k a² n nᵀ in the
    /// assembled matrix, its couplings between a constraint's vertices matrix-free in the PCG
    /// ([`Pcg::set_contact_operator`]).
    pub fn attach_penalty(
        &mut self,
        ctx: &Context,
        recovery: &crate::contact::shortest_path::ShortestPathContact,
    ) -> VkResult<()> {
        self.attach_penalty_with(ctx, recovery, true)
    }

    /// [`NewtonStepper::attach_penalty`] choosing the penalty Hessian: `couplings` the exact
    /// one, otherwise block-diagonal majorizers of it
    /// ([`crate::cpu_reference::recovery_response::Penalty`]; a step never overshoots a
    /// constraint, the PCG matrix keeps its fixed sparsity).
    pub fn attach_penalty_with(
        &mut self,
        ctx: &Context,
        recovery: &crate::contact::shortest_path::ShortestPathContact,
        couplings: bool,
    ) -> VkResult<()> {
        if self.penalty_k <= 0.0 {
            return Err(crate::vk::VkError::Graph {
                graph: "newton".into(),
                message: "a penalty needs penalty_stiffness > 0".into(),
            });
        }
        self.penalty = Some(crate::contact::shortest_path::PenaltyContact::new(
            ctx,
            recovery.constraint_slots(),
            &self.positions,
            &self.x_trial,
            &self.penalty_accum,
            recovery.settings().offset,
            self.penalty_k,
            couplings.then_some(&self.inv_mass),
        )?);
        let op = self.penalty.as_ref().and_then(|p| p.operator());
        self.pcg.set_contact_operator(ctx, op)?;
        Ok(())
    }

    /// The attached penalty contact, if any.
    pub fn penalty(&self) -> Option<&crate::contact::shortest_path::PenaltyContact> {
        self.penalty.as_ref()
    }

    /// Inverse masses (1/kg; 0 for fixed vertices), one per vertex.
    pub fn inverse_masses(&self) -> &GpuBuffer<f32> {
        &self.inv_mass
    }

    /// The per-vertex stiffness estimate of the PCG warm start from the last Hessian assembly.
    pub fn stiffness_estimate(&self) -> VkResult<Vec<f32>> {
        self.pcg.stiffness().read()
    }

    /// Replaces the colliders' positions, friction and velocities between steps (same count
    /// and kinds as at creation; positions are those at time 0, moved by `velocity · t`).
    pub fn set_colliders(&self, colliders: &[Collider]) -> VkResult<()> {
        if colliders.len() != self.settings.colliders.len() {
            return Err(crate::vk::VkError::Graph {
                graph: "newton".into(),
                message: format!(
                    "{} colliders given, the stepper was built with {}",
                    colliders.len(),
                    self.settings.colliders.len()
                ),
            });
        }
        self.colliders.write(&pack_colliders(colliders))
    }

    /// Current positions (m), one vec4 per vertex.
    pub fn positions(&self) -> &GpuBuffer<[f32; 4]> {
        &self.positions
    }

    /// Constant external force on each vertex (N), one vec4 per vertex; the host may rewrite
    /// it between steps.
    pub fn external_forces(&self) -> &GpuBuffer<[f32; 4]> {
        &self.f_ext
    }

    /// Simulated time (s): the steps taken × h.
    pub fn time(&self) -> f64 {
        self.time.get()
    }

    /// Sets the simulated time (s) that scripted motions and moving colliders read from the
    /// next step on (a rebuilt stepper continuing an earlier one).
    pub fn set_time(&self, t: f64) {
        self.time.set(t);
    }

    /// Current velocities (m/s), one vec4 per vertex.
    pub fn velocities(&self) -> &GpuBuffer<[f32; 4]> {
        &self.velocities
    }
}
