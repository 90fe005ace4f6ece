//! F-RTO (RFC 5682, the SACK-enhanced algorithm of §4, as Linux's
//! tcp_process_loss runs it): detecting spurious retransmission timeouts,
//! opt-in by `transport.frto`.
//!
//! A timeout is spurious when the segments it took for lost were only
//! late: a delay spike, a burst of queueing longer than the RTO. The
//! conventional response (cwnd 1, go back to snd_una) then resends a
//! window the receiver is about to get, and halves ssthresh for nothing.
//! F-RTO waits one ACK before it commits. After the timeout's
//! retransmission of snd_una (step 1), the first ACK that moves snd_una
//! (and does not reach the recovery point) lets the sender send new data
//! instead of more retransmissions (step 2b); the ACKs that follow decide
//! (step 3): one that acknowledges or SACKs data never retransmitted since
//! the timeout shows that the window was not lost, and the timeout is
//! undone (cwnd and ssthresh as they were before it, no go-back: Linux
//! tcp_try_undo_loss); a duplicate ACK or a SACK of the new data shows
//! the loss was real, and the conventional recovery resumes (step 3a).
//! An ACK of the whole window ends the episode without an undo (2a).
//!
//! As Linux, F-RTO arms on a timeout that opens a loss episode (not in
//! fast recovery, snd_una past the last recovery point) or repeats the
//! last timeout on the same snd_una (icsk_retransmits > 0), and "never retransmitted" data is data below the
//! recovery point, above what the go-back has resent, not SACKed before.
//! When the scoreboard does not outlive the RTO (`rto_keeps_sack` off),
//! the data SACKed before it is not known any more: everything below the
//! highest SACK at the timeout counts as SACKed, so that a SACK block the
//! receiver repeats is not taken for news.
//!
//! Not modelled: Linux's other undo of a timeout, by timestamps (an ACK
//! echoing a time before the first retransmission, tcp_packet_delayed),
//! which F-RTO does not need; the congestion control's own undo
//! (`undo_cwnd`) beyond cwnd = max(cwnd, cwnd before the timeout).

use super::mechanism::{Mechanism, MechanismDecl, Shared};
use crate::config::param::section;
use crate::config::TransportCfg;
use crate::host::snd::Snd;
use crate::units::Time;

section! {
    /// The key of F-RTO, in `[transport]`.
    pub struct FrtoParams {
        /// F-RTO (RFC 5682, SACK-enhanced, as Linux): after a retransmission timeout, the first
        /// ACK that advances snd_una lets new data go instead of more retransmissions, and an ACK
        /// of data not retransmitted since the timeout undoes it (cwnd and ssthresh restored, no
        /// go-back). Linux runs it by default (net.ipv4.tcp_frto = 2), and so does ecnlab's
        /// `linux` profile (from model 6).
        frto: bool = false, resolved Given, source "RFC 5682 §3-4; Linux tcp_input.c tcp_process_loss, tcp_try_undo_loss";
    }
}

/// The mechanism's declaration: its registry line is in `recovery/mod.rs`.
pub const DECL: MechanismDecl = MechanismDecl {
    about: crate::switch::scheme::About {
        params: &[FrtoParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "frto",
            "F-RTO: spurious retransmission timeouts detected by sending new data after the first ACK, and undone",
            "RFC 5682 §3-4; Linux tcp_input.c tcp_process_loss, tcp_try_undo_loss",
        )
    },
};

impl FrtoParams {
    pub fn of(t: &TransportCfg) -> FrtoParams {
        t.scheme_keys(FrtoParams::read).expect("a checked config")
    }
}

/// Where an episode stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stage {
    /// No episode: the timeout was not F-RTO's, or it is decided.
    #[default]
    Off,
    /// Step 2: the timeout's retransmission went; the first ACK decides.
    Waiting,
    /// Step 2b done: new data from `new_from` may go; the ACKs after it
    /// decide (step 3).
    NewData,
}

/// A connection's F-RTO state (in `Recovery`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Frto {
    pub stage: Stage,
    /// cwnd and ssthresh before the timeout, for the undo (Linux
    /// prior_cwnd, prior_ssthresh = tcp_current_ssthresh).
    prior_cwnd: f64,
    prior_ssthresh: f64,
    /// snd_una at the last timeout: another there is a repeat (Linux
    /// icsk_retransmits > 0), which arms F-RTO however the first began.
    rto_una: Option<u64>,
    /// The recovery point: snd_max at the timeout, then at step 2b
    /// (Linux high_seq). Data below it and at or above `resent_end` was
    /// never retransmitted since the timeout.
    high: u64,
    resent_end: u64,
    /// Below this, data may have been SACKed before the timeout.
    sacked_floor: u64,
    /// Where step 2b's new data begins (snd_max then).
    new_from: u64,
    /// Timeouts undone as spurious, and episodes the ACKs showed real.
    pub spurious: u32,
    pub real: u32,
}

impl Frto {
    /// Does this ACK acknowledge, or SACK in its first block, data never
    /// retransmitted since the timeout and not SACKed before (Linux
    /// FLAG_ORIG_SACK_ACKED)?
    fn acks_original(&self, s: &Snd, ack: u64, sack: (u64, u64)) -> bool {
        let lo = self.resent_end.max(self.sacked_floor);
        let fresh = |a: u64, b: u64| s.unsacked_in(a.max(lo), b.min(self.high));
        fresh(s.una, ack) || fresh(sack.0, sack.1)
    }

    /// The timeout was spurious: cwnd and ssthresh as before it, and no
    /// go-back (the data it took for lost is on its way).
    fn undo(&mut self, s: &mut Snd) {
        self.stage = Stage::Off;
        self.spurious += 1;
        s.w.cwnd = s.w.cwnd.max(self.prior_cwnd);
        if self.prior_ssthresh > s.w.ssthresh {
            s.w.ssthresh = self.prior_ssthresh;
            s.cwr_pending = false; // Linux tcp_ecn_withdraw_cwr
        }
        s.nxt = s.max_sent;
        s.recover = s.una;
    }

    /// The loss was real (step 3a): the go-back resumes where it was, and
    /// runs to snd_max.
    fn give_up(&mut self, s: &mut Snd) {
        self.stage = Stage::Off;
        self.real += 1;
        s.nxt = self.resent_end.max(s.una);
        s.recover = s.max_sent;
    }
}

impl Mechanism for Frto {
    type Params = ();
    const DECL: MechanismDecl = DECL;

    fn params(t: &TransportCfg) -> Option<()> {
        FrtoParams::of(t).frto.then_some(())
    }

    /// Step 1 (before the core's response): arm on a timeout that opens a
    /// loss episode or repeats one, and keep what an undo restores.
    fn on_timeout(&mut self, _: &(), x: &mut Shared, s: &Snd, _: Time) {
        let opens = !s.in_recovery && s.una >= s.recover;
        let repeats = self.rto_una == Some(s.una);
        if opens {
            self.prior_cwnd = s.w.cwnd;
            // tcp_current_ssthresh: in a reduction, ssthresh; else at
            // least three quarters of cwnd.
            self.prior_ssthresh = if x.cwr { s.w.ssthresh } else { s.w.ssthresh.max(0.75 * s.w.cwnd) };
            self.sacked_floor = s.una;
        }
        if opens || repeats {
            self.stage = Stage::Waiting;
            self.high = s.max_sent;
            self.resent_end = s.una;
            if !x.run.keeps_sack {
                self.sacked_floor = self.sacked_floor.max(s.high_sack());
            }
        } else {
            self.stage = Stage::Off;
        }
        self.rto_una = Some(s.una);
    }

    /// Steps 2 and 3, on each ACK before the core processes it.
    fn on_ack_arrival(&mut self, _: &(), _: &mut Shared, s: &mut Snd, ack: u64, sack: (u64, u64)) {
        if self.stage == Stage::Off || ack < s.una {
            return;
        }
        if self.stage == Stage::Waiting {
            self.resent_end = self.resent_end.max(s.nxt);
        }
        if self.acks_original(s, ack, sack) {
            return self.undo(s); // step 3b (Linux checks it on every ACK)
        }
        let advanced = ack > s.una;
        let new_sent = self.stage == Stage::NewData && s.max_sent > self.new_from;
        if new_sent {
            let dup = ack == s.una;
            if dup || s.unsacked_in(sack.0, sack.1) {
                return self.give_up(s); // step 3a
            }
        } else if advanced && ack < self.high {
            // Step 2b: new data, if there is any, instead of the go-back.
            self.high = s.max_sent;
            if s.limit > s.max_sent {
                self.stage = Stage::NewData;
                self.new_from = s.max_sent;
                s.nxt = s.max_sent;
                return;
            }
            self.stage = Stage::Off;
            return;
        }
        if ack >= self.high {
            // Step 2a, or the whole window acknowledged: no undo.
            self.stage = Stage::Off;
        }
    }

    /// After step 2b, the window holds the new data and the resent data
    /// not yet acknowledged; the data the timeout took for lost is not
    /// counted (Linux: marked lost, out of packets_in_flight).
    #[inline]
    fn open_flight(&self, _: &(), s: &Snd) -> Option<u64> {
        (self.stage == Stage::NewData)
            .then(|| (s.nxt - self.new_from.max(s.una)) + self.resent_end.saturating_sub(s.una))
    }
}

#[cfg(test)]
mod tests {
    use super::Stage;
    use crate::config::TransportCfg;
    use crate::host::snd::Segment;
    use crate::host::tcp_tx::TcpSender;
    use crate::units::Time;

    const MSS: u64 = 1460;
    const MS: Time = 1_000_000_000;

    /// A Reno sender, IW 10, RTO 5 ms, F-RTO on or off (and `extra`),
    /// established with a 100 us RTT, its first window (segments 0..=9)
    /// sent at 1 ms and then the RTO fired: every ACK is late.
    fn timed_out(frto: bool, extra: &str) -> TcpSender {
        let json = format!(r#"{{"cc": "reno", "init_cwnd": 10, "min_rto": "5ms", "frto": {frto}{extra}}}"#);
        let t: TransportCfg = serde_json::from_str(&json).unwrap();
        let mut s = TcpSender::new(&t);
        s.limit = u64::MAX;
        s.open(0);
        s.on_synack(100_000, 0);
        assert_eq!(sent(&mut s, MS).len(), 10);
        assert_eq!(s.timer_deadline(), 6 * MS);
        s.on_timeout(6 * MS);
        s
    }

    fn sent(s: &mut TcpSender, now: Time) -> Vec<Segment> {
        std::iter::from_fn(|| s.next_segment(now)).collect()
    }

    fn seqs(segs: &[Segment]) -> Vec<(u64, bool)> {
        segs.iter().map(|g| (g.seq / MSS, g.retransmit)).collect()
    }

    fn frto(s: &TcpSender) -> super::Frto {
        s.rec.as_ref().unwrap().frto
    }

    /// RFC 5682 §3.1 on a delay spike: nothing was lost. Step 1: the RTO
    /// resends segment 0 (cwnd 1). The ACK of segment 0 (from its first
    /// copy, late) moves snd_una: step 2b sends new data, segments 10 and
    /// 11 (cwnd 2 after the ACK), not 1 and 2 again. The ACK of segment
    /// 1, which was never retransmitted, shows the timeout spurious (step
    /// 3b): cwnd back to 10 and ssthresh to what it was (Linux
    /// tcp_undo_cwnd_reduction), and the go-back is off: what follows is
    /// new data from 12. Without F-RTO the go-back resends 1 and 2.
    #[test]
    fn a_delay_spike_is_found_spurious_and_undone() {
        let mut s = timed_out(true, "");
        let prior_ssthresh = s.w.ssthresh;
        assert_eq!(seqs(&sent(&mut s, 6 * MS)), [(0, true)]);
        s.on_ack(7 * MS, MSS, (0, 0), false, MS);
        assert_eq!(frto(&s).stage, Stage::NewData);
        assert_eq!(seqs(&sent(&mut s, 7 * MS)), [(10, false), (11, false)], "step 2b: new data");
        s.on_ack(7 * MS + 10, 2 * MSS, (0, 0), false, MS);
        assert_eq!(frto(&s).spurious, 1);
        assert!(s.w.cwnd >= 10.0, "cwnd restored: {}", s.w.cwnd);
        assert!(s.w.ssthresh >= prior_ssthresh, "ssthresh restored: {} < {prior_ssthresh}", s.w.ssthresh);
        let next = sent(&mut s, 7 * MS + 10);
        assert!(!next.is_empty() && next.iter().all(|g| !g.retransmit && g.seq >= 12 * MSS), "{:?}", seqs(&next));

        let mut s = timed_out(false, "");
        assert_eq!(seqs(&sent(&mut s, 6 * MS)), [(0, true)]);
        s.on_ack(7 * MS, MSS, (0, 0), false, MS);
        assert_eq!(seqs(&sent(&mut s, 7 * MS)), [(1, true), (2, true)], "conventional go-back");
        assert_eq!(s.w.cwnd, 2.0);
    }

    /// The first ACK after the timeout may already cover data never
    /// retransmitted (delayed ACKs of the first copies: segments 0..=2):
    /// Linux checks step 3b on every ACK, so it is undone at once.
    #[test]
    fn an_ack_beyond_the_retransmission_undoes_at_once() {
        let mut s = timed_out(true, "");
        assert_eq!(seqs(&sent(&mut s, 6 * MS)), [(0, true)]);
        s.on_ack(7 * MS, 3 * MSS, (0, 0), false, MS);
        assert_eq!((frto(&s).spurious, frto(&s).stage), (1, Stage::Off));
        assert!(s.w.cwnd >= 10.0);
        assert!(sent(&mut s, 7 * MS).iter().all(|g| !g.retransmit));
    }

    /// RFC 5682 §3.1 step 3a: the window was lost (segments 1..=9 too).
    /// After step 2b's new data (10, 11), the receiver, holding 0 and
    /// 10, sends a duplicate ACK SACKing 10: the loss was real, and the
    /// conventional recovery resumes with segment 1 at the same cwnd
    /// (nothing undone).
    #[test]
    fn a_real_loss_falls_back_to_the_go_back() {
        for keep in [false, true] {
            let extra = format!(r#", "rto_keeps_sack": {keep}"#);
            let mut s = timed_out(true, &extra);
            let ssthresh = s.w.ssthresh;
            sent(&mut s, 6 * MS);
            s.on_ack(7 * MS, MSS, (0, 0), false, 6 * MS);
            assert_eq!(seqs(&sent(&mut s, 7 * MS)), [(10, false), (11, false)]);
            s.on_ack(7 * MS + 10, MSS, (10 * MSS, 11 * MSS), false, 7 * MS);
            let f = frto(&s);
            assert_eq!((f.spurious, f.real, f.stage), (0, 1, Stage::Off), "keep {keep}");
            assert_eq!(s.w.ssthresh, ssthresh, "keep {keep}: no undo");
            let next = sent(&mut s, 7 * MS + 10);
            assert_eq!(next.first().map(|g| (g.seq / MSS, g.retransmit)), Some((1, true)), "keep {keep}");
        }
    }

    /// Step 2a: the first ACK covers everything sent before the timeout
    /// (only segment 0 was out): the episode ends with no undo, and the
    /// sender goes on in slow start from cwnd 2.
    #[test]
    fn an_ack_of_the_whole_window_ends_it_without_an_undo() {
        let t: TransportCfg =
            serde_json::from_str(r#"{"cc": "reno", "init_cwnd": 10, "min_rto": "5ms", "frto": true}"#).unwrap();
        let mut s = TcpSender::new(&t);
        s.limit = MSS;
        s.open(0);
        s.on_synack(100_000, 0);
        assert_eq!(sent(&mut s, MS).len(), 1);
        s.on_timeout(6 * MS);
        assert_eq!(seqs(&sent(&mut s, 6 * MS)), [(0, true)]);
        s.on_ack(7 * MS, MSS, (0, 0), false, MS);
        let f = frto(&s);
        assert_eq!((f.spurious, f.stage), (0, Stage::Off));
        assert_eq!(s.w.cwnd, 2.0);
    }

    /// A timeout during fast recovery is not F-RTO's (RFC 5682 §3.1 step
    /// 1; Linux arms it on a timeout that opens a loss episode, or on a
    /// repeated one), and
    /// data SACKed before the timeout is not news when the scoreboard was
    /// dropped.
    #[test]
    fn not_armed_in_fast_recovery_and_old_sacks_are_not_news() {
        let mut s = timed_out(true, "");
        s.on_ack(7 * MS, 0, (0, 0), false, MS); // a stray duplicate: nothing
        assert_eq!(frto(&s).stage, Stage::Waiting);

        // Segment 0 lost, 1..=3 SACKed: fast recovery, then the RTO.
        let json = r#"{"cc": "reno", "init_cwnd": 10, "min_rto": "5ms", "frto": true}"#;
        let mut s = TcpSender::new(&serde_json::from_str::<TransportCfg>(json).unwrap());
        s.limit = u64::MAX;
        s.open(0);
        s.on_synack(100_000, 0);
        sent(&mut s, MS);
        for k in 1..=3 {
            s.on_ack(MS + k, 0, (MSS, (k + 1) * MSS), false, MS);
        }
        assert!(s.in_recovery);
        s.on_timeout(8 * MS);
        assert_eq!(frto(&s).stage, Stage::Off, "not armed in fast recovery");
        // Its repeat on the same snd_una is (Linux: icsk_retransmits > 0).
        s.on_timeout(20 * MS);
        assert_eq!(frto(&s).stage, Stage::Waiting, "armed on the repeat");

        // Armed with 1..=3 SACKed before the timeout (scoreboard dropped):
        // the resent 0 fills the hole, and the ACK covers 0..=3; 1..=3
        // were delivered before, so it is step 2b, not an undo.
        let mut s = TcpSender::new(&serde_json::from_str::<TransportCfg>(json).unwrap());
        s.limit = u64::MAX;
        s.open(0);
        s.on_synack(100_000, 0);
        sent(&mut s, MS);
        s.on_ack(MS + 1, 0, (MSS, 4 * MSS), false, MS);
        s.on_timeout(8 * MS);
        assert_eq!(frto(&s).stage, Stage::Waiting);
        sent(&mut s, 8 * MS);
        s.on_ack(9 * MS, 4 * MSS, (0, 0), false, 8 * MS);
        assert_eq!((frto(&s).spurious, frto(&s).stage), (0, Stage::NewData), "data SACKed before is not news");
    }
}
