//! The applications: what makes flows send, and the flows themselves.
//! Long-lived and sized flows (`[[flows]]`, serial chains among them),
//! incast groups and their rounds, workload arrivals (one flow each, or
//! flows taking turns on per-pair persistent connections), rate-limited
//! writers and pings. A flow is one TCP connection's state at both ends; the
//! hosts' stacks (`hosts.rs`) drive it, the applications open and feed it.

use super::World;
use crate::config::{Config, ConfigError, FlowSize, GapKind, TransportCfg};
use crate::engine::Event;
use crate::host::apps::incast::Incast;
use crate::host::apps::paced::Paced;
use crate::host::apps::persistent::{Assigned, PairConnections};
use crate::host::cc::EchoMode;
use crate::host::tcp_rx::TcpReceiver;
use crate::host::tcp_tx::{TcpParams, TcpSender};
use crate::network::topology::Network;
use crate::packet::{Kind, Packet};
use crate::switch::classifier::StageClasses;
use crate::units::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    Long,
    Sized,
    Incast,
}

pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub service: u8,
    /// The queue of its untagged packets (SYN, ACKs): its service, or with
    /// stage classes the small class's queue for its id.
    pub(super) ctrl_service: u8,
    pub kind: FlowKind,
    /// Its bytes, or UNSIZED (a u64 sentinel, not an Option, to keep
    /// `Flow` small: see `FlowLog`); read through `size()`.
    pub(super) size: u64,
    /// When it finished, or UNFINISHED; read through `finish()`.
    pub(super) finish: Time,
    pub tx: TcpSender,
    pub rx: TcpReceiver,
    pub(super) rto_event: Time,
    pub(super) delack_event: Time,
    pub(super) last_data_ts: Time,
    /// Data bytes waiting in the sender's NIC queue (TCP small queues).
    pub(super) nic_bytes: u64,
    pub(super) nic_blocked: bool,
    /// Highest data byte received so far, and first transmissions that
    /// arrived below it (reordered by the network).
    pub(super) rx_high: u64,
    /// Its incast group, or NO_GROUP.
    pub(super) incast: u32,
}

/// What a flow's packets seldom touch, kept apart so that `Flow`, read for
/// every packet, stays small: padding `Flow` by 56 bytes (448 to 504) cost
/// the MQ-ECN benchmark 2.2% of its wall time. For the same reason the
/// transport's constants live once per run (`TcpParams`) and `Flow` holds
/// its size and finish time as integers with sentinels: 384 bytes.
pub struct FlowLog {
    pub start: Time,
    pub stop: Option<Time>,
    pub opened: Option<Time>,
    pub reordered: u32,
    /// Data packets that reached the receiver when it already held every
    /// byte of them: retransmissions whose original (or an earlier copy)
    /// was delivered after all.
    pub spurious: u32,
    pub drops: u32,
}

// Six cache lines; a test of the engine's speed more than of correctness
// (see `FlowLog`), so a change that grows it should be measured.
const _: () = assert!(std::mem::size_of::<Flow>() == 384);

impl Flow {
    /// Its incast group, if any (`incast` is a u32 to keep `Flow` small).
    #[inline]
    pub(super) fn incast_group(&self) -> Option<u32> {
        (self.incast != NO_GROUP).then_some(self.incast)
    }

    /// Its size in bytes; None for a long-lived flow.
    #[inline]
    pub fn size(&self) -> Option<u64> {
        (self.size != UNSIZED).then_some(self.size)
    }

    /// When its last byte arrived (or, with `run.fct_end = "sender"`, was
    /// acknowledged); None while it runs.
    #[inline]
    pub fn finish(&self) -> Option<Time> {
        (self.finish != UNFINISHED).then_some(self.finish)
    }
}

impl FlowLog {
    fn new(start: Time, stop: Option<Time>) -> FlowLog {
        FlowLog { start, stop, opened: None, reordered: 0, spurious: 0, drops: 0 }
    }
}

pub(super) struct PingStream {
    pub(super) src: u32,
    dst: u32,
    service: u8,
    interval: Time,
    size: u32,
    /// Echo requests sent so far: the next one's sequence number is this
    /// plus one (ping(8) numbers from 1).
    sent: u64,
}

/// No flow (the end of a serial chain).
const NO_FLOW: u32 = u32::MAX;
/// A flow in no incast group.
const NO_GROUP: u32 = u32::MAX;
/// The size of a long-lived flow.
pub(super) const UNSIZED: u64 = u64::MAX;
/// The finish time of a flow still running.
pub(super) const UNFINISHED: Time = Time::MAX;
/// The start of a flow that waits for another to finish.
const NOT_YET: Time = Time::MAX;

pub struct Apps {
    pub flows: Vec<Flow>,
    /// Per flow, what its packets seldom touch.
    pub logs: Vec<FlowLog>,
    pub(super) pings: Vec<PingStream>,
    pub(super) incasts: Vec<Incast>,
    /// Workload flows are flows[workload.0..workload.1], in start order;
    /// each one's start schedules the next.
    pub(super) workload: (usize, usize),
    /// For flows of a `serial` entry, the flow that starts when this one's
    /// data is all acknowledged (NO_FLOW: none) and the entry's index in
    /// `cfg.flows` (its pause); empty when no entry is serial, so other
    /// runs never look.
    pub(super) serial_next: Vec<(u32, u32)>,
    /// Per flow, the write pace of a rate-limited application (`[[flows]]
    /// rate`, the workload's rate-limited share); empty when no flow is.
    pub(super) paced: Vec<Option<Paced>>,
    /// `workload.connections = "per-pair"`: the pairs' persistent
    /// connections (host/apps/persistent.rs); None with a connection per flow.
    pub(super) conns: Option<PairConnections>,
    /// `run.fct_end = "sender"`: a sized flow finishes when its last byte
    /// is acknowledged, not when it arrives.
    pub(super) fct_at_sender: bool,
    /// Sized flows not yet finished; the run ends when none are left and
    /// nothing open-ended (long-lived flows, pings, incast) runs.
    pub(super) unfinished: usize,
    pub(super) open_ended: bool,
}

impl Apps {
    /// The flows of `[[flows]]`, `[[incast]]` and `[workload]`, in that
    /// order (a flow's id is its index), and the pings. `echo`: the
    /// congestion control's ECN echo, for the receivers; `classes`:
    /// ML-ECN's stage classes, which pick the queue of untagged packets.
    pub(super) fn new(
        cfg: &Config,
        net: &Network,
        echo: EchoMode,
        classes: Option<&StageClasses>,
    ) -> Result<Apps, ConfigError> {
        let t = &cfg.transport;
        let params = TcpParams::new(t);
        // The receiver's own option (`host/delack_linux.rs`), once per run.
        let linux_delack = crate::host::delack_linux::LinuxDelackParams::of(t).linux_delayed_ack;
        let mut flows = Vec::new();
        let mut logs = Vec::new();
        // A flow's transport: [transport], or a [[flows]] entry's own
        // congestion control (its echo with it).
        let new_flow_on =
            |t: &TransportCfg, echo: EchoMode, src: u32, dst: u32, service: u32, kind, size: Option<u64>| Flow {
                src,
                dst,
                service: service as u8,
                ctrl_service: service as u8,
                kind,
                size: size.unwrap_or(UNSIZED),
                finish: UNFINISHED,
                tx: TcpSender::with_params(t, &params),
                rx: TcpReceiver::for_transport(echo, t, linux_delack),
                rto_event: 0,
                delack_event: 0,
                last_data_ts: 0,
                nic_bytes: 0,
                nic_blocked: false,
                rx_high: 0,
                incast: NO_GROUP,
            };
        let new_flow = |src: u32, dst: u32, service: u32, kind, size: Option<u64>| {
            new_flow_on(t, echo, src, dst, service, kind, size)
        };
        let mut serial_next = Vec::new();
        let mut paced = Vec::new();
        let mut pace = |flows: &Vec<Flow>, rate: Option<u64>| {
            if let Some(r) = rate {
                paced.resize(flows.len() + 1, None);
                paced[flows.len()] = Some(Paced::new(r, t.mss));
            }
        };
        for (entry, f) in cfg.flows.iter().enumerate() {
            let own = (f.cc.is_some() || f.ect1.is_some()).then(|| crate::declarations::registry::flow_transport(t, f));
            let own_echo = own.as_ref().map(|ft| crate::host::cc::decl(ft.cc.as_str()).expect("a checked cc").echo);
            for i in 0..f.count {
                let (kind, size) = match f.size {
                    FlowSize::Infinite => (FlowKind::Long, None),
                    FlowSize::Bytes(b) => (FlowKind::Sized, Some(b)),
                };
                // A serial flow after the first starts when its predecessor
                // is done (`serial_done`), never from the initial schedule.
                let start = if f.serial && i > 0 { NOT_YET } else { f.start.0 };
                if f.serial && i + 1 < f.count {
                    serial_next.resize(flows.len() + 1, (NO_FLOW, 0));
                    serial_next[flows.len()] = (flows.len() as u32 + 1, entry as u32);
                }
                pace(&flows, f.rate.map(|r| r.0));
                flows.push(match (&own, own_echo) {
                    (Some(ft), Some(e)) => new_flow_on(ft, e, f.src, f.dst, f.service, kind, size),
                    _ => new_flow(f.src, f.dst, f.service, kind, size),
                });
                logs.push(FlowLog::new(start, f.stop.map(|s| s.0)));
            }
        }
        let mut incasts = Vec::new();
        for (g, c) in cfg.incast.iter().enumerate() {
            let senders = cfg.incast_senders(c);
            let mut ids = Vec::new();
            for &s in &senders {
                ids.push(flows.len() as u32);
                let mut f = new_flow(s, c.receiver, c.service, FlowKind::Incast, None);
                f.incast = g as u32;
                flows.push(f);
                logs.push(FlowLog::new(c.start.0, None));
            }
            let one_way = senders.iter().map(|&s| net.base_one_way(c.receiver, s, t.header as u64)).collect();
            let rng = crate::rng::Rng::stream(cfg.run.seed, 0x1CA5_7000 + g as u64);
            incasts.push(Incast::new(ids, one_way, c.block.0, c.rounds, c.request_gap.0, c.response_jitter.0, rng));
        }
        let w0 = flows.len();
        if let Some(w) = &cfg.workload {
            let rates: Vec<u64> = (0..net.hosts).map(|h| cfg.topology.host_rate(h)).collect();
            let arrivals = match w.arrivals {
                crate::config::Arrivals::Poisson => {
                    crate::traffic::workload::poisson(w, &rates, t.mss, t.header, cfg.run.seed)
                }
                crate::config::Arrivals::Ns2 => crate::traffic::ns2_arrivals::arrivals(w, &rates, t.mss),
            }
            .map_err(|m| ConfigError(format!("workload: {m}")))?;
            for a in arrivals {
                pace(&flows, a.rate);
                flows.push(new_flow(a.src, a.dst, a.service, FlowKind::Sized, Some(a.size)));
                logs.push(FlowLog::new(a.start, None));
            }
        }
        let workload = (w0, flows.len());
        let flows_len = flows.len();
        let unfinished = flows.iter().filter(|f| f.kind == FlowKind::Sized).count();
        let open_ended =
            flows.iter().any(|f| f.kind == FlowKind::Long) || !cfg.ping.is_empty() || !cfg.incast.is_empty();
        if let Some(c) = classes {
            for (i, f) in flows.iter_mut().enumerate() {
                f.ctrl_service = c.queue(0, i as u32) as u8;
            }
        }
        let pings = cfg
            .ping
            .iter()
            .enumerate()
            .map(|(i, p)| PingStream {
                src: p.src,
                dst: p.dst,
                service: classes.map_or(p.service as u8, |c| c.queue(0, i as u32) as u8),
                interval: p.interval.0,
                size: p.size.0 as u32,
                sent: 0,
            })
            .collect();
        Ok(Apps {
            flows,
            logs,
            pings,
            incasts,
            workload,
            serial_next,
            paced,
            conns: cfg
                .workload
                .as_ref()
                .is_some_and(|w| w.connections == crate::config::Connections::PerPair)
                .then(|| PairConnections::new(flows_len, workload)),
            fct_at_sender: cfg.run.fct_end == crate::config::FctEnd::Sender,
            unfinished,
            open_ended,
        })
    }
}

impl World<'_> {
    /// A serial flow whose data is all acknowledged opens the next one.
    pub(super) fn serial_done(&mut self, fid: u32) {
        let f = &self.apps.flows[fid as usize];
        if f.size == UNSIZED || !f.tx.drained() {
            return;
        }
        let Some((next, entry)) =
            self.apps.serial_next.get_mut(fid as usize).map(|n| std::mem::replace(n, (NO_FLOW, 0)))
        else {
            return;
        };
        if next != NO_FLOW {
            let c = &self.cfg.flows[entry as usize];
            let pause = match c.serial_gap_kind {
                GapKind::Fixed => c.serial_gap.0,
                GapKind::Exponential => {
                    // Drawn from a stream of the finished flow's own: the
                    // same pause on either engine, whatever other chains do.
                    let u = crate::rng::Rng::stream(self.cfg.run.seed, 0x005E_41A1 ^ (fid as u64) << 20).uniform();
                    (-(1.0 - u).ln() * c.serial_gap.0 as f64).round() as Time
                }
            };
            let at = self.q.now + pause;
            self.apps.logs[next as usize].start = at;
            self.q.at(at, Event::FlowStart { flow: next });
        }
    }

    pub(super) fn flow_start(&mut self, fid: u32) {
        let now = self.q.now;
        let next = fid as usize + 1;
        if (fid as usize) >= self.apps.workload.0
            && next < self.apps.workload.1
            && self.apps.logs[next].start <= self.end
        {
            self.q.at(self.apps.logs[next].start, Event::FlowStart { flow: next as u32 });
        }
        if self.rdma.is_some() {
            return self.qp_open(fid);
        }
        let f = &mut self.apps.flows[fid as usize];
        f.tx.limit = match f.kind {
            FlowKind::Long => u64::MAX,
            FlowKind::Sized => f.size,
            FlowKind::Incast => 0,
        };
        self.apps.logs[fid as usize].opened = Some(now);
        let on_pair = self.apps.conns.as_ref().is_some_and(|c| c.covers(fid));
        if !on_pair {
            f.tx.open(now);
        }
        if self.is_paced(fid as usize) {
            // A rate-limited application: its first write now, the rest paced.
            self.apps.flows[fid as usize].tx.limit = 0;
            self.app_write(fid);
        }
        if on_pair {
            return self.take_connection(fid);
        }
        self.send_syn(fid);
        self.sync_rto(fid);
    }

    /// Workload flow `fid` starts on one of its pair's persistent
    /// connections: at once on an open one, after a handshake on an extra.
    #[cold]
    #[inline(never)]
    fn take_connection(&mut self, fid: u32) {
        let now = self.q.now;
        let f = &mut self.apps.flows[fid as usize];
        let conns = self.apps.conns.as_mut().expect("per-pair connections");
        match conns.assign(fid, f.src, f.dst) {
            Assigned::Opened { .. } => f.tx.open_established(now),
            Assigned::Reused { state, .. } => f.tx.resume(&state, now),
            Assigned::Extra { .. } => {
                f.tx.open(now);
                self.send_syn(fid);
            }
        }
        self.try_send(fid);
    }

    /// Sized flow `fid` may have all its data acknowledged: with
    /// `fct_end = "sender"` it finishes now, and with per-pair connections
    /// its connection is free for the pair's next flow.
    #[cold]
    #[inline(never)]
    pub(super) fn all_acked(&mut self, fid: u32) {
        let now = self.q.now;
        let f = &mut self.apps.flows[fid as usize];
        if f.size == UNSIZED || f.kind != FlowKind::Sized || f.tx.una < f.size {
            return;
        }
        if self.apps.fct_at_sender && f.finish == UNFINISHED {
            f.finish = now;
            self.apps.unfinished -= 1;
        }
        if let Some(c) = &mut self.apps.conns {
            c.release(fid, f.src, f.dst, f.tx.carried());
        }
    }

    /// Flow `fid` belongs to a rate-limited application.
    pub(super) fn is_paced(&self, fid: usize) -> bool {
        self.apps.paced.get(fid).is_some_and(|p| p.is_some())
    }

    /// A rate-limited application writes its next segment, and schedules
    /// the one after while it has data left (a long-lived stream until
    /// its `stop`).
    pub(super) fn app_write(&mut self, fid: u32) {
        let now = self.q.now;
        let Some(p) = self.apps.paced[fid as usize] else { return };
        if self.apps.logs[fid as usize].stop.is_some_and(|t| now >= t) {
            return;
        }
        let f = &mut self.apps.flows[fid as usize];
        let total = f.size;
        f.tx.limit = p.write(f.tx.limit, total);
        if f.tx.limit < total {
            self.q.at(now + p.every, Event::AppWrite { flow: fid });
        }
        self.try_send(fid);
    }

    pub(super) fn send_syn(&mut self, fid: u32) {
        let f = &self.apps.flows[fid as usize];
        let mut p = Packet::new(Kind::Syn, f.src, f.dst, fid, f.ctrl_service, self.hosts.hdr);
        p.ts = self.q.now;
        self.host_send(p);
    }

    pub(super) fn ping(&mut self, probe: u32) {
        let now = self.q.now;
        let s = &mut self.apps.pings[probe as usize];
        s.sent += 1;
        let mut p = Packet::new(Kind::PingReq, s.src, s.dst, probe, s.service, s.size);
        p.ts = now;
        p.seq = s.sent;
        let next = now + s.interval;
        self.host_send(p);
        if next <= self.end {
            self.q.at(next, Event::Ping { probe });
        }
    }

    /// One of incast group `g`'s connections opened at its sender now:
    /// its receiver counts it (in another part, by a signal).
    pub(super) fn incast_established(&mut self, g: u32) {
        if self.established_here(g) {
            self.count_established(g, self.q.now);
        }
    }

    /// The receiver of incast group `g` counts a connection opened at
    /// `at`; round 1 starts when the last one opened. Nothing has arrived
    /// yet, so no held ACK goes with its requests.
    pub(super) fn count_established(&mut self, g: u32, at: Time) {
        let inc = &mut self.apps.incasts[g as usize];
        inc.established += 1;
        inc.last_established = inc.last_established.max(at);
        if inc.established == inc.flows.len() as u32 {
            let at = inc.last_established;
            self.request_round(g, at);
        }
    }

    /// Incast group `g`'s round ended: its receiver starts the next one
    /// now, with any ACK it was holding back for each connection.
    pub(super) fn start_round(&mut self, g: u32) {
        for i in 0..self.apps.incasts[g as usize].flows.len() {
            let fid = self.apps.incasts[g as usize].flows[i];
            let f = &mut self.apps.flows[fid as usize];
            if let Some(a) = f.rx.flush() {
                let ts = f.last_data_ts;
                self.send_ack(fid, a, ts);
            }
        }
        self.request_round(g, self.q.now);
    }

    /// The receiver of incast group `g` sends a round's requests at `at`:
    /// each reaches its sender after the path's delay (all at once, or
    /// spread by the group's gap and jitter).
    fn request_round(&mut self, g: u32, at: Time) {
        let inc = &mut self.apps.incasts[g as usize];
        inc.round_start = at;
        if !inc.spread() {
            let when = at + inc.req_delay;
            if inc.parts.is_empty() {
                return self.q.at(when, Event::IncastRound { group: g });
            }
            for i in 0..inc.parts.len() {
                let part = self.apps.incasts[g as usize].parts[i];
                self.at_part(part, when, Event::IncastRound { group: g });
            }
            return;
        }
        inc.begin_round();
        for (fid, delay) in inc.request_delays() {
            let src = self.apps.flows[fid as usize].src;
            self.at_node(src, at + delay, Event::IncastRequest { flow: fid });
        }
    }

    /// A spread round's request reaches the sender of flow `fid`: one more
    /// block (its part may not be the receiver's, which keeps the target).
    pub(super) fn incast_request(&mut self, fid: u32) {
        let g = self.apps.flows[fid as usize].incast_group().expect("an incast flow");
        let inc = &self.apps.incasts[g as usize];
        let tx = &mut self.apps.flows[fid as usize].tx;
        tx.limit += inc.block;
        debug_assert!(self.fabric.partitioned || tx.limit == inc.target, "one block a round");
        self.try_send(fid);
    }

    /// A synchronised round starts at the senders (of this part).
    pub(super) fn incast_round(&mut self, g: u32) {
        let target = self.apps.incasts[g as usize].begin_round();
        for i in 0..self.apps.incasts[g as usize].flows.len() {
            let fid = self.apps.incasts[g as usize].flows[i];
            if self.runs_here(self.apps.flows[fid as usize].src) {
                self.apps.flows[fid as usize].tx.limit = target;
                self.try_send(fid);
            }
        }
    }
}
