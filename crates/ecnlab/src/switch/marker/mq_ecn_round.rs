//! MQ-ECN's round-time estimate (Bai et al., NSDI 2016): each round-robin
//! queue's threshold follows its current share of the link,
//!
//!   K_i = min(quantum_i / T_round, C) × RTT × λ = K × min(quantum_i / (C·T_round), 1)
//!
//! (Eq. 5). T_round is an EWMA with gain β of round-time samples (Eq. 6);
//! a sample is taken whenever a queue ends its turn and is the time since
//! that queue's previous turn ended, or since it became active (§3.3.1,
//! §4.2). When the port has been idle, the estimate decays by β per idle
//! slot T_idle, as if zero samples had arrived (§3.3.1; the per-slot rule
//! with a whole number of slots is the authors' ns-2 code, see
//! shared/schemes/mq-ecn.md). Strict-priority queues of SP+DWRR keep K
//! (§3.4). Over WFQ, which has no rounds, `MqEcnGeneric` estimates the
//! share from the weights of the backlogged queues instead.

use super::Occupancy;
use crate::units::{tx_time, Time};

pub struct MqEcn {
    /// The standard threshold K, bytes.
    k: u64,
    /// Per queue: (quantum_i / C in ps, when its current wait for service
    /// began — possibly one transmission in the future, when it emptied on
    /// its last packet).
    queue: Box<[(u64, Time)]>,
    /// Queues below this index are strict-priority and use K.
    strict: usize,
    beta: f64,
    idle_slot: Time,
    /// Smoothed round time, ps; 0 = no estimate yet (use K).
    t_round: f64,
    /// When the port last became empty.
    t_idle: Time,
}

impl MqEcn {
    pub fn new(k: u64, quantum: &[u64], rate_bps: u64, strict: usize, beta: f64, idle_slot: Time) -> Self {
        MqEcn {
            k,
            queue: quantum.iter().map(|&q| (tx_time(q, rate_bps), 0)).collect(),
            strict,
            beta,
            idle_slot: idle_slot.max(1),
            t_round: 0.0,
            t_idle: 0,
        }
    }

    /// Current T_round estimate, ps.
    pub fn t_round(&self) -> f64 {
        self.t_round
    }

    /// K_i in bytes before rounding (Eq. 5).
    // Always inlined into the enqueue path: left to LLVM, it stopped being
    // inlined once `Marker` grew the WFQ variant's arm (+0.8% instructions
    // on the MQ-ECN point).
    #[inline(always)]
    fn k_i(&self, q: usize) -> f64 {
        if q < self.strict || self.t_round < 1.0 {
            return self.k as f64;
        }
        self.k as f64 * (self.queue[q].0 as f64 / self.t_round).min(1.0)
    }

    /// min(quantum_i/(C·T_round), 1): queue `q`'s share of the link, the
    /// factor that scales every threshold of the queue (§3.4).
    pub fn share(&self, q: usize) -> f64 {
        if q < self.strict || self.t_round < 1.0 {
            return 1.0;
        }
        (self.queue[q].0 as f64 / self.t_round).min(1.0)
    }

    pub fn threshold(&self, q: usize) -> u64 {
        self.k_i(q) as u64
    }

    /// occupancy > ⌊K_i⌋, which for a whole number of bytes is
    /// occupancy > K_i: compared in floating point, without the rounding.
    #[inline(always)]
    pub fn exceeds(&self, q: usize, occ: Occupancy) -> bool {
        occ.queue as f64 > self.k_i(q)
    }

    #[inline(always)]
    fn sample(&mut self, s: Time) {
        self.t_round = self.beta * self.t_round + (1.0 - self.beta) * s as f64;
    }

    // The round and port events are always inlined into the static
    // enqueue and dequeue paths, which call them for most packets.
    #[inline(always)]
    pub fn activated(&mut self, q: usize, now: Time) {
        self.queue[q].1 = self.queue[q].1.max(now);
    }

    #[inline(always)]
    pub fn turn_end(&mut self, q: usize, end: Time) {
        let s = end.saturating_sub(self.queue[q].1);
        self.sample(s);
        self.queue[q].1 = end;
    }

    #[inline(always)]
    pub fn port_busy(&mut self, now: Time) {
        let idle = now.saturating_sub(self.t_idle);
        // Most arrivals at an empty port come within a slot: no division.
        if idle >= self.idle_slot {
            let slots = idle / self.idle_slot;
            // β^slots underflows to 0 after a long idle: back to plain K.
            self.t_round *= self.beta.powi(slots.min(i32::MAX as u64) as i32);
            // Those slots are charged; if this arrival is dropped and the port
            // stays empty, the next one must not charge them again.
            self.t_idle += slots * self.idle_slot;
        }
    }

    #[inline(always)]
    pub fn port_idle(&mut self, now: Time) {
        self.t_idle = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::switch::RoundObserver;

    struct Obs<'a>(&'a mut MqEcn);
    impl RoundObserver for Obs<'_> {
        fn activated(&mut self, q: usize, now: Time) {
            self.0.activated(q, now)
        }
        fn turn_end(&mut self, q: usize, end: Time) {
            self.0.turn_end(q, end)
        }
    }

    const PKT: Time = 1_200_000; // 1500 B at 10 Gbps
    const RATE: u64 = 10_000_000_000;

    /// Two queues with the given quanta, both always backlogged with 1500 B
    /// packets, served back to back for `steps` packets.
    fn backlogged(k: u64, quanta: [u64; 2], steps: usize) -> MqEcn {
        let mut m = MqEcn::new(k, &quanta, RATE, 0, 0.75, PKT);
        let mut d = crate::switch::scheduler::Dwrr::new(quanta.to_vec(), true);
        let mut qs = [crate::switch::queue::Queue::default(), crate::switch::queue::Queue::default()];
        for (q, fifo) in qs.iter_mut().enumerate() {
            for i in 0..steps as u32 {
                fifo.fifo.push(i, 1500);
            }
            d.activate(q, 0, &mut Obs(&mut m));
        }
        let mut now = 0;
        for _ in 0..steps {
            let q = d.select(now, &qs, crate::units::LineRate::new(RATE), &mut Obs(&mut m));
            qs[q].fifo.pop();
            now += PKT;
        }
        m
    }

    /// Equal 1500 B quanta at 10 Gbps: each turn is one packet, so every
    /// sample is 2 packet times = 2.4 us and K_i → K/2
    /// (shared/schemes/mq-ecn.md, prediction 1).
    #[test]
    fn equal_quanta_round_converges_to_two_packets() {
        let k = 65 * 1500;
        let m = backlogged(k, [1500, 1500], 300);
        assert!((m.t_round() - 2.0 * PKT as f64).abs() < 0.01 * PKT as f64, "T_round = {}", m.t_round());
        assert_eq!(m.threshold(0), k / 2);
        assert_eq!(m.threshold(1), k / 2);
    }

    /// Quanta 1500:6000: a round is 5 packet times, K_0 → K/5 and
    /// K_1 → 4K/5 (shared/schemes/mq-ecn.md, prediction 1).
    #[test]
    fn weighted_quanta_scale_thresholds() {
        let k = 80 * 1500;
        let m = backlogged(k, [1500, 6000], 1000);
        let t = m.t_round() / PKT as f64;
        assert!((t - 5.0).abs() < 0.05, "T_round = {t} packet times");
        assert!((m.threshold(0) as f64 / (k as f64 / 5.0) - 1.0).abs() < 0.02);
        assert!((m.threshold(1) as f64 / (k as f64 * 0.8) - 1.0).abs() < 0.02);
    }

    /// SP+DWRR: a strict queue keeps the standard K (MQ-ECN §3.4).
    #[test]
    fn strict_queues_keep_standard_k() {
        let mut m = MqEcn::new(65 * 1500, &[1500, 1500, 1500], RATE, 1, 0.75, PKT);
        for i in 0..50 {
            m.turn_end(1, (i + 1) * 3 * PKT);
        }
        assert_eq!(m.threshold(0), 65 * 1500);
        assert!(m.threshold(1) < 65 * 1500 / 2);
    }

    /// After 10 idle slots the estimate is scaled by 0.75^10 ≈ 0.056
    /// (shared/schemes/mq-ecn.md, prediction 2); a lone queue gets K
    /// (prediction 3: its samples equal its own quantum time).
    #[test]
    fn idle_decay_and_lone_queue() {
        let k = 65 * 1500;
        let mut m = MqEcn::new(k, &[1500, 1500], 10_000_000_000, 0, 0.75, PKT);
        m.t_round = 2.0 * PKT as f64;
        m.port_idle(0);
        m.port_busy(10 * PKT + 5);
        assert!((m.t_round() / (2.0 * PKT as f64) - 0.75f64.powi(10)).abs() < 1e-9);
        // The arrival was dropped and the port is still empty: the next one,
        // half a slot later, finds no new whole slot to charge.
        m.port_busy(10 * PKT + PKT / 2);
        assert!((m.t_round() / (2.0 * PKT as f64) - 0.75f64.powi(10)).abs() < 1e-9);
        // One more whole slot: one more factor β.
        m.port_busy(11 * PKT + 5);
        assert!((m.t_round() / (2.0 * PKT as f64) - 0.75f64.powi(11)).abs() < 1e-9);
        m.t_round = 0.0;
        for i in 0..50 {
            m.turn_end(0, (i + 1) * PKT);
        }
        assert_eq!(m.threshold(0), k);
    }
}
