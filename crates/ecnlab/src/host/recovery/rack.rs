//! RACK's time-based loss detection (RFC 8985 §6) where ecnlab's SACK
//! recovery lacks it, opt-in by `transport.rack` (on in the `linux`
//! profile): the reordering timer in the open state, and the tail of a
//! recovery.
//!
//! Without it a sender that has SACKs for data above a hole, but fewer
//! than three (a burst that lost most of a window's tail: one or two
//! segments got through behind the hole), waits for the RTO, since fast
//! recovery wants three duplicate ACKs and a tail loss probe (`tlp.rs`)
//! is not sent while anything is SACKed (RFC 8985 §7.2). RACK instead
//! calls a segment lost once a segment sent after it has been delivered
//! and the time since it was sent exceeds the round trip of that later
//! segment by a reordering window, reo_wnd = min_rtt / 4 (§6.2; at most
//! srtt). Until then a timer waits for the rest of the window (§6.3).
//!
//! ecnlab keeps no send time per segment, so the timer is armed from an
//! upper bound: a hole below a SACKed segment was sent no later than the
//! SACKed one, whose own send time plus its round trip is the time its
//! ACK arrived. RACK's deadline for the hole is therefore at most reo_wnd
//! after the first ACK that SACKed data above it, and this timer fires
//! then: never before RACK would, later by the hole's lead over the
//! SACKed segment. When it fires with the hole still there, fast recovery
//! starts, which resends every hole below the highest SACK (ecnlab's
//! recovery calls them all lost, as RACK does once the timer expires).
//!
//! In recovery ecnlab already resends every hole below the highest SACK;
//! what RACK adds there is the tail above it, which a sized flow's
//! recovery otherwise leaves to the RTO when no new data is left to be
//! SACKed beyond it. Segments sent before the recovery began went before
//! every retransmission, so once an ACK reports a retransmission
//! delivered that left at least reo_wnd after the recovery's start
//! (else, by the same bound, reo_wnd after the start plus that ACK's
//! round trip), the data between the highest SACK and the recovery point
//! is marked lost and resent. A lost retransmission remains
//! `lost_rtx.rs`'s. Not modelled: RACK's adaptive reordering window (no
//! DSACK in ecnlab), and its time order of retransmissions.

use super::mechanism::{Fired, Mechanism, MechanismDecl, Shared};
use crate::config::param::section;
use crate::config::TransportCfg;
use crate::host::snd::Snd;
use crate::units::Time;

section! {
    /// The key of RACK's reordering timer in `[transport]`.
    pub struct RackParams {
        /// RACK's time-based loss detection: with data SACKed above a hole and too few duplicate
        /// ACKs for fast retransmit, start recovery once the hole has waited a reordering window
        /// (min_rtt/4) past the SACKed data's round trip; in recovery, resend the data above the
        /// highest SACK once a retransmission sent after it is delivered; instead of waiting for
        /// the RTO. The `linux` profile turns it on.
        rack: bool = false, resolved Given, source "RFC 8985 §6.2, §6.3; Linux tcp_recovery.c tcp_rack_mark_lost";
    }
}

/// The mechanism's declaration: its registry line is in `recovery/mod.rs`.
pub const DECL: MechanismDecl = MechanismDecl {
    about: crate::switch::scheme::About {
        params: &[RackParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "rack",
            "RACK's time-based loss detection: recovery started a reordering window after SACKs too few for fast retransmit, and a recovery's lost tail resent",
            "RFC 8985 §6.2, §6.3; Linux tcp_recovery.c tcp_rack_mark_lost",
        )
    },
};

impl RackParams {
    pub fn of(t: &crate::config::TransportCfg) -> RackParams {
        t.scheme_keys(RackParams::read).expect("a checked config")
    }
}

/// A connection's RACK state (in `Recovery`).
#[derive(Clone, Debug, Default)]
pub struct Rack {
    /// The smallest round trip seen (0: none yet).
    pub min_rtt: Time,
    /// The reordering timer's deadline (0: not armed).
    pub reo_at: Time,
    /// When the recovery under way began (0: none).
    pub rec_start: Time,
    /// Recoveries the timer started, and tails it marked lost in recovery.
    pub marks: u32,
    pub tails: u32,
}

impl Rack {
    /// The open state with data SACKed above snd_una: the timer's case.
    fn waiting(s: &Snd) -> bool {
        !s.in_recovery && s.una >= s.recover && !s.sacked.is_empty() && s.una < s.max_sent
    }

    /// After an ACK at `now` echoing a send time `ts_echo`: note the RTT;
    /// in the open state arm the timer on the first SACK above a hole and
    /// stop it when the hole is gone; in recovery judge the tail, marking
    /// the data below `lost_end` lost (`Shared::lost_end`; 0: nothing
    /// beyond the SACKed holes).
    #[cold]
    #[inline(never)]
    pub fn after_ack(&mut self, s: &Snd, lost_end: &mut u64, now: Time, ts_echo: Time) {
        let waiting = Rack::waiting(s);
        let (srtt, in_recovery, high, recover) = (s.srtt as Time, s.in_recovery, s.high_sack(), s.recover);
        let r = self;
        let rtt = now.saturating_sub(ts_echo);
        if rtt > 0 && (r.min_rtt == 0 || rtt < r.min_rtt) {
            r.min_rtt = rtt;
        }
        let reo_wnd = (r.min_rtt / 4).min(srtt);
        if !in_recovery {
            r.rec_start = 0;
            *lost_end = 0;
            if !waiting {
                r.reo_at = 0;
            } else if r.reo_at == 0 {
                r.reo_at = now + reo_wnd;
            }
            return;
        }
        if r.rec_start == 0 {
            // Recovery began on this ACK.
            r.rec_start = now;
            r.reo_at = 0;
            return;
        }
        // The tail above the highest SACK, sent before the recovery
        // began: this ACK reports a segment sent at ts_echo, in the
        // recovery; the tail went before it, so RACK calls it lost once
        // that lead exceeds reo_wnd, by now if ts_echo is that far past
        // the recovery's start, else by a timer (an upper bound, as above).
        if *lost_end >= recover || high >= recover || ts_echo < r.rec_start {
            return;
        }
        if ts_echo >= r.rec_start + reo_wnd {
            *lost_end = recover;
            r.tails += 1;
            r.reo_at = 0;
        } else if r.reo_at == 0 {
            r.reo_at = now + (r.rec_start + reo_wnd - ts_echo);
        }
    }

    /// The timer fired at `now`: was it RACK's, and must fast recovery
    /// start (the hole is still there: `Recover`)?
    pub fn fired(&mut self, s: &Snd, lost_end: &mut u64, now: Time) -> Fired {
        if self.reo_at == 0 || self.reo_at > now {
            return Fired::No;
        }
        self.reo_at = 0;
        if s.in_recovery {
            // The tail's deadline (`after_ack`): mark it lost.
            if *lost_end < s.recover {
                *lost_end = s.recover;
                self.tails += 1;
            }
        } else if Rack::waiting(s) {
            self.marks += 1;
            self.rec_start = now;
            return Fired::Recover;
        }
        Fired::Marked
    }

    /// An RTO fired: the timer stops, the recovery's marks go.
    pub fn reset(&mut self) {
        self.reo_at = 0;
        self.rec_start = 0;
    }
}

impl Mechanism for Rack {
    type Params = ();
    const DECL: MechanismDecl = DECL;

    fn params(t: &TransportCfg) -> Option<()> {
        RackParams::of(t).rack.then_some(())
    }

    fn after_ack(&mut self, _: &(), x: &mut Shared, s: &mut Snd, now: Time, ts_echo: Time, _: bool) {
        self.after_ack(s, &mut x.lost_end, now, ts_echo);
    }

    /// An RTO: the timer stops, the recovery's marks go.
    fn on_timeout(&mut self, _: &(), x: &mut Shared, _: &Snd, _: Time) {
        self.reset();
        x.lost_end = 0;
    }

    #[inline]
    fn deadline(&self) -> Time {
        self.reo_at
    }

    fn fired(&mut self, _: &(), x: &mut Shared, s: &mut Snd, now: Time) -> Fired {
        self.fired(s, &mut x.lost_end, now)
    }
}

#[cfg(test)]
mod tests {
    use crate::host::recovery::tlp::tests::send_all;
    use crate::host::tcp_tx::TcpSender;
    use crate::units::Time;

    const MSS: u64 = 1460;
    const US: Time = 1_000_000;
    const MS: Time = 1000 * US;

    /// TLP's test sender (the `linux` profile's recovery, TLP on), RACK on
    /// or off.
    fn sender(rack: bool) -> TcpSender {
        crate::host::recovery::tlp::tests::sender(true, &format!(r#", "rack": {rack}"#))
    }

    /// RFC 8985 §6.2-6.3 on the lock-out's pattern: 10 segments out at
    /// t = 100 us with a 100 us RTT (min_rtt 100 us: reo_wnd 25 us);
    /// segments 0..7 are lost and 8 and 9 arrive: two duplicate ACKs at
    /// 200 us, too few for fast retransmit, and no tail loss probe while
    /// data is SACKed (§7.2). RACK's timer fires 25 us after the first
    /// SACK, at 225 us, and recovery resends segment 0 then. Without it
    /// only the RTO (Linux: srtt + 200 ms) would.
    #[test]
    fn holes_below_two_sacks_are_resent_after_a_quarter_min_rtt() {
        for rack in [true, false] {
            let mut s = sender(rack);
            assert_eq!(send_all(&mut s, 100 * US).len(), 10);
            s.on_ack(200 * US, 0, (8 * MSS, 9 * MSS), false, 100 * US);
            s.on_ack(200 * US, 0, (8 * MSS, 10 * MSS), false, 100 * US);
            assert!(!s.in_recovery);
            let t = s.timer_deadline();
            if !rack {
                assert_eq!(t, s.rto_deadline);
                assert!(t > 200 * MS);
                continue;
            }
            assert_eq!(t, 225 * US);
            assert!(!s.pto_fired(t), "no probe while data is SACKed");
            assert!(s.reo_fired(t));
            assert!(s.in_recovery);
            let g = send_all(&mut s, t);
            assert!(g[0].retransmit && g[0].seq == 0, "{g:?}");
            assert_eq!(s.timeouts, 0);
        }
    }

    /// A sized flow of 10 segments loses 3 and 9, its last. 0..2 are
    /// ACKed, 4..8 SACKed; the third duplicate ACK (at 200 us) starts recovery,
    /// which resends 3 but not 9 (above the highest SACK). The resend's
    /// ACK at 300 us reports a segment sent at the recovery's start, so
    /// RACK's deadline for 9 (sent before it) is at most reo_wnd = 25 us
    /// later: 9 is resent at 325 us and the flow completes at 425 us.
    /// Without RACK, nothing is left to SACK above 9: only the RTO.
    #[test]
    fn a_lost_tail_in_recovery_is_resent_after_a_quarter_min_rtt() {
        for rack in [true, false] {
            let mut s = sender(rack);
            s.limit = 10 * MSS;
            send_all(&mut s, 100 * US);
            s.on_ack(200 * US, 3 * MSS, (0, 0), false, 100 * US);
            for k in 4..=6u64 {
                s.on_ack(200 * US, 3 * MSS, (4 * MSS, (k + 1) * MSS), false, 100 * US);
            }
            assert!(s.in_recovery);
            assert_eq!(send_all(&mut s, 200 * US).iter().map(|g| g.seq / MSS).collect::<Vec<_>>(), [3]);
            for k in 7..=8u64 {
                s.on_ack(210 * US, 3 * MSS, (4 * MSS, (k + 1) * MSS), false, 100 * US);
                assert!(send_all(&mut s, 210 * US).is_empty());
            }
            // The resend of 3 arrives: everything up to 9.
            s.on_ack(300 * US, 9 * MSS, (0, 0), false, 200 * US);
            assert!(send_all(&mut s, 300 * US).is_empty());
            let t = s.timer_deadline();
            if !rack {
                assert!(t > 200 * MS);
                continue;
            }
            assert_eq!(t, 325 * US);
            assert!(s.reo_fired(t));
            let g = send_all(&mut s, t);
            assert_eq!((g.len(), g[0].seq, g[0].retransmit), (1, 9 * MSS, true));
            s.on_ack(425 * US, 10 * MSS, (0, 0), false, t);
            assert!(s.drained() && s.timeouts == 0 && !s.in_recovery);
        }
    }

    /// Reordering, not loss: the hole's segment arrives before the timer
    /// fires (its ACK moves snd_una past every hole): the timer stops and
    /// nothing is resent.
    #[test]
    fn a_hole_filled_within_the_window_stops_the_timer() {
        let mut s = sender(true);
        send_all(&mut s, 100 * US);
        s.on_ack(200 * US, 0, (MSS, 2 * MSS), false, 100 * US);
        assert_eq!(s.timer_deadline(), 225 * US);
        s.on_ack(210 * US, 2 * MSS, (0, 0), false, 100 * US);
        assert!(!s.in_recovery);
        assert!(s.timer_deadline() > 225 * US, "the PTO or the RTO now");
        assert!(!s.reo_fired(225 * US));
        assert!(send_all(&mut s, 225 * US).iter().all(|g| !g.retransmit));
    }
}
