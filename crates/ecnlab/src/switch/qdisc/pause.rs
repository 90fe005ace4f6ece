//! The port's side of PFC (`world/lossless/`): a queue paused by a PAUSE
//! frame leaves the scheduler's round and joins it again on RESUME; and
//! the flags that take a port off the static path (pausable, telemetry);
//! the lossless queues, whose AQM never drops.

use super::Qdisc;
use crate::switch::marker::Events;
use crate::units::Time;

impl Qdisc {
    /// PFC may pause this port's queues: the port leaves the static path,
    /// whose dequeue does not look at pauses.
    pub fn set_pausable(&mut self) {
        self.cold.pausable = true;
        self.plain = false;
    }

    /// Each departure appends an INT record (HPCC, `rdma/int.rs`): the
    /// port leaves the static path, whose dequeue has no hook for it.
    pub fn set_telemetry(&mut self) {
        self.cold.telemetry = true;
        self.plain = false;
    }

    /// The queues of `priorities` (bit p: priority p) are lossless: PFC
    /// holds their senders instead of the buffer dropping, and an AQM on
    /// them marks ECN-capable packets and passes the rest, never drops
    /// (a drop would lose what PFC promised to keep; the HPCC simulator's
    /// switch likewise only marks). Without this a RED drop of a Not-ECT
    /// ACK in a deep incast queue costs a queue pair a retransmission timeout.
    pub fn set_lossless(&mut self, priorities: u8) {
        self.cold.lossless = (0..crate::switch::pfc::PRIORITIES as u8)
            .filter(|p| priorities & 1 << p != 0)
            .fold(0, |m, p| m | 1 << self.classify(p));
    }

    /// Queue `q` carries a lossless priority (`set_lossless`).
    #[inline]
    pub(super) fn lossless(&self, q: usize) -> bool {
        self.cold.lossless & 1 << q != 0
    }

    /// Queues paused now (bit i: queue i).
    #[inline]
    pub fn paused(&self) -> u64 {
        self.cold.paused
    }

    /// Stop serving queue `q` (a PFC PAUSE for its priority took effect):
    /// it leaves the scheduler's round as if it had emptied, keeps its
    /// packets and takes more.
    pub fn pause_queue(&mut self, q: usize, now: Time) {
        if self.cold.paused & 1 << q != 0 {
            return;
        }
        self.cold.paused |= 1 << q;
        if self.nonempty & 1 << q != 0 {
            self.sched.detach(q, now, &mut Events::<false>(&mut self.marker));
        }
    }

    /// Serve queue `q` again; it joins the round at its end, as a queue
    /// that became backlogged.
    pub fn resume_queue(&mut self, q: usize, now: Time) {
        if self.cold.paused & 1 << q == 0 {
            return;
        }
        self.cold.paused &= !(1 << q);
        if self.nonempty & 1 << q != 0 {
            self.sched.activate(q, now, &mut Events::<false>(&mut self.marker));
        }
    }

    /// After an enqueue into queue `q` of a pausable port: a queue that
    /// was empty and is paused joined the scheduler's round; it leaves it
    /// until it resumes.
    pub fn settle_paused(&mut self, q: usize, now: Time) {
        if self.cold.paused & 1 << q != 0 && self.queues[q].fifo.len() == 1 {
            self.sched.detach(q, now, &mut Events::<false>(&mut self.marker));
        }
    }
}
