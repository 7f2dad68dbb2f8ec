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
use super::nodes::{damping_coefficients, Damping, SafeVelocity};
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
        if scene.prox.mode == crate::scene::ProxModeName::Safe {
            refuse_intersecting_start(scene, model)?;
        }
        Ok(vec![Box::new(ProxHandler::new(ctx, scene, model, state)?)])
    }
}

/// Safe mode keeps frames intersection-free only from an intersection-free start: an initial
/// state with intersecting (or touching) surfaces or a vertex inside a collider is refused,
/// naming the bodies and one pair ([`crate::contact::start_check`]), and pointing to faithful
/// mode (RAINBOW's, which starts from anything and logs the penetration).
fn refuse_intersecting_start(scene: &Scene, model: &SimModel) -> Result<(), SimError> {
    crate::contact::start_check::refuse_intersecting_start(
        model,
        &model.positions,
        &crate::contact::colliders::from_scene(scene),
        0.0,
        "prox.mode",
        "at the start; prox.mode = \"safe\" keeps frames intersection-free only from an \
         intersection-free start (separate the bodies, or use prox.mode = \"faithful\", \
         RAINBOW's, which logs the penetration)",
    )
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
    /// Largest penetration at the step start (m; faithful mode only): `"sdf"` −min gap of the
    /// contacts, `"pairs"` the deepest vertex behind a triangle face among the vertex–triangle
    /// pairs ([`pair_penetration`]).
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
    /// Largest penetration of the frame (m; faithful mode, either contact source).
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
        /// The search's triangles (outward surface triangles of every body), for the
        /// penetration depth of faithful mode.
        triangles: Vec<[u32; 3]>,
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
    /// RAINBOW's damping of the free velocity update (`prox.damping` > 0).
    damping: Option<Damping>,
    /// Safe mode: the position limiter.
    safe: Option<TwoWayHandler>,
    /// Safe mode: the velocity update after the limit.
    safe_velocity: Option<SafeVelocity>,
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

/// RAINBOW's damping pass; refuses a coefficient that would remove a node's whole start
/// velocity or more in one step (explicit damping needs h c V_a / m_a < 1, i.e. h c < ρ).
fn damping_pass(
    ctx: &Context,
    model: &SimModel,
    state: &GpuState,
    start_velocity: &GpuBuffer<[f32; 4]>,
    c: f64,
    h: f64,
) -> Result<Damping, SimError> {
    let coeff = damping_coefficients(model, c, h);
    let worst = coeff.iter().fold(0.0f32, |m, &k| m.max(k));
    if worst.is_nan() || worst >= 1.0 {
        return Err(SimError::unsupported(
            "prox.damping",
            format!(
                "c = {c} kg/(m³·s) removes {worst:.3} of a node's velocity per step of {h} s \
                 (explicit damping needs h c V / m < 1, i.e. c < density / h)"
            ),
        ));
    }
    Ok(Damping::new(ctx, &coeff, start_velocity, &state.v)?)
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
    let mesh = ProximityMesh::new(tris.clone(), body).map_err(field)?;
    let mut opts = ProximityOptions::new(s.pair_distance);
    opts.filter.within_body = false;
    if s.pair_cell_scale > 0.0 {
        opts.cell_size = Some(s.pair_cell_scale * mesh.mean_edge_length(&model.positions));
    }
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
        triangles: tris,
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
        let save_start = if settings.restitution > 0.0 || settings.damping > 0.0 {
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
        let h = scene.simulation.time_step();
        let damping = if settings.damping > 0.0 {
            Some(damping_pass(
                ctx,
                model,
                state,
                &start_velocity,
                settings.damping,
                h,
            )?)
        } else {
            None
        };
        let (safe, safe_velocity) = match settings.mode {
            PenetrationMode::Safe => (
                Some(TwoWayHandler::new(ctx, scene, model, state)?),
                Some(SafeVelocity::new(
                    ctx,
                    model.positions.len(),
                    &state.x,
                    &state.v,
                    h,
                )?),
            ),
            PenetrationMode::Faithful => (None, None),
        };
        Ok(ProxHandler {
            settings,
            solver,
            source,
            save_start,
            _start_velocity: start_velocity,
            damping,
            safe,
            safe_velocity,
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
            Source::Pairs {
                search,
                load,
                triangles,
            } => {
                load.run()?;
                search.run().map_err(failed)?;
                let vt = sort_pairs(search)?;
                self.solver.contacts_from_pairs(search).map_err(failed)?;
                if self.settings.mode != PenetrationMode::Faithful {
                    return Ok(None);
                }
                let x = search.positions().read()?;
                let pairs = vt.iter().map(|r| (r[0], r[1]));
                Ok(Some(pair_penetration(&x, triangles, pairs)))
            }
        }
    }

    /// Finds the contacts and solves them on the velocities.
    fn velocities(&mut self, state: &GpuState) -> Result<(), SimError> {
        if let Some(d) = &self.damping {
            d.run()?;
        }
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
/// that for reruns to be bit-identical. Returns the vertex–triangle records (vertex, triangle,
/// …) in their sorted order.
fn sort_pairs(search: &ProximitySearch) -> Result<Vec<[u32; 4]>, SimError> {
    let status = search.status().read()?;
    let mut vt = Vec::new();
    for (k, (buffer, count)) in [
        (search.pairs_vt(), status[1]),
        (search.pairs_ee(), status[2]),
    ]
    .into_iter()
    .enumerate()
    {
        let n = (count as usize).min(buffer.len());
        if n == 0 {
            continue;
        }
        let mut records = buffer.read()?;
        records.truncate(n);
        records.sort_unstable();
        if n >= 2 {
            buffer.write_at(0, &records)?;
        }
        if k == 0 {
            vt = records;
        }
    }
    Ok(vt)
}

/// Largest penetration seen by the vertex–triangle pairs (m; 0 without): the depth
/// `−(x_v − a)·n̂` of a vertex behind the plane of a triangle (outward unit normal n̂) whose
/// projection falls inside the triangle (its face region, where the sign is unambiguous).
/// Pairs exist within `prox.pair_distance`, so deeper penetrations are not seen.
pub fn pair_penetration(
    x: &[[f32; 4]],
    triangles: &[[u32; 3]],
    pairs: impl Iterator<Item = (u32, u32)>,
) -> f64 {
    let p = |i: u32| {
        x.get(i as usize)
            .map(|v| Vec3::new(v[0] as f64, v[1] as f64, v[2] as f64))
    };
    let mut deepest = 0.0f64;
    for (v, t) in pairs {
        let Some(tri) = triangles.get(t as usize) else {
            continue;
        };
        let (Some(q), Some(a), Some(b), Some(c)) = (p(v), p(tri[0]), p(tri[1]), p(tri[2])) else {
            continue;
        };
        let n = (b - a).cross(&(c - a));
        let nn = n.dot(&n);
        if nn.is_nan() || nn <= 0.0 {
            continue;
        }
        let depth = -(q - a).dot(&n) / nn.sqrt();
        if depth.is_nan() || depth <= deepest {
            continue;
        }
        // Barycentric coordinates of the projection of q onto the plane.
        let ap = q - a;
        let wb = n.dot(&ap.cross(&(c - a))) / nn;
        let wc = n.dot(&(b - a).cross(&ap)) / nn;
        if wb >= 0.0 && wc >= 0.0 && wb + wc <= 1.0 {
            deepest = depth;
        }
    }
    deepest
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
                if let Some(sv) = &self.safe_velocity {
                    sv.step_started()?;
                }
                Ok(())
            }
            Phase::Velocities => self.velocities(state),
            Phase::Finished => {
                self.stats.time_steps += 1;
                match &mut self.safe {
                    // The stepper's positions are a proposal, as a Newton iterate's are: the
                    // two-way method moves its safe state toward them and writes it back;
                    // the limited nodes' velocities become the ones their positions took.
                    Some(tw) => {
                        if let Some(sv) = &self.safe_velocity {
                            sv.before_limit()?;
                        }
                        tw.at(Phase::Accepted, state)?;
                        if let Some(sv) = &self.safe_velocity {
                            sv.after_limit()?;
                        }
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
