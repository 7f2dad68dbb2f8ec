//! Prefix sum of u32 (exclusive or inclusive, wrapping) in three passes: tile sums
//! (`kernels/primitives/scan_tile_sums.comp`), one-workgroup scan of the tile sums
//! (`scan_block_sums.comp`), and the tile scans with their offsets (`scan_tiles.comp`).
//! Reference: [`crate::cpu_reference::scan`].

use super::Tuning;
use crate::vk::{ids, BufferUsage, Context, Dispatch, GpuBuffer, Graph, VkResult};

/// Exclusive or inclusive scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanKind {
    /// `out[i] = in[0] + … + in[i-1]`.
    Exclusive,
    /// `out[i] = in[0] + … + in[i]`.
    Inclusive,
}

/// A prefix-sum pipeline with its persistent workspace for up to `capacity` elements.
pub struct Scan {
    capacity: usize,
    tuning: Tuning,
    tile_sums: GpuBuffer<u32>,
}

pub(crate) fn tiles(n: usize, tile: usize) -> u32 {
    n.div_ceil(tile).max(1) as u32
}

/// Number of partial sums pass 1 writes for `n` elements: one per tile, or one per invocation
/// with the lane-serial layout. The grand total lands right after them.
pub(crate) fn partial_count(n: usize, t: &Tuning) -> u32 {
    tiles(n, t.tile_elements()) * if t.lane_serial { t.workgroup } else { 1 }
}

impl Scan {
    /// Allocates the workspace for scans of at most `capacity` elements.
    pub fn new(ctx: &Context, capacity: usize) -> VkResult<Scan> {
        Self::with_tuning(ctx, capacity, Tuning::from_env(ctx.caps()))
    }

    /// Like [`Scan::new`] with an explicit launch shape.
    pub fn with_tuning(ctx: &Context, capacity: usize, tuning: Tuning) -> VkResult<Scan> {
        let tile_sums = ctx.create_buffer(
            "scan.tile_sums",
            partial_count(capacity, &tuning) as usize + 1,
            BufferUsage::STORAGE,
        )?;
        Ok(Scan {
            capacity,
            tuning,
            tile_sums,
        })
    }

    /// Largest `n` this workspace supports.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Records `output[..n] = scan(input[..n])` into `g`. `input` and `output` may be the same buffer.
    pub fn record(
        &self,
        g: &mut Graph,
        input: &GpuBuffer<u32>,
        output: &GpuBuffer<u32>,
        n: usize,
        kind: ScanKind,
    ) {
        assert!(
            n <= self.capacity && n <= input.len() && n <= output.len(),
            "scan of {n} exceeds capacity or buffers"
        );
        record_tile_sums(g, &self.tuning, input, &self.tile_sums, n, 0, "scan");
        let m = tiles(n, self.tuning.tile_elements());
        let t = &self.tuning;
        g.dispatch(
            Dispatch::new("scan.tiles", ids::PRIMITIVES_SCAN_TILES, [m, 1, 1])
                .workgroup_size(t.workgroup)
                .spec(&[
                    t.items,
                    (kind == ScanKind::Inclusive) as u32,
                    t.lane_serial as u32,
                ])
                .read(input)
                .read(&self.tile_sums)
                .write(output)
                .push(&(n as u32)),
        );
    }
}

/// Records passes 1 and 2 shared by scan and compaction: per-tile (or per-invocation) sums
/// (MODE 0) or non-zero counts (MODE 1), then their exclusive scan in place with the total
/// at index [`partial_count`].
pub(crate) fn record_tile_sums(
    g: &mut Graph,
    t: &Tuning,
    input: &GpuBuffer<u32>,
    tile_sums: &GpuBuffer<u32>,
    n: usize,
    mode: u32,
    label: &str,
) {
    let groups = tiles(n, t.tile_elements());
    let m = partial_count(n, t);
    g.dispatch(
        Dispatch::new(
            format!("{label}.tile_sums"),
            ids::PRIMITIVES_SCAN_TILE_SUMS,
            [groups, 1, 1],
        )
        .workgroup_size(t.workgroup)
        .spec(&[t.items, mode, t.lane_serial as u32])
        .read(input)
        .write(tile_sums)
        .push(&(n as u32)),
    );
    g.dispatch(
        Dispatch::new(
            format!("{label}.block_sums"),
            ids::PRIMITIVES_SCAN_BLOCK_SUMS,
            [1, 1, 1],
        )
        .workgroup_size(t.workgroup.max(64).min(1024))
        .spec(&[t.lane_serial as u32])
        .read_write(tile_sums)
        .push(&m),
    );
}
