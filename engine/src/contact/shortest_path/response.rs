//! Collision handling with the shortest path to boundary (Chen, Diaz and Yuksel 2023, §4) for
//! the XPBD solver: once per substep, after prediction, discrete detection (boundary vertices
//! and boundary edges inside tets), shortest-path queries and constraint setup
//! (`kernels/recovery/contact_setup.comp`); after every constraint iteration, one Jacobi
//! projection of the constraints `(x_p − s(x))·n ≥ offset` with position-based friction
//! (`contact_project.comp`, `contact_apply.comp`). Reference:
//! [`crate::cpu_reference::recovery_response`].

use super::ccd::{CcdDetection, CcdFailsafe, CcdStage};
use super::query::{ShortestPathError, ShortestPathQuery};
use super::types::{Contact, Counters, FIXED_SCALE};
use super::{DetectionMode, ShortestPathSettings};
use crate::vk::{ids, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer};
use crate::vk::{Graph, VkError};
use supple_mesh::TetMesh;

/// What one detection found (the paper's Table 1 operations, per substep).
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Detection {
    /// Query points (vertices plus edges) examined.
    pub points: u32,
    /// Shortest-path work counters.
    pub counters: Counters,
    /// GPU milliseconds of the BVH builds and discrete detection.
    pub ms_detect: f64,
    /// GPU milliseconds of the shortest-path queries and constraint setup.
    pub ms_query: f64,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PushSetup {
    nq: u32,
    nv: u32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(super) struct PushProject {
    nc: u32,
    base: u32,
    offset: f32,
    mu: f32,
    scale: f32,
    max_step: f32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PushApply {
    n: u32,
    inv_scale: f32,
    relax: f32,
}

/// Shortest-path collision handling bound to a solver's position buffers.
pub struct ShortestPathContact {
    sp: ShortestPathQuery,
    nv: usize,
    ne: usize,
    vertices: Vec<u32>,
    edges: Vec<[u32; 2]>,
    c_idx: GpuBuffer<[u32; 4]>,
    c_w: GpuBuffer<[f32; 4]>,
    c_b: GpuBuffer<[f32; 4]>,
    c_n: GpuBuffer<[f32; 4]>,
    c_f: GpuBuffer<[u32; 4]>,
    detect: CompiledGraph,
    redetect: CompiledGraph,
    query: CompiledGraph,
    respond: CompiledGraph,
    ccd: Option<CcdStage>,
    /// CCD slot generation the respond graph was recorded for.
    respond_generation: u64,
    positions: GpuBuffer<[f32; 4]>,
    prev: GpuBuffer<[f32; 4]>,
    inv_mass: GpuBuffer<f32>,
    accum: GpuBuffer<[i32; 4]>,
    settings: ShortestPathSettings,
    n: usize,
}

fn groups(n: usize) -> [u32; 3] {
    [(n.div_ceil(64).max(1)) as u32, 1, 1]
}

impl ShortestPathContact {
    /// Builds the topology of `mesh` (tets over the solver's vertex indexing) and the graphs
    /// acting on `positions` (current), `prev` (start of the substep) and `inv_mass`. With
    /// [`DetectionMode::Hybrid`] the discrete detection reads `prev` (the start of the substep),
    /// otherwise `positions`.
    pub fn new(
        ctx: &Context,
        mesh: &TetMesh,
        positions: &GpuBuffer<[f32; 4]>,
        prev: &GpuBuffer<[f32; 4]>,
        inv_mass: &GpuBuffer<f32>,
        settings: ShortestPathSettings,
    ) -> Result<ShortestPathContact, ShortestPathError> {
        if !(settings.relaxation.is_finite()
            && settings.relaxation > 0.0
            && settings.relaxation < 2.0)
        {
            return Err(ShortestPathError::Invalid(
                "relaxation must be in (0, 2)".into(),
            ));
        }
        if !(settings.max_correction.is_finite() && settings.max_correction > 0.0) {
            return Err(ShortestPathError::Invalid(
                "max_correction must be positive".into(),
            ));
        }
        if !(settings.offset.is_finite() && settings.offset >= 0.0)
            || !(settings.friction.is_finite() && settings.friction >= 0.0)
        {
            return Err(ShortestPathError::Invalid(
                "offset and friction must be finite and >= 0".into(),
            ));
        }
        let n = mesh.positions.len();
        let topology = ShortestPathQuery::topology(mesh)?;
        let vertices = topology.used_vertices(settings.all_vertices);
        let edges = if settings.edges {
            topology.boundary_edges()
        } else {
            Vec::new()
        };
        let (nv, ne) = (vertices.len(), edges.len());
        let nq = nv + ne;
        let sp = ShortestPathQuery::from_boundary(ctx, topology, nq, settings.query)?;
        let s = BufferUsage::STORAGE;
        let vbuf = ctx.upload_buffer("recovery.vertices", &pad(&vertices, 0), s)?;
        let ebuf = ctx.upload_buffer("recovery.edges", &pad(&edges, [0, 0]), s)?;
        let cap = nq.max(1);
        let c_idx = ctx.create_buffer::<[u32; 4]>("recovery.c_idx", cap, s)?;
        let c_w = ctx.create_buffer::<[f32; 4]>("recovery.c_w", cap, s)?;
        let c_b = ctx.create_buffer::<[f32; 4]>("recovery.c_b", cap, s)?;
        let c_n = ctx.create_buffer::<[f32; 4]>("recovery.c_n", cap, s)?;
        let c_f = ctx.create_buffer::<[u32; 4]>("recovery.c_f", cap, s)?;
        let penetrating = ctx.create_buffer::<u32>("recovery.penetrating", n.max(1), s)?;
        {
            // Zero before any detection (CCD alone never runs the shortest-path setup).
            let mut g = Graph::new("recovery.init");
            g.fill("recovery.clear_penetrating", &penetrating, 0);
            g.compile(ctx, CompileOptions::default())?.run()?;
        }
        let accum = ctx.create_buffer::<[i32; 4]>("recovery.accum", n.max(1), s)?;
        let timed = CompileOptions {
            graph_timestamps: true,
            ..Default::default()
        };
        // Discrete detection reads the start of the substep in the hybrid.
        let source = if settings.detection == DetectionMode::Hybrid {
            prev
        } else {
            positions
        };
        // Detection: rebuild both trees (cheap next to the queries), vertices and edges in tets.
        let mut g = Graph::new("recovery.detect");
        sp.record_build(&mut g, source);
        sp.record_vertex_dcd(&mut g, source, &vbuf, nv);
        sp.record_edge_dcd(&mut g, source, &ebuf, ne, nv);
        let detect = g.compile(ctx, timed)?;
        // Re-detection within a substep: refit the trees instead of rebuilding them.
        let mut g = Graph::new("recovery.redetect");
        sp.record_refit(&mut g, source);
        sp.record_vertex_dcd(&mut g, source, &vbuf, nv);
        sp.record_edge_dcd(&mut g, source, &ebuf, ne, nv);
        let redetect = g.compile(ctx, timed)?;
        // Queries and constraint setup.
        let mut g = Graph::new("recovery.query");
        sp.record_query(&mut g, source, nq);
        g.fill("recovery.clear_accum", &accum, 0);
        g.fill("recovery.clear_penetrating", &penetrating, 0);
        if nq > 0 {
            g.dispatch(
                Dispatch::new(
                    "recovery.contact_setup",
                    ids::RECOVERY_CONTACT_SETUP,
                    groups(nq),
                )
                .workgroup_size(64)
                .read(source)
                .read(sp.faces())
                .read(&vbuf)
                .read(&ebuf)
                .read(sp.query_points())
                .read(sp.answer_points())
                .read(sp.answer_normals())
                .read(sp.answer_faces())
                .write(&c_idx)
                .write(&c_w)
                .write(&c_b)
                .write(&c_n)
                .write(&c_f)
                .read_write(&penetrating)
                .push(&PushSetup {
                    nq: nq as u32,
                    nv: nv as u32,
                }),
            );
        }
        let query = g.compile(ctx, timed)?;
        let ccd = if settings.detection.ccd() {
            let x: Vec<[f64; 3]> = mesh.positions.clone();
            Some(CcdStage::new(
                ctx,
                sp.boundary().faces.clone(),
                &x,
                settings.ccd_distance,
                settings.offset,
                positions,
                prev,
                &penetrating,
            )?)
        } else {
            None
        };
        let mut r = ShortestPathContact {
            sp,
            nv,
            ne,
            vertices,
            edges,
            c_idx,
            c_w,
            c_b,
            c_n,
            c_f,
            detect,
            redetect,
            query,
            respond: Graph::new("recovery.respond").compile(ctx, timed)?,
            ccd,
            respond_generation: 0,
            positions: positions.clone(),
            prev: prev.clone(),
            inv_mass: inv_mass.clone(),
            accum,
            settings,
            n,
        };
        r.respond = r.record_respond(ctx)?;
        Ok(r)
    }

    /// Records one Jacobi projection of every constraint (shortest-path slots, CCD slots) and
    /// the averaged update.
    fn record_respond(&self, ctx: &Context) -> Result<CompiledGraph, ShortestPathError> {
        let settings = &self.settings;
        let (positions, prev, inv_mass, accum) =
            (&self.positions, &self.prev, &self.inv_mass, &self.accum);
        let nq = self.nv + self.ne;
        // Shortest-path constraints close at most max_correction per projection (a deep,
        // possibly ambiguous penetration is resolved over several); CCD constraints have an
        // unambiguous direction and close at once.
        let push = |nc: u32, base: u32, max_step: f32| PushProject {
            nc,
            base,
            offset: settings.offset,
            mu: settings.friction,
            scale: FIXED_SCALE,
            max_step,
        };
        let mut g = Graph::new("recovery.respond");
        for _ in 0..settings.passes.max(1) {
            if nq > 0 && settings.detection.dcd() {
                g.dispatch(
                    Dispatch::new(
                        "recovery.contact_project",
                        ids::RECOVERY_CONTACT_PROJECT,
                        groups(nq),
                    )
                    .workgroup_size(64)
                    .read(positions)
                    .read(prev)
                    .read(inv_mass)
                    .read(&self.c_f)
                    .read(&self.c_idx)
                    .read(&self.c_w)
                    .read(&self.c_b)
                    .read(&self.c_n)
                    .read_write(accum)
                    // Unused without the LIST specialization (bound for the layout).
                    .read(&self.c_idx)
                    .read(&self.c_idx)
                    .push(&push(nq as u32, 0, settings.max_correction)),
                );
            }
            if let Some(c) = &self.ccd {
                c.record_project(
                    &mut g,
                    positions,
                    prev,
                    inv_mass,
                    accum,
                    push(0, 0, f32::MAX),
                );
            }
            g.dispatch(
                Dispatch::new(
                    "recovery.contact_apply",
                    ids::RECOVERY_CONTACT_APPLY,
                    groups(self.n),
                )
                .workgroup_size(64)
                .read_write(positions)
                .read_write(accum)
                .push(&PushApply {
                    n: self.n as u32,
                    inv_scale: 1.0 / FIXED_SCALE,
                    relax: settings.relaxation,
                }),
            );
        }
        Ok(g.compile(
            ctx,
            CompileOptions {
                graph_timestamps: true,
                ..Default::default()
            },
        )?)
    }

    /// Runs the CCD fail-safe at the end of a substep (`None` without CCD or with the
    /// fail-safe off).
    pub fn ccd_failsafe(&mut self) -> Result<Option<CcdFailsafe>, ShortestPathError> {
        match self.ccd.as_mut().filter(|_| self.settings.ccd_failsafe) {
            Some(c) => Ok(Some(c.failsafe()?)),
            None => Ok(None),
        }
    }

    /// Settings the handling was built with.
    pub fn settings(&self) -> &ShortestPathSettings {
        &self.settings
    }

    /// The CCD stage (with [`DetectionMode::Ccd`] or [`DetectionMode::Hybrid`]).
    pub fn ccd(&self) -> Option<&CcdStage> {
        self.ccd.as_ref()
    }

    /// Runs continuous detection over the motion from the start of the substep to the current
    /// positions (`new_substep`: clear the constraints of the previous substep first); `None`
    /// without CCD.
    pub fn detect_ccd(
        &mut self,
        new_substep: bool,
    ) -> Result<Option<CcdDetection>, ShortestPathError> {
        match self.ccd.as_mut() {
            Some(c) => Ok(Some(c.detect(new_substep)?)),
            None => Ok(None),
        }
    }

    /// The shortest-path structure (topology, trees, answers).
    pub fn shortest_path(&self) -> &ShortestPathQuery {
        &self.sp
    }

    /// Query vertices (slots `0..nv`).
    pub fn vertices(&self) -> &[u32] {
        &self.vertices
    }

    /// Query edges (slots `nv..nv + ne`).
    pub fn edges(&self) -> &[[u32; 2]] {
        &self.edges
    }

    /// Runs detection (rebuilding both trees), the queries and the constraint setup at the
    /// current positions.
    pub fn detect(&self) -> Result<Detection, ShortestPathError> {
        self.run_detection(&self.detect)
    }

    /// Like [`ShortestPathContact::detect`] but refits the trees of the last detection instead of
    /// rebuilding them (for re-detection within a substep, when vertices moved little).
    pub fn redetect(&self) -> Result<Detection, ShortestPathError> {
        self.run_detection(&self.redetect)
    }

    fn run_detection(&self, detect: &CompiledGraph) -> Result<Detection, ShortestPathError> {
        detect.run()?;
        self.query.run()?;
        let counters = self.sp.read_counters()?;
        let ms = |g: &CompiledGraph| -> Result<f64, VkError> {
            Ok(g.profile()?.map_or(0.0, |p| p.total_ms))
        };
        Ok(Detection {
            points: (self.nv + self.ne) as u32,
            counters,
            ms_detect: ms(detect)?,
            ms_query: ms(&self.query)?,
        })
    }

    /// Runs one projection of the current constraints; returns its GPU milliseconds.
    pub fn respond(&mut self) -> Result<f64, ShortestPathError> {
        let generation = self.ccd.as_ref().map_or(0, |c| c.generation());
        if generation != self.respond_generation {
            let ctx = self.positions.context();
            self.respond = self.record_respond(&ctx)?;
            self.respond_generation = generation;
        }
        self.respond.run()?;
        Ok(self.respond.profile()?.map_or(0.0, |p| p.total_ms))
    }

    /// The shortest-path constraint slots (written by every detection), for the Newton
    /// solver's penalty energy ([`super::PenaltyContact`]).
    pub fn constraint_slots(&self) -> super::ConstraintSlots<'_> {
        super::ConstraintSlots {
            idx: &self.c_idx,
            w: &self.c_w,
            b: &self.c_b,
            n: &self.c_n,
            f: &self.c_f,
            count: self.nv + self.ne,
        }
    }

    /// Reads the constraints of the last detection.
    pub fn read_contacts(&self) -> Result<Vec<Contact>, ShortestPathError> {
        Ok(super::types::read_contacts(
            &self.c_idx,
            &self.c_w,
            &self.c_b,
            &self.c_n,
            &self.c_f,
            self.nv + self.ne,
        )?)
    }
}

fn pad<T: Copy>(v: &[T], fill: T) -> Vec<T> {
    if v.is_empty() {
        vec![fill]
    } else {
        v.to_vec()
    }
}
