//! CEDM, combined enqueue and dequeue marking (Shan & Ren, "Improving ECN
//! marking scheme with micro-burst traffic in data center networks", §IV-C,
//! Alg. 1 and 2). A burst that lifts the queue over K1 only for a moment
//! should not be marked, so:
//!
//! - enqueue (Alg. 1): mark if q ≥ K2, or if q ≥ K1 and the average slope
//!   of the queue is ≥ 0;
//! - dequeue (Alg. 2): take a slope sample Δq/Δt since the queue's previous
//!   dequeue, fold it into avg_s with weight w_s (Eq. 31), then take back the
//!   mark of a packet this queue marked if q < K2 and (q < K1 or avg_s < 0).
//!
//! Units: q is the queue's length in bytes. At enqueue it is the length
//! the packet finds, tested as "occupancy with the packet > K", which for
//! whole packets is Alg. 1's "length found ≥ K" (as every marker here
//! tests); at dequeue it is the length the packet leaves behind (ns-2
//! measures after the packet is taken). The slope is in bytes per
//! picosecond; only avg_s's sign is ever used and the EWMA is linear, so
//! the slope's unit changes no decision.
//!
//! State is per queue (the paper has one queue per port). The paper runs the
//! algorithms for packets with payload; here every packet counts, as the
//! dequeue hook does not look into the packet: the queue's slope is the same
//! signal whichever packets sample it.

use super::{HookedMarker, MarkingDecl, Seen, Sides, Threshold, Verdict};
use crate::config::param::section;
use crate::config::{bad, missing, Amt, Config, OneOrList};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::switch::scheme::{About, RecipeDecl, RecipeFill, RecipeValue, RecipeValue::Json};
use crate::units::{self, Amount, Time};

section! {
    /// CEDM's keys (K1 is the port's threshold).
    pub struct CedmParams {
        /// CEDM's upper threshold K2 (at least threshold = K1); the paper's guideline for two
        /// senders with LSO is K2 = 5/4·K1 + C·d/4.
        cedm_k2: Option<Amt> = None, range "threshold (K1) or more", source "CEDM §IV-C";
        /// The slope EWMA's weight w_s.
        cedm_ws: f64 = 0.129, range "(0, 1]", source "CEDM §IV-C", lenient true;
    }
}

pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[CedmParams::PARAMS],
        unused_without_value: true,
        ..About::new(
            "cedm",
            "marks at enqueue over K2, or over K1 while the queue's average slope is not falling; \
             takes its marks back at dequeue below K1 (or below K2 on a falling slope)",
            "Shan & Ren, Improving ECN marking scheme with micro-burst traffic in data center networks, §IV-C",
        )
    },
    threshold: Threshold::One,
    own_sides: Some("marks at enqueue, takes marks back at dequeue"),
    validate: |c| {
        let p = c.read(CedmParams::read)?;
        if !(p.cedm_ws > 0.0 && p.cedm_ws <= 1.0) {
            return Err(bad(&c.key("cedm_ws"), p.cedm_ws, "must be in (0, 1] (CEDM §IV-C uses 0.129)"));
        }
        let Some(k2) = p.cedm_k2 else {
            return Err(missing(
                &c.key("cedm_k2"),
                &format!("marking \"cedm\" needs K2 >= threshold (K1), e.g. \"30pkt\"{}", RECIPE.hint(c.port)),
            ));
        };
        if k2.0.bytes(c.pkt) < c.k() {
            return Err(bad(&c.key("cedm_k2"), k2.0, &format!("must be at least threshold (K1 = {})", c.k())));
        }
        Ok(())
    },
    build: |c| {
        let p = c.params(CedmParams::read);
        let k2 = p.cedm_k2.map_or(0, |a| a.0.bytes(c.pkt));
        Cedm::new(c.k(), k2, p.cedm_ws, c.port.queues as usize).into()
    },
};

/// CEDM's set-up (`switch.recipe = "cedm"`): w_s = 0.129 and K2 by §IV-C's
/// guideline K2 = 5/4·K1 + C·d/4 (two synchronised senders with LSO at
/// β = 1/3), which §V uses on both its networks. K1 is the experiment's
/// `threshold` (the recipe needs it: CEDM §V picks 10 packets for its
/// leaf-spine, DCTCP's 0.17·C·RTT elsewhere).
pub const RECIPE: RecipeDecl = RecipeDecl {
    about: About::new(
        "cedm",
        "CEDM with its paper's tuning: w_s = 0.129 and K2 = 5/4·K1 + C·d/4 from the experiment's threshold (K1)",
        "Shan & Ren, CEDM, §IV-C, §V",
    ),
    fills: &[
        RecipeFill { key: "switch.marking", value: Json("\"cedm\""), source: "CEDM §IV-C, Alg. 1-2" },
        RecipeFill { key: "switch.cedm_ws", value: Json("0.129"), source: "CEDM §IV-C (N = 2, L = 5), §V" },
        RecipeFill {
            key: "switch.cedm_k2",
            value: RecipeValue::Derived {
                rule: "5/4·K1 + C·d/4, K1 = switch.threshold, C the slowest host link's rate, d the base RTT \
                       (propagation over the longest path); whole packets when K1 is in packets",
                value: guideline_k2,
            },
            source: "CEDM §IV-C (Double Threshold), §V",
        },
    ],
};

/// §IV-C's K2 = 5/4·K1 + C·d/4 for the experiment `c` (its threshold
/// K1, the slowest host link's rate C and the base RTT d of the longest
/// path), rounded to whole packets when K1 is given in packets (as CEDM
/// §V: K1 = 10 and C·d = 68 packets give 30), else to bytes. None without
/// one K1.
pub fn guideline_k2(c: &Config) -> Option<serde_json::Value> {
    let Some(OneOrList::All(k1)) = &c.switch.threshold else {
        return None;
    };
    let pkt = c.transport.packet_bytes() as f64;
    let cd_bytes = c.topology.slowest_host_rate() as f64 / 8.0 * units::secs(c.topology.base_rtt());
    let k2 = match k1.0 {
        Amount::Pkt(n) => Amount::Pkt((1.25 * n as f64 + cd_bytes / pkt / 4.0).round() as u64),
        Amount::Bytes(b) | Amount::Packets(b) => Amount::Bytes((1.25 * b as f64 + cd_bytes / 4.0).round() as u64),
    };
    Some(serde_json::Value::String(k2.to_string()))
}

pub struct Cedm {
    /// K1, bytes.
    pub k1: u64,
    /// K2, bytes (K2 ≥ K1).
    pub k2: u64,
    /// w_s (0.129 in §IV-C: a transient decrease of 5 packets with 2
    /// synchronised senders keeps avg_s ≥ 0).
    pub ws: f64,
    /// Per queue: (avg_s, occupancy at the previous dequeue, its time).
    queue: Box<[(f64, u64, Time)]>,
}

impl Cedm {
    pub fn new(k1: u64, k2: u64, ws: f64, queues: usize) -> Self {
        Cedm { k1, k2, ws, queue: vec![(0.0, 0, 0); queues].into_boxed_slice() }
    }

    /// The average slope of queue `q` (bytes/ps).
    pub fn avg_slope(&self, q: usize) -> f64 {
        self.queue[q].0
    }

    #[inline]
    pub fn at_enqueue(&self, s: &Seen) -> Verdict {
        let q = s.occ.queue;
        if q > self.k2 || (q > self.k1 && self.queue[s.q].0 >= 0.0) {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }

    #[inline]
    pub fn at_dequeue(&mut self, s: &Seen) -> Verdict {
        let (avg, prev_q, prev_t) = &mut self.queue[s.q];
        let q = s.occ.queue - s.size as u64;
        // Two dequeues of one queue are a transmission apart; a zero gap
        // (the very first dequeue at time 0) gives no slope.
        if s.now > *prev_t {
            let slope = (q as f64 - *prev_q as f64) / (s.now - *prev_t) as f64;
            *avg = (1.0 - self.ws) * *avg + self.ws * slope;
        }
        *prev_q = q;
        *prev_t = s.now;
        if q < self.k2 && (q < self.k1 || *avg < 0.0) {
            Verdict::Unmark
        } else {
            Verdict::Pass
        }
    }
}

impl HookedMarker for Cedm {
    fn sides(&self) -> Sides {
        Sides::Both
    }
    #[inline]
    fn at_enqueue(&mut self, s: &Seen, _pkt: &Packet, _rng: &mut Rng) -> Verdict {
        Cedm::at_enqueue(self, s)
    }
    #[inline]
    fn at_dequeue(&mut self, s: &Seen, _ect: bool, _rng: &mut Rng) -> Verdict {
        Cedm::at_dequeue(self, s)
    }
    fn threshold(&self, _q: usize) -> Option<u64> {
        Some(self.k1)
    }
    fn unmarks(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::marker::Occupancy;

    /// The packet finds (enqueue) or leaves behind (dequeue) `q` bytes.
    fn seen(now: Time, q: u64) -> Seen {
        let occ = q + 1500;
        Seen { now, q: 0, occ: Occupancy { queue: occ, port: occ, pool: occ }, size: 1500, sojourn: 0, backlogged: 1 }
    }

    /// Alg. 1 and 2 case by case, K1 = 10 and K2 = 30 packets of 1500 B
    /// (the paper's leaf-spine setting, §V).
    #[test]
    fn algorithms_one_and_two() {
        let p = 1500;
        let mut c = Cedm::new(10 * p, 30 * p, 0.129, 1);
        // avg_s starts at 0 (≥ 0): finding K1 marks, one packet less does not.
        assert_eq!(c.at_enqueue(&seen(0, 10 * p)), Verdict::Mark);
        assert_eq!(c.at_enqueue(&seen(0, 9 * p)), Verdict::Pass);
        // A falling queue: dequeues at 1 µs steps, 2 packets less each.
        let us = 1_000_000;
        for i in 0..10u64 {
            c.at_dequeue(&seen(i * us, (29 - 2 * i) * p));
        }
        assert!(c.avg_slope(0) < 0.0);
        // Between K1 and K2 with a falling average: neither marked at
        // enqueue nor left marked at dequeue.
        assert_eq!(c.at_enqueue(&seen(10 * us, 20 * p)), Verdict::Pass);
        assert_eq!(c.at_dequeue(&seen(10 * us, 20 * p)), Verdict::Unmark);
        // K2 marks whatever the slope, and a dequeue at or over K2 keeps it.
        assert_eq!(c.at_enqueue(&seen(11 * us, 30 * p)), Verdict::Mark);
        // A rising queue: one 2-packet rise per µs turns avg_s positive
        // only after enough samples (w_s = 0.129 smooths).
        let mut n = 0;
        while c.avg_slope(0) < 0.0 {
            n += 1;
            c.at_dequeue(&seen((11 + n) * us, (11 + 2 * n) * p));
        }
        assert!(n > 1, "one sample must not flip the average");
        let now = (11 + n) * us;
        assert_eq!(c.at_enqueue(&seen(now, 12 * p)), Verdict::Mark);
        assert_eq!(c.at_dequeue(&seen(now + us, 40 * p)), Verdict::Pass);
        // Under K1 always takes the mark back.
        assert_eq!(c.at_dequeue(&seen(now + 2 * us, 9 * p)), Verdict::Unmark);
    }

    /// §IV-C's choice of w_s: with N = 2 inputs filling at (N−1)·C and then
    /// draining at −C, avg_s stays ≥ 0 for L = 5 dequeues when
    /// w_s ≤ 1 − N^(−1/L) = 0.129 (Eq. 32), and turns negative sooner with a
    /// larger weight.
    #[test]
    fn slope_weight_rides_out_five_packet_dips() {
        let p = 1500u64;
        let t = 1_200_000; // 1500 B at 10 Gbps, ps
        let dips_before_negative = |ws: f64| {
            let mut c = Cedm::new(10 * p, 30 * p, ws, 1);
            // Long rise at +1 packet per packet time (s0 = (N−1)·C).
            let mut q = 20 * p;
            let mut now = 0;
            for _ in 0..200 {
                now += t;
                q += p;
                c.at_dequeue(&seen(now, q));
            }
            // Then drain at −1 packet per packet time (s1 = −C).
            let mut n = 0;
            while c.avg_slope(0) >= 0.0 {
                now += t;
                q -= p;
                c.at_dequeue(&seen(now, q));
                n += 1;
            }
            n
        };
        // 0.129 is the largest weight that rides out 5 (1 - 2^(-1/5) = 0.1294).
        assert!(dips_before_negative(0.129) > 5);
        assert!(dips_before_negative(0.2) <= 5);
    }
}
