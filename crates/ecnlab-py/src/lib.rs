//! Thin PyO3 layer: converts a JSON config in, and columnar results and
//! capture bytes out to a Python sink. No simulation logic lives here.

use ecnlab::{Column, RunError, Sink, Table};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

pyo3::create_exception!(_engine, ConfigError, PyValueError, "A bad experiment config.");

/// A numeric column as (dtype code, little-endian bytes), copied once.
fn raw<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    dtype: &str,
    v: &[T],
    le: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyAny>> {
    let bytes = PyBytes::new_with(py, v.len() * N, |buf| {
        for (chunk, &x) in buf.chunks_exact_mut(N).zip(v) {
            chunk.copy_from_slice(&le(x));
        }
        Ok(())
    })?;
    Ok(PyTuple::new(py, [dtype.into_pyobject(py)?.into_any(), bytes.into_any()])?.into_any())
}

fn column<'py>(py: Python<'py>, c: &Column) -> PyResult<Bound<'py, PyAny>> {
    match c {
        Column::U32(v) => raw(py, "u32", v, u32::to_le_bytes),
        Column::U64(v) => raw(py, "u64", v, u64::to_le_bytes),
        Column::I64(v) => raw(py, "i64", v, i64::to_le_bytes),
        Column::F64(v) => raw(py, "f64", v, f64::to_le_bytes),
        Column::Str(v) => Ok(PyList::new(py, v)?.into_any()),
    }
}

fn columns<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let cols = PyDict::new(py);
    for (name, c) in &t.columns {
        cols.set_item(*name, column(py, c)?)?;
    }
    Ok(cols)
}

/// The engine's sink, forwarding to a Python object with `rows(table,
/// columns)` and `capture(port, data)`. Its first exception is kept for
/// the caller to raise.
struct PySink {
    target: PyObject,
    error: Option<PyErr>,
}

impl PySink {
    fn call(&mut self, f: impl FnOnce(Python<'_>, &Bound<'_, PyAny>) -> PyResult<()>) -> Result<(), String> {
        Python::with_gil(|py| f(py, self.target.bind(py))).map_err(|e| {
            let text = e.to_string();
            self.error = Some(e);
            text
        })
    }
}

impl Sink for PySink {
    fn rows(&mut self, batch: Table) -> Result<(), String> {
        self.call(|py, t| t.call_method1("rows", (batch.name, columns(py, &batch)?)).map(|_| ()))
    }

    fn capture(&mut self, port: &str, bytes: &[u8]) -> Result<(), String> {
        self.call(|py, t| t.call_method1("capture", (port, PyBytes::new(py, bytes))).map(|_| ()))
    }
}

/// Run one experiment from its JSON config, handing every table to
/// `sink.rows(name, columns)` in batches as the run produces them (numeric
/// columns as `(dtype, bytes)`, strings as lists) and pcap bytes to
/// `sink.capture(port, data)`. `progress(sim_s, fraction_done)` is called
/// a few times a second; an exception there (Ctrl-C included) stops the
/// run, which then still hands over what it did up to then.
///
/// Returns `{"summary": dict, "config": the resolved config (dict),
/// "stopped_by": exception or None}`; raises `ConfigError`, or the sink's
/// exception.
#[pyfunction]
#[pyo3(signature = (config_json, sink, progress=None))]
fn run(py: Python<'_>, config_json: &str, sink: PyObject, progress: Option<PyObject>) -> PyResult<PyObject> {
    let cfg = ecnlab::Config::from_json(config_json).map_err(|e| ConfigError::new_err(e.0))?;
    let mut stopped_by: Option<PyErr> = None;
    let mut sink = PySink { target: sink, error: None };
    let result = {
        let mut cb = |now: f64, fraction: f64| -> bool {
            Python::with_gil(|py| {
                let outcome = py.check_signals().and_then(|()| match &progress {
                    Some(p) => p.call1(py, (now, fraction)).map(|_| ()),
                    None => Ok(()),
                });
                match outcome {
                    Ok(()) => true,
                    Err(e) => {
                        stopped_by = Some(e);
                        false
                    }
                }
            })
        };
        py.allow_threads(|| ecnlab::run_into(&cfg, &mut cb, &mut sink))
    };
    let summary = match result {
        Ok(s) => s,
        Err(RunError::Config(e)) => return Err(ConfigError::new_err(e.0)),
        Err(RunError::Output(e)) => {
            return Err(sink.error.unwrap_or_else(|| pyo3::exceptions::PyRuntimeError::new_err(e)));
        }
        // Stopped while the network was built: nothing ran.
        Err(RunError::Interrupted) => {
            return Err(stopped_by
                .unwrap_or_else(|| pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted while building")));
        }
    };
    let out = PyDict::new(py);
    let json = py.import("json")?;
    out.set_item("summary", json.call_method1("loads", (serde_json::Value::Object(summary).to_string(),))?)?;
    out.set_item("config", json.call_method1("loads", (cfg.resolved_json().to_string(),))?)?;
    out.set_item("stopped_by", stopped_by.map(|e| e.into_value(py)))?;
    Ok(out.into_any().unbind())
}

/// The resolved config (presets expanded, defaults filled, canonical
/// spellings) as JSON text with sorted keys.
#[pyfunction]
fn resolve(config_json: &str) -> PyResult<String> {
    let cfg = ecnlab::Config::from_json(config_json).map_err(|e| ConfigError::new_err(e.0))?;
    Ok(cfg.resolved_json().to_string())
}

/// Check a JSON config without running it (the resource guard included).
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

/// Each flow's ideal FCT in seconds, by flow id (NaN where a flow has
/// none): the flows table's `ideal_fct`, without running.
#[pyfunction]
fn ideal_fcts(config_json: &str) -> PyResult<Vec<f64>> {
    let cfg = ecnlab::Config::from_json(config_json).map_err(|e| ConfigError::new_err(e.0))?;
    ecnlab::ideal_fcts(&cfg).map_err(|e| ConfigError::new_err(e.0))
}

/// Draw `n` flow sizes (bytes) from a distribution: a built-in name, "mix",
/// or a CSV path. Returns a raw u64 column.
#[pyfunction]
fn sample_flow_sizes<'py>(py: Python<'py>, distribution: &str, n: usize, seed: u64) -> PyResult<Bound<'py, PyAny>> {
    let d = ecnlab::traffic::dist::SizeDist::resolve(distribution).map_err(ConfigError::new_err)?;
    let mut rng = ecnlab::rng::Rng::new(seed);
    let sizes: Vec<u64> = (0..n).map(|_| d.sample(&mut rng)).collect();
    column(py, &Column::U64(sizes))
}

/// Mean (bytes) of a distribution as sampled (linear interpolation).
#[pyfunction]
fn distribution_mean(distribution: &str) -> PyResult<f64> {
    ecnlab::traffic::dist::SizeDist::resolve(distribution).map(|d| d.mean()).map_err(ConfigError::new_err)
}

/// Every output table's columns with no rows, by table name (the same raw
/// columns `run` hands its sink): their names and types, for writers
/// outside the engine.
#[pyfunction]
fn table_schemas(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    for t in ecnlab::outputs::tables::empty_tables() {
        out.set_item(t.name, columns(py, &t)?)?;
    }
    Ok(out)
}

#[pyfunction]
fn version() -> String {
    ecnlab::version()
}

/// Every key the engine accepts, by section and scheme (`ecnlab keys`), as
/// JSON.
#[pyfunction]
fn keys_catalog() -> String {
    ecnlab::declarations::keys::catalog().to_string()
}

/// The experiment-file reference in Markdown (`docs/reference.md`).
#[pyfunction]
fn reference_markdown() -> String {
    ecnlab::declarations::keys::reference_markdown()
}

/// The engine's model version: what a run computes.
#[pyfunction]
fn model_version() -> u32 {
    ecnlab::MODEL_VERSION
}

/// The oldest model version whose results stay current for runs the later
/// changes left alone (`ecnlab::UNMOVED_SINCE`).
#[pyfunction]
fn unmoved_since() -> u32 {
    ecnlab::UNMOVED_SINCE
}

/// What result stores key a point by, with its resolved config: the latest
/// model version whose change moved that config's outputs.
#[pyfunction]
fn model_of(config_json: &str) -> PyResult<u32> {
    let cfg = ecnlab::Config::from_json(config_json).map_err(|e| ConfigError::new_err(e.0))?;
    Ok(ecnlab::model_of(&cfg))
}

/// The testbed's switch process (`python -m ecnlab.switch SPEC.json`, which
/// `ecnlab testbed` starts in the switch's namespace): the same code as the
/// `ecnlab-switch` binary, so every install of the package has it. Runs
/// until SIGINT or SIGTERM, which it takes over from Python, without the
/// GIL; returns the exit status.
#[pyfunction]
fn switch_main(py: Python<'_>, prog: &str, args: Vec<String>) -> i32 {
    py.allow_threads(|| ecnlab::testbed::process::switch_main(prog, &args))
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(resolve, m)?)?;
    m.add_function(wrap_pyfunction!(flow_paths, m)?)?;
    m.add_function(wrap_pyfunction!(ideal_fcts, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(model_version, m)?)?;
    m.add_function(wrap_pyfunction!(unmoved_since, m)?)?;
    m.add_function(wrap_pyfunction!(model_of, m)?)?;
    m.add_function(wrap_pyfunction!(keys_catalog, m)?)?;
    m.add_function(wrap_pyfunction!(reference_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(table_schemas, m)?)?;
    m.add_function(wrap_pyfunction!(sample_flow_sizes, m)?)?;
    m.add_function(wrap_pyfunction!(distribution_mean, m)?)?;
    m.add_function(wrap_pyfunction!(switch_main, m)?)?;
    m.add("ConfigError", m.py().get_type::<ConfigError>())?;
    Ok(())
}
