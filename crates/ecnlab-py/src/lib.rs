//! Thin PyO3 layer: converts a JSON config in and columnar results out.
//! No simulation logic lives here.

use ecnlab::{Column, RunError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

pyo3::create_exception!(_engine, ConfigError, PyValueError, "A bad experiment config.");

fn column<'py>(py: Python<'py>, c: &Column) -> PyResult<Bound<'py, PyAny>> {
    fn raw<'py, T: Copy>(
        py: Python<'py>,
        dtype: &str,
        v: &[T],
        to_le: impl Fn(T) -> Vec<u8>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut bytes = Vec::with_capacity(std::mem::size_of_val(v));
        for &x in v {
            bytes.extend_from_slice(&to_le(x));
        }
        Ok(PyTuple::new(py, [dtype.into_pyobject(py)?.into_any(), PyBytes::new(py, &bytes).into_any()])?.into_any())
    }
    match c {
        Column::U32(v) => raw(py, "u32", v, |x| x.to_le_bytes().to_vec()),
        Column::U64(v) => raw(py, "u64", v, |x| x.to_le_bytes().to_vec()),
        Column::I64(v) => raw(py, "i64", v, |x| x.to_le_bytes().to_vec()),
        Column::F64(v) => raw(py, "f64", v, |x| x.to_le_bytes().to_vec()),
        Column::Str(v) => Ok(PyList::new(py, v)?.into_any()),
    }
}

/// Run one experiment from its JSON config. `progress(sim_s, end_s)` is
/// called a few times a second; an exception in it aborts the run.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None))]
fn run(py: Python<'_>, config_json: &str, progress: Option<PyObject>) -> PyResult<PyObject> {
    let cfg = ecnlab::Config::from_json(config_json).map_err(|e| ConfigError::new_err(e.0))?;
    let mut callback_err: Option<PyErr> = None;
    let result = {
        let mut cb = |now: f64, end: f64| -> bool {
            Python::with_gil(|py| {
                if let Err(e) = py.check_signals() {
                    callback_err = Some(e);
                    return false;
                }
                if let Some(p) = &progress {
                    if let Err(e) = p.call1(py, (now, end)) {
                        callback_err = Some(e);
                        return false;
                    }
                }
                true
            })
        };
        py.allow_threads(|| ecnlab::run(&cfg, &mut cb))
    };
    let report = match result {
        Ok(r) => r,
        Err(RunError::Interrupted) => {
            return Err(
                callback_err.unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("run interrupted"))
            )
        }
        Err(RunError::Config(e)) => return Err(ConfigError::new_err(e.0)),
    };
    let out = PyDict::new(py);
    let json = py.import("json")?;
    let summary = json.call_method1("loads", (serde_json::Value::Object(report.summary).to_string(),))?;
    out.set_item("summary", summary)?;
    let tables = PyDict::new(py);
    for t in &report.tables {
        let cols = PyDict::new(py);
        for (name, c) in &t.columns {
            cols.set_item(*name, column(py, c)?)?;
        }
        tables.set_item(t.name, cols)?;
    }
    out.set_item("tables", tables)?;
    Ok(out.into_any().unbind())
}

/// Check a JSON config without running it.
#[pyfunction]
fn validate(config_json: &str) -> PyResult<()> {
    ecnlab::Config::from_json(config_json).map(|_| ()).map_err(|e| ConfigError::new_err(e.0))
}

/// The switch names each flow's data and ACKs cross (per-flow ECMP), by
/// flow id; empty lists under per-packet ECMP.
#[pyfunction]
fn flow_paths(config_json: &str) -> PyResult<Vec<ecnlab::world::FlowPath>> {
    let cfg = ecnlab::Config::from_json(config_json).map_err(|e| ConfigError::new_err(e.0))?;
    ecnlab::flow_paths(&cfg).map_err(|e| ConfigError::new_err(e.0))
}

/// Draw `n` flow sizes (bytes) from a distribution: a built-in name, "mix",
/// or a CSV path. Returns a raw u64 column.
#[pyfunction]
fn sample_flow_sizes<'py>(py: Python<'py>, distribution: &str, n: usize, seed: u64) -> PyResult<Bound<'py, PyAny>> {
    let d = ecnlab::workload::SizeDist::resolve(distribution).map_err(ConfigError::new_err)?;
    let mut rng = ecnlab::rng::Rng::new(seed);
    let sizes: Vec<u64> = (0..n).map(|_| d.sample(&mut rng)).collect();
    column(py, &Column::U64(sizes))
}

/// Mean (bytes) of a distribution as sampled (linear interpolation).
#[pyfunction]
fn distribution_mean(distribution: &str) -> PyResult<f64> {
    ecnlab::workload::SizeDist::resolve(distribution).map(|d| d.mean()).map_err(ConfigError::new_err)
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(flow_paths, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(sample_flow_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(distribution_mean, m)?)?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    Ok(())
}
