//! MM-ECN-like mixed marking, a reconstruction (confidence low;
//! docs/schemes/mm-ecn.md says what it rests on). MM-ECN (Lu, Ma, Xu, Computer Networks 2021) is known
//! to us only from ML-ECN §VI and §IV: it marks at the front of the queue
//! (the departing packet, so the signal skips the queue's wait) and mixes
//! that with random marking for burst tolerance. Its rule is not published
//! where we could read it; this one has both ingredients, per queue:
//!
//! - q > K_high: mark;
//! - K_low < q ≤ K_high: mark with p = P_max·(q − K_low)/(K_high − K_low);
//! - otherwise pass,
//!
//! q the queue's bytes counting the judged packet (at dequeue, the packet
//! about to leave), as every marker here tests. Front position judges at
//! dequeue; tail position judges the arriving packet instead, to measure
//! what the position alone changes. With K_low = K_high it is per-queue
//! marking with K_high (at dequeue when front). Defaults (ours):
//! K_high = the standard K, K_low = K/2, P_max = 1.

use super::{HookedMarker, MarkingDecl, Seen, Sides, Threshold, Verdict};
use crate::config::param::section;
use crate::config::values::by_name;
use crate::config::{bad, Amt};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::switch::scheme::About;

by_name! {
    /// Where MM-ECN judges: the departing packet (front) or the arriving one.
    pub enum MmecnPosition { Front => "front", Tail => "tail" }
}

section! {
    /// MM-ECN's keys (K_high is the port's threshold).
    pub struct MmEcnParams {
        /// Where its random band starts.
        mmecn_k_low: Option<Amt> = None, default_doc "threshold / 2", range "at most threshold",
            source "ecnlab's reconstruction (docs/schemes/mm-ecn.md)";
        /// Its marking probability at threshold.
        mmecn_pmax: Option<f64> = None, default_doc "1", range "(0, 1]",
            source "ecnlab's reconstruction (docs/schemes/mm-ecn.md)";
        /// "front" (judge the departing packet, at dequeue) or "tail" (the arriving one).
        mmecn_position: Option<MmecnPosition> = None, default_doc "\"front\"", source "ML-ECN §VI";
    }
}

pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[MmEcnParams::PARAMS],
        ..About::new(
            "mm-ecn",
            "MM-ECN-like (a reconstruction): marks above K, at random between mmecn_k_low and K, judging \
             the departing packet (or the arriving one)",
            "Lu, Ma, Xu, MM-ECN (Computer Networks 2021); ML-ECN §IV, §VI; the reconstruction: \
             docs/schemes/mm-ecn.md",
        )
    },
    threshold: Threshold::One,
    own_sides: Some("mmecn_position picks front, at dequeue, or tail, at enqueue"),
    validate: |c| {
        let p = c.read(MmEcnParams::read)?;
        if let Some(lo) = p.mmecn_k_low {
            if lo.0.bytes(c.pkt) > c.k() {
                return Err(bad(
                    &c.key("mmecn_k_low"),
                    lo.0,
                    &format!("must not exceed threshold (K_high = {}B)", c.k()),
                ));
            }
        }
        if let Some(x) = p.mmecn_pmax {
            if !(x > 0.0 && x <= 1.0) {
                return Err(bad(&c.key("mmecn_pmax"), x, "must be in (0, 1]"));
            }
        }
        Ok(())
    },
    build: |c| {
        let p = c.params(MmEcnParams::read);
        MmEcn {
            k_low: p.mmecn_k_low.map_or(c.k() / 2, |a| a.0.bytes(c.pkt)),
            k_high: c.k(),
            pmax: p.mmecn_pmax.unwrap_or(1.0),
            front: p.mmecn_position != Some(MmecnPosition::Tail),
        }
        .into()
    },
};

pub struct MmEcn {
    /// Where the random band starts, bytes.
    pub k_low: u64,
    /// Above it every packet is marked, bytes (≥ k_low).
    pub k_high: u64,
    /// The probability at K_high, in (0, 1].
    pub pmax: f64,
    /// Judge the departing packet (front) or the arriving one (tail).
    pub front: bool,
}

impl MmEcn {
    /// The marking probability at queue length `q` bytes.
    pub fn probability(&self, q: u64) -> f64 {
        if q > self.k_high {
            1.0
        } else if q > self.k_low {
            self.pmax * (q - self.k_low) as f64 / (self.k_high - self.k_low) as f64
        } else {
            0.0
        }
    }

    /// Decide for a packet of a queue holding `q` bytes, the packet
    /// counted. Draws only inside the random band.
    #[inline]
    pub fn judge(&self, q: u64, rng: &mut Rng) -> Verdict {
        let hit = if q > self.k_high {
            true
        } else if q > self.k_low {
            rng.uniform() < self.probability(q)
        } else {
            false
        };
        if hit {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

impl HookedMarker for MmEcn {
    fn sides(&self) -> Sides {
        if self.front {
            Sides::Dequeue
        } else {
            Sides::Enqueue
        }
    }
    #[inline]
    fn at_enqueue(&mut self, s: &Seen, _pkt: &Packet, rng: &mut Rng) -> Verdict {
        self.judge(s.occ.queue, rng)
    }
    #[inline]
    fn at_dequeue(&mut self, s: &Seen, _ect: bool, rng: &mut Rng) -> Verdict {
        self.judge(s.occ.queue, rng)
    }
    fn threshold(&self, _q: usize) -> Option<u64> {
        Some(self.k_low)
    }
    /// At or below K_low `judge` passes without a draw.
    fn passes_alone(&self, size: u64) -> bool {
        size <= self.k_low
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// K_low = 20, K_high = 60 packets of 1500 B, P_max = 0.5: held at 40
    /// packets (halfway) the ramp gives p = 0.5·20/40 = 0.25, at 30 packets
    /// 0.125, at 59 packets 0.5·39/40 = 0.4875. 100,000 draws each; the
    /// measured fraction must lie within 4 binomial standard errors,
    /// 4·√(p(1−p)/n) (0.0055 at p = 0.25). Above K_high every packet is
    /// marked, at or below K_low none.
    #[test]
    fn measured_probability_follows_the_linear_ramp() {
        let p = 1500;
        let m = MmEcn { k_low: 20 * p, k_high: 60 * p, pmax: 0.5, front: true };
        let mut rng = Rng::new(11);
        let n = 100_000;
        for (q, want) in [(40 * p, 0.25), (30 * p, 0.125), (59 * p, 0.5 * 39.0 / 40.0)] {
            let marks = (0..n).filter(|_| m.judge(q, &mut rng) == Verdict::Mark).count();
            let frac = marks as f64 / n as f64;
            let tol = 4.0 * (want * (1.0 - want) / n as f64).sqrt();
            assert!((frac - want).abs() < tol, "q = {q}: {frac} vs {want} ± {tol}");
        }
        assert!((0..1000).all(|_| m.judge(60 * p + 1, &mut rng) == Verdict::Mark));
        assert!((0..1000).all(|_| m.judge(20 * p, &mut rng) == Verdict::Pass));
        // The deterministic edges draw nothing: the stream is where it was.
        let mut a = rng.clone();
        m.judge(20 * p, &mut rng);
        m.judge(61 * p, &mut rng);
        assert_eq!(a.next_u64(), rng.next_u64());
    }

    /// K_low = K_high: the single-threshold test "q > K".
    #[test]
    fn no_band_is_a_single_threshold() {
        let m = MmEcn { k_low: 30_000, k_high: 30_000, pmax: 1.0, front: true };
        let mut rng = Rng::new(1);
        assert_eq!(m.judge(30_000, &mut rng), Verdict::Pass);
        assert_eq!(m.judge(30_001, &mut rng), Verdict::Mark);
        assert_eq!(m.probability(30_000), 0.0);
    }
}
