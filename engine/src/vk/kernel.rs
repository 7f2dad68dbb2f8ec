//! Kernels (compute shaders compiled at build time) and their pipelines.
//!
//! Every `kernels/**/*.comp` file is compiled by `engine/build.rs` into the generated table
//! [`KERNELS`]; [`ids`] names them. A pipeline is keyed by kernel, workgroup size (specialization
//! constant 0, used as `local_size_x_id = 0`), further specialization constants (ids 1..) and
//! binding count. Every kernel binds only storage buffers (`binding = 0..n` in set 0) and may use
//! up to 128 bytes of push constants. A VkPipelineCache is loaded from and saved to disk.

use super::caps::Capabilities;
use super::error::{VkCheck, VkError, VkResult};
use ash::vk;
use std::collections::HashMap;
use std::path::Path;

/// Index into [`KERNELS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelId(pub u32);

/// One kernel compiled at build time.
#[derive(Debug)]
pub struct KernelSource {
    /// Name: the path under `kernels/` without extension, e.g. `primitives/scan_reduce`.
    pub name: &'static str,
    /// Absolute path of the GLSL source at build time.
    pub source: &'static str,
    /// SPIR-V bytes (4-byte aligned).
    pub spirv: &'static [u8],
    /// Why the kernel depends on its workgroup shape (shared memory, barriers, subgroups, local
    /// ids, the workgroup size), from its SPIR-V at build time; `None`: per-invocation work, so
    /// per-node workgroup-size overrides ([`super::ContextOptions::workgroup_overrides`]) may
    /// reshape its dispatches.
    pub workgroup_dependence: Option<&'static str>,
}

/// 4-byte-aligned storage for embedded SPIR-V.
#[repr(C, align(4))]
pub struct AlignedSpirv<const N: usize>(pub [u8; N]);

include!(concat!(env!("OUT_DIR"), "/kernel_table.rs"));

impl KernelId {
    /// The kernel's table entry.
    pub fn source(self) -> &'static KernelSource {
        &KERNELS[self.0 as usize]
    }

    /// The kernel's name.
    pub fn name(self) -> &'static str {
        self.source().name
    }

    /// Looks a kernel up by name.
    pub fn by_name(name: &str) -> Option<KernelId> {
        KERNELS
            .iter()
            .position(|k| k.name == name)
            .map(|i| KernelId(i as u32))
    }
}

/// Bytes of push constants every pipeline layout declares.
pub const PUSH_CONSTANT_BYTES: u32 = 128;

#[derive(Clone, PartialEq, Eq, Hash)]
struct PipelineKey {
    kernel: KernelId,
    workgroup_size: u32,
    spec: Vec<u32>,
    bindings: BindingLayout,
}

/// A descriptor set layout's shape: the binding count and which slots are uniform texel
/// buffers (bit k: slot k); every other slot is a storage buffer.
pub(crate) type BindingLayout = (u32, u64);

/// A compute pipeline and its layout.
#[derive(Clone, Copy)]
pub(crate) struct Pipeline {
    pub(crate) pipeline: vk::Pipeline,
    pub(crate) layout: vk::PipelineLayout,
    pub(crate) set_layout: vk::DescriptorSetLayout,
}

/// Owns pipelines, layouts, shader modules and the pipeline cache of one device.
pub(crate) struct PipelineStore {
    cache: vk::PipelineCache,
    set_layouts: HashMap<BindingLayout, (vk::DescriptorSetLayout, vk::PipelineLayout)>,
    modules: HashMap<KernelId, vk::ShaderModule>,
    pipelines: HashMap<PipelineKey, vk::Pipeline>,
    max_workgroup: u32,
}

impl PipelineStore {
    /// Creates the store, loading the pipeline cache from `cache_path` when present.
    pub(crate) fn new(
        device: &ash::Device,
        caps: &Capabilities,
        cache_path: Option<&Path>,
    ) -> VkResult<Self> {
        let initial = cache_path
            .and_then(|p| std::fs::read(p).ok())
            .unwrap_or_default();
        let create = |data: &[u8]| {
            // SAFETY: the driver validates the cache header and ignores mismatched data.
            unsafe {
                device.create_pipeline_cache(
                    &vk::PipelineCacheCreateInfo::default().initial_data(data),
                    None,
                )
            }
        };
        let cache = create(&initial)
            .or_else(|_| create(&[]))
            .vk("vkCreatePipelineCache")?;
        Ok(PipelineStore {
            cache,
            set_layouts: HashMap::new(),
            modules: HashMap::new(),
            pipelines: HashMap::new(),
            max_workgroup: caps.max_workgroup_invocations,
        })
    }

    fn layout(
        &mut self,
        device: &ash::Device,
        bindings: BindingLayout,
    ) -> VkResult<(vk::DescriptorSetLayout, vk::PipelineLayout)> {
        if let Some(l) = self.set_layouts.get(&bindings) {
            return Ok(*l);
        }
        let (count, texels) = bindings;
        let b: Vec<_> = (0..count)
            .map(|i| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i)
                    .descriptor_type(if texels >> i & 1 != 0 {
                        vk::DescriptorType::UNIFORM_TEXEL_BUFFER
                    } else {
                        vk::DescriptorType::STORAGE_BUFFER
                    })
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        // SAFETY: valid create infos; objects are destroyed in `destroy`.
        unsafe {
            let set = device
                .create_descriptor_set_layout(
                    &vk::DescriptorSetLayoutCreateInfo::default().bindings(&b),
                    None,
                )
                .vk("vkCreateDescriptorSetLayout")?;
            let range = [vk::PushConstantRange::default()
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
                .offset(0)
                .size(PUSH_CONSTANT_BYTES)];
            let sets = [set];
            let layout = device
                .create_pipeline_layout(
                    &vk::PipelineLayoutCreateInfo::default()
                        .set_layouts(&sets)
                        .push_constant_ranges(&range),
                    None,
                )
                .vk("vkCreatePipelineLayout")?;
            self.set_layouts.insert(bindings, (set, layout));
            Ok((set, layout))
        }
    }

    fn module(
        &mut self,
        device: &ash::Device,
        kernel: KernelId,
        source_dir: Option<&Path>,
    ) -> VkResult<vk::ShaderModule> {
        if let Some(m) = self.modules.get(&kernel) {
            return Ok(*m);
        }
        let src = kernel.source();
        let words: Vec<u32> = match source_dir {
            Some(dir) => runtime_compile(dir, src.name)?,
            None => bytemuck::cast_slice::<u8, u32>(src.spirv).to_vec(),
        };
        // SAFETY: SPIR-V produced by shaderc; the module is destroyed in `destroy`.
        let m = unsafe {
            device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None)
        }
        .vk("vkCreateShaderModule")?;
        self.modules.insert(kernel, m);
        Ok(m)
    }

    /// Returns (creating on first use) the pipeline for `kernel` with these specializations.
    pub(crate) fn get(
        &mut self,
        device: &ash::Device,
        kernel: KernelId,
        workgroup_size: u32,
        spec: &[u32],
        bindings: BindingLayout,
        source_dir: Option<&Path>,
    ) -> VkResult<Pipeline> {
        if workgroup_size == 0 || workgroup_size > self.max_workgroup {
            return Err(VkError::Kernel {
                kernel: kernel.name().into(),
                message: format!(
                    "workgroup size {workgroup_size} outside 1..={}",
                    self.max_workgroup
                ),
            });
        }
        let (set_layout, layout) = self.layout(device, bindings)?;
        let key = PipelineKey {
            kernel,
            workgroup_size,
            spec: spec.to_vec(),
            bindings,
        };
        if let Some(p) = self.pipelines.get(&key) {
            return Ok(Pipeline {
                pipeline: *p,
                layout,
                set_layout,
            });
        }
        let module = self.module(device, kernel, source_dir)?;
        let mut values = vec![workgroup_size];
        values.extend_from_slice(spec);
        let entries: Vec<_> = (0..values.len() as u32)
            .map(|i| vk::SpecializationMapEntry {
                constant_id: i,
                offset: i * 4,
                size: 4,
            })
            .collect();
        let data: &[u8] = bytemuck::cast_slice(&values);
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(data);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main")
            .specialization_info(&spec_info);
        let info = [vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout)];
        // SAFETY: valid create info; the pipeline is destroyed in `destroy`.
        let p = unsafe { device.create_compute_pipelines(self.cache, &info, None) }.map_err(
            |(_, e)| VkError::Call {
                call: "vkCreateComputePipelines",
                result: e,
            },
        )?[0];
        self.pipelines.insert(key, p);
        Ok(Pipeline {
            pipeline: p,
            layout,
            set_layout,
        })
    }

    /// Saves the pipeline cache and destroys every object.
    ///
    /// # Safety
    /// No pipeline may be in use by pending GPU work.
    pub(crate) unsafe fn destroy(&mut self, device: &ash::Device, cache_path: Option<&Path>) {
        if let Some(path) = cache_path {
            if let Ok(data) = device.get_pipeline_cache_data(self.cache) {
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                // Write atomically so concurrent processes never read a torn cache.
                let tmp = path.with_extension(format!("tmp{}", std::process::id()));
                if std::fs::write(&tmp, &data).is_ok() {
                    let _ = std::fs::rename(&tmp, path);
                }
            }
        }
        for (_, p) in self.pipelines.drain() {
            device.destroy_pipeline(p, None);
        }
        for (_, m) in self.modules.drain() {
            device.destroy_shader_module(m, None);
        }
        for (_, (s, l)) in self.set_layouts.drain() {
            device.destroy_pipeline_layout(l, None);
            device.destroy_descriptor_set_layout(s, None);
        }
        device.destroy_pipeline_cache(self.cache, None);
    }
}

#[cfg(feature = "runtime-compile")]
fn runtime_compile(dir: &Path, name: &str) -> VkResult<Vec<u32>> {
    let path = dir.join(format!("{name}.comp"));
    supple_shader_compiler::compile_compute(&path, &dir.join("include"), &[])
        .map(|k| k.spirv)
        .map_err(|e| VkError::Kernel {
            kernel: name.into(),
            message: e.to_string(),
        })
}

#[cfg(not(feature = "runtime-compile"))]
fn runtime_compile(_dir: &Path, name: &str) -> VkResult<Vec<u32>> {
    Err(VkError::Kernel {
        kernel: name.into(),
        message:
            "SUPPLE_KERNEL_DIR is set but supple was built without the `runtime-compile` feature"
                .into(),
    })
}

/// What a per-node workgroup-size override did to one dispatch node.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WorkgroupOverrideUse {
    /// Node name.
    pub node: String,
    /// Kernel name.
    pub kernel: String,
    /// Workgroup size the override asked for.
    pub requested: u32,
    /// Workgroup size the node was recorded with.
    pub recorded: u32,
    /// Whether the node runs with the requested size (group count rescaled).
    pub applied: bool,
    /// Why it was not applied.
    pub reason: Option<String>,
}
