//! `SceneBuilder`: a scene assembled from Python (bodies from NumPy arrays, generators or
//! files; materials, colliders and every scene setting), checked before any GPU work.

use crate::convert::{from_py, indices, points, to_json};
use crate::errors;
use crate::sim::Simulation;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Mutex;
use supple::scene::{Body, Collider, MeshSource, Scene};

/// The body described by the keyword arguments of `SceneBuilder.body` / `Simulation.add_body`:
/// the geometry from `vertices` + `tets`/`triangles`/`edges` (NumPy arrays), a `generator`
/// (+ `size`, `cells`) or a `file`; the rest in the scene file's layout (`material` a dict,
/// `translation`, `rotation_deg`, `scale`, `velocity`, `fixed`, `motion`, `force`,
/// `material_region`). Arrays are checked here (shapes, dtypes, indices, tets), before any
/// GPU work.
pub fn body_from_kwargs(name: &str, kwargs: &Bound<'_, PyDict>) -> PyResult<Body> {
    let take = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        let v = kwargs.get_item(key)?;
        if v.is_some() {
            kwargs.del_item(key)?;
        }
        Ok(v.filter(|v| !v.is_none()))
    };
    let vertices = take("vertices")?;
    let tets = take("tets")?;
    let triangles = take("triangles")?;
    let edges = take("edges")?;
    let generator = take("generator")?;
    let size = take("size")?;
    let cells = take("cells")?;
    let file = take("file")?;
    let mesh = match (&vertices, &generator, &file) {
        (Some(v), None, None) => {
            let vertices = points("vertices", v)?;
            let tets = tets.map(|t| indices::<4>("tets", &t)).transpose()?;
            let triangles = triangles
                .map(|t| indices::<3>("triangles", &t))
                .transpose()?;
            let edges = edges.map(|t| indices::<2>("edges", &t)).transpose()?;
            let mesh = MeshSource::arrays(
                vertices,
                tets.unwrap_or_default(),
                triangles.unwrap_or_default(),
                edges.unwrap_or_default(),
            );
            mesh.check_arrays(name).map_err(errors::mesh)?;
            mesh
        }
        (None, Some(g), None) => {
            if tets.is_some() || triangles.is_some() || edges.is_some() {
                return Err(PyValueError::new_err(
                    "tets, triangles and edges go with vertices, not with a generator",
                ));
            }
            let table = PyDict::new(g.py());
            table.set_item("generator", g)?;
            match size {
                Some(s) => table.set_item("size", s)?,
                None => return Err(PyValueError::new_err("size: a generator needs a size (m)")),
            }
            if let Some(c) = cells {
                table.set_item("cells", c)?;
            }
            from_py::<MeshSource>("generator", table.as_any())?
        }
        (None, None, Some(f)) => {
            let path: std::path::PathBuf = f
                .extract()
                .map_err(|_| PyValueError::new_err("file: expected a path (str or os.PathLike)"))?;
            MeshSource::file(path)
        }
        _ => {
            return Err(PyValueError::new_err(
                "give exactly one of vertices (with tets, triangles or edges), generator (with \
                 size and cells) or file",
            ))
        }
    };
    // The rest in the scene file's layout; the mesh is set after parsing.
    let table = to_json("body", kwargs.as_any())?;
    let mut table = match table {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    table.insert("name".into(), serde_json::Value::String(name.into()));
    table.insert("mesh".into(), serde_json::json!({ "file": "" }));
    if !table.contains_key("material") {
        return Err(PyValueError::new_err(format!(
            "body '{name}': material is required (e.g. supple.material(\"stable-neo-hookean\", \
             youngs_modulus=2e5, poisson_ratio=0.3, density=1000))"
        )));
    }
    let mut body: Body = serde_json::from_value(serde_json::Value::Object(table))
        .map_err(|e| PyValueError::new_err(format!("body '{name}': {e}")))?;
    body.mesh = mesh;
    Ok(body)
}

/// A TOML override `key=value` from a Python value.
pub fn override_text(key: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let json = to_json(key, value)?;
    let v = toml::Value::try_from(json)
        .map_err(|e| PyValueError::new_err(format!("{key}: cannot be a TOML value: {e}")))?;
    Ok(format!("{key}={v}"))
}

/// `scene` with the `--set`-style `overrides` applied (same rules and messages as the CLI):
/// the bodies are kept aside while the settings are re-read.
pub fn apply_overrides(scene: &Scene, overrides: &[String]) -> PyResult<Scene> {
    let mut settings = scene.clone();
    let bodies = std::mem::take(&mut settings.bodies);
    let text = toml::to_string(&settings)
        .map_err(|e| PyValueError::new_err(format!("scene: cannot write as TOML: {e}")))?;
    let mut out = Scene::parse(&text, "SceneBuilder", overrides).map_err(errors::scene)?;
    out.bodies = bodies;
    Ok(out)
}

/// Builds a scene from code: settings, bodies and colliders; `build()` makes the simulation.
#[pyclass(frozen, module = "supple._supple")]
pub struct SceneBuilder {
    scene: Mutex<Scene>,
}

#[pymethods]
impl SceneBuilder {
    #[new]
    #[pyo3(signature = (*, frame_rate=None, substeps=None, gravity=None, solver=None, settings=None))]
    fn new(
        frame_rate: Option<f64>,
        substeps: Option<u32>,
        gravity: Option<[f64; 3]>,
        solver: Option<&str>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<SceneBuilder> {
        let mut scene = supple::SimulationBuilder::new().scene().clone();
        let mut overrides = Vec::new();
        let py_settings: Vec<(String, Bound<'_, PyAny>)> = match settings {
            Some(d) => d
                .iter()
                .map(|(k, v)| Ok((k.extract::<String>()?, v)))
                .collect::<PyResult<_>>()?,
            None => Vec::new(),
        };
        for (k, v) in &py_settings {
            overrides.push(override_text(k, v)?);
        }
        if let Some(hz) = frame_rate {
            overrides.push(format!("simulation.frame_rate={}", toml::Value::Float(hz)));
        }
        if let Some(n) = substeps {
            overrides.push(format!("simulation.substeps={n}"));
        }
        if let Some(g) = gravity {
            let g = toml::Value::try_from(g.to_vec())
                .map_err(|e| PyValueError::new_err(format!("gravity: {e}")))?;
            overrides.push(format!("simulation.gravity={g}"));
        }
        if let Some(s) = solver {
            overrides.push(format!("simulation.solver={}", toml::Value::from(s)));
        }
        if !overrides.is_empty() {
            scene = apply_overrides(&scene, &overrides)?;
        }
        Ok(SceneBuilder {
            scene: Mutex::new(scene),
        })
    }

    /// Sets one scene setting by its dotted TOML path (as `supple run --set`).
    fn set<'py>(
        slf: Bound<'py, Self>,
        key: &str,
        value: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let text = override_text(key, value)?;
        {
            let me = slf.get();
            let mut scene = me.scene.lock().map_err(|_| errors::poisoned())?;
            *scene = apply_overrides(&scene, &[text])?;
        }
        Ok(slf)
    }

    /// Adds a deformable body (see `supple.SceneBuilder.body`).
    #[pyo3(signature = (name, **kwargs))]
    fn body<'py>(
        slf: Bound<'py, Self>,
        name: &str,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, Self>> {
        let kwargs = kwargs.cloned().unwrap_or_else(|| PyDict::new(slf.py()));
        let body = body_from_kwargs(name, &kwargs)?;
        slf.get()
            .scene
            .lock()
            .map_err(|_| errors::poisoned())?
            .bodies
            .push(body);
        Ok(slf)
    }

    /// Adds an analytic collider given in the scene file's layout.
    fn collider<'py>(
        slf: Bound<'py, Self>,
        collider: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, Self>> {
        let c: Collider = from_py("collider", collider)?;
        slf.get()
            .scene
            .lock()
            .map_err(|_| errors::poisoned())?
            .colliders
            .push(c);
        Ok(slf)
    }

    /// Adds a static ground plane `normal · x ≥ offset` (m) with a friction coefficient.
    #[pyo3(signature = (normal=(0.0, 0.0, 1.0), offset=0.0, friction=0.0))]
    fn ground_plane<'py>(
        slf: Bound<'py, Self>,
        normal: (f64, f64, f64),
        offset: f64,
        friction: f64,
    ) -> PyResult<Bound<'py, Self>> {
        let c = Collider {
            shape: supple::scene::ColliderShape::Plane {
                normal: [normal.0, normal.1, normal.2],
                offset,
            },
            friction,
            velocity: [0.0; 3],
            angular_velocity: [0.0; 3],
            offset: 0.0,
        };
        slf.get()
            .scene
            .lock()
            .map_err(|_| errors::poisoned())?
            .colliders
            .push(c);
        Ok(slf)
    }

    /// The scene as TOML text (array bodies as inline tables).
    fn to_toml(&self) -> PyResult<String> {
        let scene = self.scene.lock().map_err(|_| errors::poisoned())?;
        toml::to_string(&*scene)
            .map_err(|e| PyValueError::new_err(format!("scene: cannot write as TOML: {e}")))
    }

    /// Checks the scene with the scene file's rules and builds the simulation on the device
    /// `SUPPLE_DEVICE` selects.
    fn build(&self, py: Python<'_>) -> PyResult<Simulation> {
        let scene = self.scene.lock().map_err(|_| errors::poisoned())?.clone();
        scene.validate("SceneBuilder").map_err(errors::scene)?;
        // The model's own checks (arrays the material needs, fixed sets…) before the device.
        supple::model::SimModel::from_scene(&scene).map_err(errors::scene)?;
        Simulation::create(py, scene)
    }
}
