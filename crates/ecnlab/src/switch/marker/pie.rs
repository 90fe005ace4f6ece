//! PIE, Proportional Integral controller Enhanced (RFC 8033), one state per
//! queue of the composed discipline. PIE keeps the queueing delay near a
//! target by a drop (or mark) probability that a PI controller moves every
//! T_UPDATE from the delay's distance to the target and its trend:
//!
//!   p = α·(qdelay − target) + β·(qdelay − qdelay_old)   (§4.2; α, β in Hz,
//!   delays in seconds), scaled down while the probability is small so the
//!   controller starts gently (the RFC's auto-tuning table: /2048 below
//!   10⁻⁶, ... /2 below 0.1), at most +0.02 a step once the probability is
//!   0.1 or more; the probability decays by 2% a step while both delays are
//!   zero (§4.2), and stays in [0, 1].
//!
//! An arrival is judged at enqueue (§4.1): it passes while the burst
//! allowance lasts (§4.4: 150 ms from an idle start, spent T_UPDATE per
//! update, refilled once the probability is zero and both delays are below
//! half the target), while the queue is uncongested (the last delay below
//! half the target with the probability below 0.2, §4.1), or while the
//! queue holds at most two full packets besides it; otherwise it is hit
//! with the probability. A hit ECN-capable packet is marked while the
//! probability is at most 10% (`pie_mark_ecnth`, §5.1), dropped above;
//! one that is not ECN-capable is dropped.
//!
//! Choices where the RFC leaves them open, with reasons:
//! - The queueing delay is the sojourn of the last packet to leave (zero
//!   once the queue empties), the timestamp method RFC 8033 allows in place
//!   of its departure-rate estimate and that Linux's sch_pie uses by default;
//!   here the engine measures sojourns exactly, so the estimate needs no
//!   measurement cycle.
//! - Updates run at the multiples of T_UPDATE after the port's first packet,
//!   applied when the queue is next touched (every update while the queue
//!   sat untouched sees the same, unchanged delay, so the probability is the
//!   one a timer would have left).
//! - Not modelled: the optional de-randomisation (§5.4), the byte-size
//!   scaling of the probability (§5.3), and Linux's extra +2% when the delay
//!   exceeds 250 ms.

use super::{HookedMarker, MarkingDecl, Seen, Sides, Threshold, Verdict};
use crate::config::param::section;
use crate::config::{bad, Dur};
use crate::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::switch::scheme::RecipeValue::{Derived, Json};
use crate::switch::scheme::{rtt_ratio, rtt_scaled, About, RecipeDecl, RecipeFill};
use crate::units::{secs, Time};

section! {
    /// PIE's keys (RFC 8033's defaults).
    pub struct PieParams {
        /// The queueing delay PIE steers each queue to (QDELAY_REF).
        pie_target: Dur = Dur(15_000_000_000), range "positive", source "RFC 8033 §4.1, §5.2", resolved InUse,
            acts BelowBufferTime;
        /// How often the probability is recomputed (T_UPDATE).
        pie_tupdate: Dur = Dur(15_000_000_000), range "positive", source "RFC 8033 §4.2, §5.2", resolved InUse,
            acts WithinRun;
        /// The integral gain α, per second of delay above the target.
        pie_alpha: f64 = 0.125, range "positive", source "RFC 8033 §4.2, §5.2", resolved InUse;
        /// The proportional gain β, per second of delay growth since the last update.
        pie_beta: f64 = 1.25, range "positive", source "RFC 8033 §4.2, §5.2", resolved InUse;
        /// How long a burst passes untouched after an idle spell (MAX_BURST).
        pie_max_burst: Dur = Dur(150_000_000_000), source "RFC 8033 §4.4, §5.2", resolved InUse, acts WithinRun;
        /// Mark ECN-capable packets instead of dropping them, while the probability allows.
        pie_ecn: bool = true, source "RFC 8033 §5.1", resolved InUse;
        /// The probability above which even ECN-capable packets are dropped (mark_ecnth).
        pie_mark_ecnth: f64 = 0.1, range "[0, 1]", source "RFC 8033 §5.1", resolved InUse;
    }
}

pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[PieParams::PARAMS],
        ..About::new(
            "pie",
            "PIE on each queue: a PI controller moves a drop (or mark) probability every pie_tupdate to keep \
             the queueing delay at pie_target, with a burst allowance",
            "Pan et al., RFC 8033 (PIE)",
        )
    },
    threshold: Threshold::Unused(" (pie takes pie_target)"),
    own_sides: Some("decides at enqueue, measures the queueing delay at dequeue"),
    validate: |c| {
        let p = c.read(PieParams::read)?;
        for (key, d) in [("pie_target", p.pie_target), ("pie_tupdate", p.pie_tupdate)] {
            if d.0 == 0 {
                return Err(bad(&c.key(key), "0s", "must be positive"));
            }
        }
        for (key, x) in [("pie_alpha", p.pie_alpha), ("pie_beta", p.pie_beta)] {
            if !(x > 0.0 && x.is_finite()) {
                return Err(bad(&c.key(key), x, "must be positive (RFC 8033: 0.125 and 1.25, in Hz)"));
            }
        }
        if !(0.0..=1.0).contains(&p.pie_mark_ecnth) {
            return Err(bad(&c.key("pie_mark_ecnth"), p.pie_mark_ecnth, "must lie in [0, 1] (RFC 8033: 0.1)"));
        }
        Ok(())
    },
    build: |c| {
        let p = c.params(PieParams::read);
        let cfg = PieCfg {
            target: p.pie_target.0,
            tupdate: p.pie_tupdate.0,
            alpha: p.pie_alpha,
            beta: p.pie_beta,
            max_burst: p.pie_max_burst.0,
            ecn: p.pie_ecn,
            mark_ecnth: p.pie_mark_ecnth,
            mtu: c.pkt,
        };
        Pie::new(cfg, c.port.queues as usize).into()
    },
};

/// RFC 8033's defaults (15 ms target and T_UPDATE, 150 ms burst allowance,
/// α = 0.125 and β = 1.25 Hz) are made for Internet RTTs (RFC 9332 A.1
/// sets the PI gains of its PIE variant for an RTT_max of 100 ms). On a
/// data-centre port they never act: the buffer drains long before the
/// delay reaches the target. The recipe scales every time by the network's
/// base RTT over 100 ms and the gains by its inverse, so each update moves
/// the probability as the RFC's does for the same delay counted in RTTs:
/// at a 100 us base RTT, a 15 us target and T_UPDATE, a 150 us allowance,
/// α = 125 and β = 1,250 Hz. The scaling is ecnlab's, in the way FQ-CoDel
/// in the DCN §IV-B scales CoDel's times down a thousandfold.
const DESIGN_RTT: Time = 100_000_000_000;

pub const RECIPE: RecipeDecl = RecipeDecl {
    about: About::new(
        "pie",
        "PIE scaled to the network: RFC 8033's times (15 ms target and T_UPDATE, 150 ms burst allowance) \
         times the base RTT over 100 ms, its gains (α 0.125, β 1.25) divided by it",
        "RFC 8033 §5.2's defaults, scaled to the base RTT by ecnlab (as FQ-CoDel in the DCN §IV-B scales CoDel)",
    ),
    fills: &[
        RecipeFill { key: "switch.marking", value: Json("\"pie\""), source: "RFC 8033" },
        RecipeFill {
            key: "switch.pie_target",
            value: Derived { rule: "15ms × base RTT / 100ms", value: |c| rtt_scaled(c, 15_000_000_000, DESIGN_RTT) },
            source: "RFC 8033 §5.2 (QDELAY_REF), scaled",
        },
        RecipeFill {
            key: "switch.pie_tupdate",
            value: Derived { rule: "15ms × base RTT / 100ms", value: |c| rtt_scaled(c, 15_000_000_000, DESIGN_RTT) },
            source: "RFC 8033 §5.2 (T_UPDATE), scaled",
        },
        RecipeFill {
            key: "switch.pie_max_burst",
            value: Derived { rule: "150ms × base RTT / 100ms", value: |c| rtt_scaled(c, 150_000_000_000, DESIGN_RTT) },
            source: "RFC 8033 §5.2 (MAX_BURST), scaled",
        },
        RecipeFill {
            key: "switch.pie_alpha",
            value: Derived { rule: "0.125 × 100ms / base RTT", value: |c| gain(c, 0.125) },
            source: "RFC 8033 §5.2 (α), scaled",
        },
        RecipeFill {
            key: "switch.pie_beta",
            value: Derived { rule: "1.25 × 100ms / base RTT", value: |c| gain(c, 1.25) },
            source: "RFC 8033 §5.2 (β), scaled",
        },
    ],
};

/// A gain in Hz (per second of delay) made for a 100 ms RTT, scaled up as
/// the times are scaled down.
fn gain(c: &crate::config::Config, at_design: f64) -> Option<serde_json::Value> {
    serde_json::Number::from_f64(at_design / rtt_ratio(c, DESIGN_RTT)?).map(serde_json::Value::Number)
}

/// PIE's settings, shared by a port's queues.
#[derive(Clone, Copy, Debug)]
pub struct PieCfg {
    pub target: Time,
    pub tupdate: Time,
    pub alpha: f64,
    pub beta: f64,
    pub max_burst: Time,
    pub ecn: bool,
    pub mark_ecnth: f64,
    /// One full packet on the wire, bytes.
    pub mtu: u64,
}

/// One queue's controller.
#[derive(Clone, Copy, Debug, Default)]
pub struct PieState {
    pub drop_prob: f64,
    /// The delay the last update saw (qdelay_old), and the current one.
    pub qdelay_old: Time,
    pub qdelay: Time,
    pub burst_allowance: Time,
    /// The next update; 0 until the queue's first packet.
    next_update: Time,
}

impl PieState {
    /// One update of the controller (RFC 8033 §4.2, §4.4).
    pub fn update(&mut self, c: &PieCfg) {
        let (cur, old) = (secs(self.qdelay), secs(self.qdelay_old));
        let mut p = c.alpha * (cur - secs(c.target)) + c.beta * (cur - old);
        // Auto-tuning: small probabilities move in small steps.
        let scale = [(1e-6, 2048.0), (1e-5, 512.0), (1e-4, 128.0), (1e-3, 32.0), (1e-2, 8.0), (1e-1, 2.0)]
            .iter()
            .find(|(below, _)| self.drop_prob < *below)
            .map_or(1.0, |(_, s)| *s);
        p /= scale;
        if self.drop_prob >= 0.1 && p > 0.02 {
            p = 0.02;
        }
        self.drop_prob += p;
        if self.qdelay == 0 && self.qdelay_old == 0 {
            self.drop_prob *= 0.98;
        }
        self.drop_prob = self.drop_prob.clamp(0.0, 1.0);
        self.burst_allowance = self.burst_allowance.saturating_sub(c.tupdate);
        if self.drop_prob == 0.0 && 2 * self.qdelay < c.target && 2 * self.qdelay_old < c.target {
            self.burst_allowance = c.max_burst;
        }
        self.qdelay_old = self.qdelay;
    }

    /// Run the updates due by `now`.
    fn catch_up(&mut self, c: &PieCfg, now: Time) {
        if self.next_update == 0 {
            self.next_update = now + c.tupdate;
            self.burst_allowance = c.max_burst;
            return;
        }
        while self.next_update <= now {
            self.update(c);
            self.next_update += c.tupdate;
            // At rest (nothing queued, nothing to decay, the allowance
            // full) further updates change nothing: skip them.
            if self.drop_prob == 0.0 && self.qdelay == 0 && self.qdelay_old == 0 && self.burst_allowance == c.max_burst
            {
                let behind = now.saturating_sub(self.next_update) / c.tupdate;
                self.next_update += behind * c.tupdate;
            }
        }
    }
}

pub struct Pie {
    pub cfg: PieCfg,
    queues: Box<[PieState]>,
}

impl Pie {
    pub fn new(cfg: PieCfg, queues: usize) -> Pie {
        Pie { cfg, queues: vec![PieState::default(); queues].into_boxed_slice() }
    }

    /// Queue `q`'s controller (tests).
    pub fn state(&self, q: usize) -> &PieState {
        &self.queues[q]
    }

    /// Queue `q`'s controller, to set up a test's starting state.
    pub fn state_mut(&mut self, q: usize) -> &mut PieState {
        &mut self.queues[q]
    }

    /// A packet arrives at queue `q` with `ahead` bytes before it.
    #[inline(never)]
    fn enqueue(&mut self, q: usize, now: Time, ahead: u64, ect: bool, rng: &mut Rng) -> Verdict {
        let c = self.cfg;
        let st = &mut self.queues[q];
        st.catch_up(&c, now);
        if st.burst_allowance > 0
            || (2 * st.qdelay_old < c.target && st.drop_prob < 0.2)
            || ahead <= 2 * c.mtu
            || rng.uniform() >= st.drop_prob
        {
            return Verdict::Pass;
        }
        if c.ecn && ect && st.drop_prob <= c.mark_ecnth {
            Verdict::Mark
        } else {
            Verdict::Drop
        }
    }

    /// A packet leaves queue `q` after `sojourn`, leaving `behind` bytes.
    #[inline(never)]
    fn dequeue(&mut self, q: usize, now: Time, sojourn: Time, behind: u64) {
        let c = self.cfg;
        let st = &mut self.queues[q];
        st.catch_up(&c, now);
        // An empty queue has no delay, however long its last packet waited
        // (as Linux's sch_pie in its timestamp mode).
        st.qdelay = if behind == 0 { 0 } else { sojourn };
    }
}

impl HookedMarker for Pie {
    fn sides(&self) -> Sides {
        Sides::Both
    }

    // The bodies live out of line (`enqueue`, `dequeue`) and
    // take plain values: inlined into the hooked ports' paths they crowded
    // out the older schemes' bodies, and a call taking `&Seen` made every
    // scheme build `Seen` in memory (CEDM's benchmark +5%, cachegrind).
    #[inline(always)]
    fn at_enqueue(&mut self, s: &Seen, pkt: &Packet, rng: &mut Rng) -> Verdict {
        self.enqueue(s.q, s.now, s.occ.queue - s.size as u64, pkt.ecn != Ecn::NotEct, rng)
    }

    #[inline(always)]
    fn at_dequeue(&mut self, s: &Seen, _ect: bool, _rng: &mut Rng) -> Verdict {
        // `occ` still counts the leaving packet.
        self.dequeue(s.q, s.now, s.sojourn, s.occ.queue - s.size as u64);
        Verdict::Pass
    }

    fn needs_sojourn(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;
    use crate::switch::marker::Occupancy;

    const MS: Time = 1_000_000_000;

    /// RFC 8033's defaults (§5.2): target 15 ms, T_UPDATE 15 ms, α 0.125,
    /// β 1.25, MAX_BURST 150 ms, mark_ecnth 0.1.
    fn rfc() -> PieCfg {
        PieCfg {
            target: 15 * MS,
            tupdate: 15 * MS,
            alpha: 0.125,
            beta: 1.25,
            max_burst: 150 * MS,
            ecn: true,
            mark_ecnth: 0.1,
            mtu: 1500,
        }
    }

    fn state(drop_prob: f64, qdelay: Time, qdelay_old: Time) -> PieState {
        PieState { drop_prob, qdelay, qdelay_old, ..PieState::default() }
    }

    /// §4.2 worked by hand. From 0 with the delay at 30 ms (15 ms over the
    /// target) after 0: p = 0.125·0.015 + 1.25·0.030 = 0.039375, scaled by
    /// 1/2048 below 10⁻⁶: 1.9226e-5. The next step, delay steady at 30 ms:
    /// 0.125·0.015 = 0.001875, now scaled by 1/128 (10⁻⁵ ≤ p < 10⁻⁴).
    #[test]
    fn the_probability_follows_the_pi_law_with_auto_tuning() {
        let c = rfc();
        let mut s = state(0.0, 30 * MS, 0);
        s.update(&c);
        assert!((s.drop_prob - 0.039375 / 2048.0).abs() < 1e-12, "{}", s.drop_prob);
        assert_eq!(s.qdelay_old, 30 * MS);
        let before = s.drop_prob;
        s.update(&c);
        assert!((s.drop_prob - (before + 0.001875 / 128.0)).abs() < 1e-12, "{}", s.drop_prob);
    }

    /// Above 0.1 a step adds at most 0.02 (§4.2); with both delays zero the
    /// probability decays by 2% after its step (§4.2); it never leaves [0, 1].
    #[test]
    fn steps_are_capped_and_the_probability_decays_when_the_queue_is_gone() {
        let c = rfc();
        let mut s = state(0.5, 1000 * MS, 0);
        s.update(&c);
        assert!((s.drop_prob - 0.52).abs() < 1e-12, "{}", s.drop_prob);
        let mut s = state(0.5, 0, 0);
        s.update(&c);
        // p = 0.125·(0 − 0.015) = −0.001875, unscaled at 0.5, then ×0.98.
        assert!((s.drop_prob - (0.5 - 0.001875) * 0.98).abs() < 1e-12, "{}", s.drop_prob);
        let mut s = state(0.99, 1000 * MS, 1000 * MS);
        for _ in 0..10 {
            s.update(&c);
        }
        assert_eq!(s.drop_prob, 1.0);
        let mut s = state(1e-9, 0, 0);
        s.update(&c);
        assert_eq!(s.drop_prob, 0.0);
    }

    fn seen(now: Time, queued: u64) -> Seen {
        Seen {
            now,
            q: 0,
            occ: Occupancy { queue: queued, port: queued, pool: queued },
            size: 1500,
            sojourn: 0,
            backlogged: 1,
        }
    }

    fn packet(ecn: Ecn) -> Packet {
        let mut p = Packet::new(Kind::Data, 0, 1, 0, 0, 1500);
        p.ecn = ecn;
        p
    }

    /// §4.4: a queue that starts busy passes everything for MAX_BURST (150
    /// ms: ten updates of 15 ms) however high its probability, then drops.
    #[test]
    fn a_burst_passes_for_the_burst_allowance() {
        let mut pie = Pie::new(rfc(), 1);
        let mut rng = Rng::new(1);
        let full = 100 * 1500;
        let pkt = packet(Ecn::NotEct);
        assert_eq!(pie.at_enqueue(&seen(0, full), &pkt, &mut rng), Verdict::Pass);
        // A long standing delay: the probability climbs to 1 meanwhile.
        *pie.state_mut(0) = PieState { drop_prob: 1.0, qdelay: 100 * MS, qdelay_old: 100 * MS, ..*pie.state(0) };
        for t in 1..150 {
            assert_eq!(pie.at_enqueue(&seen(t * MS, full), &pkt, &mut rng), Verdict::Pass, "at {t} ms");
        }
        assert_eq!(pie.state(0).burst_allowance, 15 * MS, "nine updates spent 135 ms of it");
        assert_eq!(pie.at_enqueue(&seen(150 * MS, full), &pkt, &mut rng), Verdict::Drop);
        assert_eq!(pie.state(0).burst_allowance, 0);
    }

    /// §4.1's safeguards: no drop while the last delay is under half the
    /// target with the probability under 0.2, nor with at most two full
    /// packets queued ahead of the arrival.
    #[test]
    fn an_uncongested_or_nearly_empty_queue_drops_nothing() {
        let mut pie = Pie::new(rfc(), 1);
        let mut rng = Rng::new(2);
        let pkt = packet(Ecn::NotEct);
        pie.at_enqueue(&seen(0, 1500), &pkt, &mut rng);
        *pie.state_mut(0) = PieState { drop_prob: 0.15, qdelay_old: 7 * MS, burst_allowance: 0, ..*pie.state(0) };
        for i in 0..1000 {
            assert_eq!(pie.at_enqueue(&seen(MS + i, 200 * 1500), &pkt, &mut rng), Verdict::Pass);
        }
        *pie.state_mut(0) = PieState { drop_prob: 0.9, qdelay_old: 40 * MS, ..*pie.state(0) };
        for i in 0..1000 {
            assert_eq!(pie.at_enqueue(&seen(MS + i, 3 * 1500), &pkt, &mut rng), Verdict::Pass);
        }
    }

    /// §5.1: with the probability at 5% (≤ mark_ecnth) ECN-capable arrivals
    /// are marked, 5% of them (±1% over 20,000, about 7 binomial SDs), and
    /// never dropped; Not-ECT ones are dropped as often. At 30% ECN-capable
    /// ones are dropped too.
    #[test]
    fn ecn_capable_packets_are_marked_below_mark_ecnth_and_dropped_above() {
        let mut pie = Pie::new(rfc(), 1);
        let mut rng = Rng::new(3);
        let (ect, not) = (packet(Ecn::Ect), packet(Ecn::NotEct));
        pie.at_enqueue(&seen(0, 1500), &ect, &mut rng);
        let set = |pie: &mut Pie, p: f64| {
            *pie.state_mut(0) = PieState { drop_prob: p, qdelay_old: 40 * MS, burst_allowance: 0, ..*pie.state(0) }
        };
        set(&mut pie, 0.05);
        let n = 20_000;
        let verdicts: Vec<Verdict> =
            (0..n).map(|i| pie.at_enqueue(&seen(MS + i, 100 * 1500), &ect, &mut rng)).collect();
        let marks = verdicts.iter().filter(|v| **v == Verdict::Mark).count() as f64 / n as f64;
        assert!(!verdicts.contains(&Verdict::Drop));
        assert!((marks - 0.05).abs() < 0.01, "{marks}");
        let drops = (0..n).filter(|i| pie.at_enqueue(&seen(MS + i, 100 * 1500), &not, &mut rng) == Verdict::Drop);
        assert!((drops.count() as f64 / n as f64 - 0.05).abs() < 0.01);
        set(&mut pie, 0.3);
        let verdicts: Vec<Verdict> =
            (0..n).map(|i| pie.at_enqueue(&seen(MS + i, 100 * 1500), &ect, &mut rng)).collect();
        assert!(!verdicts.contains(&Verdict::Mark));
        let drops = verdicts.iter().filter(|v| **v == Verdict::Drop).count() as f64 / n as f64;
        assert!((drops - 0.3).abs() < 0.015, "{drops}");
    }

    /// The delay PIE controls is the sojourn of the last packet to leave,
    /// and zero once the queue is empty; updates run at each multiple of
    /// T_UPDATE, caught up when the queue is next touched.
    #[test]
    fn the_delay_is_the_last_sojourn_and_updates_catch_up() {
        let mut pie = Pie::new(rfc(), 1);
        let mut rng = Rng::new(4);
        pie.at_enqueue(&seen(0, 1500), &packet(Ecn::NotEct), &mut rng);
        let leaving = Seen { sojourn: 40 * MS, ..seen(MS, 3000) };
        pie.at_dequeue(&leaving, false, &mut rng);
        assert_eq!(pie.state(0).qdelay, 40 * MS);
        // Six updates (15, 30, ..., 90 ms) with the delay at 40 ms.
        pie.at_enqueue(&seen(95 * MS, 1500), &packet(Ecn::NotEct), &mut rng);
        let mut want = state(0.0, 40 * MS, 0);
        for _ in 0..6 {
            want.update(&rfc());
        }
        assert!((pie.state(0).drop_prob - want.drop_prob).abs() < 1e-15);
        // The last packet leaves after 41 ms: the queue is empty, so the
        // delay is zero, not its sojourn.
        let last = Seen { sojourn: 41 * MS, ..seen(96 * MS, 1500) };
        pie.at_dequeue(&last, false, &mut rng);
        assert_eq!(pie.state(0).qdelay, 0);
    }
}
