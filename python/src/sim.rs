//! `Simulation`: a running simulation behind a mutex (stepping releases the GIL, so two
//! simulations step in two Python threads at once), its read-back, exports and the
//! between-frame controls.

use crate::convert::{check_out_shape, from_json, from_py, points, to_array, to_index_array};
use crate::errors;
use crate::scene::{body_from_kwargs, override_text};
use numpy::{PyArray2, PyArrayMethods};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use supple::model::BodyRange;
use supple::scene::{Collider, Force, Scene};
use supple::simulation::BodyRef;

struct Inner {
    /// Declared before the context so it is dropped first.
    sim: supple::Simulation,
    ctx: supple::Context,
}

/// A running simulation (from `SceneBuilder.build()` or `Simulation.from_toml`).
#[pyclass(frozen, module = "supple._supple")]
pub struct Simulation {
    inner: Mutex<Inner>,
}

/// A body argument: its index or its name.
#[derive(FromPyObject)]
enum BodyArg {
    Index(usize),
    Name(String),
}

impl BodyArg {
    fn as_ref(&self) -> BodyRef<'_> {
        match self {
            BodyArg::Index(i) => BodyRef::Index(*i),
            BodyArg::Name(n) => BodyRef::Name(n),
        }
    }
}

fn stats_dict<'py>(
    py: Python<'py>,
    stats: &supple::simulation::FrameStats,
) -> PyResult<Bound<'py, PyAny>> {
    let v = serde_json::to_value(stats)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    from_json(py, &v)
}

fn range_tuple(r: &std::ops::Range<u32>) -> (u32, u32) {
    (r.start, r.end)
}

impl Simulation {
    /// Builds `scene` on a new context (the device `SUPPLE_DEVICE` selects); the GIL is
    /// released while the GPU work runs.
    pub fn create(py: Python<'_>, scene: Scene) -> PyResult<Simulation> {
        let built = py.detach(move || -> Result<Inner, PyErrBuild> {
            let ctx =
                supple::Context::new(supple::ContextOptions::from_env()).map_err(PyErrBuild::Vk)?;
            let sim = supple::SimulationBuilder::from_scene(scene)
                .build(&ctx)
                .map_err(PyErrBuild::Sim)?;
            Ok(Inner { sim, ctx })
        });
        let inner = built.map_err(|e| match e {
            PyErrBuild::Vk(v) => errors::vk(v),
            PyErrBuild::Sim(s) => errors::sim(s),
        })?;
        Ok(Simulation {
            inner: Mutex::new(inner),
        })
    }

    fn lock(&self) -> PyResult<MutexGuard<'_, Inner>> {
        self.inner.lock().map_err(|_| errors::poisoned())
    }
}

/// A build failure carried out of the GIL-free section (PyErr is built after it).
enum PyErrBuild {
    Vk(supple::VkError),
    Sim(supple::SimError),
}

#[pymethods]
impl Simulation {
    /// Loads a scene file (with `--set`-style overrides: `{"simulation.substeps": 4}`) and
    /// builds it.
    #[staticmethod]
    #[pyo3(signature = (path, set=None))]
    fn from_toml(
        py: Python<'_>,
        path: PathBuf,
        set: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Simulation> {
        // An unreadable file is an OSError (FileNotFoundError, PermissionError…).
        std::fs::metadata(&path).map_err(PyErr::from)?;
        let mut overrides = Vec::new();
        if let Some(d) = set {
            for (k, v) in d.iter() {
                let key: String = k
                    .extract()
                    .map_err(|_| PyValueError::new_err("set: keys must be strings"))?;
                overrides.push(override_text(&key, &v)?);
            }
        }
        let scene = Scene::load(&path, &overrides).map_err(errors::scene)?;
        Simulation::create(py, scene)
    }

    /// Advances one frame (the scene's substeps) without holding the GIL; returns the frame's
    /// statistics (the row report.json would hold) as a dict.
    fn step<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stats = py.detach(|| -> PyResult<_> {
            let mut g = self.lock()?;
            Ok(g.sim.step_frame())
        })?;
        stats_dict(py, &stats.map_err(errors::sim)?)
    }

    /// Steps whole frames for at most about `seconds` of wall time (at least one frame for a
    /// positive budget); returns the list of their statistics.
    fn step_for<'py>(&self, py: Python<'py>, seconds: f64) -> PyResult<Bound<'py, PyList>> {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return Err(PyValueError::new_err(format!(
                "seconds: expected a finite time ≥ 0, got {seconds}"
            )));
        }
        let report = py.detach(|| -> PyResult<_> {
            let mut g = self.lock()?;
            Ok(g.sim.step_for(Duration::from_secs_f64(seconds)))
        })?;
        let report = report.map_err(errors::sim)?;
        let out = PyList::empty(py);
        for s in &report.stats {
            out.append(stats_dict(py, s)?)?;
        }
        Ok(out)
    }

    /// Positions of every model vertex (m) as a new `(N, 3)` float64 array, or written into
    /// `out` (a writable float64 array of that shape), which is returned.
    #[pyo3(signature = (out=None))]
    fn positions<'py>(
        &self,
        py: Python<'py>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let x = py.detach(|| -> PyResult<_> { Ok(self.lock()?.sim.positions()) })?;
        let x = x.map_err(errors::sim)?;
        match out {
            None => Ok(to_array(py, &x)?.into_any()),
            Some(o) => {
                let arr = o.cast::<PyArray2<f64>>().map_err(|_| {
                    PyValueError::new_err(format!(
                        "out: expected a float64 array of shape ({}, 3)",
                        x.len()
                    ))
                })?;
                check_out_shape(arr, x.len())?;
                let mut rw = arr
                    .try_readwrite()
                    .map_err(|e| PyValueError::new_err(format!("out: not writable ({e})")))?;
                let mut view = rw.as_array_mut();
                for (mut row, p) in view.rows_mut().into_iter().zip(&x) {
                    row[0] = p[0];
                    row[1] = p[1];
                    row[2] = p[2];
                }
                Ok(o.clone())
            }
        }
    }

    /// Velocities of every model vertex (m/s) as a new `(N, 3)` float64 array.
    fn velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let v = py.detach(|| -> PyResult<_> { Ok(self.lock()?.sim.velocities()) })?;
        to_array(py, &v.map_err(errors::sim)?)
    }

    /// Rest positions of every model vertex (m, after each body's transform).
    fn rest_positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        to_array(py, &self.lock()?.sim.model().positions)
    }

    /// Every body's boundary (solids) or cloth triangles as a `(F, 3)` uint32 array of model
    /// vertex indices (rows of `positions()`), outward.
    fn surface_triangles<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        let g = self.lock()?;
        let sv = g.sim.surface_vertices();
        let tris: Vec<[u32; 3]> = g
            .sim
            .surface()
            .iter()
            .map(|t| t.map(|v| sv[v as usize]))
            .collect();
        to_index_array(py, &tris)
    }

    /// All tetrahedra as a `(M, 4)` uint32 array of model vertex indices.
    fn tets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u32>>> {
        to_index_array(py, &self.lock()?.sim.model().tets)
    }

    /// One dict per body: `name`, `model` and the `(start, stop)` ranges of its `vertices`,
    /// `tets` and `triangles` in the model's arrays.
    fn bodies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let g = self.lock()?;
        let out = PyList::empty(py);
        for b in &g.sim.model().bodies {
            let BodyRange {
                name,
                vertices,
                tets,
                triangles,
                model,
                ..
            } = b;
            let d = PyDict::new(py);
            d.set_item("name", name)?;
            d.set_item(
                "model",
                serde_json::to_value(model)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
            )?;
            d.set_item("vertices", range_tuple(vertices))?;
            d.set_item("tets", range_tuple(tets))?;
            d.set_item("triangles", range_tuple(triangles))?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self) -> PyResult<f64> {
        Ok(self.lock()?.sim.time())
    }

    /// Frames stepped so far.
    #[getter]
    fn frames(&self) -> PyResult<u64> {
        Ok(self.lock()?.sim.frames())
    }

    /// Smallest `det F` over all tets at the current positions (1 at rest, ≤ 0: inverted).
    fn min_volume_ratio(&self, py: Python<'_>) -> PyResult<f64> {
        py.detach(|| -> PyResult<f64> {
            let g = self.lock()?;
            let x = g.sim.positions().map_err(errors::sim)?;
            Ok(g.sim.min_volume_ratio(&x))
        })
    }

    /// The scene as simulated now, as TOML text.
    fn scene_toml(&self) -> PyResult<String> {
        toml::to_string(self.lock()?.sim.scene())
            .map_err(|e| PyValueError::new_err(format!("scene: cannot write as TOML: {e}")))
    }

    /// Writes the current state through the engine's exporters: the surface (and rod
    /// polylines) as `.obj`, `.ply` or `.usda`; the tet meshes as `.vtu` or `.msh`.
    fn write(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        py.detach(|| -> PyResult<()> {
            let g = self.lock()?;
            let x = g.sim.positions().map_err(errors::sim)?;
            match ext.as_str() {
                "vtu" | "msh" => {
                    let tets = g.sim.model().tets.clone();
                    if tets.is_empty() {
                        return Err(PyValueError::new_err(format!(
                            "{}: the simulation has no tetrahedra (write .obj, .ply or .usda)",
                            path.display()
                        )));
                    }
                    let mesh = supple_mesh::TetMesh { positions: x, tets };
                    supple_mesh::export::write_tet_mesh(&path, &mesh).map_err(errors::io)
                }
                _ => {
                    let mesh = supple_mesh::TriMesh {
                        positions: g
                            .sim
                            .surface_vertices()
                            .iter()
                            .map(|&v| x[v as usize])
                            .collect(),
                        triangles: g.sim.surface().to_vec(),
                    };
                    supple_mesh::export::write_surface_with_curves(&path, &mesh, g.sim.curves())
                        .map_err(errors::io)
                }
            }
        })
    }

    /// Model vertex indices of `body`'s pinned vertices (the order of `set_pin_targets`).
    fn pinned_vertices<'py>(
        &self,
        py: Python<'py>,
        body: BodyArg,
    ) -> PyResult<Bound<'py, numpy::PyArray1<u32>>> {
        let g = self.lock()?;
        let v = g.sim.pinned_vertices(body.as_ref()).map_err(errors::sim)?;
        Ok(numpy::PyArray1::from_slice(py, v))
    }

    /// Current targets (m) of `body`'s pinned vertices, `(K, 3)`.
    fn pin_targets<'py>(
        &self,
        py: Python<'py>,
        body: BodyArg,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let g = self.lock()?;
        to_array(py, g.sim.pin_targets(body.as_ref()).map_err(errors::sim)?)
    }

    /// Moves `body`'s pinned vertices to `targets` (`(K, 3)`, m, in `pinned_vertices` order).
    fn set_pin_targets(&self, body: BodyArg, targets: &Bound<'_, PyAny>) -> PyResult<()> {
        let t = points("targets", targets)?;
        let mut g = self.lock()?;
        g.sim
            .set_pin_targets(body.as_ref(), &t)
            .map_err(errors::sim)
    }

    /// Replaces `body`'s loads by `loads` (a list of the scene file's `force` tables: `total`
    /// (N) or `traction` (Pa) over a vertex set); `[]` removes every load.
    fn set_loads(&self, body: BodyArg, loads: &Bound<'_, PyAny>) -> PyResult<()> {
        let loads: Vec<Force> = from_py("loads", loads)?;
        let mut g = self.lock()?;
        g.sim.set_loads(body.as_ref(), &loads).map_err(errors::sim)
    }

    /// Replaces `body`'s loads by one force per vertex (`(n, 3)`, N, body vertex order).
    fn set_external_forces(&self, body: BodyArg, forces: &Bound<'_, PyAny>) -> PyResult<()> {
        let f = points("forces", forces)?;
        let mut g = self.lock()?;
        g.sim
            .set_external_forces(body.as_ref(), &f)
            .map_err(errors::sim)
    }

    /// Number of analytic colliders.
    fn num_colliders(&self) -> PyResult<usize> {
        Ok(self.lock()?.sim.num_colliders())
    }

    /// Collider `index` now (its pose, friction and velocity) in the scene file's layout.
    fn collider<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyAny>> {
        let c = self
            .lock()?
            .sim
            .collider(index)
            .map_err(|e| PyIndexError::new_err(e.to_string()))?;
        let v = serde_json::to_value(&c)
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        from_json(py, &v)
    }

    /// Replaces collider `index` (a dict in the scene file's layout; its shape is its pose now).
    fn set_collider(&self, index: usize, collider: &Bound<'_, PyAny>) -> PyResult<()> {
        let c: Collider = from_py("collider", collider)?;
        let mut g = self.lock()?;
        g.sim.set_collider(index, c).map_err(errors::sim)
    }

    /// Gives collider `index` a velocity (m/s) from its current pose on.
    fn set_collider_velocity(&self, index: usize, velocity: [f64; 3]) -> PyResult<()> {
        let mut g = self.lock()?;
        g.sim
            .set_collider_velocity(index, velocity)
            .map_err(errors::sim)
    }

    /// Adds a body (same arguments as `SceneBuilder.body`) after the others; returns its index.
    #[pyo3(signature = (name, **kwargs))]
    fn add_body(
        &self,
        py: Python<'_>,
        name: &str,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<usize> {
        let kwargs = kwargs.cloned().unwrap_or_else(|| PyDict::new(py));
        let body = body_from_kwargs(name, &kwargs)?;
        py.detach(|| -> PyResult<_> { Ok(self.lock()?.sim.add_body(body)) })?
            .map_err(errors::sim)
    }

    /// Removes a body (by index or name); returns its name. The later bodies' indices drop.
    fn remove_body(&self, py: Python<'_>, body: BodyArg) -> PyResult<String> {
        py.detach(|| -> PyResult<_> {
            let mut g = self.lock()?;
            Ok(g.sim.remove_body(body.as_ref()).map(|b| b.name))
        })?
        .map_err(errors::sim)
    }

    /// The Khronos validation layer's errors so far (with `SUPPLE_VALIDATION=1`).
    fn validation_errors(&self) -> PyResult<Vec<String>> {
        let g = self.lock()?;
        Ok(g.ctx
            .validation_errors()
            .into_iter()
            .map(|m| format!("{m:?}"))
            .collect())
    }

    /// The device's name.
    #[getter]
    fn device(&self) -> PyResult<String> {
        Ok(self.lock()?.ctx.caps().name.clone())
    }
}
