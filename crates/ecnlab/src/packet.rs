//! Packets live in an arena of reusable slots addressed by `u32`, so the
//! per-packet path never allocates once the arena has grown to its peak.

use crate::units::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Syn,
    SynAck,
    Data,
    Ack,
    PingReq,
    PingRep,
    /// RoCEv2: a receiver's NACK (its `seq` the byte it expects) and a
    /// congestion notification (`world/rdma.rs`).
    Nack,
    Cnp,
}

/// ECN codepoint in the IP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ecn {
    NotEct,
    /// ECT(0), what classic ECN senders (RFC 3168) and DCTCP set.
    Ect,
    /// ECT(1), the L4S identifier (RFC 9331): a scalable sender's packets,
    /// which a DualQ AQM (RFC 9332) queues apart and marks early.
    Ect1,
    Ce,
}

/// One cache line, read at every hop (destination, service, size, ECMP
/// hash) and prefetched an event ahead (see `World::run`). Forwarding's
/// fields once lived in a separate 12-byte header array meant to stay in
/// cache; with the packet prefetched at every hop anyway, that array was
/// one more line per hop and measured no faster.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct Packet {
    pub kind: Kind,
    pub ecn: Ecn,
    /// TCP flags carried on ACKs (ECE) and data (CWR).
    pub ece: bool,
    pub cwr: bool,
    /// A retransmitted data segment (for reordering statistics only).
    pub rtx: bool,
    /// Service class: which switch queue the packet uses.
    pub service: u8,
    /// CE was set by the queue the packet waits in now, which may take it
    /// back as the packet leaves (CEDM): the codepoint CE replaced; cleared
    /// when it leaves.
    pub marked_here: Option<Ecn>,
    /// The flow's bytes-sent stage (ML-ECN §III-B-1; 1, 2, ... with
    /// `host.stages`), carried in DSCP; 0 when hosts do not tag.
    pub stage: u8,
    pub src: u32,
    pub dst: u32,
    /// Connection (flow) id, or ping probe id for pings.
    pub flow: u32,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// The flow's ECMP hash (set by `Arena::alloc`).
    pub ecmp: u32,
    /// Payload bytes (data) — zero for control packets, except an ACK
    /// with more than one SACK block: there one plus the index of its
    /// further blocks, kept beside the packets (`host/sack_blocks.rs`).
    pub payload: u32,
    /// First payload byte (data) or cumulative ACK (acks).
    pub seq: u64,
    /// The first SACK block [sack_lo, sack_hi) on ACKs; empty when equal. On
    /// data packets `sack_lo` carries pFabric's priority instead (see
    /// `prio`): the line has no spare byte left for a field of its own.
    pub sack_lo: u64,
    pub sack_hi: u64,
    /// Sender timestamp, echoed by the receiver (RFC 7323 style) for RTT.
    pub ts: Time,
}

// One cache line: a field that does not fit in the spare byte costs a
// second line per packet at every hop.
const _: () = assert!(std::mem::size_of::<Packet>() == 64);

impl Packet {
    pub fn new(kind: Kind, src: u32, dst: u32, flow: u32, service: u8, size: u32) -> Packet {
        Packet {
            kind,
            ecn: Ecn::NotEct,
            ece: false,
            cwr: false,
            rtx: false,
            service,
            marked_here: None,
            stage: 0,
            src,
            dst,
            flow,
            size,
            ecmp: 0,
            payload: 0,
            seq: 0,
            sack_lo: 0,
            sack_hi: 0,
            ts: 0,
        }
    }

    /// pFabric's priority (pFabric §4.1): the bytes of its flow not yet
    /// acknowledged when a data packet was sent; smaller is more urgent.
    /// Control packets (ACK, SYN, pings) are the most urgent, 0.
    #[inline]
    pub fn prio(&self) -> u64 {
        if self.kind == Kind::Data {
            self.sack_lo
        } else {
            0
        }
    }

    /// An ACK's handle on its further SACK blocks, which live beside the
    /// packets (`host/sack_blocks.rs`; see `payload`); None for one block
    /// and for every other packet.
    #[inline]
    pub fn sack_slot(&self) -> Option<u32> {
        (self.kind == Kind::Ack && self.payload != 0).then_some(self.payload)
    }

    /// A ping's request or reply: its `flow` names a probe, not a flow.
    #[inline]
    pub fn is_ping(&self) -> bool {
        matches!(self.kind, Kind::PingReq | Kind::PingRep)
    }

    /// In a run with INT (HPCC, `rdma/int.rs`): the index plus one of the
    /// telemetry stack a data packet, or the ACK or NACK answering it,
    /// carries (0: none). It rides in `sack_lo`, which RoCE packets use for
    /// neither SACK nor pFabric's priority.
    #[inline]
    pub fn int_slot(&self) -> u64 {
        self.sack_lo
    }

    #[inline]
    pub fn set_int_slot(&mut self, slot: u64) {
        self.sack_lo = slot;
    }

    /// Stamp a data packet with its flow's remaining bytes (see `prio`).
    #[inline]
    pub fn set_prio(&mut self, remaining: u64) {
        debug_assert_eq!(self.kind, Kind::Data);
        self.sack_lo = remaining;
    }
}

/// `Arena::hop` of a packet whose next landing is not at a switch, or
/// whose egress there is drawn on arrival (per-packet ECMP).
pub const NO_HOP: u32 = u32::MAX;

/// Slab of packets with a free list.
#[derive(Default)]
pub struct Arena {
    slots: Vec<Packet>,
    free: Vec<u32>,
    /// Per slot: the port the packet will leave by at the switch it lands
    /// on next, resolved when it left the previous node (see
    /// `World::resolve_hop`). Beside the slots, not in them: the packet's
    /// line has no byte to spare, and the run loop reads a hop one event
    /// ahead to start loading that port.
    hop: Vec<u32>,
}

impl Arena {
    /// Store `p`, whose flow hashes to `ecmp`.
    #[inline]
    pub fn alloc(&mut self, mut p: Packet, ecmp: u32) -> u32 {
        p.ecmp = ecmp;
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = p;
                i
            }
            None => {
                self.slots.push(p);
                self.hop.push(NO_HOP);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The egress port resolved for packet `i`'s next switch, or NO_HOP.
    #[inline]
    pub fn hop(&self, i: u32) -> u32 {
        self.hop[i as usize]
    }

    #[inline]
    pub fn set_hop(&mut self, i: u32, port: u32) {
        self.hop[i as usize] = port;
    }

    /// Where `hop(i)` lives (to prefetch it).
    #[inline]
    pub fn hop_slot(&self, i: u32) -> &u32 {
        &self.hop[i as usize]
    }

    #[inline]
    pub fn free(&mut self, i: u32) {
        self.free.push(i);
    }

    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        &self.slots[i as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.slots[i as usize]
    }

    /// Packets allocated and not yet freed.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// The packets allocated and not yet freed (tests).
    #[cfg(test)]
    pub fn live_packets(&self) -> Vec<&Packet> {
        let free: std::collections::HashSet<u32> = self.free.iter().copied().collect();
        (0..self.slots.len() as u32).filter(|i| !free.contains(i)).map(|i| self.get(i)).collect()
    }
}
