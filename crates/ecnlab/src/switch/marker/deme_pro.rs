//! DemePro's marking rule (Gao, Lee, Li, IEEE TCC 2017; its precursor DEME,
//! ICNP 2016): the port total is compared with the per-port threshold, but
//! the mark goes to the head packet of the queue furthest above its fair
//! share, not to the arriving packet (ML-ECN §VI; confidence medium for
//! this rule, docs/schemes/deme-pro.md says why). On each enqueue:
//!
//!   if B_port > K:  j = argmax over backlogged i of (b_i − fair_i),
//!                   mark the head packet of queue j,
//!
//! B_port and b_i counting the arriving packet (as every marker here does),
//! fair_i = w_i / Σ_{backlogged k} w_k · B_port (share of the occupancy,
//! default) or · K (share of the threshold), w_i the queue's quantum, ties
//! to the lowest queue index. A head that is already CE stays as it is and
//! no other packet is marked instead (at most one mark per enqueue).
//!
//! The head of queue j is the next packet to leave j: until it leaves, no
//! other packet of j can. So "mark j's head now" is exactly "mark j's next
//! departure", and the rule is modelled by a per-queue flag set at enqueue
//! and consumed by j's next dequeue. Several enqueues that pick j before its
//! head leaves mark that one head once, as the rule would.
//!
//! The marker keeps its own copy of every queue's bytes from its two hooks
//! (each sees its queue's occupancy); the copy is exact because this marker
//! never refuses a packet at enqueue, so every packet it counts in leaves
//! through its dequeue hook. The "Pro" part of DemePro (proactive congestion
//! control in the TCC paper) is not modelled: its content is unknown to us.

use super::{HookedMarker, MarkingDecl, Seen, Sides, Threshold, Verdict};
use crate::config::param::section;
use crate::config::values::by_name;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::switch::scheme::{no_checks, About};

by_name! {
    /// What DemePro's fair share of a queue is a share of (`demepro_share`).
    pub enum DemeproShare { Occupancy => "occupancy", Threshold => "threshold" }
}

section! {
    /// DemePro's key (K is the port's threshold).
    pub struct DemeProParams {
        /// A queue's fair share: of the port's occupancy or of K.
        demepro_share: Option<DemeproShare> = None, default_doc "\"occupancy\"",
            source "ecnlab's reading (docs/schemes/deme-pro.md)";
    }
}

pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[DemeProParams::PARAMS],
        ..About::new(
            "deme-pro",
            "the port's total over K marks the head of the queue furthest above its fair share",
            "Gao, Lee, Li, DemePro (IEEE TCC 2017); ML-ECN §VI; the reading: docs/schemes/deme-pro.md",
        )
    },
    threshold: Threshold::One,
    own_sides: Some("decides at enqueue, marks a queue head as it leaves"),
    validate: no_checks,
    build: |c| {
        let share = match c.params(DemeProParams::read).demepro_share {
            Some(DemeproShare::Threshold) => FairShare::Threshold,
            _ => FairShare::Occupancy,
        };
        DemePro::new(c.k(), &c.port.quanta(), share).into()
    },
};

/// What a queue's fair share is a share of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FairShare {
    /// The port's current occupancy B_port (the default).
    Occupancy,
    /// The per-port threshold K.
    Threshold,
}

pub struct DemePro {
    /// The per-port threshold K, bytes.
    pub k: u64,
    pub share: FairShare,
    /// w_i: each queue's quantum.
    weight: Box<[u64]>,
    /// b_i: each queue's bytes, as its hooks last saw them.
    bytes: Box<[u64]>,
    /// Bit j set: queue j's head is to be marked as it leaves.
    mark_head: u64,
}

impl DemePro {
    pub fn new(k: u64, weights: &[u64], share: FairShare) -> Self {
        assert!(weights.len() <= 64, "one flag bit per queue");
        DemePro { k, share, weight: weights.into(), bytes: vec![0; weights.len()].into_boxed_slice(), mark_head: 0 }
    }

    /// Queue `q`'s bytes as the marker counts them.
    pub fn queue_bytes(&self, q: usize) -> u64 {
        self.bytes[q]
    }

    /// Queue `j` is over its share and its head waits for a mark.
    pub fn head_marked(&self, j: usize) -> bool {
        self.mark_head & (1 << j) != 0
    }

    /// The backlogged queue furthest above its fair share of `total`
    /// bytes: b_i − w_i/W·total compared as b_i·W − w_i·total, exactly, in
    /// integers (W the backlogged queues' weight sum).
    fn most_over_share(&self, total: u64) -> usize {
        let backlogged = || (0..self.bytes.len()).filter(|&i| self.bytes[i] > 0);
        let w_sum: u64 = backlogged().map(|i| self.weight[i]).sum();
        let excess = |i: usize| self.bytes[i] as i128 * w_sum as i128 - self.weight[i] as i128 * total as i128;
        let mut best = usize::MAX;
        for i in backlogged() {
            if best == usize::MAX || excess(i) > excess(best) {
                best = i;
            }
        }
        best
    }

    #[inline]
    pub fn at_enqueue(&mut self, s: &Seen) -> Verdict {
        self.bytes[s.q] = s.occ.queue;
        debug_assert_eq!(self.bytes.iter().sum::<u64>(), s.occ.port, "the copy of the queues' bytes drifted");
        if s.occ.port > self.k {
            let total = match self.share {
                FairShare::Occupancy => s.occ.port,
                FairShare::Threshold => self.k,
            };
            // The arriving packet's queue is backlogged, so there is one.
            let j = self.most_over_share(total);
            self.mark_head |= 1 << j;
        }
        Verdict::Pass
    }

    #[inline]
    pub fn at_dequeue(&mut self, s: &Seen) -> Verdict {
        self.bytes[s.q] = s.occ.queue - s.size as u64;
        let bit = 1 << s.q;
        if self.mark_head & bit != 0 {
            self.mark_head &= !bit;
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

impl HookedMarker for DemePro {
    fn sides(&self) -> Sides {
        Sides::Both
    }
    #[inline]
    fn at_enqueue(&mut self, s: &Seen, _pkt: &Packet, _rng: &mut Rng) -> Verdict {
        DemePro::at_enqueue(self, s)
    }
    #[inline]
    fn at_dequeue(&mut self, s: &Seen, _ect: bool, _rng: &mut Rng) -> Verdict {
        DemePro::at_dequeue(self, s)
    }
    fn threshold(&self, _q: usize) -> Option<u64> {
        Some(self.k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::marker::Occupancy;

    const P: u64 = 1500;

    /// A port of three queues (quanta 1:1:2) driven through the hooks, with
    /// its true per-queue packet lists kept here, so that each mark can be
    /// checked against the packet that carries it.
    struct Port {
        m: DemePro,
        queues: Vec<std::collections::VecDeque<u32>>,
        next_id: u32,
    }

    impl Port {
        fn new(share: FairShare) -> Self {
            Port { m: DemePro::new(20 * P, &[1, 1, 2], share), queues: vec![Default::default(); 3], next_id: 0 }
        }
        fn occ(&self, q: usize) -> Occupancy {
            let port = self.queues.iter().map(|v| v.len() as u64).sum::<u64>() * P;
            Occupancy { queue: self.queues[q].len() as u64 * P, port, pool: port }
        }
        fn seen(&self, q: usize) -> Seen {
            Seen { now: 0, q, occ: self.occ(q), size: P as u32, sojourn: 0, backlogged: 0 }
        }
        /// Enqueue one packet to `q`; the verdict for the arriving packet.
        fn enqueue(&mut self, q: usize) -> Verdict {
            self.queues[q].push_back(self.next_id);
            self.next_id += 1;
            let s = self.seen(q);
            self.m.at_enqueue(&s)
        }
        /// Dequeue `q`'s head: (its id, marked).
        fn dequeue(&mut self, q: usize) -> (u32, bool) {
            let s = self.seen(q);
            let v = self.m.at_dequeue(&s);
            (self.queues[q].pop_front().unwrap(), v == Verdict::Mark)
        }
    }

    /// K = 20 packets. Queue 0 holds 12 packets, queue 1 holds 3, queue 2
    /// (weight 2) holds 5: 20 in all, not over K, so nothing is flagged.
    /// The 21st packet arrives at queue 1 (now 4): fair shares of 21 packets
    /// are 5.25, 5.25, 10.5, so queue 0 is 6.75 over, queue 1 1.25 under,
    /// queue 2 5.5 under. The arriving packet is not marked; queue 0's head
    /// (its first packet, id 0) is, as it leaves — not queue 0's later
    /// packets, and no packet of queue 1.
    #[test]
    fn marks_the_head_of_the_queue_most_over_its_share() {
        let mut p = Port::new(FairShare::Occupancy);
        for (q, n) in [(0, 12), (1, 3), (2, 5)] {
            for _ in 0..n {
                assert_eq!(p.enqueue(q), Verdict::Pass);
            }
        }
        assert_eq!(p.m.mark_head, 0);
        assert_eq!(p.enqueue(1), Verdict::Pass);
        assert!(p.m.head_marked(0) && !p.m.head_marked(1) && !p.m.head_marked(2));
        // Queue 1's packets leave unmarked, the arriving one among them.
        for _ in 0..4 {
            assert!(!p.dequeue(1).1);
        }
        assert_eq!(p.dequeue(0), (0, true));
        assert_eq!(p.dequeue(0), (1, false));
    }

    /// Several arrivals over K before the head leaves mark that head once:
    /// "mark the head" three times is one CE on one packet.
    #[test]
    fn one_head_takes_one_mark() {
        let mut p = Port::new(FairShare::Occupancy);
        for _ in 0..24 {
            p.enqueue(0);
        }
        let marked: Vec<bool> = (0..24).map(|_| p.dequeue(0).1).collect();
        assert_eq!(marked.iter().filter(|&&m| m).count(), 1);
        assert!(marked[0]);
    }

    /// Where the two readings of "fair share" part: queue 2 (weight 2)
    /// holds 16 packets and queue 0 receives its 9th, 25 in all (> K = 20),
    /// queue 1 empty. Shares of the occupancy, 25/3 and 50/3: queue 0 is
    /// 0.67 over, queue 2 0.67 under, so queue 0's head is flagged. Shares
    /// of K, 20/3 and 40/3: queue 0 is 2.33 over, queue 2 2.67 over, so
    /// queue 2's is.
    #[test]
    fn fair_share_of_occupancy_or_of_threshold() {
        for (share, want) in [(FairShare::Occupancy, 0), (FairShare::Threshold, 2)] {
            let mut p = Port::new(share);
            for _ in 0..16 {
                p.enqueue(2);
            }
            for _ in 0..8 {
                p.enqueue(0);
            }
            // Earlier arrivals over K flagged a queue already; only the
            // last one's choice is looked at.
            p.m.mark_head = 0;
            p.enqueue(0);
            assert_eq!(p.m.mark_head, 1 << want, "{share:?}");
        }
    }
}
