//! Stable key-value LSD radix sort (8- to 11-bit digits, [`Tuning::radix_bits`]) of u32 or u64
//! keys with u32 values. Each pass: per-tile digit histograms
//! (`kernels/primitives/radix_histogram.comp`), their exclusive scan ([`super::Scan`]), and a
//! stable scatter (`kernels/primitives/radix_scatter.comp`). Lane-serial u32 sorts move
//! interleaved (key, value) pairs between their first and last pass.
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
    /// Lane-serial u32 sorts: interleaved (key, value) pairs between the first and the last
    /// pass (the caller's arrays are never read and written by the same pass).
    packed: bool,
    /// Temporaries: with `packed`, two ping-pong buffers of 2 × capacity words (a one-pass sort
    /// uses the first as separate keys, then values from word `value_offset`); otherwise keys
    /// and values.
    work: [GpuBuffer<u32>; 2],
    /// Where a one-pass packed sort's values start in `work[0]`: the capacity rounded up to
    /// the device's storage-buffer offset alignment.
    value_offset: usize,
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

/// Histogram entries for `n` keys: one per digit per tile, or per invocation with the
/// lane-serial kernels.
fn hist_len(n: usize, t: &Tuning) -> usize {
    let per_tile = if t.lane_serial {
        t.radix_digits() * t.radix_workgroup as usize
    } else {
        t.radix_digits()
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
        let tuning = tuning.for_radix_sort(capacity, ctx.caps());
        let hist_len = hist_len(capacity, &tuning);
        let packed = tuning.lane_serial && keys == SortKeys::U32;
        let cap = capacity.max(1);
        let align_words = (ctx.caps().min_storage_offset_alignment as usize / 4).max(1);
        let value_offset = cap.next_multiple_of(align_words);
        let work = if packed {
            [
                ctx.create_buffer("radix.pairs[0]", value_offset + cap, BufferUsage::STORAGE)?,
                ctx.create_buffer("radix.pairs[1]", 2 * cap, BufferUsage::STORAGE)?,
            ]
        } else {
            [
                ctx.create_buffer("radix.keys_tmp", cap * keys.words(), BufferUsage::STORAGE)?,
                ctx.create_buffer("radix.vals_tmp", cap, BufferUsage::STORAGE)?,
            ]
        };
        Ok(RadixSort {
            capacity,
            keys,
            tuning,
            packed,
            work,
            value_offset,
            hist: ctx.create_buffer("radix.hist", hist_len, BufferUsage::STORAGE)?,
            offsets: ctx.create_buffer("radix.offsets", hist_len, BufferUsage::STORAGE)?,
            scan: Scan::with_tuning(ctx, hist_len, tuning)?,
        })
    }

    /// Separate keys and values of `len` pairs in the temporaries.
    fn split_tmp(&self, len: usize) -> Side {
        if self.packed {
            let v = self.value_offset;
            Side::Split(self.work[0].slice(0..len), self.work[0].slice(v..v + len))
        } else {
            Side::Split(
                self.work[0].slice(0..len * self.keys.words()),
                self.work[1].slice(0..len),
            )
        }
    }

    /// The launch shape this sort uses (digit width and keys per invocation resolved for its
    /// capacity).
    pub fn tuning(&self) -> Tuning {
        self.tuning
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
        let t = &self.tuning;
        let passes = key_bits.clamp(1, max_bits).div_ceil(t.radix_bits);
        let num_tiles = n.div_ceil(t.radix_tile()).max(1) as u32;
        let hist_len = hist_len(n, t);
        let user = Side::Split(keys.into(), values.into());
        let tmp = self.split_tmp(self.capacity.max(1));
        // Lane-serial u32 sorts of two passes or more go caller -> pairs -> ... -> caller.
        let packed = self.packed && passes >= 2;
        for pass in 0..passes {
            let (src, dst) = if packed {
                let pairs = |i: u32| Side::Packed((&self.work[i as usize % 2]).into());
                let src = if pass == 0 {
                    user.clone()
                } else {
                    pairs(pass - 1)
                };
                let dst = if pass + 1 == passes {
                    user.clone()
                } else {
                    pairs(pass)
                };
                (src, dst)
            } else if pass % 2 == 0 {
                (user.clone(), tmp.clone())
            } else {
                (tmp.clone(), user.clone())
            };
            let push = Push {
                n: n as u32,
                shift: pass * t.radix_bits,
                num_tiles,
            };
            let spec = [
                t.radix_items,
                words as u32,
                t.lane_serial as u32,
                t.radix_bits,
                src.is_packed() as u32,
                dst.is_packed() as u32,
            ];
            g.dispatch(
                Dispatch::new(
                    format!("radix.histogram[{pass}]"),
                    ids::PRIMITIVES_RADIX_HISTOGRAM,
                    [num_tiles, 1, 1],
                )
                .workgroup_size(t.radix_workgroup)
                .spec(&spec)
                .read(src.keys())
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
                .spec(&spec)
                .read(src.keys())
                .read(src.values())
                .read(&self.offsets)
                .write(dst.keys())
                .write(dst.values())
                .write(&self.hist)
                .push(&push),
            );
        }
        if !packed && passes % 2 == 1 {
            let back = self.split_tmp(n);
            g.copy("radix.copy_keys", back.keys(), keys.slice(0..n));
            g.copy("radix.copy_values", back.values(), values.slice(0..n));
        }
    }
}

/// Where a pass reads or writes its pairs.
#[derive(Clone)]
enum Side {
    /// Separate key and value arrays.
    Split(BufferSlice, BufferSlice),
    /// Interleaved (key, value) u32 pairs, bound as both the key and the value array.
    Packed(BufferSlice),
}

impl Side {
    fn is_packed(&self) -> bool {
        matches!(self, Side::Packed(_))
    }

    fn keys(&self) -> BufferSlice {
        match self {
            Side::Split(k, _) | Side::Packed(k) => k.clone(),
        }
    }

    fn values(&self) -> BufferSlice {
        match self {
            Side::Split(_, v) | Side::Packed(v) => v.clone(),
        }
    }
}
