//! Deficit weighted round robin (Shreedhar and Varghese), as a linked list
//! of active queues: a queue joins the tail when it becomes backlogged, the
//! head is served, and a queue whose deficit cannot pay for its head packet
//! goes to the tail with the remainder carried over. A queue that empties
//! leaves the list with its deficit reset to 0 (MQ-ECN §3.3.2).
//!
//! With `carry_deficit = false` the unused deficit is dropped at the end of
//! every turn, which is WRR with byte quanta (MQ-ECN §4.2).

use super::super::fifo::Fifo;
use super::super::RoundObserver;
use crate::units::{tx_time, Time};
use std::collections::VecDeque;

/// Per-queue round-robin state, kept together so a turn touches one line.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    quantum: u64,
    deficit: u64,
    /// Credited its quantum for the current turn.
    visited: bool,
    /// Sent at least one packet in the current turn.
    sent: bool,
}

pub struct Dwrr {
    slots: Vec<Slot>,
    active: VecDeque<u16>,
    carry_deficit: bool,
}

impl Dwrr {
    pub fn new(quantum: Vec<u64>, carry_deficit: bool) -> Self {
        Dwrr {
            active: VecDeque::with_capacity(quantum.len()),
            slots: quantum.into_iter().map(|quantum| Slot { quantum, ..Slot::default() }).collect(),
            carry_deficit,
        }
    }

    #[inline]
    pub fn activate(&mut self, q: usize, now: Time, obs: &mut dyn RoundObserver) {
        self.slots[q].deficit = 0;
        self.slots[q].visited = false;
        self.active.push_back(q as u16);
        obs.activated(q, now);
    }

    pub fn select(&mut self, now: Time, queues: &[Fifo], rate_bps: u64, obs: &mut dyn RoundObserver) -> usize {
        loop {
            let h = *self.active.front().expect("select on an idle round-robin group") as usize;
            let slot = &mut self.slots[h];
            if !slot.visited {
                slot.deficit += slot.quantum;
                slot.visited = true;
                slot.sent = false;
            }
            let size = queues[h].head_size().expect("active queue is empty") as u64;
            // WRR lets a turn send one packet even when the quantum is below
            // a packet, or a small quantum would starve the queue forever.
            if size <= slot.deficit || (!self.carry_deficit && !slot.sent) {
                slot.deficit = slot.deficit.saturating_sub(size);
                slot.sent = true;
                if queues[h].len() == 1 {
                    // Last packet: the turn ends when it has left the wire.
                    slot.deficit = 0;
                    slot.visited = false;
                    self.active.pop_front();
                    obs.turn_end(h, now + tx_time(size, rate_bps));
                }
                return h;
            }
            // Turn over: the head cannot pay for its next packet.
            slot.visited = false;
            if !self.carry_deficit {
                slot.deficit = 0;
            }
            self.active.pop_front();
            self.active.push_back(h as u16);
            obs.turn_end(h, now);
        }
    }
}
