//! pFabric's switch port (Alizadeh et al., SIGCOMM 2013; what its rules
//! rest on: docs/schemes/pfabric.md): one small buffer per port, each packet
//! carrying its flow's remaining bytes as priority (`Packet::prio`; smaller
//! is more urgent, control packets 0).
//!
//! Exact rules:
//! - Dequeue: the packet with the smallest priority (ties: the earliest
//!   arrival) names a flow; that flow's earliest-arrived packet is sent.
//!   A flow's packets so leave in arrival order, and a flow whose newer
//!   packets carry better priorities is not starved by its older ones.
//! - Enqueue: the arrival is appended (the buffer keeps arrival order);
//!   then, while the buffer is over its limit (bytes > limit, or packets >
//!   limit for a packet count), the packet with the largest priority (ties:
//!   the most recent arrival) is dropped. An arrival no better than the
//!   worst queued packet thus drops itself. With equal packet sizes that is
//!   one victim per overflow (YAPS's rule); a large arrival may push out
//!   several small packets (ns-2 instead chooses only victims whose removal
//!   makes room).
//! - A flow is (connection id, source): a connection's two directions are
//!   two flows.
//!
//! Both rules scan the buffer, which pFabric keeps to about two BDPs (a few
//! dozen packets); the buffer is a `Vec` that grows to its peak once.

use super::buffer::Buffer;
use super::qdisc::QdiscDecl;
use super::scheme::{no_checks, About, RecipeDecl, RecipeFill, RecipeValue::Json};
use super::whole::{DropReason, Tally, WholeDiscipline};
use super::{Qdisc, Whole};
use crate::packet::{Arena, Packet};
use crate::units::Time;

pub const DECL: QdiscDecl = QdiscDecl {
    about: About::new(
        "pfabric",
        "one small buffer sent in order of the flows' remaining bytes, dropping the least urgent on overflow \
         (needs transport.cc = \"pfabric\", which stamps the priorities)",
        "Alizadeh et al., pFabric (SIGCOMM 2013) §4.1; docs/schemes/pfabric.md",
    ),
    composed: false,
    needs_priority: true,
    validate: |c, _| no_checks(c),
    build: |c, _| Qdisc::whole(Whole::PFabric(PFabric::new(Buffer::new(c.port.buffer.0, c.pkt))), c.rate_bps),
};

/// pFabric's whole design (`switch.recipe = "pfabric"`): its port on
/// every switch port and NIC (its ns-2 code and YAPS put one at the hosts
/// too), a buffer of about two BDPs (YAPS's 36864 bytes, pFabric's 36 KB
/// for its 10G network; docs/schemes/pfabric.md), its transport, and the
/// authors' ns-2 TCP settings (FQ-CoDel in the DCN, Table II: the profile).
pub const RECIPE: RecipeDecl = RecipeDecl {
    about: About::new(
        "pfabric",
        "the pFabric design: its port on every switch port and NIC with a 36KB (about 2 x BDP) buffer, its \
         transport and the pFabric TCP profile",
        "Alizadeh et al., pFabric (SIGCOMM 2013) §4; FQ-CoDel in the DCN §IV-B, Table II; docs/schemes/pfabric.md",
    ),
    fills: &[
        RecipeFill { key: "switch.qdisc", value: Json("\"pfabric\""), source: "pFabric §4.1" },
        RecipeFill {
            key: "switch.buffer",
            value: Json("\"36864B\""),
            source: "pFabric's 36KB, about 2 x BDP at 10 Gbps (YAPS queue_size; docs/schemes/pfabric.md)",
        },
        RecipeFill { key: "nic.qdisc", value: Json("\"pfabric\""), source: "pFabric's ns-2 code and YAPS" },
        RecipeFill { key: "transport.cc", value: Json("\"pfabric\""), source: "pFabric §4.2" },
        RecipeFill { key: "transport.profile", value: Json("\"pfabric\""), source: "FQ-CoDel in the DCN, Table II" },
    ],
};

#[derive(Clone, Copy)]
struct Held {
    id: u32,
    size: u32,
    prio: u64,
    flow: u64,
}

pub struct PFabric {
    pub buffer: Buffer,
    /// Queued packets in arrival order.
    held: Vec<Held>,
    pub bytes: u64,
    pub packets: u64,
}

impl PFabric {
    pub fn new(buffer: Buffer) -> Self {
        PFabric { buffer, held: Vec::with_capacity(32), bytes: 0, packets: 0 }
    }

    fn over(&self) -> bool {
        match self.buffer {
            Buffer::Bytes(b) => self.bytes > b,
            Buffer::Packets(p) => self.packets > p,
        }
    }

    /// Queue packet `id`. Queued packets pushed out go to `drops`; Err: the
    /// arrival itself was the one to go (after any others).
    pub fn enqueue(&mut self, id: u32, p: &Packet, drops: &mut Vec<u32>, tally: &mut Tally) -> Result<(), DropReason> {
        let flow = (p.flow as u64) << 32 | p.src as u64;
        self.held.push(Held { id, size: p.size, prio: p.prio(), flow });
        self.bytes += p.size as u64;
        self.packets += 1;
        while self.over() {
            // The worst: scanning from the newest, only a strictly larger
            // priority displaces it, so ties go to the most recent.
            let mut w = self.held.len() - 1;
            for i in (0..w).rev() {
                if self.held[i].prio > self.held[w].prio {
                    w = i;
                }
            }
            let v = self.held.remove(w);
            self.bytes -= v.size as u64;
            self.packets -= 1;
            if v.id == id {
                return Err(DropReason::Overflow);
            }
            drops.push(v.id);
            tally.evicted += 1;
        }
        Ok(())
    }

    /// The next packet to send, with its size.
    pub fn dequeue(&mut self) -> Option<(u32, u32)> {
        let mut best = 0;
        for (i, h) in self.held.iter().enumerate() {
            if h.prio < self.held[best].prio {
                best = i;
            }
        }
        let flow = self.held.get(best)?.flow;
        let first = self.held.iter().position(|h| h.flow == flow).expect("the best packet's flow is queued");
        let h = self.held.remove(first);
        self.bytes -= h.size as u64;
        self.packets -= 1;
        Some((h.id, h.size))
    }
}

impl WholeDiscipline for PFabric {
    #[inline]
    fn enqueue(
        &mut self,
        _now: Time,
        id: u32,
        p: &Packet,
        drops: &mut Vec<u32>,
        tally: &mut Tally,
    ) -> Result<(), DropReason> {
        PFabric::enqueue(self, id, p, drops, tally)
    }
    #[inline]
    fn dequeue(
        &mut self,
        _now: Time,
        _arena: &mut Arena,
        _drops: &mut Vec<u32>,
        _tally: &mut Tally,
    ) -> Option<(u32, u32)> {
        PFabric::dequeue(self)
    }
    fn occupancy(&self) -> (u64, u64) {
        (self.bytes, self.packets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Arena, Kind};

    fn data(flow: u32, remaining: u64) -> Packet {
        let mut p = Packet::new(Kind::Data, flow, 99, flow, 0, 1500);
        p.set_prio(remaining);
        p
    }

    /// Shortest remaining first, in order within a flow (pFabric §4.1-4.2):
    /// three flows queue packets with remaining sizes A: 30, 28, 26 KB;
    /// B: 5, 4 KB; C: 12, 11 KB, arrivals interleaved. Departures: all of
    /// B (smallest remaining), then C, then A, each flow in arrival order.
    /// Then a flow whose newer packet is more urgent than its older one
    /// (a retransmission stamped later with less remaining) sends the
    /// older one first: the earliest packet of the flow with the best.
    #[test]
    fn departures_are_shortest_remaining_first_and_in_order_per_flow() {
        let mut pf = PFabric::new(Buffer::Bytes(100 * 1500));
        let mut arena = Arena::default();
        let (mut drops, mut t) = (Vec::new(), Tally::default());
        let arrivals = [(1, 30_000), (2, 5_000), (3, 12_000), (1, 28_000), (3, 11_000), (2, 4_000), (1, 26_000)];
        let mut ids = Vec::new();
        for (f, r) in arrivals {
            let id = arena.alloc(data(f, r), 0);
            pf.enqueue(id, arena.get(id), &mut drops, &mut t).unwrap();
            ids.push(id);
        }
        let order: Vec<u32> = std::iter::from_fn(|| pf.dequeue().map(|d| d.0)).collect();
        let want: Vec<u32> = [1, 5, 2, 4, 0, 3, 6].iter().map(|&i| ids[i]).collect();
        assert_eq!(order, want);
        // Flow 4: 9 KB queued first, then 2 KB; flow 5: 5 KB. Flow 4 holds
        // the best (2 KB), so its 9 KB packet goes first, then its 2 KB
        // one, then flow 5.
        let a = arena.alloc(data(4, 9_000), 0);
        let b = arena.alloc(data(5, 5_000), 0);
        let c = arena.alloc(data(4, 2_000), 0);
        for id in [a, b, c] {
            pf.enqueue(id, arena.get(id), &mut drops, &mut t).unwrap();
        }
        let order: Vec<u32> = std::iter::from_fn(|| pf.dequeue().map(|d| d.0)).collect();
        assert_eq!(order, [a, c, b]);
        assert!(drops.is_empty() && pf.bytes == 0);
    }

    /// Each overflow drops the lowest-priority packet (largest remaining;
    /// ties: the most recent): a 4-packet buffer holds remaining 10, 50,
    /// 20, 50 KB. Arrivals: 30 KB → the later 50 KB packet goes; 60 KB →
    /// the arrival itself goes (Err); 50 KB → ties with the queued 50 KB,
    /// the arrival is more recent and goes; an ACK (priority 0) → the
    /// 50 KB packet goes; 5 KB → the 30 KB packet goes.
    #[test]
    fn overflow_drops_the_lowest_priority_packet() {
        let mut pf = PFabric::new(Buffer::Packets(4));
        let mut arena = Arena::default();
        let (mut drops, mut t) = (Vec::new(), Tally::default());
        let mut id_of = std::collections::HashMap::new();
        for (i, r) in [10_000u64, 50_000, 20_000, 50_000].into_iter().enumerate() {
            let id = arena.alloc(data(i as u32, r), 0);
            pf.enqueue(id, arena.get(id), &mut drops, &mut t).unwrap();
            id_of.insert(("q", i), id);
        }
        let offer = |pf: &mut PFabric, arena: &mut Arena, p: Packet, drops: &mut Vec<u32>, t: &mut Tally| {
            let id = arena.alloc(p, 0);
            (id, pf.enqueue(id, arena.get(id), drops, t))
        };
        let (a30, r) = offer(&mut pf, &mut arena, data(10, 30_000), &mut drops, &mut t);
        assert!(r.is_ok());
        assert_eq!(drops, [id_of[&("q", 3)]]);
        let (_, r) = offer(&mut pf, &mut arena, data(11, 60_000), &mut drops, &mut t);
        assert_eq!(r, Err(DropReason::Overflow));
        let (_, r) = offer(&mut pf, &mut arena, data(12, 50_000), &mut drops, &mut t);
        assert_eq!(r, Err(DropReason::Overflow));
        let ack = Packet::new(Kind::Ack, 13, 99, 13, 0, 40);
        let (_, r) = offer(&mut pf, &mut arena, ack, &mut drops, &mut t);
        assert!(r.is_ok());
        assert_eq!(drops, [id_of[&("q", 3)], id_of[&("q", 1)]]);
        let (_, r) = offer(&mut pf, &mut arena, data(14, 5_000), &mut drops, &mut t);
        assert!(r.is_ok());
        assert_eq!(drops, [id_of[&("q", 3)], id_of[&("q", 1)], a30]);
        assert_eq!((pf.packets, t.evicted), (4, 3));
    }
}
