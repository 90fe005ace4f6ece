//! Transport tuning profiles (`transport.profile`) and the defaults a
//! congestion control brings with it. Both only fill keys the experiment
//! leaves out: a key given explicitly always wins, then the profile, then
//! the cc's own defaults, then the ordinary defaults. Resolution happens
//! when the config is read, so the resolved config (`resolved_json`) shows
//! every value applied next to the profile's name.

use crate::config::{CaKind, CcKind, Config, Dur, Profile, TransportCfg};
use crate::units::{Amount, Time};

const US: Time = 1_000_000;

/// A value a profile gives one key.
#[derive(Clone, Copy, Debug)]
enum Val {
    Dur(Time),
    Count(u32),
    Flag(bool),
    Ca(CaKind),
    /// The switch buffer in packets, minus one (see `queue_minus_one`).
    QueueMinusOne,
}

/// FQ-CoDel in the DCN, Table II ("pFabric TCP tuning"), as ecnlab's keys.
/// The delayed-ACK row is ns-2 FullTcp's `interval_`: FullTcp acknowledges
/// once a full segment's worth of bytes is unacknowledged (segsperack_ 1,
/// which the pFabric scripts keep) and otherwise when that timer fires, so
/// a segment shorter than the MSS waits at most 6 us instead of 100 ms.
const PFABRIC: &[(&str, Val)] = &[
    ("min_rto", Val::Dur(45 * US)),
    ("max_rto", Val::Dur(2_000_000 * US)),
    ("init_rto", Val::Dur(45 * US)),
    ("clock_granularity", Val::Dur(US)),
    ("delayed_ack", Val::Count(1)),
    ("delayed_ack_bytes", Val::Flag(true)),
    ("delayed_ack_timeout", Val::Dur(6 * US)),
    ("rx_window", Val::Count(1_000_000)),
    ("init_cwnd", Val::Count(12)),
    ("max_cwnd", Val::QueueMinusOne),
    ("ca", Val::Ca(CaKind::Basic)),
];

/// pFabric's transport starts at line rate with a BDP window of 12
/// packets and a fixed 45 us RTO, about three fabric RTTs (pFabric §4.2;
/// the YAPS and ns-2 configurations in `schemes/pfabric.md`).
const PFABRIC_CC: &[(&str, Val)] =
    &[("init_cwnd", Val::Count(12)), ("min_rto", Val::Dur(45 * US)), ("init_rto", Val::Dur(45 * US))];

fn profile_table(p: Profile) -> &'static [(&'static str, Val)] {
    match p {
        Profile::Pfabric => PFABRIC,
    }
}

fn cc_table(cc: CcKind) -> &'static [(&'static str, Val)] {
    match cc {
        CcKind::Pfabric => PFABRIC_CC,
        CcKind::Reno | CcKind::EcnStar | CcKind::Dctcp => &[],
    }
}

/// Keys of `[transport]` the experiment gave (a null counts as left out,
/// so a resolved config without a profile takes one when it is added).
pub fn given_keys(raw: Option<&serde_json::Value>) -> Vec<String> {
    let table = raw.and_then(|v| v.get("transport")).and_then(|t| t.as_object());
    table.map(|t| t.iter().filter(|(_, v)| !v.is_null()).map(|(k, _)| k.clone()).collect()).unwrap_or_default()
}

/// Fill the transport keys the experiment left out from its profile and
/// its cc's defaults; `given` are the keys it set.
pub fn apply(cfg: &mut Config, given: &[String]) {
    let queue_minus_one = queue_minus_one(cfg);
    let t = &mut cfg.transport;
    let profile = t.profile.map(profile_table).unwrap_or(&[]);
    let cc = cc_table(t.cc);
    let given = |key: &str| given.iter().any(|g| g == key);
    for &(key, val) in profile {
        if !given(key) {
            set(t, key, val, queue_minus_one);
        }
    }
    // The profile outranks the cc's defaults.
    for &(key, val) in cc {
        if !given(key) && !profile.iter().any(|e| e.0 == key) {
            set(t, key, val, queue_minus_one);
        }
    }
}

/// Table II's max cwnd, "queue − 1": the per-port buffer of `[switch]`
/// (the ports facing hosts) in full packets, less one, at least 1. A byte
/// buffer counts whole packets of mss + header.
fn queue_minus_one(cfg: &Config) -> u32 {
    let pkt = cfg.transport.packet_bytes().max(1);
    let packets = match cfg.switch.buffer.0 {
        Amount::Bytes(b) => b / pkt,
        Amount::Pkt(p) | Amount::Packets(p) => p,
    };
    packets.saturating_sub(1).clamp(1, u32::MAX as u64) as u32
}

fn set(t: &mut TransportCfg, key: &str, val: Val, queue_minus_one: u32) {
    match (key, val) {
        ("min_rto", Val::Dur(d)) => t.min_rto = Dur(d),
        ("max_rto", Val::Dur(d)) => t.max_rto = Dur(d),
        ("init_rto", Val::Dur(d)) => t.init_rto = Some(Dur(d)),
        ("clock_granularity", Val::Dur(d)) => t.clock_granularity = Some(Dur(d)),
        ("delayed_ack", Val::Count(n)) => t.delayed_ack = n,
        ("delayed_ack_bytes", Val::Flag(b)) => t.delayed_ack_bytes = b,
        ("delayed_ack_timeout", Val::Dur(d)) => t.delayed_ack_timeout = Dur(d),
        ("rx_window", Val::Count(n)) => t.rx_window = Some(n),
        ("init_cwnd", Val::Count(n)) => t.init_cwnd = n,
        ("max_cwnd", Val::Count(n)) => t.max_cwnd = Some(n),
        ("max_cwnd", Val::QueueMinusOne) => t.max_cwnd = Some(queue_minus_one),
        ("ca", Val::Ca(c)) => t.ca = c,
        _ => unreachable!("profile entry {key} = {val:?} names no transport key of that kind"),
    }
}
