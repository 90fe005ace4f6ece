//! What a port scheme declares of itself: a discipline (`qdisc`), a
//! scheduler or a marking scheme. Each scheme's file holds one of these
//! beside its logic: its name, a line of doc, its paper, its keys (the
//! `PARAMS` of `section!` structs in its file, or shared ones such as
//! CoDel's), the checks of its keys, and how it is built. The lists of
//! each kind (`marker::MARKINGS`, `scheduler::SCHEDULERS`,
//! `whole::QDISCS`) are the registry: one line there makes a scheme known
//! to the config, `ecnlab keys`, the reference and the testbed.
//!
//! Declarations act when a config is read and a network built; the
//! per-packet path sees only what `build` made (enums, static dispatch).

use super::marker::Marker;
use super::scheduler::Scheduler;
use super::Qdisc;
use crate::config::param::{Param, Table};
use crate::config::{bad, missing, ConfigError, OneOrList, PortCfg};

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
    /// The port's scheduler and marking scheme (composed ports; a whole
    /// discipline's port has the defaults here).
    pub scheduler: &'a SchedulerDecl,
    pub marking: &'a MarkingDecl,
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

/// How a marking scheme takes `threshold`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Threshold {
    /// One K, required.
    One,
    /// One K, required, against the switch's shared pool (all its ports)
    /// rather than anything one port's buffer bounds: a K above a port's
    /// buffer still acts.
    Pool,
    /// One K for all queues or one per queue, required.
    PerQueue,
    /// Not used; the text says what the scheme takes instead.
    Unused(&'static str),
    /// The scheme's `validate` decides (MQ-ECN: K, or RED's keys instead).
    Own,
    /// Not used, and not refused either (no marking: experiment files have
    /// long kept a threshold for the cases of a sweep that mark).
    Ignored,
}

/// A marking scheme of the composed discipline.
pub struct MarkingDecl {
    pub about: About,
    pub threshold: Threshold,
    /// Where it judges, when that is its own (hooks on one side or both)
    /// rather than where `dequeue_marking` says; such a scheme refuses
    /// `dequeue_marking`.
    pub own_sides: Option<&'static str>,
    /// Checks of its keys (beyond their types and the threshold rule).
    pub validate: fn(&PortCtx) -> Result<(), ConfigError>,
    pub build: fn(&PortCtx) -> Marker,
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

/// A scheduler of the composed discipline.
pub struct SchedulerDecl {
    pub about: About,
    pub estimate: Estimate,
    /// Queues served before the round-robin group (sp-dwrr's), which
    /// MQ-ECN leaves out of its rounds.
    pub strict: fn(&PortCtx) -> usize,
    pub validate: fn(&PortCtx) -> Result<(), ConfigError>,
    pub build: fn(&PortCtx) -> Scheduler,
}

/// A queue discipline: the composed one, or a whole design of its own.
pub struct QdiscDecl {
    pub about: About,
    /// The composed discipline's own keys (scheduler, marking, ...), which
    /// a whole discipline refuses.
    pub composed: bool,
    /// It schedules by the remaining-size priority that a congestion
    /// control stamps on every packet (pFabric's); the registry refuses it
    /// with one that stamps none.
    pub needs_priority: bool,
    pub validate: fn(&PortCtx) -> Result<(), ConfigError>,
    /// The discipline for a port (a whole one; the composed one is built
    /// from its parts by the registry).
    pub build: fn(&PortCtx) -> Qdisc,
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
