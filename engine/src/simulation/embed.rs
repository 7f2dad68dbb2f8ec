//! Embedding a [`Simulation`] in a host renderer: where its positions live on the GPU, what the
//! host waits on before reading them, which queue-family ownership transfers are needed, and
//! recording a step into a host command buffer.
//!
//! # Reading positions without a copy through the CPU
//!
//! [`Simulation::positions_view`] gives the raw `VkBuffer`, byte offset, stride and count of
//! the current positions (one `vec4` of `f32` per model vertex: x, y, z in metres, w unused).
//! The buffer is a storage buffer (`STORAGE_BUFFER | TRANSFER_SRC | TRANSFER_DST`): a renderer
//! reads it in its vertex shader (vertex pulling from an SSBO) or copies it into its own vertex
//! buffer with `vkCmdCopyBuffer`. The buffer stays the same until the topology changes
//! ([`Simulation::add_body`], [`Simulation::remove_body`] rebuild the solver: ask again then).
//!
//! # Synchronisation
//!
//! Every Supple submission signals the context's timeline semaphore.
//! [`Simulation::render_sync`] returns the semaphore and the value of the last submission:
//! the host adds it as a wait (`VkSemaphoreSubmitInfo`, [`RenderSync::wait_info`]) to the
//! submission that reads the positions; a semaphore wait makes Supple's writes available and
//! visible to the waiting stages, so no further barrier is needed on the same queue family.
//! [`Simulation::step_frame`] returns only after its work completed, so between steps the wait
//! is already satisfied; it still orders the host's reads after Supple's writes formally and
//! is what a host must do if it steps and renders on different threads. The host must not
//! *write* the buffer, and must not read it while a step is running.
//!
//! # Queue families
//!
//! Supple's buffers are created with `VK_SHARING_MODE_EXCLUSIVE` and are owned by
//! [`Context::queue_family_index`]. A host reading them on a queue of another family needs a
//! queue-family ownership transfer each way: [`Simulation::queue_family_transfers`] lists them
//! (empty when the families are the same) with the release and acquire barriers to record.
//!
//! # Recording the step into a host command buffer
//!
//! [`Simulation::record_step_into`] records one frame into a host command buffer (solvers whose
//! frame is one fixed command sequence only: the symplectic Euler integrator; Newton decides
//! its iteration count on the host between GPU runs and returns [`SimError::Unsupported`]).

use super::{SimError, Simulation};
use crate::vk::{ash::vk, Context, GpuBuffer};

/// Where a host finds one of a simulation's GPU arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawBufferView {
    /// The Vulkan buffer (owned by Supple; valid while the simulation lives).
    pub buffer: vk::Buffer,
    /// Byte offset of the first element.
    pub offset: u64,
    /// Bytes from one element to the next.
    pub stride: u64,
    /// Number of elements.
    pub count: usize,
    /// Bytes from `offset` to the end of the last element (`stride * count`).
    pub size: u64,
    /// Format of one element, as a vertex attribute would declare it.
    pub format: vk::Format,
}

/// What a host waits on before reading a simulation's buffers on its own queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderSync {
    /// Supple's timeline semaphore (owned by Supple).
    pub semaphore: vk::Semaphore,
    /// The value it reaches when the last Supple submission has completed.
    pub value: u64,
    /// The queue family that owns Supple's buffers.
    pub queue_family: u32,
}

impl RenderSync {
    /// A wait on the timeline for `submit2` (`VkSubmitInfo2::wait_semaphore_infos`), blocking
    /// the host's `stage` (e.g. `VERTEX_SHADER`, `COPY`) until Supple's writes are done.
    pub fn wait_info(&self, stage: vk::PipelineStageFlags2) -> vk::SemaphoreSubmitInfo<'static> {
        vk::SemaphoreSubmitInfo::default()
            .semaphore(self.semaphore)
            .value(self.value)
            .stage_mask(stage)
    }
}

/// A queue-family ownership transfer of one buffer range (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueFamilyTransfer {
    /// The buffer.
    pub buffer: vk::Buffer,
    /// First byte of the range.
    pub offset: u64,
    /// Bytes in the range.
    pub size: u64,
    /// Family giving the buffer up.
    pub src_queue_family: u32,
    /// Family receiving it.
    pub dst_queue_family: u32,
}

impl QueueFamilyTransfer {
    /// The release half, recorded on a queue of `src_queue_family` after the last write there
    /// (compute-shader writes for Supple's buffers).
    pub fn release_barrier(&self) -> vk::BufferMemoryBarrier2<'static> {
        vk::BufferMemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            .src_access_mask(vk::AccessFlags2::MEMORY_WRITE)
            .src_queue_family_index(self.src_queue_family)
            .dst_queue_family_index(self.dst_queue_family)
            .buffer(self.buffer)
            .offset(self.offset)
            .size(self.size)
    }

    /// The acquire half, recorded on a queue of `dst_queue_family` before the first use there
    /// by `stage` with `access`; the submission holding it must wait on the one holding the
    /// release (e.g. on [`RenderSync`]).
    pub fn acquire_barrier(
        &self,
        stage: vk::PipelineStageFlags2,
        access: vk::AccessFlags2,
    ) -> vk::BufferMemoryBarrier2<'static> {
        vk::BufferMemoryBarrier2::default()
            .dst_stage_mask(stage)
            .dst_access_mask(access)
            .src_queue_family_index(self.src_queue_family)
            .dst_queue_family_index(self.dst_queue_family)
            .buffer(self.buffer)
            .offset(self.offset)
            .size(self.size)
    }

    /// The transfer back (from the host's family to Supple's), needed before the next step.
    pub fn reversed(&self) -> QueueFamilyTransfer {
        QueueFamilyTransfer {
            src_queue_family: self.dst_queue_family,
            dst_queue_family: self.src_queue_family,
            ..*self
        }
    }
}

impl Simulation {
    pub(super) fn positions_buffer(&self) -> &GpuBuffer<[f32; 4]> {
        &self.state.x
    }

    /// The context the simulation runs on.
    pub fn context(&self) -> Context {
        self.positions_buffer().context()
    }

    /// The current positions on the GPU: one `[f32; 4]` (x, y, z in m, w unused) per model
    /// vertex, in model order, format `R32G32B32A32_SFLOAT`. Read it after waiting on
    /// [`Simulation::render_sync`]; never write it.
    pub fn positions_view(&self) -> RawBufferView {
        let b = self.positions_buffer();
        let stride = std::mem::size_of::<[f32; 4]>() as u64;
        RawBufferView {
            buffer: b.raw_handle(),
            offset: 0,
            stride,
            count: b.len(),
            size: stride * b.len() as u64,
            format: vk::Format::R32G32B32A32_SFLOAT,
        }
    }

    /// The timeline value the host must wait on before reading [`Simulation::positions_view`]
    /// (the last Supple submission so far).
    pub fn render_sync(&self) -> RenderSync {
        let ctx = self.context();
        RenderSync {
            semaphore: ctx.timeline_semaphore(),
            value: ctx.last_ticket().value,
            queue_family: ctx.queue_family_index(),
        }
    }

    /// The ownership transfers a host reading the positions on a queue of `host_queue_family`
    /// must perform, from Supple's family to the host's (apply [`QueueFamilyTransfer::reversed`]
    /// before the next step). Empty when the host uses Supple's queue family.
    pub fn queue_family_transfers(&self, host_queue_family: u32) -> Vec<QueueFamilyTransfer> {
        let own = self.context().queue_family_index();
        if host_queue_family == own {
            return Vec::new();
        }
        let v = self.positions_view();
        vec![QueueFamilyTransfer {
            buffer: v.buffer,
            offset: v.offset,
            size: v.size,
            src_queue_family: own,
            dst_queue_family: host_queue_family,
        }]
    }

    /// Records one frame (all its substeps) into the host's command buffer `cmd` instead of
    /// submitting it; ends with a barrier making the writes visible to later commands and to
    /// the host. Only the symplectic Euler solver has a frame that is one fixed command
    /// sequence; Newton and XPBD return [`SimError::Unsupported`], and so does a simulation with
    /// a contact method (its handlers act from the host between phases).
    ///
    /// # Safety
    /// - `cmd` belongs to the simulation's device, was allocated from a pool of
    ///   [`Context::queue_family_index`], and is recording (outside a render pass).
    /// - The host submits it to a queue of that family, does not submit it while a Supple call
    ///   is running or another submission of it is pending, and waits for it to complete
    ///   before the next Supple call on this simulation (or dropping it).
    pub unsafe fn record_step_into(&self, cmd: vk::CommandBuffer) -> Result<(), SimError> {
        // Contact handlers act between the stepper's phases from the host (PROX's contact
        // generation, for one): a fixed command sequence cannot hold them.
        if !self.contacts.is_empty() {
            return Err(SimError::unsupported(
                "collision.method",
                "recording a frame into the host's command buffer needs a step without a \
                 contact method (collision.method = \"none\"); use step_frame",
            ));
        }
        self.stepper.record_into(cmd)
    }
}
