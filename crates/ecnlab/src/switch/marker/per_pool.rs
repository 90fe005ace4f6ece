//! Per-pool marking: the occupancy of the switch-wide shared buffer pool
//! (all ports of the switch) against one K (MQ-ECN §2.1).

use super::{Marker, MarkingDecl, Occupancy, Threshold};
use crate::switch::scheme::{no_checks, About};

pub struct PerPool {
    pub k: u64,
}

impl PerPool {
    #[inline]
    pub fn exceeds(&self, occ: Occupancy) -> bool {
        occ.pool > self.k
    }
}

pub const DECL: MarkingDecl = MarkingDecl {
    about: About::new("per-pool", "the switch's shared buffer pool (all its ports) against one K", "MQ-ECN §2.1"),
    threshold: Threshold::Pool,
    own_sides: None,
    validate: no_checks,
    build: |c| Marker::PerPool(PerPool { k: c.k() }),
};
