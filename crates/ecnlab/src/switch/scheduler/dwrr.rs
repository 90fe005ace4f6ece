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
    slots: Box<[Slot]>,
    active: Active,
    carry_deficit: bool,
    /// The smallest quantum: a packet no larger is sent in any queue's
    /// first turn, which `sends_first_turn` can tell without the slots.
    min_quantum: u64,
}

impl Dwrr {
    pub fn new(quantum: Vec<u64>, carry_deficit: bool) -> Self {
        debug_assert!(quantum.len() <= 64);
        Dwrr {
            min_quantum: quantum.iter().copied().min().unwrap_or(0),
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

    // Always inlined: with WFQ's arm in `Scheduler::activate` LLVM made it
    // a call (+0.6% instructions on the MQ-ECN point, cachegrind).
    #[inline(always)]
    pub fn activate<O: RoundObserver>(&mut self, q: usize, now: Time, obs: &mut O) {
        self.slots[q].deficit = 0;
        self.slots[q].visited = false;
        self.push_back(q);
        obs.activated(q, now);
    }

    /// A lone packet at idle queue `q` is sent in the queue's first turn:
    /// the quantum pays for it, or WRR lets a turn send one packet anyway.
    /// Take queue `q` out of the active list, if it is there, ending its
    /// turn now (PFC paused it; see `Scheduler::detach`).
    pub fn detach<O: RoundObserver>(&mut self, q: usize, now: Time, obs: &mut O) {
        let a = self.active;
        let (mut prev, mut cur): (Option<usize>, usize) = (None, a.head as usize);
        for _ in 0..a.len {
            if cur == q {
                match prev {
                    None => self.active.head = self.slots[cur].next,
                    Some(p) => self.slots[p].next = self.slots[cur].next,
                }
                if a.tail as usize == q {
                    if let Some(p) = prev {
                        self.active.tail = p as u8;
                    }
                }
                self.active.len -= 1;
                self.slots[q].deficit = 0;
                self.slots[q].visited = false;
                obs.turn_end(q, now);
                return;
            }
            prev = Some(cur);
            cur = self.slots[cur].next as usize;
        }
    }

    #[inline]
    pub fn sends_first_turn(&self, q: usize, size: u64) -> bool {
        size <= self.min_quantum || !self.carry_deficit || size <= self.slots[q].quantum
    }

    /// `activate(q)` then the `select` that sends its lone packet, when the
    /// port has nothing else (the active list is empty before and after).
    /// What those leave in the queue's slot is dead: the next `activate`
    /// resets its deficit and turn, so the slot is not touched.
    // Always inlined: a call here measured 2.6% of the 50,000-flow MQ-ECN
    // point's instructions once the marker's round hooks grew.
    #[inline(always)]
    pub fn serve_first_turn<O: RoundObserver>(&mut self, q: usize, size: u64, now: Time, rate: LineRate, obs: &mut O) {
        debug_assert_eq!(self.active.len, 0);
        obs.activated(q, now);
        obs.turn_end(q, now + rate.tx_time(size));
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

pub const DECL: super::SchedulerDecl = super::SchedulerDecl {
    about: crate::switch::scheme::About::new(
        "dwrr",
        "deficit weighted round robin: each backlogged queue in turn sends its quantum plus what it left over",
        "Shreedhar & Varghese, SIGCOMM 1995; MQ-ECN §2.1",
    ),
    estimate: crate::switch::scheme::Estimate::Rounds,
    strict: |_| 0,
    validate: crate::switch::scheme::no_checks,
    build: |c| super::Scheduler::RoundRobin(Dwrr::new(c.port.quanta(), true)),
};
