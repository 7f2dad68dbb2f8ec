//! A simulation built from a scene: the library entry point behind `supple run`. Create it from
//! a [`Scene`], advance it frame by frame, read positions back.
//!
//! Building is `model → state → stepper → contacts`: [`SimModel::from_scene`] reads the bodies,
//! [`GpuState::upload`] allocates the one set of state buffers, [`crate::stepper::build`] makes
//! the scene's time integrator (Newton–PCG implicit Euler, XPBD or symplectic Euler) over them,
//! and [`crate::contact::method`] the scene's contact method, whose handlers the stepper calls
//! at the phases of each step. Scene features a stepper or contact method does not support are
//! refused with an error naming the field rather than ignored. A frame is the scene's
//! `substeps` time steps ([`Simulation::step_frame`]).
//!
//! Build one from code with [`SimulationBuilder`], step it within a time budget with
//! [`Simulation::step_for`], and read its positions on the GPU from a host renderer with
//! [`Simulation::positions_view`] and [`Simulation::render_sync`]. Between frames, move pinned
//! vertices, replace loads, move colliders, and add or remove bodies (`control.rs`:
//! [`Simulation::set_pin_targets`], [`Simulation::set_loads`], [`Simulation::set_collider`],
//! [`Simulation::add_body`], [`Simulation::remove_body`]).

use crate::contact::{ContactFrameStats, ContactSet};
use crate::model::SimModel;
use crate::scene::{MaterialModel, Scene};
use crate::state::GpuState;
use crate::stepper::{PcgExits, StepGpuMs, StepReport, Stepper};
use crate::vk::Context;
use std::collections::BTreeMap;
use std::ops::Range;

// Library API around a simulation (engine/src/simulation/*.rs).
mod builder;
mod control;
mod divergence;
mod embed;
pub use crate::contact::StepObserver;
pub use crate::error::SimError;
pub use builder::{BudgetReport, SimulationBuilder};
pub use control::BodyRef;
pub use divergence::DIVERGED;
pub use embed::{QueueFamilyTransfer, RawBufferView, RenderSync};

/// Statistics of one frame: the stepper's, summed over the frame's time steps, and each contact
/// method's block (by name, as in report.json).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct FrameStats {
    /// Newton iterations summed over the frame's time steps (0 for other steppers).
    pub newton_iterations: u32,
    /// Newton iterations that solved with the exact tet Hessians first
    /// (`solver.hessian_projection = "on-demand"`; 0 otherwise).
    pub exact_hessian_iterations: u32,
    /// Of those, the iterations that fell back to the projected Hessians.
    pub projection_fallbacks: u32,
    /// PCG iterations summed over the frame's time steps (global solves).
    pub pcg_iterations: u32,
    /// Grouped warm-start PCG iterations summed over the frame's time steps.
    pub pcg_warm_iterations: u32,
    /// Incremental potential at the end of the last time step (J; Newton only).
    pub energy: f64,
    /// Relative residual of the last PCG solve of the frame (Newton only).
    pub pcg_residual: f64,
    /// Largest relative residual ‖r‖/‖b‖ reached by any PCG solve of the frame (Newton only):
    /// an early stop (the iteration cap) shows here.
    pub pcg_relative_residual_max: f64,
    /// The frame's global PCG solves by why they stopped: `converged`, `stagnated`,
    /// `iteration_cap`, `breakdown`, `non_finite` (Newton only).
    pub pcg_exits: PcgExits,
    /// Smallest fraction of its estimated optimum quadratic-model decrease that a global PCG
    /// solve of the frame reached (Newton only): near 0 marks a useless
    /// capped solve, near 1 a useful one.
    pub pcg_model_fraction_min: f64,
    /// Host waits for device work during the frame (`Context::counters`).
    pub host_waits: u64,
    /// Queue submissions during the frame.
    pub submits: u64,
    /// Compute dispatches submitted during the frame.
    pub dispatches: u64,
    /// Of those, the dispatches that ran: less those in gated sections that conditional
    /// rendering skipped (equal to `dispatches` without it).
    pub dispatches_executed: u64,
    /// Device memory Supple holds at the end of the frame (bytes, `Context::device_bytes`).
    pub device_bytes: u64,
    /// Largest per-vertex gradient norm at the last Newton evaluation of the frame (N).
    pub gradient_norm: f64,
    /// Newton solves after a step's first that moves of scripted vertices within the step
    /// started, summed over the frame's time steps (CCD-bounded energy terms only).
    pub script_rounds: u32,
    /// Time steps of the frame that ended with scripted vertices short of their pose.
    pub script_short_steps: u32,
    /// Largest distance of a pulled scripted vertex from its pose after a step's solves
    /// (m; before the step's last bounded move; 0 without pulled scripted vertices).
    pub script_error_max: f64,
    /// GPU milliseconds per part of the stepper, summed over the frame's time steps
    /// (whole-graph timestamps; XPBD's constraint sweeps and the symplectic step count as
    /// `evaluate`).
    pub gpu_ms: StepGpuMs,
    /// Each contact method's statistics of the frame, by name (`two_way`, `shortest_path`).
    #[serde(flatten)]
    pub contacts: BTreeMap<String, serde_json::Value>,
}

impl FrameStats {
    /// Adds one time step's report.
    pub fn add_step(&mut self, r: &StepReport) {
        self.newton_iterations += r.newton_iterations;
        self.exact_hessian_iterations += r.exact_hessian_iterations;
        self.projection_fallbacks += r.projection_fallbacks;
        self.pcg_iterations += r.pcg_iterations;
        self.pcg_warm_iterations += r.pcg_warm_iterations;
        self.energy = r.energy;
        self.pcg_residual = r.pcg_residual;
        self.pcg_relative_residual_max = self.pcg_relative_residual_max.max(r.pcg_residual_max);
        if r.pcg_exits.total() > 0 {
            self.pcg_model_fraction_min = if self.pcg_exits.total() == 0 {
                r.pcg_model_fraction_min
            } else {
                self.pcg_model_fraction_min.min(r.pcg_model_fraction_min)
            };
        }
        self.pcg_exits += r.pcg_exits;
        self.gradient_norm = r.gradient_norm;
        self.script_rounds += r.script_rounds;
        self.script_short_steps += u32::from(r.script_short);
        self.script_error_max = self.script_error_max.max(r.script_error);
        self.gpu_ms += r.gpu_ms;
    }

    /// The block of contact method `T` (its default when the simulation has no such method or
    /// the block does not parse).
    pub fn contact<T: ContactFrameStats>(&self) -> T {
        self.contacts
            .get(T::NAME)
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default()
    }
}

/// One 3-vector per model vertex (positions in m, velocities in m/s).
pub type VertexVectors = Vec<[f64; 3]>;

/// The xyz of each read-back vec4.
fn vectors(m: &[[f32; 4]]) -> VertexVectors {
    m.iter()
        .map(|p| [p[0] as f64, p[1] as f64, p[2] as f64])
        .collect()
}

/// A running simulation.
pub struct Simulation {
    model: SimModel,
    /// The state buffers (the one copy every stepper and handler binds).
    state: GpuState,
    stepper: Box<dyn Stepper>,
    contacts: ContactSet,
    substeps: u32,
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
    /// The check of every stepped frame for divergence (divergence.rs).
    divergence: divergence::DivergenceCheck,
}

/// The exported surface: all bodies' boundary triangles over the vertices they use (compacted
/// in ascending model order, stable), plus rod polylines and their widths.
struct Surface {
    triangles: Vec<[u32; 3]>,
    vertices: Vec<u32>,
    curves: Vec<Vec<u32>>,
    curve_widths: Vec<f64>,
}

impl Surface {
    fn of(model: &SimModel, scene: &Scene) -> Surface {
        let mut used = vec![u32::MAX; model.positions.len()];
        let mut vertices = Vec::new();
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
        // Rod bodies (no triangles) add their vertices too, exported as polylines.
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
                *u = vertices.len() as u32;
                vertices.push(v as u32);
            }
        }
        Surface {
            triangles: tris.iter().map(|t| t.map(|v| used[v as usize])).collect(),
            vertices,
            curves: rods
                .iter()
                .map(|(r, _)| r.clone().map(|v| used[v as usize]).collect())
                .collect(),
            curve_widths: rods.iter().map(|(_, w)| *w).collect(),
        }
    }
}

impl Simulation {
    /// Builds the model, the state, the stepper and the contact method for `scene` on `ctx`.
    pub fn new(ctx: &Context, scene: &Scene) -> Result<Simulation, SimError> {
        Self::build(ctx, scene, |_| {})
    }

    /// [`Simulation::new`], with `adjust` changing the model before anything is uploaded.
    fn build(
        ctx: &Context,
        scene: &Scene,
        adjust: impl FnOnce(&mut SimModel),
    ) -> Result<Simulation, SimError> {
        if scene.bodies.is_empty() {
            return Err(SimError::unsupported("body", "the scene has no body"));
        }
        let method = crate::contact::method(scene.collision.method);
        let mut model = SimModel::from_scene(scene)?;
        adjust(&mut model);
        let colliders = crate::contact::colliders::from_scene(scene);
        crate::stepper::check_buffer_sizes(ctx, scene, &model)?;
        let state = GpuState::upload(ctx, &model, &colliders, scene.simulation.time_step())?;
        let mut stepper = crate::stepper::build(ctx, scene, &model, &state, &method.needs(scene))?;
        method.check(scene, stepper.info())?;
        let contacts = ContactSet::new(method.build(ctx, scene, &model, &state, &mut *stepper)?);
        let surface = Surface::of(&model, scene);
        let divergence = divergence::DivergenceCheck::new(&model, stepper.info().minimises_energy);
        Ok(Simulation {
            divergence,
            control: control::Control::new(&model),
            scene: scene.clone(),
            frames: 0,
            state,
            stepper,
            contacts,
            model,
            substeps: scene.simulation.substeps,
            surface: surface.triangles,
            surface_vertices: surface.vertices,
            curves: surface.curves,
            curve_widths: surface.curve_widths,
        })
    }

    /// Advances one frame (the scene's substeps), then checks it for divergence: a non-finite
    /// position or velocity, or an inverted stable Neo-Hookean tet with an energy-minimising
    /// stepper (Newton), is a [`SimError::Solver`] of component [`DIVERGED`] naming the frame,
    /// the body and the solver state (the check reads the state back once per frame).
    pub fn step_frame(&mut self) -> Result<FrameStats, SimError> {
        let ctx = self.state.x.context();
        let before = ctx.counters();
        // A stepper queues the readback behind its last graph of the frame (its wait covers it).
        self.state.mirror.forget();
        let mut stats = FrameStats::default();
        self.stepper.steps(
            &mut self.state,
            &mut self.contacts,
            self.substeps,
            &mut |r| stats.add_step(r),
        )?;
        stats.contacts = self.contacts.take_frame_stats();
        self.frames += 1;
        self.state.mirror.sync()?;
        let work = ctx.counters() - before;
        stats.host_waits = work.host_waits;
        stats.submits = work.submits;
        stats.dispatches = work.dispatches;
        stats.dispatches_executed = work.dispatches_executed();
        stats.device_bytes = ctx.device_bytes();
        let x = self.state.mirror.positions();
        let v = self.state.mirror.velocities();
        let stepper = self.stepper.info().name;
        let time = self.state.clock.time();
        self.divergence
            .check(x, v, self.frames, time, stepper, &stats)?;
        Ok(stats)
    }

    /// Installs (or removes) an observer of the two-way collision handling: it sees the safe
    /// positions (model vertex order, m) after every batch of its steps, i.e. after every
    /// forward step with `collision.steps_per_batch = 1` — the piecewise-linear trajectory the
    /// method guarantees, for verification (consecutive frames may be joined by a path that
    /// goes around an obstacle, which their straight line does not). Fails without a contact
    /// method that has intermediate steps.
    pub fn observe_collision_steps(
        &mut self,
        observer: Option<StepObserver>,
    ) -> Result<(), SimError> {
        self.contacts.observe_steps(observer)
    }

    /// The stepper's description (name, phases, what it supports).
    pub fn stepper_info(&self) -> &crate::phase::StepperInfo {
        self.stepper.info()
    }

    fn read(&self, which: usize) -> Result<Vec<[f64; 3]>, SimError> {
        self.state.mirror.refresh()?;
        Ok(vectors(match which {
            0 => self.state.mirror.positions(),
            _ => self.state.mirror.velocities(),
        }))
    }

    /// The positions (m) and velocities (m/s) of every model vertex at the end of the last
    /// frame, as [`Simulation::step_frame`] read them back (no GPU work), or as last read
    /// back; read now when no frame was stepped since the simulation was built. Changes made
    /// by the setters since are not in them: [`Simulation::positions`] reads the state as it
    /// is.
    pub fn frame_state(&self) -> Result<(VertexVectors, VertexVectors), SimError> {
        if !self.state.mirror.is_filled() {
            self.state.mirror.refresh()?;
        }
        Ok((
            vectors(self.state.mirror.positions()),
            vectors(self.state.mirror.velocities()),
        ))
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

/// A simulation moves between threads (the Python bindings hold it behind a mutex).
const _: fn() = || {
    fn assert_send<T: Send>() {}
    assert_send::<Simulation>();
};
