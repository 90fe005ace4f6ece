//! RED (Floyd & Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", 1993), per queue, marking instead of dropping (RFC 3168 §5):
//!
//! - avg ← (1 − w_q)·avg + w_q·q at every arrival; after the queue has been
//!   empty, first avg ← (1 − w_q)^m·avg with m the idle time in packet
//!   times, as if m empty samples had come (RED §4; ns-2's red.cc also then
//!   takes the arrival's sample);
//! - avg ≤ min: pass; min < avg ≤ max: p_b = p_max·(avg − min)/(max − min),
//!   spaced by the count of packets since the last mark,
//!   p_a = p_b / (1 − count·p_b) (RED §7), or p_b alone without spacing;
//!   over max: every packet, or with gentle (Floyd 2000) p_b rising from
//!   p_max at max to 1 at 2·max.
//!
//! ECT packets are marked; Not-ECT ones are dropped where they would be
//! marked, as RED drops what it cannot mark. q counts the arriving packet
//! (as every marker here does), so with w_q = 1 and min = max = K, RED marks
//! exactly the packets per-queue marking with K marks.
//!
//! MQ-ECN's probabilistic variant (MQ-ECN §3.4) is RED whose thresholds
//! follow each queue's share of the link: K_i,min = K_min·f_i and
//! K_i,max = K_max·f_i, f_i = min(quantum_i/(C·T_round), 1), P_i,max = P_max.
//! Over WFQ, f_i = min(w_i/W_est, 1) from MQ-ECN's generic variant.

use super::{HookedMarker, MarkingDecl, MqEcn, MqEcnGeneric, Seen, Sides, Threshold, Verdict};
use crate::config::param::section;
use crate::config::{bad, missing, Amt, ConfigError};
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::switch::scheme::{About, PortCtx};
use crate::units::{tx_time, Time};

section! {
    /// RED's keys (marking "red", and MQ-ECN's probabilistic variant).
    pub struct RedParams {
        /// Minimum threshold on the average queue.
        red_min: Option<Amt> = None, source "Floyd & Jacobson 1993", acts BelowBuffer;
        /// Maximum threshold on the average queue (at least red_min).
        red_max: Option<Amt> = None, source "Floyd & Jacobson 1993";
        /// Marking probability at red_max.
        red_pmax: Option<f64> = None, range "(0, 1]", source "Floyd & Jacobson 1993";
        /// Averaging weight w_q (1 follows the instantaneous queue).
        red_wq: f64 = 0.002, range "(0, 1]", source "Floyd & Jacobson 1993 §11", lenient true;
        /// Probability rising from red_pmax to 1 between red_max and 2·red_max.
        red_gentle: bool = false, source "Floyd 2000 (gentle RED)", lenient true;
        /// Space marks by the count since the last one.
        red_spacing: bool = true, source "Floyd & Jacobson 1993 §7", lenient true;
        /// Judge each packet as it leaves, on the bytes it leaves behind, instead of as it
        /// arrives: as RDMA switches mark for DCQCN (the HPCC simulator's switch-node.cc), so
        /// that a mark does not wait out the queue.
        red_at_dequeue: bool = false, resolved Given, source "HPCC simulator, switch-node.cc";
    }
}

impl RedParams {
    /// Any of the three keys that make RED is given (with marking "mq-ecn":
    /// its probabilistic variant).
    pub fn given(&self) -> bool {
        self.red_min.is_some() || self.red_max.is_some() || self.red_pmax.is_some()
    }

    /// The checks of RED's keys where RED runs; `what` names the scheme
    /// for a missing key.
    pub fn check(&self, c: &PortCtx, what: &str) -> Result<(), ConfigError> {
        if !(self.red_wq > 0.0 && self.red_wq <= 1.0) {
            return Err(bad(&c.key("red_wq"), self.red_wq, "must be in (0, 1]"));
        }
        if let Some(p) = self.red_pmax {
            if !(p > 0.0 && p <= 1.0) {
                return Err(bad(&c.key("red_pmax"), p, "must be in (0, 1]"));
            }
        }
        let (Some(min), Some(max)) = (self.red_min, self.red_max) else {
            return Err(missing(&c.key(if self.red_min.is_none() { "red_min" } else { "red_max" }), what));
        };
        if self.red_pmax.is_none() {
            return Err(missing(&c.key("red_pmax"), what));
        }
        if min.0.bytes(c.pkt) > max.0.bytes(c.pkt) {
            return Err(bad(&c.key("red_min"), min.0, &format!("must not exceed red_max ({})", max.0)));
        }
        Ok(())
    }

    /// RED for a port, as these keys set it.
    pub fn build(&self, c: &PortCtx) -> Red {
        let amt = |a: Option<Amt>| a.map(|a| a.0.bytes(c.pkt)).unwrap_or(0);
        let slot = tx_time(c.pkt, c.rate_bps);
        let (min, max, pmax) = (amt(self.red_min), amt(self.red_max), self.red_pmax.unwrap_or(1.0));
        let mut red =
            Red::new(min, max, pmax, self.red_wq, self.red_gentle, self.red_spacing, slot, c.port.queues as usize);
        red.at_dequeue = self.red_at_dequeue;
        red
    }
}

/// RED, marking ECT packets and dropping Not-ECT ones.
pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[RedParams::PARAMS],
        unused_without_value: true,
        ..About::new(
            "red",
            "RED on each queue's average: marks with a probability rising from red_min to red_max",
            "Floyd & Jacobson, Random Early Detection Gateways (1993); RFC 3168 §5",
        )
    },
    threshold: Threshold::Unused(" (red takes red_min and red_max)"),
    own_sides: Some("judges at enqueue, or at dequeue with red_at_dequeue"),
    validate: |c| c.read(RedParams::read)?.check(c, "marking \"red\" needs red_min, red_max and red_pmax"),
    build: |c| c.params(RedParams::read).build(c).into(),
};

/// The share estimate that scales RED's thresholds: MQ-ECN's round time
/// (round-robin schedulers) or its weight sum (WFQ).
pub enum Share {
    Round(MqEcn),
    Weights(MqEcnGeneric),
}

pub struct Red {
    /// min and max thresholds, bytes.
    pub min: u64,
    pub max: u64,
    pub pmax: f64,
    pub wq: f64,
    pub gentle: bool,
    /// Count-based spacing of marks (RED §7).
    pub spacing: bool,
    /// One packet time at the port's rate: the unit of idle decay.
    slot: Time,
    /// Per queue: (avg in bytes, packets since the last mark or −1 when
    /// below min, when it last became empty or None while backlogged).
    queue: Box<[(f64, i64, Option<Time>)]>,
    /// MQ-ECN's share scaling of both thresholds, if on.
    mq: Option<Share>,
    /// Judge at dequeue (`red_at_dequeue`).
    pub at_dequeue: bool,
}

impl Red {
    #[allow(clippy::too_many_arguments)]
    pub fn new(min: u64, max: u64, pmax: f64, wq: f64, gentle: bool, spacing: bool, slot: Time, queues: usize) -> Self {
        Red {
            min,
            max,
            pmax,
            wq,
            gentle,
            spacing,
            slot: slot.max(1),
            queue: vec![(0.0, -1, Some(0)); queues].into_boxed_slice(),
            mq: None,
            at_dequeue: false,
        }
    }

    /// Scale both thresholds by MQ-ECN's share of each queue.
    pub fn with_mq_ecn(mut self, mq: Share) -> Self {
        self.mq = Some(mq);
        self
    }

    /// Which MQ-ECN estimate scales the thresholds: Some(true) the weight
    /// sum, Some(false) the round time, None neither.
    pub fn share_is_weight_sum(&self) -> Option<bool> {
        self.mq.as_ref().map(|m| matches!(m, Share::Weights(_)))
    }

    /// The current average of queue `q`, bytes.
    pub fn avg(&self, q: usize) -> f64 {
        self.queue[q].0
    }

    /// min and max of queue `q` now, bytes.
    #[inline]
    fn thresholds(&self, q: usize) -> (f64, f64) {
        let f = match &self.mq {
            None => 1.0,
            Some(Share::Round(m)) => m.share(q),
            Some(Share::Weights(m)) => m.share(q),
        };
        (self.min as f64 * f, self.max as f64 * f)
    }

    pub fn min_threshold(&self, q: usize) -> u64 {
        self.thresholds(q).0 as u64
    }

    /// The probability RED gives a packet at average `avg` before spacing.
    pub fn p_b(&self, avg: f64, min: f64, max: f64) -> f64 {
        if avg <= min {
            0.0
        } else if avg <= max {
            if max > min {
                self.pmax * (avg - min) / (max - min)
            } else {
                1.0
            }
        } else if self.gentle && avg <= 2.0 * max {
            self.pmax + (1.0 - self.pmax) * (avg - max) / max
        } else {
            1.0
        }
    }

    // Always inlined into the hooked ports' enqueue path, as it was before
    // PIE's arm grew the dispatch: a call taking `&Seen` made every scheme
    // build `Seen` in memory (CEDM's benchmark, cachegrind).
    #[inline(always)]
    pub fn at_enqueue(&mut self, s: &Seen, ect: bool, rng: &mut Rng) -> Verdict {
        self.judge(s.q, s.now, s.occ.queue, ect, rng)
    }

    /// `red_at_dequeue`: the packet leaving queue `s.q` is judged on the
    /// bytes it leaves behind.
    #[inline]
    pub fn at_dequeue(&mut self, s: &Seen, ect: bool, rng: &mut Rng) -> Verdict {
        self.judge(s.q, s.now, s.occ.queue.saturating_sub(s.size as u64), ect, rng)
    }

    /// RED's verdict for a packet of queue `q` at `now` on a queue of
    /// `bytes`.
    #[inline(always)]
    fn judge(&mut self, q: usize, now: Time, bytes: u64, ect: bool, rng: &mut Rng) -> Verdict {
        let s = (q, now, bytes);
        let (min, max) = self.thresholds(s.0);
        let (wq, slot) = (self.wq, self.slot);
        let (avg, _, idle) = &mut self.queue[s.0];
        if let Some(since) = idle.take() {
            let m = s.1.saturating_sub(since) / slot;
            *avg *= (1.0 - wq).powf(m as f64);
        }
        *avg = (1.0 - wq) * *avg + wq * s.2 as f64;
        let avg = *avg;
        let pb = self.p_b(avg, min, max);
        let count = &mut self.queue[s.0].1;
        let hit = if avg <= min {
            *count = -1;
            false
        } else if avg > max && !(self.gentle && avg <= 2.0 * max) {
            *count = 0;
            true
        } else {
            *count += 1;
            let pa = if self.spacing {
                let d = 1.0 - *count as f64 * pb;
                if d <= 0.0 {
                    1.0
                } else {
                    pb / d
                }
            } else {
                pb
            };
            let hit = rng.uniform() < pa;
            if hit {
                *count = 0;
            }
            hit
        };
        match (hit, ect) {
            (false, _) => Verdict::Pass,
            (true, true) => Verdict::Mark,
            (true, false) => Verdict::Drop,
        }
    }

    #[inline]
    pub fn queue_emptied(&mut self, q: usize, now: Time) {
        self.queue[q].2 = Some(now);
    }

    pub fn activated(&mut self, q: usize, now: Time) {
        match &mut self.mq {
            Some(Share::Round(m)) => m.activated(q, now),
            Some(Share::Weights(m)) => m.activated(q, now),
            None => {}
        }
    }
    pub fn turn_end(&mut self, q: usize, end: Time) {
        if let Some(Share::Round(m)) = &mut self.mq {
            m.turn_end(q, end)
        }
    }
    pub fn served(&mut self, q: usize, now: Time, emptied: bool) {
        if let Some(Share::Weights(m)) = &mut self.mq {
            m.served(q, now, emptied)
        }
    }
    pub fn port_busy(&mut self, now: Time) {
        match &mut self.mq {
            Some(Share::Round(m)) => m.port_busy(now),
            Some(Share::Weights(m)) => m.port_busy(now),
            None => {}
        }
    }
    pub fn port_idle(&mut self, now: Time) {
        match &mut self.mq {
            Some(Share::Round(m)) => m.port_idle(now),
            Some(Share::Weights(m)) => m.port_idle(now),
            None => {}
        }
    }
}

impl HookedMarker for Red {
    #[inline(always)]
    fn events() -> bool {
        true
    }

    fn sides(&self) -> Sides {
        if self.at_dequeue {
            Sides::Dequeue
        } else {
            Sides::Enqueue
        }
    }
    #[inline]
    fn at_enqueue(&mut self, s: &Seen, pkt: &Packet, rng: &mut Rng) -> Verdict {
        Red::at_enqueue(self, s, pkt.ecn != Ecn::NotEct, rng)
    }
    #[inline]
    fn at_dequeue(&mut self, s: &Seen, ect: bool, rng: &mut Rng) -> Verdict {
        Red::at_dequeue(self, s, ect, rng)
    }
    #[inline]
    fn queue_emptied(&mut self, q: usize, now: Time) {
        Red::queue_emptied(self, q, now)
    }
    #[inline]
    fn port_busy(&mut self, now: Time) {
        Red::port_busy(self, now)
    }
    #[inline]
    fn port_idle(&mut self, now: Time) {
        Red::port_idle(self, now)
    }
    #[inline]
    fn activated(&mut self, q: usize, now: Time) {
        Red::activated(self, q, now)
    }
    #[inline]
    fn turn_end(&mut self, q: usize, end: Time) {
        Red::turn_end(self, q, end)
    }
    #[inline]
    fn served(&mut self, q: usize, now: Time, emptied: bool) {
        Red::served(self, q, now, emptied)
    }
    fn threshold(&self, q: usize) -> Option<u64> {
        Some(self.min_threshold(q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::marker::Occupancy;

    fn seen(now: Time, q: u64) -> Seen {
        Seen { now, q: 0, occ: Occupancy { queue: q, port: q, pool: q }, size: 1500, sojourn: 0, backlogged: 1 }
    }

    /// Held at one average (w_q = 1, a steady queue), RED marks a fraction
    /// p_b without spacing. With count spacing the n-th packet after a mark
    /// is marked with p_b/(1 − n·p_b), the hazard of a gap uniform on
    /// 1..1/p_b − 1 (RED §7 says "about 1/p_b"), whose mean is 1/(2·p_b): a
    /// fraction 2·p_b. min 10 KB, max 30 KB, p_max 0.1, queue 20 KB:
    /// p_b = 0.05.
    #[test]
    fn marking_probability_follows_the_formula() {
        for spacing in [false, true] {
            let mut red = Red::new(10_000, 30_000, 0.1, 1.0, false, spacing, 1_200_000, 1);
            let mut rng = Rng::new(7);
            let n = 200_000;
            let mut marks = 0;
            let mut gaps = Vec::new();
            let mut last = 0;
            for i in 0..n {
                if red.at_enqueue(&seen(i, 20_000), true, &mut rng) == Verdict::Mark {
                    marks += 1;
                    gaps.push(i - last);
                    last = i;
                }
            }
            let frac = marks as f64 / n as f64;
            let pb = 0.05;
            let want = if spacing { 2.0 * pb } else { pb };
            assert!((frac - want).abs() < 0.05 * want, "spacing {spacing}: {frac} vs {want}");
            if spacing {
                // No gap longer than 1/p_b − 1 = 19 packets.
                assert!(gaps.iter().skip(1).all(|&g| g <= 19), "{:?}", gaps.iter().max());
            }
        }
    }

    /// The three regions and the gentle ramp, and Not-ECT drops.
    #[test]
    fn regions_gentle_and_not_ect() {
        let mut rng = Rng::new(1);
        let mut red = Red::new(10_000, 30_000, 0.1, 1.0, false, true, 1_200_000, 1);
        assert_eq!(red.at_enqueue(&seen(0, 10_000), true, &mut rng), Verdict::Pass);
        assert_eq!(red.at_enqueue(&seen(0, 30_001), true, &mut rng), Verdict::Mark);
        assert_eq!(red.at_enqueue(&seen(0, 30_001), false, &mut rng), Verdict::Drop);
        let gentle = Red::new(10_000, 30_000, 0.1, 1.0, true, true, 1_200_000, 1);
        // Halfway from max to 2·max: p_max + (1 − p_max)/2 = 0.55.
        assert!((gentle.p_b(45_000.0, 10_000.0, 30_000.0) - 0.55).abs() < 1e-12);
        assert_eq!(gentle.p_b(60_001.0, 10_000.0, 30_000.0), 1.0);
    }

    /// MQ-ECN's probabilistic variant over WFQ: with two equal weights
    /// backlogged, W_est → 3000 and both thresholds halve (K_i = K·w_i/W,
    /// MQ-ECN §3.4); once one queue empties, the other's return to K.
    #[test]
    fn weight_sum_share_scales_both_thresholds() {
        let slot = 1_200_000;
        let mq = MqEcnGeneric::new(0, &[1500, 1500], 0.75, slot);
        let mut red = Red::new(20_000, 60_000, 0.1, 1.0, false, true, slot, 2).with_mq_ecn(Share::Weights(mq));
        red.port_busy(0);
        red.activated(0, 0);
        red.activated(1, 0);
        for i in 1..200 {
            red.served((i % 2) as usize, i * slot, false);
        }
        let near =
            |(min, max): (f64, f64), want: (f64, f64)| (min - want.0).abs() < 1e-6 && (max - want.1).abs() < 1e-6;
        assert!(near(red.thresholds(0), (10_000.0, 30_000.0)), "{:?}", red.thresholds(0));
        assert!(near(red.thresholds(1), (10_000.0, 30_000.0)), "{:?}", red.thresholds(1));
        red.served(1, 200 * slot, true);
        for i in 201..400 {
            red.served(0, i * slot, false);
        }
        assert!(near(red.thresholds(0), (20_000.0, 60_000.0)), "{:?}", red.thresholds(0));
    }

    /// The average: w_q = 0.002 moves 0.2% of the way per arrival, and an
    /// idle queue decays by (1 − w_q) per packet time (RED §4).
    #[test]
    fn average_and_idle_decay() {
        let mut rng = Rng::new(1);
        let mut red = Red::new(1 << 40, 1 << 41, 0.1, 0.002, false, true, 1_000, 1);
        for i in 0..5000 {
            red.at_enqueue(&seen(i, 50_000), true, &mut rng);
        }
        // 1 − (1 − 0.002)^5000 of the way from 0 to 50,000.
        let want = 50_000.0 * (1.0 - 0.998f64.powi(5000));
        assert!((red.avg(0) - want).abs() < 1e-6 * want);
        red.queue_emptied(0, 5_000);
        // 1000 packet times idle, then one arrival of 1500 B.
        red.at_enqueue(&seen(5_000 + 1_000_000, 1500), true, &mut rng);
        let want = want * 0.998f64.powi(1000) * 0.998 + 0.002 * 1500.0;
        assert!((red.avg(0) - want).abs() < 1e-6 * want);
    }
}
