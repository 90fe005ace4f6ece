//! The value types of config keys: times, rates, sizes and thresholds with
//! their units, one-or-a-list, flow sizes, incast senders, and enums read
//! by name. Each reads from JSON with serde (errors in serde's words) and
//! writes one canonical spelling, so the resolved config is a canonical
//! form: two files that describe one run resolve alike.

use super::param::TypeName;
use crate::units::{self, Amount, Time};
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

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

/// A time that may scale with a link: a duration, or a multiple of one
/// full packet's transmission time at the rate it applies to (`host.jitter`:
/// each host's NIC rate).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeOrPkts {
    Time(Time),
    Pkts(f64),
}

impl TimeOrPkts {
    /// A duration ("2us") or a multiple of one full packet's transmission
    /// time ("1pkt", "0.5pkt"), 0 to 10^6 packets.
    pub fn parse(s: &str) -> Result<TimeOrPkts, String> {
        const ALLOWED: &str = "a duration (\"2us\") or a number of full packets' transmission times (\"1pkt\")";
        match units::split_number(s) {
            Some((n, "pkt" | "pkts" | "packet" | "packets")) => {
                if (0.0..=1e6).contains(&n) {
                    Ok(TimeOrPkts::Pkts(n))
                } else {
                    Err(format!("must be 0 to 1000000 packets; expected {ALLOWED}"))
                }
            }
            Some(_) => units::parse_duration(s).map(TimeOrPkts::Time).map_err(|m| format!("{m}; or {ALLOWED}")),
            None => Err(format!("expected {ALLOWED}")),
        }
    }

    /// The time at a link of `rate_bps` whose full packet is `packet` bytes.
    pub fn at(self, packet: u64, rate_bps: u64) -> Time {
        match self {
            TimeOrPkts::Time(t) => t,
            TimeOrPkts::Pkts(k) => (k * units::tx_time(packet, rate_bps) as f64).round() as Time,
        }
    }
}

impl<'de> Deserialize<'de> for TimeOrPkts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TimeOrPkts;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration (\"2us\") or full packets' transmission times (\"1pkt\")")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<TimeOrPkts, E> {
                TimeOrPkts::parse(s).map_err(|m| E::custom(format!("{s:?}: {m}")))
            }
        }
        // A bare number is refused by serde in `expecting`'s words.
        d.deserialize_str(V)
    }
}

impl Serialize for TimeOrPkts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            TimeOrPkts::Time(t) => s.serialize_str(&units::fmt_duration(t)),
            TimeOrPkts::Pkts(k) => s.serialize_str(&format!("{k}pkt")),
        }
    }
}

impl TypeName for TimeOrPkts {
    fn type_name() -> String {
        "duration or full packets' times (\"2us\", \"1pkt\")".into()
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
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                T::deserialize(de::value::F64Deserializer::<E>::new(v)).map(OneOrList::All)
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

impl TypeName for Dur {
    fn type_name() -> String {
        "duration (\"25us\", \"1.5ms\")".into()
    }
}
impl TypeName for Rate {
    fn type_name() -> String {
        "rate (\"10Gbps\", \"500Mbps\")".into()
    }
}
impl TypeName for Bytes {
    fn type_name() -> String {
        "size (\"64KB\", \"1500B\")".into()
    }
}
impl TypeName for Amt {
    fn type_name() -> String {
        "threshold: bytes or full packets (\"300KB\", \"65pkt\")".into()
    }
}
impl TypeName for BufAmt {
    fn type_name() -> String {
        "buffer: bytes, full packets or a packet count (\"300KB\", \"200pkt\", \"200 packets\")".into()
    }
}
impl<T: TypeName> TypeName for OneOrList<T> {
    fn type_name() -> String {
        format!("{}, or a list of them", T::type_name())
    }
}
impl TypeName for FlowSize {
    fn type_name() -> String {
        "size (\"64KB\") or \"infinite\"".into()
    }
}
impl TypeName for Senders {
    fn type_name() -> String {
        "integer (a count) or list of host ids".into()
    }
}

/// A unit enum read from its name alone, so that any other kind of value
/// (a list, a table, a number) gets "expected one of ..." instead of the
/// derived impl's bare "expected value"; written as its name, and named in
/// the reference as "one of: ...".
macro_rules! by_name {
    (
        $(#[$meta:meta])*
        pub enum $ty:ident { $($(#[$vmeta:meta])* $v:ident => $name:literal),+ $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $ty { $($(#[$vmeta])* $v),+ }

        impl $ty {
            pub const NAMES: &'static [&'static str] = &[$($name),+];
            pub fn name(self) -> &'static str {
                match self { $($ty::$v => $name),+ }
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> ::serde::de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut ::std::fmt::Formatter) -> ::std::fmt::Result {
                        write!(f, "one of {}", $ty::NAMES.join(", "))
                    }
                    fn visit_str<E: ::serde::de::Error>(self, s: &str) -> Result<$ty, E> {
                        match s {
                            $($name => Ok($ty::$v),)+
                            _ => Err(E::custom($crate::config::error::unknown_variant(s, $ty::NAMES))),
                        }
                    }
                }
                d.deserialize_str(V)
            }
        }

        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl $crate::config::param::TypeName for $ty {
            fn type_name() -> String {
                format!("one of: {}", $ty::NAMES.join(", "))
            }
        }
    };
}
pub(crate) use by_name;

by_name! {
    pub enum TopologyKind { Star => "star", LeafSpine => "leaf-spine", FatTree => "fat-tree", Ring => "ring", Graph => "graph" }
}

by_name! {
    /// A topology from the papers (see `preset` in `config/topology.rs`).
    pub enum Preset {
        /// MQ-ECN §5.2: 12 leaves × 12 hosts, 12 spines, 10G, 85.2 us.
        Mqecn => "mqecn",
        /// CEDM §V: 9 leaves × 16 hosts, 4 spines, 10G down, 40G up.
        Cedm => "cedm",
        /// pFabric's topology (same as CEDM's).
        Pfabric => "pfabric",
        /// FQ-CoDel in the DCN §IV-A: pFabric downscaled to 32 hosts.
        Fqcodel => "fqcodel",
    }
}

by_name! {
    /// How a switch picks among equal-cost next hops (see `ecmp.rs`).
    #[derive(Default)]
    pub enum EcmpMode {
        /// A per-switch salted hash of the flow: one path per flow, in order.
        #[default]
        PerFlow => "per-flow",
        /// A fresh draw for every packet at every switch: reorders.
        PerPacket => "per-packet",
        /// The MQ-ECN authors' ns-2 classifier: one unsalted hash of the host
        /// pair, the same at every switch (see `ecmp.rs`).
        Ns2 => "ns2",
    }
}

by_name! {
    /// What ML-ECN's stage counts: bytes sent so far, or the flow's size.
    #[derive(Default)]
    pub enum StageBy {
        #[default]
        Sent => "sent",
        Size => "size",
    }
}

by_name! {
    /// Congestion avoidance growth (ns-2 `windowOption_`).
    #[derive(Default)]
    pub enum CaKind {
        /// cwnd += acked segments / cwnd (RFC 5681; ns-2 windowOption_ 1).
        #[default]
        Standard => "standard",
        /// One whole segment once a window's worth has been acknowledged
        /// (ns-2 windowOption_ 0).
        Basic => "basic",
    }
}

by_name! {
    pub enum WorkloadKind { Poisson => "poisson" }
}

by_name! {
    /// `run.fct_end`: the event that completes a sized flow.
    #[derive(Default)]
    pub enum FctEnd {
        /// The receiver has every byte in order.
        #[default]
        Receiver => "receiver",
        /// The sender has every byte acknowledged (ns-2's `done_data`).
        Sender => "sender",
    }
}

by_name! {
    /// `workload.connections`: how workload flows get a TCP connection.
    #[derive(Default)]
    pub enum Connections {
        /// A new connection per flow, opened with a handshake.
        #[default]
        PerFlow => "per-flow",
        /// The MQ-ECN authors' ns-2 set-up: persistent connections per
        /// ordered host pair (see `host/apps/persistent.rs`).
        PerPair => "per-pair",
    }
}

by_name! {
    /// `workload.arrivals`: how workload flows' start times, pairs and sizes
    /// are drawn.
    #[derive(Default)]
    pub enum Arrivals {
        /// One Poisson stream for all flows from ecnlab's generator: every
        /// flow independent of the others.
        #[default]
        Poisson => "poisson",
        /// The MQ-ECN authors' ns-2 script: a Poisson process per ordered host
        /// pair from ns-2's generator seeded as they seed it, which makes
        /// neighbouring pairs draw nearly the same values (see `ns2_arrivals.rs`).
        Ns2 => "ns2",
    }
}

by_name! {
    /// How workload flows get their service.
    pub enum ServiceMapping {
        /// Host pairs are spread evenly over the services (MQ-ECN §5.2).
        ByPair => "by-pair",
        /// Each flow draws its service with `service_weights` (MQ-ECN §5.1.2).
        Weighted => "weighted",
        /// The MQ-ECN authors' ns-2 script: every flow of source host h is in
        /// service (h + 1) mod services, and every host offers `load` with its
        /// service's distribution (so hosts of small-flow services start more
        /// flows). See `workload::Picker`.
        BySource => "by-source",
    }
}

by_name! {
    /// Pauses between serial flows.
    pub enum GapKind { Fixed => "fixed", Exponential => "exponential" }
}

/// The name of a registered scheme (a marking, a scheduler, a discipline,
/// a congestion control, a profile). The config keeps what was given; the
/// registry checks it against the names it knows, so a new scheme needs
/// no edit here.
#[derive(Clone, Debug, PartialEq)]
pub struct Name(pub serde_json::Value);

impl Name {
    pub fn new(s: &str) -> Name {
        Name(serde_json::Value::String(s.to_string()))
    }

    /// The name; empty when what was given is not a string (the registry
    /// refuses it).
    pub fn as_str(&self) -> &str {
        self.0.as_str().unwrap_or("")
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.0.as_str() == Some(*other)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(d).map(Name)
    }
}

impl Serialize for Name {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl TypeName for Name {
    fn type_name() -> String {
        "name".into()
    }
}
