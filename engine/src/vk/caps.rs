//! Capability discovery: everything Supple needs to know about a physical device, in one struct.

use ash::vk;
use serde::Serialize;
use std::ffi::CStr;

/// What a physical device can do, as far as Supple cares.
#[derive(Debug, Clone, Serialize)]
pub struct Capabilities {
    /// Index in the instance's physical-device list (what `SUPPLE_DEVICE=<index>` selects).
    pub index: usize,
    /// Device name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
    pub name: String,
    /// "discrete", "integrated", "virtual", "cpu" or "other".
    pub device_type: String,
    /// PCI vendor id.
    pub vendor_id: u32,
    /// Driver name and info string.
    pub driver: String,
    /// Vulkan API version the device supports, "major.minor.patch".
    pub api_version: String,
    /// Default subgroup size.
    pub subgroup_size: u32,
    /// Subgroup arithmetic + ballot + shuffle supported in compute shaders.
    pub subgroup_arithmetic_ballot_shuffle: bool,
    /// `atomicAdd` on f32 in storage buffers (VK_EXT_shader_atomic_float).
    pub f32_atomic_add: bool,
    /// `atomicMin/Max` on f32 in storage buffers (VK_EXT_shader_atomic_float2).
    pub f32_atomic_min_max: bool,
    /// `atomicAdd` on f64 in storage buffers.
    pub f64_atomic_add: bool,
    /// 64-bit integer atomics on storage buffers.
    pub i64_atomics: bool,
    /// `double` in shaders.
    pub f64: bool,
    /// 64-bit integers in shaders.
    pub i64: bool,
    /// Timestamp queries on compute queues.
    pub timestamps: bool,
    /// VK_EXT_conditional_rendering with its `conditionalRendering` feature: dispatches
    /// predicated on a device-written word (closed gated sections are skipped, not launched
    /// empty). On a host's own device, true only if the host enabled it. Whether Supple uses it
    /// is [`super::Context::conditional_rendering`] (also off by option).
    pub conditional_rendering: bool,
    /// Nanoseconds per timestamp tick.
    pub timestamp_period_ns: f32,
    /// maxStorageBufferRange in bytes (largest storage binding).
    pub max_storage_buffer_range: u64,
    /// maxPushConstantsSize in bytes.
    pub max_push_constants_size: u32,
    /// maxComputeWorkGroupInvocations.
    pub max_workgroup_invocations: u32,
    /// maxComputeSharedMemorySize in bytes.
    pub max_shared_memory_bytes: u32,
    /// minStorageBufferOffsetAlignment in bytes.
    pub min_storage_offset_alignment: u64,
    /// maxTexelBufferElements (largest uniform texel buffer view, in texels).
    pub max_texel_buffer_elements: u64,
    /// minTexelBufferOffsetAlignment in bytes.
    pub min_texel_offset_alignment: u64,
    /// Every device-local memory type is also host-visible (lavapipe, many integrated GPUs).
    pub unified_memory: bool,
    /// Total device-local heap size in bytes.
    pub device_local_bytes: u64,
    /// The device meets Supple's requirements (Vulkan 1.3, timeline semaphores, sync2, maintenance4, compute queue).
    pub suitable: bool,
    /// Why not, when `suitable` is false.
    pub unsuitable_reason: Option<String>,
}

impl Capabilities {
    /// Reads the capabilities of `pd`.
    ///
    /// # Safety
    /// `pd` must be a physical device of `instance`, and `instance` must be alive.
    pub unsafe fn query(
        instance: &ash::Instance,
        pd: vk::PhysicalDevice,
        index: usize,
    ) -> Capabilities {
        let exts: Vec<String> = instance
            .enumerate_device_extension_properties(pd)
            .unwrap_or_default()
            .iter()
            .map(|e| {
                e.extension_name_as_c_str()
                    .map(|c| c.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .collect();
        let has = |n: &CStr| exts.iter().any(|e| e.as_bytes() == n.to_bytes());

        let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut subgroup)
            .push_next(&mut driver);
        instance.get_physical_device_properties2(pd, &mut props2);
        let p = props2.properties;

        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut fa = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default();
        let mut fa2 = vk::PhysicalDeviceShaderAtomicFloat2FeaturesEXT::default();
        let mut fcr = vk::PhysicalDeviceConditionalRenderingFeaturesEXT::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f12)
            .push_next(&mut f13);
        if has(ash::ext::shader_atomic_float::NAME) {
            f2 = f2.push_next(&mut fa);
        }
        if has(ash::ext::shader_atomic_float2::NAME) {
            f2 = f2.push_next(&mut fa2);
        }
        let has_cr = has(ash::ext::conditional_rendering::NAME);
        if has_cr {
            f2 = f2.push_next(&mut fcr);
        }
        instance.get_physical_device_features2(pd, &mut f2);
        let features = f2.features;

        let qfs = instance.get_physical_device_queue_family_properties(pd);
        let compute_family = qfs
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE));
        let timestamps = compute_family.is_some_and(|i| qfs[i].timestamp_valid_bits > 0)
            && p.limits.timestamp_period > 0.0;

        let mem = instance.get_physical_device_memory_properties(pd);
        let types = &mem.memory_types[..mem.memory_type_count as usize];
        let device_local: Vec<_> = types
            .iter()
            .filter(|t| {
                t.property_flags
                    .contains(vk::MemoryPropertyFlags::DEVICE_LOCAL)
            })
            .collect();
        let unified = !device_local.is_empty()
            && device_local.iter().all(|t| {
                t.property_flags
                    .contains(vk::MemoryPropertyFlags::HOST_VISIBLE)
            });
        let heaps = &mem.memory_heaps[..mem.memory_heap_count as usize];
        let device_local_bytes = heaps
            .iter()
            .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
            .map(|h| h.size)
            .sum();

        let api = p.api_version;
        let mut reasons = Vec::new();
        if vk::api_version_major(api) < 1
            || (vk::api_version_major(api) == 1 && vk::api_version_minor(api) < 3)
        {
            reasons.push("Vulkan 1.3".to_string());
        }
        if f12.timeline_semaphore == 0 {
            reasons.push("timelineSemaphore".into());
        }
        if f13.synchronization2 == 0 {
            reasons.push("synchronization2".into());
        }
        if f13.maintenance4 == 0 {
            reasons.push("maintenance4".into());
        }
        if compute_family.is_none() {
            reasons.push("a compute queue".into());
        }
        let needed_ops = vk::SubgroupFeatureFlags::BASIC
            | vk::SubgroupFeatureFlags::ARITHMETIC
            | vk::SubgroupFeatureFlags::BALLOT
            | vk::SubgroupFeatureFlags::SHUFFLE;
        let sg_ok = subgroup.supported_operations.contains(needed_ops)
            && subgroup
                .supported_stages
                .contains(vk::ShaderStageFlags::COMPUTE);
        if !sg_ok {
            reasons.push("subgroup basic/arithmetic/ballot/shuffle in compute".into());
        }
        let c = |s: &[std::ffi::c_char]| {
            // SAFETY: Vulkan strings are NUL-terminated within their fixed arrays.
            unsafe { CStr::from_ptr(s.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        };
        Capabilities {
            index,
            name: c(&p.device_name),
            device_type: match p.device_type {
                vk::PhysicalDeviceType::DISCRETE_GPU => "discrete",
                vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated",
                vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual",
                vk::PhysicalDeviceType::CPU => "cpu",
                _ => "other",
            }
            .to_string(),
            vendor_id: p.vendor_id,
            driver: format!("{} {}", c(&driver.driver_name), c(&driver.driver_info))
                .trim()
                .to_string(),
            api_version: format!(
                "{}.{}.{}",
                vk::api_version_major(api),
                vk::api_version_minor(api),
                vk::api_version_patch(api)
            ),
            subgroup_size: subgroup.subgroup_size,
            subgroup_arithmetic_ballot_shuffle: sg_ok,
            f32_atomic_add: fa.shader_buffer_float32_atomic_add != 0,
            f32_atomic_min_max: fa2.shader_buffer_float32_atomic_min_max != 0,
            f64_atomic_add: fa.shader_buffer_float64_atomic_add != 0,
            i64_atomics: f12.shader_buffer_int64_atomics != 0,
            f64: features.shader_float64 != 0,
            i64: features.shader_int64 != 0,
            timestamps,
            conditional_rendering: has_cr && fcr.conditional_rendering != 0,
            timestamp_period_ns: p.limits.timestamp_period,
            max_storage_buffer_range: p.limits.max_storage_buffer_range as u64,
            max_push_constants_size: p.limits.max_push_constants_size,
            max_workgroup_invocations: p.limits.max_compute_work_group_invocations,
            max_shared_memory_bytes: p.limits.max_compute_shared_memory_size,
            min_storage_offset_alignment: p.limits.min_storage_buffer_offset_alignment,
            max_texel_buffer_elements: p.limits.max_texel_buffer_elements as u64,
            min_texel_offset_alignment: p.limits.min_texel_buffer_offset_alignment,
            unified_memory: unified,
            device_local_bytes,
            suitable: reasons.is_empty(),
            unsuitable_reason: if reasons.is_empty() {
                None
            } else {
                Some(format!("lacks {}", reasons.join(", ")))
            },
        }
    }

    /// Preference rank for automatic selection: discrete > integrated > virtual > cpu > other.
    pub fn rank(&self) -> u32 {
        match self.device_type.as_str() {
            "discrete" => 4,
            "integrated" => 3,
            "virtual" => 2,
            "cpu" => 1,
            _ => 0,
        }
    }
}
