//! The markers with state or hooks of their own: CEDM, RED (and MQ-ECN's
//! probabilistic variant), TCN, CoDel, ML-ECN and its comparators. Each
//! judges through `at_enqueue`/`at_dequeue` with the whole `Seen` (sojourn,
//! backlogged queues, the packet, a random stream), where the static
//! schemes of `Marker` need only occupancies and a threshold.
//!
//! They sit behind one pointer (`Marker::Hooked`) and are called only from
//! out-of-line code, so that the static schemes' per-packet path, which
//! every MQ-ECN run takes, matches over a handful of variants and carries
//! none of this code.

use super::{AEcn, Cedm, CodelAqm, DemePro, MlEcn, MmEcn, Pmsb, Red, Seen, Sides, Tcn, Verdict};
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::switch::RoundObserver;
use crate::units::Time;

pub enum Hooked {
    Cedm(Cedm),
    Red(Red),
    Tcn(Tcn),
    MlEcn(MlEcn),
    MmEcn(MmEcn),
    AEcn(AEcn),
    DemePro(DemePro),
    Pmsb(Pmsb),
    /// CoDel (RFC 8289), one state per queue.
    Codel(CodelAqm),
}

impl Hooked {
    pub fn sides(&self) -> Sides {
        match self {
            Hooked::Cedm(_) | Hooked::DemePro(_) => Sides::Both,
            Hooked::Red(_) | Hooked::AEcn(_) | Hooked::Pmsb(_) | Hooked::MlEcn(_) => Sides::Enqueue,
            Hooked::Tcn(_) | Hooked::Codel(_) => Sides::Dequeue,
            Hooked::MmEcn(m) if m.front => Sides::Dequeue,
            Hooked::MmEcn(_) => Sides::Enqueue,
        }
    }

    /// Decide for packet `pkt`, about to be queued.
    #[inline]
    pub fn at_enqueue(&mut self, s: &Seen, pkt: &Packet, rng: &mut Rng) -> Verdict {
        match self {
            Hooked::Cedm(m) => m.at_enqueue(s),
            Hooked::Red(m) => m.at_enqueue(s, pkt.ecn != Ecn::NotEct, rng),
            Hooked::MlEcn(m) => m.at_enqueue(s, pkt, rng),
            Hooked::MmEcn(m) => m.judge(s.occ.queue, rng),
            Hooked::AEcn(m) => m.at_enqueue(s),
            Hooked::DemePro(m) => m.at_enqueue(s),
            Hooked::Pmsb(m) => m.at_enqueue(s),
            Hooked::Tcn(_) | Hooked::Codel(_) => Verdict::Pass,
        }
    }

    /// Decide for a packet about to leave (occupancy counts it); `ect`: it
    /// may be marked (CoDel drops what it cannot mark).
    #[inline]
    pub fn at_dequeue(&mut self, s: &Seen, ect: bool, rng: &mut Rng) -> Verdict {
        match self {
            Hooked::Cedm(m) => m.at_dequeue(s),
            Hooked::Tcn(m) => m.at_dequeue(s),
            Hooked::MmEcn(m) => m.judge(s.occ.queue, rng),
            Hooked::DemePro(m) => m.at_dequeue(s),
            Hooked::Codel(m) => m.at_dequeue(s, ect),
            Hooked::Red(_) | Hooked::MlEcn(_) | Hooked::AEcn(_) | Hooked::Pmsb(_) => Verdict::Pass,
        }
    }

    // The port and round events below concern RED alone (its idle decay,
    // and MQ-ECN's share estimate in the probabilistic variant); only the
    // hooked ports' paths call them (see `Events`).

    #[inline]
    pub fn queue_emptied(&mut self, q: usize, now: Time) {
        if let Hooked::Red(m) = self {
            m.queue_emptied(q, now)
        }
    }

    #[inline]
    pub fn port_busy(&mut self, now: Time) {
        if let Hooked::Red(m) = self {
            m.port_busy(now)
        }
    }

    #[inline]
    pub fn port_idle(&mut self, now: Time) {
        if let Hooked::Red(m) = self {
            m.port_idle(now)
        }
    }

    /// The current threshold of queue `q` in bytes (for sampling and tests).
    pub fn threshold(&self, q: usize) -> Option<u64> {
        match self {
            Hooked::Cedm(m) => Some(m.k1),
            Hooked::Red(m) => Some(m.min_threshold(q)),
            Hooked::Tcn(_) | Hooked::Codel(_) => None,
            Hooked::MlEcn(m) => Some(m.k),
            Hooked::MmEcn(m) => Some(m.k_low),
            Hooked::AEcn(m) => Some(m.threshold(q)),
            Hooked::DemePro(m) => Some(m.k),
            Hooked::Pmsb(m) => Some(m.blind_threshold(q)),
        }
    }
}

impl RoundObserver for Hooked {
    #[inline]
    fn activated(&mut self, q: usize, now: Time) {
        if let Hooked::Red(m) = self {
            m.activated(q, now)
        }
    }
    #[inline]
    fn turn_end(&mut self, q: usize, end: Time) {
        if let Hooked::Red(m) = self {
            m.turn_end(q, end)
        }
    }
    #[inline]
    fn served(&mut self, q: usize, now: Time, emptied: bool) {
        if let Hooked::Red(m) = self {
            m.served(q, now, emptied)
        }
    }
}
