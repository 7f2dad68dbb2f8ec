//! Random-priority Jones–Plassmann coloring of the 8-node contact graph on the GPU
//! (`kernels/prox/jp_priority.comp`, `jp_select.comp`, `jp_count.comp`, after
//! [`crate::coloring::gpu`] whose 4-slot kernels cannot hold 8 nodes), then the counting sort by
//! color (`kernels/coloring/group_count.comp`, [`Scan`], `group_scatter.comp`) and the
//! permutation of the raw contacts into color-major solver order (`kernels/prox/permute.comp`).
//! At most [`MAX_COLORS`] colors. Reference: `cpu_reference::prox::graph::jones_plassmann`.

use super::{ProxError, ProxSolver, WG};
use crate::coloring::{MAX_COLORS, UNCOLORED};
use crate::primitives::{Scan, ScanKind};
use crate::vk::{ids, BufferUsage, CompileOptions, CompiledGraph, Dispatch, GpuBuffer, Graph};

/// Words of the used-color mask per node (`jp_select.comp::USED_WORDS`).
const USED_WORDS: usize = MAX_COLORS as usize / 32;

/// The device coloring's workspace and graphs for one contact capacity.
pub(crate) struct DeviceColoring {
    color: GpuBuffer<u32>,
    status: GpuBuffer<u32>,
    _grouped: GpuBuffer<u32>,
    _vmax: GpuBuffer<u32>,
    _used: GpuBuffer<u32>,
    _counts: GpuBuffer<u32>,
    _cursor: GpuBuffer<u32>,
    _scan: Scan,
    init: CompiledGraph,
    rounds: CompiledGraph,
    group: CompiledGraph,
    rounds_per_run: u32,
}

impl DeviceColoring {
    /// Allocates the workspace for the solver's capacity and compiles the graphs.
    pub(crate) fn new(s: &ProxSolver) -> Result<Self, ProxError> {
        let ctx = s.context();
        let (k, n) = (s.capacity(), s.num_nodes().max(1));
        let st = BufferUsage::STORAGE;
        let slots = MAX_COLORS as usize + 1;
        let color: GpuBuffer<u32> = ctx.create_buffer("prox.jp_color", k, st)?;
        let vmax: GpuBuffer<u32> = ctx.create_buffer("prox.jp_vmax", n, st)?;
        let used: GpuBuffer<u32> = ctx.create_buffer("prox.jp_used", USED_WORDS * n, st)?;
        let status: GpuBuffer<u32> = ctx.create_buffer("prox.jp_status", 4, st)?;
        let counts: GpuBuffer<u32> = ctx.create_buffer("prox.jp_counts", slots, st)?;
        let cursor: GpuBuffer<u32> = ctx.create_buffer("prox.jp_cursor", slots, st)?;
        let grouped: GpuBuffer<u32> = ctx.create_buffer("prox.jp_grouped", k, st)?;
        let scan = Scan::new(ctx, slots)?;
        let groups = [(k.div_ceil(WG as usize).max(1) as u32).min(65_535), 1, 1];
        let mode = u32::from(!s.settings().graph_fixed_nodes);
        let push = s.params(0, 0, mode);
        let meta = s.meta_buffer();
        let (nodes, offsets) = (&s.arrays.raw_nodes, &s.arrays.color_offsets);
        let mut init = Graph::new("prox.jp_init");
        init.fill("prox.jp_clear_colors", &color, UNCOLORED);
        init.fill("prox.jp_clear_used", &used, 0);
        let rounds_per_run = 8;
        let mut rounds = Graph::new("prox.jp_rounds");
        for r in 0..rounds_per_run {
            rounds.fill(format!("prox.jp_clear_vmax[{r}]"), &vmax, 0);
            rounds.dispatch(
                Dispatch::new(
                    format!("prox.jp_priority[{r}]"),
                    ids::PROX_JP_PRIORITY,
                    groups,
                )
                .workgroup_size(WG)
                .read(meta)
                .read(nodes)
                .read(&color)
                .read_write(&vmax)
                .read(s.inv_mass_slice())
                .push(&push),
            );
            rounds.dispatch(
                Dispatch::new(format!("prox.jp_select[{r}]"), ids::PROX_JP_SELECT, groups)
                    .workgroup_size(WG)
                    .read(meta)
                    .read(nodes)
                    .read(&vmax)
                    .read_write(&color)
                    .read_write(&used)
                    .read(s.inv_mass_slice())
                    .push(&push),
            );
        }
        rounds.fill("prox.jp_clear_status", &status, 0);
        rounds.dispatch(
            Dispatch::new("prox.jp_count", ids::PROX_JP_COUNT, groups)
                .workgroup_size(WG)
                .read(meta)
                .read(&color)
                .read_write(&status)
                .push(&push),
        );
        let mut group = Graph::new("prox.jp_group");
        let npush = [k as u32, 0, 0, 0];
        group.fill("prox.jp_clear_counts", &counts, 0);
        group.dispatch(
            Dispatch::new("prox.jp_group_count", ids::COLORING_GROUP_COUNT, groups)
                .workgroup_size(WG)
                .read(&color)
                .read_write(&counts)
                .push(&npush),
        );
        scan.record(&mut group, &counts, offsets, slots, ScanKind::Exclusive);
        group.copy("prox.jp_cursor", offsets.slice(0..slots), &cursor);
        group.dispatch(
            Dispatch::new("prox.jp_group_scatter", ids::COLORING_GROUP_SCATTER, groups)
                .workgroup_size(WG)
                .read(&color)
                .read_write(&cursor)
                .write(&grouped)
                .push(&npush),
        );
        s.record_permute(&mut group, Some(&grouped));
        let compile = |g: &Graph| g.compile(ctx, CompileOptions::default());
        Ok(DeviceColoring {
            init: compile(&init)?,
            rounds: compile(&rounds)?,
            group: compile(&group)?,
            color,
            status,
            _grouped: grouped,
            _vmax: vmax,
            _used: used,
            _counts: counts,
            _cursor: cursor,
            _scan: scan,
            rounds_per_run,
        })
    }

    /// Colors the raw contacts (count in the solver's meta[0]), groups and permutes them;
    /// returns the number of colors. More than [`MAX_COLORS`] colors is an error.
    pub(crate) fn run(&self, s: &ProxSolver) -> Result<u32, ProxError> {
        self.init.run()?;
        let k = s.meta_buffer().read()?[0] as usize;
        let max_runs = k.div_ceil(self.rounds_per_run as usize) + 2;
        for _ in 0..max_runs {
            self.rounds.run()?;
            let st = self.status.read()?;
            if st[0] == 0 {
                if st[1] > 0 {
                    return Err(ProxError::Coloring(format!(
                        "{} contacts need more than {MAX_COLORS} colors (use prox.coloring = \"greedy\")",
                        st[1]
                    )));
                }
                self.group.run()?;
                return Ok(st[2]);
            }
        }
        Err(ProxError::Coloring(
            "Jones–Plassmann made no progress".into(),
        ))
    }

    /// Colors of the raw contacts after [`DeviceColoring::run`].
    pub(crate) fn colors(&self) -> &GpuBuffer<u32> {
        &self.color
    }
}
