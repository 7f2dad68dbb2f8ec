//! PROX as a contact plug-in (`collision.method = "prox"`): at [`Phase::Velocities`] of a
//! symplectic Euler step (velocities u′ after the free update, positions still xᵗ) the contacts
//! at xᵗ are found (`"sdf"`: RAINBOW's grids on the positions read back; `"pairs"`: Supple's
//! proximity search on the device), the contact problem is solved on the state's velocities in
//! place (u = u′ + W Jᵀ λ) and the stepper moves x += h u. In `"safe"` mode the two-way
//! method's conservative forward steps then limit that position update per vertex
//! ([`TwoWayHandler`] run from the last safe state toward the stepper's positions at
//! [`Phase::Finished`], as it does after a Newton iterate), so every frame stays
//! intersection-free; in `"faithful"` mode positions are not limited and the largest
//! penetration (−min gap of the contacts) is logged.

use super::generation::{SdfBody, SdfContactGenerator};
use super::model::Contact;
use super::settings::{ContactSource, PenetrationMode, ProxSettings};
use super::solver::{ProxSolveReport, ProxSolver, StepperBuffers};
use crate::contact::two_way::handler::TwoWayHandler;
use crate::contact::{ContactFrameStats, ContactHandler, ContactMethod};
use crate::error::SimError;
use crate::math::Vec3;
use crate::model::SimModel;
use crate::phase::{ContactHost, Phase, Phases, StepperInfo};
use crate::proximity::{ProximityMesh, ProximityOptions, ProximitySearch};
use crate::scene::Scene;
use crate::state::GpuState;
use crate::vk::{BufferUsage, CompileOptions, CompiledGraph, Context, GpuBuffer, Graph};
use std::time::Instant;

/// The PROX method.
pub struct ProxMethod;

fn failed(m: impl std::fmt::Display) -> SimError {
    SimError::solver("prox", m.to_string())
}

impl ContactMethod for ProxMethod {
    fn name(&self) -> &'static str {
        "prox"
    }

    fn check(&self, _scene: &Scene, stepper: &StepperInfo) -> Result<(), SimError> {
        if !stepper.phases.contains(Phases::VELOCITIES) {
            return Err(SimError::unsupported(
                "simulation.solver",
                format!(
                    "collision.method = \"prox\" needs a stepper with a velocity phase \
                     (symplectic-euler), not {}",
                    stepper.name
                ),
            ));
        }
        Ok(())
    }

    fn build(
        &self,
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        state: &GpuState,
        _stepper: &mut dyn ContactHost,
    ) -> Result<Vec<Box<dyn ContactHandler>>, SimError> {
        Ok(vec![Box::new(ProxHandler::new(ctx, scene, model, state)?)])
    }
}

/// One PROX solve as report.json shows it (one per time step).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProxStepStats {
    /// Contacts.
    pub contacts: u32,
    /// Colors of the contact graph (colored scheme; 0 otherwise).
    pub colors: u32,
    /// Sweeps.
    pub sweeps: u32,
    /// Rejected sweeps (rollbacks).
    pub rollbacks: u32,
    /// Merit of the last sweep (N·s).
    pub merit: f32,
    /// Natural-map residual of the impulses (N·s).
    pub residual: f32,
    /// Why the solve stopped (`absolute`, `relative`, `max-iterations`; `none` without contacts).
    pub exit: String,
    /// Dispatches of the solve.
    pub dispatches: u32,
    /// Wall milliseconds of the solve.
    pub ms: f64,
    /// Wall milliseconds of the contact generation (with the readback of the positions).
    pub generation_ms: f64,
    /// Largest penetration of the contacts (m; faithful mode with `"sdf"` contacts only).
    pub max_penetration: Option<f64>,
}

/// PROX statistics of one frame (block `prox` of report.json).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProxFrameStats {
    /// Scheme (`prox.scheme`).
    pub scheme: String,
    /// Time steps of the frame.
    pub time_steps: u32,
    /// Most contacts of a step.
    pub max_contacts: u32,
    /// Sweeps summed over the frame.
    pub sweeps: u32,
    /// Rollbacks summed over the frame.
    pub rollbacks: u32,
    /// Largest natural-map residual of a solve (N·s).
    pub max_residual: f32,
    /// Dispatches summed over the frame.
    pub dispatches: u32,
    /// Milliseconds of the solves summed over the frame.
    pub ms: f64,
    /// Largest penetration of the frame (m; faithful mode with `"sdf"` contacts).
    pub max_penetration: Option<f64>,
    /// Every step's solve.
    pub steps: Vec<ProxStepStats>,
    /// Safe mode: the two-way method's statistics of its position limiting.
    pub safe: Option<serde_json::Value>,
}

impl ContactFrameStats for ProxFrameStats {
    const NAME: &'static str = "prox";
}

/// Where the contacts of a step come from.
enum Source {
    /// RAINBOW's generation on the host (positions read back every step).
    Sdf(Box<SdfContactGenerator>),
    /// Supple's proximity search on the state's positions (copied on the device).
    Pairs {
        search: Box<ProximitySearch>,
        load: Box<CompiledGraph>,
    },
}

/// PROX bound to one simulation.
pub struct ProxHandler {
    settings: ProxSettings,
    solver: ProxSolver,
    source: Source,
    /// Copies the velocities at the step start into `_start_velocity` (restitution only).
    save_start: Option<CompiledGraph>,
    /// Kept alive for the solver's graphs.
    _start_velocity: GpuBuffer<[f32; 4]>,
    /// Safe mode: the position limiter.
    safe: Option<TwoWayHandler>,
    stats: ProxFrameStats,
}

/// RAINBOW's grids of every tet body (model vertex numbering); refuses bodies without tets.
fn sdf_bodies(scene: &Scene, model: &SimModel, s: &ProxSettings) -> Result<Vec<SdfBody>, SimError> {
    let mut bodies = Vec::new();
    for (k, b) in model.bodies.iter().enumerate() {
        if b.tets.is_empty() {
            let name = scene.bodies.get(k).map_or(b.name.as_str(), |s| &s.name);
            return Err(SimError::unsupported(
                "prox.contacts",
                format!("\"sdf\" contacts need tet bodies; body {name} has none (use \"pairs\")"),
            ));
        }
        let first = b.vertices.start;
        let rest: Vec<Vec3> = model.positions[b.vertices.start as usize..b.vertices.end as usize]
            .iter()
            .map(|p| Vec3::from(*p))
            .collect();
        let tets: Vec<[u32; 4]> = model.tets[b.tets.start as usize..b.tets.end as usize]
            .iter()
            .map(|t| t.map(|i| i - first))
            .collect();
        let body = SdfBody::new(first, rest, tets, &s.sdf).map_err(|e| {
            SimError::unsupported("prox.sdf_resolution", format!("body {}: {e}", b.name))
        })?;
        bodies.push(body);
    }
    Ok(bodies)
}

/// Supple's proximity search over every body's surface, between bodies only.
fn pair_search(
    ctx: &Context,
    model: &SimModel,
    state: &GpuState,
    s: &ProxSettings,
) -> Result<Source, SimError> {
    let n = model.positions.len();
    let tris = model.surface_triangles();
    let body = model.vertex_bodies();
    let field = |m: String| SimError::unsupported("prox.contacts", m);
    let mesh = ProximityMesh::new(tris, body).map_err(field)?;
    let mut opts = ProximityOptions::new(s.pair_distance);
    opts.filter.within_body = false;
    let search = ProximitySearch::new(ctx, mesh, &model.positions, opts).map_err(field)?;
    let mut g = Graph::new("prox.load_positions");
    g.copy(
        "prox.load_positions",
        &state.x,
        search.positions().slice(0..n),
    );
    let load = g.compile(ctx, CompileOptions::default())?;
    Ok(Source::Pairs {
        search: Box::new(search),
        load: Box::new(load),
    })
}

impl ProxHandler {
    /// PROX over the state's velocities with the scene's `[prox]` settings.
    pub fn new(
        ctx: &Context,
        scene: &Scene,
        model: &SimModel,
        state: &GpuState,
    ) -> Result<ProxHandler, SimError> {
        let settings = ProxSettings::from_scene(&scene.prox);
        settings
            .validate()
            .map_err(|e| SimError::unsupported(e.field, e.message))?;
        let n = model.positions.len().max(1);
        let start_velocity =
            ctx.create_buffer::<[f32; 4]>("prox.start_velocity", n, BufferUsage::STORAGE)?;
        let save_start = if settings.restitution > 0.0 {
            let mut g = Graph::new("prox.save_start_velocity");
            g.copy("prox.save_start_velocity", &state.v, &start_velocity);
            Some(g.compile(ctx, CompileOptions::default())?)
        } else {
            None
        };
        let solver = ProxSolver::new(
            ctx,
            settings,
            64,
            &StepperBuffers {
                inv_mass: &state.inv_mass,
                velocity: &state.v,
                start_velocity: &start_velocity,
            },
        )
        .map_err(failed)?;
        let source = match settings.contacts {
            ContactSource::Sdf => Source::Sdf(Box::new(SdfContactGenerator::new(
                sdf_bodies(scene, model, &settings)?,
                settings.sdf,
            ))),
            ContactSource::Pairs => pair_search(ctx, model, state, &settings)?,
        };
        let safe = match settings.mode {
            PenetrationMode::Safe => Some(TwoWayHandler::new(ctx, scene, model, state)?),
            PenetrationMode::Faithful => None,
        };
        Ok(ProxHandler {
            settings,
            solver,
            source,
            save_start,
            _start_velocity: start_velocity,
            safe,
            stats: ProxFrameStats {
                scheme: settings.scheme.name().to_string(),
                ..ProxFrameStats::default()
            },
        })
    }

    /// Contacts at the state's positions into the solver; the largest penetration of host
    /// contacts in faithful mode.
    fn contacts(&mut self, state: &GpuState) -> Result<Option<f64>, SimError> {
        match &mut self.source {
            Source::Sdf(generator) => {
                let x: Vec<Vec3> = state
                    .x
                    .read()?
                    .iter()
                    .map(|p| Vec3::new(p[0] as f64, p[1] as f64, p[2] as f64))
                    .collect();
                let (contacts, _) = generator.generate(&x, self.settings.friction);
                self.solver.set_contacts(&contacts).map_err(failed)?;
                let faithful = self.settings.mode == PenetrationMode::Faithful;
                Ok(faithful.then(|| penetration(&contacts)))
            }
            Source::Pairs { search, load } => {
                load.run()?;
                search.run().map_err(failed)?;
                sort_pairs(search)?;
                self.solver.contacts_from_pairs(search).map_err(failed)?;
                Ok(None)
            }
        }
    }

    /// Finds the contacts and solves them on the velocities.
    fn velocities(&mut self, state: &GpuState) -> Result<(), SimError> {
        let t = Instant::now();
        let max_penetration = self.contacts(state)?;
        let generation_ms = t.elapsed().as_secs_f64() * 1e3;
        let step = if self.solver.layout().contacts == 0 {
            ProxStepStats {
                exit: "none".into(),
                ..ProxStepStats::default()
            }
        } else {
            let r = self.solver.solve().map_err(failed)?;
            step_stats(&r)
        };
        let f = &mut self.stats;
        f.max_contacts = f.max_contacts.max(step.contacts);
        f.sweeps += step.sweeps;
        f.rollbacks += step.rollbacks;
        f.max_residual = f.max_residual.max(step.residual);
        f.dispatches += step.dispatches;
        f.ms += step.ms;
        if let Some(p) = max_penetration {
            f.max_penetration = Some(f.max_penetration.map_or(p, |q| q.max(p)));
        }
        f.steps.push(ProxStepStats {
            generation_ms,
            max_penetration,
            ..step
        });
        Ok(())
    }
}

/// Sorts the search's pair records: the search appends them in whatever order its threads
/// find them, and the contacts (their order fixes PROX's sums and sweeps) must not depend on
/// that for reruns to be bit-identical.
fn sort_pairs(search: &ProximitySearch) -> Result<(), SimError> {
    let status = search.status().read()?;
    for (buffer, count) in [
        (search.pairs_vt(), status[1]),
        (search.pairs_ee(), status[2]),
    ] {
        let n = (count as usize).min(buffer.len());
        if n < 2 {
            continue;
        }
        let mut records = buffer.read()?;
        records.truncate(n);
        records.sort_unstable();
        buffer.write_at(0, &records)?;
    }
    Ok(())
}

/// Largest penetration −min gap of `contacts` (m; 0 without penetration).
fn penetration(contacts: &[Contact]) -> f64 {
    contacts.iter().map(|c| -c.gap).fold(0.0, f64::max)
}

fn step_stats(r: &ProxSolveReport) -> ProxStepStats {
    ProxStepStats {
        contacts: r.contacts,
        colors: r.colors,
        sweeps: r.sweeps,
        rollbacks: r.rollbacks,
        merit: r.merit,
        residual: r.residual,
        exit: format!("{:?}", r.exit).to_lowercase(),
        dispatches: r.dispatches.total(),
        ms: r.ms,
        generation_ms: 0.0,
        max_penetration: None,
    }
}

impl ContactHandler for ProxHandler {
    fn name(&self) -> &'static str {
        "prox"
    }

    fn phases(&self, _time: f64) -> Phases {
        Phases::STEP_START | Phases::VELOCITIES | Phases::FINISHED
    }

    fn at(&mut self, phase: Phase, state: &GpuState) -> Result<(), SimError> {
        match phase {
            Phase::StepStart => {
                if let Some(g) = &self.save_start {
                    g.run()?;
                }
                Ok(())
            }
            Phase::Velocities => self.velocities(state),
            Phase::Finished => {
                self.stats.time_steps += 1;
                match &mut self.safe {
                    // The stepper's positions are a proposal, as a Newton iterate's are: the
                    // two-way method moves its safe state toward them and writes it back.
                    Some(tw) => {
                        tw.at(Phase::Accepted, state)?;
                        tw.at(Phase::Finished, state)
                    }
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    fn positions_changed(&mut self, state: &GpuState) -> Result<(), SimError> {
        match &mut self.safe {
            Some(tw) => tw.positions_changed(state),
            None => Ok(()),
        }
    }

    fn take_frame_stats(&mut self) -> serde_json::Value {
        let mut s = std::mem::replace(
            &mut self.stats,
            ProxFrameStats {
                scheme: self.settings.scheme.name().to_string(),
                ..ProxFrameStats::default()
            },
        );
        s.safe = self.safe.as_mut().map(|tw| tw.take_frame_stats());
        serde_json::to_value(s).unwrap_or(serde_json::Value::Null)
    }
}
