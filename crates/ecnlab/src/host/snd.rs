//! The TCP sender's core state (`Snd`): sequence space, window, SACK
//! scoreboard (`scoreboard.rs`), RTT estimate and retransmission timer.
//! Sequence numbers count payload bytes from 0; the SYN takes no sequence
//! space; cwnd and ssthresh are in segments.
//!
//! Everything that decides what to send reads and writes this state: the
//! sender's own rules (`tcp_tx.rs`: the handshake, fast retransmit, the
//! RTO), the loss-recovery mechanisms (`recovery/`), pFabric's sender
//! (`pfabric.rs`) and LSO's view of the window (`nic/lso.rs`). It imports
//! none of them, so each may import it.

use super::cc::{Cc, EchoMode, Window};
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

/// The core's constants, shared by every connection of a run: kept once
/// rather than per flow because the per-flow state is read for every
/// packet and its size shows in the engine's speed (see `world::FlowLog`).
#[derive(Debug)]
pub struct SndParams {
    pub mss: u32,
    pub init_cwnd: f64,
    /// Duplicate ACKs that start fast retransmit (3; never for pFabric).
    pub dupthresh: u32,
    /// The flight's ceiling in bytes: the receive window (rx_window full
    /// segments), or no limit.
    pub flight_cap: u64,
    pub min_rto: Time,
    pub max_rto: Time,
    /// Clock granularity G (0: none): RTOs are whole ticks of it.
    pub tick: Time,
    pub slow_start_restart: bool,
    /// Whether ACKs count the bytes they newly deliver (`Snd::delivered_before`):
    /// the sender decides, from the mechanisms and the congestion control
    /// that take the count.
    pub count_delivered: bool,
}

impl SndParams {
    pub fn new(t: &TransportCfg, pfabric: bool, count_delivered: bool) -> SndParams {
        SndParams {
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
            count_delivered,
        }
    }
}

pub struct Snd {
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
    pub p: Arc<SndParams>,
    pub dupacks: u32,
    pub in_recovery: bool,
    /// Fast recovery ends when snd_una reaches this; after an RTO, no fast
    /// retransmit starts below it either (RFC 6582 §3.2 step 1).
    pub recover: u64,
    /// The first retransmission of a recovery goes out whatever the pipe
    /// (RFC 6675 §5 step 4.3).
    pub rtx_first: bool,
    /// SACKed ranges above una, sorted and disjoint.
    pub sacked: Vec<(u64, u64)>,
    /// Next hole byte to retransmit in recovery.
    pub rtx_next: u64,
    pub cwr_pending: bool,
    /// Largest flight (bytes) since snd_una passed `usage_end`: whether the
    /// window was in use is judged on this (Linux max_packets_out).
    pub max_flight: u64,
    pub usage_end: u64,
    pub srtt: f64,
    pub rttvar: f64,
    pub rto: Time,
    /// Retransmission timer deadline; 0 = not armed.
    pub rto_deadline: Time,
    pub last_send: Time,
    pub timeouts: u32,
    pub retransmits: u32,
}

impl Snd {
    pub fn new(t: &TransportCfg, p: &Arc<SndParams>) -> Snd {
        Snd {
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
        }
    }

    /// RFC 6298's estimator: srtt and rttvar from sample `r`, RTO =
    /// srtt + 4·rttvar (with a clock, `rto_in_ticks`).
    #[inline]
    pub fn rfc6298_sample(&mut self, r: Time) {
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

    /// An RTO another estimator computed (`recovery/rto_linux.rs`): whole
    /// ticks of the clock, within [min_rto, max_rto].
    pub fn set_rto(&mut self, rto: Time) {
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
    pub fn flight(&self) -> u64 {
        self.max_sent - self.una
    }

    /// The flight a loss's ssthresh is taken from, in segments: cwnd
    /// (`from_cwnd`: Linux's ssthresh hooks, `recovery/linux_cwnd.rs`), or
    /// FlightSize (RFC 5681 §3.1).
    #[inline]
    fn loss_flight_segs(&self, from_cwnd: bool) -> f64 {
        if from_cwnd {
            self.w.cwnd
        } else {
            self.flight() as f64 / self.p.mss as f64
        }
    }

    /// The congestion control's ssthresh for a loss (segments; it may
    /// note the loss, as CUBIC notes W_max).
    #[inline]
    pub fn loss_ssthresh(&mut self, from_cwnd: bool) -> f64 {
        let flight_segs = self.loss_flight_segs(from_cwnd);
        self.cc.loss_ssthresh(&self.w, flight_segs)
    }

    /// A loss answered at once: ssthresh as `loss_ssthresh`, cwnd set to it.
    pub fn loss_cut(&mut self, from_cwnd: bool) {
        self.cut_from(self.loss_flight_segs(from_cwnd));
    }

    /// ssthresh from the congestion control for a flight of `flight_segs`
    /// segments, cwnd set to it.
    pub fn cut_from(&mut self, flight_segs: f64) {
        self.w.ssthresh = self.cc.loss_ssthresh(&self.w, flight_segs);
        self.w.cwnd = self.w.ssthresh;
    }

    /// Fast recovery begins (its window already set): it ends when snd_una
    /// reaches today's snd_max, and resends from snd_una.
    pub fn begin_recovery(&mut self) {
        self.in_recovery = true;
        self.recover = self.max_sent;
        self.rtx_next = self.una;
        self.rtx_first = true;
        self.after_loss();
    }

    /// Any loss response: no ECN cut for the data already sent, and (with
    /// ECN) CWR on the next new data so the receiver stops echoing ECE for
    /// congestion already answered (RFC 3168 §6.1.2).
    pub fn after_loss(&mut self) {
        self.cc.on_loss(self.max_sent);
        if self.cc.echo_mode() != EchoMode::None {
            self.cwr_pending = true;
        }
    }

    /// The next new (or, after an RTO, not yet resent) segment at snd_nxt;
    /// `skip_sacked`: past the SACKed data a kept scoreboard shows
    /// (`recovery/rto_sack.rs`).
    pub fn new_data(&mut self, skip_sacked: bool) -> Option<Segment> {
        if skip_sacked {
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

    /// A persistent connection opened before its first flow (the MQ-ECN
    /// authors' warm-up): established now, with fresh state.
    pub fn open_established(&mut self, now: Time) {
        self.state = TxState::Established;
        self.last_send = now;
    }

    /// Everything handed over so far has been acknowledged.
    pub fn drained(&self) -> bool {
        self.una >= self.limit
    }
}
