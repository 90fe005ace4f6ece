//! The fabric: switch ports, the links between them and routing. A packet
//! offered to a port is queued or sent at once, leaves at its
//! serialization time and lands after the link's delay; a lazy switch port
//! runs its departures only when something looks (`catch_up`). The methods
//! here are the per-packet path, so their inlining is deliberate: each
//! attribute's comment gives the measurement behind it.

use super::partition::LOCAL;
use super::World;
use crate::config::{Config, EcmpMode};
use crate::engine::EventQueue;
use crate::host::nic::jitter::HostJitter;
use crate::network::ecmp::{self, Ecmp};
use crate::network::topology::{Network, NodeKind};
use crate::packet::{Arena, Kind, Packet, NO_HOP};
use crate::rng::hash64;
use crate::switch::marker::Marker;
use crate::switch::Qdisc;
use crate::units::{secs, Time};

/// Switch names a flow's data cross, then its ACKs' (see `World::flow_paths`).
pub type FlowPath = (Vec<String>, Vec<String>);

/// `from` of a packet a host hands to its own NIC.
pub(super) const NO_PORT: u32 = u32::MAX;

pub struct Fabric {
    pub net: Network,
    /// Seeds the per-flow hash each packet carries.
    pub(super) ecmp_seed: u64,
    pub(super) ecmp: Ecmp,
    /// Packets on the wire (sent by a port, not yet landed).
    pub(super) in_transit: u64,
    /// The hosts' frames' landing wobble (`host.jitter`).
    jitter: HostJitter,
    /// Per port: the switch (index) at its link's far end, or NO_HOP for
    /// a host (see `World::resolve_hop`).
    next_switch: Vec<u32>,
    /// Hops are resolved a node early (`World::resolve_hop`): on a fabric
    /// too large for the cache (its route table in the compact form), not
    /// under per-packet ECMP, whose egress is drawn as the packet lands, in
    /// event order. On the papers' 144 hosts everything a hop reads is in
    /// cache already, and the early lookup cost the leaf-spine bench points
    /// 4-6% (paired).
    pub(super) early_hops: bool,
    /// The partitioned engine (`parallel/`) runs this fabric as one of
    /// several parts: a packet sent over a link to another part leaves by
    /// `outbox`, not by this part's event queue.
    pub(super) partitioned: bool,
    /// Per port: the part at its link's far end, or `partition::LOCAL`
    /// (empty unless partitioned).
    pub(super) cross: Vec<u16>,
    pub(super) outbox: Vec<super::partition::Crossing>,
    /// What this part's applications tell other parts (`signals.rs`).
    pub(super) signals: Vec<super::partition::Signal>,
    /// Per node: its part (empty unless partitioned); this part's number.
    pub(super) part_of: Vec<u16>,
    pub(super) me: u16,
}

/// Each host's `host.jitter` in time: a duration as given, or full
/// packets' transmission times at the host's own NIC rate.
fn host_jitter(cfg: &Config, net: &Network) -> Vec<Time> {
    let packet = cfg.transport.packet_bytes();
    (0..net.hosts).map(|h| cfg.host.jitter.at(packet, net.ports[net.host_nic(h) as usize].qdisc.rate.bps)).collect()
}

impl Fabric {
    /// The network of `cfg`, its switch ports lazy where that is exact.
    /// None when `keep_going` stopped the build.
    pub(super) fn network(cfg: &Config, keep_going: &mut dyn FnMut() -> bool) -> Option<Network> {
        let mut net = Network::build_until(cfg, keep_going)?;
        // A switch port's departures only change its own queue and the
        // packets it sends, so they can wait until something looks: its next
        // arrival, or the landing of the packet on its wire (which is never
        // earlier than the departure). Not so for host NICs, whose
        // departures wake the sender, nor with per-pool marking, where a
        // departure changes what every port of the switch sees.
        let pool_marking = net.ports.iter().any(|p| matches!(p.qdisc.marker, Marker::PerPool(_)));
        // And not on a link without delay: a departure is caught up by the
        // landing of the packet before it, and only a delay puts that
        // landing after the departure's own instant (see `World::catch_up`).
        for p in net.ports.iter_mut() {
            p.lazy = cfg.run.lazy_departures && p.switch.is_some() && !pool_marking && p.delay > 0;
        }
        Some(net)
    }

    /// The fabric of `net` (built by `network`, then marked by the recorder
    /// for captures and traces), with its ECMP state.
    pub(super) fn new(cfg: &Config, net: Network) -> Fabric {
        Fabric {
            ecmp_seed: hash64(cfg.run.seed, 0xEC3F),
            ecmp: Ecmp::new(cfg.topology.ecmp, net.switches.len() as u32, cfg.run.seed),
            jitter: HostJitter::new(host_jitter(cfg, &net), cfg.run.seed),
            next_switch: net
                .ports
                .iter()
                .map(|p| match net.nodes[p.peer as usize].kind {
                    NodeKind::Switch { index } => index,
                    NodeKind::Host { .. } => NO_HOP,
                })
                .collect(),
            early_hops: early_hops(&net, cfg),
            net,
            in_transit: 0,
            partitioned: false,
            cross: Vec::new(),
            outbox: Vec::new(),
            signals: Vec::new(),
            part_of: Vec::new(),
            me: 0,
        }
    }
}

/// Whether `Fabric::early_hops` holds for `net`.
fn early_hops(net: &Network, cfg: &Config) -> bool {
    let large = !net.routes_are_direct() && cfg.topology.ecmp != EcmpMode::PerPacket;
    #[cfg(test)]
    let large = tests::EARLY_HOPS.with(|f| f.get()).unwrap_or(large);
    large
}

// ---------------- network ----------------

impl World<'_> {
    /// The port is free: put its next packet on the wire. A TxDone event
    /// is scheduled only when more packets wait, so an idle path costs one
    /// event per hop.
    #[inline]
    pub(super) fn start_tx(&mut self, port: u32) {
        self.start_tx_at(port, self.q.now)
    }

    /// Run a lazy port's departures due by `by`, each at its own time
    /// (`busy_until`), so its state is as if TxDone events had run. An
    /// arrival runs before a TxDone of its picosecond (`engine.rs`: the
    /// usual tie, equal packet times, where ns-2 too takes the arrival
    /// first), so whatever looks at the port at t during an arrival
    /// catches it up to t - 1: a packet offered to it, and the landing of
    /// the packet on its wire (other arrivals of that instant may still
    /// offer it packets). A departure due at t is then caught up at the
    /// landing of the packet before it, at least a link delay later.
    #[inline]
    pub(super) fn catch_up(&mut self, port: u32, by: Time) {
        loop {
            let p = &self.fabric.net.ports[port as usize];
            if !p.lazy || p.qdisc.packets == 0 || p.busy_until > by {
                return;
            }
            self.start_tx_at(port, p.busy_until);
        }
    }

    /// Bring every lazy port up to `now` (before reading their state).
    pub(super) fn catch_up_all(&mut self, now: Time) {
        for port in 0..self.fabric.net.ports.len() as u32 {
            self.catch_up(port, now);
        }
    }

    #[inline]
    fn start_tx_at(&mut self, port: u32, now: Time) {
        if !self.fabric.net.ports[port as usize].qdisc.is_plain() {
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
    pub(super) fn dequeue_at(
        &mut self,
        port: u32,
        now: Time,
        dequeue: impl FnOnce(&mut Qdisc, Time, &mut Arena, u64) -> Option<(u32, u32)>,
    ) -> Option<(u32, u32)> {
        let p = &mut self.fabric.net.ports[port as usize];
        let before = p.qdisc.bytes;
        let pool = p.switch.map(|s| self.fabric.net.switches[s as usize].pool_bytes).unwrap_or(0);
        let next = dequeue(&mut p.qdisc, now, &mut self.arena, pool);
        if let Some(sw) = p.switch {
            self.fabric.net.switches[sw as usize].pool_bytes -= before - p.qdisc.bytes;
        }
        next
    }

    /// `start_tx_at` for a port off the static path (`Qdisc::is_plain`).
    #[inline(never)]
    fn start_tx_hooked(&mut self, port: u32, now: Time) {
        if self.lossless.is_some() {
            return self.start_tx_lossless(port, now);
        }
        if self.fabric.net.ports[port as usize].qdisc.drops_at_dequeue() {
            return self.start_tx_dropping(port, now);
        }
        let next = self.dequeue_at(port, now, Qdisc::dequeue_composed);
        if let Some((id, size)) = next {
            if self.telemetry() && self.fabric.net.ports[port as usize].switch.is_some() {
                self.int_stamp(port, now, id, size);
            }
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
        while let Some(id) = self.fabric.net.ports[port as usize].qdisc.take_dequeue_drop() {
            if self.fabric.net.ports[port as usize].trace {
                self.watch(port, now, id, -1, false);
            }
            self.drop_at(port, id);
        }
        if let Some((id, size)) = next {
            if self.telemetry() && self.fabric.net.ports[port as usize].switch.is_some() {
                self.int_stamp(port, now, id, size);
            }
            self.transmit(port, now, id, size);
        }
        self.wake_senders();
    }

    /// Put packet `id` (`size` bytes on the wire), just taken from `port`,
    /// on the port's link at `now`.
    #[inline]
    pub(super) fn transmit(&mut self, port: u32, now: Time, id: u32, size: u32) {
        if self.fabric.partitioned {
            return self.transmit_parts(port, now, id, size);
        }
        self.transmit_in::<false>(port, now, id, size)
    }

    /// `transmit` in one part of a partitioned run (`parallel/`), where a
    /// port's link may end in another part.
    #[cold]
    #[inline(never)]
    fn transmit_parts(&mut self, port: u32, now: Time, id: u32, size: u32) {
        self.transmit_in::<true>(port, now, id, size)
    }

    /// `transmit`'s body; `PARTS`: the run is partitioned. Without parts
    /// the checks for a link to another part fold away: the sequential
    /// engine's per-packet path is as it was (paired, 3-5% slower with them
    /// in it).
    #[inline(always)]
    fn transmit_in<const PARTS: bool>(&mut self, port: u32, now: Time, id: u32, size: u32) {
        let p = &mut self.fabric.net.ports[port as usize];
        let ser = p.tx_time(size as u64);
        p.busy_until = now + ser;
        let nic = p.switch.is_none();
        let mut lands = now + ser + p.delay;
        if nic && self.fabric.jitter.on() {
            lands = self.fabric.jitter.landing(p.node, now, lands);
        }
        // Another part's packet once on the wire (see `partition.rs`).
        let to = if PARTS { self.fabric.cross[port as usize] } else { LOCAL };
        if to == LOCAL {
            self.q.arrive(port, lands, id);
            self.fabric.in_transit += 1;
        }
        if p.qdisc.packets > 0 && !p.lazy {
            p.txdone_pending = true;
            self.q.tx_done(port, now + ser);
        }
        if p.capture | p.trace {
            self.watch(port, now, id, -1, true);
        }
        // Only a host NIC looks into the packet here: a switch port has
        // the size from its queue, and the slot may be cold by now.
        let pkt = self.arena.get(id);
        if nic && pkt.kind == Kind::Data {
            // The NIC took a data packet: a paused sender may go on.
            let (fid, size) = (pkt.flow, size as u64);
            let f = &mut self.apps.flows[fid as usize];
            f.nic_bytes -= size;
            if f.nic_blocked && f.nic_bytes < self.hosts.host_queue_limit {
                f.nic_blocked = false;
                self.try_send(fid);
            }
        }
        if to != LOCAL {
            // (The sender may have queued more behind it: the port is busy.)
            self.send_across(to, port, lands, id);
        }
    }

    /// Packet `id` entered (`event` 1) or left (-1) watched `port` at
    /// `now`, onto its wire (`on_wire`) or dropped at dequeue: every one
    /// goes to the trace, only those on the wire to the port's capture.
    #[cold]
    #[inline(never)]
    fn watch(&mut self, port: u32, now: Time, id: u32, event: i64, on_wire: bool) {
        let p = &self.fabric.net.ports[port as usize];
        if p.trace && (self.rec.trace_window.0..self.rec.trace_window.1).contains(&now) {
            let q = p.qdisc.classify(self.arena.get(id).service);
            let (bytes, packets) = p.qdisc.queue_occupancy(q);
            self.rec.stats.trace.push(secs(now), port, q as u32, event, bytes, packets as u32);
        }
        if p.capture && on_wire {
            let c = self.rec.captures.iter_mut().find(|c| c.port == port).expect("a captured port has a capture");
            let p = self.arena.get(id);
            let more = match (&self.hosts.sack_blocks, p.sack_slot()) {
                (Some(sb), Some(slot)) => sb.peek(slot),
                _ => crate::host::sack_blocks::NO_MORE,
            };
            c.record(now, p, &more, &mut self.rec.out);
        }
    }

    /// Offer packet `id`, which came over the link of port `from` (or
    /// NO_PORT), to `port`. The port's path is chosen here, in the caller,
    /// so that either costs one call (the test inside one shared function
    /// cost each hooked hop a second call: 2% of the ML-ECN point's
    /// instructions).
    #[inline(always)]
    pub(super) fn enqueue(&mut self, port: u32, id: u32, from: u32) {
        if self.fabric.net.ports[port as usize].plain {
            self.enqueue_plain(port, id)
        } else {
            self.enqueue_hooked(port, id, from)
        }
    }

    /// `enqueue` at a port on the static path (`Port::plain`).
    #[inline(never)]
    fn enqueue_plain(&mut self, port: u32, id: u32) {
        self.enqueue_in::<true>(port, id)
    }

    /// `enqueue` at a port off the static path.
    #[inline(never)]
    fn enqueue_hooked(&mut self, port: u32, id: u32, from: u32) {
        // Every port of a lossless run is here (none is plain, or lazy).
        if self.lossless.is_some() {
            return self.enqueue_lossless(port, id, from);
        }
        self.enqueue_in::<false>(port, id)
    }

    /// `enqueue`; `PLAIN`: the port is known to be plain, so it is neither
    /// traced nor a whole discipline, and its qdisc's static path applies.
    #[inline(always)]
    fn enqueue_in<const PLAIN: bool>(&mut self, port: u32, id: u32) {
        let now = self.q.now;
        self.catch_up(port, now.saturating_sub(1));
        let p = &mut self.fabric.net.ports[port as usize];
        let pool = p.switch.map(|s| self.fabric.net.switches[s as usize].pool_bytes).unwrap_or(0);
        let size = self.arena.get(id).size as u64;
        if p.qdisc.packets == 0 && now >= p.busy_until && !p.txdone_pending && (PLAIN || !p.trace) {
            // An idle, empty port sends the packet at once. The qdisc then
            // skips its FIFO and round-robin list, which would hold the
            // packet for no time (see `Qdisc::pass_through`). A traced port
            // goes the long way, so its trace shows the packet queued.
            let r = if PLAIN {
                p.qdisc.pass_through_plain(now, id, &mut self.arena, pool)
            } else {
                // `dequeue_at` would give the pool with the packet in it.
                let out_pool = if p.switch.is_some() { pool + size } else { 0 };
                p.qdisc.pass_through(now, id, &mut self.arena, pool, out_pool)
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
                    self.fabric.net.switches[s as usize].pool_bytes += size;
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
    pub(super) fn enqueued_slow(&mut self, port: u32, now: Time, id: u32) {
        let gone = self.take_pushed_out(port, now, id);
        if self.fabric.net.ports[port as usize].trace && !gone {
            self.watch(port, now, id, 1, false);
        }
        if arm_departure(&mut self.fabric.net.ports[port as usize], &mut self.q, port, now) {
            self.start_tx(port);
        }
        self.wake_senders();
    }

    /// Packet `id`, offered to `port`, was refused; a whole discipline
    /// may have pushed out others first.
    #[cold]
    #[inline(never)]
    pub(super) fn refused(&mut self, port: u32, now: Time, id: u32) {
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
        while let Some(id) = self.fabric.net.ports[port as usize].qdisc.take_dequeue_drop() {
            let p = &self.fabric.net.ports[port as usize];
            if let Some(s) = p.switch {
                self.fabric.net.switches[s as usize].pool_bytes -= self.arena.get(id).size as u64;
            }
            if p.trace {
                self.watch(port, now, id, -1, false);
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
    pub(super) fn drop_at(&mut self, port: u32, id: u32) {
        if self.fabric.net.ports[port as usize].switch.is_none() {
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
        let f = &mut self.apps.flows[fid as usize];
        f.nic_bytes -= size;
        if f.nic_blocked && f.nic_bytes < self.hosts.host_queue_limit {
            f.nic_blocked = false;
            self.hosts.woken.push(fid);
        }
    }

    /// Let senders unblocked by NIC drops send again.
    pub(super) fn wake_senders(&mut self) {
        while let Some(fid) = self.hosts.woken.pop() {
            self.try_send(fid);
        }
    }

    pub(super) fn drop_packet(&mut self, id: u32) {
        let p = self.arena.get(id);
        if !p.is_ping() {
            self.apps.logs[p.flow as usize].drops += 1;
        }
        if let Some(slot) = p.sack_slot() {
            self.sack_slab().drop_ack(slot);
        }
        if self.rdma.is_some() {
            let p = *self.arena.get(id);
            self.int_drop(&p);
        }
        self.rec.dropped += 1;
        self.arena.free(id);
    }

    /// Resolve the port packet `id`, leaving by `port`, will leave the
    /// next switch by, while the packet is in cache: the run loop then
    /// starts loading that port an event before the packet lands, instead
    /// of a route lookup and the port's lines missing one after the other
    /// as it lands (most of a hop's stall on a large fabric). The same
    /// choice as on landing: routes are static and per-flow ECMP a pure
    /// hash. Only where `Fabric::early_hops`; elsewhere every hop stays
    /// NO_HOP and is chosen on landing.
    #[inline]
    pub(super) fn resolve_hop(&mut self, port: u32, id: u32) {
        if !self.fabric.early_hops {
            return;
        }
        let sw = self.fabric.next_switch[port as usize];
        let hop = if sw == NO_HOP { NO_HOP } else { self.route(sw, id) };
        self.arena.set_hop(id, hop);
    }

    /// The port of switch `sw` that packet `id` leaves by.
    #[inline]
    pub(super) fn route(&mut self, sw: u32, id: u32) -> u32 {
        if !self.fabric.net.routes_are_direct() {
            return self.route_computed(sw, id);
        }
        let h = self.arena.get(id);
        let routes = self.fabric.net.routes(sw, h.dst);
        if routes.len() == 1 {
            routes[0]
        } else {
            routes[self.fabric.ecmp.pick(sw, h.ecmp, routes.len())]
        }
    }

    /// `route` on a large fabric, where the next hop is computed from the
    /// compact table. Inlined: as a call of its own it gave back the k = 32
    /// gain (serial pairs 0.98-1.05 against 0.92-0.97 inlined).
    #[inline(always)]
    fn route_computed(&mut self, sw: u32, id: u32) -> u32 {
        let h = self.arena.get(id);
        let (net, ecmp) = (&self.fabric.net, &mut self.fabric.ecmp);
        net.next_hop(sw, h.dst, |n| ecmp.pick(sw, h.ecmp, n))
    }

    pub(super) fn host_send(&mut self, p: Packet) {
        let nic = self.fabric.net.host_nic(p.src);
        let hash = if self.fabric.ecmp.mode() == EcmpMode::Ns2 {
            self.ns2_hash(&p)
        } else {
            let key = match &self.apps.conns {
                Some(c) if !p.is_ping() => c.path_key(p.flow),
                _ => p.flow,
            };
            self.flow_hash(key, p.src, p.dst)
        };
        let id = self.arena.alloc(p, hash);
        self.resolve_hop(nic, id);
        self.rec.sent += 1;
        self.enqueue(nic, id, NO_PORT);
    }

    /// Per-flow ECMP: every packet of a flow (or of its connection, `key`)
    /// in one direction carries the same hash, which each switch salts with
    /// its own (see `ecmp.rs`).
    #[inline]
    fn flow_hash(&self, key: u32, src: u32, dst: u32) -> u32 {
        let key = ((key as u64) << 32) | ((src as u64) << 16) ^ dst as u64;
        (hash64(self.fabric.ecmp_seed, key) >> 32) as u32
    }

    /// `ecmp = "ns2"`: the authors' hash of the packet's ends and of its
    /// host pair's data direction (a ping's requester to its target).
    #[cold]
    fn ns2_hash(&self, p: &Packet) -> u32 {
        let pair = match p.kind {
            Kind::PingReq => (p.src, p.dst),
            Kind::PingRep => (p.dst, p.src),
            _ => (self.apps.flows[p.flow as usize].src, self.apps.flows[p.flow as usize].dst),
        };
        ecmp::ns2_hash(self.fabric.net.hosts, p.src, p.dst, pair.0, pair.1)
    }

    /// Switch names on each flow's path: its data's and its ACKs'. Empty
    /// under per-packet ECMP, where packets take paths of their own.
    pub fn flow_paths(&self) -> Vec<FlowPath> {
        let names = |src: u32, dst: u32, flow: u32, pair: (u32, u32)| -> Vec<String> {
            let hash = if self.fabric.ecmp.mode() == EcmpMode::Ns2 {
                ecmp::ns2_hash(self.fabric.net.hosts, src, dst, pair.0, pair.1)
            } else {
                self.flow_hash(flow, src, dst)
            };
            let hops = self.fabric.ecmp.path(&self.fabric.net, src, dst, hash);
            hops.unwrap_or_default().iter().map(|&n| self.fabric.net.nodes[n as usize].name.clone()).collect()
        };
        (0..self.apps.flows.len() as u32)
            .map(|i| {
                let f = &self.apps.flows[i as usize];
                let key = self.apps.conns.as_ref().map_or(i, |c| c.path_key(i));
                (names(f.src, f.dst, key, (f.src, f.dst)), names(f.dst, f.src, key, (f.src, f.dst)))
            })
            .collect()
    }
}

/// A packet was just queued at `p` (port `port`): true when the port is
/// free to send now (the caller starts it); otherwise make sure a departure
/// is due, unless one already is.
#[inline(always)]
pub(super) fn arm_departure(p: &mut crate::network::topology::Port, q: &mut EventQueue, port: u32, now: Time) -> bool {
    if p.txdone_pending || (p.lazy && p.qdisc.packets > 1) {
        // Pending already; or busy, or a departure due now that runs after
        // this arrival (see `catch_up`).
        return false;
    }
    if now >= p.busy_until {
        return true;
    }
    if !p.lazy {
        p.txdone_pending = true;
        q.tx_done(port, p.busy_until);
    }
    false
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use std::cell::Cell;

    thread_local! {
        /// Force `Fabric::early_hops` on or off for runs on this thread.
        pub(super) static EARLY_HOPS: Cell<Option<bool>> = const { Cell::new(None) };
    }

    fn fingerprint(text: &str, early: Option<bool>) -> serde_json::Map<String, serde_json::Value> {
        EARLY_HOPS.with(|f| f.set(early));
        let out = crate::golden::fingerprint(&Config::from_toml(text).unwrap()).unwrap();
        EARLY_HOPS.with(|f| f.set(None));
        out
    }

    /// Resolving each hop a node early is an optimisation only: every
    /// output is the same as choosing on landing, with per-flow and ns-2
    /// hashing, on a fabric that uses it by default (k = 16) and one that
    /// does not (k = 8). The golden corpus holds no fabric large enough.
    #[test]
    fn early_hops_change_no_output() {
        for (k, ecmp) in [(8, "per-flow"), (8, "ns2"), (16, "per-flow")] {
            let text = format!(
                "[run]\nseed = 3\nduration = \"20ms\"\n[topology]\nkind = \"fat-tree\"\nk = {k}\n\
                 link_rate = \"10Gbps\"\nlink_delay = \"1us\"\necmp = \"{ecmp}\"\n\
                 [switch]\nbuffer = \"150KB\"\nmarking = \"per-queue\"\nthreshold = \"20pkt\"\n\
                 [transport]\ncc = \"dctcp\"\n\
                 [workload]\nkind = \"poisson\"\nload = 0.6\nflows = 600\ndistribution = \"web_search\"\n"
            );
            let on = fingerprint(&text, Some(true));
            assert_eq!(on, fingerprint(&text, Some(false)), "k = {k}, {ecmp}");
            assert_eq!(on, fingerprint(&text, None), "k = {k}, {ecmp}");
            let rows = on["flows"].as_str().unwrap().split(':').next().unwrap().parse::<u32>().unwrap();
            assert!(rows >= 600, "k = {k}, {ecmp}: only {rows} flow rows");
        }
    }
}
