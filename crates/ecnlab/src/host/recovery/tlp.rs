//! Tail loss probe (RFC 8985 §7, Linux tcp_schedule_loss_probe and
//! tcp_send_loss_probe), opt-in by `transport.tlp` (on in the `linux`
//! profile).
//!
//! Fast recovery needs three duplicate ACKs, so a loss of the last
//! segments of a flight (a flow's tail, or a burst that takes the rest of
//! the window) leaves the sender waiting for the RTO: 200 ms or more in
//! the `linux` profile. With TLP the sender, while it has data in flight,
//! no recovery under way and nothing SACKed, keeps a probe timeout (PTO)
//! armed about two round trips ahead, restarted by every ACK that moves
//! snd_una and every new segment sent. When it expires one segment goes
//! whatever cwnd says: new data if the application and the receive window
//! allow, else the highest segment sent again. Its ACK brings the loss
//! information the tail could not: a SACK of the probe shows the segments
//! below it missing. Then the RTO is armed again (§7.3), and no second
//! probe goes until the first is answered (one per tail, as Linux).
//!
//! The PTO (§7.2): 2·srtt, plus an allowance for the receiver's delayed
//! ACK when only one segment is in flight (WCDelAckT, 200 ms recommended;
//! Linux adds TCP_RTO_MIN, also 200 ms), capped by the time left to the
//! RTO. Linux also adds TCP_TIMEOUT_MIN (two jiffies, 2 ms at HZ = 1000)
//! when more segments are in flight, which the RFC does not; the profile
//! follows the kernel (`tlp_slack` = 2 ms, 0 gives the RFC's PTO). In a
//! data-centre run with a 0.1 ms RTT that 2 ms is most of the PTO, and
//! still a hundredth of the 200 ms minimum RTO.
//!
//! The probe's ACK (§7.4; RACK's verdict). ecnlab has no per-segment send
//! times, so RACK's time-based marking (§6) is not modelled; but on the
//! probe's ACK it needs none: every segment below the probe went out at
//! least a PTO (over two round trips) before it, far beyond RACK's
//! reordering window of a quarter of min_rtt, so RACK marks every one of
//! them not SACKed lost. Here a duplicate ACK that SACKs the probe starts
//! fast recovery at once, whatever the duplicate-ACK count; the recovery
//! resends the holes below it.
//!
//! Whether a probe repaired a loss (§7.4.2), needed only when it was a
//! retransmission (a new-data probe's losses are recovery's to answer):
//! ACKs without DSACK cannot tell the original's arrival from the probe's,
//! so, as Linux does, a duplicate ACK that carries no new SACK once
//! snd_una has reached the probe's end means both copies arrived (no
//! loss); an ACK beyond the probe's end without one means the probe alone
//! arrived, the original was lost, and cwnd is reduced once, as a fast
//! recovery would (ssthresh from the flight when the probe went, cwnd set
//! to it: Linux's tcp_init_cwnd_reduction then tcp_end_cwnd_reduction).

use super::mechanism::{Fired, Mechanism, MechanismDecl, Shared};
use crate::config::param::section;
use crate::config::values::Dur;
use crate::config::TransportCfg;
use crate::host::snd::{Segment, Snd};
use crate::units::Time;

section! {
    /// The keys of the tail loss probe in `[transport]`.
    pub struct TlpParams {
        /// Tail loss probe (RACK-TLP's TLP): with data in flight and no loss recovery, one segment
        /// is sent when no ACK has come for about two round trips (the PTO), new data or the last
        /// segment again, so that a lost tail is repaired by fast recovery rather than the RTO.
        /// The `linux` profile turns it on.
        tlp: bool = false, resolved Given, source "RFC 8985 §7; Linux tcp_output.c tcp_schedule_loss_probe, tcp_send_loss_probe";
        /// Added to the PTO's 2·srtt when more than one segment is in flight: Linux's
        /// TCP_TIMEOUT_MIN (two jiffies at HZ = 1000). RFC 8985 adds nothing ("0s").
        tlp_slack: Dur = Dur(2_000_000_000), resolved Given, range "0s or more", source "Linux tcp_output.c tcp_schedule_loss_probe";
        /// Added to the PTO's 2·srtt when one segment is in flight, for the receiver's delayed ACK
        /// (RFC 8985's WCDelAckT; Linux adds TCP_RTO_MIN). The RTO caps the PTO, so with
        /// Linux's RTO (at least srtt + 200 ms) a lone segment's probe comes at the RTO's time.
        tlp_delack: Dur = Dur(200_000_000_000), resolved Given, range "0s or more", source "RFC 8985 §7.2";
    }
}

/// The mechanism's declaration: its registry line is in `recovery/mod.rs`.
pub const DECL: MechanismDecl = MechanismDecl {
    about: crate::switch::scheme::About {
        params: &[TlpParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "tlp",
            "RACK-TLP's tail loss probe: one segment about two round trips after the last ACK, so that a lost tail is repaired by fast recovery, not the RTO",
            "RFC 8985 §7; Linux tcp_output.c tcp_schedule_loss_probe, tcp_send_loss_probe",
        )
    },
};

impl TlpParams {
    pub fn of(t: &crate::config::TransportCfg) -> TlpParams {
        t.scheme_keys(TlpParams::read).expect("a checked config")
    }
}

/// A connection's TLP state (in `Recovery`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tlp {
    /// The PTO's deadline (0: not armed); it stands in front of the RTO.
    pub pto_at: Time,
    /// The PTO has fired: the next segment is the probe.
    pub due: bool,
    /// The probe of the episode under way: its first byte, snd_max after
    /// it (0: no episode), whether it was a retransmission, and the flight
    /// (bytes) when it went.
    pub seq: u64,
    pub end: u64,
    pub rtx: bool,
    pub flight: u64,
    /// Probes sent, and losses that a probe alone repaired (cwnd reduced).
    pub probes: u32,
    pub recoveries: u32,
}

impl Tlp {
    /// RFC 8985 §7.2: a PTO may be armed: data in flight, none of it
    /// SACKed, no fast recovery or RTO recovery, no probe unanswered.
    fn may_arm(&self, s: &Snd) -> bool {
        self.end == 0
            && !s.in_recovery
            && s.una >= s.recover
            && s.una < s.max_sent
            && s.nxt == s.max_sent
            && s.sacked.is_empty()
            && s.srtt > 0.0
    }

    /// The PTO from now, capped by the RTO's deadline (armed by then).
    /// `times`: what the PTO adds to 2·srtt with more than one segment out
    /// and with one (`tlp_slack`, `tlp_delack`).
    fn deadline(s: &Snd, now: Time, (slack, delack): (Time, Time)) -> Time {
        let one = s.max_sent - s.una <= s.p.mss as u64;
        let pto = 2 * s.srtt as Time + if one { delack } else { slack };
        let at = now + pto;
        if s.rto_deadline == 0 {
            at
        } else {
            at.min(s.rto_deadline)
        }
    }

    /// The ACK's part for TLP, before the ACK is processed: does it settle
    /// the episode (§7.4.2)? `ack`, `sack`: the ACK's fields. Some(flight
    /// in segments when the probe went) when the probe alone repaired a
    /// loss: the caller cuts cwnd once from it.
    #[cold]
    #[inline(never)]
    pub fn on_ack(&mut self, s: &Snd, ack: u64, sack: (u64, u64)) -> Option<f64> {
        if self.end == 0 || ack < self.end {
            return None;
        }
        if !self.rtx || (ack == s.una && sack == (0, 0)) {
            // New data acknowledged, or a duplicate of the probe: no loss
            // for TLP to answer.
            self.end = 0;
            None
        } else if ack > self.end {
            // Acknowledged beyond the probe with no duplicate on the way:
            // the probe repaired the only loss. Reduce cwnd once.
            self.end = 0;
            self.recoveries += 1;
            Some(self.flight as f64 / s.p.mss as f64)
        } else {
            None
        }
    }

    /// A duplicate ACK in the open state SACKs the probe: every segment
    /// below it went a PTO earlier, so RACK would call them lost. Start
    /// fast recovery now.
    #[inline]
    pub fn probe_sacked(&self, s: &Snd) -> bool {
        self.end != 0 && s.high_sack() > self.seq
    }

    /// After an ACK: an ACK that moved snd_una restarts the PTO; one that
    /// leaves the sender unable to probe stops it.
    pub fn after_ack(&mut self, s: &Snd, now: Time, progressed: bool, times: (Time, Time)) {
        if !self.may_arm(s) {
            self.pto_at = 0;
        } else if progressed || self.pto_at == 0 {
            self.pto_at = Tlp::deadline(s, now, times);
        }
    }

    /// New data (not a probe) was sent: restart the PTO (§7.2).
    pub fn after_send(&mut self, s: &Snd, now: Time, times: (Time, Time)) {
        if self.may_arm(s) {
            self.pto_at = Tlp::deadline(s, now, times);
        }
    }

    /// Fast recovery starts or the RTO fires: that answers the loss; no
    /// PTO, no episode.
    pub fn reset(&mut self) {
        self.pto_at = 0;
        self.due = false;
        self.end = 0;
    }

    /// The timer fired at `now`: true if it was the PTO, and then the next
    /// segment is the probe (if one may still go) and the RTO is armed
    /// again a full RTO from now (§7.3).
    pub fn fired(&mut self, s: &mut Snd, now: Time) -> bool {
        if self.pto_at == 0 || self.pto_at > now {
            return false;
        }
        self.pto_at = 0;
        if self.may_arm(s) {
            self.due = true;
            s.rto_deadline = now + s.rto;
        }
        true
    }

    /// The probe, if the PTO has fired: one new segment if there is data
    /// and the receive window allows it, else the highest segment again
    /// (§7.3). Sent whatever cwnd allows. `keeps_sack`: the go-back after
    /// an RTO skips SACKed data (`rto_sack.rs`).
    #[inline]
    pub fn probe(&mut self, s: &mut Snd, keeps_sack: bool) -> Option<Segment> {
        if !self.due {
            return None;
        }
        self.probe_segment(s, keeps_sack)
    }

    #[cold]
    #[inline(never)]
    fn probe_segment(&mut self, s: &mut Snd, keeps_sack: bool) -> Option<Segment> {
        let mss = s.p.mss as u64;
        let flight = s.max_sent - s.una;
        let room = s.nxt < s.limit && flight + (s.limit - s.nxt).min(mss) <= s.p.flight_cap;
        let seg = if room {
            s.new_data(keeps_sack)?
        } else {
            let len = flight.min(mss);
            if len == 0 {
                return None;
            }
            Segment { seq: s.max_sent - len, len: len as u32, retransmit: true, cwr: false }
        };
        let end = s.max_sent;
        *self = Tlp { seq: seg.seq, end, rtx: seg.retransmit, flight, probes: self.probes + 1, ..*self };
        self.due = false;
        Some(seg)
    }
}

/// What the PTO adds to 2·srtt with more than one segment out and with
/// one (`tlp_slack`, `tlp_delack`).
fn times(p: &TlpParams) -> (Time, Time) {
    (p.tlp_slack.0, p.tlp_delack.0)
}

impl Mechanism for Tlp {
    type Params = TlpParams;
    const DECL: MechanismDecl = DECL;

    fn params(t: &TransportCfg) -> Option<TlpParams> {
        let p = TlpParams::of(t);
        p.tlp.then_some(p)
    }

    /// The episode is settled; a probe that alone repaired a loss cuts
    /// cwnd once, which ends any CWR reduction under way.
    #[inline]
    fn on_ack_arrival(&mut self, _: &TlpParams, x: &mut Shared, s: &mut Snd, ack: u64, sack: (u64, u64)) {
        if let Some(flight) = self.on_ack(s, ack, sack) {
            x.cwr = false;
            s.cut_from(flight);
            s.after_loss();
        }
    }

    #[inline]
    fn loss_is_detected(&self, _: &TlpParams, s: &Snd) -> bool {
        self.probe_sacked(s)
    }

    fn enter(&mut self, _: &TlpParams) {
        self.reset();
    }

    fn after_ack(&mut self, p: &TlpParams, _: &mut Shared, s: &mut Snd, now: Time, _: Time, progressed: bool) {
        self.after_ack(s, now, progressed, times(p));
    }

    fn on_timeout(&mut self, _: &TlpParams, _: &mut Shared, _: &Snd, _: Time) {
        self.reset();
    }

    #[inline]
    fn probe(&mut self, _: &TlpParams, x: &Shared, s: &mut Snd) -> Option<Segment> {
        self.probe(s, x.run.keeps_sack)
    }

    /// New data restarts the PTO.
    #[inline]
    fn after_send(&mut self, p: &TlpParams, s: &Snd, now: Time, seg: &Segment) {
        if !seg.retransmit {
            self.after_send(s, now, times(p));
        }
    }

    #[inline]
    fn deadline(&self) -> Time {
        self.pto_at
    }

    fn fired(&mut self, _: &TlpParams, _: &mut Shared, s: &mut Snd, now: Time) -> Fired {
        if self.fired(s, now) {
            Fired::Probe
        } else {
            Fired::No
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use crate::config::TransportCfg;
    use crate::host::snd::Segment;
    use crate::host::tcp_tx::TcpSender;
    use crate::units::Time;

    const MSS: u64 = 1460;
    const US: Time = 1_000_000;
    const MS: Time = 1000 * US;

    /// A Reno sender with the `linux` profile's recovery (PRR, Linux's
    /// RTO, min_rto 200 ms), TLP on or off, established with a 100 us RTT
    /// (`rack.rs`'s tests use it too).
    pub(in crate::host) fn sender(tlp: bool, extra: &str) -> TcpSender {
        let json = format!(
            r#"{{"cc": "reno", "init_cwnd": 10, "prr": "linux", "linux_rto": true, "min_rto": "200ms", "tlp": {tlp}{extra}}}"#
        );
        let t: TransportCfg = serde_json::from_str(&json).unwrap();
        let mut s = TcpSender::new(&t);
        s.limit = u64::MAX;
        s.open(0);
        s.on_synack(100 * US, 0);
        s
    }

    pub(in crate::host) fn send_all(s: &mut TcpSender, now: Time) -> Vec<Segment> {
        std::iter::from_fn(|| s.next_segment(now)).collect()
    }

    fn probes(s: &TcpSender) -> (u32, u32) {
        (s.rec.as_ref().unwrap().tlp.probes, s.rec.as_ref().unwrap().tlp.recoveries)
    }

    /// RFC 8985 §7.2: PTO = 2·srtt (+ Linux's 2 ms with more than one
    /// segment out), capped by the RTO. srtt 100 us: 10 segments sent at
    /// t = 100 us arm the PTO at 100 + 200 + 2000 us = 2.3 ms, well before
    /// Linux's RTO (srtt + 200 ms). With one segment out the delayed-ACK
    /// allowance (200 ms) makes it 200.3 ms, which the RTO (100 us + 200.1
    /// ms) caps. With `tlp_slack` = 0 it is the RFC's 2·srtt: 300 us.
    #[test]
    fn the_pto_is_two_srtt_plus_slack_capped_by_the_rto() {
        let mut s = sender(true, "");
        assert_eq!(send_all(&mut s, 100 * US).len(), 10);
        assert_eq!(s.srtt(), 100 * US);
        assert_eq!(s.rto_deadline, 100 * US + 200 * MS + 100 * US);
        assert_eq!(s.timer_deadline(), 2300 * US);
        let mut s = sender(true, "");
        s.limit = MSS;
        assert_eq!(send_all(&mut s, 100 * US).len(), 1);
        assert_eq!(s.timer_deadline(), s.rto_deadline);
        let mut s = sender(true, r#", "tlp_slack": "0s""#);
        send_all(&mut s, 100 * US);
        assert_eq!(s.timer_deadline(), 300 * US);
        // Off: the timer is the RTO.
        let mut s = sender(false, "");
        send_all(&mut s, 100 * US);
        assert_eq!(s.timer_deadline(), s.rto_deadline);
    }

    /// A flow of 10 segments whose last three are lost (RFC 8985 §7's
    /// case): segments 0..7 are ACKed at 200 us, then nothing. Without
    /// TLP only the RTO, 200.3 ms later, resends them. With it the PTO
    /// fires at 200 + 200 + 2000 us = 2.4 ms and retransmits the last
    /// segment (no new data); its SACK starts fast recovery (the segments
    /// below it went a PTO earlier), which resends 7 and 8; the flow is
    /// complete 2.7 ms after it began, three round trips after the probe,
    /// with no RTO, and cwnd cut once (Reno under PRR: ssthresh =
    /// max(cwnd / 2, 2), Linux's tcp_reno_ssthresh).
    #[test]
    fn a_lost_tail_is_repaired_by_a_probe_at_two_srtt() {
        for tlp in [true, false] {
            let mut s = sender(tlp, "");
            s.limit = 10 * MSS;
            assert_eq!(send_all(&mut s, 100 * US).len(), 10);
            s.on_ack(200 * US, 7 * MSS, (0, 0), false, 100 * US);
            assert!(send_all(&mut s, 200 * US).is_empty());
            let t = s.timer_deadline();
            if !tlp {
                assert_eq!(t, 200 * US + s.rto);
                assert!(t > 200 * MS);
                continue;
            }
            assert_eq!(t, 2400 * US);
            assert!(s.pto_fired(t));
            let probe = send_all(&mut s, t);
            assert_eq!(probe.len(), 1);
            assert!(probe[0].retransmit && probe[0].seq == 9 * MSS);
            // §7.3: the RTO is armed again from the probe.
            assert_eq!(s.timer_deadline(), t + s.rto);
            // The probe's SACK: recovery at once; holes 7 and 8 resent,
            // one per segment delivered (PRR's bound on ACKs that report
            // a loss, the pipe being below ssthresh).
            let cwnd_at_loss = s.w.cwnd;
            s.on_ack(t + 100 * US, 7 * MSS, (9 * MSS, 10 * MSS), false, t);
            assert!(s.in_recovery);
            let seqs = |g: Vec<Segment>| g.iter().map(|g| g.seq / MSS).collect::<Vec<_>>();
            assert_eq!(seqs(send_all(&mut s, t + 100 * US)), [7]);
            s.on_ack(t + 200 * US, 8 * MSS, (9 * MSS, 10 * MSS), false, t + 100 * US);
            assert_eq!(seqs(send_all(&mut s, t + 200 * US)), [8]);
            s.on_ack(t + 300 * US, 10 * MSS, (0, 0), false, t + 200 * US);
            assert!(s.drained() && !s.in_recovery && s.timeouts == 0);
            // With PRR the cut is from cwnd (`linux_cwnd.rs`): max(cwnd/2, 2).
            assert_eq!(s.w.cwnd, (cwnd_at_loss / 2.0).max(2.0), "ssthresh: cwnd {cwnd_at_loss} / 2");
            assert_eq!(probes(&s), (1, 0));
        }
    }

    /// §7.3: a new segment when there is one. A long-lived sender whose
    /// whole window of 10 is lost probes with segment 10, not 9; the
    /// probe's SACK starts recovery for 0..9.
    #[test]
    fn the_probe_is_new_data_when_there_is_some() {
        let mut s = sender(true, "");
        send_all(&mut s, 100 * US);
        let t = s.timer_deadline();
        assert_eq!(t, 2300 * US);
        assert!(s.pto_fired(t));
        let probe = send_all(&mut s, t);
        assert_eq!(probe.len(), 1, "one segment, whatever cwnd");
        assert!(!probe[0].retransmit && probe[0].seq == 10 * MSS);
        s.on_ack(t + 100 * US, 0, (10 * MSS, 11 * MSS), false, t);
        assert!(s.in_recovery);
        assert_eq!(send_all(&mut s, t + 100 * US)[0].seq, 0);
    }

    /// At most one probe per tail (§7.3, Linux's tlp_high_seq): after the
    /// probe only the RTO is armed; a second PTO comes only once the
    /// probe is answered.
    #[test]
    fn one_probe_until_it_is_answered() {
        let mut s = sender(true, "");
        s.limit = 10 * MSS;
        send_all(&mut s, 100 * US);
        let t = s.timer_deadline();
        assert!(s.pto_fired(t));
        assert_eq!(send_all(&mut s, t).len(), 1);
        let rto = s.timer_deadline();
        assert_eq!(rto, t + s.rto);
        assert!(!s.pto_fired(rto), "the RTO, not a second probe");
        assert_eq!(probes(&s), (1, 0));
    }

    /// No probe in fast recovery (§7.2): three duplicate ACKs start it and
    /// stop the PTO; only the RTO is left.
    #[test]
    fn no_probe_during_fast_recovery() {
        let mut s = sender(true, "");
        send_all(&mut s, 100 * US);
        for k in 1..=3u64 {
            s.on_ack(200 * US, 0, (MSS, (k + 1) * MSS), false, 100 * US);
        }
        assert!(s.in_recovery);
        send_all(&mut s, 200 * US);
        assert_eq!(s.timer_deadline(), s.rto_deadline);
        assert!(!s.pto_fired(s.rto_deadline));
        // SACKed data out of order, fewer than three: no PTO either (§7.2).
        let mut s = sender(true, "");
        send_all(&mut s, 100 * US);
        s.on_ack(200 * US, 0, (MSS, 2 * MSS), false, 100 * US);
        assert_eq!(s.timer_deadline(), s.rto_deadline);
    }

    /// §7.4.2, the probe alone repaired the loss: only segment 9 of 10
    /// was lost and the probe resent it. The cumulative ACK reaches 10,
    /// no duplicate follows, and the next ACK goes beyond: cwnd is cut once
    /// (Reno: half the 1 segment out at the probe, floored at 2). Had the
    /// original arrived too, its duplicate ACK (no SACK) would show no loss
    /// and leave cwnd alone.
    #[test]
    fn a_probe_that_repaired_the_only_loss_cuts_cwnd_once() {
        for original_arrived in [false, true] {
            let mut s = sender(true, "");
            s.limit = 10 * MSS;
            send_all(&mut s, 100 * US);
            s.on_ack(200 * US, 9 * MSS, (0, 0), false, 100 * US);
            let cwnd = s.w.cwnd;
            let t = s.timer_deadline();
            assert_eq!(t, 200 * US + s.rto, "one segment out: the PTO is capped by the RTO");
            assert!(s.pto_fired(t));
            assert_eq!(send_all(&mut s, t)[0].seq, 9 * MSS);
            s.on_ack(t + 100 * US, 10 * MSS, (0, 0), false, t);
            if original_arrived {
                s.on_ack(t + 101 * US, 10 * MSS, (0, 0), false, t);
            }
            s.limit = 20 * MSS;
            let g = send_all(&mut s, t + 101 * US);
            s.on_ack(t + 300 * US, 10 * MSS + g.len() as u64 * MSS, (0, 0), false, t + 101 * US);
            let (_, rec) = probes(&s);
            if original_arrived {
                assert_eq!(rec, 0);
                assert!(s.w.cwnd >= cwnd);
            } else {
                assert_eq!(rec, 1);
                assert_eq!((s.w.ssthresh, s.timeouts), (2.0, 0));
            }
        }
    }
}
