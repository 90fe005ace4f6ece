//! Linux's window accounting, opt-in by `transport.linux_cwnd` (on in the
//! `linux` profile): what an ACK lets cwnd grow by, and what a loss sets
//! ssthresh from.
//!
//! By default an ACK that moves snd_una grows cwnd by every byte it covers,
//! and a loss sets ssthresh from FlightSize (snd_max − snd_una, RFC 5681
//! Eq. 4). Both count data the receiver had already SACKed. After a
//! recovery whose first hole's retransmission was lost, that data can be
//! hundreds of segments: the cumulative ACK that finally fills the hole
//! covers all of it, so slow start after an RTO jumps to ssthresh in one
//! ACK and sends a window-sized burst, and the next loss takes half of a
//! flight that is mostly delivered data as its ssthresh. With early
//! (random) drops such recoveries are the rule, and the two feed each other
//! into a queue pinned at its limit (issue 50's PIE star: 11× the drops of
//! the default stack).
//!
//! Linux counts each segment once, as delivered when it is SACKed or, if
//! it was not, when it is cumulatively acknowledged (tcp_sacktag_one,
//! tcp_clean_rtx_queue), and hands that count to the congestion control
//! (tcp_cong_control → tcp_cong_avoid's `acked`); its ssthresh hooks work
//! from cwnd (tcp_reno_ssthresh: max(cwnd/2, 2); CUBIC's and DCTCP's own
//! already do in ecnlab). With this key the sender does the same: the
//! bytes an ACK reports to the congestion control are those newly
//! delivered (cumulatively acked and not SACKed before, plus newly
//! SACKed), and the flight a loss halves is cwnd. Two mechanisms take a
//! part of it whatever this key says: `cubic_linux` reads the delivered
//! count, since the arithmetic it transcribes takes it, and
//! `rto_keeps_sack` grows by it, since the SACKed data it keeps across an
//! RTO is what the cumulative ACK at the end of the go-back covers; `prr`
//! and `lost_retransmit` take ssthresh from cwnd (`loss_flight_segs`).

use super::mechanism::{Mechanism, MechanismDecl, Traits};
use crate::config::param::section;
use crate::config::TransportCfg;

section! {
    /// The key of Linux's window accounting, in `[transport]`.
    pub struct LinuxCwndParams {
        /// Linux's window accounting: cwnd grows by what an ACK newly delivers (a cumulative ACK
        /// does not count again the data it covers that was SACKed before), and a loss sets
        /// ssthresh from cwnd (Reno: cwnd/2), not from the flight, which counts SACKed data. The
        /// `linux` profile turns it on.
        linux_cwnd: bool = false, resolved Given, source "Linux tcp_input.c tcp_clean_rtx_queue, tcp_cong_control; tcp_cong.c tcp_reno_ssthresh";
    }
}

/// The mechanism's declaration: its registry line is in `recovery/mod.rs`.
pub const DECL: MechanismDecl = MechanismDecl {
    about: crate::switch::scheme::About {
        params: &[LinuxCwndParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "linux_cwnd",
            "Linux's window accounting: cwnd grown by what an ACK newly delivers, ssthresh from cwnd",
            "Linux tcp_input.c tcp_clean_rtx_queue, tcp_cong_control; tcp_cong.c tcp_reno_ssthresh",
        )
    },
};

impl LinuxCwndParams {
    pub fn of(t: &crate::config::TransportCfg) -> LinuxCwndParams {
        t.scheme_keys(LinuxCwndParams::read).expect("a checked config")
    }
}

/// The mechanism has no state: it changes what the core counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinuxCwnd;

impl Mechanism for LinuxCwnd {
    type Params = ();
    const DECL: MechanismDecl = DECL;

    fn params(t: &TransportCfg) -> Option<()> {
        LinuxCwndParams::of(t).linux_cwnd.then_some(())
    }

    /// Both halves of Linux's accounting. A loss takes ssthresh from cwnd
    /// rather than FlightSize (`Snd::loss_flight_segs`) here and with PRR
    /// (`prr.rs`), whose proportional part sends ssthresh/prior_cwnd of
    /// what is delivered and so must have ssthresh below the cwnd it starts
    /// from (Linux's pairing; a flight swollen by SACKed data gave ssthresh
    /// 280 from a cwnd near 90, and PRR then sent three segments per one
    /// delivered into CoDel, 7× the drops). Lost-retransmission detection
    /// needs PRR (`recovery::validate`), so PRR covers its recoveries,
    /// which outlive the stuck hole's lost copies while new data goes out
    /// behind it, so that snd_max − snd_una ends up mostly data SACKed
    /// rounds ago. Else: from snd_max − snd_una (RFC 5681 Eq. 4).
    fn traits(_: &(), t: &mut Traits) {
        t.ssthresh_from_cwnd = true;
        t.grows_by_delivered = true;
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, TransportCfg};

    /// Model 6 moved every run (`crate::UNMOVED_SINCE`): a result store
    /// keys each at 6, whatever its transport.
    #[test]
    fn every_run_is_keyed_at_model_6() {
        let at = |transport: &str| {
            let j = format!(
                r#"{{"run": {{"duration": "1ms"}}, "topology": {{"kind": "star", "hosts": 2, "link_rate": "10Gbps", "link_delay": "1us"}}, "transport": {transport}}}"#
            );
            crate::model_of(&Config::from_json(&j).unwrap())
        };
        for t in [r#"{"cc": "dctcp"}"#, r#"{"profile": "linux"}"#, r#"{"cc": "reno", "linux_cwnd": true}"#] {
            assert_eq!(at(t), 6, "{t}");
        }
    }
    use crate::host::tcp_tx::TcpSender;

    const MSS: u64 = 1460;

    fn sender(keys: &str) -> TcpSender {
        let t: TransportCfg = serde_json::from_str(&format!(r#"{{"cc": "reno", "init_cwnd": 20{keys}}}"#)).unwrap();
        let mut s = TcpSender::new(&t);
        s.limit = u64::MAX;
        s.open(0);
        s.on_synack(100, 0);
        s
    }

    /// 20 segments out, segment 0 lost, 1..=19 SACKed, then the RTO (the
    /// fast retransmission lost too). The go-back resends segment 0 with
    /// cwnd 1; its ACK covers all 20 segments. By default slow start
    /// counts all 20 (cwnd 1 → 10, the ssthresh, and the other 11 as
    /// congestion avoidance, 11/10: cwnd 11.1 in one ACK, a burst of new
    /// data); Linux counts what that ACK newly delivered, one segment
    /// (tcp_clean_rtx_queue skips SACKed skbs in `delivered`): cwnd 2.
    /// So does `rto_keeps_sack` alone, and so does `linux_cwnd` with the
    /// scoreboard dropped at the RTO (the 19 lie above snd_nxt: delivered
    /// before the timeout).
    #[test]
    fn a_cumulative_ack_over_sacked_data_grows_cwnd_by_what_it_delivers() {
        for (keys, want) in [
            ("", 11.1),
            (r#", "linux_cwnd": true"#, 2.0),
            (r#", "rto_keeps_sack": true"#, 2.0),
            (r#", "linux_cwnd": true, "rto_keeps_sack": true"#, 2.0),
        ] {
            let mut s = sender(keys);
            assert_eq!(std::iter::from_fn(|| s.next_segment(200)).count(), 20);
            for k in 1..20u64 {
                s.on_ack(1000 + k, 0, (MSS, (k + 1) * MSS), false, 0);
            }
            let _ = std::iter::from_fn(|| s.next_segment(1100)).count();
            s.on_timeout(50_000_000_000);
            assert_eq!(s.w.cwnd, 1.0);
            let g = s.next_segment(50_000_000_000).expect("the go-back resend");
            assert_eq!(g.seq, 0);
            s.on_ack(50_000_100_000, 20 * MSS, (0, 0), false, 50_000_000_000);
            // ssthresh: the 20 out at the first loss, halved, either way.
            assert_eq!(s.w.ssthresh, 10.0, "{keys}");
            assert!((s.w.cwnd - want).abs() < 1e-9, "{keys}: cwnd {}", s.w.cwnd);
        }
    }

    /// A loss after a recovery that left SACKed data above a stuck hole:
    /// FlightSize counts it, cwnd does not. 20 out with cwnd 20; 0 lost
    /// and 1..=3 SACKed start recovery (ssthresh 10 either way, flight and
    /// cwnd both 20). Then the RTO (ssthresh kept, cwnd 1), the resend of 0
    /// is acknowledged with 200 more segments SACKed above a new hole at
    /// 20 (sent meanwhile, say): the next loss halves cwnd (Linux:
    /// tcp_reno_ssthresh) rather than the 200-segment flight.
    #[test]
    fn a_loss_halves_cwnd_not_a_flight_of_sacked_data() {
        for linux in [false, true] {
            let mut s = sender(if linux { r#", "linux_cwnd": true"# } else { "" });
            let _ = std::iter::from_fn(|| s.next_segment(200)).count();
            for k in 1..4u64 {
                s.on_ack(1000 + k, 0, (MSS, (k + 1) * MSS), false, 0);
            }
            assert!(s.in_recovery);
            assert_eq!(s.w.ssthresh, 10.0);
            // Move the sender on: everything up to 20 acknowledged, then
            // 200 segments sent and SACKed above a hole at 20.
            s.on_ack(2000, 20 * MSS, (0, 0), false, 1000);
            assert!(!s.in_recovery);
            s.w.cwnd = 12.0;
            s.limit = 221 * MSS;
            s.max_sent = 221 * MSS;
            s.nxt = 221 * MSS;
            s.on_ack(3000, 20 * MSS, (21 * MSS, 221 * MSS), false, 2000);
            s.on_timeout(60_000_000_000);
            let want = if linux { 6.0 } else { 100.5 };
            assert_eq!(s.w.ssthresh, want, "linux_cwnd {linux}");
        }
    }
}
