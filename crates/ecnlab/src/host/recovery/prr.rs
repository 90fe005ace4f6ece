//! Proportional Rate Reduction (RFC 6937), opt-in by `transport.prr`:
//! how much a sender may send on each ACK while its window comes down,
//! in loss recovery and (as Linux does) after an ECN cut.
//!
//! Without it ecnlab sets cwnd to ssthresh at once: with half the flight
//! gone from the window, nothing is sent for half a round trip, then the
//! rest goes at the ACK rate. PRR instead sends, while the pipe is above
//! ssthresh, ssthresh/prior_cwnd of what each ACK reports delivered, so
//! the reduction is spread over the round trip and ends with the pipe at
//! ssthresh (RFC 6937 §3). Once losses have taken the pipe below ssthresh
//! a reduction bound decides how fast it may climb back:
//!
//! - `crb`: no more than was delivered (packet conservation);
//! - `ssrb`: one segment more per ACK, a slow start (RFC 6937's PRR-SSRB);
//! - `linux`: as much as the ACK delivered (or was banked), and the extra
//!   segment only on an ACK that advances snd_una and reports no new loss (Linux tcp_cwnd_reduction
//!   since 5.x; the "safe ACK" of RFC 9937, which obsoletes RFC 6937).
//!
//! As Linux, the reduction is proportional to the cwnd when it started
//! (prior_cwnd; RFC 6937's RecoverFS is the flight then, the same when the
//! window was full), the first ACK always lets one segment go (the fast
//! retransmission), and the sender applies it by setting cwnd = pipe +
//! sndcnt on every ACK. Amounts are in bytes, the proportional share
//! rounded up to whole segments (Linux counts packets).
//!
//! The proportional part is ssthresh/prior_cwnd of what is delivered, so
//! it reduces only while ssthresh is below prior_cwnd: with PRR a loss
//! takes ssthresh from cwnd, as Linux's ssthresh hooks do, not from
//! FlightSize, which counts SACKed data and can exceed cwnd several times
//! (`linux_cwnd.rs`, `loss_flight_segs`).

use super::mechanism::{Mechanism, MechanismDecl, Shared, Traits};
use crate::config::param::section;
use crate::config::values::by_name;
use crate::config::TransportCfg;
use crate::host::snd::{Segment, Snd};
use crate::units::Time;

by_name! {
    /// `transport.prr`: PRR and its reduction bound.
    #[derive(Default)]
    pub enum PrrKind {
        /// cwnd is set to ssthresh at once.
        #[default]
        Off => "off",
        /// PRR with the conservative bound (PRR-CRB).
        Crb => "crb",
        /// PRR with the slow-start bound on every ACK (RFC 6937's PRR-SSRB).
        Ssrb => "ssrb",
        /// PRR as Linux runs it: the slow-start bound on ACKs that advance snd_una without a new
        /// loss, the conservative one otherwise (RFC 9937).
        Linux => "linux",
    }
}

section! {
    /// PRR's key in `[transport]`.
    pub struct PrrParams {
        /// Proportional Rate Reduction for loss recovery and ECN cuts, and its reduction bound:
        /// "off" (cwnd drops to ssthresh at once), "crb", "ssrb" or "linux" (RFC 9937's safe-ACK
        /// rule, Linux's). The `linux` profile sets "linux".
        prr: PrrKind = PrrKind::Off, resolved Given, source "RFC 6937 §3; Linux tcp_cwnd_reduction";
    }
}

/// The mechanism's declaration: its registry line is in `recovery/mod.rs`.
pub const DECL: MechanismDecl = MechanismDecl {
    about: crate::switch::scheme::About {
        params: &[PrrParams::PARAMS],
        ..crate::switch::scheme::About::new(
            "prr",
            "Proportional Rate Reduction, in loss recovery and after ECN cuts (Linux's CWR state), with a choice of reduction bound",
            "RFC 6937 §3; RFC 9937; Linux tcp_cwnd_reduction",
        )
    },
};

impl PrrParams {
    pub fn of(t: &crate::config::TransportCfg) -> PrrParams {
        t.scheme_keys(PrrParams::read).expect("a checked config")
    }
}

/// One reduction's state (RFC 6937 §3's variables; Linux prior_cwnd,
/// prr_delivered, prr_out).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prr {
    /// cwnd when the reduction started, bytes.
    pub prior: u64,
    /// Bytes delivered to the receiver since (cumulatively ACKed or SACKed).
    pub delivered: u64,
    /// Bytes sent since.
    pub out: u64,
}

/// What one ACK tells PRR.
#[derive(Clone, Copy, Debug)]
pub struct PrrAck {
    /// Bytes this ACK newly reports delivered (RFC 6937 DeliveredData).
    pub delivered: u64,
    /// The pipe after the ACK (RFC 6675), bytes.
    pub pipe: u64,
    /// The target: ssthresh in bytes.
    pub ssthresh: u64,
    /// snd_una advanced and no new loss was found (Linux's condition for
    /// the slow-start bound).
    pub safe: bool,
    pub mss: u64,
}

impl Prr {
    pub fn start(prior: u64) -> Prr {
        Prr { prior: prior.max(1), delivered: 0, out: 0 }
    }

    /// Bytes the sender may send on this ACK (RFC 6937 §3 sndcnt); the
    /// sender sets cwnd to pipe + this. An ACK that delivers nothing
    /// changes nothing (Linux returns early): None.
    pub fn on_ack(&mut self, kind: PrrKind, a: PrrAck) -> Option<u64> {
        if a.delivered == 0 {
            return None;
        }
        self.delivered += a.delivered;
        let sndcnt = if a.pipe > a.ssthresh {
            // Proportional part: CEIL(prr_delivered · ssthresh / prior) −
            // prr_out, the ceiling in whole segments as Linux (which counts
            // packets) and the RFC's examples take it.
            let mss = a.mss as u128;
            let due = (self.delivered as u128 * a.ssthresh as u128).div_ceil(self.prior as u128 * mss) * mss;
            (due as u64).saturating_sub(self.out)
        } else {
            let banked = self.delivered.saturating_sub(self.out);
            let limit = match kind {
                PrrKind::Crb | PrrKind::Off => banked,
                PrrKind::Ssrb => banked.max(a.delivered) + a.mss,
                // RFC 9937: what was delivered (or banked), one segment
                // more only on a safe ACK.
                PrrKind::Linux => banked.max(a.delivered) + if a.safe { a.mss } else { 0 },
            };
            (a.ssthresh - a.pipe).min(limit)
        };
        // The fast retransmission goes whatever the numbers say.
        Some(if self.out == 0 { sndcnt.max(a.mss) } else { sndcnt })
    }
}

/// A connection's PRR state: the reduction under way, in loss recovery
/// or in Linux's CWR state after an ECN cut (tcp_init_cwnd_reduction to
/// tcp_end_cwnd_reduction). The CWR state itself is in `Shared`, since
/// TLP's cut and the RTO end it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reduction {
    pub prr: Prr,
}

impl Reduction {
    /// Start a PRR reduction from cwnd `prior` (segments): loss recovery
    /// entered (ssthresh already set), or an ECN cut (`cwr`).
    pub fn start(&mut self, x: &mut Shared, s: &mut Snd, prior: f64, cwr: bool) {
        self.prr = Prr::start((prior * s.p.mss as f64) as u64);
        x.cwr = cwr;
        x.cwr_end = s.max_sent;
        s.w.cwnd = prior;
    }

    /// The ACK in a reduction that moved snd_una by `acked` bytes, with
    /// `sacked_before` SACKed before it: set cwnd = pipe + sndcnt (RFC
    /// 6937 §3; Linux tcp_cwnd_reduction). `safe`: snd_una advanced;
    /// `lost_end`: RACK's mark, for the pipe (`scoreboard.rs`).
    pub fn on_ack(&mut self, s: &mut Snd, kind: PrrKind, lost_end: u64, acked: u64, sacked_before: u64, safe: bool) {
        let mss = s.p.mss as u64;
        let delivered = (acked + s.sacked_bytes()).saturating_sub(sacked_before);
        let pipe = if s.in_recovery { s.pipe(lost_end) } else { s.nxt - s.una };
        let ssthresh = (s.w.ssthresh * mss as f64) as u64;
        let a = PrrAck { delivered, pipe, ssthresh, safe, mss };
        if let Some(sndcnt) = self.prr.on_ack(kind, a) {
            // Half a byte over, so that next_segment's truncation to bytes
            // gives exactly pipe + sndcnt.
            s.w.cwnd = ((pipe + sndcnt) as f64 + 0.5) / mss as f64;
        }
    }
}

impl Mechanism for Reduction {
    type Params = PrrKind;
    const DECL: MechanismDecl = DECL;

    fn params(t: &TransportCfg) -> Option<PrrKind> {
        let kind = PrrParams::of(t).prr;
        (kind != PrrKind::Off).then_some(kind)
    }

    /// PRR's proportional part sends ssthresh/prior_cwnd of what is
    /// delivered, so ssthresh must come from the cwnd it starts from
    /// (`linux_cwnd.rs`).
    fn traits(_: &PrrKind, t: &mut Traits) {
        t.ssthresh_from_cwnd = true;
    }

    /// A reduction (recovery or CWR) is under way: the SACKed bytes
    /// before this ACK, to measure what it delivers.
    #[inline]
    fn reduction_sacked(&self, _: &PrrKind, x: &Shared, s: &Snd) -> Option<u64> {
        (s.in_recovery || x.cwr).then(|| s.sacked_bytes())
    }

    /// In CWR with the cut's window acknowledged (snd_una at `cwr_end`):
    /// the reduction ends with cwnd = ssthresh (Linux
    /// tcp_end_cwnd_reduction).
    fn cwr_done(&mut self, _: &PrrKind, x: &mut Shared, s: &mut Snd) -> bool {
        if x.cwr && s.una >= x.cwr_end {
            x.cwr = false;
            s.w.cwnd = s.w.ssthresh;
            return true;
        }
        false
    }

    fn on_recovery_ack(
        &mut self,
        &kind: &PrrKind,
        x: &mut Shared,
        s: &mut Snd,
        acked: u64,
        una_moved: bool,
        sacked_before: Option<u64>,
    ) {
        if let Some(before) = sacked_before {
            self.on_ack(s, kind, x.lost_end, acked, before, una_moved);
        }
    }

    fn on_reduction_ack(&mut self, &kind: &PrrKind, x: &mut Shared, s: &mut Snd, acked: u64, before: u64, safe: bool) {
        self.on_ack(s, kind, x.lost_end, acked, before, safe);
    }

    /// The congestion control cut cwnd on ECE: the cut is paced over the
    /// round trip instead (Linux's CWR state).
    #[allow(clippy::too_many_arguments)]
    fn on_ecn_cut(
        &mut self,
        &kind: &PrrKind,
        x: &mut Shared,
        s: &mut Snd,
        prior: f64,
        acked: u64,
        before: u64,
        safe: bool,
    ) {
        self.start(x, s, prior, true);
        self.on_ack(s, kind, x.lost_end, acked, before, safe);
    }

    /// Fast recovery starts: ssthresh now, cwnd brought down ACK by ACK;
    /// or, with an ECN reduction under way, Linux carries on with that
    /// one (no second ssthresh).
    fn set_recovery_window(&mut self, _: &PrrKind, x: &mut Shared, s: &mut Snd) -> bool {
        if !std::mem::take(&mut x.cwr) {
            let prior = s.w.cwnd;
            s.w.ssthresh = s.loss_ssthresh(x.run.ssthresh_from_cwnd);
            self.start(x, s, prior, false);
        } else if let Some(v) = s.cc.recovery_in_cwr(&s.w) {
            s.w.ssthresh = v;
        }
        true
    }

    /// PRR's first step, on the ACK (or timer) that started recovery.
    fn after_recovery_start(&mut self, &kind: &PrrKind, x: &mut Shared, s: &mut Snd, sacked_before: u64) {
        self.on_ack(s, kind, x.lost_end, 0, sacked_before, false);
    }

    fn on_timeout(&mut self, _: &PrrKind, x: &mut Shared, _: &Snd, _: Time) {
        x.cwr = false;
    }

    /// A segment sent during a reduction counts in prr_out.
    #[inline]
    fn on_send(&mut self, _: &PrrKind, x: &Shared, s: &mut Snd, _: Time, seg: &Segment) {
        if s.in_recovery || x.cwr {
            self.prr.out += seg.len as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// RFC 6937 §3.1's set-up: cwnd = FlightSize = 20 segments, ssthresh
    /// 10, limited transit before recovery. Every ACK in recovery is a
    /// duplicate SACKing one segment; the pipe the first one leaves is
    /// `pipe0`. Returns, per ACK, (pipe before sending, segments sent).
    fn recovery(kind: PrrKind, pipe0: u64, acks: usize) -> Vec<(u64, u64)> {
        let mut prr = Prr::start(20 * MSS);
        let mut pipe = pipe0 * MSS;
        let mut out = Vec::new();
        for i in 0..acks {
            if i > 0 {
                pipe -= MSS; // the segment this ACK SACKs has left the network
            }
            let a = PrrAck { delivered: MSS, pipe, ssthresh: 10 * MSS, safe: false, mss: MSS };
            let sent = prr.on_ack(kind, a).unwrap() / MSS;
            prr.out += sent * MSS;
            out.push((pipe / MSS, sent));
            pipe += sent * MSS;
        }
        out
    }

    /// One loss (RFC 6937 §3.1, first figure, "PRR"): segment 0 lost, the
    /// ACKs of segments 3..19 arrive in recovery. PRR sends the
    /// retransmission on ack 3 and then one new segment on every second
    /// ACK, ⌈k·10/20⌉ − prr_out: on acks 3, 5, ..., 17; the pipe after
    /// each ACK of 4..19 is the figure's row, 18 18 17 17 ... 12 12 11 10,
    /// ending at ssthresh. (The figure's "sent" row puts its last two sends
    /// on acks 18 and 19, which its own pipe row and sndcnt formula do not
    /// give: at ack 17, ⌈15·10/20⌉ − 7 = 1 with pipe 11 > ssthresh.) Every
    /// reduction bound agrees while the pipe stays above ssthresh.
    #[test]
    fn one_loss_spreads_the_cut_over_the_round_trip() {
        for kind in [PrrKind::Crb, PrrKind::Ssrb, PrrKind::Linux] {
            let r = recovery(kind, 18, 17); // acks 3..=19
            let sent: Vec<u64> = r.iter().map(|x| x.1).collect();
            assert_eq!(sent, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0], "{kind:?}");
            let after: Vec<u64> = r.iter().skip(1).map(|&(p, s)| p + s).collect();
            assert_eq!(after, [18, 18, 17, 17, 16, 16, 15, 15, 14, 14, 13, 13, 12, 12, 11, 10], "{kind:?}");
        }
    }

    /// Fifteen losses (RFC 6937 §3.1, second figure): segments 0..14 lost,
    /// the ACK of segment 17 starts recovery with the pipe at 4, below
    /// ssthresh 10. PRR-SSRB sends 2 per ACK (pipe 4, 5, 6: "2R 2R 2R");
    /// PRR-CRB one per ACK (pipe 4, 4, 4). Linux's bound, on these
    /// duplicate ACKs (no snd_una advance, so not "safe"), sends what each
    /// delivered: the CRB row.
    #[test]
    fn burst_loss_follows_the_reduction_bound() {
        assert_eq!(recovery(PrrKind::Ssrb, 4, 3), [(4, 2), (5, 2), (6, 2)]);
        assert_eq!(recovery(PrrKind::Crb, 4, 3), [(4, 1), (4, 1), (4, 1)]);
        assert_eq!(recovery(PrrKind::Linux, 4, 3), [(4, 1), (4, 1), (4, 1)]);
        // A safe ACK (snd_una advanced, no new loss) earns Linux's extra
        // segment: min(ssthresh − pipe, max(banked, delivered) + MSS) = 2.
        let mut p = Prr::start(20 * MSS);
        p.out = MSS;
        p.delivered = MSS;
        let a = PrrAck { delivered: MSS, pipe: 4 * MSS, ssthresh: 10 * MSS, safe: true, mss: MSS };
        assert_eq!(p.on_ack(PrrKind::Linux, a), Some(2 * MSS));
    }

    /// Nothing delivered, nothing changes (Linux returns early); the first
    /// ACK always releases the fast retransmission.
    #[test]
    fn first_ack_always_retransmits() {
        let mut p = Prr::start(20 * MSS);
        let a = PrrAck { delivered: 0, pipe: 19 * MSS, ssthresh: 10 * MSS, safe: false, mss: MSS };
        assert_eq!(p.on_ack(PrrKind::Linux, a), None);
        // 100 bytes delivered of a 20-segment window: one segment due.
        let a = PrrAck { delivered: 100, ..a };
        assert_eq!(p.on_ack(PrrKind::Linux, a), Some(MSS));
        // Rounded up in whole segments: 2 more delivered → ⌈2.1·10/20⌉ = 2
        // segments due, one of them sent.
        p.out = MSS;
        let a = PrrAck { delivered: 2 * MSS, ..a };
        assert_eq!(p.on_ack(PrrKind::Linux, a), Some(MSS));
    }
}
