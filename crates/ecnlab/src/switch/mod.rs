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
pub mod rounds;
pub mod scheduler;
pub mod scheme;
pub mod shared_buffer;
pub mod whole;

pub use qdisc::{Qdisc, QueueCounters};
pub use rounds::RoundObserver;

// The registry of whole disciplines: one line per discipline.
whole::whole_disciplines! {
    FqCodel(fq_codel::FqCodel),
    PFabric(pfabric::PFabric),
    DualPi2(dualpi2::DualPi2),
}
