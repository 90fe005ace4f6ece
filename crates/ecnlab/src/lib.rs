//! ecnlab: a packet-level simulator of ECN marking and queue management in
//! multi-queue data-center switches.
//!
//! One experiment is one [`Config`]; [`run_into`] builds the network, runs
//! the event loop to the configured duration and hands its columnar tables
//! to a [`Sink`] as it goes; [`run`] keeps them all in a [`Report`].
//! A run is a pure function of its config (and the seed inside it).
//!
//! The rooms, from what everything uses to what uses everything: each
//! uses only rooms above it in this list (`tests/architecture.rs` holds
//! that no two rooms use each other, directly or round a circle):
//!
//! | room | what it is |
//! |---|---|
//! | `units`, `rng`, `packet`, `prefetch`, `huge_pages` | time and sizes, the seeded RNG, the packet and its arena, memory hints |
//! | `config` | the experiment file's tables and the `section!` declarations every scheme writes |
//! | `traffic` | flow-size CDFs, Poisson arrivals, the ns-2 generators' replay |
//! | `switch` | a port's queue disciplines: classifier, schedulers, markers, whole disciplines, PFC |
//! | `host` | TCP: the sender's core, loss recovery, congestion control, the NIC, the applications' state |
//! | `rdma` | RoCEv2 transports: DCQCN, HPCC, TIMELY, DCTCP over RDMA |
//! | `outputs` | tables, their streaming and report, collectors, packet captures |
//! | `declarations` | the registry of schemes, `ecnlab keys`, reading a file whole, the resource guard, warnings |
//! | `network` | topology builders and links, routes, ECMP, a flow's ideal FCT |
//! | `engine` | the event queue (a timing wheel) |
//! | `world` | one run: the event loop and its handlers, the fabric, hosts, applications, recorder, parallel parts |
//! | `golden`, `testbed` | the golden corpus's fingerprint of a run; the kernel testbed's switch |

pub mod config;
pub mod declarations;
pub mod engine;
pub mod golden;
pub mod host;
pub mod huge_pages;
pub mod network;
pub mod outputs;
pub mod packet;
pub mod prefetch;
pub mod rdma;
pub mod rng;
pub mod switch;
#[cfg(target_os = "linux")]
pub mod testbed;
pub mod traffic;
pub mod units;
pub mod world;

pub use config::{Config, ConfigError};
pub use outputs::output::{Collect, Sink};
pub use outputs::report::{Column, Report, Table};
pub use world::{RunError, Stop, World};

/// The model version: what a run computes. It changes exactly when some
/// run's outputs change (a fix, a new default, a refined model), and never
/// for a refactor, a speed-up or a new option that leaves existing runs
/// alone. The golden corpus (`tests/golden/`) holds it to that: a run
/// whose outputs moved while this number stayed fails `cargo test`. Result
/// stores key their points by it and the resolved config, so a store made
/// before a refactor is still used after it.
pub const MODEL_VERSION: u32 = 6;

/// The oldest model version whose outputs this engine reproduces for every
/// run that [`model_of`] does not name: a result made at it or later is
/// current for such a run. Model 6 (issue 54) moved every run that has two
/// events in one picosecond, which no predicate on a config can rule out:
/// simultaneous events now run in an order defined by the events
/// (`engine.rs`), the same on the sequential and the partitioned engine;
/// lazy departures follow it exactly; a run on a fat-tree or leaf-spine
/// that ends at its last finish runs to the end of that grid window
/// (`world/partition.rs`); per-pair connections are numbered within their
/// pair, sprayed packets draw per switch and serial pauses per flow; the
/// trace, cwnd, rtt and incast tables are written in an order of their
/// values; and the linux profile runs F-RTO.
pub const UNMOVED_SINCE: u32 = 6;

/// The latest model version whose change moved `cfg`'s outputs: what a
/// result store keys its run by, so that a run the last change left alone
/// keeps its stored result (and a figure's record stays current).
/// Model 6 moved every run, so every run is keyed at it; a later bump that
/// moves only some runs names them here (as model 5 named the linux
/// profile's: git history, `moved_by_model_5`).
pub fn model_of(_cfg: &Config) -> u32 {
    UNMOVED_SINCE
}

/// The engine's version for people: the package version and the model
/// version ("0.1.0 (model 3)").
pub fn version() -> String {
    format!("{} (model {MODEL_VERSION})", env!("CARGO_PKG_VERSION"))
}

/// Run one experiment, handing its tables and captures to `sink` as they
/// are produced, and return its summary. A run the progress callback
/// stops still writes what it did up to then and returns its summary,
/// marked `"complete": false` (`ended_by = "interrupted"`); stopped while
/// the network is built (`progress(0, 0)` is asked then too), it returns
/// [`RunError::Interrupted`]. `progress(sim_s, fraction_done)`: see
/// [`World::run`].
pub fn run_into(
    cfg: &Config,
    progress: &mut dyn FnMut(f64, f64) -> bool,
    sink: &mut dyn Sink,
) -> Result<serde_json::Map<String, serde_json::Value>, RunError> {
    let mut summary = if cfg.run.threads > 0 {
        world::parallel::run_into(cfg, progress, sink)?
    } else {
        world::run_into(cfg, progress, sink)?
    };
    // Settings that cannot act where they are (`warnings.rs`); the key is
    // left out when there are none, so a run without any writes the
    // summary it always has.
    let mut warnings = declarations::warnings::of(cfg);
    // The run's own warnings (PFC: lossless drops, a deadlock) after them.
    if let Some(serde_json::Value::Array(run)) = summary.remove("warnings") {
        warnings.extend(run.into_iter().filter_map(|w| w.as_str().map(String::from)));
    }
    if !warnings.is_empty() {
        summary.insert("warnings".into(), serde_json::json!(warnings));
    }
    Ok(summary)
}

/// Run one experiment to completion, keeping every table in memory.
pub fn run(cfg: &Config, progress: &mut dyn FnMut(f64, f64) -> bool) -> Result<Report, RunError> {
    let mut sink = Collect::default();
    let summary = run_into(cfg, progress, &mut sink)?;
    if summary.get("complete") == Some(&serde_json::Value::Bool(false)) {
        return Err(RunError::Interrupted);
    }
    Ok(sink.into_report(summary))
}

/// The switches each flow's data and ACKs cross under per-flow ECMP, by
/// flow id (empty lists under per-packet ECMP), without running.
pub fn flow_paths(cfg: &Config) -> Result<Vec<world::FlowPath>, ConfigError> {
    let mut sink = Collect::default();
    let paths = World::new(cfg, &mut sink)?.flow_paths();
    Ok(paths)
}

/// Each flow's ideal FCT in seconds (`ideal`), by flow id, NaN where a
/// flow has none, without running: the flows table's `ideal_fct`.
pub fn ideal_fcts(cfg: &Config) -> Result<Vec<f64>, ConfigError> {
    let mut sink = Collect::default();
    let ideal = World::new(cfg, &mut sink)?.ideal_fcts();
    Ok(ideal.into_iter().map(|t| t.map_or(f64::NAN, units::secs)).collect())
}

/// Run a config given as JSON text (the Python layer's entry point).
pub fn run_json(json: &str, progress: &mut dyn FnMut(f64, f64) -> bool) -> Result<Report, RunError> {
    let cfg = Config::from_json(json).map_err(RunError::Config)?;
    run(&cfg, progress)
}
