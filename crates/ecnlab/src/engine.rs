//! The event queue: a two-level timing wheel, with coarser levels above it
//! for far events.
//!
//! Events are spaced tens of nanoseconds apart and scheduled microseconds
//! ahead (a transmission, a link delay). The wheel has 64 buckets of
//! 1.05 µs (67 µs ahead); an event is appended to its bucket's array. When
//! the wheel reaches a bucket, its entries are spread over 64 slots of
//! 16.4 ns, and each slot, when reached, is sorted (about seven entries,
//! placed by rank without branches) and served from a small array. Every
//! event is thus written and read in sequence, never chased through a
//! linked list: a list per slot, walked on every pop, cost a tenth of the
//! run time in cache misses. Events
//! beyond the wheel (timers of milliseconds, far flow starts, packets on
//! slow links) wait in the levels of `levels.rs`: rings of 64 buckets of
//! 67 µs, 4.3 ms, 275 ms and 17.6 s, and a heap beyond 1126 s. When the
//! wheel has served the last bucket of its 67 µs span, the levels hand it
//! the next span's entries, which it spreads over its buckets. (A radix
//! heap did that job with each entry moving six times between buckets, a
//! quarter of all instructions; a binary heap for everything beyond the
//! wheel cost 15% of a sparse run's time.)
//!
//! Simultaneous events run in an order defined by the events themselves:
//! by time, then by `tie`, the event's kind and the one id it names (a
//! port, a flow, a host, a group), so a run's order never depends on when
//! an event happened to be scheduled. The partitioned engine
//! (`world/parallel/`) keeps one such queue per part; a part's events come
//! out of its queue in the order the one queue of the sequential engine
//! would run them (the order of a part's events among themselves depends
//! on that part's events alone), which is what makes the outputs the same
//! on any number of threads. Only entries equal in both (two packets
//! landing from one link in the same picosecond, two identical timers) keep
//! the order they were scheduled in, which is the same in either engine:
//! buckets and slots keep insertion order, the sorts are stable, an event
//! due in a slot already being served goes after every entry it ties with,
//! and the levels hand over a span's entries in that order (see
//! `levels.rs`). A span's entries can meet a wheel bucket that already
//! holds events scheduled straight into it (a bucket of the next span is
//! within 63 buckets); they go ahead of those, because an event of the
//! same time in the levels was scheduled earlier: it went there when its
//! bucket lay 64 or more ahead of the wheel's, the wheel only moves
//! forward, and the one in the bucket was scheduled when it lay fewer
//! than 64 ahead. A bucket is spread into slots before any event can be
//! scheduled straight into them. A run is a pure function of its config
//! and seed.

mod levels;

use crate::units::Time;
use levels::Levels;

/// Everything that can happen. Small plain values, never closures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port finished serialising its current packet.
    TxDone { port: u32 },
    /// Packet `pkt`, sent on `port`, reaches the far end of its link.
    Arrive { port: u32, pkt: u32 },
    /// A connection opens (sends its SYN).
    FlowStart { flow: u32 },
    /// A long-lived flow stops taking new data.
    FlowStop { flow: u32 },
    /// Retransmission timer (lazy: checked against the flow's deadline).
    Rto { flow: u32 },
    /// Delayed-ACK timer at a connection's receiver.
    DelAck { flow: u32 },
    /// Send the next probe of a ping stream.
    Ping { probe: u32 },
    /// Start round `round` of an incast group at its senders.
    IncastRound { group: u32 },
    /// An incast request reaches one sender (spread rounds).
    IncastRequest { flow: u32 },
    /// Take a queue-length sample of every sampled port.
    Sample,
    /// A sender's LSO deferral may have reached its limit (lazy, as Rto).
    LsoDefer { flow: u32 },
    /// A host's coalesced receive interrupt (lazy: checked against the
    /// host's pending one).
    RxInterrupt { host: u32 },
    /// A rate-limited application writes its next segment.
    AppWrite { flow: u32 },
    /// RDMA: a queue pair's pacing slot, rate-control timer, local ACK
    /// timeout or held-back CNP (`world/rdma.rs` reads the field).
    Rdma { what: u32 },
    /// PFC: a frame takes effect, a pause expires, a refresh is due or a
    /// deadlock check (`world/lossless/frames.rs` reads the field).
    Pfc { what: u32 },
}

impl Event {
    /// Kind in the top 4 bits; an Arrive's port in the next 28, its packet
    /// in the low 32; every other event's one field in the low 32. The
    /// kinds' numbers order the events of one picosecond (`tie`): a
    /// packet's arrival first, then a port's departure (at equal packet
    /// times a packet lands as the one ahead of it leaves, and ns-2 runs
    /// the arrival first), then the rest.
    #[inline(always)]
    fn encode(self) -> u64 {
        let (kind, x): (u64, u64) = match self {
            Event::Arrive { port, pkt } => {
                debug_assert!(port < 1 << 28, "port id beyond 28 bits");
                (0, (port as u64) << 32 | pkt as u64)
            }
            Event::TxDone { port } => (1, port as u64),
            Event::FlowStart { flow } => (2, flow as u64),
            Event::FlowStop { flow } => (3, flow as u64),
            Event::Rto { flow } => (4, flow as u64),
            Event::DelAck { flow } => (5, flow as u64),
            Event::Ping { probe } => (6, probe as u64),
            Event::IncastRound { group } => (7, group as u64),
            Event::Sample => (8, 0),
            Event::IncastRequest { flow } => (9, flow as u64),
            Event::LsoDefer { flow } => (10, flow as u64),
            Event::RxInterrupt { host } => (11, host as u64),
            Event::AppWrite { flow } => (12, flow as u64),
            Event::Pfc { what } => (13, what as u64),
            Event::Rdma { what } => (14, what as u64),
        };
        kind << 60 | x
    }

    #[inline]
    fn decode(c: u64) -> Event {
        let x = c as u32;
        // Arrivals are most events: test for them first, ahead of the
        // match's jump table.
        if c >> 60 == 0 {
            return Event::Arrive { port: (c >> 32) as u32 & 0x0FFF_FFFF, pkt: x };
        }
        match c >> 60 {
            0 => Event::Arrive { port: (c >> 32) as u32 & 0x0FFF_FFFF, pkt: x },
            1 => Event::TxDone { port: x },
            2 => Event::FlowStart { flow: x },
            3 => Event::FlowStop { flow: x },
            4 => Event::Rto { flow: x },
            5 => Event::DelAck { flow: x },
            6 => Event::Ping { probe: x },
            7 => Event::IncastRound { group: x },
            9 => Event::IncastRequest { flow: x },
            10 => Event::LsoDefer { flow: x },
            11 => Event::RxInterrupt { host: x },
            12 => Event::AppWrite { flow: x },
            13 => Event::Pfc { what: x },
            14 => Event::Rdma { what: x },
            _ => Event::Sample,
        }
    }
}

/// The order among events of one picosecond (see the module doc): an
/// entry's code without an arrival's packet, which is a slot in its part's
/// packet arena and so differs between the engines. Branch-free: it runs in
/// every comparison of a slot's sort.
#[inline(always)]
fn tie(code: u64) -> u64 {
    let arrive = (code >> 60 == 0) as u64;
    code & !(arrive * 0xFFFF_FFFF)
}

/// Whether entry `a` runs before `b` (or ties with it, if `or_equal`).
#[inline(always)]
fn before(a: &Entry, b: &Entry, or_equal: bool) -> bool {
    let (ka, kb) = (tie(a.1), tie(b.1));
    a.0 < b.0 || (a.0 == b.0 && (ka < kb || (or_equal && ka == kb)))
}

/// (time, `tie`) as one number, for entries of one slot: their times
/// differ only in the low `SLOT_BITS`, and `tie`'s order is the kind's (4
/// bits) then the one id (an arrival's port, 28 bits; any other event's
/// field, 32), so 14 + 4 + 32 bits hold it. The rank sort then compares
/// plain integers, as it did before ties had an order (a compare of
/// `before`'s two-key form there cost a fifth of a busy fabric's run).
#[inline(always)]
fn slot_key(e: &Entry) -> u64 {
    let (t, code) = *e;
    let arrive = (code >> 60 == 0) as u64;
    let id = (code >> (arrive * 32)) as u32 as u64;
    (t & ((1 << SLOT_BITS) - 1)) << 36 | (code >> 60) << 32 | id
}

/// Slot width: 2^14 ps = 16.4 ns.
const SLOT_BITS: u32 = 14;
const _: () = assert!(SLOT_BITS.is_multiple_of(2), "radix_sort_slot takes two passes of SLOT_BITS / 2");
const _: () = assert!(SLOT_BITS + 36 <= 64, "slot_key holds a slot's time and a tie in 64 bits");
/// Slots per bucket and buckets per wheel: 64 of 16.4 ns make a bucket of
/// 1.05 µs, and 64 buckets reach 67 µs ahead.
const FAN_BITS: u32 = 6;
const FAN: usize = 1 << FAN_BITS;

/// An event as stored: (time, `Event::encode`).
type Entry = (Time, u64);

pub struct EventQueue {
    /// The slots being served, moved out of the wheel and sorted by (time,
    /// insertion), from `cur_pos` on. Every pending wheel event of a slot up
    /// to `cur_slot` (absolute slot number) is here.
    cur: Vec<Entry>,
    cur_pos: usize,
    cur_slot: u64,
    /// Room for sorting a slot.
    scratch: Vec<Entry>,
    /// The slots of bucket `fine_bucket` (absolute bucket number) after
    /// `cur_slot`, each in insertion order.
    fine: Vec<Vec<Entry>>,
    /// Bit s set when `fine[s]` holds an entry.
    fine_occupied: u64,
    fine_bucket: u64,
    /// Buckets `fine_bucket + 1 ..` (ring index = bucket mod FAN), each in
    /// insertion order.
    coarse: Vec<Vec<Entry>>,
    coarse_occupied: u64,
    /// Entries outside `cur`: in `fine`, `coarse` and `levels`.
    in_wheel: usize,
    /// Events of later spans than `fine_bucket`'s, 64 buckets or more
    /// ahead; `levels.span` is `fine_bucket >> FAN_BITS` between calls.
    levels: Levels,
    /// Room for the entries of a bucket that a span's entries go ahead of.
    held: Vec<Vec<Entry>>,
    len: usize,
    pub now: Time,
    pub processed: u64,
    /// Most events ever pending at once.
    pub peak: usize,
}

/// Sort a slot's entries by (time, `tie`), stably (they are in insertion
/// order). A slot holds about seven entries in random order; an insertion
/// sort's branches then mispredict on nearly every entry, so small slots
/// are placed by rank instead: each entry's place is the number of entries
/// that go before it, counted without a branch.
fn sort_slot(cur: &mut Vec<Entry>, scratch: &mut Vec<Entry>) {
    let n = cur.len();
    if n <= 1 {
        return;
    }
    if n <= 16 {
        let mut keys = [0u64; 16];
        for (k, e) in keys.iter_mut().zip(cur.iter()) {
            *k = slot_key(e);
        }
        let keys = &keys[..n];
        scratch.clear();
        scratch.resize(n, (0, 0));
        for (i, e) in cur.iter().enumerate() {
            let k = keys[i];
            let before_it = keys[..i].iter().filter(|&&f| f <= k).count();
            let after_it = keys[i + 1..].iter().filter(|&&f| f < k).count();
            scratch[before_it + after_it] = *e;
        }
        std::mem::swap(cur, scratch);
        return;
    }
    radix_sort_slot(cur, scratch);
    order_ties(cur);
}

/// A dense slot (a large fabric's busy microsecond: hundreds of events a
/// bucket, dozens a slot) is sorted by the low `SLOT_BITS` of its times,
/// the only bits in which a slot's entries differ, in two stable counting
/// passes of 7 bits: linear in the slot, where the insertion sort this
/// replaces was quadratic (a tenth of a k = 32 fat-tree's run time).
fn radix_sort_slot(cur: &mut Vec<Entry>, scratch: &mut Vec<Entry>) {
    const R: u32 = SLOT_BITS / 2;
    const MASK: usize = (1 << R) - 1;
    debug_assert!(cur.iter().all(|e| e.0 >> SLOT_BITS == cur[0].0 >> SLOT_BITS), "one slot's entries");
    scratch.clear();
    scratch.resize(cur.len(), (0, 0));
    for shift in [0, R] {
        let mut at = [0u32; 1 << R];
        for e in cur.iter() {
            at[(e.0 >> shift) as usize & MASK] += 1;
        }
        let mut sum = 0;
        for c in at.iter_mut() {
            (*c, sum) = (sum, sum + *c);
        }
        for e in cur.iter() {
            let b = (e.0 >> shift) as usize & MASK;
            scratch[at[b] as usize] = *e;
            at[b] += 1;
        }
        std::mem::swap(cur, scratch);
    }
}

/// After the radix sort by time: entries of one time, rare in a dense
/// slot and few when they occur, put in `tie` order by a stable insertion
/// sort.
fn order_ties(cur: &mut [Entry]) {
    for i in 1..cur.len() {
        if cur[i].0 != cur[i - 1].0 || tie(cur[i - 1].1) <= tie(cur[i].1) {
            continue;
        }
        let e = cur[i];
        let mut j = i;
        while j > 0 && cur[j - 1].0 == e.0 && tie(cur[j - 1].1) > tie(e.1) {
            cur[j] = cur[j - 1];
            j -= 1;
        }
        cur[j] = e;
    }
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            cur: Vec::with_capacity(64),
            cur_pos: 0,
            cur_slot: 0,
            scratch: Vec::with_capacity(64),
            fine: vec![Vec::new(); FAN],
            fine_occupied: 0,
            fine_bucket: 0,
            coarse: vec![Vec::new(); FAN],
            coarse_occupied: 0,
            in_wheel: 0,
            levels: Levels::new(),
            held: vec![Vec::new(); FAN],
            len: 0,
            now: 0,
            processed: 0,
            peak: 0,
        }
    }

    /// Inlined everywhere so `encode` folds to the caller's event kind.
    #[inline(always)]
    pub fn at(&mut self, time: Time, ev: Event) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let code = ev.encode();
        self.len += 1;
        self.peak = self.peak.max(self.len);
        let slot = time >> SLOT_BITS;
        if slot <= self.cur_slot {
            return self.push_cur(time, code);
        }
        let bucket = slot >> FAN_BITS;
        // `cur_slot` ends at most one slot before `fine_bucket`, so a
        // bucket here is at least `fine_bucket`.
        let ahead = bucket - self.fine_bucket;
        if ahead == 0 {
            let s = slot as usize & (FAN - 1);
            self.fine[s].push((time, code));
            self.fine_occupied |= 1 << s;
        } else if ahead < FAN as u64 {
            let b = bucket as usize & (FAN - 1);
            self.coarse[b].push((time, code));
            self.coarse_occupied |= 1 << b;
        } else {
            self.push_far(time, code);
        }
        self.in_wheel += 1;
    }

    /// Kept out of line: rare in dense runs, and the levels' code would
    /// crowd the per-packet path that inlines `at`.
    #[cold]
    #[inline(never)]
    fn push_far(&mut self, time: Time, code: u64) {
        self.levels.push(time, code);
    }

    /// Into the slots being served (an event due within nanoseconds), in
    /// (time, `tie`) order after every entry it ties with. One that ties
    /// with an entry already served, or goes before it (an event for now,
    /// scheduled by a later one of now), runs next.
    #[cold]
    #[inline(never)]
    fn push_cur(&mut self, time: Time, code: u64) {
        let pending = &self.cur[self.cur_pos..];
        let i = self.cur_pos + pending.partition_point(|e| before(e, &(time, code), true));
        self.cur.insert(i, (time, code));
    }

    #[inline]
    pub fn after(&mut self, delay: Time, ev: Event) {
        self.at(self.now + delay, ev)
    }

    /// Packet `pkt` sent on `port` lands at the far end at `time`.
    #[inline]
    pub fn arrive(&mut self, port: u32, time: Time, pkt: u32) {
        self.at(time, Event::Arrive { port, pkt })
    }

    /// `port` finishes its current transmission at `time`.
    #[inline]
    pub fn tx_done(&mut self, port: u32, time: Time) {
        self.at(time, Event::TxDone { port })
    }

    /// Move the wheel's earliest occupied slot into `cur` (an entry is
    /// queued outside it), sorted by (time, `tie`); the slot is in
    /// insertion order and the sort is stable, so entries equal in both
    /// keep it.
    fn serve_next_slot(&mut self) {
        loop {
            if let Some(s) = self.next_fine_slot() {
                self.fine_occupied &= !(1 << s);
                self.cur_slot = self.fine_bucket << FAN_BITS | s as u64;
                std::mem::swap(&mut self.cur, &mut self.fine[s]);
                self.fine[s].clear();
                self.cur_pos = 0;
                self.in_wheel -= self.cur.len();
                sort_slot(&mut self.cur, &mut self.scratch);
                return;
            }
            // The bucket is spent. The ring holds buckets `fine_bucket + 1`
            // to `fine_bucket + 64`, by bucket number mod 64.
            let next = (self.coarse_occupied != 0).then(|| {
                let from = (self.fine_bucket + 1) as usize & (FAN - 1);
                self.fine_bucket + 1 + self.coarse_occupied.rotate_right(from as u32).trailing_zeros() as u64
            });
            match next {
                Some(b) if b >> FAN_BITS == self.levels.span => self.spread_bucket(b),
                _ => {
                    // The span is spent: on to the next one holding an entry
                    // (or at least no later than the first).
                    let to = match (next, self.levels.first_span()) {
                        (Some(b), Some(l)) => (b >> FAN_BITS).min(l),
                        (Some(b), None) => b >> FAN_BITS,
                        (None, Some(l)) => l,
                        (None, None) => unreachable!("an entry is queued but neither the wheel nor a level holds it"),
                    };
                    self.enter_span(to);
                }
            }
        }
    }

    /// Spread bucket `b` (the ring's next occupied one) over the slots,
    /// keeping each slot's insertion order.
    fn spread_bucket(&mut self, b: u64) {
        self.fine_bucket = b;
        self.cur_slot = (b << FAN_BITS) - 1;
        let r = b as usize & (FAN - 1);
        self.coarse_occupied &= !(1 << r);
        let mut bucket = std::mem::take(&mut self.coarse[r]);
        for &e in &bucket {
            let s = (e.0 >> SLOT_BITS) as usize & (FAN - 1);
            self.fine[s].push(e);
            self.fine_occupied |= 1 << s;
        }
        bucket.clear();
        self.coarse[r] = bucket;
    }

    /// Make span `to` the wheel's: its entries from the levels go into the
    /// ring, ahead of any scheduled straight into the same buckets (they
    /// were scheduled earlier: see the module doc). The ring holds nothing
    /// before span `to`.
    #[cold]
    #[inline(never)]
    fn enter_span(&mut self, to: u64) {
        let entries = self.levels.enter(to);
        let mut arriving = 0u64;
        for e in &entries {
            arriving |= 1 << ((e.0 >> (SLOT_BITS + FAN_BITS)) as usize & (FAN - 1));
        }
        let clash = arriving & self.coarse_occupied;
        let mut bits = clash;
        while bits != 0 {
            let r = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            std::mem::swap(&mut self.coarse[r], &mut self.held[r]);
        }
        for &e in &entries {
            let r = (e.0 >> (SLOT_BITS + FAN_BITS)) as usize & (FAN - 1);
            self.coarse[r].push(e);
        }
        self.coarse_occupied |= arriving;
        let mut bits = clash;
        while bits != 0 {
            let r = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (c, h) = (&mut self.coarse[r], &mut self.held[r]);
            c.extend_from_slice(h);
            h.clear();
        }
        self.levels.recycle(entries);
        // The last bucket before the span, spent: the ring now holds the
        // span's buckets in order from ring index 0.
        self.fine_bucket = (to << FAN_BITS) - 1;
    }

    /// The first occupied slot of bucket `fine_bucket` after `cur_slot`.
    #[inline]
    fn next_fine_slot(&self) -> Option<usize> {
        let from =
            if self.cur_slot >> FAN_BITS == self.fine_bucket { (self.cur_slot as usize & (FAN - 1)) + 1 } else { 0 };
        let later = if from == FAN { 0 } else { self.fine_occupied & (!0u64 << from) };
        (later != 0).then(|| later.trailing_zeros() as usize)
    }

    /// Most likely the next event, for prefetching what it will touch: the
    /// next of the slot being served, else the first entry of the next
    /// occupied slot of this bucket (nothing further is looked at: the first
    /// entry of the ring's next bucket, which in a sparse run is usually the
    /// next event, gained under 1% there).
    // Always inlined, as pop_until: the run loop's two calls per event
    // (with Event::Pfc's arm in `decode`, LLVM left both out of line: 2.8%
    // more instructions on the incast_1g point, cachegrind).
    #[inline(always)]
    pub fn likely_next(&self) -> Option<Event> {
        self.upcoming().first().map(|e| Event::decode(e.1))
    }

    /// The two events likely to come next, as `likely_next`; the second
    /// only where the same slot holds it (a guess: a slot not yet served
    /// is in insertion order).
    #[inline]
    pub fn likely_next_two(&self) -> [Option<Event>; 2] {
        let slot = self.upcoming();
        [slot.first().map(|e| Event::decode(e.1)), slot.get(1).map(|e| Event::decode(e.1))]
    }

    /// The entries `likely_next` looks at: what is left of the slot being
    /// served, else the next occupied slot of this bucket (unsorted).
    #[inline]
    fn upcoming(&self) -> &[Entry] {
        match self.cur.get(self.cur_pos..).filter(|p| !p.is_empty()) {
            Some(pending) => pending,
            None => self.next_fine_slot().map_or(&[], |s| &self.fine[s][..]),
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.pop_until(Time::MAX)
    }

    /// The next event if it happens at or before `limit`; it stays queued
    /// otherwise.
    #[inline(always)]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, Event)> {
        if self.cur_pos == self.cur.len() {
            if self.in_wheel == 0 {
                return None;
            }
            self.serve_next_slot();
        }
        let (t, code) = self.cur[self.cur_pos];
        if t > limit {
            return None;
        }
        self.cur_pos += 1;
        Some(self.popped(t, code))
    }

    #[inline]
    fn popped(&mut self, t: Time, code: u64) -> (Time, Event) {
        self.len -= 1;
        self.now = t;
        self.processed += 1;
        (t, Event::decode(code))
    }

    /// When the next event happens, if any (the partitioned engine's
    /// window starts there). Events may still be scheduled before it.
    pub fn next_time(&mut self) -> Option<Time> {
        if self.cur_pos == self.cur.len() {
            if self.in_wheel == 0 {
                return None;
            }
            self.serve_next_slot();
        }
        Some(self.cur[self.cur_pos].0)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_order_then_insertion_order() {
        // One slot of 5 or 20 entries (sorted by rank) or 1000 (by
        // insertion), and the same in the slot being served.
        for (base, count) in [(1_000_000, 5), (1_000_000, 20), (1_000_000, 1000), (0, 1000)] {
            let mut q = EventQueue::new();
            // Interleave times so ties must be resolved by insertion order.
            for i in 0..count {
                q.at(base + ((i * 7919) % 13) as Time, Event::Ping { probe: i });
            }
            let mut last = (0, 0u32);
            let mut first = true;
            while let Some((t, Event::Ping { probe })) = q.pop() {
                if !first {
                    assert!(t > last.0 || (t == last.0 && probe > last.1), "out of order at {t}");
                }
                first = false;
                last = (t, probe);
            }
            assert_eq!(q.processed, count as u64);
        }
    }

    /// Ties run in the events' own order, whatever order they were
    /// scheduled in: here against insertion, in a slot sorted by rank (5),
    /// one sorted by radix (1000), the slot being served, and across the
    /// levels (an instant 300 ms ahead, scheduled from far and near). Two
    /// packets landing from one port at one instant keep their scheduling
    /// order; packets from different ports go by port, never by packet.
    #[test]
    fn ties_run_in_the_events_order_not_the_scheduling_order() {
        for (base, count) in [(1_000_000, 5), (1_000_000, 1000), (0, 1000), (300_000_000_000, 40)] {
            let mut q = EventQueue::new();
            for i in 0..count {
                q.at(base + ((i * 7919) % 13) as Time, Event::Ping { probe: count - i });
                if base == 300_000_000_000 && i == count / 2 {
                    // Time moves on, so the rest are scheduled from nearer.
                    q.at(base - 10_000_000, Event::Sample);
                    assert_eq!(q.pop().map(|e| e.1), Some(Event::Sample));
                }
            }
            let mut popped = Vec::new();
            while let Some((t, Event::Ping { probe })) = q.pop() {
                popped.push((t, probe));
            }
            let mut sorted = popped.clone();
            sorted.sort();
            assert_eq!(popped.len(), count as usize);
            assert_eq!(popped, sorted, "base {base}, {count} entries");
        }
        let mut q = EventQueue::new();
        for (port, pkt) in [(9, 1), (3, 7), (9, 0), (3, 2), (1, 9)] {
            q.arrive(port, 500, pkt);
        }
        q.tx_done(40, 500);
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|e| e.1)).collect();
        let a = |port, pkt| Event::Arrive { port, pkt };
        assert_eq!(order, [a(1, 9), a(3, 7), a(3, 2), a(9, 1), a(9, 0), Event::TxDone { port: 40 }]);
    }

    /// Once the wheel has emptied and a far event moved time on by a
    /// second, events within the wheel's 67 µs go into it again, not all into the levels
    /// (which would keep the order but lose the wheel's speed).
    #[test]
    fn wheel_follows_time_after_a_far_event() {
        let mut q = EventQueue::new();
        q.at(5, Event::Ping { probe: 0 });
        q.at(1_000_000_000_000, Event::Ping { probe: 1 });
        assert_eq!(q.pop(), Some((5, Event::Ping { probe: 0 })));
        assert_eq!(q.pop(), Some((1_000_000_000_000, Event::Ping { probe: 1 })));
        for i in 0..100 {
            q.after(500_000 * (i + 1), Event::Ping { probe: 2 + i as u32 });
        }
        assert_eq!(q.levels.len(), 0, "near events went to the levels");
        assert_eq!(q.in_wheel, 100);
        for i in 0..100 {
            assert_eq!(q.pop().map(|e| e.1), Some(Event::Ping { probe: 2 + i }));
        }
    }

    /// Every event survives packing into an entry.
    #[test]
    fn events_round_trip_through_their_code() {
        let all = [
            Event::TxDone { port: u32::MAX },
            Event::Arrive { port: (1 << 28) - 1, pkt: u32::MAX },
            Event::Arrive { port: 5, pkt: 0 },
            Event::FlowStart { flow: 7 },
            Event::FlowStop { flow: u32::MAX },
            Event::Rto { flow: 1 },
            Event::DelAck { flow: 2 },
            Event::Ping { probe: 3 },
            Event::IncastRound { group: 4 },
            Event::Sample,
        ];
        for e in all {
            assert_eq!(Event::decode(e.encode()), e);
        }
    }

    /// Within one slot, `slot_key` orders entries as `before` does, for
    /// every kind and the widest ids (a 28-bit port, a 32-bit flow).
    #[test]
    fn the_slot_key_orders_as_before_does() {
        let mut rng = crate::rng::Rng::new(3);
        let events = |r: &mut crate::rng::Rng| {
            let x = if r.uniform() < 0.3 { u32::MAX - (r.uniform() * 3.0) as u32 } else { (r.uniform() * 5.0) as u32 };
            match (r.uniform() * 5.0) as u32 {
                0 => Event::Arrive { port: x >> 4, pkt: x.rotate_left(7) },
                1 => Event::TxDone { port: x },
                2 => Event::Rto { flow: x },
                3 => Event::Rdma { what: x },
                _ => Event::Sample,
            }
        };
        let slot = 77 << SLOT_BITS;
        for _ in 0..20_000 {
            let a = (slot + (rng.uniform() * 4.0) as Time, events(&mut rng).encode());
            let b = (slot + (rng.uniform() * 4.0) as Time, events(&mut rng).encode());
            assert_eq!(slot_key(&a) < slot_key(&b), before(&a, &b, false), "{a:?} {b:?}");
            assert_eq!(slot_key(&a) <= slot_key(&b), before(&a, &b, true), "{a:?} {b:?}");
        }
    }

    /// Timers, link arrivals and TxDones on several ports, pushed and popped
    /// interleaved with delays from picoseconds to seconds, come out exactly
    /// in (time, tie, insertion) order, like one sorted list.
    #[test]
    fn links_timers_and_tx_done_keep_exact_order() {
        const PORTS: u32 = 37;
        let mut rng = crate::rng::Rng::new(7);
        let mut q = EventQueue::new();
        let mut last_arrival = vec![0 as Time; PORTS as usize];
        let mut tx_pending = vec![false; PORTS as usize];
        let mut reference: Vec<(Time, u64, u32)> = Vec::new();
        let mut popped: Vec<(Time, u64, u32)> = Vec::new();
        let mut id = 0u32;
        // The id each event was scheduled with (one TxDone per port pends).
        let mut txdone_id = vec![0u32; PORTS as usize];
        let id_of = |ev: Event, txdone_id: &[u32]| match ev {
            Event::Ping { probe } => probe,
            Event::Arrive { pkt, .. } => pkt,
            Event::TxDone { port } => txdone_id[port as usize],
            other => panic!("unexpected {other:?}"),
        };
        for _ in 0..30_000 {
            for _ in 0..(rng.next_u64() % 3) {
                let scale = [1_000u64, 50_000, 1_000_000, 200_000_000, 5_000_000_000][(rng.next_u64() % 5) as usize];
                let port = (rng.next_u64() % PORTS as u64) as u32;
                match rng.next_u64() % 3 {
                    0 => {
                        let t = q.now + rng.next_u64() % scale;
                        q.at(t, Event::Ping { probe: id });
                        reference.push((t, tie(Event::Ping { probe: id }.encode()), id));
                    }
                    1 => {
                        let t = (q.now + rng.next_u64() % scale).max(last_arrival[port as usize] + 1);
                        last_arrival[port as usize] = t;
                        q.arrive(port, t, id);
                        reference.push((t, tie(Event::Arrive { port, pkt: id }.encode()), id));
                    }
                    _ if !tx_pending[port as usize] => {
                        let t = q.now + rng.next_u64() % scale;
                        tx_pending[port as usize] = true;
                        txdone_id[port as usize] = id;
                        q.tx_done(port, t);
                        reference.push((t, tie(Event::TxDone { port }.encode()), id));
                    }
                    _ => continue,
                }
                id += 1;
            }
            // Now and then a pop bounded by a limit, as at the end of a run:
            // it yields only the event the unbounded pop would, and only if
            // that one is due by the limit.
            let limit = match rng.next_u64() % 4 {
                0 => q.now + rng.next_u64() % 100_000,
                _ => Time::MAX,
            };
            match q.pop_until(limit) {
                Some((t, ev)) => {
                    assert!(t <= limit);
                    if let Event::TxDone { port } = ev {
                        tx_pending[port as usize] = false;
                    }
                    popped.push((t, tie(ev.encode()), id_of(ev, &txdone_id)));
                }
                None => {
                    let due: Vec<Time> = reference.iter().map(|e| e.0).collect();
                    let pending = due.len() - popped.len();
                    let mut sorted = due;
                    sorted.sort();
                    // Times never run backwards, so the first `popped.len()`
                    // of the sorted times are the ones already popped.
                    assert!(pending == 0 || sorted[popped.len()] > limit, "an event due by the limit stayed queued");
                }
            }
        }
        while let Some((t, ev)) = q.pop() {
            popped.push((t, tie(ev.encode()), id_of(ev, &txdone_id)));
        }
        assert!(q.is_empty());
        reference.sort(); // ids grow with insertion: (time, tie, insertion) order
        assert_eq!(popped, reference);
    }
}

#[cfg(test)]
mod order_tests;
