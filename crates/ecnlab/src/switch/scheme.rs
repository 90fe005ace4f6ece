//! What every port scheme declares of itself, whatever its kind (a
//! discipline, a scheduler or a marking scheme): its name, a line of doc,
//! its paper, its keys (the `PARAMS` of `section!` structs in its file, or
//! shared ones such as CoDel's), and what its checks and its build see of
//! the port (`PortCtx`); and a scheme's recipe, its paper's set-up. Each
//! kind's own declaration sits beside its list, since it says what the
//! scheme builds: `MarkingDecl` and `MARKINGS` in `marker/mod.rs`,
//! `SchedulerDecl` and `SCHEDULERS` in `scheduler/mod.rs`, `QdiscDecl` in
//! `qdisc.rs` and `QDISCS` in `mod.rs`. One line in a list makes a scheme
//! known to the config, `ecnlab keys`, the reference and the testbed.
//! This file names none of them: every scheme uses it.
//!
//! Declarations act when a config is read and a network built; the
//! per-packet path sees only what `build` made (enums, static dispatch).

use crate::config::param::{Param, Table};
use crate::config::{bad, missing, Config, ConfigError, OneOrList, PortCfg};
use crate::units::Time;
use serde_json::Value;

/// What every scheme declares.
#[derive(Clone, Copy)]
pub struct About {
    /// The name a config gives (`marking = "mq-ecn"`).
    pub name: &'static str,
    /// One line: what it does.
    pub doc: &'static str,
    /// Its paper (and section), or the RFC.
    pub source: &'static str,
    /// Its keys beyond the port's own, as tables of declarations (shared
    /// ones, such as CoDel's, appear under every scheme that uses them).
    pub params: &'static [&'static [Param]],
    /// What to say of one of its keys set where it does not run, when the
    /// registry's general words ("set, but marking "x" does not use it
    /// (only "y" does)") would say less: the text after "key = value: ".
    pub unused: Option<fn(&Unused) -> String>,
    /// That message names the key without its value ("switch.red_min: set,
    /// but ..."), the wording RED's, CEDM's and TCN's refusals have always
    /// had and tests match; every later scheme's names the value too.
    pub unused_without_value: bool,
}

impl About {
    pub const fn new(name: &'static str, doc: &'static str, source: &'static str) -> About {
        About { name, doc, source, params: &[], unused: None, unused_without_value: false }
    }
}

/// A scheme's key set on a port where the scheme does not run.
pub struct Unused<'a> {
    pub sec: &'a str,
    pub key: &'a str,
    pub port: &'a PortCfg,
}

/// What checking or building a port's scheme sees.
pub struct PortCtx<'a> {
    /// The port's whole configuration (an override already merged).
    pub port: &'a PortCfg,
    /// The section it came from ("switch", "fabric", "nic"), for errors.
    pub sec: &'a str,
    /// A full packet on the wire (transport.mss + transport.header).
    pub pkt: u64,
    /// The port's line rate (0 while checking a config).
    pub rate_bps: u64,
    /// ML-ECN's stage thresholds the hosts tag with (host.stages).
    pub stages: usize,
    /// The port's scheduler as a marking scheme sees it (MQ-ECN): how it
    /// lets a queue's share be estimated, and the queues it serves before
    /// its round-robin group (a whole discipline's port has the default
    /// scheduler's here).
    pub estimate: Estimate,
    pub strict: fn(&PortCtx) -> usize,
}

impl PortCtx<'_> {
    /// The key's full name ("fabric.red_min").
    pub fn key(&self, k: &str) -> String {
        format!("{}.{k}", self.sec)
    }

    /// A scheme's keys, read from the port (every key of `T` is the
    /// scheme's; the others are not looked at).
    pub fn read<T>(&self, read: fn(&Table, bool) -> Result<T, ConfigError>) -> Result<T, ConfigError> {
        read(&Table::new(self.sec, self.port.extra.clone()), true)
    }

    /// `read` for building, once the config has been checked.
    pub fn params<T>(&self, read: fn(&Table, bool) -> Result<T, ConfigError>) -> T {
        self.read(read).expect("a checked config's keys read")
    }

    /// The single threshold K in bytes (0 when unset or a list).
    pub fn k(&self) -> u64 {
        self.port.k(self.pkt)
    }
}

/// How a scheduler lets MQ-ECN estimate a queue's share of the link.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Estimate {
    /// No estimate: strict priority has no shares to speak of.
    None,
    /// By the time of a round (round-robin schedulers).
    Rounds,
    /// By the weights of the backlogged queues (WFQ).
    Weights,
}

/// The threshold rule of a scheme that takes one K: given, and not a list.
pub fn need_one_threshold(c: &PortCtx, name: &str) -> Result<(), ConfigError> {
    match &c.port.threshold {
        None => Err(missing(
            &c.key("threshold"),
            &format!("marking \"{name}\" needs the standard threshold K, e.g. \"65pkt\""),
        )),
        Some(OneOrList::List(_)) => Err(bad(
            &c.key("threshold"),
            "a list",
            &format!("only per-queue marking takes one threshold per queue; \"{name}\" takes a single K"),
        )),
        _ => Ok(()),
    }
}

/// No checks beyond the keys' types.
pub fn no_checks(_: &PortCtx) -> Result<(), ConfigError> {
    Ok(())
}

// ---------- recipes: a scheme's paper set-up (`recipe.rs` applies them) ----------

/// One value of a recipe.
#[derive(Clone, Copy)]
pub enum RecipeValue {
    /// A fixed value, as JSON text.
    Json(&'static str),
    /// A value worked out from the experiment (its other keys and the
    /// recipe's fixed values in place), or None where it cannot be.
    Derived {
        /// The rule in words, for `ecnlab keys` and the reference.
        rule: &'static str,
        value: fn(&Config) -> Option<Value>,
    },
}

/// A key a recipe fills: its place ("switch.quantum", "host.stages"), its
/// value, and where the value comes from (the paper and section).
#[derive(Clone, Copy)]
pub struct RecipeFill {
    pub key: &'static str,
    pub value: RecipeValue,
    pub source: &'static str,
}

/// A recipe: its name (what `switch.recipe` gives; the scheme's own), a
/// line of doc, its paper, and the keys it fills, in order.
pub struct RecipeDecl {
    pub about: About,
    pub fills: &'static [RecipeFill],
}

impl RecipeDecl {
    /// For the refusal of a scheme short of what it needs: "; or set
    /// switch.recipe = ..." when the port's network names no recipe.
    pub fn hint(&self, port: &PortCfg) -> String {
        match port.recipe {
            None => format!(
                "; or set switch.recipe = \"{}\" for the paper's set-up ({})",
                self.about.name, self.about.source
            ),
            Some(_) => String::new(),
        }
    }
}

/// The experiment's base RTT as a multiple of `design`, the RTT a scheme's
/// defaults were made for: the factor by which a recipe scales them to the
/// network (None without a base RTT).
pub fn rtt_ratio(c: &Config, design: Time) -> Option<f64> {
    let d = c.topology.base_rtt();
    (d > 0).then(|| d as f64 / design as f64)
}

/// `t` (a default made for an RTT of `design`) scaled to the experiment's
/// base RTT, to whole nanoseconds (at least one), as a config value.
pub fn rtt_scaled(c: &Config, t: Time, design: Time) -> Option<Value> {
    let ns = (t as f64 * rtt_ratio(c, design)? / 1e3).round().max(1.0) as Time;
    Some(Value::String(crate::units::fmt_duration(ns * 1_000)))
}
