//! Python values ↔ JSON (scene tables, statistics) and NumPy arrays ↔ Rust vectors, with the
//! shape and dtype checks that name the argument.

use numpy::{PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::Value;

/// A Python value (dict, list, tuple, bool, int, float, str, None, or anything with
/// `tolist()` such as NumPy arrays and scalars) as JSON; `what` names it in errors.
pub fn to_json(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<Value> {
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if obj.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        let i: i64 = obj
            .extract()
            .map_err(|_| PyValueError::new_err(format!("{what}: integer out of range")))?;
        return Ok(Value::from(i));
    }
    if obj.is_instance_of::<PyFloat>() {
        let f: f64 = obj.extract()?;
        return serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err(format!("{what}: {f} is not finite")));
    }
    if obj.is_instance_of::<PyString>() {
        return Ok(Value::String(obj.extract()?));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = serde_json::Map::new();
        for (k, v) in d.iter() {
            let key: String = k
                .extract()
                .map_err(|_| PyValueError::new_err(format!("{what}: keys must be strings")))?;
            let value = to_json(&format!("{what}.{key}"), &v)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for (i, item) in obj.try_iter()?.enumerate() {
            out.push(to_json(&format!("{what}[{i}]"), &item?)?);
        }
        return Ok(Value::Array(out));
    }
    if obj.hasattr("tolist")? {
        return to_json(what, &obj.call_method0("tolist")?);
    }
    Err(PyValueError::new_err(format!(
        "{what}: cannot use a {} here (expected a number, string, list or dict)",
        obj.get_type().name()?
    )))
}

/// JSON as a Python value (through the `json` module).
pub fn from_json<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(v)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// A serde value of type `T` from the Python value `obj` (a dict in the scene file's layout);
/// errors name `what`.
pub fn from_py<T: serde::de::DeserializeOwned>(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<T> {
    let v = to_json(what, obj)?;
    serde_json::from_value(v).map_err(|e| PyValueError::new_err(format!("{what}: {e}")))
}

/// `obj` as a NumPy array of shape `(N, k)` (any memory order): its dtype kind must be in
/// `kinds` (`"f"`, `"i"`, `"u"`); errors name `what` and the expected shape.
fn array_nk<'py>(
    what: &str,
    obj: &Bound<'py, PyAny>,
    k: usize,
    kinds: &str,
    expect: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let arr = np.call_method1("asarray", (obj,)).map_err(|e| {
        PyValueError::new_err(format!(
            "{what}: expected {expect} of shape (N, {k}), not convertible to an array ({e})"
        ))
    })?;
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    let kind: String = arr.getattr("dtype")?.getattr("kind")?.extract()?;
    let dtype: String = arr.getattr("dtype")?.str()?.extract()?;
    if shape.len() != 2 || shape[1] != k {
        return Err(PyValueError::new_err(format!(
            "{what}: expected {expect} of shape (N, {k}), got shape {}",
            shape_text(&shape)
        )));
    }
    if !kinds.contains(kind.as_str()) || kind.is_empty() {
        return Err(PyValueError::new_err(format!(
            "{what}: expected {expect} of shape (N, {k}), got dtype {dtype}"
        )));
    }
    Ok(arr)
}

/// Points `(N, 3)` of any real dtype and memory order as float64 rows; non-finite values are
/// left for the mesh checks to report.
pub fn points(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<[f64; 3]>> {
    let arr = array_nk(what, obj, 3, "fiu", "a float array")?;
    let arr = arr.call_method1("astype", ("float64",))?;
    let a: PyReadonlyArray2<'_, f64> = arr.extract()?;
    Ok(a.as_array()
        .rows()
        .into_iter()
        .map(|r| [r[0], r[1], r[2]])
        .collect())
}

/// Vertex indices `(M, K)` of any integer dtype and memory order, each in `0..2³²`.
pub fn indices<const K: usize>(what: &str, obj: &Bound<'_, PyAny>) -> PyResult<Vec<[u32; K]>> {
    let arr = array_nk(what, obj, K, "iu", "an integer array")?;
    let shape: Vec<usize> = arr.getattr("shape")?.extract()?;
    if shape[0] == 0 {
        return Ok(Vec::new());
    }
    // uint64 beyond int64 would wrap: compare in the array's own dtype first.
    let max: i128 = arr.call_method0("max")?.call_method0("item")?.extract()?;
    if max > u32::MAX as i128 {
        return Err(PyValueError::new_err(format!(
            "{what}: index {max} is out of range (vertex indices fit in 32 bits)"
        )));
    }
    let arr = arr.call_method1("astype", ("int64",))?;
    let a: PyReadonlyArray2<'_, i64> = arr.extract()?;
    let view = a.as_array();
    let mut out = Vec::with_capacity(view.nrows());
    for (i, row) in view.rows().into_iter().enumerate() {
        let mut e = [0u32; K];
        for (c, &v) in row.iter().enumerate() {
            if v < 0 {
                return Err(PyValueError::new_err(format!(
                    "{what}: row {i} holds the negative index {v} (indices are 0-based vertex \
                     numbers)"
                )));
            }
            e[c] = v as u32;
        }
        out.push(e);
    }
    Ok(out)
}

/// `(N, 3)` float64 rows as a new NumPy array.
pub fn to_array<'py>(
    py: Python<'py>,
    rows: &[[f64; 3]],
) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    numpy::PyArray1::from_vec(py, flat).reshape([rows.len(), 3])
}

/// `(M, K)` uint32 rows as a new NumPy array.
pub fn to_index_array<'py, const K: usize>(
    py: Python<'py>,
    rows: &[[u32; K]],
) -> PyResult<Bound<'py, numpy::PyArray2<u32>>> {
    let flat: Vec<u32> = rows.iter().flatten().copied().collect();
    numpy::PyArray1::from_vec(py, flat).reshape([rows.len(), K])
}

/// Checks `out` is an `(n, 3)` array; used before writing positions into it.
pub fn check_out_shape(out: &Bound<'_, numpy::PyArray2<f64>>, n: usize) -> PyResult<()> {
    let shape = out.shape();
    if shape != [n, 3] {
        return Err(PyValueError::new_err(format!(
            "out: expected a float64 array of shape ({n}, 3), got shape {}",
            shape_text(shape)
        )));
    }
    Ok(())
}

/// A shape as Python writes it: `(8, 2)`, `(24,)`.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
