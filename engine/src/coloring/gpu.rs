//! Random-priority Jones–Plassmann coloring of dynamic constraint graphs on the GPU
//! (`kernels/coloring/*.comp`), without an explicit constraint adjacency: per round, every
//! uncolored constraint atomicMax-es its priority (a bijective hash of its index and the seed)
//! into the vertices it touches (`jp_priority`); a constraint that holds the maximum at all of
//! its vertices takes the smallest color absent from its vertices' 256-bit used-color masks and
//! ORs it in (`jp_select`). Each round costs O(constraints × 4). A graph run records a fixed
//! number of rounds and then counts the uncolored constraints (`jp_count`); the host reads
//! three scalars and runs again until none is left. Finally a counting sort (`group_count`,
//! [`Scan`], `group_scatter`) groups the constraints by color.
//!
//! The result equals [`crate::cpu_reference::coloring::jones_plassmann`] for the same seed
//! (and, as Jones–Plassmann always does, the sequential greedy coloring in decreasing priority).

use super::{validate, ColoringError, MAX_COLORS, UNCOLORED};
use crate::primitives::{Scan, ScanKind};
use crate::vk::{
    ids, BufferUsage, CompileOptions, CompiledGraph, Context, Dispatch, GpuBuffer, Graph, KernelId,
    VkResult,
};

/// Words of the used-color mask per vertex (`jp_select.comp::USED_WORDS`, [`MAX_COLORS`] bits).
const USED_WORDS: usize = MAX_COLORS as usize / 32;

/// Invocations of the single workgroup of `jp_workgroup.comp`.
const WORKGROUP_SINGLE: u32 = 256;

/// Largest workgroup count per dispatch (kernels loop over the rest).
const MAX_GROUPS: u32 = 65_535;

/// Summary of a GPU coloring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuColoringStats {
    /// Number of colors used.
    pub num_colors: u32,
    /// Jones–Plassmann rounds recorded (a multiple of the rounds per run).
    pub rounds_recorded: u32,
    /// Graph runs (host round trips).
    pub runs: u32,
    /// Constraints left uncolored because all [`MAX_COLORS`] colors were taken at one of their
    /// vertices (only [`ColoringPlan::run_partial`] returns such a coloring; they are in no
    /// color group).
    pub overflowed: u32,
}

/// Workspace of the GPU coloring for up to a fixed number of constraints and vertices.
pub struct GpuColoring {
    max_constraints: usize,
    max_vertices: usize,
    workgroup: u32,
    rounds_per_run: u32,
    color: GpuBuffer<u32>,
    vmax: GpuBuffer<u32>,
    used: GpuBuffer<u32>,
    status: GpuBuffer<u32>,
    counts: GpuBuffer<u32>,
    offsets: GpuBuffer<u32>,
    cursor: GpuBuffer<u32>,
    grouped: GpuBuffer<u32>,
    scan: Scan,
}

impl GpuColoring {
    /// Allocates the workspace for up to `max_constraints` constraints over `max_vertices`
    /// vertices.
    pub fn new(ctx: &Context, max_constraints: usize, max_vertices: usize) -> VkResult<Self> {
        let nc = max_constraints.max(1);
        let nv = max_vertices.max(1);
        let slots = MAX_COLORS as usize + 1;
        Ok(GpuColoring {
            max_constraints,
            max_vertices,
            workgroup: ctx.caps().subgroup_size.max(64),
            rounds_per_run: 8,
            color: ctx.create_buffer("coloring.color", nc, BufferUsage::STORAGE)?,
            vmax: ctx.create_buffer("coloring.vmax", nv, BufferUsage::STORAGE)?,
            used: ctx.create_buffer("coloring.used", USED_WORDS * nv, BufferUsage::STORAGE)?,
            status: ctx.create_buffer("coloring.status", 4, BufferUsage::STORAGE)?,
            counts: ctx.create_buffer("coloring.counts", slots, BufferUsage::STORAGE)?,
            offsets: ctx.create_buffer("coloring.offsets", slots, BufferUsage::STORAGE)?,
            cursor: ctx.create_buffer("coloring.cursor", slots, BufferUsage::STORAGE)?,
            grouped: ctx.create_buffer("coloring.grouped", nc, BufferUsage::STORAGE)?,
            scan: Scan::new(ctx, slots)?,
        })
    }

    /// Sets how many rounds one graph run records before the host checks progress (≥ 1).
    pub fn set_rounds_per_run(&mut self, rounds: u32) {
        self.rounds_per_run = rounds.max(1);
    }

    /// Color of each constraint (< [`MAX_COLORS`], or [`super::OVERFLOW`]).
    pub fn colors(&self) -> &GpuBuffer<u32> {
        &self.color
    }

    /// Exclusive scan of the per-color counts: color `c` owns `grouped[offsets[c]..offsets[c+1]]`
    /// ([`MAX_COLORS`] + 1 entries).
    pub fn offsets(&self) -> &GpuBuffer<u32> {
        &self.offsets
    }

    /// Constraint indices grouped by color (order within a color unspecified).
    pub fn grouped(&self) -> &GpuBuffer<u32> {
        &self.grouped
    }

    /// `[uncolored, overflowed, num_colors, _]` written by the last progress count.
    pub fn status(&self) -> &GpuBuffer<u32> {
        &self.status
    }

    fn check(&self, n: usize, nv: usize) {
        assert!(
            n <= self.max_constraints && nv <= self.max_vertices,
            "coloring of {n} constraints over {nv} vertices exceeds the workspace"
        );
    }

    fn groups(&self, n: usize) -> [u32; 3] {
        [
            (n.div_ceil(self.workgroup as usize).max(1) as u32).min(MAX_GROUPS),
            1,
            1,
        ]
    }

    fn dispatch(&self, name: &str, kernel: KernelId, n: usize) -> Dispatch {
        Dispatch::new(format!("coloring.{name}"), kernel, self.groups(n))
            .workgroup_size(self.workgroup)
    }

    /// Records the reset before a coloring of `n` constraints over `nv` vertices: all
    /// constraints uncolored, all used-color masks empty.
    pub fn record_init(&self, g: &mut Graph, n: usize, nv: usize) {
        self.check(n, nv);
        g.fill(
            "coloring.clear_colors",
            self.color.slice(0..n.max(1)),
            UNCOLORED,
        );
        g.fill(
            "coloring.clear_used",
            self.used.slice(0..USED_WORDS * nv.max(1)),
            0,
        );
    }

    /// Records `rounds` Jones–Plassmann rounds on `constraints[..n]` (vertex slots `>= nv` are
    /// ignored), then the progress count into [`GpuColoring::status`].
    pub fn record_rounds(
        &self,
        g: &mut Graph,
        constraints: &GpuBuffer<[u32; 4]>,
        n: usize,
        nv: usize,
        seed: u32,
        rounds: u32,
    ) {
        self.check(n, nv);
        assert!(constraints.len() >= n, "constraint buffer shorter than {n}");
        let cons = constraints.slice(0..n.max(1));
        let color = self.color.slice(0..n.max(1));
        let vmax = self.vmax.slice(0..nv.max(1));
        let used = self.used.slice(0..USED_WORDS * nv.max(1));
        let push = [n as u32, nv as u32, seed, 0];
        for r in 0..rounds {
            g.fill(format!("coloring.clear_vmax[{r}]"), vmax.clone(), 0);
            g.dispatch(
                self.dispatch(&format!("jp_priority[{r}]"), ids::COLORING_JP_PRIORITY, n)
                    .read(cons.clone())
                    .read(color.clone())
                    .read_write(vmax.clone())
                    .push(&push),
            );
            g.dispatch(
                self.dispatch(&format!("jp_select[{r}]"), ids::COLORING_JP_SELECT, n)
                    .read(cons.clone())
                    .read(vmax.clone())
                    .read_write(color.clone())
                    .read_write(used.clone())
                    .push(&push),
            );
        }
        g.fill("coloring.clear_status", &self.status, 0);
        g.dispatch(
            self.dispatch("jp_count", ids::COLORING_JP_COUNT, n)
                .read(color)
                .read_write(&self.status)
                .push(&push),
        );
    }

    /// Records the counting sort of `n` colored constraints by color into
    /// [`GpuColoring::offsets`] and [`GpuColoring::grouped`].
    pub fn record_group(&self, g: &mut Graph, n: usize) {
        self.check(n, 0);
        let color = self.color.slice(0..n.max(1));
        let slots = MAX_COLORS as usize + 1;
        let push = [n as u32, 0, 0, 0];
        g.fill("coloring.clear_counts", &self.counts, 0);
        g.dispatch(
            self.dispatch("group_count", ids::COLORING_GROUP_COUNT, n)
                .read(color.clone())
                .read_write(&self.counts)
                .push(&push),
        );
        self.scan
            .record(g, &self.counts, &self.offsets, slots, ScanKind::Exclusive);
        g.copy("coloring.cursor", &self.offsets, &self.cursor);
        g.dispatch(
            self.dispatch("group_scatter", ids::COLORING_GROUP_SCATTER, n)
                .read(color)
                .read_write(&self.cursor)
                .write(self.grouped.slice(0..n.max(1)))
                .push(&push),
        );
    }

    /// Records the whole coloring and grouping in one single-workgroup dispatch
    /// (`jp_workgroup.comp`: rounds until done, barriers between passes) of the first
    /// `count[count_index]` constraints (at most `capacity`) over `nv` vertices, a count the
    /// device wrote: no host round trip. Same colors as [`GpuColoring::record_rounds`] for the
    /// same seed; [`GpuColoring::status`] gets `[0, overflowed, colors used, rounds]`.
    #[allow(clippy::too_many_arguments)]
    pub fn record_workgroup(
        &self,
        g: &mut Graph,
        name: &str,
        constraints: &GpuBuffer<[u32; 4]>,
        count: &GpuBuffer<u32>,
        count_index: u32,
        capacity: usize,
        nv: usize,
        seed: u32,
    ) {
        self.check(capacity, nv);
        assert!(
            constraints.len() >= capacity,
            "constraint buffer shorter than {capacity}"
        );
        assert!(
            (count_index as usize) < count.len(),
            "count index past the count buffer"
        );
        let push = [capacity as u32, nv as u32, seed, count_index];
        g.dispatch(
            Dispatch::new(name, ids::COLORING_JP_WORKGROUP, [1, 1, 1])
                .workgroup_size(WORKGROUP_SINGLE)
                .read(constraints.slice(0..capacity.max(1)))
                .read(count)
                .read_write(self.color.slice(0..capacity.max(1)))
                .read_write(self.vmax.slice(0..nv.max(1)))
                .read_write(self.used.slice(0..USED_WORDS * nv.max(1)))
                .write(&self.offsets)
                .write(self.grouped.slice(0..capacity.max(1)))
                .write(&self.status)
                .push(&push),
        );
    }

    /// Colors host constraints with [`GpuColoring::record_workgroup`] (the count uploaded to a
    /// device buffer) and reads the result back (for tests and tools).
    pub fn color_host_in_workgroup(
        &self,
        ctx: &Context,
        constraints: &[[u32; 4]],
        nv: usize,
        seed: u32,
    ) -> Result<HostColoring, ColoringError> {
        validate(constraints, nv)?;
        let n = constraints.len();
        if n > self.max_constraints || nv > self.max_vertices {
            return Err(ColoringError::Capacity {
                what: if n > self.max_constraints {
                    "constraints"
                } else {
                    "vertices"
                },
                requested: if n > self.max_constraints { n } else { nv },
                capacity: if n > self.max_constraints {
                    self.max_constraints
                } else {
                    self.max_vertices
                },
            });
        }
        let buf = upload_constraints(ctx, constraints)?;
        let count = ctx.upload_buffer("coloring.count", &[0, n as u32], BufferUsage::STORAGE)?;
        let mut g = Graph::new("coloring.workgroup");
        self.record_workgroup(
            &mut g,
            "coloring.jp_workgroup",
            &buf,
            &count,
            1,
            n,
            nv,
            seed,
        );
        g.compile(ctx, CompileOptions::default())?.run()?;
        let status = self.status.read()?;
        let mut colors = self.color.read()?;
        colors.truncate(n);
        let offsets = self.offsets.read()?;
        let mut grouped = self.grouped.read()?;
        grouped.truncate(n - status[1] as usize);
        Ok(HostColoring {
            colors,
            offsets,
            grouped,
            stats: GpuColoringStats {
                num_colors: status[2],
                rounds_recorded: status[3],
                runs: 1,
                overflowed: status[1],
            },
        })
    }

    /// Compiles the graphs that color `constraints[..n]` (vertices below `nv`, the rest
    /// padding) with `seed` and group them by color; the plan can be run again every time the
    /// constraint buffer's contents change (same `n`).
    pub fn plan(
        &self,
        ctx: &Context,
        constraints: &GpuBuffer<[u32; 4]>,
        n: usize,
        nv: usize,
        seed: u32,
    ) -> Result<ColoringPlan<'_>, ColoringError> {
        if n > self.max_constraints || n > constraints.len() {
            return Err(ColoringError::Capacity {
                what: "constraints",
                requested: n,
                capacity: self.max_constraints.min(constraints.len()),
            });
        }
        if nv > self.max_vertices {
            return Err(ColoringError::Capacity {
                what: "vertices",
                requested: nv,
                capacity: self.max_vertices,
            });
        }
        let mut init = Graph::new("coloring.init");
        let mut rounds = Graph::new("coloring.rounds");
        let mut group = Graph::new("coloring.group");
        if n == 0 {
            init.fill("coloring.clear_offsets", &self.offsets, 0);
        } else {
            self.record_init(&mut init, n, nv);
            self.record_rounds(&mut rounds, constraints, n, nv, seed, self.rounds_per_run);
            self.record_group(&mut group, n);
        }
        let compile = |g: Graph| g.compile(ctx, CompileOptions::default());
        Ok(ColoringPlan {
            coloring: self,
            n,
            init: compile(init)?,
            rounds: if n == 0 { None } else { Some(compile(rounds)?) },
            group: if n == 0 { None } else { Some(compile(group)?) },
        })
    }

    /// Colors `constraints[..n]` (vertices below `nv`, the rest padding) with `seed` and groups
    /// them by color (see [`GpuColoring::plan`] and [`ColoringPlan::run`]).
    pub fn color(
        &self,
        ctx: &Context,
        constraints: &GpuBuffer<[u32; 4]>,
        n: usize,
        nv: usize,
        seed: u32,
    ) -> Result<GpuColoringStats, ColoringError> {
        self.plan(ctx, constraints, n, nv, seed)?.run()
    }

    /// Uploads host constraints (checked against `nv`), colors them on the GPU and reads the
    /// result back.
    pub fn color_host(
        &self,
        ctx: &Context,
        constraints: &[[u32; 4]],
        nv: usize,
        seed: u32,
    ) -> Result<HostColoring, ColoringError> {
        validate(constraints, nv)?;
        let n = constraints.len();
        let buf = upload_constraints(ctx, constraints)?;
        let stats = self.color(ctx, &buf, n, nv, seed)?;
        let mut colors = self.color.read()?;
        colors.truncate(n);
        let offsets = self.offsets.read()?;
        let mut grouped = self.grouped.read()?;
        grouped.truncate(n);
        Ok(HostColoring {
            colors,
            offsets,
            grouped,
            stats,
        })
    }
}

/// Uploads host constraints (one padding constraint for none: buffers are never empty).
fn upload_constraints(ctx: &Context, constraints: &[[u32; 4]]) -> VkResult<GpuBuffer<[u32; 4]>> {
    if constraints.is_empty() {
        ctx.upload_buffer(
            "coloring.constraints",
            &[[super::PAD; 4]],
            BufferUsage::STORAGE,
        )
    } else {
        ctx.upload_buffer("coloring.constraints", constraints, BufferUsage::STORAGE)
    }
}

/// A GPU coloring read back to the host ([`GpuColoring::color_host`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostColoring {
    /// Color of each constraint.
    pub colors: Vec<u32>,
    /// Color `c` owns `grouped[offsets[c]..offsets[c + 1]]` ([`MAX_COLORS`] + 1 entries).
    pub offsets: Vec<u32>,
    /// Constraint indices grouped by color (order within a color unspecified).
    pub grouped: Vec<u32>,
    /// Colors, rounds and runs.
    pub stats: GpuColoringStats,
}

/// Compiled graphs of one coloring problem (constraint buffer, counts, seed), reusable.
pub struct ColoringPlan<'a> {
    coloring: &'a GpuColoring,
    n: usize,
    init: CompiledGraph,
    rounds: Option<CompiledGraph>,
    group: Option<CompiledGraph>,
}

impl ColoringPlan<'_> {
    /// Runs the coloring: graphs of the configured rounds until every constraint is colored
    /// (reading back only the status scalars), then the grouping by color. Fails with
    /// [`ColoringError::TooManyColors`] when more than [`MAX_COLORS`] colors would be needed.
    pub fn run(&self) -> Result<GpuColoringStats, ColoringError> {
        self.run_inner(false)
    }

    /// Like [`ColoringPlan::run`], but constraints that would need a color past [`MAX_COLORS`]
    /// stay uncolored (counted in [`GpuColoringStats::overflowed`], left out of the color
    /// groups) instead of failing: for solvers that may leave constraints out of a sweep.
    pub fn run_partial(&self) -> Result<GpuColoringStats, ColoringError> {
        self.run_inner(true)
    }

    fn run_inner(&self, allow_overflow: bool) -> Result<GpuColoringStats, ColoringError> {
        self.init.run()?;
        let (Some(rounds), Some(group)) = (&self.rounds, &self.group) else {
            return Ok(GpuColoringStats {
                num_colors: 0,
                rounds_recorded: 0,
                runs: 0,
                overflowed: 0,
            });
        };
        let per_run = self.coloring.rounds_per_run;
        // Every round colors at least the uncolored constraint of largest priority.
        let max_runs = self.n.div_ceil(per_run as usize) as u32 + 1;
        let mut runs = 0;
        loop {
            rounds.run()?;
            runs += 1;
            let status = self.coloring.status.read()?;
            let (uncolored, overflowed, num_colors) = (status[0], status[1], status[2]);
            if uncolored == 0 {
                if overflowed > 0 && !allow_overflow {
                    return Err(ColoringError::TooManyColors {
                        limit: MAX_COLORS,
                        overflowed,
                    });
                }
                group.run()?;
                return Ok(GpuColoringStats {
                    num_colors,
                    rounds_recorded: runs * per_run,
                    runs,
                    overflowed,
                });
            }
            if runs >= max_runs {
                return Err(ColoringError::NotConverged { uncolored });
            }
        }
    }
}
