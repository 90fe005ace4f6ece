//! ecnlab: a packet-level simulator of ECN marking and queue management in
//! multi-queue data-center switches.
//!
//! One experiment is one [`Config`]; [`run`] builds the network, runs the
//! event loop to the configured duration and returns a columnar [`Report`].
//! A run is a pure function of its config (and the seed inside it).

pub mod config;
pub mod ecmp;
pub mod engine;
pub mod host;
pub mod packet;
pub mod prefetch;
pub mod presets;
pub mod report;
pub mod rng;
pub mod stats;
pub mod switch;
pub mod topology;
pub mod units;
pub mod workload;
pub mod world;

pub use config::{Config, ConfigError};
pub use report::{Column, Report, Table};
pub use world::World;

/// Why a run produced no report.
#[derive(Debug)]
pub enum RunError {
    Config(ConfigError),
    /// The progress callback asked to stop.
    Interrupted,
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Config(e) => write!(f, "{e}"),
            RunError::Interrupted => f.write_str("run interrupted"),
        }
    }
}

/// Run one experiment to completion.
pub fn run(cfg: &Config, progress: &mut dyn FnMut(f64, f64) -> bool) -> Result<Report, RunError> {
    let mut w = World::new(cfg).map_err(RunError::Config)?;
    w.run(progress).map_err(|_| RunError::Interrupted)?;
    Ok(w.report())
}

/// The switches each flow's data and ACKs cross under per-flow ECMP, by
/// flow id (empty lists under per-packet ECMP), without running.
pub fn flow_paths(cfg: &Config) -> Result<Vec<world::FlowPath>, ConfigError> {
    Ok(World::new(cfg)?.flow_paths())
}

/// Run a config given as JSON text (the Python layer's entry point).
pub fn run_json(json: &str, progress: &mut dyn FnMut(f64, f64) -> bool) -> Result<Report, RunError> {
    let cfg = Config::from_json(json).map_err(RunError::Config)?;
    run(&cfg, progress)
}
