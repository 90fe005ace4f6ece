//! A switch egress port's queue discipline, built from four small parts:
//! a classifier (service class → queue, or ML-ECN's stage classes in
//! `classifier`), a scheduler (which queue sends
//! next), a marker (ECN/AQM hooks at enqueue and dequeue) and a buffer
//! (admission). New schemes are one file in `scheduler/` or `marker/`.
//! Designs that are whole disciplines of their own (FQ-CoDel, pFabric) sit
//! beside it in `whole`, behind the same `Qdisc` interface.

pub mod buffer;
pub mod classifier;
pub mod codel;
pub mod fifo;
pub mod fq_codel;
pub mod marker;
pub mod pfabric;
pub mod qdisc;
pub mod queue;
pub mod scheduler;
pub mod whole;

pub use qdisc::{Qdisc, QueueCounters};

use crate::units::Time;

/// What a scheduler tells the marker about service (MQ-ECN needs it): a
/// round-robin scheduler its rounds, WFQ each packet it picks.
pub trait RoundObserver {
    /// Queue `q` became backlogged and joined the round at `now`.
    fn activated(&mut self, q: usize, now: Time);
    /// Queue `q` finished its turn; its service in this round ends at `end`.
    fn turn_end(&mut self, q: usize, end: Time);
    /// WFQ picked queue `q`'s head packet at `now`; `emptied`: it was the
    /// queue's last. (Round-robin schedulers do not call it.)
    #[inline]
    fn served(&mut self, _q: usize, _now: Time, _emptied: bool) {}
}
