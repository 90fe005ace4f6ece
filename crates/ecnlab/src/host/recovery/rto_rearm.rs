//! The retransmission timer restarted when the first hole is retransmitted,
//! opt-in by `transport.rto_rearm_head` (on in the `linux` profile).
//!
//! By default the timer runs from the last ACK that advanced snd_una (RFC
//! 6298 §5.3), so a fast recovery has one RTO in all to detect the loss
//! (duplicate ACKs) and get the retransmission of snd_una through the
//! queue the loss came from. Behind a full drop-tail buffer the RTT is
//! steady, rttvar decays, and the RTO sits just above srtt: it fires while
//! the retransmission is still queued, and the go-back resends what is
//! queued behind it. Linux restarts the timer whenever it retransmits the
//! head of its retransmission queue (tcp_xmit_retransmit_queue,
//! `rearm_timer`), so the retransmission gets a full RTO of its own. A
//! retransmission that is lost still ends in an RTO, one RTO after it was
//! sent.

use super::mechanism::{Mechanism, MechanismDecl, Shared};
use crate::config::param::section;
use crate::config::TransportCfg;
use crate::host::snd::{Segment, Snd};
use crate::units::Time;

section! {
    /// The key of the timer restart at a retransmission of snd_una, in `[transport]`.
    pub struct RtoRearmParams {
        /// In fast recovery, restart the retransmission timer when the segment at snd_una is
        /// retransmitted, as Linux does for the head of its retransmission queue, instead of
        /// letting it run from the last ACK that advanced snd_una. The `linux` profile turns it on.
        rto_rearm_head: bool = false, resolved Given, source "Linux tcp_output.c tcp_xmit_retransmit_queue; RFC 6298 §5";
    }
}

/// The mechanism's declaration: its registry line is in `recovery/mod.rs`.
pub const DECL: MechanismDecl = MechanismDecl {
    about: crate::switch::scheme::About {
        params: &[RtoRearmParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "rto_rearm_head",
            "the retransmission timer restarted when snd_una is retransmitted in recovery",
            "Linux tcp_output.c tcp_xmit_retransmit_queue; RFC 6298 §5",
        )
    },
};

impl RtoRearmParams {
    pub fn of(t: &crate::config::TransportCfg) -> RtoRearmParams {
        t.scheme_keys(RtoRearmParams::read).expect("a checked config")
    }
}

/// The mechanism has no state of its own: it moves the core's timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct RtoRearm;

impl Mechanism for RtoRearm {
    type Params = ();
    const DECL: MechanismDecl = DECL;

    fn params(t: &TransportCfg) -> Option<()> {
        RtoRearmParams::of(t).rto_rearm_head.then_some(())
    }

    #[inline]
    fn on_send(&mut self, _: &(), _: &Shared, s: &mut Snd, now: Time, seg: &Segment) {
        if seg.retransmit && s.in_recovery && seg.seq == s.una {
            s.rto_deadline = now + s.rto;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::TransportCfg;
    use crate::host::tcp_tx::TcpSender;
    use crate::units::Time;

    const MSS: u64 = 1460;
    const MS: Time = 1_000_000_000;

    /// 20 segments out at t = 0 with a 5 ms RTO (min_rto); segment 0 is
    /// lost. The ACK of nothing new arms the timer at 0 + 5 ms; duplicate
    /// ACKs SACKing 1..=3 arrive at 3 ms and the fast retransmission of
    /// segment 0 goes out then. Default (RFC 6298 §5.3: the timer is not
    /// restarted by a retransmission): it still expires at 5 ms. With the
    /// key (Linux): the retransmission restarts it, 3 + 5 = 8 ms.
    #[test]
    fn retransmitting_snd_una_restarts_the_timer() {
        for on in [false, true] {
            let t: TransportCfg =
                serde_json::from_str(&format!(r#"{{"cc": "reno", "init_cwnd": 20, "rto_rearm_head": {on}}}"#)).unwrap();
            let mut s = TcpSender::new(&t);
            s.limit = u64::MAX;
            s.open(0);
            s.on_synack(100, 0); // RTT 100 ps: the RTO is the 5 ms floor
            assert_eq!(s.rto, 5 * MS);
            assert_eq!(std::iter::from_fn(|| s.next_segment(0)).count(), 20);
            assert_eq!(s.rto_deadline, 5 * MS);
            for k in 1..=3u64 {
                s.on_ack(3 * MS, 0, (MSS, (k + 1) * MSS), false, 0);
            }
            assert!(s.in_recovery);
            let g = s.next_segment(3 * MS).expect("the fast retransmission");
            assert!(g.retransmit && g.seq == 0);
            assert_eq!(s.rto_deadline, if on { 8 * MS } else { 5 * MS }, "rto_rearm_head {on}");
            // A retransmission of a later hole does not restart it (cwnd
            // raised so that the pipe lets it go at once).
            let before = s.rto_deadline;
            s.w.cwnd = 40.0;
            s.on_ack(4 * MS, 0, (5 * MSS, 6 * MSS), false, 0);
            let g = s.next_segment(4 * MS).expect("the second hole");
            assert!(g.retransmit && g.seq == 4 * MSS);
            assert_eq!(s.rto_deadline, before);
        }
    }
}
