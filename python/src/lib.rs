//! `supple._supple`: the native module of the `supple` Python package (pyo3 + rust-numpy,
//! one abi3 wheel for Python ≥ 3.10). The public API is re-exported by `supple/__init__.py`;
//! the type stubs are `src-py/supple/_supple.pyi`.
#![deny(missing_docs)]

mod convert;
mod errors;
mod scene;
mod sim;

use pyo3::prelude::*;
use std::path::PathBuf;

/// The Vulkan devices (a list of dicts: index, name, device_type, api_version, driver and the
/// capabilities `supple devices` prints). With none, warns what to install and returns `[]`;
/// without a Vulkan loader, raises `VulkanError` saying what to install.
#[pyfunction]
fn devices(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    let all = py.detach(supple::vk::list_devices).map_err(errors::vk)?;
    if all.is_empty() {
        let warnings = py.import("warnings")?;
        warnings.call_method1(
            "warn",
            (
                format!("no Vulkan devices found. {}", errors::INSTALL_HINT),
                py.get_type::<pyo3::exceptions::PyRuntimeWarning>(),
            ),
        )?;
    }
    let v = serde_json::to_value(&all)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    convert::from_json(py, &v)
}

/// Runs the `supple` command line `argv` (without the program name) and returns its exit
/// status; the GIL is released meanwhile.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<String>) -> u8 {
    let args: Vec<String> = std::iter::once("supple".to_string()).chain(argv).collect();
    py.detach(move || supple_tools::cli_main(args))
}

/// Writes the self-contained HTML viewer of the run folder `run_dir` (frames/ and
/// report.json, as `supple run --out` writes) to `path`, keeping every `every`-th frame;
/// returns `(frames, bytes)`.
#[pyfunction]
#[pyo3(signature = (run_dir, path, every=1, quantize=false))]
fn write_html_dir(
    py: Python<'_>,
    run_dir: PathBuf,
    path: PathBuf,
    every: usize,
    quantize: bool,
) -> PyResult<(usize, u64)> {
    let written = py.detach(|| {
        supple_tools::write_dir_html(
            &run_dir,
            &path,
            every,
            supple_tools::ViewOptions { quantize },
        )
    });
    match written {
        Ok(w) => Ok((w.frames, w.bytes)),
        Err((2, msg)) => Err(pyo3::exceptions::PyValueError::new_err(msg)),
        Err((_, msg)) => Err(pyo3::exceptions::PyOSError::new_err(msg)),
    }
}

/// The native module.
#[pymodule]
fn _supple(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("VulkanError", m.py().get_type::<errors::VulkanError>())?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(cli_main, m)?)?;
    m.add_function(wrap_pyfunction!(write_html_dir, m)?)?;
    m.add_class::<scene::SceneBuilder>()?;
    m.add_class::<sim::Simulation>()?;
    Ok(())
}
