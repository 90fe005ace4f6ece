//! pFabric's sender (pFabric §4.2; ns-2 MinTCP and YAPS, as
//! docs/schemes/pfabric.md reads them): what differs from the common TCP of `tcp_tx.rs`.
//!
//! - Loss is recovered by timeouts only: duplicate ACKs start nothing
//!   (`dupthresh` is never reached), and the RTO is fixed at min_rto with
//!   no backoff (`max_rto` is pinned to it).
//! - On a timeout: ssthresh = max(cwnd/2, 2), cwnd = 1, and sending starts
//!   again from the first unacknowledged byte, skipping what the receiver
//!   has SACKed (the scoreboard is kept, as ns-2's clear_on_timeout_ false).
//! - SACKed bytes do not count against the window.
//! - After `PROBE_AFTER` consecutive timeouts the sender probes: one
//!   1-byte segment of the first unacknowledged byte per RTO, until any
//!   ACK arrives (ns-2 prob_cap_). One byte is the smallest payload a
//!   segment has here; the probe costs that plus the header on the wire.
//! - Every data packet carries the flow's remaining size, bytes neither
//!   cumulatively acknowledged nor SACKed when it is (re)sent (YAPS; ns-2's
//!   SACK-based prio_scheme_ 2 without its +10), which pFabric switches
//!   schedule by.
//!
//! The window rule is the cc's (`cc/min_tcp.rs`); ECN is off.

use super::cc::MIN_CWND;
use super::snd::{Segment, Snd};
use crate::units::Time;

/// FQ-CoDel in the DCN, Table II ("pFabric TCP tuning"), as ecnlab's keys.
/// The delayed-ACK row is ns-2 FullTcp's `interval_`: FullTcp acknowledges
/// once a full segment's worth of bytes is unacknowledged (segsperack_ 1,
/// which the pFabric scripts keep) and otherwise when that timer fires, so
/// a segment shorter than the MSS waits at most 6 us instead of 100 ms.
pub const PROFILE: super::profile::ProfileDecl = super::profile::ProfileDecl {
    about: crate::switch::scheme::About::new(
        "pfabric",
        "the pFabric authors' ns-2 TCP settings: 45us RTOs, 1us clock, 6us byte-counted delayed ACK, \
         IW 12, max cwnd the switch buffer less one packet, basic congestion avoidance",
        "FQ-CoDel in the DCN, Table II",
    ),
    fills: &[
        ("min_rto", super::cc::Fill::Json("\"45us\"")),
        ("max_rto", super::cc::Fill::Json("\"2s\"")),
        ("init_rto", super::cc::Fill::Json("\"45us\"")),
        ("clock_granularity", super::cc::Fill::Json("\"1us\"")),
        ("delayed_ack", super::cc::Fill::Json("1")),
        ("delayed_ack_bytes", super::cc::Fill::Json("true")),
        ("delayed_ack_timeout", super::cc::Fill::Json("\"6us\"")),
        ("rx_window", super::cc::Fill::Json("1000000")),
        ("init_cwnd", super::cc::Fill::Json("12")),
        ("max_cwnd", super::cc::Fill::QueueMinusOne),
        ("ca", super::cc::Fill::Json("\"basic\"")),
    ],
};

/// Consecutive timeouts that start probe mode (ns-2 scripts: prob_cap_ 5).
pub const PROBE_AFTER: u32 = 5;

/// pFabric's part of a sender's state.
#[derive(Clone, Copy, Debug, Default)]
pub struct PfabricTx {
    /// The sender is pFabric's (cc = "pfabric").
    pub on: bool,
    /// Timeouts since the last ACK.
    pub streak: u32,
    /// In probe mode.
    pub probing: bool,
    /// A probe may go (one per timeout).
    probe_due: bool,
}

impl PfabricTx {
    pub fn new(on: bool) -> PfabricTx {
        PfabricTx { on, ..PfabricTx::default() }
    }

    /// Any ACK ends probe mode and the run of timeouts.
    #[inline]
    pub fn heard_from_peer(&mut self) {
        self.streak = 0;
        self.probing = false;
        self.probe_due = false;
    }
}

impl PfabricTx {
    /// The retransmission timer fired with data outstanding.
    pub fn timeout(&mut self, s: &mut Snd, now: Time) -> bool {
        s.timeouts += 1;
        self.streak += 1;
        if self.streak >= PROBE_AFTER {
            self.probing = true;
            self.probe_due = true;
        }
        s.w.ssthresh = (s.w.cwnd / 2.0).max(MIN_CWND);
        s.w.cwnd = 1.0;
        s.nxt = s.una;
        s.recover = s.max_sent;
        s.rto_deadline = now + s.rto;
        false
    }

    /// The next segment outside loss recovery (pFabric never enters it),
    /// within `window` bytes of un-SACKed flight.
    pub fn segment(&mut self, s: &mut Snd, window: u64) -> Option<Segment> {
        if self.probing {
            if !self.probe_due {
                return None;
            }
            self.probe_due = false;
            return Some(Segment { seq: s.una, len: 1, retransmit: true, cwr: false });
        }
        let mss = s.p.mss as u64;
        // The first byte at or after nxt the receiver does not hold, and
        // where its next SACKed range starts.
        let mut at = s.nxt;
        let mut sacked_below = 0;
        let mut next_sacked = u64::MAX;
        for &(lo, hi) in &s.sacked {
            if lo > at {
                next_sacked = lo;
                break;
            }
            sacked_below += hi.min(s.nxt).saturating_sub(lo);
            at = at.max(hi);
        }
        let in_flight = s.nxt - s.una - sacked_below;
        if in_flight > 0 && in_flight + mss > window.max(mss) {
            return None;
        }
        if at >= s.limit {
            return None;
        }
        let len = (s.limit - at).min(mss).min(next_sacked - at) as u32;
        let retransmit = at < s.max_sent;
        s.nxt = at + len as u64;
        s.max_sent = s.max_sent.max(s.nxt);
        Some(Segment { seq: at, len, retransmit, cwr: false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TransportCfg;
    use crate::host::tcp_tx::TcpSender;

    const MSS: u64 = 1460;
    const US: Time = 1_000_000;
    /// pFabric's fixed RTO (YAPS retx_timeout 45 us; docs/schemes/pfabric.md).
    const RTO: Time = 45 * US;

    /// A pFabric sender as cc = "pfabric" resolves (IW 12, RTO 45 us), with
    /// `size` bytes to send, established at 10 us after a 10 us handshake.
    fn sender(size: u64) -> TcpSender {
        let t: TransportCfg = serde_json::from_str(r#"{"cc": "pfabric", "init_cwnd": 12, "min_rto": "45us"}"#).unwrap();
        let mut s = TcpSender::new(&t);
        s.limit = size;
        s.open(0);
        s.on_synack(10 * US, 0);
        s
    }

    fn send_all(s: &mut TcpSender, now: Time) -> Vec<Segment> {
        std::iter::from_fn(|| s.next_segment(now)).collect()
    }

    /// Prediction 4 of docs/schemes/pfabric.md: a lost mid-flow segment is
    /// resent only by the timer, exactly one RTO (45 us) after its last
    /// restart (the last ACK of new data), with cwnd back at 1 and
    /// ssthresh = max(cwnd/2, 2); eleven duplicate ACKs retransmit nothing.
    #[test]
    fn loss_is_recovered_by_timeout_only() {
        let mut s = sender(100 * MSS);
        assert_eq!(send_all(&mut s, 10 * US).len(), 12, "IW 12: a BDP at line rate");
        // Segments 0..5 are acknowledged at 20 us: the timer restarts.
        s.on_ack(20 * US, 5 * MSS, (0, 0), false, 10 * US);
        assert_eq!(s.w.cwnd, 13.0, "one segment per ACK in slow start");
        assert_eq!(s.rto_deadline, 20 * US + RTO);
        let sent = send_all(&mut s, 20 * US);
        assert_eq!(sent.len(), 6, "13 − 7 segments in flight");
        // Segment 5 is lost; 6..=16 arrive and come back as duplicate ACKs.
        for k in 6..=16u64 {
            s.on_ack(21 * US, 5 * MSS, (6 * MSS, (k + 1) * MSS), false, 11 * US);
            // SACKed data leaves the window, so new data flows; never a resend.
            assert!(send_all(&mut s, 21 * US).iter().all(|g| !g.retransmit && g.seq >= 18 * MSS));
        }
        assert!(!s.in_recovery);
        assert_eq!((s.w.cwnd, s.timeouts, s.retransmits), (13.0, 0, 0));
        assert_eq!(s.rto_deadline, 20 * US + RTO, "duplicate ACKs do not restart the timer");
        s.on_timeout(20 * US + RTO);
        assert_eq!((s.w.cwnd, s.w.ssthresh), (1.0, 6.5));
        let seg = s.next_segment(20 * US + RTO).expect("the retransmission");
        assert!(seg.retransmit && seg.seq == 5 * MSS && seg.len == MSS as u32);
        assert!(s.next_segment(20 * US + RTO).is_none(), "cwnd 1: one segment");
        assert_eq!(s.rto_deadline, 20 * US + 2 * RTO, "fixed RTO, no backoff");
        // The hole filled, the cumulative ACK covers everything sent.
        let top = s.max_sent;
        s.on_ack(70 * US, top, (0, 0), false, 65 * US);
        assert_eq!((s.w.cwnd, s.timeouts, s.retransmits), (2.0, 1, 1));
        let next = s.next_segment(70 * US).expect("sending goes on");
        assert!(!next.retransmit && next.seq == top, "{next:?}");
    }

    /// After a timeout the sender resends from snd_una but skips what the
    /// receiver SACKed (ns-2 clear_on_timeout_ false; YAPS).
    #[test]
    fn resend_after_timeout_skips_sacked_data() {
        let mut s = sender(100 * MSS);
        send_all(&mut s, 10 * US);
        // Segments 0 and 2 lost; 1 and 3..=11 SACKed.
        s.on_ack(20 * US, 0, (MSS, 2 * MSS), false, 10 * US);
        s.on_ack(20 * US, 0, (3 * MSS, 12 * MSS), false, 10 * US);
        s.on_timeout(10 * US + RTO);
        s.w.cwnd = 3.0; // room for more than the holes
        let seqs: Vec<u64> = send_all(&mut s, 10 * US + RTO).iter().map(|g| g.seq / MSS).collect();
        assert_eq!(seqs, vec![0, 2, 12], "the holes, then new data");
    }

    /// Prediction 5 of docs/schemes/pfabric.md: a black-holed flow sends one
    /// full segment after each of its first 4 timeouts, then from the 5th
    /// (ns-2 prob_cap_ 5) only a 1-byte probe per RTO; the first ACK back
    /// ends probe mode and full segments flow again.
    #[test]
    fn probe_mode_after_five_timeouts() {
        let mut s = sender(100 * MSS);
        send_all(&mut s, 10 * US);
        let mut now = 10 * US;
        for k in 1..=6u32 {
            now += RTO;
            assert_eq!(s.rto_deadline, now, "timeout {k} comes one fixed RTO after the last");
            s.on_timeout(now);
            let sent = send_all(&mut s, now);
            let want = if k < PROBE_AFTER { MSS as u32 } else { 1 };
            assert_eq!(sent.len(), 1, "timeout {k}");
            assert_eq!((sent[0].seq, sent[0].len), (0, want), "timeout {k}");
            assert_eq!(s.pf.probing, k >= PROBE_AFTER);
        }
        // A duplicate ACK (the receiver had byte 0 already) ends probe mode.
        s.on_ack(now + US, 0, (0, 0), false, now);
        assert!(!s.pf.probing && s.pf.streak == 0);
        let seg = s.next_segment(now + US).expect("sending resumes");
        assert_eq!((seg.seq, seg.len), (0, MSS as u32));
    }

    /// Every data packet carries the flow's remaining bytes (size − snd_una
    /// − SACKed, as docs/schemes/pfabric.md says),
    /// read as it is sent (`World::send_packet` stamps `remaining()` right
    /// after `next_segment`): 30 segments, all unacknowledged → 30·MSS;
    /// after 4 are acknowledged and 2 more SACKed → 24·MSS, the
    /// retransmission included. Other ccs stamp nothing (prio 0).
    #[test]
    fn packets_carry_remaining_size() {
        let stamped = |s: &mut TcpSender, now: Time| -> Vec<(Segment, u64)> {
            std::iter::from_fn(|| s.next_segment(now).map(|g| (g, s.remaining()))).collect()
        };
        let mut s = sender(30 * MSS);
        let first = stamped(&mut s, 10 * US);
        assert!(first.len() == 12 && first.iter().all(|g| g.1 == 30 * MSS));
        s.on_ack(20 * US, 4 * MSS, (0, 0), false, 10 * US);
        s.on_ack(20 * US, 4 * MSS, (5 * MSS, 7 * MSS), false, 10 * US);
        let next = stamped(&mut s, 20 * US);
        assert!(!next.is_empty() && next.iter().all(|g| g.1 == 24 * MSS), "{next:?}");
        s.on_timeout(20 * US + RTO);
        let rtx = stamped(&mut s, 20 * US + RTO);
        assert!(rtx[0].0.retransmit && rtx[0].0.seq == 4 * MSS && rtx[0].1 == 24 * MSS);
        // The flow ends: remaining shrinks with every ACK, down to one segment.
        s.on_ack(30 * US + RTO, 29 * MSS, (0, 0), false, 20 * US + RTO);
        assert_eq!(s.remaining(), MSS);
        assert!(s.pf.on);
        let reno: TransportCfg = serde_json::from_str(r#"{"cc": "reno"}"#).unwrap();
        assert!(!TcpSender::new(&reno).pf.on);
    }
}
