//! Stream compaction: keeps `values[i]` where `flags[i] != 0`, in order. Passes: non-zero counts
//! per tile and their scan (shared with [`super::Scan`]), then `kernels/primitives/compact_tiles.comp`.
//! The kept count stays on the device (see [`Compact::record_indirect_args`]).
//! Reference: [`crate::cpu_reference::compact`].

use super::scan::{partial_count, record_tile_sums, tiles};
use super::Tuning;
use crate::vk::{ids, BufferUsage, Context, Dispatch, GpuBuffer, Graph, VkResult};

/// A compaction pipeline with its persistent workspace for up to `capacity` elements.
pub struct Compact {
    capacity: usize,
    tuning: Tuning,
    tile_sums: GpuBuffer<u32>,
}

impl Compact {
    /// Allocates the workspace for compactions of at most `capacity` elements.
    pub fn new(ctx: &Context, capacity: usize) -> VkResult<Compact> {
        Self::with_tuning(ctx, capacity, Tuning::from_env(ctx.caps()))
    }

    /// Like [`Compact::new`] with an explicit launch shape.
    pub fn with_tuning(ctx: &Context, capacity: usize, tuning: Tuning) -> VkResult<Compact> {
        let tile_sums = ctx.create_buffer(
            "compact.tile_sums",
            partial_count(capacity, &tuning) as usize + 1,
            BufferUsage::STORAGE,
        )?;
        Ok(Compact {
            capacity,
            tuning,
            tile_sums,
        })
    }

    /// Records `out[..count] = [values[i] for i < n if flags[i] != 0]`.
    pub fn record(
        &self,
        g: &mut Graph,
        flags: &GpuBuffer<u32>,
        values: &GpuBuffer<u32>,
        out: &GpuBuffer<u32>,
        n: usize,
    ) {
        assert!(
            n <= self.capacity && n <= flags.len() && n <= values.len() && n <= out.len(),
            "compaction of {n} exceeds capacity or buffers"
        );
        record_tile_sums(g, &self.tuning, flags, &self.tile_sums, n, 1, "compact");
        let t = &self.tuning;
        g.dispatch(
            Dispatch::new(
                "compact.scatter",
                ids::PRIMITIVES_COMPACT_TILES,
                [tiles(n, t.tile_elements()), 1, 1],
            )
            .workgroup_size(t.workgroup)
            .spec(&[t.items, t.lane_serial as u32])
            .read(flags)
            .read(&self.tile_sums)
            .read(values)
            .write(out)
            .push(&(n as u32)),
        );
    }

    /// Index in the workspace where the kept count of a compaction of `n` elements lands.
    fn count_index(&self, n: usize) -> u32 {
        partial_count(n, &self.tuning)
    }

    /// Records a copy of the kept count (one u32) into `dst[0]`.
    pub fn record_count_copy(&self, g: &mut Graph, n: usize, dst: &GpuBuffer<u32>) {
        let i = self.count_index(n) as usize;
        g.copy(
            "compact.count",
            self.tile_sums.slice(i..i + 1),
            dst.slice(0..1),
        );
    }

    /// Records `args = {ceil(count / per_group), 1, 1}` for an indirect dispatch over the kept elements.
    pub fn record_indirect_args(
        &self,
        g: &mut Graph,
        n: usize,
        per_group: u32,
        args: &GpuBuffer<u32>,
    ) {
        #[repr(C)]
        #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
        struct P {
            count_index: u32,
            per_group: u32,
        }
        g.dispatch(
            Dispatch::new(
                "compact.indirect_args",
                ids::PRIMITIVES_INDIRECT_ARGS,
                [1, 1, 1],
            )
            .workgroup_size(self.tuning.workgroup)
            .read(&self.tile_sums)
            .write(args)
            .push(&P {
                count_index: self.count_index(n),
                per_group: per_group.max(1),
            }),
        );
    }

    /// Reads the kept count of the last completed run of a graph recorded with `n` elements.
    pub fn read_count(&self, n: usize) -> VkResult<u32> {
        let mut v = vec![0u32; self.count_index(n) as usize + 1];
        self.tile_sums.read_into(&mut v)?;
        Ok(v[self.count_index(n) as usize])
    }
}
