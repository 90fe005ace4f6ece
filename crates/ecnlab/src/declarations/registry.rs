//! The registry: every scheme ecnlab knows, from the list each kind keeps
//! beside its schemes — disciplines (`switch::QDISCS`, switch/mod.rs),
//! schedulers (`switch::scheduler::SCHEDULERS`), marking schemes
//! (`switch::marker::MARKINGS`), congestion controls (`host::cc::CCS`),
//! loss-recovery mechanisms (`host::recovery::MECHANISMS`) and TCP
//! profiles (`host::PROFILES`). A scheme joins its list with
//! one line; everything here works from the declarations, so nothing here
//! changes for a new scheme.
//!
//! Here a config's scheme names are resolved, each port's keys checked
//! against the schemes that run there (a key of a scheme that does not run
//! is refused, or for a few old tuning keys ignored: `Param::lenient`),
//! `[fabric]` and `[nic]` merged over `[switch]`, profiles and congestion
//! controls' defaults filled in, the resolved form written, and ports
//! built.

use crate::config::param::{Param, Resolved, Table};
use crate::config::{error, ConfigError, FlowCfg, OneOrList, PortCfg, TransportCfg};
use crate::host::cc::{CcDecl, Fill};
use crate::host::profile::ProfileDecl;

use crate::switch::classifier::StageClassKeys;
use crate::switch::marker::MARKINGS;
use crate::switch::marker::{MarkingDecl, Threshold};
use crate::switch::pfc::PfcKeys;
use crate::switch::qdisc::{Parts, QdiscDecl};
use crate::switch::scheduler::SchedulerDecl;
use crate::switch::scheduler::SCHEDULERS;
use crate::switch::scheme::{About, PortCtx, Unused};
use crate::switch::shared_buffer::SharedBufferKeys;
use crate::switch::{Qdisc, QDISCS};
use crate::units::Amount;
use serde_json::{Map, Value};

/// Every `transport.cc`: the TCP congestion controls, then the RDMA
/// transports.
pub fn ccs() -> Vec<&'static CcDecl> {
    crate::host::cc::CCS.iter().copied().chain(crate::rdma::TRANSPORTS.iter().map(|d| &d.cc)).collect()
}

/// Every `transport.profile`: TCP's, then RDMA's.
pub fn profiles() -> Vec<&'static ProfileDecl> {
    crate::host::PROFILES.iter().chain(crate::rdma::PROFILES).copied().collect()
}

/// The kinds of port scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Qdisc,
    Scheduler,
    Marking,
}

impl Kind {
    pub fn key(self) -> &'static str {
        match self {
            Kind::Qdisc => "qdisc",
            Kind::Scheduler => "scheduler",
            Kind::Marking => "marking",
        }
    }
}

/// The port's own keys that belong to the composed discipline: a whole
/// discipline refuses them.
const COMPOSED_KEYS: [&str; 6] = ["scheduler", "quantum", "marking", "threshold", "dequeue_marking", "drop_not_ect"];

/// Every port scheme's `About`, with its kind, in the registry's order.
pub fn port_schemes() -> Vec<(Kind, &'static About)> {
    let mut v: Vec<(Kind, &'static About)> = Vec::new();
    v.extend(QDISCS.iter().map(|d| (Kind::Qdisc, &d.about)));
    v.extend(SCHEDULERS.iter().map(|d| (Kind::Scheduler, &d.about)));
    v.extend(MARKINGS.iter().map(|d| (Kind::Marking, &d.about)));
    v
}

/// A port key's declaration and the schemes that use it (none: every port).
pub struct PortKey {
    pub param: &'static Param,
    pub users: Vec<(Kind, &'static str)>,
}

/// Every key a port may have, declared: the port's own, then each scheme's
/// in the registry's order (a table shared by several schemes once, with
/// all of them as users), then ML-ECN's classes (every port's).
pub fn port_keys() -> Vec<PortKey> {
    let mut keys: Vec<PortKey> = PortCfg::PARAMS.iter().map(|p| PortKey { param: p, users: Vec::new() }).collect();
    for (kind, about) in port_schemes() {
        for table in about.params {
            for p in table.iter() {
                match keys.iter_mut().find(|k| k.param.key == p.key) {
                    Some(k) => k.users.push((kind, about.name)),
                    None => keys.push(PortKey { param: p, users: vec![(kind, about.name)] }),
                }
            }
        }
    }
    keys.extend(StageClassKeys::PARAMS.iter().map(|p| PortKey { param: p, users: Vec::new() }));
    keys.extend(SharedBufferKeys::PARAMS.iter().map(|p| PortKey { param: p, users: Vec::new() }));
    keys.extend(PfcKeys::PARAMS.iter().map(|p| PortKey { param: p, users: Vec::new() }));
    keys
}

/// The scheme of kind `kind` a port names.
fn find<T>(list: &[&'static T], about: fn(&T) -> &About, given: &Value, key: &str) -> Result<&'static T, ConfigError> {
    let names: Vec<&str> = list.iter().map(|d| about(d).name).collect();
    let Some(name) = given.as_str() else {
        let unexpected = match given {
            Value::Array(_) => "sequence".to_string(),
            Value::Object(_) => "map".to_string(),
            Value::Bool(b) => format!("boolean `{b}`"),
            Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
            Value::Number(n) => format!("integer `{n}`"),
            Value::Null => "null".to_string(),
            Value::String(_) => unreachable!(),
        };
        return Err(ConfigError(format!("{key}: invalid type: {unexpected}, expected one of {}", names.join(", "))));
    };
    list.iter().copied().find(|d| about(d).name == name).ok_or_else(|| error::unknown_name(key, name, &names))
}

/// A port's three schemes.
pub struct Schemes {
    pub qdisc: &'static QdiscDecl,
    pub scheduler: &'static SchedulerDecl,
    pub marking: &'static MarkingDecl,
}

/// The schemes a port names (`sec` for errors).
pub fn schemes(port: &PortCfg, sec: &str) -> Result<Schemes, ConfigError> {
    Ok(Schemes {
        qdisc: find(QDISCS, |d| &d.about, &port.qdisc.0, &format!("{sec}.qdisc"))?,
        scheduler: find(SCHEDULERS, |d| &d.about, &port.scheduler.0, &format!("{sec}.scheduler"))?,
        marking: find(MARKINGS, |d| &d.about, &port.marking.0, &format!("{sec}.marking"))?,
    })
}

impl Schemes {
    /// What the port's schemes see of it (`rate_bps` 0 while checking).
    fn ctx<'a>(&self, port: &'a PortCfg, sec: &'a str, env: PortEnv, rate_bps: u64) -> PortCtx<'a> {
        PortCtx {
            port,
            sec,
            pkt: env.pkt,
            rate_bps,
            stages: env.stages,
            estimate: self.scheduler.estimate,
            strict: self.scheduler.strict,
        }
    }

    /// The composed discipline's parts, for the port's discipline.
    fn parts(&self) -> Parts<'static> {
        Parts { scheduler: self.scheduler, marking: self.marking }
    }

    /// The schemes that run on the port: its discipline, and with the
    /// composed one its scheduler and marking scheme.
    pub(crate) fn running(&self) -> Vec<(Kind, &'static About)> {
        let mut v = vec![(Kind::Qdisc, &self.qdisc.about)];
        if self.qdisc.composed {
            v.push((Kind::Scheduler, &self.scheduler.about));
            v.push((Kind::Marking, &self.marking.about));
        }
        v
    }

    /// Whether a key runs on the port.
    pub(crate) fn uses(&self, k: &PortKey) -> bool {
        if k.users.is_empty() {
            return self.qdisc.composed || !COMPOSED_KEYS.contains(&k.param.key);
        }
        let running = self.running();
        k.users.iter().any(|(kind, name)| running.iter().any(|(rk, a)| rk == kind && a.name == *name))
    }
}

/// A key's value on a port, canonical (its default when absent).
pub(crate) fn value_of(port: &PortCfg, k: &PortKey) -> Value {
    if PortCfg::PARAMS.iter().any(|p| p.key == k.param.key) {
        let mut m = Map::new();
        port.write(&mut m);
        return m.get(k.param.key).cloned().unwrap_or_else(|| k.param.default_value());
    }
    match port.extra.get(k.param.key) {
        Some(v) => (k.param.canonical)(v).unwrap_or_else(|_| v.clone()),
        None => k.param.default_value(),
    }
}

/// The key is set to something other than its default. (A resolved config
/// writes the default quantum as a list, one per queue.)
fn is_set(port: &PortCfg, k: &PortKey) -> bool {
    if k.param.key == "quantum" {
        return port.quanta().iter().any(|&q| q != 1500);
    }
    value_of(port, k) != k.param.default_value()
}

/// A value as messages show it: amounts, times and numbers bare, names in
/// quotes.
pub(crate) fn show(v: &Value) -> String {
    match v {
        Value::String(s) if s.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.') => s.clone(),
        other => other.to_string(),
    }
}

/// A key set where nothing that runs on the port uses it.
fn unused(sec: &str, port: &PortCfg, s: &Schemes, k: &PortKey, value: &Value) -> ConfigError {
    let key = k.param.key;
    let users: Vec<&About> =
        port_schemes().into_iter().filter(|(kind, a)| k.users.contains(&(*kind, a.name))).map(|(_, a)| a).collect();
    let head = if users.iter().any(|a| a.unused_without_value) {
        format!("{sec}.{key}")
    } else {
        format!("{sec}.{key} = {}", show(value))
    };
    if COMPOSED_KEYS.contains(&key) && !s.qdisc.composed {
        return ConfigError(format!(
            "{head}: {sec}.qdisc \"{}\" is a whole discipline with its own scheduling and queue management; \
             {key} belongs to qdisc \"composed\" (set {sec}.qdisc = \"composed\" to use it)",
            s.qdisc.about.name
        ));
    }
    let custom = users.iter().find_map(|a| a.unused);
    if let Some(f) = custom {
        return ConfigError(format!("{head}: {}", f(&Unused { sec, key, port })));
    }
    let quote = |n: &str| format!("\"{n}\"");
    let one_kind = k.users.iter().all(|(kind, _)| *kind == k.users[0].0) && k.users[0].0 != Kind::Qdisc;
    let (what, users) = if one_kind && s.qdisc.composed {
        let kind = k.users[0].0;
        let now = if kind == Kind::Marking { s.marking.about.name } else { s.scheduler.about.name };
        let users: Vec<String> = k.users.iter().map(|(_, n)| quote(n)).collect();
        (format!("{} {}", kind.key(), quote(now)), users)
    } else {
        let what = if s.qdisc.composed {
            format!("qdisc \"composed\" with marking {}", quote(s.marking.about.name))
        } else {
            format!("qdisc {}", quote(s.qdisc.about.name))
        };
        (what, k.users.iter().map(|(kind, n)| format!("{} {}", kind.key(), quote(n))).collect())
    };
    ConfigError(format!("{head}: set, but {what} does not use it (only {} does)", users.join(" or ")))
}

/// What checking and building a port need beyond the port itself.
#[derive(Clone, Copy)]
pub struct PortEnv {
    /// A full packet on the wire.
    pub pkt: u64,
    /// host.stages' thresholds.
    pub stages: usize,
}

/// Check a port (`sec`: "switch", "fabric" or "nic"): its schemes, the
/// types of their keys, that every key set is used by a scheme that runs
/// there, and each scheme's own checks.
pub fn check_port(port: &PortCfg, sec: &str, env: PortEnv) -> Result<(), ConfigError> {
    let keys = port_keys();
    for (name, v) in &port.extra {
        let Some(k) = keys.iter().find(|k| k.param.key == name) else {
            let all: Vec<&str> = keys.iter().map(|k| k.param.key).collect();
            return Err(error::unknown_key(sec, name, &all));
        };
        k.param.read(&format!("{sec}.{name}"), v)?;
    }
    let s = schemes(port, sec)?;
    port.validate_common(sec)?;
    for k in &keys {
        if s.uses(k) || k.param.lenient || !is_set(port, k) {
            continue;
        }
        return Err(unused(sec, port, &s, k, &value_of(port, k)));
    }
    let c = s.ctx(port, sec, env, 0);
    (s.qdisc.validate)(&c, &s.parts())?;
    port.validate_buffer(sec)?;
    if s.qdisc.composed {
        (s.scheduler.validate)(&c)?;
        check_threshold(&c, s.marking)?;
        (s.marking.validate)(&c)?;
    }
    StageClassKeys::of(port).validate(sec, port.queues, env.stages)
}

/// The marking scheme's use of `threshold`.
fn check_threshold(c: &PortCtx, marking: &MarkingDecl) -> Result<(), ConfigError> {
    let name = marking.about.name;
    match marking.threshold {
        Threshold::One | Threshold::Pool => crate::switch::scheme::need_one_threshold(c, name),
        Threshold::PerQueue => match &c.port.threshold {
            None => crate::switch::scheme::need_one_threshold(c, name),
            Some(OneOrList::List(l)) if l.len() != c.port.queues as usize => Err(error::bad(
                &c.key("threshold"),
                format!("a list of {}", l.len()),
                &format!("needs one value per queue ({})", c.port.queues),
            )),
            _ => Ok(()),
        },
        Threshold::Unused(hint) if c.port.threshold.is_some() => {
            Err(ConfigError(format!("{}: set, but marking \"{name}\" does not use it{hint}", c.key("threshold"))))
        }
        Threshold::Unused(_) | Threshold::Ignored | Threshold::Own => Ok(()),
    }
}

/// `[fabric]` or `[nic]` (`over`, as given) merged over `[switch]`: the
/// override's keys replace the switch's, and what the switch sets that the
/// merged port's schemes do not use is left out (a composed switch's
/// marking means nothing to an FQ-CoDel NIC, and the reverse).
pub fn merge_port(base: &PortCfg, over: &Map<String, Value>, sec: &str) -> Result<PortCfg, ConfigError> {
    let keys = port_keys();
    for (name, v) in over {
        match keys.iter().find(|k| k.param.key == name) {
            None => {
                let all: Vec<&str> = keys.iter().filter(|k| k.param.per_port).map(|k| k.param.key).collect();
                return Err(error::unknown_key(sec, name, &all));
            }
            Some(_) if v.is_null() => {}
            Some(k) if !k.param.per_port => {
                return Err(ConfigError(format!(
                    "{sec}.{name}: one setting for the whole network, given in [switch] only (every port has switch.{name})"
                )));
            }
            Some(k) => {
                k.param.read(&format!("{sec}.{name}"), v)?;
            }
        }
    }
    let mut map = Map::new();
    base.write(&mut map);
    map.extend(base.extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    for (k, v) in over {
        if !v.is_null() {
            map.insert(k.clone(), v.clone());
        }
    }
    let merged = PortCfg::read(&Table::new(sec, map.clone()), false)?;
    let s = schemes(&merged, sec)?;
    for k in &keys {
        let inherited = map.contains_key(k.param.key) && over.get(k.param.key).is_none_or(|v| v.is_null());
        if inherited && k.param.per_port && !s.uses(k) {
            map.remove(k.param.key);
        }
    }
    PortCfg::read(&Table::new(sec, map), false)
}

/// The resolved form of `[switch]`: every key of the port and of every
/// registered scheme by its `Resolved` policy, the quantum one per queue.
pub fn switch_resolved(port: &PortCfg) -> Value {
    let mut m = Map::new();
    port.write(&mut m);
    let s = schemes(port, "switch").ok();
    for k in port_keys().iter().filter(|k| !PortCfg::PARAMS.iter().any(|p| p.key == k.param.key)) {
        let write = match k.param.resolved {
            Resolved::Always => true,
            Resolved::Given => is_set(port, k),
            Resolved::InUse => s.as_ref().is_some_and(|s| s.uses(k)),
        };
        if write {
            m.insert(k.param.key.to_string(), value_of(port, k));
        }
    }
    let quanta: Vec<Value> = port.quanta().into_iter().map(|q| Value::String(format!("{q}B"))).collect();
    m.insert("quantum".into(), Value::Array(quanta));
    Value::Object(m)
}

/// The resolved form of an override as given: every key it may set by its
/// policy, the given ones canonical, the rest null (`Always`) or left out.
pub fn override_resolved(over: &Map<String, Value>) -> Value {
    let mut m = Map::new();
    for k in port_keys().iter().filter(|k| k.param.per_port) {
        let given = over.get(k.param.key).filter(|v| !v.is_null());
        match (given, k.param.resolved) {
            (Some(v), _) => {
                m.insert(k.param.key.into(), (k.param.canonical)(v).unwrap_or_else(|_| v.clone()));
            }
            (None, Resolved::Always) => {
                m.insert(k.param.key.into(), Value::Null);
            }
            (None, _) => {}
        }
    }
    Value::Object(m)
}

/// Build the discipline of a port of `rate_bps` (a checked config).
pub fn build_qdisc(port: &PortCfg, env: PortEnv, rate_bps: u64) -> Qdisc {
    let s = schemes(port, "switch").expect("a checked config names known schemes");
    (s.qdisc.build)(&s.ctx(port, "switch", env, rate_bps), &s.parts())
}

/// Whether a port schedules by the priority a congestion control stamps.
pub fn needs_priority(port: &PortCfg) -> bool {
    schemes(port, "switch").is_ok_and(|s| s.qdisc.needs_priority)
}

// ---------- transport ----------

/// The congestion control a transport names.
pub fn cc(t: &TransportCfg) -> Result<&'static CcDecl, ConfigError> {
    find(&ccs(), |d| &d.about, &t.cc.0, "transport.cc")
}

/// The profile a transport names, if any.
pub fn profile(t: &TransportCfg) -> Result<Option<&'static ProfileDecl>, ConfigError> {
    match &t.profile {
        None => Ok(None),
        Some(p) => find(&profiles(), |d| &d.about, &p.0, "transport.profile").map(Some),
    }
}

/// `[transport]` with the keys the experiment left out filled from its
/// profile, then from its congestion control's defaults (a key given
/// always wins). `switch_buffer` and `pkt` size the profile's "queue − 1".
pub fn fill_transport(raw: &Map<String, Value>, switch_buffer: Amount, pkt: u64) -> Result<TransportCfg, ConfigError> {
    let t = TransportCfg::read(&Table::new("transport", raw.clone()), false)?;
    let profile = profile(&t)?;
    let given = |key: &str| raw.get(key).is_some_and(|v| !v.is_null());
    let queue_minus_one = {
        let packets = match switch_buffer {
            Amount::Bytes(b) => b / pkt.max(1),
            Amount::Pkt(p) | Amount::Packets(p) => p,
        };
        packets.saturating_sub(1).clamp(1, u32::MAX as u64)
    };
    let value = |f: Fill| match f {
        Fill::Json(text) => serde_json::from_str(text).expect("a declared fill is JSON"),
        Fill::QueueMinusOne => Value::from(queue_minus_one),
    };
    let mut filled = raw.clone();
    let from_profile = profile.map_or(&[][..], |p| p.fills);
    for &(key, f) in from_profile {
        if !given(key) {
            filled.insert(key.into(), value(f));
        }
    }
    // The congestion control's defaults are those of the one it runs, which
    // the profile may name.
    let cc = cc(&TransportCfg::read(&Table::new("transport", filled.clone()), false)?)?;
    for &(key, f) in cc.defaults {
        if !given(key) && !from_profile.iter().any(|e| e.0 == key) {
            filled.insert(key.into(), value(f));
        }
    }
    TransportCfg::read(&Table::new("transport", filled), false)
}

/// Every key a congestion control may add to `[transport]`, with the ones
/// that use it.
fn transport_keys() -> Vec<(&'static Param, Vec<&'static str>)> {
    let mut keys: Vec<(&'static Param, Vec<&'static str>)> = Vec::new();
    for d in ccs() {
        for p in d.about.params.iter().flat_map(|t| t.iter()) {
            match keys.iter_mut().find(|(q, _)| q.key == p.key) {
                Some((_, users)) => users.push(d.about.name),
                None => keys.push((p, vec![d.about.name])),
            }
        }
    }
    // The loss-recovery mechanisms' keys (`host::recovery::MECHANISMS`)
    // and a profile's own keys work with every congestion control, with or
    // without the profile.
    let every: Vec<&'static str> = ccs().iter().map(|d| d.about.name).collect();
    let mechanisms = crate::host::recovery::MECHANISMS.iter().map(|d| &d.about);
    for about in mechanisms.chain(profiles().into_iter().map(|d| &d.about)) {
        for p in about.params.iter().flat_map(|t| t.iter()) {
            if !keys.iter().any(|(q, _)| q.key == p.key) {
                keys.push((p, every.clone()));
            }
        }
    }
    keys
}

/// Check `[transport]`'s scheme keys: each declared by some congestion
/// control, of its type, and (unless lenient) set only with one that uses
/// it; then the congestion control's own checks.
pub fn check_transport(t: &TransportCfg) -> Result<(), ConfigError> {
    let cc = cc(t)?;
    let keys = transport_keys();
    for (name, v) in &t.extra {
        let Some((p, users)) = keys.iter().find(|(p, _)| p.key == name) else {
            let mut all: Vec<&str> = TransportCfg::PARAMS.iter().map(|p| p.key).collect();
            all.extend(keys.iter().map(|(p, _)| p.key));
            return Err(error::unknown_key("transport", name, &all));
        };
        let canon = p.read(&format!("transport.{name}"), v)?;
        if !users.contains(&cc.about.name) && !p.lenient && !v.is_null() && canon != p.default_value() {
            let users: Vec<String> = users.iter().map(|u| format!("\"{u}\"")).collect();
            return Err(ConfigError(format!(
                "transport.{name} = {}: set, but cc \"{}\" does not use it (only {} does)",
                show(&canon),
                cc.about.name,
                users.join(" or ")
            )));
        }
    }
    check_ect1(t, cc, "transport")?;
    crate::host::sack_blocks::SackBlocksParams::validate(t)?;
    crate::host::recovery::validate(t)?;
    (cc.validate)(t)
}

/// The transport a `[[flows]]` entry runs: `[transport]` with the entry's
/// own congestion control and ECT(1) choice, if it gives them.
pub fn flow_transport(t: &TransportCfg, f: &FlowCfg) -> TransportCfg {
    let mut out = t.clone();
    if let Some(cc) = &f.cc {
        out.cc = cc.clone();
    }
    if let Some(e) = f.ect1 {
        out.ect1 = e;
    }
    out
}

/// Check a `[[flows]]` entry's own transport (`i`: its index): a known
/// congestion control, pFabric's only with pFabric's whole network, and
/// ECT(1) only from one that sends ECN-capable packets.
pub fn check_flow_transport(t: &TransportCfg, f: &FlowCfg, i: usize) -> Result<(), ConfigError> {
    let net = cc(t)?;
    let ft = flow_transport(t, f);
    let own = find(&ccs(), |d| &d.about, &ft.cc.0, &format!("flows[{i}].cc"))?;
    if own.pfabric != net.pfabric {
        return Err(error::bad(
            &format!("flows[{i}].cc"),
            format!("\"{}\"", own.about.name),
            &format!(
                "pFabric's transport runs the whole network or none of it (transport.cc = \"{}\")",
                net.about.name
            ),
        ));
    }
    check_ect1(&ft, own, &format!("flows[{i}]"))
}

/// ECT(1) needs a congestion control that sends ECN-capable packets.
fn check_ect1(t: &TransportCfg, cc: &CcDecl, sec: &str) -> Result<(), ConfigError> {
    if t.ect1 && cc.echo == crate::host::cc::EchoMode::None {
        return Err(error::bad(
            &format!("{sec}.ect1"),
            true,
            &format!("cc \"{}\" sends no ECN-capable packets to carry ECT(1)", cc.about.name),
        ));
    }
    Ok(())
}

/// The resolved form of `[transport]`: its own keys, every congestion
/// control's by policy, and init_rto spelt out.
pub fn transport_resolved(t: &TransportCfg) -> Value {
    let mut m = Map::new();
    t.write(&mut m);
    let running = cc(t).ok().map(|d| d.about.name);
    for (p, users) in transport_keys() {
        let given = t.extra.get(p.key).filter(|v| !v.is_null()).map(|v| (p.canonical)(v).unwrap_or_else(|_| v.clone()));
        let write = match p.resolved {
            Resolved::Always => true,
            Resolved::Given => given.as_ref().is_some_and(|g| *g != p.default_value()),
            Resolved::InUse => running.is_some_and(|r| users.contains(&r)),
        };
        if write {
            m.insert(p.key.into(), given.unwrap_or_else(|| p.default_value()));
        }
    }
    m.insert("init_rto".into(), Value::String(crate::units::fmt_duration(t.init_rto())));
    Value::Object(m)
}
