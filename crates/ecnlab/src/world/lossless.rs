//! The lossless switch: shared buffers with dynamic thresholds
//! (`switch/shared_buffer.rs`) and PFC (`switch/pfc.rs`) at work in a run.
//! A packet's path through it, in order:
//!
//! 1. `enqueue_lossless`: a switch port's arrival is charged to its
//!    ingress (port, priority) if lossless, else to the queue
//!    `buffer_accounting` names; refused, it is dropped (a lossless one
//!    counts as a headroom drop: a broken promise, reported). Crossing
//!    XOFF queues a PAUSE on the port back to the upstream (`send_pfc`).
//! 2. `start_tx_lossless`: a pausable port (every port of a PFC run) sends
//!    its waiting PFC frames first, then the next packet its scheduler
//!    picks among the queues not paused; the packet's charge is given back
//!    (`release`), which may queue a RESUME.
//! 3. `pfc_event`: a frame takes effect at the far end after its own
//!    serialisation, the link's delay and the upstream's response time;
//!    pauses expire after their quanta, refreshes go out at half of it, and
//!    every `pfc_deadlock_check` the paused ports are searched for a cycle.
//!
//! A run without PFC or a shared buffer never gets here: the fabric holds
//! no `Lossless`, and its ports stay on their usual paths.

use super::World;
use crate::config::{Config, ConfigError};
use crate::engine::Event;
use crate::switch::pfc::{self, Admitted, Ingress, PfcKeys, Thresholds, PRIORITIES};
use crate::switch::shared_buffer::{dynamic_limit, Accounting, Charge, Pool, SharedBufferKeys};
use crate::topology::Network;
use crate::units::{secs, Time};
use std::collections::VecDeque;

/// What a `Event::Pfc` is about: the top two bits of its field.
const EFFECT: u32 = 0;
const EXPIRE: u32 = 1;
const REFRESH: u32 = 2;
const CHECK: u32 = 3;

pub(super) fn pfc_event(what: u32, port: u32) -> Event {
    Event::Pfc { what: what << 30 | port }
}

/// Per (port, priority) counters and state.
#[derive(Clone, Copy, Debug, Default)]
struct PrioState {
    /// As the sending port: PAUSE and RESUME frames sent (about its peer's
    /// traffic into this node).
    pause_sent: u64,
    resume_sent: u64,
    /// As the paused egress: frames taken effect, and the pause.
    pause_received: u64,
    resume_received: u64,
    paused_until: Time,
    paused_since: Time,
    paused_total: Time,
    /// Next refresh due of an XOFF kept (0: none).
    refresh_at: Time,
    /// Watchdog: PAUSE ignored until then.
    ignore_until: Time,
    watchdog_trips: u64,
    /// Lossy packets refused by the buffer's threshold, lossless packets
    /// refused by a full headroom (both at this port as ingress).
    threshold_drops: u64,
    headroom_drops: u64,
}

/// A PFC frame: priority and quanta (0: RESUME).
#[derive(Clone, Copy, Debug)]
struct Frame {
    prio: u8,
    quanta: u16,
}

pub struct Lossless {
    /// Bit p: priority p is lossless.
    lossless: u8,
    accounting: Accounting,
    reserved: u64,
    /// α per priority/queue, as given.
    alpha: Vec<f64>,
    static_xoff: Option<u64>,
    xon_offset: u64,
    quanta: u16,
    watchdog: Option<Time>,
    check_every: Time,
    /// Per switch: the shared pool; with "hpcc" accounting the ingress
    /// pool, the egress pool beside it.
    pools: Vec<Pool>,
    egress_pools: Vec<Pool>,
    /// Per port × 8: the port as ingress (its link's far end sends into
    /// this node), and per port × 8 counters.
    ingress: Vec<Ingress>,
    prio: Vec<PrioState>,
    /// Per port × queue: egress charges.
    egress: Vec<Charge>,
    queues: usize,
    /// Per packet id: the port it came in by (as ingress), at a switch.
    ingress_of: Vec<u32>,
    /// Per port: PFC frames waiting for the wire, and those on it with the
    /// time each takes effect.
    waiting: Vec<VecDeque<Frame>>,
    flight: Vec<VecDeque<(Time, Frame)>>,
    /// Egress (port, priority)s paused now, and whether a check is due.
    paused_now: u32,
    check_armed: bool,
    /// The report of a deadlock found, and when it was.
    pub(super) deadlock: Option<(Time, String)>,
    response_bytes: u64,
}

impl Lossless {
    /// The lossless state of `cfg`'s network, or None when it has neither
    /// PFC nor a shared buffer. Refuses a buffer too small for its reserves
    /// and headroom.
    pub(super) fn new(cfg: &Config, net: &mut Network) -> Result<Option<Lossless>, ConfigError> {
        let sb = SharedBufferKeys::of(&cfg.switch.extra);
        let pk = PfcKeys::of(&cfg.switch.extra);
        if !sb.dynamic() && !pk.pfc {
            return Ok(None);
        }
        let pkt = cfg.transport.packet_bytes();
        let queues = cfg.switch.queues as usize;
        let np = net.ports.len();
        let lossless = pk.lossless();
        let reserved = sb.buffer_reserved.0.bytes(pkt);
        let mut ingress = vec![Ingress::default(); np * PRIORITIES];
        let mut pools = vec![Pool::default(); net.switches.len()];
        let mut egress_pools = vec![Pool::default(); net.switches.len()];
        let per_port = cfg.switch.buffer.0.bytes(pkt);
        let mut ports_of = vec![0u64; net.switches.len()];
        let mut headroom_of = vec![0u64; net.switches.len()];
        for (i, p) in net.ports.iter().enumerate() {
            let Some(sw) = p.switch else { continue };
            ports_of[sw as usize] += 1;
            // Port i as ingress: what comes in over the reverse link.
            let up = &net.ports[i ^ 1];
            let wobble = match up.switch {
                None => cfg.host.jitter.at(pkt, up.qdisc.rate.bps),
                Some(_) => 0,
            };
            for prio in 0..PRIORITIES {
                if lossless & 1 << prio != 0 {
                    let h = pk.headroom(up.qdisc.rate.bps, up.delay, pkt, wobble);
                    ingress[i * PRIORITIES + prio].headroom_size = h;
                    headroom_of[sw as usize] += h;
                }
            }
        }
        for (sw, pool) in pools.iter_mut().enumerate() {
            let total = match sb.shared_buffer {
                Some(a) => a.0.bytes(pkt),
                None => per_port * ports_of[sw],
            };
            let reserves = ports_of[sw]
                * reserved
                * match sb.buffer_accounting {
                    Accounting::Egress => queues as u64 + lossless.count_ones() as u64,
                    Accounting::Ingress | Accounting::Hpcc => PRIORITIES as u64,
                };
            let held = reserves + headroom_of[sw];
            if held >= total {
                return Err(ConfigError(format!(
                    "switch.shared_buffer = {total}B: switch {} must hold {reserves} B of reserves \
                     (switch.buffer_reserved) and {} B of PFC headroom (switch.pfc_headroom), leaving no shared \
                     buffer; give it more buffer or less headroom",
                    net.nodes[net.hosts as usize + sw].name,
                    headroom_of[sw]
                )));
            }
            pool.size = total - held;
            egress_pools[sw].size = (sb.hpcc_egress_share * (total - headroom_of[sw]) as f64) as u64;
        }
        // Ports under the pool take what it admits; every port of a PFC run
        // may be paused. Neither may wait lazily for its departures.
        for p in net.ports.iter_mut() {
            if sb.dynamic() && p.switch.is_some() {
                p.qdisc.buffer = crate::switch::buffer::Buffer::Bytes(u64::MAX);
            }
            p.qdisc.set_pausable();
            p.plain = false;
            p.lazy = false;
        }
        let alpha = (0..PRIORITIES.max(queues)).map(|q| sb.alpha(q)).collect();
        Ok(Some(Lossless {
            lossless,
            accounting: sb.buffer_accounting,
            reserved,
            alpha,
            static_xoff: pk.pfc_xoff.map(|a| a.0.bytes(pkt)),
            xon_offset: pk.pfc_xon_offset.0.bytes(pkt),
            quanta: pk.pfc_quanta as u16,
            watchdog: pk.pfc_watchdog.map(|d| d.0),
            check_every: pk.pfc_deadlock_check.0,
            pools,
            egress_pools,
            ingress,
            prio: vec![PrioState::default(); np * PRIORITIES],
            egress: vec![Charge::default(); np * queues],
            queues,
            ingress_of: Vec::new(),
            waiting: vec![VecDeque::new(); np],
            flight: vec![VecDeque::new(); np],
            paused_now: 0,
            check_armed: false,
            deadlock: None,
            response_bytes: pk.pfc_response.0.bytes(pkt),
        }))
    }

    /// The thresholds of ingress queue (`sw`, priority `prio`) now.
    fn thresholds(&self, sw: usize, prio: usize) -> Thresholds {
        Thresholds::new(self.reserved, self.static_xoff, self.alpha[prio], &self.pools[sw], self.xon_offset)
    }
}

/// A packet's PFC priority: its service class (0 to 7).
#[inline]
fn prio_of(service: u8) -> usize {
    (service as usize).min(PRIORITIES - 1)
}

impl World<'_> {
    fn ll(&mut self) -> &mut Lossless {
        self.lossless.as_mut().expect("a lossless run")
    }

    /// `enqueue` at a switch port of a run with a shared buffer or PFC;
    /// `from` is the upstream port the packet came over.
    #[inline(never)]
    pub(super) fn enqueue_lossless(&mut self, port: u32, id: u32, from: u32) {
        if from == super::fabric::NO_PORT {
            return self.enqueue_nic(port, id);
        }
        let now = self.q.now;
        let p = &self.fabric.net.ports[port as usize];
        let sw = p.switch.expect("a switch port") as usize;
        let h = self.arena.get(id);
        let (size, prio, q) = (h.size as u64, prio_of(h.service), p.qdisc.classify(h.service));
        let r = (from ^ 1) as usize;
        let ll = self.lossless.as_mut().expect("a lossless run");
        let mut pause = false;
        let admitted = if ll.lossless & 1 << prio != 0 {
            let t = ll.thresholds(sw, prio);
            let (a, cross) = ll.ingress[r * PRIORITIES + prio].admit(size, &t, &mut ll.pools[sw]);
            pause = cross;
            if a == Admitted::Refused {
                ll.prio[r * PRIORITIES + prio].headroom_drops += 1;
            }
            a != Admitted::Refused
        } else {
            let ok = ll.admit_lossy(sw, r, port as usize, q, prio, size);
            if !ok {
                ll.prio[r * PRIORITIES + prio].threshold_drops += 1;
            }
            ok
        };
        if pause {
            self.send_pfc(r as u32, prio as u8, true);
        }
        if !admitted {
            self.fabric.net.ports[port as usize].qdisc.count_overflow(q);
            return self.refused(port, now, id);
        }
        let ll = self.ll();
        if ll.ingress_of.len() <= id as usize {
            ll.ingress_of.resize(id as usize + 1, 0);
        }
        ll.ingress_of[id as usize] = r as u32;
        let p = &mut self.fabric.net.ports[port as usize];
        let pool = self.fabric.net.switches[sw].pool_bytes;
        match p.qdisc.enqueue(now, id, &mut self.arena, pool) {
            Ok(()) => {
                p.qdisc.settle_paused(q, now);
                self.fabric.net.switches[sw].pool_bytes += size;
                if p.trace {
                    return self.enqueued_slow(port, now, id);
                }
                if super::fabric::arm_departure(p, &mut self.q, port, now) {
                    self.start_tx(port);
                }
            }
            Err(_) => {
                // The marker dropped it: give its charge back.
                self.release(port, id);
                self.refused(port, now, id)
            }
        }
    }

    /// A host's packet offered to its NIC in a PFC run: queued (never sent
    /// at once past a pause), then sent when the NIC is free.
    fn enqueue_nic(&mut self, port: u32, id: u32) {
        let now = self.q.now;
        let q = self.fabric.net.ports[port as usize].qdisc.classify(self.arena.get(id).service);
        let p = &mut self.fabric.net.ports[port as usize];
        match p.qdisc.enqueue(now, id, &mut self.arena, 0) {
            Ok(()) => {
                p.qdisc.settle_paused(q, now);
                if p.trace {
                    return self.enqueued_slow(port, now, id);
                }
                if super::fabric::arm_departure(p, &mut self.q, port, now) {
                    self.start_tx(port);
                }
            }
            Err(_) => self.refused(port, now, id),
        }
    }

    /// `start_tx_at` at a port of a lossless run: its PFC frames first,
    /// then the next packet of a queue not paused.
    #[inline(never)]
    pub(super) fn start_tx_lossless(&mut self, port: u32, now: Time) {
        if let Some(f) = self.ll().waiting[port as usize].pop_front() {
            return self.transmit_pfc(port, now, f);
        }
        let next = self.dequeue_at(port, now, crate::switch::Qdisc::dequeue_pausable);
        let is_switch = self.fabric.net.ports[port as usize].switch.is_some();
        while let Some(id) = self.fabric.net.ports[port as usize].qdisc.take_dequeue_drop() {
            if is_switch {
                self.release(port, id);
            }
            self.drop_at(port, id);
        }
        if let Some((id, size)) = next {
            self.transmit(port, now, id, size);
            if is_switch {
                self.release(port, id);
            }
        }
        self.wake_senders();
    }

    /// Give back the charge of packet `id`, leaving switch port `port`.
    fn release(&mut self, port: u32, id: u32) {
        let h = self.arena.get(id);
        let (size, prio) = (h.size as u64, prio_of(h.service));
        let q = self.fabric.net.ports[port as usize].qdisc.classify(h.service);
        let sw = self.fabric.net.ports[port as usize].switch.expect("a switch port") as usize;
        let ll = self.ll();
        let r = ll.ingress_of[id as usize] as usize;
        if ll.lossless & 1 << prio != 0 {
            let t = ll.thresholds(sw, prio);
            if ll.ingress[r * PRIORITIES + prio].release(size, &t, &mut ll.pools[sw]) {
                self.send_pfc(r as u32, prio as u8, false);
            }
        } else {
            ll.release_lossy(sw, r, port as usize, q, prio, size);
        }
    }

    /// Queue a PAUSE (`pause`) or RESUME for priority `prio` on `port`,
    /// back to its peer; it goes out as soon as the frame on the wire has.
    pub(super) fn send_pfc(&mut self, port: u32, prio: u8, pause: bool) {
        let now = self.q.now;
        let ll = self.ll();
        let quanta = if pause { ll.quanta } else { 0 };
        let s = &mut ll.prio[port as usize * PRIORITIES + prio as usize];
        if pause {
            s.pause_sent += 1;
        } else {
            s.resume_sent += 1;
            s.refresh_at = 0;
        }
        ll.waiting[port as usize].push_back(Frame { prio, quanta });
        if pause {
            // Keep the pause from running out while XOFF holds: refresh at
            // half its time.
            let rate = self.fabric.net.ports[port as usize ^ 1].qdisc.rate.bps;
            let at = now + (pfc::pause_time(quanta as u32, rate) / 2).max(1);
            let s = &mut self.ll().prio[port as usize * PRIORITIES + prio as usize];
            if s.refresh_at == 0 {
                s.refresh_at = at;
                self.q.at(at, pfc_event(REFRESH, port * PRIORITIES as u32 + prio as u32));
            }
        }
        let p = &mut self.fabric.net.ports[port as usize];
        if p.txdone_pending {
            return;
        }
        if now >= p.busy_until {
            self.start_tx_lossless(port, now);
        } else {
            p.txdone_pending = true;
            self.q.tx_done(port, p.busy_until);
        }
    }

    /// Put PFC frame `f` on `port`'s wire at `now`.
    fn transmit_pfc(&mut self, port: u32, now: Time, f: Frame) {
        let p = &mut self.fabric.net.ports[port as usize];
        let ser = p.tx_time(pfc::FRAME_BYTES);
        p.busy_until = now + ser;
        // The next frame or packet goes after this one.
        p.txdone_pending = true;
        self.q.tx_done(port, now + ser);
        let response = p.tx_time(self.lossless.as_ref().map_or(0, |l| l.response_bytes));
        let effect = now + ser + p.delay + response;
        let capture = p.capture;
        self.ll().flight[port as usize].push_back((effect, f));
        self.q.at(effect, pfc_event(EFFECT, port));
        if capture {
            let c = self.rec.captures.iter_mut().find(|c| c.port == port).expect("a captured port has a capture");
            c.record_pfc(now, f.prio, f.quanta, &mut self.rec.out);
        }
    }

    /// An `Event::Pfc`. Cold and out of line: the run loop's dispatch
    /// stays as small as it was (inlined, it cost every run's loop).
    #[cold]
    #[inline(never)]
    pub(super) fn pfc_event(&mut self, field: u32) {
        let (what, x) = (field >> 30, field & 0x3FFF_FFFF);
        let now = self.q.now;
        match what {
            EFFECT => {
                let (_, f) = self.ll().flight[x as usize].pop_front().expect("a frame in flight");
                self.pfc_takes_effect(x ^ 1, f, now);
            }
            EXPIRE => {
                for prio in 0..PRIORITIES {
                    let s = self.ll().prio[x as usize * PRIORITIES + prio];
                    if s.paused_until != 0 && s.paused_until <= now {
                        self.unpause(x, prio, now);
                    }
                }
            }
            REFRESH => {
                let (port, prio) = (x / PRIORITIES as u32, (x % PRIORITIES as u32) as usize);
                let ll = self.ll();
                let i = port as usize * PRIORITIES + prio;
                if ll.prio[i].refresh_at != now {
                    return;
                }
                ll.prio[i].refresh_at = 0;
                if ll.ingress[i].xoff {
                    self.send_pfc(port, prio as u8, true);
                }
            }
            _ => self.deadlock_check(now),
        }
    }

    /// Frame `f` reaches egress `port` (the sender's peer) and acts.
    fn pfc_takes_effect(&mut self, port: u32, f: Frame, now: Time) {
        let rate = self.fabric.net.ports[port as usize].qdisc.rate.bps;
        let ll = self.lossless.as_deref_mut().expect("a lossless run");
        let s = &mut ll.prio[port as usize * PRIORITIES + f.prio as usize];
        if f.quanta == 0 {
            s.resume_received += 1;
            if s.paused_until != 0 {
                self.unpause(port, f.prio as usize, now);
            }
            return;
        }
        s.pause_received += 1;
        if s.ignore_until > now {
            return; // The watchdog holds this priority open.
        }
        let until = now + pfc::pause_time(f.quanta as u32, rate);
        let first = s.paused_until == 0;
        s.paused_until = until;
        self.q.at(until, pfc_event(EXPIRE, port));
        if !first {
            return;
        }
        s.paused_since = now;
        ll.paused_now += 1;
        if !ll.check_armed {
            ll.check_armed = true;
            self.q.at(now + ll.check_every, pfc_event(CHECK, 0));
        }
        let qd = &mut self.fabric.net.ports[port as usize].qdisc;
        let q = qd.classify(f.prio);
        qd.pause_queue(q, now);
    }

    /// Egress (`port`, `prio`) may send again (a RESUME, or its pause ran
    /// out, or the watchdog): its queue resumes unless another priority
    /// that shares it is still paused.
    fn unpause(&mut self, port: u32, prio: usize, now: Time) {
        let ll = self.ll();
        let s = &mut ll.prio[port as usize * PRIORITIES + prio];
        s.paused_total += now - s.paused_since;
        s.paused_until = 0;
        ll.paused_now -= 1;
        let p = &self.fabric.net.ports[port as usize];
        let q = p.qdisc.classify(prio as u8);
        let ll = self.lossless.as_ref().expect("a lossless run");
        let shared = (0..PRIORITIES).any(|o| {
            o != prio && ll.prio[port as usize * PRIORITIES + o].paused_until != 0 && p.qdisc.classify(o as u8) == q
        });
        if shared {
            return;
        }
        let p = &mut self.fabric.net.ports[port as usize];
        p.qdisc.resume_queue(q, now);
        if !p.txdone_pending && now >= p.busy_until && p.qdisc.packets > 0 {
            self.start_tx_lossless(port, now);
        }
    }

    /// Every `pfc_deadlock_check` while some port is paused: ports paused
    /// since the last check, each waiting on the next, in a cycle, are a
    /// deadlock: report it and end the run. The watchdog trips here too.
    fn deadlock_check(&mut self, now: Time) {
        let ll = self.ll();
        ll.check_armed = false;
        let every = ll.check_every;
        if let Some(w) = ll.watchdog {
            let stuck: Vec<(u32, usize)> = (0..ll.prio.len())
                .filter(|&i| ll.prio[i].paused_until != 0 && now - ll.prio[i].paused_since >= w)
                .map(|i| ((i / PRIORITIES) as u32, i % PRIORITIES))
                .collect();
            for (port, prio) in stuck {
                let s = &mut self.ll().prio[port as usize * PRIORITIES + prio];
                s.watchdog_trips += 1;
                s.ignore_until = now + w;
                self.unpause(port, prio, now);
            }
        }
        if let Some(cycle) = self.paused_cycle(now.saturating_sub(every)) {
            let names: Vec<String> = cycle.iter().map(|&(p, _)| self.fabric.net.port_name(p)).collect();
            let since = cycle.iter().map(|&(p, pr)| self.ll().prio[p as usize * PRIORITIES + pr].paused_since).max();
            let msg = format!(
                "deadlock: ports {} paused on each other (priority {}) since {:.6} s",
                names.join(", "),
                cycle[0].1,
                secs(since.unwrap_or(now))
            );
            self.ll().deadlock = Some((now, msg));
            self.end = now;
            self.rec.stopped = now;
            return;
        }
        let ll = self.ll();
        if ll.paused_now > 0 {
            ll.check_armed = true;
            self.q.at(now + every, pfc_event(CHECK, 0));
        }
    }

    /// A cycle of egress (port, priority)s each paused since `before` or
    /// earlier, where each holds packets of that priority that came in by
    /// the port the next one's pause stops... as (port, priority), or None.
    /// Edge (e, p) → (e2, p): e's far end is a switch whose port e2 is paused
    /// for p and holds p packets that came in over e.
    fn paused_cycle(&self, before: Time) -> Option<Vec<(u32, usize)>> {
        let ll = self.lossless.as_ref()?;
        let net = &self.fabric.net;
        let stuck = |i: usize| ll.prio[i].paused_until != 0 && ll.prio[i].paused_since <= before;
        let n = ll.prio.len();
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
        for e in (0..n).filter(|&i| stuck(i)) {
            let (port, prio) = (e / PRIORITIES, e % PRIORITIES);
            let far = net.ports[port].peer;
            let ingress = (port ^ 1) as u32;
            for (e2, p2) in net.ports.iter().enumerate().filter(|(_, p)| p.node == far && p.switch.is_some()) {
                let j = e2 * PRIORITIES + prio;
                if !stuck(j) {
                    continue;
                }
                let q = p2.qdisc.classify(prio as u8);
                let waits = p2.qdisc.queues[q].fifo.ids().any(|id| {
                    ll.ingress_of.get(id as usize) == Some(&ingress) && prio_of(self.arena.get(id).service) == prio
                });
                if waits {
                    next[e].push(j);
                }
            }
        }
        find_cycle(&next).map(|c| c.into_iter().map(|i| ((i / PRIORITIES) as u32, i % PRIORITIES)).collect())
    }
}

// ---------------- outputs ----------------

impl World<'_> {
    /// The `pfc` table: every (port, priority) with a headroom or anything
    /// counted.
    pub(super) fn lossless_table(&mut self) {
        let now = self.rec.stopped;
        let mut rows = crate::tables::PfcRows::default();
        let ll = self.lossless.as_deref().expect("a lossless run");
        let net = &self.fabric.net;
        for (i, (s, g)) in ll.prio.iter().zip(&ll.ingress).enumerate() {
            let (port, prio) = (i / PRIORITIES, i % PRIORITIES);
            let paused = s.paused_total + if s.paused_until != 0 { now - s.paused_since } else { 0 };
            let any = s.pause_sent + s.pause_received + s.headroom_drops + s.threshold_drops + g.peak_bytes > 0;
            if !any && g.headroom_size == 0 {
                continue;
            }
            let p = &net.ports[port];
            rows.push(
                port as u32,
                net.nodes[p.node as usize].name.clone(),
                net.nodes[p.peer as usize].name.clone(),
                prio as u32,
                s.pause_sent,
                s.resume_sent,
                s.pause_received,
                s.resume_received,
                secs(paused),
                g.headroom_size,
                g.peak_headroom,
                g.peak_bytes,
                s.headroom_drops,
                s.threshold_drops,
                s.watchdog_trips,
            );
            rows.flush_full(&mut self.rec.out);
        }
        rows.flush(&mut self.rec.out);
    }

    /// A `buffer` row per switch at sample time `t` (seconds).
    pub(super) fn sample_buffers(&mut self, t: f64) {
        let ll = self.lossless.as_deref().expect("a lossless run");
        let mut rows = crate::tables::BufferRows::default();
        let mut headroom = vec![0u64; ll.pools.len()];
        for (i, g) in ll.ingress.iter().enumerate() {
            if let Some(sw) = self.fabric.net.ports[i / PRIORITIES].switch {
                headroom[sw as usize] += g.headroom;
            }
        }
        for (sw, pool) in ll.pools.iter().enumerate() {
            let name = self.fabric.net.nodes[self.fabric.net.hosts as usize + sw].name.clone();
            rows.push(t, name, pool.used, pool.size, headroom[sw]);
        }
        rows.flush(&mut self.rec.out);
    }

    /// The summary's PFC and buffer counts; the deadlock's report and a
    /// lossless drop's warning go to `warnings`.
    pub(super) fn lossless_summary(&self, m: &mut serde_json::Map<String, serde_json::Value>) {
        use serde_json::json;
        let ll = self.lossless.as_deref().expect("a lossless run");
        let now = self.rec.stopped;
        let sum = |f: fn(&PrioState) -> u64| ll.prio.iter().map(f).sum::<u64>();
        let paused: Time =
            ll.prio.iter().map(|s| s.paused_total + if s.paused_until != 0 { now - s.paused_since } else { 0 }).sum();
        let headroom_drops = sum(|s| s.headroom_drops);
        m.insert("pfc_pause_frames".into(), json!(sum(|s| s.pause_sent)));
        m.insert("pfc_resume_frames".into(), json!(sum(|s| s.resume_sent)));
        m.insert("pfc_paused_seconds".into(), json!(secs(paused)));
        m.insert("pfc_watchdog_trips".into(), json!(sum(|s| s.watchdog_trips)));
        m.insert("lossless_drops".into(), json!(headroom_drops));
        m.insert("buffer_threshold_drops".into(), json!(sum(|s| s.threshold_drops)));
        m.insert("shared_buffer_peak_bytes".into(), json!(ll.pools.iter().map(|p| p.peak).max().unwrap_or(0)));
        m.insert("headroom_peak_bytes".into(), json!(ll.ingress.iter().map(|g| g.peak_headroom).max().unwrap_or(0)));
        let mut warn: Vec<String> = Vec::new();
        if headroom_drops > 0 {
            let worst = ll.ingress.iter().zip(&ll.prio).enumerate().max_by_key(|(_, (_, s))| s.headroom_drops);
            let (i, (g, _)) = worst.expect("some port dropped");
            warn.push(format!(
                "lossless_drops = {headroom_drops}: lossless packets dropped because a PFC headroom was full \
                 (e.g. {} priority {}: headroom {} B); switch.pfc_headroom is below what its links need \
                 (\"auto\" sizes it from the link's rate and delay)",
                self.fabric.net.port_name((i / PRIORITIES) as u32),
                i % PRIORITIES,
                g.headroom_size
            ));
        }
        if let Some((_, msg)) = &ll.deadlock {
            m.insert("deadlock".into(), json!(msg));
            warn.push(format!("the run ended early: {msg}"));
        }
        if !warn.is_empty() {
            m.insert("warnings".into(), json!(warn));
        }
    }
}

impl Lossless {
    /// Charge a lossy packet where `buffer_accounting` says.
    fn admit_lossy(&mut self, sw: usize, r: usize, e: usize, q: usize, prio: usize, size: u64) -> bool {
        match self.accounting {
            Accounting::Egress => {
                let limit = dynamic_limit(self.alpha[q], &self.pools[sw]);
                let c = &mut self.egress[e * self.queues + q];
                if !c.admits(size, self.reserved, limit, &self.pools[sw]) {
                    return false;
                }
                c.add(size, self.reserved, &mut self.pools[sw]);
                true
            }
            Accounting::Ingress => {
                let t = Thresholds::new(self.reserved, None, self.alpha[prio], &self.pools[sw], 0);
                self.ingress[r * PRIORITIES + prio].admit_lossy(size, &t, &mut self.pools[sw])
            }
            Accounting::Hpcc => {
                // The egress pool's threshold, then the ingress counters.
                let limit = dynamic_limit(self.alpha[q], &self.egress_pools[sw]);
                let c = &mut self.egress[e * self.queues + q];
                if !c.admits(size, 0, limit, &self.egress_pools[sw]) {
                    return false;
                }
                c.add(size, 0, &mut self.egress_pools[sw]);
                let t = Thresholds::new(self.reserved, Some(u64::MAX), 1.0, &self.pools[sw], 0);
                self.ingress[r * PRIORITIES + prio].charge.add(size, t.reserved, &mut self.pools[sw]);
                true
            }
        }
    }

    fn release_lossy(&mut self, sw: usize, r: usize, e: usize, q: usize, prio: usize, size: u64) {
        match self.accounting {
            Accounting::Egress => self.egress[e * self.queues + q].remove(size, self.reserved, &mut self.pools[sw]),
            Accounting::Ingress => {
                self.ingress[r * PRIORITIES + prio].charge.remove(size, self.reserved, &mut self.pools[sw])
            }
            Accounting::Hpcc => {
                self.egress[e * self.queues + q].remove(size, 0, &mut self.egress_pools[sw]);
                self.ingress[r * PRIORITIES + prio].charge.remove(size, self.reserved, &mut self.pools[sw]);
            }
        }
    }
}

/// A cycle in the graph `next` (adjacency lists), as its nodes in order.
pub(super) fn find_cycle(next: &[Vec<usize>]) -> Option<Vec<usize>> {
    // 0: unseen, 1: on the path, 2: done.
    let mut state = vec![0u8; next.len()];
    let mut path: Vec<(usize, usize)> = Vec::new();
    for start in 0..next.len() {
        if state[start] != 0 || next[start].is_empty() {
            continue;
        }
        path.push((start, 0));
        state[start] = 1;
        while let Some(&mut (v, ref mut k)) = path.last_mut() {
            if let Some(&w) = next[v].get(*k) {
                *k += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        path.push((w, 0));
                    }
                    1 => {
                        let from = path.iter().position(|&(u, _)| u == w).expect("on the path");
                        return Some(path[from..].iter().map(|&(u, _)| u).collect());
                    }
                    _ => {}
                }
            } else {
                state[v] = 2;
                path.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::find_cycle;

    #[test]
    fn finds_a_cycle_and_only_a_cycle() {
        assert_eq!(find_cycle(&[vec![1], vec![2], vec![]]), None);
        let c = find_cycle(&[vec![1], vec![2], vec![0], vec![0]]).unwrap();
        assert_eq!(c, vec![0, 1, 2]);
        let c = find_cycle(&[vec![], vec![2], vec![3], vec![1]]).unwrap();
        assert_eq!(c, vec![1, 2, 3]);
    }
}
