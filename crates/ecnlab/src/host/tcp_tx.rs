//! TCP sender: handshake, sliding window, fast retransmit with a SACK
//! scoreboard (RFC 6675 style pipe), RTO per RFC 6298 with min/initial/max
//! and exponential backoff. Sequence numbers count payload bytes from 0;
//! the SYN takes no sequence space. cwnd and ssthresh are in segments.
//! pFabric's sender replaces parts of this (see `pfabric.rs`), entering
//! through the few places that test `pf.on`; Linux's RTO estimator and PRR
//! (`rto_linux.rs`, `prr.rs`, glued in `linux.rs`) and RACK-TLP
//! (`tlp.rs`, `rack.rs`) through the few that test `lx` or their keys.
//! LSO's view of the window is in `lso.rs`.

use super::cc::{AckInfo, Cc, Window};
use super::pfabric::PfabricTx;
use super::sack_blocks::{More, NO_MORE};
use crate::config::TransportCfg;
use crate::units::Time;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxState {
    Closed,
    SynSent,
    Established,
}

/// One segment to put on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub seq: u64,
    pub len: u32,
    pub retransmit: bool,
    pub cwr: bool,
}

/// What every connection of a run shares: the transport's constants, kept
/// once rather than per flow because the per-flow state is read for every
/// packet and its size shows in the engine's speed (see `world::FlowLog`).
#[derive(Debug)]
pub struct TcpParams {
    pub(super) mss: u32,
    pub(super) init_cwnd: f64,
    /// Duplicate ACKs that start fast retransmit (3; never for pFabric).
    dupthresh: u32,
    /// The flight's ceiling in bytes: the receive window (rx_window full
    /// segments), or no limit.
    pub(super) flight_cap: u64,
    pub(super) min_rto: Time,
    max_rto: Time,
    /// Clock granularity G (0: none): RTOs are whole ticks of it.
    tick: Time,
    pub(super) slow_start_restart: bool,
    /// Linux's RTO estimator (`transport.linux_rto`).
    pub(super) linux_rto: bool,
    /// PRR and its reduction bound (`transport.prr`).
    pub(super) prr: super::prr::PrrKind,
    /// Linux's delayed-ACK rules at the receivers (`transport.linux_delayed_ack`).
    pub linux_delayed_ack: bool,
    /// Lost-retransmission detection (`transport.lost_retransmit`).
    lost_retransmit: bool,
    /// The SACK scoreboard kept across an RTO (`transport.rto_keeps_sack`).
    rto_keeps_sack: bool,
    /// The timer restarted at a retransmission of snd_una (`transport.rto_rearm_head`).
    rto_rearm_head: bool,
    /// The tail loss probe (`transport.tlp`), and the PTO's additions to
    /// 2·srtt with more than one segment out and with one (`tlp.rs`).
    pub(super) tlp: bool,
    pub(super) tlp_times: (Time, Time),
    /// RACK's time-based loss detection (`transport.rack`, `rack.rs`).
    pub(super) rack: bool,
    /// CUBIC's HyStart (`transport.hystart` with cc = "cubic", `hystart.rs`).
    hystart: bool,
    /// Linux's window accounting (`transport.linux_cwnd`, `linux_cwnd.rs`).
    pub(super) linux_cwnd: bool,
    /// Whether ACKs count the bytes they newly deliver (`linux_cwnd`;
    /// `rto_keeps_sack`, whose kept SACKed data a cumulative ACK must not
    /// count again; `cubic_linux`, whose arithmetic takes that count).
    count_delivered: bool,
}

impl TcpParams {
    pub fn new(t: &TransportCfg) -> Arc<TcpParams> {
        let pfabric = super::cc::decl(t.cc.as_str()).is_some_and(|d| d.pfabric);
        let tlp = super::tlp::TlpParams::of(t);
        let linux_cwnd = super::linux_cwnd::LinuxCwndParams::of(t).linux_cwnd;
        let rto_keeps_sack = super::rto_sack::RtoSackParams::of(t).rto_keeps_sack;
        Arc::new(TcpParams {
            mss: t.mss,
            init_cwnd: t.init_cwnd as f64,
            dupthresh: if pfabric { u32::MAX } else { 3 },
            flight_cap: t.rx_window.map(|w| w as u64 * t.mss as u64).unwrap_or(u64::MAX),
            min_rto: t.min_rto.0,
            // pFabric's RTO is fixed (MinTCP returns minrto_ whatever the
            // RTT): clamping to [min_rto, min_rto] also stops the backoff.
            max_rto: if pfabric { t.min_rto.0 } else { t.max_rto.0 },
            tick: t.clock_granularity.map(|g| g.0).unwrap_or(0),
            slow_start_restart: t.slow_start_restart,
            linux_rto: super::rto_linux::LinuxRtoParams::of(t).linux_rto,
            prr: super::prr::PrrParams::of(t).prr,
            linux_delayed_ack: super::delack_linux::LinuxDelackParams::of(t).linux_delayed_ack,
            lost_retransmit: super::lost_rtx::LostRtxParams::of(t).lost_retransmit,
            rto_keeps_sack,
            rto_rearm_head: super::rto_rearm::RtoRearmParams::of(t).rto_rearm_head,
            tlp: tlp.tlp,
            tlp_times: (tlp.tlp_slack.0, tlp.tlp_delack.0),
            rack: super::rack::RackParams::of(t).rack,
            hystart: super::hystart::active(t),
            linux_cwnd,
            count_delivered: linux_cwnd || rto_keeps_sack || super::cc::cubic_linux::active(t),
        })
    }

    /// Whether connections need `LinuxTx` side state.
    fn linux_state(&self) -> bool {
        self.linux_rto
            || self.prr != super::prr::PrrKind::Off
            || self.lost_retransmit
            || self.tlp
            || self.rack
            || self.hystart
    }
}

pub struct TcpSender {
    pub state: TxState,
    pub una: u64,
    pub nxt: u64,
    /// Highest sequence ever sent (snd_max).
    pub max_sent: u64,
    /// The application has handed over bytes [0, limit).
    pub limit: u64,
    pub w: Window,
    pub cc: Cc,
    /// The run's constants, shared by every connection.
    pub(super) p: Arc<TcpParams>,
    dupacks: u32,
    pub in_recovery: bool,
    /// Fast recovery ends when snd_una reaches this; after an RTO, no fast
    /// retransmit starts below it either (RFC 6582 §3.2 step 1).
    pub(super) recover: u64,
    /// The first retransmission of a recovery goes out whatever the pipe
    /// (RFC 6675 §5 step 4.3).
    rtx_first: bool,
    /// SACKed ranges above una, sorted and disjoint.
    pub(super) sacked: Vec<(u64, u64)>,
    /// Next hole byte to retransmit in recovery.
    pub(super) rtx_next: u64,
    cwr_pending: bool,
    /// Largest flight (bytes) since snd_una passed `usage_end`: whether the
    /// window was in use is judged on this (Linux max_packets_out).
    max_flight: u64,
    usage_end: u64,
    pub(super) srtt: f64,
    pub(super) rttvar: f64,
    pub rto: Time,
    /// Retransmission timer deadline; 0 = not armed.
    pub rto_deadline: Time,
    pub(super) last_send: Time,
    pub timeouts: u32,
    pub retransmits: u32,
    /// pFabric's sender state; `pf.on` only with cc = "pfabric".
    pub pf: PfabricTx,
    /// Linux's RTO estimator and PRR state (`linux.rs`), boxed to keep
    /// `Flow` small; None unless `linux_rto` or `prr` is on.
    pub(super) lx: Option<Box<super::linux::LinuxTx>>,
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
            state: TxState::Closed,
            una: 0,
            nxt: 0,
            max_sent: 0,
            limit: 0,
            w: Window::new(t.init_cwnd as f64, t),
            cc: Cc::new(t),
            p: Arc::clone(p),
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            rtx_first: false,
            sacked: Vec::new(),
            rtx_next: 0,
            cwr_pending: false,
            max_flight: 0,
            usage_end: 0,
            srtt: 0.0,
            rttvar: 0.0,
            rto: t.init_rto(),
            rto_deadline: 0,
            last_send: 0,
            timeouts: 0,
            retransmits: 0,
            pf: PfabricTx::new(super::cc::decl(t.cc.as_str()).is_some_and(|d| d.pfabric)),
            lx: p.linux_state().then(Box::default),
        }
    }

    /// Start the handshake: the caller sends a SYN.
    pub fn open(&mut self, now: Time) {
        self.state = TxState::SynSent;
        self.rto_deadline = now + self.rto;
    }

    pub fn on_synack(&mut self, now: Time, ts_echo: Time) {
        if self.state != TxState::SynSent {
            return;
        }
        self.state = TxState::Established;
        self.rtt_sample(now.saturating_sub(ts_echo));
        self.rto_deadline = 0;
        self.last_send = now;
    }

    /// A persistent connection opened before its first flow (the MQ-ECN
    /// authors' warm-up): established now, with fresh state.
    pub fn open_established(&mut self, now: Time) {
        self.state = TxState::Established;
        self.last_send = now;
    }

    #[inline]
    pub(super) fn rtt_sample(&mut self, r: Time) {
        if self.p.linux_rto {
            return self.linux_rtt_sample(r);
        }
        let r = r as f64;
        if self.srtt == 0.0 {
            self.srtt = r;
            self.rttvar = r / 2.0;
        } else {
            self.rttvar = 0.75 * self.rttvar + 0.25 * (self.srtt - r).abs();
            self.srtt = 0.875 * self.srtt + 0.125 * r;
        }
        let rto = if self.p.tick == 0 { (self.srtt + 4.0 * self.rttvar) as Time } else { self.rto_in_ticks() };
        self.rto = rto.clamp(self.p.min_rto, self.p.max_rto);
    }

    /// Linux's estimator (`rto_linux.rs`): RTO = srtt + max(4·mdev peak,
    /// rto_min); `rttvar` holds that second term.
    #[cold]
    #[inline(never)]
    fn linux_rtt_sample(&mut self, r: Time) {
        let (una, nxt, min_rto) = (self.una, self.nxt, self.p.min_rto as f64);
        let lx = self.lx.as_deref_mut().expect("linux_rto keeps its state in LinuxTx");
        let rto = lx.rtt.sample(&mut self.srtt, r as f64, una, nxt, min_rto) as Time;
        self.rttvar = lx.rtt.var;
        let rto = if self.p.tick == 0 { rto } else { rto.div_ceil(self.p.tick) * self.p.tick };
        self.rto = rto.clamp(self.p.min_rto, self.p.max_rto);
    }

    /// RFC 6298 §2.3 with a clock of granularity G: srtt + max(G,
    /// 4·rttvar), rounded up to whole ticks (ns-2 keeps its RTO in ticks).
    #[cold]
    #[inline(never)]
    fn rto_in_ticks(&self) -> Time {
        let rto = (self.srtt + (4.0 * self.rttvar).max(self.p.tick as f64)) as Time;
        rto.div_ceil(self.p.tick) * self.p.tick
    }

    pub fn srtt(&self) -> Time {
        self.srtt as Time
    }

    #[inline]
    pub(super) fn flight(&self) -> u64 {
        self.max_sent - self.una
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
        if self.state != TxState::Established {
            return false;
        }
        if self.pf.on {
            self.pf.heard_from_peer();
        }
        if self.p.tlp {
            self.tlp_ack(ack, sack); // `tlp.rs`
        }
        let progressed = ack > self.una;
        // Was the window in use over the last window of data (Linux
        // tcp_is_cwnd_limited): in slow start half of it suffices, in
        // congestion avoidance all but a segment.
        let cwnd_bytes = self.w.cwnd * self.p.mss as f64;
        let cwnd_limited = if self.w.cwnd < self.w.ssthresh {
            2.0 * self.max_flight as f64 >= cwnd_bytes
        } else {
            (self.max_flight + self.p.mss as u64) as f64 >= cwnd_bytes
        };
        if ack > self.usage_end {
            self.usage_end = self.max_sent;
            self.max_flight = self.nxt.saturating_sub(ack);
        }
        if progressed {
            let acked = ack - self.una;
            let before = if self.p.count_delivered { self.delivered_before(ack) } else { (0, 0) };
            let mut prr_before = self.prr_sacked_before();
            self.una = ack;
            if prr_before.is_some() && !self.in_recovery && self.prr_cwr_done() {
                prr_before = None;
            }
            self.nxt = self.nxt.max(ack);
            self.max_sent = self.max_sent.max(ack);
            self.dupacks = 0;
            let rtt = now.saturating_sub(ts_echo);
            self.rtt_sample(rtt);
            self.add_sacks(sack, more);
            self.trim_sacks();
            let delivered = if self.p.count_delivered { self.newly_delivered(before) } else { acked };
            if self.p.hystart {
                self.hystart_ack(now, rtt); // `hystart.rs`
            }
            let (una, snd_max, mss, srtt) = (self.una, self.max_sent, self.p.mss, self.srtt as Time);
            let grown = if self.p.linux_cwnd || self.p.rto_keeps_sack { delivered } else { acked };
            let info = AckInfo { acked: grown, delivered, ece, una, snd_max, mss, cwnd_limited, now, srtt, rtt };
            let prior = self.w.cwnd;
            if self.in_recovery && self.una >= self.recover {
                self.in_recovery = false;
                self.w.cwnd = self.w.ssthresh;
                self.cc.observe(info);
            } else if self.in_recovery {
                self.rtx_next = self.rtx_next.max(self.una);
                self.cc.observe(info);
                if self.p.lost_retransmit {
                    self.lost_rtx_una_moved();
                    self.lost_rtx_check();
                }
                if let Some(before) = prr_before {
                    self.prr_ack(acked, before, true);
                }
            } else if self.cc.on_ack(&mut self.w, info) {
                self.cwr_pending = true;
                if self.p.prr != super::prr::PrrKind::Off {
                    self.prr_ecn_cut(prior);
                    self.prr_ack(acked, self.sacked_bytes(), true);
                }
            } else if let Some(before) = prr_before {
                self.prr_ack(acked, before, true);
            }
            self.rto_deadline = if self.una < self.max_sent { now + self.rto } else { 0 };
        } else if ack == self.una && self.flight() > 0 {
            let prr_before = self.prr_sacked_before();
            let sacked_before = if self.lx.is_some() { self.sacked_bytes() } else { 0 };
            self.add_sacks(sack, more);
            self.dupacks += 1;
            let (una, snd_max, mss, srtt) = (self.una, self.max_sent, self.p.mss, self.srtt as Time);
            let info = AckInfo { acked: 0, delivered: 0, ece, una, snd_max, mss, cwnd_limited, now, srtt, rtt: 0 };
            let prior = self.w.cwnd;
            // A SACK of a tail loss probe starts recovery at once (`tlp.rs`).
            let lost = self.dupacks >= self.p.dupthresh || self.p.tlp && self.tlp_probe_sacked();
            if !self.in_recovery && lost && self.una >= self.recover {
                self.enter_recovery();
                self.cc.observe(info);
                if self.p.prr != super::prr::PrrKind::Off {
                    self.prr_ack(0, sacked_before, false);
                }
            } else if self.in_recovery {
                self.cc.observe(info);
                if self.p.lost_retransmit {
                    self.lost_rtx_check();
                }
                if let Some(before) = prr_before {
                    self.prr_ack(0, before, false);
                }
            } else if self.cc.on_ack(&mut self.w, info) {
                self.cwr_pending = true;
                if self.p.prr != super::prr::PrrKind::Off {
                    self.prr_ecn_cut(prior);
                    self.prr_ack(0, sacked_before, false);
                }
            } else if let Some(before) = prr_before {
                self.prr_ack(0, before, false);
            }
        }
        if self.p.rack {
            self.rack_after_ack(now, ts_echo); // `rack.rs`
        }
        if self.p.tlp {
            self.tlp_after_ack(now, progressed);
        }
        progressed
    }

    pub(super) fn enter_recovery(&mut self) {
        if self.p.lost_retransmit {
            self.lost_rtx_reset();
        }
        if self.p.tlp {
            self.tlp_reset();
        }
        if self.p.prr == super::prr::PrrKind::Off {
            let flight_segs = self.loss_flight_segs();
            self.w.ssthresh = self.cc.loss_ssthresh(&self.w, flight_segs);
            self.w.cwnd = self.w.ssthresh;
        } else if !self.prr_continue_into_recovery() {
            // PRR (`linux.rs`): ssthresh now, cwnd brought down ACK by ACK.
            let prior = self.w.cwnd;
            let flight_segs = self.loss_flight_segs();
            self.w.ssthresh = self.cc.loss_ssthresh(&self.w, flight_segs);
            self.prr_start(prior, false);
        } else if let Some(s) = self.cc.recovery_in_cwr(&self.w) {
            self.w.ssthresh = s;
        }
        self.in_recovery = true;
        self.recover = self.max_sent;
        self.rtx_next = self.una;
        self.rtx_first = true;
        self.after_loss();
    }

    /// Any loss response: no ECN cut for the data already sent, and (with
    /// ECN) CWR on the next new data so the receiver stops echoing ECE for
    /// congestion already answered (RFC 3168 §6.1.2).
    pub(super) fn after_loss(&mut self) {
        self.cc.on_loss(self.max_sent);
        if self.cc.echo_mode() != super::cc::EchoMode::None {
            self.cwr_pending = true;
        }
    }

    /// The retransmission timer fired: collapse to one segment and go back
    /// to snd_una (RFC 5681 §3.1, RFC 6298 §5).
    pub fn on_timeout(&mut self, now: Time) -> bool {
        match self.state {
            TxState::SynSent => {
                self.timeouts += 1;
                self.rto = (self.rto * 2).min(self.p.max_rto);
                self.rto_deadline = now + self.rto;
                true // resend the SYN
            }
            TxState::Established if self.una < self.max_sent && self.pf.on => self.pfabric_timeout(now),
            TxState::Established if self.una < self.max_sent => {
                self.timeouts += 1;
                // ssthresh answers a loss once (RFC 5681 §3.1): an RTO
                // during fast recovery, or one repeated before snd_una
                // passes the last RTO's recovery point, keeps the ssthresh
                // already set (Linux tcp_enter_loss does the same). Taking
                // FlightSize/2 there would count the SACKed data above an
                // old hole, often hundreds of segments, and send the
                // go-back-N retransmission into a slow start that overruns
                // the buffer it was lost in.
                if !self.in_recovery && self.una >= self.recover {
                    let flight_segs = self.loss_flight_segs();
                    self.w.ssthresh = self.cc.loss_ssthresh(&self.w, flight_segs);
                }
                self.cc.on_timeout();
                if self.p.hystart {
                    self.hystart_reset(now);
                }
                self.prr_timeout();
                self.lost_rtx_reset();
                self.tlp_reset();
                self.rack_reset();
                self.w.cwnd = 1.0;
                self.in_recovery = false;
                self.dupacks = 0;
                if !self.p.rto_keeps_sack {
                    self.sacked.clear(); // go back N (`rto_sack.rs`)
                }
                self.nxt = self.una;
                self.recover = self.max_sent;
                self.after_loss();
                self.rto = (self.rto * 2).min(self.p.max_rto);
                self.rto_deadline = now + self.rto;
                false
            }
            _ => {
                self.rto_deadline = 0;
                false
            }
        }
    }

    /// Next segment the window allows, if any; the caller sends it.
    pub fn next_segment(&mut self, now: Time) -> Option<Segment> {
        if self.state != TxState::Established {
            return None;
        }
        let mss = self.p.mss as u64;
        let cwnd_bytes = ((self.w.cwnd * mss as f64) as u64).min(self.p.flight_cap);
        let seg = if self.in_recovery {
            // A lost retransmission of the first hole goes again at once
            // (`lost_rtx.rs`).
            let resend = if self.lx.is_some() { self.lost_rtx_resend() } else { None };
            if let Some(g) = resend {
                g
            } else {
                let pipe = self.pipe();
                if pipe + mss > cwnd_bytes.max(mss) && !self.rtx_first {
                    return None;
                }
                self.rtx_first = false;
                match self.next_hole() {
                    Some((lo, len)) => {
                        self.rtx_next = lo + len as u64;
                        if lo == self.una && self.p.lost_retransmit {
                            self.lost_rtx_mark();
                        }
                        Segment { seq: lo, len, retransmit: true, cwr: false }
                    }
                    None => self.new_data()?,
                }
            }
        } else if self.pf.on {
            self.pfabric_segment(cwnd_bytes)?
        } else if let Some(g) = self.tlp_probe() {
            g // the tail loss probe, whatever cwnd (`tlp.rs`)
        } else {
            // Going back after an RTO with the scoreboard kept (`rto_sack.rs`):
            // SACKed data is not in flight.
            let back = self.p.rto_keeps_sack && self.una < self.recover;
            let in_flight = if back { self.flight_less_sacked() } else { self.nxt - self.una };
            if in_flight > 0 && in_flight + mss > cwnd_bytes.max(mss) {
                return None;
            }
            if self.p.slow_start_restart && self.una == self.max_sent && now.saturating_sub(self.last_send) > self.rto {
                self.w.cwnd = self.w.cwnd.min(self.p.init_cwnd);
            }
            self.new_data()?
        };
        let mut seg = seg;
        if seg.retransmit {
            self.retransmits += 1;
            if self.p.rto_rearm_head && self.in_recovery && seg.seq == self.una {
                self.rto_deadline = now + self.rto; // `rto_rearm.rs`
            }
        }
        if self.lx.is_some() {
            self.prr_sent(seg.len);
        }
        if self.cwr_pending && !seg.retransmit {
            seg.cwr = true;
            self.cwr_pending = false;
        }
        self.last_send = now;
        self.max_flight = self.max_flight.max(self.nxt - self.una);
        if self.rto_deadline == 0 {
            self.rto_deadline = now + self.rto;
        }
        if self.p.tlp && !seg.retransmit {
            self.tlp_after_send(now);
        }
        Some(seg)
    }

    pub(super) fn new_data(&mut self) -> Option<Segment> {
        if self.p.rto_keeps_sack {
            self.skip_sacked();
        }
        if self.nxt >= self.limit {
            return None;
        }
        let len = (self.limit - self.nxt).min(self.p.mss as u64) as u32;
        let seg = Segment { seq: self.nxt, len, retransmit: self.nxt < self.max_sent, cwr: false };
        self.nxt += len as u64;
        self.max_sent = self.max_sent.max(self.nxt);
        Some(seg)
    }

    /// Everything handed over so far has been acknowledged.
    pub fn drained(&self) -> bool {
        self.una >= self.limit
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
