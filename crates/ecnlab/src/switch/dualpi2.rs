//! DualPI2 (RFC 9332, Appendix A), the DualQ Coupled AQM of L4S: a whole
//! discipline with two queues. Packets that carry the L4S identifier,
//! ECT(1), or CE go to the L queue; every other packet (Not-ECT, ECT(0))
//! to the Classic queue. One PI controller, run every T_update on the
//! Classic queue's delay, keeps a base probability p' (RFC 9332 A.1):
//!
//!   p' ← p' + α·(curq − target) + β·(curq − prevq),  clamped to [0, 1],
//!
//! curq the queueing time of the Classic queue's head packet. Classic
//! packets are dropped (Not-ECT) or marked (ECT(0)) with p_C = p'² as they
//! leave, the square that turns p' into what Reno-like senders respond to;
//! L packets are marked with p_L = max(p'_L, p_CL), where p_CL = k·p' is
//! the coupling (k = 2) that gives a scalable sender (whose rate goes as
//! 1/p) about the rate of a Classic one (1/√p_C = 1/p'), and p'_L the
//! native L4S AQM: a ramp of the L packet's own queueing time from 0 at
//! min_th to 1 at min_th + range (a step at min_th when range is 0),
//! applied only while more than one packet is queued in L. L marks use the
//! RFC's deterministic `recur` (a mark each time the accumulated
//! probability passes 1), Classic ones a random draw.
//!
//! Scheduler: when both queues hold packets, L is served but Classic gets
//! `dualpi2_c_weight` of the bytes (weighted round robin by byte credit,
//! Linux's c_protection); a queue alone is served at once. The port's
//! `buffer` is the shared limit: an arrival that does not fit is dropped.
//!
//! Choices where the RFC leaves them open: the update runs at the
//! multiples of T_update after the first packet, applied when the port is
//! next touched (the queues do not change in between, so curq is what a
//! timer would read); Classic marking or dropping is skipped while at most
//! two full packets are queued in Classic (Linux's heuristic, as in PIE).
//! Not modelled: the overload handling of the RFC's second pass (dropping
//! L4S packets once p_CL saturates), which only unresponsive traffic
//! reaches; the buffer limit bounds the queues there.

use super::buffer::Buffer;
use super::qdisc::QdiscDecl;
use super::scheme::RecipeValue::{Derived, Json};
use super::scheme::{rtt_ratio, rtt_scaled, About, RecipeDecl, RecipeFill};
use super::whole::{DropReason, Held, Tally, WholeDiscipline};
use super::{Qdisc, Whole};
use crate::config::param::section;
use crate::config::{bad, Dur};
use crate::packet::{Arena, Ecn, Packet};
use crate::rng::Rng;
use crate::units::{secs, Time};
use std::collections::VecDeque;

section! {
    /// DualPI2's keys (RFC 9332 Appendix A's defaults: target 15 ms, RTT_max 100 ms).
    pub struct DualPi2Params {
        /// The Classic queue's delay target.
        dualpi2_target: Dur = Dur(15_000_000_000), range "positive", source "RFC 9332 A.1", resolved InUse,
            acts BelowBufferTime;
        /// How often p' is updated: min(target, RTT_max/3).
        dualpi2_tupdate: Dur = Dur(15_000_000_000), range "positive", source "RFC 9332 A.1", resolved InUse,
            acts WithinRun;
        /// The PI integral gain α, in Hz: 0.1·T_update/RTT_max².
        dualpi2_alpha: f64 = 0.15, range "positive", source "RFC 9332 A.1", resolved InUse;
        /// The PI proportional gain β, in Hz: 0.3/RTT_max.
        dualpi2_beta: f64 = 3.0, range "positive", source "RFC 9332 A.1", resolved InUse;
        /// The coupling factor k: p_CL = k·p'.
        dualpi2_k: f64 = 2.0, range "positive", source "RFC 9332 §2.1, A.1", resolved InUse;
        /// The L4S queueing time where the native marking ramp starts (minTh).
        dualpi2_min_th: Dur = Dur(800_000_000), source "RFC 9332 A.1", resolved InUse, acts BelowBufferTime;
        /// The ramp's width; 0 makes it a step at min_th.
        dualpi2_range: Dur = Dur(400_000_000), source "RFC 9332 A.1", resolved InUse;
        /// The share of the link the Classic queue gets when both queues hold packets.
        dualpi2_c_weight: f64 = 0.1, range "(0, 1)", source "RFC 9332 §4.2.2; Linux sch_dualpi2 c_protection",
            resolved InUse;
    }
}

pub const DECL: QdiscDecl = QdiscDecl {
    about: About {
        params: &[DualPi2Params::PARAMS],
        ..About::new(
            "dualpi2",
            "the DualQ Coupled AQM of L4S: ECT(1) and CE packets in an L queue marked early, the rest in a \
             Classic queue under a PI controller, the two coupled (p_C = p'^2, p_CL = k·p')",
            "De Schepper, Briscoe, White, RFC 9332 (DualPI2, Appendix A)",
        )
    },
    composed: false,
    needs_priority: false,
    validate: |c, _| {
        let p = c.read(DualPi2Params::read)?;
        for (key, d) in [("dualpi2_target", p.dualpi2_target), ("dualpi2_tupdate", p.dualpi2_tupdate)] {
            if d.0 == 0 {
                return Err(bad(&c.key(key), "0s", "must be positive"));
            }
        }
        for (key, x) in
            [("dualpi2_alpha", p.dualpi2_alpha), ("dualpi2_beta", p.dualpi2_beta), ("dualpi2_k", p.dualpi2_k)]
        {
            if !(x > 0.0 && x.is_finite()) {
                return Err(bad(&c.key(key), x, "must be positive (RFC 9332: α 0.15, β 3, k 2)"));
            }
        }
        if !(p.dualpi2_c_weight > 0.0 && p.dualpi2_c_weight < 1.0) {
            return Err(bad(&c.key("dualpi2_c_weight"), p.dualpi2_c_weight, "must lie in (0, 1) (Linux: 0.1)"));
        }
        Ok(())
    },
    build: |c, _| {
        let p = c.params(DualPi2Params::read);
        let cfg = DualPi2Cfg {
            target: p.dualpi2_target.0,
            tupdate: p.dualpi2_tupdate.0,
            alpha: p.dualpi2_alpha,
            beta: p.dualpi2_beta,
            k: p.dualpi2_k,
            min_th: p.dualpi2_min_th.0,
            range: p.dualpi2_range.0,
            c_weight: p.dualpi2_c_weight,
            mtu: c.pkt,
        };
        Qdisc::whole(Whole::DualPi2(DualPi2::new(cfg, Buffer::new(c.port.buffer.0, c.pkt))), c.rate_bps)
    },
};

/// RFC 9332 A.1 derives the PI's settings from RTT_max, 100 ms for the
/// Internet: target 15 ms, T_update = min(target, RTT_max/3), α =
/// 0.1·T_update/RTT_max², β = 0.3/RTT_max; and it puts the L4S ramp at
/// 800 us .. 1.2 ms. On a data-centre port all of them lie beyond what the
/// buffer holds. The recipe takes RTT_max to be the network's base RTT d
/// (ecnlab's choice: the RFC's formulas, at the data centre's RTT), so the
/// times scale by d / 100 ms; and it starts the ramp where DCTCP marks, K >
/// C×RTT/7 (DCTCP §3.3) read as a queueing time, d/7, with the RFC's width
/// of half the start. At d = 100 us: target and T_update 15 us, α = 150 Hz,
/// β = 3,000 Hz, the ramp from 14.286 us to 21.429 us.
const RTT_MAX: Time = 100_000_000_000;

pub const RECIPE: RecipeDecl = RecipeDecl {
    about: About::new(
        "dualpi2",
        "DualPI2 at the network's RTT: RFC 9332 A.1's PI settings for RTT_max = the base RTT d (target and \
         T_update 0.15·d, α 0.015/d, β 0.3/d) and the L4S ramp from d/7 (DCTCP's K) over d/14",
        "RFC 9332 A.1's formulas at RTT_max = base RTT (ecnlab's choice); DCTCP §3.3 for the ramp",
    ),
    fills: &[
        RecipeFill { key: "switch.qdisc", value: Json("\"dualpi2\""), source: "RFC 9332 Appendix A" },
        RecipeFill {
            key: "switch.dualpi2_target",
            value: Derived { rule: "15ms × base RTT / 100ms", value: |c| rtt_scaled(c, 15_000_000_000, RTT_MAX) },
            source: "RFC 9332 A.1 (target), scaled",
        },
        RecipeFill {
            key: "switch.dualpi2_tupdate",
            value: Derived {
                rule: "min(target, RTT_max/3) = 15ms × base RTT / 100ms",
                value: |c| rtt_scaled(c, 15_000_000_000, RTT_MAX),
            },
            source: "RFC 9332 A.1 (T_update)",
        },
        RecipeFill {
            key: "switch.dualpi2_alpha",
            value: Derived { rule: "0.1·T_update/RTT_max² = 0.15 × 100ms / base RTT", value: |c| gain(c, 0.15) },
            source: "RFC 9332 A.1 (α)",
        },
        RecipeFill {
            key: "switch.dualpi2_beta",
            value: Derived { rule: "0.3/RTT_max = 3 × 100ms / base RTT", value: |c| gain(c, 3.0) },
            source: "RFC 9332 A.1 (β)",
        },
        RecipeFill {
            key: "switch.dualpi2_min_th",
            value: Derived { rule: "base RTT / 7", value: |c| rtt_scaled(c, RTT_MAX / 7, RTT_MAX) },
            source: "DCTCP §3.3 (K > C×RTT/7, as a queueing time)",
        },
        RecipeFill {
            key: "switch.dualpi2_range",
            value: Derived { rule: "base RTT / 14 (half of min_th)", value: |c| rtt_scaled(c, RTT_MAX / 14, RTT_MAX) },
            source: "RFC 9332 A.1 (range = min_th / 2)",
        },
    ],
};

/// A gain in Hz made for RTT_max = 100 ms, at RTT_max = the base RTT.
fn gain(c: &crate::config::Config, at_design: f64) -> Option<serde_json::Value> {
    serde_json::Number::from_f64(at_design / rtt_ratio(c, RTT_MAX)?).map(serde_json::Value::Number)
}

/// DualPI2's settings.
#[derive(Clone, Copy, Debug)]
pub struct DualPi2Cfg {
    pub target: Time,
    pub tupdate: Time,
    pub alpha: f64,
    pub beta: f64,
    pub k: f64,
    pub min_th: Time,
    pub range: Time,
    pub c_weight: f64,
    /// One full packet on the wire, bytes.
    pub mtu: u64,
}

/// The two queues.
pub const L: usize = 0;
pub const C: usize = 1;

pub struct DualPi2 {
    pub cfg: DualPi2Cfg,
    buffer: Buffer,
    queue: [VecDeque<Held>; 2],
    queue_bytes: [u64; 2],
    pub bytes: u64,
    pub packets: u64,
    /// The base probability p' and what it gives: p_C = p'², p_CL = k·p'.
    pub p: f64,
    pub p_c: f64,
    pub p_cl: f64,
    /// The Classic delay at the last update (prevq).
    prevq: Time,
    /// The next update; 0 before the first packet.
    next_update: Time,
    /// The L queue's `recur` accumulator.
    l_count: f64,
    /// Bytes the Classic queue may still send before L's turn, while both
    /// hold packets (negative: L's turn).
    c_credit: f64,
    rng: Rng,
}

impl DualPi2 {
    pub fn new(cfg: DualPi2Cfg, buffer: Buffer) -> DualPi2 {
        DualPi2 {
            cfg,
            buffer,
            queue: [VecDeque::new(), VecDeque::new()],
            queue_bytes: [0, 0],
            bytes: 0,
            packets: 0,
            p: 0.0,
            p_c: 0.0,
            p_cl: 0.0,
            prevq: 0,
            next_update: 0,
            l_count: 0.0,
            c_credit: 0.0,
            rng: Rng::new(0),
        }
    }

    /// The queue a packet belongs to: L for the L4S identifier (ECT(1))
    /// and CE, Classic for the rest (RFC 9332 §2.5.1.1).
    pub fn classify(ecn: Ecn) -> usize {
        match ecn {
            Ecn::Ect1 | Ecn::Ce => L,
            Ecn::NotEct | Ecn::Ect => C,
        }
    }

    /// One update of the PI controller at `now` (RFC 9332 A.1).
    pub fn update(&mut self, now: Time) {
        let c = self.cfg;
        let curq = self.queue[C].front().map_or(0, |h| now - h.at);
        self.p += c.alpha * (secs(curq) - secs(c.target)) + c.beta * (secs(curq) - secs(self.prevq));
        self.p = self.p.clamp(0.0, 1.0);
        self.p_c = self.p * self.p;
        self.p_cl = (c.k * self.p).min(1.0);
        self.prevq = curq;
    }

    /// The native L4S AQM: the ramp from min_th to min_th + range.
    pub fn laqm(&self, qdelay: Time) -> f64 {
        let c = &self.cfg;
        if qdelay <= c.min_th {
            0.0
        } else if qdelay >= c.min_th + c.range {
            1.0
        } else {
            (qdelay - c.min_th) as f64 / c.range as f64
        }
    }

    /// The updates due by `now`.
    fn catch_up(&mut self, now: Time) {
        if self.next_update == 0 {
            self.next_update = now + self.cfg.tupdate;
            return;
        }
        while self.next_update <= now {
            self.update(self.next_update);
            self.next_update += self.cfg.tupdate;
            if self.p == 0.0 && self.packets == 0 && self.prevq == 0 {
                // At rest, further updates change nothing.
                let behind = now.saturating_sub(self.next_update) / self.cfg.tupdate;
                self.next_update += behind * self.cfg.tupdate;
            }
        }
    }

    /// Which queue sends next, both holding packets or not.
    fn pick(&self) -> Option<usize> {
        match (self.queue[L].is_empty(), self.queue[C].is_empty()) {
            (true, true) => None,
            (false, true) => Some(L),
            (true, false) => Some(C),
            (false, false) => Some(if self.c_credit > 0.0 { C } else { L }),
        }
    }

    fn pop(&mut self, q: usize) -> Held {
        let h = self.queue[q].pop_front().expect("a packet to pop");
        self.queue_bytes[q] -= h.size as u64;
        self.bytes -= h.size as u64;
        self.packets -= 1;
        h
    }

    /// Queue `q`'s bytes and packets.
    pub fn queue_len(&self, q: usize) -> (u64, u64) {
        (self.queue_bytes[q], self.queue[q].len() as u64)
    }
}

// Both out of line: inlined, they made the whole disciplines' dispatch save
// more registers on every FQ-CoDel packet (1% of its benchmark's
// instructions, cachegrind).
impl WholeDiscipline for DualPi2 {
    #[inline(never)]
    fn enqueue(
        &mut self,
        now: Time,
        id: u32,
        p: &Packet,
        _drops: &mut Vec<u32>,
        _tally: &mut Tally,
    ) -> Result<(), DropReason> {
        self.catch_up(now);
        if !self.buffer.admits(self.bytes, self.packets, p.size) {
            return Err(DropReason::Overflow);
        }
        let q = DualPi2::classify(p.ecn);
        self.queue[q].push_back(Held { id, size: p.size, at: now });
        self.queue_bytes[q] += p.size as u64;
        self.bytes += p.size as u64;
        self.packets += 1;
        Ok(())
    }

    #[inline(never)]
    fn dequeue(&mut self, now: Time, arena: &mut Arena, drops: &mut Vec<u32>, tally: &mut Tally) -> Option<(u32, u32)> {
        self.catch_up(now);
        while let Some(q) = self.pick() {
            let both = !self.queue[L].is_empty() && !self.queue[C].is_empty();
            let h = self.pop(q);
            if both {
                let w = self.cfg.c_weight;
                self.c_credit += if q == L { h.size as f64 * w / (1.0 - w) } else { -(h.size as f64) };
            } else {
                self.c_credit = 0.0;
            }
            let p = arena.get_mut(h.id);
            if q == L {
                // Th_len: no native marking of a queue of one packet.
                let native = if self.queue_bytes[L] > self.cfg.mtu { self.laqm(now - h.at) } else { 0.0 };
                self.l_count += native.max(self.p_cl);
                if self.l_count > 1.0 {
                    self.l_count -= 1.0;
                    if p.ecn != Ecn::Ce {
                        p.ecn = Ecn::Ce;
                        tally.marked += 1;
                    }
                }
                return Some((h.id, h.size));
            }
            if self.queue_bytes[C] > 2 * self.cfg.mtu && self.p_c > self.rng.uniform() {
                if p.ecn == Ecn::NotEct {
                    drops.push(h.id);
                    tally.aqm += 1;
                    continue;
                }
                if p.ecn != Ecn::Ce {
                    p.ecn = Ecn::Ce;
                    tally.marked += 1;
                }
            }
            return Some((h.id, h.size));
        }
        None
    }

    fn occupancy(&self) -> (u64, u64) {
        (self.bytes, self.packets)
    }

    fn queues(&self) -> usize {
        2
    }

    fn queue_occupancy(&self, q: usize) -> (u64, u64) {
        self.queue_len(q)
    }

    fn seed(&mut self, seed: u64) {
        self.rng = Rng::new(seed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;

    const MS: Time = 1_000_000_000;
    const US: Time = 1_000_000;

    /// RFC 9332 A.1's defaults.
    fn rfc() -> DualPi2Cfg {
        DualPi2Cfg {
            target: 15 * MS,
            tupdate: 15 * MS,
            alpha: 0.15,
            beta: 3.0,
            k: 2.0,
            min_th: 800 * US,
            range: 400 * US,
            c_weight: 0.1,
            mtu: 1500,
        }
    }

    fn port() -> (DualPi2, Arena) {
        (DualPi2::new(rfc(), Buffer::Bytes(10_000_000)), Arena::default())
    }

    fn offer(d: &mut DualPi2, arena: &mut Arena, now: Time, ecn: Ecn) -> u32 {
        let mut p = Packet::new(Kind::Data, 0, 1, 0, 0, 1500);
        p.ecn = ecn;
        let id = arena.alloc(p, 0);
        d.enqueue(now, id, &p, &mut Vec::new(), &mut Tally::default()).unwrap();
        id
    }

    /// ECT(1) and CE go to the L queue, Not-ECT and ECT(0) to Classic
    /// (RFC 9332 §2.5.1.1).
    #[test]
    fn the_l4s_identifier_picks_the_queue() {
        assert_eq!([Ecn::Ect1, Ecn::Ce, Ecn::Ect, Ecn::NotEct].map(DualPi2::classify), [L, L, C, C]);
        let (mut d, mut arena) = port();
        offer(&mut d, &mut arena, 0, Ecn::Ect1);
        offer(&mut d, &mut arena, 0, Ecn::Ect);
        offer(&mut d, &mut arena, 0, Ecn::NotEct);
        assert_eq!((d.queue_len(L), d.queue_len(C)), ((1500, 1), (3000, 2)));
    }

    /// The PI2 step worked by hand (RFC 9332 A.1): from p' = 0 with the
    /// Classic head 30 ms old and prevq 0, p' = 0.15·(0.030 − 0.015) +
    /// 3·(0.030 − 0) = 0.09225; p_C = p'² = 0.00851; p_CL = 2p' = 0.1845.
    /// A second step with the delay steady adds 0.15·0.015 = 0.00225.
    #[test]
    fn the_base_probability_follows_the_pi_law_and_couples() {
        let (mut d, mut arena) = port();
        offer(&mut d, &mut arena, 0, Ecn::NotEct);
        d.update(30 * MS);
        assert!((d.p - 0.09225).abs() < 1e-12, "{}", d.p);
        assert!((d.p_c - 0.09225f64.powi(2)).abs() < 1e-12);
        assert!((d.p_cl - 0.1845).abs() < 1e-12);
        d.update(45 * MS); // the same head, now 45 ms old: curq − prevq = 15 ms
        assert!((d.p - (0.09225 + 0.15 * 0.030 + 3.0 * 0.015)).abs() < 1e-12, "{}", d.p);
        // Clamped to [0, 1], p_CL to at most 1.
        for t in 1..100 {
            d.update(45 * MS + t * 15 * MS);
        }
        assert_eq!((d.p, d.p_cl), (1.0, 1.0));
    }

    /// The native L4S AQM: 0 up to min_th (800 us), rising linearly over
    /// range (400 us) to 1; a zero range is a step at min_th.
    #[test]
    fn the_native_l4s_marking_is_a_ramp_of_the_queueing_time() {
        let d = port().0;
        assert_eq!(d.laqm(800 * US), 0.0);
        assert!((d.laqm(900 * US) - 0.25).abs() < 1e-12);
        assert!((d.laqm(1100 * US) - 0.75).abs() < 1e-12);
        assert_eq!(d.laqm(1200 * US), 1.0);
        let step = DualPi2::new(DualPi2Cfg { range: 0, ..rfc() }, Buffer::Bytes(10_000_000));
        assert_eq!((step.laqm(800 * US), step.laqm(800 * US + 1)), (0.0, 1.0));
    }

    /// L packets are marked by the RFC's `recur`: at p_L = 0.25 exactly
    /// every fourth one (the count first passes 1, strictly, at the fifth),
    /// no randomness; Classic ones at random with p_C, Not-ECT dropped and
    /// ECT(0) marked.
    #[test]
    fn l_marks_recur_and_classic_packets_are_dropped_or_marked_with_p_c() {
        let (mut d, mut arena) = port();
        d.p = 0.125;
        d.p_cl = 0.25;
        d.p_c = 0.25;
        d.next_update = u64::MAX; // hold the probabilities
        let ids: Vec<u32> = (0..40).map(|_| offer(&mut d, &mut arena, 0, Ecn::Ect1)).collect();
        let (mut drops, mut tally) = (Vec::new(), Tally::default());
        let mut marked = Vec::new();
        // No native marking (no queueing delay), only the coupled 0.25.
        for _ in &ids {
            let (id, _) = d.dequeue(0, &mut arena, &mut drops, &mut tally).unwrap();
            marked.push(arena.get(id).ecn == Ecn::Ce);
        }
        let every_fourth: Vec<bool> = (0..40).map(|i| i > 0 && i % 4 == 0).collect();
        assert_eq!(marked, every_fourth);
        let n = 20_000;
        let mut rng_arena = Arena::default();
        let (mut ect_marks, mut dropped) = (0, 0);
        for i in 0..n {
            let ecn = if i % 2 == 0 { Ecn::Ect } else { Ecn::NotEct };
            for _ in 0..4 {
                offer(&mut d, &mut rng_arena, 0, ecn); // over two packets left after the first
            }
            let before = drops.len();
            if let Some((id, _)) = d.dequeue(0, &mut rng_arena, &mut drops, &mut tally) {
                ect_marks += (rng_arena.get(id).ecn == Ecn::Ce) as u32;
            }
            dropped += (drops.len() > before) as u32;
            while d.dequeue(0, &mut rng_arena, &mut drops, &mut tally).is_some() {}
        }
        // About n/2 · 0.25 each (binomial SD about 60).
        let want = n as f64 / 2.0 * 0.25;
        assert!((ect_marks as f64 - want).abs() < 300.0, "{ect_marks}");
        assert!((dropped as f64 - want).abs() < 300.0, "{dropped}");
    }

    /// Both queues full of 1500 B packets: Classic gets its weight, 10% of
    /// the dequeues; alone, either queue gets them all.
    #[test]
    fn classic_gets_its_weight_when_both_queues_are_busy() {
        let (mut d, mut arena) = port();
        d.next_update = u64::MAX;
        for _ in 0..500 {
            offer(&mut d, &mut arena, 0, Ecn::Ect1);
            offer(&mut d, &mut arena, 0, Ecn::Ect);
        }
        let mut classic = 0;
        for _ in 0..400 {
            let (id, _) = d.dequeue(0, &mut arena, &mut Vec::new(), &mut Tally::default()).unwrap();
            classic += (DualPi2::classify(arena.get(id).ecn) == C && arena.get(id).ecn != Ecn::Ce) as u32;
        }
        assert!((38..=42).contains(&classic), "{classic} of 400");
    }
}
