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
//! The ML-ECN paper's comparators (ML-ECN §IV, §VI; reconstructions, each
//! page under docs/schemes/ says what it rests on): MM-ECN judges at dequeue (or at enqueue
//! with its tail position), A-ECN and PMSB at enqueue, DemePro at both (it
//! decides at enqueue and marks a queue head, which leaves at dequeue).
//!
//! Each scheme declares itself with a `MarkingDecl` (below, as it names
//! `Marker`) and joins `MARKINGS` with one line of `hooked_markers!`.

mod hooked;
mod mq_ecn_generic;
mod mq_ecn_round;
mod per_pool;
mod per_port;
mod per_queue;

pub use hooked::HookedMarker;
pub use mq_ecn_generic::MqEcnGeneric;
pub use mq_ecn_round::MqEcn;
pub use per_pool::PerPool;
pub use per_port::PerPort;
pub use per_queue::PerQueue;

// The registry of marking schemes: one line per scheme. The static ones
// (judged from occupancies and thresholds on the plain path) are variants
// of `Marker` itself; the hooked ones load their file and join `Hooked`.
hooked::hooked_markers! {
    plain: [NONE, per_queue::DECL, per_queue::MIN_DECL, per_port::DECL, per_pool::DECL, mq_ecn::DECL],
    hooked: [
        Cedm(cedm::Cedm),
        Red(red::Red),
        Tcn(tcn::Tcn),
        MmEcn(mm_ecn::MmEcn),
        AEcn(a_ecn::AEcn),
        DemePro(deme_pro::DemePro),
        Pmsb(pmsb::Pmsb),
        MlEcn(ml_ecn::MlEcn),
        /// CoDel (RFC 8289), one state per queue.
        Codel(codel::CodelAqm),
        Pie(pie::Pie),
    ],
}

mod mq_ecn;
pub use deme_pro::FairShare;
pub use red::Share;

use crate::config::ConfigError;
use crate::switch::scheme::{About, PortCtx};

/// How a marking scheme takes `threshold`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Threshold {
    /// One K, required.
    One,
    /// One K, required, against the switch's shared pool (all its ports)
    /// rather than anything one port's buffer bounds: a K above a port's
    /// buffer still acts.
    Pool,
    /// One K for all queues or one per queue, required.
    PerQueue,
    /// Not used; the text says what the scheme takes instead.
    Unused(&'static str),
    /// The scheme's `validate` decides (MQ-ECN: K, or RED's keys instead).
    Own,
    /// Not used, and not refused either (no marking: experiment files have
    /// long kept a threshold for the cases of a sweep that mark).
    Ignored,
}

/// A marking scheme of the composed discipline.
pub struct MarkingDecl {
    pub about: About,
    pub threshold: Threshold,
    /// Where it judges, when that is its own (hooks on one side or both)
    /// rather than where `dequeue_marking` says; such a scheme refuses
    /// `dequeue_marking`.
    pub own_sides: Option<&'static str>,
    /// Checks of its keys (beyond their types and the threshold rule).
    pub validate: fn(&PortCtx) -> Result<(), ConfigError>,
    pub build: fn(&PortCtx) -> Marker,
}

/// No marking: queues only drop when the buffer is full.
pub const NONE: MarkingDecl = MarkingDecl {
    about: About::new("none", "no ECN marking; packets are dropped only when the buffer is full", ""),
    threshold: Threshold::Ignored,
    own_sides: None,
    validate: crate::switch::scheme::no_checks,
    build: |_| Marker::None,
};

use super::RoundObserver;
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

/// A composed queue's marker. The static-threshold schemes, which judge
/// from occupancies and thresholds alone, are variants of their own: the
/// per-packet path of a plain port (`Qdisc::is_plain`) matches over these
/// few (`exceeds`, `Events`). Every scheme with hooks of its own is behind
/// one pointer (`hooked.rs`), reached only from the other ports' paths, so
/// the plain ones carry none of its code. (One variant per scheme, all on
/// one path, had cost the MQ-ECN point 3.7% more instructions.) Boxed
/// state also keeps a port's hot state within its four cache lines (see
/// `topology::Port`).
pub enum Marker {
    None,
    PerQueue(PerQueue),
    PerPort(PerPort),
    PerPool(PerPool),
    MqEcn(MqEcn),
    /// MQ-ECN's weight-sum variant, for WFQ (§3.4).
    MqEcnGeneric(MqEcnGeneric),
    Hooked(Box<Hooked>),
}

impl From<Hooked> for Marker {
    fn from(h: Hooked) -> Self {
        Marker::Hooked(Box::new(h))
    }
}

impl Marker {
    /// The static-threshold test (both sides of the one-sided schemes).
    // Always inlined: with the WFQ variant's arm LLVM stopped inlining it
    // into the enqueue path, 1.2% more instructions on the MQ-ECN point.
    #[inline(always)]
    pub fn exceeds(&self, q: usize, occ: Occupancy) -> bool {
        match self {
            Marker::None | Marker::Hooked(_) => false,
            Marker::PerQueue(m) => m.exceeds(q, occ),
            Marker::PerPort(m) => m.exceeds(occ),
            Marker::PerPool(m) => m.exceeds(occ),
            Marker::MqEcn(m) => m.exceeds(q, occ),
            Marker::MqEcnGeneric(m) => m.exceeds(q, occ),
        }
    }

    pub fn sides(&self) -> Sides {
        match self {
            Marker::Hooked(h) => h.sides(),
            _ => Sides::Either,
        }
    }

    /// The scheme with hooks of its own, if this is one.
    pub fn hooked(&self) -> Option<&Hooked> {
        match self {
            Marker::Hooked(h) => Some(h),
            _ => None,
        }
    }

    /// The marker may take back a mark it set at enqueue (CEDM), so the
    /// qdisc remembers which marks are this queue's.
    pub fn unmarks(&self) -> bool {
        self.hooked().is_some_and(|h| h.scheme().unmarks())
    }

    /// The marker wants each packet's sojourn time at dequeue.
    pub fn needs_sojourn(&self) -> bool {
        self.hooked().is_some_and(|h| h.scheme().needs_sojourn())
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
            Marker::Hooked(h) => h.threshold(q),
        }
    }
}

/// The marker as its port tells it of events: a packet at an empty port,
/// the port's last packet gone, a queue emptied (RED's idle decay), and the
/// scheduler's rounds and turns (MQ-ECN's round time, RED's in MQ-ECN's
/// probabilistic variant). `PLAIN`: the port is plain (`Qdisc::is_plain`),
/// so its marker is not `Hooked` and the code for it carries neither the
/// hooked schemes' code nor a call into it (a call in `Dwrr::select`'s loop
/// cost the loop its registers: 14% more instructions in select on the
/// MQ-ECN point).
pub struct Events<'a, const PLAIN: bool>(pub &'a mut Marker);

// Everything here is always inlined, as `MqEcn`'s events: LLVM made calls
// of them once the static enqueue path was one function (1.3% more
// instructions on a 600-flow MQ-ECN copy), and most arrivals find their
// port empty.
impl<const PLAIN: bool> Events<'_, PLAIN> {
    /// A packet arrives at an empty port.
    #[inline(always)]
    pub fn port_busy(&mut self, now: Time) {
        match self.0 {
            Marker::MqEcn(m) => m.port_busy(now),
            Marker::MqEcnGeneric(m) => m.port_busy(now),
            Marker::Hooked(h) if !PLAIN => h.port_busy(now),
            _ => {}
        }
    }

    /// The port's last packet has been taken for transmission.
    #[inline(always)]
    pub fn port_idle(&mut self, now: Time) {
        match self.0 {
            Marker::MqEcn(m) => m.port_idle(now),
            Marker::MqEcnGeneric(m) => m.port_idle(now),
            Marker::Hooked(h) if !PLAIN => h.port_idle(now),
            _ => {}
        }
    }

    /// Queue `q` has just been emptied (its last packet taken at `now`).
    #[inline(always)]
    pub fn queue_emptied(&mut self, q: usize, now: Time) {
        match self.0 {
            Marker::Hooked(h) if !PLAIN => h.queue_emptied(q, now),
            _ => {}
        }
    }
}

impl<const PLAIN: bool> RoundObserver for Events<'_, PLAIN> {
    #[inline(always)]
    fn activated(&mut self, q: usize, now: Time) {
        match self.0 {
            Marker::MqEcn(m) => m.activated(q, now),
            Marker::MqEcnGeneric(m) => m.activated(q, now),
            Marker::Hooked(h) if !PLAIN => h.activated(q, now),
            _ => {}
        }
    }
    #[inline(always)]
    fn turn_end(&mut self, q: usize, end: Time) {
        match self.0 {
            Marker::MqEcn(m) => m.turn_end(q, end),
            Marker::Hooked(h) if !PLAIN => h.turn_end(q, end),
            _ => {}
        }
    }
    #[inline(always)]
    fn served(&mut self, q: usize, now: Time, emptied: bool) {
        match self.0 {
            Marker::MqEcnGeneric(m) => m.served(q, now, emptied),
            Marker::Hooked(h) if !PLAIN => h.served(q, now, emptied),
            _ => {}
        }
    }
}
