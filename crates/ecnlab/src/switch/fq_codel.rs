//! FQ-CoDel (RFC 8290), a whole queue discipline: packets hash into
//! `flows` buckets, each a FIFO with CoDel of its own, served by deficit
//! round robin with new flows first. Gong, Roberts and Rossi (the FQ-CoDel
//! DCN paper, §III) keep "the full implementation of FQ-CoDel as currently
//! available in the Linux kernel", so where the RFC and Linux's
//! `sch_fq_codel.c` differ this follows Linux, and says so.
//!
//! - Flow hash: a seeded hash of (source, destination, connection id) — the
//!   connection id stands for the port pair of the 5-tuple, and source and
//!   destination already tell a connection's two directions apart. The seed
//!   is drawn per port from the run's seed (Linux's random perturbation).
//! - DRR: each bucket starts with one `quantum` of credit (bytes on the
//!   wire: a packet costs its size with headers, as Linux's qdisc_pkt_len).
//!   New buckets are served before old ones; a bucket whose credit is spent
//!   gets another quantum and goes to the end of the old list.
//! - A bucket found empty on the new list goes to the end of the old list
//!   when that list holds any bucket, else it leaves the lists (Linux; RFC
//!   8290 §4.2 always moves it to the old list, which differs only when the
//!   old list is empty). One found empty on the old list leaves the lists.
//! - CoDel per bucket, its "more than one MTU queued" test on the port's
//!   whole backlog (Linux passes the qdisc backlog to codel_dequeue).
//! - Limits: `limit` packets (Linux default 10240), and the port `buffer`
//!   in the role of Linux's memory_limit (counted here in bytes on the
//!   wire). An arrival is always queued; then, while over a limit, a batch
//!   is dropped from the HEAD of the fattest bucket (most bytes; ties to the
//!   lowest index): up to 64 packets, stopping once half of that bucket's
//!   bytes are gone (Linux's fq_codel_drop with drop_batch_size 64).
//!
//! Storage: each bucket is a `VecDeque` that grows to its own peak and then
//! stays, so queueing allocates only while a bucket reaches a new peak
//! (amortised; none in steady state). The two lists hold bucket indices
//! and are allocated once for every bucket.

use std::collections::VecDeque;

use super::buffer::Buffer;
use super::codel::{self, Codel, CodelParams, CodelState, Judged};
use super::qdisc::QdiscDecl;
use super::scheme::{About, RecipeDecl, RecipeFill, RecipeValue::Json};
use super::whole::{DropReason, Held, Tally, WholeDiscipline};
use super::{Qdisc, Whole};
use crate::config::param::section;
use crate::config::{bad, Bytes};
use crate::packet::{Arena, Ecn, Packet};
use crate::rng::hash64;
use crate::units::Time;

/// Linux's and RFC 8290's defaults.
pub const FQ_FLOWS: u32 = 1024;
pub const FQ_QUANTUM: u64 = 1514;
pub const FQ_LIMIT: u64 = 10_240;

section! {
    /// FQ-CoDel's keys (and CoDel's, `codel_*`).
    pub struct FqParams {
        /// Hash buckets.
        fq_flows: Option<u32> = None, resolved Given, default_doc "1024", range "1 to 65536",
            source "RFC 8290 §5.2.1; Linux sch_fq_codel.c";
        /// DRR quantum in bytes on the wire.
        fq_quantum: Option<Bytes> = None, resolved Given, default_doc "1514B (one Ethernet MTU)", range "positive",
            source "RFC 8290 §5.2.2";
        /// Limit in packets.
        fq_limit: Option<u64> = None, resolved Given, default_doc "10240", range "1 or more",
            source "Linux sch_fq_codel.c";
    }
}

pub const DECL: QdiscDecl = QdiscDecl {
    about: About {
        params: &[FqParams::PARAMS, CodelParams::PARAMS],
        ..About::new(
            "fq-codel",
            "flows hashed into buckets served by deficit round robin, new flows first, each with CoDel; \
             `buffer` is Linux's memory_limit",
            "RFC 8290; Linux sch_fq_codel.c; Gong, Roberts, Rossi, FQ-CoDel in the DCN",
        )
    },
    composed: false,
    needs_priority: false,
    validate: |c, _| {
        let p = c.read(FqParams::read)?;
        if let Some(n) = p.fq_flows {
            if !(1..=65_536).contains(&n) {
                return Err(bad(
                    &c.key("fq_flows"),
                    n,
                    "must be 1 to 65536 hash buckets (Linux's default and the paper's: 1024)",
                ));
            }
        }
        if p.fq_quantum.is_some_and(|b| b.0 == 0) {
            return Err(bad(&c.key("fq_quantum"), "0B", "must be positive (default 1514B, one Ethernet MTU)"));
        }
        if p.fq_limit == Some(0) {
            return Err(bad(&c.key("fq_limit"), 0, "must be at least 1 packet (default 10240)"));
        }
        codel::validate(c)
    },
    build: |c, _| {
        let p = c.params(FqParams::read);
        let fq = FqCodel::new(
            p.fq_flows.unwrap_or(FQ_FLOWS),
            p.fq_quantum.map_or(FQ_QUANTUM, |b| b.0) as u32,
            p.fq_limit.unwrap_or(FQ_LIMIT),
            Buffer::new(c.port.buffer.0, c.pkt),
            codel::build(c),
        );
        Qdisc::whole(Whole::FqCodel(fq), c.rate_bps)
    },
};

/// FQ-CoDel as the DCN paper runs it (`switch.recipe = "fq-codel"`): on
/// the ToR-server links in both directions (§III: the switch's host ports
/// and the hosts' NICs; the fabric's ports keep the composed discipline),
/// Linux's 1024 buckets, and CoDel's target and interval scaled down a
/// thousandfold for a 12 us RTT (§IV-B): 5 us and 100 us.
pub const RECIPE: RecipeDecl = RecipeDecl {
    about: About::new(
        "fq-codel",
        "FQ-CoDel on the ToR-server links both ways (switch host ports and NICs; fabric ports composed), \
         1024 buckets, CoDel target 5us and interval 100us",
        "Gong, Roberts, Rossi, FQ-CoDel in the DCN, §III, §IV-B",
    ),
    fills: &[
        RecipeFill { key: "switch.qdisc", value: Json("\"fq-codel\""), source: "FQ-CoDel in the DCN §III" },
        RecipeFill { key: "switch.fq_flows", value: Json("1024"), source: "FQ-CoDel in the DCN §IV-B" },
        RecipeFill {
            key: "switch.codel_target",
            value: Json("\"5us\""),
            source: "FQ-CoDel in the DCN §IV-B: 5 ms / 1000",
        },
        RecipeFill {
            key: "switch.codel_interval",
            value: Json("\"100us\""),
            source: "FQ-CoDel in the DCN §IV-B: 100 ms / 1000",
        },
        RecipeFill {
            key: "fabric.qdisc",
            value: Json("\"composed\""),
            source: "FQ-CoDel in the DCN §III: scheduling on the ToR-server links only",
        },
        RecipeFill {
            key: "nic.qdisc",
            value: Json("\"fq-codel\""),
            source: "FQ-CoDel in the DCN §III: both directions",
        },
    ],
};

/// Linux's drop_batch_size.
const DROP_BATCH: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct Bucket {
    q: VecDeque<Held>,
    bytes: u64,
    deficit: i64,
    list: List,
    codel: CodelState,
}

pub struct FqCodel {
    pub codel: Codel,
    pub quantum: u32,
    /// Packets the port holds at most (Linux `limit`).
    pub limit: u64,
    /// The port buffer, Linux's memory_limit.
    pub memory: Buffer,
    seed: u64,
    buckets: Box<[Bucket]>,
    new: VecDeque<u32>,
    old: VecDeque<u32>,
    pub bytes: u64,
    pub packets: u64,
}

impl FqCodel {
    pub fn new(flows: u32, quantum: u32, limit: u64, memory: Buffer, codel: Codel) -> Self {
        let n = flows.max(1) as usize;
        FqCodel {
            codel,
            quantum,
            limit,
            memory,
            seed: 0,
            buckets: (0..n)
                .map(|_| Bucket {
                    q: VecDeque::new(),
                    bytes: 0,
                    deficit: 0,
                    list: List::None,
                    codel: CodelState::default(),
                })
                .collect(),
            new: VecDeque::with_capacity(n),
            old: VecDeque::with_capacity(n),
            bytes: 0,
            packets: 0,
        }
    }

    pub fn seed(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// The bucket of packet `p`.
    #[inline]
    pub fn bucket_of(&self, p: &Packet) -> usize {
        let h = hash64(hash64(self.seed, p.flow as u64), (p.src as u64) << 32 | p.dst as u64);
        (h % self.buckets.len() as u64) as usize
    }

    fn over_limit(&self) -> bool {
        let memory = match self.memory {
            Buffer::Bytes(b) => self.bytes > b,
            Buffer::Packets(p) => self.packets > p,
        };
        self.packets > self.limit || memory
    }

    /// Queue packet `id` at `now`; on overflow, the packets dropped from the
    /// fattest bucket go to `drops` (the arrival itself among them only if
    /// it was its bucket's whole backlog).
    pub fn enqueue(&mut self, now: Time, id: u32, p: &Packet, drops: &mut Vec<u32>, tally: &mut Tally) {
        let b = self.bucket_of(p);
        let bucket = &mut self.buckets[b];
        bucket.q.push_back(Held { id, size: p.size, at: now });
        bucket.bytes += p.size as u64;
        if bucket.list == List::None {
            bucket.list = List::New;
            bucket.deficit = self.quantum as i64;
            self.new.push_back(b as u32);
        }
        self.bytes += p.size as u64;
        self.packets += 1;
        while self.over_limit() {
            self.drop_from_fattest(drops, tally);
        }
    }

    /// One batch from the head of the bucket holding the most bytes.
    #[cold]
    fn drop_from_fattest(&mut self, drops: &mut Vec<u32>, tally: &mut Tally) {
        let mut fat = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            if b.bytes > self.buckets[fat].bytes {
                fat = i;
            }
        }
        let bucket = &mut self.buckets[fat];
        let half = bucket.bytes / 2;
        let mut gone = 0;
        for _ in 0..DROP_BATCH {
            let Some(h) = bucket.q.pop_front() else { break };
            bucket.bytes -= h.size as u64;
            self.bytes -= h.size as u64;
            self.packets -= 1;
            gone += h.size as u64;
            drops.push(h.id);
            tally.evicted += 1;
            if gone >= half {
                break;
            }
        }
    }

    /// The next packet to send, if any; CoDel's drops go to `drops`, its
    /// marks set CE in the arena.
    pub fn dequeue(
        &mut self,
        now: Time,
        arena: &mut Arena,
        drops: &mut Vec<u32>,
        tally: &mut Tally,
    ) -> Option<(u32, u32)> {
        loop {
            let (b, from_new) = match (self.new.front(), self.old.front()) {
                (Some(&b), _) => (b as usize, true),
                (None, Some(&b)) => (b as usize, false),
                (None, None) => return None,
            };
            let bucket = &mut self.buckets[b];
            if bucket.deficit <= 0 {
                bucket.deficit += self.quantum as i64;
                bucket.list = List::Old;
                let list = if from_new { &mut self.new } else { &mut self.old };
                list.pop_front();
                self.old.push_back(b as u32);
                continue;
            }
            // CoDel's dequeue on this bucket: judge packets until one is sent.
            let mut dropped = false;
            let sent = loop {
                let Some(h) = bucket.q.pop_front() else {
                    bucket.codel.found_empty(dropped);
                    break None;
                };
                bucket.bytes -= h.size as u64;
                self.bytes -= h.size as u64;
                self.packets -= 1;
                let ect = arena.get(h.id).ecn != Ecn::NotEct;
                match bucket.codel.judge(&self.codel, now, now - h.at, self.bytes, ect) {
                    Judged::Send => break Some(h),
                    Judged::Mark => {
                        arena.get_mut(h.id).ecn = Ecn::Ce;
                        tally.marked += 1;
                        break Some(h);
                    }
                    Judged::Drop => {
                        drops.push(h.id);
                        tally.aqm += 1;
                        dropped = true;
                    }
                }
            };
            match sent {
                Some(h) => {
                    bucket.deficit -= h.size as i64;
                    return Some((h.id, h.size));
                }
                None => {
                    if from_new {
                        self.new.pop_front();
                    } else {
                        self.old.pop_front();
                    }
                    if from_new && !self.old.is_empty() {
                        bucket.list = List::Old;
                        self.old.push_back(b as u32);
                    } else {
                        bucket.list = List::None;
                    }
                }
            }
        }
    }

    /// Packets queued in each bucket (tests).
    pub fn bucket_packets(&self, b: usize) -> usize {
        self.buckets[b].q.len()
    }
}

impl WholeDiscipline for FqCodel {
    #[inline]
    fn enqueue(
        &mut self,
        now: Time,
        id: u32,
        p: &Packet,
        drops: &mut Vec<u32>,
        tally: &mut Tally,
    ) -> Result<(), DropReason> {
        FqCodel::enqueue(self, now, id, p, drops, tally);
        Ok(())
    }
    #[inline]
    fn dequeue(&mut self, now: Time, arena: &mut Arena, drops: &mut Vec<u32>, tally: &mut Tally) -> Option<(u32, u32)> {
        FqCodel::dequeue(self, now, arena, drops, tally)
    }
    fn occupancy(&self) -> (u64, u64) {
        (self.bytes, self.packets)
    }
    fn seed(&mut self, seed: u64) {
        FqCodel::seed(self, seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    const US: Time = 1_000_000;
    /// 1500 B at 10 Gbps.
    const PKT_TIME: Time = 1_200_000;

    fn fq(limit: u64) -> FqCodel {
        // The paper's setting (Gong et al. §IV): 1024 buckets, target 5 µs,
        // interval 100 µs; quantum 1514 B (Linux, RFC 8290 §5.2.2).
        let codel = Codel { target: 5 * US, interval: 100 * US, mtu: 1500, ecn: true };
        let mut f = FqCodel::new(1024, 1514, limit, Buffer::Bytes(u64::MAX), codel);
        f.seed(7);
        f
    }

    fn data(flow: u32, size: u32) -> Packet {
        let mut p = Packet::new(Kind::Data, flow, 100, flow, 0, size);
        p.ecn = Ecn::Ect;
        p
    }

    /// Flows that share no bucket (checked), so each is a flow queue.
    fn distinct_flows(f: &FqCodel, n: u32) -> Vec<u32> {
        let mut seen = std::collections::HashSet::new();
        (0..).filter(|&i| seen.insert(f.bucket_of(&data(i, 1500)))).take(n as usize).collect()
    }

    /// DRR shares the link equally among backlogged flows whatever their
    /// packet sizes (RFC 8290 §4.1; Shreedhar and Varghese's DRR): 4 flows
    /// of 1500, 1000, 600 and 200 B packets kept backlogged for 20,000
    /// departures each send 1/4 of the bytes, within 3% (the bar).
    /// Sojourns (about 12 packets' worth) stay above the 5 µs target, so
    /// CoDel marks; every packet is ECT, so nothing is dropped and marks do
    /// not change what is sent.
    #[test]
    fn backlogged_flows_share_equally() {
        let mut f = fq(10_240);
        let mut arena = Arena::default();
        let (mut drops, mut t) = (Vec::new(), Tally::default());
        let flows = distinct_flows(&f, 4);
        let sizes = [1500, 1000, 600, 200];
        let mut now = 0;
        for (i, &fl) in flows.iter().enumerate() {
            for _ in 0..3 {
                let id = arena.alloc(data(fl, sizes[i]), 0);
                f.enqueue(now, id, arena.get(id), &mut drops, &mut t);
            }
        }
        let mut sent = [0u64; 4];
        for _ in 0..20_000 {
            let (id, size) = f.dequeue(now, &mut arena, &mut drops, &mut t).unwrap();
            now += size as Time * 800; // 10 Gbps: 0.8 ns per byte
            let i = flows.iter().position(|&fl| fl == arena.get(id).flow).unwrap();
            sent[i] += size as u64;
            arena.free(id);
            let nid = arena.alloc(data(flows[i], sizes[i]), 0);
            f.enqueue(now, nid, arena.get(nid), &mut drops, &mut t);
        }
        assert!(drops.is_empty());
        let total: u64 = sent.iter().sum();
        for (i, s) in sent.iter().enumerate() {
            let share = *s as f64 / total as f64;
            assert!((share / 0.25 - 1.0).abs() < 0.03, "flow {i}: {share}");
        }
    }

    /// A sparse flow is served from the new list, ahead of backlogged ones
    /// (RFC 8290 §4.2, the "implicit priority" Gong et al. §III rely on):
    /// with 8 flows backlogged at line rate, a 64 B packet arriving once
    /// per ms leaves at the next dequeue after it arrives, so it waits at
    /// most the packet then on the wire (1500 B, 1.2 µs), less than one
    /// quantum's service time (1514 B at 10 Gbps = 1.21 µs). Its 100
    /// packets must each leave at the first dequeue after arrival.
    #[test]
    fn a_sparse_flow_waits_less_than_a_quantum() {
        let mut f = fq(10_240);
        let mut arena = Arena::default();
        let (mut drops, mut t) = (Vec::new(), Tally::default());
        let flows = distinct_flows(&f, 9);
        let (sparse, bulk) = (flows[8], &flows[..8]);
        for &fl in bulk {
            for _ in 0..20 {
                let id = arena.alloc(data(fl, 1500), 0);
                f.enqueue(0, id, arena.get(id), &mut drops, &mut t);
            }
        }
        let (mut now, mut next_sparse, mut waiting) = (0, 500 * US, None);
        let mut waits = Vec::new();
        while waits.len() < 100 {
            if now >= next_sparse {
                let id = arena.alloc(data(sparse, 64), 0);
                f.enqueue(next_sparse, id, arena.get(id), &mut drops, &mut t);
                waiting = Some((id, next_sparse));
                next_sparse += 1_000 * US;
            }
            let (id, size) = f.dequeue(now, &mut arena, &mut drops, &mut t).unwrap();
            let fl = arena.get(id).flow;
            if let Some((w, at)) = waiting {
                assert_eq!(id, w, "the sparse packet is sent at the first dequeue after it arrived");
                waits.push(now - at);
                waiting = None;
            }
            now += size as Time * 800;
            arena.free(id);
            if fl != sparse {
                let nid = arena.alloc(data(fl, 1500), 0);
                f.enqueue(now, nid, arena.get(nid), &mut drops, &mut t);
            }
        }
        let quantum_time = 1514 * 800;
        assert!(waits.iter().all(|&w| w < quantum_time && w <= PKT_TIME), "{waits:?}");
    }

    /// Overflow drops only from the longest flow queue, from its head, in
    /// Linux's batch (up to 64 packets or half its bytes): limit 100
    /// packets; flows hold 10, 20, 30 and 40 packets of 1500 B. The 101st
    /// packet (to the 10-packet flow) puts the port over the limit, and the
    /// first 20 packets of the 40-packet flow go (half its 60,000 B); the
    /// other flows, the arriving packet's included, keep every packet.
    #[test]
    fn overflow_drops_from_the_fattest_flow_only() {
        let mut f = fq(100);
        let mut arena = Arena::default();
        let (mut drops, mut t) = (Vec::new(), Tally::default());
        let flows = distinct_flows(&f, 4);
        let mut ids: Vec<Vec<u32>> = vec![Vec::new(); 4];
        for (i, &fl) in flows.iter().enumerate() {
            for _ in 0..10 * (i + 1) {
                let id = arena.alloc(data(fl, 1500), 0);
                f.enqueue(0, id, arena.get(id), &mut drops, &mut t);
                ids[i].push(id);
            }
        }
        assert!(drops.is_empty() && f.packets == 100);
        let id = arena.alloc(data(flows[0], 1500), 0);
        f.enqueue(0, id, arena.get(id), &mut drops, &mut t);
        assert_eq!(drops, ids[3][..20].to_vec());
        assert_eq!((f.packets, t.evicted), (81, 20));
        let counts: Vec<usize> = flows.iter().map(|&fl| f.bucket_packets(f.bucket_of(&data(fl, 1500)))).collect();
        assert_eq!(counts, [11, 20, 30, 20]);
    }
}
