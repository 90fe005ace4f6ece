//! Loss recovery beyond RFC 6675's fast retransmit and RFC 6298's RTO:
//! the mechanisms of Linux's TCP that ecnlab models, each in its own file
//! with its `[transport]` key, its state and its rules, and each off by
//! default (the `linux` profile, `host/linux.rs`, turns them on).
//!
//! A mechanism is a type implementing `Mechanism` (`mechanism.rs`): hooks
//! with do-nothing defaults, of which it writes those it acts at. The
//! `recovery!` list below is the registry, one line each: from it come
//! `MECHANISMS` (whose keys join `[transport]`, `registry.rs`),
//! `RecoveryParams` (each mechanism's settings, None when off) and
//! `Recovery` (each one's state). A sender with any mechanism on holds one
//! boxed `Recovery` (None otherwise, so `Flow` stays small and the default
//! sender pays one branch per hook). The sender (`tcp_tx.rs`) calls it at
//! named hooks, and each hook calls every mechanism that is on, in the
//! list's order (calls that no mechanism overrides compile to nothing):
//!
//! | hook | when | mechanisms |
//! |---|---|---|
//! | `rtt_sample`, `resume` | an RTT sample; a persistent connection's next flow | `rto_linux` |
//! | `on_ack_arrival` | an ACK, before anything moves | `tlp`, `frto` |
//! | `reduction_sacked`, `cwr_done`, `on_reduction_ack`, `on_ecn_cut` | ACKs in a reduction | `prr` |
//! | `on_rtt_ack` | an ACK that moved snd_una | `hystart` |
//! | `on_recovery_ack` | ACKs in fast recovery | `prr`, `lost_rtx` |
//! | `loss_is_detected` | a duplicate ACK | `tlp` |
//! | `enter`, `set_recovery_window`, `after_recovery_start` | fast recovery starts | `prr`, `lost_rtx`, `tlp` |
//! | `after_ack` | the ACK is done | `tlp`, `rack` |
//! | `on_timeout` | the RTO fired, before the core acts | `prr`, `lost_rtx`, `tlp`, `rack`, `hystart`, `frto` |
//! | `resend_lost`, `on_hole_resent` | a segment in recovery | `lost_rtx` |
//! | `probe`, `open_flight` | a segment in the open state | `tlp`, `frto`, `rto_sack` |
//! | `on_send`, `after_send` | a segment goes | `prr`, `rto_rearm`, `tlp` |
//! | `deadline`, `fired` | the sender's timer | `tlp`, `rack` |
//!
//! Each mechanism's file holds its state type and the rules over it,
//! taking the core state (`Snd`) as an argument; none imports another or
//! the sender. What one must know of another is in `mechanism.rs`'s
//! `Shared` (per connection: PRR's CWR state, RACK's lost mark) and
//! `Traits` (per run: whether the scoreboard outlives an RTO, what a loss
//! takes ssthresh from, what cwnd grows by).

pub mod mechanism;

use super::snd::{Segment, Snd};
use crate::config::TransportCfg;
use crate::units::Time;
pub use mechanism::{Fired, Mechanism, MechanismDecl, Shared, Traits};
use std::sync::Arc;

/// The registry: from one line per mechanism (its file's name and its
/// state's type), the module, the list of declarations, the run's settings
/// and a connection's state, and `each!`, which calls a hook on every
/// mechanism that is on.
macro_rules! recovery {
    ($($name:ident: $ty:ident,)*) => {
        $(pub mod $name;)*

        /// Every loss-recovery mechanism, in the registry's order: their keys
        /// join `[transport]` from here (`registry.rs`), whatever the
        /// congestion control, and `ecnlab keys` lists them.
        pub const MECHANISMS: &[&MechanismDecl] = &[$(&<$name::$ty as Mechanism>::DECL),*];

        /// The mechanisms' settings for a run (None: off), shared by its
        /// connections.
        #[derive(Debug)]
        pub struct RecoveryParams {
            run: Traits,
            $($name: Option<<$name::$ty as Mechanism>::Params>,)*
        }

        impl RecoveryParams {
            /// `t`'s settings, or None when every mechanism is off.
            pub fn of(t: &TransportCfg) -> Option<RecoveryParams> {
                let mut p = RecoveryParams { run: Traits::default(), $($name: <$name::$ty as Mechanism>::params(t),)* };
                let any = false $(|| p.$name.is_some())*;
                $(if let Some(q) = &p.$name { <$name::$ty as Mechanism>::traits(q, &mut p.run); })*
                any.then_some(p)
            }
        }

        /// A connection's loss-recovery state: each mechanism's, the state
        /// they share, and the run's settings.
        #[derive(Debug)]
        pub struct Recovery {
            p: Arc<RecoveryParams>,
            x: Shared,
            $(pub $name: $name::$ty,)*
        }

        impl Recovery {
            pub fn new(p: &Arc<RecoveryParams>) -> Recovery {
                Recovery { x: Shared { run: p.run, ..Shared::default() }, p: Arc::clone(p), $($name: $name::$ty::default(),)* }
            }
        }

        /// `each!(self, |m, q, x| body)`: `body` for every mechanism that is
        /// on, in order, with `m` its state, `q` its settings and `x` the
        /// shared state.
        macro_rules! each {
            ($r:ident, |$m:ident, $q:ident, $x:ident| $body:expr) => {
                $(if let Some($q) = &$r.p.$name {
                    let ($m, $x) = (&mut $r.$name, &mut $r.x);
                    let _ = &$x;
                    $body;
                })*
            };
        }

        /// `each_ref!`: as `each!`, for the hooks that only read.
        macro_rules! each_ref {
            ($r:ident, |$m:ident, $q:ident, $x:ident| $body:expr) => {
                $(if let Some($q) = &$r.p.$name {
                    let ($m, $x) = (&$r.$name, &$r.x);
                    let _ = &$x;
                    $body;
                })*
            };
        }
    };
}

recovery! {
    rto_linux: LinuxRtt,
    prr: Reduction,
    lost_rtx: LostRtx,
    frto: Frto,
    rto_sack: RtoSack,
    rto_rearm: RtoRearm,
    tlp: Tlp,
    rack: Rack,
    hystart: Hystart,
    linux_cwnd: LinuxCwnd,
}

/// Checks across the mechanisms' keys: lost-retransmission
/// detection has been validated only with PRR pacing the recovery (with
/// cwnd cut at once, a 10 Gbps FQ-CoDel run showed more RTOs with it than
/// without: not understood yet), so it needs `prr`.
pub fn validate(t: &crate::config::TransportCfg) -> Result<(), crate::config::ConfigError> {
    let lost = lost_rtx::LostRtxParams::of(t).lost_retransmit;
    if lost && prr::PrrParams::of(t).prr == prr::PrrKind::Off {
        return Err(crate::config::bad(
            "transport.lost_retransmit",
            true,
            "needs transport.prr (\"crb\", \"ssrb\" or \"linux\"): it is not validated with prr = \"off\"",
        ));
    }
    // pFabric's sender (`host/pfabric.rs`) has its own timeout and probe
    // mode, and never reaches the hooks these act at.
    let pfabric = crate::host::cc::decl(t.cc.as_str()).is_some_and(|d| d.pfabric);
    let inert = [
        ("transport.tlp", tlp::TlpParams::of(t).tlp, "no window to probe"),
        ("transport.frto", frto::FrtoParams::of(t).frto, "no RTO to undo"),
    ];
    for (key, on, why) in inert {
        if pfabric && on {
            return Err(crate::config::bad(
                key,
                true,
                &format!("is not for cc = \"pfabric\", whose sender has its own timeout and {why}"),
            ));
        }
    }
    Ok(())
}

impl RecoveryParams {
    /// Whether ACKs must count the bytes they newly deliver (`Traits`).
    pub fn grows_by_delivered(&self) -> bool {
        self.run.grows_by_delivered
    }
}

impl Recovery {
    /// RACK's mark above the highest SACK, for the scoreboard's holes.
    #[inline]
    pub fn lost_end(&self) -> u64 {
        self.x.lost_end
    }

    pub fn grows_by_delivered(&self) -> bool {
        self.x.run.grows_by_delivered
    }

    /// Whether a loss takes ssthresh from cwnd (`Traits`).
    pub fn ssthresh_from_cwnd(&self) -> bool {
        self.x.run.ssthresh_from_cwnd
    }

    /// Whether the RTO keeps the SACK scoreboard (`rto_sack.rs`); else the
    /// go-back is to N.
    pub fn keeps_sack(&self) -> bool {
        self.x.run.keeps_sack
    }

    /// An RTT sample `r`: a mechanism's estimator, or RFC 6298's.
    #[inline]
    pub fn rtt_sample(&mut self, s: &mut Snd, r: Time) {
        let mut taken = false;
        each!(self, |m, q, x| taken = taken || Mechanism::rtt_sample(m, q, s, r));
        if !taken {
            s.rfc6298_sample(r);
        }
    }

    /// A persistent connection resumes with a carried `rttvar`.
    pub fn resume(&mut self, rttvar: f64, min_rto: Time) {
        each!(self, |m, q, x| Mechanism::resume(m, q, rttvar, min_rto));
    }

    /// An ACK (`ack`, first SACK block `sack`) arrives, before anything
    /// moves.
    #[inline]
    pub fn on_ack_arrival(&mut self, s: &mut Snd, ack: u64, sack: (u64, u64)) {
        each!(self, |m, q, x| Mechanism::on_ack_arrival(m, q, x, s, ack, sack));
    }

    /// In a paced reduction: the SACKed bytes before this ACK.
    #[inline]
    pub fn reduction_sacked(&self, s: &Snd) -> Option<u64> {
        let mut r = None;
        each_ref!(self, |m, q, x| r = r.or_else(|| Mechanism::reduction_sacked(m, q, x, s)));
        r
    }

    /// snd_una moved out of recovery: true if a CWR reduction ended.
    pub fn cwr_done(&mut self, s: &mut Snd) -> bool {
        let mut done = false;
        each!(self, |m, q, x| done |= Mechanism::cwr_done(m, q, x, s));
        done
    }

    /// An ACK that moved snd_una with RTT sample `rtt`.
    #[inline]
    pub fn on_rtt_ack(&mut self, s: &mut Snd, now: Time, rtt: Time) {
        each!(self, |m, q, x| Mechanism::on_rtt_ack(m, q, s, now, rtt));
    }

    /// An ACK in fast recovery that moved snd_una by `acked`.
    pub fn on_recovery_ack(&mut self, s: &mut Snd, acked: u64, sacked_before: Option<u64>) {
        each!(self, |m, q, x| Mechanism::on_recovery_ack(m, q, x, s, acked, true, sacked_before));
    }

    /// A duplicate ACK in fast recovery.
    pub fn on_recovery_dupack(&mut self, s: &mut Snd, sacked_before: Option<u64>) {
        each!(self, |m, q, x| Mechanism::on_recovery_ack(m, q, x, s, 0, false, sacked_before));
    }

    /// An ACK in a reduction outside recovery (CWR).
    pub fn on_reduction_ack(&mut self, s: &mut Snd, acked: u64, sacked_before: u64, safe: bool) {
        each!(self, |m, q, x| Mechanism::on_reduction_ack(m, q, x, s, acked, sacked_before, safe));
    }

    /// The congestion control cut cwnd from `prior` on ECE.
    pub fn on_ecn_cut(&mut self, s: &mut Snd, prior: f64, acked: u64, sacked_before: u64, safe: bool) {
        each!(self, |m, q, x| Mechanism::on_ecn_cut(m, q, x, s, prior, acked, sacked_before, safe));
    }

    /// A duplicate ACK: has a loss been found beyond the duplicate count?
    #[inline]
    pub fn loss_is_detected(&self, s: &Snd) -> bool {
        let mut found = false;
        each_ref!(self, |m, q, x| found = found || Mechanism::loss_is_detected(m, q, s));
        found
    }

    /// Fast recovery starts: the window is set (by a mechanism, else at
    /// once), then the core's part.
    pub fn enter(&mut self, s: &mut Snd) {
        each!(self, |m, q, x| Mechanism::enter(m, q));
        let mut set = false;
        each!(self, |m, q, x| set = set || Mechanism::set_recovery_window(m, q, x, s));
        if !set {
            s.loss_cut(self.x.run.ssthresh_from_cwnd);
        }
        s.begin_recovery();
    }

    /// Recovery has just started with `sacked_before` SACKed before the
    /// ACK (or timer) that started it.
    pub fn after_recovery_start(&mut self, s: &mut Snd, sacked_before: u64) {
        each!(self, |m, q, x| Mechanism::after_recovery_start(m, q, x, s, sacked_before));
    }

    /// The ACK at `now` echoing `ts_echo` is done.
    pub fn after_ack(&mut self, s: &mut Snd, now: Time, ts_echo: Time, progressed: bool) {
        each!(self, |m, q, x| Mechanism::after_ack(m, q, x, s, now, ts_echo, progressed));
    }

    /// The RTO fired, before the core acts: every reduction, mark and timer
    /// ends.
    pub fn on_timeout(&mut self, s: &Snd, now: Time) {
        each!(self, |m, q, x| Mechanism::on_timeout(m, q, x, s, now));
    }

    /// In recovery: a segment to resend at once.
    #[inline]
    pub fn resend_lost(&mut self, s: &Snd) -> Option<Segment> {
        let mut g = None;
        each!(self, |m, q, x| g = g.or_else(|| Mechanism::resend_lost(m, q, s)));
        g
    }

    /// The hole at snd_una was retransmitted.
    pub fn on_hole_resent(&mut self, s: &Snd) {
        each!(self, |m, q, x| Mechanism::on_hole_resent(m, q, s));
    }

    /// In the open state: a segment to send whatever cwnd says.
    #[inline]
    pub fn probe(&mut self, s: &mut Snd) -> Option<Segment> {
        let mut g = None;
        each!(self, |m, q, x| if g.is_none() {
            g = Mechanism::probe(m, q, x, s)
        });
        g
    }

    /// The flight the window is checked against in the open state, where
    /// it is not snd_nxt − snd_una.
    #[inline]
    pub fn open_flight(&self, s: &Snd) -> Option<u64> {
        let mut f = None;
        each_ref!(self, |m, q, x| f = f.or_else(|| Mechanism::open_flight(m, q, s)));
        f
    }

    /// The next new (or not yet resent) segment, past SACKed data when the
    /// scoreboard was kept (`rto_sack.rs`).
    #[inline]
    pub fn new_data(&self, s: &mut Snd) -> Option<Segment> {
        s.new_data(self.x.run.keeps_sack)
    }

    /// A segment is going at `now`, before the core arms its timer.
    #[inline]
    pub fn on_send(&mut self, s: &mut Snd, now: Time, seg: &Segment) {
        each!(self, |m, q, x| Mechanism::on_send(m, q, x, s, now, seg));
    }

    /// A segment went.
    #[inline]
    pub fn after_send(&mut self, s: &Snd, now: Time, seg: &Segment) {
        each!(self, |m, q, x| Mechanism::after_send(m, q, s, now, seg));
    }

    /// The sender's next timer (0: none): the RTO's `rto` deadline, or a
    /// mechanism's earlier one, which stands in front of it.
    #[inline]
    pub fn deadline(&self, rto: Time) -> Time {
        let mut at = rto;
        each_ref!(self, |m, _q, x| {
            let t = Mechanism::deadline(m);
            if t != 0 && (at == 0 || t < at) {
                at = t;
            }
        });
        at
    }

    /// For tests: the timer fired at `now`; true if it was TLP's PTO.
    #[cfg(test)]
    pub fn pto_fired(&mut self, s: &mut Snd, now: Time) -> bool {
        let Some(q) = &self.p.tlp else { return false };
        Mechanism::fired(&mut self.tlp, q, &mut self.x, s, now) == Fired::Probe
    }

    /// For tests: the timer fired at `now`; true if it was RACK's (and
    /// then, if the hole is still there, fast recovery has started).
    #[cfg(test)]
    pub fn reo_fired(&mut self, s: &mut Snd, now: Time) -> bool {
        let Some(q) = &self.p.rack else { return false };
        match Mechanism::fired(&mut self.rack, q, &mut self.x, s, now) {
            Fired::No | Fired::Probe => false,
            Fired::Marked => true,
            Fired::Recover => {
                self.recover_now(s);
                true
            }
        }
    }

    /// The sender's timer fired at `now`: whose it was. A mechanism's
    /// timer that found a loss starts fast recovery here.
    pub fn fired(&mut self, s: &mut Snd, now: Time) -> Fired {
        let mut f = Fired::No;
        each!(self, |m, q, x| if f == Fired::No {
            f = Mechanism::fired(m, q, x, s, now)
        });
        if f == Fired::Recover {
            self.recover_now(s);
            return Fired::Marked;
        }
        f
    }

    /// A mechanism's timer found a loss: fast recovery starts with no ACK
    /// to pace by, cwnd at the pipe; the first retransmission goes anyway
    /// (RFC 6675 §5 step 4.3).
    fn recover_now(&mut self, s: &mut Snd) {
        self.enter(s);
        let sacked = s.sacked_bytes();
        self.after_recovery_start(s, sacked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pFabric's sender runs neither TLP nor F-RTO: each is refused there,
    /// naming its key, rather than left to do nothing.
    #[test]
    fn pfabric_refuses_the_mechanisms_it_cannot_run() {
        for key in ["tlp", "frto"] {
            let t: TransportCfg = serde_json::from_str(&format!(r#"{{"cc": "pfabric", "{key}": true}}"#)).unwrap();
            let e = validate(&t).expect_err(key).to_string();
            assert!(e.contains(&format!("transport.{key}")) && e.contains("pfabric"), "{e}");
            let t: TransportCfg = serde_json::from_str(&format!(r#"{{"cc": "dctcp", "{key}": true}}"#)).unwrap();
            assert!(validate(&t).is_ok(), "{key} with dctcp");
        }
    }

    /// The registry is what the seam rests on: each mechanism's name is a
    /// key it declares; the `linux` profile turns every one on (Linux runs
    /// them all: host/linux.rs); and a
    /// transport with any one of them set gives its connections a
    /// `Recovery`, the default none (the default sender pays one branch per
    /// hook and no box).
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
