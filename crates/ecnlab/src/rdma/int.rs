//! In-band network telemetry (INT) as HPCC reads it (Li et al., SIGCOMM
//! 2019, §3.2 and Fig. 5): every switch egress a data packet leaves by
//! appends one record — when it left, the port's bytes sent so far, the
//! bytes queued behind it and the link's rate — and the receiver copies the
//! stack into the ACK, so the sender sees each hop's load as of its packet.
//!
//! A packet is one cache line with no room for five records
//! (`packet.rs`), so the stacks live in this slab and a packet carries its
//! stack's index plus one (`Packet::int_slot`). A data packet takes a stack
//! when it is sent; the ACK that answers it takes the stack over; the sender
//! gives it back when it has read the ACK, the receiver when it sends no
//! ACK for the packet, the network when it drops the packet.
//!
//! Values are exact by default. `hpcc_int_multi` > 0 rounds them as the
//! HPCC simulator's 8-byte hop does (bytes in units of 128·multi, queue in
//! units of 80·multi; its 24-bit time and 20-bit byte fields wrap, which
//! differences of exact counters need not model).
//!
//! Per-packet functions: `IntSlab::take`, `IntSlab::push`, `IntSlab::give`.
//! Tests: below and `rdma/hpcc.rs`.

use crate::units::Time;

/// At most this many hops are recorded (the HPCC simulator's maxHop; a
/// longer path's further hops are not).
pub const MAX_HOPS: usize = 5;

/// One switch egress's record.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntHop {
    /// When the packet left the port.
    pub ts: Time,
    /// Bytes the port had sent before this packet.
    pub tx_bytes: u64,
    /// Bytes queued at the port as the packet left.
    pub qlen: u64,
    /// The link's rate, bits per second.
    pub rate: u64,
}

/// The records of one packet's path, first hop first.
#[derive(Clone, Copy, Debug, Default)]
pub struct IntStack {
    pub n: u8,
    pub hops: [IntHop; MAX_HOPS],
}

impl IntStack {
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }
}

#[derive(Default)]
pub struct IntSlab {
    stacks: Vec<IntStack>,
    free: Vec<u32>,
    /// Rounding units of bytes and queue (0: exact).
    byte_unit: u64,
    qlen_unit: u64,
}

impl IntSlab {
    /// `multi`: the HPCC simulator's INT_MULTI (0: exact values).
    pub fn new(multi: u32) -> IntSlab {
        let m = multi as u64;
        IntSlab { byte_unit: 128 * m, qlen_unit: 80 * m, ..IntSlab::default() }
    }

    /// An empty stack for a data packet: its slot (index plus one).
    #[inline]
    pub fn take(&mut self) -> u64 {
        let i = match self.free.pop() {
            Some(i) => {
                self.stacks[i as usize].n = 0;
                i
            }
            None => {
                self.stacks.push(IntStack::default());
                self.stacks.len() as u32 - 1
            }
        };
        i as u64 + 1
    }

    /// The packet holding `slot` leaves a switch port with `hop` (exact
    /// values; rounded here if the slab rounds).
    #[inline]
    pub fn push(&mut self, slot: u64, mut hop: IntHop) {
        if self.byte_unit > 0 {
            hop.tx_bytes -= hop.tx_bytes % self.byte_unit;
            hop.qlen -= hop.qlen % self.qlen_unit;
        }
        let s = &mut self.stacks[slot as usize - 1];
        if (s.n as usize) < MAX_HOPS {
            s.hops[s.n as usize] = hop;
            s.n += 1;
        }
    }

    pub fn get(&self, slot: u64) -> &IntStack {
        &self.stacks[slot as usize - 1]
    }

    /// The stack is read or its packet gone.
    #[inline]
    pub fn give(&mut self, slot: u64) {
        self.free.push(slot as u32 - 1);
    }

    /// Stacks held now (taken and not given back).
    pub fn held(&self) -> usize {
        self.stacks.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hops stack in order up to five; a slot given back is reused empty;
    /// INT_MULTI 4 rounds bytes down to 512 B and the queue to 320 B (the
    /// HPCC simulator's int-header.h units).
    #[test]
    fn stacks_hops_and_rounds() {
        let mut s = IntSlab::new(0);
        let a = s.take();
        for i in 0..7 {
            s.push(a, IntHop { ts: i, tx_bytes: 1000 + i, qlen: 7, rate: 100 });
        }
        assert_eq!(s.get(a).n, 5);
        assert_eq!(s.get(a).hops()[4].ts, 4);
        s.give(a);
        let b = s.take();
        assert_eq!((b, s.get(b).n, s.held()), (a, 0, 1));
        let mut r = IntSlab::new(4);
        let c = r.take();
        r.push(c, IntHop { ts: 1, tx_bytes: 1_100, qlen: 700, rate: 100 });
        assert_eq!((r.get(c).hops[0].tx_bytes, r.get(c).hops[0].qlen), (1_024, 640));
    }
}
