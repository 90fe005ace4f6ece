//! A switch egress port's queue discipline, built from four small parts:
//! a classifier (service class → queue, or ML-ECN's stage classes in
//! `classifier`), a scheduler (which queue sends
//! next), a marker (ECN/AQM hooks at enqueue and dequeue) and a buffer
//! (admission). Designs that are whole disciplines of their own (FQ-CoDel,
//! pFabric) sit beside it, behind the same `Qdisc` interface. Each scheme
//! declares itself (`scheme.rs`) and joins its kind's list with one line:
//! `marker::MARKINGS` (marker/mod.rs), `scheduler::SCHEDULERS` and
//! `QDISCS` (below).

pub mod buffer;
pub mod classifier;
pub mod codel;
pub mod fifo;
pub mod marker;
pub mod pfc;
pub mod qdisc;
pub mod queue;
pub mod recipe;
pub mod scheduler;
pub mod scheme;
pub mod shared_buffer;
pub mod whole;

pub use qdisc::{Qdisc, QueueCounters};

// The registry of whole disciplines: one line per discipline.
whole::whole_disciplines! {
    FqCodel(fq_codel::FqCodel),
    PFabric(pfabric::PFabric),
    DualPi2(dualpi2::DualPi2),
}

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
