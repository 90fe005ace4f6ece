//! Port buffer: one limit shared first-come-first-serve by all the port's
//! queues, with tail drop when an arrival would not fit. Two accountings:
//! - bytes: a packet takes its size (a 40-byte ACK takes 40 bytes). The
//!   MQ-ECN authors' ns-2 queues (`queue/dwrr.cc`: limit × mean packet
//!   size, compared with queued bytes) and htsim's queues count this way.
//! - packets: every packet takes one slot whatever its size, as ns-2's
//!   DropTail and RED count by default and as switches that store whole
//!   packets in fixed slots do. ACKs queued with data then use up room.

use crate::units::Amount;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    Bytes(u64),
    Packets(u64),
}

impl Buffer {
    /// The buffer a config amount asks for; `pkt` is a byte size.
    pub fn new(a: Amount, pkt_bytes: u64) -> Buffer {
        match a {
            Amount::Packets(p) => Buffer::Packets(p),
            a => Buffer::Bytes(a.bytes(pkt_bytes)),
        }
    }

    /// Room for a packet of `size` bytes at a port holding `port_bytes` in
    /// `port_packets` packets.
    #[inline]
    pub fn admits(&self, port_bytes: u64, port_packets: u64, size: u32) -> bool {
        match *self {
            Buffer::Bytes(b) => port_bytes + size as u64 <= b,
            Buffer::Packets(p) => port_packets < p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// "20pkt" is 30,000 bytes: ACKs take 40 bytes of it each, so a
    /// segment is refused only when the bytes run out. "20 packets" is a
    /// count: once ACKs hold slots, a segment is refused though most of the
    /// bytes are free.
    #[test]
    fn acks_take_a_slot_in_a_packet_count_but_only_their_bytes_in_a_byte_limit() {
        let bytes = Buffer::new(Amount::Pkt(20), 1500);
        let count = Buffer::new(Amount::Packets(20), 1500);
        assert_eq!(bytes, Buffer::Bytes(30_000));
        assert_eq!(count, Buffer::Packets(20));
        // 19 segments and no ACK: both take a 20th segment.
        assert!(bytes.admits(19 * 1500, 19, 1500));
        assert!(count.admits(19 * 1500, 19, 1500));
        // 19 segments and 1 ACK: 20 packets, 28,540 bytes. The count is
        // full; the byte limit refuses a segment (30,040 > 30,000) but
        // takes another ACK.
        let (b, n) = (19 * 1500 + 40, 20);
        assert!(!count.admits(b, n, 40));
        assert!(!bytes.admits(b, n, 1500));
        assert!(bytes.admits(b, n, 40));
        // 10 segments and 10 ACKs: 15,400 bytes, the count is full.
        let (b, n) = (10 * 1500 + 10 * 40, 20);
        assert!(!count.admits(b, n, 40));
        assert!(bytes.admits(b, n, 1500));
        // A byte limit holds any number of ACKs up to its bytes: 750 fit.
        assert!(bytes.admits(749 * 40, 749, 40));
        assert!(!bytes.admits(750 * 40, 750, 40));
    }
}
