//! The experiment schema: one `Config` is the single source of truth.
//!
//! Parsing goes through serde with `deny_unknown_fields` and
//! `serde_path_to_error`, so every error names its key path. Values with
//! units are parsed by the small wrapper types below. Cross-field checks
//! (a host index that does not exist, a scheme that needs a round-robin
//! scheduler) live in `validate` and produce the same one-line form.

use crate::switch::classifier::StageClasses;
use crate::units::{self, Amount, Time};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// A config problem: one line naming the key, the value and what is allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ConfigError {}

/// `Config::end` of a run without a duration: far beyond any real run, yet
/// with room to add delays to it without overflow.
pub const NO_END: Time = u64::MAX / 4;

fn bad(key: &str, value: impl fmt::Display, allowed: &str) -> ConfigError {
    ConfigError(format!("{key} = {value}: {allowed}"))
}

// ---------- unit-bearing scalar types ----------

macro_rules! unit_type {
    ($name:ident, $inner:ty, $parse:path, $what:literal) => {
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str(concat!("a ", $what, " string with a unit"))
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$name, E> {
                        $parse(s).map($name).map_err(|m| E::custom(format!("{s:?}: {m}")))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        Err(E::custom(format!("{v}: {} needs a unit, e.g. {}", article($what), example_for($what))))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_i64(v as i64)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$name, E> {
                        Err(E::custom(format!("{v}: {} needs a unit, e.g. {}", article($what), example_for($what))))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

fn article(what: &str) -> String {
    if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {what}")
    } else {
        format!("a {what}")
    }
}

fn example_for(what: &str) -> &'static str {
    match what {
        "duration" => "\"25us\"",
        "rate" => "\"10Gbps\"",
        "size" => "\"64KB\"",
        _ => "\"65pkt\" or \"300KB\"",
    }
}

unit_type!(Dur, Time, units::parse_duration, "duration");
unit_type!(Rate, u64, units::parse_rate, "rate");
unit_type!(Bytes, u64, units::parse_bytes, "size");
unit_type!(Amt, Amount, units::parse_threshold, "amount");
unit_type!(BufAmt, Amount, units::parse_amount, "amount");

// Serialised, every value has one spelling that parses back to it, so the
// resolved config (`Config::resolved_json`) is a canonical form: two files
// that describe one run serialise alike.
impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&units::fmt_duration(self.0))
    }
}
impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&units::fmt_rate(self.0))
    }
}
impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}B", self.0))
    }
}
impl Serialize for Amt {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}
impl Serialize for BufAmt {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

/// One value for all, or a list with one per item (queue, host, port).
#[derive(Clone, Debug, PartialEq)]
pub enum OneOrList<T> {
    All(T),
    List(Vec<T>),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrList<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = OneOrList<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("one value or a list of them")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                T::deserialize(de::value::StrDeserializer::<E>::new(s)).map(OneOrList::All)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                T::deserialize(de::value::I64Deserializer::<E>::new(v)).map(OneOrList::All)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                T::deserialize(de::value::U64Deserializer::<E>::new(v)).map(OneOrList::All)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = seq.next_element()? {
                    v.push(x);
                }
                Ok(OneOrList::List(v))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl<T: Serialize> Serialize for OneOrList<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            OneOrList::All(x) => x.serialize(s),
            OneOrList::List(v) => v.serialize(s),
        }
    }
}

/// A flow size: bytes, or "infinite" for a long-lived flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlowSize {
    Infinite,
    Bytes(u64),
}

impl<'de> Deserialize<'de> for FlowSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FlowSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"infinite\" or a size such as \"64KB\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<FlowSize, E> {
                if s == "infinite" {
                    return Ok(FlowSize::Infinite);
                }
                match units::parse_bytes(s) {
                    Ok(0) => Err(E::custom(format!("{s:?}: a flow must carry at least one byte"))),
                    Ok(b) => Ok(FlowSize::Bytes(b)),
                    Err(m) => Err(E::custom(format!("{s:?}: {m}, or \"infinite\""))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for FlowSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            FlowSize::Infinite => s.serialize_str("infinite"),
            FlowSize::Bytes(b) => s.serialize_str(&format!("{b}B")),
        }
    }
}

/// Incast senders: a count (hosts 1..=n, skipping the receiver) or explicit ids.
#[derive(Clone, Debug, PartialEq)]
pub enum Senders {
    Count(u32),
    List(Vec<u32>),
}

impl<'de> Deserialize<'de> for Senders {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Senders;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of senders or a list of host ids")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Senders, E> {
                u32::try_from(v).map(Senders::Count).map_err(|_| E::custom("too many senders"))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Senders, E> {
                if v < 0 {
                    return Err(E::custom(format!("{v}: must be a positive count")));
                }
                self.visit_u64(v as u64)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Senders, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = seq.next_element()? {
                    v.push(x);
                }
                Ok(Senders::List(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Senders {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Senders::Count(n) => s.serialize_u32(*n),
            Senders::List(v) => v.serialize(s),
        }
    }
}

/// A unit enum read from its name alone, so that any other kind of value
/// (a list, a table, a number) gets "expected one of ..." instead of the
/// derived impl's bare "expected value".
macro_rules! by_name {
    ($ty:ident { $($v:ident => $name:literal),+ $(,)? }) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                const NAMES: &[&str] = &[$($name),+];
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "one of {}", NAMES.join(", "))
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        match s {
                            $($name => Ok($ty::$v),)+
                            _ => Err(E::unknown_variant(s, NAMES)),
                        }
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

by_name!(TopologyKind { Star => "star", LeafSpine => "leaf-spine", FatTree => "fat-tree" });
by_name!(Preset { Mqecn => "mqecn", Cedm => "cedm", Pfabric => "pfabric", Fqcodel => "fqcodel" });
by_name!(SchedulerKind { Sp => "sp", Wrr => "wrr", Dwrr => "dwrr", SpDwrr => "sp-dwrr", Wfq => "wfq" });
by_name!(QdiscKind { Composed => "composed", FqCodel => "fq-codel", Pfabric => "pfabric" });
by_name!(MarkingKind { None => "none", PerQueue => "per-queue", PerQueueMin => "per-queue-min", PerPort => "per-port", PerPool => "per-pool", MqEcn => "mq-ecn", Cedm => "cedm", Red => "red", Tcn => "tcn", MmEcn => "mm-ecn", AEcn => "a-ecn", DemePro => "deme-pro", Pmsb => "pmsb", MlEcn => "ml-ecn", Codel => "codel" });
by_name!(StageBy { Sent => "sent", Size => "size" });
by_name!(MmecnPosition { Front => "front", Tail => "tail" });
by_name!(DemeproShare { Occupancy => "occupancy", Threshold => "threshold" });
by_name!(PmsbShare { All => "all", Active => "active" });
by_name!(CcKind { Reno => "reno", EcnStar => "ecn-star", Dctcp => "dctcp", Pfabric => "pfabric" });
by_name!(Profile { Pfabric => "pfabric" });
by_name!(CaKind { Standard => "standard", Basic => "basic" });
by_name!(WorkloadKind { Poisson => "poisson" });
by_name!(FctEnd { Receiver => "receiver", Sender => "sender" });
by_name!(Connections { PerFlow => "per-flow", PerPair => "per-pair" });
by_name!(Arrivals { Poisson => "poisson", Ns2 => "ns2" });
by_name!(ServiceMapping { ByPair => "by-pair", Weighted => "weighted", BySource => "by-source" });

// ---------- sections ----------

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub run: RunCfg,
    pub topology: TopologyCfg,
    #[serde(default)]
    pub switch: SwitchCfg,
    #[serde(default)]
    pub transport: TransportCfg,
    /// Batching at the hosts: segmentation offload, receive coalescing.
    #[serde(default)]
    pub host: HostCfg,
    #[serde(default)]
    pub flows: Vec<FlowCfg>,
    #[serde(default)]
    pub ping: Vec<PingCfg>,
    #[serde(default)]
    pub incast: Vec<IncastCfg>,
    /// Background traffic drawn from flow-size distributions.
    pub workload: Option<WorkloadCfg>,
    /// Overrides of `[switch]` for switch-to-switch (fabric) ports.
    pub fabric: Option<FabricCfg>,
    /// Host NICs' egress queues as `[switch]` with these overrides; absent,
    /// a NIC is one FIFO that never drops (TCP small queues bound it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic: Option<FabricCfg>,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunCfg {
    #[serde(default = "one")]
    pub seed: u64,
    /// Simulated time to run. Optional when every flow is finite (sized
    /// flows, a Poisson workload): the run then ends when the last one
    /// finishes, and a duration given is a cap.
    #[serde(default)]
    pub duration: Option<Dur>,
    /// Left out of goodput, queue and RTT statistics.
    #[serde(default = "zero_dur")]
    pub warmup: Dur,
    /// Queue-length sampling period.
    #[serde(default = "default_sample")]
    pub sample_interval: Dur,
    /// Bin width of the goodput time series.
    #[serde(default = "default_goodput_bin")]
    pub goodput_interval: Dur,
    /// Ports whose queues are sampled: "auto" (every switch port when there
    /// are at most 64, else none), "all", "none", "hosts" (switch ports that
    /// face hosts), or a list of "node:peer" names such as "leaf0:host3".
    #[serde(default = "default_sample_ports")]
    pub sample_ports: OneOrList<String>,
    /// Switch ports handle a departure when something next looks at the
    /// port instead of with a TxDone event of its own (a quarter fewer
    /// events). false schedules every TxDone, for cross-checking: the two
    /// differ only in the order of packets that reach one port at the
    /// same picosecond over different links.
    #[serde(default = "yes")]
    pub lazy_departures: bool,
    /// Switch ports ("node:peer", as in sample_ports) whose sent packets
    /// are written to one pcap file each.
    #[serde(default = "no_ports", skip_serializing_if = "is_no_ports")]
    pub pcap: OneOrList<String>,
    /// Switch ports ("node:peer") whose every enqueue and dequeue is
    /// written, with the queue's occupancy, to the `trace` table: the fine
    /// queue evolution of CEDM Figs. 3 and 8.
    #[serde(default = "no_ports", skip_serializing_if = "is_no_ports")]
    pub trace_ports: OneOrList<String>,
    /// The window traced, [from, to): default the whole run after warmup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_from: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_to: Option<Dur>,
    /// Budget for what a run writes and holds, estimated before it starts
    /// (see `budget.rs`). Left out of the resolved form at its default, as
    /// `pcap` is when empty, so configs without them resolve as before.
    #[serde(default = "default_max_output", skip_serializing_if = "is_default_max_output")]
    pub max_output: Bytes,
    /// Where a sized flow's completion time ends: "receiver" (its last
    /// byte arrives) or "sender" (its last byte is acknowledged, as the
    /// MQ-ECN authors' ns-2 scripts measure it). Left out of the resolved
    /// form at its default.
    #[serde(default, skip_serializing_if = "FctEnd::is_receiver")]
    pub fct_end: FctEnd,
}

/// `run.fct_end`: the event that completes a sized flow.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum FctEnd {
    /// The receiver has every byte in order.
    #[default]
    Receiver,
    /// The sender has every byte acknowledged (ns-2's `done_data`).
    Sender,
}

impl FctEnd {
    fn is_receiver(&self) -> bool {
        *self == FctEnd::Receiver
    }
}

/// `workload.connections`: how workload flows get a TCP connection.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Connections {
    /// A new connection per flow, opened with a handshake.
    #[default]
    PerFlow,
    /// The MQ-ECN authors' ns-2 set-up: persistent connections per
    /// ordered host pair (see `host/persistent.rs`).
    PerPair,
}

impl Connections {
    fn is_per_flow(&self) -> bool {
        *self == Connections::PerFlow
    }
}

/// `workload.arrivals`: how workload flows' start times, pairs and sizes
/// are drawn.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// One Poisson stream for all flows from ecnlab's generator: every
    /// flow independent of the others.
    #[default]
    Poisson,
    /// The MQ-ECN authors' ns-2 script: a Poisson process per ordered host
    /// pair from ns-2's generator seeded as they seed it, which makes
    /// neighbouring pairs draw nearly the same values (see `ns2_arrivals.rs`).
    Ns2,
}

impl Arrivals {
    fn is_poisson(&self) -> bool {
        *self == Arrivals::Poisson
    }
}

fn default_sample_ports() -> OneOrList<String> {
    OneOrList::All("auto".into())
}
fn no_ports() -> OneOrList<String> {
    OneOrList::List(Vec::new())
}
fn is_no_ports(p: &OneOrList<String>) -> bool {
    matches!(p, OneOrList::List(l) if l.is_empty())
}
/// `run.max_output`'s default: 10 GB.
pub const DEFAULT_MAX_OUTPUT: u64 = 10_000_000_000;
fn default_max_output() -> Bytes {
    Bytes(DEFAULT_MAX_OUTPUT)
}
fn is_default_max_output(b: &Bytes) -> bool {
    b.0 == DEFAULT_MAX_OUTPUT
}

fn one() -> u64 {
    1
}
fn zero_dur() -> Dur {
    Dur(0)
}
fn default_sample() -> Dur {
    Dur(100 * 1_000_000)
}
fn default_goodput_bin() -> Dur {
    Dur(1_000_000_000)
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    Star,
    LeafSpine,
    FatTree,
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// MQ-ECN §5.2: 12 leaves × 12 hosts, 12 spines, 10G, 85.2 us.
    Mqecn,
    /// CEDM §V: 9 leaves × 16 hosts, 4 spines, 10G down, 40G up.
    Cedm,
    /// pFabric's topology (same as CEDM's).
    Pfabric,
    /// FQ-CoDel in the DCN §IV-A: pFabric downscaled to 32 hosts.
    Fqcodel,
}

/// How a switch picks among equal-cost next hops (see `ecmp.rs`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum EcmpMode {
    /// A per-switch salted hash of the flow: one path per flow, in order.
    #[default]
    PerFlow,
    /// A fresh draw for every packet at every switch: reorders.
    PerPacket,
    /// The MQ-ECN authors' ns-2 classifier: one unsalted hash of the host
    /// pair, the same at every switch (see `ecmp.rs`).
    Ns2,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyCfg {
    pub kind: Option<TopologyKind>,
    /// Fills every key not given here (leaf-spine).
    pub preset: Option<Preset>,
    /// Star: number of hosts.
    pub hosts: Option<u32>,
    /// Host link rate: one for all, or one per host (star).
    pub link_rate: Option<OneOrList<Rate>>,
    /// Switch-to-switch link rate (default: link_rate).
    pub uplink_rate: Option<Rate>,
    pub link_delay: Option<Dur>,
    /// Extra one-way delay on every host link (the MQ-ECN scripts' host delay).
    pub host_delay: Option<Dur>,
    pub leaves: Option<u32>,
    pub spines: Option<u32>,
    pub hosts_per_leaf: Option<u32>,
    /// Fat-tree arity: k pods, k³/4 hosts.
    pub k: Option<u32>,
    /// Equal-cost multipath: "per-flow" (default), "per-packet" or "ns2".
    #[serde(default)]
    pub ecmp: EcmpMode,
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    Sp,
    Wrr,
    Dwrr,
    SpDwrr,
    /// Weighted fair queueing (self-clocked), weights from `quantum`.
    Wfq,
}

/// A port's queue discipline: the composed one (queues, scheduler,
/// marking, buffer), or a whole design of its own.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum QdiscKind {
    #[default]
    Composed,
    /// FQ-CoDel (RFC 8290): fq_flows, fq_quantum, fq_limit, codel_*.
    FqCodel,
    /// pFabric's priority queue (shortest remaining first) in `buffer`.
    Pfabric,
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MarkingKind {
    None,
    PerQueue,
    PerQueueMin,
    PerPort,
    PerPool,
    MqEcn,
    /// CEDM: K1 = threshold, K2 = cedm_k2, slope weight cedm_ws.
    Cedm,
    /// RED on an average queue: red_min, red_max, red_pmax, red_wq.
    Red,
    /// TCN: sojourn time over tcn_threshold, at dequeue.
    Tcn,
    /// ML-ECN: per-class marking (small: K; medium, large: mlecn_levels
    /// levels), with queues chosen by stage (small_queues, ...).
    MlEcn,
    /// MM-ECN-like (a reconstruction): K_high = threshold, a random band
    /// from mmecn_k_low, front (dequeue) or tail position.
    MmEcn,
    /// A-ECN-like (a reconstruction): per-queue K adapted every aecn_epoch
    /// enqueues between aecn_k_min and threshold.
    AEcn,
    /// DemePro: port total over threshold marks the head of the queue
    /// furthest above its fair share.
    DemePro,
    /// PMSB: port total over threshold and the queue over its blindness
    /// threshold.
    Pmsb,
    /// CoDel (RFC 8289) per queue on sojourn time: codel_target,
    /// codel_interval, codel_ecn.
    Codel,
}

/// Where MM-ECN judges: the departing packet (front) or the arriving one.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MmecnPosition {
    Front,
    Tail,
}

/// What DemePro's fair share of a queue is a share of.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum DemeproShare {
    Occupancy,
    Threshold,
}

/// Which queues split PMSB's threshold into blindness thresholds.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PmsbShare {
    All,
    Active,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchCfg {
    /// The discipline: "composed" (the keys below), or a whole one,
    /// "fq-codel" or "pfabric", which takes only `buffer` and its own keys.
    #[serde(default, skip_serializing_if = "is_composed")]
    pub qdisc: QdiscKind,
    /// Per-port buffer shared first-come-first-serve by its queues: bytes
    /// ("300KB", "200pkt") or a count of packets of any size ("200 packets").
    /// FQ-CoDel takes it as Linux's memory_limit, pFabric as its buffer.
    #[serde(default = "default_buffer")]
    pub buffer: BufAmt,
    #[serde(default = "one_u32")]
    pub queues: u32,
    #[serde(default = "default_scheduler")]
    pub scheduler: SchedulerKind,
    /// Bytes a queue may send per round (WRR, DWRR), or its weight (WFQ):
    /// one value or one per queue.
    #[serde(default = "default_quantum")]
    pub quantum: OneOrList<Bytes>,
    /// Strict-priority queues above the DWRR group (sp-dwrr only).
    #[serde(default = "one_u32")]
    pub sp_queues: u32,
    #[serde(default = "default_marking")]
    pub marking: MarkingKind,
    /// The standard threshold K, or with per-queue marking a list, one per queue.
    pub threshold: Option<OneOrList<Amt>>,
    #[serde(default)]
    pub dequeue_marking: bool,
    /// Drop a Not-ECT packet whenever an ECT one would be marked (Tuning ECN §6).
    #[serde(default)]
    pub drop_not_ect: bool,
    /// MQ-ECN's EWMA gain β for T_round (MQ-ECN §5: 0.75).
    #[serde(default = "default_beta")]
    pub mqecn_beta: f64,
    /// MQ-ECN's idle slot T_idle; default one packet time at the port's rate.
    pub mqecn_idle: Option<Dur>,
    /// CEDM's upper threshold K2 (≥ threshold = K1); the paper's guideline
    /// for two senders with LSO is K2 = 5/4·K1 + C·d/4 (CEDM §IV-C).
    pub cedm_k2: Option<Amt>,
    /// CEDM's slope EWMA weight w_s (CEDM §IV-C: 0.129).
    #[serde(default = "default_cedm_ws")]
    pub cedm_ws: f64,
    /// RED's thresholds on the average queue (marking "red", or "mq-ecn"
    /// for MQ-ECN's probabilistic variant, §3.4) and its top probability.
    pub red_min: Option<Amt>,
    pub red_max: Option<Amt>,
    pub red_pmax: Option<f64>,
    /// RED's averaging weight w_q (Floyd & Jacobson §11: 0.002; 1 follows
    /// the instantaneous queue).
    #[serde(default = "default_red_wq")]
    pub red_wq: f64,
    /// Probability rising from red_pmax to 1 between red_max and 2·red_max.
    #[serde(default)]
    pub red_gentle: bool,
    /// Space marks by the count since the last one (RED §7).
    #[serde(default = "yes")]
    pub red_spacing: bool,
    /// TCN's sojourn-time threshold (K/C: 84 packets at 10 Gbps = 100.8us).
    pub tcn_threshold: Option<Dur>,
    /// MM-ECN's random band starts here (default threshold/2); its marking
    /// probability at threshold (default 1); "front" (default) or "tail".
    pub mmecn_k_low: Option<Amt>,
    pub mmecn_pmax: Option<f64>,
    pub mmecn_position: Option<MmecnPosition>,
    /// A-ECN's epoch in enqueued packets (default 64), its threshold's steps
    /// up and down (default "1pkt" each) and its floor (default "2pkt").
    pub aecn_epoch: Option<u32>,
    pub aecn_up: Option<Amt>,
    pub aecn_down: Option<Amt>,
    pub aecn_k_min: Option<Amt>,
    /// DemePro's fair share: of the port's occupancy (default) or of K.
    pub demepro_share: Option<DemeproShare>,
    /// PMSB's blindness thresholds split K among all queues (default) or
    /// the backlogged ones.
    pub pmsb_share: Option<PmsbShare>,
    /// ML-ECN's queue classes (Alg. 1): the queues of each class. Given,
    /// they classify packets by stage tag (host.stages), not by service.
    pub small_queues: Option<Vec<u32>>,
    pub medium_queues: Option<Vec<u32>>,
    pub large_queues: Option<Vec<u32>>,
    /// The stages each class takes (default: stage 1 small, the last
    /// stage large, those between medium).
    pub small_stages: Option<Vec<u32>>,
    pub medium_stages: Option<Vec<u32>>,
    pub large_stages: Option<Vec<u32>>,
    /// ML-ECN's number of threshold levels L (ML-ECN §IV: 4).
    #[serde(default = "default_levels")]
    pub mlecn_levels: u32,
    /// FQ-CoDel's hash buckets (default 1024), DRR quantum in bytes on the
    /// wire (default 1514B) and limit in packets (default 10240): Linux's
    /// and RFC 8290's defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_flows: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_quantum: Option<Bytes>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_limit: Option<u64>,
    /// CoDel's target and interval (RFC 8289: 5ms and 100ms; the FQ-CoDel
    /// DCN paper, §IV: 5us and 100us), and whether ECT packets are marked
    /// instead of dropped (default true, as Linux's fq_codel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel_target: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel_interval: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel_ecn: Option<bool>,
}

fn is_composed(q: &QdiscKind) -> bool {
    *q == QdiscKind::Composed
}

/// FQ-CoDel's and CoDel's defaults (Linux sch_fq_codel.c, RFC 8289 §4.2-4.3).
pub const FQ_FLOWS: u32 = 1024;
pub const FQ_QUANTUM: u64 = 1514;
pub const FQ_LIMIT: u64 = 10_240;
pub const CODEL_TARGET: Time = 5_000_000_000;
pub const CODEL_INTERVAL: Time = 100_000_000_000;

/// One ML-ECN class's name, queues and stages.
type ClassKeys<'a> = (&'static str, &'a Option<Vec<u32>>, &'a Option<Vec<u32>>);

fn default_levels() -> u32 {
    4
}

fn default_cedm_ws() -> f64 {
    0.129
}
fn default_red_wq() -> f64 {
    0.002
}
fn one_u32() -> u32 {
    1
}
fn default_buffer() -> BufAmt {
    BufAmt(Amount::Bytes(300_000))
}
fn default_scheduler() -> SchedulerKind {
    SchedulerKind::Dwrr
}
fn default_quantum() -> OneOrList<Bytes> {
    OneOrList::All(Bytes(1500))
}
fn default_marking() -> MarkingKind {
    MarkingKind::None
}
fn default_beta() -> f64 {
    0.75
}

impl Default for SwitchCfg {
    fn default() -> Self {
        SwitchCfg {
            buffer: default_buffer(),
            queues: 1,
            scheduler: default_scheduler(),
            quantum: default_quantum(),
            sp_queues: 1,
            marking: default_marking(),
            threshold: None,
            dequeue_marking: false,
            drop_not_ect: false,
            mqecn_beta: default_beta(),
            mqecn_idle: None,
            cedm_k2: None,
            cedm_ws: default_cedm_ws(),
            red_min: None,
            red_max: None,
            red_pmax: None,
            red_wq: default_red_wq(),
            red_gentle: false,
            red_spacing: true,
            tcn_threshold: None,
            mmecn_k_low: None,
            mmecn_pmax: None,
            mmecn_position: None,
            aecn_epoch: None,
            aecn_up: None,
            aecn_down: None,
            aecn_k_min: None,
            demepro_share: None,
            pmsb_share: None,
            small_queues: None,
            medium_queues: None,
            large_queues: None,
            small_stages: None,
            medium_stages: None,
            large_stages: None,
            mlecn_levels: default_levels(),
            qdisc: QdiscKind::Composed,
            fq_flows: None,
            fq_quantum: None,
            fq_limit: None,
            codel_target: None,
            codel_interval: None,
            codel_ecn: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CcKind {
    Reno,
    EcnStar,
    Dctcp,
    /// pFabric's minimal rate control (ns-2 MinTCP): see `host/pfabric.rs`.
    Pfabric,
}

/// A named set of TCP settings (`transport.profile`, see `profiles.rs`).
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// FQ-CoDel in the DCN, Table II: the pFabric authors' ns-2 settings.
    Pfabric,
}

/// Congestion avoidance growth (ns-2 `windowOption_`).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CaKind {
    /// cwnd += acked segments / cwnd (RFC 5681; ns-2 windowOption_ 1).
    #[default]
    Standard,
    /// One whole segment once a window's worth has been acknowledged
    /// (ns-2 windowOption_ 0).
    Basic,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TransportCfg {
    #[serde(default = "default_cc")]
    pub cc: CcKind,
    /// A tuning profile: fills every key of its table left out here (see
    /// `profiles.rs`). Resolved when the config is read; the resolved
    /// config keeps the name and shows every value it applied.
    pub profile: Option<Profile>,
    /// Initial congestion window, in segments.
    #[serde(default = "default_iw")]
    pub init_cwnd: u32,
    #[serde(default = "default_min_rto")]
    pub min_rto: Dur,
    /// RTO before any RTT sample (SYN, first data); defaults to min_rto.
    pub init_rto: Option<Dur>,
    #[serde(default = "default_max_rto")]
    pub max_rto: Dur,
    /// Clock granularity G (ns-2 tcpTick_): the RTO is srtt + max(G,
    /// 4·rttvar), rounded up to a whole number of ticks (RFC 6298 §2).
    /// Left out: no clock, timers in exact time.
    pub clock_granularity: Option<Dur>,
    /// Receive window in packets (ns-2 window_): the flight never exceeds
    /// this many full segments. Left out: unlimited.
    pub rx_window: Option<u32>,
    /// Largest cwnd in segments (ns-2 maxcwnd_): growth stops there.
    /// Left out: unlimited.
    pub max_cwnd: Option<u32>,
    /// Congestion avoidance: "standard" or "basic" (ns-2 windowOption_).
    #[serde(default)]
    pub ca: CaKind,
    /// Payload bytes per full segment.
    #[serde(default = "default_mss")]
    pub mss: u32,
    /// Header bytes added to every packet (ns-2 counts 40).
    #[serde(default = "default_header")]
    pub header: u32,
    /// ACK every n-th data packet; 1 = every packet (the papers' default).
    #[serde(default = "one_u32")]
    pub delayed_ack: u32,
    /// Longest an ACK may be held back.
    #[serde(default = "default_delack")]
    pub delayed_ack_timeout: Dur,
    /// Count what is unacknowledged in bytes, as ns-2's FullTcp does: the
    /// ACK goes once delayed_ack full segments' worth has arrived, so a
    /// shorter segment (a flow's tail) waits for more data or the timer.
    /// Off: every delayed_ack-th packet, whatever its size.
    #[serde(default)]
    pub delayed_ack_bytes: bool,
    /// DCTCP's EWMA gain g (DCTCP paper: 1/16).
    #[serde(default = "default_g")]
    pub dctcp_g: f64,
    /// DCTCP's α before the first window (Linux starts at 1).
    #[serde(default = "one_f64")]
    pub dctcp_alpha_init: f64,
    /// Collapse cwnd to the initial window after an idle RTO (RFC 5681 §4.1).
    #[serde(default)]
    pub slow_start_restart: bool,
    /// Send retransmissions as ECT, as Tuning ECN §6 recommends for data
    /// centers (and ns-2 does); false follows RFC 3168 (Not-ECT).
    #[serde(default = "yes")]
    pub ect_retransmits: bool,
    /// Bytes of one connection's data allowed to wait in its host's NIC
    /// queue before it pauses (Linux TCP small queues, whose floor is two
    /// packets); a NIC drops nothing unless `[nic]` gives it a discipline
    /// that does. Raise it to model deeper host queues.
    #[serde(default = "default_host_queue")]
    pub host_queue_limit: Bytes,
}

fn yes() -> bool {
    true
}
fn default_host_queue() -> Bytes {
    Bytes(3_000)
}
fn default_cc() -> CcKind {
    CcKind::Dctcp
}
fn default_iw() -> u32 {
    10
}
fn default_min_rto() -> Dur {
    Dur(5_000_000_000)
}
fn default_max_rto() -> Dur {
    Dur(60 * units::PS_PER_S)
}
fn default_mss() -> u32 {
    1460
}
fn default_header() -> u32 {
    40
}
fn default_delack() -> Dur {
    Dur(1_000_000_000)
}
fn default_g() -> f64 {
    1.0 / 16.0
}
fn one_f64() -> f64 {
    1.0
}

impl Default for TransportCfg {
    fn default() -> Self {
        serde_json::from_str("{}").expect("transport defaults")
    }
}

impl TransportCfg {
    pub fn packet_bytes(&self) -> u64 {
        (self.mss + self.header) as u64
    }
    pub fn init_rto(&self) -> Time {
        self.init_rto.map(|d| d.0).unwrap_or(self.min_rto.0)
    }
}

/// `[host]`: the batching of a host's network stack (CEDM §II-A), all off
/// by default. See `host/lso.rs`, `host/coalesce.rs` and `host/gro.rs`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HostCfg {
    /// TCP hands the NIC segments of several packets (LSO/TSO), deferring
    /// a send until a large enough one is allowed.
    #[serde(default)]
    pub lso: bool,
    /// Largest segment, one header and its payload (Linux: 64 KB).
    #[serde(default = "default_lso_max")]
    pub lso_max: Bytes,
    /// β: sending stops deferring once the window allows this fraction of
    /// cwnd (Linux `tcp_tso_win_divisor` = 3).
    #[serde(default = "default_lso_fraction")]
    pub lso_fraction: f64,
    /// Longest a deferral lasts (CEDM Table I cond. 6: 2 ticks).
    #[serde(default = "default_lso_defer")]
    pub lso_defer_limit: Dur,
    /// Keep deferring in the CWR state after an ECN cut. Off by default:
    /// CWR is not the open state, so Linux (and CEDM Table I cond. 4) send
    /// at once there; on, only loss recovery stops deferring.
    #[serde(default)]
    pub lso_defer_in_cwr: bool,
    /// Receive interrupt coalescing: arrivals wait at most this long after
    /// the first unhandled one (0: every arrival is handled at once).
    #[serde(default = "zero_dur")]
    pub interrupt_coalescing: Dur,
    /// ...or until this many frames wait (0: no frame limit).
    #[serde(default)]
    pub interrupt_frames: u32,
    /// Receive offload: in-order packets of a flow handled in one batch
    /// merge into one segment, acknowledged once.
    #[serde(default)]
    pub gro: bool,
    /// Largest merged segment, one header and its payload.
    #[serde(default = "default_lso_max")]
    pub gro_max: Bytes,
    /// ML-ECN's elevation thresholds α_1 < α_2 < ... on a flow's bytes
    /// sent: data packets carry stage 1, 2, ... (ML-ECN §III-B-1; the
    /// paper's classes: ["100KB", "10MB"]). Empty: no tags.
    #[serde(default)]
    pub stages: Vec<Bytes>,
    /// What the stage counts: "sent" (bytes sent so far, the paper's tag)
    /// or "size" (the flow's whole size, known in advance: ML-ECN Fig. 2).
    #[serde(default)]
    pub stage_by: StageBy,
    /// Send only these stages' packets ECN-capable, so only they can be
    /// marked (ML-ECN Fig. 2); default all.
    pub ect_stages: Option<Vec<u32>>,
}

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum StageBy {
    #[default]
    Sent,
    Size,
}

fn default_lso_max() -> Bytes {
    Bytes(64_000)
}
fn default_lso_fraction() -> f64 {
    0.333
}
fn default_lso_defer() -> Dur {
    Dur(2 * units::PS_PER_S / 1000)
}

impl Default for HostCfg {
    fn default() -> Self {
        serde_json::from_str("{}").expect("host defaults")
    }
}

impl HostCfg {
    /// Receive batching is on.
    pub fn coalescing(&self) -> bool {
        self.interrupt_coalescing.0 > 0
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCfg {
    pub src: u32,
    pub dst: u32,
    #[serde(default)]
    pub service: u32,
    #[serde(default = "one_u32")]
    pub count: u32,
    #[serde(default = "infinite")]
    pub size: FlowSize,
    #[serde(default = "zero_dur")]
    pub start: Dur,
    /// Long-lived flows stop sending new data here.
    pub stop: Option<Dur>,
    /// The `count` flows run one after another, each opened when its
    /// predecessor's data is all acknowledged at the sender: a client that
    /// opens a new connection per transfer (Tuning ECN §5.2's 20 KB flows).
    #[serde(default)]
    pub serial: bool,
    /// Serial flows: the pause between one flow's last ACK and the next
    /// flow's SYN (an application's think time between transfers).
    #[serde(default = "zero_dur")]
    pub serial_gap: Dur,
    /// "fixed": every pause is serial_gap; "exponential": each is drawn
    /// with mean serial_gap from the seed (Poisson-spaced transfers).
    #[serde(default = "fixed_gap")]
    pub serial_gap_kind: GapKind,
    /// The application writes its data at this rate (a stream: video,
    /// games; FQ-CoDel in the DCN §III-B), one full segment at a time, so
    /// the flow never sends faster; unset, it hands TCP all at once.
    pub rate: Option<Rate>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum GapKind {
    Fixed,
    Exponential,
}

fn fixed_gap() -> GapKind {
    GapKind::Fixed
}

fn infinite() -> FlowSize {
    FlowSize::Infinite
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PingCfg {
    pub src: u32,
    pub dst: u32,
    #[serde(default)]
    pub service: u32,
    pub interval: Dur,
    #[serde(default = "zero_dur")]
    pub start: Dur,
    /// Probe size on the wire.
    #[serde(default = "default_ping_size")]
    pub size: Bytes,
}

fn default_ping_size() -> Bytes {
    Bytes(64)
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IncastCfg {
    pub receiver: u32,
    pub senders: Senders,
    pub block: Bytes,
    pub rounds: u32,
    #[serde(default)]
    pub service: u32,
    #[serde(default = "zero_dur")]
    pub start: Dur,
    /// Time between the receiver's consecutive requests in a round (its
    /// send loop); 0: all leave at once.
    #[serde(default = "zero_dur")]
    pub request_gap: Dur,
    /// Each sender answers after a seeded random delay, uniform in
    /// [0, response_jitter), drawn anew every round (host latency).
    #[serde(default = "zero_dur")]
    pub response_jitter: Dur,
}

/// Keys of `[switch]` that fabric ports (`[fabric]`) or host NICs (`[nic]`)
/// may set differently.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FabricCfg {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qdisc: Option<QdiscKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_flows: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_quantum: Option<Bytes>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_limit: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel_target: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel_interval: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel_ecn: Option<bool>,
    pub buffer: Option<BufAmt>,
    pub scheduler: Option<SchedulerKind>,
    pub quantum: Option<OneOrList<Bytes>>,
    pub sp_queues: Option<u32>,
    pub marking: Option<MarkingKind>,
    pub threshold: Option<OneOrList<Amt>>,
    pub dequeue_marking: Option<bool>,
    pub drop_not_ect: Option<bool>,
    pub mqecn_beta: Option<f64>,
    pub mqecn_idle: Option<Dur>,
    pub cedm_k2: Option<Amt>,
    pub cedm_ws: Option<f64>,
    pub red_min: Option<Amt>,
    pub red_max: Option<Amt>,
    pub red_pmax: Option<f64>,
    pub red_wq: Option<f64>,
    pub red_gentle: Option<bool>,
    pub red_spacing: Option<bool>,
    pub tcn_threshold: Option<Dur>,
    pub mmecn_k_low: Option<Amt>,
    pub mmecn_pmax: Option<f64>,
    pub mmecn_position: Option<MmecnPosition>,
    pub aecn_epoch: Option<u32>,
    pub aecn_up: Option<Amt>,
    pub aecn_down: Option<Amt>,
    pub aecn_k_min: Option<Amt>,
    pub demepro_share: Option<DemeproShare>,
    pub pmsb_share: Option<PmsbShare>,
}

impl SwitchCfg {
    /// This switch config with a fabric (or NIC) override applied key by
    /// key. An override that changes the discipline inherits only `buffer`
    /// and `queues` and the keys the new discipline uses (FQ-CoDel's and
    /// CoDel's), the rest at their defaults: a composed `[switch]`'s
    /// marking means nothing to an FQ-CoDel NIC, and the reverse.
    pub fn with(&self, f: &FabricCfg) -> SwitchCfg {
        let mut s = match f.qdisc {
            Some(q) if q != self.qdisc => {
                let mut s = SwitchCfg { qdisc: q, buffer: self.buffer, queues: self.queues, ..SwitchCfg::default() };
                if q == QdiscKind::FqCodel {
                    (s.fq_flows, s.fq_quantum, s.fq_limit) = (self.fq_flows, self.fq_quantum, self.fq_limit);
                }
                if q == QdiscKind::FqCodel || f.marking == Some(MarkingKind::Codel) {
                    (s.codel_target, s.codel_interval, s.codel_ecn) =
                        (self.codel_target, self.codel_interval, self.codel_ecn);
                }
                s
            }
            _ => self.clone(),
        };
        macro_rules! take {
            ($($k:ident),*) => { $( if let Some(v) = &f.$k { s.$k = v.clone(); } )* };
        }
        take!(qdisc, buffer, scheduler, quantum, sp_queues, marking, dequeue_marking, drop_not_ect, mqecn_beta);
        // Fabric ports with a scheduler of their own have no strict queues
        // unless they say so: the switch's sp_queues belong to its sp-dwrr.
        if f.scheduler.is_some() && f.sp_queues.is_none() && s.scheduler != SchedulerKind::SpDwrr {
            s.sp_queues = one_u32();
        }
        take!(cedm_ws, red_wq, red_gentle, red_spacing);
        macro_rules! take_opt {
            ($($k:ident),*) => { $( if f.$k.is_some() { s.$k = f.$k.clone(); } )* };
        }
        take_opt!(threshold, mqecn_idle, cedm_k2, red_min, red_max, red_pmax, tcn_threshold);
        take_opt!(mmecn_k_low, mmecn_pmax, mmecn_position, aecn_epoch, aecn_up, aecn_down, aecn_k_min);
        take_opt!(demepro_share, pmsb_share);
        take_opt!(fq_flows, fq_quantum, fq_limit, codel_target, codel_interval, codel_ecn);
        s
    }

    /// CoDel is used: by FQ-CoDel, or as a composed queue's marking.
    pub fn uses_codel(&self) -> bool {
        self.qdisc == QdiscKind::FqCodel || (self.qdisc == QdiscKind::Composed && self.marking == MarkingKind::Codel)
    }

    /// The configured ML-ECN classes, by name: (key, queues, stages).
    fn class_keys(&self) -> [ClassKeys<'_>; 3] {
        [
            ("small", &self.small_queues, &self.small_stages),
            ("medium", &self.medium_queues, &self.medium_stages),
            ("large", &self.large_queues, &self.large_stages),
        ]
    }

    /// Packets are classified by stage (any class's queues are given).
    pub fn by_stage(&self) -> bool {
        self.class_keys().iter().any(|(_, q, _)| q.is_some())
    }

    /// ML-ECN's classes for hosts tagging `n` thresholds (stages 1..=n+1):
    /// the stages of each class, given or by default stage 1 small, stage
    /// n+1 large and those between medium. None without classes.
    pub fn stage_classes(&self, n: usize) -> Option<StageClasses> {
        if !self.by_stage() {
            return None;
        }
        let last = n as u32 + 1;
        let default = |c: usize| -> Vec<u32> {
            match c {
                0 => vec![1],
                1 => (2..last).collect(),
                _ => vec![last],
            }
        };
        let mut queues: [Vec<u8>; 3] = Default::default();
        let mut stages: [Vec<u8>; 3] = Default::default();
        for (c, (_, q, st)) in self.class_keys().into_iter().enumerate() {
            queues[c] = q.clone().unwrap_or_default().iter().map(|&x| x as u8).collect();
            stages[c] = st.clone().unwrap_or_else(|| default(c)).iter().map(|&x| x as u8).collect();
        }
        Some(StageClasses::new(queues, stages))
    }

    /// Any of RED's keys is given (with marking "mq-ecn": its probabilistic
    /// variant).
    pub fn red_keys(&self) -> bool {
        self.red_min.is_some() || self.red_max.is_some() || self.red_pmax.is_some()
    }

    /// Quantum of every queue, in bytes.
    pub fn quanta(&self) -> Vec<u64> {
        let n = self.queues as usize;
        match &self.quantum {
            OneOrList::All(b) => vec![b.0; n],
            OneOrList::List(l) => l.iter().map(|b| b.0).collect(),
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    Poisson,
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ServiceMapping {
    /// Host pairs are spread evenly over the services (MQ-ECN §5.2).
    ByPair,
    /// Each flow draws its service with `service_weights` (MQ-ECN §5.1.2).
    Weighted,
    /// The MQ-ECN authors' ns-2 script: every flow of source host h is in
    /// service (h + 1) mod services, and every host offers `load` with its
    /// service's distribution (so hosts of small-flow services start more
    /// flows). See `workload::Picker`.
    BySource,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadCfg {
    pub kind: WorkloadKind,
    /// Average utilisation of every host's access link, headers counted.
    pub load: f64,
    /// Flows to generate; the run ends when all have finished.
    pub flows: u64,
    #[serde(default = "one_u32")]
    pub services: u32,
    #[serde(default = "default_mapping")]
    pub service_mapping: ServiceMapping,
    pub service_weights: Option<Vec<f64>>,
    /// One distribution per service, or `distribution` for all of them:
    /// web_search, data_mining, cache, hadoop, mix, or a CSV path.
    pub distributions: Option<Vec<String>>,
    pub distribution: Option<String>,
    #[serde(default = "zero_dur")]
    pub start: Dur,
    /// Hosts that send workload flows (default: all). With `receivers`,
    /// a client fetching from servers: MQ-ECN §5.1.2's testbed.
    pub senders: Option<Vec<u32>>,
    /// Hosts that receive workload flows (default: all).
    pub receivers: Option<Vec<u32>>,
    /// Flow sizes above this are cut to it (FQ-CoDel in the DCN §IV-C caps
    /// data mining at 10^5 packets); the load accounts for the cut.
    pub max_size: Option<Bytes>,
    /// Fraction of the offered bytes carried by extra Poisson flows of one
    /// full packet (FQ-CoDel in the DCN §IV-C, Fig. 4: 0.01% to 10%); the
    /// sized flows carry the rest of `load`. `flows` counts the sized
    /// flows; the extra ones arrive over the same span.
    #[serde(default)]
    pub one_packet_share: f64,
    /// Fraction of the offered bytes carried by extra rate-limited flows
    /// (streams of `rate_limited_size` bytes, each written by its
    /// application at `rate_limited_rate`: FQ-CoDel in the DCN §III-B).
    #[serde(default)]
    pub rate_limited_share: f64,
    pub rate_limited_rate: Option<Rate>,
    pub rate_limited_size: Option<Bytes>,
    /// "per-flow" (default): a new connection, with a handshake, per flow;
    /// "per-pair": flows reuse persistent connections of their host pair
    /// (the MQ-ECN authors' ns-2 scripts; `host/persistent.rs`). Left out
    /// of the resolved form at its default.
    #[serde(default, skip_serializing_if = "Connections::is_per_flow")]
    pub connections: Connections,
    /// "poisson" (default) or "ns2": the authors' per-pair generator, to
    /// replay the flows of their §5.2 runs. Left out of the resolved form
    /// at its default.
    #[serde(default, skip_serializing_if = "Arrivals::is_poisson")]
    pub arrivals: Arrivals,
}

fn default_mapping() -> ServiceMapping {
    ServiceMapping::ByPair
}

impl WorkloadCfg {
    /// Host ids that send workload flows.
    pub fn sender_hosts(&self, hosts: u32) -> Vec<u32> {
        self.senders.clone().unwrap_or_else(|| (0..hosts).collect())
    }

    /// Host ids that receive workload flows.
    pub fn receiver_hosts(&self, hosts: u32) -> Vec<u32> {
        self.receivers.clone().unwrap_or_else(|| (0..hosts).collect())
    }

    /// The distribution name of each service.
    pub fn distribution_names(&self) -> Vec<String> {
        match (&self.distributions, &self.distribution) {
            (Some(l), _) => l.clone(),
            (None, Some(d)) => vec![d.clone(); self.services as usize],
            (None, None) => vec!["web_search".to_string(); self.services as usize],
        }
    }
}

// ---------- parsing ----------

impl Config {
    pub fn from_json(s: &str) -> Result<Config, ConfigError> {
        let de = &mut serde_json::Deserializer::from_str(s);
        let raw: Option<serde_json::Value> = serde_json::from_str(s).ok();
        let mut cfg: Config = serde_path_to_error::deserialize(de)
            .map_err(|e| raw.as_ref().and_then(section_shape).unwrap_or_else(|| path_error(e)))?;
        crate::profiles::apply(&mut cfg, &crate::profiles::given_keys(raw.as_ref()));
        cfg.topology = cfg.topology.resolved()?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn from_toml(s: &str) -> Result<Config, ConfigError> {
        // Through toml::Value so errors carry serde's key path, not a byte span.
        let value: toml::Value = toml::from_str(s).map_err(|e| ConfigError(format!("TOML syntax: {}", e.message())))?;
        let json = serde_json::to_value(&value).ok();
        let mut cfg: Config = serde_path_to_error::deserialize(value)
            .map_err(|e| json.as_ref().and_then(section_shape).unwrap_or_else(|| path_error(e)))?;
        crate::profiles::apply(&mut cfg, &crate::profiles::given_keys(json.as_ref()));
        cfg.topology = cfg.topology.resolved()?;
        cfg.validate()?;
        Ok(cfg)
    }
}

/// A section given as something other than a table: serde would read a
/// list into a struct field by field and blame a confusing key, so a
/// config that fails to parse is first checked for this.
fn section_shape(v: &serde_json::Value) -> Option<ConfigError> {
    use serde_json::Value;
    let what = |x: &Value| match x {
        Value::Array(_) => "a list".to_string(),
        Value::String(s) => format!("a string {s:?}"),
        Value::Number(n) => format!("a number ({n})"),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Null => "nothing".to_string(),
        Value::Object(_) => "a table".to_string(),
    };
    let top = v.as_object()?;
    for key in ["run", "topology", "switch", "transport", "host", "workload", "fabric", "nic"] {
        match top.get(key) {
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

fn path_error<E: fmt::Display>(e: serde_path_to_error::Error<E>) -> ConfigError {
    let path = e.path().to_string();
    let msg = e.inner().to_string();
    // serde_json appends " at line L column C", toml "\nin `key`"; the key
    // path says more.
    let msg = match msg.find(" at line ").or_else(|| msg.find("\nin `")) {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    let msg = nearest_fields(msg);
    if path == "." || path.is_empty() {
        ConfigError(msg)
    } else {
        ConfigError(format!("{path}: {msg}"))
    }
}

/// serde follows an unknown key with every key its table allows; [switch]
/// allows so many that the line would be hundreds of characters long, so a
/// long list is cut to the three keys nearest the one given (by edit
/// distance, ties in the table's order).
fn nearest_fields(msg: String) -> String {
    const LONG: usize = 200;
    let Some((given, list)) =
        msg.strip_prefix("unknown field `").and_then(|rest| rest.split_once("`, expected one of "))
    else {
        return msg;
    };
    if msg.len() <= LONG {
        return msg;
    }
    let keys: Vec<&str> = list.split(", ").map(|k| k.trim_matches('`')).collect();
    let mut near = keys.clone();
    near.sort_by_key(|k| edit_distance(given, k));
    let near: Vec<String> = near.iter().take(3).map(|k| format!("`{k}`")).collect();
    format!("unknown field `{given}`; of the {} keys allowed here the nearest are {}", keys.len(), near.join(", "))
}

/// Levenshtein distance: single-character insertions, deletions and
/// substitutions turning `a` into `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let next = (diag + (ca != cb) as usize).min(row[j] + 1).min(row[j + 1] + 1);
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

// ---------- cross-field validation ----------

impl Config {
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
    fn open_ended_traffic(&self) -> Option<String> {
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

    /// The config as the engine runs it, as JSON: presets expanded, every
    /// default filled in, each value in one canonical spelling. It parses
    /// back to the same run; two files describing one run give equal values
    /// (what a sweep's result store keys points by).
    pub fn resolved_json(&self) -> serde_json::Value {
        let mut c = self.clone();
        c.transport.init_rto.get_or_insert(c.transport.min_rto);
        c.switch.quantum = OneOrList::List(c.switch.quanta().into_iter().map(Bytes).collect());
        if let Some(w) = &mut c.workload {
            w.distributions = Some(w.distribution_names());
            w.distribution = None;
        }
        serde_json::to_value(&c).expect("a config always serialises")
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let r = &self.run;
        match r.duration {
            Some(Dur(0)) => return Err(bad("run.duration", "0s", "must be positive")),
            Some(d) if r.warmup.0 >= d.0 => {
                return Err(bad("run.warmup", fmt_t(r.warmup.0), "must be shorter than run.duration"))
            }
            Some(_) => {}
            None => {
                if let Some(why) = self.open_ended_traffic() {
                    return Err(ConfigError(format!(
                        "run.duration: missing; it may be left out only when every flow is finite, and {why}"
                    )));
                }
                if self.workload.is_none() && self.flows.is_empty() {
                    return Err(ConfigError(
                        "run.duration: missing; with no [workload] and no [[flows]] the run would have nothing to wait for".into(),
                    ));
                }
            }
        }
        // A queue or a goodput bin does not change within a nanosecond
        // (a 64-byte packet takes 51 ns at 10 Gbps); finer intervals only
        // multiply the output.
        for (key, d) in [("run.sample_interval", r.sample_interval), ("run.goodput_interval", r.goodput_interval)] {
            if d.0 < 1_000 {
                return Err(bad(key, fmt_dur(d.0), "must be at least 1ns"));
            }
        }
        if r.max_output.0 == 0 {
            return Err(bad("run.max_output", "0B", "must be positive, e.g. \"10GB\""));
        }
        let traced = !matches!(&r.trace_ports, OneOrList::List(l) if l.is_empty());
        for (key, t) in [("run.trace_from", r.trace_from), ("run.trace_to", r.trace_to)] {
            if t.is_some() && !traced {
                return Err(ConfigError(format!("{key}: set, but run.trace_ports names no port to trace")));
            }
        }
        if let (Some(a), Some(b)) = (r.trace_from, r.trace_to) {
            if b.0 <= a.0 {
                return Err(bad("run.trace_to", fmt_t(b.0), &format!("must be after run.trace_from ({})", fmt_t(a.0))));
            }
        }
        self.validate_topology()?;
        self.validate_switches()?;
        self.validate_transport()?;
        self.validate_host()?;
        self.validate_apps()?;
        self.validate_workload()?;
        crate::budget::check(self)
    }

    fn validate_workload(&self) -> Result<(), ConfigError> {
        let Some(w) = &self.workload else { return Ok(()) };
        if !(w.load > 0.0 && w.load <= 1.0) {
            return Err(bad("workload.load", w.load, "must lie in (0, 1]: the mean utilisation of each host link"));
        }
        if w.flows == 0 || w.flows > 50_000_000 {
            return Err(bad("workload.flows", w.flows, "must be 1 to 50000000"));
        }
        let q = self.switch.queues;
        if w.services == 0 || w.services > q {
            return Err(bad(
                "workload.services",
                w.services,
                &format!("must be 1 to switch.queues ({q}): each service has its own queue"),
            ));
        }
        if w.distributions.is_some() && w.distribution.is_some() {
            return Err(ConfigError(
                "workload.distribution: give either distribution (one for all services) or distributions (one per service), not both".into(),
            ));
        }
        if let Some(l) = &w.distributions {
            if l.len() != w.services as usize {
                return Err(bad(
                    "workload.distributions",
                    format!("a list of {}", l.len()),
                    &format!("needs one per service ({})", w.services),
                ));
            }
        }
        for (i, name) in w.distribution_names().iter().enumerate() {
            if let Err(m) = crate::workload::SizeDist::resolve(name) {
                let key = if w.distributions.is_some() {
                    format!("workload.distributions[{i}]")
                } else {
                    "workload.distribution".into()
                };
                return Err(ConfigError(format!("{key}: {m}")));
            }
        }
        match (w.service_mapping, &w.service_weights) {
            (ServiceMapping::ByPair | ServiceMapping::BySource, Some(_)) => {
                return Err(ConfigError(
                    "workload.service_weights: only used with service_mapping = \"weighted\"".into(),
                ));
            }
            (ServiceMapping::Weighted, Some(l)) => {
                if l.len() != w.services as usize {
                    return Err(bad(
                        "workload.service_weights",
                        format!("a list of {}", l.len()),
                        &format!("needs one weight per service ({})", w.services),
                    ));
                }
                if l.iter().any(|x| !(x.is_finite() && *x >= 0.0)) || l.iter().sum::<f64>() <= 0.0 {
                    return Err(bad(
                        "workload.service_weights",
                        format!("{l:?}"),
                        "weights must be >= 0 with a positive sum",
                    ));
                }
            }
            _ => {}
        }
        if self.hosts() < 2 {
            return Err(ConfigError("workload: needs at least 2 hosts".into()));
        }
        if w.max_size.is_some_and(|b| b.0 < self.transport.mss as u64) {
            let m = w.max_size.unwrap().0;
            return Err(bad(
                "workload.max_size",
                m,
                &format!("must be at least one segment (transport.mss = {})", self.transport.mss),
            ));
        }
        for (key, x) in [("one_packet_share", w.one_packet_share), ("rate_limited_share", w.rate_limited_share)] {
            if !(0.0..1.0).contains(&x) {
                return Err(bad(
                    &format!("workload.{key}"),
                    x,
                    "must lie in [0, 1): the fraction of the offered bytes",
                ));
            }
        }
        if w.one_packet_share + w.rate_limited_share >= 1.0 {
            return Err(bad(
                "workload.rate_limited_share",
                w.rate_limited_share,
                &format!(
                    "with one_packet_share = {} leaves no load for the sized flows; the two must sum below 1",
                    w.one_packet_share
                ),
            ));
        }
        let streams = w.rate_limited_share > 0.0;
        for (key, set) in
            [("rate_limited_rate", w.rate_limited_rate.is_some()), ("rate_limited_size", w.rate_limited_size.is_some())]
        {
            if streams != set {
                let why = if streams {
                    "is needed when rate_limited_share > 0"
                } else {
                    "is only used with rate_limited_share > 0"
                };
                return Err(ConfigError(format!("workload.{key}: {why}")));
            }
        }
        if w.rate_limited_size.is_some_and(|b| b.0 == 0) {
            return Err(bad("workload.rate_limited_size", "0B", "must be at least one byte"));
        }
        for (key, list) in [("senders", &w.senders), ("receivers", &w.receivers)] {
            let Some(l) = list else { continue };
            if l.is_empty() {
                return Err(bad(&format!("workload.{key}"), "[]", "needs at least one host (or leave it out for all)"));
            }
            for (i, &h) in l.iter().enumerate() {
                if h >= self.hosts() {
                    return Err(bad(
                        &format!("workload.{key}[{i}]"),
                        h,
                        &format!("no such host; hosts are 0..{}", self.hosts() - 1),
                    ));
                }
                if l[..i].contains(&h) {
                    return Err(bad(&format!("workload.{key}[{i}]"), h, "is listed twice"));
                }
            }
        }
        let (snd, rcv) = (w.sender_hosts(self.hosts()), w.receiver_hosts(self.hosts()));
        if snd.len() == 1 && rcv.len() == 1 && snd[0] == rcv[0] {
            return Err(bad(
                "workload.receivers",
                format!("[{}]", rcv[0]),
                "the only receiver is the only sender; a flow needs two hosts",
            ));
        }
        if w.service_mapping == ServiceMapping::BySource && (w.senders.is_some() || w.receivers.is_some()) {
            return Err(bad(
                "workload.service_mapping",
                "\"by-source\"",
                "every host sends with its own service; leave out workload.senders and workload.receivers, or use \"by-pair\" or \"weighted\"",
            ));
        }
        if w.arrivals == Arrivals::Ns2 {
            // The authors' script gives a pair the service ((dst + 1)·hosts +
            // src + 1) mod services, the source's whenever hosts is a
            // multiple of services: by-source is the mapping it belongs to.
            if w.service_mapping != ServiceMapping::BySource {
                return Err(bad(
                    "workload.arrivals",
                    "\"ns2\"",
                    "draws each host pair's flows with the authors' script's service, ((dst + 1)·hosts + src + 1) mod services (the source's when hosts is a multiple of services): needs service_mapping = \"by-source\"",
                ));
            }
            for (key, share) in [("one_packet_share", w.one_packet_share), ("rate_limited_share", w.rate_limited_share)]
            {
                if share > 0.0 {
                    return Err(bad(
                        &format!("workload.{key}"),
                        share,
                        "has no counterpart in arrivals = \"ns2\" (the script's flows only)",
                    ));
                }
            }
            if let Some(i) = w.distribution_names().iter().position(|n| n == "mix") {
                let key = if w.distributions.is_some() {
                    format!("workload.distributions[{i}]")
                } else {
                    "workload.distribution".into()
                };
                return Err(bad(
                    &key,
                    "\"mix\"",
                    "arrivals = \"ns2\" draws one size per uniform from one CDF; name a distribution",
                ));
            }
        }
        let pairs = self.hosts() as u64 * (self.hosts() as u64 - 1);
        if w.service_mapping == ServiceMapping::ByPair && w.services as u64 > pairs {
            return Err(bad(
                "workload.services",
                w.services,
                &format!("by-pair mapping needs at most as many services as host pairs ({pairs})"),
            ));
        }
        Ok(())
    }

    fn validate_topology(&self) -> Result<(), ConfigError> {
        self.topology.validate()
    }

    fn validate_switches(&self) -> Result<(), ConfigError> {
        let pkt = self.transport.packet_bytes();
        let stages = self.host.stages.len();
        validate_switch(&self.switch, "switch", pkt, stages)?;
        if let Some(f) = &self.fabric {
            validate_switch(&self.switch.with(f), "fabric", pkt, stages)?;
        }
        if let Some(n) = &self.nic {
            validate_switch(&self.switch.with(n), "nic", pkt, stages)?;
        }
        // pFabric's port orders by the priority its transport stamps; any
        // other transport stamps none, and the port would be a FIFO that
        // drops the newest arrival, not pFabric.
        if self.transport.cc != CcKind::Pfabric {
            let sections = [
                ("switch", Some(self.switch.clone())),
                ("fabric", self.fabric.as_ref().map(|f| self.switch.with(f))),
                ("nic", self.nic.as_ref().map(|n| self.switch.with(n))),
            ];
            for (sec, s) in sections {
                if s.is_some_and(|s| s.qdisc == QdiscKind::Pfabric) {
                    return Err(bad(
                        &format!("{sec}.qdisc"),
                        "\"pfabric\"",
                        &format!(
                            "pFabric's port schedules by the remaining-size priority its transport stamps on every packet; transport.cc = {} stamps none (use transport.cc = \"pfabric\")",
                            serde_json::to_string(&self.transport.cc).unwrap_or_default()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

fn validate_switch(s: &SwitchCfg, sec: &str, pkt: u64, stages: usize) -> Result<(), ConfigError> {
    if !(1..=64).contains(&s.queues) {
        return Err(bad(&format!("{sec}.queues"), s.queues, "must be 1 to 64"));
    }
    validate_whole(s, sec)?;
    let n = s.queues as usize;
    if let OneOrList::List(q) = &s.quantum {
        if q.len() != n {
            return Err(bad(
                &format!("{sec}.quantum"),
                format!("a list of {}", q.len()),
                &format!("needs one value per queue ({n})"),
            ));
        }
    }
    for (i, q) in s.quanta().iter().enumerate() {
        if *q == 0 {
            return Err(bad(&format!("{sec}.quantum[{i}]"), "0B", "must be positive"));
        }
    }
    if s.buffer.0.bytes(1) == 0 {
        return Err(bad(&format!("{sec}.buffer"), s.buffer.0, "must be positive"));
    }
    if s.scheduler == SchedulerKind::SpDwrr && !(1..s.queues).contains(&s.sp_queues) {
        return Err(bad(
            &format!("{sec}.sp_queues"),
            s.sp_queues,
            &format!("sp-dwrr needs 1 to {} strict queues (queues - 1)", s.queues.saturating_sub(1).max(1)),
        ));
    }
    if s.scheduler != SchedulerKind::SpDwrr && s.sp_queues != 1 {
        return Err(bad(
            &format!("{sec}.sp_queues"),
            s.sp_queues,
            &format!(
                "only sp-dwrr has strict queues ({sec}.scheduler is {}); leave sp_queues out",
                scheduler_name(s.scheduler)
            ),
        ));
    }
    if !(s.mqecn_beta > 0.0 && s.mqecn_beta < 1.0) {
        return Err(bad(&format!("{sec}.mqecn_beta"), s.mqecn_beta, "must lie strictly between 0 and 1"));
    }
    match (s.marking, &s.threshold) {
        (MarkingKind::None, _) if s.dequeue_marking => {
            return Err(bad(
                &format!("{sec}.dequeue_marking"),
                true,
                &format!("needs a marking scheme ({sec}.marking is \"none\")"),
            ));
        }
        (MarkingKind::None, _) => {}
        (m, _) if s.dequeue_marking && own_sides(m).is_some() => {
            return Err(bad(
                &format!("{sec}.dequeue_marking"),
                true,
                &format!(
                    "\"{}\" decides on its own sides ({}); leave dequeue_marking off",
                    marking_name(m),
                    own_sides(m).unwrap_or_default()
                ),
            ));
        }
        (MarkingKind::Red | MarkingKind::Tcn | MarkingKind::Codel, _) => {}
        (MarkingKind::MqEcn, None) if s.red_keys() => {}
        (m, None) => {
            return Err(ConfigError(format!(
                "{sec}.threshold: missing; marking \"{}\" needs the standard threshold K, e.g. \"65pkt\"",
                marking_name(m)
            )));
        }
        (MarkingKind::PerQueue, Some(OneOrList::List(l))) if l.len() != n => {
            return Err(bad(
                &format!("{sec}.threshold"),
                format!("a list of {}", l.len()),
                &format!("needs one value per queue ({n})"),
            ));
        }
        (m, Some(OneOrList::List(_))) if m != MarkingKind::PerQueue => {
            return Err(bad(
                &format!("{sec}.threshold"),
                "a list",
                &format!(
                    "only per-queue marking takes one threshold per queue; \"{}\" takes a single K",
                    marking_name(m)
                ),
            ));
        }
        _ => {}
    }
    if s.marking == MarkingKind::MqEcn && s.scheduler == SchedulerKind::Sp {
        return Err(bad(
            &format!("{sec}.marking"),
            "\"mq-ecn\"",
            "needs a weighted scheduler: wrr, dwrr, sp-dwrr (round-time estimate) or wfq (weight-sum estimate)",
        ));
    }
    if let Some(d) = s.mqecn_idle {
        if d.0 == 0 {
            return Err(bad(&format!("{sec}.mqecn_idle"), "0s", "must be positive"));
        }
    }
    validate_classes(s, sec, stages)?;
    validate_aqm(s, sec, pkt)
}

/// ML-ECN's classes (Alg. 1): every class has queues, no queue or stage is
/// in two classes, every stage the hosts tag has a class; and "ml-ecn"
/// marking has classes and at least one level.
fn validate_classes(s: &SwitchCfg, sec: &str, n: usize) -> Result<(), ConfigError> {
    let key = |k: &str| format!("{sec}.{k}");
    if !s.by_stage() {
        for (name, _, st) in s.class_keys() {
            if st.is_some() {
                return Err(ConfigError(format!(
                    "{sec}.{name}_stages: set, but no class has queues; give small_queues, medium_queues and large_queues"
                )));
            }
        }
        if s.marking == MarkingKind::MlEcn {
            return Err(ConfigError(format!(
                "{sec}.marking = \"ml-ecn\": needs the queue classes {sec}.small_queues, medium_queues and large_queues (and host.stages)"
            )));
        }
        if s.mlecn_levels != 4 {
            return Err(bad(&key("mlecn_levels"), s.mlecn_levels, "is ML-ECN's; set marking = \"ml-ecn\" to use it"));
        }
        return Ok(());
    }
    if n == 0 {
        return Err(ConfigError(format!(
            "{sec}.small_queues: classes choose queues by stage, but host.stages is empty (e.g. host.stages = [\"100KB\", \"10MB\"])"
        )));
    }
    let last = n as u32 + 1;
    let mut queue_owner: Vec<Option<&str>> = vec![None; s.queues as usize];
    let mut stage_owner: Vec<Option<&str>> = vec![None; last as usize + 1];
    let classes = s.stage_classes(n).expect("classes are given");
    for (name, q, st) in s.class_keys() {
        let qs = q.as_deref().unwrap_or_default();
        if qs.is_empty() {
            return Err(bad(
                &key(&format!("{name}_queues")),
                format!("{qs:?}"),
                "every class needs at least one queue",
            ));
        }
        for &x in qs {
            let k = key(&format!("{name}_queues"));
            match queue_owner.get_mut(x as usize) {
                None => {
                    return Err(bad(&k, x, &format!("queues are 0 to {} ({sec}.queues = {})", s.queues - 1, s.queues)))
                }
                Some(Some(other)) => {
                    return Err(bad(&k, x, &format!("queue {x} is already a {other} queue: a queue serves one class")))
                }
                Some(slot) => *slot = Some(name),
            }
        }
        if let Some(st) = st {
            for &x in st {
                let k = key(&format!("{name}_stages"));
                match stage_owner.get_mut(x as usize) {
                    Some(slot) if x >= 1 => {
                        if let Some(other) = slot {
                            return Err(bad(
                                &k,
                                x,
                                &format!("stage {x} is already {other}: a stage maps to one class"),
                            ));
                        }
                        *slot = Some(name);
                    }
                    _ => return Err(bad(&k, x, &format!("stages are 1 to {last} (host.stages has {n} threshold(s))"))),
                }
            }
        }
    }
    // Stages left to their defaults must not collide with given ones.
    for stage in 1..=last as u8 {
        let c = classes.class(stage);
        let name = ["small", "medium", "large"][c as usize];
        let given = s.class_keys()[c as usize].2.is_some();
        if !given {
            if let Some(other) = stage_owner[stage as usize].filter(|o| *o != name) {
                return Err(ConfigError(format!(
                    "{sec}.{name}_stages: by default takes stage {stage}, which {sec}.{other}_stages also lists; give {name}_stages"
                )));
            }
        }
    }
    if s.marking == MarkingKind::MlEcn && s.mlecn_levels == 0 {
        return Err(bad(&key("mlecn_levels"), 0, "must be at least 1 (ML-ECN §IV: 4)"));
    }
    if s.mlecn_levels != 4 && s.marking != MarkingKind::MlEcn {
        return Err(bad(&key("mlecn_levels"), s.mlecn_levels, "is ML-ECN's; set marking = \"ml-ecn\" to use it"));
    }
    Ok(())
}

/// Where a scheme with hooks of its own judges, for the error that refuses
/// dequeue_marking with it; None for the schemes dequeue_marking moves.
fn own_sides(m: MarkingKind) -> Option<&'static str> {
    Some(match m {
        MarkingKind::Cedm => "marks at enqueue, takes marks back at dequeue",
        MarkingKind::Red | MarkingKind::AEcn | MarkingKind::Pmsb | MarkingKind::MlEcn => "judges at enqueue",
        MarkingKind::Tcn | MarkingKind::Codel => "judges at dequeue",
        MarkingKind::MmEcn => "mmecn_position picks front, at dequeue, or tail, at enqueue",
        MarkingKind::DemePro => "decides at enqueue, marks a queue head as it leaves",
        _ => return None,
    })
}

/// The keys of CEDM, RED and TCN: present where their scheme needs them,
/// and in range.
fn validate_aqm(s: &SwitchCfg, sec: &str, pkt: u64) -> Result<(), ConfigError> {
    let key = |k: &str| format!("{sec}.{k}");
    let missing = |k: &str, why: &str| ConfigError(format!("{sec}.{k}: missing; {why}"));
    // A key of another scheme: refused, not silently ignored.
    let unused = |k: &str, hint: &str| {
        ConfigError(format!("{sec}.{k}: set, but marking \"{}\" does not use it{hint}", marking_name(s.marking)))
    };
    if !(s.cedm_ws > 0.0 && s.cedm_ws <= 1.0) {
        return Err(bad(&key("cedm_ws"), s.cedm_ws, "must be in (0, 1] (CEDM §IV-C uses 0.129)"));
    }
    if s.marking == MarkingKind::Cedm {
        let k1 = match &s.threshold {
            Some(OneOrList::All(a)) => a.0.bytes(pkt),
            _ => 0,
        };
        let Some(k2) = s.cedm_k2 else {
            return Err(missing("cedm_k2", "marking \"cedm\" needs K2 >= threshold (K1), e.g. \"30pkt\""));
        };
        if k2.0.bytes(pkt) < k1 {
            return Err(bad(&key("cedm_k2"), k2.0, &format!("must be at least threshold (K1 = {})", k1)));
        }
    }
    if !(s.red_wq > 0.0 && s.red_wq <= 1.0) {
        return Err(bad(&key("red_wq"), s.red_wq, "must be in (0, 1]"));
    }
    if let Some(p) = s.red_pmax {
        if !(p > 0.0 && p <= 1.0) {
            return Err(bad(&key("red_pmax"), p, "must be in (0, 1]"));
        }
    }
    let red = s.marking == MarkingKind::Red || (s.marking == MarkingKind::MqEcn && s.red_keys());
    if red {
        let what = if s.marking == MarkingKind::Red {
            "marking \"red\" needs red_min, red_max and red_pmax"
        } else {
            "MQ-ECN's probabilistic variant needs red_min, red_max and red_pmax"
        };
        let (Some(min), Some(max)) = (s.red_min, s.red_max) else {
            return Err(missing(if s.red_min.is_none() { "red_min" } else { "red_max" }, what));
        };
        if s.red_pmax.is_none() {
            return Err(missing("red_pmax", what));
        }
        if min.0.bytes(pkt) > max.0.bytes(pkt) {
            return Err(bad(&key("red_min"), min.0, &format!("must not exceed red_max ({})", max.0)));
        }
        if s.marking == MarkingKind::MqEcn && s.threshold.is_some() {
            return Err(bad(
                &key("threshold"),
                "set",
                "MQ-ECN's probabilistic variant takes red_min/red_max instead of threshold; give one or the other",
            ));
        }
    } else if s.red_keys() {
        let k = if s.red_min.is_some() {
            "red_min"
        } else if s.red_max.is_some() {
            "red_max"
        } else {
            "red_pmax"
        };
        return Err(unused(k, " (only \"red\" and \"mq-ecn\" do)"));
    }
    if s.cedm_k2.is_some() && s.marking != MarkingKind::Cedm {
        return Err(unused("cedm_k2", ""));
    }
    if s.tcn_threshold.is_some() && s.marking != MarkingKind::Tcn {
        return Err(unused("tcn_threshold", ""));
    }
    if s.threshold.is_some() && matches!(s.marking, MarkingKind::Red | MarkingKind::Tcn | MarkingKind::Codel) {
        return Err(unused(
            "threshold",
            " (red takes red_min and red_max, tcn tcn_threshold, codel codel_target and codel_interval)",
        ));
    }
    if s.marking == MarkingKind::Tcn {
        match s.tcn_threshold {
            None => return Err(missing("tcn_threshold", "marking \"tcn\" needs a sojourn time, e.g. \"100.8us\"")),
            Some(d) if d.0 == 0 => return Err(bad(&key("tcn_threshold"), "0s", "must be positive")),
            _ => {}
        }
    }
    validate_comparators(s, sec, pkt)
}

/// The keys of the ML-ECN comparators (MM-ECN, A-ECN, DemePro, PMSB): each
/// given only with its own scheme, and in range.
fn validate_comparators(s: &SwitchCfg, sec: &str, pkt: u64) -> Result<(), ConfigError> {
    use MarkingKind::{AEcn, DemePro, MmEcn, Pmsb};
    let key = |k: &str| format!("{sec}.{k}");
    let amt = |a: Option<Amt>| a.map(|a| a.0.to_string());
    let name = |n: &str| Some(format!("\"{n}\""));
    let given = [
        ("mmecn_k_low", MmEcn, amt(s.mmecn_k_low)),
        ("mmecn_pmax", MmEcn, s.mmecn_pmax.map(|p| p.to_string())),
        (
            "mmecn_position",
            MmEcn,
            s.mmecn_position.and_then(|p| name(if p == MmecnPosition::Front { "front" } else { "tail" })),
        ),
        ("aecn_epoch", AEcn, s.aecn_epoch.map(|n| n.to_string())),
        ("aecn_up", AEcn, amt(s.aecn_up)),
        ("aecn_down", AEcn, amt(s.aecn_down)),
        ("aecn_k_min", AEcn, amt(s.aecn_k_min)),
        (
            "demepro_share",
            DemePro,
            s.demepro_share.and_then(|d| name(if d == DemeproShare::Occupancy { "occupancy" } else { "threshold" })),
        ),
        ("pmsb_share", Pmsb, s.pmsb_share.and_then(|p| name(if p == PmsbShare::All { "all" } else { "active" }))),
    ];
    for (k, owner, value) in given {
        if let Some(v) = value {
            if s.marking != owner {
                return Err(bad(
                    &key(k),
                    v,
                    &format!(
                        "set, but marking \"{}\" does not use it (only \"{}\" does)",
                        marking_name(s.marking),
                        marking_name(owner)
                    ),
                ));
            }
        }
    }
    // K: these schemes' single threshold, checked present by validate_switch.
    let k = match &s.threshold {
        Some(OneOrList::All(a)) => a.0.bytes(pkt),
        _ => return Ok(()),
    };
    if let Some(lo) = s.mmecn_k_low {
        if lo.0.bytes(pkt) > k {
            return Err(bad(&key("mmecn_k_low"), lo.0, &format!("must not exceed threshold (K_high = {k}B)")));
        }
    }
    if let Some(p) = s.mmecn_pmax {
        if !(p > 0.0 && p <= 1.0) {
            return Err(bad(&key("mmecn_pmax"), p, "must be in (0, 1]"));
        }
    }
    if s.aecn_epoch == Some(0) {
        return Err(bad(&key("aecn_epoch"), 0, "must be at least 1 enqueued packet (default 64)"));
    }
    for (k, a) in [("aecn_up", s.aecn_up), ("aecn_down", s.aecn_down)] {
        if let Some(a) = a {
            if a.0.bytes(pkt) == 0 {
                return Err(bad(&key(k), a.0, "must be positive (default \"1pkt\")"));
            }
        }
    }
    if let Some(lo) = s.aecn_k_min {
        let b = lo.0.bytes(pkt);
        if b == 0 || b > k {
            return Err(bad(
                &key("aecn_k_min"),
                lo.0,
                &format!("must be positive and at most threshold ({k}B), the threshold's ceiling"),
            ));
        }
    }
    Ok(())
}

impl Config {
    fn validate_transport(&self) -> Result<(), ConfigError> {
        let t = &self.transport;
        if t.init_cwnd == 0 {
            return Err(bad("transport.init_cwnd", 0, "must be at least 1 segment"));
        }
        if !(64..=65_000).contains(&t.mss) {
            return Err(bad("transport.mss", t.mss, "must be 64 to 65000 bytes"));
        }
        if t.host_queue_limit.0 == 0 {
            return Err(bad("transport.host_queue_limit", "0B", "must be positive"));
        }
        if t.header > 1000 {
            return Err(bad("transport.header", t.header, "must be at most 1000 bytes"));
        }
        if t.min_rto.0 == 0 {
            return Err(bad("transport.min_rto", "0s", "must be positive"));
        }
        if t.max_rto.0 < t.min_rto.0 {
            return Err(bad("transport.max_rto", fmt_t(t.max_rto.0), "must not be below transport.min_rto"));
        }
        if t.init_rto() == 0 {
            return Err(bad("transport.init_rto", "0s", "must be positive"));
        }
        if let Some(g) = t.clock_granularity {
            if g.0 == 0 {
                return Err(bad(
                    "transport.clock_granularity",
                    "0s",
                    "must be positive (leave it out for exact timers)",
                ));
            }
        }
        if t.rx_window == Some(0) {
            return Err(bad("transport.rx_window", 0, "must be at least 1 packet (leave it out for no limit)"));
        }
        if t.max_cwnd == Some(0) {
            return Err(bad("transport.max_cwnd", 0, "must be at least 1 segment (leave it out for no limit)"));
        }
        if !(1..=64).contains(&t.delayed_ack) {
            return Err(bad("transport.delayed_ack", t.delayed_ack, "must be 1 (ACK every packet) to 64"));
        }
        if !(t.dctcp_g > 0.0 && t.dctcp_g <= 1.0) {
            return Err(bad("transport.dctcp_g", t.dctcp_g, "must lie in (0, 1]"));
        }
        if !(0.0..=1.0).contains(&t.dctcp_alpha_init) {
            return Err(bad("transport.dctcp_alpha_init", t.dctcp_alpha_init, "must lie in [0, 1]"));
        }
        Ok(())
    }

    fn validate_host(&self) -> Result<(), ConfigError> {
        let h = &self.host;
        let packet = self.transport.packet_bytes();
        if !(h.lso_fraction > 0.0 && h.lso_fraction <= 1.0) {
            return Err(bad(
                "host.lso_fraction",
                h.lso_fraction,
                "must be in (0, 1]: the share of cwnd one segment may take",
            ));
        }
        for (key, b) in [("host.lso_max", h.lso_max), ("host.gro_max", h.gro_max)] {
            if b.0 < packet {
                return Err(bad(
                    key,
                    format!("{}B", b.0),
                    &format!("must hold at least one full packet ({packet}B: transport.mss + transport.header)"),
                ));
            }
        }
        if h.lso_defer_limit.0 == 0 {
            return Err(bad("host.lso_defer_limit", "0s", "must be positive (Linux: 2 ticks, \"2ms\")"));
        }
        if h.interrupt_frames > 0 && !h.coalescing() {
            return Err(bad(
                "host.interrupt_frames",
                h.interrupt_frames,
                "needs host.interrupt_coalescing (a delay): without one, fewer frames would wait forever",
            ));
        }
        if h.stages.len() > crate::host::stage::MAX_THRESHOLDS {
            return Err(bad(
                "host.stages",
                format!("a list of {}", h.stages.len()),
                &format!("at most {} thresholds (a stage fits DSCP's 6 bits)", crate::host::stage::MAX_THRESHOLDS),
            ));
        }
        for (i, w) in h.stages.windows(2).enumerate() {
            if w[1].0 <= w[0].0 {
                return Err(bad(
                    &format!("host.stages[{}]", i + 1),
                    format!("{}B", w[1].0),
                    &format!("thresholds must increase (host.stages[{i}] is {}B)", w[0].0),
                ));
            }
        }
        if h.stages.first().is_some_and(|b| b.0 == 0) {
            return Err(bad("host.stages[0]", "0B", "must be positive: a flow starts in stage 1"));
        }
        if let Some(list) = &h.ect_stages {
            let last = h.stages.len() as u32 + 1;
            if h.stages.is_empty() {
                return Err(bad("host.ect_stages", format!("{list:?}"), "needs host.stages"));
            }
            if let Some(&s) = list.iter().find(|&&s| s == 0 || s > last) {
                return Err(bad(
                    "host.ect_stages",
                    s,
                    &format!("stages are 1 to {last} (host.stages has {} threshold(s))", h.stages.len()),
                ));
            }
        }
        if h.stage_by != StageBy::Sent && h.stages.is_empty() {
            return Err(bad("host.stage_by", "\"size\"", "needs host.stages"));
        }
        if h.gro && !h.coalescing() {
            return Err(bad(
                "host.gro",
                true,
                "needs host.interrupt_coalescing: without receive batching every packet is handled alone and nothing merges",
            ));
        }
        Ok(())
    }

    fn validate_apps(&self) -> Result<(), ConfigError> {
        let hosts = self.hosts();
        let q = self.switch.queues;
        let host = |key: String, h: u32| -> Result<(), ConfigError> {
            if h >= hosts {
                Err(bad(&key, h, &format!("no such host; hosts are 0..{}", hosts - 1)))
            } else {
                Ok(())
            }
        };
        let service = |key: String, s: u32| -> Result<(), ConfigError> {
            if s >= q {
                Err(bad(&key, s, &format!("no such service queue; switch.queues = {q}, so services are 0..{}", q - 1)))
            } else {
                Ok(())
            }
        };
        for (i, f) in self.flows.iter().enumerate() {
            host(format!("flows[{i}].src"), f.src)?;
            host(format!("flows[{i}].dst"), f.dst)?;
            if f.src == f.dst {
                return Err(bad(&format!("flows[{i}].dst"), f.dst, "must differ from src"));
            }
            service(format!("flows[{i}].service"), f.service)?;
            if f.count == 0 {
                return Err(bad(&format!("flows[{i}].count"), 0, "must be at least 1"));
            }
            if !f.serial && (f.serial_gap.0 > 0 || f.serial_gap_kind != GapKind::Fixed) {
                return Err(bad(
                    &format!("flows[{i}].serial_gap"),
                    fmt_t(f.serial_gap.0),
                    "only applies with serial = true",
                ));
            }
            if f.serial_gap_kind == GapKind::Exponential && f.serial_gap.0 == 0 {
                return Err(bad(
                    &format!("flows[{i}].serial_gap_kind"),
                    "\"exponential\"",
                    "needs a positive serial_gap (the mean pause)",
                ));
            }
            if f.serial && f.size == FlowSize::Infinite {
                return Err(bad(&format!("flows[{i}].serial"), true, "needs sized flows (a size, not \"infinite\")"));
            }
            if let Some(stop) = f.stop {
                if stop.0 <= f.start.0 {
                    return Err(bad(&format!("flows[{i}].stop"), fmt_t(stop.0), "must come after start"));
                }
            }
        }
        for (i, p) in self.ping.iter().enumerate() {
            host(format!("ping[{i}].src"), p.src)?;
            host(format!("ping[{i}].dst"), p.dst)?;
            if p.src == p.dst {
                return Err(bad(&format!("ping[{i}].dst"), p.dst, "must differ from src"));
            }
            service(format!("ping[{i}].service"), p.service)?;
            if p.interval.0 == 0 {
                return Err(bad(&format!("ping[{i}].interval"), "0s", "must be positive"));
            }
            if !(28..=65_000).contains(&p.size.0) {
                return Err(bad(&format!("ping[{i}].size"), p.size.0, "must be 28 to 65000 bytes"));
            }
            // Hosts never drop: probes sent faster than the link takes them
            // would pile up in the NIC without end.
            let bps = p.size.0 as f64 * 8.0 * units::PS_PER_S as f64 / p.interval.0 as f64;
            let link = self.topology.host_rate(p.src);
            if bps > link as f64 {
                return Err(bad(
                    &format!("ping[{i}].interval"),
                    fmt_dur(p.interval.0),
                    &format!(
                        "{}B every {} is faster than host{}'s {} link; its NIC queue would grow without end",
                        p.size.0,
                        fmt_dur(p.interval.0),
                        p.src,
                        units::fmt_rate(link)
                    ),
                ));
            }
        }
        for (i, c) in self.incast.iter().enumerate() {
            host(format!("incast[{i}].receiver"), c.receiver)?;
            service(format!("incast[{i}].service"), c.service)?;
            if c.block.0 == 0 {
                return Err(bad(&format!("incast[{i}].block"), "0B", "must be positive"));
            }
            if c.rounds == 0 {
                return Err(bad(&format!("incast[{i}].rounds"), 0, "must be at least 1"));
            }
            match &c.senders {
                Senders::Count(n) => {
                    if *n == 0 || *n >= hosts {
                        return Err(bad(
                            &format!("incast[{i}].senders"),
                            n,
                            &format!("must be 1 to {} (hosts other than the receiver)", hosts - 1),
                        ));
                    }
                }
                Senders::List(l) => {
                    if l.is_empty() {
                        return Err(bad(&format!("incast[{i}].senders"), "[]", "needs at least one sender"));
                    }
                    for (j, &h) in l.iter().enumerate() {
                        host(format!("incast[{i}].senders[{j}]"), h)?;
                        if h == c.receiver {
                            return Err(bad(&format!("incast[{i}].senders[{j}]"), h, "must differ from the receiver"));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Incast senders as host ids.
    pub fn incast_senders(&self, c: &IncastCfg) -> Vec<u32> {
        match &c.senders {
            Senders::List(l) => l.clone(),
            Senders::Count(n) => (0..self.hosts()).filter(|&h| h != c.receiver).take(*n as usize).collect(),
        }
    }
}

fn scheduler_name(s: SchedulerKind) -> &'static str {
    match s {
        SchedulerKind::Sp => "\"sp\"",
        SchedulerKind::Wrr => "\"wrr\"",
        SchedulerKind::Dwrr => "\"dwrr\"",
        SchedulerKind::SpDwrr => "\"sp-dwrr\"",
        SchedulerKind::Wfq => "\"wfq\"",
    }
}

pub fn marking_name(m: MarkingKind) -> &'static str {
    match m {
        MarkingKind::None => "none",
        MarkingKind::PerQueue => "per-queue",
        MarkingKind::PerQueueMin => "per-queue-min",
        MarkingKind::PerPort => "per-port",
        MarkingKind::PerPool => "per-pool",
        MarkingKind::MqEcn => "mq-ecn",
        MarkingKind::Cedm => "cedm",
        MarkingKind::Red => "red",
        MarkingKind::Tcn => "tcn",
        MarkingKind::MlEcn => "ml-ecn",
        MarkingKind::MmEcn => "mm-ecn",
        MarkingKind::AEcn => "a-ecn",
        MarkingKind::DemePro => "deme-pro",
        MarkingKind::Pmsb => "pmsb",
        MarkingKind::Codel => "codel",
    }
}

pub fn qdisc_name(q: QdiscKind) -> &'static str {
    match q {
        QdiscKind::Composed => "composed",
        QdiscKind::FqCodel => "fq-codel",
        QdiscKind::Pfabric => "pfabric",
    }
}

/// The keys of the whole disciplines and of CoDel: given only where the
/// port's discipline uses them, in range; and a whole discipline given
/// none of the composed qdisc's keys (it has its own classifier,
/// scheduler, AQM and buffer).
fn validate_whole(s: &SwitchCfg, sec: &str) -> Result<(), ConfigError> {
    let key = |k: &str| format!("{sec}.{k}");
    let q = qdisc_name(s.qdisc);
    if s.qdisc != QdiscKind::Composed {
        let not_here = |k: &str, v: String| {
            Err(bad(
                &key(k),
                v,
                &format!(
                    "{sec}.qdisc \"{q}\" is a whole discipline with its own scheduling and queue management; \
                     {k} belongs to qdisc \"composed\" (set {sec}.qdisc = \"composed\" to use it)"
                ),
            ))
        };
        if s.marking != MarkingKind::None {
            return not_here("marking", format!("\"{}\"", marking_name(s.marking)));
        }
        if s.scheduler != default_scheduler() {
            return not_here("scheduler", scheduler_name(s.scheduler).to_string());
        }
        // (A resolved config writes the default as a one-entry list.)
        let default_quantum = match &s.quantum {
            OneOrList::All(b) => b.0 == 1500,
            OneOrList::List(l) => l.iter().all(|b| b.0 == 1500),
        };
        if !default_quantum {
            return not_here("quantum", "set".into());
        }
        if s.threshold.is_some() {
            return not_here("threshold", "set".into());
        }
        if s.dequeue_marking {
            return not_here("dequeue_marking", "true".into());
        }
        if s.drop_not_ect {
            return not_here("drop_not_ect", "true".into());
        }
    }
    let fq = [
        ("fq_flows", s.fq_flows.map(|v| v.to_string())),
        ("fq_quantum", s.fq_quantum.map(|v| format!("{}B", v.0))),
        ("fq_limit", s.fq_limit.map(|v| v.to_string())),
    ];
    let codel = [
        ("codel_target", s.codel_target.map(|v| fmt_dur(v.0))),
        ("codel_interval", s.codel_interval.map(|v| fmt_dur(v.0))),
        ("codel_ecn", s.codel_ecn.map(|v| v.to_string())),
    ];
    let used_by = |keys: &[(&str, Option<String>)], uses: bool, owners: &str| -> Result<(), ConfigError> {
        for (k, v) in keys {
            if let (Some(v), false) = (v, uses) {
                let what = if s.qdisc == QdiscKind::Composed {
                    format!("qdisc \"composed\" with marking \"{}\"", marking_name(s.marking))
                } else {
                    format!("qdisc \"{q}\"")
                };
                return Err(bad(&key(k), v, &format!("set, but {what} does not use it (only {owners} does)")));
            }
        }
        Ok(())
    };
    used_by(&fq, s.qdisc == QdiscKind::FqCodel, "qdisc \"fq-codel\"")?;
    used_by(&codel, s.uses_codel(), "qdisc \"fq-codel\" or marking \"codel\"")?;
    if let Some(n) = s.fq_flows {
        if !(1..=65_536).contains(&n) {
            return Err(bad(
                &key("fq_flows"),
                n,
                "must be 1 to 65536 hash buckets (Linux's default and the paper's: 1024)",
            ));
        }
    }
    if s.fq_quantum.is_some_and(|b| b.0 == 0) {
        return Err(bad(&key("fq_quantum"), "0B", "must be positive (default 1514B, one Ethernet MTU)"));
    }
    if s.fq_limit == Some(0) {
        return Err(bad(&key("fq_limit"), 0, "must be at least 1 packet (default 10240)"));
    }
    let target = s.codel_target.map_or(CODEL_TARGET, |d| d.0);
    let interval = s.codel_interval.map_or(CODEL_INTERVAL, |d| d.0);
    if s.codel_target.is_some_and(|d| d.0 == 0) {
        return Err(bad(&key("codel_target"), "0s", "must be positive"));
    }
    if s.codel_interval.is_some_and(|d| d.0 == 0) {
        return Err(bad(&key("codel_interval"), "0s", "must be positive"));
    }
    if target >= interval {
        return Err(bad(
            &key("codel_target"),
            fmt_dur(target),
            &format!(
                "must be below codel_interval ({}): CoDel drops only after the sojourn has stayed above target for an interval",
                fmt_dur(interval)
            ),
        ));
    }
    Ok(())
}

fn fmt_t(t: Time) -> String {
    format!("{}s", units::secs(t))
}

/// A time in its canonical spelling ("1ps", "85200ns").
fn fmt_dur(t: Time) -> String {
    units::fmt_duration(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
[run]
duration = "10ms"
[topology]
kind = "star"
hosts = 3
link_rate = "10Gbps"
link_delay = "25us"
"#;

    fn err(extra: &str) -> String {
        Config::from_toml(&format!("{BASE}{extra}")).unwrap_err().0
    }

    /// ML-ECN's bad inputs (issue 11): each names the key, the value and
    /// what is allowed.
    #[test]
    fn ml_ecn_classes_refuse_bad_input() {
        let ml = "[host]\nstages = [\"100KB\", \"10MB\"]\n[switch]\nqueues = 4\nmarking = \"ml-ecn\"\nthreshold = \"65pkt\"\n";
        let ok = format!("{ml}small_queues = [0, 1]\nmedium_queues = [2]\nlarge_queues = [3]\n");
        Config::from_toml(&format!("{BASE}{ok}")).unwrap();
        let e = err(&format!("{ml}small_queues = [0, 1]\nmedium_queues = [1]\nlarge_queues = [3]\n"));
        assert_eq!(e, "switch.medium_queues = 1: queue 1 is already a small queue: a queue serves one class");
        let e = err(&format!("{ml}small_queues = [0, 1]\nmedium_queues = []\nlarge_queues = [3]\n"));
        assert_eq!(e, "switch.medium_queues = []: every class needs at least one queue");
        let e = err(&format!("{ml}small_queues = [0, 1]\nlarge_queues = [3]\n"));
        assert_eq!(e, "switch.medium_queues = []: every class needs at least one queue");
        let e = err(&format!("{ok}mlecn_levels = 0\n"));
        assert_eq!(e, "switch.mlecn_levels = 0: must be at least 1 (ML-ECN §IV: 4)");
        let e = err(&format!("{ok}large_stages = [4]\n"));
        assert_eq!(e, "switch.large_stages = 4: stages are 1 to 3 (host.stages has 2 threshold(s))");
        let e = err(&format!("{ok}medium_stages = [2, 3]\n"));
        assert!(e.starts_with("switch.large_stages: by default takes stage 3"), "{e}");
        let e = err(&ok.replace("[\"100KB\", \"10MB\"]", "[\"10MB\", \"100KB\"]"));
        assert_eq!(e, "host.stages[1] = 100000B: thresholds must increase (host.stages[0] is 10000000B)");
        let e = err("[switch]\nqueues = 2\nmarking = \"ml-ecn\"\nthreshold = \"65pkt\"\n");
        assert!(e.starts_with("switch.marking = \"ml-ecn\": needs the queue classes"), "{e}");
        let e = err("[switch]\nqueues = 2\nsmall_queues = [0]\nmedium_queues = [1]\nlarge_queues = [1]\n");
        assert!(e.starts_with("switch.small_queues: classes choose queues by stage, but host.stages is empty"), "{e}");
    }

    #[test]
    fn parses_minimal() {
        let c = Config::from_toml(BASE).unwrap();
        assert_eq!(c.end(), 10_000_000_000);
        assert_eq!(c.switch.queues, 1);
        assert_eq!(c.transport.init_rto(), c.transport.min_rto.0);
    }

    /// The resolved form parses back to itself, and two spellings of one
    /// run (units, defaults left out or written, a preset or its values)
    /// resolve alike: the sweep store's key depends on both.
    #[test]
    fn resolved_form_is_canonical() {
        let resolve = |t: &str| Config::from_toml(t).unwrap().resolved_json();
        let a = resolve(&format!("{BASE}[transport]\nmin_rto = \"5ms\"\n[switch]\nqueues = 2\n"));
        let b = resolve(
            "[run]\nduration = \"0.01s\"\nseed = 1\n[topology]\nkind = \"star\"\nhosts = 3\n\
             link_rate = \"10000Mbps\"\nlink_delay = \"25000ns\"\n[transport]\ninit_rto = \"5000us\"\n\
             [switch]\nqueues = 2\nquantum = [\"1500B\", \"1.5KB\"]\n",
        );
        assert_eq!(a, b);
        let again = Config::from_json(&a.to_string()).unwrap().resolved_json();
        assert_eq!(a, again);
        assert_eq!(a["run"]["duration"], "10ms");
        assert_eq!(a["topology"]["link_rate"], "10Gbps");
        // A different value is a different run.
        assert_ne!(a, resolve(&format!("{BASE}[switch]\nqueues = 2\nquantum = \"1501B\"\n")));
        // Presets expand to their values, so naming them or writing them out agree.
        let p = resolve("[run]\nduration = \"1ms\"\n[topology]\npreset = \"mqecn\"\n");
        let q = Config::from_json(&p.to_string()).unwrap().resolved_json();
        assert_eq!(p, q);
        assert_eq!(p["topology"]["leaves"], 12);
    }

    /// WFQ takes MQ-ECN (both forms); sp_queues belongs to sp-dwrr alone,
    /// and a fabric with a scheduler of its own does not inherit the
    /// switch's strict queues.
    #[test]
    fn wfq_combinations() {
        let ok = |extra: &str| Config::from_toml(&format!("{BASE}{extra}")).map(|_| ()).map_err(|e| e.0);
        assert_eq!(
            ok("[switch]\nqueues = 2\nscheduler = \"wfq\"\nmarking = \"mq-ecn\"\nthreshold = \"65pkt\"\n"),
            Ok(())
        );
        let red = "red_min = \"10pkt\"\nred_max = \"30pkt\"\nred_pmax = 0.1\n";
        assert_eq!(ok(&format!("[switch]\nqueues = 2\nscheduler = \"wfq\"\nmarking = \"mq-ecn\"\n{red}")), Ok(()));
        let sp_dwrr = "[switch]\nqueues = 3\nscheduler = \"sp-dwrr\"\nsp_queues = 2\n";
        assert_eq!(ok(&format!("{sp_dwrr}[fabric]\nscheduler = \"wfq\"\n")), Ok(()));
        assert_eq!(
            ok(&format!("{sp_dwrr}[fabric]\nscheduler = \"wfq\"\nsp_queues = 2\n")),
            Err("fabric.sp_queues = 2: only sp-dwrr has strict queues (fabric.scheduler is \"wfq\"); leave sp_queues out".into())
        );
        let e = err("[switch]\nqueues = 2\nscheduler = \"sp\"\nmarking = \"mq-ecn\"\nthreshold = \"65pkt\"\n");
        assert!(e.starts_with("switch.marking = \"mq-ecn\": needs a weighted scheduler") && e.contains("wfq"), "{e}");
    }

    /// `[host]`: one error per bad key, naming it, the value and what is
    /// allowed; the section resolves with its defaults (CEDM §II-A: 64 KB,
    /// β = 1/3, 2 ticks of 1 ms) whether written or not.
    #[test]
    fn host_section_errors_and_defaults() {
        let e = err("[host]\nlso = true\nlso_fraction = 1.5\n");
        assert_eq!(e, "host.lso_fraction = 1.5: must be in (0, 1]: the share of cwnd one segment may take");
        let e = err("[host]\nlso_fraction = 0\n");
        assert!(e.starts_with("host.lso_fraction = 0: must be in (0, 1]"), "{e}");
        let e = err("[host]\nlso_fraction = -0.2\n");
        assert!(e.starts_with("host.lso_fraction = -0.2: must be in (0, 1]"), "{e}");
        let e = err("[host]\nlso_max = \"1000B\"\n");
        assert_eq!(
            e,
            "host.lso_max = 1000B: must hold at least one full packet (1500B: transport.mss + transport.header)"
        );
        let e = err("[host]\ngro_max = \"1KB\"\ninterrupt_coalescing = \"20us\"\ngro = true\n");
        assert!(e.starts_with("host.gro_max = 1000B: must hold at least one full packet"), "{e}");
        let e = err("[host]\nlso_defer_limit = \"0ms\"\n");
        assert!(e.starts_with("host.lso_defer_limit = 0s: must be positive"), "{e}");
        let e = err("[host]\nlso_defer_limit = \"-1ms\"\n");
        assert!(e.starts_with("host.lso_defer_limit: \"-1ms\""), "{e}");
        let e = err("[host]\ninterrupt_coalescing = \"-20us\"\n");
        assert!(e.starts_with("host.interrupt_coalescing: \"-20us\""), "{e}");
        let e = err("[host]\ninterrupt_coalescing = 20\n");
        assert!(e.starts_with("host.interrupt_coalescing: 20: a duration needs a unit"), "{e}");
        let e = err("[host]\ninterrupt_frames = 8\n");
        assert!(e.starts_with("host.interrupt_frames = 8: needs host.interrupt_coalescing"), "{e}");
        let e = err("[host]\ninterrupt_frames = -1\ninterrupt_coalescing = \"20us\"\n");
        assert!(e.starts_with("host.interrupt_frames: invalid value: integer `-1`"), "{e}");
        let e = err("[host]\ngro = true\n");
        assert!(e.starts_with("host.gro = true: needs host.interrupt_coalescing"), "{e}");
        let e = err("[host]\nlso = \"yes\"\n");
        assert!(e.starts_with("host.lso: invalid type: string \"yes\", expected a boolean"), "{e}");
        let e = err("[host]\ntso = true\n");
        assert!(e.starts_with("host.tso: unknown field `tso`;"), "{e}");
        assert!(e.contains("`lso`"), "{e}");
        let e = Config::from_toml(&format!("host = 1\n{BASE}")).unwrap_err().0;
        assert_eq!(e, "host: a number (1); expected a table, [host] with its keys");
        let a = Config::from_toml(BASE).unwrap().resolved_json();
        let h = &a["host"];
        assert_eq!(
            (h["lso"].clone(), h["lso_max"].clone(), h["lso_fraction"].clone()),
            (false.into(), "64000B".into(), 0.333.into())
        );
        assert_eq!((h["lso_defer_limit"].clone(), h["interrupt_coalescing"].clone()), ("2ms".into(), "0s".into()));
        let b = Config::from_toml(&format!("{BASE}[host]\nlso = false\nlso_max = \"64KB\"\ngro_max = \"64000B\"\n"))
            .unwrap();
        assert_eq!(a, b.resolved_json());
    }

    #[test]
    fn duration_is_optional_only_for_finite_traffic() {
        let topo = "[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"25us\"\n";
        let sized = "[[flows]]\nsrc = 0\ndst = 1\nsize = \"64KB\"\n";
        let c = Config::from_toml(&format!("[run]\nseed = 2\n{topo}{sized}")).unwrap();
        assert_eq!(c.end(), NO_END);
        let e = Config::from_toml(&format!("[run]\nseed = 2\n{topo}[[flows]]\nsrc = 0\ndst = 1\n")).unwrap_err().0;
        assert!(e.starts_with("run.duration: missing") && e.contains("flows[0] is long-lived"), "{e}");
        let e = Config::from_toml(&format!("[run]\nseed = 2\n{topo}")).unwrap_err().0;
        assert!(e.starts_with("run.duration: missing") && e.contains("nothing to wait for"), "{e}");
        let ping = "[[ping]]\nsrc = 0\ndst = 1\ninterval = \"1ms\"\n";
        let e = Config::from_toml(&format!("[run]\nseed = 2\n{topo}{sized}{ping}")).unwrap_err().0;
        assert!(e.contains("[[ping]]"), "{e}");
    }

    /// The comparators' keys: each refused with another scheme (naming the
    /// key, its value, the marking in force and the one that uses it), and
    /// range errors naming what is allowed.
    #[test]
    fn comparator_keys_errors() {
        let sw = |keys: &str| err(&format!("[switch]\nqueues = 2\nthreshold = \"20pkt\"\n{keys}"));
        assert_eq!(
            sw("marking = \"per-port\"\nmmecn_pmax = 0.5\n"),
            "switch.mmecn_pmax = 0.5: set, but marking \"per-port\" does not use it (only \"mm-ecn\" does)"
        );
        assert_eq!(
            sw("marking = \"a-ecn\"\ndemepro_share = \"threshold\"\n"),
            "switch.demepro_share = \"threshold\": set, but marking \"a-ecn\" does not use it (only \"deme-pro\" does)"
        );
        assert_eq!(
            sw("marking = \"pmsb\"\naecn_k_min = \"3pkt\"\n"),
            "switch.aecn_k_min = 3pkt: set, but marking \"pmsb\" does not use it (only \"a-ecn\" does)"
        );
        assert_eq!(
            sw("marking = \"mm-ecn\"\nmmecn_k_low = \"30pkt\"\n"),
            "switch.mmecn_k_low = 30pkt: must not exceed threshold (K_high = 30000B)"
        );
        assert_eq!(sw("marking = \"mm-ecn\"\nmmecn_pmax = 0\n"), "switch.mmecn_pmax = 0: must be in (0, 1]");
        let e = sw("marking = \"mm-ecn\"\nmmecn_position = \"head\"\n");
        assert!(e.starts_with("switch.mmecn_position: unknown variant `head`, expected"), "{e}");
        assert!(e.contains("front") && e.contains("tail"), "{e}");
        let e = sw("marking = \"mm-ecn\"\ndequeue_marking = true\n");
        assert!(
            e.starts_with("switch.dequeue_marking = true: \"mm-ecn\" decides on its own sides (mmecn_position"),
            "{e}"
        );
        assert_eq!(
            sw("marking = \"a-ecn\"\naecn_epoch = 0\n"),
            "switch.aecn_epoch = 0: must be at least 1 enqueued packet (default 64)"
        );
        assert_eq!(
            sw("marking = \"a-ecn\"\naecn_up = \"0B\"\n"),
            "switch.aecn_up = 0B: must be positive (default \"1pkt\")"
        );
        assert!(sw("marking = \"a-ecn\"\naecn_k_min = \"21pkt\"\n")
            .starts_with("switch.aecn_k_min = 21pkt: must be positive"));
        let e = sw("marking = \"pmsb\"\npmsb_share = \"busy\"\n");
        assert!(e.starts_with("switch.pmsb_share: unknown variant `busy`") && e.contains("active"), "{e}");
        let e = err("[switch]\nmarking = \"deme-pro\"\n");
        assert!(e.starts_with("switch.threshold: missing; marking \"deme-pro\" needs the standard threshold K"), "{e}");
        let e = err("[switch]\nqueues = 2\nmarking = \"pmsb\"\nthreshold = [\"20pkt\", \"20pkt\"]\n");
        assert!(e.starts_with("switch.threshold = a list: only per-queue marking"), "{e}");
        // Each scheme's own keys are accepted, the fabric inheriting them.
        for keys in [
            "marking = \"mm-ecn\"\nmmecn_k_low = \"10pkt\"\nmmecn_pmax = 0.3\nmmecn_position = \"tail\"\n",
            "marking = \"a-ecn\"\naecn_epoch = 32\naecn_up = \"2pkt\"\naecn_down = \"500B\"\naecn_k_min = \"4pkt\"\n",
            "marking = \"deme-pro\"\ndemepro_share = \"threshold\"\n",
            "marking = \"pmsb\"\npmsb_share = \"active\"\n",
        ] {
            Config::from_toml(&format!("{BASE}[switch]\nqueues = 2\nthreshold = \"20pkt\"\n{keys}[fabric]\n")).unwrap();
        }
    }

    #[test]
    fn errors_name_key_value_and_allowed() {
        let e = err("[switch]\nscheduler = \"dwr\"\n");
        assert!(e.starts_with("switch.scheduler: unknown variant `dwr`"), "{e}");
        assert!(e.contains("sp-dwrr"), "{e}");
        let e = err("[switch]\nqueus = 2\n");
        assert!(e.contains("unknown field `queus`") && e.contains("queues"), "{e}");
        // [switch]'s long list of keys is cut to the nearest three.
        let e = err("[switch]\nbuffe = 0\n");
        assert!(e.starts_with("switch.buffe: unknown field `buffe`; of the "), "{e}");
        assert!(e.ends_with(" keys allowed here the nearest are `buffer`, `queues`, `qdisc`"), "{e}");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        let e = err("[switch]\nbuffer = \"300Kb\"\n");
        assert!(e.starts_with("switch.buffer: \"300Kb\": unknown size unit"), "{e}");
        let e = err("[switch]\nmarking = \"per-queue\"\n");
        assert!(e.starts_with("switch.threshold: missing"), "{e}");
        let e = err("[[flows]]\nsrc = 0\ndst = 3\n");
        assert!(e.starts_with("flows[0].dst = 3: no such host"), "{e}");
        let e = err("[switch]\nqueues = 2\nmarking = \"mq-ecn\"\nscheduler = \"sp\"\nthreshold = \"65pkt\"\n");
        assert_eq!(e, "switch.marking = \"mq-ecn\": needs a weighted scheduler: wrr, dwrr, sp-dwrr (round-time estimate) or wfq (weight-sum estimate)");
        let e = err("[switch]\nqueues = 2\nquantum = [\"1500B\"]\n");
        assert!(e.starts_with("switch.quantum = a list of 1"), "{e}");
        let e = err("[switch]\nqueues = 3\nscheduler = \"wfq\"\nsp_queues = 2\n");
        assert_eq!(
            e,
            "switch.sp_queues = 2: only sp-dwrr has strict queues (switch.scheduler is \"wfq\"); leave sp_queues out"
        );
        let e = err("[switch]\ndequeue_marking = true\n");
        assert_eq!(e, "switch.dequeue_marking = true: needs a marking scheme (switch.marking is \"none\")");
        // A section or entry that is not a table, and a name given as a list.
        let e = Config::from_json(r#"{"run": {"duration": "1ms"}, "topology": [{"kind": "star"}]}"#).unwrap_err().0;
        assert_eq!(e, "topology: a list; expected a table, [topology] with its keys");
        let e = Config::from_toml(&format!("flows = [\"x\"]\n{BASE}")).unwrap_err().0;
        assert_eq!(e, "flows[0]: a string \"x\"; expected a table, a [[flows]] entry with its keys");
        let e = err("[switch]\nscheduler = [\"dwrr\"]\n");
        assert_eq!(e, "switch.scheduler: invalid type: sequence, expected one of sp, wrr, dwrr, sp-dwrr, wfq");
        let e = Config::from_toml(&BASE.replace("hosts = 3", "hosts = 3\necmp = \"random\"")).unwrap_err().0;
        assert!(e.starts_with("topology.ecmp: unknown variant `random`"), "{e}");
        assert!(e.contains("per-flow") && e.contains("per-packet"), "{e}");
        let e = err("[switch]\nbuffer = \"200pkts\"\n");
        assert!(e.starts_with("switch.buffer: \"200pkts\": \"pkts\" is ambiguous"), "{e}");
        let e = err("[switch]\nmarking = \"per-port\"\nthreshold = \"65 packets\"\n");
        assert!(e.starts_with("switch.threshold: \"65 packets\": a threshold is compared with queued bytes"), "{e}");
        let e = err("[transport]\nmin_rto = 5\n");
        assert!(e.starts_with("transport.min_rto: 5: a duration needs a unit"), "{e}");
        // 64 B every 10 ns is 51.2 Gbps, over a 10 Gbps host link.
        let e = err("[[ping]]\nsrc = 0\ndst = 1\ninterval = \"10ns\"\n");
        assert_eq!(
            e,
            "ping[0].interval = 10ns: 64B every 10ns is faster than host0's 10Gbps link; its NIC queue would grow without end"
        );
    }

    /// Whole disciplines and CoDel (issue 12): each bad input names the
    /// key, the value and what is allowed; an override that changes the
    /// discipline does not inherit the other discipline's keys.
    #[test]
    fn whole_disciplines_refuse_bad_input() {
        let fq = "[switch]\nqdisc = \"fq-codel\"\n";
        assert_eq!(
            err(&format!("{fq}fq_flows = 0\n")),
            "switch.fq_flows = 0: must be 1 to 65536 hash buckets (Linux's default and the paper's: 1024)"
        );
        assert_eq!(
            err(&format!("{fq}codel_target = \"100us\"\ncodel_interval = \"100us\"\n")),
            "switch.codel_target = 100us: must be below codel_interval (100us): CoDel drops only after the \
             sojourn has stayed above target for an interval"
        );
        // The default interval (100 ms) against a target above it.
        assert!(
            err(&format!("{fq}codel_target = \"200ms\"\n")).starts_with("switch.codel_target = 200ms: must be below")
        );
        assert_eq!(
            err(&format!("{fq}fq_limit = 0\n")),
            "switch.fq_limit = 0: must be at least 1 packet (default 10240)"
        );
        assert_eq!(
            err(&format!("{fq}fq_quantum = \"0B\"\n")),
            "switch.fq_quantum = 0B: must be positive (default 1514B, one Ethernet MTU)"
        );
        assert_eq!(err(&format!("{fq}codel_interval = \"0s\"\n")), "switch.codel_interval = 0s: must be positive");
        // Composed keys with a whole discipline.
        let e = err(&format!("{fq}marking = \"mq-ecn\"\nthreshold = \"65pkt\"\n"));
        assert!(e.starts_with("switch.marking = \"mq-ecn\": switch.qdisc \"fq-codel\" is a whole discipline"), "{e}");
        assert!(e.ends_with("(set switch.qdisc = \"composed\" to use it)"), "{e}");
        let e = err("[switch]\nqdisc = \"pfabric\"\nscheduler = \"sp\"\n");
        assert!(e.starts_with("switch.scheduler = \"sp\": switch.qdisc \"pfabric\" is a whole discipline"), "{e}");
        // A discipline's keys where it does not run.
        assert_eq!(
            err("[switch]\nfq_flows = 1024\n"),
            "switch.fq_flows = 1024: set, but qdisc \"composed\" with marking \"none\" does not use it \
             (only qdisc \"fq-codel\" does)"
        );
        assert_eq!(
            err("[switch]\nqdisc = \"pfabric\"\ncodel_target = \"5us\"\n"),
            "switch.codel_target = 5us: set, but qdisc \"pfabric\" does not use it \
             (only qdisc \"fq-codel\" or marking \"codel\" does)"
        );
        let e = err("[switch]\nqdisc = \"fq_codel\"\n");
        assert!(e.starts_with("switch.qdisc: unknown variant `fq_codel`") && e.contains("fq-codel"), "{e}");
        let e = err("[switch]\nmarking = \"codel\"\nthreshold = \"20pkt\"\n");
        assert!(e.starts_with("switch.threshold: set, but marking \"codel\" does not use it"), "{e}");
        let e = err("[switch]\nmarking = \"codel\"\ndequeue_marking = true\n");
        assert!(e.starts_with("switch.dequeue_marking = true: \"codel\" decides on its own sides"), "{e}");
        // The same checks in [fabric] and [nic].
        let e = err("[nic]\nqdisc = \"fq-codel\"\nfq_flows = 0\n");
        assert!(e.starts_with("nic.fq_flows = 0: must be 1 to 65536"), "{e}");
        let e = err("[switch]\nqdisc = \"fq-codel\"\n[fabric]\nmarking = \"per-port\"\nthreshold = \"20pkt\"\n");
        assert!(e.starts_with("fabric.marking = \"per-port\": fabric.qdisc \"fq-codel\" is a whole discipline"), "{e}");
        let e = err("[nic]\nqdisc = \"pfabric\"\nfq_limit = 10\n");
        assert!(e.starts_with("nic.fq_limit = 10: set, but qdisc \"pfabric\" does not use it"), "{e}");

        // The paper's setting: FQ-CoDel on host links in both directions,
        // the fabric composed with the switch's marking keys of its own.
        let paper = "[switch]\nqdisc = \"fq-codel\"\ncodel_target = \"5us\"\ncodel_interval = \"100us\"\n\
                     [fabric]\nqdisc = \"composed\"\nmarking = \"per-port\"\nthreshold = \"20pkt\"\n\
                     [nic]\ncodel_ecn = false\n";
        let c = Config::from_toml(&format!("{BASE}{paper}")).unwrap();
        let (fabric, nic) = (c.switch.with(c.fabric.as_ref().unwrap()), c.switch.with(c.nic.as_ref().unwrap()));
        assert_eq!(
            (fabric.qdisc, fabric.codel_target, fabric.marking),
            (QdiscKind::Composed, None, MarkingKind::PerPort)
        );
        assert_eq!(
            (nic.qdisc, nic.codel_target, nic.codel_ecn),
            (QdiscKind::FqCodel, Some(Dur(5_000_000)), Some(false))
        );
        // A composed [switch] with MQ-ECN and an FQ-CoDel NIC: the NIC
        // does not inherit the marking.
        let mq = "[switch]\nqueues = 2\nmarking = \"mq-ecn\"\nthreshold = \"20pkt\"\n[nic]\nqdisc = \"fq-codel\"\n";
        let c = Config::from_toml(&format!("{BASE}{mq}")).unwrap();
        assert_eq!(c.switch.with(c.nic.as_ref().unwrap()).marking, MarkingKind::None);
        // CoDel as a composed queue's marking takes the CoDel keys.
        Config::from_toml(&format!(
            "{BASE}[switch]\nmarking = \"codel\"\ncodel_target = \"5us\"\ncodel_interval = \"100us\"\n"
        ))
        .unwrap();
        // The new keys leave an existing config's resolved form alone
        // (result stores key runs by it).
        let plain = Config::from_toml(BASE).unwrap().resolved_json();
        assert!(plain["switch"].get("qdisc").is_none() && plain.get("nic").is_none());
        // A resolved config resolves again to itself (sweeps run the
        // resolved form): its default quantum, written as a one-entry
        // list, is not "set" for a whole discipline.
        let c = Config::from_toml(&format!("{BASE}{paper}")).unwrap().resolved_json();
        let again = Config::from_json(&c.to_string()).unwrap().resolved_json();
        assert_eq!(c, again);
    }
}
