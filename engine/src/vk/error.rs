//! The Vulkan layer's error type: every failing `vk::Result` maps to one variant.

use ash::vk;

/// Errors of the Vulkan layer.
#[derive(Debug, thiserror::Error)]
pub enum VkError {
    /// The Vulkan loader (libvulkan) could not be loaded.
    #[error("cannot load the Vulkan loader (install libvulkan1 and a driver such as mesa-vulkan-drivers): {0}")]
    Loader(String),
    /// A Vulkan call failed.
    #[error("{call} failed: {result:?}")]
    Call {
        /// The Vulkan function that failed.
        call: &'static str,
        /// Its result code.
        result: vk::Result,
    },
    /// The device was lost; names the last command-graph node known to have completed.
    #[error("device lost during {what}{}", last_node_hint(.last_node))]
    DeviceLost {
        /// What was running (graph name).
        what: String,
        /// Last graph node whose crash marker was written, when markers are enabled.
        last_node: Option<String>,
    },
    /// A bounded wait ran out: a kernel hung or ran far longer than allowed.
    #[error("GPU work '{what}' did not finish within {timeout_ms} ms{}", last_node_hint(.last_node))]
    Timeout {
        /// What was waited on.
        what: String,
        /// The bound that was exceeded.
        timeout_ms: u64,
        /// Last graph node whose crash marker was written, when markers are enabled.
        last_node: Option<String>,
    },
    /// No usable Vulkan device was found, or `SUPPLE_DEVICE` matched none.
    #[error("no suitable Vulkan device: {0}")]
    NoDevice(String),
    /// The device lacks something Supple needs.
    #[error("device '{device}' lacks required {what}")]
    Unsupported {
        /// Device name.
        device: String,
        /// The missing extension or feature.
        what: String,
    },
    /// A buffer larger than the device allows for a storage binding.
    #[error(
        "buffer '{name}' needs {bytes} bytes but the device's maxStorageBufferRange is {max} bytes"
    )]
    BufferTooLarge {
        /// Buffer name.
        name: String,
        /// Requested size.
        bytes: u64,
        /// Device limit.
        max: u64,
    },
    /// Memory allocation failed.
    #[error("allocating '{name}': {message}")]
    Allocation {
        /// What was being allocated.
        name: String,
        /// The allocator's message.
        message: String,
    },
    /// Host data does not fit the buffer (wrong length).
    #[error("size mismatch for '{name}': buffer holds {expected} elements, got {got}")]
    SizeMismatch {
        /// Buffer name.
        name: String,
        /// Buffer length.
        expected: usize,
        /// Provided length.
        got: usize,
    },
    /// A kernel failed to build at run time (runtime recompilation) or to create a pipeline.
    #[error("kernel '{kernel}': {message}")]
    Kernel {
        /// Kernel name.
        kernel: String,
        /// What went wrong.
        message: String,
    },
    /// An option (environment variable or [`super::ContextOptions`] field) is invalid.
    #[error("{option}: {message}")]
    Options {
        /// The option, e.g. `SUPPLE_WORKGROUP`.
        option: String,
        /// What is wrong with it.
        message: String,
    },
    /// A graph was built wrongly (e.g. wrong binding count, too many push-constant bytes).
    #[error("graph '{graph}': {message}")]
    Graph {
        /// Graph name.
        graph: String,
        /// What went wrong.
        message: String,
    },
}

fn last_node_hint(n: &Option<String>) -> String {
    match n {
        Some(n) => format!(" (last completed graph node: {n})"),
        None => String::new(),
    }
}

/// Result alias of the Vulkan layer.
pub type VkResult<T> = Result<T, VkError>;

/// Extension to turn `ash` results into [`VkError`] naming the call.
pub(crate) trait VkCheck<T> {
    /// Maps the error to `VkError::Call { call, .. }`.
    fn vk(self, call: &'static str) -> VkResult<T>;
}

impl<T> VkCheck<T> for Result<T, vk::Result> {
    fn vk(self, call: &'static str) -> VkResult<T> {
        self.map_err(|result| match result {
            vk::Result::ERROR_DEVICE_LOST => VkError::DeviceLost {
                what: call.to_string(),
                last_node: None,
            },
            result => VkError::Call { call, result },
        })
    }
}
