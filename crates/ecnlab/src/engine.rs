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
/// orders events by time, then by the order they were scheduled.
#[derive(Clone, Copy)]
struct Entry {
    key: u128,
    ev: Event,
}

impl Entry {
    #[inline]
    fn before(&self, o: &Entry) -> bool {
        self.key < o.key
    }
    #[inline]
    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
}

/// A 4-ary min-heap: shallower than a binary heap, so fewer cache misses
/// on the sift-down that every pop does.
#[derive(Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    seq: u64,
    pub now: Time,
    pub processed: u64,
    /// Most events ever pending at once.
    pub peak: usize,
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue { heap: Vec::with_capacity(1024), ..Default::default() }
    }

    #[inline]
    pub fn at(&mut self, time: Time, ev: Event) {
        debug_assert!(time >= self.now, "event scheduled in the past");
        let e = Entry { key: ((time as u128) << 64) | self.seq as u128, ev };
        self.seq += 1;
        self.heap.push(e);
        let mut i = self.heap.len() - 1;
        self.peak = self.peak.max(i + 1);
        while i > 0 {
            let p = (i - 1) / 4;
            if e.before(&self.heap[p]) {
                self.heap[i] = self.heap[p];
                i = p;
            } else {
                break;
            }
        }
        self.heap[i] = e;
    }

    #[inline]
    pub fn after(&mut self, delay: Time, ev: Event) {
        self.at(self.now + delay, ev)
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|e| e.time())
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let n = self.heap.len();
        if n == 0 {
            return None;
        }
        let top = self.heap[0];
        let last = self.heap.pop().unwrap();
        let n = n - 1;
        if n > 0 {
            let mut i = 0;
            loop {
                let c0 = 4 * i + 1;
                if c0 >= n {
                    break;
                }
                let mut best = c0;
                let end = (c0 + 4).min(n);
                for c in c0 + 1..end {
                    if self.heap[c].before(&self.heap[best]) {
                        best = c;
                    }
                }
                if self.heap[best].before(&last) {
                    self.heap[i] = self.heap[best];
                    i = best;
                } else {
                    break;
                }
            }
            self.heap[i] = last;
        }
        self.now = top.time();
        self.processed += 1;
        Some((self.now, top.ev))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
