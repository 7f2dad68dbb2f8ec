//! [`SimError`]: why a simulation could not be built or stepped. One enum for the simulation
//! layer (steppers, contact methods, the simulation facade); the Vulkan layer has
//! [`crate::vk::VkError`], the scene [`crate::scene::SceneError`], the mesh tools
//! [`crate::mesh::MeshError`].

use crate::scene::SceneError;
use crate::vk::VkError;

/// Why a simulation could not be built or stepped.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The scene is invalid.
    #[error("{0}")]
    Scene(#[from] SceneError),
    /// A Vulkan failure.
    #[error("{0}")]
    Vk(#[from] VkError),
    /// A scene feature (or combination) this version cannot simulate.
    #[error("{field}: {message}")]
    Unsupported {
        /// The scene field.
        field: String,
        /// What is not supported.
        message: String,
    },
    /// An argument of a call between steps is invalid (index out of range, wrong length,
    /// non-finite value).
    #[error("{argument}: {message}")]
    InvalidArgument {
        /// The argument (e.g. `targets[3]`, `collider`).
        argument: String,
        /// What is wrong with it.
        message: String,
    },
    /// A solver or contact method failed while stepping (a non-finite system, an overflowed
    /// traversal, a collision solve that could not run).
    #[error("{component}: {message}")]
    Solver {
        /// The stepper or contact method (e.g. `newton`, `shortest_path`).
        component: String,
        /// What went wrong.
        message: String,
    },
}

impl SimError {
    /// [`SimError::Unsupported`] naming scene field `field`.
    pub fn unsupported(field: impl Into<String>, message: impl Into<String>) -> SimError {
        SimError::Unsupported {
            field: field.into(),
            message: message.into(),
        }
    }

    /// [`SimError::InvalidArgument`] naming `argument`.
    pub fn invalid(argument: impl Into<String>, message: impl Into<String>) -> SimError {
        SimError::InvalidArgument {
            argument: argument.into(),
            message: message.into(),
        }
    }

    /// [`SimError::Solver`] of `component`.
    pub fn solver(component: impl Into<String>, message: impl Into<String>) -> SimError {
        SimError::Solver {
            component: component.into(),
            message: message.into(),
        }
    }
}
