//! Stable key-value LSD radix sort (8-bit digits) of u32 or u64 keys with u32 values. Each pass:
//! per-tile digit histograms (`kernels/primitives/radix_histogram.comp`), their exclusive scan
//! ([`super::Scan`]), and a stable scatter (`kernels/primitives/radix_scatter.comp`).
//! Reference: [`crate::cpu_reference::radix_sort`].

use super::scan::{Scan, ScanKind};
use super::Tuning;
use crate::vk::{ids, BufferSlice, BufferUsage, Context, Dispatch, GpuBuffer, Graph, VkResult};

/// Key width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKeys {
    /// u32 keys.
    U32,
    /// u64 keys (e.g. Morton codes), stored as little-endian (lo, hi) pairs.
    U64,
}

impl SortKeys {
    fn words(self) -> usize {
        match self {
            SortKeys::U32 => 1,
            SortKeys::U64 => 2,
        }
    }
}

/// A radix-sort pipeline with persistent ping-pong and histogram buffers for `capacity` pairs.
pub struct RadixSort {
    capacity: usize,
    keys: SortKeys,
    tuning: Tuning,
    keys_tmp: GpuBuffer<u32>,
    vals_tmp: GpuBuffer<u32>,
    hist: GpuBuffer<u32>,
    offsets: GpuBuffer<u32>,
    scan: Scan,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Push {
    n: u32,
    shift: u32,
    num_tiles: u32,
}

/// Histogram entries for `n` keys: 256 per tile, or per invocation with the lane-serial kernels.
fn hist_len(n: usize, t: &Tuning) -> usize {
    let per_tile = if t.lane_serial {
        256 * t.radix_workgroup as usize
    } else {
        256
    };
    n.div_ceil(t.radix_tile()).max(1) * per_tile
}

impl RadixSort {
    /// Allocates the workspace for sorts of at most `capacity` pairs.
    pub fn new(ctx: &Context, capacity: usize, keys: SortKeys) -> VkResult<RadixSort> {
        Self::with_tuning(ctx, capacity, keys, Tuning::from_env(ctx.caps()))
    }

    /// Like [`RadixSort::new`] with an explicit launch shape.
    pub fn with_tuning(
        ctx: &Context,
        capacity: usize,
        keys: SortKeys,
        tuning: Tuning,
    ) -> VkResult<RadixSort> {
        let hist_len = hist_len(capacity, &tuning);
        Ok(RadixSort {
            capacity,
            keys,
            tuning,
            keys_tmp: ctx.create_buffer(
                "radix.keys_tmp",
                capacity * keys.words(),
                BufferUsage::STORAGE,
            )?,
            vals_tmp: ctx.create_buffer("radix.vals_tmp", capacity, BufferUsage::STORAGE)?,
            hist: ctx.create_buffer("radix.hist", hist_len, BufferUsage::STORAGE)?,
            offsets: ctx.create_buffer("radix.offsets", hist_len, BufferUsage::STORAGE)?,
            scan: Scan::with_tuning(ctx, hist_len, tuning)?,
        })
    }

    /// Records a stable sort of the first `n` (key, value) pairs by the low `key_bits` bits of
    /// the key (bits above are ignored and must be zero for a full order). `keys` holds u32s
    /// (`SortKeys::U32`) or u64s (`SortKeys::U64`). The result is left in `keys`/`values`.
    pub fn record<K: bytemuck::Pod>(
        &self,
        g: &mut Graph,
        keys: &GpuBuffer<K>,
        values: &GpuBuffer<u32>,
        n: usize,
        key_bits: u32,
    ) {
        let words = self.keys.words();
        assert_eq!(
            std::mem::size_of::<K>(),
            4 * words,
            "key type does not match SortKeys"
        );
        assert!(
            n <= self.capacity && n <= keys.len() && n <= values.len(),
            "sort of {n} exceeds capacity or buffers"
        );
        let max_bits = 32 * words as u32;
        let passes = key_bits.clamp(1, max_bits).div_ceil(8);
        let t = &self.tuning;
        let num_tiles = n.div_ceil(t.radix_tile()).max(1) as u32;
        let hist_len = hist_len(n, t);
        let user_keys: BufferSlice = keys.into();
        let user_vals: BufferSlice = values.into();
        let tmp_keys: BufferSlice = (&self.keys_tmp).into();
        let tmp_vals: BufferSlice = (&self.vals_tmp).into();
        for pass in 0..passes {
            let (src_k, src_v, dst_k, dst_v) = if pass % 2 == 0 {
                (&user_keys, &user_vals, &tmp_keys, &tmp_vals)
            } else {
                (&tmp_keys, &tmp_vals, &user_keys, &user_vals)
            };
            let push = Push {
                n: n as u32,
                shift: pass * 8,
                num_tiles,
            };
            g.dispatch(
                Dispatch::new(
                    format!("radix.histogram[{pass}]"),
                    ids::PRIMITIVES_RADIX_HISTOGRAM,
                    [num_tiles, 1, 1],
                )
                .workgroup_size(t.radix_workgroup)
                .spec(&[t.radix_items, words as u32, t.lane_serial as u32])
                .read(src_k.clone())
                .write(&self.hist)
                .push(&push),
            );
            self.scan
                .record(g, &self.hist, &self.offsets, hist_len, ScanKind::Exclusive);
            g.dispatch(
                Dispatch::new(
                    format!("radix.scatter[{pass}]"),
                    ids::PRIMITIVES_RADIX_SCATTER,
                    [num_tiles, 1, 1],
                )
                .workgroup_size(t.radix_workgroup)
                .spec(&[t.radix_items, words as u32, t.lane_serial as u32])
                .read(src_k.clone())
                .read(src_v.clone())
                .read(&self.offsets)
                .write(dst_k.clone())
                .write(dst_v.clone())
                .push(&push),
            );
        }
        if passes % 2 == 1 {
            g.copy(
                "radix.copy_keys",
                self.keys_tmp.slice(0..n * words),
                keys.slice(0..n),
            );
            g.copy(
                "radix.copy_values",
                self.vals_tmp.slice(0..n),
                values.slice(0..n),
            );
        }
    }
}
