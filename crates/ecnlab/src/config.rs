//! The experiment schema: one `Config` is the single source of truth.
//!
//! Parsing goes through serde with `deny_unknown_fields` and
//! `serde_path_to_error`, so every error names its key path. Values with
//! units are parsed by the small wrapper types below. Cross-field checks
//! (a host index that does not exist, a scheme that needs a round-robin
//! scheduler) live in `validate` and produce the same one-line form.

use crate::units::{self, Amount, Time};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
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
                f.write_str("a value with a unit, or a list of them")
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

// ---------- sections ----------

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub run: RunCfg,
    pub topology: TopologyCfg,
    #[serde(default)]
    pub switch: SwitchCfg,
    #[serde(default)]
    pub transport: TransportCfg,
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
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunCfg {
    #[serde(default = "one")]
    pub seed: u64,
    /// Simulated time to run.
    pub duration: Dur,
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
}

fn default_sample_ports() -> OneOrList<String> {
    OneOrList::All("auto".into())
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

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    Star,
    LeafSpine,
    FatTree,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
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
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum EcmpMode {
    /// A per-switch salted hash of the flow: one path per flow, in order.
    #[default]
    PerFlow,
    /// A fresh draw for every packet at every switch: reorders.
    PerPacket,
}

#[derive(Clone, Debug, Default, Deserialize)]
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
    /// Equal-cost multipath: "per-flow" (default) or "per-packet".
    #[serde(default)]
    pub ecmp: EcmpMode,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    Sp,
    Wrr,
    Dwrr,
    SpDwrr,
}

impl SchedulerKind {
    pub fn is_round_robin(self) -> bool {
        !matches!(self, SchedulerKind::Sp)
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum MarkingKind {
    None,
    PerQueue,
    PerQueueMin,
    PerPort,
    PerPool,
    MqEcn,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchCfg {
    /// Per-port buffer shared first-come-first-serve by its queues: bytes
    /// ("300KB", "200pkt") or a count of packets of any size ("200 packets").
    #[serde(default = "default_buffer")]
    pub buffer: BufAmt,
    #[serde(default = "one_u32")]
    pub queues: u32,
    #[serde(default = "default_scheduler")]
    pub scheduler: SchedulerKind,
    /// Bytes a queue may send per round (WRR, DWRR): one value or one per queue.
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
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CcKind {
    Reno,
    EcnStar,
    Dctcp,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportCfg {
    #[serde(default = "default_cc")]
    pub cc: CcKind,
    /// Initial congestion window, in segments.
    #[serde(default = "default_iw")]
    pub init_cwnd: u32,
    #[serde(default = "default_min_rto")]
    pub min_rto: Dur,
    /// RTO before any RTT sample (SYN, first data); defaults to min_rto.
    pub init_rto: Option<Dur>,
    #[serde(default = "default_max_rto")]
    pub max_rto: Dur,
    /// Payload bytes per full segment.
    #[serde(default = "default_mss")]
    pub mss: u32,
    /// Header bytes added to every packet (ns-2 counts 40).
    #[serde(default = "default_header")]
    pub header: u32,
    /// ACK every n-th data packet; 1 = every packet (the papers' default).
    #[serde(default = "one_u32")]
    pub delayed_ack: u32,
    /// Longest an ACK may be held back when delayed_ack > 1.
    #[serde(default = "default_delack")]
    pub delayed_ack_timeout: Dur,
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
    /// packets); a host never drops. Raise it to model deeper host queues.
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

#[derive(Clone, Debug, Deserialize)]
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
}

fn infinite() -> FlowSize {
    FlowSize::Infinite
}

#[derive(Clone, Debug, Deserialize)]
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

#[derive(Clone, Debug, Deserialize)]
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
}

/// Keys of `[switch]` that fabric ports may set differently.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FabricCfg {
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
}

impl SwitchCfg {
    /// This switch config with a fabric override applied key by key.
    pub fn with(&self, f: &FabricCfg) -> SwitchCfg {
        let mut s = self.clone();
        macro_rules! take {
            ($($k:ident),*) => { $( if let Some(v) = &f.$k { s.$k = v.clone(); } )* };
        }
        take!(buffer, scheduler, quantum, sp_queues, marking, dequeue_marking, drop_not_ect, mqecn_beta);
        if f.threshold.is_some() {
            s.threshold = f.threshold.clone();
        }
        if f.mqecn_idle.is_some() {
            s.mqecn_idle = f.mqecn_idle;
        }
        s
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

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    Poisson,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ServiceMapping {
    /// Host pairs are spread evenly over the services (MQ-ECN §5.2).
    ByPair,
    /// Each flow draws its service with `service_weights` (MQ-ECN §5.1.2).
    Weighted,
}

#[derive(Clone, Debug, Deserialize)]
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
}

fn default_mapping() -> ServiceMapping {
    ServiceMapping::ByPair
}

impl WorkloadCfg {
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
        let mut cfg: Config = serde_path_to_error::deserialize(de).map_err(path_error)?;
        cfg.topology = cfg.topology.resolved()?;
        cfg.validate()?;
        Ok(cfg)
    }

    pub fn from_toml(s: &str) -> Result<Config, ConfigError> {
        // Through toml::Value so errors carry serde's key path, not a byte span.
        let value: toml::Value = toml::from_str(s).map_err(|e| ConfigError(format!("TOML syntax: {}", e.message())))?;
        let mut cfg: Config = serde_path_to_error::deserialize(value).map_err(path_error)?;
        cfg.topology = cfg.topology.resolved()?;
        cfg.validate()?;
        Ok(cfg)
    }
}

fn path_error<E: fmt::Display>(e: serde_path_to_error::Error<E>) -> ConfigError {
    let path = e.path().to_string();
    let msg = e.inner().to_string();
    // serde_json appends " at line L column C"; the key path says more.
    let msg = match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    if path == "." || path.is_empty() {
        ConfigError(msg)
    } else {
        ConfigError(format!("{path}: {msg}"))
    }
}

// ---------- cross-field validation ----------

impl Config {
    pub fn hosts(&self) -> u32 {
        self.topology.host_count()
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let r = &self.run;
        if r.duration.0 == 0 {
            return Err(bad("run.duration", "0s", "must be positive"));
        }
        if r.warmup.0 >= r.duration.0 {
            return Err(bad("run.warmup", fmt_t(r.warmup.0), "must be shorter than run.duration"));
        }
        if r.sample_interval.0 == 0 {
            return Err(bad("run.sample_interval", "0s", "must be positive"));
        }
        if r.goodput_interval.0 == 0 {
            return Err(bad("run.goodput_interval", "0s", "must be positive"));
        }
        self.validate_topology()?;
        self.validate_switches()?;
        self.validate_transport()?;
        self.validate_apps()?;
        self.validate_workload()
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
            (ServiceMapping::ByPair, Some(_)) => {
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
        validate_switch(&self.switch, "switch")?;
        if let Some(f) = &self.fabric {
            validate_switch(&self.switch.with(f), "fabric")?;
        }
        Ok(())
    }
}

fn validate_switch(s: &SwitchCfg, sec: &str) -> Result<(), ConfigError> {
    if !(1..=64).contains(&s.queues) {
        return Err(bad(&format!("{sec}.queues"), s.queues, "must be 1 to 64"));
    }
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
    if s.marking == MarkingKind::MqEcn && !s.scheduler.is_round_robin() {
        return Err(bad(
            &format!("{sec}.marking"),
            "\"mq-ecn\"",
            "needs a round-robin scheduler: wrr, dwrr or sp-dwrr",
        ));
    }
    if let Some(d) = s.mqecn_idle {
        if d.0 == 0 {
            return Err(bad(&format!("{sec}.mqecn_idle"), "0s", "must be positive"));
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

pub fn marking_name(m: MarkingKind) -> &'static str {
    match m {
        MarkingKind::None => "none",
        MarkingKind::PerQueue => "per-queue",
        MarkingKind::PerQueueMin => "per-queue-min",
        MarkingKind::PerPort => "per-port",
        MarkingKind::PerPool => "per-pool",
        MarkingKind::MqEcn => "mq-ecn",
    }
}

fn fmt_t(t: Time) -> String {
    format!("{}s", units::secs(t))
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

    #[test]
    fn parses_minimal() {
        let c = Config::from_toml(BASE).unwrap();
        assert_eq!(c.run.duration.0, 10_000_000_000);
        assert_eq!(c.switch.queues, 1);
        assert_eq!(c.transport.init_rto(), c.transport.min_rto.0);
    }

    #[test]
    fn errors_name_key_value_and_allowed() {
        let e = err("[switch]\nscheduler = \"dwr\"\n");
        assert!(e.starts_with("switch.scheduler: unknown variant `dwr`"), "{e}");
        assert!(e.contains("sp-dwrr"), "{e}");
        let e = err("[switch]\nqueus = 2\n");
        assert!(e.contains("unknown field `queus`") && e.contains("queues"), "{e}");
        let e = err("[switch]\nbuffer = \"300Kb\"\n");
        assert!(e.starts_with("switch.buffer: \"300Kb\": unknown size unit"), "{e}");
        let e = err("[switch]\nmarking = \"per-queue\"\n");
        assert!(e.starts_with("switch.threshold: missing"), "{e}");
        let e = err("[[flows]]\nsrc = 0\ndst = 3\n");
        assert!(e.starts_with("flows[0].dst = 3: no such host"), "{e}");
        let e = err("[switch]\nqueues = 2\nmarking = \"mq-ecn\"\nscheduler = \"sp\"\nthreshold = \"65pkt\"\n");
        assert!(e.contains("needs a round-robin scheduler"), "{e}");
        let e = err("[switch]\nqueues = 2\nquantum = [\"1500B\"]\n");
        assert!(e.starts_with("switch.quantum = a list of 1"), "{e}");
        let e = err("[switch]\ndequeue_marking = true\n");
        assert_eq!(e, "switch.dequeue_marking = true: needs a marking scheme (switch.marking is \"none\")");
        let e = Config::from_toml(&BASE.replace("hosts = 3", "hosts = 3\necmp = \"random\"")).unwrap_err().0;
        assert!(e.starts_with("topology.ecmp: unknown variant `random`"), "{e}");
        assert!(e.contains("per-flow") && e.contains("per-packet"), "{e}");
        let e = err("[switch]\nbuffer = \"200pkts\"\n");
        assert!(e.starts_with("switch.buffer: \"200pkts\": \"pkts\" is ambiguous"), "{e}");
        let e = err("[switch]\nmarking = \"per-port\"\nthreshold = \"65 packets\"\n");
        assert!(e.starts_with("switch.threshold: \"65 packets\": a threshold is compared with queued bytes"), "{e}");
        let e = err("[transport]\nmin_rto = 5\n");
        assert!(e.starts_with("transport.min_rto: 5: a duration needs a unit"), "{e}");
    }
}
