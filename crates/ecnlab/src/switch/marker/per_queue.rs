//! Per-queue marking: each queue compared with its own static threshold.
//! Built with the standard K for every queue, with K·w_i/Σw (the minimum
//! threshold, MQ-ECN Eq. 2), or with an explicit list.

use super::Occupancy;

pub struct PerQueue {
    /// Threshold of each queue, in bytes.
    pub k: Vec<u64>,
}

impl PerQueue {
    pub fn standard(k: u64, queues: usize) -> Self {
        PerQueue { k: vec![k; queues] }
    }

    /// K_i = K · w_i / Σ w_j, so the thresholds add up to K (MQ-ECN Eq. 2).
    pub fn minimum(k: u64, weights: &[u64]) -> Self {
        let sum: u64 = weights.iter().sum();
        PerQueue { k: weights.iter().map(|&w| (k as u128 * w as u128 / sum as u128) as u64).collect() }
    }

    #[inline]
    pub fn exceeds(&self, q: usize, occ: Occupancy) -> bool {
        occ.queue > self.k[q]
    }
}
