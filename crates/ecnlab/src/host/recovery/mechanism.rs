//! What a loss-recovery mechanism is: the `Mechanism` trait, whose hooks
//! the sender calls through `Recovery` (`mod.rs`), and the little state
//! the mechanisms share. A leaf: it imports no mechanism, and every
//! mechanism imports it.
//!
//! Each hook has a default that does nothing, so a mechanism writes only
//! the hooks it acts at. `Recovery` calls a hook on every mechanism that
//! is on, in the registry's order, with the mechanism's own state, its
//! run settings (`Params`), the shared state (`Shared`) and the sender's
//! core (`Snd`). Mechanisms never call each other: what one must know of
//! another is in `Shared` (per connection) or `Traits` (per run).

use crate::config::TransportCfg;
use crate::host::snd::{Segment, Snd};
use crate::switch::scheme::About;
use crate::units::Time;

/// One mechanism's declaration, beside its code: its name (its key's),
/// what it does, its source and its `[transport]` keys.
pub struct MechanismDecl {
    pub about: About,
}

/// What the run's mechanisms ask of the sender's core and of each other,
/// folded from each mechanism's `traits` when the run starts.
#[derive(Clone, Copy, Debug, Default)]
pub struct Traits {
    /// The go-back after an RTO skips SACKed data (`rto_sack.rs`).
    pub keeps_sack: bool,
    /// A loss takes ssthresh from cwnd, not FlightSize (`linux_cwnd.rs`).
    pub ssthresh_from_cwnd: bool,
    /// ACKs grow cwnd by the bytes they newly deliver (`linux_cwnd.rs`).
    pub grows_by_delivered: bool,
}

/// The per-connection state more than one mechanism reads.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shared {
    /// The run's traits.
    pub run: Traits,
    /// In Linux's CWR state: an ECN cut under way, paced by PRR, until
    /// snd_una reaches `cwr_end` (`prr.rs` starts it; a window cut by
    /// another rule, or the RTO, ends it).
    pub cwr: bool,
    pub cwr_end: u64,
    /// In recovery: the data below this, sent before the recovery, is
    /// marked lost (`rack.rs` sets it; the scoreboard's holes and pipe
    /// count it).
    pub lost_end: u64,
}

/// What a fired timer was to a mechanism.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fired {
    /// Not its timer, or not due: the RTO, if due.
    No,
    /// The PTO: the next segment is the probe.
    Probe,
    /// Its deadline, acted on (marks set); nothing more to do.
    Marked,
    /// Its deadline found a loss: fast recovery starts now.
    Recover,
}

/// A loss-recovery mechanism: its state per connection (`Self`), its
/// settings per run (`Params`), its declaration and its hooks.
#[allow(unused_variables)]
pub trait Mechanism: Default + std::fmt::Debug {
    /// The run's settings, shared by its connections.
    type Params: std::fmt::Debug + Send + Sync;
    /// Its name, doc, source and keys (`ecnlab keys`).
    const DECL: MechanismDecl;
    /// `t`'s settings, or None when the mechanism is off.
    fn params(t: &TransportCfg) -> Option<Self::Params>;
    /// What the core and the other mechanisms must know of it.
    fn traits(p: &Self::Params, t: &mut Traits) {}

    /// An RTT sample `r`: true if this mechanism's estimator took it
    /// (else RFC 6298's does).
    fn rtt_sample(&mut self, p: &Self::Params, s: &mut Snd, r: Time) -> bool {
        false
    }
    /// A persistent connection resumes with a carried `rttvar`.
    fn resume(&mut self, p: &Self::Params, rttvar: f64, min_rto: Time) {}
    /// An ACK (`ack`, first SACK block `sack`) arrives, before anything
    /// moves.
    fn on_ack_arrival(&mut self, p: &Self::Params, x: &mut Shared, s: &mut Snd, ack: u64, sack: (u64, u64)) {}
    /// In a paced reduction: the SACKed bytes before this ACK.
    fn reduction_sacked(&self, p: &Self::Params, x: &Shared, s: &Snd) -> Option<u64> {
        None
    }
    /// snd_una moved out of recovery: true if a CWR reduction just ended.
    fn cwr_done(&mut self, p: &Self::Params, x: &mut Shared, s: &mut Snd) -> bool {
        false
    }
    /// An ACK that moved snd_una, with RTT sample `rtt`.
    fn on_rtt_ack(&mut self, p: &Self::Params, s: &mut Snd, now: Time, rtt: Time) {}
    /// An ACK in fast recovery that moved snd_una by `acked`, or (`acked`
    /// = 0, `una_moved` false) a duplicate; `sacked_before`: as
    /// `reduction_sacked` gave it.
    fn on_recovery_ack(
        &mut self,
        p: &Self::Params,
        x: &mut Shared,
        s: &mut Snd,
        acked: u64,
        una_moved: bool,
        sacked_before: Option<u64>,
    ) {
    }
    /// An ACK in a reduction outside recovery (CWR).
    fn on_reduction_ack(&mut self, p: &Self::Params, x: &mut Shared, s: &mut Snd, acked: u64, before: u64, safe: bool) {
    }
    /// The congestion control cut cwnd from `prior` on ECE.
    #[allow(clippy::too_many_arguments)]
    fn on_ecn_cut(
        &mut self,
        p: &Self::Params,
        x: &mut Shared,
        s: &mut Snd,
        prior: f64,
        acked: u64,
        before: u64,
        safe: bool,
    ) {
    }
    /// A duplicate ACK: has a loss been found beyond the duplicate count?
    fn loss_is_detected(&self, p: &Self::Params, s: &Snd) -> bool {
        false
    }
    /// Fast recovery starts, before the window is set.
    fn enter(&mut self, p: &Self::Params) {}
    /// Fast recovery starts: true if this mechanism set the window (else
    /// the core cuts it at once).
    fn set_recovery_window(&mut self, p: &Self::Params, x: &mut Shared, s: &mut Snd) -> bool {
        false
    }
    /// Fast recovery has just started, `sacked_before` SACKed before.
    fn after_recovery_start(&mut self, p: &Self::Params, x: &mut Shared, s: &mut Snd, sacked_before: u64) {}
    /// The ACK at `now` echoing `ts_echo` is done.
    fn after_ack(&mut self, p: &Self::Params, x: &mut Shared, s: &mut Snd, now: Time, ts_echo: Time, progressed: bool) {
    }
    /// The RTO fired, before the core acts on it.
    fn on_timeout(&mut self, p: &Self::Params, x: &mut Shared, s: &Snd, now: Time) {}
    /// In recovery: a segment to resend at once.
    fn resend_lost(&mut self, p: &Self::Params, s: &Snd) -> Option<Segment> {
        None
    }
    /// The hole at snd_una was retransmitted.
    fn on_hole_resent(&mut self, p: &Self::Params, s: &Snd) {}
    /// In the open state: a segment to send whatever cwnd says.
    fn probe(&mut self, p: &Self::Params, x: &Shared, s: &mut Snd) -> Option<Segment> {
        None
    }
    /// The flight the window is checked against in the open state, where
    /// it is not snd_nxt − snd_una.
    fn open_flight(&self, p: &Self::Params, s: &Snd) -> Option<u64> {
        None
    }
    /// A segment is going at `now`, before the core arms its timer.
    fn on_send(&mut self, p: &Self::Params, x: &Shared, s: &mut Snd, now: Time, seg: &Segment) {}
    /// A segment went.
    fn after_send(&mut self, p: &Self::Params, s: &Snd, now: Time, seg: &Segment) {}
    /// This mechanism's timer (0: none); it stands in front of the RTO.
    fn deadline(&self) -> Time {
        0
    }
    /// The sender's timer fired at `now`: was it this mechanism's?
    fn fired(&mut self, p: &Self::Params, x: &mut Shared, s: &mut Snd, now: Time) -> Fired {
        Fired::No
    }
}
