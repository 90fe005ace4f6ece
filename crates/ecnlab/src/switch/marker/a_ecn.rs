//! A-ECN-like adaptive per-queue threshold, a reconstruction (confidence
//! low; docs/schemes/a-ecn.md says what it rests on). What is known of
//! A-ECN (Wang et al., IEEE Access 2020) from its abstract and ML-ECN §VI:
//! a per-queue threshold adapted to keep the queue short without letting it
//! run dry, updated every N enqueued packets rather than every time
//! interval. The update law below is ours:
//!
//! - mark an arriving packet iff its queue, the packet counted, exceeds the
//!   queue's current K_q (the standard test);
//! - every N arrivals to a queue (an epoch), look at the least the arrivals
//!   found waiting: if one found the queue empty, it ran dry (an underflow:
//!   its share of the link went unused), so K_q += Δ_up, up to K_max;
//!   otherwise a standing queue of at least that many bytes never drained,
//!   so K_q −= min(Δ_down, that minimum), down to K_min.
//!
//! An underflow could be detected by a "queue emptied" event; an
//! arrival finding the queue empty is the same event seen by the next
//! arrival, which needs no hook on the dequeue path. Defaults (ours):
//! K_q starts at K_max = the standard K, N = 64, Δ_up = Δ_down = one
//! packet, K_min = two packets.

use super::{mark_if, HookedMarker, MarkingDecl, Seen, Sides, Threshold, Verdict};
use crate::config::param::section;
use crate::config::{bad, Amt};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::switch::scheme::About;

section! {
    /// A-ECN's keys (K_max is the port's threshold).
    pub struct AEcnParams {
        /// Enqueued packets per epoch (an update of K_q).
        aecn_epoch: Option<u32> = None, default_doc "64", range "1 or more",
            source "ecnlab's reconstruction (docs/schemes/a-ecn.md)";
        /// K_q's step up after an underflow.
        aecn_up: Option<Amt> = None, default_doc "\"1pkt\"", range "positive",
            source "ecnlab's reconstruction (docs/schemes/a-ecn.md)";
        /// K_q's step down after a standing queue.
        aecn_down: Option<Amt> = None, default_doc "\"1pkt\"", range "positive",
            source "ecnlab's reconstruction (docs/schemes/a-ecn.md)";
        /// K_q's floor.
        aecn_k_min: Option<Amt> = None, default_doc "\"2pkt\"", range "positive, at most threshold",
            source "ecnlab's reconstruction (docs/schemes/a-ecn.md)";
    }
}

pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[AEcnParams::PARAMS],
        ..About::new(
            "a-ecn",
            "A-ECN-like (a reconstruction): a per-queue K adapted every aecn_epoch enqueues between \
             aecn_k_min and threshold",
            "Wang et al., A-ECN (IEEE Access 2020); ML-ECN §VI; the reconstruction: docs/schemes/a-ecn.md",
        )
    },
    threshold: Threshold::One,
    own_sides: Some("judges at enqueue"),
    validate: |c| {
        let p = c.read(AEcnParams::read)?;
        let k = c.k();
        if p.aecn_epoch == Some(0) {
            return Err(bad(&c.key("aecn_epoch"), 0, "must be at least 1 enqueued packet (default 64)"));
        }
        for (key, a) in [("aecn_up", p.aecn_up), ("aecn_down", p.aecn_down)] {
            if let Some(a) = a {
                if a.0.bytes(c.pkt) == 0 {
                    return Err(bad(&c.key(key), a.0, "must be positive (default \"1pkt\")"));
                }
            }
        }
        if let Some(lo) = p.aecn_k_min {
            let b = lo.0.bytes(c.pkt);
            if b == 0 || b > k {
                return Err(bad(
                    &c.key("aecn_k_min"),
                    lo.0,
                    &format!("must be positive and at most threshold ({k}B), the threshold's ceiling"),
                ));
            }
        }
        Ok(())
    },
    build: |c| {
        let p = c.params(AEcnParams::read);
        let (k, pkt) = (c.k(), c.pkt);
        let or_pkts = |a: Option<Amt>, n: u64| a.map_or(n * pkt, |a| a.0.bytes(pkt));
        AEcn::new(
            k,
            or_pkts(p.aecn_k_min, 2).min(k),
            or_pkts(p.aecn_up, 1),
            or_pkts(p.aecn_down, 1),
            p.aecn_epoch.unwrap_or(AEcn::DEFAULT_EPOCH),
            c.port.queues as usize,
        )
        .into()
    },
};

pub struct AEcn {
    /// K_q's bounds, bytes; K_q starts at k_max.
    pub k_min: u64,
    pub k_max: u64,
    /// Steps up after an underflow and down after a standing queue, bytes.
    pub up: u64,
    pub down: u64,
    /// Arrivals per epoch.
    pub epoch: u32,
    queue: Box<[Epoch]>,
}

/// One queue's threshold and its current epoch.
#[derive(Clone, Copy)]
struct Epoch {
    k: u64,
    arrivals: u32,
    /// The fewest bytes an arrival of this epoch found queued ahead of it.
    least_found: u64,
}

impl AEcn {
    /// The epoch's length, in enqueued packets (N, default 64).
    pub const DEFAULT_EPOCH: u32 = 64;

    pub fn new(k_max: u64, k_min: u64, up: u64, down: u64, epoch: u32, queues: usize) -> Self {
        let fresh = Epoch { k: k_max, arrivals: 0, least_found: u64::MAX };
        AEcn { k_min, k_max, up, down, epoch: epoch.max(1), queue: vec![fresh; queues].into_boxed_slice() }
    }

    /// Queue `q`'s current threshold, bytes.
    pub fn threshold(&self, q: usize) -> u64 {
        self.queue[q].k
    }

    #[inline]
    pub fn at_enqueue(&mut self, s: &Seen) -> Verdict {
        let e = &mut self.queue[s.q];
        let verdict = mark_if(s.occ.queue > e.k);
        e.arrivals += 1;
        e.least_found = e.least_found.min(s.occ.queue - s.size as u64);
        if e.arrivals >= self.epoch {
            e.k = if e.least_found == 0 {
                (e.k + self.up).min(self.k_max)
            } else {
                e.k.saturating_sub(self.down.min(e.least_found)).max(self.k_min)
            };
            e.arrivals = 0;
            e.least_found = u64::MAX;
        }
        verdict
    }
}

impl HookedMarker for AEcn {
    fn sides(&self) -> Sides {
        Sides::Enqueue
    }
    #[inline]
    fn at_enqueue(&mut self, s: &Seen, _pkt: &Packet, _rng: &mut Rng) -> Verdict {
        AEcn::at_enqueue(self, s)
    }
    fn threshold(&self, q: usize) -> Option<u64> {
        Some(AEcn::threshold(self, q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::marker::Occupancy;

    const P: u64 = 1500;

    /// A 1500 B arrival to queue `q` that finds `found` bytes queued.
    fn arrival(q: usize, found: u64) -> Seen {
        let occ = found + P;
        Seen {
            now: 0,
            q,
            occ: Occupancy { queue: occ, port: occ, pool: occ },
            size: P as u32,
            sojourn: 0,
            backlogged: 1,
        }
    }

    /// K = 20 packets, N = 64, Δ = 1 packet, K_min = 2 packets. A queue that
    /// never drains (every arrival finds ≥ 10 packets) loses one packet of
    /// threshold per epoch: 20 − m after m epochs, down to the floor of 2 at
    /// m = 18, and no lower. Its neighbour, never fed, keeps K.
    #[test]
    fn threshold_falls_while_a_standing_queue_never_drains() {
        let mut a = AEcn::new(20 * P, 2 * P, P, P, 64, 2);
        for m in 1..=25u64 {
            for i in 0..64 {
                a.at_enqueue(&arrival(0, (10 + i % 7) * P));
            }
            assert_eq!(a.threshold(0), (20 - m.min(18)) * P, "after epoch {m}");
        }
        assert_eq!(a.threshold(1), 20 * P);
        // A standing queue shallower than Δ_down: the threshold falls by
        // the standing part only (500 B).
        let mut a = AEcn::new(20 * P, 2 * P, P, P, 64, 1);
        for _ in 0..64 {
            a.at_enqueue(&arrival(0, 500));
        }
        assert_eq!(a.threshold(0), 20 * P - 500);
    }

    /// After an epoch in which one arrival found the queue empty, K rises
    /// by Δ_up (1 packet), and never above K_max (20 packets).
    #[test]
    fn threshold_rises_after_an_underflow() {
        let mut a = AEcn::new(20 * P, 2 * P, P, P, 64, 1);
        for _ in 0..5 * 64 {
            a.at_enqueue(&arrival(0, 10 * P));
        }
        assert_eq!(a.threshold(0), 15 * P);
        for m in 1..=8u64 {
            for i in 0..64 {
                a.at_enqueue(&arrival(0, if i == 30 { 0 } else { 10 * P }));
            }
            assert_eq!(a.threshold(0), (15 + m.min(5)) * P, "after epoch {m}");
        }
    }

    /// Marks follow the current K_q: with K_q lowered to 15 packets, an
    /// arrival that makes 16 packets is marked, one that makes 15 is not.
    #[test]
    fn marks_against_the_adapted_threshold() {
        let mut a = AEcn::new(20 * P, 2 * P, P, P, 64, 1);
        for _ in 0..5 * 64 {
            a.at_enqueue(&arrival(0, 18 * P));
        }
        assert_eq!(a.threshold(0), 15 * P);
        assert_eq!(a.at_enqueue(&arrival(0, 15 * P)), Verdict::Mark);
        assert_eq!(a.at_enqueue(&arrival(0, 14 * P)), Verdict::Pass);
    }
}
