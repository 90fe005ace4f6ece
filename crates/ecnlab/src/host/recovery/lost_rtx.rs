//! Lost-retransmission detection (Linux's tcp_mark_lost_retrans, the rule
//! RACK, RFC 8985, later generalised), opt-in by
//! `transport.lost_retransmit`.
//!
//! Without it a lost fast retransmission is found only by the RTO: the
//! duplicate ACKs keep arriving, SACKing ever newer data, while the hole
//! waits. Here the sender notes snd_max when it retransmits the first hole
//! (snd_una); once the receiver SACKs data above that mark, data sent
//! after the retransmission has arrived while the retransmission has not:
//! it was lost (barring reordering, which Linux also ignores here), and
//! the hole is sent again at once, in recovery, without a timeout.
//!
//! Such a recovery can outlive several lost copies of the hole while new
//! data goes out behind it, so snd_max − snd_una comes to count mostly
//! data SACKed rounds ago; halving it for the next loss's ssthresh (RFC
//! 5681 Eq. 4) let ssthresh grow with every loss under early drops (issue
//! 50: PIE at 100 Mbps, 4× the default stack's drops). With this key a
//! loss sets ssthresh from cwnd instead, as Linux's ssthresh hooks do
//! (`linux_cwnd.rs`).
//!
//! Modelled for the first hole only, which is what holds snd_una and so
//! what ends in an RTO; a later hole's lost retransmission still waits for
//! the timer. It needs PRR (`prr`) on: with cwnd cut at once it has not
//! been validated (a 10 Gbps FQ-CoDel run showed more RTOs with it than
//! without, not yet explained). Not modelled from RACK: time-based loss marking with a
//! reordering window, and the tail loss probe.

use super::mechanism::{Mechanism, MechanismDecl, Shared};
use crate::config::param::section;
use crate::config::TransportCfg;
use crate::host::snd::{Segment, Snd};
use crate::units::Time;

section! {
    /// The key of lost-retransmission detection in `[transport]`.
    pub struct LostRtxParams {
        /// Resend a lost fast retransmission of the first hole once data sent after it is SACKed,
        /// instead of waiting for the RTO (Linux tcp_mark_lost_retrans; RACK's rule for it). Needs
        /// `prr`. The `linux` profile turns it on.
        lost_retransmit: bool = false, resolved Given, source "Linux tcp_input.c tcp_mark_lost_retrans; RFC 8985 §2";
    }
}

/// The mechanism's declaration: its registry line is in `recovery/mod.rs`.
pub const DECL: MechanismDecl = MechanismDecl {
    about: crate::switch::scheme::About {
        params: &[LostRtxParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "lost_retransmit",
            "a lost retransmission of the first hole resent once data sent after it is SACKed, not after an RTO",
            "Linux tcp_input.c tcp_mark_lost_retrans; RFC 8985 §2",
        )
    },
};

impl LostRtxParams {
    pub fn of(t: &crate::config::TransportCfg) -> LostRtxParams {
        t.scheme_keys(LostRtxParams::read).expect("a checked config")
    }
}

/// The first hole's retransmission, watched (in `Recovery`).
#[derive(Clone, Copy, Debug, Default)]
pub struct LostRtx {
    /// snd_max when the first hole was last retransmitted (0: none).
    pub mark: u64,
    /// Its retransmission is known lost: resend it.
    pub resend_una: bool,
}

impl LostRtx {
    /// The first hole (at snd_una) has just been retransmitted: note
    /// snd_max.
    pub fn mark(&mut self, s: &Snd) {
        self.mark = s.max_sent;
    }

    /// After an ACK in recovery: SACKed data above the mark means the
    /// first hole's retransmission was lost; resend it.
    pub fn check(&mut self, s: &Snd) {
        if self.mark != 0 && s.high_sack() > self.mark {
            self.mark = 0;
            self.resend_una = true;
        }
    }

    /// snd_una advanced in recovery: the new first hole, if already
    /// retransmitted, is judged from now on (a later mark than the true
    /// one: slower to find a loss, never wrong).
    pub fn una_moved(&mut self, s: &Snd) {
        self.resend_una = false;
        self.mark = if s.una < s.rtx_next { s.max_sent } else { 0 };
    }

    /// A recovery starts or an RTO fires: no mark, no resend pending.
    pub fn reset(&mut self) {
        *self = LostRtx::default();
    }

    /// The resend of the first hole, if one is due.
    pub fn resend(&mut self, s: &Snd) -> Option<Segment> {
        if !self.resend_una {
            return None;
        }
        self.resend_una = false;
        let una = s.una;
        let next_sacked = s.sacked.iter().find(|r| r.0 > una).map_or(s.high_sack(), |r| r.0);
        let len = (next_sacked - una).min(s.p.mss as u64) as u32;
        if len == 0 {
            return None;
        }
        self.mark(s);
        Some(Segment { seq: una, len, retransmit: true, cwr: false })
    }
}

impl Mechanism for LostRtx {
    type Params = ();
    const DECL: MechanismDecl = DECL;

    fn params(t: &TransportCfg) -> Option<()> {
        LostRtxParams::of(t).lost_retransmit.then_some(())
    }

    fn on_recovery_ack(&mut self, _: &(), _: &mut Shared, s: &mut Snd, _: u64, una_moved: bool, _: Option<u64>) {
        if una_moved {
            self.una_moved(s);
        }
        self.check(s);
    }

    fn enter(&mut self, _: &()) {
        self.reset();
    }

    fn on_timeout(&mut self, _: &(), _: &mut Shared, _: &Snd, _: Time) {
        self.reset();
    }

    #[inline]
    fn resend_lost(&mut self, _: &(), s: &Snd) -> Option<Segment> {
        self.resend(s)
    }

    fn on_hole_resent(&mut self, _: &(), s: &Snd) {
        self.mark(s);
    }
}

#[cfg(test)]
mod tests {
    use crate::config::TransportCfg;
    use crate::host::tcp_tx::TcpSender;

    const MSS: u64 = 1460;

    /// Segment 0 of a full window of 20 is lost, and so is its fast
    /// retransmission. The duplicate ACKs go on SACKing 4..19, then the new
    /// segments PRR sent after the retransmission (20, 21, ...). With
    /// detection, the first SACK of segment 20 (sent after the
    /// retransmission, snd_max 20 then) resends segment 0 at once, and its
    /// ACK ends recovery without a timeout; without it nothing resends
    /// segment 0 until the RTO.
    #[test]
    fn a_lost_retransmission_is_repaired_without_an_rto() {
        for on in [true, false] {
            let t: TransportCfg = serde_json::from_str(&format!(
                r#"{{"cc": "reno", "init_cwnd": 20, "prr": "linux", "lost_retransmit": {on}}}"#
            ))
            .unwrap();
            let mut s = TcpSender::new(&t);
            s.limit = u64::MAX;
            s.open(0);
            s.on_synack(100, 0);
            let mut sent = Vec::new();
            sent.extend(std::iter::from_fn(|| s.next_segment(200)));
            assert_eq!(sent.len(), 20);
            sent.clear();
            // SACKs of 1..=19, then of the new segments as they arrive.
            let mut k = 1;
            let mut resent = 0;
            while k < 26 {
                s.on_ack(1000 + k, 0, (MSS, (k + 1) * MSS), false, 0);
                for g in std::iter::from_fn(|| s.next_segment(1000 + k)) {
                    if g.seq == 0 {
                        resent += 1; // the first is the fast retransmission, lost
                        if resent == 2 {
                            assert!(on, "resent without detection");
                            assert_eq!(k, 20, "resent when segment 20 was SACKed");
                        }
                    }
                }
                k += 1;
            }
            assert_eq!(resent, if on { 2 } else { 1 });
            assert_eq!(s.timeouts, 0);
            if on {
                // The resend arrives: everything up to snd_max is acknowledged.
                let una = s.max_sent;
                s.on_ack(3000, una, (0, 0), false, 0);
                assert!(!s.in_recovery && s.timeouts == 0);
            }
        }
    }
}
