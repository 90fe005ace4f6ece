//! The queue discipline of one egress port: the composed one (classifier,
//! scheduler, marker, buffer), or a whole discipline (`whole.rs`) that the
//! port hands its packets to after one branch.
//!
//! A composed port whose marker is a static threshold judged at enqueue
//! (or none), without enqueue stamps, is *plain*: one bit, set when the
//! port is built, that lets its callers take the `PLAIN = true` copies of
//! the paths below. Those are the paths as they were before markers had
//! hooks (a threshold test, MQ-ECN's round events), without the tests for
//! hooks, stamps and whole disciplines, which every MQ-ECN run would
//! otherwise pay per packet for schemes it does not use.

use std::collections::VecDeque;

use super::buffer::Buffer;
use super::marker::{Events, Marker, Occupancy, Seen, Sides, Verdict};
use super::queue::Queue;
use super::scheduler::{Scheduler, Sp};
use super::scheme::{About, QdiscDecl};
use super::whole::Tally;
use super::Whole;
use crate::config::bad;
use crate::packet::{Arena, Ecn};
use crate::rng::Rng;
use crate::units::{LineRate, Time};

/// The composed discipline: `queues` queues, a scheduler, a marking scheme
/// and a buffer shared by the queues.
pub const COMPOSED: QdiscDecl = QdiscDecl {
    about: About::new(
        "composed",
        "queues chosen by service (or ML-ECN's stage classes), a scheduler, a marking scheme and a buffer \
         the queues share first-come-first-serve",
        "",
    ),
    composed: true,
    needs_priority: false,
    validate: |c| {
        c.port.validate_composed(c.sec)?;
        if c.port.dequeue_marking {
            // By name: `NONE` is a const, so each `&NONE` may be its own
            // copy, and pointer equality held only where the optimiser
            // merged them (release builds), not in debug builds.
            if c.marking.about.name == super::marker::NONE.about.name {
                return Err(bad(
                    &c.key("dequeue_marking"),
                    true,
                    &format!("needs a marking scheme ({}.marking is \"none\")", c.sec),
                ));
            }
            if let Some(sides) = c.marking.own_sides {
                return Err(bad(
                    &c.key("dequeue_marking"),
                    true,
                    &format!(
                        "\"{}\" decides on its own sides ({sides}); leave dequeue_marking off",
                        c.marking.about.name
                    ),
                ));
            }
        }
        Ok(())
    },
    build: |c| {
        let buffer = Buffer::new(c.port.buffer.0, c.pkt);
        let mut q =
            Qdisc::new(c.port.queues as usize, (c.scheduler.build)(c), (c.marking.build)(c), buffer, c.rate_bps);
        q.set_dequeue_marking(c.port.dequeue_marking);
        q.drop_not_ect = c.port.drop_not_ect;
        q
    },
};

/// What a queue did, for reports.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueCounters {
    pub enqueued: u64,
    /// Packets that left (or wait) with the CE mark this queue set.
    pub marked: u64,
    /// Marks taken back at dequeue (CEDM).
    pub unmarked: u64,
    pub dropped_overflow: u64,
    pub dropped_aqm: u64,
    pub max_bytes: u64,
    pub sent_packets: u64,
    pub sent_bytes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The shared port buffer was full (tail drop).
    Overflow,
    /// The AQM dropped it (RED on a Not-ECT packet, or a marking condition
    /// with drop_not_ect).
    Aqm,
}

/// Packets a queue refused, counted apart from the per-packet counters.
#[derive(Clone, Copy, Debug, Default)]
struct Drops {
    overflow: u64,
    /// At enqueue, and at dequeue.
    aqm_in: u64,
    aqm_out: u64,
    unmarked: u64,
}

/// What drops and the rarer schemes touch, behind one pointer so the
/// port's hot state stays within four cache lines.
struct Cold {
    drops: Vec<Drops>,
    /// Packets dropped at dequeue, for the caller to account and free.
    dequeue_drops: Vec<u32>,
    /// The port's own random stream (RED, MM-ECN), seeded per port.
    rng: Rng,
    /// Per queue, the enqueue time of each queued packet, oldest first;
    /// kept only for markers that judge the sojourn time (TCN, CoDel).
    stamps: Vec<VecDeque<Time>>,
    /// A whole discipline that takes this port's packets instead of the
    /// composed parts, and what it counted.
    whole: Option<Whole>,
    tally: Tally,
}

pub struct Qdisc {
    pub queues: Box<[Queue]>,
    pub sched: Scheduler,
    pub marker: Marker,
    pub buffer: Buffer,
    /// The static path applies (see the module's note).
    plain: bool,
    /// The marker's hooks that run: at enqueue, at dequeue (see
    /// `set_dequeue_marking`).
    hook_in: bool,
    hook_out: bool,
    /// The marker may take a mark back, so marks are remembered per packet.
    unmarks: bool,
    /// Enqueue times are kept (`Cold::stamps`).
    stamping: bool,
    /// `Cold::whole` is set: enqueue and dequeue go there. Such a port
    /// also counts as having a dequeue hook (`hook_out`), so that
    /// `pass_through` declines and `take_dequeue_drop` hands out its drops.
    is_whole: bool,
    pub drop_not_ect: bool,
    /// Line rate of the port, for round ends.
    pub rate: LineRate,
    pub bytes: u64,
    pub packets: u64,
    pub max_bytes: u64,
    /// Bit i set while queue i is backlogged.
    nonempty: u64,
    cold: Box<Cold>,
}

impl Qdisc {
    pub fn new(nq: usize, sched: Scheduler, marker: Marker, buffer: Buffer, rate_bps: u64) -> Self {
        let stamps = if marker.needs_sojourn() { vec![VecDeque::new(); nq] } else { Vec::new() };
        let mut qd = Qdisc {
            queues: (0..nq).map(|_| Queue::default()).collect(),
            sched,
            marker,
            buffer,
            plain: false,
            hook_in: false,
            hook_out: false,
            unmarks: false,
            stamping: false,
            is_whole: false,
            drop_not_ect: false,
            rate: LineRate::new(rate_bps),
            bytes: 0,
            packets: 0,
            max_bytes: 0,
            nonempty: 0,
            cold: Box::new(Cold {
                drops: vec![Drops::default(); nq],
                dequeue_drops: Vec::new(),
                rng: Rng::new(0),
                stamps,
                whole: None,
                tally: Tally::default(),
            }),
        };
        qd.set_dequeue_marking(false);
        qd
    }

    /// A port run by whole discipline `w`. Its counters are reported as
    /// one queue, queue 0.
    pub fn whole(w: Whole, rate_bps: u64) -> Self {
        let mut qd = Qdisc::new(1, Scheduler::Sp(Sp), Marker::None, Buffer::Bytes(u64::MAX), rate_bps);
        qd.cold.whole = Some(w);
        qd.is_whole = true;
        qd.set_dequeue_marking(false);
        qd
    }

    /// A whole discipline runs this port (see `Qdisc::whole`); it may drop
    /// queued packets when it takes one in (`take_dequeue_drop`).
    #[inline]
    pub fn is_whole(&self) -> bool {
        self.is_whole
    }

    /// The whole discipline, if one runs this port (tests, reports).
    pub fn whole_discipline(&self) -> Option<&Whole> {
        self.cold.whole.as_ref()
    }

    /// The queues a sample shows: the composed queues, or the queues a
    /// whole discipline keeps apart (DualPI2's L and Classic).
    pub fn sampled_queues(&self) -> usize {
        self.cold.whole.as_ref().map_or(self.queues.len(), |w| w.queues())
    }

    /// Bytes and packets in queue `q` now (for samples and traces; a whole
    /// discipline's queue `q` of `sampled_queues`, or all of it for its
    /// one counted queue).
    pub fn queue_occupancy(&self, q: usize) -> (u64, u64) {
        if let Some(w) = &self.cold.whole {
            if w.queues() > 1 {
                return w.queue_occupancy(q);
            }
            (self.bytes, self.packets)
        } else {
            let f = &self.queues[q].fifo;
            (f.bytes, f.len() as u64)
        }
    }

    /// Where a one-sided marker judges: at dequeue (Tuning ECN §4.2) or at
    /// enqueue. Schemes with sides of their own (CEDM, RED, TCN) keep them.
    pub fn set_dequeue_marking(&mut self, on: bool) {
        let (i, o) = match self.marker.sides() {
            Sides::Either => (!on, on),
            Sides::Enqueue => (true, false),
            Sides::Dequeue => (false, true),
            Sides::Both => (true, true),
        };
        let none = matches!(self.marker, Marker::None);
        self.hook_in = i && !none;
        self.hook_out = (o && !none) || self.is_whole;
        self.unmarks = self.marker.unmarks();
        self.stamping = !self.cold.stamps.is_empty();
        let hooked = matches!(self.marker, Marker::Hooked(_));
        self.plain = !hooked && !self.hook_out && !self.stamping && !self.is_whole;
    }

    /// The port takes the static path (`enqueue_plain`, `pass_through_plain`,
    /// `dequeue_plain`).
    #[inline]
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// The port's random stream (a per-port stream of the run's seed).
    pub fn seed(&mut self, rng: Rng) {
        if let Some(w) = &mut self.cold.whole {
            // A draw of its own: the port's stream itself is left as it was.
            w.seed(rng.clone().next_u64());
        }
        self.cold.rng = rng;
    }

    /// Service class → queue. Classes beyond the last queue share it.
    /// (ML-ECN's stage classes are resolved at the sender: see
    /// `switch::classifier`.)
    #[inline]
    pub fn classify(&self, service: u8) -> usize {
        (service as usize).min(self.queues.len() - 1)
    }

    /// Start loading what an enqueue of a `service` packet will touch.
    #[inline]
    pub fn prefetch_for(&self, service: u8) {
        let q = self.classify(service);
        crate::prefetch::prefetch(&self.queues[q]);
    }

    /// Offer packet `id`; `pool` is the switch's shared-pool occupancy
    /// before this packet. On Err the caller frees the packet. (Right for
    /// any port; a plain one may take `enqueue_plain`.)
    #[inline]
    pub fn enqueue(&mut self, now: Time, id: u32, arena: &mut Arena, pool: u64) -> Result<(), DropReason> {
        self.enqueue_in::<false>(now, id, arena, pool)
    }

    /// `enqueue` on a plain port.
    #[inline(always)]
    pub fn enqueue_plain(&mut self, now: Time, id: u32, arena: &mut Arena, pool: u64) -> Result<(), DropReason> {
        debug_assert!(self.plain);
        self.enqueue_in::<true>(now, id, arena, pool)
    }

    /// `enqueue`; `PLAIN`: the port is known to be plain.
    #[inline(always)]
    fn enqueue_in<const PLAIN: bool>(
        &mut self,
        now: Time,
        id: u32,
        arena: &mut Arena,
        pool: u64,
    ) -> Result<(), DropReason> {
        if !PLAIN && self.is_whole {
            return self.enqueue_whole(now, id, arena);
        }
        let h = arena.get(id);
        let (size, q) = (h.size, self.classify(h.service));
        self.admit::<PLAIN>(now, id, q, size, arena, pool)?;
        let queue = &mut self.queues[q];
        let was_empty = queue.fifo.is_empty();
        queue.fifo.push(id, size);
        queue.max_bytes = queue.max_bytes.max(queue.fifo.bytes);
        self.bytes += size as u64;
        self.packets += 1;
        self.max_bytes = self.max_bytes.max(self.bytes);
        if !PLAIN && self.stamping {
            self.cold.stamps[q].push_back(now);
        }
        if was_empty {
            self.nonempty |= 1 << q;
            self.sched.activate(q, now, &mut Events::<PLAIN>(&mut self.marker));
        }
        Ok(())
    }

    /// `enqueue` on a whole discipline. The packets it pushes out wait in
    /// `Cold::dequeue_drops` (its bytes and packets already exclude them).
    #[cold]
    #[inline(never)]
    fn enqueue_whole(&mut self, now: Time, id: u32, arena: &mut Arena) -> Result<(), DropReason> {
        let cold = &mut *self.cold;
        let w = cold.whole.as_mut().expect("a whole discipline");
        let r = w.enqueue(now, id, arena.get(id), &mut cold.dequeue_drops, &mut cold.tally);
        if r.is_err() {
            cold.drops[0].overflow += 1;
        }
        (self.bytes, self.packets) = w.occupancy();
        self.max_bytes = self.max_bytes.max(self.bytes);
        self.queues[0].max_bytes = self.max_bytes;
        r
    }

    /// `dequeue` on a whole discipline; its drops wait in
    /// `Cold::dequeue_drops`.
    #[cold]
    #[inline(never)]
    fn dequeue_whole(&mut self, now: Time, arena: &mut Arena) -> Option<(u32, u32)> {
        let cold = &mut *self.cold;
        let w = cold.whole.as_mut().expect("a whole discipline");
        let next = w.dequeue(now, arena, &mut cold.dequeue_drops, &mut cold.tally);
        (self.bytes, self.packets) = w.occupancy();
        self.queues[0].marked = cold.tally.marked;
        if let Some((_, size)) = next {
            self.count_sent(0, size);
        }
        next
    }

    /// What an offered packet of `size` bytes for queue `q` meets before it
    /// is queued: MQ-ECN's idle decay if the port was empty, the buffer, and
    /// the marker's enqueue hook (on a plain port, its threshold test).
    #[inline(always)]
    fn admit<const PLAIN: bool>(
        &mut self,
        now: Time,
        id: u32,
        q: usize,
        size: u32,
        arena: &mut Arena,
        pool: u64,
    ) -> Result<(), DropReason> {
        if self.bytes == 0 {
            Events::<PLAIN>(&mut self.marker).port_busy(now);
        }
        if !self.buffer.admits(self.bytes, self.packets, size) {
            self.cold.drops[q].overflow += 1;
            return Err(DropReason::Overflow);
        }
        // A port without a marker (a host NIC's) skips the test, so that the
        // marker's jump table serves switch ports only: shared, it cost 6 M
        // more mispredicted jumps on the 2,000-flow MQ-ECN point (cachegrind).
        if self.hook_in {
            let occ = Occupancy {
                queue: self.queues[q].fifo.bytes + size as u64,
                port: self.bytes + size as u64,
                pool: pool + size as u64,
            };
            if !PLAIN && matches!(self.marker, Marker::Hooked(_)) {
                return self.enter(now, q, occ, id, size, arena);
            }
            if self.marker.exceeds(q, occ) && !self.mark(q, id, arena, false) {
                self.cold.drops[q].aqm_in += 1;
                return Err(DropReason::Aqm);
            }
        }
        Ok(())
    }

    /// The enqueue hook of a marker with state of its own (CEDM, RED, the
    /// ML-ECN comparators).
    #[inline(never)]
    fn enter(
        &mut self,
        now: Time,
        q: usize,
        occ: Occupancy,
        id: u32,
        size: u32,
        arena: &mut Arena,
    ) -> Result<(), DropReason> {
        let seen = Seen { now, q, occ, size, sojourn: 0, backlogged: self.nonempty | 1 << q };
        let Marker::Hooked(h) = &mut self.marker else { unreachable!("enter: a static marker") };
        match h.at_enqueue(&seen, arena.get(id), &mut self.cold.rng) {
            Verdict::Pass | Verdict::Unmark => Ok(()),
            Verdict::Mark if self.mark(q, id, arena, self.unmarks) => Ok(()),
            Verdict::Mark | Verdict::Drop => {
                self.cold.drops[q].aqm_in += 1;
                Err(DropReason::Aqm)
            }
        }
    }

    /// Queue `q` sent a packet of `size` bytes.
    #[inline]
    fn count_sent(&mut self, q: usize, size: u32) {
        let queue = &mut self.queues[q];
        queue.sent_packets += 1;
        queue.sent_bytes += size as u64;
    }

    /// Offer packet `id` to an empty port that is free to send it at once:
    /// the state an `enqueue` and an immediate `dequeue` would leave, without
    /// the FIFO, its ring or the round-robin list (each a cache line the
    /// packet would touch for nothing). None, having changed nothing, where
    /// the shortcut does not apply: with a dequeue hook, or when the
    /// scheduler would not send the packet in the queue's first turn.
    #[inline]
    pub fn pass_through(&mut self, now: Time, id: u32, arena: &mut Arena, pool: u64) -> Option<Result<(), DropReason>> {
        self.pass_through_in::<false>(now, id, arena, pool)
    }

    /// `pass_through` on a plain port.
    #[inline(always)]
    pub fn pass_through_plain(
        &mut self,
        now: Time,
        id: u32,
        arena: &mut Arena,
        pool: u64,
    ) -> Option<Result<(), DropReason>> {
        debug_assert!(self.plain);
        self.pass_through_in::<true>(now, id, arena, pool)
    }

    #[inline(always)]
    fn pass_through_in<const PLAIN: bool>(
        &mut self,
        now: Time,
        id: u32,
        arena: &mut Arena,
        pool: u64,
    ) -> Option<Result<(), DropReason>> {
        debug_assert_eq!(self.packets, 0);
        let p = arena.get(id);
        let (size, q) = (p.size, self.classify(p.service));
        if (!PLAIN && self.hook_out) || !self.sched.sends_first_turn(q, size as u64) {
            return None;
        }
        // As `enqueue` on an empty port ...
        if let Err(e) = self.admit::<PLAIN>(now, id, q, size, arena, pool) {
            return Some(Err(e));
        }
        let queue = &mut self.queues[q];
        queue.max_bytes = queue.max_bytes.max(size as u64);
        self.max_bytes = self.max_bytes.max(size as u64);
        // ... then `dequeue` of the only packet: its queue is activated and
        // its turn ends when the packet has left; the port is empty again.
        let events = &mut Events::<PLAIN>(&mut self.marker);
        self.sched.serve_first_turn(q, size as u64, now, self.rate, events);
        events.queue_emptied(q, now);
        events.port_idle(now);
        self.count_sent(q, size);
        Some(Ok(()))
    }

    /// Take the next packet to transmit, if any, with its size on the wire.
    /// Packets dropped by the dequeue hook wait for `take_dequeue_drop`.
    #[inline]
    pub fn dequeue(&mut self, now: Time, arena: &mut Arena, pool: u64) -> Option<(u32, u32)> {
        if self.is_whole {
            return self.dequeue_whole(now, arena);
        }
        self.dequeue_composed(now, arena, pool)
    }

    /// `dequeue` on a plain port.
    #[inline(always)]
    pub fn dequeue_plain(&mut self, now: Time, arena: &mut Arena, pool: u64) -> Option<(u32, u32)> {
        debug_assert!(self.plain);
        self.dequeue_in::<true>(now, arena, pool)
    }

    /// `dequeue` for a port known to run the composed discipline (one
    /// without a dequeue hook can only be: see `drops_at_dequeue`), without
    /// the branch to a whole one. Always inlined, as `dequeue` was into
    /// `World::start_tx_at` before whole disciplines (left to itself LLVM
    /// stopped inlining it: 2% more instructions at the MQ-ECN point).
    #[inline(always)]
    pub fn dequeue_composed(&mut self, now: Time, arena: &mut Arena, pool: u64) -> Option<(u32, u32)> {
        self.dequeue_in::<false>(now, arena, pool)
    }

    #[inline(always)]
    fn dequeue_in<const PLAIN: bool>(&mut self, now: Time, arena: &mut Arena, pool: u64) -> Option<(u32, u32)> {
        debug_assert!(!self.is_whole);
        let mut pool = pool;
        while self.packets > 0 {
            let events = &mut Events::<PLAIN>(&mut self.marker);
            let q = self.sched.select(now, &self.queues, self.nonempty, self.rate, events);
            // Occupancy as the packet is about to leave, itself included.
            let occ = Occupancy { queue: self.queues[q].fifo.bytes, port: self.bytes, pool };
            let (id, size) = self.queues[q].fifo.pop().expect("scheduler chose an empty queue");
            self.bytes -= size as u64;
            self.packets -= 1;
            pool = pool.saturating_sub(size as u64);
            if self.queues[q].fifo.is_empty() {
                self.nonempty &= !(1 << q);
                Events::<PLAIN>(&mut self.marker).queue_emptied(q, now);
            }
            if self.packets == 0 {
                Events::<PLAIN>(&mut self.marker).port_idle(now);
            }
            let kept = PLAIN
                || !self.hook_out
                || if matches!(self.marker, Marker::Hooked(_)) {
                    self.leave(now, q, occ, id, size, arena)
                } else {
                    !self.marker.exceeds(q, occ) || self.mark(q, id, arena, false)
                };
            if !kept {
                self.cold.drops[q].aqm_out += 1;
                self.cold.dequeue_drops.push(id);
                continue;
            }
            self.count_sent(q, size);
            return Some((id, size));
        }
        None
    }

    /// The dequeue hook of a marker with state of its own (CEDM, TCN,
    /// CoDel, MM-ECN, DemePro) for packet `id` of queue `q`; false: drop it.
    #[inline(never)]
    fn leave(&mut self, now: Time, q: usize, occ: Occupancy, id: u32, size: u32, arena: &mut Arena) -> bool {
        let sojourn = match self.cold.stamps.get_mut(q) {
            Some(s) => now - s.pop_front().expect("a stamp per queued packet"),
            None => 0,
        };
        // Its queue still counts as backlogged, as `occ` still counts it.
        let seen = Seen { now, q, occ, size, sojourn, backlogged: self.nonempty | 1 << q };
        let Marker::Hooked(h) = &mut self.marker else { unreachable!("leave: a static marker") };
        let verdict = h.at_dequeue(&seen, arena.get(id).ecn != Ecn::NotEct, &mut self.cold.rng);
        if self.unmarks {
            // The mark, if any, is this queue's until the packet leaves.
            let p = arena.get_mut(id);
            let mine = p.marked_here.take();
            if let (Verdict::Unmark, Some(was)) = (verdict, mine) {
                p.ecn = was;
                self.queues[q].marked -= 1;
                self.cold.drops[q].unmarked += 1;
            }
        }
        match verdict {
            Verdict::Pass | Verdict::Unmark => true,
            // A mark set on the way out is final: the next hop must not
            // take it back.
            Verdict::Mark => self.mark(q, id, arena, false),
            Verdict::Drop => false,
        }
    }

    /// Packets may be dropped on the way out (a dequeue hook, or a whole
    /// discipline): the caller then looks for them (`take_dequeue_drop`).
    #[inline]
    pub fn drops_at_dequeue(&self) -> bool {
        self.hook_out
    }

    /// A packet dropped at dequeue (or, by a whole discipline, pushed out
    /// at enqueue), for the caller to account and free.
    #[inline]
    pub fn take_dequeue_drop(&mut self) -> Option<u32> {
        if !self.hook_out {
            return None;
        }
        self.cold.dequeue_drops.pop()
    }

    /// Queue `q`'s counters. Every packet taken in was sent, is still
    /// queued, or was dropped by the AQM on the way out (or, by a whole
    /// discipline, pushed out to make room), so the number enqueued follows
    /// from the others. Push-outs count as overflow drops, CoDel's as AQM.
    pub fn counters(&self, q: usize) -> QueueCounters {
        let (queue, drops, t) = (&self.queues[q], self.cold.drops[q], self.cold.tally);
        let queued = if self.is_whole { self.packets } else { self.queue_occupancy(q).1 };
        QueueCounters {
            enqueued: queue.sent_packets + queued + drops.aqm_out + t.aqm + t.evicted,
            marked: queue.marked,
            unmarked: drops.unmarked,
            dropped_overflow: drops.overflow + t.evicted,
            dropped_aqm: drops.aqm_in + drops.aqm_out + t.aqm,
            max_bytes: queue.max_bytes,
            sent_packets: queue.sent_packets,
            sent_bytes: queue.sent_bytes,
        }
    }

    /// The port's counters: every queue's summed, with the port's own peak
    /// (queues peak at different times), for the ports table's port row.
    pub fn port_counters(&self) -> QueueCounters {
        let mut total = QueueCounters { max_bytes: self.max_bytes, ..Default::default() };
        for c in (0..self.queues.len()).map(|q| self.counters(q)) {
            total.enqueued += c.enqueued;
            total.marked += c.marked;
            total.unmarked += c.unmarked;
            total.dropped_overflow += c.dropped_overflow;
            total.dropped_aqm += c.dropped_aqm;
            total.sent_packets += c.sent_packets;
            total.sent_bytes += c.sent_bytes;
        }
        total
    }

    /// The marking condition holds for packet `id` of queue `q`: CE on an
    /// ECT packet, or (with drop_not_ect) false to say "drop this Not-ECT
    /// one". `remember`: this queue may take the mark back as the packet
    /// leaves.
    #[inline]
    fn mark(&mut self, q: usize, id: u32, arena: &mut Arena, remember: bool) -> bool {
        let p = arena.get_mut(id);
        match p.ecn {
            was @ (Ecn::Ect | Ecn::Ect1) => {
                p.ecn = Ecn::Ce;
                p.marked_here = remember.then_some(was);
                self.queues[q].marked += 1;
                true
            }
            Ecn::NotEct => !self.drop_not_ect,
            Ecn::Ce => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, Packet};
    use crate::switch::marker::{Hooked, PerQueue};
    use crate::switch::scheduler::Sp;

    /// Queue counters add up, whichever side marks: per queue, every packet
    /// offered was refused (buffer full, or the AQM at enqueue) or taken in,
    /// and every packet taken in was sent or dropped on the way out
    /// (dequeue marking with drop_not_ect). Each count is checked against
    /// what the test itself saw.
    #[test]
    fn counters_account_for_every_packet() {
        for dequeue_marking in [false, true] {
            // 2 queues, K = 3 packets of 1000 B, room for 8 packets.
            let marker = Marker::PerQueue(PerQueue::standard(3000, 2));
            let mut qd = Qdisc::new(2, Scheduler::Sp(Sp), marker, Buffer::Bytes(8000), 10_000_000_000);
            qd.set_dequeue_marking(dequeue_marking);
            qd.drop_not_ect = true;
            let mut arena = Arena::default();
            let (mut offered, mut refused) = ([0u64; 2], [0u64; 2]);
            let (mut sent, mut sent_marked) = ([0u64; 2], [0u64; 2]);
            for i in 0..40u32 {
                let q = (i % 3 == 0) as u8;
                let mut p = Packet::new(Kind::Data, 0, 1, 0, q, 1000);
                p.ecn = if i % 4 == 0 { Ecn::NotEct } else { Ecn::Ect };
                let id = arena.alloc(p, 0);
                offered[q as usize] += 1;
                if qd.enqueue(0, id, &mut arena, 0).is_err() {
                    refused[q as usize] += 1;
                }
                if i % 3 == 2 {
                    if let Some((id, _)) = qd.dequeue(0, &mut arena, 0) {
                        let q = arena.get(id).service as usize;
                        sent[q] += 1;
                        sent_marked[q] += (arena.get(id).ecn == Ecn::Ce) as u64;
                    }
                }
            }
            // Drain: every packet taken in leaves, or is dropped leaving.
            while let Some((id, _)) = qd.dequeue(0, &mut arena, 0) {
                let q = arena.get(id).service as usize;
                sent[q] += 1;
                sent_marked[q] += (arena.get(id).ecn == Ecn::Ce) as u64;
            }
            let out_drops = std::iter::from_fn(|| qd.take_dequeue_drop()).count() as u64;
            for q in 0..2 {
                let c = qd.counters(q);
                assert_eq!(c.enqueued, offered[q] - refused[q], "queue {q}, dequeue marking {dequeue_marking}");
                assert_eq!(refused[q], c.dropped_overflow + if dequeue_marking { 0 } else { c.dropped_aqm });
                assert_eq!(c.sent_packets, sent[q]);
                assert_eq!(c.marked, sent_marked[q]);
            }
            // Both schemes marked and dropped something, or the test
            // checks nothing.
            let total = |f: fn(&QueueCounters) -> u64| (0..2).map(|q| f(&qd.counters(q))).sum::<u64>();
            assert!(total(|c| c.marked) > 0 && total(|c| c.dropped_aqm) > 0 && total(|c| c.dropped_overflow) > 0);
            assert_eq!(out_drops, if dequeue_marking { total(|c| c.dropped_aqm) } else { 0 });
        }
    }

    /// A port on a 10 Gbps link, as `World` drives it: departures run when
    /// due, and an arrival at an empty, idle port is sent at once, by
    /// `pass_through` when `shortcut` is set. Returns (packet, CE) for each
    /// packet sent, and counts shortcuts and fallbacks in `paths`.
    struct Port {
        qd: Qdisc,
        arena: Arena,
        busy_until: Time,
        shortcut: bool,
        paths: (u32, u32),
        /// Shortcuts that marked or dropped (Not-ECT) their packet.
        shortcut_aqm: u32,
    }

    impl Port {
        fn send(&mut self, now: Time, id: u32, size: u32, out: &mut Vec<(u32, bool)>) {
            self.busy_until = now + self.qd.rate.tx_time(size as u64);
            out.push((id, self.arena.get(id).ecn == Ecn::Ce));
        }

        fn arrive(&mut self, now: Time, p: Packet) -> Vec<(u32, bool)> {
            let mut out = Vec::new();
            while self.qd.packets > 0 && self.busy_until <= now {
                let t = self.busy_until;
                if let Some((id, size)) = self.qd.dequeue(t, &mut self.arena, 0) {
                    self.send(t, id, size, &mut out);
                }
            }
            let id = self.arena.alloc(p, 0);
            if self.qd.packets == 0 && now >= self.busy_until {
                if self.shortcut {
                    if let Some(r) = self.qd.pass_through(now, id, &mut self.arena, 0) {
                        self.paths.0 += 1;
                        let aqm = matches!(r, Err(DropReason::Aqm)) || self.arena.get(id).ecn == Ecn::Ce;
                        self.shortcut_aqm += aqm as u32;
                        if r.is_ok() {
                            self.send(now, id, p.size, &mut out);
                        }
                        return out;
                    }
                    self.paths.1 += 1;
                }
                if self.qd.enqueue(now, id, &mut self.arena, 0).is_ok() {
                    let (id, size) = self.qd.dequeue(now, &mut self.arena, 0).expect("just queued");
                    self.send(now, id, size, &mut out);
                }
            } else {
                let _ = self.qd.enqueue(now, id, &mut self.arena, 0);
            }
            out
        }
    }

    /// `pass_through` on an empty port leaves exactly the state of an
    /// `enqueue` followed at once by a `dequeue`: counters, CE marks, the
    /// MQ-ECN round-time estimate (fed by the queue's turn) and so every
    /// later marking and scheduling decision, and AQM drops of Not-ECT
    /// packets (`drop_not_ect`). Two copies of a port take the
    /// same bursty arrivals, one with the shortcut; quanta of 1500 B and
    /// 700 B make DWRR take the shortcut or fall back to its FIFO path.
    /// WFQ with MQ-ECN's weight-sum estimate always takes the shortcut.
    #[test]
    fn pass_through_equals_enqueue_then_dequeue() {
        use crate::switch::marker::{MqEcn, MqEcnGeneric};
        use crate::switch::scheduler::{wrr, Dwrr, Wfq};
        const RATE: u64 = 10_000_000_000;
        let make = |sched: u8, shortcut: bool| {
            let quanta = [1500, 700];
            let s = match sched {
                0 | 3 => Scheduler::RoundRobin(Dwrr::new(quanta.to_vec(), true)),
                1 => Scheduler::RoundRobin(wrr(quanta.to_vec())),
                4 => Scheduler::Wfq(Wfq::new(&quanta)),
                _ => Scheduler::Sp(Sp),
            };
            // K = 1400 B, below a full-size packet, so even an empty port
            // marks (or drops Not-ECT) a 1500 B one; one idle slot = one
            // packet time.
            let m = if sched == 2 {
                Marker::PerQueue(PerQueue::standard(1400, 2))
            } else if sched == 3 {
                // RED with a real average (w_q = 0.2, idle decay through
                // `queue_emptied`) and random draws, over DWRR.
                Hooked::Red(crate::switch::marker::Red::new(1000, 3000, 0.5, 0.2, true, true, 1_200_000, 2)).into()
            } else if sched == 4 {
                Marker::MqEcnGeneric(MqEcnGeneric::new(1400, &quanta, 0.75, 1_200_000))
            } else {
                Marker::MqEcn(MqEcn::new(1400, &quanta, RATE, 0, 0.75, 1_200_000))
            };
            let mut qd = Qdisc::new(2, s, m, Buffer::Bytes(8_000), RATE);
            // One packet in 11 is Not-ECT and dropped where it would be marked.
            qd.drop_not_ect = true;
            Port { qd, arena: Arena::default(), busy_until: 0, shortcut, paths: (0, 0), shortcut_aqm: 0 }
        };
        // MQ-ECN's estimate: T_round, or W_est over WFQ.
        let t_round = |qd: &Qdisc| match &qd.marker {
            Marker::MqEcn(m) => m.t_round(),
            Marker::MqEcnGeneric(m) => m.w_est(),
            _ => 0.0,
        };
        for sched in 0..5u8 {
            let (mut a, mut b) = (make(sched, true), make(sched, false));
            let mut now = 0;
            for i in 0..5000u64 {
                // Bursts at 1.5 to 3 times the line rate, then quiet gaps.
                now += if i % 23 == 0 { 30_000_000 } else { 200_000 * (1 + i * 7 % 4) };
                let (q, size) = ((i % 3 == 0) as u8, [1500, 600, 1000][(i / 2 % 3) as usize]);
                let mut p = Packet::new(Kind::Data, 0, 1, 0, q, size);
                p.ecn = if i % 11 == 0 { Ecn::NotEct } else { Ecn::Ect };
                assert_eq!(a.arrive(now, p), b.arrive(now, p), "scheduler {sched}, arrival {i}");
                assert_eq!(t_round(&a.qd).to_bits(), t_round(&b.qd).to_bits(), "scheduler {sched}, arrival {i}");
                assert_eq!((a.qd.bytes, a.qd.max_bytes), (b.qd.bytes, b.qd.max_bytes));
            }
            let count = |c: QueueCounters| {
                (c.enqueued, c.marked, c.dropped_overflow, c.dropped_aqm, c.max_bytes, c.sent_packets, c.sent_bytes)
            };
            for q in 0..2 {
                assert_eq!(count(a.qd.counters(q)), count(b.qd.counters(q)), "scheduler {sched}, queue {q}");
            }
            // Both paths ran, queues built up to marks and overflows, and
            // MQ-ECN had rounds to time; else the comparison shows little.
            let total = |f: fn(&QueueCounters) -> u64| (0..2).map(|q| f(&a.qd.counters(q))).sum::<u64>();
            assert!(a.paths.0 > 100, "scheduler {sched}: {:?}", a.paths);
            assert_eq!(a.paths.1 > 0, sched == 0 || sched == 3, "scheduler {sched}: {:?}", a.paths);
            assert!(total(|c| c.marked) > 100 && total(|c| c.dropped_overflow) > 0, "scheduler {sched}");
            // (RED's average decays while a port is idle, so its shortcuts
            // rarely mark: only the others must mark on the shortcut.)
            assert!(total(|c| c.dropped_aqm) > 0 && (sched == 3 || a.shortcut_aqm > 0), "scheduler {sched}");
            assert!(matches!(sched, 2 | 3) || t_round(&a.qd) > 0.0);
        }
    }

    /// A plain port's static path (`enqueue_plain`, `pass_through_plain`,
    /// `dequeue_plain`) does what the general one does, for every static
    /// marker: two copies of a port take the same random arrivals (in
    /// bursts and lulls, three sizes, one packet in 7 Not-ECT and dropped
    /// where it would be marked) and departures, one by each path, and every verdict, CE mark,
    /// counter and MQ-ECN estimate must agree at every step.
    #[test]
    fn static_path_equals_general_path() {
        use crate::switch::marker::{MqEcn, MqEcnGeneric, PerPool, PerPort};
        use crate::switch::scheduler::{Dwrr, Wfq};
        const RATE: u64 = 10_000_000_000;
        let quanta = [1500, 700, 3000];
        let make = |m: usize| {
            let marker = match m {
                0 => Marker::None,
                1 => Marker::PerQueue(PerQueue::standard(4000, 3)),
                2 => Marker::PerPort(PerPort { k: 6000 }),
                3 => Marker::PerPool(PerPool { k: 5000 }),
                4 => Marker::MqEcn(MqEcn::new(6000, &quanta, RATE, 0, 0.75, 1_200_000)),
                5 => Marker::PerQueue(PerQueue::minimum(9000, &quanta)),
                _ => Marker::MqEcnGeneric(MqEcnGeneric::new(6000, &quanta, 0.75, 1_200_000)),
            };
            let sched = match m {
                6 => Scheduler::Wfq(Wfq::new(&quanta)),
                5 => Scheduler::Sp(Sp),
                _ => Scheduler::RoundRobin(Dwrr::new(quanta.to_vec(), true)),
            };
            let mut qd = Qdisc::new(3, sched, marker, Buffer::Bytes(20_000), RATE);
            qd.drop_not_ect = true;
            assert!(qd.is_plain(), "marker {m}");
            qd
        };
        let estimate = |qd: &Qdisc| match &qd.marker {
            Marker::MqEcn(m) => m.t_round(),
            Marker::MqEcnGeneric(m) => m.w_est(),
            _ => 0.0,
        };
        for m in 0..7 {
            let (mut a, mut b) = (make(m), make(m));
            let (mut arena_a, mut arena_b) = (Arena::default(), Arena::default());
            let mut rng = Rng::new(m as u64 + 1);
            let (mut now, mut marks, mut drops, mut shortcuts) = (0, 0, 0, 0);
            for i in 0..20_000u64 {
                // Quiet gaps now and then, so ports empty and MQ-ECN decays.
                now += if rng.uniform() < 0.02 { 20_000_000 } else { 300_000 + rng.next_u64() % 900_000 };
                // Bursts that build the queues up, then lulls that drain them.
                let arriving = if (i / 60) % 2 == 0 { 0.75 } else { 0.25 };
                if rng.uniform() < arriving {
                    let q = (rng.next_u64() % 3) as u8;
                    let mut p = Packet::new(Kind::Data, 0, 1, 0, q, [1500, 600, 64][(rng.next_u64() % 3) as usize]);
                    p.ecn = if i % 7 == 0 { Ecn::NotEct } else { Ecn::Ect };
                    let (ia, ib) = (arena_a.alloc(p, 0), arena_b.alloc(p, 0));
                    // A shared pool that counts more than this port.
                    let pool = a.bytes + rng.next_u64() % 4000;
                    let (ra, rb) = if a.packets == 0 && rng.uniform() < 0.5 {
                        let (ra, rb) = (
                            a.pass_through_plain(now, ia, &mut arena_a, pool),
                            b.pass_through(now, ib, &mut arena_b, pool),
                        );
                        assert_eq!(ra, rb, "marker {m}, step {i}");
                        match (ra, rb) {
                            (Some(ra), Some(rb)) => {
                                shortcuts += 1;
                                (ra, rb)
                            }
                            _ => (a.enqueue_plain(now, ia, &mut arena_a, pool), b.enqueue(now, ib, &mut arena_b, pool)),
                        }
                    } else {
                        (a.enqueue_plain(now, ia, &mut arena_a, pool), b.enqueue(now, ib, &mut arena_b, pool))
                    };
                    assert_eq!(ra, rb, "marker {m}, step {i}");
                    drops += ra.is_err() as u32;
                    assert_eq!(arena_a.get(ia).ecn, arena_b.get(ib).ecn, "marker {m}, step {i}");
                } else {
                    let pool = a.bytes;
                    let (sa, sb) = (a.dequeue_plain(now, &mut arena_a, pool), b.dequeue(now, &mut arena_b, pool));
                    assert_eq!(sa, sb, "marker {m}, step {i}");
                    if let (Some((ia, _)), Some((ib, _))) = (sa, sb) {
                        assert_eq!(arena_a.get(ia).ecn, arena_b.get(ib).ecn, "marker {m}, step {i}");
                        marks += (arena_a.get(ia).ecn == Ecn::Ce) as u32;
                    }
                }
                assert_eq!((a.bytes, a.packets, a.max_bytes), (b.bytes, b.packets, b.max_bytes));
                assert_eq!(estimate(&a).to_bits(), estimate(&b).to_bits(), "marker {m}, step {i}");
            }
            for q in 0..3 {
                let (ca, cb) = (a.counters(q), b.counters(q));
                assert_eq!(
                    (ca.enqueued, ca.marked, ca.dropped_overflow, ca.dropped_aqm, ca.max_bytes, ca.sent_bytes),
                    (cb.enqueued, cb.marked, cb.dropped_overflow, cb.dropped_aqm, cb.max_bytes, cb.sent_bytes),
                    "marker {m}, queue {q}"
                );
            }
            // Both paths were taken, and the markers marked and dropped,
            // or the comparison shows little.
            assert!(shortcuts > 100 && drops > 100, "marker {m}: {shortcuts} shortcuts, {drops} drops");
            assert_eq!(marks > 100, m > 0, "marker {m}: {marks} marks");
            assert_eq!(estimate(&a) > 0.0, m == 4 || m == 6, "marker {m}");
        }
    }

    /// TCN marks at dequeue exactly the packets that waited longer than T
    /// (strictly), under DWRR with two queues: the sojourn each packet had
    /// is worked out here from its own enqueue and dequeue times.
    #[test]
    fn tcn_marks_exactly_the_packets_that_waited_longer_than_t() {
        use crate::switch::marker::Tcn;
        use crate::switch::scheduler::Dwrr;
        let t = 20_000_000; // T = 20 µs
        let m = Hooked::Tcn(Tcn { threshold: t }).into();
        let mut qd = Qdisc::new(
            2,
            Scheduler::RoundRobin(Dwrr::new(vec![1500, 1500], true)),
            m,
            Buffer::Bytes(1 << 30),
            10_000_000_000,
        );
        let mut arena = Arena::default();
        let mut born = std::collections::HashMap::new();
        let (mut now, mut checked, mut marked) = (0u64, 0, 0);
        for i in 0..4000u64 {
            // 50 steps of irregular bursts (1.8 packets per dequeue), then
            // 50 of none: queues build up and drain, and sojourns fall on
            // both sides of T.
            let burst = if (i / 50) % 2 == 0 { (i * 7 % 5) / 2 + 1 } else { 0 };
            for j in 0..burst {
                let mut p = Packet::new(Kind::Data, 0, 1, 0, ((i + j) % 2) as u8, 1500);
                p.ecn = Ecn::Ect;
                let id = arena.alloc(p, 0);
                qd.enqueue(now, id, &mut arena, 0).unwrap();
                born.insert(id, now);
            }
            now += 1_200_000 + i * 13 % 700_000;
            if let Some((id, _)) = qd.dequeue(now, &mut arena, 0) {
                let sojourn = now - born.remove(&id).unwrap();
                let ce = arena.get(id).ecn == Ecn::Ce;
                assert_eq!(ce, sojourn > t, "packet {id}: sojourn {sojourn} ps");
                checked += 1;
                marked += ce as u32;
                arena.free(id);
            }
        }
        // Both outcomes happened many times.
        assert!(marked > 200 && checked - marked > 200, "{marked} of {checked}");
        assert_eq!(qd.counters(0).marked + qd.counters(1).marked, marked as u64);
    }

    /// DemePro through the qdisc: K = 20 packets, two DWRR queues with
    /// equal quanta. Queue 0 takes 15 packets, queue 1 five (20 in all, not
    /// over K); the 21st, to queue 1, puts the port over K with fair shares
    /// of 10.5 packets each, queue 0 4.5 over. The one CE of the run must be
    /// on queue 0's first packet (its head then), not on the arriving packet
    /// nor on any later packet of queue 0, whatever order DWRR sends them in.
    #[test]
    fn deme_pro_marks_the_head_of_the_queue_over_its_share() {
        use crate::switch::marker::{DemePro, FairShare};
        use crate::switch::scheduler::Dwrr;
        let m = Hooked::DemePro(DemePro::new(20 * 1500, &[1500, 1500], FairShare::Occupancy)).into();
        let sched = Scheduler::RoundRobin(Dwrr::new(vec![1500, 1500], true));
        let mut qd = Qdisc::new(2, sched, m, Buffer::Bytes(1 << 30), 10_000_000_000);
        let mut arena = Arena::default();
        let mut ids = Vec::new();
        for q in std::iter::repeat_n(0, 15).chain(std::iter::repeat_n(1, 6)) {
            let mut p = Packet::new(Kind::Data, 0, 1, 0, q, 1500);
            p.ecn = Ecn::Ect;
            let id = arena.alloc(p, 0);
            qd.enqueue(0, id, &mut arena, 0).unwrap();
            ids.push(id);
        }
        // Nothing is marked on the way in.
        assert!(ids.iter().all(|&i| arena.get(i).ecn == Ecn::Ect));
        let mut marked = Vec::new();
        while let Some((id, _)) = qd.dequeue(0, &mut arena, 0) {
            if arena.get(id).ecn == Ecn::Ce {
                marked.push(id);
            }
        }
        assert_eq!(marked, [ids[0]]);
        assert_eq!((qd.counters(0).marked, qd.counters(1).marked), (1, 0));
    }

    /// DemePro's own count of each queue's bytes stays equal to the queue's
    /// through overflow drops (the buffer holds 12 packets), dequeue drops
    /// of Not-ECT heads (drop_not_ect) and empty queues, under random
    /// arrivals to three queues and random service.
    #[test]
    fn deme_pro_keeps_an_exact_count_of_each_queue() {
        use crate::switch::marker::{DemePro, FairShare};
        use crate::switch::scheduler::Dwrr;
        let m = Hooked::DemePro(DemePro::new(6 * 1500, &[1500, 1500, 3000], FairShare::Occupancy)).into();
        let sched = Scheduler::RoundRobin(Dwrr::new(vec![1500, 1500, 3000], true));
        let mut qd = Qdisc::new(3, sched, m, Buffer::Bytes(12 * 1500), 10_000_000_000);
        qd.drop_not_ect = true;
        let mut arena = Arena::default();
        let mut rng = Rng::new(5);
        let (mut overflows, mut out_drops, mut marks) = (0, 0, 0);
        for i in 0..20_000u64 {
            if rng.uniform() < 0.55 {
                let q = (rng.next_u64() % 3) as u8;
                let size = [1500, 600, 64][(rng.next_u64() % 3) as usize];
                let mut p = Packet::new(Kind::Data, 0, 1, 0, q, size);
                p.ecn = if rng.uniform() < 0.2 { Ecn::NotEct } else { Ecn::Ect };
                let id = arena.alloc(p, 0);
                if qd.enqueue(i, id, &mut arena, 0).is_err() {
                    overflows += 1;
                    arena.free(id);
                }
            } else if let Some((id, _)) = qd.dequeue(i, &mut arena, 0) {
                marks += (arena.get(id).ecn == Ecn::Ce) as u32;
                arena.free(id);
            }
            while let Some(id) = qd.take_dequeue_drop() {
                out_drops += 1;
                arena.free(id);
            }
            let Some(Hooked::DemePro(d)) = qd.marker.hooked() else { unreachable!() };
            for q in 0..3 {
                assert_eq!(d.queue_bytes(q), qd.queues[q].fifo.bytes, "step {i}, queue {q}");
            }
        }
        assert!(overflows > 100 && out_drops > 100 && marks > 100, "{overflows} {out_drops} {marks}");
    }

    /// CEDM's mark, set at enqueue, is taken back at dequeue when the queue
    /// has fallen below K1; a packet that came marked from upstream keeps
    /// its CE whatever CEDM decides here.
    #[test]
    fn cedm_takes_back_only_its_own_marks() {
        use crate::switch::marker::Cedm;
        let m = Hooked::Cedm(Cedm::new(3000, 9000, 0.129, 1)).into();
        let mut qd = Qdisc::new(1, Scheduler::Sp(Sp), m, Buffer::Bytes(1 << 30), 10_000_000_000);
        let mut arena = Arena::default();
        let mut ids = Vec::new();
        // Five 1000 B packets: the 4th and 5th find q ≥ K1 = 3000 B
        // (avg_s = 0 ≥ 0) and are marked; the 2nd arrives already CE.
        for i in 0..5 {
            let mut p = Packet::new(Kind::Data, 0, 1, 0, 0, 1000);
            p.ecn = if i == 1 { Ecn::Ce } else { Ecn::Ect };
            let id = arena.alloc(p, 0);
            qd.enqueue(0, id, &mut arena, 0).unwrap();
            ids.push(id);
        }
        let ce = |a: &Arena| ids.iter().map(|&i| a.get(i).ecn == Ecn::Ce).collect::<Vec<_>>();
        assert_eq!(ce(&arena), [false, true, false, true, true]);
        assert_eq!(qd.counters(0).marked, 2);
        // Drain at 1 µs steps; each packet leaves 4000, 3000, ..., 0 B
        // behind. Every dequeue from the 3rd on leaves q < K1, so the 4th
        // and 5th lose their marks; the 2nd leaves q = K1 with avg_s still
        // > 0 (the first sample saw the build-up), and an upstream CE is
        // never this queue's to take back anyway.
        for k in 1..=5u64 {
            qd.dequeue(k * 1_000_000, &mut arena, 0).unwrap();
        }
        assert_eq!(ce(&arena), [false, true, false, false, false]);
        let c = qd.counters(0);
        assert_eq!((c.marked, c.unmarked), (0, 2));
        assert!(ids.iter().all(|&i| arena.get(i).marked_here.is_none()));
    }

    /// ML-ECN's classes share the link by weight: stages 1, 2, 3 go to the
    /// small, medium and large queue (Alg. 1) and, kept backlogged under
    /// WRR with quanta 4:2:1 (ML-ECN §IV), they send 4/7, 2/7, 1/7 of the
    /// bytes; the bar is 3%.
    #[test]
    fn stage_classes_share_the_link_4_2_1() {
        use crate::switch::classifier::StageClasses;
        use crate::switch::scheduler::wrr;
        for rr in [wrr(vec![6000, 3000, 1500]), crate::switch::scheduler::Dwrr::new(vec![6000, 3000, 1500], true)] {
            let mut qd = Qdisc::new(3, Scheduler::RoundRobin(rr), Marker::None, Buffer::Bytes(1 << 30), 10_000_000_000);
            let classes = StageClasses::new([vec![0], vec![1], vec![2]], [vec![1], vec![2], vec![3]]);
            let mut arena = Arena::default();
            let offer = |qd: &mut Qdisc, arena: &mut Arena, stage: u8| {
                let mut p = Packet::new(Kind::Data, 0, 1, 9, classes.queue(stage, 9) as u8, 1500);
                p.stage = stage;
                let id = arena.alloc(p, 0);
                qd.enqueue(0, id, arena, 0).unwrap();
            };
            for _ in 0..20 {
                for stage in 1..=3 {
                    offer(&mut qd, &mut arena, stage);
                }
            }
            let mut sent = [0u64; 3];
            for k in 0..7000u64 {
                let (id, size) = qd.dequeue(k * 1_200_000, &mut arena, 0).unwrap();
                sent[qd.classify(arena.get(id).service)] += size as u64;
                // Keep every class backlogged: refill what left.
                let stage = arena.get(id).stage;
                offer(&mut qd, &mut arena, stage);
                arena.free(id);
            }
            let total: u64 = sent.iter().sum();
            for (q, want) in [4.0 / 7.0, 2.0 / 7.0, 1.0 / 7.0].into_iter().enumerate() {
                let share = sent[q] as f64 / total as f64;
                assert!((share / want - 1.0).abs() < 0.03, "queue {q}: {share} vs {want}");
            }
        }
    }

    /// A whole discipline behind the Qdisc keeps the port's counts exact:
    /// random arrivals of three sizes from 40 flows, random departures,
    /// FQ-CoDel with a 30-packet limit (fattest-flow batches) and CoDel at
    /// 5 µs / 100 µs on Not-ECT packets (drops), and pFabric in 20 KB
    /// (push-outs and refused arrivals). At every step the Qdisc's bytes
    /// and packets equal what the test holds, and at the end every packet
    /// offered was sent, is queued, or was handed back as a drop, each
    /// kind of drop counted where the reports look (overflow, AQM).
    #[test]
    fn whole_disciplines_account_for_every_packet() {
        use crate::switch::codel::Codel;
        use crate::switch::fq_codel::FqCodel;
        use crate::switch::pfabric::PFabric;
        use crate::switch::Whole;
        let codel = Codel { target: 5_000_000, interval: 100_000_000, mtu: 1500, ecn: true };
        for pick in 0..2 {
            let w = if pick == 0 {
                Whole::FqCodel(FqCodel::new(1024, 1514, 30, Buffer::Bytes(u64::MAX), codel))
            } else {
                Whole::PFabric(PFabric::new(Buffer::Bytes(20_000)))
            };
            let mut qd = Qdisc::whole(w, 10_000_000_000);
            qd.seed(Rng::new(3));
            let mut arena = Arena::default();
            let mut rng = Rng::new(9);
            let mut held = std::collections::HashMap::new();
            let (mut offered, mut refused, mut sent, mut dropped, mut marked) = (0u64, 0u64, 0u64, 0u64, 0u64);
            for i in 0..40_000u64 {
                let now = i * 600_000;
                if rng.uniform() < 0.6 {
                    let f = (rng.next_u64() % 40) as u32;
                    let mut p = Packet::new(Kind::Data, f, 99, f, 0, [1500, 700, 64][(rng.next_u64() % 3) as usize]);
                    p.ecn = if f.is_multiple_of(2) { Ecn::Ect } else { Ecn::NotEct };
                    p.set_prio(rng.next_u64() % 100_000);
                    let id = arena.alloc(p, 0);
                    offered += 1;
                    match qd.enqueue(now, id, &mut arena, 0) {
                        Ok(()) => {
                            held.insert(id, p.size as u64);
                        }
                        Err(e) => {
                            assert_eq!(e, DropReason::Overflow);
                            refused += 1;
                            arena.free(id);
                        }
                    }
                } else if let Some((id, size)) = qd.dequeue(now, &mut arena, 0) {
                    assert_eq!(held.remove(&id), Some(size as u64));
                    sent += 1;
                    marked += (arena.get(id).ecn == Ecn::Ce) as u64;
                    arena.free(id);
                }
                while let Some(id) = qd.take_dequeue_drop() {
                    assert!(held.remove(&id).is_some(), "a drop of a packet not queued");
                    dropped += 1;
                    arena.free(id);
                }
                assert_eq!((qd.bytes, qd.packets), (held.values().sum::<u64>(), held.len() as u64), "step {i}");
            }
            let c = qd.counters(0);
            assert_eq!(c.enqueued, offered - refused, "discipline {pick}");
            assert_eq!(c.sent_packets, sent);
            assert_eq!(c.marked, marked);
            assert_eq!(c.dropped_overflow + c.dropped_aqm, dropped + refused);
            assert_eq!(c.enqueued, sent + held.len() as u64 + dropped);
            assert_eq!(arena.live(), held.len());
            // Both kinds of drop happened (FQ-CoDel: batches and CoDel;
            // pFabric: push-outs and refusals), or the test shows little.
            if pick == 0 {
                assert!(c.dropped_overflow > 100 && c.dropped_aqm > 100 && marked > 100, "{c:?}");
            } else {
                assert!(dropped > 100 && refused > 100 && c.dropped_aqm == 0, "{c:?}");
            }
        }
    }
}
