//! Per-port marking: the sum of all the port's queues against one K
//! (MQ-ECN §2.1). Breaks weighted fair sharing: every queue is marked when
//! the port is full, however little of it is that queue's (MQ-ECN Fig. 3).

use super::Occupancy;

pub struct PerPort {
    pub k: u64,
}

impl PerPort {
    #[inline]
    pub fn exceeds(&self, occ: Occupancy) -> bool {
        occ.port > self.k
    }
}
