//! The SACK scoreboard kept across a retransmission timeout, opt-in by
//! `transport.rto_keeps_sack` (on in the `linux` profile).
//!
//! By default an RTO forgets what the receiver SACKed and goes back N from
//! snd_una: every segment above the first hole is sent again, though the
//! receiver already holds the SACKed ones. RFC 2018 §8 told senders to drop
//! SACK information at a timeout, because a receiver may renege (discard
//! data it SACKed); RFC 6675 §5.1 notes that this has come to be seen as
//! too strict and that a sender with tests for reneging may keep it. Linux
//! keeps its SACKed marks at an RTO (tcp_enter_loss) unless its reneging
//! check fires. ecnlab's receivers never renege, so with this key the
//! go-back after an RTO skips the SACKed ranges and resends only holes,
//! and the SACKed bytes below snd_nxt do not count as in flight, nor as
//! newly delivered when the ACK that fills the hole covers them: slow
//! start grows by what the go-back delivered, not by the SACKed window
//! above it (Linux counts a segment delivered once, `linux_cwnd.rs`;
//! counting it again sent a window-sized burst after every RTO).

use super::mechanism::{Mechanism, MechanismDecl, Traits};
use crate::config::param::section;
use crate::config::TransportCfg;
use crate::host::snd::Snd;

section! {
    /// The key of the scoreboard kept across an RTO, in `[transport]`.
    pub struct RtoSackParams {
        /// After a retransmission timeout, keep the SACK scoreboard and resend only the holes
        /// below snd_max, not everything above snd_una (go-back-N). ecnlab's receivers never
        /// discard SACKed data, so the scoreboard stays true. The `linux` profile turns it on.
        rto_keeps_sack: bool = false, resolved Given, source "RFC 6675 §5.1; RFC 2018 §8; Linux tcp_input.c tcp_enter_loss";
    }
}

/// The mechanism's declaration: its registry line is in `recovery/mod.rs`.
pub const DECL: MechanismDecl = MechanismDecl {
    about: crate::switch::scheme::About {
        params: &[RtoSackParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "rto_keeps_sack",
            "the SACK scoreboard kept across an RTO, so that the go-back resends only holes",
            "RFC 6675 §5.1; RFC 2018 §8; Linux tcp_input.c tcp_enter_loss",
        )
    },
};

impl RtoSackParams {
    pub fn of(t: &crate::config::TransportCfg) -> RtoSackParams {
        t.scheme_keys(RtoSackParams::read).expect("a checked config")
    }
}

/// The mechanism has no state of its own: the core keeps the scoreboard.
#[derive(Clone, Copy, Debug, Default)]
pub struct RtoSack;

impl Mechanism for RtoSack {
    type Params = ();
    const DECL: MechanismDecl = DECL;

    fn params(t: &TransportCfg) -> Option<()> {
        RtoSackParams::of(t).rto_keeps_sack.then_some(())
    }

    /// The go-back skips SACKed data; and since the cumulative ACK at the
    /// end of it covers the SACKed data kept, cwnd must grow by what is
    /// newly delivered, not by what is acknowledged.
    fn traits(_: &(), t: &mut Traits) {
        t.keeps_sack = true;
        t.grows_by_delivered = true;
    }

    /// Going back after an RTO with the scoreboard kept, SACKed data is
    /// not in flight.
    #[inline]
    fn open_flight(&self, _: &(), s: &Snd) -> Option<u64> {
        (s.una < s.recover).then(|| s.flight_less_sacked())
    }
}

#[cfg(test)]
mod tests {
    use crate::config::TransportCfg;
    use crate::host::tcp_tx::TcpSender;

    const MSS: u64 = 1460;

    /// 20 segments out; 0 and 10 are lost and 1..=9, 11..=19 SACKed, and
    /// then the RTO fires (say the fast retransmissions were lost too).
    /// RFC 6675 §5.1 with the scoreboard kept: the go-back resends only
    /// the two holes, 0 and 10, then new data from 20. Without the key
    /// (RFC 2018 §8: scoreboard dropped) it resends 0, then (the ACK of 0
    /// moving snd_nxt to 10) 10, 11, ..., 19: 9 segments the receiver holds.
    #[test]
    fn an_rto_after_sacks_resends_only_the_holes() {
        for keep in [true, false] {
            let t: TransportCfg =
                serde_json::from_str(&format!(r#"{{"cc": "reno", "init_cwnd": 20, "rto_keeps_sack": {keep}}}"#))
                    .unwrap();
            let mut s = TcpSender::new(&t);
            s.limit = u64::MAX;
            s.open(0);
            s.on_synack(100, 0);
            assert_eq!(std::iter::from_fn(|| s.next_segment(200)).count(), 20);
            for k in (1..20u64).filter(|&k| k != 10) {
                let lo = if k < 10 { MSS } else { 11 * MSS };
                s.on_ack(1000 + k, 0, (lo, (k + 1) * MSS), false, 0);
            }
            let _ = std::iter::from_fn(|| s.next_segment(1100)).count();
            s.on_timeout(50_000_000_000);
            // cwnd 1 after the RTO: one segment, then grow by one per ACK.
            let mut sent = Vec::new();
            // The receiver holds 1..=9 and 11..=19; it ACKs its first gap.
            let mut held: std::collections::BTreeSet<u64> = (1..20).filter(|&q| q != 10).collect();
            let mut now = 50_000_000_000;
            while sent.len() < 20 {
                let segs: Vec<_> = std::iter::from_fn(|| s.next_segment(now)).collect();
                assert!(!segs.is_empty(), "keep {keep}: the sender stalled after {sent:?}");
                for g in &segs {
                    sent.push(g.seq / MSS);
                    held.insert(g.seq / MSS);
                    let ack = (0..).find(|q| !held.contains(q)).unwrap();
                    now += 1000;
                    s.on_ack(now, ack * MSS, (0, 0), false, now - 500);
                }
            }
            let dup = sent.iter().filter(|&&q| q < 20 && q != 0 && q != 10).count();
            if keep {
                assert_eq!(&sent[..3], &[0, 10, 20], "keep: {sent:?}");
                assert_eq!(dup, 0);
            } else {
                // The ACK of 0 moves snd_nxt to 10; from there it goes back N.
                assert_eq!(&sent[..3], &[0, 10, 11], "go-back-N: {sent:?}");
                assert_eq!(dup, 9);
            }
        }
    }
}
