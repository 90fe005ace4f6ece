//! A built experiment and its event loop: hosts' TCP and applications meet
//! switch ports here. Every handler is a small function of (state, event).

use crate::config::{Config, ConfigError, EcmpMode, FlowSize, GapKind, OneOrList};
use crate::ecmp::{self, Ecmp};
use crate::engine::{Event, EventQueue};
use crate::host::cc::EchoMode;
use crate::host::coalesce::{Arrival, Coalescer};
use crate::host::incast::Incast;
use crate::host::lso::{Lso, Timer, Verdict};
use crate::host::paced::Paced;
use crate::host::persistent::{Assigned, PairConnections};
use crate::host::stage::Stages;
use crate::host::tcp_rx::{AckOut, TcpReceiver};
use crate::host::tcp_tx::{TcpParams, TcpSender};
use crate::output::{Output, Sink};
use crate::packet::{Arena, Ecn, Kind, Packet};
use crate::pcap::Capture;
use crate::prefetch::{prefetch, prefetch_all};
use crate::rng::hash64;
use crate::stats::Stats;
use crate::switch::classifier::StageClasses;
use crate::switch::marker::Marker;
use crate::switch::Qdisc;
use crate::tables::{FlowRows, PortRows};
use crate::topology::{Network, NodeKind};
use crate::units::{secs, Time};
use serde_json::{json, Map, Value};

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
    ctrl_service: u8,
    pub kind: FlowKind,
    /// Its bytes, or UNSIZED (a u64 sentinel, not an Option, to keep
    /// `Flow` small: see `FlowLog`); read through `size()`.
    size: u64,
    /// When it finished, or UNFINISHED; read through `finish()`.
    finish: Time,
    pub tx: TcpSender,
    pub rx: TcpReceiver,
    rto_event: Time,
    delack_event: Time,
    last_data_ts: Time,
    /// Data bytes waiting in the sender's NIC queue (TCP small queues).
    nic_bytes: u64,
    nic_blocked: bool,
    /// Highest data byte received so far, and first transmissions that
    /// arrived below it (reordered by the network).
    rx_high: u64,
    /// Its incast group, or NO_GROUP.
    incast: u32,
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
    pub drops: u32,
}

// Six cache lines; a test of the engine's speed more than of correctness
// (see `FlowLog`), so a change that grows it should be measured.
const _: () = assert!(std::mem::size_of::<Flow>() == 384);

impl Flow {
    /// Its incast group, if any (`incast` is a u32 to keep `Flow` small).
    #[inline]
    fn incast_group(&self) -> Option<u32> {
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
        FlowLog { start, stop, opened: None, reordered: 0, drops: 0 }
    }
}

struct PingStream {
    src: u32,
    dst: u32,
    service: u8,
    interval: Time,
    size: u32,
}

/// Switch names a flow's data cross, then its ACKs' (see `World::flow_paths`).
pub type FlowPath = (Vec<String>, Vec<String>);

/// Why a run stopped before its end.
#[derive(Debug)]
pub enum Stop {
    /// The progress callback asked to stop.
    Interrupted,
    /// The sink failed; its message.
    Output(String),
}

/// `from` of a packet a host hands to its own NIC.
const NO_PORT: u32 = u32::MAX;
/// No flow (the end of a serial chain).
const NO_FLOW: u32 = u32::MAX;
/// A flow in no incast group.
const NO_GROUP: u32 = u32::MAX;
/// The size of a long-lived flow.
const UNSIZED: u64 = u64::MAX;
/// The finish time of a flow still running.
const UNFINISHED: Time = Time::MAX;
/// The start of a flow that waits for another to finish.
const NOT_YET: Time = Time::MAX;

pub struct World<'a> {
    cfg: &'a Config,
    pub q: EventQueue,
    pub arena: Arena,
    pub net: Network,
    pub flows: Vec<Flow>,
    /// Per flow, what its packets seldom touch.
    pub logs: Vec<FlowLog>,
    pings: Vec<PingStream>,
    incasts: Vec<Incast>,
    stats: Stats,
    end: Time,
    warmup: Time,
    hdr: u32,
    /// transport.mss, for counting GRO-merged segments' packets.
    mss: u32,
    /// Seeds the per-flow hash each packet carries.
    ecmp_seed: u64,
    ecmp: Ecmp,
    /// ECN codepoint of new data and of retransmissions (per the cc and
    /// `transport.ect_retransmits`).
    ect_new: Ecn,
    ect_rtx: Ecn,
    delack_timeout: Time,
    host_queue_limit: u64,
    /// Senders a NIC drop unblocked, to wake (see `drop_at`).
    woken: Vec<u32>,
    /// `[host]` batching: segmentation offload at senders, receive
    /// interrupt coalescing (and GRO) at receivers; None when off.
    lso: Option<Lso>,
    /// Stage tagging of data packets (ML-ECN), when host.stages is set.
    stages: Option<Stages>,
    /// ML-ECN's stage classes: the queue of each tagged packet (see
    /// `switch::classifier` for why the sender applies them).
    classes: Option<StageClasses>,
    rx_batching: Option<Coalescer>,
    sample_ports: Vec<u32>,
    /// Packet captures of `run.pcap`'s ports.
    captures: Vec<Capture>,
    /// `run.trace_from`, `run.trace_to`.
    trace_window: (Time, Time),
    /// Where tables and captures go as they are produced.
    out: Output<'a>,
    /// Workload flows are flows[workload.0..workload.1], in start order;
    /// each one's start schedules the next.
    workload: (usize, usize),
    /// For flows of a `serial` entry, the flow that starts when this one's
    /// data is all acknowledged (NO_FLOW: none) and the entry's index in
    /// `cfg.flows` (its pause); empty when no entry is serial, so other
    /// runs never look.
    serial_next: Vec<(u32, u32)>,
    /// Draws of exponential serial pauses.
    serial_rng: crate::rng::Rng,
    /// Per flow, the write pace of a rate-limited application (`[[flows]]
    /// rate`, the workload's rate-limited share); empty when no flow is.
    paced: Vec<Option<Paced>>,
    /// `workload.connections = "per-pair"`: the pairs' persistent
    /// connections (host/persistent.rs); None with a connection per flow.
    conns: Option<PairConnections>,
    /// `run.fct_end = "sender"`: a sized flow finishes when its last byte
    /// is acknowledged, not when it arrives.
    fct_at_sender: bool,
    /// Sized flows not yet finished; the run ends when none are left and
    /// nothing open-ended (long-lived flows, pings, incast) runs.
    unfinished: usize,
    open_ended: bool,
    /// When the run stopped: the duration, or earlier when all finished.
    stopped: Time,
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    in_transit: u64,
    /// Payload bytes delivered in order after warmup, per service.
    goodput_after_warmup: Vec<u64>,
    wall_seconds: f64,
    /// The run was stopped before its end (Ctrl-C).
    interrupted: bool,
}

impl<'a> World<'a> {
    /// Build the experiment; its outputs will go to `sink`.
    pub fn new(cfg: &'a Config, sink: &'a mut dyn Sink) -> Result<World<'a>, ConfigError> {
        let mut net = Network::build(cfg);
        // A switch port's departures only change its own queue and the
        // packets it sends, so they can wait until something looks: its next
        // arrival, or the landing of the packet on its wire (which is never
        // earlier than the departure). Not so for host NICs, whose
        // departures wake the sender, nor with per-pool marking, where a
        // departure changes what every port of the switch sees.
        let pool_marking = net.ports.iter().any(|p| matches!(p.qdisc.marker, Marker::PerPool(_)));
        for p in net.ports.iter_mut() {
            p.lazy = cfg.run.lazy_departures && p.switch.is_some() && !pool_marking;
        }
        let t = &cfg.transport;
        let echo = crate::host::cc::Cc::new(t).echo_mode();
        let params = TcpParams::new(t);
        let mut flows = Vec::new();
        let mut logs = Vec::new();
        let new_flow = |src: u32, dst: u32, service: u32, kind, size: Option<u64>| Flow {
            src,
            dst,
            service: service as u8,
            ctrl_service: service as u8,
            kind,
            size: size.unwrap_or(UNSIZED),
            finish: UNFINISHED,
            tx: TcpSender::with_params(t, &params),
            rx: if t.delayed_ack_bytes {
                TcpReceiver::new(echo, t.delayed_ack).counting_bytes(t.mss)
            } else {
                TcpReceiver::new(echo, t.delayed_ack)
            },
            rto_event: 0,
            delack_event: 0,
            last_data_ts: 0,
            nic_bytes: 0,
            nic_blocked: false,
            rx_high: 0,
            incast: NO_GROUP,
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
                flows.push(new_flow(f.src, f.dst, f.service, kind, size));
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
                crate::config::Arrivals::Poisson => crate::workload::poisson(w, &rates, t.mss, t.header, cfg.run.seed),
                crate::config::Arrivals::Ns2 => crate::ns2_arrivals::arrivals(w, &rates, t.mss),
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
        // ML-ECN's classes, resolved here for untagged packets (stage 0:
        // the small class) and in `send_packet` for data.
        let classes = crate::switch::classifier::stage_classes(&cfg.switch, cfg.host.stages.len());
        if let Some(c) = &classes {
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
                service: classes.as_ref().map_or(p.service as u8, |c| c.queue(0, i as u32) as u8),
                interval: p.interval.0,
                size: p.size.0 as u32,
            })
            .collect();
        let sample_ports = sampled_ports(&net, &cfg.run.sample_ports)?;
        let mut captures = Vec::new();
        for (i, p) in captured_ports(&net, &cfg.run.pcap, "run.pcap")?.into_iter().enumerate() {
            let port = &mut net.ports[p as usize];
            port.capture = true;
            let (node, peer) = (port.node, port.peer);
            if captures.iter().any(|c: &Capture| c.port == p) {
                return Err(ConfigError(format!(
                    "run.pcap[{i}] = {:?}: listed twice; each port is captured once",
                    net.port_name(p)
                )));
            }
            captures.push(Capture::new(p, net.port_name(p), node, peer));
        }
        let traced = captured_ports(&net, &cfg.run.trace_ports, "run.trace_ports")?;
        let tracing = !traced.is_empty();
        for p in traced {
            net.ports[p as usize].set_trace(true);
        }
        let trace_window = (
            cfg.run.trace_from.map(|d| d.0).unwrap_or(cfg.run.warmup.0),
            cfg.run.trace_to.map(|d| d.0).unwrap_or(Time::MAX),
        );
        let services = cfg.switch.queues as usize;
        let lso = Lso::new(&cfg.host, t, flows.len());
        let rx_batching = Coalescer::new(&cfg.host, net.hosts);
        let mut active: Vec<usize> = flows.iter().map(|f| f.service as usize).collect();
        active.sort_unstable();
        active.dedup();
        Ok(World {
            cfg,
            q: EventQueue::new(),
            arena: Arena::default(),
            flows,
            logs,
            pings,
            incasts,
            stats: Stats { tracing, ..Stats::new(services, active, cfg.run.goodput_interval.0) },
            end: cfg.end(),
            warmup: cfg.run.warmup.0,
            hdr: t.header,
            mss: t.mss,
            ecmp_seed: hash64(cfg.run.seed, 0xEC3F),
            ecmp: Ecmp::new(cfg.topology.ecmp, net.switches.len() as u32, cfg.run.seed),
            ect_new: if echo != EchoMode::None { Ecn::Ect } else { Ecn::NotEct },
            ect_rtx: if echo != EchoMode::None && t.ect_retransmits { Ecn::Ect } else { Ecn::NotEct },
            delack_timeout: t.delayed_ack_timeout.0,
            host_queue_limit: t.host_queue_limit.0,
            woken: Vec::new(),
            lso,
            classes,
            stages: (!cfg.host.stages.is_empty()).then(|| {
                let st = Stages::new(cfg.host.stages.iter().map(|b| b.0).collect(), cfg.host.stage_by);
                match &cfg.host.ect_stages {
                    Some(only) => st.ect_only(only),
                    None => st,
                }
            }),
            rx_batching,
            sample_ports,
            captures,
            trace_window,
            out: Output::new(sink),
            net,
            sent: 0,
            delivered: 0,
            dropped: 0,
            in_transit: 0,
            goodput_after_warmup: vec![0; services],
            wall_seconds: 0.0,
            interrupted: false,
            workload,
            serial_next,
            serial_rng: crate::rng::Rng::stream(cfg.run.seed, 0x005E_41A1),
            paced,
            conns: cfg
                .workload
                .as_ref()
                .is_some_and(|w| w.connections == crate::config::Connections::PerPair)
                .then(|| PairConnections::new(flows_len, workload)),
            fct_at_sender: cfg.run.fct_end == crate::config::FctEnd::Sender,
            unfinished,
            open_ended,
            stopped: cfg.end(),
        })
    }

    // ---------------- the run loop ----------------

    /// Run to the configured duration, or until every flow has finished.
    /// `progress(sim_s, fraction_done)` is called a few times a second of
    /// wall time; returning false stops the run, as does a failing sink.
    /// Either way [`World::finish`] can still write what the run has done.
    pub fn run(&mut self, progress: &mut dyn FnMut(f64, f64) -> bool) -> Result<(), Stop> {
        let wall = std::time::Instant::now();
        for f in 0..self.flows.len() as u32 {
            let fl = &self.logs[f as usize];
            let later_arrival = (f as usize) > self.workload.0 && (f as usize) < self.workload.1;
            if fl.start <= self.end && !later_arrival {
                self.q.at(fl.start, Event::FlowStart { flow: f });
            }
            if let Some(s) = fl.stop.filter(|&s| s <= self.end) {
                self.q.at(s, Event::FlowStop { flow: f });
            }
        }
        for (i, p) in self.cfg.ping.iter().enumerate() {
            if p.start.0 <= self.end {
                self.q.at(p.start.0, Event::Ping { probe: i as u32 });
            }
        }
        if !self.sample_ports.is_empty() {
            self.q.at(0, Event::Sample);
        }
        let mut last_report = wall;
        let ends_early = !self.open_ended && self.unfinished > 0;
        while let Some((_, ev)) = self.q.pop_until(self.end) {
            if let Some(Event::Arrive { port, pkt }) = self.q.likely_next() {
                // Its packet and the port it left (all four lines: its
                // catch-up reads the last two) are the next event's first,
                // and usually missing, reads.
                prefetch(self.arena.get(pkt));
                prefetch_all(&self.net.ports[port as usize]);
            }
            self.dispatch(ev);
            if ends_early && self.unfinished == 0 {
                self.stopped = self.q.now;
                break;
            }
            if self.q.processed & 0x3FFFF == 0 {
                if let Some(e) = &self.out.failed {
                    return Err(self.stop_at(Stop::Output(e.clone()), wall));
                }
                if last_report.elapsed().as_secs_f64() > 0.25 {
                    last_report = std::time::Instant::now();
                    if !progress(secs(self.q.now), self.progress_fraction()) {
                        return Err(self.stop_at(Stop::Interrupted, wall));
                    }
                }
            }
        }
        if self.end == crate::config::NO_END && self.stopped == self.end {
            // Nothing left to happen (cannot be with sized flows unfinished,
            // whose timers always run): the run ends at its last event.
            self.stopped = self.q.now;
        }
        // Departures due by the end, so the ports' counters are final.
        self.catch_up_all(self.stopped);
        self.wall_seconds = wall.elapsed().as_secs_f64();
        match &self.out.failed {
            Some(e) => Err(Stop::Output(e.clone())),
            None => Ok(()),
        }
    }

    /// The run stops early, now: its outputs end here.
    #[cold]
    fn stop_at(&mut self, why: Stop, wall: std::time::Instant) -> Stop {
        self.stopped = self.q.now;
        self.interrupted = true;
        self.catch_up_all(self.stopped);
        self.wall_seconds = wall.elapsed().as_secs_f64();
        why
    }

    /// How far the run has got, in [0, 1]: simulated time over the
    /// duration, or without one the share of sized flows finished.
    fn progress_fraction(&self) -> f64 {
        if self.end != crate::config::NO_END {
            return (secs(self.q.now) / secs(self.end)).min(1.0);
        }
        let sized = self.flows.iter().filter(|f| f.kind == FlowKind::Sized).count();
        1.0 - self.unfinished as f64 / sized.max(1) as f64
    }

    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone { port } => {
                self.net.ports[port as usize].txdone_pending = false;
                self.start_tx(port);
            }
            Event::Arrive { port, pkt } => {
                self.in_transit -= 1;
                let node = self.net.ports[port as usize].peer;
                match self.net.nodes[node as usize].kind {
                    NodeKind::Switch { index } => {
                        // Route first and start loading the egress port, so
                        // its misses overlap the upstream port's catch-up.
                        let egress = self.route(index, pkt);
                        prefetch_all(&self.net.ports[egress as usize]);
                        self.catch_up(port, self.q.now, None);
                        // By now the egress port's lines are likely in, so
                        // the address of its queue's line costs no stall.
                        let service = self.arena.get(pkt).service;
                        self.net.ports[egress as usize].qdisc.prefetch_for(service);
                        self.enqueue(egress, pkt, port);
                    }
                    NodeKind::Host { .. } => {
                        self.catch_up(port, self.q.now, None);
                        self.host_arrive(node, pkt)
                    }
                }
            }
            Event::FlowStart { flow } => self.flow_start(flow),
            Event::FlowStop { flow } => {
                let tx = &mut self.flows[flow as usize].tx;
                tx.limit = tx.limit.min(tx.max_sent);
            }
            Event::Rto { flow } => self.rto_fired(flow),
            Event::DelAck { flow } => {
                let f = &mut self.flows[flow as usize];
                f.delack_event = 0;
                if let Some(a) = f.rx.flush() {
                    let ts = f.last_data_ts;
                    self.send_ack(flow, a, ts);
                }
            }
            Event::Ping { probe } => self.ping(probe),
            Event::IncastRound { group } => self.incast_round(group),
            Event::IncastRequest { flow } => self.incast_request(flow),
            Event::Sample => self.sample(),
            Event::LsoDefer { flow } => self.lso_timer(flow),
            Event::RxInterrupt { host } => self.rx_interrupt_due(host),
            Event::AppWrite { flow } => self.app_write(flow),
        }
    }

    // ---------------- network ----------------

    /// The port is free: put its next packet on the wire. A TxDone event
    /// is scheduled only when more packets wait, so an idle path costs one
    /// event per hop.
    #[inline]
    fn start_tx(&mut self, port: u32) {
        self.start_tx_at(port, self.q.now)
    }

    /// Run a lazy port's departures due by `now`, each at its own time
    /// (`busy_until`), so its state is as if TxDone events had run.
    ///
    /// `offered` is the packet about to be offered to the port, with the
    /// port whose link it came over (NO_PORT: from its host). A departure
    /// due at this very instant then goes first only if its TxDone would
    /// have been scheduled before the packet's arrival event: simultaneous
    /// events run in the order they were scheduled, lazy or not. (With
    /// equal packet times, the usual tie, a data packet's arrival was
    /// scheduled a link delay before the TxDone and goes first, as in ns-2.)
    #[inline]
    fn catch_up(&mut self, port: u32, now: Time, offered: Option<(u32, u32)>) {
        loop {
            let p = &self.net.ports[port as usize];
            if !p.lazy || p.qdisc.packets == 0 || p.busy_until > now {
                return;
            }
            if let (true, Some((id, from))) = (p.busy_until == now, offered) {
                // The arrival event was scheduled when the packet began to
                // leave `from`.
                let sched = match self.net.ports.get(from as usize) {
                    Some(up) => now - up.delay - up.tx_time(self.arena.get(id).size as u64),
                    None => now,
                };
                if p.txdone_sched >= sched {
                    return; // Runs after this arrival, at the next catch-up.
                }
            }
            self.start_tx_at(port, p.busy_until);
        }
    }

    /// Bring every lazy port up to `now` (before reading their state).
    fn catch_up_all(&mut self, now: Time) {
        for port in 0..self.net.ports.len() as u32 {
            self.catch_up(port, now, None);
        }
    }

    #[inline]
    fn start_tx_at(&mut self, port: u32, now: Time) {
        if !self.net.ports[port as usize].qdisc.is_plain() {
            return self.start_tx_hooked(port, now);
        }
        let next = self.dequeue_at(port, now, Qdisc::dequeue_plain);
        if let Some((id, size)) = next {
            self.transmit(port, now, id, size);
        }
    }

    /// Take `port`'s next packet at `now` with `dequeue`, keeping its
    /// switch's pool count.
    #[inline(always)]
    fn dequeue_at(
        &mut self,
        port: u32,
        now: Time,
        dequeue: impl FnOnce(&mut Qdisc, Time, &mut Arena, u64) -> Option<(u32, u32)>,
    ) -> Option<(u32, u32)> {
        let p = &mut self.net.ports[port as usize];
        let before = p.qdisc.bytes;
        let pool = p.switch.map(|s| self.net.switches[s as usize].pool_bytes).unwrap_or(0);
        let next = dequeue(&mut p.qdisc, now, &mut self.arena, pool);
        if let Some(sw) = p.switch {
            self.net.switches[sw as usize].pool_bytes -= before - p.qdisc.bytes;
        }
        next
    }

    /// `start_tx_at` for a port off the static path (`Qdisc::is_plain`).
    #[inline(never)]
    fn start_tx_hooked(&mut self, port: u32, now: Time) {
        if self.net.ports[port as usize].qdisc.drops_at_dequeue() {
            return self.start_tx_dropping(port, now);
        }
        let next = self.dequeue_at(port, now, Qdisc::dequeue_composed);
        if let Some((id, size)) = next {
            self.transmit(port, now, id, size);
        }
    }

    /// `start_tx_at` for a port whose qdisc may drop packets on the way
    /// out (a dequeue hook, a whole discipline): free and count them, send
    /// the next packet, then wake the senders a NIC's drops made room for
    /// (only once that packet is on the wire, as theirs may come to this
    /// very port).
    fn start_tx_dropping(&mut self, port: u32, now: Time) {
        let next = self.dequeue_at(port, now, Qdisc::dequeue);
        while let Some(id) = self.net.ports[port as usize].qdisc.take_dequeue_drop() {
            if self.net.ports[port as usize].trace {
                self.watch(port, now, id, -1);
            }
            self.drop_at(port, id);
        }
        if let Some((id, size)) = next {
            self.transmit(port, now, id, size);
        }
        self.wake_senders();
    }

    /// Put packet `id` (`size` bytes on the wire), just taken from `port`,
    /// on the port's link at `now`.
    #[inline]
    fn transmit(&mut self, port: u32, now: Time, id: u32, size: u32) {
        let p = &mut self.net.ports[port as usize];
        let ser = p.tx_time(size as u64);
        p.busy_until = now + ser;
        self.q.arrive(port, now + ser + p.delay, id);
        if p.qdisc.packets > 0 {
            if p.lazy {
                p.txdone_sched = now;
            } else {
                p.txdone_pending = true;
                self.q.tx_done(port, now + ser);
            }
        }
        self.in_transit += 1;
        let nic = p.switch.is_none();
        if p.capture | p.trace {
            self.watch(port, now, id, -1);
        }
        // Only a host NIC looks into the packet here: a switch port has
        // the size from its queue, and the slot may be cold by now.
        let pkt = self.arena.get(id);
        if nic && pkt.kind == Kind::Data {
            // The NIC took a data packet: a paused sender may go on.
            let (fid, size) = (pkt.flow, size as u64);
            let f = &mut self.flows[fid as usize];
            f.nic_bytes -= size;
            if f.nic_blocked && f.nic_bytes < self.host_queue_limit {
                f.nic_blocked = false;
                self.try_send(fid);
            }
        }
    }

    /// Packet `id` entered (`event` 1) or left (-1) watched `port` at
    /// `now`: a departure goes to the port's capture, and both to the trace.
    #[cold]
    #[inline(never)]
    fn watch(&mut self, port: u32, now: Time, id: u32, event: i64) {
        let p = &self.net.ports[port as usize];
        if p.trace && (self.trace_window.0..self.trace_window.1).contains(&now) {
            let q = p.qdisc.classify(self.arena.get(id).service);
            let (bytes, packets) = p.qdisc.queue_occupancy(q);
            self.stats.trace.push(secs(now), port, q as u32, event, bytes, packets as u32);
            self.stats.trace.flush_full(&mut self.out);
        }
        if p.capture && event < 0 {
            let c = self.captures.iter_mut().find(|c| c.port == port).expect("a captured port has a capture");
            c.record(now, self.arena.get(id), &mut self.out);
        }
    }

    /// Offer packet `id`, which came over the link of port `from` (or
    /// NO_PORT), to `port`. The port's path is chosen here, in the caller,
    /// so that either costs one call (the test inside one shared function
    /// cost each hooked hop a second call: 2% of the ML-ECN point's
    /// instructions).
    #[inline(always)]
    fn enqueue(&mut self, port: u32, id: u32, from: u32) {
        if self.net.ports[port as usize].plain {
            self.enqueue_plain(port, id, from)
        } else {
            self.enqueue_hooked(port, id, from)
        }
    }

    /// `enqueue` at a port on the static path (`Port::plain`).
    #[inline(never)]
    fn enqueue_plain(&mut self, port: u32, id: u32, from: u32) {
        self.enqueue_in::<true>(port, id, from)
    }

    /// `enqueue` at a port off the static path.
    #[inline(never)]
    fn enqueue_hooked(&mut self, port: u32, id: u32, from: u32) {
        self.enqueue_in::<false>(port, id, from)
    }

    /// `enqueue`; `PLAIN`: the port is known to be plain, so it is neither
    /// traced nor a whole discipline, and its qdisc's static path applies.
    #[inline(always)]
    fn enqueue_in<const PLAIN: bool>(&mut self, port: u32, id: u32, from: u32) {
        let now = self.q.now;
        self.catch_up(port, now, Some((id, from)));
        let p = &mut self.net.ports[port as usize];
        let pool = p.switch.map(|s| self.net.switches[s as usize].pool_bytes).unwrap_or(0);
        let size = self.arena.get(id).size as u64;
        if p.qdisc.packets == 0 && now >= p.busy_until && !p.txdone_pending && (PLAIN || !p.trace) {
            // An idle, empty port sends the packet at once. The qdisc then
            // skips its FIFO and round-robin list, which would hold the
            // packet for no time (see `Qdisc::pass_through`). A traced port
            // goes the long way, so its trace shows the packet queued.
            let r = if PLAIN {
                p.qdisc.pass_through_plain(now, id, &mut self.arena, pool)
            } else {
                p.qdisc.pass_through(now, id, &mut self.arena, pool)
            };
            if let Some(r) = r {
                match r {
                    Ok(()) => self.transmit(port, now, id, size as u32),
                    Err(_) => self.refused(port, now, id),
                }
                return;
            }
        }
        let r = if PLAIN {
            p.qdisc.enqueue_plain(now, id, &mut self.arena, pool)
        } else {
            p.qdisc.enqueue(now, id, &mut self.arena, pool)
        };
        match r {
            Ok(()) => {
                if let Some(s) = p.switch {
                    self.net.switches[s as usize].pool_bytes += size;
                }
                if !PLAIN && (p.trace | p.qdisc.is_whole()) {
                    return self.enqueued_slow(port, now, id);
                }
                if arm_departure(p, &mut self.q, port, now) {
                    self.start_tx(port);
                }
            }
            Err(_) => self.refused(port, now, id),
        }
    }

    /// `enqueue`'s end for a traced port or a whole discipline: the
    /// packets the discipline pushed out to make room, the arrival's trace
    /// row, then the departure bookkeeping (off the common path, where the
    /// port is borrowed once).
    #[cold]
    #[inline(never)]
    fn enqueued_slow(&mut self, port: u32, now: Time, id: u32) {
        let gone = self.take_pushed_out(port, now, id);
        if self.net.ports[port as usize].trace && !gone {
            self.watch(port, now, id, 1);
        }
        if arm_departure(&mut self.net.ports[port as usize], &mut self.q, port, now) {
            self.start_tx(port);
        }
        self.wake_senders();
    }

    /// Packet `id`, offered to `port`, was refused; a whole discipline
    /// may have pushed out others first.
    #[cold]
    #[inline(never)]
    fn refused(&mut self, port: u32, now: Time, id: u32) {
        self.take_pushed_out(port, now, id);
        self.drop_at(port, id);
        self.wake_senders();
    }

    /// Free and count the packets a whole discipline at `port` pushed out
    /// as it took one in, and take their bytes out of the switch's pool
    /// (where the qdisc's own count no longer holds them). True when the
    /// arrival `arrival` was among them.
    fn take_pushed_out(&mut self, port: u32, now: Time, arrival: u32) -> bool {
        let mut gone = false;
        while let Some(id) = self.net.ports[port as usize].qdisc.take_dequeue_drop() {
            let p = &self.net.ports[port as usize];
            if let Some(s) = p.switch {
                self.net.switches[s as usize].pool_bytes -= self.arena.get(id).size as u64;
            }
            if p.trace {
                self.watch(port, now, id, -1);
            }
            self.drop_at(port, id);
            gone |= id == arrival;
        }
        gone
    }

    /// Packet `id` was dropped at `port`. A host NIC's drop of a data
    /// packet returns its bytes to the sender's NIC allowance (TCP small
    /// queues, `host_queue_limit`), as its departure would have; a sender
    /// it unblocks is woken by `wake_senders`, once the port is settled.
    #[inline]
    fn drop_at(&mut self, port: u32, id: u32) {
        if self.net.ports[port as usize].switch.is_none() {
            self.nic_dropped(id);
        }
        self.drop_packet(id);
    }

    #[cold]
    #[inline(never)]
    fn nic_dropped(&mut self, id: u32) {
        let p = self.arena.get(id);
        if p.kind != Kind::Data {
            return;
        }
        let (fid, size) = (p.flow, p.size as u64);
        let f = &mut self.flows[fid as usize];
        f.nic_bytes -= size;
        if f.nic_blocked && f.nic_bytes < self.host_queue_limit {
            f.nic_blocked = false;
            self.woken.push(fid);
        }
    }

    /// Let senders unblocked by NIC drops send again.
    fn wake_senders(&mut self) {
        while let Some(fid) = self.woken.pop() {
            self.try_send(fid);
        }
    }

    fn drop_packet(&mut self, id: u32) {
        let p = self.arena.get(id);
        if !matches!(p.kind, Kind::PingReq | Kind::PingRep) {
            self.logs[p.flow as usize].drops += 1;
        }
        self.dropped += 1;
        self.arena.free(id);
    }

    /// The port of switch `sw` that packet `id` leaves by.
    #[inline]
    fn route(&mut self, sw: u32, id: u32) -> u32 {
        let h = self.arena.get(id);
        let routes = self.net.routes(sw, h.dst);
        if routes.len() == 1 {
            routes[0]
        } else {
            routes[self.ecmp.pick(sw, h.ecmp, routes.len())]
        }
    }

    fn host_send(&mut self, p: Packet) {
        let nic = match self.net.nodes[p.src as usize].kind {
            NodeKind::Host { nic } => nic,
            NodeKind::Switch { .. } => unreachable!("only hosts send"),
        };
        let hash = if self.ecmp.mode() == EcmpMode::Ns2 {
            self.ns2_hash(&p)
        } else {
            let key = match &self.conns {
                Some(c) if !matches!(p.kind, Kind::PingReq | Kind::PingRep) => c.path_key(p.flow),
                _ => p.flow,
            };
            self.flow_hash(key, p.src, p.dst)
        };
        let id = self.arena.alloc(p, hash);
        self.sent += 1;
        self.enqueue(nic, id, NO_PORT);
    }

    /// Per-flow ECMP: every packet of a flow (or of its connection, `key`)
    /// in one direction carries the same hash, which each switch salts with
    /// its own (see `ecmp.rs`).
    #[inline]
    fn flow_hash(&self, key: u32, src: u32, dst: u32) -> u32 {
        let key = ((key as u64) << 32) | ((src as u64) << 16) ^ dst as u64;
        (hash64(self.ecmp_seed, key) >> 32) as u32
    }

    /// `ecmp = "ns2"`: the authors' hash of the packet's ends and of its
    /// host pair's data direction (a ping's requester to its target).
    #[cold]
    fn ns2_hash(&self, p: &Packet) -> u32 {
        let pair = match p.kind {
            Kind::PingReq => (p.src, p.dst),
            Kind::PingRep => (p.dst, p.src),
            _ => (self.flows[p.flow as usize].src, self.flows[p.flow as usize].dst),
        };
        ecmp::ns2_hash(self.net.hosts, p.src, p.dst, pair.0, pair.1)
    }

    /// Switch names on each flow's path: its data's and its ACKs'. Empty
    /// under per-packet ECMP, where packets take paths of their own.
    pub fn flow_paths(&self) -> Vec<FlowPath> {
        let names = |src: u32, dst: u32, flow: u32, pair: (u32, u32)| -> Vec<String> {
            let hash = if self.ecmp.mode() == EcmpMode::Ns2 {
                ecmp::ns2_hash(self.net.hosts, src, dst, pair.0, pair.1)
            } else {
                self.flow_hash(flow, src, dst)
            };
            let hops = self.ecmp.path(&self.net, src, dst, hash);
            hops.unwrap_or_default().iter().map(|&n| self.net.nodes[n as usize].name.clone()).collect()
        };
        (0..self.flows.len() as u32)
            .map(|i| {
                let f = &self.flows[i as usize];
                let key = self.conns.as_ref().map_or(i, |c| c.path_key(i));
                (names(f.src, f.dst, key, (f.src, f.dst)), names(f.dst, f.src, key, (f.src, f.dst)))
            })
            .collect()
    }

    // ---------------- hosts ----------------

    fn host_arrive(&mut self, host: u32, id: u32) {
        let p = *self.arena.get(id);
        self.arena.free(id);
        self.delivered += 1;
        debug_assert_eq!(p.dst, host);
        if self.rx_batching.is_some() {
            return self.batch_arrival(host, p);
        }
        self.host_handle(host, p);
    }

    /// Packet `p` joins `host`'s receive batch (interrupt coalescing).
    #[cold]
    #[inline(never)]
    fn batch_arrival(&mut self, host: u32, p: Packet) {
        let Some(c) = &mut self.rx_batching else { return };
        match c.arrive(host, p, self.q.now) {
            Arrival::Schedule(t) => self.q.at(t, Event::RxInterrupt { host }),
            Arrival::Wait => {}
            Arrival::HandleNow => self.rx_interrupt(host),
        }
    }

    /// An RxInterrupt event: the interrupt, unless it is a stale one.
    #[cold]
    #[inline(never)]
    fn rx_interrupt_due(&mut self, host: u32) {
        if self.rx_batching.as_ref().is_some_and(|c| c.due(host, self.q.now)) {
            self.rx_interrupt(host);
        }
    }

    /// The receive interrupt of `host`: handle its waiting frames (merged
    /// by GRO if on) now, so their ACKs leave together.
    fn rx_interrupt(&mut self, host: u32) {
        let Some(c) = &mut self.rx_batching else { return };
        let batch = c.take(host);
        for p in &batch {
            self.host_handle(host, *p);
        }
        if let Some(c) = &mut self.rx_batching {
            c.done(batch);
        }
    }

    /// The host's stack takes packet `p`.
    #[inline(always)]
    fn host_handle(&mut self, host: u32, p: Packet) {
        let now = self.q.now;
        match p.kind {
            Kind::Syn => {
                let mut r = Packet::new(Kind::SynAck, host, p.src, p.flow, p.service, self.hdr);
                r.ts = p.ts;
                self.host_send(r);
            }
            Kind::SynAck => {
                let f = &mut self.flows[p.flow as usize];
                if f.tx.state != crate::host::tcp_tx::TxState::SynSent {
                    return;
                }
                f.tx.on_synack(now, p.ts);
                if let Some(g) = f.incast_group() {
                    let inc = &mut self.incasts[g as usize];
                    inc.established += 1;
                    if inc.established == inc.flows.len() as u32 {
                        self.start_round(g);
                    }
                }
                self.try_send(p.flow);
            }
            Kind::Data => self.data_arrive(p),
            Kind::Ack => {
                let f = &mut self.flows[p.flow as usize];
                let progressed = f.tx.on_ack(now, p.seq, (p.sack_lo, p.sack_hi), p.ece, p.ts);
                if progressed && !self.serial_next.is_empty() {
                    self.serial_done(p.flow);
                }
                if progressed && (self.fct_at_sender || self.conns.is_some()) {
                    self.all_acked(p.flow);
                }
                self.try_send(p.flow);
            }
            Kind::PingReq => {
                let mut r = Packet::new(Kind::PingRep, host, p.src, p.flow, p.service, p.size);
                r.ts = p.ts;
                self.host_send(r);
            }
            Kind::PingRep => {
                if p.ts >= self.warmup {
                    let rtt = &mut self.stats.rtt;
                    rtt.push(secs(p.ts), p.dst, p.src, p.service as u32, secs(now - p.ts));
                    rtt.flush_full(&mut self.out);
                }
            }
        }
    }

    /// Always inlined: `host_handle` has two callers since receive batching
    /// (issue 10), which left this a call of its own on the hot path (MQ-ECN
    /// benchmark, 10,000-flow copy: 2.2% of wall time, paired runs).
    #[inline(always)]
    fn data_arrive(&mut self, p: Packet) {
        let now = self.q.now;
        let fid = p.flow;
        let f = &mut self.flows[fid as usize];
        let end = p.seq + p.payload as u64;
        if !p.rtx && p.seq < f.rx_high {
            self.logs[fid as usize].reordered += 1;
        }
        f.rx_high = f.rx_high.max(end);
        let before = f.rx.rcv_nxt;
        if f.rx.pending == 0 {
            // A held-back ACK echoes the earliest unacknowledged timestamp
            // (RFC 7323 §4.3), so delayed ACKs do not shrink RTT samples.
            f.last_data_ts = p.ts;
        }
        let out = f.rx.on_data(p.seq, p.payload, self.mss, p.ecn == Ecn::Ce, p.cwr);
        let service = f.service as usize;
        if let Some(a) = out.early_ack {
            self.send_ack(fid, a, p.ts);
        }
        if out.delivered > 0 {
            self.stats.goodput.deliver(service, now, out.delivered, &mut self.out);
            if now >= self.warmup {
                self.goodput_after_warmup[service] += out.delivered;
            }
            self.check_done(fid, before);
        }
        match out.ack {
            Some(a) => self.send_ack(fid, a, p.ts),
            None => {
                let f = &mut self.flows[fid as usize];
                if f.delack_event == 0 {
                    f.delack_event = now + self.delack_timeout;
                    self.q.at(f.delack_event, Event::DelAck { flow: fid });
                }
            }
        }
    }

    fn check_done(&mut self, fid: u32, before: u64) {
        let now = self.q.now;
        let f = &mut self.flows[fid as usize];
        let got = f.rx.rcv_nxt;
        if f.size != UNSIZED && f.finish == UNFINISHED && !self.fct_at_sender && got >= f.size {
            f.finish = now;
            self.unfinished -= 1;
        }
        if let Some(g) = f.incast_group() {
            let inc = &mut self.incasts[g as usize];
            if before < inc.target && got >= inc.target {
                inc.done += 1;
                if inc.done == inc.flows.len() as u32 {
                    let dt = secs(now - inc.round_start);
                    let bits = (inc.block * inc.flows.len() as u64 * 8) as f64;
                    self.stats.incast_round(inc.round, inc.round_start, now, bits / dt / 1e9, &mut self.out);
                    if inc.round < inc.rounds {
                        self.start_round(g);
                    } else {
                        for &fl in &inc.flows {
                            self.flows[fl as usize].finish = now;
                        }
                    }
                }
            }
        }
    }

    fn send_ack(&mut self, fid: u32, a: AckOut, ts: Time) {
        let f = &self.flows[fid as usize];
        let mut p = Packet::new(Kind::Ack, f.dst, f.src, fid, f.ctrl_service, self.hdr);
        p.seq = a.ack;
        p.sack_lo = a.sack.0;
        p.sack_hi = a.sack.1;
        p.ece = a.ece;
        p.ts = ts;
        self.host_send(p);
    }

    /// A serial flow whose data is all acknowledged opens the next one.
    fn serial_done(&mut self, fid: u32) {
        let f = &self.flows[fid as usize];
        if f.size == UNSIZED || !f.tx.drained() {
            return;
        }
        let Some((next, entry)) = self.serial_next.get_mut(fid as usize).map(|n| std::mem::replace(n, (NO_FLOW, 0)))
        else {
            return;
        };
        if next != NO_FLOW {
            let c = &self.cfg.flows[entry as usize];
            let pause = match c.serial_gap_kind {
                GapKind::Fixed => c.serial_gap.0,
                GapKind::Exponential => {
                    (-(1.0 - self.serial_rng.uniform()).ln() * c.serial_gap.0 as f64).round() as Time
                }
            };
            let at = self.q.now + pause;
            self.logs[next as usize].start = at;
            self.q.at(at, Event::FlowStart { flow: next });
        }
    }

    fn flow_start(&mut self, fid: u32) {
        let now = self.q.now;
        let next = fid as usize + 1;
        if (fid as usize) >= self.workload.0 && next < self.workload.1 && self.logs[next].start <= self.end {
            self.q.at(self.logs[next].start, Event::FlowStart { flow: next as u32 });
        }
        let f = &mut self.flows[fid as usize];
        f.tx.limit = match f.kind {
            FlowKind::Long => u64::MAX,
            FlowKind::Sized => f.size,
            FlowKind::Incast => 0,
        };
        self.logs[fid as usize].opened = Some(now);
        let on_pair = self.conns.as_ref().is_some_and(|c| c.covers(fid));
        if !on_pair {
            f.tx.open(now);
        }
        if self.is_paced(fid as usize) {
            // A rate-limited application: its first write now, the rest paced.
            self.flows[fid as usize].tx.limit = 0;
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
        let f = &mut self.flows[fid as usize];
        let conns = self.conns.as_mut().expect("per-pair connections");
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
    fn all_acked(&mut self, fid: u32) {
        let now = self.q.now;
        let f = &mut self.flows[fid as usize];
        if f.size == UNSIZED || f.kind != FlowKind::Sized || f.tx.una < f.size {
            return;
        }
        if self.fct_at_sender && f.finish == UNFINISHED {
            f.finish = now;
            self.unfinished -= 1;
        }
        if let Some(c) = &mut self.conns {
            c.release(fid, f.src, f.dst, f.tx.carried());
        }
    }

    /// Flow `fid` belongs to a rate-limited application.
    fn is_paced(&self, fid: usize) -> bool {
        self.paced.get(fid).is_some_and(|p| p.is_some())
    }

    /// A rate-limited application writes its next segment, and schedules
    /// the one after while it has data left (a long-lived stream until
    /// its `stop`).
    fn app_write(&mut self, fid: u32) {
        let now = self.q.now;
        let Some(p) = self.paced[fid as usize] else { return };
        if self.logs[fid as usize].stop.is_some_and(|t| now >= t) {
            return;
        }
        let f = &mut self.flows[fid as usize];
        let total = f.size;
        f.tx.limit = p.write(f.tx.limit, total);
        if f.tx.limit < total {
            self.q.at(now + p.every, Event::AppWrite { flow: fid });
        }
        self.try_send(fid);
    }

    fn send_syn(&mut self, fid: u32) {
        let f = &self.flows[fid as usize];
        let mut p = Packet::new(Kind::Syn, f.src, f.dst, fid, f.ctrl_service, self.hdr);
        p.ts = self.q.now;
        self.host_send(p);
    }

    fn try_send(&mut self, fid: u32) {
        if self.lso.is_some() {
            return self.try_send_lso(fid);
        }
        loop {
            let f = &mut self.flows[fid as usize];
            if f.nic_bytes >= self.host_queue_limit {
                f.nic_blocked = true;
                break;
            }
            if !self.send_packet(fid) {
                break;
            }
        }
        self.sync_rto(fid);
    }

    /// Hand the NIC the next packet the sender allows, if any.
    #[inline(always)]
    fn send_packet(&mut self, fid: u32) -> bool {
        let now = self.q.now;
        let (hdr, ect_new, ect_rtx) = (self.hdr, self.ect_new, self.ect_rtx);
        let f = &mut self.flows[fid as usize];
        let Some(seg) = f.tx.next_segment(now) else { return false };
        f.nic_bytes += (seg.len + hdr) as u64;
        let mut p = Packet::new(Kind::Data, f.src, f.dst, fid, f.service, seg.len + hdr);
        p.payload = seg.len;
        p.seq = seg.seq;
        p.cwr = seg.cwr;
        p.rtx = seg.retransmit;
        if f.tx.pf.on {
            // pFabric's priority: the flow's remaining bytes now.
            p.set_prio(f.tx.remaining());
        }
        p.ts = now;
        p.ecn = if seg.retransmit { ect_rtx } else { ect_new };
        if let Some(st) = &self.stages {
            p.stage = st.tag(seg.seq, f.tx.max_sent, seg.retransmit, f.size());
            if !st.ect(p.stage) {
                p.ecn = Ecn::NotEct;
            }
            if let Some(c) = &self.classes {
                p.service = c.queue(p.stage, fid) as u8;
            }
        }
        self.host_send(p);
        true
    }

    /// With LSO (`host/lso.rs`): hand the NIC whole segments, or defer.
    /// The NIC queue limit (TCP small queues) is checked per segment, so
    /// it never splits one: Linux's TSQ, too, lets a whole skb through
    /// (and 2.6.38, CEDM's kernel, has no TSQ at all).
    #[inline(never)]
    fn try_send_lso(&mut self, fid: u32) {
        let now = self.q.now;
        loop {
            let f = &mut self.flows[fid as usize];
            if f.nic_bytes >= self.host_queue_limit {
                f.nic_blocked = true;
                break;
            }
            let lso = self.lso.as_mut().expect("LSO is on");
            let n = match lso.decide(fid, now, f.tx.allowance()) {
                Verdict::Send(n) => n,
                Verdict::Idle => break,
                Verdict::Defer(timer) => {
                    if let Some(t) = timer {
                        self.q.at(t, Event::LsoDefer { flow: fid });
                    }
                    break;
                }
            };
            if !(0..n).all(|_| self.send_packet(fid)) {
                break;
            }
        }
        self.sync_rto(fid);
    }

    #[cold]
    #[inline(never)]
    fn lso_timer(&mut self, fid: u32) {
        let now = self.q.now;
        match self.lso.as_mut().map(|l| l.timer_fired(fid, now)) {
            Some(Timer::Due) => self.try_send(fid),
            Some(Timer::Again(t)) => self.q.at(t, Event::LsoDefer { flow: fid }),
            _ => {}
        }
    }

    /// Keep one timer event no later than the sender's RTO deadline; stale
    /// events are recognised by their time and ignored.
    fn sync_rto(&mut self, fid: u32) {
        let f = &mut self.flows[fid as usize];
        let d = f.tx.rto_deadline;
        if d != 0 && (f.rto_event == 0 || f.rto_event > d) {
            f.rto_event = d;
            self.q.at(d, Event::Rto { flow: fid });
        }
    }

    fn rto_fired(&mut self, fid: u32) {
        let now = self.q.now;
        let f = &mut self.flows[fid as usize];
        if f.rto_event != now {
            return;
        }
        f.rto_event = 0;
        let d = f.tx.rto_deadline;
        if d == 0 {
            return;
        }
        if now < d {
            f.rto_event = d;
            self.q.at(d, Event::Rto { flow: fid });
            return;
        }
        if f.tx.on_timeout(now) {
            self.send_syn(fid);
        }
        self.try_send(fid);
    }

    fn ping(&mut self, probe: u32) {
        let now = self.q.now;
        let s = &self.pings[probe as usize];
        let mut p = Packet::new(Kind::PingReq, s.src, s.dst, probe, s.service, s.size);
        p.ts = now;
        let next = now + s.interval;
        self.host_send(p);
        if next <= self.end {
            self.q.at(next, Event::Ping { probe });
        }
    }

    /// The receiver of incast group `g` sends this round's requests: each
    /// carries any ACK the receiver was holding back for its connection,
    /// and reaches its sender after the path's delay (all at once, or
    /// spread by the group's gap and jitter).
    fn start_round(&mut self, g: u32) {
        let now = self.q.now;
        for i in 0..self.incasts[g as usize].flows.len() {
            let fid = self.incasts[g as usize].flows[i];
            let f = &mut self.flows[fid as usize];
            if let Some(a) = f.rx.flush() {
                let ts = f.last_data_ts;
                self.send_ack(fid, a, ts);
            }
        }
        let inc = &mut self.incasts[g as usize];
        inc.round_start = now;
        if !inc.spread() {
            self.q.after(inc.req_delay, Event::IncastRound { group: g });
            return;
        }
        inc.begin_round();
        for (fid, delay) in inc.request_delays() {
            self.q.after(delay, Event::IncastRequest { flow: fid });
        }
    }

    /// A spread round's request reaches the sender of flow `fid`.
    fn incast_request(&mut self, fid: u32) {
        let g = self.flows[fid as usize].incast_group().expect("an incast flow");
        self.flows[fid as usize].tx.limit = self.incasts[g as usize].target;
        self.try_send(fid);
    }

    fn incast_round(&mut self, g: u32) {
        let target = self.incasts[g as usize].begin_round();
        for i in 0..self.incasts[g as usize].flows.len() {
            let fid = self.incasts[g as usize].flows[i];
            self.flows[fid as usize].tx.limit = target;
            self.try_send(fid);
        }
    }

    fn sample(&mut self) {
        let now = self.q.now;
        // Departures before this instant; one due now had its TxDone
        // scheduled after this sample's, so it runs after the sample.
        for i in 0..self.sample_ports.len() {
            self.catch_up(self.sample_ports[i], now.saturating_sub(1), None);
        }
        let t = secs(now);
        let rows = &mut self.stats.queues;
        for &pi in &self.sample_ports {
            let p = &self.net.ports[pi as usize];
            for qi in 0..p.qdisc.queues.len() {
                let (bytes, packets) = p.qdisc.queue_occupancy(qi);
                rows.push(t, pi, qi as u32, bytes, packets as u32);
            }
        }
        rows.flush_full(&mut self.out);
        let next = now + self.cfg.run.sample_interval.0;
        if next <= self.end {
            self.q.at(next, Event::Sample);
        }
    }

    // ---------------- outputs ----------------

    /// Packets in queues plus on the wire, counted by walking them.
    pub fn packets_in_flight(&self) -> u64 {
        let queued: u64 = self.net.ports.iter().map(|p| p.qdisc.packets).sum();
        queued + self.in_transit
    }

    /// After [`World::run`], finished or stopped: hand the rest of every
    /// table and capture to the sink and return the summary. Per-flow and
    /// per-port records go now, in batches: their counters can change
    /// until the run ends.
    pub fn finish(&mut self) -> Result<Map<String, Value>, String> {
        let has_duration = self.end != crate::config::NO_END;
        self.flows_table();
        self.stats.finish(self.stopped, has_duration, &mut self.out);
        self.ports_table();
        for c in &mut self.captures {
            c.flush(&mut self.out);
        }
        match self.out.failed.take() {
            Some(e) => Err(e),
            None => Ok(self.summary()),
        }
    }

    fn flows_table(&mut self) {
        let nan = f64::NAN;
        let mut rows = FlowRows::default();
        for (id, (f, log)) in self.flows.iter().zip(&self.logs).enumerate() {
            let fct = match (log.opened, f.finish()) {
                (Some(a), Some(b)) => secs(b - a),
                _ => nan,
            };
            // Rate-limited flows are apart: their FCT is set by their rate.
            let paced = self.is_paced(id);
            let kind = match f.kind {
                _ if paced => "rate-limited",
                FlowKind::Long => "long",
                FlowKind::Sized => "sized",
                FlowKind::Incast => "incast",
            };
            rows.push(
                id as u32,
                f.src,
                f.dst,
                f.service as u32,
                f.size().map(|s| s as i64).unwrap_or(-1),
                log.opened.map(secs).unwrap_or(nan),
                f.finish().map(secs).unwrap_or(nan),
                fct,
                f.rx.rcv_nxt,
                f.tx.timeouts,
                f.tx.retransmits,
                f.rx.ce_received,
                log.drops,
                log.reordered,
                kind.to_string(),
            );
            rows.flush_full(&mut self.out);
        }
        rows.flush(&mut self.out);
    }

    fn ports_table(&mut self) {
        let mut rows = PortRows::default();
        for (i, p) in self.net.ports.iter().enumerate() {
            let c: Vec<_> = (0..p.qdisc.queues.len()).map(|q| p.qdisc.counters(q)).collect();
            let total = p.qdisc.port_counters();
            let (node, peer) = (&self.net.nodes[p.node as usize].name, &self.net.nodes[p.peer as usize].name);
            for (q, c) in std::iter::once((-1, total)).chain(c.into_iter().enumerate().map(|(q, c)| (q as i64, c))) {
                rows.push(
                    i as u32,
                    node.clone(),
                    peer.clone(),
                    q,
                    c.enqueued,
                    c.marked,
                    c.unmarked,
                    c.dropped_overflow,
                    c.dropped_aqm,
                    c.max_bytes,
                    c.sent_packets,
                    c.sent_bytes,
                );
            }
            rows.flush_full(&mut self.out);
        }
        rows.flush(&mut self.out);
    }

    /// Services that carry at least one flow.
    fn active_services(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.flows.iter().map(|f| f.service as usize).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn summary(&self) -> Map<String, Value> {
        let span = secs(self.stopped.saturating_sub(self.warmup).max(1));
        let mut by_service = Map::new();
        for svc in self.active_services() {
            by_service.insert(svc.to_string(), json!(self.goodput_after_warmup[svc] as f64 * 8.0 / span / 1e9));
        }
        let marks: u64 = self.net.ports.iter().flat_map(|p| p.qdisc.queues.iter()).map(|q| q.marked).sum();
        let rounds = self.stats.incast_rounds;
        let incast = if rounds == 0 { Value::Null } else { json!(self.stats.incast_gbps_sum / rounds as f64) };
        let events = self.q.processed;
        let mut m = Map::new();
        m.insert("events".into(), json!(events));
        m.insert("peak_pending_events".into(), json!(self.q.peak));
        m.insert("wall_seconds".into(), json!(self.wall_seconds));
        m.insert("events_per_second".into(), json!(events as f64 / self.wall_seconds.max(1e-9)));
        m.insert("sim_seconds".into(), json!(secs(self.stopped)));
        // "finished": every sized flow completed; "duration": run.duration
        // was reached first (sized flows may be unfinished); "interrupted":
        // stopped early, and the outputs end there.
        let ended_by = if self.interrupted {
            "interrupted"
        } else if self.unfinished == 0 && !self.open_ended {
            "finished"
        } else {
            "duration"
        };
        m.insert("ended_by".into(), json!(ended_by));
        if self.interrupted {
            m.insert("complete".into(), json!(false));
        }
        m.insert("flows_unfinished".into(), json!(self.unfinished));
        m.insert("packets_sent".into(), json!(self.sent));
        m.insert("packets_delivered".into(), json!(self.delivered));
        m.insert("packets_dropped".into(), json!(self.dropped));
        // ML-ECN §IV-D's packet drop rate: of all packets hosts sent.
        m.insert("drop_rate".into(), json!(self.dropped as f64 / self.sent.max(1) as f64));
        m.insert("packets_in_flight".into(), json!(self.packets_in_flight()));
        m.insert("arena_live".into(), json!(self.arena.live()));
        m.insert("ce_marks".into(), json!(marks));
        m.insert("goodput_gbps_by_service".into(), Value::Object(by_service));
        m.insert("incast_goodput_gbps".into(), incast);
        m.insert("incast_rounds_completed".into(), json!(rounds));
        m.insert("timeouts".into(), json!(self.flows.iter().map(|f| f.tx.timeouts as u64).sum::<u64>()));
        m.insert("retransmits".into(), json!(self.flows.iter().map(|f| f.tx.retransmits as u64).sum::<u64>()));
        m.insert("flows_completed".into(), json!(self.flows.iter().filter(|f| f.finish().is_some()).count()));
        if let Some(c) = &self.conns {
            // Per-pair connections opened, first ones and extra ones.
            m.insert("connections_opened".into(), json!(c.pool.opened()));
        }
        if !self.captures.is_empty() {
            let mut pc = Map::new();
            for c in &self.captures {
                pc.insert(c.name.clone(), json!(c.packets));
            }
            m.insert("pcap_packets".into(), Value::Object(pc));
        }
        m
    }
}

/// A packet was just queued at `p` (port `port`): true when the port is
/// free to send now (the caller starts it); otherwise make sure a departure
/// is due, unless one already is.
#[inline(always)]
fn arm_departure(p: &mut crate::topology::Port, q: &mut EventQueue, port: u32, now: Time) -> bool {
    if p.txdone_pending || (p.lazy && p.qdisc.packets > 1) {
        // Pending already; or busy, or a departure due now that runs after
        // this arrival (see `catch_up`).
        return false;
    }
    if now >= p.busy_until {
        return true;
    }
    if p.lazy {
        p.txdone_sched = now;
    } else {
        p.txdone_pending = true;
        q.tx_done(port, p.busy_until);
    }
    false
}

/// The ports whose queues are sampled (`run.sample_ports`).
fn sampled_ports(net: &Network, sel: &OneOrList<String>) -> Result<Vec<u32>, ConfigError> {
    let switch_ports = || (0..net.ports.len() as u32).filter(|&p| net.ports[p as usize].switch.is_some());
    Ok(match sel {
        OneOrList::All(s) if s == "all" => switch_ports().collect(),
        OneOrList::All(s) if s == "auto" => {
            let v: Vec<u32> = switch_ports().collect();
            if v.len() <= 64 {
                v
            } else {
                Vec::new()
            }
        }
        OneOrList::All(s) if s == "none" => Vec::new(),
        OneOrList::All(s) if s == "hosts" => switch_ports().filter(|&p| net.is_host(net.ports[p as usize].peer)).collect(),
        OneOrList::All(s) => {
            return Err(ConfigError(format!(
                "run.sample_ports = {s:?}: expected \"auto\", \"all\", \"none\", \"hosts\" or a list of port names like \"switch:host2\""
            )))
        }
        OneOrList::List(names) => {
            let mut v = Vec::with_capacity(names.len());
            for (i, name) in names.iter().enumerate() {
                match switch_ports().find(|&p| net.port_name(p) == *name) {
                    Some(p) => v.push(p),
                    None => {
                        return Err(ConfigError(format!(
                            "run.sample_ports[{i}] = {name:?}: no such switch port; ports are named \"node:peer\", e.g. {:?}",
                            switch_ports().next().map(|p| net.port_name(p)).unwrap_or_default()
                        )))
                    }
                }
            }
            v
        }
    })
}

/// The ports whose packets are captured (`run.pcap`), in the order listed.
fn captured_ports(net: &Network, sel: &OneOrList<String>, key: &str) -> Result<Vec<u32>, ConfigError> {
    let names: Vec<&String> = match sel {
        OneOrList::All(s) => vec![s],
        OneOrList::List(l) => l.iter().collect(),
    };
    let switch_ports = || (0..net.ports.len() as u32).filter(|&p| net.ports[p as usize].switch.is_some());
    let mut v = Vec::with_capacity(names.len());
    for (i, name) in names.into_iter().enumerate() {
        match switch_ports().find(|&p| net.port_name(p) == *name) {
            Some(p) => v.push(p),
            None => {
                return Err(ConfigError(format!(
                    "{key}[{i}] = {name:?}: no such switch port; ports are named \"node:peer\", e.g. {:?}",
                    switch_ports().next().map(|p| net.port_name(p)).unwrap_or_default()
                )))
            }
        }
    }
    Ok(v)
}
