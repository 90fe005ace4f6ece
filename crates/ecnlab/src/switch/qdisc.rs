//! The composed queue discipline of one egress port.

use super::buffer::Buffer;
use super::fifo::Fifo;
use super::marker::{Marker, Occupancy};
use super::scheduler::Scheduler;
use crate::packet::{Arena, Ecn};
use crate::units::{LineRate, Time};

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

pub struct Qdisc {
    pub queues: Vec<Fifo>,
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
    pub counters: Vec<QueueCounters>,
    /// Packets dropped at dequeue, for the caller to account and free.
    pub dequeue_drops: Vec<u32>,
}

impl Qdisc {
    pub fn new(nq: usize, sched: Scheduler, marker: Marker, buffer: Buffer, rate_bps: u64) -> Self {
        Qdisc {
            queues: (0..nq).map(|_| Fifo::with_capacity(64)).collect(),
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
            counters: vec![QueueCounters::default(); nq],
            dequeue_drops: Vec::new(),
        }
    }

    /// Service class → queue. Classes beyond the last queue share it.
    #[inline]
    pub fn classify(&self, service: u8) -> usize {
        (service as usize).min(self.queues.len() - 1)
    }

    /// Offer packet `id`; `pool` is the switch's shared-pool occupancy
    /// before this packet. On Err the caller frees the packet.
    #[inline]
    pub fn enqueue(&mut self, now: Time, id: u32, arena: &mut Arena, pool: u64) -> Result<(), DropReason> {
        let h = *arena.hdr(id);
        let (size, q) = (h.size, self.classify(h.service()));
        if self.bytes == 0 {
            self.marker.port_busy(now);
        }
        if !self.buffer.admits(self.bytes, self.packets, size) {
            self.counters[q].dropped_overflow += 1;
            return Err(DropReason::Overflow);
        }
        if !self.dequeue_marking {
            let occ = Occupancy {
                queue: self.queues[q].bytes + size as u64,
                port: self.bytes + size as u64,
                pool: pool + size as u64,
            };
            if self.marker.exceeds(q, occ) && !self.mark(q, &mut arena.get_mut(id).ecn) {
                return Err(DropReason::Aqm);
            }
        }
        let was_empty = self.queues[q].is_empty();
        self.queues[q].push(id, size);
        self.bytes += size as u64;
        self.packets += 1;
        self.max_bytes = self.max_bytes.max(self.bytes);
        let c = &mut self.counters[q];
        c.enqueued += 1;
        c.max_bytes = c.max_bytes.max(self.queues[q].bytes);
        if was_empty {
            self.nonempty |= 1 << q;
            self.sched.activate(q, now, &mut self.marker);
        }
        Ok(())
    }

    /// Take the next packet to transmit, if any, with its size on the wire.
    /// Packets dropped by dequeue marking land in `dequeue_drops`.
    #[inline]
    pub fn dequeue(&mut self, now: Time, arena: &mut Arena, pool: u64) -> Option<(u32, u32)> {
        let mut pool = pool;
        while self.packets > 0 {
            let q = self.sched.select(now, &self.queues, self.nonempty, self.rate, &mut self.marker);
            // Occupancy as the packet is about to leave, itself included.
            let occ = Occupancy { queue: self.queues[q].bytes, port: self.bytes, pool };
            let (id, size) = self.queues[q].pop().expect("scheduler chose an empty queue");
            self.bytes -= size as u64;
            self.packets -= 1;
            pool = pool.saturating_sub(size as u64);
            if self.queues[q].is_empty() {
                self.nonempty &= !(1 << q);
            }
            if self.packets == 0 {
                self.marker.port_idle(now);
            }
            if self.dequeue_marking && self.marker.exceeds(q, occ) && !self.mark(q, &mut arena.get_mut(id).ecn) {
                self.dequeue_drops.push(id);
                continue;
            }
            let c = &mut self.counters[q];
            c.sent_packets += 1;
            c.sent_bytes += size as u64;
            return Some((id, size));
        }
        None
    }

    /// The marking condition holds for a packet of queue `q`: CE on an ECT
    /// packet, or (with drop_not_ect) false to say "drop this Not-ECT one".
    #[inline]
    fn mark(&mut self, q: usize, ecn: &mut Ecn) -> bool {
        match *ecn {
            Ecn::Ect => {
                *ecn = Ecn::Ce;
                self.counters[q].marked += 1;
                true
            }
            Ecn::NotEct if self.drop_not_ect => {
                self.counters[q].dropped_aqm += 1;
                false
            }
            _ => true,
        }
    }
}
