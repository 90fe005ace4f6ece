//! The experiment schema. One `Config` is the single source of truth for a
//! run; its sections are declared table by table (`param::section!`), each
//! key once, with its type, default, range, doc and source. This module
//! knows no scheme: the keys of a discipline, a scheduler, a marking scheme
//! or a congestion control are declared in that scheme's file and checked
//! by the registry (`registry.rs`), which `load.rs` runs to read a file
//! whole. Errors are one line naming the key, the value and what is
//! allowed (`error.rs`).

pub mod apps;
pub mod error;
pub mod graph;
pub mod host;
pub mod param;
pub mod port;
pub mod run;
pub mod topology;
pub mod transport;
pub mod values;
pub mod workload;

pub use apps::{FlowCfg, IncastCfg, PingCfg};
pub use error::{bad, fmt_dur, fmt_t, missing, ConfigError};
pub use host::HostCfg;
pub use param::{Param, Table};
pub use port::PortCfg;
pub use run::{RunCfg, DEFAULT_MAX_OUTPUT};
pub use topology::TopologyCfg;
pub use transport::TransportCfg;
pub use values::{
    Amt, Arrivals, BufAmt, Bytes, CaKind, Connections, Dur, EcmpMode, FctEnd, FlowSize, GapKind, Name, OneOrList,
    Preset, Rate, Senders, ServiceMapping, StageBy, TopologyKind, WorkloadKind,
};
pub use workload::WorkloadCfg;

use crate::units::Time;
use serde_json::{Map, Value};

/// `Config::end` of a run without a duration: far beyond any real run, yet
/// with room to add delays to it without overflow.
pub const NO_END: Time = u64::MAX / 4;

/// An experiment.
#[derive(Clone, Debug)]
pub struct Config {
    pub run: RunCfg,
    pub topology: TopologyCfg,
    /// Every switch port (and the defaults of `[fabric]` and `[nic]`).
    pub switch: PortCfg,
    pub transport: TransportCfg,
    /// Batching at the hosts: segmentation offload, receive coalescing.
    pub host: HostCfg,
    pub flows: Vec<FlowCfg>,
    pub ping: Vec<PingCfg>,
    pub incast: Vec<IncastCfg>,
    /// Background traffic drawn from flow-size distributions.
    pub workload: Option<WorkloadCfg>,
    /// `[fabric]` as given: what switch-to-switch ports set differently.
    pub fabric: Option<Map<String, Value>>,
    /// `[nic]` as given: host NICs' egress queues as `[switch]` with these
    /// overrides; absent, a NIC is one FIFO that never drops (TCP small
    /// queues bound it).
    pub nic: Option<Map<String, Value>>,
    /// The fabric's ports and the NICs, `[fabric]` and `[nic]` merged over
    /// `[switch]` (the registry fills these when the config is read).
    pub fabric_port: PortCfg,
    pub nic_port: Option<PortCfg>,
}

/// The sections of an experiment file, in the order the reference lists
/// them; the last three are lists of tables.
pub const SECTIONS: [&str; 11] =
    ["run", "topology", "switch", "transport", "host", "workload", "fabric", "nic", "flows", "ping", "incast"];

impl Config {
    /// Read the tables of an experiment (a JSON object), each key by its
    /// declaration. Scheme names and scheme keys are not checked here (see
    /// `load.rs`); `[fabric]` and `[nic]` are kept as given.
    pub fn parse(v: &Value) -> Result<Config, ConfigError> {
        if let Some(e) = section_shape(v) {
            return Err(e);
        }
        let Some(top) = v.as_object() else {
            return Err(ConfigError("an experiment is a table of sections ([run], [topology], ...)".into()));
        };
        let table = |key: &str| -> Option<Map<String, Value>> { top.get(key).and_then(|x| x.as_object()).cloned() };
        let given = |key: &str| top.get(key).is_some_and(|x| !x.is_null());
        if let Some(k) = top.keys().find(|k| !SECTIONS.contains(&k.as_str())) {
            // A misspelt section ([swtich]) is named with the nearest one.
            let e = error::unknown_key("", k, &SECTIONS);
            return Err(ConfigError(format!("{}{}", e.0, error::did_you_mean(k, &SECTIONS))));
        }
        for (key, what) in [
            ("run", "its length and seed, e.g. duration = \"10ms\""),
            ("topology", "the network, e.g. kind = \"star\", hosts, link_rate and link_delay, or a preset"),
        ] {
            if !given(key) {
                return Err(ConfigError(format!("[{key}]: missing; every experiment has one ({what})")));
            }
        }
        let section = |key: &str| Table::new(key, table(key).unwrap_or_default());
        let entries = |key: &str| -> Vec<Table> {
            match top.get(key) {
                Some(Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| Table::new(format!("{key}[{i}]"), x.as_object().cloned().unwrap_or_default()))
                    .collect(),
                _ => Vec::new(),
            }
        };
        let list_shape = |key: &str| -> Result<(), ConfigError> {
            match top.get(key) {
                None | Some(Value::Null) | Some(Value::Array(_)) => Ok(()),
                Some(other) => {
                    Err(ConfigError(format!("{key}: {}; expected a list of [[{key}]] entries", what(other))))
                }
            }
        };
        for key in ["flows", "ping", "incast"] {
            list_shape(key)?;
        }
        let switch = PortCfg::read(&section("switch"), false)?;
        Ok(Config {
            run: RunCfg::read(&section("run"), false)?,
            topology: TopologyCfg::read(&section("topology"), false)?,
            fabric_port: switch.clone(),
            switch,
            transport: TransportCfg::read(&section("transport"), false)?,
            host: HostCfg::read(&section("host"), false)?,
            flows: entries("flows").iter().map(|t| FlowCfg::read(t, false)).collect::<Result<_, _>>()?,
            ping: entries("ping").iter().map(|t| PingCfg::read(t, false)).collect::<Result<_, _>>()?,
            incast: entries("incast").iter().map(|t| IncastCfg::read(t, false)).collect::<Result<_, _>>()?,
            workload: if given("workload") { Some(WorkloadCfg::read(&section("workload"), false)?) } else { None },
            fabric: given("fabric").then(|| table("fabric").unwrap_or_default()),
            nic: given("nic").then(|| table("nic").unwrap_or_default()),
            nic_port: None,
        })
    }

    pub fn hosts(&self) -> u32 {
        self.topology.host_count()
    }

    /// When the run stops at the latest: run.duration, or never (the last
    /// flow's finish ends it).
    pub fn end(&self) -> Time {
        self.run.duration.map(|d| d.0).unwrap_or(NO_END)
    }

    /// What keeps the run going until its duration, if anything: long-lived
    /// flows, ping streams and incast groups never finish by themselves.
    pub fn open_ended_traffic(&self) -> Option<String> {
        if let Some(i) = self.flows.iter().position(|f| f.size == FlowSize::Infinite) {
            return Some(format!("flows[{i}] is long-lived (size = \"infinite\")"));
        }
        if !self.ping.is_empty() {
            return Some("[[ping]] streams run until the end".into());
        }
        if !self.incast.is_empty() {
            return Some("[[incast]] groups run until the end".into());
        }
        None
    }

    /// Incast senders as host ids.
    pub fn incast_senders(&self, c: &IncastCfg) -> Vec<u32> {
        match &c.senders {
            Senders::List(l) => l.clone(),
            Senders::Count(n) => (0..self.hosts()).filter(|&h| h != c.receiver).take(*n as usize).collect(),
        }
    }

    /// The checks of the sections that name no scheme, in the order a run
    /// needs them: [run] and [topology] (the ports come next, from the
    /// registry), then `rest` checks [transport], [host], the applications
    /// and [workload].
    pub fn validate_run_and_topology(&self) -> Result<(), ConfigError> {
        self.run.validate(self.open_ended_traffic(), self.workload.is_none() && self.flows.is_empty())?;
        self.topology.validate()
    }

    /// See `validate_run_and_topology`.
    pub fn validate_rest(&self) -> Result<(), ConfigError> {
        self.transport.validate()?;
        self.host.validate(self.transport.packet_bytes())?;
        let rate = |h: u32| self.topology.host_rate(h);
        let ctx = apps::AppContext { hosts: self.hosts(), queues: self.switch.queues, host_rate: &rate };
        apps::validate(&self.flows, &self.ping, &self.incast, &ctx)?;
        if let Some(w) = &self.workload {
            w.validate(self.hosts(), self.switch.queues, self.transport.mss)?;
        }
        Ok(())
    }
}

/// A JSON value in words, for messages about a table's shape.
fn what(x: &Value) -> String {
    match x {
        Value::Array(_) => "a list".to_string(),
        Value::String(s) => format!("a string {s:?}"),
        Value::Number(n) => format!("a number ({n})"),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Null => "nothing".to_string(),
        Value::Object(_) => "a table".to_string(),
    }
}

/// A section given as something other than a table (or a list entry that
/// is not a table).
fn section_shape(v: &Value) -> Option<ConfigError> {
    let top = v.as_object()?;
    for key in ["run", "topology", "switch", "transport", "host", "workload", "fabric", "nic"] {
        match top.get(key) {
            Some(Value::Null) if !["run", "topology"].contains(&key) => {}
            Some(x) if !x.is_object() => {
                return Some(ConfigError(format!("{key}: {}; expected a table, [{key}] with its keys", what(x))));
            }
            _ => {}
        }
    }
    for key in ["flows", "ping", "incast"] {
        if let Some(Value::Array(items)) = top.get(key) {
            if let Some((i, x)) = items.iter().enumerate().find(|(_, x)| !x.is_object()) {
                return Some(ConfigError(format!(
                    "{key}[{i}]: {}; expected a table, a [[{key}]] entry with its keys",
                    what(x)
                )));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
