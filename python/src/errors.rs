//! Supple's errors as Python exceptions: bad input → `ValueError` (naming the field or
//! argument), device failures → `supple.VulkanError` (a `RuntimeError`), files → `OSError`,
//! solver failures → `RuntimeError`.

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use supple::scene::SceneError;
use supple::{SimError, VkError};

pyo3::create_exception!(
    supple,
    VulkanError,
    PyRuntimeError,
    "A Vulkan failure: no loader or device, out of device memory, a lost device."
);

/// What to install when there is no Vulkan loader or device.
pub const INSTALL_HINT: &str = "Supple needs a Vulkan 1.3 loader and driver: install your GPU's \
driver, or the CPU driver lavapipe (Debian/Ubuntu: apt install libvulkan1 mesa-vulkan-drivers; \
Fedora: dnf install vulkan-loader mesa-vulkan-drivers); `supple devices` lists what Vulkan sees";

/// A Vulkan error as `VulkanError`, with the install hint when the loader or a device is missing.
pub fn vk(e: VkError) -> PyErr {
    match e {
        VkError::Loader(_) | VkError::NoDevice(_) => {
            VulkanError::new_err(format!("{e}. {INSTALL_HINT}"))
        }
        // What the loader answers when it finds no driver (ICD) at all.
        VkError::Call { ref result, .. }
            if format!("{result:?}") == "ERROR_INCOMPATIBLE_DRIVER" =>
        {
            VulkanError::new_err(format!("{e} (no Vulkan driver found). {INSTALL_HINT}"))
        }
        e => VulkanError::new_err(e.to_string()),
    }
}

/// A scene error (always bad input) as `ValueError`; an unreadable scene file as `OSError`.
pub fn scene(e: SceneError) -> PyErr {
    if e.field.is_none() && e.line.is_none() && e.message.starts_with("cannot read") {
        PyOSError::new_err(e.to_string())
    } else {
        PyValueError::new_err(e.to_string())
    }
}

/// A simulation error mapped by its kind.
pub fn sim(e: SimError) -> PyErr {
    match e {
        SimError::Scene(s) => scene(s),
        SimError::Vk(v) => vk(v),
        e @ (SimError::Unsupported { .. } | SimError::InvalidArgument { .. }) => {
            PyValueError::new_err(e.to_string())
        }
        e @ SimError::Solver { .. } => PyRuntimeError::new_err(e.to_string()),
    }
}

/// A mesh error: files that cannot be read as `OSError`, everything else as `ValueError`.
pub fn mesh(e: supple_mesh::MeshError) -> PyErr {
    match e {
        supple_mesh::MeshError::Io { .. } => PyOSError::new_err(e.to_string()),
        e => PyValueError::new_err(e.to_string()),
    }
}

/// An I/O error writing `path`: a refused extension as `ValueError`, the rest as `OSError`.
pub fn io(e: std::io::Error) -> PyErr {
    if e.kind() == std::io::ErrorKind::InvalidInput {
        PyValueError::new_err(e.to_string())
    } else {
        PyErr::from(e)
    }
}

/// A poisoned lock (a panic while stepping in another thread).
pub fn poisoned() -> PyErr {
    PyRuntimeError::new_err("the simulation is unusable: a call on it panicked in another thread")
}
