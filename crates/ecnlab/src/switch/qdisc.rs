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
use super::marker::{Events, Marker, MarkingDecl, Occupancy, Seen, Sides, Verdict};
use super::queue::Queue;
use super::scheduler::{Scheduler, SchedulerDecl, Sp};
use super::scheme::{About, PortCtx};
use super::whole::{DropReason, Tally};
use super::Whole;
use crate::config::{bad, ConfigError};
use crate::packet::{Arena, Ecn};
use crate::rng::Rng;
use crate::units::{LineRate, Time};

/// A queue discipline: the composed one, or a whole design of its own.
pub struct QdiscDecl {
    pub about: About,
    /// The composed discipline's own keys (scheduler, marking, ...), which
    /// a whole discipline refuses.
    pub composed: bool,
    /// It schedules by the remaining-size priority that a congestion
    /// control stamps on every packet (pFabric's); the registry refuses it
    /// with one that stamps none.
    pub needs_priority: bool,
    /// Its checks, and the discipline for a port: a whole one's own, the
    /// composed one's from the scheduler and marking scheme in `Parts`.
    pub validate: fn(&PortCtx, &Parts) -> Result<(), ConfigError>,
    pub build: fn(&PortCtx, &Parts) -> Qdisc,
}

/// The composed discipline's parts, as the port names them: what the
/// composed one checks and builds from (a whole discipline ignores them).
pub struct Parts<'a> {
    pub scheduler: &'a SchedulerDecl,
    pub marking: &'a MarkingDecl,
}

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
    validate: |c, parts| {
        c.port.validate_composed(c.sec)?;
        if c.port.dequeue_marking {
            // By name: `NONE` is a const, so each `&NONE` may be its own
            // copy, and pointer equality held only where the optimiser
            // merged them (release builds), not in debug builds.
            if parts.marking.about.name == super::marker::NONE.about.name {
                return Err(bad(
                    &c.key("dequeue_marking"),
                    true,
                    &format!("needs a marking scheme ({}.marking is \"none\")", c.sec),
                ));
            }
            if let Some(sides) = parts.marking.own_sides {
                return Err(bad(
                    &c.key("dequeue_marking"),
                    true,
                    &format!(
                        "\"{}\" decides on its own sides ({sides}); leave dequeue_marking off",
                        parts.marking.about.name
                    ),
                ));
            }
        }
        Ok(())
    },
    build: |c, parts| {
        let buffer = Buffer::new(c.port.buffer.0, c.pkt);
        let mut q = Qdisc::new(
            c.port.queues as usize,
            (parts.scheduler.build)(c),
            (parts.marking.build)(c),
            buffer,
            c.rate_bps,
        );
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
    /// Bit i set while queue i is paused by PFC (`pause_queue`): it keeps
    /// its packets and takes more, but the scheduler does not see it.
    paused: u64,
    /// PFC may pause its queues (`Qdisc::set_pausable`).
    pausable: bool,
    /// Its departures are stamped with telemetry (`Qdisc::set_telemetry`).
    telemetry: bool,
    /// Bit i set where queue i carries a PFC-lossless priority
    /// (`Qdisc::set_lossless`): its AQM marks but never drops.
    lossless: u64,
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
                paused: 0,
                pausable: false,
                telemetry: false,
                lossless: 0,
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
        self.plain = !hooked
            && !self.hook_out
            && !self.stamping
            && !self.is_whole
            && !self.cold.pausable
            && !self.cold.telemetry;
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

    /// `enqueue` out of line, for the lossless switch's own path: a
    /// second caller of the inlined one made LLVM stop inlining it into
    /// the hooked path (cachegrind, incast_1g).
    #[inline(never)]
    pub fn enqueue_lossless(&mut self, now: Time, id: u32, arena: &mut Arena, pool: u64) -> Result<(), DropReason> {
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
            Verdict::Mark | Verdict::Drop if self.lossless(q) => Ok(()),
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
    /// the shortcut does not apply: with a dequeue hook that may drop or
    /// keeps state of its own (a whole discipline, `drop_not_ect`, a hooked
    /// marker unless it passes a lone packet: `HookedMarker::passes_alone`),
    /// or when the scheduler would not send the packet in the queue's first
    /// turn. A static marker judging at dequeue judges the lone packet here,
    /// as it would leave (docs/performance.md, "The dequeue path").
    ///
    /// `pool` is the switch's pool before the packet, as for `enqueue`;
    /// `out_pool` what `dequeue` would be given for it (the pool with the
    /// packet in it, or 0 where the port has no pool). Always inlined into
    /// the hooked enqueue, as LLVM did until that path gained the lossless
    /// switch's test (then 0.7% more instructions on incast_1g).
    #[inline(always)]
    pub fn pass_through(
        &mut self,
        now: Time,
        id: u32,
        arena: &mut Arena,
        pool: u64,
        out_pool: u64,
    ) -> Option<Result<(), DropReason>> {
        self.pass_through_in::<false>(now, id, arena, pool, out_pool)
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
        self.pass_through_in::<true>(now, id, arena, pool, 0)
    }

    #[inline(always)]
    fn pass_through_in<const PLAIN: bool>(
        &mut self,
        now: Time,
        id: u32,
        arena: &mut Arena,
        pool: u64,
        out_pool: u64,
    ) -> Option<Result<(), DropReason>> {
        debug_assert_eq!(self.packets, 0);
        let p = arena.get(id);
        let (size, q) = (p.size, self.classify(p.service));
        let judge_out = !PLAIN && self.hook_out;
        if judge_out {
            let goes_long = match &self.marker {
                // A hooked marker only where it says a lone packet passes.
                Marker::Hooked(h) => self.stamping || self.unmarks || !h.passes_alone(size as u64),
                _ => self.drop_not_ect,
            };
            if self.is_whole || goes_long {
                return None;
            }
        }
        if !self.sched.sends_first_turn(q, size as u64) {
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
        if judge_out {
            // What `dequeue` would see: the packet alone in its queue and
            // port. (A hooked marker passes it: `passes_alone`.)
            let occ = Occupancy { queue: size as u64, port: size as u64, pool: out_pool };
            if self.marker.exceeds(q, occ) {
                // Without drop_not_ect a mark cannot fail (`mark`).
                self.mark(q, id, arena, false);
            }
        }
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
        self.dequeue_in::<true, false>(now, arena, pool)
    }

    /// `dequeue` for a port known to run the composed discipline (one
    /// without a dequeue hook can only be: see `drops_at_dequeue`), without
    /// the branch to a whole one. Always inlined, as `dequeue` was into
    /// `World::start_tx_at` before whole disciplines (left to itself LLVM
    /// stopped inlining it: 2% more instructions at the MQ-ECN point).
    #[inline(always)]
    pub fn dequeue_composed(&mut self, now: Time, arena: &mut Arena, pool: u64) -> Option<(u32, u32)> {
        self.dequeue_in::<false, false>(now, arena, pool)
    }

    /// `dequeue` at a port PFC may pause (`set_pausable`; composed only):
    /// the next packet of a queue not paused.
    #[inline(never)]
    pub fn dequeue_pausable(&mut self, now: Time, arena: &mut Arena, pool: u64) -> Option<(u32, u32)> {
        self.dequeue_in::<false, true>(now, arena, pool)
    }

    #[inline(always)]
    fn dequeue_in<const PLAIN: bool, const PAUSE: bool>(
        &mut self,
        now: Time,
        arena: &mut Arena,
        pool: u64,
    ) -> Option<(u32, u32)> {
        debug_assert!(!self.is_whole);
        let mut pool = pool;
        // PAUSE: PFC may have paused queues (`dequeue_pausable`), which
        // the scheduler must not see; a copy of its own, so that the other
        // paths are as they were.
        while if PAUSE { self.nonempty & !self.cold.paused != 0 } else { self.packets > 0 } {
            let eligible = if PAUSE { self.nonempty & !self.cold.paused } else { self.nonempty };
            let events = &mut Events::<PLAIN>(&mut self.marker);
            let q = self.sched.select(now, &self.queues, eligible, self.rate, events);
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
            Verdict::Drop => self.lossless(q),
        }
    }

    /// A packet for queue `q` was refused before it reached the port (the
    /// switch's shared buffer): an overflow drop of that queue.
    pub fn count_overflow(&mut self, q: usize) {
        self.cold.drops[q].overflow += 1;
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
            Ecn::NotEct => !self.drop_not_ect || self.lossless(q),
            Ecn::Ce => true,
        }
    }
}

mod pause;
#[cfg(test)]
mod tests;
