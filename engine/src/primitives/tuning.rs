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
    /// Keys per invocation per tile in the radix-sort kernels.
    pub radix_items: u32,
    /// Invocations own contiguous ranges and work through them serially (CPU devices), instead
    /// of coalesced rounds with subgroup operations per element (GPUs).
    pub lane_serial: bool,
}

impl Tuning {
    /// Defaults for a device: CPU devices (lavapipe) run one subgroup per workgroup with many
    /// items per invocation (no barriers, fat invocations); GPUs use wide workgroups.
    pub fn for_device(caps: &Capabilities) -> Tuning {
        let sg = caps.subgroup_size.max(1);
        if caps.device_type == "cpu" {
            Tuning {
                workgroup: sg,
                items: 256,
                radix_workgroup: sg,
                radix_items: 1024,
                lane_serial: true,
            }
        } else {
            Tuning {
                workgroup: 256,
                items: 4,
                radix_workgroup: 256.max(sg),
                radix_items: 16,
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
        // Lane-serial radix kernels load keys 16 bytes at a time from 4-key-aligned ranges.
        t.radix_items = t.radix_items.div_ceil(4) * 4;
        if t.lane_serial {
            // Per-invocation digit counters must fit in shared memory (256 u32 per invocation).
            let max_lanes = (caps.max_shared_memory_bytes / 1024).max(sg);
            t.radix_workgroup = t.radix_workgroup.min(max_lanes / sg * sg).max(sg);
        }
        t
    }

    /// Elements per streaming tile (4 per uvec4).
    pub fn tile_elements(&self) -> usize {
        (self.workgroup * self.items * 4) as usize
    }

    /// Keys per radix tile.
    pub fn radix_tile(&self) -> usize {
        (self.radix_workgroup * self.radix_items) as usize
    }
}
