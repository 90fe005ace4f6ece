//! The Linux stack (`transport.profile = "linux"`): the profile that turns
//! on the mechanisms ecnlab models of Linux's TCP, each in its own file and
//! behind its own `[transport]` key, so any one can be set otherwise:
//!
//! - `linux_rto` (`recovery/rto_linux.rs`): Linux's RTT estimator and RTO;
//! - `prr` (`recovery/prr.rs`): Proportional Rate Reduction, in loss recovery and
//!   after ECN cuts (Linux's CWR state), with Linux's reduction bound;
//! - `linux_delayed_ack` (`delack_linux.rs`): quick ACKs, every second full
//!   segment, at once out of order, a 40 ms timer;
//! - `lost_retransmit` (`recovery/lost_rtx.rs`): a lost retransmission of the first
//!   hole resent once later data is SACKed, not after an RTO;
//! - `rto_keeps_sack` (`recovery/rto_sack.rs`): the SACK scoreboard kept across an
//!   RTO, so that the go-back resends only holes;
//! - `rto_rearm_head` (`recovery/rto_rearm.rs`): the retransmission timer restarted
//!   when snd_una is retransmitted in recovery;
//! - `tlp` (`recovery/tlp.rs`): the tail loss probe of RACK-TLP, a probe about two
//!   round trips after the last ACK so that a lost tail is repaired by
//!   fast recovery, not the RTO;
//! - `rack` (`recovery/rack.rs`): RACK's time-based loss detection, which starts
//!   recovery a quarter of min_rtt after SACKs too few for fast
//!   retransmit, and resends a recovery's lost tail;
//! - `frto` (`recovery/frto.rs`): F-RTO (RFC 5682, SACK-enhanced, as
//!   tcp_process_loss), which undoes a spurious timeout's window cut and
//!   go-back (in the profile from model version 6);
//! - `hystart` (`recovery/hystart.rs`): CUBIC's HyStart, which ends slow start on
//!   a long ACK train or a rising RTT before the buffer overflows;
//! - `linux_cwnd` (`recovery/linux_cwnd.rs`): cwnd grown by what an ACK newly
//!   delivers, ssthresh from cwnd;
//! - `dctcp_linux` (`cc/dctcp_linux.rs`): with cc = "dctcp", DCTCP's
//!   arithmetic, loss response and CE-change ACK as tcp_dctcp.c;
//!
//! and Linux's defaults where ecnlab has the key: CUBIC, IW 10, RTO 200 ms
//! to 120 s starting at 1 s, retransmissions Not-ECT (RFC 3168).
//!
//! The mechanisms' state and rules are in `recovery/`, and the checks
//! across their keys; this file is the list of values that turns them on.

use super::cc::Fill;

/// Linux's defaults (net/ipv4 tcp.h: TCP_RTO_MIN 200 ms, TCP_RTO_MAX
/// 120 s, TCP_TIMEOUT_INIT 1 s, TCP_INIT_CWND 10, TCP_DELACK_MIN 40 ms;
/// tcp_cubic the default congestion control).
pub const PROFILE: super::profile::ProfileDecl = super::profile::ProfileDecl {
    about: crate::switch::scheme::About {
        params: &[
            super::delack_linux::LinuxDelackParams::PARAMS,
            super::sack_blocks::SackBlocksParams::PARAMS,
            super::cc::dctcp_linux::DctcpLinuxParams::PARAMS,
        ],
        ..crate::switch::scheme::About::new(
            "linux",
            "Linux's TCP: CUBIC, Linux's RTO estimator (min 200ms, initial 1s), PRR with Linux's \
             reduction bound for loss and ECN cuts, Linux's delayed ACKs (quick ACKs, every second \
             segment, 40ms timer), three SACK blocks per ACK, lost-retransmission detection, the SACK scoreboard kept across RTOs, the timer restarted at a retransmission of snd_una, RACK-TLP's tail loss probes and reordering timer, F-RTO, CUBIC's HyStart and Reno-friendly α, DCTCP as tcp_dctcp.c (with cc = \"dctcp\"), IW 10, Not-ECT retransmissions; its keys may be set without it",
            "Linux net/ipv4 tcp_input.c, tcp_output.c, tcp_cubic.c, tcp_dctcp.c; RFC 2018, RFC 5682, RFC 6298, RFC 6937, RFC 8985",
        )
    },
    fills: &[
        ("cc", Fill::Json("\"cubic\"")),
        ("linux_rto", Fill::Json("true")),
        ("prr", Fill::Json("\"linux\"")),
        ("linux_delayed_ack", Fill::Json("true")),
        ("lost_retransmit", Fill::Json("true")),
        ("rto_keeps_sack", Fill::Json("true")),
        ("sack_blocks", Fill::Json("3")),
        ("rto_rearm_head", Fill::Json("true")),
        ("tlp", Fill::Json("true")),
        ("rack", Fill::Json("true")),
        ("frto", Fill::Json("true")),
        ("hystart", Fill::Json("true")),
        ("cubic_linux", Fill::Json("true")),
        ("linux_cwnd", Fill::Json("true")),
        ("dctcp_linux", Fill::Json("true")),
        ("delayed_ack_timeout", Fill::Json("\"40ms\"")),
        ("min_rto", Fill::Json("\"200ms\"")),
        ("init_rto", Fill::Json("\"1s\"")),
        ("max_rto", Fill::Json("\"120s\"")),
        ("init_cwnd", Fill::Json("10")),
        ("ect_retransmits", Fill::Json("false")),
    ],
};

#[cfg(test)]
mod tests {
    use crate::config::TransportCfg;
    use crate::host::tcp_tx::TcpSender;
    use crate::units::Time;

    const MSS: u64 = 1460;
    const US: Time = 1_000_000;

    fn sender(json: &str) -> TcpSender {
        let t: TransportCfg = serde_json::from_str(json).unwrap();
        let mut s = TcpSender::new(&t);
        s.limit = u64::MAX;
        s.open(0);
        s.on_synack(100 * US, 0);
        s
    }

    fn send_all(s: &mut TcpSender, now: Time) -> Vec<(u64, bool)> {
        std::iter::from_fn(|| s.next_segment(now)).map(|g| (g.seq / MSS, g.retransmit)).collect()
    }

    /// Steady 100 us RTTs with min_rto 5 ms (the issue's 1 Gbps set-up):
    /// RFC 6298's RTO sits at the 5 ms floor, only 4.9 ms above srtt, while
    /// Linux's is srtt + rto_min = 5.1 ms from the first sample on and
    /// stays there (rttvar_us ≥ tcp_rto_min_us).
    #[test]
    fn linux_rto_is_srtt_plus_rto_min() {
        let json = |linux: bool| format!(r#"{{"cc": "reno", "min_rto": "5ms", "linux_rto": {linux}}}"#);
        let mut lx = sender(&json(true));
        let mut rfc = sender(&json(false));
        assert_eq!(lx.rto, 5_100 * US);
        for s in [&mut lx, &mut rfc] {
            let mut now = 100 * US;
            for _ in 0..200 {
                // One segment per round trip: the window plays no part.
                s.limit = s.nxt + MSS;
                send_all(s, now);
                now += 100 * US;
                let una = s.nxt;
                s.on_ack(now, una, (0, 0), false, now - 100 * US);
            }
            assert_eq!(s.srtt(), 100 * US);
        }
        assert!(lx.rto >= lx.srtt() + 5_000 * US && lx.rto <= 5_101 * US, "{}", lx.rto);
        assert_eq!(rfc.rto, 5_000 * US);
    }

    /// One loss in a full window of 20 (Reno: ssthresh 10), segment 0
    /// lost, the ACKs of 1..19 arriving as duplicates SACKing one more
    /// segment each (ecnlab sends nothing on the first two: no limited
    /// transit). With PRR (RFC 6937 §3, Linux's bound) the third sends the
    /// retransmission and, while the pipe is above ssthresh, every second
    /// ACK one new segment (⌈delivered·10/20⌉ − prr_out): acks 5, 7, 9,
    /// 11, 13. The pipe reaches ssthresh at ack 15; from ack 16 each ACK
    /// releases one segment (what it delivered), holding the pipe at 10.
    /// Without PRR cwnd drops to 10 at once: nothing goes from the
    /// retransmission until ack 11, then one per ACK. Both send 9 new
    /// segments in the round trip.
    #[test]
    fn prr_spreads_the_loss_cut() {
        let run = |prr: &str| {
            let mut s = sender(&format!(r#"{{"cc": "reno", "init_cwnd": 20, "prr": "{prr}"}}"#));
            assert_eq!(send_all(&mut s, 0).len(), 20);
            let mut sends = Vec::new();
            for k in 1..20u64 {
                s.on_ack(1000, 0, (MSS, (k + 1) * MSS), false, 0);
                for (seq, rtx) in send_all(&mut s, 1000) {
                    sends.push((k, if rtx { "R" } else { "N" }, seq));
                }
            }
            (sends, s.pipe() / MSS)
        };
        let (prr, pipe) = run("linux");
        let acks: Vec<(u64, &str)> = prr.iter().map(|x| (x.0, x.1)).collect();
        assert_eq!(
            acks,
            [(3, "R"), (5, "N"), (7, "N"), (9, "N"), (11, "N"), (13, "N"), (16, "N"), (17, "N"), (18, "N"), (19, "N")]
        );
        assert_eq!(pipe, 10);
        let (off, pipe) = run("off");
        let acks: Vec<u64> = off.iter().map(|x| x.0).collect();
        assert_eq!(acks, [3, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
        assert_eq!(pipe, 10);
    }

    /// An ECN cut with PRR (Linux's CWR state): RFC 3168 Reno halves 20 to
    /// 10 on ECE, and instead of a silent half round trip the sender sends
    /// one segment per two ACKs (⌈k·10/20⌉ − prr_out, the first at once):
    /// acks 1, 3, ..., 17. At ack 19 the pipe (20 + 9 − 19) has reached
    /// ssthresh, so nothing; ack 20 completes the cut's window, cwnd is
    /// ssthresh and the flight 9, so one more. Without PRR: nothing until
    /// the flight falls below 10 at ack 11, then one per ACK. Ten each.
    #[test]
    fn prr_spreads_the_ecn_cut() {
        for prr in ["linux", "off"] {
            let mut s = sender(&format!(r#"{{"cc": "ecn-star", "init_cwnd": 20, "prr": "{prr}"}}"#));
            assert_eq!(send_all(&mut s, 0).len(), 20);
            let mut sends = Vec::new();
            for k in 1..=20u64 {
                s.on_ack(1000, k * MSS, (0, 0), k == 1, 0);
                if !send_all(&mut s, 1000).is_empty() {
                    sends.push(k);
                }
            }
            if prr == "linux" {
                assert_eq!(sends, [1, 3, 5, 7, 9, 11, 13, 15, 17, 20]);
            } else {
                assert_eq!(sends, [11, 12, 13, 14, 15, 16, 17, 18, 19, 20]);
            }
            assert_eq!((s.w.cwnd, s.w.ssthresh), (10.0, 10.0), "{prr}");
        }
    }
}
