//! The Vulkan context: instance, device, queue, allocator, validation messages and submission.
//!
//! A context either creates everything itself ([`Context::new`]) or wraps a host-owned
//! instance/device/queue ([`Context::from_host`]); in the second case Supple never destroys what
//! it did not create, and tells the host through an optional drop callback when it is done.

use super::caps::Capabilities;
use super::error::{VkCheck, VkError, VkResult};
use super::kernel::PipelineStore;
use ash::vk;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use std::ffi::{c_void, CStr, CString};
use std::mem::ManuallyDrop;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Settings for creating a [`Context`]; [`ContextOptions::from_env`] reads the `SUPPLE_*` variables.
#[derive(Debug, Clone)]
pub struct ContextOptions {
    /// Enable the Khronos validation layer and collect its messages (`SUPPLE_VALIDATION=1`).
    pub validation: bool,
    /// With `validation`: also the layer's synchronization validation, which reports missing
    /// or insufficient barriers (hazards) that a CPU driver running dispatches in order would
    /// hide (`SUPPLE_SYNC_VALIDATION=1`; always on in the tests).
    pub sync_validation: bool,
    /// Device selector: an index or a case-insensitive substring of the name (`SUPPLE_DEVICE`).
    pub device: Option<String>,
    /// Always upload/read back through staging buffers, even on unified memory (`SUPPLE_FORCE_STAGING=1`).
    pub force_staging: bool,
    /// Upper bound of every GPU wait (`SUPPLE_WAIT_TIMEOUT_MS`, default 60 000).
    pub wait_timeout: Duration,
    /// Where the VkPipelineCache is persisted (`SUPPLE_PIPELINE_CACHE`; default in the user cache dir; `off` disables).
    pub pipeline_cache: Option<PathBuf>,
    /// Recompile kernels from this `kernels/` folder at run time instead of the embedded SPIR-V (`SUPPLE_KERNEL_DIR`).
    pub kernel_source_dir: Option<PathBuf>,
    /// Per-node workgroup sizes for performance studies (`SUPPLE_WORKGROUP`).
    pub workgroup_overrides: WorkgroupOverrides,
    /// Skip the closed sections of gated graphs with VK_EXT_conditional_rendering where the
    /// device has it (default on; `SUPPLE_CONDITIONAL_RENDERING=off` turns it off, and then
    /// closed sections launch empty indirect dispatches). Same results either way.
    pub conditional_rendering: bool,
}

/// Per-node workgroup sizes for performance studies, from a spec `pattern=size,...`
/// (`SUPPLE_WORKGROUP`): a pattern is a node name, a prefix ending in `*`, or `*` (every
/// node); the last matching rule wins. Graphs compiled on the context give matching dispatch
/// nodes that size and rescale their group counts, provided the kernel does per-invocation work
/// (its [`super::kernel::KernelSource::workgroup_dependence`] is `None`) and the dispatch is
/// direct; other matches are reported by [`Context::workgroup_override_report`] and left as
/// they are. Results do not change, only the launch shape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WorkgroupOverrides {
    rules: Vec<(String, u32)>,
    error: Option<String>,
}

impl WorkgroupOverrides {
    /// Parses `pattern=size,...` (empty: no overrides). A malformed spec is kept as an error
    /// that context creation reports.
    pub fn parse(spec: &str) -> WorkgroupOverrides {
        let mut out = WorkgroupOverrides::default();
        for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let parsed = item
                .split_once('=')
                .and_then(|(p, n)| Some((p.trim(), n.trim().parse::<u32>().ok()?)));
            match parsed {
                Some((p, n)) if !p.is_empty() && n > 0 => out.rules.push((p.to_string(), n)),
                _ => {
                    out.error = Some(format!(
                        "'{item}' is not pattern=size (a node name, prefix* or *, and a positive workgroup size)"
                    ));
                    break;
                }
            }
        }
        out
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[(String, u32)] {
        &self.rules
    }

    /// The workgroup size asked for node `name`, if any rule matches.
    pub fn size_for(&self, name: &str) -> Option<u32> {
        self.rules
            .iter()
            .rev()
            .find(|(p, _)| match p.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => p == name,
            })
            .map(|r| r.1)
    }

    /// Checks the spec and every size against the device: a multiple of the subgroup size
    /// (kernels assume whole subgroups) and at most the device's invocations per workgroup.
    pub fn validate(&self, caps: &super::Capabilities) -> VkResult<()> {
        let bad = |message: String| VkError::Options {
            option: "SUPPLE_WORKGROUP".into(),
            message,
        };
        if let Some(e) = &self.error {
            return Err(bad(e.clone()));
        }
        let sg = caps.subgroup_size.max(1);
        for (p, n) in &self.rules {
            if n % sg != 0 || *n > caps.max_workgroup_invocations {
                return Err(bad(format!(
                    "{p}={n}: the workgroup size must be a multiple of the subgroup size {sg} and at most {}",
                    caps.max_workgroup_invocations
                )));
            }
        }
        Ok(())
    }
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            validation: false,
            sync_validation: false,
            device: None,
            force_staging: false,
            wait_timeout: Duration::from_secs(60),
            pipeline_cache: None,
            kernel_source_dir: None,
            workgroup_overrides: WorkgroupOverrides::default(),
            conditional_rendering: true,
        }
    }
}

impl ContextOptions {
    /// Options from the environment (`SUPPLE_VALIDATION`, `SUPPLE_SYNC_VALIDATION`,
    /// `SUPPLE_DEVICE`, `SUPPLE_FORCE_STAGING`,
    /// `SUPPLE_WAIT_TIMEOUT_MS`, `SUPPLE_PIPELINE_CACHE`, `SUPPLE_KERNEL_DIR`, `SUPPLE_WORKGROUP`,
    /// `SUPPLE_CONDITIONAL_RENDERING`).
    pub fn from_env() -> Self {
        let cache = match std::env::var("SUPPLE_PIPELINE_CACHE") {
            Ok(v) if v == "off" => None,
            Ok(v) if !v.is_empty() => Some(PathBuf::from(v)),
            _ => std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .map(|d| d.join("supple").join("pipeline-cache.bin")),
        };
        ContextOptions {
            validation: env_flag("SUPPLE_VALIDATION"),
            sync_validation: env_flag("SUPPLE_SYNC_VALIDATION"),
            device: std::env::var("SUPPLE_DEVICE")
                .ok()
                .filter(|s| !s.is_empty()),
            force_staging: env_flag("SUPPLE_FORCE_STAGING"),
            wait_timeout: std::env::var("SUPPLE_WAIT_TIMEOUT_MS")
                .ok()
                .and_then(|v| v.parse().ok())
                .map(Duration::from_millis)
                .unwrap_or(Duration::from_secs(60)),
            pipeline_cache: cache,
            kernel_source_dir: std::env::var_os("SUPPLE_KERNEL_DIR").map(PathBuf::from),
            workgroup_overrides: WorkgroupOverrides::parse(
                &std::env::var("SUPPLE_WORKGROUP").unwrap_or_default(),
            ),
            conditional_rendering: std::env::var("SUPPLE_CONDITIONAL_RENDERING")
                .map_or(true, |v| {
                    !(v == "off" || v == "0" || v.eq_ignore_ascii_case("false"))
                }),
        }
    }
}

/// Who owns the instance and device a context uses.
pub enum Ownership {
    /// Supple created them and destroys them when the last reference goes.
    Owned,
    /// The host created them; Supple never destroys them and calls `on_release` (if any) once
    /// it has released every object it created on them.
    Borrowed {
        /// Called after Supple's last object on the device is destroyed.
        on_release: Option<Box<dyn FnOnce() + Send + Sync>>,
    },
}

impl std::fmt::Debug for Ownership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ownership::Owned => write!(f, "Owned"),
            Ownership::Borrowed { .. } => write!(f, "Borrowed"),
        }
    }
}

/// A host-owned Vulkan device that Supple should run on (see [`Context::from_host`]).
pub struct HostVulkan {
    /// The loader entry the host used.
    pub entry: ash::Entry,
    /// The host's instance (API version ≥ 1.3).
    pub instance: ash::Instance,
    /// The physical device the host's device was created on.
    pub physical_device: vk::PhysicalDevice,
    /// The host's logical device, created with [`DeviceRequirements`] enabled.
    pub device: ash::Device,
    /// Family of the queue Supple submits to (must support compute).
    pub queue_family_index: u32,
    /// Index of that queue within its family.
    pub queue_index: u32,
    /// Whether the host enabled VK_EXT_debug_utils on the instance (labels and message capture).
    pub debug_utils: bool,
    /// Whether the host enabled VK_EXT_shader_atomic_float's shaderBufferFloat32AtomicAdd.
    pub f32_atomic_add: bool,
    /// Whether the host enabled VK_EXT_conditional_rendering and its `conditionalRendering`
    /// feature (gated sections are then skipped, not launched empty).
    pub conditional_rendering: bool,
    /// Called when Supple has released everything it created on the device.
    pub on_release: Option<Box<dyn FnOnce() + Send + Sync>>,
}

/// The extensions and features a host must enable on its device for Supple.
#[derive(Debug, Clone)]
pub struct DeviceRequirements {
    /// Minimum Vulkan API version.
    pub api_version: u32,
    /// Device extensions that must be enabled.
    pub required_extensions: Vec<&'static CStr>,
    /// Device extensions used when present.
    pub optional_extensions: Vec<&'static CStr>,
    /// Feature names (Vulkan 1.2/1.3 feature structs) that must be enabled.
    pub required_features: Vec<&'static str>,
    /// Features used when present.
    pub optional_features: Vec<&'static str>,
}

/// What Supple needs from a device, so a host can create a compatible one.
pub fn device_requirements() -> DeviceRequirements {
    DeviceRequirements {
        api_version: vk::API_VERSION_1_3,
        required_extensions: vec![],
        optional_extensions: vec![
            ash::ext::shader_atomic_float::NAME,
            ash::ext::conditional_rendering::NAME,
        ],
        required_features: vec![
            "VkPhysicalDeviceVulkan12Features.timelineSemaphore",
            "VkPhysicalDeviceVulkan13Features.synchronization2",
            "VkPhysicalDeviceVulkan13Features.maintenance4",
        ],
        optional_features: vec![
            "VkPhysicalDeviceFeatures.shaderFloat64",
            "VkPhysicalDeviceFeatures.shaderInt64",
            "VkPhysicalDeviceShaderAtomicFloatFeaturesEXT.shaderBufferFloat32AtomicAdd",
            "VkPhysicalDeviceConditionalRenderingFeaturesEXT.conditionalRendering",
        ],
    }
}

/// Severity of a validation-layer message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Informational.
    Info,
    /// A warning (performance or best practice).
    Warning,
    /// An error: invalid API usage.
    Error,
}

/// One message from the validation layer.
#[derive(Debug, Clone)]
pub struct ValidationMessage {
    /// Severity.
    pub severity: Severity,
    /// The message text (with its VUID).
    pub text: String,
}

type MessageSink = Arc<Mutex<Vec<ValidationMessage>>>;

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    if data.is_null() || user.is_null() {
        return vk::FALSE;
    }
    // SAFETY: `user` is the `Mutex<Vec<..>>` inside the Arc kept alive by DeviceShared until the
    // messenger is destroyed; `data` is valid for this call per the Vulkan spec.
    let sink = &*(user as *const Mutex<Vec<ValidationMessage>>);
    let text = if (*data).p_message.is_null() {
        String::new()
    } else {
        CStr::from_ptr((*data).p_message)
            .to_string_lossy()
            .into_owned()
    };
    let severity = if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        Severity::Error
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
        Severity::Warning
    } else {
        Severity::Info
    };
    if let Ok(mut v) = sink.lock() {
        if v.len() < 10_000 {
            v.push(ValidationMessage { severity, text });
        }
    }
    vk::FALSE
}

/// What Supple asked of the device since the context was created ([`Context::counters`]):
/// counts, so they mean the same on every device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceCounters {
    /// Host waits on the timeline semaphore (every bounded wait for submitted work, whether
    /// or not the work had already completed).
    pub host_waits: u64,
    /// Queue submissions (compiled graphs, one-shot uploads and readbacks).
    pub submits: u64,
    /// Compute dispatches submitted: each submitted graph's dispatch nodes, once per submission.
    pub dispatches: u64,
    /// Of those, dispatches in gated sections that conditional rendering skipped (the section
    /// was closed): recorded and submitted but not executed. Counted by the caller after the
    /// run completed ([`super::CompiledGraph::count_skipped_dispatches`]).
    pub dispatches_skipped: u64,
}

impl DeviceCounters {
    /// Dispatches that ran: those submitted less those skipped.
    pub fn dispatches_executed(&self) -> u64 {
        self.dispatches.saturating_sub(self.dispatches_skipped)
    }
}

impl std::ops::Sub for DeviceCounters {
    type Output = DeviceCounters;
    fn sub(self, o: DeviceCounters) -> DeviceCounters {
        DeviceCounters {
            host_waits: self.host_waits.saturating_sub(o.host_waits),
            submits: self.submits.saturating_sub(o.submits),
            dispatches: self.dispatches.saturating_sub(o.dispatches),
            dispatches_skipped: self.dispatches_skipped.saturating_sub(o.dispatches_skipped),
        }
    }
}

/// The atomic cells behind [`DeviceCounters`].
#[derive(Default)]
pub(crate) struct CounterCells {
    pub(crate) host_waits: AtomicU64,
    pub(crate) submits: AtomicU64,
    pub(crate) dispatches: AtomicU64,
    pub(crate) dispatches_skipped: AtomicU64,
    /// The largest timeline value a host wait saw signalled: every ticket up to it is complete
    /// (one queue signals its timeline in submission order), so waiting for one is no wait.
    pub(crate) completed: AtomicU64,
}

/// State shared by everything created on one device; destroyed in order when the last user goes.
pub(crate) struct DeviceShared {
    pub(crate) entry: ash::Entry,
    pub(crate) instance: ash::Instance,
    pub(crate) physical_device: vk::PhysicalDevice,
    pub(crate) device: ash::Device,
    pub(crate) queue: Mutex<vk::Queue>,
    pub(crate) queue_family: u32,
    pub(crate) caps: Capabilities,
    pub(crate) options: ContextOptions,
    pub(crate) allocator: ManuallyDrop<Mutex<Allocator>>,
    pub(crate) debug_utils_instance: Option<ash::ext::debug_utils::Instance>,
    pub(crate) debug_utils_device: Option<ash::ext::debug_utils::Device>,
    /// VK_EXT_conditional_rendering's commands, when enabled and wanted
    /// ([`Context::conditional_rendering`]).
    pub(crate) conditional_rendering: Option<ash::ext::conditional_rendering::Device>,
    messenger: vk::DebugUtilsMessengerEXT,
    pub(crate) messages: MessageSink,
    /// Timeline semaphore every submission signals.
    pub(crate) timeline: vk::Semaphore,
    pub(crate) next_timeline_value: AtomicU64,
    pub(crate) command_pool: Mutex<vk::CommandPool>,
    pub(crate) pipelines: Mutex<PipelineStore>,
    next_resource_id: AtomicU64,
    /// Bytes of the live buffer allocations ([`Context::device_bytes`]).
    pub(crate) device_bytes: AtomicU64,
    /// Work counters ([`Context::counters`]).
    pub(crate) counters: CounterCells,
    ownership: Mutex<Ownership>,
    /// Trace being collected ([`Context::start_trace`]).
    pub(crate) trace: Mutex<super::trace::TraceState>,
    /// Compile every graph with per-node timestamps ([`Context::set_node_timestamps`]).
    pub(crate) node_timestamps: std::sync::atomic::AtomicBool,
    /// What the workgroup-size overrides did, per node name.
    pub(crate) workgroup_report:
        Mutex<std::collections::BTreeMap<String, super::kernel::WorkgroupOverrideUse>>,
}

impl DeviceShared {
    pub(crate) fn lock_allocator(&self) -> MutexGuard<'_, Allocator> {
        self.allocator.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn new_resource_id(&self) -> u64 {
        self.next_resource_id.fetch_add(1, Ordering::Relaxed)
    }
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        // SAFETY: every object below was created on this device by Supple and is no longer used:
        // all buffers/graphs hold an Arc to us, so they are gone. Order: wait idle, free Supple's
        // objects, drop the allocator, then destroy only what Supple owns.
        unsafe {
            let _ = self.device.device_wait_idle();
            if let Ok(mut p) = self.pipelines.lock() {
                p.destroy(&self.device, self.options.pipeline_cache.as_deref());
            }
            if let Ok(pool) = self.command_pool.lock() {
                self.device.destroy_command_pool(*pool, None);
            }
            self.device.destroy_semaphore(self.timeline, None);
            ManuallyDrop::drop(&mut self.allocator);
            let ownership = std::mem::replace(
                self.ownership.get_mut().unwrap_or_else(|p| p.into_inner()),
                Ownership::Borrowed { on_release: None },
            );
            if matches!(ownership, Ownership::Owned) {
                let _serial = instance_lifecycle();
                self.device.destroy_device(None);
            }
            if let Some(du) = &self.debug_utils_instance {
                if self.messenger != vk::DebugUtilsMessengerEXT::null() {
                    du.destroy_debug_utils_messenger(self.messenger, None);
                }
            }
            match ownership {
                Ownership::Owned => {
                    let _serial = instance_lifecycle();
                    self.instance.destroy_instance(None)
                }
                Ownership::Borrowed { on_release } => {
                    if let Some(cb) = on_release {
                        cb();
                    }
                }
            }
        }
        let _ = &self.entry;
    }
}

/// A Vulkan device Supple runs on. Cheap to clone (shared reference).
#[derive(Clone)]
pub struct Context {
    pub(crate) shared: Arc<DeviceShared>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("device", &self.shared.caps.name)
            .finish()
    }
}

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

fn load_entry() -> VkResult<ash::Entry> {
    // SAFETY: loading the system Vulkan loader; its initialisation code is trusted.
    unsafe { ash::Entry::load() }.map_err(|e| VkError::Loader(e.to_string()))
}

fn create_instance(
    entry: &ash::Entry,
    validation: bool,
    sync_validation: bool,
) -> VkResult<(ash::Instance, bool)> {
    // SAFETY: plain enumeration/creation calls with valid create infos.
    unsafe {
        let available_ext = entry
            .enumerate_instance_extension_properties(None)
            .vk("vkEnumerateInstanceExtensionProperties")?;
        let has_ext = |n: &CStr| {
            available_ext
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(n))
        };
        let debug_utils = has_ext(ash::ext::debug_utils::NAME);
        let mut exts: Vec<*const i8> = Vec::new();
        if debug_utils {
            exts.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        let portability = has_ext(ash::khr::portability_enumeration::NAME);
        if portability {
            exts.push(ash::khr::portability_enumeration::NAME.as_ptr());
        }
        let mut layers: Vec<*const i8> = Vec::new();
        if validation {
            let available = entry
                .enumerate_instance_layer_properties()
                .vk("vkEnumerateInstanceLayerProperties")?;
            if !available
                .iter()
                .any(|l| l.layer_name_as_c_str() == Ok(VALIDATION_LAYER))
            {
                return Err(VkError::Unsupported {
                    device: "instance".into(),
                    what: "layer VK_LAYER_KHRONOS_validation (install vulkan-validationlayers)"
                        .into(),
                });
            }
            layers.push(VALIDATION_LAYER.as_ptr());
        }
        let sync = validation && sync_validation;
        if sync {
            let layer_ext = entry
                .enumerate_instance_extension_properties(Some(VALIDATION_LAYER))
                .vk("vkEnumerateInstanceExtensionProperties")?;
            let name = ash::ext::validation_features::NAME;
            if !layer_ext
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(name))
            {
                return Err(VkError::Unsupported {
                    device: "instance".into(),
                    what: "VK_EXT_validation_features (synchronization validation)".into(),
                });
            }
            exts.push(name.as_ptr());
        }
        let enables = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut features =
            vk::ValidationFeaturesEXT::default().enabled_validation_features(&enables);
        let app = vk::ApplicationInfo::default()
            .application_name(c"supple")
            .engine_name(c"supple")
            .api_version(vk::API_VERSION_1_3);
        let flags = if portability {
            vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR
        } else {
            vk::InstanceCreateFlags::empty()
        };
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_extension_names(&exts)
            .enabled_layer_names(&layers)
            .flags(flags);
        if sync {
            info = info.push_next(&mut features);
        }
        let instance = {
            let _serial = instance_lifecycle();
            entry.create_instance(&info, None).vk("vkCreateInstance")?
        };
        Ok((instance, debug_utils))
    }
}

/// Serializes Supple's vkCreateInstance, vkCreateDevice, vkDestroyDevice and vkDestroyInstance
/// across threads. The spec allows them concurrently on different objects, but the loader,
/// layers and CPU drivers keep process-wide state there: test binaries that create and drop a
/// context per test on two threads (lavapipe with the validation layer) have aborted, rarely,
/// with glibc heap corruption at a thread's exit. They are rare, slow calls: a lock costs nothing.
fn instance_lifecycle() -> MutexGuard<'static, ()> {
    static LIFECYCLE: Mutex<()> = Mutex::new(());
    LIFECYCLE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Lists every physical device with its capabilities (creates and destroys a temporary instance).
pub fn list_devices() -> VkResult<Vec<Capabilities>> {
    let entry = load_entry()?;
    let (instance, _) = create_instance(&entry, false, false)?;
    // SAFETY: the instance is alive for the duration of the query and destroyed after.
    unsafe {
        let pds = instance.enumerate_physical_devices();
        let out = match pds {
            Ok(pds) => Ok(pds
                .iter()
                .enumerate()
                .map(|(i, pd)| Capabilities::query(&instance, *pd, i))
                .collect()),
            Err(e) => Err(VkError::Call {
                call: "vkEnumeratePhysicalDevices",
                result: e,
            }),
        };
        let _serial = instance_lifecycle();
        instance.destroy_instance(None);
        out
    }
}

fn select_device(all: &[Capabilities], selector: Option<&str>) -> VkResult<usize> {
    if let Some(sel) = selector {
        if let Ok(i) = sel.parse::<usize>() {
            return match all.get(i) {
                Some(c) if c.suitable => Ok(i),
                Some(c) => Err(VkError::NoDevice(format!(
                    "SUPPLE_DEVICE={sel} selects '{}', which {}",
                    c.name,
                    c.unsuitable_reason.clone().unwrap_or_default()
                ))),
                None => Err(VkError::NoDevice(format!(
                    "SUPPLE_DEVICE={sel}: only {} device(s)",
                    all.len()
                ))),
            };
        }
        let lower = sel.to_lowercase();
        return all
            .iter()
            .find(|c| c.suitable && c.name.to_lowercase().contains(&lower))
            .map(|c| c.index)
            .ok_or_else(|| {
                let names: Vec<_> = all
                    .iter()
                    .map(|c| format!("{}: {}", c.index, c.name))
                    .collect();
                VkError::NoDevice(format!(
                    "SUPPLE_DEVICE={sel} matches no suitable device (have: {})",
                    names.join("; ")
                ))
            });
    }
    all.iter()
        .filter(|c| c.suitable)
        .max_by_key(|c| (c.rank(), std::cmp::Reverse(c.index)))
        .map(|c| c.index)
        .ok_or_else(|| {
            let names: Vec<_> = all
                .iter()
                .map(|c| {
                    format!(
                        "{} ({})",
                        c.name,
                        c.unsuitable_reason.clone().unwrap_or_default()
                    )
                })
                .collect();
            VkError::NoDevice(if names.is_empty() {
                "no Vulkan devices (install mesa-vulkan-drivers for lavapipe)".into()
            } else {
                format!("none suitable: {}", names.join("; "))
            })
        })
}

impl Context {
    /// Creates Supple's own instance and device, picking a device by `options.device` or by
    /// preference (discrete > integrated > virtual > CPU).
    pub fn new(options: ContextOptions) -> VkResult<Context> {
        let entry = load_entry()?;
        let (instance, debug_utils) =
            create_instance(&entry, options.validation, options.sync_validation)?;
        // From here on, failures must destroy the instance.
        let result = (|| unsafe {
            let pds = instance
                .enumerate_physical_devices()
                .vk("vkEnumeratePhysicalDevices")?;
            let caps: Vec<Capabilities> = pds
                .iter()
                .enumerate()
                .map(|(i, pd)| Capabilities::query(&instance, *pd, i))
                .collect();
            let index = select_device(&caps, options.device.as_deref())?;
            options.workgroup_overrides.validate(&caps[index])?;
            let pd = pds[index];
            let qfs = instance.get_physical_device_queue_family_properties(pd);
            // Prefer a compute-only family (async compute on discrete GPUs), else any with compute.
            let family = qfs
                .iter()
                .position(|q| {
                    q.queue_flags.contains(vk::QueueFlags::COMPUTE)
                        && !q.queue_flags.contains(vk::QueueFlags::GRAPHICS)
                })
                .or_else(|| {
                    qfs.iter()
                        .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
                })
                .ok_or_else(|| VkError::NoDevice("no compute queue".into()))?
                as u32;
            let c = &caps[index];
            let mut f12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
            let mut f13 = vk::PhysicalDeviceVulkan13Features::default()
                .synchronization2(true)
                .maintenance4(true);
            let mut fa = vk::PhysicalDeviceShaderAtomicFloatFeaturesEXT::default()
                .shader_buffer_float32_atomic_add(true);
            let mut fcr = vk::PhysicalDeviceConditionalRenderingFeaturesEXT::default()
                .conditional_rendering(true);
            let base = vk::PhysicalDeviceFeatures::default()
                .shader_float64(c.f64)
                .shader_int64(c.i64);
            let mut exts: Vec<*const i8> = Vec::new();
            let prio = [1.0f32];
            let qinfo = [vk::DeviceQueueCreateInfo::default()
                .queue_family_index(family)
                .queue_priorities(&prio)];
            let mut info = vk::DeviceCreateInfo::default()
                .queue_create_infos(&qinfo)
                .enabled_features(&base)
                .push_next(&mut f12)
                .push_next(&mut f13);
            if c.f32_atomic_add {
                exts.push(ash::ext::shader_atomic_float::NAME.as_ptr());
                info = info.push_next(&mut fa);
            }
            if c.conditional_rendering && options.conditional_rendering {
                exts.push(ash::ext::conditional_rendering::NAME.as_ptr());
                info = info.push_next(&mut fcr);
            }
            let info = info.enabled_extension_names(&exts);
            let device = {
                let _serial = instance_lifecycle();
                instance
                    .create_device(pd, &info, None)
                    .vk("vkCreateDevice")?
            };
            Ok((pd, device, family, c.clone()))
        })();
        match result {
            Ok((pd, device, family, caps)) => {
                let shared = Self::finish(
                    entry,
                    instance,
                    pd,
                    device,
                    family,
                    0,
                    caps,
                    options,
                    debug_utils,
                    Ownership::Owned,
                );
                shared
            }
            Err(e) => {
                // SAFETY: nothing else was created on the instance.
                let _serial = instance_lifecycle();
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    /// Wraps a host-owned instance, device and queue.
    ///
    /// # Safety
    /// - `host.device` was created from `host.physical_device` of `host.instance` with API ≥ 1.3
    ///   and every feature and extension in [`device_requirements`] enabled.
    /// - `host.queue_family_index`/`queue_index` name a queue of that device supporting compute.
    /// - The host keeps instance and device alive until `on_release` is called (or until every
    ///   Supple object made from this context is dropped), and does not use the queue from
    ///   another thread while a Supple call is submitting to it.
    /// - `host.debug_utils`, `host.f32_atomic_add` and `host.conditional_rendering` are true only
    ///   if the host enabled them.
    pub unsafe fn from_host(host: HostVulkan, options: ContextOptions) -> VkResult<Context> {
        let idx = host
            .instance
            .enumerate_physical_devices()
            .vk("vkEnumeratePhysicalDevices")?
            .iter()
            .position(|p| *p == host.physical_device)
            .unwrap_or(0);
        let mut caps = Capabilities::query(&host.instance, host.physical_device, idx);
        if !caps.suitable {
            return Err(VkError::Unsupported {
                device: caps.name.clone(),
                what: caps.unsuitable_reason.clone().unwrap_or_default(),
            });
        }
        caps.f32_atomic_add &= host.f32_atomic_add;
        caps.conditional_rendering &= host.conditional_rendering;
        options.workgroup_overrides.validate(&caps)?;
        Self::finish(
            host.entry,
            host.instance,
            host.physical_device,
            host.device,
            host.queue_family_index,
            host.queue_index,
            caps,
            options,
            host.debug_utils,
            Ownership::Borrowed {
                on_release: host.on_release,
            },
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn finish(
        entry: ash::Entry,
        instance: ash::Instance,
        physical_device: vk::PhysicalDevice,
        device: ash::Device,
        queue_family: u32,
        queue_index: u32,
        caps: Capabilities,
        options: ContextOptions,
        debug_utils: bool,
        ownership: Ownership,
    ) -> VkResult<Context> {
        let messages: MessageSink = Arc::new(Mutex::new(Vec::new()));
        // SAFETY: instance and device are valid (caller contract); every object created here is
        // destroyed by DeviceShared::drop, or below on failure.
        unsafe {
            let (du_instance, du_device, messenger) = if debug_utils {
                let dui = ash::ext::debug_utils::Instance::new(&entry, &instance);
                let dud = ash::ext::debug_utils::Device::new(&instance, &device);
                let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
                    .message_severity(
                        vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                            | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
                    )
                    .message_type(
                        vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                            | vk::DebugUtilsMessageTypeFlagsEXT::GENERAL,
                    )
                    .pfn_user_callback(Some(debug_callback))
                    .user_data(Arc::as_ptr(&messages) as *mut c_void);
                let m = dui
                    .create_debug_utils_messenger(&info, None)
                    .unwrap_or(vk::DebugUtilsMessengerEXT::null());
                (Some(dui), Some(dud), m)
            } else {
                (None, None, vk::DebugUtilsMessengerEXT::null())
            };
            let queue = device.get_device_queue(queue_family, queue_index);
            let conditional_rendering = (caps.conditional_rendering
                && options.conditional_rendering)
                .then(|| ash::ext::conditional_rendering::Device::new(&instance, &device));
            let allocator = Allocator::new(&AllocatorCreateDesc {
                instance: instance.clone(),
                device: device.clone(),
                physical_device,
                debug_settings: Default::default(),
                buffer_device_address: false,
                allocation_sizes: Default::default(),
            })
            .map_err(|e| VkError::Allocation {
                name: "allocator".into(),
                message: e.to_string(),
            })?;
            let mut type_info = vk::SemaphoreTypeCreateInfo::default()
                .semaphore_type(vk::SemaphoreType::TIMELINE)
                .initial_value(0);
            let timeline = device
                .create_semaphore(
                    &vk::SemaphoreCreateInfo::default().push_next(&mut type_info),
                    None,
                )
                .vk("vkCreateSemaphore")?;
            let pool = device
                .create_command_pool(
                    &vk::CommandPoolCreateInfo::default()
                        .queue_family_index(queue_family)
                        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                    None,
                )
                .vk("vkCreateCommandPool")?;
            let pipelines = PipelineStore::new(&device, &caps, options.pipeline_cache.as_deref())?;
            Ok(Context {
                shared: Arc::new(DeviceShared {
                    entry,
                    instance,
                    physical_device,
                    device,
                    queue: Mutex::new(queue),
                    queue_family,
                    caps,
                    options,
                    allocator: ManuallyDrop::new(Mutex::new(allocator)),
                    debug_utils_instance: du_instance,
                    debug_utils_device: du_device,
                    conditional_rendering,
                    messenger,
                    messages,
                    timeline,
                    next_timeline_value: AtomicU64::new(1),
                    command_pool: Mutex::new(pool),
                    pipelines: Mutex::new(pipelines),
                    next_resource_id: AtomicU64::new(1),
                    device_bytes: AtomicU64::new(0),
                    counters: CounterCells::default(),
                    ownership: Mutex::new(ownership),
                    trace: Mutex::new(Default::default()),
                    workgroup_report: Mutex::new(Default::default()),
                    node_timestamps: std::sync::atomic::AtomicBool::new(false),
                }),
            })
        }
    }

    /// Bytes of device memory held by the live buffers Supple allocated on this device (the
    /// allocations' sizes, device-local and host-visible alike; buffers wrapped with
    /// `GpuBuffer::from_raw` are the host's and not counted). Flat over a long run when nothing
    /// leaks.
    pub fn device_bytes(&self) -> u64 {
        self.shared.device_bytes.load(Ordering::Relaxed)
    }

    /// Host waits, queue submissions and dispatches since the context was created; subtract
    /// two readings for the work in between.
    pub fn counters(&self) -> DeviceCounters {
        let c = &self.shared.counters;
        DeviceCounters {
            host_waits: c.host_waits.load(Ordering::Relaxed),
            submits: c.submits.load(Ordering::Relaxed),
            dispatches: c.dispatches.load(Ordering::Relaxed),
            dispatches_skipped: c.dispatches_skipped.load(Ordering::Relaxed),
        }
    }

    /// Counts `n` submitted dispatches that conditional rendering skipped.
    pub(crate) fn count_skipped_dispatches(&self, n: u64) {
        self.shared
            .counters
            .dispatches_skipped
            .fetch_add(n, Ordering::Relaxed);
    }

    /// Whether graphs compiled on this context may predicate dispatches on a device-written
    /// word (VK_EXT_conditional_rendering): the device has it (a host's device: the host
    /// enabled it) and [`ContextOptions::conditional_rendering`] is on.
    pub fn conditional_rendering(&self) -> bool {
        self.shared.conditional_rendering.is_some()
    }

    /// Counts `n` dispatches about to be submitted.
    pub(crate) fn count_dispatches(&self, n: u64) {
        self.shared
            .counters
            .dispatches
            .fetch_add(n, Ordering::Relaxed);
    }

    /// Capabilities of the device in use.
    pub fn caps(&self) -> &Capabilities {
        &self.shared.caps
    }

    /// The options this context was created with.
    pub fn options(&self) -> &ContextOptions {
        &self.shared.options
    }

    /// Whether uploads and readbacks go through staging buffers.
    pub fn uses_staging(&self) -> bool {
        self.shared.options.force_staging || !self.shared.caps.unified_memory
    }

    /// The physical device in use.
    pub fn physical_device(&self) -> vk::PhysicalDevice {
        self.shared.physical_device
    }

    /// The raw device (for hosts that interoperate with Supple's buffers).
    pub fn raw_device(&self) -> &ash::Device {
        &self.shared.device
    }

    /// The queue family Supple submits to (hosts need it for ownership transfers).
    pub fn queue_family_index(&self) -> u32 {
        self.shared.queue_family
    }

    /// The timeline semaphore every Supple submission signals; a host waits on it for a
    /// [`Ticket`]'s value before reading Supple's buffers.
    pub fn timeline_semaphore(&self) -> vk::Semaphore {
        self.shared.timeline
    }

    /// When `on`, every graph compiled afterwards records per-node GPU timestamps (as if
    /// [`super::CompileOptions::timestamps`] were set), whatever options its owner passes; used
    /// to profile solvers that compile their graphs internally. Tracing implies it.
    pub fn set_node_timestamps(&self, on: bool) {
        self.shared.node_timestamps.store(on, Ordering::Relaxed);
    }

    /// What the per-node workgroup-size overrides ([`ContextOptions::workgroup_overrides`]) did
    /// to the dispatch nodes of every graph compiled so far: one entry per matching node name.
    pub fn workgroup_override_report(&self) -> Vec<super::kernel::WorkgroupOverrideUse> {
        let r = self
            .shared
            .workgroup_report
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        r.values().cloned().collect()
    }

    /// Whether graphs compiled now get per-node timestamps regardless of their options
    /// ([`Context::set_node_timestamps`] or a trace in progress).
    pub fn node_timestamps(&self) -> bool {
        self.shared.node_timestamps.load(Ordering::Relaxed) || self.is_tracing()
    }

    /// The ticket of the most recent submission to Supple's queue (value 0 before the first):
    /// once the timeline semaphore reaches it, every Supple write so far is complete.
    pub fn last_ticket(&self) -> Ticket {
        Ticket {
            value: self
                .shared
                .next_timeline_value
                .load(Ordering::SeqCst)
                .saturating_sub(1),
        }
    }

    /// Takes every validation message collected so far.
    pub fn take_validation_messages(&self) -> Vec<ValidationMessage> {
        std::mem::take(
            &mut *self
                .shared
                .messages
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        )
    }

    /// Validation errors collected so far (without removing them).
    pub fn validation_errors(&self) -> Vec<ValidationMessage> {
        self.shared
            .messages
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|m| m.severity == Severity::Error)
            .cloned()
            .collect()
    }

    /// Submits a recorded command buffer that signals the timeline; returns its ticket.
    pub(crate) fn submit_raw(&self, cmd: vk::CommandBuffer) -> VkResult<Ticket> {
        let s = &self.shared;
        let value = s.next_timeline_value.fetch_add(1, Ordering::SeqCst);
        let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
        let signal = [vk::SemaphoreSubmitInfo::default()
            .semaphore(s.timeline)
            .value(value)
            .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)];
        let submit = vk::SubmitInfo2::default()
            .command_buffer_infos(&cmds)
            .signal_semaphore_infos(&signal);
        let queue = s.queue.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the command buffer is fully recorded and not pending (callers wait on their
        // previous ticket before resubmitting); queue access is serialised by the mutex.
        unsafe { s.device.queue_submit2(*queue, &[submit], vk::Fence::null()) }
            .vk("vkQueueSubmit2")?;
        s.counters.submits.fetch_add(1, Ordering::Relaxed);
        Ok(Ticket { value })
    }

    /// Whether the work behind `ticket` has completed.
    pub fn is_complete(&self, ticket: Ticket) -> VkResult<bool> {
        // SAFETY: the semaphore is alive for the context's lifetime.
        let v = unsafe {
            self.shared
                .device
                .get_semaphore_counter_value(self.shared.timeline)
        }
        .vk("vkGetSemaphoreCounterValue")?;
        Ok(v >= ticket.value)
    }

    /// Waits (bounded by `options.wait_timeout`) for the work behind `ticket`.
    pub fn wait(&self, ticket: Ticket, what: &str) -> VkResult<()> {
        self.wait_for(ticket, what, self.shared.options.wait_timeout)
    }

    /// Waits at most `timeout` for the work behind `ticket`.
    /// A ticket at or below one an earlier wait saw complete returns at once, without a host
    /// wait (work submitted without waiting is covered by the wait for later work).
    pub fn wait_for(&self, ticket: Ticket, what: &str, timeout: Duration) -> VkResult<()> {
        let completed = &self.shared.counters.completed;
        if ticket.value <= completed.load(Ordering::Acquire) {
            return Ok(());
        }
        let sems = [self.shared.timeline];
        let values = [ticket.value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&sems)
            .values(&values);
        self.shared
            .counters
            .host_waits
            .fetch_add(1, Ordering::Relaxed);
        let started = std::time::Instant::now();
        // SAFETY: valid semaphore and wait info.
        let waited = unsafe {
            self.shared
                .device
                .wait_semaphores(&info, timeout.as_nanos().min(u64::MAX as u128) as u64)
        };
        if self.is_tracing() {
            self.trace_host_span(
                &format!("wait {what}"),
                "wait",
                started,
                std::time::Instant::now(),
            );
        }
        match waited {
            Ok(()) => {
                completed.fetch_max(ticket.value, Ordering::AcqRel);
                Ok(())
            }
            Err(vk::Result::TIMEOUT) => Err(VkError::Timeout {
                what: what.to_string(),
                timeout_ms: timeout.as_millis() as u64,
                last_node: None,
            }),
            Err(vk::Result::ERROR_DEVICE_LOST) => Err(VkError::DeviceLost {
                what: what.to_string(),
                last_node: None,
            }),
            Err(result) => Err(VkError::Call {
                call: "vkWaitSemaphores",
                result,
            }),
        }
    }

    /// Records commands with `record`, submits them and waits (setup path: allocates a command buffer).
    pub(crate) fn one_shot(
        &self,
        what: &str,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer),
    ) -> VkResult<()> {
        let s = &self.shared;
        let pool = *s.command_pool.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: pool belongs to this device; the buffer is freed after its work completed.
        unsafe {
            let cmd = s
                .device
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(pool)
                        .command_buffer_count(1),
                )
                .vk("vkAllocateCommandBuffers")?[0];
            let run = || -> VkResult<()> {
                s.device
                    .begin_command_buffer(
                        cmd,
                        &vk::CommandBufferBeginInfo::default()
                            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
                    )
                    .vk("vkBeginCommandBuffer")?;
                record(&s.device, cmd);
                s.device.end_command_buffer(cmd).vk("vkEndCommandBuffer")?;
                let t = self.submit_raw(cmd)?;
                self.wait(t, what)
            };
            let r = run();
            if r.is_ok() {
                let _lock = s.command_pool.lock();
                s.device.free_command_buffers(pool, &[cmd]);
            }
            r
        }
    }

    /// Allocates a primary command buffer from the context's pool.
    pub(crate) fn allocate_command_buffer(&self) -> VkResult<vk::CommandBuffer> {
        let s = &self.shared;
        let pool = s.command_pool.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: pool is valid and externally synchronised by the mutex.
        Ok(unsafe {
            s.device
                .allocate_command_buffers(
                    &vk::CommandBufferAllocateInfo::default()
                        .command_pool(*pool)
                        .command_buffer_count(1),
                )
                .vk("vkAllocateCommandBuffers")?[0]
        })
    }

    /// Frees a command buffer allocated by [`Context::allocate_command_buffer`].
    ///
    /// # Safety
    /// The command buffer must not be pending execution.
    pub(crate) unsafe fn free_command_buffer(&self, cmd: vk::CommandBuffer) {
        let pool = self
            .shared
            .command_pool
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        self.shared.device.free_command_buffers(*pool, &[cmd]);
    }

    /// Names a Vulkan object for debuggers (no-op without VK_EXT_debug_utils).
    pub(crate) fn set_name<H: vk::Handle>(&self, handle: H, name: &str) {
        if let Some(d) = &self.shared.debug_utils_device {
            if let Ok(c) = CString::new(name) {
                let info = vk::DebugUtilsObjectNameInfoEXT::default()
                    .object_handle(handle)
                    .object_name(&c);
                // SAFETY: the handle belongs to this device.
                let _ = unsafe { d.set_debug_utils_object_name(&info) };
            }
        }
    }

    /// Waits until the device is idle (bounded only by the driver; used at teardown and in tests).
    pub fn wait_idle(&self) -> VkResult<()> {
        // SAFETY: plain call on a valid device; queue usage is serialised by the mutex.
        let _q = self.shared.queue.lock().unwrap_or_else(|p| p.into_inner());
        unsafe { self.shared.device.device_wait_idle() }.vk("vkDeviceWaitIdle")
    }
}

/// A submitted piece of GPU work: completed once the context's timeline reaches `value`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ticket {
    /// Timeline-semaphore value signalled on completion.
    pub value: u64,
}

/// Tracing (`vk/trace.rs` holds the data).
impl Context {
    /// Starts collecting a [`Trace`](super::trace::Trace) (discarding one in progress). Graphs compiled from now on
    /// record per-node timestamps; compile the graphs to be traced after this call.
    pub fn start_trace(&self) {
        let mut t = self.lock_trace();
        t.trace = Some(super::trace::Trace {
            origin: std::time::Instant::now(),
            graph_runs: Vec::new(),
            host_spans: Vec::new(),
        });
    }

    /// Whether a trace is being collected.
    pub fn is_tracing(&self) -> bool {
        self.lock_trace().trace.is_some()
    }

    /// Stops tracing and returns what was collected (`None` if tracing was off).
    pub fn take_trace(&self) -> Option<super::trace::Trace> {
        self.lock_trace().trace.take()
    }

    /// Adds a host span to the trace in progress (no-op when not tracing).
    pub fn trace_host_span(
        &self,
        name: &str,
        category: &str,
        start: std::time::Instant,
        end: std::time::Instant,
    ) {
        if let Some(t) = self.lock_trace().trace.as_mut() {
            t.host_spans.push(super::trace::HostSpan {
                name: name.to_string(),
                category: category.to_string(),
                start,
                end,
            });
        }
    }

    pub(crate) fn trace_graph_run(&self, run: super::trace::GraphRun) {
        if let Some(t) = self.lock_trace().trace.as_mut() {
            t.graph_runs.push(run);
        }
    }

    fn lock_trace(&self) -> std::sync::MutexGuard<'_, super::trace::TraceState> {
        self.shared.trace.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(index: usize, name: &str, device_type: &str, suitable: bool) -> Capabilities {
        Capabilities {
            index,
            name: name.into(),
            device_type: device_type.into(),
            vendor_id: 0,
            driver: String::new(),
            api_version: "1.3.0".into(),
            subgroup_size: 32,
            subgroup_arithmetic_ballot_shuffle: true,
            f32_atomic_add: false,
            f32_atomic_min_max: false,
            f64_atomic_add: false,
            i64_atomics: false,
            f64: false,
            i64: false,
            timestamps: true,
            conditional_rendering: false,
            timestamp_period_ns: 1.0,
            max_storage_buffer_range: 1 << 27,
            max_push_constants_size: 128,
            max_workgroup_invocations: 1024,
            max_shared_memory_bytes: 32768,
            min_storage_offset_alignment: 16,
            max_texel_buffer_elements: 1 << 27,
            min_texel_offset_alignment: 16,
            unified_memory: false,
            device_local_bytes: 0,
            suitable,
            unsuitable_reason: if suitable {
                None
            } else {
                Some("lacks Vulkan 1.3".into())
            },
        }
    }

    #[test]
    fn prefers_discrete_then_integrated_then_cpu() {
        let all = vec![
            dev(0, "llvmpipe", "cpu", true),
            dev(1, "Intel UHD", "integrated", true),
            dev(2, "RTX", "discrete", true),
        ];
        assert_eq!(select_device(&all, None).unwrap(), 2);
        assert_eq!(select_device(&all[..2], None).unwrap(), 1);
        assert_eq!(select_device(&all[..1], None).unwrap(), 0);
        // Unsuitable devices are never picked automatically.
        let all = vec![
            dev(0, "llvmpipe", "cpu", true),
            dev(1, "Old GPU", "discrete", false),
        ];
        assert_eq!(select_device(&all, None).unwrap(), 0);
    }

    #[test]
    fn supple_device_selects_by_index_or_name() {
        let all = vec![
            dev(0, "llvmpipe (LLVM 15)", "cpu", true),
            dev(1, "NVIDIA H100", "discrete", true),
            dev(2, "Old", "discrete", false),
        ];
        assert_eq!(select_device(&all, Some("0")).unwrap(), 0);
        assert_eq!(select_device(&all, Some("LLVMpipe")).unwrap(), 0);
        assert_eq!(select_device(&all, Some("h100")).unwrap(), 1);
        let e = select_device(&all, Some("7")).unwrap_err().to_string();
        assert!(e.contains("SUPPLE_DEVICE=7"), "{e}");
        let e = select_device(&all, Some("2")).unwrap_err().to_string();
        assert!(e.contains("Vulkan 1.3"), "{e}");
        let e = select_device(&all, Some("radeon")).unwrap_err().to_string();
        assert!(e.contains("llvmpipe") && e.contains("H100"), "{e}");
        assert!(select_device(&[], None)
            .unwrap_err()
            .to_string()
            .contains("mesa-vulkan-drivers"));
    }
}
