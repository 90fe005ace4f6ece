//! MQ-ECN's generic variant for schedulers without rounds (MQ-ECN §3.4),
//! used over WFQ: queue i's threshold is the standard K scaled by its
//! weight over the smoothed sum of the weights of the backlogged queues,
//!
//!   K_i = K × min(w_i / W_est, 1),
//!
//! with w_i = quantum_i and W_est an EWMA (gain β, as T_round's) of W, the
//! exact weight sum of the non-empty queues. W is sampled at a dequeue when
//! at least one idle slot (one packet time by default) has passed since the
//! last sample or since the port became busy, so about once per packet time
//! while the port sends; the 0.5% of slack lets back-to-back packets a
//! little shorter than a slot each count. After the port has been empty,
//! W_est decays by β per idle slot, fractions of a slot included. Before any
//! sample, and while W_est is 0, the threshold is K. The sampling rule, the
//! slack and the fractional decay are the authors' ns-2 WFQ
//! (docs/schemes/mq-ecn.md, "The generic variant").
//!
//! §3.4 notes that w_i/W·C is only a lower bound on a queue's fair rate (a
//! backlogged queue may not use its share), so this can under-estimate the
//! threshold; round-robin schedulers use `MqEcn`'s measured round instead.

use super::Occupancy;
use crate::units::Time;

pub struct MqEcnGeneric {
    /// The standard threshold K, bytes.
    k: u64,
    /// w_i = quantum_i, bytes.
    weight: Box<[u64]>,
    beta: f64,
    /// T_idle: the unit of idle decay and the spacing of samples.
    slot: Time,
    /// Sum of the weights of the non-empty queues.
    w_now: u64,
    /// Smoothed W; 0 = no estimate (use K).
    w_est: f64,
    /// While the port is busy, the last sample (or when the port became
    /// busy); while it is empty, when it became empty. The two are never
    /// needed at once, and one field keeps the marker in a cache line.
    t_mark: Time,
}

impl MqEcnGeneric {
    pub fn new(k: u64, quantum: &[u64], beta: f64, idle_slot: Time) -> Self {
        MqEcnGeneric { k, weight: quantum.into(), beta, slot: idle_slot.max(1), w_now: 0, w_est: 0.0, t_mark: 0 }
    }

    /// Current W_est, bytes of quantum.
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    /// min(w_i / W_est, 1): queue `q`'s estimated share of the link.
    #[inline]
    pub fn share(&self, q: usize) -> f64 {
        if self.w_est <= 0.0 {
            return 1.0;
        }
        (self.weight[q] as f64 / self.w_est).min(1.0)
    }

    pub fn threshold(&self, q: usize) -> u64 {
        (self.k as f64 * self.share(q)) as u64
    }

    /// occupancy > K_i, compared unrounded as `MqEcn` does.
    // Out of line, like the hooks below: inlined, this arm made
    // `Marker::exceeds` too big to inline into the round-robin path, which
    // then ran 2% more instructions on the 2,000-flow MQ-ECN point.
    #[inline(never)]
    pub fn exceeds(&self, q: usize, occ: Occupancy) -> bool {
        occ.queue as f64 > self.k as f64 * self.share(q)
    }

    #[inline(never)]
    pub fn activated(&mut self, q: usize, _now: Time) {
        self.w_now += self.weight[q];
    }

    /// A dequeue from queue `q` (its last packet when `emptied`): take a
    /// sample of W, after the queue has left it, if a slot has passed.
    pub fn served(&mut self, q: usize, now: Time, emptied: bool) {
        if emptied {
            self.w_now -= self.weight[q];
        }
        if now.saturating_sub(self.t_mark) >= self.slot - self.slot / 200 {
            self.w_est = self.beta * self.w_est + (1.0 - self.beta) * self.w_now as f64;
            self.t_mark = now;
        }
    }

    #[inline(never)]
    pub fn port_busy(&mut self, now: Time) {
        let idle = now.saturating_sub(self.t_mark);
        if idle > 0 {
            self.w_est *= self.beta.powf(idle as f64 / self.slot as f64);
        }
        // Charged once: a second arrival at a still-empty port (this one
        // dropped) decays only by the time since; and the first sample of
        // the busy period comes a slot from now.
        self.t_mark = now;
    }

    #[inline(never)]
    pub fn port_idle(&mut self, now: Time) {
        self.t_mark = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PKT: Time = 1_200_000; // 1500 B at 10 Gbps: one idle slot
    const K: u64 = 65 * 1500;

    /// Queues with `quanta`, all backlogged from t = 0 and served one
    /// packet per slot for `steps` packets (which queue sends does not
    /// matter: W counts the non-empty ones).
    fn backlogged(quanta: &[u64], steps: u64) -> MqEcnGeneric {
        let mut m = MqEcnGeneric::new(K, quanta, 0.75, PKT);
        m.port_busy(0);
        for q in 0..quanta.len() {
            m.activated(q, 0);
        }
        for i in 0..steps {
            m.served(i as usize % quanta.len(), i * PKT, false);
        }
        m
    }

    /// No estimate yet: the standard K (docs/schemes/mq-ecn.md, the generic variant).
    #[test]
    fn standard_k_before_any_sample() {
        let m = MqEcnGeneric::new(K, &[1500, 1500], 0.75, PKT);
        assert_eq!((m.threshold(0), m.threshold(1)), (K, K));
        let occ = |q| Occupancy { queue: q, port: q, pool: q };
        assert!(!m.exceeds(0, occ(K)) && m.exceeds(0, occ(K + 1)));
    }

    /// Two equal weights backlogged: W = 3000, so K_i → K/2, the same as
    /// the round-robin estimate for equal quanta (MQ-ECN §3.4: w_i/w_sum·K;
    /// docs/schemes/mq-ecn.md, prediction 1). After n samples W_est is
    /// 3000·(1 − 0.75^n).
    #[test]
    fn equal_weights_converge_to_half_k() {
        let m = backlogged(&[1500, 1500], 5);
        // Samples at 1, 2, 3, 4 slots (none at t = 0, when the port became busy).
        assert!((m.w_est() - 3000.0 * (1.0 - 0.75f64.powi(4))).abs() < 1e-9, "{}", m.w_est());
        let m = backlogged(&[1500, 1500], 200);
        assert_eq!((m.threshold(0), m.threshold(1)), (K / 2, K / 2));
    }

    /// Weights 1500:6000: K_0 → K/5 and K_1 → 4K/5 (w_i/Σw, MQ-ECN §3.4).
    #[test]
    fn weights_scale_thresholds() {
        let m = backlogged(&[1500, 6000], 200);
        assert!((m.w_est() - 7500.0).abs() < 1e-6);
        assert_eq!(m.threshold(0), K / 5);
        assert_eq!(m.threshold(1), K * 4 / 5);
    }

    /// Samples come once per slot, not at every dequeue: ten dequeues in
    /// one slot take no sample after the first slot's; a dequeue 0.5% short
    /// of a slot after the last sample still takes one.
    #[test]
    fn one_sample_per_slot() {
        let mut m = MqEcnGeneric::new(K, &[1500, 1500], 0.75, PKT);
        m.port_busy(0);
        m.activated(0, 0);
        m.activated(1, 0);
        m.served(0, PKT, false);
        assert_eq!(m.w_est(), 0.25 * 3000.0);
        for i in 1..=10 {
            m.served(0, PKT + i * PKT / 11, false);
        }
        assert_eq!(m.w_est(), 0.25 * 3000.0);
        m.served(1, 2 * PKT - PKT / 200, false);
        assert_eq!(m.w_est(), 0.75 * 0.25 * 3000.0 + 0.25 * 3000.0);
    }

    /// A queue that empties leaves W before the sample is taken; a lone
    /// queue's samples equal its own weight, so it keeps K
    /// (docs/schemes/mq-ecn.md, prediction 3).
    #[test]
    fn emptied_queue_leaves_the_sum_and_a_lone_queue_keeps_k() {
        let mut m = backlogged(&[1500, 1500], 200);
        m.served(1, 200 * PKT, true);
        assert_eq!(m.w_now, 1500);
        for i in 201..400 {
            m.served(0, i * PKT, false);
        }
        // (The EWMA settles within an ulp or so of 1500: K less a fraction.)
        assert!(m.share(0) > 1.0 - 1e-12, "{}", m.w_est());
        assert!(m.threshold(0) >= K - 1);
    }

    /// Idle decay by β per slot, fractions included: 2.5 slots idle scale
    /// W_est by 0.75^2.5, and an arrival dropped at the still-empty port
    /// does not charge those slots again (docs/schemes/mq-ecn.md,
    /// prediction 2 and the generic variant). After a long idle the threshold is K.
    #[test]
    fn idle_decay_per_slot() {
        let mut m = backlogged(&[1500, 1500], 200);
        let w = m.w_est();
        m.served(0, 200 * PKT, true);
        m.served(1, 200 * PKT, true);
        m.port_idle(200 * PKT);
        let w0 = m.w_est();
        assert!(w0 < w + 1e-9);
        m.port_busy(200 * PKT + 5 * PKT / 2);
        assert!((m.w_est() / w0 - 0.75f64.powf(2.5)).abs() < 1e-12);
        m.port_busy(200 * PKT + 5 * PKT / 2);
        assert!((m.w_est() / w0 - 0.75f64.powf(2.5)).abs() < 1e-12);
        m.port_busy(400 * PKT);
        assert_eq!(m.threshold(0), K);
    }
}
