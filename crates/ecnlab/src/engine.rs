//! The event queue: a radix heap (Ahuja et al.) on event time. Time never
//! goes back (no event is scheduled before the one being handled), so an
//! entry lives in the bucket of the highest bit where its time differs from
//! the last time popped; pushing is O(1), and popping empties the lowest
//! bucket into lower ones, each entry moving a handful of times over its
//! life. Far fewer unpredictable branches than a comparison heap.
//!
//! Simultaneous events run in the order they were scheduled, with no
//! sequence number: equal times always share a bucket (the bucket depends
//! only on the time and the last time popped), buckets keep insertion order
//! when they are appended to or emptied into lower ones, and bucket 0 (time
//! equal to the last popped) is drained from the front. So a run is a pure
//! function of its config and seed.

use crate::units::Time;

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
    /// Take a queue-length sample of every sampled port.
    Sample,
}

/// 16 bytes: entries move between buckets several times each, so their
/// size is the queue's memory traffic.
#[derive(Clone, Copy)]
struct Entry {
    time: Time,
    /// The event packed by `Event::encode`.
    code: u64,
}

impl Event {
    /// Kind in the top 4 bits; an Arrive's port in the next 28, its packet
    /// in the low 32; every other event's one field in the low 32.
    #[inline]
    fn encode(self) -> u64 {
        let (kind, x): (u64, u64) = match self {
            Event::TxDone { port } => (0, port as u64),
            Event::Arrive { port, pkt } => {
                debug_assert!(port < 1 << 28, "port id beyond 28 bits");
                (1, (port as u64) << 32 | pkt as u64)
            }
            Event::FlowStart { flow } => (2, flow as u64),
            Event::FlowStop { flow } => (3, flow as u64),
            Event::Rto { flow } => (4, flow as u64),
            Event::DelAck { flow } => (5, flow as u64),
            Event::Ping { probe } => (6, probe as u64),
            Event::IncastRound { group } => (7, group as u64),
            Event::Sample => (8, 0),
        };
        kind << 60 | x
    }

    #[inline]
    fn decode(c: u64) -> Event {
        let x = c as u32;
        match c >> 60 {
            0 => Event::TxDone { port: x },
            1 => Event::Arrive { port: (c >> 32) as u32 & 0x0FFF_FFFF, pkt: x },
            2 => Event::FlowStart { flow: x },
            3 => Event::FlowStop { flow: x },
            4 => Event::Rto { flow: x },
            5 => Event::DelAck { flow: x },
            6 => Event::Ping { probe: x },
            7 => Event::IncastRound { group: x },
            _ => Event::Sample,
        }
    }
}

pub struct EventQueue {
    /// Bucket 0 holds entries at time `last`; bucket b ≥ 1 those whose time
    /// first differs from `last` at bit b − 1.
    buckets: Vec<Vec<Entry>>,
    /// Next entry of bucket 0 to pop (it is drained from the front).
    head: usize,
    /// Bit b − 1 set when bucket b ≥ 1 is not empty (bucket 0 is
    /// `buckets[0][head..]`).
    nonempty: u64,
    last: Time,
    len: usize,
    pub now: Time,
    pub processed: u64,
    /// Most events ever pending at once.
    pub peak: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

#[inline]
fn bucket_of(time: Time, last: Time) -> usize {
    (64 - (time ^ last).leading_zeros()) as usize
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            buckets: (0..65).map(|_| Vec::new()).collect(),
            head: 0,
            nonempty: 0,
            last: 0,
            len: 0,
            now: 0,
            processed: 0,
            peak: 0,
        }
    }

    #[inline]
    fn put(&mut self, e: Entry) {
        let b = bucket_of(e.time, self.last);
        self.buckets[b].push(e);
        if b != 0 {
            self.nonempty |= 1 << (b - 1);
        }
    }

    #[inline]
    pub fn at(&mut self, time: Time, ev: Event) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        self.put(Entry { time, code: ev.encode() });
        self.len += 1;
        self.peak = self.peak.max(self.len);
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

    /// Make bucket 0 hold the earliest entries, if there are any.
    #[inline]
    fn settle(&mut self) -> bool {
        if self.head < self.buckets[0].len() {
            return true;
        }
        self.buckets[0].clear();
        self.head = 0;
        if self.nonempty == 0 {
            return false;
        }
        let b = self.nonempty.trailing_zeros() as usize + 1;
        let mut items = std::mem::take(&mut self.buckets[b]);
        self.nonempty &= !(1 << (b - 1));
        self.last = items.iter().map(|e| e.time).min().expect("non-empty bucket");
        // In order, so ties keep their insertion order.
        for e in items.drain(..) {
            self.put(e);
        }
        // Keep the emptied vector's capacity for later use.
        self.buckets[b] = items;
        true
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.pop_until(Time::MAX)
    }

    /// The next event if it happens at or before `limit`; it stays queued
    /// otherwise.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, Event)> {
        if !self.settle() || self.last > limit {
            return None;
        }
        let e = self.buckets[0][self.head];
        self.head += 1;
        self.len -= 1;
        self.now = e.time;
        self.processed += 1;
        Some((self.now, Event::decode(e.code)))
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

    /// Timers, link arrivals and TxDones on several ports, pushed and popped
    /// interleaved with delays from picoseconds to seconds, come out exactly
    /// in (time, insertion) order, like one sorted list.
    #[test]
    fn links_timers_and_tx_done_keep_exact_order() {
        const PORTS: u32 = 37;
        let mut rng = crate::rng::Rng::new(7);
        let mut q = EventQueue::new();
        let mut last_arrival = vec![0 as Time; PORTS as usize];
        let mut tx_pending = vec![false; PORTS as usize];
        let mut reference: Vec<(Time, u32)> = Vec::new();
        let mut popped: Vec<(Time, u32)> = Vec::new();
        let mut id = 0u32;
        let record = |ev: Event| match ev {
            Event::Ping { probe } => probe,
            Event::Arrive { pkt, .. } => pkt,
            Event::TxDone { port } => 1_000_000 + port,
            other => panic!("unexpected {other:?}"),
        };
        let mut txdone_id = vec![0u32; PORTS as usize];
        for _ in 0..30_000 {
            for _ in 0..(rng.next_u64() % 3) {
                let scale = [1_000u64, 50_000, 1_000_000, 200_000_000, 5_000_000_000][(rng.next_u64() % 5) as usize];
                let port = (rng.next_u64() % PORTS as u64) as u32;
                match rng.next_u64() % 3 {
                    0 => {
                        let t = q.now + rng.next_u64() % scale;
                        q.at(t, Event::Ping { probe: id });
                        reference.push((t, id));
                    }
                    1 => {
                        let t = (q.now + rng.next_u64() % scale).max(last_arrival[port as usize] + 1);
                        last_arrival[port as usize] = t;
                        q.arrive(port, t, id);
                        reference.push((t, id));
                    }
                    _ if !tx_pending[port as usize] => {
                        let t = q.now + rng.next_u64() % scale;
                        tx_pending[port as usize] = true;
                        txdone_id[port as usize] = id;
                        q.tx_done(port, t);
                        reference.push((t, id));
                    }
                    _ => continue,
                }
                id += 1;
            }
            if let Some((t, ev)) = q.pop() {
                let got = match ev {
                    Event::TxDone { port } => {
                        tx_pending[port as usize] = false;
                        txdone_id[port as usize]
                    }
                    e => record(e),
                };
                popped.push((t, got));
            }
        }
        while let Some((t, ev)) = q.pop() {
            let got = match ev {
                Event::TxDone { port } => txdone_id[port as usize],
                e => record(e),
            };
            popped.push((t, got));
        }
        assert!(q.is_empty());
        reference.sort(); // ids grow with insertion, so this is (time, insertion) order
        assert_eq!(popped, reference);
    }
}
