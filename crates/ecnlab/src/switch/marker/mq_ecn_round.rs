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
//! docs/schemes/mq-ecn.md). Strict-priority queues of SP+DWRR keep K
//! (§3.4). Over WFQ, which has no rounds, `MqEcnGeneric` estimates the
//! share from the weights of the backlogged queues instead. The rules'
//! tests are the scheme's, in `mq_ecn.rs`.

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

    /// Set the estimate (the tests in `mq_ecn.rs`).
    #[cfg(test)]
    pub(super) fn set_t_round(&mut self, t: f64) {
        self.t_round = t;
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
