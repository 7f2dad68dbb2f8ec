//! The CCD half of the hybrid collision detection of Chen, Diaz and Yuksel (2023, §4.3): new
//! collisions are caught by continuous detection over each substep's motion, before they get
//! deep, and become constraints at the point of impact; the shortest path to boundary handles
//! what CCD could not prevent.
//!
//! Scheduling: candidate pairs come from the GPU spatial-hash proximity search
//! ([`ProximitySearch`]) at the start-of-substep positions with search distance D. A pair that
//! collides while every vertex moves at most m from the searched positions is closer than 2m
//! there, so the pairs stay complete while 2·max(m_prev, m_cur) < D (m_prev, m_cur: the largest
//! displacement from the searched positions to the substep's start and current positions); the
//! search is reused across iterations and substeps until that bound fails. Then
//! `kernels/recovery/ccd_contacts.comp` tests every pair's linear motion from the start of the
//! substep to the current positions and writes a constraint per hit into the pair's slot;
//! [`CcdStage::record_project`] projects them with the shortest-path constraints
//! (`contact_project.comp`). Reference: [`crate::cpu_reference::recovery_response::ccd_contact`].

// `!(x < d)` on purpose: a NaN displacement must count as unsafe and trigger a search.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use super::query::ShortestPathError;
use crate::proximity::{MaxDisplacement, ProximityMesh, ProximityOptions, ProximitySearch};
use crate::vk::{ids, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer};
use crate::vk::{Graph, VkError};

/// Workgroup size of the CCD kernels (the proximity search's indirect arguments use 64).
const WG: u32 = 64;

/// Fail-safe rounds before the whole substep is undone.
const FAILSAFE_ROUNDS: u32 = 8;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PushCcd {
    cap: u32,
    base: u32,
    offset: f32,
    failsafe: u32,
}

/// What the fail-safe did at the end of a substep.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CcdFailsafe {
    /// Pairs that still collided after the response, summed over the rounds.
    pub pairs: u32,
    /// Rounds run (0: nothing collided).
    pub rounds: u32,
    /// Whether every vertex went back to the start of the substep (the rounds did not settle).
    pub full_rollback: bool,
    /// GPU milliseconds.
    pub ms: f64,
}

/// What one CCD detection did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CcdDetection {
    /// Pairs whose motion hit (constraints written).
    pub hits: u32,
    /// Candidate pairs tested (vertex–triangle plus edge–edge).
    pub pairs: u32,
    /// Whether a proximity search ran first.
    pub searched: bool,
    /// The motion since the start of the substep exceeded D/2: pairs may be missing.
    pub unsafe_motion: bool,
    /// GPU milliseconds (displacement check, search, CCD).
    pub ms: f64,
}

/// Buffers the CCD graphs bind besides the search's.
struct SlotBuffers<'a> {
    hits: &'a GpuBuffer<u32>,
    positions: &'a GpuBuffer<[f32; 4]>,
    prev: &'a GpuBuffer<[f32; 4]>,
    penetrating: &'a GpuBuffer<u32>,
    rollback: &'a GpuBuffer<u32>,
    n: usize,
}

/// Constraint slots of the CCD pairs (vertex–triangle slots first, then edge–edge).
struct Slots {
    caps: [u32; 2],
    /// The search workspace generation the graphs were recorded for.
    search_generation: u64,
    c_idx: GpuBuffer<[u32; 4]>,
    c_w: GpuBuffer<[f32; 4]>,
    c_b: GpuBuffer<[f32; 4]>,
    c_n: GpuBuffer<[f32; 4]>,
    c_f: GpuBuffer<[u32; 4]>,
    /// Live slots (appended when a slot becomes live) and their count.
    live: GpuBuffer<u32>,
    live_count: GpuBuffer<u32>,
    /// Indirect-dispatch arguments of the projection over `live`.
    live_args: GpuBuffer<u32>,
    clear: CompiledGraph,
    detect: CompiledGraph,
    failsafe: CompiledGraph,
}

/// Continuous collision detection of the surface over a substep, with persistent buffers.
pub struct CcdStage {
    ctx: Context,
    n: usize,
    distance: f64,
    offset: f32,
    search: ProximitySearch,
    disp: [MaxDisplacement; 3],
    check: CompiledGraph,
    copy: CompiledGraph,
    hits: GpuBuffer<u32>,
    slots: Slots,
    positions: GpuBuffer<[f32; 4]>,
    prev: GpuBuffer<[f32; 4]>,
    penetrating: GpuBuffer<u32>,
    rollback: GpuBuffer<u32>,
    rollback_all: CompiledGraph,
    searched: bool,
    generation: u64,
    searches: u32,
}

fn timed() -> CompileOptions {
    CompileOptions {
        graph_timestamps: true,
        ..Default::default()
    }
}

/// The two pair lists of a search with pair capacities `caps`: (kernel mode, name, first
/// constraint slot, capacity, its indirect-dispatch arguments in the search's `indirect_args`).
fn pair_lists(caps: [u32; 2]) -> [(u32, &'static str, u32, u32, std::ops::Range<usize>); 2] {
    [
        (0, "vt", 0, caps[0], 0..3),
        (1, "ee", caps[0], caps[1], 3..6),
    ]
}

/// A graph copying the first `n` positions of `src` into `dst`.
fn copy_graph(
    ctx: &Context,
    name: &str,
    src: &GpuBuffer<[f32; 4]>,
    dst: &GpuBuffer<[f32; 4]>,
    n: usize,
) -> Result<CompiledGraph, VkError> {
    let mut g = Graph::new(name);
    g.copy(name, src.slice(0..n), dst.slice(0..n));
    g.compile(ctx, CompileOptions::default())
}

fn ms(g: &CompiledGraph) -> Result<f64, VkError> {
    Ok(g.profile()?.map_or(0.0, |p| p.total_ms))
}

impl CcdStage {
    /// Builds the search over the boundary `faces` of `n` vertices (host positions `x`, m) with
    /// search distance `distance` (m) and contact separation `offset` (m), acting on the
    /// solver's `positions` (current) and `prev` (start of the substep); pairs with a vertex
    /// flagged in `penetrating` are skipped.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: &Context,
        faces: Vec<[u32; 3]>,
        x: &[[f64; 3]],
        distance: f64,
        offset: f32,
        positions: &GpuBuffer<[f32; 4]>,
        prev: &GpuBuffer<[f32; 4]>,
        penetrating: &GpuBuffer<u32>,
    ) -> Result<CcdStage, ShortestPathError> {
        let n = x.len();
        if !(distance.is_finite() && distance > offset as f64) {
            return Err(ShortestPathError::Invalid(format!(
                "ccd_distance must be finite and larger than the contact offset ({offset} m), \
                 got {distance}"
            )));
        }
        let mesh = ProximityMesh::new(faces, vec![0; n]).map_err(ShortestPathError::Invalid)?;
        let search = ProximitySearch::new(ctx, mesh, x, ProximityOptions::new(distance))
            .map_err(ShortestPathError::Invalid)?;
        let disp = [
            MaxDisplacement::new(ctx, n)?,
            MaxDisplacement::new(ctx, n)?,
            MaxDisplacement::new(ctx, n)?,
        ];
        let sx = search.positions();
        let mut g = Graph::new("recovery.ccd_check");
        disp[0].record(&mut g, sx, prev);
        disp[1].record(&mut g, sx, positions);
        disp[2].record(&mut g, prev, positions);
        let check = g.compile(ctx, timed())?;
        let copy = copy_graph(ctx, "recovery.ccd_search_positions", prev, sx, n)?;
        // Host-visible: read after every detection without a staging copy.
        let hits = ctx.create_buffer::<u32>(
            "recovery.ccd_hits",
            1,
            BufferUsage::STORAGE | BufferUsage::HOST_READ,
        )?;
        let rollback =
            ctx.create_buffer::<u32>("recovery.ccd_rollback", n.max(1), BufferUsage::STORAGE)?;
        let mut g = Graph::new("recovery.ccd_rollback_init");
        g.fill("recovery.ccd_clear_rollback", &rollback, 0);
        g.compile(ctx, CompileOptions::default())?.run()?;
        let rollback_all = copy_graph(ctx, "recovery.ccd_rollback_all", prev, positions, n)?;
        let bufs = SlotBuffers {
            hits: &hits,
            positions,
            prev,
            penetrating,
            rollback: &rollback,
            n,
        };
        let slots = Self::slots(ctx, &search, &bufs, offset)?;
        Ok(CcdStage {
            ctx: ctx.clone(),
            n,
            distance,
            offset,
            search,
            disp,
            check,
            copy,
            hits,
            slots,
            positions: positions.clone(),
            prev: prev.clone(),
            penetrating: penetrating.clone(),
            rollback,
            rollback_all,
            searched: false,
            generation: 0,
            searches: 0,
        })
    }

    fn slots(
        ctx: &Context,
        search: &ProximitySearch,
        b: &SlotBuffers,
        offset: f32,
    ) -> Result<Slots, ShortestPathError> {
        let (hits, positions, prev, penetrating) = (b.hits, b.positions, b.prev, b.penetrating);
        let p = search.params();
        let caps = [p.vt_cap, p.ee_cap];
        let total = (p.vt_cap + p.ee_cap).max(1) as usize;
        let s = BufferUsage::STORAGE;
        let c_idx = ctx.create_buffer::<[u32; 4]>("recovery.ccd_c_idx", total, s)?;
        let c_w = ctx.create_buffer::<[f32; 4]>("recovery.ccd_c_w", total, s)?;
        let c_b = ctx.create_buffer::<[f32; 4]>("recovery.ccd_c_b", total, s)?;
        let c_n = ctx.create_buffer::<[f32; 4]>("recovery.ccd_c_n", total, s)?;
        let c_f = ctx.create_buffer::<[u32; 4]>("recovery.ccd_c_f", total, s)?;
        let live = ctx.create_buffer::<u32>("recovery.ccd_live", total, s)?;
        let live_count = ctx.create_buffer::<u32>("recovery.ccd_live_count", 1, s)?;
        let live_args = ctx.create_buffer::<u32>(
            "recovery.ccd_live_args",
            3,
            BufferUsage::STORAGE | BufferUsage::INDIRECT,
        )?;
        let mut g = Graph::new("recovery.ccd_clear");
        g.fill("recovery.ccd_clear", &c_idx, 0);
        g.fill("recovery.ccd_clear_live", &live_count, 0);
        let clear = g.compile(ctx, CompileOptions::default())?;
        let record = |g: &mut Graph, failsafe: u32| {
            g.fill("recovery.ccd_clear_hits", hits, 0);
            for (mode, list, base, cap, args) in pair_lists([p.vt_cap, p.ee_cap]) {
                g.dispatch(
                    Dispatch::indirect(
                        format!("recovery.ccd_contacts[{list}]"),
                        ids::RECOVERY_CCD_CONTACTS,
                        search.indirect_args().slice(args),
                    )
                    .workgroup_size(WG)
                    .spec(&[mode])
                    .read(positions)
                    .read(prev)
                    .read(search.status())
                    .read(if mode == 0 {
                        search.pairs_vt()
                    } else {
                        search.pairs_ee()
                    })
                    .read(search.triangles())
                    .read(search.edges())
                    .read_write(&c_idx)
                    .read_write(&c_w)
                    .read_write(&c_b)
                    .read_write(&c_n)
                    .read_write(&c_f)
                    .read_write(hits)
                    .read(penetrating)
                    .read_write(b.rollback)
                    .read_write(&live_count)
                    .read_write(&live)
                    .push(&PushCcd {
                        cap,
                        base,
                        offset,
                        failsafe,
                    }),
                );
            }
        };
        let mut g = Graph::new("recovery.ccd_detect");
        record(&mut g, 0);
        g.dispatch(
            Dispatch::new(
                "recovery.ccd_live_args",
                ids::PRIMITIVES_INDIRECT_ARGS,
                [1, 1, 1],
            )
            .workgroup_size(WG)
            .read(&live_count)
            .write(&live_args)
            .push(&[0u32, WG]),
        );
        let detect = g.compile(ctx, timed())?;
        let mut g = Graph::new("recovery.ccd_failsafe");
        record(&mut g, 1);
        g.dispatch(
            Dispatch::new(
                "recovery.ccd_rollback",
                ids::RECOVERY_CCD_ROLLBACK,
                [(b.n.div_ceil(WG as usize).max(1)) as u32, 1, 1],
            )
            .workgroup_size(WG)
            .read_write(positions)
            .read(prev)
            .read_write(b.rollback)
            .push(&(b.n as u32)),
        );
        let failsafe = g.compile(ctx, timed())?;
        Ok(Slots {
            caps,
            search_generation: search.generation(),
            c_idx,
            c_w,
            c_b,
            c_n,
            c_f,
            live,
            live_count,
            live_args,
            clear,
            detect,
            failsafe,
        })
    }

    /// Search distance D (m).
    pub fn distance(&self) -> f64 {
        self.distance
    }

    /// Proximity searches run so far.
    pub fn searches(&self) -> u32 {
        self.searches
    }

    /// Changes whenever the constraint slots are reallocated (graphs recording
    /// [`CcdStage::record_project`] must be recompiled).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The proximity search (pairs, status).
    pub fn search(&self) -> &ProximitySearch {
        &self.search
    }

    /// Tests the motion from the start of the substep to the current positions: searches
    /// again first when the reuse bound fails, clears the constraints when `new_substep` (or
    /// after a search), then writes a constraint per hit (earlier hits of the substep stay).
    pub fn detect(&mut self, new_substep: bool) -> Result<CcdDetection, ShortestPathError> {
        let mut out = CcdDetection::default();
        let clear = self.ensure_pairs(&mut out)? || new_substep;
        if !out.searched {
            let st = self.search.status().read()?;
            out.pairs = st[1] + st[2];
        }
        if clear {
            self.slots.clear.run()?;
        }
        self.slots.detect.run()?;
        out.ms += ms(&self.slots.detect)?;
        out.hits = self.hits.read()?[0];
        Ok(out)
    }

    /// Makes the pair list cover the motion from the start of the substep to the current
    /// positions (searching again when the reuse bound fails); returns whether it searched.
    fn ensure_pairs(&mut self, out: &mut CcdDetection) -> Result<bool, ShortestPathError> {
        // One check run gives all three displacements (the start → current one does not
        // depend on the search positions, so it stays valid after a new search).
        self.check.run()?;
        out.ms += ms(&self.check)?;
        let (m_prev, m_cur) = if self.searched {
            (self.disp[0].read()?, self.disp[1].read()?)
        } else {
            (f64::INFINITY, f64::INFINITY)
        };
        if 2.0 * m_prev.max(m_cur) < self.distance {
            return Ok(false);
        }
        self.copy.run()?;
        let report = self.search.run().map_err(ShortestPathError::Invalid)?;
        self.searched = true;
        self.searches += 1;
        out.searched = true;
        // A regrown search has new pair buffers (even when the pair capacities stayed).
        if self.search.generation() != self.slots.search_generation {
            let bufs = SlotBuffers {
                hits: &self.hits,
                positions: &self.positions,
                prev: &self.prev,
                penetrating: &self.penetrating,
                rollback: &self.rollback,
                n: self.n,
            };
            self.slots = Self::slots(&self.ctx, &self.search, &bufs, self.offset)?;
            self.generation += 1;
        }
        out.pairs = report.vertex_triangle + report.edge_edge;
        // The motion since the start of the substep (the search positions) must stay under
        // D/2 for the pair list to be complete.
        out.unsafe_motion = !(2.0 * self.disp[2].read()? < self.distance);
        Ok(true)
    }

    /// End-of-substep fail-safe: pairs whose motion from the start of the substep still
    /// collides after the response send their vertices back to the start, repeated until none
    /// collides ([`FAILSAFE_ROUNDS`] at most; then every vertex goes back). Constraints of the
    /// substep are kept (a new search clears them).
    pub fn failsafe(&mut self) -> Result<CcdFailsafe, ShortestPathError> {
        let mut out = CcdFailsafe::default();
        let mut d = CcdDetection::default();
        if self.ensure_pairs(&mut d)? {
            self.slots.clear.run()?;
        }
        out.ms += d.ms;
        for _ in 0..FAILSAFE_ROUNDS {
            self.slots.failsafe.run()?;
            out.ms += ms(&self.slots.failsafe)?;
            let hits = self.hits.read()?[0];
            if hits == 0 {
                return Ok(out);
            }
            out.rounds += 1;
            out.pairs += hits;
        }
        self.rollback_all.run()?;
        out.full_rollback = true;
        Ok(out)
    }

    /// Records one projection of the live CCD constraints into `accum` (`contact_project.comp`
    /// over the compact list of live slots, indirect) with push constants `push`.
    pub fn record_project<P: bytemuck::Pod>(
        &self,
        g: &mut Graph,
        positions: &GpuBuffer<[f32; 4]>,
        prev: &GpuBuffer<[f32; 4]>,
        inv_mass: &GpuBuffer<f32>,
        accum: &GpuBuffer<[i32; 4]>,
        push: P,
    ) {
        let s = &self.slots;
        g.dispatch(
            Dispatch::indirect(
                "recovery.ccd_project",
                ids::RECOVERY_CONTACT_PROJECT,
                &s.live_args,
            )
            .workgroup_size(WG)
            .spec(&[1])
            .read(positions)
            .read(prev)
            .read(inv_mass)
            .read(&s.c_f)
            .read(&s.c_idx)
            .read(&s.c_w)
            .read(&s.c_b)
            .read(&s.c_n)
            .read_write(accum)
            .read(&s.live_count)
            .read(&s.live)
            .push(&push),
        );
    }

    /// Reads the CCD constraint slots (vertex–triangle slots, then edge–edge slots).
    pub fn read_contacts(&self) -> Result<Vec<super::types::Contact>, ShortestPathError> {
        Ok(super::types::read_contacts(
            &self.slots.c_idx,
            &self.slots.c_w,
            &self.slots.c_b,
            &self.slots.c_n,
            &self.slots.c_f,
            (self.slots.caps[0] + self.slots.caps[1]) as usize,
        )?)
    }

    /// Vertex count.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no vertices.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}
