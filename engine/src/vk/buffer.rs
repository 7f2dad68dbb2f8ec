//! Persistent typed GPU buffers (structure-of-arrays storage) with staging upload/readback.
//!
//! A buffer is allocated once (setup path) and reused every step. Device-local buffers are
//! written and read through staging copies; on unified-memory devices (lavapipe) they are
//! mapped directly unless [`ContextOptions::force_staging`](super::ContextOptions) is set.
//! Host-owned buffers can be wrapped with [`GpuBuffer::from_raw`]; they carry no allocation and
//! are never destroyed by Supple.

use super::context::{Context, DeviceShared};
use super::error::{VkCheck, VkError, VkResult};
use ash::vk;
use bitflags::bitflags;
use bytemuck::Pod;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

bitflags! {
    /// How a buffer is used; decides Vulkan usage flags and memory placement.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct BufferUsage: u32 {
        /// Read/written by kernels as a storage buffer.
        const STORAGE = 1 << 0;
        /// Holds indirect dispatch arguments.
        const INDIRECT = 1 << 1;
        /// Host-visible, written by the host every step (parameters): never staged.
        const HOST_WRITE = 1 << 2;
        /// Host-visible, read by the host every step (readback ring): never staged.
        const HOST_READ = 1 << 3;
        /// Holds predicate words of conditional rendering (gated sections' open flags).
        const CONDITION = 1 << 4;
        /// Also read by kernels through uniform texel buffer views (`Dispatch::read_texels`).
        const TEXEL = 1 << 5;
    }
}

/// The untyped part of a buffer: handle, size and (for owned buffers) its allocation.
pub(crate) struct RawBuffer {
    pub(crate) shared: Arc<DeviceShared>,
    pub(crate) id: u64,
    pub(crate) handle: vk::Buffer,
    pub(crate) size: u64,
    pub(crate) name: String,
    pub(crate) usage: BufferUsage,
    /// `None` for imported (host-owned) buffers.
    allocation: Mutex<Option<Allocation>>,
    pub(crate) mapped: Option<std::ptr::NonNull<u8>>,
}

// SAFETY: the mapped pointer refers to persistently mapped device memory owned by the
// allocation; access to it is coordinated by the caller (GPU work is waited on first).
unsafe impl Send for RawBuffer {}
// SAFETY: see above; all interior mutability is behind a Mutex.
unsafe impl Sync for RawBuffer {}

impl Drop for RawBuffer {
    fn drop(&mut self) {
        let alloc = self
            .allocation
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(a) = alloc {
            // SAFETY: Supple created this buffer; every graph using it holds an Arc to us, so no
            // pending GPU work references it (graphs wait on their last submission when dropped).
            unsafe { self.shared.device.destroy_buffer(self.handle, None) };
            self.shared
                .device_bytes
                .fetch_sub(a.size(), std::sync::atomic::Ordering::Relaxed);
            let _ = self.shared.lock_allocator().free(a);
        }
    }
}

/// A typed persistent GPU buffer of `len` elements of `T`.
pub struct GpuBuffer<T: Pod> {
    pub(crate) raw: Arc<RawBuffer>,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Pod> Clone for GpuBuffer<T> {
    fn clone(&self) -> Self {
        GpuBuffer {
            raw: Arc::clone(&self.raw),
            len: self.len,
            _t: PhantomData,
        }
    }
}

impl<T: Pod> std::fmt::Debug for GpuBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GpuBuffer<{}>('{}', len {})",
            std::any::type_name::<T>(),
            self.raw.name,
            self.len
        )
    }
}

impl Context {
    /// Allocates a persistent buffer of `len` elements (at least one element is allocated).
    pub fn create_buffer<T: Pod>(
        &self,
        name: &str,
        len: usize,
        usage: BufferUsage,
    ) -> VkResult<GpuBuffer<T>> {
        let s = &self.shared;
        let elem = std::mem::size_of::<T>().max(1) as u64;
        let bytes = (len.max(1) as u64)
            .checked_mul(elem)
            .ok_or(VkError::BufferTooLarge {
                name: name.into(),
                bytes: u64::MAX,
                max: s.caps.max_storage_buffer_range,
            })?;
        // Round up to 16 bytes so vec4 kernels may read the tail safely.
        let bytes = bytes.div_ceil(16) * 16;
        if usage.contains(BufferUsage::STORAGE) && bytes > s.caps.max_storage_buffer_range {
            return Err(VkError::BufferTooLarge {
                name: name.into(),
                bytes,
                max: s.caps.max_storage_buffer_range,
            });
        }
        let mut vk_usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
        if usage.intersects(BufferUsage::STORAGE) || usage.is_empty() {
            vk_usage |= vk::BufferUsageFlags::STORAGE_BUFFER;
        }
        if usage.contains(BufferUsage::INDIRECT) {
            vk_usage |=
                vk::BufferUsageFlags::INDIRECT_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER;
        }
        if usage.contains(BufferUsage::CONDITION) {
            vk_usage |= vk::BufferUsageFlags::CONDITIONAL_RENDERING_EXT;
        }
        if usage.contains(BufferUsage::TEXEL) {
            vk_usage |= vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER;
        }
        let location = if usage.contains(BufferUsage::HOST_READ) {
            MemoryLocation::GpuToCpu
        } else if usage.contains(BufferUsage::HOST_WRITE) {
            MemoryLocation::CpuToGpu
        } else {
            MemoryLocation::GpuOnly
        };
        // SAFETY: valid create info; the buffer is destroyed on failure or in RawBuffer::drop.
        unsafe {
            let handle = s
                .device
                .create_buffer(
                    &vk::BufferCreateInfo::default()
                        .size(bytes)
                        .usage(vk_usage)
                        .sharing_mode(vk::SharingMode::EXCLUSIVE),
                    None,
                )
                .vk("vkCreateBuffer")?;
            let requirements = s.device.get_buffer_memory_requirements(handle);
            let alloc = s.lock_allocator().allocate(&AllocationCreateDesc {
                name,
                requirements,
                location,
                linear: true,
                allocation_scheme: AllocationScheme::GpuAllocatorManaged,
            });
            let alloc = match alloc {
                Ok(a) => a,
                Err(e) => {
                    s.device.destroy_buffer(handle, None);
                    return Err(VkError::Allocation {
                        name: name.into(),
                        message: e.to_string(),
                    });
                }
            };
            if let Err(e) = s
                .device
                .bind_buffer_memory(handle, alloc.memory(), alloc.offset())
            {
                s.device.destroy_buffer(handle, None);
                let _ = s.lock_allocator().free(alloc);
                return Err(VkError::Call {
                    call: "vkBindBufferMemory",
                    result: e,
                });
            }
            let mapped = alloc.mapped_ptr().map(|p| p.cast::<u8>());
            s.device_bytes
                .fetch_add(alloc.size(), std::sync::atomic::Ordering::Relaxed);
            self.set_name(handle, name);
            Ok(GpuBuffer {
                raw: Arc::new(RawBuffer {
                    shared: Arc::clone(s),
                    id: s.new_resource_id(),
                    handle,
                    size: bytes,
                    name: name.to_string(),
                    usage,
                    allocation: Mutex::new(Some(alloc)),
                    mapped,
                }),
                len,
                _t: PhantomData,
            })
        }
    }

    /// Allocates a buffer and uploads `data` into it.
    pub fn upload_buffer<T: Pod>(
        &self,
        name: &str,
        data: &[T],
        usage: BufferUsage,
    ) -> VkResult<GpuBuffer<T>> {
        let b = self.create_buffer(name, data.len(), usage)?;
        b.write(data)?;
        Ok(b)
    }
}

impl<T: Pod> GpuBuffer<T> {
    /// Wraps a host-owned buffer. Supple never destroys it and holds no allocation for it.
    ///
    /// # Safety
    /// `handle` is a buffer of `ctx`'s device with at least `len * size_of::<T>()` bytes, usage
    /// STORAGE_BUFFER | TRANSFER_SRC | TRANSFER_DST, bound to memory, and outlives every Supple
    /// object (graph) that uses it.
    pub unsafe fn from_raw(
        ctx: &Context,
        handle: vk::Buffer,
        len: usize,
        name: &str,
    ) -> GpuBuffer<T> {
        GpuBuffer {
            raw: Arc::new(RawBuffer {
                shared: Arc::clone(&ctx.shared),
                id: ctx.shared.new_resource_id(),
                handle,
                size: (len * std::mem::size_of::<T>()) as u64,
                name: name.to_string(),
                usage: BufferUsage::STORAGE,
                allocation: Mutex::new(None),
                mapped: None,
            }),
            len,
            _t: PhantomData,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes of the `len` elements.
    pub fn byte_len(&self) -> u64 {
        (self.len * std::mem::size_of::<T>()) as u64
    }

    /// The raw Vulkan handle (for hosts reading Supple's buffers directly).
    pub fn raw_handle(&self) -> vk::Buffer {
        self.raw.handle
    }

    /// The context the buffer was created on.
    pub fn context(&self) -> Context {
        Context {
            shared: Arc::clone(&self.raw.shared),
        }
    }

    /// The buffer's debug name.
    pub fn name(&self) -> &str {
        &self.raw.name
    }

    /// Unique id of the underlying buffer (graphs key their dependency analysis on it).
    pub fn id(&self) -> u64 {
        self.raw.id
    }

    fn direct_map(&self) -> Option<std::ptr::NonNull<u8>> {
        let host_ring = self
            .raw
            .usage
            .intersects(BufferUsage::HOST_READ | BufferUsage::HOST_WRITE);
        if host_ring || !self.raw.shared.options.force_staging {
            self.raw.mapped
        } else {
            None
        }
    }

    /// Writes `data` (exactly `len` elements) into the buffer, mapped or through staging.
    /// The GPU must not be using the buffer (wait on its last ticket first).
    pub fn write(&self, data: &[T]) -> VkResult<()> {
        self.write_at(0, data)
    }

    /// Writes `data` starting at element `first`.
    pub fn write_at(&self, first: usize, data: &[T]) -> VkResult<()> {
        if first + data.len() > self.len {
            return Err(VkError::SizeMismatch {
                name: self.raw.name.clone(),
                expected: self.len,
                got: first + data.len(),
            });
        }
        if data.is_empty() {
            return Ok(());
        }
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let offset = (first * std::mem::size_of::<T>()) as u64;
        if let Some(p) = self.direct_map() {
            // SAFETY: range checked above; mapping is persistent and coherent (gpu-allocator picks
            // HOST_COHERENT memory for mapped locations).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    p.as_ptr().add(offset as usize),
                    bytes.len(),
                )
            };
            return Ok(());
        }
        let ctx = Context {
            shared: Arc::clone(&self.raw.shared),
        };
        let staging: GpuBuffer<u8> =
            ctx.create_buffer("staging-upload", bytes.len(), BufferUsage::HOST_WRITE)?;
        staging.write(bytes)?;
        let (src, dst) = (staging.raw.handle, self.raw.handle);
        ctx.one_shot("staging upload", |d, cmd| {
            let region = [vk::BufferCopy {
                src_offset: 0,
                dst_offset: offset,
                size: bytes.len() as u64,
            }];
            // SAFETY: both buffers are alive until one_shot returns (it waits).
            unsafe { d.cmd_copy_buffer(cmd, src, dst, &region) };
        })
    }

    /// Reads the whole buffer back to the host.
    pub fn read(&self) -> VkResult<Vec<T>> {
        let mut v = vec![T::zeroed(); self.len];
        self.read_into(&mut v)?;
        Ok(v)
    }

    /// Reads `out.len()` elements from the start of the buffer into `out`.
    pub fn read_into(&self, out: &mut [T]) -> VkResult<()> {
        if out.len() > self.len {
            return Err(VkError::SizeMismatch {
                name: self.raw.name.clone(),
                expected: self.len,
                got: out.len(),
            });
        }
        if out.is_empty() {
            return Ok(());
        }
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
        if let Some(p) = self.direct_map() {
            // SAFETY: range checked; the GPU has finished writing (caller waited on its ticket).
            unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), bytes.as_mut_ptr(), bytes.len()) };
            return Ok(());
        }
        let ctx = Context {
            shared: Arc::clone(&self.raw.shared),
        };
        let staging: GpuBuffer<u8> =
            ctx.create_buffer("staging-readback", bytes.len(), BufferUsage::HOST_READ)?;
        let (src, dst, n) = (self.raw.handle, staging.raw.handle, bytes.len() as u64);
        ctx.one_shot("staging readback", |d, cmd| {
            let region = [vk::BufferCopy {
                src_offset: 0,
                dst_offset: 0,
                size: n,
            }];
            let barrier = [vk::MemoryBarrier2::default()
                .src_stage_mask(vk::PipelineStageFlags2::ALL_TRANSFER)
                .src_access_mask(vk::AccessFlags2::TRANSFER_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags2::HOST)
                .dst_access_mask(vk::AccessFlags2::HOST_READ)];
            // SAFETY: both buffers are alive until one_shot returns (it waits).
            unsafe {
                d.cmd_copy_buffer(cmd, src, dst, &region);
                d.cmd_pipeline_barrier2(
                    cmd,
                    &vk::DependencyInfo::default().memory_barriers(&barrier),
                );
            }
        })?;
        staging.read_into(bytes)
    }

    /// The mapped contents of a HOST_READ/HOST_WRITE buffer (readback and parameter rings).
    /// Returns `None` for device-local buffers. The GPU must not be writing the buffer.
    pub fn mapped(&self) -> Option<&[T]> {
        let host_ring = self
            .raw
            .usage
            .intersects(BufferUsage::HOST_READ | BufferUsage::HOST_WRITE);
        let p = self.raw.mapped.filter(|_| host_ring)?;
        // SAFETY: the mapping covers `len` elements, is aligned (allocations are ≥16-byte
        // aligned) and persists while `self` lives.
        Some(unsafe { std::slice::from_raw_parts(p.as_ptr() as *const T, self.len) })
    }
}

/// A double-buffered readback: a graph copies into slot `i` while the host reads slot `i - 1`,
/// so the host never stalls the device. Compile one graph per slot.
pub struct ReadbackRing<T: Pod> {
    slots: Vec<GpuBuffer<T>>,
}

impl<T: Pod> ReadbackRing<T> {
    /// Creates `slots` host-visible buffers of `len` elements.
    pub fn new(ctx: &Context, name: &str, len: usize, slots: usize) -> VkResult<Self> {
        let slots = (0..slots.max(1))
            .map(|i| ctx.create_buffer(&format!("{name}[{i}]"), len, BufferUsage::HOST_READ))
            .collect::<VkResult<_>>()?;
        Ok(ReadbackRing { slots })
    }

    /// The buffer of slot `i % slots` (a copy destination in a graph).
    pub fn slot(&self, i: usize) -> &GpuBuffer<T> {
        &self.slots[i % self.slots.len()]
    }

    /// The host view of slot `i` (valid once the graph that filled it has completed).
    pub fn view(&self, i: usize) -> &[T] {
        self.slot(i).mapped().unwrap_or(&[])
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }
}

/// A ring of host-visible parameter blocks: the host writes slot `frame % slots` for the
/// next step while the device may still read the previous one. Compile one graph per slot.
pub struct ParamRing<T: Pod> {
    slots: Vec<GpuBuffer<T>>,
}

impl<T: Pod> ParamRing<T> {
    /// Creates `slots` host-visible single-element parameter buffers.
    pub fn new(ctx: &Context, name: &str, slots: usize) -> VkResult<Self> {
        let slots = (0..slots.max(1))
            .map(|i| {
                ctx.create_buffer(
                    &format!("{name}[{i}]"),
                    1,
                    BufferUsage::HOST_WRITE | BufferUsage::STORAGE,
                )
            })
            .collect::<VkResult<_>>()?;
        Ok(ParamRing { slots })
    }

    /// The buffer of slot `i % slots`.
    pub fn slot(&self, i: usize) -> &GpuBuffer<T> {
        &self.slots[i % self.slots.len()]
    }

    /// Writes the parameters of slot `i` (no allocation; the slot's last graph must be complete).
    pub fn write(&self, i: usize, value: &T) -> VkResult<()> {
        self.slot(i).write(std::slice::from_ref(value))
    }
}
