//! The partitioned engine (`run.threads`): one run on several cores.
//!
//! The fabric is cut into parts (`partition.rs`); each part is a whole
//! `World` of its own (the full fabric's state, of which it touches only
//! its own nodes' ports and its own hosts' ends of each flow) with its own
//! event queue. Parts advance together in windows no longer than the
//! shortest link between two parts (conservative synchronisation, no
//! rollback): a packet one part sends at t lands in another at t +
//! lookahead or later, so within such a window no part can be sent
//! anything it has not got. Between windows the packets that crossed are
//! handed to the parts they land in, in a fixed order (sending part, then
//! sending order), and the next window is the grid window of the earliest
//! pending event anywhere.
//!
//! Nothing in a window depends on which thread runs which part, or when,
//! and nothing in a run depends on the cut: events of one picosecond run
//! in an order defined by the events (`engine.rs`), so each part's queue
//! runs its events as the sequential engine's one queue would, and windows
//! lie on a grid of the fabric's own (`partition::grid`). The outputs are
//! the sequential engine's (`run.threads = 0`) on any threads and parts
//! (`tests/golden.rs`, `tests.rs`); only the engine's own summary keys
//! differ (`golden::ENGINE_KEYS`).
//!
//! Each part samples its own ports' queues, traces and captures them, and
//! records the round trips of its own hosts' pings; `gather` and
//! `write_tables` merge those rows. Per-pair connections
//! (`host/apps/persistent.rs`) live in their sender's part, which numbers
//! them within their pair: a flow's connection id, its ECMP key, travels
//! with each of its packets that crosses, so its receiver's part hashes the
//! ACKs alike. Incast rounds couple hosts by messages,
//! which cross as packets do (`signals.rs`); `check` refuses a group whose
//! messages could land inside the window that sent them.

mod gather;
mod signals;

use super::partition::{Crossing, Partitioning, Signal, LOCAL};
use super::{RunError, World};
use crate::config::{Config, ConfigError};
use crate::engine::Event;
use crate::host::sack_blocks::NO_MORE;
use crate::outputs::output::{Collect, Sink};
use crate::prefetch::{prefetch, prefetch_all};
use crate::units::{secs, Time};
use gather::{gather, write_tables};
use rayon::prelude::*;
use serde_json::{json, Map, Value};

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
        if let Some(slot) = pkt.sack_slot() {
            more = self.take_sacks(slot);
            pkt.payload = 0;
        }
        let key = self.apps.conns.as_ref().filter(|_| !pkt.is_ping()).map_or(0, |c| c.path_key(pkt.flow));
        self.fabric.outbox.push(Crossing { to, port, lands, pkt, hop, more, key });
    }

    /// A packet from another part: it lands here as if sent from here.
    fn take_crossing(&mut self, c: &Crossing) {
        let mut pkt = c.pkt;
        if c.more != NO_MORE {
            pkt.payload = self.sack_slab().put(c.more);
        }
        if let Some(conns) = self.apps.conns.as_mut().filter(|_| !pkt.is_ping()) {
            // Its receiver's ACKs hash on it (and a part it only crosses
            // hands it on): the key cannot change once its sender chose it.
            conns.learn_path_key(pkt.flow, c.key);
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
        self.fabric.part_of.clone_from(&parts.of_node);
        self.fabric.me = me;
        self.rec.stats.goodput.keep_bytes();
        for g in 0..self.apps.incasts.len() {
            let flows = &self.apps.incasts[g].flows;
            let mut on: Vec<u16> =
                flows.iter().map(|&f| parts.of_node[self.apps.flows[f as usize].src as usize]).collect();
            on.push(parts.of_node[self.incast_receiver(g) as usize]);
            on.sort_unstable();
            on.dedup();
            self.apps.incasts[g].parts = on;
        }
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
        // Pings from this part's hosts, then this part's queue samples (as
        // `World::run` schedules them); `write_tables` merges the rows.
        for (i, p) in self.cfg.ping.iter().enumerate() {
            if parts.of_node[self.apps.pings[i].src as usize] == me && p.start.0 <= self.end {
                self.q.at(p.start.0, Event::Ping { probe: i as u32 });
            }
        }
        let net = &self.fabric.net;
        self.rec.sample_ports.retain(|&p| parts.of_node[net.ports[p as usize].node as usize] == me);
        if !self.rec.sample_ports.is_empty() {
            self.q.at(0, Event::Sample);
        }
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

/// What the partitioned engine cannot run: one error naming the key.
fn check(cfg: &Config, w: &World, parts: &Partitioning) -> Result<(), ConfigError> {
    // An incast round's requests are messages between parts, which must
    // take a window or more (`signals.rs`): every sender's one-way delay
    // from the receiver at least the lookahead, where one of them runs in
    // another part than the receiver (a path that crosses parts always
    // takes that long; one within a part may not).
    for (g, inc) in w.apps.incasts.iter().enumerate() {
        let part = |f: u32| parts.of_node[w.apps.flows[f as usize].src as usize];
        let rx = parts.of_node[w.incast_receiver(g) as usize];
        let shortest = inc.one_way().iter().copied().min().unwrap_or(Time::MAX);
        if inc.flows.iter().any(|&f| part(f) != rx) && shortest < parts.lookahead {
            return Err(ConfigError(format!(
                "run.threads = {}: incast[{g}] has a sender {} away from its receiver, less than the \
                 partition's lookahead of {}, which the partitioned engine cannot run; allowed: run.threads = \
                 0 (the sequential engine), or senders at least the lookahead away",
                cfg.run.threads,
                crate::units::fmt_duration(shortest),
                crate::units::fmt_duration(parts.lookahead)
            )));
        }
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
        return super::run_into(cfg, progress, sink);
    }
    check(cfg, &w0, &parts).map_err(RunError::Config)?;
    sinks.resize_with(parts.parts as usize - 1, Collect::default);
    let mut worlds = Vec::with_capacity(parts.parts as usize);
    worlds.push(w0);
    for s in sinks.iter_mut() {
        let Some(w) = World::new_until(cfg, s, &mut keep_going).map_err(RunError::Config)? else {
            return Err(RunError::Interrupted);
        };
        worlds.push(w);
    }
    // The sampled ports in the order the sequential engine writes them,
    // and the part that records each capture (its port's node's).
    let sampled = worlds[0].rec.sample_ports.clone();
    let net = &worlds[0].fabric.net;
    let captured: Vec<(String, usize)> = worlds[0]
        .rec
        .captures
        .iter()
        .map(|c| (c.name.clone(), parts.of_node[net.ports[c.port as usize].node as usize] as usize))
        .collect();
    for (me, w) in worlds.iter_mut().enumerate() {
        w.enter_part(me as u16, &parts);
    }
    crate::huge_pages::advise_large_run();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cfg.run.threads as usize)
        .build()
        .map_err(|e| RunError::Config(ConfigError(format!("run.threads = {}: {e}", cfg.run.threads))))?;
    let end = cfg.end();
    let sized = worlds[0].apps.unfinished;
    let ends_early = !worlds[0].apps.open_ended && sized > 0;
    let mut runs = vec![PartRun::default(); worlds.len()];
    let mut stopped = end;
    // The last instant whose events ran (past `stopped` when the run ends
    // at its last finish).
    let mut ran_to = None;
    let mut interrupted = false;
    let mut inbox: Vec<Crossing> = Vec::new();
    let mut signals: Vec<Signal> = Vec::new();
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
            // To the end of t0's grid window (`partition::grid`): no
            // longer than the lookahead, and the same windows for any cut.
            let horizon = (t0 / parts.grid + 1).saturating_mul(parts.grid);
            debug_assert!(horizon - t0 <= parts.lookahead);
            worlds.par_iter_mut().zip(runs.par_iter_mut()).for_each(|(w, r)| w.run_window(horizon, r));
            for p in 0..worlds.len() {
                std::mem::swap(&mut inbox, &mut worlds[p].fabric.outbox);
                for c in inbox.drain(..) {
                    worlds[c.to as usize].take_crossing(&c);
                }
            }
            // A signal taken may send others (an incast group's last
            // connection counted starts its round): until none is left.
            while worlds.iter().any(|w| !w.fabric.signals.is_empty()) {
                for p in 0..worlds.len() {
                    std::mem::swap(&mut signals, &mut worlds[p].fabric.signals);
                    for s in signals.drain(..) {
                        worlds[s.to as usize].take_signal(&s, horizon);
                    }
                }
            }
            if ends_early && runs.iter().map(|r| r.finished).sum::<usize>() == sized {
                // The window ran to the end of the last finish's grid
                // window, as the sequential engine does.
                stopped = runs.iter().map(|r| r.last_finish).max().unwrap_or(0);
                ran_to = Some(horizon.saturating_sub(1).min(end));
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
    #[cfg(test)]
    tests::check_sack_slabs(&worlds);
    #[cfg(test)]
    tests::check_path_keys(&worlds, &parts);
    let events: u64 = worlds.iter().map(|w| w.q.processed).sum();
    let peak: usize = worlds.iter().map(|w| w.q.peak).sum();
    let live: usize = worlds.iter().map(|w| w.arena.live()).sum();
    let has_duration = end != crate::config::NO_END;
    for w in worlds.iter_mut() {
        w.rec.stopped = stopped;
        w.catch_up_all(ran_to.unwrap_or(stopped));
    }
    gather(&mut worlds, &parts, &captured, sized - runs.iter().map(|r| r.finished).sum::<usize>());
    let mut kept = Vec::with_capacity(worlds.len());
    for w in worlds.iter_mut() {
        w.rec.stats.goodput.finish(stopped, has_duration, &mut w.rec.out);
        kept.push(w.rec.stats.goodput.take_kept());
    }
    let (w0, rest) = worlds.split_first_mut().expect("two parts or more");
    w0.rec.stats.goodput.write_summed(kept, &mut w0.rec.out);
    for w in rest.iter_mut() {
        w.rec.stats.queues.flush(&mut w.rec.out);
        for c in &mut w.rec.captures {
            c.flush(&mut w.rec.out);
        }
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
    write_tables(std::iter::once(first).chain(sinks), &sampled, &captured, sink).map_err(RunError::Output)?;
    Ok(summary)
}

#[cfg(test)]
mod tests;
