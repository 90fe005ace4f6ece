//! Reading an experiment whole: its tables (`config`), its schemes and
//! their keys (`registry`), presets and profiles filled in, every check in
//! the order a run needs them, and the resource guard (`budget`). Also the
//! resolved form: the config as the engine runs it, every default written,
//! each value in one canonical spelling.

use crate::config::{Config, ConfigError};
use crate::declarations::registry::{self, PortEnv};
use crate::switch::recipe;
use serde_json::{Map, Value};

impl Config {
    pub fn from_json(s: &str) -> Result<Config, ConfigError> {
        let v: Value = serde_json::from_str(s).map_err(|e| {
            let msg = e.to_string();
            ConfigError(match msg.find(" at line ") {
                Some(i) => format!("JSON syntax: {}", &msg[..i]),
                None => format!("JSON syntax: {msg}"),
            })
        })?;
        Config::load(&v)
    }

    pub fn from_toml(s: &str) -> Result<Config, ConfigError> {
        let value: toml::Value = toml::from_str(s).map_err(|e| ConfigError(format!("TOML syntax: {}", e.message())))?;
        let json = serde_json::to_value(&value).map_err(|e| ConfigError(format!("TOML: {e}")))?;
        Config::load(&json)
    }

    /// Read and check an experiment given as a JSON object. A key given in
    /// the wrong table is pointed to the one it belongs to.
    pub fn load(v: &Value) -> Result<Config, ConfigError> {
        Config::load_here(v).map_err(crate::declarations::keys::point_to_home)
    }

    /// The experiment with its recipe applied (`switch/recipe.rs`), read
    /// and checked; an error about a value the recipe gave says so.
    fn load_here(v: &Value) -> Result<Config, ConfigError> {
        let applied = recipe::apply(v)?;
        Config::load_applied(&applied.config).map_err(|e| recipe::blame(e, &applied))
    }

    fn load_applied(v: &Value) -> Result<Config, ConfigError> {
        let mut cfg = Config::parse(v)?;
        let raw_transport = v.get("transport").and_then(Value::as_object).cloned().unwrap_or_default();
        cfg.transport = registry::fill_transport(&raw_transport, cfg.switch.buffer.0, cfg.transport.packet_bytes())?;
        cfg.topology = cfg.topology.resolved()?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Every check, in the order a run needs them; also merges `[fabric]`
    /// and `[nic]` over `[switch]` into `fabric_port` and `nic_port`.
    pub fn validate(&mut self) -> Result<(), ConfigError> {
        self.validate_run_and_topology()?;
        let env = self.port_env();
        registry::check_port(&self.switch, "switch", env)?;
        self.fabric_port = match &self.fabric {
            Some(f) => {
                let p = registry::merge_port(&self.switch, f, "fabric")?;
                registry::check_port(&p, "fabric", env)?;
                p
            }
            None => self.switch.clone(),
        };
        self.nic_port = match &self.nic {
            Some(n) => {
                let p = registry::merge_port(&self.switch, n, "nic")?;
                registry::check_port(&p, "nic", env)?;
                Some(p)
            }
            None => None,
        };
        // pFabric's port orders by the priority its transport stamps; any
        // other transport stamps none, and the port would be a FIFO that
        // drops the newest arrival, not pFabric.
        let cc = registry::cc(&self.transport)?;
        if !cc.pfabric {
            let ports =
                [("switch", Some(&self.switch)), ("fabric", Some(&self.fabric_port)), ("nic", self.nic_port.as_ref())];
            for (sec, port) in ports {
                if let Some(p) = port.filter(|p| registry::needs_priority(p)) {
                    return Err(crate::config::bad(
                        &format!("{sec}.qdisc"),
                        format!("\"{}\"", p.qdisc.as_str()),
                        &format!(
                            "pFabric's port schedules by the remaining-size priority its transport stamps on every packet; transport.cc = \"{}\" stamps none (use transport.cc = \"pfabric\"){}",
                            cc.about.name,
                            recipe::hint("pfabric", &self.switch)
                        ),
                    ));
                }
            }
        }
        crate::switch::pfc::validate_network(self)?;
        crate::rdma::validate_network(self)?;
        self.validate_rest()?;
        if let Some(w) = &self.workload {
            crate::traffic::dist::check_names(w)?;
        }
        registry::check_transport(&self.transport)?;
        for (i, f) in self.flows.iter().enumerate() {
            registry::check_flow_transport(&self.transport, f, i)?;
        }
        crate::declarations::budget::check(self)
    }

    /// What checking and building ports need of the rest of the config.
    pub fn port_env(&self) -> PortEnv {
        PortEnv { pkt: self.transport.packet_bytes(), stages: self.host.stages.len() }
    }

    /// The config as the engine runs it, as JSON: presets expanded, every
    /// default filled in, each value in one canonical spelling. It parses
    /// back to the same run; two files describing one run give equal values
    /// (what a sweep's result store keys points by, with the model version).
    pub fn resolved_json(&self) -> Value {
        let table = |write: &dyn Fn(&mut Map<String, Value>)| {
            let mut m = Map::new();
            write(&mut m);
            Value::Object(m)
        };
        let mut top = Map::new();
        top.insert("run".into(), table(&|m| self.run.write(m)));
        top.insert("topology".into(), table(&|m| self.topology.write(m)));
        top.insert("switch".into(), registry::switch_resolved(&self.switch));
        top.insert("transport".into(), registry::transport_resolved(&self.transport));
        top.insert("host".into(), table(&|m| self.host.write(m)));
        top.insert("flows".into(), self.flows.iter().map(|f| table(&|m| f.write(m))).collect());
        top.insert("ping".into(), self.ping.iter().map(|p| table(&|m| p.write(m))).collect());
        top.insert("incast".into(), self.incast.iter().map(|c| table(&|m| c.write(m))).collect());
        let workload = self.workload.as_ref().map(|w| {
            let mut w = w.clone();
            w.distributions = Some(w.distribution_names());
            w.distribution = None;
            table(&|m| w.write(m))
        });
        top.insert("workload".into(), workload.unwrap_or(Value::Null));
        top.insert("fabric".into(), self.fabric.as_ref().map_or(Value::Null, registry::override_resolved));
        if let Some(n) = &self.nic {
            top.insert("nic".into(), registry::override_resolved(n));
        }
        Value::Object(top)
    }
}
