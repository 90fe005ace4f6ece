//! ML-ECN's multi-level probabilistic marking (ML-ECN §III-B-2-b, Alg. 2),
//! at enqueue. K is the standard threshold, L the number of levels, and
//! TL_i = i·K/L (Eq. 2), Pr_i = TL_i/K = i/L.
//!
//! - Small-class queues: per-queue K (mark when the queue exceeds K).
//! - Medium and large classes, when the port's total exceeds K: mark iff the
//!   packet's queue is above TL_1 (Alg. 2 lines 5-10), so a queue below its
//!   floor keeps its share.
//! - Otherwise by level: level i while TL_i ≤ q < TL_{i+1} (i = 1..L−1; the
//!   top level has no upper bound). Alg. 2 prints these ranges as
//!   "TL_1 ≥ Q < TL_2", which cannot hold for any q; we read them as
//!   TL_1 ≤ q < TL_2 and so on, the only reading under which the levels
//!   cover the queue. Medium queues draw with the packet's own flow class:
//!   at level i a small packet is marked with Pr_{i−1} (Pr_0 = 0), a medium
//!   one with Pr_i, a large one with Pr_{i+1} (Pr_L = 1) — for L = 4 exactly
//!   Alg. 2's table. Large queues mark every packet at level i with Pr_i.
//!
//! The packet's class comes from its stage through the classifier's map; in
//! the paper's set-up (classes by the same thresholds as the queues) a
//! medium queue holds only medium packets, so its small/large rows act only
//! when a queue mixes stages.
//!
//! q counts the arriving packet, as every marker here does.

use super::{HookedMarker, MarkingDecl, Seen, Sides, Threshold, Verdict};
use crate::config::bad;
use crate::config::param::section;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::switch::classifier::{self, FlowClass, StageClasses};
use crate::switch::scheme::{About, RecipeDecl, RecipeFill, RecipeValue::Json};

section! {
    /// ML-ECN's marking keys (its classes are the classifier's: `small_queues`, ...).
    pub struct MlEcnParams {
        /// The number of threshold levels L.
        mlecn_levels: u32 = 4, range "1 or more", source "ML-ECN §IV", per_port false;
    }
}

pub const DECL: MarkingDecl = MarkingDecl {
    about: About {
        params: &[MlEcnParams::PARAMS],
        unused: Some(|_| "is ML-ECN's; set marking = \"ml-ecn\" to use it".into()),
        ..About::new(
            "ml-ecn",
            "per-class marking: small-class queues against K, medium and large ones by levels of K with \
             probabilities by the packet's class (needs the classes small_queues, ... and host.stages)",
            "Alanazi & Hamdaoui, ML-ECN, §III-B-2-b, Alg. 2",
        )
    },
    threshold: Threshold::One,
    own_sides: Some("judges at enqueue"),
    validate: |c| {
        if !classifier::by_stage(c.port) {
            return Err(crate::config::ConfigError(format!(
                "{}.marking = \"ml-ecn\": needs the queue classes {0}.small_queues, medium_queues and large_queues (and host.stages){}",
                c.sec,
                RECIPE.hint(c.port)
            )));
        }
        if c.read(MlEcnParams::read)?.mlecn_levels == 0 {
            return Err(bad(&c.key("mlecn_levels"), 0, "must be at least 1 (ML-ECN §IV: 4)"));
        }
        Ok(())
    },
    build: |c| {
        let levels = c.params(MlEcnParams::read).mlecn_levels;
        let classes = classifier::stage_classes(c.port, c.stages).expect("checked: ml-ecn has classes");
        MlEcn::new(c.k(), levels, classes, c.port.queues as usize).into()
    },
};

/// ML-ECN's set-up (`switch.recipe = "ml-ecn"`). The paper's switch (§IV)
/// has 8 queues in three classes weighted 4:2:1 with a 1.5 KB quantum, 4
/// levels, and WRR as its scheduler (§III-B-2-c; §IV also runs DWRR); its
/// classes are the flow sizes (0, 100KB], (100KB, 10MB], (10MB, ∞). The
/// split of the 8 queues is not stated: 3 small, 3 medium, 2 large is
/// ours (experiments/mlecn-fig4/NOTES.md). A weight w is a quantum of
/// w × 1.5 KB. K is the network's (the paper keeps MQ-ECN's), so the
/// recipe leaves `threshold` to the experiment.
pub const RECIPE: RecipeDecl = RecipeDecl {
    about: About::new(
        "ml-ecn",
        "ML-ECN's switch and hosts: 8 queues as 3 small, 3 medium and 2 large with 4:2:1 quanta, WRR, \
         4 levels, stages at 100KB and 10MB (the threshold K stays the experiment's)",
        "Alanazi & Hamdaoui, ML-ECN, §III-B, §IV",
    ),
    fills: &[
        RecipeFill { key: "switch.marking", value: Json("\"ml-ecn\""), source: "ML-ECN §III-B-2-b, Alg. 2" },
        RecipeFill { key: "switch.scheduler", value: Json("\"wrr\""), source: "ML-ECN §III-B-2-c" },
        RecipeFill { key: "switch.queues", value: Json("8"), source: "ML-ECN §IV (Switch)" },
        RecipeFill {
            key: "switch.quantum",
            value: Json(r#"["6000B", "6000B", "6000B", "3000B", "3000B", "3000B", "1500B", "1500B"]"#),
            source: "ML-ECN §IV (Switch): weights 4:2:1, quantum 1.5KB",
        },
        RecipeFill {
            key: "switch.small_queues",
            value: Json("[0, 1, 2]"),
            source: "ML-ECN §III-B-2-a (the 3/3/2 split is ecnlab's; the paper does not state it)",
        },
        RecipeFill { key: "switch.medium_queues", value: Json("[3, 4, 5]"), source: "as small_queues" },
        RecipeFill { key: "switch.large_queues", value: Json("[6, 7]"), source: "as small_queues" },
        RecipeFill { key: "switch.mlecn_levels", value: Json("4"), source: "ML-ECN §IV (Switch)" },
        RecipeFill {
            key: "host.stages",
            value: Json(r#"["100KB", "10MB"]"#),
            source: "ML-ECN §IV: flow classes (0, 100KB], (100KB, 10MB], (10MB, ∞)",
        },
    ],
};

pub struct MlEcn {
    pub k: u64,
    pub levels: u32,
    classes: StageClasses,
    /// The class of each queue.
    queue_class: Box<[FlowClass]>,
}

impl MlEcn {
    pub fn new(k: u64, levels: u32, classes: StageClasses, queues: usize) -> Self {
        let queue_class = (0..queues).map(|q| classes.class_of_queue(q)).collect();
        MlEcn { k, levels: levels.max(1), classes, queue_class }
    }

    /// TL_i in bytes.
    pub fn tl(&self, i: u32) -> u64 {
        self.k * i as u64 / self.levels as u64
    }

    /// The level of a queue of `q` bytes (0 below TL_1, at most L − 1).
    pub fn level(&self, q: u64) -> u32 {
        // The largest i with i·K/L ≤ q, i.e. i ≤ q·L/K, within 1..L−1.
        let i = (q as u128 * self.levels as u128 / self.k.max(1) as u128) as u64;
        (i.min(self.levels.saturating_sub(1) as u64)) as u32
    }

    /// The marking probability, in units of 1/L, of a packet of class `pkt`
    /// in a queue of class `queue` at level `level` ≥ 1.
    pub fn numerator(&self, queue: FlowClass, pkt: FlowClass, level: u32) -> u32 {
        let i = match (queue, pkt) {
            (FlowClass::Large, _) | (_, FlowClass::Medium) => level,
            (_, FlowClass::Small) => level - 1,
            (_, FlowClass::Large) => level + 1,
        };
        i.min(self.levels)
    }

    // Always inlined into the hooked ports' enqueue path, as it was when
    // each scheme's arm called its method directly: once the dispatch went
    // through `HookedMarker`, LLVM made it a call (2.4% of the ML-ECN
    // benchmark's instructions, cachegrind).
    #[inline(always)]
    pub fn at_enqueue(&mut self, s: &Seen, pkt: &Packet, rng: &mut Rng) -> Verdict {
        let q = s.occ.queue;
        let class = self.queue_class[s.q];
        if class == FlowClass::Small {
            return super::mark_if(q > self.k);
        }
        if s.occ.port > self.k {
            return super::mark_if(q > self.tl(1));
        }
        if q < self.tl(1) || self.levels == 1 {
            // With one level TL_1 = K: the queue is above it only when the
            // port is, handled above.
            return Verdict::Pass;
        }
        let n = self.numerator(class, self.classes.class(pkt.stage), self.level(q));
        let p = n as f64 / self.levels as f64;
        super::mark_if(n >= self.levels || (n > 0 && rng.uniform() < p))
    }
}

impl HookedMarker for MlEcn {
    fn sides(&self) -> Sides {
        Sides::Enqueue
    }
    #[inline]
    fn at_enqueue(&mut self, s: &Seen, pkt: &Packet, rng: &mut Rng) -> Verdict {
        MlEcn::at_enqueue(self, s, pkt, rng)
    }
    fn threshold(&self, _q: usize) -> Option<u64> {
        Some(self.k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Kind;
    use crate::switch::marker::Occupancy;

    const K: u64 = 100_000;

    fn marker() -> MlEcn {
        // Queue 0 small, 1 medium, 2 large; stages 1, 2, 3 → small, medium, large.
        let c = StageClasses::new([vec![0], vec![1], vec![2]], [vec![1], vec![2], vec![3]]);
        MlEcn::new(K, 4, c, 3)
    }

    fn seen(q: usize, queue: u64, port: u64) -> Seen {
        Seen { now: 0, q, occ: Occupancy { queue, port, pool: port }, size: 1500, sojourn: 0, backlogged: 0 }
    }

    fn pkt(stage: u8) -> Packet {
        let mut p = Packet::new(Kind::Data, 0, 1, 0, 0, 1500);
        p.stage = stage;
        p
    }

    /// Measured marking frequency per (queue class, level, packet class)
    /// against Alg. 2 with L = 4 (Pr_1..3 = 1/4, 1/2, 3/4): medium queues
    /// level 1: small 0, medium 1/4, large 1/2; level 2: 1/4, 1/2, 3/4;
    /// level 3: 1/2, 3/4, 1; large queues: 1/4, 1/2, 3/4 for every packet.
    /// 40,000 draws: the standard error is at most 0.0025, the bound 0.01
    /// four of them.
    #[test]
    fn marking_probability_follows_alg2() {
        let mut m = marker();
        let mut rng = Rng::new(7);
        let n = 40_000;
        // One queue length inside each level: TL_1 = 25 KB, TL_2 = 50 KB, TL_3 = 75 KB.
        let at_level = [30_000u64, 60_000, 90_000];
        let medium = [[0.0, 0.25, 0.5], [0.25, 0.5, 0.75], [0.5, 0.75, 1.0]];
        for (lv, &q) in at_level.iter().enumerate() {
            for (queue, want_row) in [(1usize, medium[lv]), (2, [0.25 * (lv + 1) as f64; 3])] {
                for (pc, want) in want_row.iter().enumerate() {
                    let p = pkt(pc as u8 + 1);
                    let marks =
                        (0..n).filter(|_| m.at_enqueue(&seen(queue, q, q), &p, &mut rng) == Verdict::Mark).count();
                    let f = marks as f64 / n as f64;
                    assert!((f - want).abs() < 0.01, "queue {queue} level {} class {pc}: {f} vs {want}", lv + 1);
                }
            }
        }
        // Below TL_1 nothing is marked, whatever the class.
        assert_eq!(m.at_enqueue(&seen(1, 24_999, 24_999), &pkt(3), &mut rng), Verdict::Pass);
    }

    /// The port-total fallback (Alg. 2 lines 5-10): with the port over K a
    /// medium or large queue is marked iff it is above TL_1, every packet;
    /// a small queue still only above K.
    #[test]
    fn port_over_k_marks_only_queues_above_tl1() {
        let mut m = marker();
        let mut rng = Rng::new(1);
        for q in [1usize, 2] {
            assert_eq!(m.at_enqueue(&seen(q, 25_000, 2 * K), &pkt(1), &mut rng), Verdict::Pass);
            for _ in 0..100 {
                assert_eq!(m.at_enqueue(&seen(q, 25_001, 2 * K), &pkt(1), &mut rng), Verdict::Mark);
            }
        }
        assert_eq!(m.at_enqueue(&seen(0, K, 2 * K), &pkt(3), &mut rng), Verdict::Pass);
        assert_eq!(m.at_enqueue(&seen(0, K + 1, 2 * K), &pkt(1), &mut rng), Verdict::Mark);
    }
}
