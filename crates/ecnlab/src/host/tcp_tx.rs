//! TCP sender: handshake, sliding window, fast retransmit with a SACK
//! scoreboard (RFC 6675 style pipe), RTO per RFC 6298 with min/initial/max
//! and exponential backoff, over the core state in `snd.rs`.
//!
//! Two parts replace or extend these rules, each entering at named
//! places: pFabric's sender (`pfabric.rs`), where `pf.on`; and the
//! loss-recovery mechanisms (`recovery/`: Linux's RTO, PRR, RACK-TLP and
//! the rest), through the hooks of `Recovery`, where `rec` is Some. Read
//! `on_ack_blocks`, `next_segment` and `on_timeout` top to bottom for the
//! order in which they act. The sender derefs to `Snd`, so its state
//! reads as `tx.una`, `tx.w`.

use super::apps::persistent::Carried;
use super::cc::AckInfo;
use super::nic::lso::Allowance;
use super::pfabric::PfabricTx;
use super::recovery::{Fired, Recovery, RecoveryParams};
use super::sack_blocks::{More, NO_MORE};
use super::snd::{Segment, Snd, SndParams, TxState};
use crate::config::TransportCfg;
use crate::units::Time;
use std::sync::Arc;

/// What every connection of a run shares: the core's constants and the
/// recovery mechanisms' settings, kept once rather than per flow (see
/// `world::FlowLog`).
#[derive(Debug)]
pub struct TcpParams {
    snd: Arc<SndParams>,
    rec: Option<Arc<RecoveryParams>>,
    pfabric: bool,
}

impl TcpParams {
    pub fn new(t: &TransportCfg) -> Arc<TcpParams> {
        let pfabric = super::cc::decl(t.cc.as_str()).is_some_and(|d| d.pfabric);
        let rec = RecoveryParams::of(t);
        // ACKs count the bytes they newly deliver for the mechanisms that
        // grow cwnd by it, and for `cubic_linux`, whose arithmetic takes it.
        let count = rec.as_ref().is_some_and(|r| r.grows_by_delivered()) || super::cc::cubic_linux::active(t);
        Arc::new(TcpParams { snd: Arc::new(SndParams::new(t, pfabric, count)), rec: rec.map(Arc::new), pfabric })
    }
}

/// What the sender's timer was when it fired (`fire_timer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerAction {
    /// Nothing to do (not due, or a recovery mechanism's own step: RACK
    /// marked holes lost and recovery is under way).
    Nothing,
    /// A tail loss probe is due: send one segment now.
    Probe,
    /// The RTO during the handshake: resend the SYN.
    ResendSyn,
}

pub struct TcpSender {
    pub(crate) s: Snd,
    /// pFabric's sender state; `pf.on` only with cc = "pfabric".
    pub pf: PfabricTx,
    /// The loss-recovery mechanisms' state (`recovery/`), boxed to keep
    /// `Flow` small; None unless one of them is on.
    pub(crate) rec: Option<Box<Recovery>>,
}

impl std::ops::Deref for TcpSender {
    type Target = Snd;
    #[inline]
    fn deref(&self) -> &Snd {
        &self.s
    }
}

impl std::ops::DerefMut for TcpSender {
    #[inline]
    fn deref_mut(&mut self) -> &mut Snd {
        &mut self.s
    }
}

impl TcpSender {
    /// A connection with its own copy of the run's constants, for tests;
    /// the engine shares one (`with_params`).
    #[cfg(test)]
    pub fn new(t: &TransportCfg) -> Self {
        TcpSender::with_params(t, &TcpParams::new(t))
    }

    pub fn with_params(t: &TransportCfg, p: &Arc<TcpParams>) -> Self {
        TcpSender {
            s: Snd::new(t, &p.snd),
            pf: PfabricTx::new(p.pfabric),
            rec: p.rec.as_ref().map(|r| Box::new(Recovery::new(r))),
        }
    }

    /// Start the handshake: the caller sends a SYN.
    pub fn open(&mut self, now: Time) {
        self.s.state = TxState::SynSent;
        self.s.rto_deadline = now + self.s.rto;
    }

    pub fn on_synack(&mut self, now: Time, ts_echo: Time) {
        if self.s.state != TxState::SynSent {
            return;
        }
        self.s.state = TxState::Established;
        self.rtt_sample(now.saturating_sub(ts_echo));
        self.s.rto_deadline = 0;
        self.s.last_send = now;
    }

    #[inline]
    pub(super) fn rtt_sample(&mut self, r: Time) {
        rtt_sample(&mut self.s, self.rec.as_deref_mut(), r);
    }

    /// RFC 6675's pipe (`scoreboard.rs`).
    pub fn pipe(&self) -> u64 {
        self.s.pipe(lost_end(self.rec.as_deref()))
    }

    /// Process an ACK with one SACK block. Returns true when it made
    /// progress (new data acked).
    pub fn on_ack(&mut self, now: Time, ack: u64, sack: (u64, u64), ece: bool, ts_echo: Time) -> bool {
        self.on_ack_blocks(now, ack, sack, &NO_MORE, ece, ts_echo)
    }

    /// Process an ACK whose SACK blocks are `sack` then `more`
    /// (`sack_blocks.rs`).
    pub fn on_ack_blocks(
        &mut self,
        now: Time,
        ack: u64,
        sack: (u64, u64),
        more: &More,
        ece: bool,
        ts_echo: Time,
    ) -> bool {
        let (s, rec) = (&mut self.s, &mut self.rec);
        if s.state != TxState::Established {
            return false;
        }
        if self.pf.on {
            self.pf.heard_from_peer();
        }
        if let Some(r) = rec.as_deref_mut() {
            r.on_ack_arrival(s, ack, sack);
        }
        let progressed = ack > s.una;
        // Was the window in use over the last window of data (Linux
        // tcp_is_cwnd_limited): in slow start half of it suffices, in
        // congestion avoidance all but a segment.
        let cwnd_bytes = s.w.cwnd * s.p.mss as f64;
        let cwnd_limited = if s.w.cwnd < s.w.ssthresh {
            2.0 * s.max_flight as f64 >= cwnd_bytes
        } else {
            (s.max_flight + s.p.mss as u64) as f64 >= cwnd_bytes
        };
        if ack > s.usage_end {
            s.usage_end = s.max_sent;
            s.max_flight = s.nxt.saturating_sub(ack);
        }
        if progressed {
            let acked = ack - s.una;
            let before = if s.p.count_delivered { s.delivered_before(ack) } else { (0, 0) };
            let mut prr_before = rec.as_deref().and_then(|r| r.reduction_sacked(s));
            s.una = ack;
            if prr_before.is_some() && !s.in_recovery && rec.as_deref_mut().is_some_and(|r| r.cwr_done(s)) {
                prr_before = None;
            }
            s.nxt = s.nxt.max(ack);
            s.max_sent = s.max_sent.max(ack);
            s.dupacks = 0;
            let rtt = now.saturating_sub(ts_echo);
            rtt_sample(s, rec.as_deref_mut(), rtt);
            s.add_sacks(sack, more);
            s.trim_sacks();
            let delivered = if s.p.count_delivered { s.newly_delivered(before) } else { acked };
            if let Some(r) = rec.as_deref_mut() {
                r.on_rtt_ack(s, now, rtt);
            }
            let (una, snd_max, mss, srtt) = (s.una, s.max_sent, s.p.mss, s.srtt as Time);
            let grown = if rec.as_deref().is_some_and(|r| r.grows_by_delivered()) { delivered } else { acked };
            let info = AckInfo { acked: grown, delivered, ece, una, snd_max, mss, cwnd_limited, now, srtt, rtt };
            let prior = s.w.cwnd;
            if s.in_recovery && s.una >= s.recover {
                s.in_recovery = false;
                s.w.cwnd = s.w.ssthresh;
                s.cc.observe(info);
            } else if s.in_recovery {
                s.rtx_next = s.rtx_next.max(s.una);
                s.cc.observe(info);
                if let Some(r) = rec.as_deref_mut() {
                    r.on_recovery_ack(s, acked, prr_before);
                }
            } else if s.cc.on_ack(&mut s.w, info) {
                s.cwr_pending = true;
                if let Some(r) = rec.as_deref_mut() {
                    let sacked = s.sacked_bytes();
                    r.on_ecn_cut(s, prior, acked, sacked, true);
                }
            } else if let (Some(before), Some(r)) = (prr_before, rec.as_deref_mut()) {
                r.on_reduction_ack(s, acked, before, true);
            }
            s.rto_deadline = if s.una < s.max_sent { now + s.rto } else { 0 };
        } else if ack == s.una && s.flight() > 0 {
            let prr_before = rec.as_deref().and_then(|r| r.reduction_sacked(s));
            let sacked_before = if rec.is_some() { s.sacked_bytes() } else { 0 };
            s.add_sacks(sack, more);
            s.dupacks += 1;
            let (una, snd_max, mss, srtt) = (s.una, s.max_sent, s.p.mss, s.srtt as Time);
            let info = AckInfo { acked: 0, delivered: 0, ece, una, snd_max, mss, cwnd_limited, now, srtt, rtt: 0 };
            let prior = s.w.cwnd;
            let lost = s.dupacks >= s.p.dupthresh || rec.as_deref().is_some_and(|r| r.loss_is_detected(s));
            if !s.in_recovery && lost && s.una >= s.recover {
                enter_recovery(s, rec.as_deref_mut());
                s.cc.observe(info);
                if let Some(r) = rec.as_deref_mut() {
                    r.after_recovery_start(s, sacked_before);
                }
            } else if s.in_recovery {
                s.cc.observe(info);
                if let Some(r) = rec.as_deref_mut() {
                    r.on_recovery_dupack(s, prr_before);
                }
            } else if s.cc.on_ack(&mut s.w, info) {
                s.cwr_pending = true;
                if let Some(r) = rec.as_deref_mut() {
                    r.on_ecn_cut(s, prior, 0, sacked_before, false);
                }
            } else if let (Some(before), Some(r)) = (prr_before, rec.as_deref_mut()) {
                r.on_reduction_ack(s, 0, before, false);
            }
        }
        if let Some(r) = rec.as_deref_mut() {
            r.after_ack(s, now, ts_echo, progressed);
        }
        progressed
    }

    /// The retransmission timer fired: collapse to one segment and go back
    /// to snd_una (RFC 5681 §3.1, RFC 6298 §5).
    pub fn on_timeout(&mut self, now: Time) -> bool {
        let s = &mut self.s;
        match s.state {
            TxState::SynSent => {
                s.timeouts += 1;
                s.rto = (s.rto * 2).min(s.p.max_rto);
                s.rto_deadline = now + s.rto;
                true // resend the SYN
            }
            TxState::Established if s.una < s.max_sent && self.pf.on => self.pf.timeout(s, now),
            TxState::Established if s.una < s.max_sent => {
                s.timeouts += 1;
                // The mechanisms first, on the state the timeout found.
                if let Some(r) = self.rec.as_deref_mut() {
                    r.on_timeout(s, now);
                }
                // ssthresh answers a loss once (RFC 5681 §3.1): an RTO
                // during fast recovery, or one repeated before snd_una
                // passes the last RTO's recovery point, keeps the ssthresh
                // already set (Linux tcp_enter_loss does the same). Taking
                // FlightSize/2 there would count the SACKed data above an
                // old hole, often hundreds of segments, and send the
                // go-back-N retransmission into a slow start that overruns
                // the buffer it was lost in.
                if !s.in_recovery && s.una >= s.recover {
                    s.w.ssthresh = s.loss_ssthresh(self.rec.as_deref().is_some_and(|r| r.ssthresh_from_cwnd()));
                }
                s.cc.on_timeout();
                let keeps_sack = self.rec.as_deref().is_some_and(|r| r.keeps_sack());
                s.w.cwnd = 1.0;
                s.in_recovery = false;
                s.dupacks = 0;
                if !keeps_sack {
                    s.sacked.clear(); // go back N (`recovery/rto_sack.rs`)
                }
                s.nxt = s.una;
                s.recover = s.max_sent;
                s.after_loss();
                s.rto = (s.rto * 2).min(s.p.max_rto);
                s.rto_deadline = now + s.rto;
                false
            }
            _ => {
                s.rto_deadline = 0;
                false
            }
        }
    }

    /// The sender's next timer (0: none): the RTO, or earlier a recovery
    /// mechanism's (`Recovery::deadline`).
    #[inline]
    pub fn timer_deadline(&self) -> Time {
        match self.rec.as_deref() {
            Some(r) => r.deadline(self.s.rto_deadline),
            None => self.s.rto_deadline,
        }
    }

    /// The timer fired at `now` (due by `timer_deadline`): a recovery
    /// mechanism's step, else the RTO.
    pub fn fire_timer(&mut self, now: Time) -> TimerAction {
        let fired = self.rec.as_deref_mut().map_or(Fired::No, |r| r.fired(&mut self.s, now));
        match fired {
            Fired::Probe => TimerAction::Probe,
            Fired::Marked | Fired::Recover => TimerAction::Nothing,
            Fired::No if self.on_timeout(now) => TimerAction::ResendSyn,
            Fired::No => TimerAction::Nothing,
        }
    }

    /// For tests: the timer fired at `now`; true if it was TLP's PTO.
    #[cfg(test)]
    pub fn pto_fired(&mut self, now: Time) -> bool {
        self.rec.as_deref_mut().is_some_and(|r| r.pto_fired(&mut self.s, now))
    }

    /// For tests: the timer fired at `now`; true if it was RACK's.
    #[cfg(test)]
    pub fn reo_fired(&mut self, now: Time) -> bool {
        self.rec.as_deref_mut().is_some_and(|r| r.reo_fired(&mut self.s, now))
    }

    /// Next segment the window allows, if any; the caller sends it.
    pub fn next_segment(&mut self, now: Time) -> Option<Segment> {
        let (s, rec) = (&mut self.s, &mut self.rec);
        if s.state != TxState::Established {
            return None;
        }
        let mss = s.p.mss as u64;
        let cwnd_bytes = ((s.w.cwnd * mss as f64) as u64).min(s.p.flight_cap);
        let seg = if s.in_recovery {
            // A lost retransmission of the first hole goes again at once.
            let resend = rec.as_deref_mut().and_then(|r| r.resend_lost(s));
            if let Some(g) = resend {
                g
            } else {
                let lost_end = lost_end(rec.as_deref());
                let pipe = s.pipe(lost_end);
                if pipe + mss > cwnd_bytes.max(mss) && !s.rtx_first {
                    return None;
                }
                s.rtx_first = false;
                match s.next_hole(lost_end) {
                    Some((lo, len)) => {
                        s.rtx_next = lo + len as u64;
                        if lo == s.una {
                            if let Some(r) = rec.as_deref_mut() {
                                r.on_hole_resent(s);
                            }
                        }
                        Segment { seq: lo, len, retransmit: true, cwr: false }
                    }
                    None => new_data(s, rec.as_deref())?,
                }
            }
        } else if self.pf.on {
            self.pf.segment(s, cwnd_bytes)?
        } else if let Some(g) = rec.as_deref_mut().and_then(|r| r.probe(s)) {
            g // the tail loss probe, whatever cwnd
        } else {
            let open = rec.as_deref().and_then(|r| r.open_flight(s));
            let in_flight = open.unwrap_or(s.nxt - s.una);
            if in_flight > 0 && in_flight + mss > cwnd_bytes.max(mss) {
                return None;
            }
            if s.p.slow_start_restart && s.una == s.max_sent && now.saturating_sub(s.last_send) > s.rto {
                s.w.cwnd = s.w.cwnd.min(s.p.init_cwnd);
            }
            new_data(s, rec.as_deref())?
        };
        let mut seg = seg;
        if seg.retransmit {
            s.retransmits += 1;
        }
        if let Some(r) = rec.as_deref_mut() {
            r.on_send(s, now, &seg);
        }
        if s.cwr_pending && !seg.retransmit {
            seg.cwr = true;
            s.cwr_pending = false;
        }
        s.last_send = now;
        s.max_flight = s.max_flight.max(s.nxt - s.una);
        if s.rto_deadline == 0 {
            s.rto_deadline = now + s.rto;
        }
        if let Some(r) = rec.as_deref_mut() {
            r.after_send(s, now, &seg);
        }
        Some(seg)
    }

    /// Bytes of the flow neither acknowledged nor SACKed: pFabric's
    /// priority for the packet sent now (`pfabric.rs`).
    pub fn remaining(&self) -> u64 {
        self.s.limit.saturating_sub(self.s.una).saturating_sub(self.s.sacked_bytes())
    }

    /// What LSO decides on (`nic/lso.rs`). Open state: no loss recovery
    /// under way, neither fast recovery nor the go-back after an RTO
    /// (snd_una below the recovery point). Room: full packets of new data
    /// the window allows, as `next_segment` counts them (another while
    /// flight + MSS fits in cwnd, always one when nothing is in flight).
    pub fn allowance(&self) -> Allowance {
        let s = &self.s;
        let mss = s.p.mss as u64;
        let cwnd_bytes = ((s.w.cwnd * mss as f64) as u64).min(s.p.flight_cap).max(mss);
        Allowance {
            open: !s.in_recovery && s.una >= s.recover && s.nxt >= s.max_sent,
            cwr: s.cc.in_cwr(s.una),
            room: cwnd_bytes.saturating_sub(s.nxt - s.una) / mss,
            cwnd: s.w.cwnd,
            rest: s.limit.saturating_sub(s.nxt).div_ceil(mss),
        }
    }

    /// What this connection hands to the next flow that reuses it
    /// (`apps/persistent.rs`).
    pub fn carried(&self) -> Carried {
        let s = &self.s;
        Carried {
            srtt: s.srtt,
            rttvar: s.rttvar,
            rto: s.rto,
            cwnd: s.w.cwnd,
            ssthresh: s.w.ssthresh,
            alpha: s.cc.alpha(),
            last_send: s.last_send,
        }
    }

    /// Take over a persistent connection: established at once, with the
    /// state its last flow left. Slow-start restart, when on, sets cwnd to
    /// the initial window after an idle period longer than the RTO and
    /// keeps ssthresh (ns-2 FullTcp: `idle_restart`, then
    /// `slowdown(CLOSE_CWND_INIT)`, which may also raise cwnd).
    pub fn resume(&mut self, c: &Carried, now: Time) {
        let s = &mut self.s;
        s.state = TxState::Established;
        s.srtt = c.srtt;
        s.rttvar = c.rttvar;
        s.rto = c.rto;
        s.w.cwnd = c.cwnd;
        s.w.ssthresh = c.ssthresh;
        if let Some(a) = c.alpha {
            s.cc.set_alpha(a);
        }
        s.last_send = c.last_send;
        if let Some(r) = self.rec.as_deref_mut() {
            r.resume(c.rttvar, s.p.min_rto);
        }
        if s.p.slow_start_restart && now.saturating_sub(c.last_send) > c.rto {
            s.w.cwnd = s.p.init_cwnd.min(s.w.max_cwnd());
        }
    }

    /// How HyStart ended slow start, if it did (`recovery/hystart.rs`).
    pub fn hystart_exit(&self) -> Option<super::recovery::hystart::Exit> {
        self.rec.as_deref().and_then(|r| r.hystart.found)
    }
}

/// An RTT sample `r`: the recovery mechanisms' estimator (Linux's, when
/// on), else RFC 6298's.
#[inline]
fn rtt_sample(s: &mut Snd, rec: Option<&mut Recovery>, r: Time) {
    match rec {
        Some(rec) => rec.rtt_sample(s, r),
        None => s.rfc6298_sample(r),
    }
}

/// RACK's mark for the scoreboard's holes (0: none).
#[inline]
fn lost_end(rec: Option<&Recovery>) -> u64 {
    rec.map_or(0, |r| r.lost_end())
}

/// Fast recovery starts: the window cut (RFC 5681 §3.2, or by the
/// recovery mechanisms), then the core's part.
fn enter_recovery(s: &mut Snd, rec: Option<&mut Recovery>) {
    match rec {
        Some(r) => r.enter(s),
        None => {
            s.loss_cut(false);
            s.begin_recovery();
        }
    }
}

/// The next new (or after an RTO, not yet resent) segment.
#[inline]
fn new_data(s: &mut Snd, rec: Option<&Recovery>) -> Option<Segment> {
    match rec {
        Some(r) => r.new_data(s),
        None => s.new_data(false),
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1460;

    fn established(cc: &str) -> TcpSender {
        let t: TransportCfg = serde_json::from_str(&format!("{{\"cc\": \"{cc}\", \"init_cwnd\": 20}}")).unwrap();
        let mut s = TcpSender::new(&t);
        s.limit = u64::MAX;
        s.open(0);
        s.on_synack(10, 0);
        s
    }

    fn send_all(s: &mut TcpSender, now: Time) -> Vec<Segment> {
        std::iter::from_fn(|| s.next_segment(now)).collect()
    }

    /// After an RTO the sender slow-starts from one segment (RFC 5681 §3.1):
    /// one more segment per ACK, for DCTCP as for Reno.
    #[test]
    fn slow_start_after_timeout_for_every_cc() {
        for cc in ["reno", "ecn-star", "dctcp"] {
            let mut s = established(cc);
            assert_eq!(send_all(&mut s, 20).len(), 20);
            s.on_timeout(10_000_000_000);
            assert_eq!(s.w.cwnd, 1.0);
            let mut now = 10_000_000_000;
            let mut acks = 0;
            for _ in 0..3 {
                now += 1000;
                let segs = send_all(&mut s, now);
                assert!(!segs.is_empty() && segs.iter().all(|g| g.retransmit), "{cc}");
                for g in segs {
                    s.on_ack(now, g.seq + g.len as u64, (0, 0), false, now - 500);
                    acks += 1;
                }
            }
            // 1 + 2 + 4 segments in three rounds: cwnd 1 → 8.
            assert_eq!(acks, 7, "{cc}");
            assert!((s.w.cwnd - 8.0).abs() < 1e-9, "{cc}: cwnd {}", s.w.cwnd);
        }
    }

    /// RFC 5681 §3.1: an RTO sets ssthresh to FlightSize/2 once per loss.
    /// A timeout during fast recovery keeps the ssthresh recovery set, and
    /// so does a second timeout before snd_una reaches the first one's
    /// recovery point, however much SACKed data lies above the hole.
    #[test]
    fn timeout_sets_ssthresh_once_per_loss() {
        let seg = |i: u64| (i * MSS, (i + 1) * MSS);
        // A fresh RTO with 20 segments out: ssthresh 20/2 = 10.
        let mut s = established("reno");
        send_all(&mut s, 0);
        s.on_timeout(1_000_000);
        assert_eq!(s.w.ssthresh, 10.0);
        // The go-back-N resend of segment 0 is acknowledged, then the next
        // RTO comes before snd_una reaches the old snd_max: ssthresh stays
        // 10 (FlightSize/2 would now be 19/2).
        let g = send_all(&mut s, 1_000_000);
        assert_eq!(g.len(), 1);
        s.on_ack(1_100_000, MSS, (0, 0), false, 1_000_000);
        s.on_timeout(3_000_000);
        assert_eq!(s.w.ssthresh, 10.0);

        // Fast recovery entered with 20 out (ssthresh 10), then 200 more
        // segments sent and SACKed above the hole while its retransmission
        // is lost: the RTO keeps 10, where FlightSize/2 would be 110.
        let mut s = established("reno");
        send_all(&mut s, 0);
        for i in 1..4 {
            s.on_ack(100, 0, seg(i), false, 0);
        }
        assert!(s.in_recovery);
        assert_eq!(s.w.ssthresh, 10.0);
        s.limit = 220 * MSS;
        for i in 4..220 {
            s.on_ack(200, 0, seg(i), false, 0);
            send_all(&mut s, 200);
        }
        assert_eq!(s.max_sent, 220 * MSS);
        s.on_timeout(1_000_000);
        assert_eq!((s.w.ssthresh, s.w.cwnd), (10.0, 1.0));
    }

    /// Duplicate ACKs caused by go-back-N after an RTO must not start fast
    /// recovery (RFC 6582 §3.2): snd_una is still below the old snd_max.
    #[test]
    fn no_fast_retransmit_below_recover_after_timeout() {
        let mut s = established("reno");
        send_all(&mut s, 20);
        s.on_timeout(10_000_000_000);
        send_all(&mut s, 10_000_000_000);
        s.on_ack(10_000_001_000, 5 * MSS, (0, 0), false, 0);
        for _ in 0..4 {
            s.on_ack(10_000_002_000, 5 * MSS, (0, 0), false, 0);
        }
        assert!(!s.in_recovery);
    }

    /// Three duplicate ACKs retransmit the hole at once, whatever the pipe
    /// (RFC 6675 §5 step 4.3), and an ECN sender flags CWR on its next new
    /// data after the loss cut (RFC 3168 §6.1.2).
    #[test]
    fn fast_retransmit_is_immediate_and_sets_cwr() {
        let mut s = established("ecn-star");
        send_all(&mut s, 20);
        // Segment 0 lost; segments 1..=3 arrive and are SACKed.
        for k in 1..=3u64 {
            s.on_ack(30, 0, (MSS, (k + 1) * MSS), false, 20);
        }
        assert!(s.in_recovery);
        let seg = s.next_segment(31).expect("retransmission");
        assert!(seg.retransmit && seg.seq == 0);
        // Recovery ends with the cumulative ACK; the next new segment has CWR.
        s.on_ack(40, 20 * MSS, (0, 0), false, 30);
        assert!(!s.in_recovery);
        let seg = s.next_segment(41).expect("new data");
        assert!(seg.cwr && !seg.retransmit);
    }

    fn sender(json: &str) -> TcpSender {
        let t: TransportCfg = serde_json::from_str(json).unwrap();
        let mut s = TcpSender::new(&t);
        s.limit = u64::MAX;
        s
    }

    /// RFC 6298 §2.2: the first sample R gives srtt = R, rttvar = R/2 and
    /// RTO = srtt + max(G, 4·rttvar): 10.3 us → 30.9 us, which a 1 us
    /// clock rounds up to 31 us. With steady samples rttvar decays toward
    /// 0 and G is the floor: 10.3 + 1 = 11.3 us → 12 us. Without a clock
    /// the timer stays exact.
    #[test]
    fn clock_granularity_rounds_the_rto_up_to_ticks() {
        let us = 1_000_000;
        let rtt = 10_300_000;
        let mut s = sender(r#"{"cc": "reno", "min_rto": "1us", "clock_granularity": "1us"}"#);
        s.open(0);
        s.on_synack(rtt, 0);
        assert_eq!(s.rto, 31 * us);
        for _ in 0..100 {
            s.rtt_sample(rtt);
        }
        assert_eq!(s.rto, 12 * us);
        let mut exact = sender(r#"{"cc": "reno", "min_rto": "1us"}"#);
        exact.open(0);
        exact.on_synack(rtt, 0);
        assert_eq!(exact.rto, 30_900_000);
        for _ in 0..100 {
            exact.rtt_sample(rtt);
        }
        assert!(exact.rto >= rtt && exact.rto < rtt + 1000, "{}", exact.rto);
    }

    /// The receive window caps the flight whatever cwnd allows (ns-2
    /// TcpAgent::window(): min(cwnd_, window_)): cwnd 20, rx_window 5 → 5
    /// segments out; each ACK of one segment lets exactly one more go.
    #[test]
    fn rx_window_caps_the_flight() {
        let mut s = sender(r#"{"cc": "reno", "init_cwnd": 20, "rx_window": 5}"#);
        s.open(0);
        s.on_synack(10, 0);
        assert_eq!(send_all(&mut s, 20).len(), 5);
        s.on_ack(30, MSS, (0, 0), false, 20);
        assert!(s.w.cwnd >= 20.0);
        assert_eq!(send_all(&mut s, 30).len(), 1);
    }
}
