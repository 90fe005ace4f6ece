//! A built experiment and its event loop: hosts' TCP and applications meet
//! switch ports here. Every handler is a small function of (state, event).
//!
//! `World` itself is the event queue, the packet arena and the loop that
//! hands each event to its handler. The state the handlers keep is split by
//! concern, each part in its own file beside the handlers that own it:
//!
//! - `fabric`: switch ports, links and routing (ECMP);
//! - `hosts`: the hosts' NICs and TCP stacks (LSO, receive batching, stage
//!   tags);
//! - `apps`: the applications: flows, serial chains, per-pair connections,
//!   incast rounds, pings, workload arrivals;
//! - `recorder`: sampling, traces and captures, counters, the output tables
//!   and the summary (`ideal`: each flow's ideal FCT, for its table).
//! - `lossless`: shared buffers and PFC, in the runs that have them.
//!
//! A handler that crosses concerns (most do: a packet leaves a host, crosses
//! ports and wakes a sender) stays a `World` method, in the file of the
//! concern it serves. So the per-packet path is still one `&mut self`
//! reaching plain fields: no handles between the parts, no indirection and
//! no dynamic dispatch, and the same code as when `World` was one struct.

mod apps;
#[cfg(test)]
mod cwnd_tests;
mod fabric;
mod hosts;
mod ideal;
mod lossless;
pub(crate) mod parallel;
mod partition;
mod rdma;
mod recorder;

pub use apps::{Apps, Flow, FlowKind, FlowLog};
pub use fabric::{Fabric, FlowPath};
pub use recorder::Recorder;

use crate::config::{Config, ConfigError};
use crate::engine::{Event, EventQueue};
use crate::network::topology::NodeKind;
use crate::outputs::output::Sink;
use crate::packet::{Arena, NO_HOP};
use crate::prefetch::{prefetch, prefetch_all};
use crate::units::{secs, Time};
use hosts::Hosts;

/// Why a run stopped before its end.
#[derive(Debug)]
pub enum Stop {
    /// The progress callback asked to stop.
    Interrupted,
    /// The sink failed; its message.
    Output(String),
}

/// Why a run produced no report.
#[derive(Debug)]
pub enum RunError {
    Config(ConfigError),
    /// The progress callback asked to stop.
    Interrupted,
    /// The sink could not take the outputs; its message.
    Output(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Config(e) => write!(f, "{e}"),
            RunError::Interrupted => f.write_str("run interrupted"),
            RunError::Output(e) => write!(f, "writing the outputs failed: {e}"),
        }
    }
}

/// `crate::run_into` on the sequential engine (one event queue); the
/// partitioned one is `parallel::run_into`, which falls back on this one
/// where there is nothing to cut.
pub(crate) fn run_into(
    cfg: &Config,
    progress: &mut dyn FnMut(f64, f64) -> bool,
    sink: &mut dyn Sink,
) -> Result<serde_json::Map<String, serde_json::Value>, RunError> {
    let mut keep_going = || progress(0.0, 0.0);
    let Some(mut w) = World::new_until(cfg, sink, &mut keep_going).map_err(RunError::Config)? else {
        // Stopped while building: nothing ran, so there is nothing to write.
        return Err(RunError::Interrupted);
    };
    crate::huge_pages::advise_large_run();
    match w.run(progress) {
        Ok(()) | Err(Stop::Interrupted) => w.finish().map_err(RunError::Output),
        Err(Stop::Output(e)) => Err(RunError::Output(e)),
    }
}

/// One built experiment: the event queue and the packet arena, which every
/// handler uses, and each part's own state (see the module's doc).
pub struct World<'a> {
    cfg: &'a Config,
    pub q: EventQueue,
    pub arena: Arena,
    /// Switch ports, their links, routing.
    pub fabric: Fabric,
    /// The hosts' NICs and TCP stacks.
    hosts: Hosts,
    /// The flows and the applications that drive them.
    pub apps: Apps,
    /// What the run records, and where it goes.
    pub rec: Recorder<'a>,
    /// Shared buffers and PFC (`lossless/`), where the run has them.
    lossless: Option<Box<lossless::Lossless>>,
    /// RoCEv2 queue pairs (`rdma.rs`), in a run with an RDMA transport.
    rdma: Option<Box<rdma::Rdma>>,
    end: Time,
    warmup: Time,
}

impl<'a> World<'a> {
    /// Build the experiment; its outputs will go to `sink`. Each part builds
    /// its own state; the order is the one errors are reported in (a bad
    /// workload before a bad port name).
    pub fn new(cfg: &'a Config, sink: &'a mut dyn Sink) -> Result<World<'a>, ConfigError> {
        match World::new_until(cfg, sink, &mut || true) {
            Ok(Some(w)) => Ok(w),
            Ok(None) => unreachable!("never asked to stop"),
            Err(e) => Err(e),
        }
    }

    /// As [`World::new`], asking `keep_going` a few times a second during
    /// the long parts of the build (a large fabric's routes) whether to go
    /// on: Ok(None) when it said no.
    pub fn new_until(
        cfg: &'a Config,
        sink: &'a mut dyn Sink,
        keep_going: &mut dyn FnMut() -> bool,
    ) -> Result<Option<World<'a>>, ConfigError> {
        let Some(mut net) = Fabric::network(cfg, keep_going) else { return Ok(None) };
        let echo = crate::host::cc::Cc::new(&cfg.transport).echo_mode();
        // ML-ECN's classes, resolved here for untagged packets (stage 0:
        // the small class) and in `send_packet` for data.
        let classes = crate::switch::classifier::stage_classes(&cfg.switch, cfg.host.stages.len());
        let mut apps = Apps::new(cfg, &net, echo, classes.as_ref())?;
        let rec = Recorder::new(cfg, &mut net, &apps.flows, sink)?;
        let hosts = Hosts::new(cfg, echo, classes, apps.flows.len(), net.hosts);
        let lossless = lossless::Lossless::new(cfg, &mut net)?.map(Box::new);
        let rdma = rdma::Rdma::new(cfg, &mut net, &mut apps.flows).map(Box::new);
        let fabric = Fabric::new(cfg, net);
        Ok(Some(World {
            cfg,
            q: EventQueue::new(),
            arena: Arena::default(),
            fabric,
            rdma,
            hosts,
            apps,
            rec,
            lossless,
            end: cfg.end(),
            warmup: cfg.run.warmup.0,
        }))
    }

    // ---------------- the run loop ----------------

    /// Run to the configured duration, or until every flow has finished.
    /// `progress(sim_s, fraction_done)` is called a few times a second of
    /// wall time; returning false stops the run, as does a failing sink.
    /// Either way [`World::finish`] can still write what the run has done.
    pub fn run(&mut self, progress: &mut dyn FnMut(f64, f64) -> bool) -> Result<(), Stop> {
        let wall = std::time::Instant::now();
        for f in 0..self.apps.flows.len() as u32 {
            let fl = &self.apps.logs[f as usize];
            let later_arrival = (f as usize) > self.apps.workload.0 && (f as usize) < self.apps.workload.1;
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
        if !self.rec.sample_ports.is_empty() {
            self.q.at(0, Event::Sample);
        }
        let mut last_report = wall;
        let ends_early = !self.apps.open_ended && self.apps.unfinished > 0;
        // The packet whose lines were asked for an event ago (see below).
        let mut ahead = NO_HOP;
        let early_hops = self.fabric.early_hops;
        let grid = if ends_early { partition::grid(self.cfg, &self.fabric.net) } else { None };
        let (mut limit, mut ran_to) = (self.end, None);
        while let Some((_, ev)) = self.q.pop_until(limit) {
            if early_hops {
                ahead = self.load_two_ahead(ahead);
            } else if let Some(Event::Arrive { port, pkt }) = self.q.likely_next() {
                // Its packet and the port it left (all four lines: its
                // catch-up reads the last two) are the next event's first,
                // and usually missing, reads.
                prefetch(self.arena.get(pkt));
                prefetch_all(&self.fabric.net.ports[port as usize]);
            }
            self.dispatch(ev);
            if ends_early && self.apps.unfinished == 0 && ran_to.is_none() {
                self.rec.stopped = self.q.now;
                // On to the end of the grid window, as the partitioned
                // engine runs (`partition::grid`).
                let Some(g) = grid else { break };
                limit = ((self.q.now / g + 1).saturating_mul(g) - 1).min(self.end);
                ran_to = Some(limit);
            }
            if self.q.processed & 0x3FFFF == 0 {
                if let Some(e) = &self.rec.out.failed {
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
        if self.end == crate::config::NO_END && self.rec.stopped == self.end {
            // Nothing left to happen (cannot be with sized flows unfinished,
            // whose timers always run): the run ends at its last event.
            self.rec.stopped = self.q.now;
        }
        // Departures due by the last instant run, so the ports' counters
        // are final.
        self.catch_up_all(ran_to.unwrap_or(self.rec.stopped));
        self.rec.wall_seconds = wall.elapsed().as_secs_f64();
        match &self.rec.out.failed {
            Some(e) => Err(Stop::Output(e.clone())),
            None => Ok(()),
        }
    }

    /// On a large fabric (`Fabric::early_hops`), a landing packet's first,
    /// and mostly missing, reads: the packet, the port it left (all four
    /// lines: its catch-up reads the last two), its resolved hop, then the
    /// port that hop names. The first three are asked for two events ahead;
    /// the last, which needs the hop, one ahead. `ahead`: the packet asked
    /// for two ahead at the last event; returns this event's.
    #[inline(always)]
    fn load_two_ahead(&self, ahead: u32) -> u32 {
        let [next, after] = self.q.likely_next_two();
        if let Some(Event::Arrive { port, pkt }) = next {
            if pkt == ahead {
                let hop = self.arena.hop(pkt);
                if hop != NO_HOP {
                    prefetch_all(&self.fabric.net.ports[hop as usize]);
                }
            } else {
                prefetch(self.arena.get(pkt));
                prefetch_all(&self.fabric.net.ports[port as usize]);
            }
        }
        // (Its flow's lines, asked for one ahead where it lands at a host,
        // made no difference, nor its queue's and threshold's lines asked
        // for a third event ahead: paired, k = 32 and k = 8.)
        let Some(Event::Arrive { port, pkt }) = after else { return NO_HOP };
        prefetch(self.arena.get(pkt));
        prefetch(self.arena.hop_slot(pkt));
        prefetch_all(&self.fabric.net.ports[port as usize]);
        pkt
    }

    /// The run stops early, now: its outputs end here.
    #[cold]
    fn stop_at(&mut self, why: Stop, wall: std::time::Instant) -> Stop {
        self.rec.stopped = self.q.now;
        self.rec.interrupted = true;
        self.catch_up_all(self.rec.stopped);
        self.rec.wall_seconds = wall.elapsed().as_secs_f64();
        why
    }

    /// How far the run has got, in [0, 1]: simulated time over the
    /// duration, or without one the share of sized flows finished.
    fn progress_fraction(&self) -> f64 {
        if self.end != crate::config::NO_END {
            return (secs(self.q.now) / secs(self.end)).min(1.0);
        }
        let sized = self.apps.flows.iter().filter(|f| f.kind == FlowKind::Sized).count();
        1.0 - self.apps.unfinished as f64 / sized.max(1) as f64
    }

    /// Packet `pkt`, sent on `port`, lands at a switch that sends it on by
    /// `egress`.
    #[inline(always)]
    fn switch_arrive(&mut self, port: u32, pkt: u32, egress: u32) {
        // Start loading the egress port (if the run loop has not), so its
        // misses overlap the upstream port's catch-up.
        prefetch_all(&self.fabric.net.ports[egress as usize]);
        self.catch_up(port, self.q.now - 1);
        // By now the egress port's lines are likely in, so the address of
        // its queue's line costs no stall.
        let service = self.arena.get(pkt).service;
        self.fabric.net.ports[egress as usize].qdisc.prefetch_for(service);
        self.resolve_hop(egress, pkt);
        self.enqueue(egress, pkt, port);
    }

    /// Always inlined: the sequential loop (`run`) and the partitioned
    /// one (`parallel/mod.rs`) both call it, and left to itself the compiler
    /// then kept it out of line (the MQ-ECN and k = 8 bench points 2-3%
    /// slower, paired).
    #[inline(always)]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::TxDone { port } => {
                self.fabric.net.ports[port as usize].txdone_pending = false;
                self.start_tx(port);
            }
            Event::Arrive { port, pkt } => {
                self.fabric.in_transit -= 1;
                if self.fabric.early_hops {
                    let hop = self.arena.hop(pkt);
                    if hop != NO_HOP {
                        // A switch, its egress resolved a hop ago.
                        return self.switch_arrive(port, pkt, hop);
                    }
                }
                let node = self.fabric.net.ports[port as usize].peer;
                match self.fabric.net.nodes[node as usize].kind {
                    NodeKind::Switch { index } => {
                        let egress = self.route(index, pkt);
                        self.switch_arrive(port, pkt, egress)
                    }
                    NodeKind::Host { .. } => {
                        self.catch_up(port, self.q.now - 1);
                        if self.lossless.is_some() {
                            return self.host_lands(port, node, pkt);
                        }
                        self.host_arrive(node, pkt)
                    }
                }
            }
            Event::FlowStart { flow } => self.flow_start(flow),
            Event::FlowStop { flow } => {
                let tx = &mut self.apps.flows[flow as usize].tx;
                tx.limit = tx.limit.min(tx.max_sent);
            }
            Event::Rto { flow } => self.rto_fired(flow),
            Event::DelAck { flow } => {
                let f = &mut self.apps.flows[flow as usize];
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
            Event::Pfc { what } => self.pfc_event(what),
            Event::Rdma { what } => self.rdma_event(what),
        }
    }
}
