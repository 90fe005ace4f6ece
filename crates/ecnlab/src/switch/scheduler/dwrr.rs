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

pub struct Dwrr {
    quantum: Vec<u64>,
    deficit: Vec<u64>,
    /// The head has been credited its quantum for the current turn.
    visited: Vec<bool>,
    /// The head sent at least one packet in the current turn.
    sent: Vec<bool>,
    active: VecDeque<u16>,
    carry_deficit: bool,
}

impl Dwrr {
    pub fn new(quantum: Vec<u64>, carry_deficit: bool) -> Self {
        let n = quantum.len();
        Dwrr {
            deficit: vec![0; n],
            visited: vec![false; n],
            sent: vec![false; n],
            active: VecDeque::with_capacity(n),
            quantum,
            carry_deficit,
        }
    }

    #[inline]
    pub fn activate(&mut self, q: usize, now: Time, obs: &mut dyn RoundObserver) {
        self.deficit[q] = 0;
        self.visited[q] = false;
        self.active.push_back(q as u16);
        obs.activated(q, now);
    }

    pub fn select(&mut self, now: Time, queues: &[Fifo], rate_bps: u64, obs: &mut dyn RoundObserver) -> usize {
        loop {
            let h = *self.active.front().expect("select on an idle round-robin group") as usize;
            if !self.visited[h] {
                self.deficit[h] += self.quantum[h];
                self.visited[h] = true;
                self.sent[h] = false;
            }
            let size = queues[h].head_size().expect("active queue is empty") as u64;
            // WRR lets a turn send one packet even when the quantum is below
            // a packet, or a small quantum would starve the queue forever.
            if size <= self.deficit[h] || (!self.carry_deficit && !self.sent[h]) {
                self.deficit[h] = self.deficit[h].saturating_sub(size);
                self.sent[h] = true;
                if queues[h].len() == 1 {
                    // Last packet: the turn ends when it has left the wire.
                    self.active.pop_front();
                    self.deficit[h] = 0;
                    self.visited[h] = false;
                    obs.turn_end(h, now + tx_time(size, rate_bps));
                }
                return h;
            }
            // Turn over: the head cannot pay for its next packet.
            self.active.pop_front();
            self.active.push_back(h as u16);
            self.visited[h] = false;
            if !self.carry_deficit {
                self.deficit[h] = 0;
            }
            obs.turn_end(h, now);
        }
    }

    pub fn quantum(&self) -> &[u64] {
        &self.quantum
    }
}
