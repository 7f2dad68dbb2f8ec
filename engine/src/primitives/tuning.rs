//! Workgroup sizes and per-invocation work of the primitives, chosen per device.

use crate::vk::Capabilities;

/// Launch shape of the primitive kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Tuning {
    /// Workgroup size of the streaming kernels (scan, compaction, reduction).
    pub workgroup: u32,
    /// uvec4 loads per invocation per tile in the streaming kernels.
    pub items: u32,
    /// Workgroup size of the radix-sort kernels.
    pub radix_workgroup: u32,
    /// Keys per invocation per tile in the radix-sort kernels (0: chosen per sort size by
    /// [`Tuning::for_radix_sort`]).
    pub radix_items: u32,
    /// Bits per radix digit, 8 to 11 (0: chosen per sort size): 32-bit keys take
    /// `ceil(32 / radix_bits)` passes.
    pub radix_bits: u32,
    /// Invocations own contiguous ranges and work through them serially (CPU devices), instead
    /// of coalesced rounds with subgroup operations per element (GPUs).
    pub lane_serial: bool,
}

impl Tuning {
    /// Defaults for a device: CPU devices (lavapipe) run one subgroup per workgroup with many
    /// items per invocation (no barriers, fat invocations), and radix sorts pick their digit
    /// width and keys per invocation from their size; GPUs use wide workgroups.
    pub fn for_device(caps: &Capabilities) -> Tuning {
        let sg = caps.subgroup_size.max(1);
        if caps.device_type == "cpu" {
            Tuning {
                workgroup: sg,
                items: 256,
                radix_workgroup: sg,
                radix_items: 0,
                radix_bits: 0,
                lane_serial: true,
            }
        } else {
            Tuning {
                workgroup: 256,
                items: 4,
                radix_workgroup: 256.max(sg),
                radix_items: 16,
                radix_bits: 8,
                lane_serial: false,
            }
        }
    }

    /// The coalesced GPU-style shape (subgroup operations per round), valid on every device;
    /// tests use it to exercise both code paths on lavapipe.
    pub fn gpu_style(caps: &Capabilities) -> Tuning {
        let sg = caps.subgroup_size.max(1);
        Tuning {
            workgroup: 8 * sg,
            items: 4,
            radix_workgroup: 4 * sg,
            radix_items: 16,
            radix_bits: 8,
            lane_serial: false,
        }
    }

    /// [`Tuning::for_device`] overridden by `SUPPLE_TUNE="workgroup=64,items=8,radix_workgroup=32,radix_items=64,lane_serial=0"`.
    pub fn from_env(caps: &Capabilities) -> Tuning {
        let mut t = Tuning::for_device(caps);
        if let Ok(s) = std::env::var("SUPPLE_TUNE") {
            for kv in s.split(',') {
                let mut it = kv.splitn(2, '=');
                let (Some(k), Some(v)) = (
                    it.next(),
                    it.next().and_then(|v| v.trim().parse::<u32>().ok()),
                ) else {
                    continue;
                };
                if v == 0 && k.trim() != "lane_serial" {
                    continue;
                }
                match k.trim() {
                    "workgroup" => t.workgroup = v,
                    "items" => t.items = v,
                    "radix_workgroup" => t.radix_workgroup = v,
                    "radix_items" => t.radix_items = v,
                    "radix_bits" => t.radix_bits = v,
                    "lane_serial" => t.lane_serial = v != 0,
                    _ => {}
                }
            }
        }
        let sg = caps.subgroup_size.max(1);
        // Workgroups must hold whole subgroups, and at most MAX_SUBGROUPS (64) of them.
        let fix = |w: u32| {
            (w.max(sg) / sg * sg)
                .min(64 * sg)
                .min(caps.max_workgroup_invocations.max(sg))
        };
        t.workgroup = fix(t.workgroup);
        t.radix_workgroup = fix(t.radix_workgroup);
        if t.radix_bits != 0 {
            t.radix_bits = t.radix_bits.clamp(8, 11);
        }
        // Lane-serial radix kernels load keys 16 bytes at a time from 4-key-aligned ranges.
        t.radix_items = t.radix_items.div_ceil(4) * 4;
        t.fit_radix(caps);
        t
    }

    /// The launch shape of a radix sort of at most `capacity` pairs: resolves a digit width or
    /// keys per invocation left at 0. Lane-serial sorts aim at 128 invocations of 256 to 8192
    /// keys each, with 11-bit digits (3 passes for u32 keys) once an invocation has at least
    /// 4096 keys to amortise its 2048 counters, 8-bit digits below (measured on lavapipe:
    /// docs/measurements.md).
    pub fn for_radix_sort(&self, capacity: usize, caps: &Capabilities) -> Tuning {
        let mut t = *self;
        if t.radix_items == 0 {
            t.radix_items = if t.lane_serial {
                (capacity / 128).next_power_of_two().clamp(256, 8192) as u32
            } else {
                16
            };
        }
        if t.radix_bits == 0 {
            t.radix_bits = if t.lane_serial && t.radix_items >= 4096 {
                11
            } else {
                8
            };
        }
        t.fit_radix(caps);
        t
    }

    /// Keeps the radix kernels' shared memory within the device limit: lane-serial invocations
    /// hold 2^radix_bits 16-bit counters each (fewer than 2^16 keys per invocation), and may be
    /// fewer than a subgroup; the subgroup path holds 2^radix_bits 32-bit cursors.
    fn fit_radix(&mut self, caps: &Capabilities) {
        if self.radix_bits == 0 {
            return;
        }
        if self.lane_serial {
            self.radix_items = self.radix_items.min(65532);
            let max_lanes = (caps.max_shared_memory_bytes / (2u32 << self.radix_bits)).max(1);
            self.radix_workgroup = self.radix_workgroup.clamp(1, max_lanes);
        } else if (4u32 << self.radix_bits) > caps.max_shared_memory_bytes {
            self.radix_bits = 8;
        }
    }

    /// Elements per streaming tile (4 per uvec4).
    pub fn tile_elements(&self) -> usize {
        (self.workgroup * self.items * 4) as usize
    }

    /// Counters per radix digit histogram (2^radix_bits).
    pub fn radix_digits(&self) -> usize {
        1 << self.radix_bits
    }

    /// Keys per radix tile.
    pub fn radix_tile(&self) -> usize {
        (self.radix_workgroup * self.radix_items) as usize
    }
}
