//! Warnings: settings that cannot act in the network they are in. A key
//! declares the bound it must stay within (`param::Acts`): a queueing delay
//! below what the port's buffer holds at its rate, a queue length below
//! the buffer, a span of time shorter than the run. One check here reads
//! those declarations for every key that runs on each kind of port, so a
//! scheme gets the warning by declaring its keys, with no code of its own.
//!
//! An RFC's defaults made for the Internet are the usual case: PIE's 15 ms
//! target on a 10 Gbps port whose 300 KB buffer drains in 240 us never
//! marks, and the run looks like drop-tail without a word.
//!
//! The check runs once per run, from the config alone (the ports' rates
//! come from `[topology]`), and never touches the per-packet path.

use crate::config::param::{parse, Acts};
use crate::config::{Amt, TopologyKind};
use crate::config::{Config, Dur, OneOrList, PortCfg};
use crate::declarations::registry::{self, PortKey};
use crate::switch::recipe;
use crate::units::{fmt_duration, fmt_rate, tx_time};
use serde_json::{Map, Value};

/// One kind of port: the port's configuration, the override table that
/// sets it over `[switch]` (none for `[switch]`'s own ports), its name,
/// what the ports are in words, and their rates (distinct, ascending).
struct Site<'a> {
    port: &'a PortCfg,
    over: Option<&'a Map<String, Value>>,
    sec: &'static str,
    what: &'static str,
    rates: Vec<u64>,
}

/// Every warning for `cfg`, one line each, in the order of the ports
/// (`[switch]`, `[fabric]`, `[nic]`) and their keys' declarations.
pub fn of(cfg: &Config) -> Vec<String> {
    let t = &cfg.topology;
    let mut host_rates: Vec<u64> = (0..cfg.hosts()).map(|h| t.host_rate(h)).collect();
    host_rates.sort_unstable();
    host_rates.dedup();
    let mut sites =
        vec![Site { port: &cfg.switch, over: None, sec: "switch", what: "toward hosts", rates: host_rates.clone() }];
    // A graph may have no switch-to-switch link (no fabric ports).
    if t.kind != Some(TopologyKind::Star) && !t.fabric_rates().is_empty() {
        let over = cfg.fabric.as_ref();
        sites.push(Site {
            port: &cfg.fabric_port,
            over,
            sec: "fabric",
            what: "in the fabric",
            rates: t.fabric_rates(),
        });
    }
    if let Some(p) = &cfg.nic_port {
        sites.push(Site { port: p, over: cfg.nic.as_ref(), sec: "nic", what: "at the NICs", rates: host_rates });
    }
    let keys = registry::port_keys();
    let mut out: Vec<String> = Vec::new();
    for site in &sites {
        let Ok(s) = registry::schemes(site.port, site.sec) else { continue };
        for k in keys.iter().filter(|k| k.param.acts != Acts::Anywhere && s.uses(k)) {
            if k.param.key == "threshold" && s.marking.threshold == crate::switch::marker::Threshold::Pool {
                continue;
            }
            let Some(v) = effective(site.port, k) else { continue };
            // The section the value comes from: the override's when it
            // sets the key, else [switch]'s, which it inherits.
            let given_here = site.over.is_some_and(|m| m.get(k.param.key).is_some_and(|v| !v.is_null()));
            let sec = if given_here { site.sec } else { "switch" };
            let key = format!("{sec}.{}", k.param.key);
            let buf_sec = if site.over.is_some_and(|m| m.get("buffer").is_some_and(|v| !v.is_null())) {
                site.sec
            } else {
                "switch"
            };
            let who = scheme_of(&s, k);
            let hint = recipe_hint(cfg, &s, k);
            let buffer = site.port.buffer.0;
            let buffer_bytes = buffer.bytes(cfg.transport.packet_bytes());
            let line = match k.param.acts {
                Acts::Anywhere => None,
                Acts::BelowBufferTime => parse::<Dur>(&v).ok().and_then(|d| {
                    let short: Vec<String> = site
                        .rates
                        .iter()
                        .filter(|&&r| d.0 >= tx_time(buffer_bytes, r))
                        .map(|&r| format!("{} at {}", fmt_duration(tx_time(buffer_bytes, r)), fmt_rate(r)))
                        .collect();
                    (!short.is_empty()).then(|| {
                        format!(
                            "{key} = {}: not below the queueing delay that {buf_sec}.buffer = {buffer} can hold on \
                             the ports {} ({}), so {who} never acts there{hint}",
                            fmt_duration(d.0),
                            site.what,
                            short.join(", ")
                        )
                    })
                }),
                Acts::BelowBuffer => parse::<OneOrList<Amt>>(&v).ok().and_then(|a| {
                    let list = match a {
                        OneOrList::All(x) => vec![(key.clone(), x)],
                        OneOrList::List(l) => {
                            l.into_iter().enumerate().map(|(i, x)| (format!("{key}[{i}]"), x)).collect()
                        }
                    };
                    let pkt = cfg.transport.packet_bytes();
                    let over: Vec<String> = list
                        .iter()
                        .filter(|(_, x)| x.0.bytes(pkt) >= buffer_bytes)
                        .map(|(name, x)| format!("{name} = {}", x.0))
                        .collect();
                    (!over.is_empty()).then(|| {
                        format!(
                            "{}: not below {buf_sec}.buffer = {buffer} on the ports {}, so no queue reaches it and \
                             {who} never acts there{hint}",
                            over.join(", "),
                            site.what
                        )
                    })
                }),
                Acts::WithinRun => match (parse::<Dur>(&v), cfg.run.duration) {
                    (Ok(d), Some(run)) if d.0 >= run.0 => Some(format!(
                        "{key} = {}: not shorter than the run (run.duration = {}), so {who} does not act as set \
                         within it{hint}",
                        fmt_duration(d.0),
                        fmt_duration(run.0)
                    )),
                    _ => None,
                },
            };
            if let Some(line) = line {
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
    }
    out
}

/// A key's value on a port: as set, its default, or the default its
/// declaration gives in words when that is a value ("5ms"); None when it
/// has none that can be checked ("threshold / 2").
fn effective(port: &PortCfg, k: &PortKey) -> Option<Value> {
    let v = registry::value_of(port, k);
    if !v.is_null() {
        return Some(v);
    }
    let doc = k.param.default_doc;
    let v = serde_json::from_str::<Value>(doc).unwrap_or_else(|_| Value::String(doc.to_string()));
    (k.param.canonical)(&v).ok().filter(|v| !v.is_null())
}

/// The scheme that uses the key on the port, in words (`marking "pie"`,
/// `qdisc "dualpi2"`); the marking scheme for the port's own keys.
fn scheme_of(s: &registry::Schemes, k: &PortKey) -> String {
    let running = s.running();
    let named = k.users.iter().find_map(|(kind, name)| {
        running.iter().find(|(rk, a)| rk == kind && a.name == *name).map(|(rk, a)| (rk.key(), a.name))
    });
    let (kind, name) = named.unwrap_or(("marking", s.marking.about.name));
    format!("{kind} \"{name}\"")
}

/// "; see switch.recipe = \"x\"" when the scheme whose key it is has
/// a recipe and the network names none.
fn recipe_hint(cfg: &Config, s: &registry::Schemes, k: &PortKey) -> String {
    if cfg.switch.recipe.is_some() {
        return String::new();
    }
    let running = s.running();
    let mut names = k.users.iter().filter(|(kind, name)| running.iter().any(|(rk, a)| rk == kind && a.name == *name));
    match names.find_map(|(_, n)| recipe::decl(n)) {
        Some(r) => format!("; see switch.recipe = \"{}\" (ecnlab keys recipe)", r.about.name),
        None => String::new(),
    }
}

#[cfg(test)]
mod recipe_tests;
#[cfg(test)]
mod tests;
