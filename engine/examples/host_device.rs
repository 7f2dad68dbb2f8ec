//! Embedding Supple in an application that owns the Vulkan device, as a renderer would.
//!
//! The host creates its own instance, device and queue (enabling what
//! `supple::vk::device_requirements()` lists), hands them to Supple with
//! `unsafe Context::from_host`, and then:
//!
//! 1. steps a Newton scene with `Simulation::step_frame` and reads the simulated positions
//!    straight from Supple's GPU buffer (`Simulation::positions_view`: raw `VkBuffer`, offset,
//!    stride, count) with a copy recorded and submitted on the host's own command buffer,
//!    waiting on Supple's timeline semaphore (`Simulation::render_sync`);
//! 2. has Supple record a symplectic-Euler frame into a host command buffer
//!    (`Simulation::record_step_into`) that the host submits itself, next to a copy of the
//!    positions, and compares with the same scene stepped by Supple;
//! 3. drops Supple (which destroys only what it created and says so through `on_release`) and
//!    destroys its own device and instance.
//!
//! Run it with `cargo run --release -p supple --example host_device`; `SUPPLE_VALIDATION=1`
//! turns the Khronos validation layer on. The test `tests/gpu/host_device_example.rs` runs the
//! same code with validation on.

use std::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use supple::scene::Scene;
use supple::simulation::Simulation;
use supple::vk::ash::{self, vk};
use supple::vk::{device_requirements, Context, ContextOptions, HostVulkan};

/// The scene both parts step: a small soft cube dropped onto the ground.
const SCENE: &str = r#"
[simulation]
frame_rate = 60.0
substeps = 4
frames = 4

[[body]]
name = "cube"
mesh = { generator = "box", size = [0.1, 0.1, 0.1], cells = [2, 2, 2] }
translation = [0.0, 0.0, 0.06]
material = { model = "stable-neo-hookean", youngs_modulus = 2e4, poisson_ratio = 0.3, density = 1000.0 }

[[collider]]
shape = { plane = { normal = [0.0, 0.0, 1.0], offset = 0.0 } }
"#;

/// Bound of every host-side fence wait.
const WAIT: Duration = Duration::from_secs(60);

/// What the example observed.
#[derive(Debug, Default)]
pub struct HostDeviceReport {
    /// The device the host created.
    pub device: String,
    /// Frames stepped in each part.
    pub frames: u32,
    /// Model vertices.
    pub vertices: usize,
    /// Rest positions of the model (before the first frame).
    pub rest_positions: Vec<[f64; 3]>,
    /// Whether the host's own validation messenger was installed (VK_EXT_debug_utils).
    pub host_messenger: bool,
    /// Positions read by the host through the raw buffer after the last Newton frame.
    pub raw_positions: Vec<[f32; 3]>,
    /// The same positions from the safe API (`Simulation::positions`).
    pub safe_positions: Vec<[f64; 3]>,
    /// Positions after frames recorded into the host's command buffers (symplectic Euler).
    pub recorded_positions: Vec<[f32; 3]>,
    /// The same scene stepped by Supple's own submissions.
    pub submitted_positions: Vec<[f64; 3]>,
    /// What `record_step_into` said for the Newton simulation (it cannot be recorded).
    pub newton_record_error: Option<String>,
    /// Ownership transfers Supple asked for (none: the host reads on Supple's queue family).
    pub queue_family_transfers: usize,
    /// Validation errors Supple collected while it ran.
    pub supple_validation_errors: Vec<String>,
    /// Whether Supple called `on_release` when dropped.
    pub released: bool,
    /// Validation errors the host's own messenger saw, teardown of its device included.
    pub host_validation_errors: Vec<String>,
}

type Sink = Mutex<Vec<String>>;

unsafe extern "system" fn on_message(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    _types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut std::ffi::c_void,
) -> vk::Bool32 {
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
        && !data.is_null()
        && !user.is_null()
    {
        // SAFETY: `user` is the Sink kept alive by `Host` until the messenger is destroyed;
        // `data` is valid during the call.
        let sink = &*(user as *const Sink);
        let text = if (*data).p_message.is_null() {
            String::new()
        } else {
            std::ffi::CStr::from_ptr((*data).p_message)
                .to_string_lossy()
                .into_owned()
        };
        if let Ok(mut v) = sink.lock() {
            v.push(text);
        }
    }
    vk::FALSE
}

/// Everything the host owns; destroyed in order by `destroy` (or on an early error by Drop).
struct Host {
    entry: ash::Entry,
    instance: ash::Instance,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    messages: Arc<Sink>,
    device: Option<ash::Device>,
    physical_device: vk::PhysicalDevice,
    family: u32,
    queue: vk::Queue,
    pool: vk::CommandPool,
    fence: vk::Fence,
    /// Host-visible buffer the positions are copied into, its memory and mapping.
    readback: Option<(vk::Buffer, vk::DeviceMemory, *mut u8, u64)>,
    /// Set once everything is destroyed.
    destroyed: bool,
}

impl Host {
    /// Instance (validation layer and a messenger when asked for), device with Supple's
    /// requirements, one queue of a family with graphics (when there is one) and compute.
    fn new(validation: bool) -> Result<Host, Box<dyn Error>> {
        // SAFETY: ordinary Vulkan setup; every object is destroyed by `Host::destroy`/Drop.
        unsafe {
            let entry = ash::Entry::load()?;
            let req = device_requirements();
            let layer = c"VK_LAYER_KHRONOS_validation";
            let has_layer = entry
                .enumerate_instance_layer_properties()?
                .iter()
                .any(|l| l.layer_name_as_c_str() == Ok(layer));
            if validation && !has_layer {
                return Err("the validation layer is not installed".into());
            }
            let has_debug_utils = entry
                .enumerate_instance_extension_properties(None)?
                .iter()
                .any(|e| e.extension_name_as_c_str() == Ok(ash::ext::debug_utils::NAME));
            let layers = if validation {
                vec![layer.as_ptr()]
            } else {
                vec![]
            };
            let exts = if has_debug_utils {
                vec![ash::ext::debug_utils::NAME.as_ptr()]
            } else {
                vec![]
            };
            let app = vk::ApplicationInfo::default()
                .application_name(c"supple host_device example")
                .api_version(req.api_version);
            let instance = entry.create_instance(
                &vk::InstanceCreateInfo::default()
                    .application_info(&app)
                    .enabled_layer_names(&layers)
                    .enabled_extension_names(&exts),
                None,
            )?;
            let messages: Arc<Sink> = Arc::new(Mutex::new(Vec::new()));
            let mut host = Host {
                entry,
                instance,
                debug: None,
                messages,
                device: None,
                physical_device: vk::PhysicalDevice::null(),
                family: 0,
                queue: vk::Queue::null(),
                pool: vk::CommandPool::null(),
                fence: vk::Fence::null(),
                readback: None,
                destroyed: false,
            };
            if has_debug_utils {
                let du = ash::ext::debug_utils::Instance::new(&host.entry, &host.instance);
                let m = du.create_debug_utils_messenger(
                    &vk::DebugUtilsMessengerCreateInfoEXT::default()
                        .message_severity(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR)
                        .message_type(
                            vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                                | vk::DebugUtilsMessageTypeFlagsEXT::GENERAL,
                        )
                        .pfn_user_callback(Some(on_message))
                        .user_data(Arc::as_ptr(&host.messages) as *mut std::ffi::c_void),
                    None,
                )?;
                host.debug = Some((du, m));
            }
            // A Vulkan 1.3 device with a compute queue (a renderer's graphics+compute family
            // when there is one).
            let mut chosen = None;
            for pd in host.instance.enumerate_physical_devices()? {
                let props = host.instance.get_physical_device_properties(pd);
                if props.api_version < req.api_version {
                    continue;
                }
                let families = host
                    .instance
                    .get_physical_device_queue_family_properties(pd);
                let with =
                    |f: vk::QueueFlags| families.iter().position(|q| q.queue_flags.contains(f));
                if let Some(family) = with(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)
                    .or(with(vk::QueueFlags::COMPUTE))
                {
                    chosen = Some((pd, family as u32));
                    break;
                }
            }
            let (pd, family) = chosen.ok_or("no Vulkan 1.3 device with a compute queue")?;
            host.physical_device = pd;
            host.family = family;
            // Enable what Supple requires (refusing requirements this host does not know) and
            // the optional features the device has.
            let mut s11 = vk::PhysicalDeviceVulkan12Features::default();
            let mut s13 = vk::PhysicalDeviceVulkan13Features::default();
            let mut supported = vk::PhysicalDeviceFeatures2::default()
                .push_next(&mut s11)
                .push_next(&mut s13);
            host.instance
                .get_physical_device_features2(pd, &mut supported);
            let base_supported = supported.features;
            let (timeline_ok, sync2_ok, m4_ok) = (
                s11.timeline_semaphore,
                s13.synchronization2,
                s13.maintenance4,
            );
            let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
            let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
            for name in &req.required_features {
                let ok = match *name {
                    "VkPhysicalDeviceVulkan12Features.timelineSemaphore" => {
                        f12.timeline_semaphore = vk::TRUE;
                        timeline_ok
                    }
                    "VkPhysicalDeviceVulkan13Features.synchronization2" => {
                        f13.synchronization2 = vk::TRUE;
                        sync2_ok
                    }
                    "VkPhysicalDeviceVulkan13Features.maintenance4" => {
                        f13.maintenance4 = vk::TRUE;
                        m4_ok
                    }
                    other => return Err(format!("unknown required feature {other}").into()),
                };
                if ok != vk::TRUE {
                    return Err(format!("the device lacks {name}").into());
                }
            }
            if !req.required_extensions.is_empty() {
                return Err("this example enables no device extensions".into());
            }
            let base = vk::PhysicalDeviceFeatures::default()
                .shader_float64(base_supported.shader_float64 == vk::TRUE)
                .shader_int64(base_supported.shader_int64 == vk::TRUE);
            let prio = [1.0f32];
            let queues = [vk::DeviceQueueCreateInfo::default()
                .queue_family_index(family)
                .queue_priorities(&prio)];
            let device = host.instance.create_device(
                pd,
                &vk::DeviceCreateInfo::default()
                    .queue_create_infos(&queues)
                    .enabled_features(&base)
                    .push_next(&mut f12)
                    .push_next(&mut f13),
                None,
            )?;
            host.queue = device.get_device_queue(family, 0);
            host.device = Some(device);
            let d = host.device()?.clone();
            host.pool = d.create_command_pool(
                &vk::CommandPoolCreateInfo::default()
                    .queue_family_index(family)
                    .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
                None,
            )?;
            host.fence = d.create_fence(&vk::FenceCreateInfo::default(), None)?;
            Ok(host)
        }
    }

    fn device(&self) -> Result<&ash::Device, Box<dyn Error>> {
        self.device.as_ref().ok_or_else(|| "no device".into())
    }

    fn device_name(&self) -> String {
        // SAFETY: valid physical device of this instance.
        let props = unsafe {
            self.instance
                .get_physical_device_properties(self.physical_device)
        };
        props
            .device_name_as_c_str()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// A host-visible, coherent buffer of `size` bytes for reading positions back.
    fn create_readback(&mut self, size: u64) -> Result<(), Box<dyn Error>> {
        let d = self.device()?.clone();
        // SAFETY: plain creation on our device; destroyed in `destroy`.
        unsafe {
            let buffer = d.create_buffer(
                &vk::BufferCreateInfo::default()
                    .size(size)
                    .usage(vk::BufferUsageFlags::TRANSFER_DST)
                    .sharing_mode(vk::SharingMode::EXCLUSIVE),
                None,
            )?;
            let req = d.get_buffer_memory_requirements(buffer);
            let mem_props = self
                .instance
                .get_physical_device_memory_properties(self.physical_device);
            let want =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let Some(ty) = (0..mem_props.memory_type_count).find(|&i| {
                req.memory_type_bits & (1 << i) != 0
                    && mem_props.memory_types[i as usize]
                        .property_flags
                        .contains(want)
            }) else {
                d.destroy_buffer(buffer, None);
                return Err("no host-visible coherent memory type".into());
            };
            let memory = match d.allocate_memory(
                &vk::MemoryAllocateInfo::default()
                    .allocation_size(req.size)
                    .memory_type_index(ty),
                None,
            ) {
                Ok(m) => m,
                Err(e) => {
                    d.destroy_buffer(buffer, None);
                    return Err(e.into());
                }
            };
            self.readback = Some((buffer, memory, std::ptr::null_mut(), size));
            d.bind_buffer_memory(buffer, memory, 0)?;
            let ptr = d.map_memory(memory, 0, size, vk::MemoryMapFlags::empty())?;
            self.readback = Some((buffer, memory, ptr as *mut u8, size));
            Ok(())
        }
    }

    /// Records commands with `record` into a fresh command buffer, submits it to the host's
    /// queue (waiting on `wait`, if any) and waits for it (bounded).
    fn submit(
        &self,
        wait: Option<vk::SemaphoreSubmitInfo<'_>>,
        record: impl FnOnce(&ash::Device, vk::CommandBuffer) -> Result<(), Box<dyn Error>>,
    ) -> Result<(), Box<dyn Error>> {
        let d = self.device()?;
        // SAFETY: the command buffer comes from our pool and is freed after its work is done
        // (or leaked if waiting failed, as the GPU may still use it).
        unsafe {
            let cmd = d.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(self.pool)
                    .command_buffer_count(1),
            )?[0];
            d.begin_command_buffer(
                cmd,
                &vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
            )?;
            record(d, cmd)?;
            d.end_command_buffer(cmd)?;
            let cmds = [vk::CommandBufferSubmitInfo::default().command_buffer(cmd)];
            let waits: Vec<_> = wait.into_iter().collect();
            let submit = vk::SubmitInfo2::default()
                .command_buffer_infos(&cmds)
                .wait_semaphore_infos(&waits);
            d.queue_submit2(self.queue, &[submit], self.fence)?;
            d.wait_for_fences(&[self.fence], true, WAIT.as_nanos() as u64)?;
            d.reset_fences(&[self.fence])?;
            d.free_command_buffers(self.pool, &[cmd]);
            Ok(())
        }
    }

    /// Records a copy of `view` into the readback buffer and a barrier making it host-visible.
    fn record_copy(
        &self,
        d: &ash::Device,
        cmd: vk::CommandBuffer,
        view: &supple::simulation::RawBufferView,
    ) -> Result<(), Box<dyn Error>> {
        let (dst, _, _, size) = self.readback.ok_or("no readback buffer")?;
        if view.size > size {
            return Err("readback buffer too small".into());
        }
        // SAFETY: both buffers are alive, the ranges are in bounds, cmd is recording.
        unsafe {
            // Supple's writes (by its own submissions or commands recorded before this one)
            // made visible to the copy.
            let before = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::COMPUTE_SHADER)
                .src_access_mask(vk::AccessFlags2::SHADER_STORAGE_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::COPY)
                .dst_access_mask(vk::AccessFlags2::TRANSFER_READ)];
            d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&before));
            d.cmd_copy_buffer(
                cmd,
                view.buffer,
                dst,
                &[vk::BufferCopy {
                    src_offset: view.offset,
                    dst_offset: 0,
                    size: view.size,
                }],
            );
            let after = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::COPY)
                .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::HOST)
                .dst_access_mask(vk::AccessFlags2::HOST_READ)];
            d.cmd_pipeline_barrier2(cmd, &vk::DependencyInfo::default().memory_barriers(&after));
        }
        Ok(())
    }

    /// The xyz of `view.count` vec4s in the readback buffer (after a completed copy).
    fn read_positions(
        &self,
        view: &supple::simulation::RawBufferView,
    ) -> Result<Vec<[f32; 3]>, Box<dyn Error>> {
        let (_, _, ptr, size) = self.readback.ok_or("no readback buffer")?;
        if ptr.is_null() || view.size > size || view.stride < 12 {
            return Err("readback buffer not mapped or too small".into());
        }
        // SAFETY: the mapping covers `size` ≥ view.size bytes and the copy into it completed.
        let bytes = unsafe { std::slice::from_raw_parts(ptr, view.size as usize) };
        Ok((0..view.count)
            .map(|i| {
                let at = i * view.stride as usize;
                std::array::from_fn(|k| {
                    let o = at + 4 * k;
                    f32::from_ne_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]])
                })
            })
            .collect())
    }

    /// Destroys everything in order and returns the validation errors the host saw.
    fn destroy(mut self) -> Vec<String> {
        self.destroy_objects();
        std::mem::take(&mut *self.messages.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn destroy_objects(&mut self) {
        if std::mem::replace(&mut self.destroyed, true) {
            return;
        }
        // SAFETY: Supple has been dropped (it never destroys these); the device is idle
        // before its objects go; each object is destroyed once (`destroyed` guards).
        unsafe {
            if let Some(d) = self.device.take() {
                let _ = d.device_wait_idle();
                if let Some((b, m, _, _)) = self.readback.take() {
                    d.destroy_buffer(b, None);
                    d.free_memory(m, None);
                }
                d.destroy_fence(self.fence, None);
                d.destroy_command_pool(self.pool, None);
                d.destroy_device(None);
            }
            if let Some((du, m)) = self.debug.take() {
                du.destroy_debug_utils_messenger(m, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.destroy_objects();
    }
}

fn xyz(p: &[f64; 3]) -> [f32; 3] {
    p.map(|v| v as f32)
}

/// Runs both parts of the example on a host-created device; `validation` turns the Khronos
/// validation layer on (the host's instance, so Supple's messages and the host's are checked).
pub fn run(validation: bool) -> Result<HostDeviceReport, Box<dyn Error>> {
    let mut host = Host::new(validation)?;
    let mut report = HostDeviceReport {
        device: host.device_name(),
        host_messenger: host.debug.is_some(),
        ..Default::default()
    };
    let released = Arc::new(AtomicBool::new(false));
    {
        let flag = Arc::clone(&released);
        let mut options = ContextOptions::from_env();
        options.validation = validation;
        // SAFETY: the device was created from `physical_device` of `instance` with API 1.3 and
        // every required feature; the family has compute; the host keeps instance and device
        // alive until Supple is dropped (below) and uses the queue only between Supple calls
        // on this thread; debug_utils is true only when the host enabled it.
        let ctx = unsafe {
            Context::from_host(
                HostVulkan {
                    entry: host.entry.clone(),
                    instance: host.instance.clone(),
                    physical_device: host.physical_device,
                    device: host.device()?.clone(),
                    queue_family_index: host.family,
                    queue_index: 0,
                    debug_utils: host.debug.is_some(),
                    f32_atomic_add: false,
                    conditional_rendering: false,
                    on_release: Some(Box::new(move || flag.store(true, Ordering::SeqCst))),
                },
                options,
            )?
        };

        // Part 1: Newton, stepped by Supple; positions read through the raw buffer.
        let scene = Scene::parse(SCENE, "host_device example", &[])?;
        report.frames = scene.simulation.frames;
        let sim = {
            let mut sim = Simulation::new(&ctx, &scene)?;
            for _ in 0..scene.simulation.frames {
                sim.step_frame()?;
            }
            sim
        };
        let view = sim.positions_view();
        report.vertices = view.count;
        report.rest_positions = sim.model().positions.clone();
        report.queue_family_transfers = sim.queue_family_transfers(host.family).len();
        host.create_readback(view.size)?;
        let sync = sim.render_sync();
        host.submit(
            Some(sync.wait_info(vk::PipelineStageFlags2::COPY)),
            |d, cmd| host.record_copy(d, cmd, &view),
        )?;
        report.raw_positions = host.read_positions(&view)?;
        report.safe_positions = sim.positions()?;
        // A Newton frame cannot be recorded into a host command buffer: it says so.
        report.newton_record_error = host
            .submit(None, |_, cmd| {
                // SAFETY: cmd is recording, from a pool of Supple's family (the host's).
                unsafe { sim.record_step_into(cmd) }.map_err(|e| e.to_string().into())
            })
            .err()
            .map(|e| e.to_string());

        // Part 2: symplectic Euler; one twin stepped by Supple, the other by frames Supple
        // records into the host's command buffers and the host submits.
        let overrides = ["simulation.solver=\"symplectic-euler\"".to_string()];
        let scene = Scene::parse(SCENE, "host_device example", &overrides)?;
        let mut by_supple = Simulation::new(&ctx, &scene)?;
        let by_host = Simulation::new(&ctx, &scene)?;
        let view = by_host.positions_view();
        let sync = by_host.render_sync();
        for frame in 0..scene.simulation.frames {
            by_supple.step_frame()?;
            // Setup uploads are Supple submissions: wait on them before the first frame.
            let wait = (frame == 0).then(|| sync.wait_info(vk::PipelineStageFlags2::ALL_COMMANDS));
            host.submit(wait, |d, cmd| {
                // SAFETY: cmd is recording, from a pool of Supple's family; the submission is
                // waited for before the next Supple call.
                unsafe { by_host.record_step_into(cmd) }?;
                host.record_copy(d, cmd, &view)
            })?;
        }
        report.recorded_positions = host.read_positions(&view)?;
        report.submitted_positions = by_supple.positions()?;
        if by_host.positions()?.iter().map(xyz).collect::<Vec<_>>() != report.recorded_positions {
            return Err("the safe API disagrees with the raw buffer after recorded frames".into());
        }

        report.supple_validation_errors = ctx
            .validation_errors()
            .into_iter()
            .map(|m| m.text)
            .collect();
        drop((sim, by_supple, by_host, ctx));
    }
    report.released = released.load(Ordering::SeqCst);
    // The host's device is still alive and usable; the host tears it down.
    report.host_validation_errors = host.destroy();
    Ok(report)
}

#[allow(dead_code)]
fn main() -> std::process::ExitCode {
    let validation = std::env::var("SUPPLE_VALIDATION").is_ok_and(|v| v == "1");
    match run(validation) {
        Ok(r) => {
            let same = r
                .safe_positions
                .iter()
                .map(xyz)
                .eq(r.raw_positions.iter().copied());
            let recorded_same = r
                .submitted_positions
                .iter()
                .map(xyz)
                .eq(r.recorded_positions.iter().copied());
            println!("device: {}", r.device);
            println!(
                "{} vertices after {} frames; raw buffer == Simulation::positions(): {same}",
                r.vertices, r.frames
            );
            println!("frames recorded into host command buffers == Supple's own: {recorded_same}");
            if let Some(e) = &r.newton_record_error {
                println!("Newton cannot be recorded: {e}");
            }
            println!(
                "queue-family transfers: {}; Supple released the device: {}; validation errors: {} (Supple) + {} (host)",
                r.queue_family_transfers,
                r.released,
                r.supple_validation_errors.len(),
                r.host_validation_errors.len()
            );
            if same && recorded_same && r.released {
                std::process::ExitCode::SUCCESS
            } else {
                std::process::ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
