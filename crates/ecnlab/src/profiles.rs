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

#[cfg(test)]
mod tests {
    use crate::config::{CaKind, Config};

    const BASE: &str =
        "[run]\nduration = \"10ms\"\n[topology]\nkind = \"star\"\nhosts = 3\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n";

    fn cfg(extra: &str) -> Config {
        Config::from_toml(&format!("{BASE}{extra}")).unwrap()
    }

    fn err(extra: &str) -> String {
        Config::from_toml(&format!("{BASE}{extra}")).unwrap_err().0
    }

    /// Every row of FQ-CoDel in the DCN's Table II: minrto_ 45 us, maxrto_
    /// 2 s, rtxcur_init_ 45 us, tcpTick_ 1 us, interval_ 6 us (FullTcp's
    /// byte-counted delayed ACK, one segment per ACK), window_ 10^6,
    /// windowInit_ 12, maxcwnd_ = queue − 1, windowOption_ 0 (basic). The
    /// queue is [switch] buffer in packets: 36 KB (pFabric's 2×BDP) is 24
    /// packets of 1500 B → 23; "100 packets" → 99; the default 300 KB → 199.
    #[test]
    fn pfabric_profile_applies_table_ii() {
        let c = cfg("[switch]\nbuffer = \"36864B\"\n[transport]\nprofile = \"pfabric\"\n");
        let t = &c.transport;
        let us = 1_000_000;
        assert_eq!((t.min_rto.0, t.max_rto.0, t.init_rto()), (45 * us, 2_000_000 * us, 45 * us));
        assert_eq!(t.clock_granularity.map(|g| g.0), Some(us));
        assert_eq!((t.delayed_ack, t.delayed_ack_bytes, t.delayed_ack_timeout.0), (1, true, 6 * us));
        assert_eq!((t.rx_window, t.init_cwnd, t.max_cwnd, t.ca), (Some(1_000_000), 12, Some(23), CaKind::Basic));
        let packets = cfg("[switch]\nbuffer = \"100 packets\"\n[transport]\nprofile = \"pfabric\"\n");
        assert_eq!(packets.transport.max_cwnd, Some(99));
        assert_eq!(cfg("[transport]\nprofile = \"pfabric\"\n").transport.max_cwnd, Some(199));
        // The profile only tunes TCP: the cc stays the default DCTCP.
        assert_eq!(c.transport.cc, crate::config::CcKind::Dctcp);
    }

    /// A key given explicitly beats the profile, which beats the cc's own
    /// defaults (pFabric's IW 12 and 45 us RTO), which beat the ordinary
    /// defaults (IW 10, 5 ms).
    #[test]
    fn explicit_keys_override_the_profile_and_the_cc_defaults() {
        let c = cfg("[transport]\nprofile = \"pfabric\"\nmin_rto = \"1ms\"\nmax_cwnd = 50\nca = \"standard\"\n");
        let t = &c.transport;
        assert_eq!((t.min_rto.0, t.max_cwnd, t.ca), (1_000_000_000, Some(50), CaKind::Standard));
        assert_eq!((t.init_rto(), t.init_cwnd), (45_000_000, 12), "the rest still comes from the profile");
        let t = cfg("[transport]\ncc = \"pfabric\"\n").transport;
        assert_eq!((t.init_cwnd, t.min_rto.0, t.init_rto(), t.max_cwnd), (12, 45_000_000, 45_000_000, None));
        let t = cfg("[transport]\ncc = \"pfabric\"\ninit_cwnd = 20\n").transport;
        assert_eq!((t.init_cwnd, t.min_rto.0), (20, 45_000_000));
        let t = cfg("[transport]\ncc = \"pfabric\"\nprofile = \"pfabric\"\nmin_rto = \"90us\"\n").transport;
        assert_eq!((t.init_cwnd, t.min_rto.0, t.init_rto()), (12, 90_000_000, 45_000_000));
        let t = cfg("").transport;
        assert_eq!(
            (t.init_cwnd, t.min_rto.0, t.max_cwnd, t.rx_window, t.ca),
            (10, 5_000_000_000, None, None, CaKind::Standard)
        );
    }

    /// The resolved config names the profile and shows every value it set,
    /// and reads back to the same run (keys now explicit); in JSON a null
    /// counts as left out, so the profile still fills it.
    #[test]
    fn resolved_config_shows_the_profile_values() {
        let r = cfg("[transport]\nprofile = \"pfabric\"\n").resolved_json();
        let t = &r["transport"];
        assert_eq!(t["profile"], "pfabric");
        assert_eq!((t["min_rto"].as_str(), t["clock_granularity"].as_str()), (Some("45us"), Some("1us")));
        assert_eq!(
            (t["max_cwnd"].as_u64(), t["rx_window"].as_u64(), t["ca"].as_str()),
            (Some(199), Some(1_000_000), Some("basic"))
        );
        assert_eq!(Config::from_json(&r.to_string()).unwrap().resolved_json(), r);
        let mut plain = cfg("").resolved_json();
        assert!(plain["transport"]["max_cwnd"].is_null());
        plain["transport"]["profile"] = "pfabric".into();
        assert_eq!(Config::from_json(&plain.to_string()).unwrap().transport.max_cwnd, Some(199));
    }

    /// Bad input: one line naming the key, the value and what is allowed.
    #[test]
    fn bad_transport_tuning_is_refused() {
        assert_eq!(
            err("[transport]\nprofile = \"linux\"\n"),
            "transport.profile: unknown variant `linux`, expected `pfabric`"
        );
        assert_eq!(
            err("[transport]\nmax_cwnd = 0\n"),
            "transport.max_cwnd = 0: must be at least 1 segment (leave it out for no limit)"
        );
        assert_eq!(
            err("[transport]\nrx_window = 0\n"),
            "transport.rx_window = 0: must be at least 1 packet (leave it out for no limit)"
        );
        assert_eq!(
            err("[transport]\nclock_granularity = \"0us\"\n"),
            "transport.clock_granularity = 0s: must be positive (leave it out for exact timers)"
        );
        assert_eq!(
            err("[transport]\nclock_granularity = \"-1us\"\n"),
            "transport.clock_granularity: \"-1us\": must not be negative"
        );
        let e = err("[transport]\nca = \"cubic\"\n");
        assert_eq!(e, "transport.ca: unknown variant `cubic`, expected `standard` or `basic`");
    }
}
