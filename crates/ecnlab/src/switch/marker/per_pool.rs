//! Per-pool marking: the occupancy of the switch-wide shared buffer pool
//! (all ports of the switch) against one K (MQ-ECN §2.1).

use super::Occupancy;

pub struct PerPool {
    pub k: u64,
}

impl PerPool {
    #[inline]
    pub fn exceeds(&self, occ: Occupancy) -> bool {
        occ.pool > self.k
    }
}
