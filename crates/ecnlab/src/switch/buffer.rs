//! Port buffer: one limit shared first-come-first-serve by all the port's
//! queues, in bytes or in packets (ns-2 counts packets of any size), with
//! tail drop when an arrival would not fit.

use crate::units::Amount;

#[derive(Clone, Copy, Debug)]
pub struct Buffer {
    pub limit: Amount,
}

impl Buffer {
    #[inline]
    pub fn admits(&self, port_bytes: u64, port_packets: u64, size: u32) -> bool {
        match self.limit {
            Amount::Bytes(b) => port_bytes + size as u64 <= b,
            Amount::Packets(p) => port_packets < p,
        }
    }
}
