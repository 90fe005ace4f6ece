//! The recorder: what a run writes down. Queue samples, port traces and
//! packet captures as the run goes, per-flow and per-port tables and the
//! summary at its end, all handed to the sink through `Output` as they are
//! produced (tables in batches, so a long run never holds them whole).

use super::apps::{Flow, FlowKind};
use super::World;
use crate::config::{Config, ConfigError, OneOrList};
use crate::engine::Event;
use crate::network::topology::Network;
use crate::outputs::output::{Output, Sink};
use crate::outputs::pcap::Capture;
use crate::outputs::stats::Stats;
use crate::outputs::tables::{FlowRows, PortRows};
use crate::units::{secs, Time};
use serde_json::{json, Map, Value};

pub struct Recorder<'a> {
    pub(super) stats: Stats,
    pub(super) sample_ports: Vec<u32>,
    /// Packet captures of `run.pcap`'s ports.
    pub(super) captures: Vec<Capture>,
    /// `run.trace_from`, `run.trace_to`.
    pub(super) trace_window: (Time, Time),
    /// `run.trace_cwnd`'s flows, by id, with the (cwnd, ssthresh) of each
    /// one's last row (NaN before its first); empty when none is traced,
    /// so that `try_send` tests one length and allocates nothing.
    pub(super) cwnd_traced: Vec<(u32, f64, f64)>,
    /// Where tables and captures go as they are produced.
    pub(super) out: Output<'a>,
    /// When the run stopped: the duration, or earlier when all finished.
    pub(super) stopped: Time,
    pub sent: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Payload bytes delivered in order after warmup, per service.
    pub(super) goodput_after_warmup: Vec<u64>,
    pub(super) wall_seconds: f64,
    /// The run was stopped before its end (Ctrl-C).
    pub(super) interrupted: bool,
}

impl<'a> Recorder<'a> {
    /// What `cfg`'s run records, into `sink`: marks the captured and traced
    /// ports of `net`, and keeps goodput for the services `flows` use.
    pub(super) fn new(
        cfg: &Config,
        net: &mut Network,
        flows: &[Flow],
        sink: &'a mut dyn Sink,
    ) -> Result<Recorder<'a>, ConfigError> {
        let sample_ports = sampled_ports(net, &cfg.run.sample_ports)?;
        let mut captures = Vec::new();
        for (i, p) in captured_ports(net, &cfg.run.pcap, "run.pcap")?.into_iter().enumerate() {
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
        let traced = captured_ports(net, &cfg.run.trace_ports, "run.trace_ports")?;
        let tracing = !traced.is_empty();
        for p in traced {
            net.ports[p as usize].set_trace(true);
        }
        let trace_window = (
            cfg.run.trace_from.map(|d| d.0).unwrap_or(cfg.run.warmup.0),
            cfg.run.trace_to.map(|d| d.0).unwrap_or(Time::MAX),
        );
        let mut cwnd_traced: Vec<(u32, f64, f64)> = Vec::with_capacity(cfg.run.trace_cwnd.len());
        for (i, &f) in cfg.run.trace_cwnd.iter().enumerate() {
            if f as usize >= flows.len() {
                let n = flows.len();
                let allowed =
                    if n == 0 { "the run has no flows".to_string() } else { format!("flows are 0..{}", n - 1) };
                return Err(ConfigError(format!("run.trace_cwnd[{i}] = {f}: no such flow; {allowed}")));
            }
            if cwnd_traced.iter().any(|c| c.0 == f) {
                return Err(ConfigError(format!("run.trace_cwnd[{i}] = {f}: listed twice; each flow is traced once")));
            }
            cwnd_traced.push((f, f64::NAN, f64::NAN));
        }
        cwnd_traced.sort_unstable_by_key(|c| c.0);
        let tracing_cwnd = !cwnd_traced.is_empty();
        let services = cfg.switch.queues as usize;
        let mut active: Vec<usize> = flows.iter().map(|f| f.service as usize).collect();
        active.sort_unstable();
        active.dedup();
        Ok(Recorder {
            stats: Stats { tracing, tracing_cwnd, ..Stats::new(services, active, cfg.run.goodput_interval.0) },
            sample_ports,
            captures,
            trace_window,
            cwnd_traced,
            out: Output::new(sink),
            stopped: cfg.end(),
            sent: 0,
            delivered: 0,
            dropped: 0,
            goodput_after_warmup: vec![0; services],
            wall_seconds: 0.0,
            interrupted: false,
        })
    }
}

impl World<'_> {
    pub(super) fn sample(&mut self) {
        let now = self.q.now;
        // Departures due by this instant: a TxDone runs before a sample of
        // its picosecond (`engine.rs`).
        for i in 0..self.rec.sample_ports.len() {
            self.catch_up(self.rec.sample_ports[i], now);
        }
        let t = secs(now);
        let rows = &mut self.rec.stats.queues;
        for &pi in &self.rec.sample_ports {
            let p = &self.fabric.net.ports[pi as usize];
            for qi in 0..p.qdisc.sampled_queues() {
                let (bytes, packets) = p.qdisc.queue_occupancy(qi);
                rows.push(t, pi, qi as u32, bytes, packets as u32);
            }
        }
        rows.flush_full(&mut self.rec.out);
        if self.lossless.is_some() {
            self.sample_buffers(t);
        }
        let next = now + self.cfg.run.sample_interval.0;
        if next <= self.end {
            self.q.at(next, Event::Sample);
        }
    }

    /// A row of flow `fid`'s window when it is traced and its cwnd or
    /// ssthresh moved since its last row (`run.trace_cwnd`).
    pub(super) fn trace_cwnd(&mut self, fid: u32) {
        let Ok(i) = self.rec.cwnd_traced.binary_search_by_key(&fid, |c| c.0) else { return };
        let now = self.q.now;
        if !(self.rec.trace_window.0..self.rec.trace_window.1).contains(&now) {
            return;
        }
        let w = &self.apps.flows[fid as usize].tx.w;
        let (cwnd, ssthresh) = (w.cwnd, w.ssthresh);
        let last = &mut self.rec.cwnd_traced[i];
        // NaN never equals: a flow's first row is always written.
        if last.1 == cwnd && last.2 == ssthresh {
            return;
        }
        (last.1, last.2) = (cwnd, ssthresh);
        self.rec.stats.cwnd.push(secs(now), fid, cwnd, ssthresh);
    }

    // ---------------- outputs ----------------

    /// Packets in queues plus on the wire, counted by walking them.
    pub fn packets_in_flight(&self) -> u64 {
        let queued: u64 = self.fabric.net.ports.iter().map(|p| p.qdisc.packets).sum();
        queued + self.fabric.in_transit
    }

    /// After [`World::run`], finished or stopped: hand the rest of every
    /// table and capture to the sink and return the summary. Per-flow and
    /// per-port records go now, in batches: their counters can change
    /// until the run ends.
    pub fn finish(&mut self) -> Result<Map<String, Value>, String> {
        let has_duration = self.end != crate::config::NO_END;
        self.flows_table();
        self.rec.stats.finish(self.rec.stopped, has_duration, &mut self.rec.out);
        self.ports_table();
        if self.lossless.is_some() {
            self.lossless_table();
        }
        for c in &mut self.rec.captures {
            c.flush(&mut self.rec.out);
        }
        match self.rec.out.failed.take() {
            Some(e) => Err(e),
            None => Ok(self.summary()),
        }
    }

    fn flows_table(&mut self) {
        let nan = f64::NAN;
        let ideal = self.ideal_fcts();
        let mut rows = FlowRows::default();
        for (id, (f, log)) in self.apps.flows.iter().zip(&self.apps.logs).enumerate() {
            let took = match (log.opened, f.finish()) {
                (Some(a), Some(b)) => Some(b - a),
                _ => None,
            };
            // From the integer times, so a flow that met its ideal is at 1.0 exactly.
            let slowdown = match (took, ideal[id]) {
                (Some(t), Some(i)) if i > 0 => t as f64 / i as f64,
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
                took.map(secs).unwrap_or(nan),
                ideal[id].map(secs).unwrap_or(nan),
                slowdown,
                f.rx.rcv_nxt,
                f.tx.timeouts,
                f.tx.retransmits,
                log.spurious,
                f.rx.ce_received,
                log.drops,
                log.reordered,
                kind.to_string(),
            );
            rows.flush_full(&mut self.rec.out);
        }
        rows.flush(&mut self.rec.out);
    }

    fn ports_table(&mut self) {
        let mut rows = PortRows::default();
        for (i, p) in self.fabric.net.ports.iter().enumerate() {
            let c: Vec<_> = (0..p.qdisc.queues.len()).map(|q| p.qdisc.counters(q)).collect();
            let total = p.qdisc.port_counters();
            let (node, peer) =
                (&self.fabric.net.nodes[p.node as usize].name, &self.fabric.net.nodes[p.peer as usize].name);
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
            rows.flush_full(&mut self.rec.out);
        }
        rows.flush(&mut self.rec.out);
    }

    /// Services that carry at least one flow.
    fn active_services(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self.apps.flows.iter().map(|f| f.service as usize).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn summary(&self) -> Map<String, Value> {
        let span = secs(self.rec.stopped.saturating_sub(self.warmup).max(1));
        let mut by_service = Map::new();
        for svc in self.active_services() {
            by_service.insert(svc.to_string(), json!(self.rec.goodput_after_warmup[svc] as f64 * 8.0 / span / 1e9));
        }
        let marks: u64 = self.fabric.net.ports.iter().flat_map(|p| p.qdisc.queues.iter()).map(|q| q.marked).sum();
        let rounds = self.rec.stats.incast_rounds;
        let incast = if rounds == 0 { Value::Null } else { json!(self.rec.stats.incast_gbps_sum / rounds as f64) };
        let events = self.q.processed;
        let mut m = Map::new();
        m.insert("events".into(), json!(events));
        m.insert("peak_pending_events".into(), json!(self.q.peak));
        m.insert("wall_seconds".into(), json!(self.rec.wall_seconds));
        m.insert("events_per_second".into(), json!(events as f64 / self.rec.wall_seconds.max(1e-9)));
        m.insert("sim_seconds".into(), json!(secs(self.rec.stopped)));
        // "finished": every sized flow completed; "duration": run.duration
        // was reached first (sized flows may be unfinished); "interrupted":
        // stopped early, and the outputs end there.
        let ended_by = if self.rec.interrupted {
            "interrupted"
        } else if self.apps.unfinished == 0 && !self.apps.open_ended {
            "finished"
        } else {
            "duration"
        };
        m.insert("ended_by".into(), json!(ended_by));
        if self.rec.interrupted {
            m.insert("complete".into(), json!(false));
        }
        m.insert("flows_unfinished".into(), json!(self.apps.unfinished));
        m.insert("packets_sent".into(), json!(self.rec.sent));
        m.insert("packets_delivered".into(), json!(self.rec.delivered));
        m.insert("packets_dropped".into(), json!(self.rec.dropped));
        // ML-ECN §IV-D's packet drop rate: of all packets hosts sent.
        m.insert("drop_rate".into(), json!(self.rec.dropped as f64 / self.rec.sent.max(1) as f64));
        m.insert("packets_in_flight".into(), json!(self.packets_in_flight()));
        m.insert("arena_live".into(), json!(self.arena.live()));
        m.insert("ce_marks".into(), json!(marks));
        m.insert("goodput_gbps_by_service".into(), Value::Object(by_service));
        m.insert("incast_goodput_gbps".into(), incast);
        m.insert("incast_rounds_completed".into(), json!(rounds));
        m.insert("timeouts".into(), json!(self.apps.flows.iter().map(|f| f.tx.timeouts as u64).sum::<u64>()));
        m.insert("retransmits".into(), json!(self.apps.flows.iter().map(|f| f.tx.retransmits as u64).sum::<u64>()));
        // Copies the receiver already held: retransmissions not needed.
        m.insert("spurious_retransmits".into(), json!(self.apps.logs.iter().map(|l| l.spurious as u64).sum::<u64>()));
        m.insert("flows_completed".into(), json!(self.apps.flows.iter().filter(|f| f.finish().is_some()).count()));
        if let Some(c) = &self.apps.conns {
            // Per-pair connections opened, first ones and extra ones.
            m.insert("connections_opened".into(), json!(c.pool.opened()));
        }
        if !self.rec.captures.is_empty() {
            let mut pc = Map::new();
            for c in &self.rec.captures {
                pc.insert(c.name.clone(), json!(c.packets));
            }
            m.insert("pcap_packets".into(), Value::Object(pc));
        }
        if self.lossless.is_some() {
            self.lossless_summary(&mut m);
        }
        self.rdma_summary(&mut m);
        // "deadlock": PFC's deadlock check ended the run (`lossless/deadlock.rs`).
        if self.lossless.as_ref().is_some_and(|l| l.deadlock.is_some()) {
            m.insert("ended_by".into(), json!("deadlock"));
        }
        m
    }
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
