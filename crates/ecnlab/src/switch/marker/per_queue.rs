//! Per-queue marking: each queue compared with its own static threshold.
//! Built with the standard K for every queue, with K·w_i/Σw (the minimum
//! threshold, MQ-ECN Eq. 2), or with an explicit list.

use super::{Marker, MarkingDecl, Occupancy, Threshold};
use crate::config::OneOrList;
use crate::switch::scheme::{no_checks, About};

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

/// Per-queue marking with the standard K, or one K per queue.
pub const DECL: MarkingDecl = MarkingDecl {
    about: About::new(
        "per-queue",
        "each queue against its own threshold: the standard K for all, or one per queue (a list)",
        "MQ-ECN §2.1",
    ),
    threshold: Threshold::PerQueue,
    own_sides: None,
    validate: no_checks,
    build: |c| match &c.port.threshold {
        Some(OneOrList::List(l)) => Marker::PerQueue(PerQueue { k: l.iter().map(|a| a.0.bytes(c.pkt)).collect() }),
        _ => Marker::PerQueue(PerQueue::standard(c.k(), c.port.queues as usize)),
    },
};

/// Per-queue marking with the minimum thresholds K·w_i/Σw.
pub const MIN_DECL: MarkingDecl = MarkingDecl {
    about: About::new(
        "per-queue-min",
        "each queue against K·w_i/Σw, its weight's share of the standard K (the thresholds add up to K)",
        "MQ-ECN §2.2, Eq. 2",
    ),
    threshold: Threshold::One,
    own_sides: None,
    validate: no_checks,
    build: |c| Marker::PerQueue(PerQueue::minimum(c.k(), &c.port.quanta())),
};
