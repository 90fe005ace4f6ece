//! Per-port marking: the sum of all the port's queues against one K
//! (MQ-ECN §2.1). Breaks weighted fair sharing: every queue is marked when
//! the port is full, however little of it is that queue's (MQ-ECN Fig. 3).

use super::{Marker, MarkingDecl, Occupancy, Threshold};
use crate::switch::scheme::{no_checks, About};

pub struct PerPort {
    pub k: u64,
}

impl PerPort {
    #[inline]
    pub fn exceeds(&self, occ: Occupancy) -> bool {
        occ.port > self.k
    }
}

pub const DECL: MarkingDecl = MarkingDecl {
    about: About::new("per-port", "the port's total occupancy against one K, for every queue", "MQ-ECN §2.1"),
    threshold: Threshold::One,
    own_sides: None,
    validate: no_checks,
    build: |c| Marker::PerPort(PerPort { k: c.k() }),
};
