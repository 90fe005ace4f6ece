//! Loss recovery beyond RFC 6675's fast retransmit and RFC 6298's RTO:
//! the mechanisms of Linux's TCP that ecnlab models, each in its own file
//! with its `[transport]` key, its state and its rules, and each off by
//! default (the `linux` profile, `host/linux.rs`, turns them all on).
//!
//! A sender with any of them on holds one boxed `Recovery` (None
//! otherwise, so `Flow` stays small and the default sender pays one
//! branch per hook). The sender (`tcp_tx.rs`) calls it at named hooks,
//! and each hook calls the mechanisms that act there, in a fixed order:
//!
//! | hook | when | mechanisms |
//! |---|---|---|
//! | `rtt_sample` | an RTT sample | `rto_linux` |
//! | `on_ack_arrival` | an ACK, before anything moves | `tlp` |
//! | `reduction_sacked`, `cwr_done`, `on_reduction_ack` | ACKs in a reduction | `prr` |
//! | `on_rtt_ack` | an ACK that moved snd_una | `hystart` |
//! | `on_recovery_ack`, `on_recovery_dupack` | ACKs in fast recovery | `lost_rtx`, `prr` |
//! | `on_ecn_cut` | the congestion control cut cwnd | `prr` |
//! | `loss_is_detected` | a duplicate ACK | `tlp` |
//! | `enter`, `after_recovery_start` | fast recovery starts | `lost_rtx`, `tlp`, `prr`, `linux_cwnd` |
//! | `after_ack` | the ACK is done | `rack`, `tlp` |
//! | `on_timeout` | the RTO fired | `hystart`, `prr`, `lost_rtx`, `tlp`, `rack`, `rto_sack` |
//! | `resend_lost`, `on_hole_resent` | a segment in recovery | `lost_rtx` |
//! | `probe`, `open_flight`, `new_data` | a segment in the open state | `tlp`, `rto_sack` |
//! | `on_send`, `after_send` | a segment goes | `rto_rearm`, `prr`, `tlp` |
//! | `deadline`, `fired` | the sender's timer | `tlp`, `rack` |
//! | `resume` | a persistent connection's next flow | `rto_linux` |
//!
//! Each mechanism's file holds its state type and the rules over it,
//! taking the core state (`Snd`) as an argument; none imports another or
//! the sender, and this file is the only one that knows them all.
//! `MECHANISMS` is their registry: the keys they declare join
//! `[transport]` from it (`registry.rs`), one line each.

pub mod hystart;
pub mod linux_cwnd;
pub mod lost_rtx;
pub mod prr;
pub mod rack;
pub mod rto_linux;
pub mod rto_rearm;
pub mod rto_sack;
pub mod tlp;

use super::snd::{Segment, Snd};
use crate::config::TransportCfg;
use crate::units::Time;
use prr::{PrrKind, Reduction};
use rack::RackFired;
use std::sync::Arc;

/// One mechanism's declaration, beside its code: its name (its key's),
/// what it does, its source and its `[transport]` keys.
pub struct MechanismDecl {
    pub about: crate::switch::scheme::About,
}

/// Every loss-recovery mechanism, one line each: their keys join
/// `[transport]` from here (`registry.rs`), whatever the congestion
/// control, and `ecnlab keys` lists them.
pub const MECHANISMS: &[&MechanismDecl] = &[
    &rto_linux::DECL,
    &prr::DECL,
    &lost_rtx::DECL,
    &rto_sack::DECL,
    &rto_rearm::DECL,
    &tlp::DECL,
    &rack::DECL,
    &hystart::DECL,
    &linux_cwnd::DECL,
];

/// Checks across the mechanisms' keys: lost-retransmission
/// detection has been validated only with PRR pacing the recovery (with
/// cwnd cut at once, a 10 Gbps FQ-CoDel run showed more RTOs with it than
/// without: not understood yet), so it needs `prr`.
pub fn validate(t: &crate::config::TransportCfg) -> Result<(), crate::config::ConfigError> {
    let lost = lost_rtx::LostRtxParams::of(t).lost_retransmit;
    if lost && prr::PrrParams::of(t).prr == PrrKind::Off {
        return Err(crate::config::bad(
            "transport.lost_retransmit",
            true,
            "needs transport.prr (\"crb\", \"ssrb\" or \"linux\"): it is not validated with prr = \"off\"",
        ));
    }
    let pfabric = crate::host::cc::decl(t.cc.as_str()).is_some_and(|d| d.pfabric);
    if pfabric && tlp::TlpParams::of(t).tlp {
        return Err(crate::config::bad(
            "transport.tlp",
            true,
            "is not for cc = \"pfabric\", whose sender has its own timeout and no window to probe",
        ));
    }
    Ok(())
}

/// The mechanisms' settings for a run, shared by its connections.
#[derive(Debug)]
pub struct RecoveryParams {
    /// Linux's RTO estimator (`rto_linux.rs`).
    linux_rto: bool,
    /// PRR and its reduction bound (`prr.rs`).
    prr: PrrKind,
    /// Lost-retransmission detection (`lost_rtx.rs`).
    lost_retransmit: bool,
    /// The SACK scoreboard kept across an RTO (`rto_sack.rs`).
    rto_keeps_sack: bool,
    /// The timer restarted at a retransmission of snd_una (`rto_rearm.rs`).
    rto_rearm_head: bool,
    /// The tail loss probe, and the PTO's additions to 2·srtt with more
    /// than one segment out and with one (`tlp.rs`).
    tlp: bool,
    tlp_times: (Time, Time),
    /// RACK's time-based loss detection (`rack.rs`).
    rack: bool,
    /// CUBIC's HyStart (`hystart.rs`; only with cc = "cubic").
    hystart: bool,
    /// Linux's window accounting (`linux_cwnd.rs`).
    linux_cwnd: bool,
}

impl RecoveryParams {
    /// `t`'s settings, or None when every mechanism is off.
    pub fn of(t: &TransportCfg) -> Option<RecoveryParams> {
        let tlp = tlp::TlpParams::of(t);
        let p = RecoveryParams {
            linux_rto: rto_linux::LinuxRtoParams::of(t).linux_rto,
            prr: prr::PrrParams::of(t).prr,
            lost_retransmit: lost_rtx::LostRtxParams::of(t).lost_retransmit,
            rto_keeps_sack: rto_sack::RtoSackParams::of(t).rto_keeps_sack,
            rto_rearm_head: rto_rearm::RtoRearmParams::of(t).rto_rearm_head,
            tlp: tlp.tlp,
            tlp_times: (tlp.tlp_slack.0, tlp.tlp_delack.0),
            rack: rack::RackParams::of(t).rack,
            hystart: hystart::active(t),
            linux_cwnd: linux_cwnd::LinuxCwndParams::of(t).linux_cwnd,
        };
        let any = p.linux_rto
            || p.prr != PrrKind::Off
            || p.lost_retransmit
            || p.rto_keeps_sack
            || p.rto_rearm_head
            || p.tlp
            || p.rack
            || p.hystart
            || p.linux_cwnd;
        any.then_some(p)
    }

    /// Whether ACKs must count the bytes they newly deliver: cwnd grows by
    /// that count (`linux_cwnd`; `rto_keeps_sack`, whose kept SACKed data
    /// a cumulative ACK must not count again).
    pub fn grows_by_delivered(&self) -> bool {
        self.linux_cwnd || self.rto_keeps_sack
    }
}

/// A connection's loss-recovery state: each mechanism's, and the run's
/// settings.
#[derive(Debug)]
pub struct Recovery {
    p: Arc<RecoveryParams>,
    rtt: rto_linux::LinuxRtt,
    red: Reduction,
    lost: lost_rtx::LostRtx,
    tlp: tlp::Tlp,
    rack: rack::Rack,
    hystart: hystart::Hystart,
}

impl Recovery {
    pub fn new(p: &Arc<RecoveryParams>) -> Recovery {
        Recovery {
            p: Arc::clone(p),
            rtt: Default::default(),
            red: Default::default(),
            lost: Default::default(),
            tlp: Default::default(),
            rack: Default::default(),
            hystart: Default::default(),
        }
    }

    /// RACK's mark above the highest SACK, for the scoreboard's holes.
    #[inline]
    pub fn lost_end(&self) -> u64 {
        self.rack.lost_end
    }

    pub fn grows_by_delivered(&self) -> bool {
        self.p.grows_by_delivered()
    }

    /// Whether a loss takes ssthresh from cwnd (`linux_cwnd.rs`).
    pub fn ssthresh_from_cwnd(&self) -> bool {
        linux_cwnd::ssthresh_from_cwnd(self.p.linux_cwnd, self.p.prr)
    }

    /// An RTT sample `r`: Linux's estimator (`rto_linux.rs`: RTO = srtt +
    /// max(4·mdev peak, rto_min), `rttvar` holding that second term), or
    /// RFC 6298's.
    #[inline]
    pub fn rtt_sample(&mut self, s: &mut Snd, r: Time) {
        if !self.p.linux_rto {
            return s.rfc6298_sample(r);
        }
        let (una, nxt, min_rto) = (s.una, s.nxt, s.p.min_rto as f64);
        let rto = self.rtt.sample(&mut s.srtt, r as f64, una, nxt, min_rto) as Time;
        s.rttvar = self.rtt.var;
        s.set_rto(rto);
    }

    /// A persistent connection resumes with a carried `rttvar`.
    pub fn resume(&mut self, rttvar: f64, min_rto: Time) {
        self.rtt.resume(rttvar, min_rto as f64);
    }

    /// An ACK (`ack`, first SACK block `sack`) arrives, before anything
    /// moves: TLP's episode is settled; a probe that alone repaired a loss
    /// cuts cwnd once (`tlp.rs`).
    #[inline]
    pub fn on_ack_arrival(&mut self, s: &mut Snd, ack: u64, sack: (u64, u64)) {
        if !self.p.tlp {
            return;
        }
        if let Some(flight) = self.tlp.on_ack(s, ack, sack) {
            self.red.cwr = false;
            s.cut_from(flight);
            s.after_loss();
        }
    }

    /// In a PRR-paced reduction: the SACKed bytes before this ACK.
    #[inline]
    pub fn reduction_sacked(&self, s: &Snd) -> Option<u64> {
        self.red.sacked_before(s, self.p.prr)
    }

    /// snd_una moved in CWR: true if the cut's window is now acknowledged
    /// and the reduction ended.
    pub fn cwr_done(&mut self, s: &mut Snd) -> bool {
        self.red.cwr_done(s)
    }

    /// An ACK that moved snd_una with RTT sample `rtt` (`hystart.rs`).
    #[inline]
    pub fn on_rtt_ack(&mut self, s: &mut Snd, now: Time, rtt: Time) {
        if self.p.hystart {
            self.hystart.sender_ack(s, now, rtt);
        }
    }

    /// An ACK in fast recovery that moved snd_una by `acked`.
    pub fn on_recovery_ack(&mut self, s: &mut Snd, acked: u64, sacked_before: Option<u64>) {
        if self.p.lost_retransmit {
            self.lost.una_moved(s);
            self.lost.check(s);
        }
        if let Some(before) = sacked_before {
            self.on_reduction_ack(s, acked, before, true);
        }
    }

    /// A duplicate ACK in fast recovery.
    pub fn on_recovery_dupack(&mut self, s: &mut Snd, sacked_before: Option<u64>) {
        if self.p.lost_retransmit {
            self.lost.check(s);
        }
        if let Some(before) = sacked_before {
            self.on_reduction_ack(s, 0, before, false);
        }
    }

    /// The ACK in a reduction: PRR sets cwnd (`prr.rs`).
    pub fn on_reduction_ack(&mut self, s: &mut Snd, acked: u64, sacked_before: u64, safe: bool) {
        let (kind, lost_end) = (self.p.prr, self.rack.lost_end);
        self.red.on_ack(s, kind, lost_end, acked, sacked_before, safe);
    }

    /// The congestion control cut cwnd from `prior` on ECE: with PRR, the
    /// cut is paced over the round trip instead (Linux's CWR state).
    pub fn on_ecn_cut(&mut self, s: &mut Snd, prior: f64, acked: u64, sacked_before: u64, safe: bool) {
        if self.p.prr != PrrKind::Off {
            self.red.start(s, prior, true);
            self.on_reduction_ack(s, acked, sacked_before, safe);
        }
    }

    /// A duplicate ACK: has a loss been found beyond the duplicate count?
    /// A SACK of a tail loss probe starts recovery at once (`tlp.rs`).
    #[inline]
    pub fn loss_is_detected(&self, s: &Snd) -> bool {
        self.p.tlp && self.tlp.probe_sacked(s)
    }

    /// Fast recovery starts: the window is set (at once, or PRR's start,
    /// or the CWR reduction under way carried on), then the core's part.
    pub fn enter(&mut self, s: &mut Snd) {
        if self.p.lost_retransmit {
            self.lost.reset();
        }
        if self.p.tlp {
            self.tlp.reset();
        }
        if self.p.prr == PrrKind::Off {
            s.loss_cut(self.ssthresh_from_cwnd());
        } else if !self.red.continue_into_recovery() {
            // PRR: ssthresh now, cwnd brought down ACK by ACK.
            let prior = s.w.cwnd;
            s.w.ssthresh = s.loss_ssthresh(self.ssthresh_from_cwnd());
            self.red.start(s, prior, false);
        } else if let Some(x) = s.cc.recovery_in_cwr(&s.w) {
            s.w.ssthresh = x;
        }
        s.begin_recovery();
    }

    /// Recovery has just started with `sacked_before` SACKed before the
    /// ACK (or timer) that started it: PRR's first step.
    pub fn after_recovery_start(&mut self, s: &mut Snd, sacked_before: u64) {
        if self.p.prr != PrrKind::Off {
            self.on_reduction_ack(s, 0, sacked_before, false);
        }
    }

    /// The ACK at `now` echoing `ts_echo` is done: RACK judges the holes,
    /// then TLP arms or stops its timer.
    pub fn after_ack(&mut self, s: &Snd, now: Time, ts_echo: Time, progressed: bool) {
        if self.p.rack {
            self.rack.after_ack(s, now, ts_echo);
        }
        if self.p.tlp {
            self.tlp.after_ack(s, now, progressed, self.p.tlp_times);
        }
    }

    /// The RTO fired: every reduction, mark and timer ends. True if the
    /// scoreboard is kept (`rto_sack.rs`), else the go-back is to N.
    pub fn on_timeout(&mut self, s: &Snd, now: Time) -> bool {
        if self.p.hystart {
            // Linux: TCP_CA_Loss resets it all.
            self.hystart.reset(now, s.una);
        }
        self.red.cwr = false;
        self.lost.reset();
        self.tlp.reset();
        self.rack.reset();
        self.p.rto_keeps_sack
    }

    /// In recovery: a lost retransmission of the first hole, to go again
    /// at once (`lost_rtx.rs`).
    #[inline]
    pub fn resend_lost(&mut self, s: &Snd) -> Option<Segment> {
        self.lost.resend(s)
    }

    /// The hole at snd_una was retransmitted (`lost_rtx.rs` watches it).
    pub fn on_hole_resent(&mut self, s: &Snd) {
        if self.p.lost_retransmit {
            self.lost.mark(s);
        }
    }

    /// In the open state: the tail loss probe, if its timer fired, sent
    /// whatever cwnd says (`tlp.rs`).
    #[inline]
    pub fn probe(&mut self, s: &mut Snd) -> Option<Segment> {
        if !self.p.tlp {
            return None;
        }
        self.tlp.probe(s, self.p.rto_keeps_sack)
    }

    /// The flight the window is checked against in the open state, where
    /// it is not snd_nxt − snd_una: going back after an RTO with the
    /// scoreboard kept, SACKed data is not in flight (`rto_sack.rs`).
    #[inline]
    pub fn open_flight(&self, s: &Snd) -> Option<u64> {
        (self.p.rto_keeps_sack && s.una < s.recover).then(|| s.flight_less_sacked())
    }

    /// The next new (or not yet resent) segment, past SACKed data when the
    /// scoreboard was kept (`rto_sack.rs`).
    #[inline]
    pub fn new_data(&self, s: &mut Snd) -> Option<Segment> {
        s.new_data(self.p.rto_keeps_sack)
    }

    /// A segment is going at `now`, before the core arms its timer: the
    /// timer restarts at a retransmission of snd_una in recovery
    /// (`rto_rearm.rs`); PRR counts what a reduction sends.
    #[inline]
    pub fn on_send(&mut self, s: &mut Snd, now: Time, seg: &Segment) {
        if seg.retransmit && self.p.rto_rearm_head && s.in_recovery && seg.seq == s.una {
            s.rto_deadline = now + s.rto;
        }
        self.red.sent(s, seg.len);
    }

    /// A segment went: new data restarts the PTO (`tlp.rs`).
    #[inline]
    pub fn after_send(&mut self, s: &Snd, now: Time, seg: &Segment) {
        if self.p.tlp && !seg.retransmit {
            self.tlp.after_send(s, now, self.p.tlp_times);
        }
    }

    /// The sender's next timer (0: none): the RTO's `rto` deadline, or
    /// earlier a tail loss probe's PTO or RACK's reordering timer, which
    /// stand in front of it.
    #[inline]
    pub fn deadline(&self, rto: Time) -> Time {
        [self.tlp.pto_at, self.rack.reo_at]
            .into_iter()
            .filter(|&t| t != 0)
            .fold(rto, |a, t| if a == 0 { t } else { a.min(t) })
    }

    /// The sender's timer fired at `now`: whose it was.
    pub fn fired(&mut self, s: &mut Snd, now: Time) -> Fired {
        if self.pto_fired(s, now) {
            Fired::Probe
        } else if self.reo_fired(s, now) {
            Fired::Marked
        } else {
            Fired::No
        }
    }

    /// True if the timer was TLP's PTO (`tlp.rs`).
    pub fn pto_fired(&mut self, s: &mut Snd, now: Time) -> bool {
        self.tlp.fired(s, now)
    }

    /// True if the timer was RACK's (`rack.rs`), and then, if the hole is
    /// still there, fast recovery has started.
    pub fn reo_fired(&mut self, s: &mut Snd, now: Time) -> bool {
        match self.rack.fired(s, now) {
            RackFired::No => false,
            RackFired::Marked => true,
            RackFired::Recover => {
                self.enter(s);
                // No ACK to pace by: cwnd at the pipe; the first
                // retransmission goes anyway (RFC 6675 §5 step 4.3).
                let sacked = s.sacked_bytes();
                self.after_recovery_start(s, sacked);
                true
            }
        }
    }

    /// How HyStart ended slow start, if it did.
    pub fn hystart_exit(&self) -> Option<hystart::Exit> {
        self.hystart.found
    }

    /// TLP's counts: probes sent, losses a probe alone repaired.
    pub fn tlp_counts(&self) -> (u32, u32) {
        (self.tlp.probes, self.tlp.recoveries)
    }

    /// RACK's counts: recoveries its timer started, tails it marked lost.
    pub fn rack_counts(&self) -> (u32, u32) {
        (self.rack.marks, self.rack.tails)
    }
}

/// What the sender's timer was, when a recovery mechanism's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fired {
    /// Neither's: the RTO, if due.
    No,
    /// The PTO: the next segment is the probe.
    Probe,
    /// RACK's: holes marked lost, recovery under way if there were any.
    Marked,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry is what the seam rests on: each mechanism's name is a
    /// key it declares; the `linux` profile turns every one on (Linux runs
    /// them all: host/linux.rs); and a transport with any one of them set
    /// gives its connections a `Recovery`, the default none (the default
    /// sender pays one branch per hook and no box).
    #[test]
    fn every_mechanism_is_a_key_the_linux_profile_turns_on() {
        let fills = crate::host::linux::PROFILE.fills;
        assert!(RecoveryParams::of(&TransportCfg::default()).is_none());
        for d in MECHANISMS {
            let name = d.about.name;
            assert!(d.about.params.iter().any(|t| t.iter().any(|p| p.key == name)), "{name}: not its own key");
            assert!(fills.iter().any(|(k, _)| *k == name), "{name}: not in the linux profile");
            // lost_retransmit needs prr (`validate`); prr alone is off.
            let json = match name {
                "prr" => r#"{"cc": "cubic", "prr": "linux"}"#.to_string(),
                "lost_retransmit" => r#"{"cc": "cubic", "lost_retransmit": true, "prr": "linux"}"#.to_string(),
                _ => format!(r#"{{"cc": "cubic", "{name}": true}}"#),
            };
            let t: TransportCfg = serde_json::from_str(&json).unwrap();
            assert!(RecoveryParams::of(&t).is_some(), "{name} set, but no Recovery");
        }
    }
}
