//! The low-level Vulkan layer: context (own or host-owned device), capabilities, persistent
//! buffers, kernels and pipelines, command graphs and bounded submission.
//!
//! Everything here is safe to call; the few `unsafe fn`s (wrapping host-owned objects) state
//! their contract in a `# Safety` section.

mod buffer;
mod caps;
mod context;
mod error;
mod gate;
mod graph;
mod kernel;
pub mod trace;

pub use buffer::{BufferUsage, GpuBuffer, ParamRing, ReadbackRing};
pub use caps::Capabilities;
pub use context::{
    device_requirements, list_devices, Context, ContextOptions, DeviceCounters, DeviceRequirements,
    HostVulkan, Ownership, Severity, Ticket, ValidationMessage, WorkgroupOverrides,
};
pub use error::{VkError, VkResult};
pub use gate::GatedGraph;
pub use graph::{
    Access, BarrierInfo, BufferSlice, CompileOptions, CompiledGraph, Dispatch, Graph, GraphProfile,
    Groups, Node, NodeKind, NodeTiming, Step, TexelFormat,
};
pub use kernel::{ids, KernelId, KernelSource, WorkgroupOverrideUse, KERNELS, PUSH_CONSTANT_BYTES};
pub use trace::{GraphRun, HostSpan, NodeSpan, Trace};

/// Re-export of the `ash` crate Supple is built against (hosts use the same version).
pub use ash;
