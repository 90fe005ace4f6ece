//! Schedulers: which backlogged queue sends next. `select` is called only
//! when the port holds a packet; it commits to the head packet of the queue
//! it returns (charging deficits, ending turns) before the qdisc pops it.
//! Each scheduler declares itself with a `SchedulerDecl` (below, as it
//! names `Scheduler`) and joins `SCHEDULERS` with one line.

mod dwrr;
mod sp;
mod sp_dwrr;
mod wfq;
mod wrr;

pub use dwrr::Dwrr;
pub use sp::Sp;
pub use sp_dwrr::SpDwrr;
pub use wfq::Wfq;
pub use wrr::wrr;

/// Every scheduler: the registry's list, one line each. (A scheduler with
/// a runtime type of its own also joins `Scheduler`, the per-packet
/// match: each one's `select` is specialised for its shape.)
pub const SCHEDULERS: &[&SchedulerDecl] = &[&sp::DECL, &wrr::DECL, &dwrr::DECL, &sp_dwrr::DECL, &wfq::DECL];

/// A scheduler of the composed discipline.
pub struct SchedulerDecl {
    pub about: About,
    pub estimate: Estimate,
    /// Queues served before the round-robin group (sp-dwrr's), which
    /// MQ-ECN leaves out of its rounds.
    pub strict: fn(&PortCtx) -> usize,
    pub validate: fn(&PortCtx) -> Result<(), ConfigError>,
    pub build: fn(&PortCtx) -> Scheduler,
}

use super::queue::Queue;
use super::RoundObserver;
use crate::config::ConfigError;
use crate::switch::scheme::{About, Estimate, PortCtx};
use crate::units::{LineRate, Time};

pub enum Scheduler {
    Sp(Sp),
    /// WRR and DWRR share one round-robin engine (see `wrr.rs`).
    RoundRobin(Dwrr),
    SpDwrr(SpDwrr),
    Wfq(Wfq),
}

impl Scheduler {
    /// Queue `q` went from empty to backlogged.
    // Always inlined, as `serve_first_turn`: left to LLVM, the static
    // enqueue path called both (with `Events::port_busy`, 1.3% of a
    // 600-flow MQ-ECN copy's instructions).
    #[inline(always)]
    pub fn activate<O: RoundObserver>(&mut self, q: usize, now: Time, obs: &mut O) {
        match self {
            Scheduler::Sp(_) => {}
            Scheduler::RoundRobin(d) => d.activate(q, now, obs),
            Scheduler::SpDwrr(s) => s.activate(q, now, obs),
            Scheduler::Wfq(w) => w.activate(q, now, obs),
        }
    }

    /// Backlogged queue `q` stops taking part (PFC paused it): it leaves
    /// the round as if it had emptied; `activate` brings it back.
    pub fn detach<O: RoundObserver>(&mut self, q: usize, now: Time, obs: &mut O) {
        match self {
            // Bit-mask schedulers see the pause in the mask they are given.
            Scheduler::Sp(_) | Scheduler::Wfq(_) => {}
            Scheduler::RoundRobin(d) => d.detach(q, now, obs),
            Scheduler::SpDwrr(s) => {
                if q >= s.sp {
                    s.dwrr.detach(q, now, obs)
                }
            }
        }
    }

    /// Would a `size`-byte packet arriving alone at idle queue `q` of an
    /// empty port be sent in the queue's first turn?
    #[inline]
    pub fn sends_first_turn(&self, q: usize, size: u64) -> bool {
        match self {
            Scheduler::Sp(_) | Scheduler::Wfq(_) => true,
            Scheduler::RoundRobin(d) => d.sends_first_turn(q, size),
            Scheduler::SpDwrr(s) => s.sends_first_turn(q, size),
        }
    }

    /// `activate(q)` then a `select` that sends that packet and empties the
    /// port (`sends_first_turn` holds).
    #[inline(always)]
    pub fn serve_first_turn<O: RoundObserver>(&mut self, q: usize, size: u64, now: Time, rate: LineRate, obs: &mut O) {
        match self {
            Scheduler::Sp(_) => {}
            Scheduler::RoundRobin(d) => d.serve_first_turn(q, size, now, rate, obs),
            Scheduler::SpDwrr(s) => s.serve_first_turn(q, size, now, rate, obs),
            Scheduler::Wfq(w) => w.serve_first_turn(q, now, obs),
        }
    }

    /// `nonempty` has bit i set when queue i holds packets; `rate` is the
    /// port's line rate (a turn ends when its last packet has left).
    #[inline]
    pub fn select<O: RoundObserver>(
        &mut self,
        now: Time,
        queues: &[Queue],
        nonempty: u64,
        rate: LineRate,
        obs: &mut O,
    ) -> usize {
        match self {
            Scheduler::Sp(s) => s.select(nonempty),
            Scheduler::RoundRobin(d) => d.select(now, queues, rate, obs),
            Scheduler::SpDwrr(s) => s.select(now, queues, nonempty, rate, obs),
            Scheduler::Wfq(w) => w.select(now, queues, nonempty, obs),
        }
    }
}
