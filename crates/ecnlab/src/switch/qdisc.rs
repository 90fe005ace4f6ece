//! The composed queue discipline of one egress port.

use super::buffer::Buffer;
use super::marker::{Marker, Occupancy};
use super::queue::Queue;
use super::scheduler::Scheduler;
use crate::packet::{Arena, Ecn};
use crate::units::{LineRate, Time};

/// What a queue did, for reports.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueCounters {
    pub enqueued: u64,
    pub marked: u64,
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
    /// The marking condition held for a Not-ECT packet with drop_not_ect.
    Aqm,
}

/// Packets a queue refused, counted apart from the per-packet counters.
#[derive(Clone, Copy, Debug, Default)]
struct Drops {
    overflow: u64,
    aqm: u64,
}

/// What drops touch, behind one pointer so the port's hot state stays
/// within four cache lines.
struct Cold {
    drops: Vec<Drops>,
    /// Packets dropped at dequeue, for the caller to account and free.
    dequeue_drops: Vec<u32>,
}

pub struct Qdisc {
    pub queues: Box<[Queue]>,
    pub sched: Scheduler,
    pub marker: Marker,
    pub buffer: Buffer,
    pub dequeue_marking: bool,
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
        Qdisc {
            queues: (0..nq).map(|_| Queue::default()).collect(),
            sched,
            marker,
            buffer,
            dequeue_marking: false,
            drop_not_ect: false,
            rate: LineRate::new(rate_bps),
            bytes: 0,
            packets: 0,
            max_bytes: 0,
            nonempty: 0,
            cold: Box::new(Cold { drops: vec![Drops::default(); nq], dequeue_drops: Vec::new() }),
        }
    }

    /// Service class → queue. Classes beyond the last queue share it.
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
    /// before this packet. On Err the caller frees the packet.
    #[inline]
    pub fn enqueue(&mut self, now: Time, id: u32, arena: &mut Arena, pool: u64) -> Result<(), DropReason> {
        let h = arena.get(id);
        let (size, q) = (h.size, self.classify(h.service));
        if self.bytes == 0 {
            self.marker.port_busy(now);
        }
        if !self.buffer.admits(self.bytes, self.packets, size) {
            self.cold.drops[q].overflow += 1;
            return Err(DropReason::Overflow);
        }
        if !self.dequeue_marking {
            let occ = Occupancy {
                queue: self.queues[q].fifo.bytes + size as u64,
                port: self.bytes + size as u64,
                pool: pool + size as u64,
            };
            if self.marker.exceeds(q, occ) && !self.mark(q, &mut arena.get_mut(id).ecn) {
                return Err(DropReason::Aqm);
            }
        }
        let queue = &mut self.queues[q];
        let was_empty = queue.fifo.is_empty();
        queue.fifo.push(id, size);
        queue.max_bytes = queue.max_bytes.max(queue.fifo.bytes);
        self.bytes += size as u64;
        self.packets += 1;
        self.max_bytes = self.max_bytes.max(self.bytes);
        if was_empty {
            self.nonempty |= 1 << q;
            self.sched.activate(q, now, &mut self.marker);
        }
        Ok(())
    }

    /// Take the next packet to transmit, if any, with its size on the wire.
    /// Packets dropped by dequeue marking wait for `take_dequeue_drop`.
    #[inline]
    pub fn dequeue(&mut self, now: Time, arena: &mut Arena, pool: u64) -> Option<(u32, u32)> {
        let mut pool = pool;
        while self.packets > 0 {
            let q = self.sched.select(now, &self.queues, self.nonempty, self.rate, &mut self.marker);
            // Occupancy as the packet is about to leave, itself included.
            let occ = Occupancy { queue: self.queues[q].fifo.bytes, port: self.bytes, pool };
            let (id, size) = self.queues[q].fifo.pop().expect("scheduler chose an empty queue");
            self.bytes -= size as u64;
            self.packets -= 1;
            pool = pool.saturating_sub(size as u64);
            if self.queues[q].fifo.is_empty() {
                self.nonempty &= !(1 << q);
            }
            if self.packets == 0 {
                self.marker.port_idle(now);
            }
            if self.dequeue_marking && self.marker.exceeds(q, occ) && !self.mark(q, &mut arena.get_mut(id).ecn) {
                self.cold.dequeue_drops.push(id);
                continue;
            }
            let queue = &mut self.queues[q];
            queue.sent_packets += 1;
            queue.sent_bytes += size as u64;
            return Some((id, size));
        }
        None
    }

    /// A packet dropped at dequeue (by dequeue marking), for the caller to
    /// account and free.
    #[inline]
    pub fn take_dequeue_drop(&mut self) -> Option<u32> {
        if !self.dequeue_marking {
            return None;
        }
        self.cold.dequeue_drops.pop()
    }

    /// Queue `q`'s counters. Every packet taken in was sent, is still
    /// queued, or (only with dequeue marking) was dropped by the AQM on the
    /// way out, so the number enqueued follows from the others.
    pub fn counters(&self, q: usize) -> QueueCounters {
        let (queue, drops) = (&self.queues[q], self.cold.drops[q]);
        let dropped_leaving = if self.dequeue_marking { drops.aqm } else { 0 };
        QueueCounters {
            enqueued: queue.sent_packets + queue.fifo.len() as u64 + dropped_leaving,
            marked: queue.marked,
            dropped_overflow: drops.overflow,
            dropped_aqm: drops.aqm,
            max_bytes: queue.max_bytes,
            sent_packets: queue.sent_packets,
            sent_bytes: queue.sent_bytes,
        }
    }

    /// The marking condition holds for a packet of queue `q`: CE on an ECT
    /// packet, or (with drop_not_ect) false to say "drop this Not-ECT one".
    #[inline]
    fn mark(&mut self, q: usize, ecn: &mut Ecn) -> bool {
        match *ecn {
            Ecn::Ect => {
                *ecn = Ecn::Ce;
                self.queues[q].marked += 1;
                true
            }
            Ecn::NotEct if self.drop_not_ect => {
                self.cold.drops[q].aqm += 1;
                false
            }
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Kind, Packet};
    use crate::switch::marker::PerQueue;
    use crate::switch::scheduler::Sp;
    use crate::units::Amount;

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
            let mut qd =
                Qdisc::new(2, Scheduler::Sp(Sp), marker, Buffer { limit: Amount::Bytes(8000) }, 10_000_000_000);
            qd.dequeue_marking = dequeue_marking;
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
}
