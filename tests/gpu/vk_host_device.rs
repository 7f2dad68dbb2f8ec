//! Wrapping a host-created instance/device/queue: Supple runs on it and never destroys it.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use supple::primitives::{Scan, ScanKind};
use supple::vk::ash::{self, vk};
use supple::vk::{BufferUsage, CompileOptions, Context, ContextOptions, Graph, HostVulkan};

#[test]
fn supple_runs_on_a_host_device_and_leaves_it_alive() {
    // SAFETY: a normal host-side Vulkan setup; every object is destroyed at the end by the host.
    unsafe {
        let entry = ash::Entry::load().expect("Vulkan loader");
        let layers = [c"VK_LAYER_KHRONOS_validation".as_ptr()];
        let exts = [ash::ext::debug_utils::NAME.as_ptr()];
        let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_3);
        let instance = entry
            .create_instance(
                &vk::InstanceCreateInfo::default()
                    .application_info(&app)
                    .enabled_layer_names(&layers)
                    .enabled_extension_names(&exts),
                None,
            )
            .expect("instance");
        let pd = instance.enumerate_physical_devices().unwrap()[0];
        let family = instance
            .get_physical_device_queue_family_properties(pd)
            .iter()
            .position(|q| q.queue_flags.contains(vk::QueueFlags::COMPUTE))
            .unwrap() as u32;
        let req = supple::vk::device_requirements();
        assert!(req
            .required_features
            .iter()
            .any(|f| f.contains("timelineSemaphore")));
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default()
            .synchronization2(true)
            .maintenance4(true);
        let prio = [1.0f32];
        let q = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&prio)];
        let device = instance
            .create_device(
                pd,
                &vk::DeviceCreateInfo::default()
                    .queue_create_infos(&q)
                    .push_next(&mut f12)
                    .push_next(&mut f13),
                None,
            )
            .expect("device");

        let released = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&released);
        let mut options = ContextOptions::from_env();
        options.pipeline_cache = None;
        let ctx = Context::from_host(
            HostVulkan {
                entry: entry.clone(),
                instance: instance.clone(),
                physical_device: pd,
                device: device.clone(),
                queue_family_index: family,
                queue_index: 0,
                debug_utils: true,
                f32_atomic_add: false,
                conditional_rendering: false,
                on_release: Some(Box::new(move || flag.store(true, Ordering::SeqCst))),
            },
            options,
        )
        .expect("wrap host device");
        {
            let data: Vec<u32> = (0..1000).collect();
            let input = ctx
                .upload_buffer("in", &data, BufferUsage::STORAGE)
                .unwrap();
            let out = ctx
                .create_buffer::<u32>("out", 1000, BufferUsage::STORAGE)
                .unwrap();
            let scan = Scan::new(&ctx, 1000).unwrap();
            let mut g = Graph::new("host-scan");
            scan.record(&mut g, &input, &out, 1000, ScanKind::Inclusive);
            g.compile(&ctx, CompileOptions::default())
                .unwrap()
                .run()
                .unwrap();
            assert_eq!(
                out.read().unwrap(),
                supple::cpu_reference::scan::inclusive_scan(&data)
            );
            let errors = ctx.validation_errors();
            assert!(errors.is_empty(), "{errors:?}");
        }
        drop(ctx);
        assert!(
            released.load(Ordering::SeqCst),
            "Supple reports when it has released the device"
        );
        // The device is still alive and usable by the host.
        let b = device
            .create_buffer(
                &vk::BufferCreateInfo::default()
                    .size(64)
                    .usage(vk::BufferUsageFlags::STORAGE_BUFFER),
                None,
            )
            .expect("host device still usable after Supple is gone");
        device.destroy_buffer(b, None);
        device.device_wait_idle().unwrap();
        device.destroy_device(None);
        instance.destroy_instance(None);
    }
}
