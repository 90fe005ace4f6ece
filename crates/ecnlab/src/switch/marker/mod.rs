//! Markers (the AQM of a composed queue): a hook at enqueue and one at
//! dequeue, each seeing one `Seen` (time, queue, occupancies, sojourn) and
//! returning a `Verdict`. The qdisc applies it: CE on an ECT packet (or a
//! drop of a Not-ECT one with drop_not_ect), a drop, or taking back a CE
//! mark this queue set.
//!
//! Static-threshold schemes (per-queue, per-port, per-pool, MQ-ECN in its
//! round-robin and generic variants) judge
//! on one side only: at enqueue, or at dequeue with dequeue marking (Tuning
//! ECN §4.2); their test is "occupancy > threshold" with the packet counted,
//! the same as Tuning ECN's "queue seen on arrival ≥ h" for whole packets.
//! CEDM uses both hooks, TCN and CoDel only the dequeue one (they need the
//! sojourn time), RED and ML-ECN the enqueue one (ML-ECN reads the packet's stage).
//!
//! The ML-ECN paper's comparators (ML-ECN §IV, §VI; reconstructions from
//! shared/schemes/comparators.md): MM-ECN judges at dequeue (or at enqueue
//! with its tail position), A-ECN and PMSB at enqueue, DemePro at both (it
//! decides at enqueue and marks a queue head, which leaves at dequeue).

mod a_ecn;
mod cedm;
mod codel;
mod deme_pro;
mod ml_ecn;
mod mm_ecn;
mod mq_ecn;
mod mq_ecn_generic;
mod per_pool;
mod per_port;
mod per_queue;
mod pmsb;
mod red;
mod tcn;

pub use a_ecn::AEcn;
pub use cedm::Cedm;
pub use codel::CodelAqm;
pub use deme_pro::{DemePro, FairShare};
pub use ml_ecn::MlEcn;
pub use mm_ecn::MmEcn;
pub use mq_ecn::MqEcn;
pub use mq_ecn_generic::MqEcnGeneric;
pub use per_pool::PerPool;
pub use per_port::PerPort;
pub use per_queue::PerQueue;
pub use pmsb::Pmsb;
pub use red::{Red, Share};
pub use tcn::Tcn;

use super::RoundObserver;
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::units::Time;

/// What a marker decides for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Set CE (a Not-ECT packet is dropped instead with drop_not_ect).
    Mark,
    /// Take back the CE mark this queue's enqueue hook set, if it did.
    Unmark,
    Drop,
}

#[inline]
fn mark_if(c: bool) -> Verdict {
    if c {
        Verdict::Mark
    } else {
        Verdict::Pass
    }
}

/// What a marking decision sees.
#[derive(Clone, Copy, Debug)]
pub struct Seen {
    pub now: Time,
    /// The packet's queue.
    pub q: usize,
    pub occ: Occupancy,
    /// The packet's size on the wire.
    pub size: u32,
    /// At dequeue: how long the packet waited in its queue (0 at enqueue,
    /// and at dequeue unless the marker asks for enqueue times).
    pub sojourn: Time,
    /// Bit i set while queue i holds packets, the packet's own queue
    /// included (as `occ` counts the packet) — for schemes whose share of
    /// a threshold depends on which queues are active (PMSB).
    pub backlogged: u64,
}

/// Occupancy seen by a marking decision, in bytes, packet included.
#[derive(Clone, Copy, Debug)]
pub struct Occupancy {
    pub queue: u64,
    pub port: u64,
    pub pool: u64,
}

/// Which hooks a marker uses, whatever `dequeue_marking` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sides {
    /// One side, chosen by `dequeue_marking`.
    Either,
    Enqueue,
    Dequeue,
    Both,
}

/// The schemes with state of their own are boxed, so that a port's hot
/// state stays within its four cache lines (see `topology::Port`).
pub enum Marker {
    None,
    PerQueue(PerQueue),
    PerPort(PerPort),
    PerPool(PerPool),
    MqEcn(MqEcn),
    /// MQ-ECN's weight-sum variant, for WFQ (§3.4).
    MqEcnGeneric(MqEcnGeneric),
    Cedm(Box<Cedm>),
    Red(Box<Red>),
    Tcn(Tcn),
    MlEcn(Box<MlEcn>),
    MmEcn(MmEcn),
    AEcn(Box<AEcn>),
    DemePro(Box<DemePro>),
    Pmsb(Box<Pmsb>),
    /// CoDel (RFC 8289), one state per queue.
    Codel(Box<CodelAqm>),
}

impl Marker {
    /// The static-threshold test (both sides of the one-sided schemes).
    // Always inlined: with the WFQ variant's arm LLVM stopped inlining it
    // into the enqueue path, 1.2% more instructions on the MQ-ECN point.
    #[inline(always)]
    pub fn exceeds(&self, q: usize, occ: Occupancy) -> bool {
        match self {
            Marker::None
            | Marker::Cedm(_)
            | Marker::Red(_)
            | Marker::Tcn(_)
            | Marker::MmEcn(_)
            | Marker::AEcn(_)
            | Marker::DemePro(_)
            | Marker::Pmsb(_)
            | Marker::Codel(_)
            | Marker::MlEcn(_) => false,
            Marker::PerQueue(m) => m.exceeds(q, occ),
            Marker::PerPort(m) => m.exceeds(occ),
            Marker::PerPool(m) => m.exceeds(occ),
            Marker::MqEcn(m) => m.exceeds(q, occ),
            Marker::MqEcnGeneric(m) => m.exceeds(q, occ),
        }
    }

    pub fn sides(&self) -> Sides {
        match self {
            Marker::Cedm(_) | Marker::DemePro(_) => Sides::Both,
            Marker::Red(_) | Marker::AEcn(_) | Marker::Pmsb(_) | Marker::MlEcn(_) => Sides::Enqueue,
            Marker::Tcn(_) | Marker::Codel(_) => Sides::Dequeue,
            Marker::MmEcn(m) if m.front => Sides::Dequeue,
            Marker::MmEcn(_) => Sides::Enqueue,
            _ => Sides::Either,
        }
    }

    /// The marker may take back a mark it set at enqueue (CEDM), so the
    /// qdisc remembers which marks are this queue's.
    pub fn unmarks(&self) -> bool {
        matches!(self, Marker::Cedm(_))
    }

    /// The marker wants each packet's sojourn time at dequeue.
    pub fn needs_sojourn(&self) -> bool {
        matches!(self, Marker::Tcn(_) | Marker::Codel(_))
    }

    /// Decide for packet `pkt`, about to be queued.
    #[inline]
    pub fn at_enqueue(&mut self, s: &Seen, pkt: &Packet, rng: &mut Rng) -> Verdict {
        match self {
            Marker::Cedm(m) => m.at_enqueue(s),
            Marker::Red(m) => m.at_enqueue(s, pkt.ecn != Ecn::NotEct, rng),
            Marker::MlEcn(m) => m.at_enqueue(s, pkt, rng),
            Marker::MmEcn(m) => m.judge(s.occ.queue, rng),
            Marker::AEcn(m) => m.at_enqueue(s),
            Marker::DemePro(m) => m.at_enqueue(s),
            Marker::Pmsb(m) => m.at_enqueue(s),
            m => mark_if(m.exceeds(s.q, s.occ)),
        }
    }

    /// Decide for a packet about to leave (occupancy counts it).
    #[inline]
    pub fn at_dequeue(&mut self, s: &Seen, rng: &mut Rng) -> Verdict {
        match self {
            Marker::Cedm(m) => m.at_dequeue(s),
            Marker::Tcn(m) => m.at_dequeue(s),
            Marker::MmEcn(m) => m.judge(s.occ.queue, rng),
            Marker::DemePro(m) => m.at_dequeue(s),
            m => mark_if(m.exceeds(s.q, s.occ)),
        }
    }

    /// Queue `q` has just been emptied (its last packet taken at `now`).
    #[inline]
    pub fn queue_emptied(&mut self, q: usize, now: Time) {
        if let Marker::Red(m) = self {
            m.queue_emptied(q, now)
        }
    }

    /// A packet arrives at an empty port.
    #[inline]
    pub fn port_busy(&mut self, now: Time) {
        match self {
            Marker::MqEcn(m) => m.port_busy(now),
            Marker::MqEcnGeneric(m) => m.port_busy(now),
            Marker::Red(m) => m.port_busy(now),
            _ => {}
        }
    }

    /// The port's last packet has been taken for transmission.
    #[inline]
    pub fn port_idle(&mut self, now: Time) {
        match self {
            Marker::MqEcn(m) => m.port_idle(now),
            Marker::MqEcnGeneric(m) => m.port_idle(now),
            Marker::Red(m) => m.port_idle(now),
            _ => {}
        }
    }

    /// The current threshold of queue `q` in bytes (for sampling and tests).
    pub fn threshold(&self, q: usize) -> Option<u64> {
        match self {
            Marker::None => None,
            Marker::PerQueue(m) => Some(m.k[q]),
            Marker::PerPort(m) => Some(m.k),
            Marker::PerPool(m) => Some(m.k),
            Marker::MqEcn(m) => Some(m.threshold(q)),
            Marker::MqEcnGeneric(m) => Some(m.threshold(q)),
            Marker::Cedm(m) => Some(m.k1),
            Marker::Red(m) => Some(m.min_threshold(q)),
            Marker::Tcn(_) | Marker::Codel(_) => None,
            Marker::MlEcn(m) => Some(m.k),
            Marker::MmEcn(m) => Some(m.k_low),
            Marker::AEcn(m) => Some(m.threshold(q)),
            Marker::DemePro(m) => Some(m.k),
            Marker::Pmsb(m) => Some(m.blind_threshold(q)),
        }
    }
}

impl RoundObserver for Marker {
    #[inline]
    fn activated(&mut self, q: usize, now: Time) {
        match self {
            Marker::MqEcn(m) => m.activated(q, now),
            Marker::MqEcnGeneric(m) => m.activated(q, now),
            Marker::Red(m) => m.activated(q, now),
            _ => {}
        }
    }
    #[inline]
    fn turn_end(&mut self, q: usize, end: Time) {
        match self {
            Marker::MqEcn(m) => m.turn_end(q, end),
            Marker::Red(m) => m.turn_end(q, end),
            _ => {}
        }
    }
    #[inline]
    fn served(&mut self, q: usize, now: Time, emptied: bool) {
        match self {
            Marker::MqEcnGeneric(m) => m.served(q, now, emptied),
            Marker::Red(m) => m.served(q, now, emptied),
            _ => {}
        }
    }
}
