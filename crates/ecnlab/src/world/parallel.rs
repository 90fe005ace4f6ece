//! The partitioned engine (`run.threads`): one run on several cores.
//!
//! The fabric is cut into parts (`partition.rs`); each part is a whole
//! `World` of its own (the full fabric's state, of which it touches only
//! its own nodes' ports and its own hosts' ends of each flow) with its own
//! event queue. Parts advance together in windows as long as the shortest
//! link between two parts (conservative synchronisation, no rollback): a
//! packet one part sends at t lands in another at t + lookahead or later,
//! so within [t0, t0 + lookahead) no part can be sent anything it has not
//! got. Between windows the packets that crossed are handed to the parts
//! they land in, in a fixed order (sending part, then sending order), and
//! the next window starts at the earliest pending event anywhere.
//!
//! Nothing in a window depends on which thread runs which part, or when,
//! so the outputs are the same for every thread count (rayon runs the
//! parts). They depend on the parts: an event that crossed joins its
//! part's queue at the window's start, so among events of one picosecond it
//! runs after those the part scheduled for itself, where one queue would
//! have run them in scheduling order. The outputs differ from the
//! sequential engine's (`run.threads = 0`) in those ties only: another
//! equally valid order, not another model.
//!
//! What couples parts faster than a link is refused (`check`): incast
//! rounds, serial chains and per-pair connections (one host's event starts
//! another's at once), pings, queue samples, traces and captures (not
//! gathered across parts yet).

use super::partition::{Partitioning, LOCAL};
use super::World;
use crate::config::{Config, ConfigError};
use crate::engine::Event;
use crate::host::sack_blocks::{More, NO_MORE};
use crate::output::{Collect, Sink};
use crate::packet::{Kind, Packet};
use crate::prefetch::{prefetch, prefetch_all};
use crate::report::{Column, Table};
use crate::units::{secs, Time};
use crate::RunError;
use rayon::prelude::*;
use serde_json::{json, Map, Value};

/// A packet on a link between two parts, in the sending part's outbox
/// until the window ends.
pub struct Crossing {
    /// The part it lands in.
    pub to: u16,
    /// The port that sent it, and when it lands at the far end.
    pub port: u32,
    pub lands: Time,
    pub pkt: Packet,
    /// Its egress at the switch it lands on, if resolved early.
    pub hop: u32,
    /// An ACK's further SACK blocks (`host/sack_blocks.rs`), which live
    /// beside the sending part's packets, not in them.
    pub more: More,
}

/// Each part's own run state beside its `World`.
#[derive(Default, Clone, Copy)]
struct PartRun {
    /// Sized flows this part saw finish, and when the last one did.
    finished: usize,
    last_finish: Time,
}

impl World<'_> {
    /// Packet `id`, on the wire of `port` since now, lands in part `to`.
    #[cold]
    #[inline(never)]
    pub(super) fn send_across(&mut self, to: u16, port: u32, lands: Time, id: u32) {
        let mut pkt = *self.arena.get(id);
        let hop = self.arena.hop(id);
        self.arena.free(id);
        let mut more = NO_MORE;
        if pkt.kind == Kind::Ack && pkt.payload != 0 {
            more = self.take_sacks(pkt.payload);
            pkt.payload = 0;
        }
        self.fabric.outbox.push(Crossing { to, port, lands, pkt, hop, more });
    }

    /// A packet from another part: it lands here as if sent from here.
    fn take_crossing(&mut self, c: &Crossing) {
        let mut pkt = c.pkt;
        if c.more != NO_MORE {
            pkt.payload = self.hosts.sack_blocks.as_mut().expect("blocks only with sack_blocks").put(c.more);
        }
        let id = self.arena.alloc(pkt, pkt.ecmp);
        self.arena.set_hop(id, c.hop);
        self.q.arrive(c.port, c.lands, id);
        self.fabric.in_transit += 1;
    }

    /// Become part `me` of `parts`: links to other parts send by the
    /// outbox (and their ports run every departure as an event: a lazy
    /// port catches up when its packet lands, which happens in the other
    /// part), per-packet ECMP draws a stream of its own, and only this
    /// part's flows start here, each at its own time (the sequential
    /// engine chains workload starts, which would cross parts at once).
    fn enter_part(&mut self, me: u16, parts: &Partitioning) {
        self.fabric.partitioned = true;
        self.fabric.cross.clone_from(&parts.cross);
        for (p, &c) in self.fabric.net.ports.iter_mut().zip(&parts.cross) {
            if c != LOCAL {
                p.lazy = false;
            }
        }
        self.fabric.ecmp.reseed(self.cfg.run.seed, me as u64);
        for f in 0..self.apps.flows.len() {
            if parts.of_node[self.apps.flows[f].src as usize] != me {
                continue;
            }
            let log = &self.apps.logs[f];
            if log.start <= self.end {
                self.q.at(log.start, Event::FlowStart { flow: f as u32 });
            }
            if let Some(s) = log.stop.filter(|&s| s <= self.end) {
                self.q.at(s, Event::FlowStop { flow: f as u32 });
            }
        }
        self.apps.workload = (0, 0);
    }

    /// Run this part's events before `horizon` (and not after the run's
    /// end), counting in `run` the sized flows that finished here and when
    /// the last did.
    fn run_window(&mut self, horizon: Time, run: &mut PartRun) {
        let limit = horizon.saturating_sub(1).min(self.end);
        let mut unfinished = self.apps.unfinished;
        while let Some((_, ev)) = self.q.pop_until(limit) {
            if let Some(Event::Arrive { port, pkt }) = self.q.likely_next() {
                prefetch(self.arena.get(pkt));
                prefetch_all(&self.fabric.net.ports[port as usize]);
            }
            self.dispatch(ev);
            if self.apps.unfinished != unfinished {
                run.finished += unfinished - self.apps.unfinished;
                run.last_finish = self.q.now;
                unfinished = self.apps.unfinished;
            }
        }
    }
}

/// What the partitioned engine cannot run yet: one error naming the key.
fn check(cfg: &Config, w: &World) -> Result<(), ConfigError> {
    let refuse = |key: &str, what: &str| {
        Err(ConfigError(format!(
            "run.threads = {}: {key} {what}, which the partitioned engine does not run yet; allowed: \
             run.threads = 0 (the sequential engine), or leave {key} out",
            cfg.run.threads
        )))
    };
    if !cfg.incast.is_empty() {
        return refuse("incast", "is set (its rounds couple hosts at once)");
    }
    if !cfg.ping.is_empty() {
        return refuse("ping", "is set");
    }
    if !w.apps.serial_next.is_empty() {
        return refuse("flows[].serial", "is set (a flow's end starts the next at once)");
    }
    if w.apps.conns.is_some() {
        return refuse("workload.connections", "is \"per-pair\"");
    }
    if !w.rec.sample_ports.is_empty() {
        return refuse("run.sample_ports", "selects ports (set \"none\")");
    }
    if !w.rec.captures.is_empty() || cfg.run.traced() {
        return refuse("run.pcap / run.trace_ports", "name ports");
    }
    Ok(())
}

/// Run `cfg` on `cfg.run.threads` threads; outputs to `sink` as
/// `crate::run_into` does (the whole tables at the end).
pub fn run_into(
    cfg: &Config,
    progress: &mut dyn FnMut(f64, f64) -> bool,
    sink: &mut dyn Sink,
) -> Result<Map<String, Value>, RunError> {
    let wall = std::time::Instant::now();
    let mut keep_going = || progress(0.0, 0.0);
    // Part 0's fabric says how to cut it; each other part has its own.
    let (mut first, mut sinks) = (Collect::default(), Vec::<Collect>::new());
    let Some(w0) = World::new_until(cfg, &mut first, &mut keep_going).map_err(RunError::Config)? else {
        return Err(RunError::Interrupted);
    };
    let parts = Partitioning::new(cfg, &w0.fabric.net).map_err(RunError::Config)?;
    if parts.parts == 1 {
        // Nothing to cut: the sequential engine, whose outputs these are.
        return crate::run_into_sequential(cfg, progress, sink);
    }
    check(cfg, &w0).map_err(RunError::Config)?;
    sinks.resize_with(parts.parts as usize - 1, Collect::default);
    let mut worlds = Vec::with_capacity(parts.parts as usize);
    worlds.push(w0);
    for s in sinks.iter_mut() {
        let Some(w) = World::new_until(cfg, s, &mut keep_going).map_err(RunError::Config)? else {
            return Err(RunError::Interrupted);
        };
        worlds.push(w);
    }
    for (me, w) in worlds.iter_mut().enumerate() {
        w.enter_part(me as u16, &parts);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.run.threads as usize)
        .build()
        .map_err(|e| RunError::Config(ConfigError(format!("run.threads = {}: {e}", cfg.run.threads))))?;
    let end = cfg.end();
    let sized = worlds[0].apps.unfinished;
    let ends_early = !worlds[0].apps.open_ended && sized > 0;
    let mut runs = vec![PartRun::default(); worlds.len()];
    let mut stopped = end;
    let mut interrupted = false;
    let mut inbox: Vec<Crossing> = Vec::new();
    let mut t0 = 0;
    loop {
        // Windows on the pool's threads (a window is microseconds: handing
        // each one to the pool from this thread cost more than it ran),
        // back here every quarter second for the progress callback, which
        // may not leave this thread.
        let report = std::time::Instant::now() + std::time::Duration::from_millis(250);
        let done = pool.install(|| loop {
            let Some(t) = worlds.iter_mut().filter_map(|w| w.q.next_time()).min() else { return true };
            t0 = t;
            if t0 > end {
                return true;
            }
            let horizon = t0.saturating_add(parts.lookahead);
            worlds.par_iter_mut().zip(runs.par_iter_mut()).for_each(|(w, r)| w.run_window(horizon, r));
            for p in 0..worlds.len() {
                std::mem::swap(&mut inbox, &mut worlds[p].fabric.outbox);
                for c in inbox.drain(..) {
                    worlds[c.to as usize].take_crossing(&c);
                }
            }
            if ends_early && runs.iter().map(|r| r.finished).sum::<usize>() == sized {
                stopped = runs.iter().map(|r| r.last_finish).max().unwrap_or(0);
                return true;
            }
            if std::time::Instant::now() > report {
                return false;
            }
        });
        if done {
            break;
        }
        let now = t0.min(end);
        let fraction = if end != crate::config::NO_END { secs(now) / secs(end) } else { 0.0 };
        if !progress(secs(now), fraction.min(1.0)) {
            interrupted = true;
            stopped = now;
            break;
        }
    }
    if !interrupted && end == crate::config::NO_END && stopped == end {
        stopped = worlds.iter().map(|w| w.q.now).max().unwrap_or(0);
    }
    let events: u64 = worlds.iter().map(|w| w.q.processed).sum();
    let peak: usize = worlds.iter().map(|w| w.q.peak).sum();
    let live: usize = worlds.iter().map(|w| w.arena.live()).sum();
    let has_duration = end != crate::config::NO_END;
    for w in worlds.iter_mut() {
        w.rec.stopped = stopped;
        w.catch_up_all(stopped);
    }
    gather(&mut worlds, &parts, sized - runs.iter().map(|r| r.finished).sum::<usize>());
    let (w0, rest) = worlds.split_first_mut().expect("two parts or more");
    for w in rest.iter_mut() {
        w.rec.stats.goodput.finish(stopped, has_duration, &mut w.rec.out);
    }
    w0.q.processed = events;
    w0.q.peak = peak;
    w0.rec.interrupted = interrupted;
    w0.rec.wall_seconds = wall.elapsed().as_secs_f64();
    let mut summary = w0.finish().map_err(RunError::Output)?;
    drop(worlds);
    summary.insert("arena_live".into(), json!(live));
    summary.insert("partitions".into(), json!(parts.parts));
    summary.insert("lookahead_seconds".into(), json!(secs(parts.lookahead)));
    summary.insert("partition_cut".into(), json!(parts.cut));
    write_tables(std::iter::once(first).chain(sinks), sink).map_err(RunError::Output)?;
    Ok(summary)
}

/// Move what each part owns into part 0, whose `finish` then writes the
/// run's tables: every port from its node's part, every flow's sender from
/// its source's part and its receiver from its destination's; the counters
/// summed. `unfinished`: sized flows no part saw finish.
fn gather(worlds: &mut [World], parts: &Partitioning, unfinished: usize) {
    let (w0, rest) = worlds.split_first_mut().expect("two parts or more");
    let part = |node: u32| parts.of_node[node as usize] as usize;
    for i in 0..w0.fabric.net.ports.len() {
        let owner = part(w0.fabric.net.ports[i].node);
        if owner != 0 {
            std::mem::swap(&mut w0.fabric.net.ports[i], &mut rest[owner - 1].fabric.net.ports[i]);
        }
    }
    let at_sender = w0.apps.fct_at_sender;
    for f in 0..w0.apps.flows.len() {
        let (s, d) = (part(w0.apps.flows[f].src), part(w0.apps.flows[f].dst));
        if s != 0 {
            std::mem::swap(&mut w0.apps.flows[f], &mut rest[s - 1].apps.flows[f]);
            w0.apps.logs[f].opened = rest[s - 1].apps.logs[f].opened;
        }
        // The receiver's end: in part d, or, when d is 0 and the sender's
        // end came from part s, in part s now.
        let rx_from = match (s, d) {
            (_, d) if d == s => None,
            (s, 0) => Some(s - 1),
            (_, d) => Some(d - 1),
        };
        if let Some(r) = rx_from {
            let (to, from) = (&mut w0.apps.flows[f], &mut rest[r].apps.flows[f]);
            std::mem::swap(&mut to.rx, &mut from.rx);
            (to.delack_event, to.last_data_ts, to.rx_high) = (from.delack_event, from.last_data_ts, from.rx_high);
            if !at_sender {
                to.finish = from.finish;
            }
        }
        if d != 0 {
            w0.apps.logs[f].reordered = rest[d - 1].apps.logs[f].reordered;
        }
        w0.apps.logs[f].drops = rest.iter().fold(w0.apps.logs[f].drops, |n, w| n + w.apps.logs[f].drops);
    }
    for w in rest.iter() {
        w0.rec.sent += w.rec.sent;
        w0.rec.delivered += w.rec.delivered;
        w0.rec.dropped += w.rec.dropped;
        w0.fabric.in_transit += w.fabric.in_transit;
        for (a, b) in w0.rec.goodput_after_warmup.iter_mut().zip(&w.rec.goodput_after_warmup) {
            *a += b;
        }
    }
    w0.apps.unfinished = unfinished;
}

/// Hand part 0's tables to `sink`, each whole, the goodput series summed
/// over the parts' (each part's receivers' deliveries, bin by bin).
fn write_tables(mut sinks: impl Iterator<Item = Collect>, sink: &mut dyn Sink) -> Result<(), String> {
    let first = sinks.next().expect("two parts or more");
    let mut bins: std::collections::BTreeMap<(u64, u32), f64> = std::collections::BTreeMap::new();
    let mut add = |t: &Table| {
        if let (Some(Column::F64(time)), Some(Column::U32(svc)), Some(Column::F64(g))) =
            (t.column("time"), t.column("service"), t.column("gbps"))
        {
            for i in 0..time.len() {
                *bins.entry((time[i].to_bits(), svc[i])).or_insert(0.0) += g[i];
            }
        }
    };
    for t in first.tables.iter().filter(|t| t.name == "goodput") {
        add(t);
    }
    for s in sinks {
        for t in s.tables.iter().filter(|t| t.name == "goodput") {
            add(t);
        }
    }
    for mut t in first.tables {
        if t.name == "goodput" {
            t.columns = vec![
                ("time", Column::F64(bins.keys().map(|k| f64::from_bits(k.0)).collect())),
                ("service", Column::U32(bins.keys().map(|k| k.1).collect())),
                ("gbps", Column::F64(bins.values().copied().collect())),
            ];
        }
        sink.rows(t)?;
    }
    for (port, bytes) in first.captures {
        sink.capture(&port, &bytes)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use serde_json::Value;

    fn fat_tree(extra: &str) -> String {
        format!(
            "[run]\nseed = 3\n{extra}\n[topology]\nkind = \"fat-tree\"\nk = 4\n\
             link_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
             [switch]\nbuffer = \"150KB\"\nmarking = \"per-queue\"\nthreshold = \"20pkt\"\n\
             [transport]\ncc = \"dctcp\"\n\
             [workload]\nkind = \"poisson\"\nload = 0.6\nflows = 800\ndistribution = \"web_search\"\n"
        )
    }

    fn fingerprint(text: &str) -> serde_json::Map<String, Value> {
        crate::golden::fingerprint(&Config::from_toml(text).unwrap()).unwrap()
    }

    fn summary(text: &str) -> serde_json::Map<String, Value> {
        crate::run(&Config::from_toml(text).unwrap(), &mut |_, _| true).unwrap().summary
    }

    /// The promise: the same outputs for every thread count, one
    /// included (every table's digest and every summary number but the
    /// wall clock's).
    #[test]
    fn every_thread_count_gives_the_same_outputs() {
        for parts in [2, 3, 4] {
            let one = fingerprint(&fat_tree(&format!("threads = 1\npartitions = {parts}")));
            for n in [2, 3, 4] {
                let other = fingerprint(&fat_tree(&format!("threads = {n}\npartitions = {parts}")));
                assert_eq!(one, other, "{parts} parts, threads = {n}");
            }
        }
    }

    /// Packets are conserved across the parts: every packet sent was
    /// delivered, dropped or is still in the network, and every flow
    /// finished; and the run is the same model as the sequential engine's:
    /// its totals within a few per cent (the engines differ only in the
    /// order of same-picosecond events, which reshuffles a run as a seed
    /// does not quite: here 800 web-search flows at load 0.6).
    #[test]
    fn parts_conserve_packets_and_match_the_sequential_engine() {
        let par = summary(&fat_tree("threads = 2"));
        let seq = summary(&fat_tree(""));
        let n = |m: &serde_json::Map<String, Value>, k: &str| m[k].as_f64().unwrap();
        assert_eq!(par["partitions"], 2);
        assert_eq!(
            n(&par, "packets_sent"),
            n(&par, "packets_delivered") + n(&par, "packets_dropped") + n(&par, "packets_in_flight")
        );
        assert_eq!(n(&par, "flows_completed"), 800.0);
        assert_eq!(par["ended_by"], "finished");
        // Same flows, same sizes: delivered packets within 3% (measured:
        // equal), marks within 5% (measured: 205,519 against 205,136). Its
        // events are ~9% more: a port on a link between parts runs each
        // departure as an event of its own (see `enter_part`).
        for (key, tol) in [("packets_delivered", 0.03), ("ce_marks", 0.05)] {
            let r = n(&par, key) / n(&seq, key);
            eprintln!("{key}: {} / {}", n(&par, key), n(&seq, key));
            assert!((1.0 - tol..1.0 + tol).contains(&r), "{key}: partitioned / sequential = {r}");
        }
    }

    #[test]
    fn what_couples_parts_at_once_is_refused_by_name() {
        let text = fat_tree("threads = 2\nsample_ports = \"all\"");
        let e = crate::run(&Config::from_toml(&text).unwrap(), &mut |_, _| true).err().unwrap();
        let msg = e.to_string();
        assert!(msg.contains("run.sample_ports") && msg.contains("run.threads = 0"), "{msg}");
    }
}
