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
//! A run without PFC or a shared buffer never gets here: the world holds
//! no `Lossless`, and its ports stay on their usual paths.

use super::World;
use crate::config::{Config, ConfigError};
use crate::engine::Event;
use crate::network::topology::Network;
use crate::switch::pfc::{Admitted, Ingress, PfcKeys, Thresholds, PRIORITIES};
use crate::switch::shared_buffer::{dynamic_limit, Accounting, Charge, Pool, SharedBufferKeys};
use crate::units::Time;
use std::collections::VecDeque;

mod deadlock;
mod frames;
mod host_rx;
mod report;

/// What a `Event::Pfc` is about: the top three bits of its field; the
/// rest is a port (or port × 8 + priority, or a host).
const EFFECT: u32 = 0;
const EXPIRE: u32 = 1;
const REFRESH: u32 = 2;
const CHECK: u32 = 3;
const UNSTICK: u32 = 4;
const FIELD_BITS: u32 = 29;

pub(in crate::world) fn pfc_event(what: u32, x: u32) -> Event {
    debug_assert!(x < 1 << FIELD_BITS);
    Event::Pfc { what: what << FIELD_BITS | x }
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
    /// A stuck host's NIC: packets its full receive buffer dropped.
    receiver_drops: u64,
}

/// A PFC frame: priority and quanta (0: RESUME).
#[derive(Clone, Copy, Debug)]
pub(super) struct Frame {
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
    pub(in crate::world) deadlock: Option<(Time, String)>,
    response_bytes: u64,
    /// Stuck receivers (`host_rx.rs`): per host, its held packets and its
    /// XOFF level (0: not a stuck host); the window.
    held: Vec<VecDeque<u32>>,
    host_xoff: Vec<u64>,
    host_buffer: u64,
    stuck_from: Time,
    stuck_until: Option<Time>,
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
            p.qdisc.set_lossless(lossless);
            p.plain = false;
            p.lazy = false;
        }
        let alpha = (0..PRIORITIES.max(queues)).map(|q| sb.alpha(q)).collect();
        // A stuck host PAUSEs once only its link's headroom is left.
        let host_buffer = pk.pfc_host_buffer.0.bytes(pkt);
        let mut host_xoff = vec![0u64; net.hosts as usize];
        for &h in &pk.pfc_stuck_hosts {
            let nic = net.host_nic(h) as usize;
            let down = &net.ports[nic ^ 1];
            let room = pk.headroom(down.qdisc.rate.bps, down.delay, pkt, 0);
            if room >= host_buffer {
                return Err(ConfigError(format!(
                    "switch.pfc_host_buffer = {host_buffer}B: host {h}'s link needs {room} B of headroom \
                     (switch.pfc_headroom), so a stuck host could never PAUSE before it drops; give it more"
                )));
            }
            host_xoff[h as usize] = host_buffer - room;
        }
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
            held: vec![VecDeque::new(); net.hosts as usize],
            host_xoff,
            host_buffer,
            stuck_from: pk.pfc_stuck_from.0,
            stuck_until: pk.pfc_stuck_until.map(|d| d.0),
        }))
    }

    /// `buffer_accounting = "hpcc"`: the HPCC simulator's PFC rules too
    /// (XOFF on the headroom, the XON floor, pauses that never expire).
    fn hpcc(&self) -> bool {
        self.accounting == Accounting::Hpcc
    }

    /// The thresholds of ingress queue (`sw`, priority `prio`) now.
    fn thresholds(&self, sw: usize, prio: usize) -> Thresholds {
        let mut t =
            Thresholds::new(self.reserved, self.static_xoff, self.alpha[prio], &self.pools[sw], self.xon_offset);
        if self.hpcc() {
            // The HPCC simulator's switch-mmu.cc: XOFF once a packet goes
            // to the headroom; XON also below 1,248 B.
            t.xoff_on_headroom = true;
            t.xon_floor = 1248;
        }
        t
    }
}

/// A packet's PFC priority: its service class (0 to 7).
#[inline]
fn prio_of(service: u8) -> usize {
    (service as usize).min(PRIORITIES - 1)
}

impl World<'_> {
    pub(in crate::world) fn ll(&mut self) -> &mut Lossless {
        self.lossless.as_mut().expect("a lossless run")
    }

    /// `enqueue` at a switch port of a run with a shared buffer or PFC;
    /// `from` is the upstream port the packet came over.
    #[inline(never)]
    pub(in crate::world) fn enqueue_lossless(&mut self, port: u32, id: u32, from: u32) {
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
        match p.qdisc.enqueue_lossless(now, id, &mut self.arena, pool) {
            Ok(()) => {
                self.fabric.net.switches[sw].pool_bytes += size;
                self.queued(port, q, now, id);
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
    pub(in crate::world) fn enqueue_nic(&mut self, port: u32, id: u32) {
        let now = self.q.now;
        let q = self.fabric.net.ports[port as usize].qdisc.classify(self.arena.get(id).service);
        match self.fabric.net.ports[port as usize].qdisc.enqueue_lossless(now, id, &mut self.arena, 0) {
            Ok(()) => self.queued(port, q, now, id),
            Err(_) => self.refused(port, now, id),
        }
    }

    /// Packet `id` was just queued in queue `q` of `port`: a paused queue
    /// stays out of the round, a traced port writes its row, and the port
    /// sends if it is free.
    fn queued(&mut self, port: u32, q: usize, now: Time, id: u32) {
        let p = &mut self.fabric.net.ports[port as usize];
        p.qdisc.settle_paused(q, now);
        if p.trace {
            return self.enqueued_slow(port, now, id);
        }
        if super::fabric::arm_departure(p, &mut self.q, port, now) {
            self.start_tx(port);
        }
    }

    /// `start_tx_at` at a port of a lossless run: its PFC frames first,
    /// then the next packet of a queue not paused.
    #[inline(never)]
    pub(in crate::world) fn start_tx_lossless(&mut self, port: u32, now: Time) {
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
            if is_switch && self.telemetry() {
                self.int_stamp(port, now, id, size);
            }
            self.transmit(port, now, id, size);
            if is_switch {
                self.release(port, id);
            }
        }
        self.wake_senders();
    }

    /// Give back the charge of packet `id`, leaving switch port `port`.
    pub(in crate::world) fn release(&mut self, port: u32, id: u32) {
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
