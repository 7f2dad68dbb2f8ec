//! A simulation built from a scene: the library entry point behind `supple run`. Create it from
//! a [`Scene`], advance it frame by frame, read positions back. Solids, cloth and rods with fixed
//! and scripted vertices, loads and analytic colliders (with friction) run on the Newton–PCG
//! implicit Euler solver ([`crate::stepper::newton`]); symplectic Euler ([`crate::stepper::symplectic`]) is the
//! explicit baseline (no scripted motion, loads, friction or non-plane colliders); XPBD
//! ([`crate::stepper::xpbd`]) runs stable Neo-Hookean and corotated solids, cloth and rods with scripted
//! motion, loads and every analytic collider; both run the shortest-path collision handling of
//! [`crate::contact::shortest_path`] (XPBD constraints, Newton penalty). Scene features a solver does not support (different solid models in one
//! Newton scene, surface collision methods on the wrong solver) are refused with an error
//! naming the field rather than ignored.
//!
//! Build one from code with [`SimulationBuilder`], step it within a time budget with
//! [`Simulation::step_for`], and read its positions on the GPU from a host renderer with
//! [`Simulation::positions_view`] and [`Simulation::render_sync`]. Between frames, move pinned
//! vertices, replace loads, move colliders, and add or remove bodies (`control.rs`:
//! [`Simulation::set_pin_targets`], [`Simulation::set_loads`], [`Simulation::set_collider`],
//! [`Simulation::add_body`], [`Simulation::remove_body`]).

use crate::contact::colliders::{self, Shape};
use crate::fem::{ElementModel, TetElements};
use crate::linear::WarmStart;
use crate::model::SimModel;
use crate::scene::{MaterialModel, Scene, SceneError, SolverKind};
use crate::stepper::newton::{NewtonSettings, NewtonStepper};
use crate::stepper::symplectic::{SymplecticEuler, SymplecticEulerParams};
use crate::vk::{BufferUsage, CompileOptions, CompiledGraph, Context, GpuBuffer, Graph, VkError};
use std::ops::Range;

// Library API around a simulation (engine/src/simulation/*.rs).
mod builder;
mod control;
mod embed;
pub use builder::{BudgetReport, SimulationBuilder};
pub use control::BodyRef;
pub use embed::{QueueFamilyTransfer, RawBufferView, RenderSync};

/// Why a simulation could not be built or stepped.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The scene is invalid.
    #[error("{0}")]
    Scene(#[from] SceneError),
    /// A Vulkan failure.
    #[error("{0}")]
    Vk(#[from] VkError),
    /// A scene feature this version cannot simulate yet.
    #[error("{field}: {message}")]
    Unsupported {
        /// The scene field.
        field: String,
        /// What is not supported.
        message: String,
    },
    /// An argument of a call between steps is invalid (index out of range, wrong length,
    /// non-finite value).
    #[error("{argument}: {message}")]
    InvalidArgument {
        /// The argument (e.g. `targets[3]`, `collider`).
        argument: String,
        /// What is wrong with it.
        message: String,
    },
}

/// Statistics of one frame.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct FrameStats {
    /// Newton iterations summed over the frame's time steps (0 for symplectic Euler).
    pub newton_iterations: u32,
    /// PCG iterations summed over the frame's time steps (global solves).
    pub pcg_iterations: u32,
    /// Grouped warm-start PCG iterations summed over the frame's time steps.
    pub pcg_warm_iterations: u32,
    /// Incremental potential at the end of the last time step (J; Newton only).
    pub energy: f64,
    /// Relative residual of the last PCG solve of the frame (Newton only).
    pub pcg_residual: f64,
    /// Largest per-vertex gradient norm at the last Newton evaluation of the frame (N).
    pub gradient_norm: f64,
    /// GPU milliseconds per part of the solver, summed over the frame's time steps (whole-graph
    /// timestamps; the symplectic frame graph and XPBD's fused step graphs count as `evaluate`).
    pub gpu_ms: crate::stepper::newton::StepGpuMs,
    /// Surface collision handling (zeros without `collision.method`).
    pub collision: crate::contact::two_way::CollisionFrameStats,
    /// Shortest-path collision handling (zeros unless `collision.method = "shortest-path"`).
    pub recovery: crate::contact::shortest_path::ShortestPathFrameStats,
}

/// The two-way solver bound to the Newton positions: `load` copies them into its target,
/// `store` copies its safe positions back.
struct CollisionHandler {
    solver: crate::contact::two_way::TwoWay,
    load: CompiledGraph,
    store: CompiledGraph,
    observer: Option<StepObserver>,
}

/// Called with the two-way solver's safe positions after every batch of its steps
/// ([`Simulation::observe_collision_steps`]).
pub type StepObserver = Box<dyn FnMut(&[[f32; 4]])>;

impl CollisionHandler {
    fn new(
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        positions: &GpuBuffer<[f32; 4]>,
    ) -> Result<Self, SimError> {
        let n = model.positions.len();
        let tris: Vec<[u32; 3]> = model
            .bodies
            .iter()
            .flat_map(|b| b.surface.iter().copied())
            .collect();
        let mut body = vec![0u32; n];
        for (k, b) in model.bodies.iter().enumerate() {
            for v in b.vertices.clone() {
                body[v as usize] = k as u32;
            }
        }
        let inv_w: Vec<f32> = (0..n)
            .map(|i| {
                let scripted = model.vertex_motion.get(i).is_some_and(|&m| m != u32::MAX);
                if model.inv_mass[i] == 0.0 || scripted {
                    0.0
                } else {
                    1.0
                }
            })
            .collect();
        let field = |m: String| SimError::Unsupported {
            field: "collision".into(),
            message: m,
        };
        // Rod centrelines are collision curves: their segments are extra edges.
        let curves = model.curve_segments();
        let mesh =
            crate::proximity::ProximityMesh::with_curves(tris, &curves, body).map_err(field)?;
        let solver = crate::contact::two_way::TwoWay::new(
            ctx,
            mesh,
            &model.positions,
            &inv_w,
            crate::contact::two_way::TwoWaySettings::from_scene(&scene.collision),
        )
        .map_err(field)?;
        let mut solver = solver;
        solver
            .set_friction(scene.collision.friction)
            .map_err(field)?;
        let mut g = Graph::new("collision.load_target");
        g.copy("collision.load_target", positions, solver.target());
        let load = g.compile(ctx, CompileOptions::default())?;
        let mut g = Graph::new("collision.store_positions");
        g.copy("collision.store_positions", solver.positions(), positions);
        let store = g.compile(ctx, CompileOptions::default())?;
        Ok(CollisionHandler {
            solver,
            load,
            store,
            observer: None,
        })
    }

    /// Runs the two-way method from the last safe state toward the Newton positions and writes
    /// the result back.
    fn handle(&mut self) -> Result<crate::contact::two_way::TwoWayReport, VkError> {
        self.load.run()?;
        let r = match self.observer.as_mut() {
            Some(f) => self.solver.solve_observed(|_, x| f(x)),
            None => self.solver.solve(),
        }
        .map_err(|m| VkError::Graph {
            graph: "two_way".into(),
            message: m,
        })?;
        self.store.run()?;
        Ok(r)
    }
}

enum Stepper {
    Newton(Box<NewtonStepper>),
    Xpbd(Box<crate::stepper::xpbd::XpbdStepper>),
    Symplectic {
        positions: GpuBuffer<[f32; 4]>,
        velocities: GpuBuffer<[f32; 4]>,
        frame: CompiledGraph,
        _elements: Box<TetElements>,
    },
}

/// A running simulation.
pub struct Simulation {
    model: SimModel,
    /// Host-visible copies of positions and velocities, filled by `readback` (no per-frame
    /// staging allocation on discrete GPUs).
    readback: [GpuBuffer<[f32; 4]>; 2],
    readback_graph: CompiledGraph,
    substeps: u32,
    stepper: Stepper,
    collision: Option<CollisionHandler>,
    recovery: Option<crate::contact::shortest_path::ShortestPathContact>,
    /// Simulated time (s) from which `recovery` acts.
    recovery_start: f64,
    /// Detect again before every constraint iteration after the first.
    recovery_redetect: bool,
    surface: Vec<[u32; 3]>,
    surface_vertices: Vec<u32>,
    /// Rod polylines over `surface_vertices`, and each one's cross-section diameter (m).
    curves: Vec<Vec<u32>>,
    curve_widths: Vec<f64>,
    /// The scene as simulated now (bodies added or removed, colliders moved, loads replaced).
    scene: Scene,
    /// Frames stepped.
    frames: u64,
    /// Pinned targets and the upload paths of the between-steps setters (control.rs).
    control: control::Control,
}

/// A detection's result as a graph error when it failed or its traversal stacks overflowed.
fn checked_detection(
    d: Result<
        crate::contact::shortest_path::Detection,
        crate::contact::shortest_path::ShortestPathError,
    >,
) -> Result<crate::contact::shortest_path::Detection, VkError> {
    let err = |e: crate::contact::shortest_path::ShortestPathError| VkError::Graph {
        graph: "recovery".into(),
        message: e.to_string(),
    };
    let d = d.map_err(err)?;
    if d.counters.overflows > 0 {
        return Err(err(
            crate::contact::shortest_path::ShortestPathError::Overflow(d.counters.overflows),
        ));
    }
    Ok(d)
}

fn unsupported(field: String, message: &str) -> SimError {
    SimError::Unsupported {
        field,
        message: message.to_string(),
    }
}

impl Simulation {
    /// Builds the model and the solver graphs for `scene` on `ctx`.
    pub fn new(ctx: &Context, scene: &Scene) -> Result<Simulation, SimError> {
        Self::build(ctx, scene, |_| {})
    }

    /// [`Simulation::new`], with `adjust` changing the model before the solver is built.
    fn build(
        ctx: &Context,
        scene: &Scene,
        adjust: impl FnOnce(&mut SimModel),
    ) -> Result<Simulation, SimError> {
        let symplectic = scene.simulation.solver == SolverKind::SymplecticEuler;
        let xpbd = scene.simulation.solver == SolverKind::Xpbd;
        for (i, b) in scene.bodies.iter().enumerate() {
            if symplectic && !b.motion.is_empty() {
                return Err(unsupported(
                    format!("body[{i}].motion"),
                    "scripted motion needs the newton or xpbd solver",
                ));
            }
            if symplectic && !b.force.is_empty() {
                return Err(unsupported(
                    format!("body[{i}].force"),
                    "external forces need the newton or xpbd solver",
                ));
            }
            if xpbd && b.material.model == MaterialModel::Stvk {
                return Err(unsupported(
                    format!("body[{i}].material.model"),
                    "the xpbd solver has stable Neo-Hookean and corotated tet constraints only",
                ));
            }
        }
        if xpbd && scene.collision.method == crate::scene::CollisionMethod::TwoWay {
            return Err(unsupported(
                "collision.method".into(),
                "two-way collision handling needs the newton solver",
            ));
        }
        if scene.collision.method == crate::scene::CollisionMethod::ShortestPath {
            if symplectic {
                return Err(unsupported(
                    "collision.method".into(),
                    "shortest-path collision handling needs the xpbd or newton solver",
                ));
            }
            if !xpbd
                && scene.collision.detection == crate::contact::shortest_path::DetectionMode::Ccd
            {
                return Err(unsupported(
                    "collision.detection".into(),
                    "the newton solver's shortest-path penalty uses discrete detection \
                     (\"dcd\" or \"hybrid\"); \"ccd\" needs the xpbd solver",
                ));
            }
        }
        let colliders = colliders::from_scene(scene);
        let ground = colliders.iter().find_map(|c| match c.shape {
            Shape::Plane { normal, offset } => Some((normal, offset)),
            _ => None,
        });
        if symplectic {
            for (i, c) in colliders.iter().enumerate() {
                if !matches!(c.shape, Shape::Plane { .. })
                    || i > 0
                    || c.friction != 0.0
                    || c.velocity != [0.0; 3]
                {
                    return Err(unsupported(
                        format!("collider[{i}]"),
                        "symplectic Euler supports one static, frictionless ground plane",
                    ));
                }
            }
        }
        // Newton: solids share one constitutive model per simulation (a specialisation
        // constant). XPBD picks the tet constraint per body.
        let mut kind = None;
        for (i, b) in scene.bodies.iter().enumerate().filter(|_| !xpbd) {
            let k = match b.material.model {
                MaterialModel::StableNeoHookean => ElementModel::StableNeoHookean,
                MaterialModel::Stvk => ElementModel::StVenantKirchhoff,
                MaterialModel::Corotated => ElementModel::CorotatedLinear,
                MaterialModel::Cloth | MaterialModel::Rod => continue,
            };
            if kind.is_some_and(|x| x != k) {
                return Err(unsupported(
                    format!("body[{i}].material.model"),
                    "all solid bodies must use the same material model for now",
                ));
            }
            kind = Some(k);
        }
        if scene.bodies.is_empty() {
            return Err(unsupported("body".into(), "the scene has no body"));
        }
        let kind = kind.unwrap_or(ElementModel::StableNeoHookean);
        let mut model = SimModel::from_scene(scene)?;
        adjust(&mut model);
        let sim = &scene.simulation;
        let h = sim.time_step();
        let mut stepper = match sim.solver {
            SolverKind::Newton => Stepper::Newton(Box::new(NewtonStepper::new(
                ctx,
                &model,
                kind,
                NewtonSettings {
                    h,
                    gravity: sim.gravity,
                    max_iterations: scene.solver.newton_max_iterations,
                    tolerance: scene.solver.newton_tolerance,
                    gradient_tolerance: scene.solver.newton_gradient_tolerance,
                    pcg_tolerance: scene.solver.pcg_tolerance as f32,
                    pcg_max_iterations: scene.solver.pcg_max_iterations,
                    colliders,
                    contact_stiffness: 1000.0,
                    friction_slip: scene.solver.friction_slip_velocity * h,
                    warm_start: WarmStart {
                        enabled: scene.solver.stiffness_group_warm_start,
                        max_iterations: scene.solver.warm_start_max_iterations,
                        tolerance: scene.solver.warm_start_tolerance as f32,
                    },
                    pcg_stagnation_window: scene.solver.pcg_stagnation_window,
                    friction_per_iteration: scene.solver.friction_per_iteration,
                    penalty_stiffness: match scene.collision.method {
                        crate::scene::CollisionMethod::ShortestPath => {
                            scene.collision.penalty_stiffness
                        }
                        // The two-way repulsion energy reuses the penalty sums.
                        crate::scene::CollisionMethod::TwoWay => {
                            scene.collision.repulsion_stiffness
                        }
                        _ => 0.0,
                    },
                },
            )?)),
            SolverKind::Xpbd => Stepper::Xpbd(Box::new(crate::stepper::xpbd::XpbdStepper::new(
                ctx,
                &model,
                crate::stepper::xpbd::XpbdSettings {
                    h,
                    gravity: sim.gravity,
                    substeps: scene.xpbd.substeps,
                    iterations: scene.xpbd.iterations,
                    damping: scene.xpbd.damping,
                    tet_solve: scene.xpbd.tet_solve,
                    colliders,
                },
            )?)),
            SolverKind::SymplecticEuler => {
                let f4 = crate::math::vec4s;
                let positions =
                    ctx.upload_buffer("sim.x", &f4(&model.positions), BufferUsage::STORAGE)?;
                let velocities =
                    ctx.upload_buffer("sim.v", &f4(&model.velocities), BufferUsage::STORAGE)?;
                let w: Vec<f32> = model.inv_mass.iter().map(|&w| w as f32).collect();
                let inv_mass = ctx.upload_buffer("sim.inv_mass", &w, BufferUsage::STORAGE)?;
                let elements = Box::new(TetElements::with_thin(
                    ctx,
                    &model.positions,
                    &model.tets,
                    &model.tet_lame,
                    kind,
                    &model.thin_elements,
                )?);
                let plane = crate::math::plane_vec4(ground);
                let params = SymplecticEulerParams {
                    gravity: crate::math::vec4(sim.gravity),
                    plane,
                    n: model.positions.len() as u32,
                    h: h as f32,
                    _pad: [0; 2],
                };
                let mut g = Graph::new("sim.symplectic_frame");
                for _ in 0..sim.substeps {
                    elements.record_gradient(&mut g, &positions);
                    SymplecticEuler.record(
                        &mut g,
                        &positions,
                        &velocities,
                        &inv_mass,
                        elements.vertex_gradient(),
                        &params,
                    );
                }
                let frame = g.compile(
                    ctx,
                    CompileOptions {
                        graph_timestamps: true,
                        ..Default::default()
                    },
                )?;
                Stepper::Symplectic {
                    positions,
                    velocities,
                    frame,
                    _elements: elements,
                }
            }
        };
        // One surface over all bodies, vertices compacted in ascending model order (stable).
        // Rod bodies (no triangles) add their vertices too, exported as polylines.
        let mut used = vec![u32::MAX; model.positions.len()];
        let mut surface_vertices = Vec::new();
        let tris: Vec<[u32; 3]> = model
            .bodies
            .iter()
            .flat_map(|b| b.surface.iter().copied())
            .collect();
        for t in &tris {
            for &v in t {
                used[v as usize] = 0;
            }
        }
        let rods: Vec<(Range<u32>, f64)> = model
            .bodies
            .iter()
            .zip(&scene.bodies)
            .filter(|(b, _)| b.model == MaterialModel::Rod && b.vertices.len() >= 2)
            .map(|(b, s)| (b.vertices.clone(), 2.0 * s.material.radius.unwrap_or(0.0)))
            .collect();
        for (r, _) in &rods {
            for v in r.clone() {
                used[v as usize] = 0;
            }
        }
        for (v, u) in used.iter_mut().enumerate() {
            if *u == 0 {
                *u = surface_vertices.len() as u32;
                surface_vertices.push(v as u32);
            }
        }
        let surface = tris.iter().map(|t| t.map(|v| used[v as usize])).collect();
        let curves = rods
            .iter()
            .map(|(r, _)| r.clone().map(|v| used[v as usize]).collect())
            .collect();
        let curve_widths = rods.iter().map(|(_, w)| *w).collect();
        let n = model.positions.len();
        let readback = [
            ctx.create_buffer::<[f32; 4]>("sim.readback.x", n, BufferUsage::HOST_READ)?,
            ctx.create_buffer::<[f32; 4]>("sim.readback.v", n, BufferUsage::HOST_READ)?,
        ];
        let (x, v) = match &stepper {
            Stepper::Newton(s) => (s.positions(), s.velocities()),
            Stepper::Xpbd(s) => (s.positions(), s.velocities()),
            Stepper::Symplectic {
                positions,
                velocities,
                ..
            } => (positions, velocities),
        };
        let mut g = Graph::new("sim.readback");
        g.copy("readback.positions", x, &readback[0]);
        g.copy("readback.velocities", v, &readback[1]);
        let readback_graph = g.compile(ctx, CompileOptions::default())?;
        let recovery = if scene.collision.method == crate::scene::CollisionMethod::ShortestPath {
            let mesh = crate::mesh::TetMesh {
                positions: model.positions.clone(),
                tets: model.tets.clone(),
            };
            if mesh.tets.is_empty() {
                return Err(unsupported(
                    "collision.method".into(),
                    "shortest-path collision handling needs tet bodies",
                ));
            }
            let mut settings =
                crate::contact::shortest_path::ShortestPathSettings::from_scene(&scene.collision);
            // Newton: discrete detection at the iterate, answers as penalty energies.
            let (x, prev, inv_mass) = match &stepper {
                Stepper::Xpbd(s) => (s.positions(), s.previous_positions(), s.inverse_masses()),
                Stepper::Newton(s) => {
                    settings.detection = crate::contact::shortest_path::DetectionMode::Dcd;
                    (s.positions(), s.positions(), s.inverse_masses())
                }
                Stepper::Symplectic { .. } => {
                    return Err(unsupported(
                        "collision.method".into(),
                        "shortest-path collision handling needs the xpbd or newton solver",
                    ))
                }
            };
            let r = crate::contact::shortest_path::ShortestPathContact::new(
                ctx, &mesh, x, prev, inv_mass, settings,
            )
            .map_err(|e| unsupported("collision".into(), &e.to_string()))?;
            if let Stepper::Newton(s) = &mut stepper {
                s.attach_penalty(ctx, &r)?;
            }
            Some(r)
        } else {
            None
        };
        let collision = match (&stepper, scene.collision.method) {
            (_, crate::scene::CollisionMethod::None) => None,
            (_, crate::scene::CollisionMethod::ShortestPath) => None,
            (Stepper::Newton(s), crate::scene::CollisionMethod::TwoWay) => {
                Some(CollisionHandler::new(ctx, scene, &model, s.positions())?)
            }
            (Stepper::Symplectic { .. } | Stepper::Xpbd(_), _) => {
                return Err(unsupported(
                    "collision.method".into(),
                    "surface collision handling needs the newton solver",
                ))
            }
        };
        if let (Stepper::Newton(s), Some(c)) = (&mut stepper, &collision) {
            if scene.collision.repulsion_stiffness > 0.0 {
                s.attach_repulsion(ctx, &c.solver, scene.collision.repulsion_distance())?;
            }
        }
        Ok(Simulation {
            control: control::Control::new(&model),
            scene: scene.clone(),
            frames: 0,
            collision,
            recovery,
            recovery_start: scene.collision.start_time,
            recovery_redetect: scene.collision.detect_every_iteration,
            readback,
            readback_graph,
            model,
            substeps: sim.substeps,
            stepper,
            surface,
            surface_vertices,
            curves,
            curve_widths,
        })
    }

    /// Advances one frame (the scene's substeps).
    pub fn step_frame(&mut self) -> Result<FrameStats, SimError> {
        let mut stats = FrameStats::default();
        match &mut self.stepper {
            Stepper::Xpbd(s) => {
                for _ in 0..self.substeps {
                    let active = s.time() + 1e-9 >= self.recovery_start;
                    let redetect = self.recovery_redetect;
                    if let Some(r) = self.recovery.as_mut().filter(|_| active) {
                        let rs = &mut stats.recovery;
                        let err =
                            |e: crate::contact::shortest_path::ShortestPathError| VkError::Graph {
                                graph: "recovery".into(),
                                message: e.to_string(),
                            };
                        let mode = r.settings().detection;
                        let iterations = s.settings().iterations;
                        let st = s.step_with(&mut |phase| {
                            use crate::contact::shortest_path::DetectionMode;
                            match phase {
                                crate::stepper::xpbd::XpbdPhase::Predicted => {
                                    // Hybrid: DCD of the start of the substep (what earlier
                                    // substeps left intersecting); DCD only: of the prediction.
                                    if mode.dcd() {
                                        rs.add_detection(&checked_detection(r.detect())?);
                                    }
                                    if let Some(c) = r.detect_ccd(true).map_err(err)? {
                                        rs.add_ccd(&c);
                                    }
                                }
                                crate::stepper::xpbd::XpbdPhase::Iteration(k) => {
                                    if k > 0 && redetect {
                                        if mode == DetectionMode::Dcd {
                                            let d = r.redetect().map_err(err)?;
                                            rs.add_detection(&d);
                                        } else if let Some(c) = r.detect_ccd(false).map_err(err)? {
                                            rs.add_ccd(&c);
                                        }
                                    }
                                    rs.ms_response += r.respond().map_err(err)?;
                                    if k + 1 == iterations {
                                        if let Some(f) = r.ccd_failsafe().map_err(err)? {
                                            rs.add_failsafe(&f);
                                        }
                                    }
                                }
                            }
                            Ok(())
                        })?;
                        let ms = st.gpu_ms.total();
                        stats.recovery.ms_xpbd += ms;
                        stats.gpu_ms.evaluate += ms;
                    } else {
                        stats.gpu_ms.evaluate += s.step()?.gpu_ms.total();
                    }
                }
            }
            Stepper::Newton(s) => {
                for _ in 0..self.substeps {
                    let collision = &mut self.collision;
                    let cs = &mut stats.collision;
                    let mut step_steps = 0;
                    // Shortest-path penalty: detect at the start of the step (and after every
                    // accepted Newton iteration with detect_every_iteration).
                    let active = s.time() + 1e-9 >= self.recovery_start;
                    let redetect = self.recovery_redetect && active;
                    let recovery = self.recovery.as_ref();
                    let rs = &mut stats.recovery;
                    if let (Some(r), Some(p)) = (recovery, s.penalty()) {
                        p.set_active(active)?;
                        if active {
                            rs.add_detection(&checked_detection(r.detect())?);
                        }
                    }
                    let repulsion = s.repulsion();
                    let st = s.step_with(&mut |_| {
                        if let Some(c) = collision.as_mut() {
                            let r = c.handle()?;
                            step_steps += r.steps;
                            cs.add_solve(&r);
                            // A regrown pair workspace: re-record the repulsion graphs.
                            if let Some(rep) = repulsion {
                                rep.sync(&c.solver)?;
                            }
                        }
                        if let Some(r) = recovery.filter(|_| redetect) {
                            rs.add_detection(&checked_detection(r.redetect())?);
                        }
                        Ok(())
                    })?;
                    if self.collision.is_some() {
                        stats.collision.time_steps += 1;
                        stats.collision.max_steps_per_time_step =
                            stats.collision.max_steps_per_time_step.max(step_steps);
                    }
                    stats.newton_iterations += st.newton_iterations;
                    stats.pcg_iterations += st.pcg_iterations;
                    stats.pcg_warm_iterations += st.pcg_warm_iterations;
                    stats.energy = st.energy;
                    stats.pcg_residual = st.pcg_residual;
                    stats.gradient_norm = st.gradient_norm;
                    stats.gpu_ms += st.gpu_ms;
                }
            }
            Stepper::Symplectic { frame, .. } => {
                frame.run()?;
                stats.gpu_ms.evaluate += frame.gpu_ms()?;
            }
        }
        self.frames += 1;
        Ok(stats)
    }

    fn read(&self, which: usize) -> Result<Vec<[f64; 3]>, SimError> {
        self.readback_graph.run()?;
        let m = self.readback[which].mapped().unwrap_or(&[]);
        Ok(m.iter()
            .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
            .collect())
    }

    /// Installs (or removes) an observer of the two-way collision handling: it sees the safe
    /// positions (model vertex order, m) after every batch of steps, i.e. after every forward
    /// step with `collision.steps_per_batch = 1` — the piecewise-linear trajectory the method
    /// guarantees, for verification (consecutive frames may be joined by a path that goes around
    /// an obstacle, which their straight line does not). Fails without two-way collision.
    pub fn observe_collision_steps(
        &mut self,
        observer: Option<StepObserver>,
    ) -> Result<(), SimError> {
        let c = self
            .collision
            .as_mut()
            .ok_or_else(|| SimError::InvalidArgument {
                argument: "observer".into(),
                message: "the scene has no two-way collision handling".into(),
            })?;
        c.observer = observer;
        Ok(())
    }

    /// Reads the positions of every model vertex (m).
    pub fn positions(&self) -> Result<Vec<[f64; 3]>, SimError> {
        self.read(0)
    }

    /// Reads the velocities of every model vertex (m/s).
    pub fn velocities(&self) -> Result<Vec<[f64; 3]>, SimError> {
        self.read(1)
    }

    /// The model (rest state, masses, tets, bodies).
    pub fn model(&self) -> &SimModel {
        &self.model
    }

    /// All bodies' boundary surfaces as one triangle list over [`Simulation::surface_vertices`].
    pub fn surface(&self) -> &[[u32; 3]] {
        &self.surface
    }

    /// The model vertex of each surface vertex (ascending; the same every frame).
    pub fn surface_vertices(&self) -> &[u32] {
        &self.surface_vertices
    }

    /// Every rod body's polyline (its vertices in order) as indices into
    /// [`Simulation::surface_vertices`], so frame exports carry rods with the surface positions.
    pub fn curves(&self) -> &[Vec<u32>] {
        &self.curves
    }

    /// Cross-section diameter (m) of each of [`Simulation::curves`].
    pub fn curve_widths(&self) -> &[f64] {
        &self.curve_widths
    }

    /// Smallest `det F` over all tets at `positions` (1 at rest; ≤ 0 means an inverted tet).
    pub fn min_volume_ratio(&self, positions: &[[f64; 3]]) -> f64 {
        use crate::fem::rest::TetRest;
        use nalgebra::Vector3;
        self.model
            .tets
            .iter()
            .filter_map(|t| {
                let rest =
                    TetRest::new(&t.map(|v| Vector3::from(self.model.positions[v as usize])))?;
                Some(
                    rest.deformation_gradient(&t.map(|v| Vector3::from(positions[v as usize])))
                        .determinant(),
                )
            })
            .fold(f64::INFINITY, f64::min)
    }
}
