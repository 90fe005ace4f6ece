//! Weighted round robin with byte quanta: each turn a queue may send up to
//! its quantum, and what it leaves unused is forfeited (MQ-ECN §3.3.2 and
//! §4.2: DWRR with the deficit reset whenever a turn ends).

use super::Dwrr;

pub fn wrr(quantum: Vec<u64>) -> Dwrr {
    Dwrr::new(quantum, false)
}

pub const DECL: super::SchedulerDecl = super::SchedulerDecl {
    about: crate::switch::scheme::About::new(
        "wrr",
        "weighted round robin: each backlogged queue in turn sends while its quantum lasts, leftovers lost",
        "MQ-ECN §2.1",
    ),
    estimate: crate::switch::scheme::Estimate::Rounds,
    strict: |_| 0,
    validate: crate::switch::scheme::no_checks,
    build: |c| super::Scheduler::RoundRobin(wrr(c.port.quanta())),
};
