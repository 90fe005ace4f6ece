//! Deficit weighted round robin (Shreedhar and Varghese), as a linked list
//! of active queues: a queue joins the tail when it becomes backlogged, the
//! head is served, and a queue whose deficit cannot pay for its head packet
//! goes to the tail with the remainder carried over. A queue that empties
//! leaves the list with its deficit reset to 0 (MQ-ECN §3.3.2).
//!
//! With `carry_deficit = false` the unused deficit is dropped at the end of
//! every turn, which is WRR with byte quanta (MQ-ECN §4.2).

use super::super::queue::Queue;
use super::super::RoundObserver;
use crate::units::{LineRate, Time};

/// Per-queue round-robin state, kept together so a turn touches one line.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    quantum: u64,
    deficit: u64,
    /// Credited its quantum for the current turn.
    visited: bool,
    /// Sent at least one packet in the current turn.
    sent: bool,
    /// The queue after this one in the active list.
    next: u8,
}

/// The active list, linked through the slots: a queue is in it at most
/// once, so three bytes here replace a ring of 64 in the port's struct.
#[derive(Clone, Copy, Default)]
struct Active {
    head: u8,
    tail: u8,
    len: u8,
}

pub struct Dwrr {
    slots: Vec<Slot>,
    active: Active,
    carry_deficit: bool,
}

impl Dwrr {
    pub fn new(quantum: Vec<u64>, carry_deficit: bool) -> Self {
        debug_assert!(quantum.len() <= 64);
        Dwrr {
            active: Active::default(),
            slots: quantum.into_iter().map(|quantum| Slot { quantum, ..Slot::default() }).collect(),
            carry_deficit,
        }
    }

    #[inline]
    fn push_back(&mut self, q: usize) {
        let a = &mut self.active;
        if a.len == 0 {
            a.head = q as u8;
        } else {
            self.slots[a.tail as usize].next = q as u8;
        }
        a.tail = q as u8;
        a.len += 1;
    }

    #[inline]
    fn pop_front(&mut self) {
        self.active.head = self.slots[self.active.head as usize].next;
        self.active.len -= 1;
    }

    #[inline]
    pub fn activate<O: RoundObserver>(&mut self, q: usize, now: Time, obs: &mut O) {
        self.slots[q].deficit = 0;
        self.slots[q].visited = false;
        self.push_back(q);
        obs.activated(q, now);
    }

    pub fn select<O: RoundObserver>(&mut self, now: Time, queues: &[Queue], rate: LineRate, obs: &mut O) -> usize {
        loop {
            assert!(self.active.len > 0, "select on an idle round-robin group");
            let h = self.active.head as usize;
            let slot = &mut self.slots[h];
            if !slot.visited {
                slot.deficit += slot.quantum;
                slot.visited = true;
                slot.sent = false;
            }
            let size = queues[h].fifo.head_size().expect("active queue is empty") as u64;
            // WRR lets a turn send one packet even when the quantum is below
            // a packet, or a small quantum would starve the queue forever.
            if size <= slot.deficit || (!self.carry_deficit && !slot.sent) {
                slot.deficit = slot.deficit.saturating_sub(size);
                slot.sent = true;
                if queues[h].fifo.len() == 1 {
                    // Last packet: the turn ends when it has left the wire.
                    slot.deficit = 0;
                    slot.visited = false;
                    self.pop_front();
                    obs.turn_end(h, now + rate.tx_time(size));
                }
                return h;
            }
            // Turn over: the head cannot pay for its next packet.
            slot.visited = false;
            if !self.carry_deficit {
                slot.deficit = 0;
            }
            self.pop_front();
            self.push_back(h);
            obs.turn_end(h, now);
        }
    }
}
