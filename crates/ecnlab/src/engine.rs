//! The event queue: a binary min-heap on (time, insertion sequence), so
//! simultaneous events run in the order they were scheduled and a run is a
//! pure function of its config and seed.

use crate::units::Time;

/// Everything that can happen. Small plain values, never closures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A port finished serialising its current packet.
    TxDone { port: u32 },
    /// A packet reaches a node (switch or host) at the far end of a link.
    Arrive { node: u32, pkt: u32 },
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
    /// Take a queue-length sample of every sampled port.
    Sample,
}

/// (time, insertion sequence) packed into one integer: one comparison
/// orders events by time, then by the order they were scheduled, and no
/// two events share a key.
#[derive(Clone, Copy)]
struct Entry {
    key: u128,
    ev: Event,
}

/// Near-future events (almost all of them: packet arrivals and ends of
/// transmission a few microseconds ahead) go to a timing wheel of 4096
/// buckets of 16.384 ns, 67 µs in all; the rest (timers, far starts) to a
/// binary heap. (A radix heap alone, before this, spent 30% of large runs
/// redistributing entries; a comparison heap alone, 40%.) A pop takes the smaller of the two heads, so the order is
/// exactly (time, insertion sequence) whichever structure holds an event.
pub struct EventQueue {
    wheel: Vec<Vec<Entry>>,
    /// Bit b set when wheel bucket b is not empty.
    occupied: Vec<u64>,
    /// Absolute bucket number (time >> WHEEL_SHIFT) of the current time;
    /// every wheel entry lies in [cursor, cursor + WHEEL_N).
    cursor: u64,
    far: FarHeap,
    len: usize,
    seq: u64,
    pub now: Time,
    pub processed: u64,
    /// Most events ever pending at once.
    pub peak: usize,
}

const WHEEL_SHIFT: u32 = 13;
const WHEEL_N: u64 = 8192;

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            wheel: (0..WHEEL_N).map(|_| Vec::new()).collect(),
            occupied: vec![0; (WHEEL_N / 64) as usize],
            cursor: 0,
            far: FarHeap::default(),
            len: 0,
            seq: 0,
            now: 0,
            processed: 0,
            peak: 0,
        }
    }

    #[inline]
    pub fn at(&mut self, time: Time, ev: Event) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let e = Entry { key: ((time as u128) << 64) | self.seq as u128, ev };
        self.seq += 1;
        let b = time >> WHEEL_SHIFT;
        if b < self.cursor + WHEEL_N {
            let slot = (b % WHEEL_N) as usize;
            self.wheel[slot].push(e);
            self.occupied[slot / 64] |= 1 << (slot % 64);
        } else {
            self.far.push(e);
        }
        self.len += 1;
        self.peak = self.peak.max(self.len);
    }

    #[inline]
    pub fn after(&mut self, delay: Time, ev: Event) {
        self.at(self.now + delay, ev)
    }

    /// The first occupied wheel bucket from the cursor on (cyclically).
    #[inline]
    fn first_slot(&self) -> Option<usize> {
        let start = (self.cursor % WHEEL_N) as usize;
        let words = self.occupied.len();
        let (w0, b0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (!0u64 << b0);
        if first != 0 {
            return Some(w0 * 64 + first.trailing_zeros() as usize);
        }
        for k in 1..=words {
            let w = (w0 + k) % words;
            let bits = if k == words { self.occupied[w] & !(!0u64 << b0) } else { self.occupied[w] };
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
        }
        None
    }

    /// Where the next event is: wheel (slot, index) with its key, if the
    /// wheel holds one; and the far heap's key.
    #[inline]
    fn heads(&mut self) -> (Option<(usize, usize, u128)>, Option<u128>) {
        let wheel = self.first_slot().map(|slot| {
            let bucket = &self.wheel[slot];
            let mut best = 0;
            for i in 1..bucket.len() {
                if bucket[i].key < bucket[best].key {
                    best = i;
                }
            }
            (slot, best, bucket[best].key)
        });
        (wheel, self.far.peek())
    }

    pub fn peek_time(&mut self) -> Option<Time> {
        match self.heads() {
            (Some((_, _, a)), Some(b)) => Some((a.min(b) >> 64) as Time),
            (Some((_, _, a)), None) => Some((a >> 64) as Time),
            (None, Some(b)) => Some((b >> 64) as Time),
            (None, None) => None,
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.pop_until(Time::MAX)
    }

    /// The next event if it happens at or before `limit`; it stays queued
    /// otherwise. One look at the heads, where peek-then-pop takes two.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, Event)> {
        let (wheel, far) = self.heads();
        let next = match (wheel, far) {
            (Some((_, _, a)), Some(b)) => a.min(b),
            (Some((_, _, a)), None) => a,
            (None, Some(b)) => b,
            (None, None) => return None,
        };
        if (next >> 64) as Time > limit {
            return None;
        }
        let e = match (wheel, far) {
            (Some((slot, i, a)), far) if far.is_none_or(|b| a < b) => {
                let bucket = &mut self.wheel[slot];
                let e = bucket.swap_remove(i);
                if bucket.is_empty() {
                    self.occupied[slot / 64] &= !(1 << (slot % 64));
                }
                e
            }
            (_, Some(_)) => self.far.pop().expect("peeked"),
            (_, None) => return None,
        };
        self.len -= 1;
        self.now = (e.key >> 64) as Time;
        self.cursor = self.now >> WHEEL_SHIFT;
        self.processed += 1;
        Some((self.now, e.ev))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Events beyond the wheel's horizon (timers, far arrivals): few, so a
/// binary heap on the unique key serves.
#[derive(Default)]
struct FarHeap(std::collections::BinaryHeap<std::cmp::Reverse<FarEntry>>);

#[derive(Clone, Copy)]
struct FarEntry(Entry);

impl PartialEq for FarEntry {
    fn eq(&self, o: &Self) -> bool {
        self.0.key == o.0.key
    }
}
impl Eq for FarEntry {}
impl PartialOrd for FarEntry {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for FarEntry {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.key.cmp(&o.0.key)
    }
}

impl FarHeap {
    #[inline]
    fn push(&mut self, e: Entry) {
        self.0.push(std::cmp::Reverse(FarEntry(e)));
    }
    #[inline]
    fn peek(&mut self) -> Option<u128> {
        self.0.peek().map(|r| r.0 .0.key)
    }
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        self.0.pop().map(|r| r.0 .0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_order_then_insertion_order() {
        let mut q = EventQueue::new();
        // Interleave times so ties must be resolved by insertion order.
        for i in 0..1000u32 {
            q.at(((i * 7919) % 13) as Time, Event::Ping { probe: i });
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
        assert_eq!(q.processed, 1000);
    }

    /// Interleaved pushes and pops with delays from picoseconds to
    /// milliseconds (across the wheel's 67 µs horizon and into the far heap)
    /// come out exactly in (time, insertion) order, like a sorted list.
    #[test]
    fn wheel_and_far_heap_keep_exact_order() {
        let mut rng = crate::rng::Rng::new(7);
        let mut q = EventQueue::new();
        let mut reference: Vec<(Time, u32)> = Vec::new();
        let mut popped: Vec<(Time, u32)> = Vec::new();
        let mut id = 0u32;
        for _ in 0..20_000 {
            for _ in 0..(rng.next_u64() % 3) {
                let scale = [1_000u64, 50_000, 1_000_000, 200_000_000, 5_000_000_000][(rng.next_u64() % 5) as usize];
                let t = q.now + rng.next_u64() % scale;
                q.at(t, Event::Ping { probe: id });
                reference.push((t, id));
                id += 1;
            }
            if let Some((t, Event::Ping { probe })) = q.pop() {
                popped.push((t, probe));
            }
        }
        while let Some((t, Event::Ping { probe })) = q.pop() {
            popped.push((t, probe));
        }
        reference.sort(); // ids grow with insertion, so this is (time, insertion) order
        assert_eq!(popped, reference);
    }
}
