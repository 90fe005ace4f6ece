//! PMSB, per-port marking with selective blindness (Pan et al., ICDCS 2018),
//! its switch-side rule (ML-ECN §VI; docs/schemes/pmsb.md: confidence
//! medium for the rule's shape, low for its constants). Per-port
//! marking punishes flows of queues that are not congested ("victims") when
//! other queues push the port total over K; PMSB stays blind to the port
//! signal for a queue below its own blindness threshold:
//!
//!   mark the arriving packet iff B_port > K and b_q > K_blind,q,
//!
//! both counting the packet (as every marker here does; "≥ on the
//! length found" is the same test for whole packets).
//! K_blind,q = w_q / Σ w · K over all queues (default), or over the
//! backlogged queues only, w the queues' quanta. The constant is ours, as
//! is the choice of quanta as weights. The host-side variant (the sender
//! ignores marks tagged "victim") is not modelled: it needs a header bit and
//! a DCTCP change, and ML-ECN describes the switch-side one.

use super::{mark_if, HookedMarker, MarkingDecl, Seen, Sides, Threshold, Verdict};
use crate::config::param::section;
use crate::config::values::by_name;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::switch::scheme::{no_checks, About};

by_name! {
    /// Which queues split PMSB's threshold into blindness thresholds (`pmsb_share`).
    pub enum PmsbShare { All => "all", Active => "active" }
}

section! {
    /// PMSB's key (K is the port's threshold).
    pub struct PmsbParams {
        /// Split K into blindness thresholds among all queues or the backlogged ones.
        pmsb_share: Option<PmsbShare> = None, default_doc "\"all\"", source "ecnlab's choice (docs/schemes/pmsb.md)";
    }
}

pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[PmsbParams::PARAMS],
        ..About::new(
            "pmsb",
            "per-port K, blind for a queue below its share of K (its blindness threshold)",
            "Pan et al., PMSB (ICDCS 2018); ML-ECN §VI; the reading: docs/schemes/pmsb.md",
        )
    },
    threshold: Threshold::One,
    own_sides: Some("judges at enqueue"),
    validate: no_checks,
    build: |c| {
        let active = c.params(PmsbParams::read).pmsb_share == Some(PmsbShare::Active);
        Pmsb::new(c.k(), &c.port.quanta(), active).into()
    },
};

pub struct Pmsb {
    /// The per-port threshold K, bytes.
    pub k: u64,
    /// Shares among the backlogged queues rather than all of them.
    pub active: bool,
    weight: Box<[u64]>,
    weight_sum: u64,
}

impl Pmsb {
    pub fn new(k: u64, weights: &[u64], active: bool) -> Self {
        Pmsb { k, active, weight: weights.into(), weight_sum: weights.iter().sum() }
    }

    /// Queue `q`'s blindness threshold with every queue counted, bytes.
    pub fn blind_threshold(&self, q: usize) -> u64 {
        (self.k as u128 * self.weight[q] as u128 / self.weight_sum as u128) as u64
    }

    /// b_q > w_q/W·K, compared as b_q·W > w_q·K: exact, no rounding.
    #[inline]
    fn over_blindness(&self, s: &Seen) -> bool {
        let w_sum = if self.active {
            (0..self.weight.len()).filter(|&i| s.backlogged & (1 << i) != 0).map(|i| self.weight[i]).sum()
        } else {
            self.weight_sum
        };
        s.occ.queue as u128 * w_sum as u128 > self.weight[s.q] as u128 * self.k as u128
    }

    #[inline]
    pub fn at_enqueue(&self, s: &Seen) -> Verdict {
        mark_if(s.occ.port > self.k && self.over_blindness(s))
    }
}

impl HookedMarker for Pmsb {
    fn sides(&self) -> Sides {
        Sides::Enqueue
    }
    #[inline]
    fn at_enqueue(&mut self, s: &Seen, _pkt: &Packet, _rng: &mut Rng) -> Verdict {
        Pmsb::at_enqueue(self, s)
    }
    fn threshold(&self, q: usize) -> Option<u64> {
        Some(self.blind_threshold(q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::switch::marker::Occupancy;

    const P: u64 = 1500;

    fn seen(q: usize, queues: &[u64]) -> Seen {
        let port = queues.iter().sum();
        let backlogged = queues.iter().enumerate().filter(|(_, &b)| b > 0).fold(0, |m, (i, _)| m | 1 << i);
        Seen {
            now: 0,
            q,
            occ: Occupancy { queue: queues[q], port, pool: port },
            size: P as u32,
            sojourn: 0,
            backlogged,
        }
    }

    /// Four queues, quanta 1:1:1:1, K = 40 packets: every K_blind is 10
    /// packets. Over 20,000 random occupancies (0 to 30 packets per queue,
    /// the arriving packet counted), a packet of a queue at or below 10
    /// packets is never marked however far the port is over K, and one above
    /// it is marked exactly when the port is over K. Both cases must occur
    /// many times (the port over K with the queue blind; marks).
    #[test]
    fn never_marks_a_queue_below_its_blindness_threshold() {
        let m = Pmsb::new(40 * P, &[1500; 4], false);
        assert_eq!(m.blind_threshold(2), 10 * P);
        let mut rng = Rng::new(3);
        let (mut blind_over_k, mut marks) = (0, 0);
        for _ in 0..20_000 {
            let mut queues: Vec<u64> = (0..4).map(|_| (rng.next_u64() % 31) * P).collect();
            let q = (rng.next_u64() % 4) as usize;
            queues[q] = queues[q].max(P);
            let s = seen(q, &queues);
            let v = m.at_enqueue(&s);
            let port_over = s.occ.port > 40 * P;
            if queues[q] <= 10 * P {
                assert_eq!(v, Verdict::Pass, "{queues:?}, queue {q}");
                blind_over_k += port_over as u32;
            } else {
                assert_eq!(v == Verdict::Mark, port_over, "{queues:?}, queue {q}");
                marks += (v == Verdict::Mark) as u32;
            }
        }
        assert!(blind_over_k > 1000 && marks > 1000, "{blind_over_k} {marks}");
    }

    /// Weighted shares: quanta 1:3, K = 40 packets, so K_blind = 10 and 30
    /// packets. With the port over K, queue 0 at 11 packets is marked and at
    /// 10 is not; queue 1 at 30 is not, at 31 it is. Counting backlogged
    /// queues only, queue 0 alone has all of K: 41 packets are marked, 40
    /// are not (nor is the port over K then).
    #[test]
    fn weighted_and_active_blindness_thresholds() {
        let m = Pmsb::new(40 * P, &[1500, 4500], false);
        assert_eq!(m.at_enqueue(&seen(0, &[11 * P, 39 * P])), Verdict::Mark);
        assert_eq!(m.at_enqueue(&seen(0, &[10 * P, 40 * P])), Verdict::Pass);
        assert_eq!(m.at_enqueue(&seen(1, &[20 * P, 30 * P])), Verdict::Pass);
        assert_eq!(m.at_enqueue(&seen(1, &[19 * P, 31 * P])), Verdict::Mark);
        let a = Pmsb::new(40 * P, &[1500, 4500], true);
        assert_eq!(a.at_enqueue(&seen(0, &[41 * P, 0])), Verdict::Mark);
        assert_eq!(a.at_enqueue(&seen(0, &[40 * P, 0])), Verdict::Pass);
        assert_eq!(a.at_enqueue(&seen(0, &[11 * P, 39 * P])), Verdict::Mark);
        assert_eq!(a.at_enqueue(&seen(0, &[10 * P, 39 * P])), Verdict::Pass);
        // Three queues, quanta 1:1:2: statically queue 0 is blind up to 10
        // packets; with queue 2 idle, shares of the backlogged queues give
        // it half of K, 20. At 15 packets (port 45) only the static reading
        // marks.
        let q3 = [1500, 1500, 3000];
        let port = [15 * P, 30 * P, 0];
        assert_eq!(Pmsb::new(40 * P, &q3, false).at_enqueue(&seen(0, &port)), Verdict::Mark);
        assert_eq!(Pmsb::new(40 * P, &q3, true).at_enqueue(&seen(0, &port)), Verdict::Pass);
    }
}
